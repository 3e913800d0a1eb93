"""Reproduction: Free Gap Corollary 1 — the free gaps of Noisy Top-K with Gap, combined with measurements of the
selected counting queries by the BLUE of Theorem 6.2, cut their mean squared error by (k − 1)/2k with Laplace
noise and (2k − 2)/3k with exponential noise, "up to 50 %" and "66 %" (Free Gap Section 6.3, Theorem 6.2 and
Corollary 1, proofs in Appendices A.1-A.2; Section 9.2, Figures 2(b) and 3(b)).

    python bench/papers/top_k_blue.py [--trials N] [--seed S] [--plot PATH | --no-plot]

Setting (Section 6.3 and 9.2): budget ε = 0.7 split in half. On counting queries Noisy Top-K with Gap run with
parameter ε is ε/2-DP (Theorem 6.1): `NoisyTopKWithGap(ε, k)`, η ~ Lap(2k/ε), or `NoisyTopKWithGapExp(ε, k)`,
η ~ Exp(2k/ε) (Section 6.2); it selects k queries and releases their gaps. The other ε/2 measures each selected
query with Lap(2k/ε): α = q + ξ, σ² = 8k²/ε². β = `noisy_top_k_blue(α, the first k − 1 gaps, λ)` with
λ = Var(η)/σ², 1 for Laplace and 1/2 for exponential noise (Var Exp(b) = b², half of Var Lap(b) = 2b²). A row is
E Σᵢ|βᵢ − qᵢ|² / E Σᵢ|αᵢ − qᵢ|² over paired trials (`Estimate.ratio_of_means`; column i = "all"), or the same
for the first selected query only (i = 1), against Corollary 1's (1 + λk)/(k + λk), which it states for every i.
The plot shows the percent reduction, 1 − ratio.

Data: two lists of 1657 counting queries.
- zipf (heavy-tailed, drawn once from the seed): the item counts of 515,597 records holding one item each, item r
  with probability ∝ 1/r, sorted (Table 3's record and item counts of BMS-POS, whose records hold several items,
  so its counts and gaps are larger). The top counts are about 64,800, 32,300, 21,500: the top 8 lie ≥ 700
  apart, far beyond the noise of a gap at k = 8 (sd 46 for Laplace); near rank 24 neighbours lie about 100 apart,
  comparable to the noise at k = 24 (sd 137 Laplace, 97 exponential), so the selection is noisy there. Column
  "exact order" is the fraction of runs that selected the true top k in their true order.
- tied: 1657 equal counts, where the selection and its order are pure noise.

Implementations: `mechanisms` (the numpy classes; the Figure 2(b) sweep over k at ε = 0.7 and Figure 3(b)'s
sweep over ε at k = 10) and `interpreter` (`align.api.run` of specs/freegap/alg4_noisy_top_k_gap_counting.dp and
specs/freegap/noisy_top_k_gap_exp.dp, a fifth of the trials, k = 2, 8, 24 on zipf); the measurements ξ are drawn
with numpy in both.

Rows marked "theory of: ours" (tied data) replace Theorem 6.2's model of the gaps, gᵢ = qᵢ + ηᵢ − qᵢ₊₁ − ηᵢ₊₁
with ηᵢ unconditioned noise, by what tied queries actually release: the top k + 1 of 1657 i.i.d. noise values.
For Exp(b) their spacings are independent Exp(b/j), j = 1 .. k (Rényi's representation); for Lap(b) the same
holds because the top k + 1 of 1657 draws are positive (failing with probability P(Bin(1657, 1/2) ≤ k) < 1e-400)
and a positive Lap(b) draw is Exp(b). `gap_estimates.blue_error` turns that mean and covariance into the MSE.
Every tolerance is 0.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _claim import ROOT, Estimate, Reproduction, Row, Verdict, error_bars, figure, main, save, simultaneous

from mechanisms import NoisyTopKWithGap, NoisyTopKWithGapExp
from mechanisms.gap_estimates import blue_error, blue_variance_ratio, noisy_top_k_blue

EPS = 0.7
"""Section 9's total budget; half selects, half measures."""
KS = (2, 4, 8, 16, 24)
"""Figure 2(b)'s x axis (k = 2 .. 24)."""
FIGURE_3B_K, FIGURE_3B_EPS = 10, (0.1, 0.3, 0.7, 1.5)
INTERPRETER_KS = (2, 8, 24)
TIED_KS = (8, 24)
ITEMS, RECORDS = 1657, 515_597
CHUNK = 10_000
"""Trials per call of a mechanism: a (CHUNK, 1657) noise matrix at a time."""

