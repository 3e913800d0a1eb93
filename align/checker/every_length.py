"""Checker (every length): the seam between the checker and its proofs for every input length.

A proof for every length is a `Strategy`: a name, why it declines a mechanism (None: try it), and `prove`, which
returns an `Inductive` (each obligation mapped to None, proved, or why not) or raises `NotInductive` when the
shape does not fit after all. Strategies read what they need from a `Context` — the solver's limits, the cost of
a draw, the supports of the noise, and the bounded check itself — so none imports the checker that tries them
(checker/strategies.py orders them, as data).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import z3

from ..obligations import ObligationId, ObligationKey
from ..results import Conjunct, Verdict
from ..smt.densities import density_conditions
from ..smt.encode import Draw, Encoding, _real
from ..smt.solver import Limits
from ..smt.supports import aligned_in_support

if TYPE_CHECKING:
    from ..resolve import ResolvedMechanism


class NotInductive(Exception):
    """The mechanism does not have the shape an inductive proof needs (the bounded verdict stands)."""


@dataclass
class Inductive:
    """What the induction proved: obligation ids mapped to None (proved) or the reason it could not."""

    proved: dict[ObligationKey, str | None] = field(default_factory=dict)
    invariant: list[Conjunct] = field(default_factory=list)
    notes: dict[ObligationId, list[str]] = field(default_factory=dict)
    """The lemmas and encodings each obligation's proof relied on (shown with its verdict)."""
    assumptions: set[str] = field(default_factory=set)
    """The measure-zero assumptions the proof used (no ties among ranked values), as the encodings word them."""
    refuted: dict[ObligationKey, Verdict] = field(default_factory=dict)
    """Refutations the strategy found at concrete inputs, with their counterexamples (the fixed-entries proof runs the
    bounded check at lengths beyond --max-length): the verdict of those obligations, whatever the others are."""


@dataclass(frozen=True)
class Context:
    """What a strategy may use besides the mechanism."""

    limits: Limits
    cost_term: Callable[..., Any]
    """c_i of one draw, as a z3 term (`checks.cost_term`)."""
    support_of: Callable[..., Any]
    """The supports of the noise, as z3 constraints (`supports.noise_support`)."""
    bounded: Callable[[ResolvedMechanism, int], list[Verdict]]
    """The bounded check of every obligation at every length <= t, whatever --max-length (`verify`)."""


@dataclass(frozen=True)
class Strategy:
    """One proof for every input length (checker/strategies.py lists them in the order they are tried)."""

    name: str
    """How the verdicts name it when it declines."""
    declines: Callable[[ResolvedMechanism], str | None]
    """Why the strategy is not for this mechanism (it is not tried, and says nothing); None: try it."""
    prove: Callable[[ResolvedMechanism, Context], Inductive]
    """The proof; raises `NotInductive` with the reason when the shape does not fit."""


def draw_conditions(mech: ResolvedMechanism, enc: Encoding,
                    shifted: Sequence[tuple[Sequence[Draw], Callable[[Draw], Any]]],
                    paired: Sequence[tuple[Sequence[Draw], Sequence[Draw]]]) -> dict[ObligationKey, list[z3.BoolRef]]:
    """Lemma 1's conditions on each draw, as a proof for every length states them of one iteration (and of the
    prefix before the loop): C4d, a shifted draw stays in its support; C3, a draw from a non-Lipschitz density is
    not shifted (per site); C0, a draw has the same well-formed parameters in both runs (per site). `shifted`:
    the first run's draws with the shift ψ of each (the alignment's term for it); `paired`: the draws of the run
    on D beside the aligned run's. Every obligation key is present, in order (no formula: nothing to show)."""
    conditions: dict[ObligationKey, list[z3.BoolRef]] = {(ObligationId.C4D, None): []}
    for s in mech.noise:
        conditions[ObligationId.C3, s.name] = []
        conditions[ObligationId.C0, s.name] = []
    assert mech.alignment is not None, "a proof for every length is of an alignment"
    for draws, shift in shifted:
        for d in draws:
            site = mech.noise_site(d.site)
            psi = _real(shift(d))
            if mech.alignment.shift_of(d.site) is not None:
                conditions[ObligationId.C4D, None] += [z3.Implies(d.guard, c)
                                                       for c, _ in aligned_in_support(d, psi, site.distribution)]
            if not site.distribution.alignable:
                conditions[ObligationId.C3, d.site].append(z3.Implies(d.guard, psi == 0))
    for first, second in paired:
        for c in density_conditions(enc, first, second):
            conditions.setdefault((ObligationId.C0, c.draw.site), []).append(c.formula)
    return dict(sorted(conditions.items(), key=lambda item: (item[0][0], item[0][1] or "")))
