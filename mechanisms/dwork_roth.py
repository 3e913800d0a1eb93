"""The Sparse Vector Technique of Dwork & Roth, *The Algorithmic Foundations of Differential Privacy* (2014),
Section 3.6: AboveThreshold, Sparse and NumericSparse (δ = 0), vectorised over samples.

The seed's notes (seed 004) lost their math symbols; the noise scales are the book's: AboveThreshold
T̂ = T + Lap(2/ε), νᵢ ~ Lap(4/ε); Sparse σ = 2c/ε, thresholds Lap(σ), query noise Lap(2σ); NumericSparse
ε₁ = 8ε/9, ε₂ = 2ε/9, σ(e) = 2c/e, thresholds Lap(σ(ε₁)), query noise Lap(2σ(ε₁)), released answers
qᵢ + Lap(σ(ε₂)). Specs: specs/dworkroth/above_threshold.dp, sparse.dp, numeric_sparse.dp.

Each `m(q, n_samples, rng)` returns a `TaggedStream`; `active` holds the samples that have not halted, so
a halted sample draws no more noise. The book allows adaptively chosen queries; here the stream is a fixed list.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ._params import generator, query_vector, require, sample_count
from .outputs import BOT, TOP, TaggedStream, empty_stream


def _check(eps: float, c: int | None = None) -> None:
    require(eps > 0, f"eps must be > 0, got {eps}")
    if c is not None:
        require(int(c) == c and c >= 1, f"c must be an integer >= 1, got {c}")


class AboveThreshold:
    """AboveThreshold — Dwork & Roth (2014), Section 3.6, Algorithm 1 (p. 57); ε-DP by Theorem 3.23.

    T̂ = T + Lap(2/ε) once; for each query νᵢ ~ Lap(4/ε): if qᵢ + νᵢ ≥ T̂ output ⊤ and halt, else ⊥.
    Tags: `BOT`, `TOP` (no payload), `NOT_REACHED` after the halt.
    """

    TAG_NAMES: ClassVar[dict[int, str]] = {BOT: "BOT", TOP: "TOP"}

    def __init__(self, eps: float, T: float):
        _check(eps)
        self.eps, self.T = eps, T

    def m(self, q, n_samples: int, rng: np.random.Generator) -> TaggedStream:
        q = query_vector(q)
        n, rng = sample_count(n_samples), generator(rng)
        tags, values = empty_stream(n, q.size)
        noisy_threshold = self.T + rng.laplace(0.0, 2 / self.eps, n)
        active = np.arange(n)
        for i in range(q.size):
            if active.size == 0:
                break
            top = q[i] + rng.laplace(0.0, 4 / self.eps, active.size) >= noisy_threshold[active]
            tags[active, i] = np.where(top, TOP, BOT)
            active = active[~top]
        return TaggedStream(tags, values, self.TAG_NAMES, frozenset())

    @staticmethod
    def halting_index(out: TaggedStream) -> np.ndarray:
        """(n,) the index of the query reported ⊤ (where the algorithm halted), −1 if it never halted."""
        top = out.tags == TOP
        return np.where(top.any(axis=1), top.argmax(axis=1), -1)


class Sparse:
    """Sparse — Dwork & Roth (2014), Section 3.6, Algorithm 2 (p. 61) with δ = 0; ε-DP by Theorem 3.25.

    σ = 2c/ε; T̂ = T + Lap(σ); for each query νᵢ ~ Lap(2σ): if qᵢ + νᵢ ≥ T̂ output ⊤, draw a fresh
    T̂ = T + Lap(σ) and halt after the c-th ⊤; else ⊥. Tags as in `AboveThreshold`.
    """

    TAG_NAMES: ClassVar[dict[int, str]] = {BOT: "BOT", TOP: "TOP"}

    def __init__(self, eps: float, c: int, T: float):
        _check(eps, c)
        self.eps, self.c, self.T = eps, int(c), T
        self.sigma = 2 * self.c / eps

    def m(self, q, n_samples: int, rng: np.random.Generator) -> TaggedStream:
        tags, values = self._run(q, n_samples, rng, release_scale=None)
        return TaggedStream(tags, values, self.TAG_NAMES, frozenset())

    def _run(self, q, n_samples, rng, release_scale: float | None):
        q = query_vector(q)
        n, rng = sample_count(n_samples), generator(rng)
        tags, values = empty_stream(n, q.size)
        noisy_threshold = self.T + rng.laplace(0.0, self.sigma, n)
        count = np.zeros(n, dtype=np.int64)
        active = np.arange(n)
        for i in range(q.size):
            if active.size == 0:
                break
            top = q[i] + rng.laplace(0.0, 2 * self.sigma, active.size) >= noisy_threshold[active]
            tags[active, i] = np.where(top, TOP, BOT)
            hits = active[top]
            if release_scale is not None:
                # NumericSparse: a fresh Laplace answer, independent of νᵢ (releasing qᵢ + νᵢ is not private).
                values[hits, i] = q[i] + rng.laplace(0.0, release_scale, hits.size)
            noisy_threshold[hits] = self.T + rng.laplace(0.0, self.sigma, hits.size)
            count[hits] += 1
            active = active[count[active] < self.c]
        return tags, values


class NumericSparse(Sparse):
    """NumericSparse — Dwork & Roth (2014), Section 3.6, Algorithm 3 (p. 63) with δ = 0; ε-DP by Theorem 3.27.

    Sparse run at ε₁ = 8ε/9 (σ₁ = 2c/ε₁), and every ⊤ also releases qᵢ + Lap(σ₂) with σ₂ = 2c/ε₂,
    ε₂ = 2ε/9 (the Laplace mechanism on c answers at total cost ε/9). Tags: `BOT`, `TOP` with the released
    answer as payload.
    """

    def __init__(self, eps: float, c: int, T: float):
        _check(eps, c)
        self.eps1 = 8 * eps / 9
        self.eps2 = 2 * eps / 9
        super().__init__(self.eps1, c, T)
        self.eps = eps
        self.sigma2 = 2 * self.c / self.eps2

    def m(self, q, n_samples: int, rng: np.random.Generator) -> TaggedStream:
        tags, values = self._run(q, n_samples, rng, release_scale=self.sigma2)
        return TaggedStream(tags, values, self.TAG_NAMES, frozenset({TOP}))


__all__ = ["AboveThreshold", "NumericSparse", "Sparse"]
