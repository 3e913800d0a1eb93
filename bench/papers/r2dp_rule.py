"""Reproduction: R²DP's mixture rule — a Laplace mechanism whose reciprocal scale u is drawn from a second fold
is ε-DP with ε = ln(E[u] / M_u'(−Δq)) (R²DP Section 4.1, Theorem 4.1; Corollary 4.2 for u = Σ aⱼXⱼ), against the
numeric supremum of the privacy loss and against sampling.

    python bench/papers/r2dp_rule.py [--trials N] [--seed S] [--plot PATH | --no-plot]

The mixture's density at x is p(x | q) = E[(u/2)·e^{−u|x−q|}] = ½ M_u'(−|x − q|) (Theorem 3.1, (10)). The proof
of Theorem 4.1 (Appendix C) bounds ln p(x|q)/p(x|q') by ln f(t) with t = −|x − q| ≤ 0 and f(t) = M'(t)/M'(t − Δq),
using |x − q'| ≤ |x − q| + Δq, and shows f non-decreasing (M' = E[u e^{tu}] is log-convex), so f(t) ≤ f(0). At
x = q the triangle inequality is an equality: the bound is attained, and the rule is the exact supremum of the
privacy loss, not only an upper bound. So the rows say "rule = sup": theory the rule from the folds' closed
forms (`R2DP.epsilon`), measured the supremum computed without them:

- the log densities by adaptive quadrature (scipy's quad_vec) over u's law, built from the fold's parameters
  with scipy.stats (the samplers' laws), or by the fold's own finite sum (point mass, Bernoulli); for the
  ensemble the density is Σⱼ aⱼE[Xⱼe^{−saⱼXⱼ}]·Π_{i≠j}E[e^{−saᵢXᵢ}] (independence), each factor by quadrature;
- the supremum of |ln p(x|q) − ln p(x|q')| over q' − q ∈ {Δq/2, Δq} and x on a grid (step Δq/40 on
  [q − 4Δq, q + Δq/2], 40 geometric steps out to q − 1000Δq; by the mirror symmetry x ↦ q + q' − x the other
  half-line holds the same values with the sign flipped), refined 20-fold around the grid's maximum, and the
  limit as x → −∞, (q' − q)·min(support of u), taken analytically (the density is dominated by the smallest
  u there). "where" names the maximiser.

Tolerance of these rows: 1e-8 absolute on ε. Each expectation is asked for a relative 1e-12 (quad_vec, every
component divided by a rough value of itself so that the max-norm criterion is relative per component); two
logs make about 1e-11; the closed forms lose a few digits more (differences of Φ in the truncated Gaussian; the
tests compare closed forms and quadrature to 1e-9). A rule that is only a bound, or a supremum elsewhere, would
differ by orders of magnitude more: the seed's Theorem B.2 (the Bernoulli fold's printed ε, kept as rows of its
own) is off by 0.21 to 0.39 and fails in every row where it is compared — the recorded verdict "disagrees" is
B.2's alone; Theorem 4.1 and Corollary 4.2 agree in every row.

Sampled rows: n draws of the mechanism (`R2DP.m`) at q = 0 and at q' = Δq, the log ratio of the frequencies of
a bin next to q ([q − Δq/10, q], where the loss is largest) and of the left tail (−∞, q − 2Δq], against the
exact log ratio of the bins' probabilities from the mixture's CDF (`R2DP.cdf`, through the MGF). The interval
is the delta method's on the log scale (the two counts are independent binomials: Var ln(c/n) ≈ (1 − p)/(n p);
`_log_ratio`, an `Estimate.normal`), simultaneous at 99 % with the other rows like every table's.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import integrate, special, stats

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _claim import Estimate, Reproduction, Row, Verdict, figure, main, save, simultaneous

from mechanisms import r2dp
from mechanisms.r2dp import (
    R2DP,
    BernoulliFold,
    GammaFold,
    LinearCombination,
    PointMass,
    SecondFold,
    TruncatedGaussianFold,
    UniformFold,
)

TOLERANCE = 1e-8
"""Absolute, on ε: quadrature and closed-form rounding (module docstring)."""

STEPS = 40
"""Grid points per Δq near q."""


@dataclass(frozen=True)
class Setting:
    family: str
    parameters: str
    mechanism: R2DP
    dq: float
    bernoulli: tuple[float, float, float] | None = None
    """(p, b0, b1) of `r2dp.bernoulli`, for the seed's Theorem B.2."""
    sampled: bool = False
    """Whether this setting also gets the sampled rows (one per family)."""


