"""Interpreter (noise): samplers for every distribution of `distributions.DISTRIBUTIONS`, their parameter checks,
supports, numeric cost coefficients, and the seeding scheme that makes runs reproducible.

Parameterisations (docs/language.md section 9, docs/interpreter.md):

- `Lap(b)`: numpy `laplace(0, b)`, density exp(-|x|/b)/(2b).
- `Exp(b)`: numpy `exponential(b)`: scale b, mean b.
- `Geo(p)`: mass p(1-p)^n on n = 0, 1, ... (Free Gap Table 1's mass function). numpy's `geometric` lives on
  n >= 1, so we subtract 1. Its mean is (1-p)/p, not the 1/p that Table 1 prints.
- `DLap(a)`: two-sided geometric, mass tanh(a/2) e^(-a|n|): the difference of two independent Geo(1 - e^-a).
- `Staircase(eps, gamma)`: Geng & Viswanath's sampler for sensitivity 1 (below).
- `Logistic(loc, scale=1)`, `Gumbel(loc, scale=1)`, `Uniform(a, b)`, `Gamma(k, theta)` (shape, scale),
  `Normal(mu, sigma)`: numpy's samplers with those parameters.
- `Bernoulli(p)`: int 1 with probability p, else 0.
- `TruncNormal(mu, sigma, a, b)`: `scipy.stats.truncnorm` (standardised ends) with the generator as random_state.
- `Point(v)`: the constant v; draws nothing.

Seeding. Every value of H has its own stream: sample number s of a run seeded with S draws the member `m`
of noise site number `k` (its position in `ResolvedMechanism.noise`) as value number s mod BLOCK of

    Generator(PCG64(SeedSequence(S, spawn_key=(s // BLOCK, k, zigzag(m)))))

(a scalar site has m = 0; a family member is keyed by the loop variable's value). Nothing depends on the
chunk size, on which lanes of a chunk are still running, or on which branches other samples take, so the
same seed gives the same noise whatever the chunking and whether or not earlier iterations were skipped.
numpy's samplers fill their output in order, so a shorter run is a prefix of a longer one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np
import sympy

from ..distributions import DISTRIBUTIONS, Distribution, Requirement

BLOCK = 1 << 14
"""Samples per seeding block: chunks are whole numbers of blocks, so results do not depend on the chunk size."""

Array = np.ndarray


def zigzag(m: int) -> int:
    """Non-negative key for an integer (SeedSequence spawn keys must be >= 0): 0, -1, 1, -2, 2 -> 0, 1, 2, 3, 4."""
    return 2 * m if m >= 0 else -2 * m - 1


def root_sequence(seed: int | np.random.SeedSequence) -> np.random.SeedSequence:
    return seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)


def stream(root: np.random.SeedSequence, block: int, site: int, member: int) -> np.random.Generator:
    """The generator of one (block, site, member): see the module docstring."""
    seq = np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + (block, site, zigzag(member)),
                                 pool_size=root.pool_size)
    return np.random.Generator(np.random.PCG64(seq))


# ------------------------------------------------------------------------------------------ parameter checks


@dataclass(frozen=True)
class Check:
    """One requirement on the parameters of a distribution (from `Distribution.requirements`)."""

    param: int
    """The parameter the message is about (its position)."""
    requirement: str
    """What it must be, in words: `positive`, `in (0, 1)`, `greater than a`."""
    ok: Callable[[tuple[Array, ...]], Array]
    """Elementwise: True where the requirement holds."""


def _check(requirement: Requirement) -> Check:
    return Check(requirement.param, requirement.text, lambda p: requirement.holds(p, np.logical_and))


@dataclass(frozen=True)
class Sampler:
    """How to draw from one distribution of `DISTRIBUTIONS`."""

    dist: Distribution
    defaults: tuple[float, ...]
    """Valid parameter values: stand-ins on lanes that do not draw, and the value of an omitted optional one."""
    draw: Callable[[np.random.Generator, tuple, int], Array]
    """draw(generator, parameters (floats or arrays of length size), size) -> values."""

    @property
    def checks(self) -> tuple[Check, ...]:
        return tuple(_check(r) for r in self.dist.requirements)

    def full_params(self, params: Sequence) -> tuple:
        """Fill omitted optional parameters with their defaults (Logistic and Gumbel: scale 1)."""
        return tuple(params) + tuple(self.defaults[len(params):])


def _geo(gen: np.random.Generator, p, size: int) -> Array:
    # numpy's geometric counts trials up to the first success (n >= 1); ours counts failures (n >= 0).
    return gen.geometric(p, size) - 1


def _dlap(gen: np.random.Generator, params, size: int) -> Array:
    # X - Y for X, Y ~ Geo(1 - e^-a) on n >= 0 has mass proportional to e^(-a|n|).
    p = -np.expm1(-np.asarray(params[0], dtype=float))
    return _geo(gen, p, size) - _geo(gen, p, size)


def _staircase(gen: np.random.Generator, params, size: int) -> Array:
    """Geng & Viswanath, "The optimal noise-adding mechanism in differential privacy" (sensitivity Δ = 1).

    S = ±1 with probability 1/2; G ~ Geo(1 - b) on n >= 0 with b = e^-eps; U ~ Uniform[0, 1];
    B = 1 with probability (1-γ)b / (γ + (1-γ)b); X = S((1-B)(G + γU) + B(G + γ + (1-γ)U)).
    The density is a(γ) on [0, γ), a(γ)e^-eps on [γ, 1), repeated with factor e^-eps per unit and mirrored,
    where a(γ) = (1 - b) / (2(γ + (1-γ)b)).
    """
    eps, gamma = (np.asarray(x, dtype=float) for x in params)
    b = np.exp(-eps)
    sign = np.where(gen.random(size) < 0.5, -1.0, 1.0)
    g = _geo(gen, -np.expm1(-eps), size).astype(float)
    u = gen.random(size)
    upper = gen.random(size) < (1 - gamma) * b / (gamma + (1 - gamma) * b)
    return sign * np.where(upper, g + gamma + (1 - gamma) * u, g + gamma * u)


def _truncnorm(gen: np.random.Generator, params, size: int) -> Array:
    from scipy.stats import truncnorm

    mu, sigma, a, b = (np.asarray(x, dtype=float) for x in params)
    lo, hi = (a - mu) / sigma, (b - mu) / sigma
    degenerate = ~(lo < hi)
    if not degenerate.any():
        return np.asarray(truncnorm.rvs(lo, hi, loc=mu, scale=sigma, size=size, random_state=gen), dtype=float)
    # mu so far from [a, b] (|mu| near 2^63, say) that both ends standardise to one double: scipy refuses the
    # empty interval, but all the mass lies within rounding of the end nearest mu, which is then the sample.
    near = np.broadcast_to(np.where(mu < a, a, b), (size,))
    safe = np.asarray(truncnorm.rvs(np.where(degenerate, 0.0, lo), np.where(degenerate, 1.0, hi), loc=mu,
                                    scale=sigma, size=size, random_state=gen), dtype=float)
    return np.where(np.broadcast_to(degenerate, (size,)), near, safe)


def _build() -> dict[str, Sampler]:
    d = DISTRIBUTIONS
    samplers = [
        Sampler(d["Lap"], (1.0,), lambda g, p, n: g.laplace(0.0, p[0], n)),
        Sampler(d["Exp"], (1.0,), lambda g, p, n: g.exponential(p[0], n)),
        Sampler(d["Geo"], (0.5,), lambda g, p, n: _geo(g, p[0], n)),
        Sampler(d["DLap"], (1.0,), _dlap),
        Sampler(d["Staircase"], (1.0, 0.5), _staircase),
        Sampler(d["Logistic"], (0.0, 1.0), lambda g, p, n: g.logistic(p[0], p[1], n)),
        Sampler(d["Gumbel"], (0.0, 1.0), lambda g, p, n: g.gumbel(p[0], p[1], n)),
        Sampler(d["Uniform"], (0.0, 1.0), lambda g, p, n: g.uniform(p[0], p[1], n)),
        Sampler(d["Gamma"], (1.0, 1.0), lambda g, p, n: g.gamma(p[0], p[1], n)),
        Sampler(d["Bernoulli"], (0.5,), lambda g, p, n: (g.random(n) < p[0]).astype(np.int64)),
        Sampler(d["Point"], (0.0,), lambda g, p, n: np.broadcast_to(np.asarray(p[0], dtype=float), (n,)).copy()),
        Sampler(d["Normal"], (0.0, 1.0), lambda g, p, n: g.normal(p[0], p[1], n)),
        Sampler(d["TruncNormal"], (0.0, 1.0, -1.0, 1.0), _truncnorm),
    ]
    result = {s.dist.name: s for s in samplers}
    missing = set(DISTRIBUTIONS) - set(result)
    assert not missing, f"no sampler for {sorted(missing)}"
    return result


SAMPLERS: dict[str, Sampler] = _build()


@dataclass(frozen=True)
class ParameterProblem:
    """The first lane whose parameters a distribution rejects."""

    lane: int
    param: int
    requirement: str
    value: float


def parameter_checks(sampler: Sampler, params: tuple[Array, ...]) -> list[tuple[Array, int, str]]:
    """Every requirement on the parameters, as (lanes where it fails, parameter position, requirement)."""
    with np.errstate(invalid="ignore"):
        result = [(~np.isfinite(p), i, "a finite number") for i, p in enumerate(params)]
        result += [(np.asarray(~check.ok(params)), check.param, check.requirement) for check in sampler.checks]
    return result


def check_parameters(sampler: Sampler, params: tuple[Array, ...], active: Array | None) -> ParameterProblem | None:
    """The first active lane with an invalid parameter (not finite, or failing a check), or None.

    `params` are float arrays of shape (1,) (uniform over lanes) or (n,); `active` is None (every lane) or a
    boolean mask.
    """
    with np.errstate(invalid="ignore"):
        for i, p in enumerate(params):
            bad = ~np.isfinite(p)
            problem = _first(bad, active, p, i, "a finite number")
            if problem:
                return problem
        for check in sampler.checks:
            problem = _first(np.asarray(~check.ok(params)), active, params[check.param], check.param,
                             check.requirement)
            if problem:
                return problem
    return None


def _first(bad: Array, active: Array | None, values: Array, param: int, requirement: str) -> ParameterProblem | None:
    lanes = max(bad.shape[0], active.shape[0] if active is not None else 1)
    bad = np.broadcast_to(bad, (lanes,))
    if active is not None:
        bad = bad & active
    if not bad.any():
        return None
    lane = int(np.argmax(bad))
    value = values[lane if values.shape[0] > 1 else 0]
    return ParameterProblem(lane, param, requirement, float(value))


def sanitize(sampler: Sampler, params: tuple[Array, ...], active: Array | None) -> tuple:
    """Parameters for drawing: uniform ones as floats, per-lane ones with inactive lanes set to valid defaults."""
    result = []
    for p, default in zip(params, sampler.defaults):
        if p.shape[0] == 1:
            result.append(float(p[0]))
        elif active is None:
            result.append(p.astype(float, copy=False))
        else:
            result.append(np.where(active, p, default).astype(float, copy=False))
    return tuple(result)


def draw_block_values(sampler: Sampler, root: np.random.SeedSequence, site: int, member: int, start: int,
                      count: int, params: tuple) -> Array:
    """Values number start .. start + count - 1 of the run for one site member (start is a multiple of BLOCK)."""
    if start % BLOCK:
        raise ValueError(f"chunks start at multiples of {BLOCK}, not at {start}")
    pieces = []
    for offset in range(0, count, BLOCK):
        size = min(BLOCK, count - offset)
        block_params = tuple(p[offset:offset + size] if isinstance(p, np.ndarray) else p for p in params)
        gen = stream(root, (start + offset) // BLOCK, site, member)
        pieces.append(np.asarray(sampler.draw(gen, block_params, size)))
    values = pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
    return values.astype(np.int64 if sampler.dist.integer else float, copy=False)


# --------------------------------------------------------------------------- costs and supports (alignment)


@lru_cache(maxsize=None)
def cost_function(name: str, arity: int) -> Callable[..., Array] | None:
    """c as a numpy function of the site's parameters, from the distribution's own (sympy) cost rule.

    None for a distribution that is not Lipschitz (Lemma 1 condition 3 needs its shift to be 0).
    """
    dist = DISTRIBUTIONS[name]
    if dist.cost is None:
        return None
    symbols = sympy.symbols(f"p0:{arity}", real=True)
    expr = dist.cost(tuple(symbols))
    return sympy.lambdify(symbols, expr, modules="numpy")


def cost_coefficient(name: str, params: Sequence) -> Array | None:
    """c_i evaluated numerically at the parameters actually used (written ones only: defaults are the rule's own)."""
    f = cost_function(name, len(params))
    if f is None:
        return None
    with np.errstate(all="ignore"):
        return np.asarray(f(*(np.asarray(p, dtype=float) for p in params)), dtype=float)


def in_support(name: str, params: tuple, x: Array) -> Array:
    """Elementwise: whether x lies in the support of the distribution with these (full) parameters
    (`Distribution.values`, the declaration the checker's z3 assumptions also come from)."""
    x = np.asarray(x)
    support = DISTRIBUTIONS[name].values
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(x)
        if support.integer:
            ok = ok & (np.floor(x) == x)
        return np.asarray(support.contains(x, params, np.logical_and, ok), dtype=bool)


def is_whole(x: Array, tolerance: float = 1e-9) -> Array:
    """Whether shifts are whole numbers, up to float rounding of the shift's own arithmetic (relative 1e-9)."""
    x = np.asarray(x)
    if x.dtype.kind in "iub":
        return np.ones(x.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        return np.isfinite(x) & (np.abs(x - np.round(x)) <= tolerance * np.maximum(1.0, np.abs(x)))
