"""Post-processing of the free gaps: Free Gap (Ding et al.) Sections 5.3 and 6.3.

- Lemma 3: the lower tail of ηᵢ − η (the noise of an SVT gap) and the lower confidence bound on qᵢ(D) that it
  gives; the quantile is found with scipy.optimize.brentq.
- Section 5.3: the inverse-variance combination of a gap estimate γᵢ + T with an independent measurement αᵢ,
  and the budget split θ that minimises the gap's variance.
- Theorem 6.2: the best linear unbiased estimate (BLUE) of the top-k query answers from k measurements and the
  k − 1 free gaps of Noisy Top-K with Gap, by the paper's linear-time algorithm; `blue_matrices` gives the
  theorem's X and Y, and Corollary 1's variance ratio is `blue_variance_ratio`; `blue_error` is the estimator's
  mean squared error for any mean and covariance of the gaps' noise (Corollary 1 is its special case).

Post-processing costs no privacy: everything here reads only released outputs and public parameters.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

from ._params import require


def _expm1_ratio(x: np.ndarray) -> np.ndarray:
    """(e^x − 1)/x, equal to 1 at x = 0, without cancellation near 0."""
    x = np.asarray(x, dtype=float)
    safe = np.where(x == 0, 1.0, x)
    return np.where(x == 0, 1.0, np.expm1(safe) / safe)


def laplace_gap_lower_tail(t, eps0: float, eps_star: float) -> np.ndarray:
    """P(ηᵢ − η < −t) for t ≥ 0, with η ~ Lap(1/ε₀) and ηᵢ ~ Lap(1/ε*) independent (Lemma 3 is 1 − this).

    Lemma 3 prints (ε₀²e^{−ε*t} − ε*²e^{−ε₀t}) / (2(ε₀² − ε*²)) and a separate formula for ε₀ = ε*; both are
    computed here as e^{−ε₀t}/2 + ε₀²·t·e^{−ε₀t}·(e^{dt} − 1)/(dt) / (2(ε₀ + ε*)) with d = ε₀ − ε*, which is
    the same function without the cancellation near ε₀ = ε* (at d = 0 it is Lemma 3's second case).
    """
    require(eps0 > 0 and eps_star > 0, "the rates eps0 and eps_star must be > 0")
    t = np.asarray(t, dtype=float)
    require(bool(np.all(t >= 0)), "Lemma 3 is stated for t >= 0")
    d = eps0 - eps_star
    with np.errstate(over="ignore", invalid="ignore"):
        # For |d·t| ≥ 1 the direct difference is accurate and cannot overflow; below, the expm1 form (the form
        # not chosen may overflow to inf·0 = nan far out, which np.where discards).
        direct = eps0 ** 2 * (np.exp(-eps_star * t) - np.exp(-eps0 * t)) / (d if d != 0 else 1.0)
        stable = eps0 ** 2 * t * np.exp(-eps0 * t) * _expm1_ratio(d * t)
    middle = np.where(np.abs(d * t) >= 1, direct, stable)
    return np.exp(-eps0 * t) / 2 + middle / (2 * (eps0 + eps_star))


def laplace_gap_tail(t, eps0: float, eps_star: float) -> np.ndarray:
    """Lemma 3: P(ηᵢ − η ≥ −t) for t ≥ 0 (η ~ Lap(1/ε₀), ηᵢ ~ Lap(1/ε*))."""
    return 1 - laplace_gap_lower_tail(t, eps0, eps_star)


def laplace_gap_cdf(z, eps0: float, eps_star: float) -> np.ndarray:
    """P(ηᵢ − η ≤ z) for every real z (the difference is symmetric, so Lemma 3 gives both sides)."""
    z = np.asarray(z, dtype=float)
    lower = laplace_gap_lower_tail(np.abs(z), eps0, eps_star)
    return np.where(z < 0, lower, 1 - lower)


def laplace_gap_quantile(confidence: float, eps0: float, eps_star: float) -> float:
    """The t ≥ 0 with P(ηᵢ − η ≥ −t) = confidence (Section 5.3's t_.95 for confidence = 0.95)."""
    require(0.5 <= confidence < 1, f"the confidence must lie in [0.5, 1) (Lemma 3 gives 1/2 at t = 0), "
                                   f"got {confidence}")
    if confidence == 0.5:
        return 0.0
    miss = 1 - confidence
    hi = 1 / min(eps0, eps_star)
    while laplace_gap_lower_tail(hi, eps0, eps_star) > miss:
        hi *= 2
    # Solve on the lower tail, not on 1 − tail, so that confidences near 1 keep their digits.
    return optimize.brentq(lambda t: float(laplace_gap_lower_tail(t, eps0, eps_star)) - miss, 0.0, hi,
                           xtol=1e-12, rtol=1e-12)


def gap_lower_confidence_bound(gap, T: float, eps0: float, eps_star: float, confidence: float = 0.95):
    """Section 5.3: a lower confidence bound on qᵢ(D) from a released SVT gap γᵢ, namely T + γᵢ − t_c.

    P(qᵢ(D) ≥ T + γᵢ − t_c) = confidence over the mechanism's noise, because γᵢ − (qᵢ − T) = ηᵢ − η.
    Pass the rates of the algorithm's own noise: for Algorithm 2 the query noise is Lap(2/ε₁), so
    ε* = ε₁/2 (`SVTWithGap.gap_noise_rates()`); reading Section 5.3's "ε* is ε₁ or ε₂" literally would
    halve the query noise and the bound would cover less often than claimed.
    The statement is unconditional: it ignores that only gaps of ⊤ queries are released, which matters only
    for queries near the threshold.
    """
    return T + np.asarray(gap, dtype=float) - laplace_gap_quantile(confidence, eps0, eps_star)


def inverse_variance_combination(alpha, var_alpha: float, estimate, var_estimate: float):
    """Section 5.3: βᵢ = (αᵢ/Var(αᵢ) + (γᵢ + T)/Var(γᵢ)) / (1/Var(αᵢ) + 1/Var(γᵢ)).

    `alpha` is an independent noisy measurement of qᵢ and `estimate` the gap estimate γᵢ + T. Returns
    (β, Var(β)) with Var(β) = Var(α)Var(γ)/(Var(α) + Var(γ)) < Var(α).
    """
    require(var_alpha > 0 and var_estimate > 0, "variances must be > 0")
    w_alpha, w_estimate = 1 / var_alpha, 1 / var_estimate
    beta = (np.asarray(alpha) * w_alpha + np.asarray(estimate) * w_estimate) / (w_alpha + w_estimate)
    return beta, 1 / (w_alpha + w_estimate)


def optimal_theta(k: int, monotone: bool = False) -> float:
    """Section 5.1, "Choice of θ": the split ε₀ = θε minimising the variance of SVT with Gap's gaps,
    θ = 1/(1 + ∛(4k²)), or 1/(1 + ∛(k²)) for monotone queries (Lap(1/ε₁) query noise)."""
    require(int(k) == k and k >= 1, f"k must be an integer >= 1, got {k}")
    return 1 / (1 + np.cbrt((1 if monotone else 4) * k * k))


def blue_matrices(k: int, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Theorem 6.2's X (k×k) and Y (k×(k−1)): the BLUE is β = (Xα + Yg) / ((1 + λ)k).

    X has 1 + λk on the diagonal and 1 elsewhere; row i of Y is (k−1, k−2, ..., 1) minus k in the
    columns j < i (1-based).
    """
    require(int(k) == k and k >= 1, f"k must be an integer >= 1, got {k}")
    X = np.ones((k, k)) + lam * k * np.eye(k)
    Y = np.tile(np.arange(k - 1, 0, -1, dtype=float), (k, 1)) - k * np.tril(np.ones((k, k - 1)), -1)
    return X, Y


def noisy_top_k_blue(alpha, gaps, lam: float) -> np.ndarray:
    """Theorem 6.2: the BLUE of the selected answers q₁, ..., q_k by the paper's linear-time algorithm.

    alpha: (..., k) independent measurements αᵢ = qᵢ + ξᵢ of the selected queries, in the order of selection;
    gaps: (..., k − 1) the free gaps gᵢ = q̃_{jᵢ} − q̃_{jᵢ₊₁} between them (the first k − 1 gaps of Noisy Top-K
    with Gap: drop the last one, which is against an unselected query); lam: λ = Var(ηᵢ)/Var(ξᵢ).
    For example the measurements Lap(2k/ε) and the top-k noise Lap(4k/ε) of Section 6.3 give λ = 4, counting
    queries (Lap(2k/ε)) λ = 1, exponential noise Exp(2k/ε) λ = 1/2.

    1. α = Σ αᵢ and p = Σᵢ (k − i)gᵢ;  2. prefix sums p₀ = 0, pᵢ = pᵢ₋₁ + gᵢ;
    3. βᵢ = (α + λkαᵢ + p − k·pᵢ₋₁) / ((1 + λ)k).
    """
    alpha = np.asarray(alpha, dtype=float)
    gaps = np.asarray(gaps, dtype=float)
    k = alpha.shape[-1]
    require(gaps.shape[-1] == k - 1, f"k measurements need k - 1 gaps, got {k} and {gaps.shape[-1]}")
    require(lam > 0, f"lambda must be > 0, got {lam}")
    total = alpha.sum(axis=-1, keepdims=True)
    p = (gaps * np.arange(k - 1, 0, -1)).sum(axis=-1, keepdims=True)
    prefix = np.concatenate([np.zeros(gaps.shape[:-1] + (1,)), np.cumsum(gaps, axis=-1)], axis=-1)
    return (total + lam * k * alpha + p - k * prefix) / ((1 + lam) * k)


def blue_variance_ratio(k: int, lam: float) -> float:
    """Corollary 1: E|βᵢ − qᵢ|² / E|αᵢ − qᵢ|² = (1 + λk)/(k + λk)."""
    return (1 + lam * k) / (k + lam * k)


def blue_error(k: int, lam: float, measurement_variance: float, gap_noise_mean, gap_noise_cov) -> np.ndarray:
    """(k,) E|βᵢ − qᵢ|² of Theorem 6.2's β when the gap noise e = g − Nq (eᵢ = gᵢ − (qᵢ − qᵢ₊₁)) has mean
    `gap_noise_mean` ((k − 1,)) and covariance `gap_noise_cov` ((k − 1, k − 1)), independent of the
    measurement noise ξ (i.i.d., mean 0, variance σ² = `measurement_variance`).

    β − q = (Xξ + Ye)/((1 + λ)k), so E|βᵢ − qᵢ|² = (σ²‖Xᵢ‖² + YᵢCYᵢᵀ + (Yᵢm)²)/((1 + λ)k)².
    With the model of Theorem 6.2 (e = Nη, η i.i.d. with variance λσ²: m = 0, C = λσ²NNᵀ) every entry is
    Corollary 1's (1 + λk)/(k + λk)·σ². That model ignores that the selection and the order of the k queries
    depend on η; other (m, C) describe the gaps Noisy Top-K with Gap releases when it does, e.g. for tied
    queries, whose gaps are spacings of order statistics (positive: m ≠ 0, β is then biased).
    """
    require(int(k) == k and k >= 1, f"k must be an integer >= 1, got {k}")
    require(measurement_variance > 0, "the measurement variance must be > 0")
    m = np.asarray(gap_noise_mean, dtype=float).reshape(k - 1)
    C = np.asarray(gap_noise_cov, dtype=float).reshape(k - 1, k - 1)
    X, Y = blue_matrices(k, lam)
    spread = measurement_variance * (X ** 2).sum(axis=1) + np.einsum("ij,jl,il->i", Y, C, Y)
    return (spread + (Y @ m) ** 2) / ((1 + lam) * k) ** 2


__all__ = [
    "blue_error",
    "blue_matrices",
    "blue_variance_ratio",
    "gap_lower_confidence_bound",
    "inverse_variance_combination",
    "laplace_gap_cdf",
    "laplace_gap_lower_tail",
    "laplace_gap_quantile",
    "laplace_gap_tail",
    "noisy_top_k_blue",
    "optimal_theta",
]