SETTINGS = [
    Setting("point mass", "b0=2", r2dp.point_mass(2.0), 1.5, sampled=True),
    Setting("bernoulli", "p=0.3 b0=1 b1=2", r2dp.bernoulli(0.3, 1, 2), 1.0, (0.3, 1, 2)),
    Setting("bernoulli", "p=0.5 b0=100 b1=1", r2dp.bernoulli(0.5, 100, 1), 1.0, (0.5, 100, 1), sampled=True),
    Setting("bernoulli", "p=0.7 b0=2 b1=0.5", r2dp.bernoulli(0.7, 2, 0.5), 1.5, (0.7, 2, 0.5)),
    Setting("gamma", "k=2 theta=0.5", r2dp.gamma(2, 0.5), 1.0, sampled=True),
    Setting("gamma", "k=0.7 theta=1.5", r2dp.gamma(0.7, 1.5), 1.0),
    Setting("gamma", "k=3 theta=0.2", r2dp.gamma(3, 0.2), 2.0),
    Setting("uniform", "a=0.5 b=2", r2dp.uniform(0.5, 2), 1.0, sampled=True),
    Setting("uniform", "a=0.5 b=9", r2dp.uniform(0.5, 9), 1.2),
    Setting("uniform", "a=1 b=3", r2dp.uniform(1, 3), 0.5),
    Setting("trunc gaussian", "mu=1 s=0.5 [0,3]", r2dp.trunc_gaussian(1, 0.5, 0, 3), 1.0, sampled=True),
    Setting("trunc gaussian", "mu=2 s=1 [0.5,4]", r2dp.trunc_gaussian(2, 1, 0.5, 4), 1.0),
    Setting("trunc gaussian", "mu=3 s=0.3 [1,5]", r2dp.trunc_gaussian(3, 0.3, 1, 5), 2.0),
    Setting("ensemble", "spec defaults", r2dp.ensemble(), 1.0, sampled=True),
    Setting("ensemble", "a=(.6,.2,.2) k=5", r2dp.ensemble((0.6, 0.2, 0.2), gamma_k=5), 1.0),
]
"""The settings of specs/r2dp/*.dp and their tests (tests/test_mechanisms.py), plus a second ensemble."""


# ------------------------------------------------------------------------------- the density by quadrature


@dataclass(frozen=True)
class Law:
    """A continuous second fold's law for quadrature: log density on [lo, hi], breakpoints inside, and `top`,
    hi or (unbounded u) a quantile beyond which the mass is negligible (for the rough scale only)."""

    logpdf: object
    lo: float
    hi: float
    points: list[float]
    top: float


def _continuous_law(fold: SecondFold) -> Law | None:
    """The law of a continuous second fold, from its parameters with scipy.stats (the laws its sampler draws
    from); None for a discrete fold."""
    if isinstance(fold, GammaFold):
        law = stats.gamma(fold.k, scale=fold.theta)
        return Law(law.logpdf, 0.0, math.inf, [fold.k * fold.theta], float(law.ppf(1 - 1e-15)))
    if isinstance(fold, UniformFold):
        width = fold.b - fold.a
        return Law(lambda u: -math.log(width), fold.a, fold.b, [], fold.b)
    if isinstance(fold, TruncatedGaussianFold):
        law = stats.truncnorm(fold.alpha, fold.beta, loc=fold.mu, scale=fold.sigma)
        return Law(law.logpdf, fold.a, fold.b, [p for p in (fold.mu,) if fold.a < p < fold.b], fold.b)
    if isinstance(fold, (PointMass, BernoulliFold)):
        return None
    raise TypeError(f"no law for {type(fold).__name__}")


