"""Reproduction: Free Gap Lemma 3 — the lower confidence bound on a query from its SVT gap covers as claimed
(Free Gap Section 5.3, "Lower confidence interval"; proof in Appendix A.3).

    python bench/papers/lemma3_coverage.py [--trials N] [--seed S] [--plot PATH | --no-plot]

Lemma 3 gives P(ηᵢ − η ≥ −t) for η ~ Lap(1/ε₀), ηᵢ ~ Lap(1/ε*); t_c solves it = c, and the seed reads
"q_i(D) ≥ γᵢ + T − t_c with probability c". Measured at c = 90/95/99 %:

- the noise alone (ε₀ = ε* and ε₀ ≠ ε*): the frequency of ηᵢ − η ≥ −t_c over independent draws;
- SVT with Gap (`mechanisms.SVTWithGap`, Algorithm 2, k = 1, one query far above the threshold, so that its gap
  is released in every run): the frequency of q ≥ T + γ − t_c, with t_c for the mechanism's own noise rates;
- the same with the query at the threshold (q = T), counting only the runs that release a gap. Lemma 3 is
  unconditional; conditioned on the gap being released (γ ≥ 0, i.e. ηᵢ − η ≥ 0) the coverage is
  P(0 ≤ ηᵢ − η ≤ t_c)/P(ηᵢ − η ≥ 0) = 2c − 1 (the difference is symmetric), which is that row's theory.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _claim import Estimate, Reproduction, Row, Verdict, error_bars, figure, main, save

from mechanisms import SVTWithGap
from mechanisms.gap_estimates import laplace_gap_quantile, laplace_gap_tail
from mechanisms.outputs import TOP

CONFIDENCES = (0.90, 0.95, 0.99)
EPS, THETA, T = 0.7, 0.3, 100.0
"""SVT with Gap at the seed's ε = 0.7 (Section 9), k = 1, θ = 1/(1 + ∛4) ≈ 0.39 rounded to 0.3; T is arbitrary."""


def _noise_rows(trials: int, rng: np.random.Generator) -> list[Row]:
    rows = []
    for eps0, eps_star in ((0.5, 0.5), (0.2, 0.5)):
        eta = rng.laplace(0.0, 1 / eps0, trials)
        eta_i = rng.laplace(0.0, 1 / eps_star, trials)
        difference = eta_i - eta
        for c in CONFIDENCES:
            t = laplace_gap_quantile(c, eps0, eps_star)
            assert abs(float(laplace_gap_tail(t, eps0, eps_star)) - c) < 1e-9
            covered = int(np.count_nonzero(difference >= -t))
            rows.append(Row({"setting": f"noise eps0={eps0:g} eps*={eps_star:g}", "c": c}, c,
                            Estimate.proportion(covered, trials)))
    return rows


def _mechanism_rows(trials: int, rng: np.random.Generator) -> list[Row]:
    mechanism = SVTWithGap(EPS, 1, THETA, T)
    eps0, eps_star = mechanism.gap_noise_rates()
    spread = float(np.sqrt(mechanism.gap_variance()))
    rows = []
    for setting, q in (("SVT with Gap, q = T + 40 sd", T + 40 * spread), ("SVT with Gap, q = T, released", T)):
        stream = mechanism.m([q], trials, rng)
        released = stream.tags[:, 0] == TOP
        gaps = stream.values[released, 0]
        for c in CONFIDENCES:
            t = laplace_gap_quantile(c, eps0, eps_star)
            covered = int(np.count_nonzero(q >= T + gaps - t))
            theory = c if q > T else 2 * c - 1
            rows.append(Row({"setting": setting, "c": c}, theory,
                            Estimate.proportion(covered, int(released.sum()))))
        if q > T:  # Section 5.3 read literally: eps* = eps1, half the mechanism's query-noise scale
            for c in CONFIDENCES:
                t = laplace_gap_quantile(c, eps0, mechanism.eps1)
                covered = int(np.count_nonzero(q >= T + gaps - t))
                rows.append(Row({"setting": "same, t_c for eps* = eps1", "c": c}, None,
                                Estimate.proportion(covered, int(released.sum()))))
    return rows


def reproduce(trials: int, seed: int) -> Reproduction:
    rng = np.random.default_rng(seed)
    rows = _noise_rows(trials, rng) + _mechanism_rows(trials, rng)
    return Reproduction(
        name="lemma3_coverage",
        source="Free Gap Section 5.3, Lemma 3 (Appendix A.3)",
        claim="q_i(D) >= gamma_i + T - t_c with probability c, t_c from Lemma 3's tail of eta_i - eta",
        rows=rows,
        expected=Verdict.AGREES,
        findings=[
            "Lemma 3's tail agrees with the sampled noise for eps0 = eps* and eps0 != eps* at every level.",
            "Through SVT with Gap the bound covers as claimed when the query is far enough above T that its gap is "
            "always released; with t_c computed for the mechanism's own query noise Lap(2/eps1), i.e. eps* = "
            "eps1/2. Section 5.3's 'eps* is eps1 or eps2' read literally halves the scale and the bound covers less "
            "than claimed (rows 'eps* = eps1', no theory: 0.857/0.920/0.981 for 0.90/0.95/0.99).",
            "Conditioned on release, a query at the threshold is covered with probability 2c - 1 only "
            "(90 % -> 80 %, 99 % -> 98 %): the statement is about all runs, not the runs that output a gap.",
        ],
    )


def plot(result: Reproduction, path: Path) -> None:
    fig, ax = figure()
    settings = list(dict.fromkeys(str(row.label["setting"]) for row in result.rows))
    for n, setting in enumerate(settings):
        rows = [row for row in result.rows if row.label["setting"] == setting]
        x = np.array([float(row.label["c"]) for row in rows]) + (n - len(settings) / 2) * 0.0015
        y = np.array([row.measured.value for row in rows])
        ax.errorbar(x, y, yerr=error_bars(rows), fmt="o", ms=4, capsize=2, label=setting)
    grid = np.linspace(0.88, 1.0, 50)
    ax.plot(grid, grid, "k-", lw=0.8, label="Lemma 3: coverage = c")
    ax.plot(grid, 2 * grid - 1, "k:", lw=0.8, label="released at q = T: 2c - 1")
    ax.set_xlabel("confidence level c")
    ax.set_ylabel("measured coverage (simultaneous 99% CIs)")
    ax.set_title("Free Gap Lemma 3: lower confidence bound from an SVT gap", fontsize=9)
    ax.legend(fontsize=7)
    save(fig, path)


if __name__ == "__main__":
    raise SystemExit(main(reproduce, plot, __doc__, default_trials=400_000))
