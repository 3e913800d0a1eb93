"""Hand-written numpy implementations of the seed mechanisms, vectorised over samples (DP-Sniper style).

These are what a user would write as production code, and the baseline the interpreter (align/interp) is
measured and tested against: each class has the same output distribution as the spec of the same mechanism in
specs/ (same noise parameterisations, same branches, same output shapes). Every mechanism takes an explicit
`numpy.random.Generator` and returns arrays shaped (n_samples, ...).

Modules (each class's docstring cites its algorithm):

- `svt_gap` — `SVTWithGap` (`monotone=True` and `noise="exponential"` as §5.3 uses them), `AdaptiveSVTWithGap`
  (Laplace; `monotone=True` for footnote 5), `AdaptiveSVTWithGapExp`, `AdaptiveSVTWithGapGeo`: Free Gap
  §5.1–5.2, Algorithms 1–3.
- `noisy_top_k` — `NoisyTopKWithGap`, `NoisyTopKWithGapExp`, `HybridPrioritizingIdentity`,
  `HybridPrioritizingEstimates`: Free Gap §6.1–6.2 and §7, Algorithms 4–6.
- `exp_mech_gap` — `NaiveExpMechWithGap` (the Gumbel-max trick), `BlackBoxExpMechWithGap` (`as_printed=True`
  for line 4 as misprinted, without ε): Free Gap §8, Algorithms 7–8, with Theorem 8.3's law of the output.
- `dwork_roth` — `AboveThreshold`, `Sparse`, `NumericSparse` (δ = 0): Dwork & Roth (2014) §3.6, Algorithms 1–3.
- `r2dp` — `R2DP` with the second folds `PointMass`, `BernoulliFold`, `GammaFold`, `UniformFold`,
  `TruncatedGaussianFold`, `LinearCombination` (Algorithm 1's ensemble); ε by Theorem 4.1 / Corollary 4.2;
  `optimise(eps, dq, metric, family)`, the parameters of a family that maximise a utility metric at ε.
- `utility` — the metrics of R²DP Table 1 (usefulness, ℓ1, ℓ2) for a mixture, the Laplace mechanism and the
  staircase mechanism.
- `gap_estimates` — Lemma 3's lower confidence bound, the inverse-variance combination (§5.3), Theorem 6.2's
  BLUE and Corollary 1 (§6.3).
- `outputs` — `TaggedStream` (tags + gaps), `IndexGapList` (indices + gaps), the tag codes.
"""

from .dwork_roth import AboveThreshold, NumericSparse, Sparse
from .exp_mech_gap import BlackBoxExpMechWithGap, NaiveExpMechWithGap
from .noisy_top_k import HybridPrioritizingEstimates, HybridPrioritizingIdentity, NoisyTopKWithGap, NoisyTopKWithGapExp
from .outputs import BOT, NOT_REACHED, TOP, TOP1, TOP2, IndexGapList, TaggedStream
from .r2dp import R2DP
from .svt_gap import AdaptiveSVTWithGap, AdaptiveSVTWithGapExp, AdaptiveSVTWithGapGeo, SVTWithGap

__all__ = [
                          "BOT",
                          "NOT_REACHED",
                          "R2DP",
                          "TOP",
                          "TOP1",
                          "TOP2",
                          "AboveThreshold",
                          "AdaptiveSVTWithGap",
                          "AdaptiveSVTWithGapExp",
                          "AdaptiveSVTWithGapGeo",
                          "BlackBoxExpMechWithGap",
                          "HybridPrioritizingEstimates",
                          "HybridPrioritizingIdentity",
                          "IndexGapList",
                          "NaiveExpMechWithGap",
                          "NoisyTopKWithGap",
                          "NoisyTopKWithGapExp",
                          "NumericSparse",
                          "SVTWithGap",
                          "Sparse",
                          "TaggedStream",
]
