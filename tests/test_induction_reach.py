"""What issue 37's first steps let the induction prove for every length (checker/induction.py), and what it still
must not: C4b when a shift reads its own member only in a condition the output decides, almost surely; an
iteration that stops before it draws or outputs; the prefix's noise read in the loop."""

from __future__ import annotations

from pathlib import Path

import align
from align.obligations import ObligationId
from align.status import Status

from .conftest import ROOT

PEERS = ROOT / "specs" / "peers"


def _obligation(verdict, obligation: ObligationId):
    return next(v for v in verdict.verdicts if v.obligation.id == obligation)


def test_a_branch_condition_alignment_is_acyclic_for_every_length():
    # LightDP's Sparse Vector: eta_2[i]' = eta_2[i] + (q[i] + eta_2[i] >= T + eta_1 ? 2 : 0); the output (true or
    # false) decides the condition, so the shift adds no read of eta_2[i]
    verdict = align.verify("specs/peers/lightdp_sparse_vector.dp")
    assert verdict.status is Status.PROVED and verdict.scope == "for every input length", verdict
    c4b = _obligation(verdict, ObligationId.C4B)
    assert any("the output decides every condition" in n for n in c4b.notes), c4b.notes


def test_a_condition_the_output_does_not_decide_is_not_taken_as_acyclic(tmp_path: Path):
    # the same program, with the shift's condition on the noise alone: the output does not say whether
    # eta_2[i] > 0, so the shift of eta_2[i] depends on eta_2[i] itself (not Definition 6)
    text = (PEERS / "lightdp_sparse_vector.dp").read_text()
    written = "eta_2[i]' = eta_2[i] + (q[i] + eta_2[i] >= T + eta_1 ? 2 : 0)"
    assert written in text
    path = tmp_path / "undecided.dp"
    path.write_text(text.replace(written, "eta_2[i]' = eta_2[i] + (eta_2[i] > 0 ? 2 : 0)"))
    verdict = align.verify(str(path))
    assert _obligation(verdict, ObligationId.C4B).status is Status.REFUTED, verdict
    assert verdict.status is Status.REFUTED


def test_a_sentinel_read_by_the_alignment_is_proved_for_every_length(tmp_path: Path):
    text = (PEERS / "shadowdp_gapsparsevector.dp").read_text()
    written = "eta_2[i]' = eta_2[i] + (q[i] + eta_2[i] >= T + eta_1 ? 1 + q[i] - q'[i] : 0)"
    assert written in text
    path = tmp_path / "sentinel.dp"
    path.write_text(text.replace(written, "eta_2[i]' = eta_2[i] + (out[i] != 0 ? 1 + q[i] - q'[i] : 0)"))
    verdict = align.verify(str(path))
    assert _obligation(verdict, ObligationId.C2).status is Status.PROVED
    assert verdict.status in (Status.PROVED, Status.BOUNDED), verdict


def test_an_iteration_that_draws_and_stops_without_output_is_not_taken_as_quiet(tmp_path: Path):
    # the last iteration draws eta and leaves without an output: the alignment's out[i] would read past the end,
    # so the induction must not treat the iteration as one that stops before drawing
    path = tmp_path / "draws_then_stops.dp"
    path.write_text("""mechanism draws_then_stops(q: real[], T: real, eps: real)
  adjacent |q[i] - q'[i]| <= 1
  requires eps > 0
  privacy eps
  example T = 1, eps = 1, len(q) = 4
{
  rho ~ Lap(2 / eps)
  for i in 0 .. len(q) {
    nu ~ Lap(4 / eps)
    if q[i] + nu >= T + rho { break }
    output BOT
  }
}

alignment draws_then_stops {
  rho' = rho + 1
  nu[i]' = nu[i] + (out[i] is BOT ? 0 : 2)
}
""")
    verdict = align.verify(str(path))
    c4a = _obligation(verdict, ObligationId.C4A)
    assert c4a.status is not Status.PROVED or c4a.scope != "for every input length", c4a


def test_a_written_invariant_is_a_candidate_and_is_checked(tmp_path: Path):
    # CheckDP's adaptive SVT keeps its budget in units of eps/(4 NN): the aligned cost is at most cost / (4 NN) at
    # every loop head, which no template infers with NN symbolic; written in the alignment, Houdini keeps it
    text = (PEERS / "checkdp_adaptive_svt.dp").read_text()
    written = "  invariant aligned_cost <= cost / (4 * NN)\n"
    assert written in text
    verdict = align.verify(str(PEERS / "checkdp_adaptive_svt.dp"))
    assert verdict.status is Status.PROVED and verdict.scope == "for every input length", verdict
    c4c = _obligation(verdict, ObligationId.C4C)
    assert any("aligned_cost <= cost / (4 * NN)" in n for n in c4c.notes), c4c.notes
    # without it: bounded, and the note asks for an invariant
    path = tmp_path / "without.dp"
    path.write_text(text.replace(written, ""))
    c4c = _obligation(align.verify(str(path)), ObligationId.C4C)
    assert c4c.status is Status.BOUNDED and "an `invariant` clause in the alignment" in " ".join(c4c.notes), c4c
    # a false one (the cost is twice that) is dropped, and the note says so: no proof
    path = tmp_path / "wrong.dp"
    path.write_text(text.replace(written, written.replace("4 * NN", "8 * NN")))
    c4c = _obligation(align.verify(str(path)), ObligationId.C4C)
    assert c4c.status is Status.BOUNDED, c4c
    assert "the invariant `aligned_cost <= cost / (8 * NN)` was not used" in " ".join(c4c.notes), c4c.notes
