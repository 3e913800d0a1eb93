"""The probability of a path's conditions, bracketed: a lower and an upper bound, not an estimate.

A path's conditions are `form >= 0` over independent continuous draws. Draws that share no condition are
independent, so the probability is a product over the connected components of the conditions' graph:

- a component of one draw x is an interval I of x: P[x in I] from its law's cdf and sf;
- a *star* — one draw s (the centre) in every condition that has two draws, each other draw v (a leaf) only
  with s — is, given s = t, a product of independent intervals I_v(t) whose ends are the largest of v's lower
  lines and the smallest of its upper lines (each affine in t):

      P = ∫ f_s(t) Π_v P[v in I_v(t)] dt     over the interval of s that its own conditions leave.

The integral is bracketed on a grid of the centre: on a cell [t_j, t_j+1], each factor lies between P[v in
[L_hi, U_lo]] and P[v in [L_lo, U_hi]], where L_hi bounds the lower end from above on the cell (each line at
its larger endpoint) and L_lo from below (the largest of the lines' smaller endpoints), and U likewise; the cell's
weight is s's exact mass there, P[s in cell ∩ interval]. Outside the grid (mass below 10^-12 of s's law at
each end), the factors are bounded by 0 and 1. So `lower <= P <= upper` holds up to floating point, padded by a
relative 10^-9 (scipy's cdf and sf are accurate to about 10^-15 on these laws). The bracket narrows with the
cells like 1/cells; `Integrator(cells)` chooses the trade.

A component in which conditions chain three or more draws (x < y, y < z) or a condition with three draws is
`Outside`. Products of the same leaf factors along paths that share a prefix (the depth-first order of
paths.py) are computed once: a stack per centre keeps the running products.

A `Family` of events — one more condition `form <= t` (or >= t) for many thresholds t at once — is computed in
one pass: its condition's constant is a column of thresholds, which numpy broadcasts against the cells, so the
brackets come back as arrays, one entry per threshold.

`Integrator(cells, fine)` refines: the grid of each star is first the coarse one; the cells that carry all
but 10^-4 of the bracket's width on each side become a window, which is cut into `fine` cells; the coarse
cells outside the window keep their own bounds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..span import Span
from .linear import Constraint, Key
from .paths import Draw, Outside

TAIL = 1e-12
"""The centre's coarse grid spans its law's quantiles TAIL and 1 - TAIL."""
PAD = 1e-9
"""Relative padding of every bracket for floating point."""
REL = 2.0 ** -40
"""The rounding of a condition's constant and of a line's ends, relative to the magnitudes they were computed
from (`Linear.mag`): 2^13 times the unit roundoff, room for thousands of roundings. Lower brackets take the
intervals narrowed by it, upper brackets widened."""
TAIL_ACCURACY = 1e-12
"""The relative accuracy assumed of a tail (cdf or sf) evaluation; a difference of two tails is widened by it
(a thin interval far out, where the difference cancels, gets a lower bound of 0 rather than a wrong one)."""
WINDOW = 1e-4
"""Refinement leaves out of its window the coarse cells that carry this share of the width at each end."""

Value = Any
"""A float, or an array with one entry per threshold of a `Family`."""


@dataclass(frozen=True)
class Bracket:
    lower: Value
    upper: Value

    def __add__(self, other: Bracket) -> Bracket:
        return Bracket(self.lower + other.lower, np.minimum(1.0, self.upper + other.upper))

    def __mul__(self, other: Bracket) -> Bracket:
        return Bracket(self.lower * other.lower, np.minimum(1.0, self.upper * other.upper))

    @property
    def middle(self) -> Value:
        return (self.lower + self.upper) / 2

    def at(self, i: int) -> Bracket:
        """Entry i of a family's brackets."""
        return Bracket(float(np.asarray(self.lower).ravel()[i]), float(np.asarray(self.upper).ravel()[i]))


ZERO = Bracket(0.0, 0.0)
ONE = Bracket(1.0, 1.0)


@dataclass(frozen=True)
class Family:
    """`form <= t` (at_most) or `form >= t` for each threshold t: the condition a family of events adds."""

    form: Any
    """A `Linear`."""
    thresholds: np.ndarray
    at_most: bool


@dataclass(frozen=True, eq=False)
class _Cond:
    """const + Σ terms >= 0; const is a column of thresholds for a family's condition; unc bounds the rounding
    of const."""

    terms: Mapping[Key, float]
    const: Value
    unc: Value
    span: Span | None = None

    @property
    def keys(self) -> frozenset[Key]:
        return frozenset(self.terms)


