"""Interpreter (divergence): a refutation's (D, D', H) replayed, as two runs side by side.

The run on D with H and the run on D' with the aligned noise φ(H) (`interp.replay`, what `align run
--noise-file FILE --aligned` prints) are put step by step next to each other. The first step where they part
(a branch taken differently, another output, a draw with other parameters: C0, C4a) is the first divergence;
a draw whose aligned value leaves the support (C4d) and the cost against the claim (C4c) are marked too.
`align report` shows it as a table and SARIF as a code flow with two thread flows.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import zip_longest
from typing import TYPE_CHECKING

from ..diagnostics import SpecError

if TYPE_CHECKING:
    from ..counterexample import Counterexample
    from ..resolve import ResolvedMechanism
    from ..results import Replay
    from .scalar import AlignedDraw, TraceEvent


@dataclass(frozen=True)
class Step:
    line: int
    """The spec line of the step in the run on D (or D' after the run on D has ended)."""
    line_d_prime: int
    """... and in the run on D' (the two agree up to the divergence)."""
    on_d: str
    on_d_prime: str
    depth: int
    diverges: bool
    """This is the first step where the two runs part."""


@dataclass(frozen=True)
class SideBySide:
    replay: Replay | None
    """None when the replay could not run (`problem` says why)."""
    steps: tuple[Step, ...] = ()
    divergence: int | None = None
    """The index in `steps` of the first divergence; None when the runs never part."""
    problem: str = ""

    @property
    def draws(self) -> list[AlignedDraw]:
        if self.replay is None or self.replay.alignment is None:
            return []
        return self.replay.alignment.draws


def side_by_side(mech: ResolvedMechanism, cex: Counterexample) -> SideBySide | None:
    """The two runs of a counterexample; None when it is not one execution (C2's is two runs on D, C4b's an
    order of the noise: `ObligationKind.replayed`)."""
    # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
    from ..obligations import KINDS, ObligationId
    from .replay import replay

    if not KINDS[ObligationId(cex.obligation)].replayed:
        return None
    try:
        result = replay(mech, cex.spec, dict(cex.args), dict(cex.noise), dict(cex.neighbour))
    except SpecError as error:
        return SideBySide(None, problem="the run on D stops: " + "; ".join(d.message for d in error.diagnostics))
    left = result.run.trace
    right = result.aligned_run.trace if result.aligned_run is not None else []
    steps: list[Step] = []
    divergence: int | None = None
    for a, b in zip_longest(left, right):
        parted = divergence is None and _parted(a, b)
        if parted:
            divergence = len(steps)
        steps.append(Step((a or b).line, (b or a).line, _text(a), _text(b), (a or b).depth, parted))
    if result.aligned_run is None and result.aligned_error is not None:
        line = result.aligned_error.span.line if result.aligned_error.span else 0
        steps.append(Step(line, line, "", "stops: " + result.aligned_error.message, 0, divergence is None))
        divergence = len(steps) - 1 if divergence is None else divergence
    return SideBySide(result, tuple(steps), divergence)


def _text(e: TraceEvent | None) -> str:
    return "" if e is None else e.text


def _parted(a: TraceEvent | None, b: TraceEvent | None) -> bool:
    """The runs part here: one has stopped, they are at other statements, a condition or an output differs,
    or a draw has other parameters (its value differs by the shift, which is the alignment, not a parting)."""
    if a is None or b is None:
        return True
    if (a.kind, a.line) != (b.kind, b.line):
        return True
    if a.kind == "sample":
        return a.text.rsplit(" = ", 1)[0] != b.text.rsplit(" = ", 1)[0]
    return a.text != b.text
