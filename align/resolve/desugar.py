"""Desugaring, a pure tree -> tree pass over alignment expressions: comprehension domains made explicit and
shifts split from the aligned value they are written as.

`split_shift` finds ψ in `x' = x + ψ`; `explicit_domains` gives `max(l not in I: e)` its universe (`0 ..
len(q)` or a noise family's loop range), found by `universe`, which resolution supplies: it knows which names
are list parameters and families.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from .. import nodes as n
from .program import is_expr, walk

Universe = Callable[[n.Comprehension, n.Name], "n.Range | None"]
"""The universe of a comprehension whose body indexes `base` with its variable (None: `base` has none)."""


def infer_universe(e: n.Comprehension, universe: Universe) -> n.Range | None:
    """The domain of a comprehension written without one: that of the first list or family its body indexes
    with the comprehension's variable."""
    for sub in walk(e.body):
        if isinstance(sub, n.Index) and isinstance(sub.index, n.Name) and sub.index.id == e.var \
                and isinstance(sub.base, n.Name):
            found = universe(e, sub.base)
            if found is not None:
                return found
    return None


def explicit_domains(e: n.Expr, universe: Universe, on_rebuild: Callable[[n.Expr, n.Expr], None]) -> n.Expr:
    """e with the universe of every comprehension written without a domain made explicit; `on_rebuild(old,
    new)` is told of each node rebuilt around a changed child."""
    if isinstance(e, n.Comprehension) and e.domain is None:
        found = infer_universe(e, universe)
        if found is not None:
            with_domain = dataclasses.replace(e, domain=found)
            on_rebuild(e, with_domain)
            e = with_domain
    changes: dict[str, Any] = {}  # dataclasses.replace keywords: each value has its own field's type
    for f in dataclasses.fields(e):
        value = getattr(e, f.name)
        if f.name == "type":
            continue
        if isinstance(value, tuple) and value and all(is_expr(v) for v in value):
            items = tuple(explicit_domains(v, universe, on_rebuild) for v in value)
            if any(new is not old for new, old in zip(items, value)):
                changes[f.name] = items
        elif is_expr(value):
            item = explicit_domains(value, universe, on_rebuild)
            if item is not value:
                changes[f.name] = item
    if not changes:
        return e  # unchanged nodes keep their identity (what resolution recorded about them is keyed by it)
    rebuilt = dataclasses.replace(e, **changes)
    on_rebuild(e, rebuilt)
    return rebuilt


def split_shift(item: n.Shift) -> n.Expr | None:
    """ψ from `x' = x + ψ`: the right-hand side must add something to x (or x[i]).

    `x' = x + e`, `x' = e + x`, `x' = x - e` and `x' = x` are shifts (ψ = e, e, -e, 0), and so is any sum in
    which x occurs as a term with sign + (`x' = a + x - b` has ψ = a - b). ψ may mention x again
    (`x' = x + (b - x)`): that is a legal shift whose self-dependence the acyclicity obligation (C4b) rejects.
    `x' = 2 * x` and `x' = 1 - x` are not shifts at all.
    """

    def is_self(e: n.Expr) -> bool:
        if item.index_var is None:
            return isinstance(e, n.Name) and e.id == item.var and not e.primed
        return (isinstance(e, n.Index) and isinstance(e.base, n.Name) and e.base.id == item.var
                and not e.base.primed and isinstance(e.index, n.Name) and e.index.id == item.index_var)

    rhs = item.rhs
    if is_self(rhs):
        return n.Number(Fraction(0), True, rhs.span)
    if isinstance(rhs, n.Binary) and rhs.op in ("+", "-") and is_self(rhs.left):
        return rhs.right if rhs.op == "+" else n.Unary("-", rhs.right, rhs.right.span)
    if isinstance(rhs, n.Binary) and rhs.op == "+" and is_self(rhs.right):
        return rhs.left

    terms: list[tuple[str, n.Expr]] = []

    def flatten(e: n.Expr, sign: str) -> None:
        if isinstance(e, n.Binary) and e.op in ("+", "-"):
            flatten(e.left, sign)
            flatten(e.right, sign if e.op == "+" else ("-" if sign == "+" else "+"))
        else:
            terms.append((sign, e))

    flatten(rhs, "+")
    self_at = next((k for k, (sign, term) in enumerate(terms) if sign == "+" and is_self(term)), None)
    if self_at is None:
        return None
    rest = terms[:self_at] + terms[self_at + 1:]
    sign, first = rest[0]
    psi: n.Expr = first if sign == "+" else n.Unary("-", first, first.span)
    for sign, term in rest[1:]:
        psi = n.Binary(sign, psi, term, psi.span.to(term.span))
    return psi