def _condition(family: Family) -> _Cond:
    ts = np.asarray(family.thresholds, dtype=float)[:, None]  # a column: it broadcasts against the cells
    f = family.form
    const = ts - f.const if family.at_most else f.const - ts
    unc = REL * (f.mag + np.abs(ts) + np.abs(const))
    if family.at_most:
        return _Cond({k: -a for k, a in f.terms.items()}, const, unc)
    return _Cond(dict(f.terms), const, unc)


Drawn = tuple[Key, Draw]
"""A draw and its law."""

Line = tuple[Value, float, Value]
"""alpha + beta·t: a bound on a leaf as a function of the centre t (beta = 0: a constant bound), and the
rounding of alpha."""


@dataclass(frozen=True, eq=False)
class Tails:
    """A law with its median and its tail function: tail(x) = cdf(x) left of the median, sf(x) right of it."""

    law: Any
    """The scipy.stats frozen distribution (quantiles, moments)."""
    median: float
    tail: Callable[[np.ndarray], np.ndarray]


def tails(law: Any) -> Tails:
    """Laplace and exponential laws, the field's noise, have closed forms (a quarter of the time of scipy's
    generic cdf; tests/test_exact.py compares them with scipy's); the others go through scipy's cdf and sf."""
    m = float(law.median())
    name = law.dist.name
    if name == "laplace":
        return Tails(law, m, _laplace_tail(float(law.mean()), float(law.std()) / math.sqrt(2)))
    if name == "expon":
        return Tails(law, m, _exponential_tail(float(law.support()[0]), float(law.std()), m))
    return Tails(law, m, _scipy_tail(law, m))


def _laplace_tail(loc: float, scale: float) -> Callable[[np.ndarray], np.ndarray]:
    return lambda x: 0.5 * np.exp(-np.abs(x - loc) / scale)


def _exponential_tail(loc: float, scale: float, median: float) -> Callable[[np.ndarray], np.ndarray]:
    def tail(x: np.ndarray) -> np.ndarray:
        z = np.maximum(x - loc, 0.0) / scale
        return np.where(x <= median, -np.expm1(-z), np.exp(-z))

    return tail


def _scipy_tail(law: Any, median: float) -> Callable[[np.ndarray], np.ndarray]:
    def tail(x: np.ndarray) -> np.ndarray:
        out = np.empty_like(x)
        left = x <= median
        out[left] = law.cdf(x[left])
        out[~left] = law.sf(x[~left])
        return out

    return tail


def mass(law: Tails, a: Any, b: Any, side: int = 0) -> Any:
    """P[a <= x <= b] (0 where a >= b): tail(b) - tail(a) when b is left of the median m, tail(a) - tail(b)
    when a is right of it, and 1 - tail(a) - tail(b) across it, each end evaluated once (never a difference of
    two probabilities near 1). side -1: a lower bound, +1: an upper bound (the tails' `TAIL_ACCURACY` and the
    rounding of the subtraction), 0: the value."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    m = law.median
    ta, tb = (x.reshape(a.shape) for x in np.split(law.tail(np.concatenate([a.ravel(), b.ravel()])), 2))
    p = np.where(b <= m, tb - ta, np.where(a >= m, ta - tb, 1.0 - ta - tb))
    if side:
        err = TAIL_ACCURACY * (ta + tb) + np.where((b <= m) | (a >= m), 0.0, 2.0 ** -50)
        p = p + side * err
    return np.where(a < b, np.clip(p, 0.0, 1.0), 0.0)


def _vector(x: Value) -> bool:
    return isinstance(x, np.ndarray)


@dataclass(frozen=True, eq=False)
class _Star:
    centre: Key
    inner: tuple[Value, Value]
    """The centre's interval from its own conditions, narrowed by their rounding (for lower brackets) ..."""
    outer: tuple[Value, Value]
    """... and widened (for upper brackets)."""
    leaves: tuple[tuple[Key, tuple[Line, ...], tuple[Line, ...]], ...]
    """Per leaf, in the order the path first constrains it: its lower lines and its upper lines."""


