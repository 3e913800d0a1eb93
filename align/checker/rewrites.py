"""Rewrites that keep a program's meaning and bring it into a shape the proofs for every length take
(`folds.py`: loops that only accumulate become folds; `fusion.py`: two loops in sequence become one).
`verify.prove_for_every_length` applies folds, then fusion, before the proofs for every length."""

from __future__ import annotations

from dataclasses import dataclass

from ..resolve import ResolvedMechanism


@dataclass(frozen=True)
class Rewritten:
    """The rewritten mechanism, and the sentence the report shows beside the loop invariant."""

    mechanism: ResolvedMechanism
    note: str


class NotRewritable(Exception):
    """The shape is there but one of the rewrite's hypotheses fails (the message says which)."""
