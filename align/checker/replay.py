"""Confirm a refutation by running the counterexample through the reference interpreter.

The z3 model is exact; the interpreter evaluates in floating point, and treats exp and ln as the real
functions (the checker leaves them uninterpreted). A refutation that the replay reproduces is reported as
confirmed; one that relied on an uninterpreted function and does not reproduce is downgraded to unknown.
The replay is the interpreter's (`interp.replay`, what `align run --noise-file FILE --aligned` prints), so a
counterexample is confirmed by exactly the check a user can rerun.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..counterexample import Counterexample
from ..diagnostics import SpecError
from ..interp.replay import DENSITY_CODES
from ..interp.replay import replay as replay_run
from ..interp.values import format_value
from ..obligations import KINDS, ObligationId
from ..resolve import ResolvedMechanism
from ..results import Replay

if TYPE_CHECKING:
    from ..interp.scalar import ScalarAlignment


@dataclass(frozen=True)
class Confirmation:
    confirmed: bool
    detail: str


def _stopped(mech: ResolvedMechanism, result: Replay) -> str | None:
    return None if result.aligned_error is None else "the aligned run on D' stops: " + result.aligned_error.message


def _density(mech: ResolvedMechanism, result: Replay) -> str:
    return _stopped(mech, result) or result.different_density or \
        "the parameters agree in the interpreter's floating-point runs"


def _outputs(mech: ResolvedMechanism, result: Replay) -> str:
    if result.aligned_run is None:
        return _stopped(mech, result) or "the aligned run on D' stops"
    what = "on D' with the same noise" if mech.alignment is None else "aligned run on D'"
    return f"output on D {format_value(result.run.out, digits=None)}, {what} " \
           f"{format_value(result.aligned_run.out, digits=None)}"


def _cost(mech: ResolvedMechanism, result: Replay) -> str:
    alignment = _aligned(result)
    return f"cost {format_value(alignment.cost, digits=None)} vs claim {format_value(alignment.claim, digits=None)}"


def _support(mech: ResolvedMechanism, result: Replay) -> str:
    bad = [d for d in _aligned(result).draws if not d.in_support or not d.whole]
    return "; ".join(f"{d.draw.display}' = {format_value(d.aligned, digits=None)}" for d in bad) or "all in support"


def _lipschitz(mech: ResolvedMechanism, result: Replay) -> str:
    bad = [d for d in _aligned(result).draws if d.coefficient is None and d.shift != 0]
    return "; ".join(f"{d.draw.display} shifted by {format_value(d.shift, digits=None)}" for d in bad) or "no shift"


def _aligned(result: Replay) -> ScalarAlignment:
    assert result.alignment is not None, "a replay with a neighbour applies the alignment"
    return result.alignment


DETAILS: dict[ObligationId, Callable[[ResolvedMechanism, Replay], str]] = {
    ObligationId.C0: _density,
    ObligationId.C3: _lipschitz,
    ObligationId.C4A: _outputs,
    ObligationId.C4C: _cost,
    ObligationId.C4D: _support,
}
"""What a replay shows of each obligation whose counterexample is one execution (`ObligationKind.replayed`)."""
assert set(DETAILS) == {k.id for k in KINDS.values() if k.replayed}, "a replayed obligation has no detail"

STOPS: dict[ObligationId, tuple[frozenset[str], str]] = {
    ObligationId.C0: (DENSITY_CODES, "the run on D stops: "),
    # C4a includes that φ is defined on the run's output: an alignment that reads `out` past its end, takes the
    # max of an empty set, or reads noise the run did not draw (a member past a `break`) has no value there
    ObligationId.C4A: (frozenset({"index-out-of-range", "empty-reduction", "noise-not-drawn"}),
                       "the alignment cannot be evaluated on this output: "),
}
"""The obligations that a run stopping with one of these runtime errors breaks, and how the confirmation says so."""


ALIGNMENT_STOPS = frozenset({"division-by-zero", "math-domain"})
"""Runtime errors that break C4a when the alignment's own expressions meet them (a zero divisor, or a clamp whose
lower end is above its upper end, in a let or a shift: φ has no value there); in the program they are another
obligation's (C0's density)."""


def _in_alignment(mech: ResolvedMechanism, error: SpecError, codes: frozenset[str]) -> bool:
    """Whether the run stopped with one of `codes` at a place inside the alignment block."""
    if mech.alignment is None:
        return False
    block = mech.alignment.node.span
    return any(d.code in codes and d.span is not None and block.line <= d.span.line <= block.end_line
               for d in error.diagnostics)


def replay(mech: ResolvedMechanism, cex: Counterexample) -> Confirmation:
    """Whether the interpreter's replay of a checker counterexample breaks the obligation it refutes."""
    obligation = ObligationId(cex.obligation)
    if not KINDS[obligation].replayed:
        return Confirmation(False, f"{obligation}'s counterexample is not one execution; not replayed")
    try:
        result = replay_run(mech, cex.spec, dict(cex.args), dict(cex.noise), dict(cex.neighbour))
    except SpecError as error:
        codes = {d.code for d in error.diagnostics}
        messages = "; ".join(d.message for d in error.diagnostics)
        stops, says = STOPS.get(obligation, (frozenset(), ""))
        if codes & stops or (obligation == ObligationId.C4A and _in_alignment(mech, error, ALIGNMENT_STOPS)):
            return Confirmation(True, says + messages)
        return Confirmation(False, "replay failed: " + messages)
    return Confirmation(obligation in result.failures, DETAILS[obligation](mech, result))
