"""Rewrites that keep a program's meaning and bring it into a shape the proofs for every length take (`bounds.py`:
loop bounds read through constants are written out; `folds.py`: loops that only accumulate become folds;
`fusion.py`: two loops in sequence become one).
`strategies.prove_for_every_length` applies each of `strategies.REWRITES` in turn before the proofs for every
length."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..resolve import ResolvedMechanism


@dataclass(frozen=True)
class Rewritten:
    """The rewritten mechanism, and the sentence the report shows beside the loop invariant."""

    mechanism: ResolvedMechanism
    note: str


class NotRewritable(Exception):
    """The shape is there but one of the rewrite's hypotheses fails (the message says which)."""


@dataclass(frozen=True)
class Rewrite:
    """One rewrite (checker/strategies.py lists them in the order they apply)."""

    name: str
    """How the verdicts name it when its hypotheses fail."""
    apply: Callable[[ResolvedMechanism], Rewritten | None]
    """The rewritten mechanism; None where the shape is not there; raises `NotRewritable` (a subclass) when the
    shape is there but a hypothesis fails."""
