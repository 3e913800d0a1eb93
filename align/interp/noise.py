"""Interpreter (noise): drawing from the distributions of `distributions.DISTRIBUTIONS` (each record has its
own sampler, parameter requirements, support and cost rule), the run-time checks of parameters, numeric cost
coefficients and support tests, and the seeding scheme that makes runs reproducible.

Seeding. Every value of H has its own stream: sample number s of a run seeded with S draws the member `m`
of noise site number `k` (its position in `ResolvedMechanism.noise`) as value number s mod BLOCK of

    Generator(PCG64(SeedSequence(S, spawn_key=(s // BLOCK, k, zigzag(m)))))

(a scalar site has m = 0; a family member is keyed by the loop variable's value). Nothing depends on the
chunk size, on which lanes of a chunk are still running, or on which branches other samples take, so the
same seed gives the same noise whatever the chunking and whether or not earlier iterations were skipped.
numpy's samplers fill their output in order, so a shorter run is a prefix of a longer one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..distributions import Distribution, Field, Requirement

BLOCK = 1 << 14
"""Samples per seeding block: chunks are whole numbers of blocks, so results do not depend on the chunk size."""

Array = np.ndarray


def zigzag(m: int) -> int:
    """Non-negative key for an integer (SeedSequence spawn keys must be >= 0): 0, -1, 1, -2, 2 -> 0, 1, 2, 3, 4."""
    return 2 * m if m >= 0 else -2 * m - 1


def root_sequence(seed: int | np.random.SeedSequence) -> np.random.SeedSequence:
    return seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)


def stream(root: np.random.SeedSequence, block: int, site: int, member: int) -> np.random.Generator:
    """The generator of one (block, site, member): see the module docstring."""
    seq = np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + (block, site, zigzag(member)),
                                 pool_size=root.pool_size)
    return np.random.Generator(np.random.PCG64(seq))


# ------------------------------------------------------------------------------------------ parameter checks


@dataclass(frozen=True)
class Check:
    """One requirement on the parameters of a distribution (from `Distribution.requirements`)."""

    param: int
    """The parameter the message is about (its position)."""
    requirement: str
    """What it must be, in words: `positive`, `in (0, 1)`, `greater than a`."""
    ok: Callable[[tuple[Array, ...]], Array]
    """Elementwise: True where the requirement holds."""


def _check(requirement: Requirement) -> Check:
    return Check(requirement.param, requirement.text, lambda p: requirement.holds(p, np.logical_and))


def checks(dist: Distribution) -> tuple[Check, ...]:
    return tuple(_check(r) for r in dist.requirements)


@dataclass(frozen=True)
class ParameterProblem:
    """The first lane whose parameters a distribution rejects."""

    lane: int
    param: int
    requirement: str
    value: float


def parameter_checks(dist: Distribution, params: tuple[Array, ...]) -> list[tuple[Array, int, str]]:
    """Every requirement on the parameters, as (lanes where it fails, parameter position, requirement)."""
    with np.errstate(invalid="ignore"):
        result = [(~np.isfinite(p), i, "a finite number") for i, p in enumerate(params)]
        result += [(np.asarray(~check.ok(params)), check.param, check.requirement) for check in checks(dist)]
    return result


def check_parameters(dist: Distribution, params: tuple[Array, ...], active: Array | None) -> ParameterProblem | None:
    """The first active lane with an invalid parameter (not finite, or failing a check), or None.

    `params` are float arrays of shape (1,) (uniform over lanes) or (n,); `active` is None (every lane) or a
    boolean mask.
    """
    with np.errstate(invalid="ignore"):
        for i, p in enumerate(params):
            bad = ~np.isfinite(p)
            problem = _first(bad, active, p, i, "a finite number")
            if problem:
                return problem
        for check in checks(dist):
            problem = _first(np.asarray(~check.ok(params)), active, params[check.param], check.param,
                             check.requirement)
            if problem:
                return problem
    return None


def _first(bad: Array, active: Array | None, values: Array, param: int, requirement: str) -> ParameterProblem | None:
    lanes = max(bad.shape[0], active.shape[0] if active is not None else 1)
    bad = np.broadcast_to(bad, (lanes,))
    if active is not None:
        bad = bad & active
    if not bad.any():
        return None
    lane = int(np.argmax(bad))
    value = values[lane if values.shape[0] > 1 else 0]
    return ParameterProblem(lane, param, requirement, float(value))


def sanitize(dist: Distribution, params: tuple[Array, ...], active: Array | None) -> tuple:
    """Parameters for drawing: uniform ones as floats, per-lane ones with inactive lanes set to valid defaults."""
    result: list[float | Array] = []
    for p, default in zip(params, dist.defaults):
        if p.shape[0] == 1:
            result.append(float(p[0]))
        elif active is None:
            result.append(p.astype(float, copy=False))
        else:
            result.append(np.where(active, p, default).astype(float, copy=False))
    return tuple(result)


def draw_block_values(dist: Distribution, root: np.random.SeedSequence, site: int, member: int, start: int,
                      count: int, params: tuple) -> Array:
    """Values number start .. start + count - 1 of the run for one site member (start is a multiple of BLOCK)."""
    if start % BLOCK:
        raise ValueError(f"chunks start at multiples of {BLOCK}, not at {start}")
    pieces = []
    for offset in range(0, count, BLOCK):
        size = min(BLOCK, count - offset)
        block_params = tuple(p[offset:offset + size] if isinstance(p, np.ndarray) else p for p in params)
        gen = stream(root, (start + offset) // BLOCK, site, member)
        pieces.append(np.asarray(dist.draw(gen, block_params, size)))
    values = pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
    return values.astype(np.int64 if dist.integer else float, copy=False)


# --------------------------------------------------------------------------- costs and supports (alignment)


_NUMPY = Field(1.0, np.log)
"""numpy as a cost rule's number domain."""


