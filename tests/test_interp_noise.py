"""Noise: every distribution's parameterisation, its parameter checks, and the seeding scheme.

Moments are checked on N draws with fixed seeds; a tolerance of 6 standard errors makes a false alarm
impossible in practice (and the seeds make the test deterministic anyway).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from align.distributions import DISTRIBUTIONS
from align.interp.errors import RunError
from align.interp.noise import BLOCK, check_parameters, cost_coefficient, draw_block_values, in_support
from align.interp.runner import prepare_arguments, sample
from align.parse import parse_source, read_source
from align.resolve import resolve
from align.span import Source

from .conftest import SPECS

N = 100_000


def draw(name: str, *params: float, n: int = N, seed: int = 1) -> np.ndarray:
    sampler = DISTRIBUTIONS[name]
    full = sampler.full_params([np.asarray([p], dtype=float) for p in params])
    full = tuple(np.asarray(p, dtype=float).reshape(-1) for p in full)
    assert check_parameters(sampler, full, None) is None
    return draw_block_values(sampler, np.random.SeedSequence(seed), 0, 0, 0, n,
                             tuple(float(p[0]) for p in full))


def close(sample_mean: float, mean: float, sd: float, n: int = N) -> bool:
    return abs(sample_mean - mean) <= 6 * sd / math.sqrt(n)


def mechanism(text: str):
    return resolve(parse_source(Source("test.dp", text))).mechanisms[0]


def test_every_distributions_defaults_are_well_formed_and_draw():
    for name, dist in DISTRIBUTIONS.items():
        params = tuple(np.asarray([p]) for p in dist.defaults)
        assert check_parameters(dist, params, None) is None, name
        assert in_support(dist, dist.defaults, draw(name, *dist.defaults, n=100)).all(), name


def test_laplace_has_scale_b():
    x = draw("Lap", 2.0)
    assert close(x.mean(), 0, math.sqrt(8)) and close(np.abs(x).mean(), 2, 2)


def test_exponential_has_mean_b():
    x = draw("Exp", 3.0)
    assert x.min() >= 0 and close(x.mean(), 3, 3)


def test_geometric_counts_failures_from_zero():
    p = 0.3
    x = draw("Geo", p)
    assert x.dtype == np.int64 and x.min() == 0
    assert close((x == 0).mean(), p, math.sqrt(p * (1 - p)))
    assert close(x.mean(), (1 - p) / p, math.sqrt(1 - p) / p)
    # Free Gap Algorithm 3 centres Geo(p) noise with b = 1/p, the mean on n >= 1: ours is exactly 1 less.
    assert close(x.mean() + 1, 1 / p, math.sqrt(1 - p) / p)


def test_two_sided_geometric_has_mass_proportional_to_exp_minus_a_abs_n():
    a = 0.7
    x = draw("DLap", a)
    assert x.dtype == np.int64
    p0 = math.tanh(a / 2)
    assert close((x == 0).mean(), p0, math.sqrt(p0 * (1 - p0)))
    p1 = p0 * math.exp(-a)
    assert close((x == 1).mean(), p1, math.sqrt(p1)) and close((x == -1).mean(), p1, math.sqrt(p1))
    assert close(x.mean(), 0, x.std())


def test_staircase_follows_its_density():
    eps, gamma = 1.0, 0.3
    x = draw("Staircase", eps, gamma)
    b = math.exp(-eps)
    a = (1 - b) / (2 * (gamma + (1 - gamma) * b))
    for lo, hi, mass in [(0, gamma, a * gamma), (gamma, 1, a * b * (1 - gamma)),
                         (1, 1 + gamma, a * b * gamma), (-gamma, 0, a * gamma), (-1 - gamma, -1, a * b * gamma),
                         (-1, -gamma, a * b * (1 - gamma))]:
        got = ((x >= lo) & (x < hi)).mean()
        assert close(got, mass, math.sqrt(mass * (1 - mass))), (lo, hi, got, mass)


@pytest.mark.parametrize("name,params,mean,sd", [
    ("Logistic", (1.0, 2.0), 1.0, 2 * math.pi / math.sqrt(3)),
    ("Logistic", (1.0,), 1.0, math.pi / math.sqrt(3)),
    ("Gumbel", (1.0, 2.0), 1 + 2 * np.euler_gamma, 2 * math.pi / math.sqrt(6)),
    ("Gumbel", (0.0,), np.euler_gamma, math.pi / math.sqrt(6)),
    ("Uniform", (-1.0, 3.0), 1.0, 4 / math.sqrt(12)),
    ("Gamma", (2.0, 0.5), 1.0, math.sqrt(0.5)),
    ("Normal", (1.0, 2.0), 1.0, 2.0),
])
def test_location_scale_families(name, params, mean, sd):
    x = draw(name, *params)
    assert close(x.mean(), mean, sd)
    assert abs(x.std() - sd) < 0.02 * sd


def test_bernoulli_is_an_int_in_0_1():
    x = draw("Bernoulli", 0.3)
    assert x.dtype == np.int64 and set(np.unique(x)) <= {0, 1} and close(x.mean(), 0.3, math.sqrt(0.21))


def test_truncated_normal_stays_in_its_interval():
    mu, sigma, lo, hi = 1.0, 0.5, 0.0, 3.0
    x = draw("TruncNormal", mu, sigma, lo, hi)
    assert x.min() >= lo and x.max() <= hi
    dist = stats.truncnorm((lo - mu) / sigma, (hi - mu) / sigma, loc=mu, scale=sigma)
    assert close(x.mean(), dist.mean(), dist.std())


def test_point_is_a_constant():
    assert set(draw("Point", 2.5, n=100)) == {2.5}


@pytest.mark.parametrize("name,params,param,requirement", [
    ("Lap", (0.0,), 0, "positive"), ("Lap", (math.inf,), 0, "a finite number"),
    ("Lap", (math.nan,), 0, "a finite number"),
    ("Exp", (-1.0,), 0, "positive"), ("Geo", (0.0,), 0, "in (0, 1)"), ("Geo", (1.0,), 0, "in (0, 1)"),
    ("DLap", (0.0,), 0, "positive"), ("Staircase", (0.0, 0.5), 0, "positive"),
    ("Staircase", (1.0, 1.5), 1, "in [0, 1]"),
    ("Logistic", (0.0, 0.0), 1, "positive"), ("Gumbel", (0.0, -1.0), 1, "positive"),
    ("Uniform", (1.0, 1.0), 1, "greater than a"), ("Gamma", (0.0, 1.0), 0, "positive"),
    ("Gamma", (1.0, 0.0), 1, "positive"),
    ("Bernoulli", (1.5,), 0, "in [0, 1]"), ("Normal", (0.0, 0.0), 1, "positive"),
    ("TruncNormal", (0.0, 1.0, 2.0, 1.0), 3, "greater than a"),
])
def test_invalid_parameters_are_named(name, params, param, requirement):
    sampler = DISTRIBUTIONS[name]
    problem = check_parameters(sampler, tuple(np.asarray([p]) for p in sampler.full_params(params)), None)
    assert problem is not None and (problem.param, problem.requirement) == (param, requirement)


def test_an_invalid_parameter_is_a_located_error_on_the_lanes_that_draw():
    mech = mechanism("mechanism m(b: real) privacy 1 {\n  x ~ Lap(1)\n  if x > 100 { y ~ Exp(b - 1) output y }\n"
                     "  output x\n}\n")
    # b - 1 = 0 is invalid, but only a lane with x > 100 (probability e^-100 / 2) would draw from it.
    sample(mech, prepare_arguments(mech, {"b": 1}), 1000, seed=1)
    mech = mechanism("mechanism m(b: real) privacy 1 {\n  x ~ Lap(1)\n  if x > 0 { y ~ Exp(b - 1) output y }\n}\n")
    with pytest.raises(RunError) as info:
        sample(mech, prepare_arguments(mech, {"b": 1}), 1000, seed=1)
    d = info.value.diagnostic
    assert d.code == "invalid-distribution-parameter" and (d.span.line, d.span.column) == (3, 22)
    assert d.message == "the parameter b of Exp must be positive, but it is 0"
    assert any("in sample" in note.message for note in d.notes)


def test_cost_coefficients_follow_the_distribution_table():
    assert cost_coefficient(DISTRIBUTIONS["Lap"], (np.asarray([4.0]),))[0] == 0.25
    assert cost_coefficient(DISTRIBUTIONS["Exp"], (np.asarray([2.0]),))[0] == 0.5
    assert abs(cost_coefficient(DISTRIBUTIONS["Geo"], (np.asarray([1 - math.exp(-0.3)]),))[0] - 0.3) < 1e-12
    assert cost_coefficient(DISTRIBUTIONS["DLap"], (np.asarray([0.7]),))[0] == 0.7
    assert cost_coefficient(DISTRIBUTIONS["Staircase"], (np.asarray([0.9]), np.asarray([0.5])))[0] == 0.9
    assert cost_coefficient(DISTRIBUTIONS["Logistic"], (np.asarray([0.0]),)) == 1.0
    assert cost_coefficient(DISTRIBUTIONS["Logistic"], (np.asarray([0.0]), np.asarray([4.0])))[0] == 0.25
    assert cost_coefficient(DISTRIBUTIONS["Gumbel"], (np.asarray([0.0]),)) is None


def test_supports():
    x = np.asarray([-1.0, 0.0, 0.5, 1.0, 2.0])
    assert list(in_support(DISTRIBUTIONS["Exp"], (1.0,), x)) == [False, True, True, True, True]
    assert list(in_support(DISTRIBUTIONS["Geo"], (0.5,), x)) == [False, True, False, True, True]
    assert list(in_support(DISTRIBUTIONS["Bernoulli"], (0.5,), x)) == [False, True, False, True, False]
    assert list(in_support(DISTRIBUTIONS["Uniform"], (0.0, 1.0), x)) == [False, True, True, True, False]
    assert list(in_support(DISTRIBUTIONS["Lap"], (1.0,), x)) == [True] * 5


# ------------------------------------------------------------------------------------------------ seeding

SVT = SPECS / "freegap" / "alg2_svt_gap.dp"


def _svt():
    mech = resolve(parse_source(read_source(str(SVT)))).mechanisms[0]
    return mech, prepare_arguments(mech, {"q": [3, 1, 4, 1, 5], "T": 3, "k": 2, "eps": 1, "theta": 0.5})


def _same(a, b) -> bool:
    return np.array_equal(a.discrete_keys(), b.discrete_keys()) and \
        np.array_equal(a.real_values(), b.real_values(), equal_nan=True)


def test_the_same_seed_gives_the_same_samples_whatever_the_chunk_size():
    mech, args = _svt()
    n = 2 * BLOCK + 77
    reference = sample(mech, args, n, seed=9)
    for chunk_size in (1, BLOCK, 3 * BLOCK, 10 ** 6):
        assert _same(sample(mech, args, n, seed=9, chunk_size=chunk_size), reference), chunk_size
    assert not _same(sample(mech, args, n, seed=10), reference)


def test_a_shorter_run_is_a_prefix_and_global_state_is_never_used():
    mech, args = _svt()
    long = sample(mech, args, 3000, seed=4)
    np.random.seed(123)
    short = sample(mech, args, 1000, seed=4)
    np.random.seed(456)
    assert _same(short, long.take(np.arange(1000)))


def test_a_scale_mixture_draws_a_laplace_scale_per_sample():
    """R²DP: w ~ Lap(1/u) with u ~ Gamma(k, theta) per sample. E[w^2] = 2 E[u^-2] = 2 / (theta^2 (k-1)(k-2))."""
    mech = resolve(parse_source(read_source(str(SPECS / "r2dp" / "gamma.dp")))).mechanisms[0]
    k, theta = 6.0, 0.5
    out = sample(mech, prepare_arguments(mech, {"q": 0, "k": k, "theta": theta, "dq": 1}), N, seed=3)
    w = out.real_values()[:, 0]
    second = 2 / (theta ** 2 * (k - 1) * (k - 2))
    fourth = 24 / (theta ** 4 * (k - 1) * (k - 2) * (k - 3) * (k - 4))
    assert close((w ** 2).mean(), second, math.sqrt(fourth - second ** 2))
    # Point(1/b0) makes it the plain Laplace mechanism with scale b0: E|w| = b0.
    mech = resolve(parse_source(read_source(str(SPECS / "r2dp" / "point_mass.dp")))).mechanisms[0]
    w = sample(mech, prepare_arguments(mech, {"q": 0, "b0": 2, "dq": 1}), N, seed=3).real_values()[:, 0]
    assert close(np.abs(w).mean(), 2, 2)
