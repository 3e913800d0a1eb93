"""align/stats/bounds.py: the exact test and the Clopper–Pearson bounds hold their stated error rates, and the
epsilon lower bound is the exact test inverted (the decision and the bound are one test).

Each coverage check draws many synthetic binomial/Poisson experiments with a fixed seed and compares the rate of
false statements with the nominal level, allowing three binomial standard deviations for the finite
repetitions.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from align.stats.bounds import (
    clopper_pearson,
    epsilon_lower_bound,
    lower_bound,
    p_value,
    separate_epsilon_lower_bound,
    upper_bound,
)

REPS = 4000


def _allowed(rate: float, reps: int = REPS) -> float:
    return rate + 3 * math.sqrt(rate * (1 - rate) / reps)


@pytest.mark.parametrize("p,n", [(0.3, 200), (0.01, 1000), (0.9, 50)])
def test_clopper_pearson_one_sided_bounds_cover(p, n):
    rng = np.random.default_rng(1)
    c = rng.binomial(n, p, size=REPS)
    assert np.mean(lower_bound(c, n, 0.05) > p) <= _allowed(0.05)
    assert np.mean(upper_bound(c, n, 0.05) < p) <= _allowed(0.05)


def test_bounds_of_many_counts_are_each_counts_own():
    """lower_bound and upper_bound take the beta quantile once per distinct count when one n serves many: each
    entry is the bound of its count alone, bit for bit, in the counts' shape."""
    rng = np.random.default_rng(3)
    c = rng.binomial(300, 0.2, size=(50, 40))
    for bound in (lower_bound, upper_bound):
        many = bound(c, 300, 0.01)
        assert many.shape == c.shape
        assert all(many[i, j] == bound(int(c[i, j]), 300, 0.01) for i in range(50) for j in range(40))


