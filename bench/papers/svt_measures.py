"""Reproduction: Free Gap Section 5.3, "Improving accuracy" — SVT with Gap run on half the budget, plus independent
measurements of the k selected queries on the other half; combining each measurement with its free gap cuts the
mean squared error by (1+∛(4k²))³/((1+∛(4k²))³+k²) → 4/5 (general queries), (1+∛k²)³/((1+∛k²)³+k²) → 1/2
(monotone) and (1+∛k²)³/((1+∛k²)³+2k²) → 1/3 (monotone, exponential noise); and Section 5.1, "Choice of θ":
θ = 1/(1+∛(4k²)) (1/(1+∛k²) for monotone queries) minimises the variance of the gap. Figures 2(a) and 3(a) of
Section 9.2 plot the first claim against data.

    python bench/papers/svt_measures.py [--trials N] [--seed S] [--plot PATH | --no-plot]

The total budget is ε = 0.7 (Section 9). SVT with Gap (`mechanisms.SVTWithGap`, Algorithm 2) runs with ε' = ε/2
and θ = `optimal_theta(k, monotone)` on k queries all at T + 40 standard deviations of the gap, so that each of
them is released (⊤ with its gap) in every run, except with probability < 1e-15: the seed's variances are the
unconditional ones, which are the released gaps' only when release is certain. The k measurements are
αᵢ = qᵢ + Lap(k/ε''), ε'' = ε/2, and βᵢ = `inverse_variance_combination(αᵢ, Var(α), γᵢ + T, Var(γ))` with the
mechanism's own `gap_variance()`. Rows:

- the MSE ratio E|β − q|²/E|α − q|² per k (`Estimate.ratio_of_means` of the per-run sums over the k queries, which
  are i.i.d. across runs; the k gaps of a run share the threshold noise) against the seed's printed formula, for
  Laplace noise, monotone queries (query noise Lap(1/ε₁), footnote 5) and monotone queries with exponential noise
  (Exp(1/ε₀) and Exp(1/ε₁), means subtracted: Algorithm 3's noise with σ = ∞, which is how Section 5.1 obtains
  Algorithm 2 from Algorithm 1);
- at k = 8, the two variances behind the ratio, measured: the gap's E(γ − (q − T))² against the seed's
  Var(γᵢ) = 8(1+∛(4k²))³/ε², 8(1+∛k²)³/ε², 4(1+∛k²)³/ε² (ε the total budget, so SVT's own budget is ε/2), and
  E(α − q)² against Var(αᵢ) = 8k²/ε²;
- Section 5.1's θ: at k = 8, general and monotone Laplace, the measured E(γ − (q − T))² on a grid θ*·2^{0.75j},
  j = −2..2, against (2/ε'²)(1/θ² + 4k²/(1−θ)²) (k² for monotone queries); and the θ that minimises the measured
  curve, found by fitting A/θ² + B/(1−θ)² (the closed form's shape) to all grid points by weighted least squares,
  θ̂ = 1/(1 + ∛(B̂/Â)) with a delta-method interval, against θ* = `optimal_theta(k, monotone)`;
- measured only (no theory): the MSE ratio at k = 8 with 4k queries all at the threshold, over the queries that
  SVT selects. A gap is released only when it is ≥ 0, so conditioned on selection γ + T is biased upward, and
  its mean squared error is Var(γ) only when the gap's noise is symmetric (Laplace: E[X² | X ≥ 0] = E[X²]):
  Section 5.3's ratio assumes unconditional gaps.

Not reproduced: Figures 2(a)/3(a) use the BMS-POS and Kosarak datasets (not available here) with thresholds drawn
from the top 2k..8k counts, where many selected queries are near the threshold (see the last rows). No tolerance.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _claim import Estimate, Reproduction, Row, Verdict, error_bars, figure, main, save

from mechanisms import SVTWithGap
from mechanisms.gap_estimates import inverse_variance_combination, optimal_theta
from mechanisms.outputs import TOP
from mechanisms.svt_gap import Noise

EPS, T = 0.7, 100.0
"""The seed's total budget in Section 9; T is arbitrary."""
KS = (1, 2, 4, 8, 16, 24)
K_DETAIL = 8
"""The k of the variance rows, the θ sweep and the near-threshold rows."""
THETA_STEPS = tuple(2.0 ** (0.75 * j) for j in range(-2, 3))
FAR = 40.0
"""Queries at T + FAR standard deviations of the gap: released in every run but with probability < 1e-15."""


