"""The R²DP rule for Laplace noise with a random scale (seed 002, Theorem 4.1 and Corollary 4.2).

For `u ~ F; w ~ Lap(1/u); output q + w` with |q - q'| <= Δ, the output density is ½·E[u e^{-u|x - q|}], and
the mechanism is ε-DP with ε = ln(E[u] / M'_u(-Δ)), M'_u(-Δ) = E[u e^{-Δu}] (Theorem 4.1). When u is an affine
combination a0 + Σ a_j X_j of independent mixing variables (Corollary 4.2, with a constant a0 allowed),
    E[u e^{-Δu}] = e^{-Δ a0} (a0 Π_j M_j(-Δ a_j) + Σ_j a_j M_j'(-Δ a_j) Π_{i≠j} M_i(-Δ a_i)).
The MGFs are known in closed form for Point, Bernoulli, Gamma (and Exp), Uniform and TruncNormal; sympy
computes ε symbolically and compares it with the claim. The value is cross-checked numerically: the MGFs
are recomputed by quadrature of scipy's densities (independently of the closed forms) and the supremum over x
of the log density ratio is taken on a grid, at parameter values that satisfy `requires`.
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

import sympy

from .. import nodes as n
from ..adjacency import AdjacencyKind
from ..counterexample import ABSENT, Counterexample
from ..distributions import Mixing
from ..interp.values import format_values
from ..obligations import Obligation, ObligationId
from ..resolve import NoiseSite, ResolvedMechanism
from ..results import Verdict
from ..status import Status
from ..symbolic import NotSymbolic, show, symbol, to_sympy
from .verdicts import PendingVerdict

T = sympy.Symbol("t", real=True)


class NotAMixture(Exception):
    """The mechanism does not have the shape the rule needs."""


def _mixing(site: NoiseSite) -> Mixing:
    if site.distribution.mixing is None:
        raise NotAMixture(f"no closed-form MGF for {site.distribution.name}")
    return site.distribution.mixing


def mgf(site: NoiseSite, args: list[sympy.Expr]) -> sympy.Expr:
    """M_X(t) = E[e^{tX}] of a mixing variable, in closed form (`Distribution.mixing`)."""
    return _mixing(site).mgf(tuple(args), T)


def _mean(site: NoiseSite, args: list[sympy.Expr]) -> sympy.Expr:
    mixing = _mixing(site)
    if mixing.mean is not None:
        return mixing.mean(tuple(args))
    return sympy.diff(mgf(site, args), T).subs(T, 0)


def _derivative_at(site: NoiseSite, args: list[sympy.Expr], at: sympy.Expr) -> sympy.Expr:
    return sympy.diff(mgf(site, args), T).subs(T, at)


def _value_at(site: NoiseSite, args: list[sympy.Expr], at: sympy.Expr) -> sympy.Expr:
    if at == 0:  # M_X(0) = 1 for every X (Uniform's closed form is 0/0 there)
        return sympy.Integer(1)
    return mgf(site, args).subs(T, at)


def _undefined(x: sympy.Expr) -> bool:
    """Whether `x` holds sympy's value of a division by zero (`zoo`, complex infinity) or of 0/0 (`nan`)."""
    return bool(x.has(sympy.zoo, sympy.nan))


def _no_value(x: sympy.Expr, what: str) -> str | None:
    """Why `x` (the rule's ε, the claim) has no real value, or None: a division by zero, or a number that is not
    real (the log of a negative number)."""
    if _undefined(x):
        return f"{what} divides by zero: {show(x)}"
    if x.is_number and x.is_extended_real is not True:
        return f"{what} is not a real number: {show(x)}"
    return None


def _sympy(e: n.Expr, bindings: dict[str, sympy.Expr]) -> sympy.Expr:
    """to_sympy, with normal_cdf/normal_pdf as their erf/exp forms and comparisons as relations."""
    return to_sympy(e, bindings, closed_forms=True)


