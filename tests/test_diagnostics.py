"""Golden diagnostics: each tests/diagnostics/NAME.dp is rejected with exactly the output in NAME.expected.

Regenerate the expected files after an intended change with `python -m pytest tests/test_diagnostics.py
--update-golden`, then read the diff.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from align.cli import main

from .conftest import ROOT

CASES = sorted((ROOT / "tests" / "diagnostics").glob("*.dp"))
HEADLINE = re.compile(r"^tests/diagnostics/[a-z0-9_]+\.dp:\d+:\d+: error\[[a-z-]+\]: .+$")


def test_there_are_enough_golden_cases():
    assert len(CASES) >= 30


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_golden_diagnostic(case: Path, update_golden: bool, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("NO_COLOR", "1")
    stdout, stderr = io.StringIO(), io.StringIO()
    code = main(["check", str(case.relative_to(ROOT))], stdout, stderr)
    assert code == 2, "a rejected spec exits with 2"
    assert stdout.getvalue() == "", "nothing but results goes to stdout"
    got = stderr.getvalue()
    headlines = [line for line in got.splitlines() if line and not line.startswith((" ", "|")) and
                 not re.match(r"^\d+ \|", line)]
    assert headlines and all(HEADLINE.match(line) for line in headlines), headlines
    assert "Traceback" not in got and "internal-error" not in got
    expected = case.with_suffix(".expected")
    if update_golden:
        expected.write_text(got)
    assert expected.exists(), f"missing {expected.name}: run with --update-golden"
    assert got == expected.read_text()