@dataclass(frozen=True)
class Variant:
    """One of Section 5.3's settings: the mechanism's options and the seed's printed formulas for it."""

    name: str
    monotone: bool
    noise: Noise
    cube: int
    """Section 5.3's allocation 1:∛(cube·k²): 4 in general, 1 for monotone queries."""
    gap_factor: int
    """The seed's Var(γᵢ) = gap_factor·(1+∛(cube·k²))³/ε²: 8 (Laplace), 4 (exponential)."""
    k2_factor: int
    """The seed's ratio (1+∛(cube·k²))³/((1+∛(cube·k²))³ + k2_factor·k²): 1 (Laplace), 2 (exponential)."""
    limit: float
    """The seed's limit of the ratio as k grows: 4/5, 1/2, 'close to a 66 % reduction'."""

    def mechanism(self, k: int, theta: float | None = None) -> SVTWithGap:
        theta = optimal_theta(k, self.monotone) if theta is None else theta
        return SVTWithGap(EPS / 2, k, theta, T, monotone=self.monotone, noise=self.noise)

    def allocation(self, k) -> float:
        return (1 + np.cbrt(self.cube * np.asarray(k, dtype=float) ** 2)) ** 3

    def seed_gap_variance(self, k: int) -> float:
        return float(self.gap_factor * self.allocation(k) / EPS ** 2)

    def seed_ratio(self, k):
        c = self.allocation(k)
        return c / (c + self.k2_factor * np.asarray(k, dtype=float) ** 2)


VARIANTS = (
    Variant("Laplace", False, Noise.LAPLACE, 4, 8, 1, 4 / 5),
    Variant("Laplace, monotone", True, Noise.LAPLACE, 1, 8, 1, 1 / 2),
    Variant("exponential, monotone", True, Noise.EXPONENTIAL, 1, 4, 2, 1 / 3),
)


def measurement_variance(k: int) -> float:
    """Var(αᵢ) of αᵢ = qᵢ + Lap(k/ε''), ε'' = ε/2."""
    return 2 * (k / (EPS / 2)) ** 2


def _far_queries(mechanism: SVTWithGap) -> np.ndarray:
    return np.full(mechanism.k, T + FAR * math.sqrt(mechanism.gap_variance()))


def _released_gaps(mechanism: SVTWithGap, q: np.ndarray, trials: int, rng: np.random.Generator) -> np.ndarray:
    stream = mechanism.m(q, trials, rng)
    assert np.all(stream.tags == TOP), "a query far above the threshold was not released"
    return stream.values


def _measures_rows(variant: Variant, k: int, trials: int, rng: np.random.Generator) -> list[Row]:
    mechanism = variant.mechanism(k)
    q = _far_queries(mechanism)
    gaps = _released_gaps(mechanism, q, trials, rng)
    alpha = q + rng.laplace(0.0, k / (EPS / 2), (trials, k))
    beta, _ = inverse_variance_combination(alpha, measurement_variance(k), gaps + T, mechanism.gap_variance())
    label = {"setting": variant.name, "k": k}
    rows = [Row({**label, "quantity": "MSE(beta)/MSE(alpha)"}, float(variant.seed_ratio(k)),
                Estimate.ratio_of_means(((beta - q) ** 2).sum(axis=1), ((alpha - q) ** 2).sum(axis=1)))]
    if k == K_DETAIL:
        rows.append(Row({**label, "quantity": "Var(gamma)"}, variant.seed_gap_variance(k),
                        Estimate.mean(((gaps + T - q) ** 2).mean(axis=1))))
        if variant is VARIANTS[0]:
            rows.append(Row({**label, "quantity": "Var(alpha)"}, 8 * k * k / EPS ** 2,
                            Estimate.mean(((alpha - q) ** 2).mean(axis=1))))
    return rows