def test_clopper_pearson_extremes_and_two_sided():
    assert lower_bound(0, 100, 0.05) == 0.0
    assert upper_bound(100, 100, 0.05) == 1.0
    assert upper_bound(0, 100, 0.05) == pytest.approx(1 - 0.05 ** (1 / 100))
    lo, hi = clopper_pearson(10, 100)
    assert lo == pytest.approx(lower_bound(10, 100, 0.025), rel=1e-6)
    assert hi == pytest.approx(upper_bound(10, 100, 0.025), rel=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("p2,eps", [(0.01, 0.5), (0.05, 1.0), (0.002, 2.0)])
def test_p_value_is_valid_on_the_boundary_of_h0(p2, eps):
    """Poissonised counts with P1 = e^eps P2 (the least favourable case): reject at 5% at most 5% of the time."""
    rng = np.random.default_rng(2)
    n, reps = 5000, 20000
    p1 = math.exp(eps) * p2
    sizes = rng.poisson(n, size=(reps, 2))
    c1, c2 = rng.binomial(sizes[:, 0], p1), rng.binomial(sizes[:, 1], p2)
    pvalues = np.asarray([p_value(int(a), n, int(b), n, eps) for a, b in zip(c1, c2)])
    assert np.mean(pvalues <= 0.05) <= _allowed(0.05, reps)
    assert np.mean(pvalues <= 0.01) <= _allowed(0.01, reps)


def test_p_value_has_power_against_a_larger_loss():
    rng = np.random.default_rng(3)
    n, eps, p2 = 20000, 0.5, 0.01
    p1 = math.exp(2 * eps) * p2
    small = [p_value(int(rng.binomial(rng.poisson(n), p1)), n, int(rng.binomial(rng.poisson(n), p2)), n, eps)
             for _ in range(200)]
    assert np.mean(np.asarray(small) <= 0.05) > 0.95


def test_p_value_extremes():
    assert p_value(0, 100, 5, 100, 1.0) == 1.0
    assert p_value(50, 1000, 0, 1000, 1.0) < 1e-6  # support mismatch
    assert 0 < p_value(10, 1000, 0, 1000, 1000.0) <= 1.0  # a huge claimed eps stays finite


@pytest.mark.parametrize("p1,p2,informative", [(0.05, 0.02, 0.3), (0.6, 0.3, 0.5), (0.002, 0.002, -2.0)])
def test_epsilon_lower_bound_covers_the_true_loss(p1, p2, informative):
    # Poissonised sizes, as the search draws them; large probabilities included (0.6 against 0.3), where the
    # conditional binomial law holds only because the sizes are Poisson
    rng = np.random.default_rng(4)
    n = 3000
    true = math.log(p1 / p2)
    sizes = rng.poisson(n, size=(REPS, 2))
    c1, c2 = rng.binomial(sizes[:, 0], p1), rng.binomial(sizes[:, 1], p2)
    bounds = epsilon_lower_bound(c1, n, c2, n, 0.05)
    assert np.mean(bounds > true) <= _allowed(0.05)
    assert np.median(bounds) > informative  # and it is informative (about 6 samples each in the last case)
    # stronger than two separate Clopper–Pearson bounds at the same level (the old reported bound), in the
    # median; for large probabilities not on every sample (the Poisson sizes add variance: n P, not n P (1 - P))
    separate = separate_epsilon_lower_bound(c1, sizes[:, 0], c2, sizes[:, 1], 0.05)
    finite = np.isfinite(bounds) & np.isfinite(separate)
    assert np.median(bounds[finite] - separate[finite]) > 0


def test_support_mismatch_bound_is_finite_and_grows_without_cap():
    small = float(epsilon_lower_bound(500, 1000, 0, 1000, 0.05))
    large = float(epsilon_lower_bound(500_000, 1_000_000, 0, 1_000_000, 0.05))
    assert math.isfinite(small) and math.isfinite(large)
    assert large > small + 6  # about ln(1000) more: no cap at ln(1/c) as in DP-Sniper
    assert large > 4.6
    # c2 = 0: p_L = delta^(1/c1), so eps_L = ln(p_L / (1 - p_L)) in closed form
    p_low = 0.05 ** (1 / 500)
    assert small == pytest.approx(math.log(p_low / (1 - p_low)), rel=1e-9)
    assert float(epsilon_lower_bound(0, 1000, 0, 1000, 0.05)) == -math.inf
    assert float(epsilon_lower_bound(0, 1000, 7, 1000, 0.05)) == -math.inf


# The duality that makes the verdict and the reported bound one test: p_value(eps) <= delta exactly when
# eps <= epsilon_lower_bound at level delta (Clopper–Pearson inverts the binomial tail). Checked on a grid of
# counts (c2 = 0 and large counts included), unequal means, and levels down to a Bonferroni-adjusted 1e-6.
DUALITY_COUNTS = [(1, 0), (3, 0), (40, 0), (10**6, 0), (1, 1), (5, 2), (17, 30), (200, 150), (1000, 10),
                  (567_899, 28), (10**6, 10**5), (2, 10**4)]
DUALITY_MEANS = [(2000, 2000), (1000, 3000), (64_000, 16_000)]
DUALITY_LEVELS = [0.05, 0.05 / 90, 1e-6]


@pytest.mark.parametrize("c1,c2", DUALITY_COUNTS)
def test_the_bound_is_the_exact_test_inverted(c1, c2):
    grid = np.linspace(-12.0, 16.0, 57)
    for n1, n2 in DUALITY_MEANS:
        for delta in DUALITY_LEVELS:
            bound = float(epsilon_lower_bound(c1, n1, c2, n2, delta))
            assert math.isfinite(bound)  # c1 > 0: finite, also when c2 = 0
            # just below the bound the test rejects, just above it does not
            h = 1e-7 * max(1.0, abs(bound))
            assert p_value(c1, n1, c2, n2, bound - h) <= delta < p_value(c1, n1, c2, n2, bound + h), (
                n1, n2, delta, bound)
            # and on the whole grid of claims the two decisions agree
            for eps in grid[np.abs(grid - bound) > h]:
                assert (p_value(c1, n1, c2, n2, float(eps)) <= delta) == (eps <= bound), (n1, n2, delta, eps)


def test_no_evidence_rejects_nothing():
    for n1, n2 in DUALITY_MEANS:
        assert float(epsilon_lower_bound(0, n1, 5, n2, 0.05)) == -math.inf
        assert all(p_value(0, n1, 5, n2, eps) == 1.0 for eps in (-5.0, 0.0, 5.0))


def test_the_bound_is_vectorised_like_its_scalar_form():
    c1, c2 = np.array([0, 1, 40, 17, 10**6]), np.array([3, 0, 0, 30, 10**5])
    together = epsilon_lower_bound(c1, 2000, c2, 2000, 0.01)
    alone = [float(epsilon_lower_bound(a, 2000, b, 2000, 0.01)) for a, b in zip(c1, c2)]
    assert np.array_equal(together, np.asarray(alone))


@pytest.mark.parametrize("low, high, width", [(-1, 3, 13), (-1, 10**6, 4), (0, 2**40, 3), (-1, 2, 1)])
def test_unique_rows_is_numpys_row_unique(low, high, width):
    # the packed unique must give the same rows, order, inverse and counts (the candidates' indices, hence the
    # chosen events, depend on that order); the last-but-one case overflows 62 bits and takes numpy's path
    from align.stats.events import unique_rows

    rng = np.random.default_rng(width)
    keys = np.repeat(rng.integers(low, high, size=(300, width)), 7, axis=0)
    rng.shuffle(keys)
    rows, inverse, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    ours = unique_rows(keys)
    assert np.array_equal(ours[0], rows) and np.array_equal(ours[1], inverse.ravel())
    assert np.array_equal(ours[2], counts)
    assert np.array_equal(ours[0][ours[1]], keys)


@pytest.mark.slow
@pytest.mark.parametrize("varying", [False, True])
def test_every_candidate_event_is_scored_on_its_own_counts(varying):
    # candidates() counts events in bulk (sorted thresholds, bins as differences, packed discrete rows) and
    # builds each Event only when chosen: with no limit on the number chosen, every event's selection score
    # must be the bound of the counts that Event.contains gives, and, for a claim that reads the output, its
    # eps the largest claim over the samples in it
    from align.interp.outputs import DiscreteKeys
    from align.interp.runner import prepare_arguments, sample
    from align.parse import parse_source, read_source
    from align.resolve import resolve
    from align.stats.events import SELECTION_DELTA, Layout, candidates

    path = "specs/incorrect/svt_gap_outputs_noisy_query.dp"
    from pathlib import Path

    mech = resolve(parse_source(read_source(str(Path(__file__).resolve().parent.parent / path)))).mechanisms[0]
    public = {"T": 1.0, "k": 2, "eps": 1.0, "theta": 0.5}
    s1 = sample(mech, prepare_arguments(mech, {**public, "q": [1.0, 1, 1]}), 400, np.random.SeedSequence(1))
    s2 = sample(mech, prepare_arguments(mech, {**public, "q": [2.0, 0, 2]}), 400, np.random.SeedSequence(2))
    layout = Layout.of(s1, max(s1.positions, s2.positions))
    k1, r1, k2, r2 = layout.keys(s1), layout.reals(s1), layout.keys(s2), layout.reals(s2)
    rng = np.random.default_rng(3)
    e1, e2 = (rng.uniform(0, 2, 400), rng.uniform(0, 2, 400)) if varying else (None, None)
    chosen = candidates(layout, DiscreteKeys(mech.output_type, mech.tags), k1, r1, k2, r2, 10**7, 1.0,
                        e1, e2)
    kinds = {"bin": 0, "threshold": 0, "key": 0, "entry": 0}
    for c in chosen:
        in1, in2 = c.event.contains(k1, r1), c.event.contains(k2, r2)
        a, b = (in1.sum(), in2.sum()) if c.forward else (in2.sum(), in1.sum())
        assert c.level == chosen[0].level <= SELECTION_DELTA / len(chosen)  # simultaneous over the candidates
        assert c.score == pytest.approx(float(separate_epsilon_lower_bound(a, 400, b, 400, c.level)), rel=1e-12)
        if varying:
            assert c.eps == pytest.approx(max(e1[in1].max(initial=-np.inf), e2[in2].max(initial=-np.inf)))
        e = c.event
        kinds["bin" if e.lower is not None else "threshold" if e.real is not None else
              "key" if e.key is not None else "entry"] += 1
    assert all(n > 10 for n in kinds.values()), kinds
