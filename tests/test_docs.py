"""docs/language.md stays true: its examples behave as stated and its tables list every code and distribution."""

from __future__ import annotations

import re

import pytest

from align.diagnostics import CODES, SpecError
from align.distributions import DISTRIBUTIONS
from align.parse import parse_source
from align.resolve import resolve
from align.span import Source

from .conftest import ROOT

DOC = (ROOT / "docs" / "language.md").read_text()
BLOCKS = re.findall(r"```dp( error=([a-z-]+))?\n(.*?)```", DOC, flags=re.S)


def test_the_doc_has_examples():
    assert len(BLOCKS) >= 10


@pytest.mark.parametrize("block", BLOCKS, ids=[f"example{k}" for k in range(len(BLOCKS))])
def test_doc_example_behaves_as_stated(block):
    _, error, text = block
    source = Source("doc.dp", text)
    if not error:
        assert resolve(parse_source(source)).mechanisms
        return
    with pytest.raises(SpecError) as info:
        resolve(parse_source(source))
    assert info.value.diagnostics[0].code == error


def test_every_diagnostic_code_is_documented_with_its_message():
    for code in CODES.values():
        row = re.search(rf"^\| `{re.escape(code.name)}` \| (.*?) \|", DOC, flags=re.M)
        assert row, f"{code.name} is missing from the diagnostics table"
        if row.group(1) != "(varies)":
            shown = code.template.replace("{{", "{").replace("}}", "}")  # str.format escapes
            assert row.group(1) == shown, code.name


def test_every_distribution_is_in_the_table():
    for name in DISTRIBUTIONS:
        assert re.search(rf"^\| `{name}\(", DOC, flags=re.M), name