def _components(conditions: Sequence[_Cond]) -> list[list[_Cond]]:
    parent: dict[Key, Key] = {}

    def find(k: Key) -> Key:
        while parent.setdefault(k, k) != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for c in conditions:
        keys = list(c.terms)
        for k in keys[1:]:
            parent[find(k)] = find(keys[0])
        find(keys[0])
    groups: dict[Key, list[_Cond]] = {}
    for c in conditions:
        groups.setdefault(find(next(iter(c.terms))), []).append(c)
    return list(groups.values())


def _interval(conditions: Sequence[_Cond], key: Key) -> tuple[tuple[Value, Value], tuple[Value, Value]]:
    """The interval of one draw that its own conditions leave: narrowed by their rounding, and widened."""
    lo: Value = -math.inf
    hi: Value = math.inf
    lo_out: Value = -math.inf
    hi_out: Value = math.inf
    for c in conditions:
        a = c.terms[key]
        end = -c.const / a
        u = c.unc / abs(a) + REL * np.abs(end)
        if a > 0:
            lo, lo_out = np.maximum(lo, end + u), np.maximum(lo_out, end - u)
        else:
            hi, hi_out = np.minimum(hi, end - u), np.minimum(hi_out, end + u)
    return (_plain(lo), _plain(hi)), (_plain(lo_out), _plain(hi_out))


def _plain(x: Value) -> Value:
    """A float where numpy made a 0-d array (a cache key must hash)."""
    return float(x) if np.ndim(x) == 0 else x


def _star(group: Sequence[_Cond]) -> _Star:
    wide = [c for c in group if len(c.terms) > 1]
    for c in wide:
        if len(c.terms) > 2:
            raise Outside("a condition on three or more draws", c.span)
    shared = frozenset.intersection(*(c.keys for c in wide))
    if not shared:
        raise Outside("conditions that chain draws (no one draw is in every condition on two)",
                      next((c.span for c in reversed(wide) if c.span is not None), None))
    centre = min(shared, key=lambda k: (k[0], -1 if k[1] is None else k[1]))
    own = [c for c in group if c.keys == {centre}]
    order: list[Key] = []
    lines: dict[Key, tuple[list[Line], list[Line]]] = {}
    for c in group:
        if c.keys == {centre}:
            continue
        (leaf,) = c.keys - {centre}
        if leaf not in lines:
            order.append(leaf)
            lines[leaf] = ([], [])
        a, b, const = c.terms[leaf], c.terms.get(centre, 0.0), c.const
        # const + b·t + a·v >= 0:  v >= -(const + b t)/a  (a > 0),  v <= (const + b t)/(-a)  (a < 0)
        alpha = -const / a
        rounding = _plain(c.unc / abs(a) + REL * np.abs(alpha))
        lines[leaf][0 if a > 0 else 1].append((_plain(alpha), -b / a, rounding))
    inner, outer = _interval(own, centre)
    return _Star(centre, inner, outer,
                 tuple((leaf, tuple(lines[leaf][0]), tuple(lines[leaf][1])) for leaf in order))


def _factor_on(t: np.ndarray, law: Tails, lower: Sequence[Line], upper: Sequence[Line]) -> tuple[Any, Any]:
    """Per cell of the edges t, bounds on P[leaf in [max lower lines, min upper lines]] (rows: thresholds); each
    line's ends are moved by their rounding, outwards for the upper bound and inwards for the lower."""
    low_hi: Value = -np.inf  # the lower end, bounded above on the cell
    low_lo: Value = -np.inf  # ... and below
    up_lo: Value = np.inf
    up_hi: Value = np.inf
    for alpha, beta, rounding in lower:
        at = alpha + beta * t
        u = rounding + REL * np.abs(beta * t)
        low_hi = np.maximum(low_hi, np.maximum(at[..., :-1] + u[..., :-1], at[..., 1:] + u[..., 1:]))
        low_lo = np.maximum(low_lo, np.minimum(at[..., :-1] - u[..., :-1], at[..., 1:] - u[..., 1:]))
    for alpha, beta, rounding in upper:
        at = alpha + beta * t
        u = rounding + REL * np.abs(beta * t)
        up_lo = np.minimum(up_lo, np.minimum(at[..., :-1] - u[..., :-1], at[..., 1:] - u[..., 1:]))
        up_hi = np.minimum(up_hi, np.maximum(at[..., :-1] + u[..., :-1], at[..., 1:] + u[..., 1:]))
    return mass(law, low_hi, up_lo, -1), mass(law, low_lo, up_hi, +1)


