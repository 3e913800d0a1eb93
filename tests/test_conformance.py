"""Conformance: each hand-written mechanism (mechanisms/) and the interpreter running its spec have the same
output distribution.

For every case of `CASES` both are sampled SAMPLES times with their own fixed seed (a SeedSequence derived
from the case's name): the interpreter through `align.interp.runner.sample`, the implementation through its
`m(q, n_samples, rng)`. Both outputs are brought to one form — a discrete key per sample (the output length,
then each position's tag or index, -1 where absent) and a real per position (the gap, the released answer,
the noisy value; NaN where absent) — and compared by two-sample tests:

- the discrete keys: a chi-square test of homogeneity on the 2 × K table of key counts (scipy
  `chi2_contingency`, no continuity correction), keys whose expected count in either sample is below 5 pooled
  into one cell;
- the reals: a two-sample Kolmogorov–Smirnov test (scipy `ks_2samp`) at each output position that carries a
  real in at least MIN_VALUES samples of both (pooled over the discrete keys; at most MAX_POSITIONS positions,
  the best-filled ones), and one more on the first real of the most frequent discrete key that has a real (the
  reals conditioned on that key). Each test takes at most one value per sample, so its samples are i.i.d.
  For Algorithm 3 with geometric noise the reals take discrete values: they are compared by the same
  chi-square test of homogeneity on their values (rounded to 1e-6) instead of KS.

Error rate. Each case is one family at ALPHA = 1e-3: its m tests (1 to 6) each reject at ALPHA / m
(Bonferroni), so a correct pair fails a case with probability ≤ 1e-3 and the module's family-wise error rate
is ≤ len(CASES) · 1e-3 = 1.9e-2 (19 cases), up to the asymptotic approximations behind the chi-square and
KS p-values. The seeds are fixed, so the outcome is deterministic; these are probabilities over seeds.

Parameters avoid the floating-point stopping-rule traps of tests/test_mechanisms.py (`FLOAT_TRAPS`): the
interpreter evaluates `cost > eps - eps1` in float64, the implementations count answers exactly, and the two
agree only where float64 does (every case checks this first; `test_float_trap_*` shows the difference).
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from scipy import stats

from align.interp.outputs import Outputs
from align.interp.runner import prepare_arguments, sample
from align.parse import parse_source, read_source
from align.resolve import ResolvedMechanism, resolve
from mechanisms import (
    AboveThreshold,
    AdaptiveSVTWithGap,
    AdaptiveSVTWithGapExp,
    AdaptiveSVTWithGapGeo,
    BlackBoxExpMechWithGap,
    HybridPrioritizingEstimates,
    HybridPrioritizingIdentity,
    IndexGapList,
    NaiveExpMechWithGap,
    NoisyTopKWithGap,
    NoisyTopKWithGapExp,
    NumericSparse,
    Sparse,
    SVTWithGap,
    TaggedStream,
    r2dp,
)

from .conftest import SPECS
from .test_mechanisms import FLOAT_TRAPS, _float_loop_tops

ALPHA = 1e-3
"""Per case (Bonferroni over its tests); see the module docstring."""
SAMPLES = 50_000
"""Samples per implementation and case."""
MIN_VALUES = 500
"""A position's reals are tested when both samples have at least this many."""
MAX_POSITIONS = 4
MIN_CELL = 5.0
"""Smallest expected count of a chi-square cell; rarer keys are pooled."""

Q = [3, 1, 4, 1, 5, 9, 2, 6]
"""Queries for the Sparse-Vector family and Noisy Top-K: a mix of answers below and above the thresholds."""
Q_ADAPTIVE = [0, 14, 5, 20, -3, 12, 3, 16]
"""For Adaptive SVT at eps = 4 (2σ ≈ 11.3 for Laplace, 8 for Exp, 7.98 for Geo): BOT, TOP1 and TOP2 all common."""


# --------------------------------------------------------------------------------------- common form