def cost_coefficient(dist: Distribution, params: Sequence) -> Array | None:
    """c_i evaluated numerically at the parameters actually used (written ones only: defaults are the rule's own),
    by the distribution's own cost rule (the one `align check` prints and C3 proves with)."""
    if dist.cost is None:
        return None
    with np.errstate(all="ignore"):
        return np.asarray(dist.cost(tuple(np.asarray(p, dtype=float) for p in params), _NUMPY), dtype=float)


def map_cost(dist: Distribution, params: Sequence, aligned: Array, images: Sequence[Array]) -> Array:
    """The exact cost of a value map g of noise with finitely many values (rules.ValueMaps; `checks.map_cost` in
    the checker), elementwise: ln P[g⁻¹(g(b))] − ln P[g(b)], given g(b) (`aligned`) and g(v) for each value v of
    the distribution's `masses`, in their order (`images`); +inf where g(b) is not a value of positive probability."""
    aligned = np.asarray(aligned, dtype=float)
    with np.errstate(all="ignore"):
        target = _mass(dist, params, aligned)
        preimage = sum((np.where(np.asarray(image, dtype=float) == aligned, np.asarray(p, dtype=float), 0.0)
                        for (_, p), image in zip(_atoms(dist, params), images)), np.zeros(aligned.shape))
        return np.where(target > 0, np.log(preimage) - np.log(target), np.inf)


def _atoms(dist: Distribution, params: Sequence) -> tuple[tuple[Any, Any], ...]:
    assert dist.masses is not None, "only noise with finitely many values has masses"
    return dist.masses(tuple(np.asarray(p, dtype=float) for p in params))


def _mass(dist: Distribution, params: Sequence, x: Array) -> Array:
    """Elementwise P[x] under a distribution with finitely many values (`Distribution.masses`)."""
    return sum((np.where(x == np.asarray(v, dtype=float), np.asarray(p, dtype=float), 0.0)
                for v, p in _atoms(dist, params)), np.zeros(np.shape(x)))


def in_support(dist: Distribution, params: tuple, x: Array) -> Array:
    """Elementwise: whether x lies in the support of the distribution with these (full) parameters
    (`Distribution.values`, the declaration the checker's z3 assumptions also come from)."""
    x = np.asarray(x)
    support = dist.values
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(x)
        if support.integer:
            ok = ok & (np.floor(x) == x)
        ok = np.asarray(support.contains(x, params, np.logical_and, ok), dtype=bool)
        if dist.masses is not None:  # the values of positive probability (Bernoulli(1) has the support {1})
            ok = ok & (_mass(dist, params, x) > 0)
        return ok


def is_whole(x: Array, tolerance: float = 1e-9) -> Array:
    """Whether shifts are whole numbers, up to float rounding of the shift's own arithmetic (relative 1e-9)."""
    x = np.asarray(x)
    if x.dtype.kind in "iub":
        return np.ones(x.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        return np.isfinite(x) & (np.abs(x - np.round(x)) <= tolerance * np.maximum(1.0, np.abs(x)))
