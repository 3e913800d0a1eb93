"""Checker (strategies): the proofs for every input length, in the order they are tried, as data.

`prove_for_every_length` first applies the rewrites that bring a program into a strategy's shape (`folds.py`:
a running fold into its builtin; `fusion.py`: loops over one range into one), then tries each strategy of
`STRATEGIES` that does not decline the mechanism, and takes the first proof; when none fits, each again on the
program as written (a rewrite may take it out of a strategy's shape: a running sum folded into `sum(...)` leaves
no loop for the induction's ghosts); then the body may still be proved part by part (`phases.py`), each part by
this function again. Adding a strategy is one record here and
one module with its `prove(mech, context)` (checker/every_length.py: the protocol); adding a rewrite, one record
in `REWRITES` (checker/rewrites.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..obligations import KINDS, ObligationId
from ..resolve import ResolvedMechanism
from . import (
    acyclic,
    alignments,
    bounds,
    entries,
    folds,
    fusion,
    guards,
    hoist,
    induction,
    kept_entries,
    named_outputs,
    offsets,
    own_entries,
    phases,
    ranking,
    records,
    running,
)
from .every_length import Context, Inductive, NotInductive, Strategy
from .rewrites import NotRewritable, Rewrite, Rewritten

REWRITES: tuple[Rewrite, ...] = (Rewrite("folds", folds.fold), Rewrite("fusion", fusion.fuse))
"""The rewrites, in the order they apply: a running fold into its builtin first (a fused loop may hold one). Before
them (and before the parts are split), loop bounds read through constants are written out (`bounds.py`), a loop
that keeps a list's best index is the ranking it computes (`running.py`), the fixed entries of a filled list read
after its loop are variables (`kept_entries.py`), a list read only at its own index in the loop that writes it is
the iteration's value (`own_entries.py`), loops are counted from 0 (`offsets.py`),
a list-valued call that a loop evaluates from values it does not change is assigned before it (`hoist.py`), a
value output at the top level and read again later is named once (`named_outputs.py`),
the alignment is read in a normal form (`alignments.py`) and a shift's guard `i < len(out)` is true where member i
is drawn by a loop whose every iteration outputs (`guards.py`)."""


def _records_only(mech: ResolvedMechanism) -> bool:
    """Add/remove-one-record neighbours: some list's length is private, so the two runs read lists of different
    lengths, which the induction over one index and the ranking encoding cannot relate."""
    return any(not p.length_public for p in mech.params)


STRATEGIES: tuple[Strategy, ...] = (
    Strategy(entries.NAME, lambda m: None if entries.applies(m) else "the body has a loop", entries.prove),
    Strategy(records.NAME, lambda m: None if _records_only(m) else "every list has a public length",
             records.prove),
    Strategy(induction.NAME, lambda m: None, induction.prove),
    Strategy(ranking.NAME, lambda m: "a list of private length" if _records_only(m) else None, ranking.prove),
)
"""Each proof for every length, in the order tried: fixed entries first for a body without a loop (its bounded
check of a few lengths is exact there); with add/remove-one-record neighbours the records' summaries, before the
induction (which takes such lists only with a loop over a public bound, whose folds it summarises); the ranking's
quantified encoding last."""


NORMAL_FORMS = (bounds.inline_bounds, running.rank, kept_entries.keep_entries, own_entries.own_entries,
                hoist.hoist, named_outputs.name_outputs, offsets.from_zero, alignments.normal_alignment,
                guards.drawn_guards)
"""The normal forms of the program as written, in the order they apply (the parts see them too)."""


@dataclass(frozen=True)
class Engines:
    """What `prove_for_every_length` tries: all of it by default; a test that cross-checks a fast path against the
    general engine (tests/test_cross_check.py) names one strategy and leaves out the normal form that would hand
    the program back to the fast path."""

    strategies: tuple[Strategy, ...] = STRATEGIES
    normal_forms: tuple[Callable[[ResolvedMechanism], Rewritten | None], ...] = NORMAL_FORMS

    def only(self, name: str, without: tuple[Callable[[ResolvedMechanism], Rewritten | None], ...] = ()) -> Engines:
        return Engines(tuple(s for s in self.strategies if s.name == name),
                       tuple(f for f in self.normal_forms if f not in without))


def _first_proof(mech: ResolvedMechanism, context: Context, reasons: list[str],
                 engines: Engines = Engines()) -> Inductive | None:
    """The proof of the first strategy of `engines` that does not decline `mech` and fits it; why each tried did
    not, in `reasons`."""
    for strategy in engines.strategies:
        if strategy.declines(mech) is not None:
            continue
        try:
            return strategy.prove(mech, context)
        except NotInductive as error:
            reasons.append(f"{strategy.name}: {error}")
    return None


def prove_for_every_length(mech: ResolvedMechanism, context: Context,
                           engines: Engines = Engines()) -> tuple[Inductive | None, list[str]]:
    """The proof for every length by the first strategy that fits (after the rewrites), else part by part; the
    proof (None when no shape fits), and why each strategy tried did not (`verify.strategy_context` makes the
    context)."""
    if mech.mapped_sites:
        names = ", ".join(s.display for s in mech.mapped_sites)
        return None, [f"the alignment maps the values of {names} (noise with finitely many values, at the exact cost "
                      "of the map); the proofs for every length encode Lipschitz shifts only, so the map is checked "
                      "at each length up to --max-length"]
    reasons = []
    rewrite_notes = []
    # normal forms of the program as written (the parts see them too)
    for normal_form in engines.normal_forms:
        normalised = normal_form(mech)
        if normalised is not None:
            mech = normalised.mechanism
            rewrite_notes.append(normalised.note)
    written = mech
    normal_notes = len(rewrite_notes)
    for rewrite in REWRITES:
        try:
            rewritten = rewrite.apply(mech)
        except NotRewritable as error:
            reasons.append(f"{rewrite.name}: {error}")
            continue
        if rewritten is not None:
            mech = rewritten.mechanism
            rewrite_notes.append(rewritten.note)
    result = _first_proof(mech, context, reasons, engines)
    if result is None and mech is not written:
        # the program as written, when a rewrite took it out of every strategy's shape (a running sum folded into
        # `sum(...)` leaves no loop for the induction's ghosts)
        result = _first_proof(written, context, [], engines)
        if result is not None:
            mech = written
            del rewrite_notes[normal_notes:]  # the rewrites' notes are not about this proof
    if result is None:
        try:
            return phases.prove(written, lambda part: prove_for_every_length(part, context, engines)[0]), reasons
        except NotInductive as error:
            return None, reasons + [f"{phases.NAME}: {error}"]
    for key in (k for k, kind in KINDS.items() if kind.by_invariant and rewrite_notes):  # beside the invariant
        result.notes.setdefault(key, [])[:0] = rewrite_notes
    if (ObligationId.C4B, None) not in result.proved:
        no_reads = acyclic.reads_no_noise(mech)
        result.proved[ObligationId.C4B, None] = None if no_reads else "shifts read noise"
        if no_reads:
            result.notes.setdefault(ObligationId.C4B, []).append("no shift reads noise, so every order of the noise "
                                                                 "is one in which each shift reads only earlier noise")
    return result, reasons
