"""Sparse Vector with Gap: Free Gap (Ding et al.) Section 5, Algorithms 1, 2 and 3, vectorised over samples.

Each class is one algorithm of the paper; its `m(q, n_samples, rng)` runs the mechanism n_samples times on the
query answers q = (q₁(D), ..., q_m(D)) and returns a `TaggedStream` (tags and gaps, shape (n_samples, m)).
The corresponding specs are specs/freegap/alg2_svt_gap.dp, alg1_adaptive_svt_gap.dp,
alg1_adaptive_svt_gap_monotone.dp, alg3_adaptive_svt_gap_exp.dp and alg3_adaptive_svt_gap_geo.dp; the
implementations have the same output distribution (same noise parameterisations, branch order and tags).

Vectorisation: a loop over queries only. `active` holds the indices of the samples that have not halted yet
(the paper's `break` is a sample leaving `active`), so halted samples draw no more noise; each branch is a
boolean mask over the active samples.

The stopping rule. Line 12 of Algorithm 2 (line 17 of Algorithms 1 and 3) breaks when cost > ε − ε₁. The
mechanisms evaluate this test exactly, by counting answers: with cost = ε₀ + t·ε₁ it is t ≥ k, and with
cost = ε₀ + t₂·ε₂ + t₁·ε₁ (ε₂ = ε₁/2) it is t₂ + 2·t₁ > 2(k − 1). Evaluating the sums in floating point,
as the pseudocode reads, is wrong for many ordinary parameters: for ε = 1, θ = 0.2, k = 1 the float
ε₀ = 0.2 exceeds the float ε − ε₁ = 1 − 0.8, so the loop halts after the first query whatever it answered;
for ε = 1, θ = 0.5, k = 6 it halts after 5 ⊤ instead of 6.
"""

from __future__ import annotations

import enum
import math
from typing import ClassVar

import numpy as np

from ._params import generator, privacy_split, query_vector, require, sample_count
from .outputs import BOT, TOP, TOP1, TOP2, TaggedStream, empty_stream


class Noise(enum.Enum):
    """The noise of `SVTWithGap`: Laplace (Algorithm 2), or exponential with its mean subtracted (Algorithm 3's)."""

    LAPLACE = "laplace"
    EXPONENTIAL = "exponential"


