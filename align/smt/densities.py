"""Checker stage (C0): each noise variable has one fixed density in both runs.

Lemma 1 (Free Gap, Section 4; proof in Section 10) bounds the privacy loss by comparing f_i(η_i) with
f_i(η_i') for one density f_i per noise variable. The paper never says so, but this needs f_i to be the same
function in the run on (D, H) and in the aligned run on (D', φ(H)): if a scale, rate, probability or bound
reads the data, or reads a noise variable that the alignment shifts, η_i has another density on D', and the
cost Σ c_i·|ψ_i| says nothing about the ratio of the two. Randomized response whose coin bias is the private
bit, or Laplace noise scaled by |q|, would otherwise be "proved". The density must also be a density: a
scale of 0 or -1, a probability outside [0, 1], bounds with a >= b, or a parameter that divides by zero for
some value that `requires` allows.

So for every sampling statement executed on (D, H) (guard g), with parameters a on (D, H) and a' on
(D', φ(H)), C0 asks z3 to prove, under `requires`, adjacency and the support of the noise:

    g  =>  a = a'  and  well_formed(a)  and  every partial operation in a and a' is defined on its path

where well_formed comes from `Distribution.requirements` (the same conditions the interpreter checks at run
time) and the partial operations are division (denominator != 0), ln (argument > 0), sqrt (argument >= 0),
clamp (lower end <= upper end) and a power with a non-integer exponent (base > 0). Outputs and values that are
equal in both runs are allowed in parameters (adaptive composition chooses a scale from what was already
released): equality is semantic, not syntactic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import z3

from ..distributions import DISTRIBUTIONS, Param
from ..symbolic import TermText
from . import terms as zt
from .encode import Draw, Encoding


@dataclass(frozen=True)
class DensityCondition:
    """C0 for one executed sampling statement."""

    draw: Draw
    formula: z3.BoolRef
    same: z3.BoolRef
    """The parameters are equal in both runs."""
    well_formed: z3.BoolRef
    defined: list[tuple[z3.BoolRef, TermText]]
    """(condition, what it says) for each partial operation in the parameters."""
    aligned_args: tuple


def member(d: Draw) -> str:
    return d.site if d.index is None else f"{d.site}[i]" if d.index == -1 else f"{d.site}[{d.index}]"


def well_formed(enc: Encoding, d: Draw, args: tuple) -> z3.BoolRef:
    site = enc.mech.noise_site(d.site)
    parts = [r.holds([_real(a) for a in args], lambda x, y: zt.And(x, y), zt.RealVal)
             for r in site.distribution.requirements if _uses_given(r, len(args))]
    return zt.And(parts)


def _uses_given(requirement: Any, given: int) -> bool:
    """Requirements on an omitted optional parameter hold for its default (Logistic's and Gumbel's scale 1)."""
    return all(not isinstance(x, Param) or x.index < given for left, _, right in requirement.comparisons
               for x in (left, right))


def _real(x: Any) -> Any:
    return z3.ToReal(x) if z3.is_expr(x) and z3.is_int(x) else x


def partial_operations(enc: Encoding, terms: tuple) -> list[tuple[z3.BoolRef, TermText]]:
    """Definedness of every partial operation inside the terms, each guarded by the branch of the
    if-then-else terms it sits in (a division in a branch not taken is not evaluated)."""
    roots = {s.get_id(): x for s, x, _ in enc.roots}
    undefined = {s.get_id(): TermText(template, *terms) for s, template, terms in enc.undefined}
    found: list[tuple[z3.BoolRef, TermText]] = []
    seen: set[tuple[int, int]] = set()

    def visit(t: z3.ExprRef, path: z3.BoolRef) -> None:
        key = (t.get_id(), path.get_id())
        if key in seen:
            return
        seen.add(key)
        if z3.is_app(t):
            kind = t.decl().kind()
            if kind == z3.Z3_OP_ITE:
                c, a, b = t.children()
                visit(c, path)
                visit(a, zt.And(path, c))
                visit(b, zt.And(path, z3.Not(c)))
                return
            if kind in (z3.Z3_OP_DIV, z3.Z3_OP_IDIV, z3.Z3_OP_MOD):
                denominator = t.children()[1]
                found.append((z3.Implies(path, denominator != 0), TermText("division by {} = 0", denominator)))
            elif kind == z3.Z3_OP_POWER:
                base, exponent = t.children()
                if not z3.is_int_value(z3.simplify(exponent)):
                    found.append((z3.Implies(path, base > 0), TermText("power of {} <= 0", base)))
            elif kind == z3.Z3_OP_UNINTERPRETED and t.num_args() == 1 and t.decl().name() == "ln":
                found.append((z3.Implies(path, t.children()[0] > 0), TermText("ln of {} <= 0", t.children()[0])))
            elif kind == z3.Z3_OP_UNINTERPRETED and t.num_args() == 0 and t.get_id() in roots:
                x = roots[t.get_id()]
                found.append((z3.Implies(path, x >= 0), TermText("sqrt of {} < 0", x)))
                visit(x, path)
            elif kind == z3.Z3_OP_UNINTERPRETED and t.num_args() == 0 and t.get_id() in undefined:
                found.append((z3.Not(path), undefined[t.get_id()]))  # a builtin's value outside its domain
        for child in t.children():
            visit(child, path)

    for term in terms:
        if z3.is_expr(term):
            visit(term, zt.BoolVal(True))
    return found


def density_conditions(enc: Encoding, draws1: Iterable[Draw], draws2: Iterable[Draw],
                       site: str | None = None) -> list[DensityCondition]:
    """C0 for every sampling statement of a first run (its `draws1`; at `site` only, when given), paired with
    the same statement of the aligned run (`draws2`: D' with φ(H), or D' with H when there is no alignment)."""
    twins = {(d.site, d.index): d for d in draws2}
    result = []
    for d in draws1:
        if site is not None and d.site != site:
            continue
        twin = twins.get((d.site, d.index))
        aligned = twin.args if twin is not None else d.args
        same = zt.And([_equal(a, b) for a, b in zip(d.args, aligned)])
        wf = well_formed(enc, d, d.args)
        defined = partial_operations(enc, (*d.args, *aligned))
        formula = z3.Implies(d.guard, zt.And(same, wf, *[c for c, _ in defined]))
        result.append(DensityCondition(d, formula, same, wf, defined, aligned))
    return result


def _equal(a: Any, b: Any) -> z3.BoolRef:
    if z3.is_expr(a) and z3.is_expr(b):
        return _real(a) == _real(b)
    return zt.BoolVal(bool(a == b))


def describe(model: z3.ModelRef, conditions: list[DensityCondition],
             show: Callable[[z3.ModelRef, z3.ExprRef], str]) -> tuple[str, dict[str, Any]]:
    """The first failing condition in words, with the parameter values of both runs."""
    for c in conditions:
        if z3.is_true(model.eval(c.formula, model_completion=True)):
            continue
        site = c.draw.stmt.dist
        names = _param_names(c)
        here = [show(model, a) if z3.is_expr(a) else str(a) for a in c.draw.args]
        there = [show(model, a) if z3.is_expr(a) else str(a) for a in c.aligned_args]
        values = {"site": member(c.draw), "distribution": site, "parameters": names, "on_D": here,
                  "on_D_prime_aligned": there}
        listed = ", ".join(f"{k} = {v}" for k, v in zip(names, here))
        for condition, text in c.defined:
            if not z3.is_true(model.eval(condition, model_completion=True)):
                return f"{member(c.draw)} ~ {site}({listed}): {text}, so its density is not defined", values
        if not z3.is_true(model.eval(c.well_formed, model_completion=True)):
            return (f"{member(c.draw)} ~ {site}({listed}) is not a density: "
                    + _broken_requirement(model, c)), values
        other = ", ".join(f"{k} = {v}" for k, v in zip(names, there))
        return (f"{member(c.draw)} has another density in the two runs: {site}({listed}) on (D, H) but "
                f"{site}({other}) on (D', φ(H))"), values
    return "a noise parameter differs between the runs or is not well formed", {}


def _param_names(c: DensityCondition) -> list[str]:
    return list(DISTRIBUTIONS[c.draw.stmt.dist].params[:len(c.draw.args)])


def _broken_requirement(model: z3.ModelRef, c: DensityCondition) -> str:
    dist = DISTRIBUTIONS[c.draw.stmt.dist]
    args = [_real(a) for a in c.draw.args]
    for r in dist.requirements:
        if not _uses_given(r, len(args)):
            continue
        holds = r.holds(args, lambda x, y: zt.And(x, y), zt.RealVal)
        if not z3.is_true(model.eval(holds, model_completion=True)):
            return f"{dist.params[r.param]} must be {r.text}"
    return "its parameters are out of range"
