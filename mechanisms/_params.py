"""Argument checks shared by the mechanisms: each raises ValueError naming the spec's `requires` clause it enforces."""

from __future__ import annotations

import numpy as np


def require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def privacy_split(eps: float, k: int, theta: float) -> None:
    """The `requires eps > 0, k >= 1, 0 < theta < 1` of the Free Gap SVT specs."""
    require(eps > 0, f"eps must be > 0, got {eps}")
    require(int(k) == k and k >= 1, f"k must be an integer >= 1, got {k}")
    require(0 < theta < 1, f"theta must lie in (0, 1), got {theta}")


def query_vector(q, *, integer: bool = False) -> np.ndarray:
    """The answers q₁(D), ..., q_m(D) as a 1-d float array (a copy; integer-valued where the spec says int[])."""
    a = np.asarray(q, dtype=float)
    require(a.ndim == 1, f"q must be a 1-d list of query answers, got shape {a.shape}")
    require(bool(np.all(np.isfinite(a))), "q must be finite")
    if integer:
        require(bool(np.all(a == np.round(a))), "q must be integer-valued (the spec declares q: int[])")
    return a


def sample_count(n_samples: int) -> int:
    require(int(n_samples) == n_samples and n_samples >= 0, f"n_samples must be an integer >= 0, got {n_samples}")
    return int(n_samples)


def generator(rng) -> np.random.Generator:
    """An explicit generator is required: never numpy's global state (design.md §3)."""
    require(isinstance(rng, np.random.Generator),
            "rng must be a numpy.random.Generator (e.g. np.random.default_rng(np.random.SeedSequence(7)))")
    return rng