def _near_threshold_row(variant: Variant, trials: int,
                        rng: np.random.Generator) -> tuple[Row, float, float]:
    """The MSE ratio over the queries SVT selects among 4k at the threshold; the mean of γ + T − q over them
    (the selection bias) and their mean (γ + T − q)² over Var(γ)."""
    k = K_DETAIL
    mechanism = variant.mechanism(k)
    q = np.full(4 * k, T)
    stream = mechanism.m(q, trials, rng)
    selected = stream.tags == TOP
    gaps = np.where(selected, stream.values, 0.0)
    alpha = q + rng.laplace(0.0, k / (EPS / 2), (trials, q.size))
    beta, _ = inverse_variance_combination(alpha, measurement_variance(k), gaps + T, mechanism.gap_variance())
    error_beta = np.where(selected, (beta - q) ** 2, 0.0).sum(axis=1)
    error_alpha = np.where(selected, (alpha - q) ** 2, 0.0).sum(axis=1)
    bias = float(gaps[selected].mean())
    inflation = float((gaps[selected] ** 2).mean() / mechanism.gap_variance())
    row = Row({"setting": f"{variant.name}, at T", "k": k, "quantity": "MSE(beta)/MSE(alpha) | selected"}, None,
              Estimate.ratio_of_means(error_beta, error_alpha))
    return row, bias, inflation


def closed_form_gap_variance(theta, k: int, monotone: bool) -> np.ndarray:
    """Section 5.1: Var(q̂ᵢ − T̃) = (2/ε'²)(1/θ² + 4k²/(1−θ)²) at SVT's budget ε' (k² for monotone queries)."""
    theta = np.asarray(theta, dtype=float)
    return 2 / (EPS / 2) ** 2 * (1 / theta ** 2 + (1 if monotone else 4) * k * k / (1 - theta) ** 2)


def _theta_rows(variant: Variant, trials: int, rng: np.random.Generator) -> list[Row]:
    k = K_DETAIL
    best = optimal_theta(k, variant.monotone)
    thetas = [best * step for step in THETA_STEPS]
    rows, means, errors = [], [], []
    for theta in thetas:
        mechanism = variant.mechanism(k, theta)
        q = _far_queries(mechanism)
        per_run = ((_released_gaps(mechanism, q, trials, rng) + T - q) ** 2).mean(axis=1)
        means.append(per_run.mean())
        errors.append(per_run.std(ddof=1) / math.sqrt(trials))
        rows.append(Row({"setting": variant.name, "k": k, "quantity": f"Var(gamma) at theta={theta:.3f}"},
                        float(closed_form_gap_variance(theta, k, variant.monotone)), Estimate.mean(per_run)))
    rows.append(Row({"setting": variant.name, "k": k, "quantity": "argmin_theta Var(gamma), fitted"}, best,
                    _fitted_argmin(np.array(thetas), np.array(means), np.array(errors), trials)))
    return rows


def _fitted_argmin(thetas: np.ndarray, means: np.ndarray, errors: np.ndarray, trials: int) -> Estimate:
    """The minimiser of Â/θ² + B̂/(1−θ)², (Â, B̂) the weighted least-squares fit to the measured variances
    (independent across θ), with the delta method's interval: θ = 1/(1 + r^{1/3}), r = B/A."""
    design = np.column_stack([1 / thetas ** 2, 1 / (1 - thetas) ** 2]) / errors[:, None]
    covariance = np.linalg.inv(design.T @ design)
    a, b = covariance @ design.T @ (means / errors)
    r = b / a
    theta = 1 / (1 + np.cbrt(r))
    d_theta_d_r = -np.cbrt(r) ** -2 / (3 * (1 + np.cbrt(r)) ** 2)
    gradient = d_theta_d_r * np.array([-b / a ** 2, 1 / a])
    return Estimate.normal(float(theta), math.sqrt(float(gradient @ covariance @ gradient)), trials * thetas.size)


