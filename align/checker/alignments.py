"""The alignment in a normal form: the same local alignments, spelled one way, so that the proofs for every length
that read its shape (the ranking's index sets, `ranking.py`) do not depend on how it was written.

    i == out[0] ? e : 0                  ⟶   i in [out[0]] ? e : 0      (an index against the output, as a condition)
    i not in [j] ? 0 : e                 ⟶   i in [j] ? e : 0
    not (c) ? a : b                      ⟶   c ? b : a
    max(l in 0 .. len(q) if l != j: e)   ⟶   max(l in 0 .. len(q) not in [j]: e)
    max(l in 0 .. len(q) if l not in S: e)  ⟶   max(l in 0 .. len(q) not in S: e)
    let d = out[0]; ... [d] ...          ⟶   ... [out[0]] ...
    len(out) > i,  i - len(out) < 0      ⟶   i < len(out)              (integers)
    sum(l in D: a) - sum(l in D: b)      ⟶   sum(l in D: a - b)

Each step keeps every value: `i == e` and `i in [e]` are the same truth value for integers; a filter `l != j` keeps
exactly the indices of the domain that `not in [j]` keeps (and a filter `l not in S`, those that `not in S`
keeps); swapping a conditional's branches under the negated
condition picks the same branch; a let is a name for a value that depends on nothing but what its expression
reads (lets are evaluated once, in order, and an alignment has no state), so writing the expression in its place
changes no value; an integer comparison means the same whichever side each term is written on, and a difference
of two sums over one range is the sum of the differences. Only lets without a comprehension are written out (a `max`
over a set stays a name: the ranking reads `m' - m` as written). The proofs then see the same φ_{D,D',ω} for every
(D, D', ω).
"""

from __future__ import annotations

import dataclasses

from .. import nodes as n
from ..resolve import ResolvedMechanism, walk
from ..types import BOOL, INT, ListType
from ..unparse import unparse
from .exprs import map_expr
from .rewrites import Rewritten

NAME = "alignment forms"


def _is_int(e: n.Expr) -> bool:
    return getattr(e, "type", None) == INT


def _member(element: n.Expr, item: n.Expr, negated: bool, span) -> n.Member:
    return n.Member(element, n.ListLit((item,), item.span, ListType(INT)), negated, span, BOOL)


def _index_test(x: n.Expr) -> n.Expr:
    """A conditional's condition `i == e` (`i != e`), i an index, as `i in [e]` (`i not in [e]`)."""
    if isinstance(x, n.Compare) and len(x.ops) == 1 and x.ops[0] in ("==", "!=") and \
            all(_is_int(o) for o in x.operands):
        left, right = x.operands
        if isinstance(right, n.LocalRef):
            left, right = right, left  # the index on the left, as `i in [e]` reads
        # an index against a position the output gives (`i == out[0]`): an index set of one, as the ranking reads
        if isinstance(left, n.LocalRef) and any(isinstance(y, (n.OutRef, n.LetRef)) for y in walk(right)):
            return _member(left, _normal(right), x.ops[0] == "!=", x.span)
    return _normal(x)


_FLIPPED = {">": "<", ">=": "<="}


def _zero(e: n.Expr) -> bool:
    return isinstance(e, n.Number) and e.value == 0


def _order(x: n.Compare) -> n.Expr | None:
    """An integer comparison as `a < b` or `a <= b`: `b > a` and `a - b < 0` (`0 < b - a`) are the same truth value
    for integers (exact arithmetic)."""
    if len(x.ops) != 1 or not all(_is_int(o) for o in x.operands) or x.ops[0] not in ("<", "<=", ">", ">="):
        return None
    op, (left, right) = x.ops[0], x.operands
    if op in _FLIPPED:
        op, left, right = _FLIPPED[op], right, left
    if isinstance(left, n.Binary) and left.op == "-" and _zero(right):
        difference = left
        left, right = difference.left, difference.right  # a - b < 0
    elif isinstance(right, n.Binary) and right.op == "-" and _zero(left):
        difference = right
        left, right = difference.right, difference.left  # 0 < b - a
    if op == x.ops[0] and left is x.operands[0] and right is x.operands[1]:
        return None
    return n.Compare((op,), (_normal(left), _normal(right)), x.span, x.type)


def _same_range(a: n.Comprehension, b: n.Comprehension) -> bool:
    return a.var == b.var and all(unparse(u) == unparse(v) if u is not None and v is not None else u is v
                                  for u, v in ((a.domain, b.domain), (a.excluded, b.excluded),
                                               (a.condition, b.condition)))


