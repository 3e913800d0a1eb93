"""specs/peers/: other projects' benchmark programs as those projects write them (issue 37), with the verdicts
`align verify` gives them today.

The programs of ShadowDP, CheckDP, LightDP, StatDP, DP-Sniper, DP-Auditorium and Lyu, Su & Li are not part of the
corpus (tests/conftest.py: `corpus()` leaves specs/peers/ out): their `# expect:` lines are facts about the
mechanisms (private: `proved`; broken: `violation` and the obligation that their alignment cannot meet), and align
does not prove most private ones yet. So this file checks what must hold already — every spec parses and resolves,
states its source and its verdict, and no broken one is ever proved — and pins what align says today in `TODAY`,
so that an improvement (or a regression) shows up as a diff of the table. specs/peers/README.md shows the same
table with the sources and the `align test` results; `test_the_readme_shows_todays_verdicts` keeps the two equal.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

import align
from align.expectations import read_expectations
from align.parse import parse_source, read_source
from align.resolve import resolve
from align.results import MechanismVerdict
from align.rules import obligations
from align.status import Status

from .conftest import PEERS, ROOT, corpus, peers

FILES = peers()
IDS = [p.name for p in FILES]
PROJECTS = ("shadowdp", "checkdp", "lightdp", "statdp", "dpsniper", "dpauditorium", "lyu")

TODAY: dict[str, str] = {
    # What `align verify` (default options: --max-length 3) says today: the status and its scope, or, for refuted
    # and unknown, the obligations with that status. specs/peers/README.md explains each row.
    "checkdp_adaptive_svt.dp": "proved for every input length",
    "checkdp_bad_adaptive_svt.dp": "refuted C2 C4a C4b",
    "checkdp_bad_gap_svt.dp": "refuted C4a",
    "checkdp_bad_noisymax.dp": "refuted C4c",
    "checkdp_bad_partialsum.dp": "refuted C4c",
    "checkdp_bad_smartsum.dp": "refuted C4a",
    "checkdp_bad_svt1.dp": "refuted C4a",
    "checkdp_bad_svt2.dp": "refuted C4c",
    "checkdp_bad_svt3.dp": "refuted C4c",
    "checkdp_smartsum.dp": "proved for every input length",
    "checkdp_svt_decreasing.dp": "proved for every input length",
    "checkdp_svt_increasing.dp": "proved for every input length",
    "dpauditorium_mean_noised_counts.dp": "refuted C0 C4a C4c",
    "dpauditorium_mean_true_counts.dp": "refuted C0 C4a C4c",
    "dpauditorium_noisy_max.dp": "refuted C3",
    "dpauditorium_svt1.dp": "proved for every input length",
    "dpauditorium_svt2.dp": "proved for every input length",
    "dpauditorium_svt3.dp": "refuted C4a C4b C4c",
    "dpauditorium_svt4.dp": "refuted C4c",
    "dpauditorium_svt5.dp": "refuted C4a",
    "dpauditorium_svt6.dp": "refuted C4c",
    "dpsniper_laplace_fixed.dp": "refuted C4a",
    "dpsniper_laplace_parallel.dp": "proved for every input length",
    "dpsniper_noisy_hist1.dp": "proved for every input length",
    "dpsniper_noisy_hist2.dp": "refuted C4c",
    "dpsniper_numerical_svt.dp": "proved for every input length",
    "dpsniper_one_time_rappor.dp": "bounded for lengths <= 3",
    "dpsniper_prefix_sum.dp": "proved for every input length",
    "dpsniper_svt1.dp": "proved for every input length",
    "dpsniper_svt2.dp": "proved for every input length",
    "dpsniper_svt3.dp": "refuted C4a C4c",
    "dpsniper_svt34_parallel.dp": "refuted C4a C4c",
    "dpsniper_svt4.dp": "refuted C4c",
    "dpsniper_svt5.dp": "refuted C4a",
    "dpsniper_svt6.dp": "refuted C4c",
    "lightdp_smart_sum.dp": "proved for every input length",
    "lightdp_sparse_vector.dp": "proved for every input length",
    "lyu_alg1.dp": "proved for every input length",
    "lyu_alg2.dp": "proved for every input length",
    "lyu_alg3.dp": "refuted C4a C4c",
    "lyu_alg4.dp": "refuted C4c",
    "lyu_alg5.dp": "refuted C4a",
    "lyu_alg6.dp": "refuted C4c",
    "lyu_alg7.dp": "proved for every input length",
    "lyu_alg7_monotone.dp": "proved for every input length",
    "shadowdp_gapsparsevector.dp": "proved for every input length",
    "shadowdp_noisymax.dp": "proved for every input length",
    "shadowdp_numsparsevector.dp": "proved for every input length",
    "shadowdp_numsparsevector_n.dp": "proved for every input length",
    "shadowdp_partialsum.dp": "proved for every input length",
    "shadowdp_prefixsum.dp": "proved for every input length",
    "shadowdp_smartsum.dp": "proved for every input length",
    "shadowdp_sparsevector.dp": "proved for every input length",
    "shadowdp_sparsevector_n.dp": "proved for every input length",
    "statdp_histogram.dp": "proved for every input length",
    "statdp_histogram_eps.dp": "refuted C4c",
    "statdp_isvt1.dp": "refuted C4a",
    "statdp_isvt2.dp": "refuted C4c",
    "statdp_isvt3.dp": "refuted C4c",
    "statdp_isvt4.dp": "refuted C4a C4c",
    "statdp_noisy_max_v1a.dp": "proved for every input length",
    "statdp_noisy_max_v1b.dp": "refuted C4c",
    "statdp_noisy_max_v2a.dp": "proved for every input length",
    "statdp_noisy_max_v2b.dp": "refuted C4d",
    "statdp_svt.dp": "proved for every input length",
}


def _kinds(path: Path) -> list[str]:
    return [e.kind for e in read_expectations(read_source(str(path)))]


def _broken(path: Path) -> bool:
    return "violation" in _kinds(path)


@cache
def _verdict(name: str) -> MechanismVerdict:
    return align.verify(str((PEERS / name).relative_to(ROOT)))


def _today(verdict: MechanismVerdict) -> str:
    """One line: the status and its scope, or (refuted, unknown) the obligations with that status."""
    if verdict.status in (Status.REFUTED, Status.UNKNOWN):
        ids = sorted({v.obligation.id for v in verdict.verdicts if v.status is verdict.status})
        return " ".join([verdict.status.value, *ids])
    return f"{verdict.status.value} {verdict.scope}"


def test_the_benchmark_covers_every_project_and_stays_out_of_the_corpus():
    assert len(FILES) >= 30
    assert {p.name.split("_")[0] for p in FILES} == set(PROJECTS)
    assert not set(FILES) & set(corpus())
    assert set(TODAY) == {p.name for p in FILES}, "every spec has a row in TODAY, and every row a spec"


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_peer_spec_parses_and_resolves(path: Path):
    # what `align check` does: parse, resolve, list the obligations
    spec = resolve(parse_source(read_source(str(path.relative_to(ROOT)))))
    assert len(spec.mechanisms) == 1, "one mechanism per file"
    mech = spec.mechanisms[0]
    assert obligations(mech)
    assert mech.node.examples, "an `example` clause, so that `align test` runs it as it stands"


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_peer_spec_cites_its_source_and_states_a_verdict(path: Path):
    text = path.read_text()
    header = text.split("\nmechanism ")[0]
    assert header.startswith("# "), "the first line cites the source"
    assert re.search(r"GitHub\s", header) or "PVLDB" in header, "the header names the repository or the paper"
    kinds = _kinds(path)
    if _broken(path):
        assert {"not-proved", "violation"} <= set(kinds), "a broken program names the obligation its alignment fails"
        assert "Not private" in header
    else:
        assert kinds == ["proved"], "a private program expects a proof"
        assert "Private: yes" in header
    for line in re.findall(r"^# missing: (.*)$", header, re.MULTILINE):
        assert line.strip(), "`# missing:` says which construct is missing"


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in FILES if _broken(p)], ids=[p.name for p in FILES if _broken(p)])
def test_a_broken_peer_program_is_never_proved(path: Path):
    assert _verdict(path.name).status is not Status.PROVED, _today(_verdict(path.name))


@pytest.mark.slow
@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_todays_verdict(path: Path):
    """A change here is news: update TODAY and specs/peers/README.md (a private program newly proved is the
    point of issue 37; a broken one newly bounded or proved is a soundness bug)."""
    assert _today(_verdict(path.name)) == TODAY[path.name]


def test_the_readme_shows_todays_verdicts():
    rows = {}
    for line in (PEERS / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 6 and cells[0].startswith("[`"):
            name = re.match(r"\[`([^`]+)`\]", cells[0])
            verdict = re.search(r"`([^`]+)`", cells[4])
            assert name and verdict, line
            rows[name.group(1)] = verdict.group(1)
    assert rows == TODAY
