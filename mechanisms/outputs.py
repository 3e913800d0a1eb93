"""Output representations shared by the hand-written mechanisms: arrays over samples, spec-shaped on demand.

Every mechanism in this package returns its n samples at once. A spec's output ω is a sequence (`out`) of
tags, tagged numbers or (index, gap) pairs; here the same information is stored column-wise so that counting
and binning never loop over samples:

- `TaggedStream` for the Sparse-Vector family (one column per query, an int8 tag code and a float payload);
- `IndexGapList` for the Noisy-Top-K family (one column per released pair).

`outputs(s)` rebuilds sample s as the spec's `out` (e.g. `[("BOT",), ("TOP", 1.25)]`), which is what the
conformance tests compare with the interpreter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

NOT_REACHED = -1
"""Tag code of a query the mechanism never answered because it had already halted (`break`)."""
BOT = 0
"""⊥: the query's noisy answer stayed below the noisy threshold (bud_used = 0)."""
TOP = 1
"""⊤ of SVT with Gap, AboveThreshold, Sparse, NumericSparse (bud_used = ε₁ for SVT with Gap)."""
TOP1 = 1
"""⊤ from the middle branch of Adaptive SVT with Gap (bud_used = ε₁); the same role as `TOP`, hence the same code."""
TOP2 = 2
"""⊤ from the top branch of Adaptive SVT with Gap (bud_used = ε₂ = ε₁/2)."""


@dataclass(frozen=True)
class TaggedStream:
    """The outputs of an SVT-like mechanism for n samples over a stream of m queries.

    Sample s answered the queries 0 .. lengths[s]-1; the rest were never reached (the mechanism halted).
    """

    tags: np.ndarray
    """(n, m) int8: a tag code per query (`BOT`, `TOP`/`TOP1`, `TOP2`), `NOT_REACHED` after the halt."""
    values: np.ndarray
    """(n, m) float64: the payload of a tagged output (the noisy gap, or NumericSparse's released answer);
    NaN where the output carries none (⊥, tags without payload, queries not reached)."""
    tag_names: Mapping[int, str]
    """The spec's name of each tag code the mechanism produces, e.g. {0: "BOT", 1: "TOP"}."""
    payload_tags: frozenset[int]
    """Tag codes whose spec output carries a number (`TOP(gap)`); the others are bare tags (`BOT`)."""

    @property
    def n_samples(self) -> int:
        return self.tags.shape[0]

    @property
    def lengths(self) -> np.ndarray:
        """(n,) int: the number of outputs of each sample, len(out)."""
        return np.count_nonzero(self.tags != NOT_REACHED, axis=1)

    def count(self, code: int) -> np.ndarray:
        """(n,) int: how many outputs of each sample carry this tag."""
        return np.count_nonzero(self.tags == code, axis=1)

    def outputs(self, s: int) -> list[tuple]:
        """Sample s as the spec's output sequence: `("BOT",)`, `("TOP", gap)`, `("TOP2", gap)` ..."""
        out: list[tuple] = []
        for code, value in zip(self.tags[s].tolist(), self.values[s].tolist()):
            if code == NOT_REACHED:
                break
            name = self.tag_names[code]
            out.append((name, value) if code in self.payload_tags else (name,))
        return out


@dataclass(frozen=True)
class IndexGapList:
    """The outputs of a Noisy-Top-K-like mechanism for n samples: up to k pairs (jᵢ, gᵢ) each.

    The pairs of a sample fill a prefix of its row; the hybrids (Algorithms 5 and 6) may release fewer than k.
    """

    indices: np.ndarray
    """(n, k) int64: the released indices in the order of release (descending noisy value); -1 after the end."""
    gaps: np.ndarray
    """(n, k) float64: the released gaps (to the next noisy value, or to the noisy threshold); NaN after the end."""

    @property
    def n_samples(self) -> int:
        return self.indices.shape[0]

    @property
    def lengths(self) -> np.ndarray:
        """(n,) int: the number t of released pairs of each sample, len(out)."""
        return np.count_nonzero(self.indices >= 0, axis=1)

    def outputs(self, s: int) -> list[tuple[int, float]]:
        """Sample s as the spec's output sequence [(j₁, g₁), ..., (j_t, g_t)]."""
        return [(j, g) for j, g in zip(self.indices[s].tolist(), self.gaps[s].tolist()) if j >= 0]


def empty_stream(n_samples: int, n_queries: int) -> tuple[np.ndarray, np.ndarray]:
    """Fresh (tags, values) arrays: every query `NOT_REACHED`, every payload NaN."""
    return (np.full((n_samples, n_queries), NOT_REACHED, dtype=np.int8),
            np.full((n_samples, n_queries), np.nan))
