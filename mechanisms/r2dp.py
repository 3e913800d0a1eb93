"""R²DP: the Laplace mechanism with a random scale — Mohammady et al., *R²DP* (CCS 2020), vectorised.

The mechanism releases q + Lap(b) where the reciprocal scale u = 1/b is itself random, drawn from a
"second-fold" distribution. Its exact privacy is Theorem 4.1:

    ε = ln( E[u] / M_u'(−Δq) ),   M_u'(−Δq) = E[u·e^{−Δq·u}],

and for u = Σ aⱼXⱼ with independent Xⱼ, Corollary 4.2 (the product rule for M_u). Each `SecondFold` knows its
law in two ways: closed forms (mean, MGF and its derivative, as in Appendix B and the spec headers) and
numerical expectations by quadrature over its density; `R2DP.epsilon` uses the first,
`R2DP.epsilon_quadrature` the second, and the two must agree.

Specs: specs/r2dp/point_mass.dp, bernoulli.dp, gamma.dp, uniform.dp, trunc_gaussian.dp, ensemble.dp; the
constructors `point_mass`, `bernoulli`, ..., `ensemble` below build the same mechanisms with the same
parameter names. `R2DP.m(q, n_samples, rng)` returns an (n_samples,) array.

The mixture's CDF also follows from the MGF: P(q + w ≤ x) = 1 − M_u(−(x − q))/2 for x ≥ q and
M_u(−(q − x))/2 below, and Var(w) = 2·E[u⁻²] = 2∫₀^∞ s·M_u(−s) ds.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
from scipy import integrate, optimize, special, stats

from ._params import generator, require, sample_count
from .utility import Metric, Utility

Integrand = Callable[[float], float]


def _phi(x):
    """The standard normal density (vectorised; 0 at ±∞)."""
    return np.exp(-np.square(x) / 2) / math.sqrt(2 * math.pi)


def _quad(f: Integrand, a: float, b: float, points: Sequence[float] = ()) -> float:
    """∫_a^b f with an absolute tolerance fine enough for ratios of small expectations."""
    inner = sorted(p for p in points if a < p < b)
    edges = [a, *inner, b]
    total = 0.0
    for lo, hi in pairwise(edges):
        value, _ = integrate.quad(f, lo, hi, limit=200, epsabs=1e-14, epsrel=1e-12)
        total += value
    return total


class SecondFold(ABC):
    """The distribution of the reciprocal Laplace scale u = 1/b (R²DP Section 3, "second fold")."""

    @abstractmethod
    def sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """(size,) independent draws of u."""

    @abstractmethod
    def mean(self) -> float:
        """E[u], closed form."""

    @abstractmethod
    def mgf(self, t: float) -> float:
        """M_u(t) = E[e^{t·u}], closed form."""

    @abstractmethod
    def mgf_derivative(self, t: float) -> float:
        """M_u'(t) = E[u·e^{t·u}], closed form."""

    @abstractmethod
    def expect(self, f: Integrand) -> float:
        """E[f(u)] numerically: quadrature against the density, or a finite sum."""

    @property
    @abstractmethod
    def support_min(self) -> float:
        """The infimum of u's support (u > 0 almost surely; u ≥ support_min)."""

    def inverse_square_mean(self) -> float:
        """E[u⁻²] = ∫₀^∞ s·M_u(−s) ds; finite when u is bounded away from 0 (else see the subclasses)."""
        if self.support_min <= 0:
            return math.inf
        return _quad(lambda s: s * float(self.mgf(-s)), 0.0, math.inf, points=[1 / self.mean()])

    def inverse_mean(self) -> float:
        """E[1/u] = ∫₀^∞ M_u(−s) ds (the mean Laplace scale E[b], R²DP Table 1's ℓ1 bound); finite when u is
        bounded away from 0 (else see the subclasses)."""
        if self.support_min <= 0:
            return math.inf
        return _quad(lambda s: float(self.mgf(-s)), 0.0, math.inf, points=[1 / self.mean()])

    def mean_quadrature(self) -> float:
        return self.expect(lambda u: u)

    def mgf_quadrature(self, t: float) -> float:
        return self.expect(lambda u: math.exp(t * u))

    def mgf_derivative_quadrature(self, t: float) -> float:
        return self.expect(lambda u: u * math.exp(t * u))


