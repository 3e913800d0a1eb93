"""Exponential Mechanism with Gap: Free Gap (Ding et al.) Section 8, Algorithms 7 and 8, vectorised over samples.

Both classes release, for utilities u = (μ(D, ω₁), ..., μ(D, ωₙ)) of sensitivity Δμ, one pair (s, γ): the
index of an outcome drawn by the exponential mechanism (P(s) ∝ exp(ε·u_s / 2Δμ), Theorem 8.1) and a free gap
γ ≥ 0. `m(u, n_samples, rng)` returns an `IndexGapList` with one column (indices (n, 1), gaps (n, 1)), the
shape of specs/freegap/alg7_gumbel_exp_mech_gap.dp's `output pairs[0]`. Indices are 0-based like the spec's.

- `NaiveExpMechWithGap` — Algorithm 7, the Gumbel-max trick (Theorem 8.2): the gap is x_s − x_t between the
  largest and second-largest of xᵢ = ε·uᵢ/2Δμ + Gumbel(0).
- `BlackBoxExpMechWithGap` — Algorithm 8: s from the exponential mechanism as a black box, then a logistic
  variable redrawn until it is positive. `as_printed=True` runs line 4 as the seed prints it, without ε.

The law of the output (Theorem 8.3, proof in Appendix A.4). Write μᵢ = ε·uᵢ/2Δμ, μ*_s = ln Σ_{i≠s} e^{μᵢ}
and δ_s = μ_s − μ*_s. Then P(s) = σ(δ_s) (σ the logistic function; e^{μ_s}/(e^{μ_s} + e^{μ*_s}) is the
softmax), and given s the gap is Logistic(δ_s, 1) conditioned on being ≥ 0: the proof's
P(s chosen, gap ≥ γ) = σ(δ_s − γ). Hence, by our integration of these (not printed in the seed):

    P(γ > g | s) = σ(δ_s − g)/σ(δ_s),   E[γ | s] = softplus(δ_s)/σ(δ_s),
    P(γ > g)     = Σ_s σ(δ_s − g),       E[γ]     = Σ_s softplus(δ_s),     softplus(x) = ln(1 + eˣ).

The misprint in Algorithm 8. Line 4 of the seed reads
x ← Logistic(μ(D, ω)/2Δμ − ln Σ_{ω′≠ω} exp(μ(D, ω′)/2Δμ)): the factor ε of Algorithm 7 line 3, of Theorem 8.3's
location (ε·μ(D, ω_s)/2Δμ − ln Σ exp(ε·μ(D, ω)/2Δμ)) and of the proof's μᵢ is missing. The two coincide at
ε = 1 only; otherwise the printed algorithm's gap does not have Algorithm 7's distribution
(bench/papers/exp_mech_gap.py measures it). The winner (line 2, ExpMech(D, μ, ε)) carries ε in both readings.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ._params import generator, query_vector, require, sample_count
from .outputs import IndexGapList


def truncated_logistic_mean(location) -> np.ndarray:
    """E[X | X ≥ 0] for X ~ Logistic(location, 1): softplus(location)/σ(location) (∫₀^∞ σ(location − g) dg over
    P(X ≥ 0) = σ(location)); the mean gap given the winner in Theorem 8.3, and Algorithm 8's lines 3–6 for any
    location."""
    location = np.asarray(location, dtype=float)
    return np.logaddexp(0.0, location) / special.expit(location)


class _ExpMechWithGap:
    """What Algorithms 7 and 8 share: the parameters and the closed-form law of the output (Theorem 8.3)."""

    def __init__(self, eps: float, du: float):
        require(eps > 0, f"eps must be > 0, got {eps}")
        require(du > 0, f"du (the utility's sensitivity) must be > 0, got {du}")
        self.eps, self.du = eps, du

    @staticmethod
    def _utilities(u) -> np.ndarray:
        u = query_vector(u)
        require(u.size >= 2, f"the Exponential Mechanism with Gap needs at least two outcomes, got {u.size}")
        return u

    def scores(self, u) -> np.ndarray:
        """μᵢ = ε·uᵢ/2Δμ (Appendix A.4), the logits of the exponential mechanism."""
        return self.eps * self._utilities(u) / (2 * self.du)

    def winner_probabilities(self, u) -> np.ndarray:
        """P(s = i) = exp(μᵢ)/Σⱼ exp(μⱼ) — Theorem 8.1 (and Theorem 8.2, part 1, for the Gumbel-max trick)."""
        return special.softmax(self.scores(u))

    @staticmethod
    def _location(mu: np.ndarray) -> np.ndarray:
        # μ_s − ln Σ_{i≠s} e^{μᵢ} for every s at once: row s of the matrix masks its own entry.
        others = np.where(np.eye(mu.size, dtype=bool), -np.inf, mu[None, :])
        return mu - special.logsumexp(others, axis=1)

    def gap_location(self, u) -> np.ndarray:
        """δ_s = μ_s − ln Σ_{i≠s} e^{μᵢ} for each s: the location of the gap's logistic law given winner s
        (Theorem 8.3). σ(δ_s) is also P(s) (Appendix A.4)."""
        return self._location(self.scores(u))

    def gap_survival(self, g, u, winner: int | None = None) -> np.ndarray:
        """P(γ > g), or P(γ > g | s = winner): Σ_s σ(δ_s − g), resp. σ(δ_s − g)/σ(δ_s), for g ≥ 0 (1 below 0).
        From the proof of Theorem 8.3, P(s chosen, gap ≥ g) = σ(δ_s − g)."""
        g = np.asarray(g, dtype=float)
        delta = self.gap_location(u)
        if winner is None:
            tail = special.expit(delta[:, None] - np.ravel(g)[None, :]).sum(axis=0).reshape(g.shape)
        else:
            tail = special.expit(delta[winner] - g) / special.expit(delta[winner])
        return np.where(g < 0, 1.0, np.minimum(tail, 1.0))

    def gap_cdf(self, g, u, winner: int | None = None) -> np.ndarray:
        """P(γ ≤ g), or P(γ ≤ g | s = winner): 1 − `gap_survival`."""
        return 1.0 - self.gap_survival(g, u, winner)

    def gap_mean(self, u, winner: int | None = None) -> float:
        """E[γ] = Σ_s softplus(δ_s), or E[γ | s] = softplus(δ_s)/σ(δ_s) (the survival function integrated)."""
        delta = self.gap_location(u)
        if winner is None:
            return float(np.logaddexp(0.0, delta).sum())
        return float(truncated_logistic_mean(delta[winner]))


class NaiveExpMechWithGap(_ExpMechWithGap):
    """Naive Exp. Mech. with Gap — Free Gap (Ding et al.), Section 8.2, Algorithm 7 (the Gumbel-max trick).

    Lines 2–3: xᵢ = ε·μ(D, ωᵢ)/2Δμ + Gumbel(0) (numpy's `gumbel`, density exp(−x − e^{−x})); line 4: s, t are
    the indices of the largest and second-largest xᵢ; line 5: release ω_s and x_s − x_t. ε-DP (Theorem 8.3).
    Spec: specs/freegap/alg7_gumbel_exp_mech_gap.dp. Ties have probability 0.
    """

    def m(self, u, n_samples: int, rng: np.random.Generator) -> IndexGapList:
        mu = self.scores(u)
        n, rng = sample_count(n_samples), generator(rng)
        x = mu + rng.gumbel(0.0, 1.0, (n, mu.size))
        top2 = np.argpartition(-x, 1, axis=1)[:, :2]
        values = np.take_along_axis(x, top2, axis=1)
        first = np.argmax(values, axis=1)
        s = top2[np.arange(n), first]
        gap = np.abs(values[:, 0] - values[:, 1])
        return IndexGapList(s[:, None].astype(np.int64), gap[:, None])


class BlackBoxExpMechWithGap(_ExpMechWithGap):
    """Black-box Exp. Mech. with Gap — Free Gap (Ding et al.), Section 8.2, Algorithm 8.

    Line 2: ω ← ExpMech(D, μ, ε), here categorical sampling of P(s) ∝ exp(ε·u_s/2Δμ) by the inverse CDF (any
    exact sampler would do: the algorithm treats it as a black box). Lines 3–6: x ← Logistic(location, 1),
    redrawn until x > 0, vectorised as a loop that redraws only the rejected samples. Line 7: release (ω, x).

    The location is Theorem 8.3's δ_s = ε·u_s/2Δμ − ln Σ_{i≠s} exp(ε·uᵢ/2Δμ); then the output has Algorithm
    7's distribution. With `as_printed=True` it is line 4 as printed in the seed, u_s/2Δμ − ln Σ_{i≠s}
    exp(uᵢ/2Δμ), without ε (a misprint: see the module docstring); kept to measure the misprint's effect.

    Cost: the loop accepts with probability σ(location), so it draws 1/σ(δ_s) logistic variables on average
    given s, and n (the number of outcomes) on average over s, since P(s) = σ(δ_s).
    """

    def __init__(self, eps: float, du: float, as_printed: bool = False):
        super().__init__(eps, du)
        self.as_printed = as_printed

    def logistic_location(self, u) -> np.ndarray:
        """Line 4's location for each possible winner s (δ_s, or the printed ε-free version)."""
        if self.as_printed:
            return self._location(self._utilities(u) / (2 * self.du))
        return self.gap_location(u)

    def m(self, u, n_samples: int, rng: np.random.Generator) -> IndexGapList:
        p = self.winner_probabilities(u)
        location = self.logistic_location(u)
        n, rng = sample_count(n_samples), generator(rng)
        cumulative = np.cumsum(p)
        s = np.minimum(np.searchsorted(cumulative, rng.random(n) * cumulative[-1], side="right"), p.size - 1)
        loc = location[s]
        x = rng.logistic(loc, 1.0)
        pending = np.flatnonzero(~(x > 0))
        while pending.size:
            x[pending] = rng.logistic(loc[pending], 1.0)
            pending = pending[~(x[pending] > 0)]
        return IndexGapList(s[:, None].astype(np.int64), x[:, None])


__all__ = ["BlackBoxExpMechWithGap", "NaiveExpMechWithGap", "truncated_logistic_mean"]