@dataclass
class Sample:
    """n outputs in the common form."""

    keys: np.ndarray
    """(n, 1 + P) int64: the output length, then each position's tag code or index (-1 where absent)."""
    reals: np.ndarray
    """(n, P) float64: each position's real component, NaN where absent."""


def from_interpreter(out: Outputs, width: int) -> Sample:
    """The interpreter's outputs; tag codes are positions in the mechanism's tag table."""
    reals = [np.where(c.valid, c.data, np.nan) for c in out.columns(width) if c.kind == "real"]
    # Tags with a payload (TOP1, TOP2) have one column each; a position carries at most one of them.
    merged = np.fmax.reduce(reals) if reals else np.full((out.n, width), np.nan)
    return Sample(out.discrete_keys(width), merged)


def from_mechanism(result: Any, tags: tuple[str, ...], width: int) -> Sample:
    """A mechanisms/ result, with its tag codes translated to the interpreter's by name."""
    if isinstance(result, TaggedStream):
        codes = {code: tags.index(name) for code, name in result.tag_names.items()}
        codes[-1] = -1
        table = np.vectorize(codes.__getitem__, otypes=[np.int64])(result.tags)
        keys, reals = np.column_stack([result.lengths, table]), result.values
    elif isinstance(result, IndexGapList):
        keys, reals = np.column_stack([result.lengths, result.indices]), result.gaps
    else:  # R²DP: one real per sample
        keys, reals = np.ones((result.shape[0], 1), dtype=np.int64), result[:, None]
    pad = width - reals.shape[1]
    keys = np.pad(keys.astype(np.int64), ((0, 0), (0, pad)), constant_values=-1)
    return Sample(keys, np.pad(reals.astype(float), ((0, 0), (0, pad)), constant_values=np.nan))


# ------------------------------------------------------------------------------------------ the tests


@dataclass
class Comparison:
    """The tests run on one case: (what, p-value), and the number of chi-square cells."""

    tests: list[tuple[str, float]] = field(default_factory=list)
    cells: int = 0