NOISES = {"Laplace": (NoisyTopKWithGap, "alg4_noisy_top_k_gap_counting.dp"),
          "exponential": (NoisyTopKWithGapExp, "noisy_top_k_gap_exp.dp")}
SPECS = ROOT / "specs" / "freegap"


def zipf_counts(rng: np.random.Generator) -> np.ndarray:
    """1657 counting queries with a heavy tail: RECORDS records of one item each, P(item r) ∝ 1/r, sorted."""
    weights = 1 / np.arange(1, ITEMS + 1)
    return np.sort(rng.multinomial(RECORDS, weights / weights.sum()))[::-1].astype(np.int64)


def measurement_scale(k: int, eps: float) -> float:
    """Section 6.3: ε/2 spread over k sensitivity-1 measurements, Lap(2k/ε) each."""
    return 2 * k / eps


def blue_lambda(noise: str, k: int, eps: float) -> float:
    """λ = Var(ηᵢ)/Var(ξᵢ) of Theorem 6.2 for the selection noise of `noise` and the measurements above."""
    return NOISES[noise][0](eps, k).noise_variance / (2 * measurement_scale(k, eps) ** 2)


def _select_mechanisms(noise: str, q: np.ndarray, k: int, eps: float, trials: int, rng: np.random.Generator):
    mechanism = NOISES[noise][0](eps, k)
    indices, gaps = [], []
    for start in range(0, trials, CHUNK):
        out = mechanism.m(q.astype(float), min(CHUNK, trials - start), rng)
        indices.append(out.indices)
        gaps.append(out.gaps)
    return np.concatenate(indices), np.concatenate(gaps)


def _select_interpreter(noise: str, q: np.ndarray, k: int, eps: float, trials: int, rng: np.random.Generator):
    import align

    spec = SPECS / NOISES[noise][1]
    values = [int(x) for x in q] if noise == "Laplace" else [float(x) for x in q]  # int[] vs real[] in the spec
    run = align.run(spec, {"q": values, "k": k, "eps": eps}, samples=trials, seed=int(rng.integers(2 ** 31)))
    outputs = list(run.outputs())
    indices = np.array([[j for j, _ in out] for out in outputs], dtype=np.int64)
    gaps = np.array([[g for _, g in out] for out in outputs], dtype=float)
    return indices, gaps


SELECT = {"mechanisms": _select_mechanisms, "interpreter": _select_interpreter}


