"""The spec corpus is the backbone of the suite: every file parses, resolves, and states its expected verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from align.diagnostics import SpecError
from align.expectations import read_expectations
from align.parse import parse_source, read_source
from align.resolve import MechanismChecker, resolve
from align.rules import obligations
from align.types import ListType

from .conftest import ROOT, SPECS, corpus

FILES = corpus()
IDS = [str(p.relative_to(SPECS)) for p in FILES]


def test_the_corpus_covers_every_family():
    folders = {p.parent.name for p in FILES}
    assert {"freegap", "dworkroth", "r2dp", "incorrect"} <= folders
    assert len(FILES) >= 30


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_every_spec_is_one_mechanism_with_an_example_for_each_public_parameter_and_private_list(path: Path):
    # The corpus tests read a file's first mechanism only: it must be the file's one mechanism. `align run` and
    # `align test` work on every corpus spec without --arg (the `example` clause).
    mechanisms = resolve(parse_source(read_source(str(path.relative_to(ROOT))))).mechanisms
    assert len(mechanisms) == 1, "one mechanism per corpus file"
    mech = mechanisms[0]
    given = {(x.name, x.length) for x in mech.node.examples}
    for p in mech.params:
        if p.public:
            assert (p.name, False) in given, f"no example value of the public parameter {p.name}"
        elif isinstance(p.type, ListType):
            assert (p.name, True) in given, f"no example length of the private list {p.name}"


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_spec_header_cites_its_source_and_states_its_verdict(path: Path):
    source = read_source(str(path))
    first = source.text.splitlines()[0]
    assert first.startswith("# "), "the first line cites the source"
    expectations = read_expectations(source)
    kinds = [e.kind for e in expectations]
    assert expectations, "every spec states its expected verdict"
    assert not ("proved" in kinds and len(kinds) > 1), "`proved` excludes every other expectation"
    # `bounded` goes with nothing else, or (in incorrect/) with the violation that lies beyond the bound
    assert not ("bounded" in kinds and set(kinds) - {"bounded", "violation"}), kinds
    if path.parent.name == "incorrect":
        assert "proved" not in kinds and ("not-proved" in kinds or "unknown" in kinds or
                                          {"bounded", "violation"} <= set(kinds)), \
            "incorrect specs name the obligation that fails, or are bounded with a violation beyond the bound"
    else:
        assert "violation" not in kinds, "a violating mechanism belongs in incorrect/"
    if "violation" in kinds:
        assert {"not-proved", "bounded", "unknown"} & set(kinds), "a violating mechanism cannot have a proof"
        assert parse_source(source).mechanisms[0].examples, "a violation states the arguments that show it (`example`)"


@pytest.mark.parametrize("path", [p for p in FILES if p.parent.name == "r2dp"],
                         ids=[str(p.relative_to(SPECS)) for p in FILES if p.parent.name == "r2dp"])
def test_mixture_specs_are_mixtures_with_a_well_formed_value(path: Path):
    source = read_source(str(path))
    mech = resolve(parse_source(source)).mechanisms[0]
    expectations = [e for e in read_expectations(source) if e.kind == "mixture-rule"]
    assert len(expectations) == 1
    assert mech.mixture_sites and [o.id for o in obligations(mech)] == ["ADJ"] + ["C0"] * len(mech.noise) + ["MIX"]
    assert mech.alignment is None
    # The expected value reads only parameters of the mechanism (checked with the claim's own rules).
    report: list = []
    resolver = MechanismChecker(mech.node, {mech.name}, report)
    resolver.resolve_header()
    resolver.resolve_body()
    resolver.env = type(resolver.env)("claim")
    resolver.expect_numeric(expectations[0].value, "expected value")
    assert not report, [d.message for d in report]


def test_expected_obligations_exist_in_their_mechanism():
    for path in FILES:
        source = read_source(str(path))
        mech = resolve(parse_source(source)).mechanisms[0]
        ids = {o.id for o in obligations(mech)}
        assert ids, f"{path}: every mechanism has obligations to discharge"
        for e in read_expectations(source):
            if e.kind in ("not-proved", "unknown"):
                assert e.obligation in ids, f"{path}: {e.obligation} is not among {sorted(ids)}"


def test_a_broken_spec_is_reported_not_raised(tmp_path: Path):
    bad = tmp_path / "bad.dp"
    bad.write_text("mechanism m(x: real) privacy 1 { y ~ Lap(1) output y + z }\n")
    with pytest.raises(SpecError) as info:
        resolve(parse_source(read_source(str(bad))))
    assert [d.code for d in info.value.diagnostics] == ["undefined-name"]