class SVTWithGap:
    """SVT with Gap — Free Gap (Ding et al.), Section 5.1, Algorithm 2 (after Wang et al., ShadowDP).

    ε₀ = θε is spent on the threshold noise η ~ Lap(1/ε₀), ε₁ = (1−θ)ε/k on each above-threshold query
    (noise ηᵢ ~ Lap(2/ε₁)). A query whose noisy answer reaches the noisy threshold is output as ⊤ with the
    noisy gap q̃ᵢ − T̃ (free, Theorem 5.1); otherwise ⊥. It halts after k ⊤. ε-DP for sensitivity-1
    queries (Lemma 2 and Theorem 5.1 with the top branch removed). Spec: specs/freegap/alg2_svt_gap.dp.

    Algorithm 2 is Algorithm 1 with σ = ∞ (Section 5.1), so the options of Algorithms 1 and 3 carry over, as
    Sections 5.3 and 9.2 use them ("SVT with Gap" with monotone queries and with exponential noise):

    - `monotone=True`: query noise Lap(1/ε₁) (footnote 5); ε-DP only for monotone queries.
    - `noise=Noise.EXPONENTIAL`: Exp(1/ε₀) threshold noise and Exp(2/ε₁) query noise (Exp(1/ε₁) when monotone),
      each with its mean subtracted (Algorithm 3, line 3); ε-DP by Section 5.2's argument (the alignment's
      shifts are ≥ 0). Its gaps have half the variance of the Laplace version's.

    These two options have no spec; the defaults are the spec's mechanism.

    Tags: `BOT` and `TOP` (payload: the gap), `NOT_REACHED` after the halt.
    """

    TAG_NAMES: ClassVar[dict[int, str]] = {BOT: "BOT", TOP: "TOP"}

    def __init__(self, eps: float, k: int, theta: float, T: float, *, monotone: bool = False,
                 noise: Noise = Noise.LAPLACE):
        privacy_split(eps, k, theta)
        require(isinstance(noise, Noise), f"noise must be a Noise, got {noise!r}")
        self.eps, self.k, self.theta, self.T = eps, int(k), theta, T
        self.monotone, self.noise = monotone, noise
        self.eps0 = theta * eps
        self.eps1 = (1 - theta) * eps / k
        self.query_scale = (1 if monotone else 2) / self.eps1

    def _noise(self, scale: float, size: int, rng: np.random.Generator) -> np.ndarray:
        if self.noise is Noise.LAPLACE:
            return rng.laplace(0.0, scale, size)
        return rng.exponential(scale, size) - scale

    def m(self, q, n_samples: int, rng: np.random.Generator) -> TaggedStream:
        q = query_vector(q)
        n, rng = sample_count(n_samples), generator(rng)
        tags, gaps = empty_stream(n, q.size)
        noisy_threshold = self.T + self._noise(1 / self.eps0, n, rng)
        tops = np.zeros(n, dtype=np.int64)
        active = np.arange(n)
        for i in range(q.size):
            if active.size == 0:
                break
            gap = q[i] + self._noise(self.query_scale, active.size, rng) - noisy_threshold[active]
            top = gap >= 0
            tags[active, i] = np.where(top, TOP, BOT)
            gaps[active[top], i] = gap[top]
            tops[active] += top
            active = active[tops[active] < self.k]  # cost > ε − ε₁  ⟺  t ≥ k (see the module docstring)
        return TaggedStream(tags, gaps, self.TAG_NAMES, frozenset({TOP}))

    def gap_noise_rates(self) -> tuple[float, float]:
        """(ε₀, ε*) of Lemma 3 for a released gap: the gap's noise is ηᵢ − η with η ~ Lap(1/ε₀) and
        ηᵢ ~ Lap(1/ε*); here ηᵢ ~ Lap(2/ε₁), so ε* = ε₁/2 (not ε₁: Section 5.3 names the scale 1/ε*);
        ε* = ε₁ when monotone. Lemma 3 is about Laplace noise only."""
        require(self.noise is Noise.LAPLACE, "Lemma 3's rates describe Laplace noise only")
        return self.eps0, self.eps1 / (1 if self.monotone else 2)

    def gap_variance(self) -> float:
        """Var(ηᵢ − η), the variance of a released gap minus qᵢ − T (Sections 5.1 and 5.3):
        2/ε₀² + 8/ε₁² (Laplace), 2/ε₀² + 2/ε₁² (Laplace, monotone); an Exp(β) variable has variance β², so
        1/ε₀² + 4/ε₁² and 1/ε₀² + 1/ε₁² with exponential noise (Section 5.2, "Choice of θ")."""
        if self.noise is Noise.LAPLACE:
            return 2 / self.eps0 ** 2 + (2 if self.monotone else 8) / self.eps1 ** 2
        return 1 / self.eps0 ** 2 + (1 if self.monotone else 4) / self.eps1 ** 2