class PointMass(SecondFold):
    """u = v with probability 1: R²DP Appendix B.0.1 (1), the degenerate distribution (plain Laplace, b = 1/v)."""

    def __init__(self, v: float):
        require(v > 0, f"the point mass must be > 0, got {v}")
        self.v = v

    @property
    def support_min(self):
        return self.v

    def sample(self, size, rng):
        return np.full(size, self.v)

    def mean(self):
        return self.v

    def mgf(self, t):
        return np.exp(t * self.v)

    def mgf_derivative(self, t):
        return self.v * np.exp(t * self.v)

    def expect(self, f):
        return f(self.v)


class BernoulliFold(SecondFold):
    """u = x1 with probability p, x0 with probability 1 − p: R²DP Appendix B.0.1 (2), the pmf f_{B,X0,X1}."""

    def __init__(self, p: float, x0: float, x1: float):
        require(0 < p < 1, f"p must lie in (0, 1), got {p}")
        require(x0 > 0 and x1 > 0, "both outcomes of u must be > 0")
        self.p, self.x0, self.x1 = p, x0, x1

    @property
    def support_min(self):
        return min(self.x0, self.x1)

    def sample(self, size, rng):
        c = rng.binomial(1, self.p, size)
        return np.where(c == 1, self.x1, self.x0)

    def mean(self):
        return (1 - self.p) * self.x0 + self.p * self.x1

    def mgf(self, t):
        return (1 - self.p) * np.exp(t * self.x0) + self.p * np.exp(t * self.x1)

    def mgf_derivative(self, t):
        return (1 - self.p) * self.x0 * np.exp(t * self.x0) + self.p * self.x1 * np.exp(t * self.x1)

    def expect(self, f):
        return (1 - self.p) * f(self.x0) + self.p * f(self.x1)


class GammaFold(SecondFold):
    """u ~ Gamma(k, θ) (shape k, scale θ): R²DP Appendix B.0.2 (1); M_u(t) = (1 − θt)^{−k}, t < 1/θ."""

    def __init__(self, k: float, theta: float):
        require(k > 0 and theta > 0, f"Gamma needs k > 0 and theta > 0, got {k}, {theta}")
        self.k, self.theta = k, theta
        self._log_norm = math.lgamma(k) + k * math.log(theta)

    def _pdf(self, u: float) -> float:
        # the density written out (scipy's frozen law costs ~70 µs a call, most of a quadrature's time)
        return math.exp((self.k - 1) * math.log(u) - u / self.theta - self._log_norm) if u > 0 else 0.0

    support_min = 0.0

    def inverse_square_mean(self):
        # E[u⁻²] = Γ(k − 2)/(Γ(k)θ²) = 1/((k − 1)(k − 2)θ²) for k > 2; the density near 0 makes it infinite else.
        if self.k <= 2:
            return math.inf
        return 1 / ((self.k - 1) * (self.k - 2) * self.theta ** 2)

    def inverse_mean(self):
        # E[1/u] = Γ(k − 1)/(Γ(k)θ) = 1/((k − 1)θ) for k > 1
        if self.k <= 1:
            return math.inf
        return 1 / ((self.k - 1) * self.theta)

    def sample(self, size, rng):
        return rng.gamma(self.k, self.theta, size)

    def mean(self):
        return self.k * self.theta

    def mgf(self, t):
        return (1 - self.theta * t) ** (-self.k)

    def mgf_derivative(self, t):
        return self.k * self.theta * (1 - self.theta * t) ** (-self.k - 1)

    def expect(self, f):
        return _quad(lambda u: f(u) * self._pdf(u), 0.0, math.inf, points=[self.mean()])