class Mixture:
    """The pieces of an R²DP mechanism, read off the program."""

    def __init__(self, mech: ResolvedMechanism):
        self.mech = mech
        if len(mech.mixture_sites) != 1:
            raise NotAMixture("more than one Laplace site has a random scale")
        self.site = mech.mixture_sites[0]
        bindings: dict[str, sympy.Expr] = {}
        outputs = []
        for s in mech.body:
            if isinstance(s, n.Assign) and s.index is None:
                bindings[s.target] = _sympy(s.value, bindings)
            elif isinstance(s, n.Sample):
                bindings.pop(s.var, None)
            elif isinstance(s, n.Output):
                outputs.append(_sympy(s.value, bindings))
            elif not isinstance(s, (n.Assign, n.Sample)):
                raise NotAMixture(f"line {s.span.line}: only assignments, samples and one output are supported")
        if len(outputs) != 1:
            raise NotAMixture("the mechanism must output exactly one value, q + w")
        private = [p for p in mech.params if not p.public]
        if len(private) != 1 or private[0].adjacency[0].kind != AdjacencyKind.SCALAR:
            raise NotAMixture("the rule needs one private scalar q with `adjacent |q - q'| <= Δ`")
        self.q = private[0].name
        bound = private[0].adjacency[0].bound
        assert bound is not None, "a scalar clause has a bound"
        self.delta = _sympy(bound, {})
        w = symbol(self.site.name)
        if sympy.simplify(outputs[0] - symbol(self.q) - w) != 0:
            raise NotAMixture(f"the output must be {self.q} + {self.site.name}")
        scale = _sympy(self.site.args[0], bindings)
        if _undefined(scale):
            raise NotAMixture(f"the scale of {self.site.name}, {show(scale)}, divides by zero")
        if scale == 0:
            raise NotAMixture(f"the scale of {self.site.name} is zero: Laplace noise needs a positive scale")
        self.u = sympy.simplify(1 / scale)
        self.mixing = [s for s in mech.noise if s is not self.site]
        symbols = [symbol(s.name) for s in self.mixing]
        if any(s.family for s in self.mixing):
            raise NotAMixture("mixing variables must be scalar noise")
        try:
            poly = sympy.Poly(sympy.expand(self.u), *symbols) if symbols else None
        except sympy.PolynomialError:
            raise NotAMixture(f"1/scale = {show(self.u)} is not a polynomial in the mixing noise") from None
        if poly is not None and poly.total_degree() > 1:
            raise NotAMixture(f"1/scale = {show(self.u)} is not affine in the mixing noise")
        self.a0 = self.u.subs(dict.fromkeys(symbols, 0))
        self.coefficients = [sympy.diff(self.u, s) for s in symbols]
        if any(c.free_symbols & set(symbols) for c in self.coefficients):
            raise NotAMixture("the mixing noise enters the scale non-linearly")
        self.args = [[_sympy(a, bindings) for a in s.args] for s in self.mixing]
        for site, args in zip(self.mixing, self.args):
            if any(_undefined(a) for a in args):
                raise NotAMixture(f"a parameter of {site.name} ~ {site.distribution.name}(...) divides by zero: "
                                  + ", ".join(show(a) for a in args))

    def epsilon(self, delta: sympy.Expr | None = None) -> sympy.Expr:
        """ε = ln(E[u] / E[u e^{-Δu}]) (Theorem 4.1; Corollary 4.2 for several mixing variables)."""
        delta = self.delta if delta is None else delta
        mean = self.a0 + sum((a * _mean(s, args) for a, s, args in zip(self.coefficients, self.mixing, self.args)),
                             sympy.Integer(0))
        values = [_value_at(s, args, -delta * a) for a, s, args in zip(self.coefficients, self.mixing, self.args)]
        tilted = self.a0 * sympy.Mul(*values)
        for j, (a, s, args) in enumerate(zip(self.coefficients, self.mixing, self.args)):
            others = sympy.Mul(*(v for i, v in enumerate(values) if i != j))
            tilted += a * _derivative_at(s, args, -delta * a) * others
        tilted = sympy.exp(-delta * self.a0) * tilted
        return sympy.log(mean / tilted)


