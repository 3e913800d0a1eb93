"""The fast versions of the reproductions under bench/papers/ (docs/reproductions.md): each script runs with
few trials and a fixed seed, and must reach the verdict recorded for it (every row's theory inside the row's
99 % interval where the seed's claim is reproduced; the documented disagreement where it is not), and write a
small PNG plot.

Error rates: a row's interval misses a true theory with probability 1 % (Clopper–Pearson or t intervals);
the seeds are fixed, so a test's outcome is fixed too — a failure after a code change means that change moved a
measured value outside its interval, not bad luck. A script's `TRIALS` here is its fast size; the benchmark
size is its command line's default.
"""

from __future__ import annotations

import pytest

from .conftest import load_bench

pytestmark = pytest.mark.slow  # statistical: `pytest -m "not slow"` skips it

FAST = {
    "papers/lemma3_coverage.py": 40_000,
}
"""Each reproduction's script and the trials of its fast version."""

PLOT_LIMIT = 150_000
"""Bytes: the committed plots stay small (docs/reproductions/*.png)."""


@pytest.mark.parametrize("script", sorted(FAST))
def test_fast_reproduction_reaches_the_recorded_verdict(script, tmp_path):
    claim = load_bench("papers/_claim.py")
    module = load_bench(script)
    result = module.reproduce(FAST[script], 0)
    assert result.rows, script
    assert result.verdict is result.expected, result.report()
    path = tmp_path / "plot.png"
    module.plot(result, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert 0 < path.stat().st_size < PLOT_LIMIT
    assert claim.PLOTS.joinpath(f"{result.name}.png").is_file(), "the full run's plot is committed"


def test_intervals_cover_at_their_stated_rate():
    """Estimate.proportion and Estimate.mean: over 400 repetitions with a known truth, a 99 % interval misses
    about 4 times (binomial(400, 0.01): P(misses > 12) < 1e-4)."""
    import numpy as np

    claim = load_bench("papers/_claim.py")
    rng = np.random.default_rng(7)
    misses_p = sum(not claim.Estimate.proportion(int(rng.binomial(500, 0.3)), 500).covers(0.3) for _ in range(400))
    misses_m = sum(not claim.Estimate.mean(rng.exponential(2.0, 300)).covers(2.0) for _ in range(400))
    x = rng.normal(3.0, 1.0, (400, 300))
    y = x + rng.normal(3.0, 1.0, (400, 300))
    misses_r = sum(not claim.Estimate.ratio_of_means(a, b).covers(0.5) for a, b in zip(x, y))
    assert misses_p <= 12 and misses_m <= 12 and misses_r <= 12, (misses_p, misses_m, misses_r)
    assert misses_p + misses_m + misses_r >= 1  # an interval that never misses is too wide to be 99 %


def test_a_row_outside_its_interval_makes_the_verdict_disagree():
    claim = load_bench("papers/_claim.py")
    inside = claim.Row({"x": 1}, 0.5, claim.Estimate(0.5, 0.4, 0.6, 100))
    outside = claim.Row({"x": 2}, 0.7, claim.Estimate(0.5, 0.4, 0.6, 100))
    unstated = claim.Row({"x": 3}, None, claim.Estimate(0.5, 0.4, 0.6, 100))
    agree = claim.Reproduction("t", "s", "c", [inside, unstated], claim.Verdict.AGREES)
    disagree = claim.Reproduction("t", "s", "c", [inside, outside, unstated], claim.Verdict.AGREES)
    assert agree.verdict is claim.Verdict.AGREES
    assert disagree.verdict is claim.Verdict.DISAGREES
    assert "NO" in disagree.table() and "verdict: disagrees (1/2 rows" in disagree.report()