class UniformFold(SecondFold):
    """u ~ U(a, b), 0 < a < b: R²DP Appendix B.0.2 (2); M_u(t) = (e^{tb} − e^{ta}) / (t(b − a))."""

    def __init__(self, a: float, b: float):
        require(0 < a < b, f"Uniform needs 0 < a < b (a > 0 keeps the Laplace scale finite), got {a}, {b}")
        self.a, self.b = a, b

    @property
    def support_min(self):
        return self.a

    def sample(self, size, rng):
        return rng.uniform(self.a, self.b, size)

    def mean(self):
        return (self.a + self.b) / 2

    def mgf(self, t):
        t = np.asarray(t, dtype=float)
        s = np.where(t == 0, 1.0, t)  # t = 0 is the removable singularity M(0) = 1
        value = (np.exp(s * self.b) - np.exp(s * self.a)) / (s * (self.b - self.a))
        return np.where(t == 0, 1.0, value)[()]

    def mgf_derivative(self, t):
        t = np.asarray(t, dtype=float)
        a, b = self.a, self.b
        s = np.where(t == 0, 1.0, t)
        value = ((b * np.exp(s * b) - a * np.exp(s * a)) * s - (np.exp(s * b) - np.exp(s * a))) / (s * s * (b - a))
        return np.where(t == 0, self.mean(), value)[()]

    def expect(self, f):
        return _quad(f, self.a, self.b) / (self.b - self.a)

    def inverse_mean(self):
        return math.log(self.b / self.a) / (self.b - self.a)

    def inverse_square_mean(self):
        return 1 / (self.a * self.b)


class TruncatedGaussianFold(SecondFold):
    """u ~ N(μ, σ²) conditioned on a ≤ u ≤ b, 0 ≤ a < b: R²DP Appendix B.0.2 (3), Theorem B.7.

    Sampled with scipy.stats.truncnorm (standardised ends (a − μ)/σ, (b − μ)/σ). The derivative of the MGF,
    which the paper leaves unevaluated in (9), is written out as in specs/r2dp/trunc_gaussian.dp.
    """

    def __init__(self, mu: float, sigma: float, a: float, b: float):
        require(sigma > 0, f"sigma must be > 0, got {sigma}")
        require(0 <= a < b, f"the truncation needs 0 <= a < b (u >= 0), got {a}, {b}")
        self.mu, self.sigma, self.a, self.b = mu, sigma, a, b
        self.alpha, self.beta = (a - mu) / sigma, (b - mu) / sigma
        self._log_z = float(self._log_mass(0.0))
        self._z = math.exp(self._log_z)
        self._log_norm = math.log(sigma * math.sqrt(2 * math.pi)) + self._log_z

    def _pdf(self, u: float) -> float:
        # φ((u − μ)/σ)/(σZ) on [a, b], written out (scipy's frozen law costs ~70 µs a call)
        if not self.a <= u <= self.b:
            return 0.0
        x = (u - self.mu) / self.sigma
        return math.exp(-x * x / 2 - self._log_norm)

    @property
    def support_min(self):
        # With a = 0 the density at 0 is positive, so E[u⁻²] is infinite (the base class answers inf).
        return self.a

    def sample(self, size, rng):
        law = stats.truncnorm(self.alpha, self.beta, loc=self.mu, scale=self.sigma)
        return law.rvs(size=size, random_state=rng)

    def mean(self):
        return self.mu + self.sigma * (_phi(self.alpha) - _phi(self.beta)) / self._z

    def _log_mass(self, t):
        """ln(Φ(β − σt) − Φ(α − σt)), computed in the tail that keeps its digits (for t → −∞ both Φ → 1)."""
        s = self.sigma * np.asarray(t, dtype=float)
        lo, hi = self.alpha - s, self.beta - s
        with np.errstate(divide="ignore", invalid="ignore"):  # np.where evaluates the branch it discards too
            upper = special.log_ndtr(-lo) + np.log1p(-np.exp(special.log_ndtr(-hi) - special.log_ndtr(-lo)))
            lower = special.log_ndtr(hi) + np.log1p(-np.exp(special.log_ndtr(lo) - special.log_ndtr(hi)))
        return np.where(lo > 0, upper, lower)

    def mgf(self, t):
        t = np.asarray(t, dtype=float)
        s = self.sigma * t
        return np.exp(self.mu * t + s * s / 2 + self._log_mass(t) - self._log_z)[()]

    def mgf_derivative(self, t):
        # e^{μt + s²/2}·φ(x − s) = e^{μt + xs − x²/2}/√(2π): the density terms need no huge exponent.
        t = np.asarray(t, dtype=float)
        s = self.sigma * t

        def density_term(x):
            if math.isinf(x):
                return np.zeros_like(t)
            return np.exp(self.mu * t + x * s - x * x / 2) / math.sqrt(2 * math.pi)

        mass_term = (self.mu + self.sigma ** 2 * t) * np.exp(self.mu * t + s * s / 2 + self._log_mass(t))
        return ((mass_term + self.sigma * (density_term(self.alpha) - density_term(self.beta))) / self._z)[()]

    def expect(self, f):
        inside = [p for p in (self.mu,) if self.a < p < self.b]
        return _quad(lambda u: f(u) * self._pdf(u), self.a, self.b, points=inside)