def _sample_parameters(mech: ResolvedMechanism, count: int, seed: int = 0) -> list[dict[str, float]]:
    """Parameter values satisfying `requires` (rejection sampling over a broad box; deterministic)."""
    rng = random.Random(seed)
    names = [p.name for p in mech.params]
    requires = [_sympy(r_part, {}) for r in mech.requires for r_part in _conjuncts(r)]
    points: list[dict[str, float]] = []
    attempts = 0
    while len(points) < count and attempts < 20000:
        attempts += 1
        point = {name: rng.choice([rng.uniform(0.05, 3.0), rng.uniform(0.05, 1.0), rng.uniform(1.0, 10.0)])
                 for name in names}
        substituted = {symbol(k): sympy.Float(v) for k, v in point.items()}
        if all(bool(c.subs(substituted)) for c in requires):
            points.append(point)
    return points


def _conjuncts(e: n.Expr) -> list[n.Expr]:
    if isinstance(e, n.BoolOp) and e.op == "and":
        return _conjuncts(e.left) + _conjuncts(e.right)
    if isinstance(e, n.Compare):
        return [n.Compare((op,), (a, b), e.span) for op, a, b in zip(e.ops, e.operands, e.operands[1:])]
    return [e]


def _numeric_sup(mix: Mixture, point: dict[str, float]) -> float:
    """sup over x of ln f_q(x)/f_{q+Δ}(x), with the MGFs recomputed by quadrature from scipy's densities.

    The output density at distance s from q is ½·E[u e^{-s·u}] (`tilted`); on a grid of x, every s = |x| and
    |x − Δ| is needed. The moments E[X^p e^{t·X}] of each mixing variable are integrated for all those t at
    once (`quad_vec`, one density evaluation per node for the whole vector, to a relative accuracy of 1e-10 in
    each component) instead of one adaptive quadrature per t.
    """
    # lazy: loads numpy only when this runs (start-up; tests/test_layers.py)
    import numpy as np

    subs = {symbol(k): v for k, v in point.items()}
    delta = float(mix.delta.subs(subs))
    a0 = float(mix.a0.subs(subs))
    coefficients = [float(c.subs(subs)) for c in mix.coefficients]
    xs = np.concatenate([np.linspace(-3 * delta, 4 * delta, 36), [0.0, delta]])
    distances = np.concatenate([np.abs(xs), np.abs(xs - delta)])
    products = np.ones(len(distances))  # Π_j M_j(-s·a_j)
    moments0, moments1 = [], []
    for site, args, a in zip(mix.mixing, mix.args, coefficients):
        values = tuple(float(x.subs(subs)) for x in args)
        mixing = _mixing(site)
        t = -distances * a
        if mixing.atoms is not None:
            atoms = mixing.atoms(values)
            m0 = sum(p * np.exp(t * x) for x, p in atoms)
            m1 = sum(p * x * np.exp(t * x) for x, p in atoms)
        elif site.distribution.law is not None:
            m0, m1 = _density_moments(site.distribution.law(values), t)
        else:
            raise NotAMixture(f"no numeric reference for {site.distribution.name}")
        moments0.append(np.asarray(m0, dtype=float))
        moments1.append(np.asarray(m1, dtype=float))
        products = products * moments0[-1]
    total = a0 * products
    for j, a in enumerate(coefficients):
        others = np.prod([m for i, m in enumerate(moments0) if i != j], axis=0) if len(moments0) > 1 else 1.0
        total = total + a * moments1[j] * others
    tilted = np.exp(-distances * a0) * total
    n = len(xs)
    return float(np.max(np.log(tilted[:n] / tilted[n:])))


def _density_moments(spec: Any, t: Any) -> tuple[Any, Any]:
    """E[e^{tX}] and E[X e^{tX}] for every t of the vector `t`, X with the scipy distribution `spec`: one
    `quad_vec` per piece, split at the median. Below it, x = lo + (median - lo)·v^8 (exact) flattens a
    singularity of the density at its lower end (Gamma with shape k < 1: x^(k-1) dx becomes ~ v^(8k-1) dv)."""
    # lazy: loads numpy, scipy only when this runs (start-up; tests/test_layers.py)
    import numpy as np
    from scipy import integrate

    lo, hi = (float(x) for x in spec.support())
    middle = float(spec.ppf(0.5))
    width = middle - lo

    def integrand(x: float) -> Any:
        density = float(spec.pdf(x)) if math.isfinite(x) else 0.0
        if not math.isfinite(density):  # an integrable singularity at an end (Gamma with shape < 1)
            density = 0.0
        weight = density * np.exp(t * x) if density else np.zeros(len(t))
        return np.concatenate([weight, x * weight])

    def lower(v: float) -> Any:
        return integrand(lo + width * v ** 8) * (8 * width * v ** 7)

    both = sum(integrate.quad_vec(f, a, b, epsabs=0.0, epsrel=1e-10, norm="max", limit=400)[0]
               for f, a, b in ((lower, 0.0, 1.0), (integrand, middle, hi)))
    return both[:len(t)], both[len(t):]


