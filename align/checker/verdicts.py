"""Checker (verdicts): the verdict of one obligation while the checker builds it up, frozen at the end.

The bounded check visits every input shape and may refute, make unknown or leave proved; the induction may
extend the scope; the replay may confirm or downgrade a refutation; notes accumulate. `PendingVerdict` holds
that state and `freeze` turns it into the immutable `results.Verdict` the rest of `align` sees. Each note names
the statuses it speaks of (`note`), so that a later change of status cannot leave a note that contradicts it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..counterexample import Counterexample
from ..obligations import Obligation
from ..results import Conjunct, Note, Verdict
from ..status import Status


@dataclass
class PendingVerdict:
    obligation: Obligation
    status: Status = Status.PROVED
    scope: str = ""
    seconds: float = 0.0
    reason: str = ""
    counterexample: Counterexample | None = None
    notes: list[Note] = field(default_factory=list)
    value: Any = None
    invariant: tuple[Conjunct, ...] = ()
    vacuous: bool = False

    def fail(self, status: Status, reason: str = "", counterexample: Counterexample | None = None) -> None:
        """Weaken the verdict: a refutation stays; otherwise refuted, or unknown over proved and bounded."""
        if self.status == Status.REFUTED:
            return
        if status == Status.REFUTED or self.status >= Status.BOUNDED:
            self.status, self.reason, self.counterexample = status, reason, counterexample

    def note(self, text: str, *about: Status) -> None:
        """Add a note that is true of the verdict while its status is one of `about` (of every status when none
        is named: a fact about the check)."""
        self.notes.append(Note(text, frozenset(about) if about else frozenset(Status)))

    def freeze(self) -> Verdict:
        return Verdict(self.obligation, self.status, self.scope, self.seconds, self.reason, self.counterexample,
                       tuple(self.notes), self.value, self.invariant, self.vacuous)
