"""Utility metrics of additive noise (R²DP Section 2.3 and Table 1), for the R²DP mixtures and the baselines.

A mechanism releases q + w. The metrics, as R²DP states them (Table 1 gives each for a mixture through the MGF
M of u = 1/b, the reciprocal Laplace scale):

- usefulness at error bound γ: P(|w| ≤ γ) (Blum et al. 2008; R²DP Definition 2.3), larger is better; for the
  mixture 1 − M_u(−γ);
- ℓ1: E|w|, smaller is better; for the mixture ∫₀^∞ M_u(−x) dx = E[1/u];
- ℓ2: √(E w²), smaller is better; for the mixture √(2 ∬ M_u(−u) du dx) = √(2 E[u⁻²]).

The baselines at the same ε and sensitivity Δq: the Laplace mechanism, w ~ Lap(Δq/ε), and Geng & Viswanath's
staircase mechanism (cited by R²DP Section 1; the density of `align.distributions`' Staircase, scaled by Δq),
whose shape γ_s in [0, 1] is chosen per metric (`staircase_best`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

import numpy as np
from scipy import optimize

from ._params import require


class Metric(str, Enum):
    USEFULNESS = "usefulness"
    L1 = "l1"
    L2 = "l2"

    @property
    def maximise(self) -> bool:
        """Whether a larger value is better."""
        return self is Metric.USEFULNESS


@dataclass(frozen=True)
class Utility:
    """A metric, with its error bound γ for usefulness."""

    metric: Metric
    gamma: float | None = None

    def __post_init__(self) -> None:
        if self.metric is Metric.USEFULNESS:
            require(self.gamma is not None and self.gamma > 0, "usefulness needs an error bound gamma > 0")

    @property
    def name(self) -> str:
        return f"usefulness(gamma={self.gamma:g})" if self.metric is Metric.USEFULNESS else self.metric.value

    def better(self, a: float, b: float) -> bool:
        """Whether a is strictly better than b."""
        return a > b if self.metric.maximise else a < b

    def loss(self, value: float) -> float:
        """What an optimiser minimises: the metric, or its complement for usefulness."""
        return 1.0 - value if self.metric.maximise else value

    def of_fold(self, fold) -> float:
        """R²DP Table 1 for the mixture whose reciprocal scale u is `fold` (an `r2dp.SecondFold`)."""
        if self.metric is Metric.USEFULNESS:
            assert self.gamma is not None
            return 1.0 - float(fold.mgf(-self.gamma))
        if self.metric is Metric.L1:
            return float(fold.inverse_mean())
        return math.sqrt(2.0 * float(fold.inverse_square_mean()))

    def of_laplace(self, eps: float, dq: float) -> float:
        """Lap(b), b = Δq/ε: usefulness 1 − e^{−γ/b}, ℓ1 = b, ℓ2 = √2·b."""
        b = dq / eps
        if self.metric is Metric.USEFULNESS:
            assert self.gamma is not None
            return -math.expm1(-self.gamma / b)
        return b if self.metric is Metric.L1 else math.sqrt(2.0) * b

    def of_staircase(self, eps: float, dq: float, shape: float) -> float:
        """The staircase density of sensitivity Δq and shape γ_s: a·e^{−gε} on Δq·[g, g + γ_s) and a·e^{−(g+1)ε} on
        Δq·[g + γ_s, g + 1), g = 0, 1, ..., mirrored, a = (1 − e^{−ε}) / (2Δq(γ_s + (1 − γ_s)e^{−ε})). Each
        metric is a sum over the steps (to where e^{−gε} is below 1e-18)."""
        require(0 <= shape <= 1, f"the staircase shape must lie in [0, 1], got {shape}")
        b = math.exp(-eps)
        a = (1 - b) / (2 * (shape + (1 - shape) * b))  # density on the unit grid; w = Δq·x
        steps = np.arange(math.ceil(18 * math.log(10) / eps) + 2, dtype=float)
        lo, mid, hi = steps, steps + shape, steps + 1
        high, low = a * b ** steps, a * b ** (steps + 1)  # the density on [g, g + γ_s) and on [g + γ_s, g + 1)

        def moment(p: int) -> float:
            """E|x|^p = 2 Σ_g ∫ |x|^p f(x) dx over each step."""
            return float(2 * np.sum(high * (mid ** (p + 1) - lo ** (p + 1)) / (p + 1) +
                                    low * (hi ** (p + 1) - mid ** (p + 1)) / (p + 1)))

        if self.metric is Metric.USEFULNESS:
            assert self.gamma is not None
            t = self.gamma / dq
            inside = 2 * np.sum(high * np.clip(np.minimum(t, mid) - lo, 0, None) +
                                low * np.clip(np.minimum(t, hi) - mid, 0, None))
            return float(min(1.0, inside))
        if self.metric is Metric.L1:
            return dq * moment(1)
        return dq * math.sqrt(moment(2))

    def staircase_best(self, eps: float, dq: float) -> tuple[float, float]:
        """(shape γ_s, metric) of the best staircase for this metric: a bounded scalar search over [0, 1]."""
        found = optimize.minimize_scalar(lambda g: self.loss(self.of_staircase(eps, dq, g)), bounds=(0.0, 1.0),
                                         method="bounded", options={"xatol": 1e-10})
        shape = float(found.x)
        return shape, self.of_staircase(eps, dq, shape)
