"""A loop that keeps the index of the best entry of a list becomes the ranking builtin it computes:

    best = 0                                            best = argmax(v)
    for l in 1 .. len(v) {                      ⟶
      if v[l] > v[best] { best = l }
    }

(`<` for argmin; `0 .. len(v)` alike, whose first iteration compares v[0] with itself): a normal form applied
before the proofs for every length (`strategies.py`), after which the ranking's encoding (`ranking.py`) proves
the program for every length. The two programs compute the same index — the strict
comparison keeps the earlier index on a tie, as `argmax` breaks ties — draw the same noise and output the same,
under these hypotheses, each checked here (the loop stays as written otherwise):

1. The loop's body is that one `if`, without `else`; the comparison reads the list at the loop's index and at
   the kept index only, and the kept index is a variable set to 0 at the top of the body before the loop, which
   nothing between that assignment and the loop writes, nor v.
2. v has an entry: `requires` bounds the length of v below (`len(v) >= 1`), or v is a list that a loop over
   `0 .. len(q)` fills at its index in every iteration and `requires` bounds len(q) so (an `argmax` of an empty
   list is not defined, where the loop leaves 0).
"""

from __future__ import annotations

import dataclasses

from .. import nodes as n
from ..resolve import ResolvedMechanism, walk_statements
from ..types import INT
from ..unparse import unparse
from .bounds import length_at_least
from .rewrites import Rewritten

NAME = "running-rankings"


def rank(mech: ResolvedMechanism) -> Rewritten | None:
    """The mechanism with each running argmax/argmin loop of its body written as the builtin; None when none."""
    body = list(mech.body)
    notes = []
    for k, st in enumerate(body):
        found = _running(body, k, mech) if isinstance(st, n.For) else None
        if found is None:
            continue
        best, func, values = found
        call = n.Call(func, (values,), st.span, st.span, type=INT)
        body[k] = n.Assign(best, st.span, None, call, st.span)
        notes.append(f"line {st.span.line}: {best} = {unparse(call)}")
    if not notes:
        return None
    note = ("loops that keep the index of a list's best entry were written as the ranking they compute, which "
            "breaks ties to the earlier index as they do (" + "; ".join(notes) + ")")
    return Rewritten(dataclasses.replace(mech, body=tuple(body)), note)


def _running(body: list[n.Stmt], k: int, mech: ResolvedMechanism) -> tuple[str, str, n.Expr] | None:
    """(the kept index's name, `argmax` or `argmin`, the list) when body[k] is a running ranking (hypothesis 1 and
    2), else None."""
    loop = body[k]
    assert isinstance(loop, n.For)
    if not (isinstance(loop.lo, n.Number) and loop.lo.value in (0, 1)) or len(loop.body) != 1:
        return None
    (test,) = loop.body
    if not isinstance(test, n.If) or test.orelse or len(test.then) != 1:
        return None
    (keep,) = test.then
    if not (isinstance(keep, n.Assign) and keep.index is None and isinstance(keep.value, n.LocalRef)
            and keep.value.id == loop.var):
        return None
    best = keep.target
    c = test.condition
    if not (isinstance(c, n.Compare) and len(c.ops) == 1 and c.ops[0] in ("<", ">")):
        return None
    left, right = c.operands
    at_loop, at_best = _entry(left, loop.var), _entry(right, best, scalar=True)
    op = c.ops[0]
    if at_loop is None or at_best is None:  # written the other way round: v[best] < v[l]
        at_loop, at_best = _entry(right, loop.var), _entry(left, best, scalar=True)
        op = {"<": ">", ">": "<"}[op]
    if at_loop is None or at_best is None or unparse(at_loop) != unparse(at_best):
        return None
    values = at_loop
    if not (isinstance(loop.hi, n.Call) and loop.hi.func == "len" and unparse(loop.hi.args[0]) == unparse(values)):
        return None
    # the kept index starts at 0, set at the top of the body before the loop; nothing writes it or v in between
    start = next((j for j in range(k - 1, -1, -1) if _assigns(body[j], best)), None)
    if start is None:
        return None
    first = body[start]
    if not isinstance(first, n.Assign) or first.index is not None or \
            not (isinstance(first.value, n.Number) and first.value.value == 0):
        return None
    list_name = values.id if isinstance(values, (n.VarRef, n.ParamRef)) else None
    for st in walk_statements(tuple(body[start + 1:k])):
        if isinstance(st, n.Assign) and st.target in (best, list_name):
            return None
    if not _has_an_entry(body[:k], values, mech):
        return None
    return best, ("argmax" if op == ">" else "argmin"), values


def _assigns(st: n.Stmt, name: str) -> bool:
    """Whether st, at the top of the body, assigns `name` (itself, or in its branches or loops)."""
    return any(isinstance(x, n.Assign) and x.target == name for x in walk_statements((st,)))


def _entry(e: n.Expr, index: str, scalar: bool = False) -> n.Expr | None:
    """The list of `v[index]` (index a loop's variable, or with `scalar` a variable), else None."""
    if not isinstance(e, n.Index) or not isinstance(e.base, (n.VarRef, n.ParamRef)):
        return None
    i = e.index
    if scalar and isinstance(i, n.VarRef) and i.id == index:
        return e.base
    if not scalar and isinstance(i, n.LocalRef) and i.id == index:
        return e.base
    return None


def _has_an_entry(before: list[n.Stmt], values: n.Expr, mech: ResolvedMechanism) -> bool:
    """Hypothesis 2: `requires` says len(v) >= 1, or v is filled at its index by a loop over `0 .. len(q)` in
    every iteration (at the top of its body, no `break`) and `requires` says len(q) >= 1."""
    if isinstance(values, n.ParamRef):
        return length_at_least(mech, values.id, 1)
    if not isinstance(values, n.VarRef):
        return False
    for st in before:
        if isinstance(st, n.For) and any(isinstance(x, n.Assign) and x.target == values.id for x in st.body):
            fills = isinstance(st.lo, n.Number) and st.lo.value == 0 and isinstance(st.hi, n.Call) and \
                st.hi.func == "len" and isinstance(st.hi.args[0], n.ParamRef) and \
                not any(isinstance(x, n.Break) for x in walk_statements(st.body)) and \
                any(isinstance(x, n.Assign) and x.target == values.id and isinstance(x.index, n.LocalRef) and
                    x.index.id == st.var for x in st.body)
            return fills and isinstance(st.hi, n.Call) and isinstance(st.hi.args[0], n.ParamRef) and \
                length_at_least(mech, st.hi.args[0].id, 1) and \
                not any(_assigned(x, values.id) for x in before[before.index(st) + 1:])
    return False


def _assigned(st: n.Stmt, name: str) -> list[n.Expr]:
    """The values assigned to `name` in st (any write after the filling loop disqualifies the list)."""
    return [x.value for x in walk_statements((st,)) if isinstance(x, n.Assign) and x.target == name]
