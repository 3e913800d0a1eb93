"""A list that one loop writes and reads only at its own index, and that nothing else reads, is the iteration's value:

    for i in 0 .. len(q) {                              for i in 0 .. len(q) {
      eta ~ Lap(1 / eps)                                  eta ~ Lap(1 / eps)
      noisy[i] = q[i] + eta                     ⟶         noisy = q[i] + eta
      if noisy[i] >= T { output TOP } ...                 if noisy >= T { output TOP } ...
    }                                                   }

(a fill loop and the walk that reads it, written as one loop). A normal form applied before the proofs for every
length (`strategies.py`): the induction does not take a loop that builds a list. The two programs draw the same
noise and output the same, under these hypotheses, each checked here (the list stays as written otherwise):

1. Every assignment to the list is `x[i] = e` in one loop over `0 .. n` (a loop with no loop nested in it), in its
   body or in branches of it, i the loop's index, and every path through an iteration assigns it: entry i is
   written in iteration i, so the list has no gap (a list written on some paths only stops the written program
   at the gap, on some inputs and not their neighbours: specs/incorrect/own_entries_list_with_gaps.dp).
2. Every read of the list is `x[i]` in that loop (i not rebound by a comprehension), after an assignment to `x[i]`
   on every path through the iteration so far: it reads the entry this iteration wrote last, which the
   iteration's variable holds too. Nothing else reads the list: not a statement outside the loop, not the
   alignment's `invariant` clauses.

Entries of other iterations are then never read, so keeping only the current one changes no value.
"""

from __future__ import annotations

import dataclasses

from .. import nodes as n
from ..resolve import ResolvedMechanism, children, rewrite, statement_exprs, walk, walk_statements
from ..types import ListType
from .exprs import relinked_noise
from .fusion import _map_stmt
from .rewrites import Rewritten

NAME = "own entries"


class _NotOwn(Exception):
    """The list breaks a hypothesis (it stays a list)."""


def own_entries(mech: ResolvedMechanism) -> Rewritten | None:
    """The mechanism with every list that hypotheses 1 and 2 hold of kept as the iteration's value; None when
    none qualifies."""
    rewritten, notes = mech, []
    for name in sorted(v for v, t in mech.variables.items() if isinstance(t, ListType)):
        loop = _own_loop(rewritten, name)
        if loop is not None:
            rewritten = _scalar(rewritten, name, loop)
            notes.append(f"`{name}` (line {loop.span.line})")
    if not notes:
        return None
    return Rewritten(rewritten, f"a list that one loop writes and reads only at its own index, after writing it in "
                                f"the same iteration, and that nothing else reads, is the iteration's value: "
                                f"{', '.join(notes)}")


def _reads(e: n.Expr, name: str) -> list[n.Expr]:
    return [x for x in walk(e) if isinstance(x, n.VarRef) and x.id == name]


def _own_loop(mech: ResolvedMechanism, name: str) -> n.For | None:
    """The loop that hypotheses 1 and 2 hold in for the list `name`, else None."""
    loops = [st for st in mech.body if isinstance(st, n.For) and
             any(isinstance(s, n.Assign) and s.target == name for s in walk_statements(st.body))]
    if len(loops) != 1:
        return None
    loop = loops[0]
    outside = [st for st in mech.body if st is not loop]
    if any((isinstance(s, n.Assign) and s.target == name) or any(_reads(e, name) for e in statement_exprs(s))
           for s in walk_statements(tuple(outside))):
        return None
    alignment = mech.alignment
    if alignment is not None and any(_reads(inv.condition, name) for inv in alignment.invariants):
        return None
    if not (isinstance(loop.lo, n.Number) and loop.lo.value == 0):
        return None  # a list is filled from its index 0: a first write at 1 leaves a gap
    try:
        if not _block(loop.body, name, loop.var, False):
            return None  # written on some paths only: the written program stops at the gap
    except _NotOwn:
        return None
    return loop


def _block(statements: tuple[n.Stmt, ...], name: str, i: str, written: bool) -> bool:
    """Whether `x[i]` is written on every path through `statements`, from `written` at their start; raises
    _NotOwn where a hypothesis fails."""
    for st in statements:
        for e in statement_exprs(st):
            _read_own(e, name, i, written)
        if isinstance(st, n.Assign) and st.target == name:
            if not (isinstance(st.index, n.LocalRef) and st.index.id == i):
                raise _NotOwn
            written = True
        elif isinstance(st, n.If):
            written = _block(st.then, name, i, written) & _block(st.orelse, name, i, written)
        elif isinstance(st, (n.For, n.While)):
            raise _NotOwn  # a nested loop (its noise sites would point at the loop as written)
    return written


def _read_own(e: n.Expr, name: str, i: str, written: bool) -> None:
    """Every read of the list in e is `x[i]`, i not rebound, with the entry written."""
    def visit(x: n.Expr, rebound: bool) -> None:
        if isinstance(x, n.Index) and isinstance(x.base, n.VarRef) and x.base.id == name:
            if rebound or not written or not (isinstance(x.index, n.LocalRef) and x.index.id == i):
                raise _NotOwn
            return
        if isinstance(x, n.VarRef) and x.id == name:
            raise _NotOwn  # the list as a whole
        inner = rebound or (isinstance(x, n.Comprehension) and x.var == i)
        for child in children(x):
            visit(child, inner)

    visit(e, False)


def _scalar(mech: ResolvedMechanism, name: str, loop: n.For) -> ResolvedMechanism:
    t = mech.variables[name]
    assert isinstance(t, ListType)

    def entry(x: n.Expr) -> n.Expr | None:
        if isinstance(x, n.Index) and isinstance(x.base, n.VarRef) and x.base.id == name:
            return n.VarRef(name, False, x.span, type=t.elem)
        return None

    def statement(st: n.Stmt) -> n.Stmt:
        if isinstance(st, n.Assign) and st.target == name:
            return dataclasses.replace(st, value=rewrite(st.value, entry), index=None)
        if isinstance(st, n.If):
            return dataclasses.replace(st, condition=rewrite(st.condition, entry),
                                       then=tuple(statement(s) for s in st.then),
                                       orelse=tuple(statement(s) for s in st.orelse))
        return _map_stmt(st, entry)

    new_loop = dataclasses.replace(loop, body=tuple(statement(s) for s in loop.body))
    body = tuple(new_loop if st is loop else st for st in mech.body)
    return dataclasses.replace(mech, body=body, noise=relinked_noise(mech, body),
                               variables={**mech.variables, name: t.elem})
