"""Checker (supports): where noise values lie, as z3 assumptions, and C4d, aligned noise stays in its support.

Both read the distribution's one support declaration (`Distribution.values`), as the interpreter's
`in_support` does: the bounded check (verify.py), the induction (induction.py) and the support proofs of
`align test` (stats/support.py) use these functions, so a distribution's support is stated once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import z3

from ..distributions import Param
from . import terms as zt
from .densities import well_formed
from .encode import AlignmentEval, Draw, Encoding, Run, _real


def noise_support(enc: Encoding, prefix: str = "", draws: Iterable[Draw] = ()) -> list[z3.BoolRef]:
    """Each noise symbol lies in its distribution's support (`Distribution.values`): the bounds that are
    constants for every symbol, and those that are parameters (Uniform's a and b, Point's v) for `draws`
    (of some runs), where the parameters are known, under the draw's guard.

    Noise with a density takes the value of a bound of its support with probability 0, so its bounds are
    strict here (Theorem 10.1 lets a proof ignore sets of noise of probability 0): u ~ TruncNormal(mu,
    sigma, 0, b) never makes `1 / u` divide by zero."""
    parts = []
    for (name, _index), symbol in enc.noise.items():
        site = enc.mech.site(name.rsplit(".", 1)[-1])  # self-compositions prefix their noise with "A.", "B."
        if site is None:
            continue
        dist = site.distribution
        for bound, inclusive in _bounds(dist):
            if not isinstance(bound, Param):
                value = zt.RealVal(bound)
                parts.append(_compare(symbol, value, inclusive))
    for d in draws:
        dist = enc.mech.noise_site(d.site).distribution
        args = [_real(a) for a in d.args]
        inside = [_compare(_real(d.value), args[bound.index], inclusive) for bound, inclusive in _bounds(dist)
                  if isinstance(bound, Param) and bound.index < len(args)]
        if dist.masses is not None:  # a value drawn has a positive probability (Bernoulli(1) draws 1)
            inside.append(mass(dist, _real(d.value), d.args) > 0)
        if inside:
            # only where the parameters make a density: Uniform(1, 0) has no values, and assuming it had
            # would leave no model at all (C0 refutes such parameters)
            parts.append(z3.Implies(zt.And(d.guard, well_formed(enc, d, d.args)), zt.And(inside)))
    return parts


def masses(dist, args: tuple) -> list[tuple[z3.ArithRef, z3.ArithRef]]:
    """Each value of a distribution with finitely many values (`Distribution.masses`) and its probability, as z3
    reals, at the parameters `args`."""
    def real(x: Any) -> z3.ArithRef:
        return _real(x) if z3.is_expr(x) else zt.RealVal(x)

    return [(real(v), real(p)) for v, p in dist.masses(dist.full_params(tuple(args)))]


def mass(dist, value: z3.ArithRef, args: tuple) -> z3.ArithRef:
    """P[value] under a distribution with finitely many values with parameters `args`."""
    return zt.Sum([z3.If(value == v, p, 0) for v, p in masses(dist, args)])


def member_support(dist, value: z3.ArithRef, args: tuple) -> list[z3.BoolRef]:
    """A noise value within its distribution's support, every bound (constant or a parameter of `args`)."""
    params = [_real(a) for a in args]
    parts = []
    for bound, inclusive in _bounds(dist):
        limit = params[bound.index] if isinstance(bound, Param) else zt.RealVal(bound)
        if not isinstance(bound, Param) or bound.index < len(params):
            parts.append(_compare(_real(value), limit, inclusive))
    return parts


def _bounds(dist) -> list[tuple[Any, str]]:
    """(bound, how the value compares with it): ">=", ">" (strict, for noise with a density), "<=", "<"."""
    support = dist.values
    strict = dist.continuous
    result = []
    if support.lower is not None:
        result.append((support.lower, ">" if support.lower_open or strict else ">="))
    if support.upper is not None:
        result.append((support.upper, "<" if strict else "<="))
    return result


def _compare(x: z3.ArithRef, bound: z3.ArithRef, op: str) -> z3.BoolRef:
    return {">": x > bound, ">=": x >= bound, "<": x < bound, "<=": x <= bound}[op]


def member(d: Draw) -> str:
    """A draw as the spec names it: `eta`, `xi[2]`."""
    return d.site if d.index is None else f"{d.site}[{d.index}]"


def aligned_in_support(d: Draw, psi: z3.ArithRef, dist: Any) -> list[tuple[z3.BoolRef, str]]:
    """C4d for one draw shifted by ψ (without its guard): η + ψ within the support's bounds, with the draw's
    own parameters, and ψ whole where the distribution needs it; each with the text of its failure."""
    conditions = []
    support = dist.values
    # terms are built only where a bound needs them: a term created in the encoding context changes the ids,
    # hence the order, of later simplified terms, and so the queries z3 sees and the models it picks
    params = [_real(a) for a in d.args] if any(isinstance(b, Param) for b in (support.lower, support.upper)) else []
    bounds = support.bounds(params, constant=zt.RealVal)
    aligned = _real(d.value) + _real(psi) if bounds else None
    for bound, op in bounds:
        assert aligned is not None, "built above whenever there is a bound"
        if op.startswith(">"):
            zero = z3.is_rational_value(bound) and bound.as_fraction() == 0
            why = "is negative" if zero and op == ">=" else f"is below the support {dist.support}"
        else:
            why = f"is above the support {dist.support}"
        conditions.append((_compare(aligned, _real(bound), op), f"{member(d)}' = {member(d)} + ψ {why}"))
    if dist.integer_shifts:
        conditions.append((z3.IsInt(_real(psi)), f"the shift of {member(d)} is not an integer"))
    if dist.masses is not None:
        # a value map's cost is ln of a ratio over P[g(b)]: the aligned value must have a positive probability
        conditions.append((mass(dist, _real(d.value) + _real(psi), d.args) > 0,
                           f"{member(d)}' = {member(d)} + ψ has probability 0 under {dist.name}"))
    return conditions


def support_conditions(run: Run, align: AlignmentEval) -> list[tuple[z3.BoolRef, str]]:
    """C4d for every draw of a run that the alignment shifts."""
    mech = run.enc.mech
    conditions = []
    for d in run.draws:
        if mech.alignment is None or mech.alignment.shift_of(d.site) is None:
            continue
        psi = align.shift(d.site, d.index)
        conditions += [(z3.Implies(d.guard, c), why)
                       for c, why in aligned_in_support(d, psi, mech.noise_site(d.site).distribution)]
    return conditions
