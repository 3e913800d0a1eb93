"""Checker (every length): the seam between the checker and its proofs for every input length.

A proof for every length is a `Strategy`: a name, why it declines a mechanism (None: try it), and `prove`, which
returns an `Inductive` (each obligation mapped to None, proved, or why not) or raises `NotInductive` when the
shape does not fit after all. Strategies read what they need from a `Context` — the solver's limits, the cost of
a draw, the supports of the noise, and the bounded check itself — so none imports the checker that tries them
(checker/strategies.py orders them, as data).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..obligations import ObligationId, ObligationKey
from ..results import Conjunct, Verdict
from ..smt.solver import Limits

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
