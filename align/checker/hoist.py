"""A list computed in a loop from values the loop does not change is computed once, before it:

    for i in 0 .. k {                                   order = top_k(noisy, k)
      if noisy[top_k(noisy, k)[i]] >= T {       ⟶      for i in 0 .. k {
        output top_k(noisy, k)[i]                         if noisy[order[i]] >= T { output order[i] }
      }                                                 }
    }

(loop-invariant code motion, for the builtins whose value is a list: the ranking reads the list as a name assigned
before the loop that walks it, `ranking.py`). A normal form applied before the proofs for every length
(`strategies.py`); the two programs compute the same values under these hypotheses, each checked here:

1. The loop is at the top level of the body (it runs once) and the call reads neither its index nor any name that
   the loop assigns or samples, nor a comprehension's index: every evaluation in the loop gives the value it has
   before the loop.
2. The call is evaluated in the first iteration on every run: one occurrence is in a statement at the top level of
   the loop's body, before any statement that may `break`, outside the branches of a conditional expression and the
   right operand of `and`/`or`, and outside comprehensions; and `requires` makes the loop run (its bound is at least
   its start plus 1 by a clause). So the hoisted call is evaluated exactly on the runs where the written one is,
   and a call that the interpreter refuses (top_k with k > len) is refused on the same inputs.
"""

from __future__ import annotations

import dataclasses
import functools
from fractions import Fraction

from .. import nodes as n
from ..resolve import ResolvedMechanism, children, free_names, names_used, walk_statements
from ..types import ListType
from ..unparse import unparse
from .exprs import relinked_noise
from .fusion import _map_stmt
from .rewrites import Rewritten

NAME = "hoisted lists"


def hoist(mech: ResolvedMechanism) -> Rewritten | None:
    """The mechanism with each call that hypotheses 1 and 2 hold of assigned before its loop; None when none."""
    body = list(mech.body)
    variables = dict(mech.variables)
    taken = names_used(mech)  # a fresh name is none of the program's or the alignment's
    readable = set(mech.variables) | {p.name for p in mech.params} | set(mech.constants)
    notes = []
    for k in range(len(body) - 1, -1, -1):
        loop = body[k]
        if not isinstance(loop, n.For) or not _runs(mech, loop):
            continue
        calls = _hoistable(loop, readable)
        if not calls:
            continue
        assigns, names = [], {}
        for text, call in calls.items():
            name = f"{call.func}_value"
            while name in taken:
                name += "_"
            taken.add(name)
            names[text] = (name, call)
            assigns.append(n.Assign(name, call.span, None, call, call.span))
            assert call.type is not None, "a resolved call has a type"
            variables[name] = call.type
            notes.append(f"`{text}` (line {call.span.line}) as `{name}`")

        named = functools.partial(_named, names=names)
        new_loop = dataclasses.replace(loop, body=tuple(_map_stmt(s, named) for s in loop.body))
        body[k:k + 1] = [*assigns, new_loop]
    if not notes:
        return None
    return Rewritten(dataclasses.replace(mech, body=tuple(body), noise=relinked_noise(mech, tuple(body)),
                                         variables=variables),
                     "a list that a loop computes from values it does not change is computed once before it: " +
                     ", ".join(notes))


def _named(x: n.Expr, names: dict[str, tuple[str, n.Call]]) -> n.Expr | None:
    """A hoisted call as the name assigned its value."""
    if isinstance(x, n.Call) and unparse(x) in names:
        name, call = names[unparse(x)]
        return n.VarRef(name, False, x.span, type=call.type)
    return None


def _runs(mech: ResolvedMechanism, loop: n.For) -> bool:
    """`requires` has a clause `hi >= lo + 1` for the loop's bounds, with lo a number (`k >= 1`, `1 <= k`, `k > 0`)."""
    if not (isinstance(loop.lo, n.Number) and loop.lo.value.denominator == 1):
        return False
    least = loop.lo.value + 1
    hi = unparse(loop.hi)
    for clause in mech.requires:
        if not (isinstance(clause, n.Compare) and len(clause.ops) == 1):
            continue
        (a, b), op = clause.operands, clause.ops[0]
        if unparse(b) == hi:
            a, b, op = b, a, {"<=": ">=", "<": ">", ">=": "<=", ">": "<"}.get(op, op)
        if unparse(a) == hi and isinstance(b, n.Number) and \
                ((op in (">=", "==") and b.value >= least) or (op == ">" and b.value >= least - Fraction(1))):
            return True
    return False


def _hoistable(loop: n.For, readable: set[str]) -> dict[str, n.Call]:
    """The list-valued calls of the loop (by text) that hypotheses 1 and 2 hold of."""
    written = {loop.var} | {s.target for s in walk_statements(loop.body) if isinstance(s, n.Assign)} | \
        {s.var for s in walk_statements(loop.body) if isinstance(s, n.Sample)}
    found: dict[str, n.Call] = {}
    for st in loop.body:
        for e in _first_evaluated(st):
            for x in _evaluated(e):
                if isinstance(x, n.Call) and isinstance(x.type, ListType) and not free_names(x) & written and \
                        free_names(x) <= readable and unparse(x) not in found:
                    found[unparse(x)] = x
        if any(isinstance(s, n.Break) for s in walk_statements((st,))):
            break  # the statements after one that may break are not evaluated on every run
    return found


def _first_evaluated(st: n.Stmt) -> list[n.Expr]:
    """The expressions a top-level statement of the body evaluates whenever it runs (not those of its branches)."""
    if isinstance(st, n.Assign):
        return [st.value] + ([st.index] if st.index is not None else [])
    if isinstance(st, n.Sample):
        return list(st.args)
    if isinstance(st, n.If):
        return [st.condition]
    if isinstance(st, n.Output):
        return [st.value]
    return []


def _evaluated(e: n.Expr) -> list[n.Expr]:
    """The sub-expressions of e evaluated whenever e is: not the branches of a conditional, not the right operand of
    `and`/`or`, not inside a comprehension."""
    result = [e]
    if isinstance(e, n.Conditional):
        return result + _evaluated(e.condition)
    if isinstance(e, n.BoolOp):
        return result + _evaluated(e.left)
    if isinstance(e, n.Comprehension):
        return result
    for child in children(e):
        result += _evaluated(child)
    return result