def _canonical(x: sympy.Expr) -> sympy.Expr:
    return sympy.expand(sympy.powsimp(sympy.expand(x), combine="exp", force=True))


def _identical(a: sympy.Expr, b: sympy.Expr) -> bool:
    """A symbolic proof that a == b, by normal forms that stay cheap (no `simplify` on large formulas).

    Every symbol is real and the arguments of the logarithms are positive under `requires`, so the forced
    log and power rewrites are exact here.
    """
    if a.is_number and b.is_number:
        return False  # decimals: compared numerically by the caller
    ea, eb = sympy.exp(a), sympy.exp(b)
    na, da = sympy.fraction(sympy.together(ea))
    nb, db = sympy.fraction(sympy.together(eb))
    if _canonical(na * db - nb * da) == 0:
        return True
    difference = sympy.expand(sympy.expand_log(a - b, force=True))
    if difference == 0:
        return True
    return sympy.count_ops(difference) < 60 and sympy.simplify(difference) == 0


def _at(e: sympy.Expr, subs: dict, digits: int) -> float:
    """`e` at one parameter point, evaluated numerically (substituting exact rationals into powers such as
    (1 + dq·θ)^(k + 1) made sympy search for perfect powers past 12 GB). An imaginary part at the level of
    the working precision is rounding (logs of values that are positive in exact arithmetic); a larger one
    means the formula has no real value there (ValueError)."""
    value = e.evalf(digits, subs=subs)
    real, imaginary = (float(x) for x in value.as_real_imag())
    if abs(imaginary) > 10.0 ** (5 - digits) * (1 + abs(real)):
        raise ValueError(f"{show(e)} is not real at this point")
    return real


def _at_quickly(e: sympy.Expr, subs: dict) -> float:
    """`e` at a point of floats, for the cross-check only: the floats (exact at 30 digits) are put into the
    formula and the number is evaluated, 5-10 times faster than `_at`'s `evalf(subs=...)` on the R²DP
    truncated Gaussian (0.1 s instead of 0.8 s a point). The arithmetic done while substituting is not
    error-controlled, so a disagreement is checked again with `_at` before it is reported; a refutation never
    rests on this evaluation."""
    value = e.xreplace({k: sympy.Float(v, 30) for k, v in subs.items()}).evalf(20)
    real, imaginary = (float(x) for x in value.as_real_imag())
    if abs(imaginary) > 1e-15 * (1 + abs(real)):
        raise ValueError(f"{show(e)} is not real at this point")
    return real


def _agree(numeric: float, symbolic: float) -> bool:
    """The cross-check's tolerance: the two values of ε agree to 1e-6 (relative above 1)."""
    return abs(numeric - symbolic) <= 1e-6 * max(1.0, abs(symbolic))


