"""Binding: the parser's tree of a checked mechanism -> the typed IR that every later stage reads.

A pure tree -> tree pass over what `check.MechanismChecker` recorded: each `Name` becomes the reference it
was found to be (`ParamRef`, `VarRef`, `NoiseRef`, `LetRef`, `LocalRef`, `OutRef`, `AlignedCostRef`,
`TagLit`), `x[e]` on a noise family becomes `MemberRef`, a tag with a payload becomes `TagCall`, every
expression gets its type, and each tag its code (its position in the sorted table of the mechanism's tags).
It runs only on a mechanism without errors, so every node it meets was checked.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import nodes as n
from ..diagnostics import InternalError
from ..types import BOOL, INT, REAL, Type
from .check import MechanismChecker
from .program import NoiseSite, ResolvedAlignment, ResolvedParam, ResolvedShift, is_expr
from .scope import BUILTIN_ARITY


class Binder:
    def __init__(self, checker: MechanismChecker, tags: tuple[str, ...]):
        self.checker = checker
        self.codes = {tag: k for k, tag in enumerate(tags)}
        self.bound: dict[int, Any] = {}
        """The IR of each node bound so far, by the id() of the parser's node (a node shared by two
        places, such as a branch condition and a noise site's guard, is bound once)."""

    # -- expressions ---------------------------------------------------------------------------------------
    def expr(self, e: n.Expr) -> n.Expr:
        done = self.bound.get(id(e))
        if done is None:
            done = self.bound[id(e)] = self._expr(e)
        return done

    def _expr(self, e: n.Expr) -> n.Expr:
        checker = self.checker
        if isinstance(e, n.Name):
            ref = checker.refs.get(id(e))
            if ref is None:
                raise InternalError(f"the name `{e.text}` at {e.span} was not resolved")
            if isinstance(ref, n.TagLit):
                ref = dataclasses.replace(ref, code=self.codes[ref.tag])
            return ref
        t = self.type_of(e)
        if isinstance(e, n.Index) and id(e) in checker.members:
            assert isinstance(e.base, n.Name), "a family member is read as `x[e]` (check._Index)"
            return n.MemberRef(e.base.id, self.expr(e.index), e.span, e.base.span, t)
        if isinstance(e, n.Call) and e.func not in BUILTIN_ARITY:
            return n.TagCall(e.func, self.codes[e.func], tuple(self.expr(a) for a in e.args), e.span, e.func_span, t)
        changes: dict[str, Any] = {"type": t}  # dataclasses.replace keywords: each value has its field's type
        for f in dataclasses.fields(e):
            value = getattr(e, f.name)
            if f.name == "type":
                continue
            if isinstance(value, tuple) and value and all(is_expr(v) for v in value):
                changes[f.name] = tuple(self.expr(v) for v in value)
            elif is_expr(value):
                changes[f.name] = self.expr(value)
        return dataclasses.replace(e, **changes)

    def type_of(self, e: n.Expr) -> Type:
        t = self.checker.types.get(id(e))
        if t is not None:
            return t
        # Literals that resolution reads without typing them (the component of `out[i][0]`).
        if isinstance(e, n.Number):
            return INT if e.is_integer else REAL
        if isinstance(e, n.BoolLit):
            return BOOL
        raise InternalError(f"the expression at {e.span} was not typed")

    def exprs(self, es: tuple[n.Expr, ...]) -> tuple[n.Expr, ...]:
        return tuple(self.expr(e) for e in es)

    # -- statements ----------------------------------------------------------------------------------------
    def block(self, body: tuple[n.Stmt, ...]) -> tuple[n.Stmt, ...]:
        return tuple(self.stmt(s) for s in body)

    def stmt(self, s: n.Stmt) -> n.Stmt:
        done = self.bound.get(id(s))
        if done is None:
            done = self.bound[id(s)] = self._stmt(s)
        return done

    def _stmt(self, s: n.Stmt) -> n.Stmt:
        if isinstance(s, n.Assign):
            index = self.expr(s.index) if s.index is not None else None
            return dataclasses.replace(s, index=index, value=self.expr(s.value))
        if isinstance(s, n.Sample):
            return dataclasses.replace(s, args=self.exprs(s.args))
        if isinstance(s, n.If):
            return dataclasses.replace(s, condition=self.expr(s.condition), then=self.block(s.then),
                                       orelse=self.block(s.orelse))
        if isinstance(s, n.For):
            return dataclasses.replace(s, lo=self.expr(s.lo), hi=self.expr(s.hi), body=self.block(s.body))
        if isinstance(s, n.Output):
            return dataclasses.replace(s, value=self.expr(s.value))
        if isinstance(s, n.Break):
            return s
        raise InternalError(f"a `while` loop at {s.span} reached binding (resolution rejects it)")

    # -- the records of the mechanism ---------------------------------------------------------------------
    def param(self, p: ResolvedParam) -> ResolvedParam:
        adjacency = tuple(dataclasses.replace(a, bound=self.expr(a.bound) if a.bound is not None else None)
                          for a in p.adjacency)
        domain = dataclasses.replace(p.domain, lo=self.expr(p.domain.lo), hi=self.expr(p.domain.hi)) \
            if p.domain is not None else None
        return dataclasses.replace(p, adjacency=adjacency, domain=domain)

    def site(self, site: NoiseSite) -> NoiseSite:
        stmt = self.stmt(site.stmt)
        assert isinstance(stmt, n.Sample)
        loop = self.stmt(site.loop) if site.loop is not None else None
        assert loop is None or isinstance(loop, n.For)
        return dataclasses.replace(site, args=stmt.args, loop=loop, guards=self.exprs(site.guards), stmt=stmt)

    def alignment(self, a: ResolvedAlignment) -> ResolvedAlignment:
        lets = tuple(dataclasses.replace(let, value=self.expr(let.value)) for let in a.lets)
        shifts = tuple(self.shift(s) for s in a.shifts)
        invariants = tuple(dataclasses.replace(i, condition=self.expr(i.condition)) for i in a.invariants)
        return dataclasses.replace(a, lets=lets, shifts=shifts, invariants=invariants)

    def shift(self, s: ResolvedShift) -> ResolvedShift:
        return dataclasses.replace(s, shift=self.expr(s.shift))