def reproduce(trials: int, seed: int) -> Reproduction:
    streams = iter(np.random.SeedSequence(seed).spawn(len(VARIANTS) * (len(KS) + 2)))
    rows: list[Row] = []
    for variant in VARIANTS:
        for k in KS:
            rows += _measures_rows(variant, k, trials, np.random.default_rng(next(streams)))
    for variant in VARIANTS[:2]:
        rows += _theta_rows(variant, trials, np.random.default_rng(next(streams)))
    biases, inflations = [], []
    for variant in VARIANTS:
        row, bias, inflation = _near_threshold_row(variant, trials, np.random.default_rng(next(streams)))
        rows.append(row)
        biases.append(bias)
        inflations.append(inflation)
    # The seed's Var(γᵢ) is the mechanism's own variance at SVT's budget ε/2 (not ε): checked exactly here,
    # and measured in the Var(gamma) rows.
    for variant in VARIANTS:
        for k in KS:
            assert math.isclose(variant.mechanism(k).gap_variance(), variant.seed_gap_variance(k), rel_tol=1e-12)
    near = [row for row in rows if row.theory is None]
    far = [row for row in rows if row.label["k"] == K_DETAIL and row.label["quantity"] == "MSE(beta)/MSE(alpha)"]
    flat = [float(closed_form_gap_variance(optimal_theta(K_DETAIL, monotone) * step, K_DETAIL, monotone)
                  / closed_form_gap_variance(optimal_theta(K_DETAIL, monotone), K_DETAIL, monotone)) - 1
            for monotone in (False, True) for step in (THETA_STEPS[1], THETA_STEPS[3])]
    return Reproduction(
        name="svt_measures",
        source="Free Gap Section 5.3 'Improving accuracy', Section 5.1 'Choice of theta', Section 9.2 Fig. 2(a)/3(a)",
        claim="SVT with Gap on eps/2 plus Lap(k/(eps/2)) measurements: MSE(beta)/MSE(alpha) = C/(C + k^2), "
              "C = (1+cbrt(4k^2))^3 -> 4/5; monotone C = (1+cbrt(k^2))^3 -> 1/2; exponential C/(C + 2k^2) -> 1/3; "
              "theta = 1/(1+cbrt(4k^2)) (1/(1+cbrt(k^2)) monotone) minimises Var(gamma)",
        rows=rows,
        expected=Verdict.AGREES,
        findings=[
            "The three ratio formulas hold for queries far above the threshold at every k measured, and with them "
            "the limits 20 %, 50 % and 66 % MSE reduction: at k = 24 the seed's ratios are "
            + ", ".join(f"{float(v.seed_ratio(24)):.3f}" for v in VARIANTS) + " against limits 0.8, 0.5, 0.333.",
            "Section 5.3's Var(gamma_i) = 8(1+cbrt(4k^2))^3/eps^2 (8(1+cbrt(k^2))^3/eps^2 monotone, "
            "4(1+cbrt(k^2))^3/eps^2 exponential) and Var(alpha_i) = 8k^2/eps^2 are right with eps the total budget: "
            "they equal Section 5.1's minima 2(1+cbrt(.))^3/eps'^2 (1(...)^3/eps'^2 exponential) at SVT's own "
            "budget eps' = eps/2, and the measured variances at k = 8 agree; the ratio does not depend on the "
            "reading, since both variances scale as 1/eps^2.",
            "Section 5.1's theta: the measured gap variance follows (2/eps'^2)(1/theta^2 + 4k^2/(1-theta)^2) "
            "(k^2 monotone) across theta*/2.8 .. 2.8 theta*, and the fitted minimiser covers theta* = "
            f"{optimal_theta(K_DETAIL):.4f} (general) and {optimal_theta(K_DETAIL, True):.4f} (monotone) at k = 8. "
            f"The curve is flat near its minimum: {100 * min(flat):.0f}-{100 * max(flat):.0f} % above it at "
            f"theta*/{THETA_STEPS[3]:.2f} and {THETA_STEPS[3]:.2f} theta*.",
            "The exponential claim is for monotone queries (Exp(1/eps0), Exp(1/eps1) noise): with Algorithm 3's "
            "general noise Exp(2/eps1) Section 5.2's theta = 1/(1+cbrt(4k^2)) gives Var(gamma) = "
            "4(1+cbrt(4k^2))^3/eps^2 and the ratio tends to 2/3 (not measured; the seed does not state it).",
            "Queries at the threshold (measured only, k = 8, the queries SVT selects among 32): the ratio is "
            + ", ".join(f"{row.measured.value:.3f}" for row in near)
            + " (Laplace, monotone, exponential monotone) against "
            + ", ".join(f"{row.measured.value:.3f}" for row in far)
            + " far above T. A gap is released only when >= 0, so the released gap overestimates q - T by "
            + ", ".join(f"{b:.1f}" for b in biases)
            + " on average; its mean square is " + ", ".join(f"{x:.2f}" for x in inflations)
            + " x Var(gamma). With Laplace noise the gap's noise is symmetric, so its conditional second moment "
              "stays near Var(gamma) and the ratio near the seed's; with exponential noise the cut keeps the long "
              "right tail and the gain shrinks. The seed's Figures 2(a)/3(a) draw T from the top 2k..8k counts "
              "of real data, where selection near T happens; those datasets are not reproduced here.",
            "Trial count, disclosed because it was changed after a miss: a first default run of 500,000 runs "
            "(seed 0) missed two rows computed from the same samples, Var(gamma) for monotone Laplace at k = 8, "
            "2034 [2028, 2040] against 2041, and its ratio 0.6600 [0.6588, 0.6612] against 0.6614; the theta "
            "sweep's row at the same theta gave 2040 [2034, 2046], and 60 independent replicates of 500,000 runs "
            "pool to 2040.6 against 2040.8 (z = -0.6). A chance miss: the intervals were then 99 % per row, and a "
            "table of 34 such rows misses somewhere about 30 % of the time; the default was raised to 1,000,000 "
            "runs. The intervals are now simultaneous (99 % for the whole table), under which that run's rows are "
            "covered too.",
        ],
    )


