"""Interpreter (vector values): the value of an expression for every sample of a chunk at once.

Every value is a small tree whose leaves are numpy arrays. A leaf's first axis is the lane (sample) axis, of
length n (the chunk) or 1 (the same value on every lane: parameters, constants, loop variables), so numpy
broadcasting mixes the two. The axes after it are *data axes*: one per enclosing list.

| value | tree |
|---|---|
| real, int, bool | `Num(a)`, a of dtype float64, int64 or bool |
| tuple | `Tup(items)` |
| tag | `TagV(code, payloads)`: code indexes the mechanism's sorted tag table |
| list | `ListV(elem, length)`: `length` counts the valid positions per lane |
| index set | `SetV(mask, offset)`: `mask[:, u]` says whether u + offset is a member |
| range `a .. b` | `RangeV(lo, hi)` |

A tag's `payloads[tag]` holds the payload of `tag`, meaningful where code is that tag; a list's `elem` has one
more data axis than its elements (the position, up to a capacity).

Lists are values (assigning one and then changing the original leaves the copy alone); to fill a list of n
lanes in a loop without copying it each time, a list that only one variable holds (`exclusive`) is updated in
place, and any other read of it clears the flag (copy-on-write).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Array = np.ndarray


@dataclass(eq=False)
class Num:
    a: Array


@dataclass(eq=False)
class Tup:
    items: tuple


@dataclass(eq=False)
class TagV:
    code: Array
    payloads: dict = field(default_factory=dict)
    """tag name -> tuple of payload trees (same lane and data axes as `code`)."""


@dataclass(eq=False)
class ListV:
    elem: Any
    """Tree of the elements, one more data axis than `length` (None for an empty list of unknown elements)."""
    length: Array
    exclusive: bool = False
    """Held by one variable only: indexed assignment may update it in place."""


@dataclass(eq=False)
class SetV:
    mask: Array
    offset: int


@dataclass(eq=False)
class RangeV:
    lo: Array
    hi: Array


Tree = Any


def uniform(x: Any, dtype=None) -> Array:
    """A shape-(1,) array: the same value on every lane."""
    return np.asarray([x], dtype=dtype)


def leaves(t: Tree) -> list[Array]:
    if isinstance(t, Num):
        return [t.a]
    if isinstance(t, Tup):
        return [leaf for item in t.items for leaf in leaves(item)]
    if isinstance(t, TagV):
        out = [t.code]
        for key in sorted(t.payloads):
            for p in t.payloads[key]:
                out.extend(leaves(p))
        return out
    if isinstance(t, ListV):
        return [t.length] + (leaves(t.elem) if t.elem is not None else [])
    if isinstance(t, SetV):
        return [t.mask]
    if isinstance(t, RangeV):
        return [t.lo, t.hi]
    raise TypeError(f"not a value tree: {type(t).__name__}")


def tmap(f: Callable[..., Array], *ts: Tree) -> Tree:
    """Apply f leafwise to trees of identical structure (see `unify`)."""
    t0 = ts[0]
    if isinstance(t0, Num):
        return Num(f(*(t.a for t in ts)))
    if isinstance(t0, Tup):
        return Tup(tuple(tmap(f, *items) for items in zip(*(t.items for t in ts))))
    if isinstance(t0, TagV):
        return TagV(f(*(t.code for t in ts)),
                    {k: tuple(tmap(f, *ps) for ps in zip(*(t.payloads[k] for t in ts))) for k in t0.payloads})
    if isinstance(t0, ListV):
        elem = None if t0.elem is None else tmap(f, *(t.elem for t in ts))
        return ListV(elem, f(*(t.length for t in ts)))
    if isinstance(t0, SetV):
        return SetV(f(*(t.mask for t in ts)), t0.offset)
    if isinstance(t0, RangeV):
        return RangeV(f(*(t.lo for t in ts)), f(*(t.hi for t in ts)))
    raise TypeError(f"not a value tree: {type(t0).__name__}")


def lanes(t: Tree) -> int:
    """Number of lanes of a tree (1 when every leaf is uniform)."""
    return max((leaf.shape[0] for leaf in leaves(t)), default=1)


# ------------------------------------------------------------------------------------------ unification


def _pad(x: Array, prefix: int, target: tuple[int, ...]) -> Array:
    pads = [(0, 0)] * prefix + [(0, t - s) for s, t in zip(x.shape[prefix:], target)]
    return np.pad(x, pads) if any(p[1] for p in pads) else x


def zeros_like(t: Tree, prefix_shape: tuple[int, ...], old_prefix: int) -> Tree:
    """A tree of t's structure, filled with zeros, whose leaves have `prefix_shape` instead of t's first
    `old_prefix` axes."""
    return tmap(lambda x: np.zeros(prefix_shape + x.shape[old_prefix:], dtype=x.dtype), t)


def unify(a: Tree, b: Tree, pa: int = 1, pb: int = 1) -> tuple[Tree, Tree]:
    """Make two trees structurally identical: same tags with payloads, same dtypes, same data-axis sizes.

    `pa` and `pb` count the prefix axes of each (1: the lane axis; 2 for the elements of a list, whose second
    axis is the position). Lane axes are left alone (numpy broadcasts them); data axes are zero-padded.
    """
    if isinstance(a, Num) and isinstance(b, Num):
        x, y = a.a, b.a
        if x.ndim - pa != y.ndim - pb:
            raise TypeError("values of different shapes")
        target = tuple(max(s, t) for s, t in zip(x.shape[pa:], y.shape[pb:]))
        dtype = np.result_type(x.dtype, y.dtype)
        return Num(_pad(x, pa, target).astype(dtype, copy=False)), Num(_pad(y, pb, target).astype(dtype, copy=False))
    if isinstance(a, Tup) and isinstance(b, Tup) and len(a.items) == len(b.items):
        pairs = [unify(x, y, pa, pb) for x, y in zip(a.items, b.items)]
        return Tup(tuple(p[0] for p in pairs)), Tup(tuple(p[1] for p in pairs))
    if isinstance(a, TagV) and isinstance(b, TagV):
        pa_, pb_ = dict(a.payloads), dict(b.payloads)
        for key in set(pa_) | set(pb_):
            if key not in pa_:
                pa_[key] = tuple(zeros_like(p, a.code.shape, pb) for p in pb_[key])
            if key not in pb_:
                pb_[key] = tuple(zeros_like(p, b.code.shape, pa) for p in pa_[key])
        ca, cb = unify(Num(a.code), Num(b.code), pa, pb)
        ua, ub = {}, {}
        for key in pa_:
            pairs = [unify(x, y, pa, pb) for x, y in zip(pa_[key], pb_[key])]
            ua[key], ub[key] = tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
        return TagV(ca.a, ua), TagV(cb.a, ub)
    if isinstance(a, ListV) and isinstance(b, ListV):
        ea, eb = a.elem, b.elem
        if ea is None and eb is not None:
            ea = zeros_like(eb, a.length.shape + (0,), pb + 1)
        if eb is None and ea is not None:
            eb = zeros_like(ea, b.length.shape + (0,), pa + 1)
        la, lb = unify(Num(a.length), Num(b.length), pa, pb)
        if ea is not None:
            ea, eb = unify(ea, eb, pa, pb)
        return ListV(ea, la.a, a.exclusive), ListV(eb, lb.a, b.exclusive)
    if isinstance(a, SetV) and isinstance(b, SetV):
        lo = min(a.offset, b.offset)
        hi = max(a.offset + a.mask.shape[-1], b.offset + b.mask.shape[-1])
        return rebase(a, lo, hi), rebase(b, lo, hi)
    if isinstance(a, RangeV) and isinstance(b, RangeV):
        return a, b
    raise TypeError(f"cannot mix {type(a).__name__} and {type(b).__name__}")


def rebase(s: SetV, lo: int, hi: int) -> SetV:
    if s.offset == lo and s.mask.shape[-1] == hi - lo:
        return s
    mask = np.zeros(s.mask.shape[:-1] + (hi - lo,), dtype=bool)
    mask[..., s.offset - lo: s.offset - lo + s.mask.shape[-1]] = s.mask
    return SetV(mask, lo)


def expand(mask: Array, ndim: int) -> Array:
    """A lane mask shaped to broadcast against a leaf with `ndim` axes."""
    return mask.reshape(mask.shape + (1,) * (ndim - mask.ndim))


def where(mask: Array | None, a: Tree, b: Tree) -> Tree:
    """Lanes of a where mask holds, of b elsewhere (mask None: every lane)."""
    if mask is None:
        return a
    a, b = unify(a, b)

    def pick(x: Array, y: Array) -> Array:
        return np.where(expand(mask, max(x.ndim, y.ndim)), x, y)

    return tmap(pick, a, b)


def broadcast_lanes(t: Tree, n: int) -> Tree:
    """Every leaf with n lanes (copies uniform leaves)."""
    return tmap(lambda x: np.ascontiguousarray(np.broadcast_to(x, (n,) + x.shape[1:])) if x.shape[0] != n else x, t)


def equal(a: Tree, b: Tree, codes: dict[str, int]) -> Array:
    """Lanewise `a == b` for values of any type (tags compare their payloads, lists their valid entries);
    `codes` maps tag names to their codes."""
    a, b = unify(a, b)
    if isinstance(a, Num):
        return np.equal(a.a, b.a)
    if isinstance(a, Tup):
        result = np.ones(1, dtype=bool)
        for x, y in zip(a.items, b.items):
            result = result & equal(x, y, codes)
        return result
    if isinstance(a, TagV):
        result = a.code == b.code
        for tag in a.payloads:
            same = np.ones(1, dtype=bool)
            for x, y in zip(a.payloads[tag], b.payloads[tag]):
                same = same & equal(x, y, codes)
            # A payload matters only where both values carry this tag (the codes are compared above).
            result = result & (same | (a.code != codes[tag]))
        return result
    if isinstance(a, ListV):
        result = a.length == b.length
        if a.elem is not None:
            cap = leaves(a.elem)[0].shape[a.length.ndim]
            inside = np.arange(cap) < np.maximum(a.length, b.length)[..., None]
            pairs = [(x, y) for x, y in zip(leaves(a.elem), leaves(b.elem))]
            for x, y in pairs:
                same = np.equal(x, y)
                same = same.reshape(same.shape[: a.length.ndim + 1] + (-1,)).all(axis=-1)
                result = result & (same | ~inside).all(axis=-1)
        return result
    if isinstance(a, SetV):
        return (a.mask == b.mask).all(axis=-1)
    return (a.lo == b.lo) & (a.hi == b.hi)


# ------------------------------------------------------------------------------------------------ lists


def take(x: Array, j: Array) -> Array:
    """x[lane, j[lane]] for a leaf with a position axis; j has 1 or n lanes and is within the capacity."""
    if j.shape[0] == 1:
        return x[:, int(j[0])].copy()
    if x.shape[0] == 1:
        return x[0, j]
    return x[np.arange(x.shape[0]), j]


def list_get(lst: ListV, j: Array) -> Tree:
    """Element j (lanewise) of a list; positions outside the capacity read as position 0 (callers check)."""
    cap = leaves(lst.elem)[0].shape[1] if lst.elem is not None else 0
    if lst.elem is None or cap == 0:
        raise IndexError("empty list")
    jj = np.clip(j, 0, cap - 1)
    return tmap(lambda x: take(x, jj), lst.elem)


def list_set(lst: ListV, j: Array, value: Tree, mask: Array | None, n: int, capacity: int = 0,
             fresh: bool = False) -> ListV:
    """The list with element j set to value on the lanes of mask, updated in place when it is exclusive.

    The caller has checked 0 <= j <= length on those lanes; j == length appends. `capacity` is a hint: the
    number of positions the list is expected to reach (allocated at once instead of by doubling). `fresh`
    says that the entries written hold zeros so far (appends to a list that only ever grows by appending, as
    `out`): a tag's payloads that the value does not carry are then not written (they would be written zeros).
    """
    appending = j is lst.length
    given = value
    if not lst.exclusive:
        lst = ListV(None if lst.elem is None else tmap(np.copy, lst.elem), lst.length.copy(), True)
    per_lane = mask is not None or j.shape[0] > 1 or lanes(value) > 1
    if per_lane and lanes(lst) == 1 and n > 1:
        lst = ListV(None if lst.elem is None else broadcast_lanes(lst.elem, n),
                    np.ascontiguousarray(np.broadcast_to(lst.length, (n,) + lst.length.shape[1:])), True)
    rows: Array | slice | None = None
    cols: Array | None = None
    if mask is None or j.shape[0] == 1:
        live = j
    else:
        rows = np.flatnonzero(mask)
        live = cols = j[rows]
    need = int(live.max()) + 1 if live.size else 0
    if lst.elem is None:
        first = max(need, 4, capacity)
        lst.elem = tmap(lambda x: np.zeros(lst.length.shape + (first,) + x.shape[1:], dtype=x.dtype, order="F"),
                        value)
    cap = leaves(lst.elem)[0].shape[1]
    if need > cap:
        lst.elem = tmap(lambda x: _grow_positions(x, max(need, 2 * cap, capacity)), lst.elem)
    elem, value = unify(lst.elem, value, 2, 1)
    if j.shape[0] == 1:
        col = int(j[0])

        def write(x: Array, v: Array) -> Array:
            if mask is None:
                x[:, col] = v
            else:
                x[:, col] = np.where(expand(mask, v.ndim), v, x[:, col])
            return x
    else:
        if cols is None:  # (rows too: they are set together above)
            rows, cols = slice(None), j
        same = cols.size > 0 and cols.min() == cols.max()
        target = int(cols[0]) if same else cols  # one position for every lane (the usual case): a column write
        if not same and isinstance(rows, slice):
            rows = np.arange(n)

        def write(x: Array, v: Array) -> Array:
            if same:  # on the position's own column (a contiguous view: faster than indexing two axes)
                column = x[:, target]
                column[rows] = v[rows] if v.shape[0] > 1 else v[0]
            else:
                x[rows, target] = v[rows] if v.shape[0] > 1 else v[0]
            return x
    if fresh and isinstance(value, TagV) and isinstance(elem, TagV):
        # The payloads of other tags stay zero where this value is written (as unify would write them).
        carried = given.payloads if isinstance(given, TagV) else {}
        lst.elem = TagV(write(elem.code, value.code),
                        {k: tuple(tmap(write, x, y) for x, y in zip(e, value.payloads[k])) if k in carried else e
                         for k, e in elem.payloads.items()})
    else:
        lst.elem = tmap(write, elem, value)
    if appending:  # an append (`output`): the length grows by one on the lanes of mask
        lst.length = lst.length + 1 if mask is None else lst.length + mask
    else:
        grown = np.maximum(lst.length, j + 1)
        lst.length = grown if mask is None else np.where(mask, grown, lst.length)
    return lst


def _grow_positions(x: Array, cap: int) -> Array:
    """A copy of a leaf with capacity `cap` on its position axis (column-major: a position is contiguous)."""
    out = np.zeros(x.shape[:1] + (cap,) + x.shape[2:], dtype=x.dtype, order="F")
    out[:, : x.shape[1]] = x
    return out


def valid_positions(lst: ListV) -> Array:
    """Boolean (lanes, capacity): which positions of the list exist."""
    cap = leaves(lst.elem)[0].shape[1] if lst.elem is not None else 0
    return np.arange(cap)[None, :] < lst.length[:, None]