def _rough_log(law: Law, s: np.ndarray, power: int) -> np.ndarray:
    """ln ∫ u^power e^{−s(u − lo)} g(u) du roughly (trapezoid on a grid that is geometric near lo, where the
    integrand piles up for large s): the per-component scale that makes quad_vec's max-norm criterion relative."""
    offsets = np.unique(np.concatenate([np.geomspace(1e-12, 1.0, 1500), np.linspace(0.0, 1.0, 1500)[1:]]))
    u = law.lo + (law.top - law.lo) * offsets
    log_g = np.asarray(law.logpdf(u), dtype=float) + power * np.log(u)
    exponent = -np.outer(s, u - law.lo) + log_g
    peak = np.max(exponent, axis=1, keepdims=True)
    area = np.trapezoid(np.exp(exponent - peak), u, axis=1)
    return peak[:, 0] + np.log(np.maximum(area, 1e-300))


def _log_transform(fold: SecondFold, s: np.ndarray, power: int) -> np.ndarray:
    """ln E[u^power·e^{−s·u}] (power 0 or 1) for each s ≥ 0, by quadrature or a finite sum, with e^{−s·min u}
    factored out so that the far tails keep their digits."""
    s = np.asarray(s, dtype=float)
    if isinstance(fold, LinearCombination):  # independence: E[e^{−su}] = Π, E[u e^{−su}] by the product rule
        mgfs = [_log_transform(f, a * s, 0) for a, f in zip(fold.weights, fold.folds)]
        if power == 0:
            return sum(mgfs)
        terms = [math.log(a) + _log_transform(f, a * s, 1) + sum(v for i, v in enumerate(mgfs) if i != j)
                 for j, (a, f) in enumerate(zip(fold.weights, fold.folds))]
        return special.logsumexp(np.stack(terms), axis=0)
    m = fold.support_min
    law = _continuous_law(fold)
    if law is None:  # a finite sum: the fold's own expectation, vectorised over s
        return np.log(np.asarray(fold.expect(lambda u: u ** power * np.exp(-s * (u - m))))) - s * m
    assert law.lo == m
    scale = _rough_log(law, s, power)

    def integrand(u: float) -> np.ndarray:
        return u ** power * np.exp(-s * (u - m) + law.logpdf(u) - scale)

    value, _ = integrate.quad_vec(integrand, m, law.hi, points=law.points or None, epsabs=0.0, epsrel=1e-12,
                                  norm="max", limit=2000)
    if not np.all(np.abs(value - 1) < 0.05):  # the rough scale is a few % off at most; more means a miss
        raise ArithmeticError(f"quadrature of {type(fold).__name__} disagrees with its rough scale")
    return np.log(value) + scale - s * m


def _log_density(fold: SecondFold, s: np.ndarray) -> np.ndarray:
    """ln p(x | q) at |x − q| = s: ln(½ E[u e^{−s u}]) (Theorem 3.1, (10))."""
    return math.log(0.5) + _log_transform(fold, s, 1)


@dataclass(frozen=True)
class Supremum:
    value: float
    x: float
    """The maximiser, x − q (q = 0)."""
    distance: float
    """q' − q at the maximum."""
    tail: float
    """The limit of the loss as x → −∞ at q' − q = Δq."""


