"""Confirm a refutation by running the counterexample through the reference interpreter.

The z3 model is exact; the interpreter evaluates in floating point, and treats exp and ln as the real
functions (the checker leaves them uninterpreted). A refutation that the replay reproduces is reported as
confirmed; one that relied on an uninterpreted function and does not reproduce is downgraded to unknown.
The replay is the interpreter's (`interp.replay`, what `align run --noise-file FILE --aligned` prints), so a
counterexample is confirmed by exactly the check a user can rerun.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..counterexample import Counterexample
from ..diagnostics import SpecError
from ..interp.replay import DENSITY_CODES
from ..interp.replay import replay as replay_run
from ..interp.values import format_value
from ..obligations import KINDS, ObligationId
from ..resolve import ResolvedMechanism


@dataclass(frozen=True)
class Confirmation:
    confirmed: bool
    detail: str


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
        if obligation == ObligationId.C0 and codes & DENSITY_CODES:
            return Confirmation(True, "the run on D stops: " + messages)
        # C4a includes that φ is defined on the run's output: an alignment that reads `out` past its end,
        # or takes the max of an empty set, has no value there
        if obligation == ObligationId.C4A and codes & {"index-out-of-range", "empty-reduction"}:
            return Confirmation(True, "the alignment cannot be evaluated on this output: " + messages)
        return Confirmation(False, "replay failed: " + messages)
    confirmed = obligation in result.failures
    alignment = result.alignment
    assert alignment is not None, "a replay with a neighbour applies the alignment"
    if obligation == ObligationId.C0:
        if result.aligned_error is not None:
            return Confirmation(confirmed, "the aligned run on D' stops: " + result.aligned_error.message)
        return Confirmation(confirmed, result.different_density or
                            "the parameters agree in the interpreter's floating-point runs")
    if obligation == ObligationId.C4A:
        if result.aligned_run is None:
            assert result.aligned_error is not None
            return Confirmation(confirmed, "the aligned run on D' stops: " + result.aligned_error.message)
        what = "on D' with the same noise" if mech.alignment is None else "aligned run on D'"
        return Confirmation(confirmed, f"output on D {format_value(result.run.out, digits=None)}, {what} "
                                       f"{format_value(result.aligned_run.out, digits=None)}")
    if obligation == ObligationId.C4C:
        return Confirmation(confirmed, f"cost {format_value(alignment.cost, digits=None)} vs claim "
                                       f"{format_value(alignment.claim, digits=None)}")
    if obligation == ObligationId.C4D:
        bad = [d for d in alignment.draws if not d.in_support or not d.whole]
        return Confirmation(confirmed, "; ".join(f"{d.draw.display}' = {format_value(d.aligned, digits=None)}"
                                                 for d in bad) or "all in support")
    if obligation == ObligationId.C3:
        bad = [d for d in alignment.draws if d.coefficient is None and d.shift != 0]
        return Confirmation(confirmed, "; ".join(f"{d.draw.display} shifted by {format_value(d.shift, digits=None)}"
                                                 for d in bad) or "no shift")
    return Confirmation(confirmed, ", ".join(result.failures) or "no obligation fails on this run")
