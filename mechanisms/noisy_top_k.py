"""Noisy Top-K with Gap and the SVT/Noisy-Max hybrids: Free Gap (Ding et al.) Sections 6 and 7, vectorised.

Each class is one algorithm of the paper; its `m(q, n_samples, rng)` draws an (n_samples, n) noise matrix at
once, selects the largest noisy answers row by row (argpartition, then a sort of the few selected) and returns
an `IndexGapList`: indices (n_samples, k) and gaps (n_samples, k). Specs: specs/freegap/alg4_noisy_top_k_gap.dp
(also alg4_noisy_top_k_gap_counting.dp, the same mechanism), noisy_top_k_gap_exp.dp,
alg5_hybrid_identity.dp and alg6_hybrid_estimates.dp. Indices are 0-based like the specs'; in Algorithm 5,
index 0 is the threshold and index i ≥ 1 is query q[i − 1], as in the paper.

Ties among noisy values have probability 0 (continuous noise), so the order among equal values is left to numpy.
"""

from __future__ import annotations

import numpy as np

from ._params import generator, privacy_split, query_vector, require, sample_count
from .outputs import IndexGapList


def largest(noisy: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise indices and values of the `count` largest entries of an (n, m) array, in descending order
    (the paper's arg max_count)."""
    n, m = noisy.shape
    if count < m:
        chosen = np.argpartition(-noisy, count - 1, axis=1)[:, :count]
    else:
        chosen = np.broadcast_to(np.arange(m), (n, m))
    values = np.take_along_axis(noisy, chosen, axis=1)
    order = np.argsort(-values, axis=1)
    return np.take_along_axis(chosen, order, axis=1), np.take_along_axis(values, order, axis=1)


def _check_budget(eps: float, k: int) -> None:
    require(eps > 0, f"eps must be > 0, got {eps}")
    require(int(k) == k and k >= 1, f"k must be an integer >= 1, got {k}")


class NoisyTopKWithGap:
    """Noisy Top-K with Gap — Free Gap (Ding et al.), Section 6.1, Algorithm 4 (Laplace noise).

    Adds ηᵢ ~ Lap(2k/ε) to every query, releases the indices j₁, ..., j_k of the k largest noisy answers in
    descending order and the gaps gᵢ = q̃_{jᵢ} − q̃_{jᵢ₊₁} (g_k against the best unselected answer, so k < n).
    ε-DP for sensitivity-1 queries, ε/2-DP for counting queries (Theorem 6.1): the gaps are free.
    With k = 1 and the gap dropped it is Report Noisy Max.
    """

    def __init__(self, eps: float, k: int):
        _check_budget(eps, k)
        self.eps, self.k = eps, int(k)
        self.scale = 2 * self.k / eps

    def _noise(self, shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
        return rng.laplace(0.0, self.scale, shape)

    @property
    def noise_variance(self) -> float:
        """Var(ηᵢ): the λ·σ² of Theorem 6.2 when the measurements have variance σ²."""
        return 2 * self.scale ** 2

    def m(self, q, n_samples: int, rng: np.random.Generator) -> IndexGapList:
        q = query_vector(q)
        n, rng = sample_count(n_samples), generator(rng)
        require(self.k < q.size, f"Noisy Top-K with Gap needs k < len(q) (it compares with the (k+1)-th), "
                                 f"got k = {self.k}, len(q) = {q.size}")
        idx, values = largest(q + self._noise((n, q.size), rng), self.k + 1)
        return IndexGapList(idx[:, :self.k].astype(np.int64), values[:, :-1] - values[:, 1:])


class NoisyTopKWithGapExp(NoisyTopKWithGap):
    """Noisy Top-K with Gap with exponential noise — Free Gap (Ding et al.), Section 6.2.

    Algorithm 4 with line 2 changed to ηᵢ ~ Exp(2k/ε) (mean 2k/ε; no mean is subtracted, it cancels in
    every gap). The paper claims ε-DP (ε/2 for counting queries) through the alignment of Equations (4)/(5);
    specs/freegap/noisy_top_k_gap_exp.dp records why that alignment does not satisfy Lemma 1 (it is not
    acyclic), so the claim rests on the paper, not on a checked proof. Gaps have half the variance of the
    Laplace version (λ = 1/2 in Theorem 6.2 for counting queries).
    """

    def _noise(self, shape, rng):
        return rng.exponential(self.scale, shape)

    @property
    def noise_variance(self) -> float:
        return self.scale ** 2


class HybridPrioritizingIdentity:
    """Hybrid Prioritizing Identity — Free Gap (Ding et al.), Section 7, Algorithm 5.

    The threshold becomes query 0: q̃₀ = T + η₀ and q̃ᵢ = qᵢ + ηᵢ, all with ηᵢ ~ Exp(2k/ε). Takes the k
    largest of the n + 1 noisy values in descending order with their gaps to the next one (from the k + 1
    largest, so k ≤ n) and releases the pairs up to and including the threshold's, if it is among them.
    Claimed cost (t/k)·ε for t released pairs (Lemma 7); its alignment is that of Section 6.2, see
    specs/freegap/alg5_hybrid_identity.dp for why Lemma 1 does not apply to it.
    Indices: 0 is the threshold, i ≥ 1 is query q[i − 1].
    """

    def __init__(self, eps: float, k: int, T: float):
        _check_budget(eps, k)
        self.eps, self.k, self.T = eps, int(k), T
        self.scale = 2 * self.k / eps

    def m(self, q, n_samples: int, rng: np.random.Generator) -> IndexGapList:
        q = query_vector(q)
        n, rng = sample_count(n_samples), generator(rng)
        require(self.k <= q.size, f"Hybrid Prioritizing Identity needs k <= len(q), got k = {self.k}, "
                                  f"len(q) = {q.size}")
        values = np.concatenate(([self.T], q))
        idx, noisy = largest(values + rng.exponential(self.scale, (n, values.size)), self.k + 1)
        idx, gaps = idx[:, :self.k], noisy[:, :-1] - noisy[:, 1:]
        is_threshold = idx == 0
        # Lines 6-8: the loop breaks right after outputting the threshold's pair.
        released = (np.cumsum(is_threshold, axis=1) - is_threshold) == 0
        return IndexGapList(np.where(released, idx, -1).astype(np.int64), np.where(released, gaps, np.nan))

    def privacy_cost(self, out: IndexGapList) -> np.ndarray:
        """(n,) the claimed cost of each sample, (t/k)·ε (Lemma 7)."""
        return out.lengths / self.k * self.eps


class HybridPrioritizingEstimates:
    """Hybrid Prioritizing Estimates — Free Gap (Ding et al.), Section 7, Algorithm 6.

    SVT with Gap (exponential noise, means subtracted) over the queries sorted by noisy answer:
    T̃ = T + η − b₀ with η ~ Exp(1/ε₀), q̃ᵢ = qᵢ + ηᵢ − b₁ with ηᵢ ~ Exp(2/ε₁), ε₀ = θε, ε₁ = (1−θ)ε/k,
    b₀ = 1/ε₀, b₁ = 2/ε₁. Walks the k largest q̃ in descending order and releases (jᵢ, q̃_{jᵢ} − T̃) while
    q̃_{jᵢ} ≥ T̃. Cost ε₀ + t·ε₁ = (θ + (t/k)(1 − θ))·ε for t released pairs (Lemma 8), by SVT with Gap's
    alignment. Spec: specs/freegap/alg6_hybrid_estimates.dp.
    """

    def __init__(self, eps: float, k: int, theta: float, T: float):
        privacy_split(eps, k, theta)
        self.eps, self.k, self.theta, self.T = eps, int(k), theta, T
        self.eps0 = theta * eps
        self.eps1 = (1 - theta) * eps / k
        self.b0, self.b1 = 1 / self.eps0, 2 / self.eps1

    def m(self, q, n_samples: int, rng: np.random.Generator) -> IndexGapList:
        q = query_vector(q)
        n, rng = sample_count(n_samples), generator(rng)
        require(self.k <= q.size, f"Hybrid Prioritizing Estimates needs k <= len(q), got k = {self.k}, "
                                  f"len(q) = {q.size}")
        noisy_threshold = self.T + rng.exponential(1 / self.eps0, n) - self.b0
        noisy = q + rng.exponential(2 / self.eps1, (n, q.size)) - self.b1
        idx, values = largest(noisy, self.k)
        gaps = values - noisy_threshold[:, None]
        # Lines 9-11 stop at the first answer below the threshold; the values descend, so this is a prefix.
        released = np.cumprod(gaps >= 0, axis=1).astype(bool)
        return IndexGapList(np.where(released, idx, -1).astype(np.int64), np.where(released, gaps, np.nan))

    def privacy_cost(self, out: IndexGapList) -> np.ndarray:
        """(n,) the cost of each sample, ε₀ + t·ε₁ (Lemma 8)."""
        return self.eps0 + out.lengths * self.eps1


__all__ = [
    "HybridPrioritizingEstimates",
    "HybridPrioritizingIdentity",
    "NoisyTopKWithGap",
    "NoisyTopKWithGapExp",
    "largest",
]