def chi_square_cells(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Counts per discrete key in each sample, rare keys (expected count < MIN_CELL in either) pooled."""
    _, inverse = np.unique(np.concatenate([a, b]), axis=0, return_inverse=True)
    inverse = inverse.ravel()
    ca = np.bincount(inverse[:len(a)], minlength=inverse.max() + 1)
    cb = np.bincount(inverse[len(a):], minlength=inverse.max() + 1)
    share = min(len(a), len(b)) / (len(a) + len(b))
    kept = (ca + cb) * share >= MIN_CELL
    rare_a, rare_b = ca[~kept].sum(), cb[~kept].sum()
    ca, cb = ca[kept], cb[kept]
    if rare_a + rare_b:
        if (rare_a + rare_b) * share >= MIN_CELL or not len(ca):
            ca, cb = np.append(ca, rare_a), np.append(cb, rare_b)
        else:  # too rare even pooled: fold into the smallest kept cell
            smallest = np.argmin(ca + cb)
            ca[smallest] += rare_a
            cb[smallest] += rare_b
    return ca, cb


def compare(a: Sample, b: Sample, discrete_reals: bool = False) -> Comparison:
    """The tests of the module docstring; with `discrete_reals` (geometric noise: the reals take few values)
    each position's reals are compared by a chi-square test on their values instead of KS."""
    result = Comparison()
    ca, cb = chi_square_cells(a.keys, b.keys)
    result.cells = len(ca)
    if len(ca) >= 2:
        result.tests.append(("discrete keys (chi-square)", _homogeneity(ca, cb)))

    def two_sample(what: str, x: np.ndarray, y: np.ndarray) -> None:
        if discrete_reals:
            result.tests.append((f"{what} (chi-square)", _homogeneity(*chi_square_cells(x[:, None], y[:, None]))))
        else:
            result.tests.append((f"{what} (KS)", float(stats.ks_2samp(x, y).pvalue)))

    filled = [(min(np.count_nonzero(~np.isnan(a.reals[:, p])), np.count_nonzero(~np.isnan(b.reals[:, p]))), p)
              for p in range(a.reals.shape[1])]
    chosen = sorted(p for count, p in sorted(filled, reverse=True)[:MAX_POSITIONS] if count >= MIN_VALUES)
    for p in chosen:
        x, y = a.reals[:, p], b.reals[:, p]
        two_sample(f"reals at position {p}", x[~np.isnan(x)], y[~np.isnan(y)])
    # The first real of the most frequent key that has one, conditioned on that key (unless that key is the
    # only one: then this is the pooled test again).
    has_real = ~np.isnan(a.reals).all(axis=1)
    if has_real.any() and result.cells > 1:
        keys, counts = np.unique(a.keys[has_real], axis=0, return_counts=True)
        key = keys[np.argmax(counts)]
        in_a = (a.keys == key).all(axis=1)
        in_b = (b.keys == key).all(axis=1)
        p = int(np.argmax(~np.isnan(a.reals[in_a][0])))
        if min(in_a.sum(), in_b.sum()) >= MIN_VALUES:
            two_sample(f"reals at position {p} given the most frequent key", a.reals[in_a, p], b.reals[in_b, p])
    return result


def _homogeneity(ca: np.ndarray, cb: np.ndarray) -> float:
    """p-value of the chi-square test that two samples have the same distribution over these cells."""
    if len(ca) < 2:
        return 1.0
    return float(stats.chi2_contingency(np.array([ca, cb]), correction=False).pvalue)


# ---------------------------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    name: str
    spec: str
    """Relative to specs/."""
    args: dict
    implementation: Callable[[dict, int, np.random.Generator], Any]
    """(args, n_samples, rng) -> the mechanisms/ result."""
    width: int
    """Output positions: len(q) for a stream, k for Top-K, 1 for R²DP."""
    stopping: str | None = None
    """`svt` or `adaptive`: the spec has Free Gap's floating-point stopping rule."""
    geometric: bool = False
    """Geometric noise: the gaps take discrete values, compared by chi-square after rounding to 1e-6 (the spec
    and the implementation compute the offsets b through different roundings)."""


def _svt_gap(a, n, rng):
    return SVTWithGap(a["eps"], a["k"], a["theta"], a["T"]).m(a["q"], n, rng)


def _adaptive(cls, **options):
    return lambda a, n, rng: cls(a["eps"], a["k"], a["theta"], a["T"], **options).m(a["q"], n, rng)


SVT_ARGS = {"q": Q, "T": 4, "k": 2, "eps": 2, "theta": 0.5}
ADAPTIVE_ARGS = {"q": Q_ADAPTIVE, "T": 2, "k": 2, "eps": 4, "theta": 0.5}
TOPK_ARGS = {"q": Q, "k": 2, "eps": 2}

CASES = [
    Case("alg2_svt_gap", "freegap/alg2_svt_gap.dp", SVT_ARGS, _svt_gap, len(Q), "svt"),
    Case("alg1_adaptive_svt_gap", "freegap/alg1_adaptive_svt_gap.dp", ADAPTIVE_ARGS,
         _adaptive(AdaptiveSVTWithGap), len(Q), "adaptive"),
    Case("alg1_adaptive_svt_gap_monotone", "freegap/alg1_adaptive_svt_gap_monotone.dp", ADAPTIVE_ARGS,
         _adaptive(AdaptiveSVTWithGap, monotone=True), len(Q), "adaptive"),
    Case("alg3_adaptive_svt_gap_exp", "freegap/alg3_adaptive_svt_gap_exp.dp", ADAPTIVE_ARGS,
         _adaptive(AdaptiveSVTWithGapExp), len(Q), "adaptive"),
    Case("alg3_adaptive_svt_gap_geo", "freegap/alg3_adaptive_svt_gap_geo.dp", ADAPTIVE_ARGS,
         _adaptive(AdaptiveSVTWithGapGeo), len(Q), "adaptive", geometric=True),
    Case("alg4_noisy_top_k_gap", "freegap/alg4_noisy_top_k_gap.dp", TOPK_ARGS,
         lambda a, n, rng: NoisyTopKWithGap(a["eps"], a["k"]).m(a["q"], n, rng), 2),
    Case("alg4_noisy_top_k_gap_counting", "freegap/alg4_noisy_top_k_gap_counting.dp", TOPK_ARGS,
         lambda a, n, rng: NoisyTopKWithGap(a["eps"], a["k"]).m(a["q"], n, rng), 2),
    Case("noisy_top_k_gap_exp", "freegap/noisy_top_k_gap_exp.dp", TOPK_ARGS,
         lambda a, n, rng: NoisyTopKWithGapExp(a["eps"], a["k"]).m(a["q"], n, rng), 2),
    Case("alg5_hybrid_identity", "freegap/alg5_hybrid_identity.dp", {"q": Q, "T": 4, "k": 3, "eps": 2},
         lambda a, n, rng: HybridPrioritizingIdentity(a["eps"], a["k"], a["T"]).m(a["q"], n, rng), 3),
    Case("alg6_hybrid_estimates", "freegap/alg6_hybrid_estimates.dp",
         {"q": Q, "T": 4, "k": 3, "eps": 2, "theta": 0.5},
         lambda a, n, rng: HybridPrioritizingEstimates(a["eps"], a["k"], a["theta"], a["T"]).m(a["q"], n, rng), 3),
    # Algorithm 7 and (Theorem 8.3: the same output distribution) Algorithm 8 against the Algorithm 7 spec; at
    # eps = 2, where Algorithm 8 as printed (no eps in line 4) would differ
    Case("alg7_gumbel_exp_mech_gap", "freegap/alg7_gumbel_exp_mech_gap.dp", {"u": [0, 1, 2, 3, 4], "du": 1, "eps": 2},
         lambda a, n, rng: NaiveExpMechWithGap(a["eps"], a["du"]).m(a["u"], n, rng), 1),
    Case("alg8_black_box_exp_mech_gap", "freegap/alg7_gumbel_exp_mech_gap.dp",
         {"u": [0, 1, 2, 3, 4], "du": 1, "eps": 2},
         lambda a, n, rng: BlackBoxExpMechWithGap(a["eps"], a["du"]).m(a["u"], n, rng), 1),
    Case("above_threshold", "dworkroth/above_threshold.dp", {"q": Q, "T": 6, "eps": 1},
         lambda a, n, rng: AboveThreshold(a["eps"], a["T"]).m(a["q"], n, rng), len(Q)),
    Case("sparse", "dworkroth/sparse.dp", {"q": Q, "T": 5, "c": 2, "eps": 2},
         lambda a, n, rng: Sparse(a["eps"], a["c"], a["T"]).m(a["q"], n, rng), len(Q)),
    Case("numeric_sparse", "dworkroth/numeric_sparse.dp", {"q": Q, "T": 5, "c": 2, "eps": 2},
         lambda a, n, rng: NumericSparse(a["eps"], a["c"], a["T"]).m(a["q"], n, rng), len(Q)),
    Case("r2dp_point_mass", "r2dp/point_mass.dp", {"q": 3, "b0": 2, "dq": 1},
         lambda a, n, rng: r2dp.point_mass(a["b0"]).m(a["q"], n, rng), 1),
    Case("r2dp_bernoulli", "r2dp/bernoulli.dp", {"q": 3, "p": 0.3, "b0": 1, "b1": 4, "dq": 1},
         lambda a, n, rng: r2dp.bernoulli(a["p"], a["b0"], a["b1"]).m(a["q"], n, rng), 1),
    Case("r2dp_gamma", "r2dp/gamma.dp", {"q": 3, "k": 2, "theta": 0.5, "dq": 1},
         lambda a, n, rng: r2dp.gamma(a["k"], a["theta"]).m(a["q"], n, rng), 1),
    Case("r2dp_uniform", "r2dp/uniform.dp", {"q": 3, "a": 0.5, "b": 2, "dq": 1},
         lambda a, n, rng: r2dp.uniform(a["a"], a["b"]).m(a["q"], n, rng), 1),
    Case("r2dp_trunc_gaussian", "r2dp/trunc_gaussian.dp", {"q": 3, "mu": 1, "sigma": 0.5, "a": 0, "b": 3, "dq": 1},
         lambda a, n, rng: r2dp.trunc_gaussian(a["mu"], a["sigma"], a["a"], a["b"]).m(a["q"], n, rng), 1),
    Case("r2dp_ensemble", "r2dp/ensemble.dp", {"q": 3},
         lambda a, n, rng: r2dp.ensemble().m(a["q"], n, rng), 1),
]


def seed_for(name: str, which: int) -> np.random.SeedSequence:
    """0: the interpreter's seed, 1: the implementation's (independent streams)."""
    return np.random.SeedSequence([20240601, zlib.crc32(name.encode()), which])


def load(relative: str) -> ResolvedMechanism:
    return resolve(parse_source(read_source(str(SPECS / relative)))).mechanisms[0]


def float_rule_is_exact(eps: float, theta: float, k: int, adaptive: bool) -> bool:
    """Whether `cost > eps - eps1`, evaluated in float64 as the spec reads, agrees with the exact rule (t >= k;
    for the adaptive algorithms t2 + 2 t1 > 2(k - 1)) after every sequence of answers, in the order the costs
    are added (a float sum depends on it). ⊥ adds nothing, so sequences of ⊤ answers are enough."""
    eps0 = theta * eps
    eps1 = (1 - theta) * eps / k
    eps2 = eps1 / 2
    if eps0 > eps - eps1:
        return False
    steps = {1: eps2, 2: eps1} if adaptive else {2: eps1}  # the cost of each kind of ⊤, by units of eps2
    for length in range(1, 2 * k + 1):
        for answers in itertools.product(sorted(steps), repeat=length):
            cost, units = eps0, 0
            for unit in answers:
                cost, units = cost + steps[unit], units + unit
                if (cost > eps - eps1) != (units > 2 * (k - 1)):
                    return False
                if units > 2 * (k - 1):
                    break
    return True


def geometric_branches_are_unambiguous(args: dict) -> bool:
    """Algorithm 3 with Geo noise compares integer + (b0 - b2) with 2σ and integer + (b0 - b1) with 0. The spec
    computes b and σ with exp, the implementation with expm1: a comparison that lands within rounding of a tie
    could go either way. Require every such comparison to be at least 1e-6 away from a tie."""
    m = AdaptiveSVTWithGapGeo(args["eps"], args["k"], args["theta"], args["T"])
    distances = [2 * m.sigma - (m.b0 - m.b2), m.b1 - m.b0]
    return all(abs(d - round(d)) > 1e-6 for d in distances)


def test_every_mechanism_class_is_covered():
    import mechanisms

    classes = {getattr(mechanisms, name) for name in mechanisms.__all__
               if isinstance(getattr(mechanisms, name), type) and hasattr(getattr(mechanisms, name), "m")}
    used = {AboveThreshold, AdaptiveSVTWithGap, AdaptiveSVTWithGapExp, AdaptiveSVTWithGapGeo, BlackBoxExpMechWithGap,
            NaiveExpMechWithGap, HybridPrioritizingEstimates, HybridPrioritizingIdentity, NoisyTopKWithGap,
            NoisyTopKWithGapExp, NumericSparse, Sparse, SVTWithGap, r2dp.R2DP}
    assert classes == used
    assert {c.spec for c in CASES} <= {str(p.relative_to(SPECS)) for p in SPECS.rglob("*.dp")}
    assert len(CASES) == 21


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_interpreter_and_implementation_have_the_same_output_distribution(case: Case):
    mech = load(case.spec)
    if case.stopping:
        a = case.args
        assert float_rule_is_exact(a["eps"], a["theta"], a["k"], case.stopping == "adaptive"), \
            "the parameters are a floating-point trap: pick others"
    tags = mech.tags
    interp = from_interpreter(sample(mech, prepare_arguments(mech, case.args), SAMPLES, seed_for(case.name, 0)),
                              case.width)
    numpy_ = from_mechanism(case.implementation(case.args, SAMPLES, np.random.default_rng(seed_for(case.name, 1))),
                            tags, case.width)
    if case.geometric:
        assert geometric_branches_are_unambiguous(case.args)
        interp.reals, numpy_.reals = np.round(interp.reals, 6), np.round(numpy_.reals, 6)
    for code, name in enumerate(tags):  # the parameters exercise every branch
        assert min((interp.keys[:, 1:] == code).sum(), (numpy_.keys[:, 1:] == code).sum()) >= MIN_VALUES, name
    comparison = compare(interp, numpy_, discrete_reals=case.geometric)
    assert comparison.tests, "nothing was compared"
    has_reals = not np.isnan(numpy_.reals).all()
    assert not has_reals or any("reals" in what for what, _ in comparison.tests), "no real part was tested"
    cutoff = ALPHA / len(comparison.tests)
    failed = [f"{what}: p = {p:.3g}" for what, p in comparison.tests if p <= cutoff]
    assert not failed, f"distributions differ at alpha {ALPHA} / {len(comparison.tests)}: " + "; ".join(failed)


@pytest.mark.parametrize("eps,theta,k", FLOAT_TRAPS)
def test_float_trap_the_interpreter_stops_one_answer_early(eps, theta, k):
    """SVT with Gap (Algorithm 2) on the FLOAT_TRAPS parameters: the interpreter halts one ⊤ early.

    The spec's stopping rule `cost > eps - eps1` is evaluated in float64, as by any production implementation
    that transcribes the pseudocode (Python floats, numpy, C doubles: IEEE 754 binary64 alike). For these
    parameters the float sum eps0 + (k - 1)·eps1 already exceeds the float eps - eps1, so the run halts right
    after its (k - 1)-th ⊤ — for k = 1, right after the first query, whatever it answered — instead of after
    the k-th. mechanisms/ counts answers exactly and halts after k. The interpreter is right to do this: it
    runs the spec as written, with the semantics of docs/interpreter.md (reals are doubles). What is fragile
    is the pseudocode's budget arithmetic; halting early spends less budget, so it is still ε-DP, only less
    useful. The conformance cases use parameters where float64 and the exact rule agree."""
    assert _float_loop_tops(eps, theta, k, 1.0) == k - 1
    assert not float_rule_is_exact(eps, theta, k, adaptive=False) and not float_rule_is_exact(eps, theta, k, True)
    # k - 1 queries far above, three far below, two far above: the exact rule answers all k - 1 + 3 + 1.
    q = [1e6] * (k - 1) + [-1e6] * 3 + [1e6] * 2
    args = {"q": q, "T": 0, "k": k, "eps": eps, "theta": theta}
    mech = load("freegap/alg2_svt_gap.dp")
    out = sample(mech, prepare_arguments(mech, args), 200, seed_for(f"trap_{eps}_{theta}_{k}", 0))
    float_rule = ["TOP"] * (k - 1) if k > 1 else ["BOT"]
    assert all([t.name for t in out.value(s)] == float_rule for s in range(out.n))
    exact = SVTWithGap(eps, k, theta, T=0).m(q, 200, np.random.default_rng(seed_for(f"trap_{eps}_{theta}_{k}", 1)))
    assert all([t for t, *_ in exact.outputs(s)] == ["TOP"] * (k - 1) + ["BOT"] * 3 + ["TOP"]
               for s in range(exact.n_samples))