class _AdaptiveSVTWithGap:
    """The loop of Algorithms 1 and 3; subclasses choose the noise (Laplace, exponential, geometric).

    Lines 6-7: both query noises ξᵢ (top branch) and ηᵢ (middle branch) are drawn in every iteration, before
    the branch. Line 9: the top branch needs q̃ᵢ − T̃ ≥ 2σ; line 12: the middle branch q̂ᵢ − T̃ ≥ 0.
    """

    TAG_NAMES: ClassVar[dict[int, str]] = {BOT: "BOT", TOP1: "TOP1", TOP2: "TOP2"}
    integer_queries = False
    sigma: float
    """The top branch's margin unit: the standard deviation of its noise (each subclass sets it)."""

    def __init__(self, eps: float, k: int, theta: float, T: float):
        privacy_split(eps, k, theta)
        self.eps, self.k, self.theta, self.T = eps, int(k), theta, T
        self.eps0 = theta * eps
        self.eps1 = (1 - theta) * eps / k
        self.eps2 = self.eps1 / 2
        # Means subtracted from the noises (Algorithm 3, line 3): 0 for Laplace noise.
        self.b0 = self.b1 = self.b2 = 0.0

    def _threshold_noise(self, size: int, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def _top_noise(self, size: int, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def _middle_noise(self, size: int, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def m(self, q, n_samples: int, rng: np.random.Generator) -> TaggedStream:
        q = query_vector(q, integer=self.integer_queries)
        n, rng = sample_count(n_samples), generator(rng)
        tags, gaps = empty_stream(n, q.size)
        noisy_threshold = self.T + self._threshold_noise(n, rng) - self.b0
        # Budget spent on queries in units of ε₂ = ε₁/2: a TOP2 costs 1, a TOP1 costs 2.
        units = np.zeros(n, dtype=np.int64)
        active = np.arange(n)
        for i in range(q.size):
            if active.size == 0:
                break
            threshold = noisy_threshold[active]
            top_gap = q[i] + self._top_noise(active.size, rng) - self.b2 - threshold
            middle_gap = q[i] + self._middle_noise(active.size, rng) - self.b1 - threshold
            top2 = top_gap >= 2 * self.sigma
            top1 = ~top2 & (middle_gap >= 0)
            tags[active, i] = np.select([top2, top1], [TOP2, TOP1], BOT)
            gaps[active[top2], i] = top_gap[top2]
            gaps[active[top1], i] = middle_gap[top1]
            units[active] += top2 + 2 * top1
            active = active[units[active] <= 2 * (self.k - 1)]  # cost > ε − ε₁, exactly
        return TaggedStream(tags, gaps, self.TAG_NAMES, frozenset({TOP1, TOP2}))

    def privacy_cost(self, out: TaggedStream) -> np.ndarray:
        """(n,) the budget each sample actually spent, ε₀ + ε₂·|I_ω| + ε₁·|J_ω| ≤ ε (proof of Theorem 5.1)."""
        return self.eps0 + self.eps2 * out.count(TOP2) + self.eps1 * out.count(TOP1)


class AdaptiveSVTWithGap(_AdaptiveSVTWithGap):
    """Adaptive SVT with Gap — Free Gap (Ding et al.), Section 5.1, Algorithm 1 (Laplace noise).

    Threshold noise η ~ Lap(1/ε₀); per query ξᵢ ~ Lap(2/ε₂) and ηᵢ ~ Lap(2/ε₁) with ε₂ = ε₁/2 and
    σ = 2√2/ε₂ (the standard deviation of Lap(2/ε₂), footnote 4). A query far above the threshold
    (q̃ᵢ − T̃ ≥ 2σ) is answered from the noisier top branch at cost ε₂ (`TOP2`), one above the threshold at
    cost ε₁ (`TOP1`), otherwise ⊥ at no cost; it halts once the budget cannot pay for another ε₁. ε-DP by
    Lemma 2 and Theorem 5.1. Spec: specs/freegap/alg1_adaptive_svt_gap.dp.

    `monotone=True` is the monotone-query variant of footnote 5 (Lap(1/ε₂) and Lap(1/ε₁) query noise, σ
    unchanged as in specs/freegap/alg1_adaptive_svt_gap_monotone.dp); it is ε-DP only for monotone queries.

    When every query is far above the threshold, it answers 2k − 1 of them (all `TOP2`), not 2k: the test
    cost > ε − ε₁ leaves the last ε₂ unspent.
    """

    def __init__(self, eps: float, k: int, theta: float, T: float, *, monotone: bool = False):
        super().__init__(eps, k, theta, T)
        self.monotone = monotone
        self.top_scale = (1 if monotone else 2) / self.eps2
        self.middle_scale = (1 if monotone else 2) / self.eps1
        self.sigma = 2 * math.sqrt(2) / self.eps2

    def _threshold_noise(self, size, rng):
        return rng.laplace(0.0, 1 / self.eps0, size)

    def _top_noise(self, size, rng):
        return rng.laplace(0.0, self.top_scale, size)

    def _middle_noise(self, size, rng):
        return rng.laplace(0.0, self.middle_scale, size)

    def gap_noise_rates(self, tag: int) -> tuple[float, float]:
        """(ε₀, ε*) of Lemma 3 for a gap released with this tag: ε* is 1 / the scale of the query noise,
        i.e. ε₂/2 for `TOP2` and ε₁/2 for `TOP1` (ε₂ and ε₁ in the monotone variant)."""
        require(tag in (TOP1, TOP2), "only TOP1 and TOP2 outputs carry a gap")
        return self.eps0, 1 / (self.top_scale if tag == TOP2 else self.middle_scale)

    def gap_variance(self, tag: int) -> float:
        """Var(ηᵢ − η) for a gap released with this tag (Section 5.1, "Choice of θ")."""
        require(tag in (TOP1, TOP2), "only TOP1 and TOP2 outputs carry a gap")
        scale = self.top_scale if tag == TOP2 else self.middle_scale
        return 2 / self.eps0 ** 2 + 2 * scale ** 2


class AdaptiveSVTWithGapExp(_AdaptiveSVTWithGap):
    """Adaptive SVT with Gap with exponential noise — Free Gap (Ding et al.), Section 5.2, Algorithm 3.

    Algorithm 1 with Exp(β) (density e^{−x/β}/β, mean β; Table 1) in place of Lap(β) and the means
    b₀ = 1/ε₀, b₁ = 2/ε₁, b₂ = 2/ε₂ subtracted (line 3); σ = 2/ε₂ is the standard deviation of Exp(2/ε₂).
    The alignment of Equation (2) is unchanged (its shifts are ≥ 0), so it is ε-DP. The one-sided noise gives
    gaps of half the variance of the Laplace version. Spec: specs/freegap/alg3_adaptive_svt_gap_exp.dp.
    """

    def __init__(self, eps: float, k: int, theta: float, T: float):
        super().__init__(eps, k, theta, T)
        self.b0, self.b1, self.b2 = 1 / self.eps0, 2 / self.eps1, 2 / self.eps2
        self.sigma = 2 / self.eps2

    def _threshold_noise(self, size, rng):
        return rng.exponential(1 / self.eps0, size)

    def _top_noise(self, size, rng):
        return rng.exponential(2 / self.eps2, size)

    def _middle_noise(self, size, rng):
        return rng.exponential(2 / self.eps1, size)

    def gap_variance(self, tag: int) -> float:
        """Var(ηᵢ − η) = b₀² + bᵢ² (an Exp(β) variable has variance β²)."""
        require(tag in (TOP1, TOP2), "only TOP1 and TOP2 outputs carry a gap")
        return self.b0 ** 2 + (self.b2 if tag == TOP2 else self.b1) ** 2


class AdaptiveSVTWithGapGeo(_AdaptiveSVTWithGap):
    """Adaptive SVT with Gap with geometric noise — Free Gap (Ding et al.), Section 5.2, "Geometric noise".

    For integer-valued queries: Algorithm 3 with Geo(1 − e^{−ε₀}), Geo(1 − e^{−ε₂/2}), Geo(1 − e^{−ε₁/2})
    noise, where Geo(p) has mass p(1 − p)ⁿ on n = 0, 1, ... (Table 1's mass function; numpy's
    `geometric(p) − 1`), b = 1/p for each noise (the paper's values) and σ = e^{ε₂/4}/(e^{ε₂/2} − 1).
    ε-DP by the alignment of Equation (2) with integer shifts. Spec: specs/freegap/alg3_adaptive_svt_gap_geo.dp.

    The paper calls 1/p the mean of Geo(p); on n ≥ 0 the mean is 1/p − 1. Both noises of a gap are then
    off by −1, which cancels in the gap q̃ᵢ − T̃: the released gap is unbiased all the same.
    """

    integer_queries = True

    def __init__(self, eps: float, k: int, theta: float, T: int):
        require(int(T) == T, f"T must be an integer (the spec declares T: int), got {T}")
        super().__init__(eps, k, theta, T)
        # 1 − e^{−x} computed as −expm1(−x): the same number, without cancellation for small budgets.
        self.p0 = -math.expm1(-self.eps0)
        self.p1 = -math.expm1(-self.eps1 / 2)
        self.p2 = -math.expm1(-self.eps2 / 2)
        self.b0, self.b1, self.b2 = 1 / self.p0, 1 / self.p1, 1 / self.p2
        self.sigma = math.exp(self.eps2 / 4) / math.expm1(self.eps2 / 2)

    def _threshold_noise(self, size, rng):
        return rng.geometric(self.p0, size) - 1

    def _top_noise(self, size, rng):
        return rng.geometric(self.p2, size) - 1

    def _middle_noise(self, size, rng):
        return rng.geometric(self.p1, size) - 1

    def gap_variance(self, tag: int) -> float:
        """Var(ηᵢ − η) = (1−p₀)/p₀² + (1−pᵢ)/pᵢ²."""
        require(tag in (TOP1, TOP2), "only TOP1 and TOP2 outputs carry a gap")
        p = self.p2 if tag == TOP2 else self.p1
        return (1 - self.p0) / self.p0 ** 2 + (1 - p) / p ** 2


__all__ = ["AdaptiveSVTWithGap", "AdaptiveSVTWithGapExp", "AdaptiveSVTWithGapGeo", "SVTWithGap"]
