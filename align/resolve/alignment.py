"""The alignment block: lets, shifts and invariants checked against their mechanism, then desugared."""

from __future__ import annotations

import dataclasses

from .. import nodes as n
from ..diagnostics import Note, did_you_mean
from ..span import Span
from ..types import BOOL, INT, Type
from .check import Env, MechanismChecker
from .desugar import split_shift
from .program import ResolvedAlignment, ResolvedShift, walk
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
    _maps_hold_the_output(c, lets, shifts)
    return ResolvedAlignment(a.name, tuple(lets), tuple(shifts), tuple(invariants), a)


def _maps_hold_the_output(c: MechanismChecker, lets: list[n.Let], shifts: list[ResolvedShift]) -> None:
    """A value map `b' = g(b)` of noise with finitely many values is costed by the values v that g maps where it
    maps b, g(v) computed with everything but b held (rules.ValueMaps) — the output ω among them. The checker
    computes g(v) from the run's terms, in which `out` is a function of b: so a map may not read `out`, directly or
    through a let (`map-reads-output`)."""
    reading: set[str] = set()

    def reads_out(x: n.Expr) -> bool:
        # names are bound after this check (resolve/bind.py): `out` and the lets are still `Name`s here
        if isinstance(x, n.OutRef):
            return True
        name = x.id + ("'" if x.primed else "") if isinstance(x, (n.Name, n.LetRef)) else None
        return name == "out" or name in reading

    for let in lets:
        if any(reads_out(x) for x in walk(let.value)):
            reading.add(let.name)
    for shift in shifts:
        site = c.noise.get(shift.var)
        if site is None or not site.distribution.finite:
            continue
        read = next((x for x in walk(shift.shift) if reads_out(x)), None)
        if read is not None:
            c.error("map-reads-output", read.span, name=shift.var, dist=site.distribution.name)


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
    if psi is None and site.distribution.finite:
        # noise with finitely many values is aligned by a value map `b' = g(b)` (rules.ValueMaps): ψ = g(b) - b
        psi = n.Binary("-", item.rhs, _own_member(item), item.rhs.span)
    if psi is None:
        c.error("not-a-shift", item.rhs.span,
                name=item.var + (f"[{item.index_var}]" if item.index_var else ""))
        return None
    c.expect_numeric(psi, "shift")
    if item.index_var is not None:
        c.env.pop()
    return ResolvedShift(item.var, item.index_var, c.desugared(psi), item)


def _own_member(item: n.Shift) -> n.Expr:
    """The shifted variable as the right-hand side would name it: `b`, or `b[i]` in a family shift."""
    name = n.Name(item.var, False, item.lhs_span)
    if item.index_var is None:
        return name
    return n.Index(name, n.Name(item.index_var, False, item.lhs_span), item.lhs_span)