class LinearCombination(SecondFold):
    """u = Σ aⱼ·Xⱼ with independent second folds Xⱼ and weights aⱼ > 0: R²DP Section 3.3 and Corollary 4.2.

    M_u(t) = Πⱼ M_{Xⱼ}(aⱼt) (Theorem 3.2), so M_u'(t) = Σⱼ aⱼ M'_{Xⱼ}(aⱼt) Π_{i≠j} M_{Xᵢ}(aᵢt): at t = −Δq
    this is Corollary 4.2's denominator. Its numerator Σⱼ aⱼ E[Xⱼ] is E[u] (the paper writes E_{xⱼ}(1/b)).
    """

    def __init__(self, weights: Sequence[float], folds: Sequence[SecondFold]):
        require(len(weights) == len(folds) >= 1, "one weight per second fold")
        require(all(a > 0 for a in weights), "the weights must be > 0 (u must stay > 0)")
        self.weights, self.folds = tuple(weights), tuple(folds)

    @property
    def support_min(self):
        return sum(a * f.support_min for a, f in zip(self.weights, self.folds))

    def sample(self, size, rng):
        # One fold after the other, as the spec draws x1, x2, x3.
        draws = [fold.sample(size, rng) for fold in self.folds]
        return sum(a * x for a, x in zip(self.weights, draws))

    def mean(self):
        return sum(a * f.mean() for a, f in zip(self.weights, self.folds))

    def mgf(self, t):
        return math.prod(f.mgf(a * t) for a, f in zip(self.weights, self.folds))

    def mgf_derivative(self, t):
        return self._product_rule(t, lambda f, s: f.mgf(s), lambda f, s: f.mgf_derivative(s))

    def expect(self, f):
        raise NotImplementedError("E[f(u)] of a linear combination needs a multiple integral; the R²DP "
                                  "quantities go through the components (mean/mgf/mgf_derivative_quadrature)")

    def mean_quadrature(self):
        return sum(a * f.mean_quadrature() for a, f in zip(self.weights, self.folds))

    def mgf_quadrature(self, t):
        return math.prod(f.mgf_quadrature(a * t) for a, f in zip(self.weights, self.folds))

    def mgf_derivative_quadrature(self, t):
        return self._product_rule(t, lambda f, s: f.mgf_quadrature(s), lambda f, s: f.mgf_derivative_quadrature(s))

    def _product_rule(self, t, value, derivative) -> float:
        values = [value(f, a * t) for a, f in zip(self.weights, self.folds)]
        total = 0.0
        for j, (a, f) in enumerate(zip(self.weights, self.folds)):
            others = math.prod(v for i, v in enumerate(values) if i != j)
            total += a * derivative(f, a * t) * others
        return total