def numeric_supremum(fold: SecondFold, dq: float) -> Supremum:
    """sup over x and over q' − q ∈ {Δq/2, Δq} of |ln p(x|0) − ln p(x|q')|, from quadrature alone. Of maxima
    equal to 1e-12 (the point mass is flat on x ≤ q), the one nearest q is reported."""
    h = dq / STEPS
    fine = h * np.arange(0, 5 * STEPS + 1)  # every |x| and |x − q'| of the fine x-grid
    far = np.geomspace(4 * dq, 1000 * dq, 41)[1:]
    distances = (dq / 2, dq)
    s_far = np.concatenate([far] + [far + d for d in distances])
    log_p = _log_density(fold, np.concatenate([fine, s_far]))
    fine_p, far_p = log_p[:fine.size], log_p[fine.size:]
    xs, ds, losses = [], [], []
    for k, d in enumerate(distances):
        steps = round(d / h)
        # x = h·i for i in −4·STEPS .. steps/2 (x ↦ d − x mirrors the rest): |x| = h|i|, |x − d| = h|i − steps|
        i = np.arange(-4 * STEPS, steps // 2 + 1)
        xs += [h * i, -far]
        ds += [np.full(i.size + far.size, d)]
        losses += [np.abs(fine_p[np.abs(i)] - fine_p[np.abs(i - steps)]),
                   np.abs(far_p[:far.size] - far_p[(k + 1) * far.size:(k + 2) * far.size])]
    x, d, loss = _nearest_maximum(np.concatenate(xs), np.concatenate(ds), np.concatenate(losses))
    # a 20-fold finer grid on the two cells around the maximum (the loss is smooth off x = q and x = q')
    x_fine = x + h * np.linspace(-1, 1, 41)
    log_q = _log_density(fold, np.concatenate([np.abs(x_fine), np.abs(x_fine - d)]))
    refined = np.abs(log_q[:x_fine.size] - log_q[x_fine.size:])
    x, d, loss = _nearest_maximum(np.append(x_fine, x), np.append(np.full(x_fine.size, d), d),
                                  np.append(refined, loss))
    return Supremum(loss, x, d, dq * fold.support_min)


def _nearest_maximum(xs: np.ndarray, ds: np.ndarray, losses: np.ndarray) -> tuple[float, float, float]:
    top = float(np.max(losses))
    ties = np.flatnonzero(losses >= top - 1e-12 * max(1.0, top))
    j = ties[np.argmin(np.abs(xs[ties]))]
    return float(xs[j]), float(ds[j]), top


# ------------------------------------------------------------------------------------------------- sampling


def _log_ratio(count: int, count_other: int, n: int) -> Estimate:
    """ln(c/c') for two independent Binomial(n, ·) counts, with the delta method's interval on the log scale."""
    if count == 0 or count_other == 0:
        return Estimate(math.nan, -math.inf, math.inf, n)
    spread = math.sqrt((1 - count / n) / count + (1 - count_other / n) / count_other)
    return Estimate.normal(math.log(count / count_other), spread, n)


def _bins(dq: float) -> list[tuple[str, float, float]]:
    return [("[q-dq/10, q]", -dq / 10, 0.0), ("(-inf, q-2dq]", -math.inf, -2 * dq)]


def _probability(mechanism: R2DP, lo: float, hi: float, q: float) -> float:
    upper = float(mechanism.cdf(hi, q))
    return upper - (float(mechanism.cdf(lo, q)) if math.isfinite(lo) else 0.0)


def _sampled_rows(setting: Setting, n: int, rngs: list[np.random.Generator]) -> list[Row]:
    mechanism, dq = setting.mechanism, setting.dq
    at_q, at_other = mechanism.m(0.0, n, rngs[0]), mechanism.m(dq, n, rngs[1])
    rows = []
    for name, lo, hi in _bins(dq):
        counts = [int(np.count_nonzero((w >= lo) & (w <= hi))) for w in (at_q, at_other)]
        theory = math.log(_probability(mechanism, lo, hi, 0.0) / _probability(mechanism, lo, hi, dq))
        rows.append(Row(_label("sampled bin", setting, "exact bin ratio", name, "-"), theory,
                        _log_ratio(counts[0], counts[1], n)))
    return rows


# ------------------------------------------------------------------------------------------------ the rows


def _label(check: str, setting: Setting, theory: str, where: str, tail: object) -> dict[str, object]:
    return {"check": check, "family": setting.family, "parameters": setting.parameters, "dq": setting.dq,
            "theory is": theory, "where": where, "tail x->-inf": tail}


def theorem_b2(p: float, b0: float, b1: float, dq: float) -> float:
    """R²DP Appendix B.0.1 (2), Theorem B.2 as printed: ln[p·e^{Δq/b0} + (1 − p)·e^{Δq/b1}] (the seed's claim
    for the Bernoulli fold, kept here as the seed states it; see specs/r2dp/bernoulli.dp)."""
    return math.log(p * math.exp(dq / b0) + (1 - p) * math.exp(dq / b1))


def _where(sup: Supremum, dq: float) -> str:
    pair = "q'=q+dq" if sup.distance == dq else f"q'=q+{sup.distance / dq:g}dq"
    at = "x=q" if sup.x == 0 else f"x=q{sup.x / dq:+.3g}dq"
    return f"{at}, {pair}"


def reproduce(trials: int, seed: int) -> Reproduction:
    children = np.random.SeedSequence(seed).spawn(2 * len(SETTINGS))
    rows: list[Row] = []
    sampled: list[Row] = []
    deviations = []
    b2 = []
    for n, setting in enumerate(SETTINGS):
        sup = numeric_supremum(setting.mechanism.fold, setting.dq)
        rule = setting.mechanism.epsilon(setting.dq)
        deviations.append(abs(sup.value - rule))
        where = _where(sup, setting.dq)
        measured = Estimate.exact(sup.value)
        rows.append(Row(_label("sup |ln p/p'|", setting, "Thm 4.1 rule", where, round(sup.tail, 6)), rule,
                        measured, TOLERANCE))
        if setting.bernoulli is not None:
            printed = theorem_b2(*setting.bernoulli, setting.dq)
            p, b0, b1 = setting.bernoulli
            b2.append((setting.parameters, printed, theorem_b2(1 - p, b0, b1, setting.dq), sup.value))
            rows.append(Row(_label("sup |ln p/p'|", setting, "Thm B.2 printed", where, round(sup.tail, 6)),
                            printed, measured, TOLERANCE))
        if setting.sampled:
            rngs = [np.random.default_rng(child) for child in children[2 * n:2 * n + 2]]
            sampled += _sampled_rows(setting, trials, rngs)
    rows, sampled = simultaneous(rows + sampled)[:len(rows)], simultaneous(rows + sampled)[len(rows):]
    rule_rows = [row for row in rows if row.label["theory is"] == "Thm 4.1 rule"]
    at_q = sum(1 for row in rule_rows if str(row.label["where"]).startswith("x=q,"))
    under = [params for params, printed, _, sup in b2 if printed < sup]
    witness = next(row for row in sampled if row.label["parameters"] == "p=0.5 b0=100 b1=1")
    witness_b2 = next(printed for params, printed, _, _ in b2 if params == "p=0.5 b0=100 b1=1")
    findings = [
        f"Theorem 4.1 / Corollary 4.2: the rule equals the numeric supremum of the privacy loss in "
        f"{sum(r.agrees for r in rule_rows)}/{len(rule_rows)} settings (largest difference "
        f"{max(deviations):.1e}), attained at x = q with |q - q'| = dq in {at_q}/{len(rule_rows)} (the point mass "
        "is flat on x <= q; of equal maxima the one nearest q is named). The rule is the exact epsilon, not only "
        "a bound: the proof's triangle inequality is tight at x = q. As x -> -inf the loss tends to "
        "(q'-q)·min u only (column 'tail').",
        "Theorem B.2 (the Bernoulli fold's printed epsilon, ln[p e^(dq/b0) + (1-p) e^(dq/b1)], 'the mean of "
        "e^eps(b)') is not the rule's value: " + "; ".join(
            f"{params}: B.2 {printed:.4f} (p and 1-p swapped as the pmf pairs them: {paired:.4f}), sup {sup:.4f}"
            for params, printed, paired, sup in b2)
        + f". As printed it is below the true loss in {len(under)}/{len(b2)}, swapped in "
        f"{sum(paired < sup for _, _, paired, sup in b2)}/{len(b2)}: not even a valid bound (so Theorem 4.5's "
        "remark that ln E[e^eps(b)] is an upper bound fails too; specs/r2dp/bernoulli.dp).",
        f"Sampled witness: for p=0.5 b0=100 b1=1 the bin [q-dq/10, q] has log ratio "
        f"{witness.measured.text()} (simultaneous 99 % CI) against B.2's {witness_b2:.4f}: "
        + ("an event whose probability ratio exceeds e^B.2, measured directly from the mechanism."
           if witness.measured.low > witness_b2 else "too few trials to exclude B.2 by sampling."),
        "The sampled bins agree with the exact bin ratios from the mixture's CDF (MGF closed forms) in "
        f"{sum(bool(r.agrees) for r in sampled)}/{len(sampled)} rows.",
    ]
    return Reproduction(
        name="r2dp_rule",
        source="R²DP Section 4.1, Theorem 4.1 and Corollary 4.2 (proof in Appendix C); Appendix B.0.1 Theorem B.2",
        claim="q + Lap(1/u), u from a second fold, is ln(E[u] / M_u'(-dq))-DP; this is the sup of the privacy loss",
        rows=rows + sampled,
        expected=Verdict.DISAGREES,
        findings=findings,
    )


def plot(result: Reproduction, path: Path) -> None:
    """Left: the log density ratio over the rule's ε against (x − q)/Δq for one setting of each family
    (closed-form densities), with the quadrature suprema and Theorem B.2. Right: the sampled bins against their
    exact log ratios."""
    fig, ax = figure(8.4, 3.8)
    ax.remove()
    left, right = fig.subplots(1, 2, width_ratios=[3, 2])
    ratio = np.linspace(-3, 4, 1401)
    shown = [s for s in SETTINGS if s.sampled]
    for n, setting in enumerate(shown):
        fold, dq = setting.mechanism.fold, setting.dq
        rule = setting.mechanism.epsilon(dq)
        x = ratio * dq
        with np.errstate(all="ignore"):
            loss = np.log(fold.mgf_derivative(-np.abs(x)) / fold.mgf_derivative(-np.abs(x - dq)))
        line, = left.plot(ratio, loss / rule, lw=1, label=f"{setting.family} {setting.parameters}, dq={dq:g}")
        colour = line.get_color()
        mine = [row for row in result.rows
                if row.label["family"] == setting.family and row.label["parameters"] == setting.parameters]
        for row in mine:
            if row.label["theory is"] == "Thm 4.1 rule":
                left.plot([0.0], [row.measured.value / rule], "o", ms=6, mfc="none", color=colour)
            elif row.label["theory is"] == "Thm B.2 printed":
                left.plot([0.0], [row.theory / rule], "v", ms=5, color=colour)
        bins = [row for row in mine if row.label["theory is"] == "exact bin ratio"]
        for k, row in enumerate(bins):
            at = n + (k - 0.5) * 0.35
            m = row.measured
            right.errorbar([at], [m.value], yerr=[[m.value - m.low], [m.high - m.value]],
                           fmt="s" if k == 0 else "D", ms=3, capsize=2, color=colour)
            right.plot([at], [row.theory], "_", ms=10, color="k")
    left.axhline(1.0, color="k", lw=0.6, ls=":")
    left.set_xlabel("(x - q) / dq,  q' = q + dq", fontsize=8)
    left.set_ylabel("ln p(x|q)/p(x|q')  /  rule eps", fontsize=8)
    left.set_title("loss / rule (o: quadrature sup, v: Theorem B.2 printed)", fontsize=8)
    left.legend(fontsize=6, loc="lower left")
    right.set_xticks(range(len(shown)), [s.family.replace(" ", "\n") for s in shown], fontsize=6)
    right.set_ylabel("log ratio of bin probabilities", fontsize=8)
    right.set_title("sampled, simultaneous 99% CIs (left [q-dq/10, q], right (-inf, q-2dq]);\n"
                    "black: exact from the CDF", fontsize=7)
    for ax in (left, right):
        ax.tick_params(labelsize=7)
    fig.suptitle("R²DP Theorem 4.1: the privacy loss peaks at x = q, at the rule's eps", fontsize=9)
    save(fig, path)


if __name__ == "__main__":
    raise SystemExit(main(reproduce, plot, __doc__, default_trials=2_000_000))
