"""Report (costs): the alignment cost Σ cᵢ·|ψᵢ| of Lemma 1, taken apart for a reader with sympy.

For each noise site: its cost coefficient cᵢ (the distribution's, `obligations.cost_coefficient`), its shift
ψᵢ split into the cases of its conditional expressions (`out[i] is TOP ? 1 + q[i] - q'[i] : 0` has two), and in
each case the cost term cᵢ·|ψᵢ| and its largest value under the adjacency relation. Then the sum: the sites
before any loop once, and each loop's sites once per iteration in each case, counted by a symbol N.

This is exposition, not the proof: the checker's C4c decides (with the exact cost, path by path, and the loop
invariant of an inductive proof). The bounds here are sound upper bounds (the largest |a + Σ bₖ·dₖ| over
|dₖ| ≤ Δ is |a| + Σ |bₖ|·Δ), so when their sum is at most ε the reader has a second, hand-checkable argument;
when it is not (a one-sided adjacency, terms that cannot all be large at once), the report says that the
checker's exact reasoning is what proves C4c.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sympy

from .. import nodes as n
from ..obligations import constant_bindings, cost_coefficient
from ..resolve import NoiseSite, ResolvedMechanism
from ..symbolic import NotSymbolic, simplify, symbol, to_sympy
from ..unparse import unparse


@dataclass(frozen=True)
class Case:
    """ψ of one site on one branch of its conditional expressions."""

    condition: str
    """The branch, as program text ("out[i] is TOP", "not (out[i] is TOP)"); empty when ψ has no branches."""
    tag: str | None
    """The tag when the branch is `out[i] is TAG` (names the count of such iterations)."""
    shift_text: str
    shift: sympy.Expr | None
    """ψ; None when it has no symbolic form here (the text is shown)."""
    term: sympy.Expr | None
    """c·|ψ|."""
    bound: sympy.Expr | None
    """The largest c·|ψ| under the adjacency relation; None when it has no closed form here."""


@dataclass(frozen=True)
class SiteCost:
    site: NoiseSite
    coefficient: sympy.Expr | None
    """c (in the spec's names, e.g. eps0); None when the distribution is not Lipschitz or c is not symbolic."""
    cases: tuple[Case, ...]
    """Empty when the site is not shifted."""

    @property
    def shifted(self) -> bool:
        return bool(self.cases) and any(c.shift != 0 for c in self.cases)


@dataclass(frozen=True)
class Count:
    """N: how many iterations of a loop take one case of its sites' shifts."""

    symbol: sympy.Symbol
    loop: str
    """The loop's header (`for i in 0 .. len(q)`)."""
    line: int
    condition: str
    """The case's branch; empty: every iteration."""


@dataclass(frozen=True)
class CostSum:
    sites: tuple[SiteCost, ...]
    total: sympy.Expr | None
    """The sum of the bounds: prefix sites once, loop cases times their counts; None when a bound is missing."""
    counts: tuple[Count, ...]
    claim: sympy.Expr | None
    equal_at: dict[sympy.Symbol, sympy.Expr] | None
    """With one count: the value of N at which `total` equals the claim (N ≤ that keeps the cost ≤ ε)."""
    expanded: sympy.Expr | None
    """`total` with the parameter-derived constants written out (eps0 = theta*eps ...); None when the same."""
    within: str | None
    """Without counts: "=" when the total simplifies to the claim, "<=" when sympy shows it is at most the
    claim (with the parameters that `requires` makes positive), None when it cannot tell."""


def analyse(mech: ResolvedMechanism) -> CostSum:
    sites = tuple(_site(mech, s) for s in mech.noise)
    counts: list[Count] = []
    total: sympy.Expr | None = sympy.Integer(0)
    for sc in sites:
        if not sc.shifted or total is None:
            continue
        if any(c.bound is None for c in sc.cases):
            total = None
            continue
        if sc.site.loop is None:
            bounds = [c.bound for c in sc.cases if c.bound is not None]
            total += bounds[0] if len(bounds) == 1 else sympy.Max(*bounds)
            continue
        for case in sc.cases:
            assert case.bound is not None
            if case.bound == 0:
                continue
            count = _count(counts, sc.site, case)
            total += case.bound * count
    try:
        claim = simplify(to_sympy(mech.claim))
    except NotSymbolic:
        claim = None
    equal_at: dict[sympy.Symbol, sympy.Expr] | None = None
    within: str | None = None
    expanded: sympy.Expr | None = None
    if total is not None:
        total = sympy.expand(simplify(total))
        total = sympy.collect(total, [c.symbol for c in counts]) if counts else simplify(total)
        expanded = expand_constants(mech, total)
        if claim is not None and len(counts) == 1:
            count = counts[0].symbol
            slope = sympy.expand(total).coeff(count)
            if slope != 0 and count not in slope.free_symbols:  # total is a + slope·N: equal at N = (ε - a) / slope
                equal_at = {count: simplify((claim - total.subs(count, 0)) / slope)}
        elif claim is not None and not counts:
            gap = simplify((claim - (expanded if expanded is not None else total)).xreplace(_positive(mech)))
            within = "=" if gap == 0 else "<=" if gap.is_nonnegative else None
    return CostSum(sites, total, tuple(counts), claim, equal_at=equal_at, expanded=expanded, within=within)


def without_bound(costs: CostSum) -> list[str]:
    """Why the sum has no closed form: for each shifted site's case without a bound, the reason (its cost
    coefficient is not a formula of the parameters, its shift is not one here, or the shift is not affine in
    the differences of the inputs: it reads the aligned run or a private value of unbounded difference)."""
    reasons = []
    for sc in costs.sites:
        if not sc.shifted:
            continue
        where = f"`{sc.site.display}`"
        if sc.site.distribution.finite:
            reasons.append(f"{where} is aligned by a map of its values, whose cost is the exact ln P[g⁻¹(g(b))] − "
                           "ln P[g(b)] of the map, not c·|ψ| (the rule of value maps; C4c bounds it case by case)")
            continue
        if sc.coefficient is None:
            reasons.append(f"the cost coefficient of {where} is not a formula of the parameters here (not "
                           "Lipschitz, or its scale reads more than the parameters)")
            continue
        for case in sc.cases:
            if case.bound is not None:
                continue
            on = f" where `{case.condition}`" if case.condition else ""
            if case.shift is None:
                reasons.append(f"the shift of {where}{on} is not a formula here")
            else:
                reasons.append(f"the shift of {where}{on} is not affine in the differences of the inputs (it "
                               "reads the aligned run, or a value whose difference has no bound here)")
    return reasons


def expand_constants(mech: ResolvedMechanism, value: sympy.Expr) -> sympy.Expr | None:
    """`value` with the program's parameter-derived constants (eps0 = theta*eps ...) written out; None when
    it has none of them."""
    renames = {symbol(name): formula for name, formula in constant_bindings(mech).items()}
    if not set(renames) & value.free_symbols:
        return None
    return simplify(value.xreplace(renames))


def _positive(mech: ResolvedMechanism) -> dict[sympy.Symbol, sympy.Symbol]:
    """The parameters that `requires` bounds below by a non-negative number strictly (`eps > 0`, `k >= 1`,
    `0 < theta < 1`), as positive symbols, for sympy's sign reasoning."""
    positive: dict[sympy.Symbol, sympy.Symbol] = {}
    for r in mech.requires:
        if not isinstance(r, n.Compare):
            continue
        for op, (a, b) in zip(r.ops, zip(r.operands, r.operands[1:])):
            name, low, strict = None, None, op in ("<", ">")
            if op in (">", ">=") and isinstance(a, n.ParamRef) and isinstance(b, n.Number):
                name, low = a.text, b.value
            elif op in ("<", "<=") and isinstance(b, n.ParamRef) and isinstance(a, n.Number):
                name, low = b.text, a.value
            if name is not None and low is not None and (low > 0 or (low == 0 and strict)):
                positive[symbol(name)] = sympy.Symbol(name, positive=True)
    return positive


def _count(counts: list[Count], site: NoiseSite, case: Case) -> sympy.Symbol:
    assert site.loop is not None
    loop = f"for {site.loop.var} in {unparse(site.loop.lo)} .. {unparse(site.loop.hi)}"
    for c in counts:
        if (c.loop, c.line, c.condition) == (loop, site.loop.span.line, case.condition):
            return c.symbol
    name = f"N_{case.tag}" if case.tag else f"N_{len(counts) + 1}"
    if any(c.symbol.name == name for c in counts):
        name = f"N_{len(counts) + 1}"
    symbol = sympy.Symbol(name, nonnegative=True, integer=True)
    counts.append(Count(symbol, loop, site.loop.span.line, case.condition))
    return symbol


def _site(mech: ResolvedMechanism, site: NoiseSite) -> SiteCost:
    coefficient = cost_coefficient(site)
    shift = mech.alignment.shift_of(site.name) if mech.alignment is not None else None
    if shift is None:
        return SiteCost(site, coefficient, ())
    cases = tuple(_case(mech, coefficient, condition, tag, psi) for condition, tag, psi in _split(shift.shift))
    return SiteCost(site, coefficient, cases)


def _split(e: n.Expr, condition: str = "", tag: str | None = None) -> list[tuple[str, str | None, n.Expr]]:
    """The branches of ψ's conditional expressions: (condition, tag of an `x is TAG` test, ψ there)."""
    if not isinstance(e, n.Conditional):
        return [(condition, tag, e)]
    test = unparse(e.condition)
    is_tag = e.condition.tag if isinstance(e.condition, n.TagTest) else None

    def joined(part: str) -> str:
        return f"{condition} and {part}" if condition else part

    return (_split(e.then, joined(test), is_tag if not condition else None)
            + _split(e.orelse, joined(f"not ({test})"), None))


def _case(mech: ResolvedMechanism, c: sympy.Expr | None, condition: str, tag: str | None, e: n.Expr) -> Case:
    text = unparse(e)
    try:
        psi = simplify(to_sympy(e))
    except NotSymbolic:
        return Case(condition, tag, text, None, None, None)
    if c is None:
        return Case(condition, tag, text, psi, None, None if psi != 0 else sympy.Integer(0))
    term = c * sympy.Abs(psi)
    return Case(condition, tag, text, psi, term, _bound(mech, c, psi))


_PRIMED = re.compile(r"([A-Za-z_]\w*)'(\[.*\])?")


def _bound(mech: ResolvedMechanism, c: sympy.Expr, psi: sympy.Expr) -> sympy.Expr | None:
    """max c·|ψ| over the neighbours: each primed private value x' is x - d with |d| <= the adjacency's bound
    (pointwise, l1 and scalar clauses each bound every single difference); exact for ψ affine in the d's."""
    differences: dict[sympy.Symbol, sympy.Expr] = {}
    renames: dict[sympy.Symbol, sympy.Expr] = {}
    for s in psi.free_symbols:
        m = _PRIMED.fullmatch(s.name) if isinstance(s, sympy.Symbol) else None
        if m is None:
            continue
        limit = _difference_bound(mech, m.group(1))
        if limit is None:
            return None
        d = sympy.Dummy(f"d{len(differences)}", real=True)
        differences[d] = limit
        renames[s] = sympy.Symbol(m.group(1) + (m.group(2) or ""), real=True) - d
    expr = sympy.expand(psi.xreplace(renames))
    constant = expr.subs(dict.fromkeys(differences, 0))
    slopes = {d: expr.coeff(d) for d in differences}
    affine = constant + sum(slope * d for d, slope in slopes.items())
    if any(slope.free_symbols & set(differences) for slope in slopes.values()) or sympy.expand(expr - affine) != 0:
        return None  # not affine in the differences
    largest = sympy.Abs(constant) + sum(sympy.Abs(slope) * differences[d] for d, slope in slopes.items())
    return simplify(c * largest)


def _difference_bound(mech: ResolvedMechanism, name: str) -> sympy.Expr | None:
    param = mech.param(name)
    if param is None or param.public:
        return None
    bounds = [a.bound for a in param.adjacency if a.rule.bounds_entries and a.bound is not None]
    if not bounds:
        return None
    try:
        return simplify(to_sympy(bounds[0]))
    except NotSymbolic:
        return None