class R2DP:
    """The R²DP mechanism — Mohammady et al. (CCS 2020), Section 3: q + Lap(1/u) with u ~ a second fold.

    ε-DP for queries of sensitivity Δq with ε = ln(E[u] / M_u'(−Δq)) (Theorem 4.1; Corollary 4.2 for linear
    combinations, Algorithm 1). Lemma 1 of the Free Gap paper does not prove it when u is unbounded.
    """

    def __init__(self, fold: SecondFold):
        self.fold = fold

    def m(self, q: float, n_samples: int, rng: np.random.Generator) -> np.ndarray:
        n, rng = sample_count(n_samples), generator(rng)
        u = self.fold.sample(n, rng)
        return q + rng.laplace(0.0, 1 / u)

    def epsilon(self, dq: float) -> float:
        """Theorem 4.1 from the closed-form mean and MGF derivative."""
        require(dq > 0, f"the sensitivity must be > 0, got {dq}")
        return math.log(self.fold.mean() / self.fold.mgf_derivative(-dq))

    def epsilon_quadrature(self, dq: float) -> float:
        """Theorem 4.1 numerically: ln(E[u] / E[u·e^{−Δq·u}]) with both expectations by quadrature."""
        require(dq > 0, f"the sensitivity must be > 0, got {dq}")
        return math.log(self.fold.mean_quadrature() / self.fold.mgf_derivative_quadrature(-dq))

    def cdf(self, x, q: float) -> np.ndarray:
        """P(q + w ≤ x) of the mixture, through the MGF (E[e^{−u·d}] is the Laplace tail averaged over u)."""
        x = np.asarray(x, dtype=float)
        tail = 0.5 * self.fold.mgf(-np.abs(x - q))
        return np.where(x >= q, 1 - tail, tail)

    def variance(self) -> float:
        """Var(q + w) = 2·E[u⁻²] (a Laplace variable of scale 1/u has variance 2/u²); infinite for Gamma with
        k ≤ 2 or a truncated Gaussian reaching 0."""
        return 2 * self.fold.inverse_square_mean()


def point_mass(b0: float) -> R2DP:
    """specs/r2dp/point_mass.dp: u = 1/b0, i.e. q + Lap(b0); ε = Δq/b0 (Theorem B.1)."""
    return R2DP(PointMass(1 / b0))


def bernoulli(p: float, b0: float, b1: float) -> R2DP:
    """specs/r2dp/bernoulli.dp: scale b1 with probability p, b0 with probability 1 − p (Appendix B.0.1 (2))."""
    return R2DP(BernoulliFold(p, 1 / b0, 1 / b1))


def gamma(k: float, theta: float) -> R2DP:
    """specs/r2dp/gamma.dp: u ~ Gamma(k, θ); ε = (k + 1)·ln(1 + Δq·θ) (Theorem B.3)."""
    return R2DP(GammaFold(k, theta))


def uniform(a: float, b: float) -> R2DP:
    """specs/r2dp/uniform.dp: u ~ U(a, b) (Theorem B.5)."""
    return R2DP(UniformFold(a, b))


def trunc_gaussian(mu: float, sigma: float, a: float, b: float) -> R2DP:
    """specs/r2dp/trunc_gaussian.dp: u ~ N^T(μ, σ, a, b) (Theorem B.7)."""
    return R2DP(TruncatedGaussianFold(mu, sigma, a, b))


def ensemble(weights: Sequence[float] = (1 / 3, 1 / 3, 1 / 3), gamma_k: float = 2, gamma_theta: float = 0.5,
             uniform_a: float = 0.5, uniform_b: float = 2, tn_mu: float = 1, tn_sigma: float = 0.5,
             tn_a: float = 0, tn_b: float = 3) -> R2DP:
    """R²DP Section 4.3, Algorithm 1 (the ensemble): u = a₁X₁ + a₂X₂ + a₃X₃ with X₁ ~ Gamma(k, θ),
    X₂ ~ U(a_u, b_u), X₃ ~ N^T(μ, σ, a_N, b_N). Algorithm 1 picks the parameters with a Lagrange-multiplier
    optimisation (not implemented here); the defaults are the fixed literals of specs/r2dp/ensemble.dp."""
    folds = (GammaFold(gamma_k, gamma_theta), UniformFold(uniform_a, uniform_b),
             TruncatedGaussianFold(tn_mu, tn_sigma, tn_a, tn_b))
    return R2DP(LinearCombination(weights, folds))


# ------------------------------------------------------------------------------------------- the optimiser


