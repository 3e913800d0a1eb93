"""Statistics (bounds): Clopper–Pearson bounds, the exact test of P1 <= e^eps P2, and the epsilon lower bound.

The test. Let an event E have probability P1 under M(D) and P2 under M(D'). We draw N1 ~ Poisson(n1) samples
of M(D) and N2 ~ Poisson(n2) samples of M(D') (Poissonisation: the sample *sizes* are random, drawn from the
run's seed) and count c1, c2 samples in E. Then c1 ~ Poisson(n1 P1) and c2 ~ Poisson(n2 P2) exactly and
independently, and conditionally on c1 + c2 = t,

    c1 | t  ~  Binomial(t, p),   p = n1 P1 / (n1 P1 + n2 P2).

p increases with P1 / P2, so under H0: P1 <= e^eps P2 it is at most p0 = e^eps n1 / (e^eps n1 + n2), and
Binomial(t, p) is stochastically smaller than Binomial(t, p0). Hence

    p-value = P[Binomial(c1 + c2, p0) >= c1]

is a valid (conservative under H0's interior, exact on its boundary) p-value of the one-sided test, for every
t, hence unconditionally. This is the conditional test of two Poisson rates (Przyborowski & Wilenski 1940);
with fixed sample sizes it would only be the large-n approximation of the Fisher-type test StatDP uses (with
fixed sizes the conditional law is a noncentral hypergeometric whose odds ratio P1(1-P2)/(P2(1-P1)) exceeds
P1/P2, so the binomial bound would not be conservative for large probabilities). Poissonisation makes it
exact at no cost.

The bound. Conditionally on N1, c1 ~ Binomial(N1, P1), so Clopper–Pearson (exact, via beta quantiles) gives
lcb(P1) at level 1 - delta/2 and ucb(P2) at level 1 - delta/2; with probability >= 1 - delta both hold and

    eps_true >= ln(P1 / P2) >= ln(lcb(P1)) - ln(ucb(P2)).

Nothing caps it (DP-Sniper's cap ln(1/c) does not apply). When c2 = 0 and c1 > 0 the event was never seen
under D': a *support mismatch* (evidence that eps is infinite); ucb(P2) = 1 - (delta/2)^(1/N2) > 0 keeps the
bound finite, about ln(lcb(P1) N2 / ln(2/delta)), and it grows with the samples without limit.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


def lower_bound(c, n, delta):
    """One-sided Clopper–Pearson lower confidence bound on a binomial p at level 1 - delta (vectorised)."""
    c, n = np.asarray(c, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = stats.beta.ppf(delta, np.maximum(c, 1e-300), n - c + 1)
    return np.where(c > 0, lo, 0.0)


def upper_bound(c, n, delta):
    """One-sided Clopper–Pearson upper confidence bound on a binomial p at level 1 - delta (vectorised)."""
    c, n = np.asarray(c, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        hi = stats.beta.ppf(1 - delta, c + 1, np.maximum(n - c, 1e-300))
    return np.where(c < n, hi, 1.0)


def epsilon_lower_bound(c1, n1, c2, n2, delta):
    """ln(lcb(P1)) - ln(ucb(P2)), each bound at level 1 - delta/2: holds with probability >= 1 - delta.

    -inf when c1 = 0 (no evidence). Vectorised over the counts.
    """
    lo = lower_bound(c1, n1, delta / 2)
    hi = upper_bound(c2, n2, delta / 2)
    with np.errstate(divide="ignore"):
        return np.log(lo) - np.log(hi)


def p_value(c1: int, n1: float, c2: int, n2: float, eps: float) -> float:
    """Exact one-sided p-value of H0: P1 <= e^eps P2 from Poissonised counts (c1 of mean size n1, c2 of n2)."""
    if c1 <= 0:
        return 1.0
    # p0 = e^eps n1 / (e^eps n1 + n2), written to stay finite for a large eps
    p0 = 1.0 / (1.0 + math.exp(-eps) * n2 / n1) if eps < 700 else 1.0
    return float(stats.binom.sf(c1 - 1, c1 + c2, p0))


def clopper_pearson(c: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Two-sided exact interval at `level` (scipy's binomtest interval)."""
    if n == 0:
        return 0.0, 1.0
    ci = stats.binomtest(int(c), int(n)).proportion_ci(confidence_level=level, method="exact")
    return float(ci.low), float(ci.high)