def plot(result: Reproduction, path: Path) -> None:
    from matplotlib.ticker import NullFormatter

    fig, ax = figure(10.0, 3.8)
    fig.delaxes(ax)
    left, right = fig.subplots(1, 2)
    grid = np.linspace(1, max(KS), 200)
    for n, variant in enumerate(VARIANTS):
        color = f"C{n}"
        left.plot(grid, 100 * (1 - variant.seed_ratio(grid)), "-", color=color, lw=1,
                  label=f"{variant.name}: Section 5.3")
        left.axhline(100 * (1 - variant.limit), color=color, ls=":", lw=0.7)
        rows = [row for row in result.rows
                if row.label["setting"] == variant.name and row.label["quantity"] == "MSE(beta)/MSE(alpha)"]
        k = np.array([float(row.label["k"]) for row in rows])
        y = np.array([100 * (1 - row.measured.value) for row in rows])
        left.errorbar(k, y, yerr=error_bars(rows, 100)[::-1], fmt="o", ms=4, capsize=2, color=color)
        for row in result.rows:
            if row.label["setting"] == f"{variant.name}, at T":
                left.plot([float(row.label["k"]) + 0.7 * (n - 1)], [100 * (1 - row.measured.value)], "s",
                          mfc="none", color=color, ms=5)
    left.plot([], [], "ko", ms=4, label="measured, q far above T (simultaneous 99% CIs)")
    left.plot([], [], "ks", mfc="none", ms=5, label="measured, q at T (selected only)")
    left.set_xlabel("k")
    left.set_ylabel("MSE reduction (%)")
    left.set_title("SVT with Gap + measurements, eps = 0.7 (dotted: limits)", fontsize=9)
    left.set_ylim(0, 95)
    left.legend(fontsize=6.5, loc="upper left", ncol=2)

    for n, variant in enumerate(VARIANTS[:2]):
        color = f"C{n}"
        best = optimal_theta(K_DETAIL, variant.monotone)
        thetas = np.geomspace(best / 3.2, best * 3.2, 100)
        right.plot(thetas, closed_form_gap_variance(thetas, K_DETAIL, variant.monotone), "-", color=color, lw=1,
                   label=f"{variant.name}: Section 5.1")
        right.axvline(best, color=color, ls=":", lw=0.8)
        rows = [row for row in result.rows
                if row.label["setting"] == variant.name and str(row.label["quantity"]).startswith("Var(gamma) at")]
        x = np.array([float(str(row.label["quantity"]).split("=")[1]) for row in rows])
        y = np.array([row.measured.value for row in rows])
        right.errorbar(x, y, yerr=error_bars(rows), fmt="o", ms=4, capsize=2, color=color)
        fitted = next(row for row in result.rows
                      if row.label["setting"] == variant.name and "argmin" in str(row.label["quantity"]))
        low = float(closed_form_gap_variance(best, K_DETAIL, variant.monotone))
        fit = fitted.measured
        right.errorbar([fit.value], [low * 0.85], xerr=[[fit.value - fit.low], [fit.high - fit.value]],
                       fmt="v", ms=5, capsize=2, color=color)
    right.plot([], [], "k:", lw=0.8, label="theta* = optimal_theta")
    right.plot([], [], "kv", ms=5, label="fitted argmin (simultaneous 99% CI)")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xticks([0.05, 0.1, 0.2, 0.4], labels=["0.05", "0.1", "0.2", "0.4"])
    right.xaxis.set_minor_formatter(NullFormatter())
    right.set_xlabel("theta (threshold share of eps/2)")
    right.set_ylabel("E(gamma - (q - T))^2")
    right.set_title(f"Gap variance vs theta, k = {K_DETAIL}", fontsize=9)
    right.legend(fontsize=6.5)
    save(fig, path)


if __name__ == "__main__":
    raise SystemExit(main(reproduce, plot, __doc__, default_trials=1_000_000))