@dataclass(frozen=True)
class Family:
    """A family of second folds, split into a shape (searched) and a scale c > 0 that multiplies u (solved):
    ε(c·u, Δq) = ε(u, c·Δq) grows strictly with c (its derivative in Δq is E[u²e^{−Δq·u}]/E[u·e^{−Δq·u}] > 0), so
    for each shape exactly one scale spends the budget ε, and the search runs over shapes only."""

    name: str
    build: Callable[[np.ndarray, float], SecondFold]
    parameters: Callable[[np.ndarray, float], dict[str, float]]
    """The constructor's parameters (`gamma(k, theta)`, `uniform(a, b)`, ...) for a shape and a scale."""
    starts: tuple[tuple[float, ...], ...]
    """Deterministic starting shapes of the search."""


def _sigmoid(x: float) -> float:
    """In (0, 0.999): a ratio of two ends kept off 1, where the uniform fold's closed forms lose their digits
    (b − a in a denominator) and the search would exploit the rounding."""
    return 0.999 / (1 + math.exp(-max(-700.0, min(700.0, x))))


def _gamma_shape(z, c):
    return {"k": math.exp(max(-20.0, min(20.0, z[0]))), "theta": c}


def _uniform_shape(z, c):
    return {"a": c * _sigmoid(z[0]), "b": c}


def _tn_shape(z, c):
    # standardised by b = c: mu/b, sigma/b and a/b in [0, 1)
    return {"mu": float(c * z[0]), "sigma": c * math.exp(z[1]), "a": c * _sigmoid(z[2]), "b": c}


_ENSEMBLE_WEIGHTS = 3


def _ensemble_shape(z, c):
    w = np.exp(np.asarray(z[:_ENSEMBLE_WEIGHTS], dtype=float))
    w = c * w / w.sum()
    return {"a1": float(w[0]), "a2": float(w[1]), "a3": float(w[2]), "gamma_k": math.exp(z[3]), "gamma_theta": 1.0,
            "uniform_a": _sigmoid(z[4]), "uniform_b": 1.0, "tn_mu": float(z[5]), "tn_sigma": math.exp(z[6]),
            "tn_a": _sigmoid(z[7]), "tn_b": 1.0}


def _ensemble_fold(z, c) -> SecondFold:
    p = _ensemble_shape(z, c)
    return LinearCombination((p["a1"], p["a2"], p["a3"]),
                             (GammaFold(p["gamma_k"], p["gamma_theta"]), UniformFold(p["uniform_a"], p["uniform_b"]),
                              TruncatedGaussianFold(p["tn_mu"], p["tn_sigma"], p["tn_a"], p["tn_b"])))


FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("gamma", lambda z, c: GammaFold(**_gamma_shape(z, c)), _gamma_shape,
           tuple((math.log(k),) for k in (0.5, 2.0, 3.5, 10.0, 50.0))),
    Family("uniform", lambda z, c: UniformFold(**_uniform_shape(z, c)), _uniform_shape,
           tuple((x,) for x in (-4.0, -1.0, 0.0, 1.0, 4.0))),
    Family("trunc_gaussian", lambda z, c: TruncatedGaussianFold(**_tn_shape(z, c)), _tn_shape,
           ((0.5, math.log(0.3), -2.0), (0.9, math.log(0.05), 2.0))),
    Family("ensemble", _ensemble_fold, _ensemble_shape,
           ((0.0, 0.0, 0.0, math.log(2.0), 0.0, 1.0, math.log(0.5), -2.0),
            (2.0, 0.0, 0.0, math.log(5.0), 0.0, 1.0, math.log(0.5), -2.0))),
)}
"""The families of R²DP's experiments (Section 5: Gamma, Uniform, truncated Gaussian) and Algorithm 1's
ensemble of the three (each component at unit scale, the weights carrying the scale)."""


@dataclass(frozen=True)
class Optimum:
    """The best parameters found for a family, metric, ε and Δq."""

    family: str
    parameters: dict[str, float]
    epsilon: float
    """ε of these parameters by the mixture rule (Theorem 4.1 / Corollary 4.2, closed forms)."""
    epsilon_quadrature: float
    """The same ε with the expectations by quadrature (the two must agree)."""
    utility: Utility
    value: float
    mechanism: R2DP