def verify(mech: ResolvedMechanism, obligation: Obligation) -> Verdict:
    """MIX: the claim is at least the rule's ε (Theorem 4.1, Corollary 4.2), with sympy, then cross-checked."""
    start = time.perf_counter()
    verdict = PendingVerdict(obligation)
    try:
        mix = Mixture(mech)
        rule = mix.epsilon()
        claim = _sympy(mech.claim, {})
    except (NotAMixture, NotSymbolic) as error:
        verdict.fail(Status.UNKNOWN, f"the R²DP rule does not apply: {error}")
        verdict.seconds = time.perf_counter() - start
        return verdict.freeze()
    problem = _no_value(rule, "the rule's ε") or _no_value(claim, "the claim")
    if problem is not None:
        verdict.fail(Status.UNKNOWN, f"the R²DP rule does not apply: {problem}")
        verdict.seconds = time.perf_counter() - start
        return verdict.freeze()
    verdict.note(f"rule: R²DP Theorem 4.1{' / Corollary 4.2' if len(mix.mixing) > 1 else ''}, "
                 f"u = 1/scale = {show(mix.u)}, Δ = {show(mix.delta)}")
    rule_text = f"{float(rule.evalf(30)):.12g}" if rule.is_number else show(rule)
    verdict.note(f"ε of the rule = {rule_text}")
    points = _sample_parameters(mech, 6)
    exact = _identical(claim, rule)
    difference = claim - rule
    if exact:
        verdict.scope = "exactly (the claim equals the rule's ε)"
    elif difference.is_number and difference.is_extended_real is not True:  # log of a negative number, say
        verdict.fail(Status.UNKNOWN, f"claim − ε = {show(difference)} is not a real number")
    elif difference.is_number:
        slack = float(difference)
        if slack >= 0:
            verdict.scope = "for the given parameters"
            verdict.note(f"the claim is valid but loose by {slack:.6g}", Status.PROVED)
        else:
            verdict.fail(Status.REFUTED, f"the claim is {-slack:.6g} below the rule's ε = "
                                         f"{f'{float(rule):.10g}' if rule.is_number else show(rule)}",
                         Counterexample(mech.node.span.path, mech.name, ObligationId.MIX, {}, {}, {},
                                        claim=float(claim) if claim.is_number else ABSENT,
                                        epsilon=float(rule) if rule.is_number else ABSENT))
    else:
        values, unevaluable = [], ""
        for point in points:
            subs = {symbol(k): sympy.Rational(str(v)) for k, v in point.items()}
            try:
                values.append((_at(difference, subs, 40), point, subs))
            except ValueError as error:
                unevaluable = f"claim − ε cannot be evaluated at {format_values(point, digits=None)}: {error}"
                break
        below = [(v, p, subs) for v, p, subs in values if v < -1e-12]
        if unevaluable:
            verdict.fail(Status.UNKNOWN, unevaluable)
        elif below:
            v, p, subs = below[0]
            verdict.fail(Status.REFUTED, f"at {format_values(p, digits=None)} the claim is {-v:.6g} below the rule's ε",
                         Counterexample(mech.node.span.path, mech.name, ObligationId.MIX, p, {}, {},
                                        claim=_at(claim, subs, 30), epsilon=_at(rule, subs, 30)))
        elif all(abs(v) < 1e-20 for v, _, _ in values) and values:
            verdict.scope = "exactly (the claim and the rule's ε agree to 20 digits at every sampled point)"
            verdict.note("sympy did not reduce claim - ε to 0; equality checked numerically at "
                         f"{len(values)} parameter points")
            verdict.fail(Status.UNKNOWN, "the claim equals the rule's ε numerically but sympy could not prove it")
        else:
            verdict.fail(Status.UNKNOWN, "sympy cannot decide whether the claim is at least the rule's ε; "
                                    f"it is at every one of {len(values)} sampled parameter points")
    # Numerical cross-check of the rule against the density ratio.
    for point in points[:2]:
        subs = {symbol(k): v for k, v in point.items()}
        try:
            numeric = _numeric_sup(mix, point)
            symbolic = _at_quickly(rule, subs)
            if not _agree(numeric, symbolic):  # before saying so, the evaluation that controls its error
                symbolic = _at(rule, subs, 20)
            agree = _agree(numeric, symbolic)
        except (ValueError, ZeroDivisionError, OverflowError) as error:
            verdict.note(f"numerical cross-check failed at {format_values(point, digits=None)}: {error}")
            continue
        verdict.note(
            f"cross-check at {', '.join(f'{k}={v:.4g}' for k, v in point.items())}: sup_x ln density ratio = "
            f"{numeric:.8g}, rule = {symbolic:.8g}" + ("" if agree else "  (DISAGREE)"))
        if not agree:
            verdict.fail(Status.UNKNOWN, "the numerical cross-check disagrees with the symbolic ε")
    verdict.seconds = time.perf_counter() - start
    verdict.value = rule
    return verdict.freeze()
