"""A list that a loop fills at its index and that only fixed entries of are read after it keeps those entries as
variables:

    for i in 0 .. len(q) {                              x_0 = 0
      eta ~ Lap(1 / eps)                                for i in 0 .. len(q) {
      x[i] = q[i] + eta                         ⟶         eta ~ Lap(1 / eps)
    }                                                     if i == 0 { x_0 = q[i] + eta }
    output x[0]                                         }
                                                        output x_0

(StatDP's histogram). A normal form applied before the proofs for every length (`strategies.py`): the induction
does not take a loop that builds a list, and takes statements after the loop. The two programs draw the same noise
and output the same, under these hypotheses, each checked here (the list stays as written otherwise):

1. The loop assigns the list once, at the top of its body, at its index, and does not `break`: entry k is written
   by iteration k, unconditionally, and not changed after.
2. Nothing else assigns the list, and nothing reads it but `x[k]` after the loop, k a number.
3. Every entry read was written: the loop runs over `0 .. len(q)` and `requires` says len(q) > k for the largest
   k read (`len(q) >= k + 1`); the placeholder 0 before the loop is then never read.
4. The entries are numbers (the placeholder is one), and a statement after the loop that reads one draws no noise
   and holds no loop (it is rebuilt with the variables in place of the entries).
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

from .. import nodes as n
from ..resolve import ResolvedMechanism, names_used, statement_exprs, walk, walk_statements
from ..types import BOOL, INT, REAL, ListType
from ..unparse import unparse
from .bounds import length_at_least
from .fusion import _map_stmt
from .rewrites import Rewritten

NAME = "kept-entries"


def keep_entries(mech: ResolvedMechanism) -> Rewritten | None:
    """The mechanism with the entries read after a filling loop kept as variables; None when no list qualifies."""
    body = list(mech.body)
    for k, loop in enumerate(body):
        if not isinstance(loop, n.For) or any(isinstance(x, n.Break) for x in walk_statements(loop.body)):
            continue
        for fill in loop.body:
            if not (isinstance(fill, n.Assign) and isinstance(fill.index, n.LocalRef) and fill.index.id == loop.var):
                continue
            kept = _kept(mech, body, k, loop, fill)
            if kept:
                return _rewrite(mech, body, k, loop, fill, kept)
    return None


def _kept(mech: ResolvedMechanism, body: list[n.Stmt], k: int, loop: n.For, fill: n.Assign) -> list[int]:
    """The entries read after the loop when hypotheses 1-4 hold, else []."""
    name = fill.target
    t = mech.variables.get(name)
    if not (isinstance(t, ListType) and t.elem in (INT, REAL)):
        return []
    if sum(1 for st in walk_statements(tuple(body)) if isinstance(st, n.Assign) and st.target == name) != 1:
        return []
    entries: set[int] = set()
    places = [(False, st) for st in walk_statements(tuple(body[:k]) + loop.body)] + \
        [(True, st) for st in walk_statements(tuple(body[k + 1:]))]
    for after, st in places:
        for e in statement_exprs(st):
            indexed = [x for x in walk(e) if isinstance(x, n.Index) and isinstance(x.base, n.VarRef)
                       and x.base.id == name]
            reads = [x for x in walk(e) if isinstance(x, n.VarRef) and x.id == name]
            if len(reads) != len(indexed):  # the list read as a whole
                return []
            for x in indexed:
                if not after or not _number(x.index):
                    return []
                assert isinstance(x.index, n.Number)
                entries.add(int(x.index.value))
    if not entries or not _long_enough(mech, loop, max(entries) + 1):
        return []
    # a statement that reads an entry is rebuilt: it holds no sampling statement and no loop (their records, the
    # noise sites, point at the statements as written)
    for st in body[k + 1:]:
        if _reads(st, name) and any(isinstance(x, (n.Sample, n.For, n.While)) for x in walk_statements((st,))):
            return []
    return sorted(entries)


def _reads(st: n.Stmt, name: str) -> bool:
    return any(isinstance(x, n.VarRef) and x.id == name
               for s in walk_statements((st,)) for e in statement_exprs(s) for x in walk(e))


def _number(e: n.Expr) -> bool:
    return isinstance(e, n.Number) and e.is_integer and e.value >= 0


def _long_enough(mech: ResolvedMechanism, loop: n.For, least: int) -> bool:
    """Hypothesis 3: the loop runs over `0 .. len(q)` and `requires` says len(q) >= least."""
    if not (isinstance(loop.lo, n.Number) and loop.lo.value == 0 and isinstance(loop.hi, n.Call)
            and loop.hi.func == "len" and isinstance(loop.hi.args[0], n.ParamRef)):
        return False
    return length_at_least(mech, loop.hi.args[0].id, least)


def _rewrite(mech: ResolvedMechanism, body: list[n.Stmt], k: int, loop: n.For, fill: n.Assign,
             kept: list[int]) -> Rewritten:
    name = fill.target
    t = mech.variables[name]
    assert isinstance(t, ListType)
    taken = names_used(mech)  # a fresh name is none of the program's or the alignment's
    names = {}
    for entry in kept:
        candidate = f"{name}_{entry}"
        while candidate in taken:
            candidate += "_"
        names[entry] = candidate
        taken.add(candidate)
    span = fill.span
    zero = n.Number(Fraction(0), t.elem == INT, span, type=t.elem)
    placeholders = [n.Assign(names[e], span, None, zero, span) for e in kept]
    writes = tuple(
        n.If(n.Compare(("==",), (n.LocalRef(loop.var, span, type=INT), n.Number(Fraction(e), True, span, type=INT)),
                       span, type=BOOL),
             (n.Assign(names[e], fill.target_span, None, fill.value, span),), (), span)
        for e in kept)
    new_body: list[n.Stmt] = []
    for st in loop.body:
        new_body.extend(writes if st is fill else (st,))
    new_loop = dataclasses.replace(loop, body=tuple(new_body))

    def entry_of(x: n.Expr) -> n.Expr | None:
        if isinstance(x, n.Index) and isinstance(x.base, n.VarRef) and x.base.id == name and _number(x.index):
            assert isinstance(x.index, n.Number)
            return n.VarRef(names[int(x.index.value)], False, x.span, type=t.elem)
        return None

    after = [_map_stmt(st, entry_of) if _reads(st, name) else st for st in body[k + 1:]]
    noise = tuple(dataclasses.replace(site, loop=new_loop) if site.loop is loop else site for site in mech.noise)
    variables = {**mech.variables, **dict.fromkeys(names.values(), t.elem)}
    rewritten = dataclasses.replace(mech, body=(*body[:k], *placeholders, new_loop, *after), noise=noise,
                                    variables=variables)
    shown = ", ".join(f"`{name}[{e}]` as `{names[e]}`" for e in kept)
    note = (f"the loop at line {loop.span.line} fills `{name}` at its index and only fixed entries of it are read "
            f"after it: they are kept as variables ({shown}), which the loop sets in the iteration of their index "
            f"({unparse(loop.hi)} is at least {max(kept) + 1} by `requires`)")
    return Rewritten(rewritten, note)