def _scale_for(family: Family, shape: np.ndarray, eps: float, dq: float) -> float:
    """The scale c at which the mixture of this shape is exactly ε-DP (bisection in log c: ε grows with c)."""
    def excess(log_c: float) -> float:
        return R2DP(family.build(shape, math.exp(log_c))).epsilon(dq) - eps

    lo, hi = -1.0, 1.0  # log c
    while excess(lo) > 0:
        lo -= 2.0
        require(lo > -200, "no scale spends the budget")
    while excess(hi) < 0:
        hi += 2.0
        require(hi < 200, "no scale spends the budget")
    return math.exp(optimize.brentq(excess, lo, hi, xtol=1e-12, rtol=1e-12))


def optimise(eps: float, dq: float, metric: Metric | str, family: str, gamma: float | None = None) -> Optimum:
    """R²DP's optimisation (Section 4.2, "for a given ε, find the PDF parameters that maximise utility"): the
    parameters of `family` (a key of FAMILIES) whose mixture is ε-DP for sensitivity Δq by the mixture rule and
    whose metric (R²DP Table 1: usefulness at error bound `gamma`, ℓ1 or ℓ2) is best. Nelder–Mead over the shape
    from each of the family's fixed starting shapes, the scale solved for ε exactly (`Family`); deterministic.
    A local search: the result is the best found, not a certified optimum."""
    require(eps > 0 and dq > 0, f"eps and dq must be > 0, got {eps}, {dq}")
    require(family in FAMILIES, f"unknown family {family!r}: one of {', '.join(FAMILIES)}")
    utility = Utility(Metric(metric), gamma)
    fam = FAMILIES[family]
    incumbent = [math.inf]  # the best loss found so far, at a point whose ε the quadrature confirmed

    def loss(z: np.ndarray) -> float:
        try:
            with np.errstate(all="ignore"):
                mechanism = R2DP(fam.build(z, _scale_for(fam, z, eps, dq)))
                value = utility.of_fold(mechanism.fold)
                score = utility.loss(value) if math.isfinite(value) else math.inf
                # The closed forms must agree with the quadrature where the search would settle: in the far tails
                # of a truncated Gaussian they lose their digits, and the search would exploit the rounding. Only a
                # point better than every confirmed one can become the optimum, so only such a point is checked
                # (the quadrature is most of a step's cost; checking them all made the ensemble take minutes).
                if score < incumbent[0]:
                    if not abs(mechanism.epsilon_quadrature(dq) - eps) <= 1e-7 * eps:
                        return math.inf
                    incumbent[0] = score
        except (ValueError, ArithmeticError):
            return math.inf
        return score

    best: tuple[float, np.ndarray] | None = None
    for start in fam.starts:
        z0 = np.asarray(start, dtype=float)
        if not math.isfinite(loss(z0)):
            continue
        found = optimize.minimize(loss, z0, method="Nelder-Mead",
                                  options={"xatol": 1e-5, "fatol": 1e-10, "maxiter": 100 * len(z0)})
        if math.isfinite(found.fun) and (best is None or found.fun < best[0]):
            best = (float(found.fun), np.asarray(found.x))
    require(best is not None, f"no {family} mixture has a finite {utility.name} at eps = {eps}")
    assert best is not None
    z = best[1]
    scale = _scale_for(fam, z, eps, dq)
    mechanism = R2DP(fam.build(z, scale))
    assert abs(mechanism.epsilon_quadrature(dq) - eps) <= 1e-7 * eps, "the optimum is a confirmed point"
    return Optimum(family, fam.parameters(z, scale), mechanism.epsilon(dq), mechanism.epsilon_quadrature(dq),
                   utility, utility.of_fold(mechanism.fold), mechanism)


__all__ = [
    "FAMILIES",
    "R2DP",
    "BernoulliFold",
    "Family",
    "GammaFold",
    "LinearCombination",
    "Optimum",
    "PointMass",
    "SecondFold",
    "TruncatedGaussianFold",
    "UniformFold",
    "bernoulli",
    "ensemble",
    "gamma",
    "optimise",
    "point_mass",
    "trunc_gaussian",
    "uniform",
]
