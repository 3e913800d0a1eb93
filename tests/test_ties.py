"""Almost-sure semantics (issue 37): an exact tie of compared or released values that has probability 0 is
excluded from Lemma 1's conditions — and only such a tie.

`encode.note_ties` notes, for each case of a compared difference (one per way its `If`s go), that it is not 0
when it is c·η + a with η noise that has a density, c a nonzero number and a free of η; the checker assumes those
only when a query fails without them, and the verdict then says so. specs/incorrect/tie_*.dp are the mechanisms
that would fool a looser rule (discrete noise, a coefficient that may be 0, clamped noise, noise on both sides, a
"tie" between two runs with independent noise).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import z3

import align
from align.obligations import ObligationId
from align.parse import parse_source
from align.resolve import resolve
from align.results import MechanismVerdict
from align.smt import encode
from align.smt import terms as zt
from align.smt.encode import Encoding, Run, _note_difference
from align.span import Source
from align.status import Status

from .conftest import ROOT

INCORRECT = ROOT / "specs" / "incorrect"
TIES = sorted(INCORRECT.glob("tie_*.dp"))


def _verify(tmp_path: Path, text: str, name: str = "spec.dp", **options) -> MechanismVerdict:
    path = tmp_path / name
    path.write_text(text)
    return align.verify(str(path), **options)


def _notes(verdict, obligation: ObligationId) -> list[str]:
    return [note for v in verdict.verdicts if v.obligation.id == obligation for note in v.notes]


def test_a_tie_of_noise_with_a_density_is_excluded_and_the_verdict_says_so(tmp_path: Path):
    # specs/incorrect/tie_discrete_noise.dp with Lap noise: the tie x + eta = 0 has probability 0, the output is 0
    # almost surely, and the alignment proves it for all inputs.
    text = (INCORRECT / "tie_discrete_noise.dp").read_text().replace("DLap(eps)", "Lap(1 / eps)")
    verdict = _verify(tmp_path, text)
    assert verdict.status is Status.PROVED, verdict
    notes = _notes(verdict, ObligationId.C4A)
    assert any(n.startswith("exact ties of `x + eta == 0` (line 20) are excluded") for n in notes), notes


@pytest.mark.parametrize("path", TIES, ids=[p.name for p in TIES])
def test_a_tie_that_is_not_of_probability_0_is_not_excluded(path: Path):
    expected = re.search(r"^# expect: not-proved (\S+)$", path.read_text(), re.MULTILINE)
    assert expected, "each case names the obligation a looser rule would prove"
    verdict = align.verify(str(path.relative_to(ROOT)))
    failed = next(v for v in verdict.verdicts if v.obligation.id == expected.group(1))
    assert failed.status is Status.REFUTED, failed
    if failed.obligation.id != ObligationId.C2:  # C2's counterexample is two runs on D; the replay runs one
        assert failed.counterexample is not None and failed.counterexample.replay["confirmed"], failed


def test_a_proof_that_needs_no_exclusion_does_not_claim_one():
    # Sparse Vector's alignment keeps every comparison at ties too: no obligation needs a tie excluded.
    verdict = align.verify("specs/freegap/alg2_svt_gap.dp")
    assert verdict.status is Status.PROVED
    assert not [n for v in verdict.verdicts for n in v.notes if "tie" in n], verdict


def test_a_numeric_sentinel_is_read_almost_surely():
    # ShadowDP's NumSparseVector releases 0 below the threshold and q[i] + eta_3 above it: two runs with the same
    # output 0 draw eta_3 or not only when q[i] + eta_3 is exactly 0 (probability 0). Refuted on that tie before.
    verdict = align.verify("specs/peers/shadowdp_numsparsevector.dp", max_length=2)
    assert verdict.status is Status.PROVED and verdict.scope == "for every input length", verdict
    notes = _notes(verdict, ObligationId.C2)
    assert any("exact ties between released values are excluded" in n for n in notes), notes


SOURCE = """
mechanism m(x: real, c: real, k: int, eps: real)
  adjacent |x - x'| <= 1
  requires eps > 0
  privacy eps
{
  eta ~ Lap(1 / eps)
  z ~ DLap(eps)
  output x + eta + z
}
"""


@pytest.mark.parametrize(("difference", "excluded"), [
    (lambda x, c, eta, z: x + eta, ["x + eta"]),
    (lambda x, c, eta, z: x - 2 * eta + z, ["x + -2*eta + ToReal(z)"]),
    (lambda x, c, eta, z: 0 * eta + x, []),                       # no noise left
    (lambda x, c, eta, z: (x + eta) - eta, []),                   # noise on both sides
    (lambda x, c, eta, z: c * eta, []),                           # the coefficient may be 0
    (lambda x, c, eta, z: x + z, []),                             # no density
    (lambda x, c, eta, z: eta * eta - 1, []),                     # not linear in eta
    (lambda x, c, eta, z: z3.If(eta >= 0, eta, 0), ["eta"]),      # max(eta, 0): only eta = 0 is excluded
    (lambda x, c, eta, z: z3.If(x > 0, x + eta, x + 3 * eta) - z3.If(c > 0, eta, 0), ["x + eta", "x + 2*eta",
                                                                                     "x + 3*eta"]),
])
def test_the_cases_of_a_difference_that_are_excluded(difference, excluded):
    mech = resolve(parse_source(Source("<ties>", SOURCE))).mechanisms[0]
    with zt.fresh_context():
        enc = Encoding(mech, {}, {})
        eta = enc.noise_symbol("eta", None, integer=False)
        z = enc.noise_symbol("z", None, integer=True)
        x, c = enc.params["x"], enc.params["c"]
        _note_difference(enc, difference(x, c, eta, z), "why")
        found = sorted(str(t.formula.arg(0)) for t in enc.ties.values())
    assert found == sorted(excluded), found


ROUNDED = """
mechanism m(x: real, k: int, eps: real)
  adjacent |x - x'| <= 1
  requires eps > 0
  privacy eps
{
  eta ~ Lap(1 / eps)
  if COMPARISON { output x } else { output 0 }
}
"""


@pytest.mark.parametrize(("comparison", "excluded"), [
    ("floor(x + eta) == 3", []),             # 3 <= x + eta < 4
    ("ceil(eta) == 1", []),                  # 0 < eta <= 1
    ("round(eta) == 0", []),                 # -1/2 <= eta <= 1/2
    ("round(2 * eta + x) == k", []),
    ("floor(eta) + eta == 0", []),           # a point of each interval, but not linear in eta
    ("clamp(eta, 0, 1) == 0", ["eta"]),      # eta <= 0; only the case eta = 0 is excluded
    ("x + eta == 3", ["-3 + x + eta"]),      # the same comparison without a rounding
])
def test_no_tie_is_excluded_through_a_rounding(comparison: str, excluded: list[str]):
    # floor, ceil and round are constant on intervals of the noise: none of their ties has probability 0
    mech = resolve(parse_source(Source("<ties>", ROUNDED.replace("COMPARISON", comparison)))).mechanisms[0]
    with zt.fresh_context():
        enc = Encoding(mech, {}, {})
        Run(enc, enc.params).execute()
        found = sorted(str(t.formula.arg(0)) for t in enc.ties.values())
    assert found == excluded, found


@pytest.mark.parametrize("name", ["tie_hidden_by_floor", "tie_hidden_by_round"])
def test_a_rule_that_excluded_ties_through_a_rounding_would_prove_the_leak(name: str,
                                                                           monkeypatch: pytest.MonkeyPatch):
    # What each spec stops: with every case taken as a + c·eta, its tie is excluded and the leak "proved".
    monkeypatch.setattr(encode, "_linear_in", lambda term, name, enc: True)
    verdict = align.verify(str(INCORRECT / f"{name}.dp"))
    assert verdict.status is Status.PROVED, verdict
    assert any("are excluded" in n for n in _notes(verdict, ObligationId.C4A)), _notes(verdict, ObligationId.C4A)


def test_an_alignment_may_compare_a_released_number_with_a_sentinel(tmp_path: Path):
    # ShadowDP's GapSparseVector releases the gap or the number 0; the alignment tells them apart by comparing the
    # output with 0 (two local alignments, condition 5), which holds off the tie gap = 0 (probability 0): proved
    # for every length, with the invariant count' = count that holds only almost surely (Spacer's search with the
    # ties excluded; Houdini's candidate fails on the tie).
    text = (ROOT / "specs" / "peers" / "shadowdp_gapsparsevector.dp").read_text()
    written = "eta_2[i]' = eta_2[i] + (q[i] + eta_2[i] >= T + eta_1 ? 1 + q[i] - q'[i] : 0)"
    assert written in text
    text = text.replace(written, "eta_2[i]' = eta_2[i] + (out[i] != 0 ? 1 + q[i] - q'[i] : 0)")
    verdict = _verify(tmp_path, text, max_length=2)
    assert verdict.status is Status.PROVED and verdict.scope == "for every input length", verdict
    assert any("exact ties" in n for n in _notes(verdict, ObligationId.C4A)), _notes(verdict, ObligationId.C4A)
    # and comparing with the wrong sentinel is refuted, off every tie
    verdict = _verify(tmp_path, text.replace("out[i] != 0", "out[i] != 1"), "wrong.dp", max_length=2)
    assert verdict.status is Status.REFUTED, verdict
