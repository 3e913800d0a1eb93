"""Statistics (bounds): the exact test of P1 <= e^eps P2, the epsilon lower bound that inverts it, and
Clopper–Pearson bounds.

The test. Let an event E have probability P1 under M(D) and P2 under M(D'). We draw N1 ~ Poisson(n1) samples
of M(D) and N2 ~ Poisson(n2) samples of M(D') (Poissonisation: the sample *sizes* are random, drawn from the
run's seed) and count c1, c2 samples in E. Then c1 ~ Poisson(n1 P1) and c2 ~ Poisson(n2 P2) exactly and
independently, and conditionally on c1 + c2 = t,

    c1 | t  ~  Binomial(t, p),   p = n1 P1 / (n1 P1 + n2 P2).

p increases with P1 / P2, so under H0: P1 <= e^eps P2 it is at most p0(eps) = e^eps n1 / (e^eps n1 + n2), and
Binomial(t, p) is stochastically smaller than Binomial(t, p0). Hence

    p-value(eps) = P[Binomial(c1 + c2, p0(eps)) >= c1]

is a valid (conservative under H0's interior, exact on its boundary) p-value of the one-sided test, for every
t, hence unconditionally. This is the conditional test of two Poisson rates (Przyborowski & Wilenski 1940);
with fixed sample sizes it would only be the large-n approximation of the Fisher-type test StatDP uses (with
fixed sizes the conditional law is a noncentral hypergeometric whose odds ratio P1(1-P2)/(P2(1-P1)) exceeds
P1/P2, so the binomial bound would not be conservative for large probabilities). Poissonisation makes it
exact at no cost.

The bound is the same test inverted, so that a decision and the bound it is reported with can never disagree.
The one-sided Clopper–Pearson lower bound p_L of the binomial proportion p from c1 successes in t trials at
level 1 - delta is, by its definition, the largest p with P[Binomial(t, p) >= c1] <= delta (Clopper & Pearson
1934: the tail is increasing in p, and p_L = Beta(c1, t - c1 + 1)'s delta-quantile). So

    p-value(eps) <= delta   <=>   p0(eps) <= p_L   <=>   eps <= eps_L = ln(n2 p_L / (n1 (1 - p_L))),

and eps_L is a lower confidence bound on ln(P1 / P2) at level 1 - delta (p_L <= p with probability >= 1 -
delta for every t, and p <-> P1/P2 is increasing). Rejecting H0 at eps with p-value <= delta and finding
eps_L >= eps are one statement. Edges: c1 = 0 gives p_L = 0, eps_L = -inf, p-value 1 (no evidence); c2 = 0 < c1
(a *support mismatch*, E never seen under D') gives p_L = delta^(1/c1) < 1 and the finite
eps_L = ln(n2/n1) + ln(p_L / (1 - p_L)), about ln(c1 / ln(1/delta)): it grows with the samples without limit, as
it should for a true eps of infinity. Nothing caps it (DP-Sniper's cap ln(1/c) does not apply).

`separate_epsilon_lower_bound` (ln lcb(P1) - ln ucb(P2) from two Clopper–Pearson bounds, delta/2 each) is a
weaker bound on the same quantity; it only ranks candidate events on the selection sample (events.py), where
sample sizes are fixed and nothing is reported.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats


def _per_count(bound, c: ArrayLike, n: ArrayLike, delta: float) -> np.ndarray:
    """`bound(c, n, delta)`, over the distinct counts only when one n serves many counts (the candidates of a
    selection sample repeat their counts; the beta quantile is the expensive part): the same floats, entry by
    entry."""
    c, n = np.asarray(c, dtype=float), np.asarray(n, dtype=float)
    if n.ndim or c.size < 64:
        return bound(c, n, delta)
    distinct, inverse = np.unique(c, return_inverse=True)
    return bound(distinct, n, delta)[inverse.reshape(c.shape)]


def _lower(c: np.ndarray, n: np.ndarray, delta: float) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = stats.beta.ppf(delta, np.maximum(c, 1e-300), n - c + 1)
    return np.where(c > 0, lo, 0.0)


def _upper(c: np.ndarray, n: np.ndarray, delta: float) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        hi = stats.beta.ppf(1 - delta, c + 1, np.maximum(n - c, 1e-300))
    return np.where(c < n, hi, 1.0)


def lower_bound(c: ArrayLike, n: ArrayLike, delta: float) -> np.ndarray:
    """One-sided Clopper–Pearson lower confidence bound on a binomial p at level 1 - delta (vectorised)."""
    return _per_count(_lower, c, n, delta)


def upper_bound(c: ArrayLike, n: ArrayLike, delta: float) -> np.ndarray:
    """One-sided Clopper–Pearson upper confidence bound on a binomial p at level 1 - delta (vectorised)."""
    return _per_count(_upper, c, n, delta)


def epsilon_lower_bound(c1: ArrayLike, n1: ArrayLike, c2: ArrayLike, n2: ArrayLike, delta: float) -> np.ndarray:
    """eps_L: the lower confidence bound on ln(P1 / P2) at level 1 - delta that inverts `p_value` (module
    docstring): p_value(c1, n1, c2, n2, eps) <= delta exactly when eps <= eps_L.

    n1, n2 are the Poisson means of the sample sizes (the p-value's). -inf when c1 = 0 (no evidence); finite
    when c2 = 0 < c1 (a support mismatch). Vectorised over the counts.
    """
    c1, c2 = np.asarray(c1, dtype=float), np.asarray(c2, dtype=float)
    seen = c1 > 0
    a = np.where(seen, c1, 1.0)  # placeholder shapes where c1 = 0 (masked below)
    with np.errstate(invalid="ignore", divide="ignore"):
        # p_L = Beta(c1, c2 + 1).ppf(delta) and 1 - p_L = Beta(c2 + 1, c1).isf(delta), each computed directly: the
        # odds p_L / (1 - p_L) stay accurate when p_L is close to 1 (a large c1 against a small c2)
        p_low = stats.beta.ppf(delta, a, c2 + 1)
        q_low = stats.beta.isf(delta, c2 + 1, a)
        bound = np.log(np.asarray(n2, dtype=float) / np.asarray(n1, dtype=float)) + np.log(p_low) - np.log(q_low)
    return np.where(seen, bound, -np.inf)


def separate_epsilon_lower_bound(c1: ArrayLike, n1: ArrayLike, c2: ArrayLike, n2: ArrayLike,
                                 delta: float) -> np.ndarray:
    """ln(lcb(P1)) - ln(ucb(P2)), two Clopper–Pearson bounds at level 1 - delta/2 each, conditionally on the
    sample sizes n1, n2: a lower bound on ln(P1 / P2) at level 1 - delta for fixed sizes, weaker than
    `epsilon_lower_bound`. It ranks candidates on the selection sample (events.py) and is never reported.

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


def rejected(epsilon_bound: float, eps: float) -> bool:
    """The decision of the test of H0: P1 <= e^eps P2 at the level epsilon_bound was computed at: reject when
    eps <= eps_L (equivalently p-value(eps) <= delta, by the duality above). Deciding on the bound itself makes
    "rejected" and "bound >= claim" one comparison, also in floating point."""
    return epsilon_bound >= eps


def clopper_pearson(c: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Two-sided exact interval at `level` (scipy's binomtest interval)."""
    if n == 0:
        return 0.0, 1.0
    ci = stats.binomtest(int(c), int(n)).proportion_ci(confidence_level=level, method="exact")
    return float(ci.low), float(ci.high)
