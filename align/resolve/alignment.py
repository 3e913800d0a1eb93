"""The alignment block: lets, shifts and invariants checked against their mechanism, then desugared."""

from __future__ import annotations

import dataclasses

from .. import nodes as n
from ..diagnostics import Note, did_you_mean
from ..span import Span
from ..types import BOOL, INT, Type
from .check import Env, MechanismChecker
from .desugar import split_shift
from .program import ResolvedAlignment, ResolvedShift
from .scope import RESERVED


def check_alignment(c: MechanismChecker, a: n.Alignment) -> ResolvedAlignment:
    """The alignment block of c's mechanism: its lets, shifts and invariants checked, desugared, in order."""
    c.env = Env("alignment")
    lets: list[n.Let] = []
    shifts: list[ResolvedShift] = []
    invariants: list[n.Invariant] = []
    let_types: dict[str, Type] = {}
    let_spans: dict[str, Span] = {}
    shift_spans: dict[str, Span] = {}
    for item in a.items:
        if isinstance(item, n.Let):
            c.env = Env("alignment")
            for earlier in lets:
                c.env.bind(earlier.name, let_types[earlier.name])
            t = c.value(item.value)
            bare = item.name.rstrip("'")
            if item.name in let_spans:
                c.error("duplicate-definition", item.name_span, Note(let_spans[item.name], "first defined here"),
                        what="let binding", name=item.name)
            elif bare in c.params or bare in c.noise or bare in RESERVED or item.name in c.variables:
                c.error("shadowed-name", item.name_span, name=item.name,
                        what=c.kind_of(bare if bare != item.name and bare in c.params else item.name))
            let_spans[item.name] = item.name_span
            lets.append(dataclasses.replace(item, value=c.desugared(item.value)))
            let_types[item.name] = t
            c.let_names.add(item.name)
        elif isinstance(item, n.Shift):
            c.env = Env("alignment")
            for earlier in lets:
                c.env.bind(earlier.name, let_types[earlier.name])
            shift = resolve_shift(c, item)
            if shift is None:
                continue
            if shift.var in shift_spans:
                c.error("duplicate-shift", item.lhs_span, Note(shift_spans[shift.var], "first shift here"),
                        name=shift.var)
                continue
            shift_spans[shift.var] = item.lhs_span
            shifts.append(shift)
        else:
            c.env = Env("invariant")
            for earlier in lets:
                c.env.bind(earlier.name, let_types[earlier.name])
            c.expect(item.condition, BOOL, "invariant")
            invariants.append(dataclasses.replace(item, condition=c.desugared(item.condition)))
    return ResolvedAlignment(a.name, tuple(lets), tuple(shifts), tuple(invariants), a)


def resolve_shift(c: MechanismChecker, item: n.Shift) -> ResolvedShift | None:
    """One shift `x' = x + ψ`: its noise site, its index, ψ split from the aligned value and typed."""
    site = c.noise.get(item.var)
    if site is None:
        c.error("unknown-noise", item.lhs_span, name=item.var, mechanism=c.mech.name,
                hint=did_you_mean(item.var, c.noise))
        return None
    if site.family and item.index_var is None:
        c.error("family-index", item.lhs_span,
                message=f"`{item.var}` is a noise family; shift it as `{item.var}[i]' = {item.var}[i] + ...`")
        return None
    if not site.family and item.index_var is not None:
        c.error("family-index", item.lhs_span,
                message=f"`{item.var}` is a scalar noise variable; shift it as `{item.var}' = {item.var} + ...`")
        return None
    if item.index_var is not None:
        if c.defined(item.index_var):
            c.error("shadowed-name", item.lhs_span, name=item.index_var, what=c.kind_of(item.index_var))
        c.env.push()
        c.env.bind(item.index_var, INT)
    psi = split_shift(item)
    if psi is None:
        c.error("not-a-shift", item.rhs.span,
                name=item.var + (f"[{item.index_var}]" if item.index_var else ""))
        return None
    c.expect_numeric(psi, "shift")
    if item.index_var is not None:
        c.env.pop()
    return ResolvedShift(item.var, item.index_var, c.desugared(psi), item)