def _masses_on(t: np.ndarray, law: Tails, interval: tuple[Value, Value], side: int) -> tuple[Any, Any]:
    """The centre's mass in each cell of t within the interval, and in the interval outside t (bounds: side)."""
    lo, hi = interval
    cells = mass(law, np.maximum(t[:-1], lo), np.minimum(t[1:], hi), side)
    outside = mass(law, lo, np.minimum(hi, t[0]), side) + mass(law, np.maximum(lo, t[-1]), hi, side)
    return cells, outside[..., 0] if _vector(outside) and outside.ndim > 1 else outside


def _padded(lower: Value, upper: Value) -> Bracket:
    return Bracket(lower * (1 - PAD), np.minimum(1.0, upper * (1 + PAD)))


class Integrator:
    """Brackets path probabilities, sharing work between paths: the grids, the leaf factors and the running
    products of paths that share a prefix. A draw is its key and its law (a noise scale may differ between
    paths that reach the same draw). With `fine`, each star is refined (module docstring)."""

    def __init__(self, cells: int = 1 << 13, fine: int | None = None):
        self.cells = cells
        self.fine = fine
        self._laws: dict[Draw, Tails] = {}
        self._grids: dict[Drawn, np.ndarray] = {}
        self._factors: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        self._masses: dict[tuple, tuple[np.ndarray, float]] = {}
        self._full: dict[tuple[Drawn, int], np.ndarray] = {}
        self._stacks: dict[Drawn, list[tuple[tuple, np.ndarray, np.ndarray]]] = {}

    def law(self, drawn: Drawn) -> Tails:
        draw = drawn[1]
        if draw not in self._laws:
            self._laws[draw] = tails(draw.law())
        return self._laws[draw]

    def probability(self, constraints: Sequence[Constraint], draws: Mapping[Key, Draw],
                    family: Family | None = None) -> Bracket:
        """Bounds on the probability that every constraint holds (and the family's condition, for each of its
        thresholds: then the bounds are arrays), each draw from its law in `draws`."""
        conditions = [_Cond(c.form.terms, c.form.const, REL * (c.form.mag + abs(c.form.const)), c.span)
                      for c in constraints]
        if family is not None:
            conditions.append(_condition(family))
        result = ONE if family is None else Bracket(np.ones(len(family.thresholds)), np.ones(len(family.thresholds)))
        for group in _components(conditions):
            keys = frozenset().union(*(c.keys for c in group))
            if len(keys) == 1:
                (key,) = keys
                inner, outer = _interval(group, key)
                law = self.law((key, draws[key]))
                p_lo, p_hi = mass(law, *inner, -1), mass(law, *outer, +1)
                result = result * _padded(p_lo.ravel() if p_lo.ndim else float(p_lo),
                                          p_hi.ravel() if p_hi.ndim else float(p_hi))
            else:
                result = result * self._integrate(_star(group), draws)
            if np.all(result.upper == 0.0):
                break
        return result

    # -- a star ------------------------------------------------------------------------------------------------
    def _grid(self, centre: Drawn) -> np.ndarray:
        if centre not in self._grids:
            law = self.law(centre).law
            self._grids[centre] = np.linspace(float(law.ppf(TAIL)), float(law.isf(TAIL)), self.cells + 1)
        return self._grids[centre]

    def _masses_of(self, centre: Drawn, interval: tuple[float, float], side: int) -> tuple[np.ndarray, float]:
        """On the coarse grid, `_masses_on` for a scalar interval: only its end cells are computed anew."""
        key = (centre, interval, side)
        if key not in self._masses:
            law, t = self.law(centre), self._grid(centre)
            if (centre, side) not in self._full:
                self._full[(centre, side)] = mass(law, t[:-1], t[1:], side)
            n = len(t) - 1
            lo, hi = interval
            cells = np.zeros(n)
            outside = 0.0
            if lo < hi:
                first = max(int(np.searchsorted(t, lo, side="right")) - 1, 0)  # cells before: all below lo
                stop = min(int(np.searchsorted(t, hi, side="left")), n)  # cells from here: all above hi
                cells[first:stop] = self._full[(centre, side)][first:stop]
                ends = sorted(k for k in {first, stop - 1} if 0 <= k < n and first <= k < stop)
                a = [max(t[k], lo) for k in ends] + [lo, max(lo, t[-1])]
                b = [min(t[k + 1], hi) for k in ends] + [min(hi, t[0]), hi]
                masses = mass(law, a, b, side)
                for k, m in zip(ends, masses):
                    cells[k] = m
                outside = float(masses[-2] + masses[-1])
            self._masses[key] = (cells, outside)
        return self._masses[key]

    def _factor(self, centre: Drawn, leaf: Drawn, lower: tuple[Line, ...], upper: tuple[Line, ...]) \
            -> tuple[np.ndarray, np.ndarray]:
        key = (centre, leaf, lower, upper)
        if key not in self._factors:
            self._factors[key] = _factor_on(self._grid(centre), self.law(leaf), lower, upper)
        return self._factors[key]

    def _product(self, centre: Drawn, ids: list[tuple[Drawn, tuple[Line, ...], tuple[Line, ...]]]) \
            -> tuple[np.ndarray, np.ndarray]:
        """The product of the leaves' factors on the coarse grid, continuing the running products of the
        previous path where its leaves were the same."""
        stack = self._stacks.setdefault(centre, [])
        shared = 0
        while shared < min(len(stack), len(ids)) and stack[shared][0] == ids[shared]:
            shared += 1
        del stack[shared:]
        lo, hi = (stack[-1][1], stack[-1][2]) if stack else (np.ones(self.cells), np.ones(self.cells))
        for leaf, lower, upper in ids[shared:]:
            f_lo, f_hi = self._factor(centre, leaf, lower, upper)
            lo, hi = lo * f_lo, hi * f_hi
            stack.append(((leaf, lower, upper), lo, hi))
        return lo, hi

    def _integrate(self, star: _Star, draws: Mapping[Key, Draw]) -> Bracket:
        centre = (star.centre, draws[star.centre])
        leaves = [((leaf, draws[leaf]), lower, upper) for leaf, lower, upper in star.leaves]
        moving = [any(_vector(line[0]) for line in lower + upper) for _, lower, upper in leaves]
        varying = [x for x, m in zip(leaves, moving) if m]
        lo, hi = self._product(centre, [x for x, m in zip(leaves, moving) if not m])
        t, law = self._grid(centre), self.law(centre)
        for leaf, lower, upper in varying:
            f_lo, f_hi = _factor_on(t, self.law(leaf), lower, upper)
            lo, hi = lo * f_lo, hi * f_hi
        if any(_vector(x) for x in star.inner + star.outer):
            cells_lo, _ = _masses_on(t, law, star.inner, -1)
            cells_hi, outside = _masses_on(t, law, star.outer, +1)
        else:
            cells_lo, _ = self._masses_of(centre, star.inner, -1)
            cells_hi, outside = self._masses_of(centre, star.outer, +1)
        c_lo, c_hi = cells_lo * lo, cells_hi * hi
        if self.fine is None or varying:
            return _padded(c_lo.sum(-1), c_hi.sum(-1) + outside)
        return self._refine(star, centre, leaves, c_lo, c_hi, outside)

    def _refine(self, star: _Star, centre: Drawn, leaves: list, c_lo: np.ndarray, c_hi: np.ndarray,
                outside: float) -> Bracket:
        """The coarse cells that carry the bracket's width, cut into `fine` cells (module docstring)."""
        assert self.fine is not None
        width = np.cumsum(c_hi - c_lo)
        if width[-1] <= 0.0:
            return _padded(c_lo.sum(), c_hi.sum() + outside)
        first = int(np.searchsorted(width, WINDOW * width[-1], side="left"))
        last = int(np.searchsorted(width, (1 - WINDOW) * width[-1], side="left"))
        t = self._grid(centre)
        edges = np.linspace(t[first], t[last + 1], self.fine + 1)
        f_lo, f_hi = np.ones(self.fine), np.ones(self.fine)
        for leaf, lower, upper in leaves:
            g_lo, g_hi = _factor_on(edges, self.law(leaf), lower, upper)
            f_lo, f_hi = f_lo * g_lo, f_hi * g_hi
        cells_lo, _ = _masses_on(edges, self.law(centre), star.inner, -1)
        cells_hi, _ = _masses_on(edges, self.law(centre), star.outer, +1)
        rest_lo = c_lo[:first].sum() + c_lo[last + 1:].sum()
        rest_hi = c_hi[:first].sum() + c_hi[last + 1:].sum()
        return _padded(rest_lo + float(np.dot(cells_lo, f_lo)), rest_hi + float(np.dot(cells_hi, f_hi)) + outside)