def _sums(x: n.Binary) -> n.Expr | None:
    """`sum(l in D: a) - sum(l in D: b)` (or `+`) as `sum(l in D: a - b)`: the same value, term by term."""
    a, b = x.left, x.right
    if x.op not in "+-" or not (isinstance(a, n.Comprehension) and isinstance(b, n.Comprehension) and
                                 a.func == b.func == "sum" and _same_range(a, b)):
        return None
    body = n.Binary(x.op, _normal(a.body), _normal(b.body), x.span, type=x.type)
    return dataclasses.replace(a, body=body, domain=_normal(a.domain) if a.domain is not None else None,
                               span=x.span, type=x.type)


def _step(x: n.Expr) -> n.Expr | None:
    """One rewrite at x (None: look inside)."""
    if isinstance(x, n.Compare):
        return _order(x)
    if isinstance(x, n.Binary):
        return _sums(x)
    if isinstance(x, n.Conditional):
        condition = _index_test(x.condition)
        then, orelse = _normal(x.then), _normal(x.orelse)
        if isinstance(condition, n.Unary) and condition.op == "not":
            return n.Conditional(condition.operand, orelse, then, x.span, x.type)
        if isinstance(condition, n.Member) and condition.negated:
            return n.Conditional(dataclasses.replace(condition, negated=False), orelse, then, x.span, x.type)
        return n.Conditional(condition, then, orelse, x.span, x.type)
    if isinstance(x, n.Comprehension) and x.excluded is None:
        excluded = _excluded(x)
        if excluded is not None:
            return dataclasses.replace(x, condition=None, body=_normal(x.body), domain=x.domain,
                                       excluded=_normal(excluded))
    return None


def _reads(e: n.Expr, var: str) -> bool:
    return any(isinstance(y, n.LocalRef) and y.id == var for y in walk(e))


def _excluded(x: n.Comprehension) -> n.Expr | None:
    """The index set a comprehension's filter removes from its domain: `if l != j` removes [j], `if l not in S` (or
    `if not (l in S)`) removes S (S not reading l); None for any other filter."""
    c = x.condition
    if isinstance(c, n.Compare) and len(c.ops) == 1 and c.ops[0] == "!=":
        left, right = c.operands
        own = [o for o in (left, right) if isinstance(o, n.LocalRef) and o.id == x.var]
        other = right if own and own[0] is left else left
        if len(own) == 1 and not _reads(other, x.var):
            return n.ListLit((other,), other.span, ListType(INT))
    if isinstance(c, n.Unary) and c.op == "not" and isinstance(c.operand, n.Member):
        c = dataclasses.replace(c.operand, negated=not c.operand.negated)
    if isinstance(c, n.Member) and c.negated and isinstance(c.element, n.LocalRef) and c.element.id == x.var and \
            not isinstance(c.collection, n.Range) and not _reads(c.collection, x.var):
        return c.collection
    return None


def _normal(e: n.Expr) -> n.Expr:
    return map_expr(e, _step)


def normal_alignment(mech: ResolvedMechanism) -> Rewritten | None:
    """The mechanism with its alignment in the normal form above; None when that changes nothing."""
    alignment = mech.alignment
    if alignment is None:
        return None
    simple: dict[str, n.Expr] = {}

    def written_out(e: n.Expr) -> n.Expr:
        return map_expr(e, lambda x: simple[x.text] if isinstance(x, n.LetRef) and x.text in simple else None)

    lets = []
    for let in alignment.lets:
        value = _normal(written_out(let.value))
        if not any(isinstance(y, n.Comprehension) for y in walk(value)):
            simple[let.name] = value
        lets.append(dataclasses.replace(let, value=value))
    shifts = tuple(dataclasses.replace(s, shift=_normal(written_out(s.shift))) for s in alignment.shifts)
    invariants = tuple(dataclasses.replace(i, condition=_normal(written_out(i.condition)))
                       for i in alignment.invariants)
    # a let that nothing reads stays: the alignment is defined only where each of its lets is (an unused
    # `let d = out[len(out)] is TOP` makes it defined nowhere)
    read = {x.text for e in [*(s.shift for s in alignment.shifts), *(let.value for let in alignment.lets),
                             *(i.condition for i in alignment.invariants)] for x in walk(e) if isinstance(x, n.LetRef)}
    kept = tuple(let for let in lets if let.name not in simple or let.name not in read)
    new = dataclasses.replace(alignment, lets=kept, shifts=shifts, invariants=invariants)
    # compared as trees: the text of `max(l in D not in S: e)` is the filter's, `if l not in S`
    if [s.shift for s in new.shifts] == [s.shift for s in alignment.shifts] and \
            [let.value for let in new.lets] == [let.value for let in alignment.lets]:
        return None
    return Rewritten(dataclasses.replace(mech, alignment=new),
                     "the alignment was read in a normal form that keeps every shift's value (`i == j` as "
                     "`i in [j]`, filters `l != j` as `not in [j]`, integer comparisons as `a < b`, sums over one "
                     "range as one sum, short lets written out)")
