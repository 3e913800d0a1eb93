"""Rewriting the resolved IR's expressions: every expression is a frozen dataclass whose subexpressions are fields
(or tuples of them), so one generic map serves the normal forms (`bounds.py`, `offsets.py`, `alignments.py`)."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable

from .. import nodes as n
from ..resolve import NoiseSite, ResolvedMechanism
from ..types import BOOL


def is_expr(value: object) -> bool:
    return isinstance(value, typing.get_args(n.Expr))


def map_expr(e: n.Expr, f: Callable[[n.Expr], n.Expr | None]) -> n.Expr:
    """`e` with every subexpression x for which f(x) is not None replaced by f(x), outermost first (a replacement is
    not looked into again)."""
    replaced = f(e)
    if replaced is not None:
        return replaced
    changes: dict[str, object] = {}
    for field in dataclasses.fields(e):
        value = getattr(e, field.name)
        new: object
        if isinstance(value, tuple):
            new = tuple(map_expr(v, f) if is_expr(v) else v for v in value)
            changed = any(a is not b for a, b in zip(new, value))
        elif is_expr(value):
            new = map_expr(value, f)
            changed = new is not value
        else:
            continue
        if changed:
            changes[field.name] = new
    return dataclasses.replace(e, **changes) if changes else e  # type: ignore[arg-type]


def map_statement(st: n.Stmt, f: Callable[[n.Expr], n.Expr | None]) -> n.Stmt:
    """A statement with `map_expr(·, f)` applied to every expression in it, nested statements included."""
    changes: dict[str, object] = {}
    for field in dataclasses.fields(st):
        value = getattr(st, field.name)
        if is_expr(value):
            changes[field.name] = map_expr(value, f)
        elif isinstance(value, tuple) and value and all(isinstance(v, typing.get_args(n.Stmt)) for v in value):
            changes[field.name] = tuple(map_statement(v, f) for v in value)
        elif isinstance(value, tuple) and value and all(is_expr(v) for v in value):
            changes[field.name] = tuple(map_expr(v, f) for v in value)
    return dataclasses.replace(st, **changes)  # type: ignore[arg-type]


def relinked_noise(mech: ResolvedMechanism, body: tuple[n.Stmt, ...]) -> tuple[NoiseSite, ...]:
    """The mechanism's noise sites as a rewritten `body` has them: each site's sample found by its variable and span,
    with its innermost enclosing loop and the conditions of its enclosing branches (negated in an `else`), as
    resolution records them (`resolve/check.py`). A rewrite that rebuilds statements calls this once for the new
    body rather than patching each site."""
    found: dict[tuple[str, object], tuple[n.Sample, n.For | None, tuple[n.Expr, ...]]] = {}

    def visit(block: tuple[n.Stmt, ...], loop: n.For | None, guards: tuple[n.Expr, ...]) -> None:
        for st in block:
            if isinstance(st, n.Sample):
                found[st.var, st.span] = (st, loop, guards)
            elif isinstance(st, n.If):
                visit(st.then, loop, (*guards, st.condition))
                negated = n.Unary("not", st.condition, st.condition.span, type=BOOL)
                visit(st.orelse, loop, (*guards, negated))
            elif isinstance(st, n.For):
                visit(st.body, st, guards)

    visit(body, None, ())
    sites = []
    for site in mech.noise:
        stmt, loop, guards = found[site.stmt.var, site.stmt.span]
        sites.append(dataclasses.replace(site, stmt=stmt, args=stmt.args, loop=loop, guards=guards))
    return tuple(sites)