def _squared_errors(impl: str, noise: str, q: np.ndarray, k: int, eps: float, trials: int,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    """(trials, k) squared errors of β and of α for the selected queries, in the order of selection, and the
    fraction of runs that selected the true top k in order."""
    indices, gaps = SELECT[impl](noise, q, k, eps, trials, rng)
    truth = q[indices].astype(float)
    alpha = truth + rng.laplace(0.0, measurement_scale(k, eps), truth.shape)
    beta = noisy_top_k_blue(alpha, gaps[:, :k - 1], blue_lambda(noise, k, eps))
    exact = float(np.mean(np.all(indices == np.arange(k), axis=1)))
    return (beta - truth) ** 2, (alpha - truth) ** 2, exact


def tied_model_ratio(noise: str, k: int, eps: float) -> np.ndarray:
    """Ours: (k,) E|βᵢ − qᵢ|²/σ² for tied queries, the released gaps being the spacings Exp(b/j) of the top
    k order statistics of the selection noise (module docstring), independent of the measurements."""
    b = NoisyTopKWithGap(eps, k).scale  # both noises have scale 2k/ε
    sigma2 = 2 * measurement_scale(k, eps) ** 2
    j = np.arange(1, k)
    return blue_error(k, blue_lambda(noise, k, eps), sigma2, b / j, np.diag((b / j) ** 2)) / sigma2


def _label(data: str, impl: str, noise: str, eps: float, k: int, i: str, exact: float | None, of: str) -> dict:
    return {"data": data, "run by": impl, "noise": noise, "eps": eps, "k": k, "i": i,
            "exact order": "-" if exact is None else f"{np.floor(1000 * exact) / 10:g}%",  # 100% only if all
            "theory of": of}


def reproduce(trials: int, seed: int) -> Reproduction:
    rng = np.random.default_rng(seed)
    zipf = zipf_counts(rng)
    assert np.all(np.diff(zipf[:max(KS) + 1]) < 0), "the top counts are distinct, so 'exact order' is defined"
    tied = np.full(ITEMS, 1000, dtype=np.int64)
    rows: list[Row] = []

    def pooled(data, impl, noise, eps, k, n):
        return _squared_errors(impl, noise, zipf if data == "zipf" else tied, k, eps, n, rng)

    zipf_runs = [("mechanisms", EPS, KS, trials),  # Figure 2(b)
                 ("interpreter", EPS, INTERPRETER_KS, max(trials // 5, 2)),
                 *(("mechanisms", eps, (FIGURE_3B_K,), trials) for eps in FIGURE_3B_EPS)]  # Figure 3(b)
    for impl, eps, ks, n in zipf_runs:
        for noise in NOISES:
            for k in ks:
                b2, a2, exact = pooled("zipf", impl, noise, eps, k, n)
                rows.append(Row(_label("zipf", impl, noise, eps, k, "all", exact, "seed"),
                                blue_variance_ratio(k, blue_lambda(noise, k, eps)),
                                Estimate.ratio_of_means(b2.sum(1), a2.sum(1))))
    for noise in NOISES:
        for k in TIED_KS:
            b2, a2, _ = pooled("tied", "mechanisms", noise, EPS, k, trials)
            seed_theory = blue_variance_ratio(k, blue_lambda(noise, k, EPS))
            ours = tied_model_ratio(noise, k, EPS)
            for i, measured in (("all", Estimate.ratio_of_means(b2.sum(1), a2.sum(1))),
                                ("1", Estimate.ratio_of_means(b2[:, 0], a2[:, 0]))):
                rows.append(Row(_label("tied", "mechanisms", noise, EPS, k, i, None, "seed"), seed_theory, measured))
                theory = float(ours.mean() if i == "all" else ours[0])  # pooled: every i has the same E|α − q|²
                rows.append(Row(_label("tied", "mechanisms", noise, EPS, k, i, None, "ours"), theory, measured))
    rows = simultaneous(rows)
    return Reproduction(
        name="top_k_blue",
        source="Free Gap Section 6.3, Theorem 6.2 and Corollary 1 (Appendices A.1-A.2); Section 9.2, "
               "Figures 2(b), 3(b)",
        claim="E|beta_i - q_i|^2 / E|alpha_i - q_i|^2 = (1 + lam k)/(k + lam k) for all i: a reduction of "
              "(k-1)/2k (Laplace, lam = 1) and (2k-2)/3k (exponential, lam = 1/2), up to 50 % and 66 %",
        rows=rows,
        expected=Verdict.DISAGREES,
        findings=_findings(rows),
    )


def _find(rows: list[Row], **label) -> Row:
    return next(r for r in rows if all(r.label[c] == v for c, v in label.items()))


def _agrees(row: Row) -> str:
    return "agrees" if row.agrees else "does not agree"


def _describe(row: Row) -> str:
    return f"{row.label['run by']} {row.label['noise']} eps = {row.label['eps']} k = {row.label['k']}"


def _reduction(estimate_or_value) -> str:
    value = getattr(estimate_or_value, "value", estimate_or_value)
    return f"{100 * (1 - value):.1f} %"


def _findings(rows: list[Row]) -> list[str]:
    seed_zipf = [r for r in rows if r.label["data"] == "zipf"]
    separated = [r for r in seed_zipf if r.label["exact order"] == "100%"]
    lap8 = _find(rows, data="tied", noise="Laplace", k=8, i="all", **{"theory of": "seed"})
    exp8_1 = _find(rows, data="tied", noise="exponential", k=8, i="1", **{"theory of": "seed"})
    exp8_1_ours = _find(rows, data="tied", noise="exponential", k=8, i="1", **{"theory of": "ours"})
    exp8 = _find(rows, data="tied", noise="exponential", k=8, i="all", **{"theory of": "seed"})
    exp24 = _find(rows, data="zipf", **{"run by": "mechanisms"}, noise="exponential", eps=EPS, k=24)
    lap24 = _find(rows, data="zipf", **{"run by": "mechanisms"}, noise="Laplace", eps=EPS, k=24)
    exp01 = _find(rows, data="zipf", noise="exponential", eps=0.1, k=FIGURE_3B_K)
    lap01 = _find(rows, data="zipf", noise="Laplace", eps=0.1, k=FIGURE_3B_K)
    chance = [r for r in separated if not r.agrees]
    return [
        f"Where the selection is the true top k in order in every run ({sum(r.agrees for r in separated)}/"
        f"{len(separated)} such zipf rows agree), Corollary 1 holds for both noises and both implementations: "
        "the lambdas are right (Var Exp(b) = b^2 is half of Var Lap(b) = 2b^2, so lam = 1/2) and the reduction "
        "is (k-1)/2k -> 50 % (47.9 % at k = 24) and (2k-2)/3k -> 2/3 (63.9 % at k = 24); '66 %' is that limit.",
        "The Corollary is not true 'whatever was selected': Theorem 6.2 models the gaps as q_i + eta_i - q_i+1 - "
        "eta_i+1 with eta unconditioned, but the selected queries and their order are chosen by eta, so the "
        "released gaps are conditioned on it (always >= 0). Only the measurements xi are independent of the "
        "selection, so E|alpha - q|^2 = sigma^2 whatever was selected, but E|beta - q|^2 is not.",
        f"Tied queries (selection pure noise): Laplace pooled reduction {_reduction(lap8.measured)} at k = 8 "
        f"against the seed's {_reduction(lap8.theory)}; exponential pooled {_reduction(exp8.measured)} equals "
        f"the seed's {_reduction(exp8.theory)} only on average over i: for the first selected query the ratio "
        f"is {exp8_1.measured.value:.3f} (theory {exp8_1.theory:.3f}), i.e. beta_1 is worse than alpha_1 alone. "
        f"Our order-statistics model (rows 'ours', {exp8_1_ours.theory:.3f} for that one) explains every tied row; "
        "for lam = 1/2 its average over i equals the Corollary's (to 1e-15 for k = 2 .. 199), which is why the pooled "
        "exponential rows agree.",
        f"Between the two (zipf near rank 24, and at eps = 0.1) the selection depends on the noise in some runs "
        f"(exact order in {lap24.label['exact order']} of the Laplace and {exp24.label['exact order']} of the "
        f"exponential runs at k = 24). The exponential ratio rises above the Corollary's: k = 24 "
        f"{exp24.measured.text()} vs {exp24.theory:.4f} (reduction {_reduction(exp24.measured)} instead of "
        f"{_reduction(exp24.theory)}), eps = 0.1 {exp01.measured.text()} vs {exp01.theory:.4f}. The Laplace ratio "
        f"moves far less: k = 24 {lap24.measured.text()} vs {lap24.theory:.4f}, eps = 0.1 {lap01.measured.text()} "
        f"vs {lap01.theory:.4f}; 400,000 trials (seed 12345, run outside this script) put these shifts at -0.0009 "
        "(0.5199 [0.5192, 0.5207]) and +0.0013 (0.5513 [0.5501, 0.5525]): real, but a tenth of a point of reduction.",
        f"Intervals are simultaneous at 99 % (each row at 1 - 0.01/m for m rows): a right theory is outside some "
        f"row's interval with probability 1 %. Misses among the rows whose "
        f"selection was the true top k in order in every run: {len(chance)}"
        f"{' (' + ', '.join(_describe(r) for r in chance) + ')' if chance else ''}; every other miss is a row whose "
        "selection depends on the noise (tied, or exact order below 100 %).",
    ]


def plot(result: Reproduction, path: Path) -> None:
    fig, ax = figure()
    colours = {"Laplace": "C0", "exponential": "C1"}
    grid = np.arange(2, max(KS) + 1)
    for noise, colour in colours.items():
        lam = blue_lambda(noise, 2, EPS)
        ax.plot(grid, [100 * (1 - blue_variance_ratio(int(k), lam)) for k in grid], "-", color=colour, lw=0.9,
                label=f"Corollary 1, {noise} (lambda = {lam:g})")
        ax.plot(grid, [100 * (1 - tied_model_ratio(noise, int(k), EPS).mean()) for k in grid], ":", color=colour,
                lw=0.9, label=f"ours, tied queries, {noise}")
    markers = {("zipf", "mechanisms"): ("o", -0.25), ("zipf", "interpreter"): ("s", 0.25),
               ("tied", "mechanisms"): ("^", 0.0)}
    for (data, impl), (marker, shift) in markers.items():
        for noise, colour in colours.items():
            rows = [r for r in result.rows if r.label["data"] == data and r.label["run by"] == impl
                    and r.label["noise"] == noise and r.label["eps"] == EPS and r.label["i"] == "all"
                    and r.label["theory of"] == "seed"]
            if not rows:
                continue
            x = np.array([float(r.label["k"]) for r in rows]) + shift
            y = np.array([100 * (1 - r.measured.value) for r in rows])
            ax.errorbar(x, y, yerr=error_bars(rows, 100)[::-1], fmt=marker, ms=4, capsize=2, color=colour,
                        mfc="none" if data == "tied" else colour, label=f"{data}, {impl}, {noise}")
    ax.set_xlabel("k (queries selected)")
    ax.set_ylabel("reduction of MSE, % (simultaneous 99% CIs)")
    ax.set_title(f"Free Gap Cor. 1: Noisy Top-K with Gap + BLUE, eps = {EPS}", fontsize=9)
    ax.legend(fontsize=6, ncol=2, loc="lower right")
    save(fig, path)


if __name__ == "__main__":
    raise SystemExit(main(reproduce, plot, __doc__, default_trials=50_000))
