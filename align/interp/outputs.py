"""Interpreter (outputs): the outputs of many samples in a form that statistics can count and bin.

`Outputs` holds, for n samples, the output sequence `out` of each: its length (n,) and one array per
component of the output type with a position axis, (n, P) where P is the longest output of the chunk. The
components ("columns") come from the output type, so every chunk of a mechanism has the same columns:

| output type | columns |
|---|---|
| `real` / `int` / `bool` | `value` |
| tuple `(int, real)` | `0`, `1` |
| tag `BOT \\| TOP(real)` | `tag` (a code: the tag's position in `tag_names`), `TOP.0` (valid where the tag is TOP) |
| list `int[]` | `len` and `[]` (one more position axis) |

Each column has a validity mask (the position exists, the tag carries that payload). Columns of kind
`tag`, `int`, `bool` and `len` are *discrete*; `real` columns are *continuous*. `discrete_keys()` packs the
length and the discrete columns into one int64 row per sample (invalid entries fixed to -1), so equal rows
mean equal discrete outputs and `np.unique(..., axis=0)` counts them; `real_values()` puts the real
components side by side with NaN where absent, ready for thresholds and histograms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..types import BOOL, INT, REAL, ListType, TagType, TupleType, Type
from .trees import ListV, Num, TagV, Tree, Tup, leaves, tmap
from .values import Tag, format_value

DISCRETE_KINDS = ("length", "tag", "int", "bool")


@dataclass
class Column:
    name: str
    kind: str
    """`tag`, `int`, `bool`, `length` (discrete) or `real`."""
    data: np.ndarray
    """(n, P, ...): one entry per sample and output position (and inner list position)."""
    valid: np.ndarray
    """Boolean, same shape: where the entry exists."""


class Outputs:
    """The outputs of n samples (one chunk, or several concatenated)."""

    def __init__(self, length: np.ndarray, tree: Tree | None, output_type: Type, tag_names: tuple[str, ...]):
        self.length = length
        self.tree = tree
        self.type = output_type
        self.tag_names = tag_names

    @classmethod
    def from_run(cls, out: ListV, output_type: Type, tag_names: tuple[str, ...]) -> Outputs:
        n = out.length.shape[0]
        cap = leaves(out.elem)[0].shape[1] if out.elem is not None else 0
        used = int(out.length.max()) if n else 0
        tree = None
        if out.elem is not None or used:
            tree = _normalize(out.elem, output_type, (n, cap), 2)
            tree = _slice_positions(tree, used)
        return cls(out.length.astype(np.int64), tree, output_type, tag_names)

    @property
    def n(self) -> int:
        return int(self.length.shape[0])

    @property
    def positions(self) -> int:
        return 0 if self.tree is None else leaves(self.tree)[0].shape[1]

    # -- one sample ------------------------------------------------------------------------------------
    def value(self, i: int) -> list:
        """The output sequence of sample i as Python values (see values.py)."""
        return [_decode(self.tree, self.type, (i, p), self.tag_names) for p in range(int(self.length[i]))]

    def text(self, i: int, hide_reals: bool = False) -> str:
        elems = self.value(i)
        if hide_reals:
            elems = [_hide(v) for v in elems]
        return "[" + ", ".join(format_value(v) if not isinstance(v, str) else v for v in elems) + "]"

    # -- all samples -----------------------------------------------------------------------------------
    def columns(self, positions: int | None = None) -> list[Column]:
        tree = self.tree
        p = self.positions if positions is None else positions
        if tree is None:
            tree = _normalize(None, self.type, (self.n, 0), 2)
        tree = _slice_positions(tree, p)
        valid = np.arange(p)[None, :] < self.length[:, None]
        result: list[Column] = []
        _columns(tree, self.type, "", valid, self.tag_names, result)
        return result

    def discrete_keys(self, positions: int | None = None) -> np.ndarray:
        """(n, w) int64: the output length, then every discrete entry (invalid ones -1)."""
        parts = [self.length[:, None]]
        for c in self.columns(positions):
            if c.kind in DISCRETE_KINDS:
                parts.append(_rows(np.where(c.valid, c.data, -1).astype(np.int64), self.n))
        return np.concatenate(parts, axis=1)

    def real_values(self, positions: int | None = None) -> np.ndarray:
        """(n, r) float64: every real entry, NaN where absent."""
        parts = [_rows(np.where(c.valid, c.data, np.nan), self.n)
                 for c in self.columns(positions) if c.kind == "real"]
        return np.concatenate(parts, axis=1) if parts else np.zeros((self.n, 0))

    def agree(self, other: Outputs, scale: float = 0.0, rtol: float = 1e-9) -> np.ndarray:
        """Lanewise: equal discrete parts, and real parts equal up to rounding.

        Reals a, b agree when |a - b| <= rtol * (1 + |a| + |b| + scale): an aligned run computes the same real
        through different floating-point operations (q' + (eta + q - q') - (T + ...)), whose rounding error is
        relative to the magnitudes involved, hence `scale` (the largest magnitude among the inputs).
        """
        p = max(self.positions, other.positions)
        same = (self.discrete_keys(p) == other.discrete_keys(p)).all(axis=1)
        a, b = self.real_values(p), other.real_values(p)
        with np.errstate(invalid="ignore"):
            close = (a == b) | (np.isnan(a) & np.isnan(b)) | \
                (np.abs(a - b) <= rtol * (1 + np.abs(a) + np.abs(b) + scale))
        return same & close.all(axis=1)

    def take(self, lanes: np.ndarray) -> Outputs:
        tree = None if self.tree is None else _map_leaves(self.tree, lambda x: x[lanes])
        return Outputs(self.length[lanes], tree, self.type, self.tag_names)

    @staticmethod
    def concatenate(parts: list[Outputs]) -> Outputs:
        first = parts[0]
        p = max(o.positions for o in parts)
        trees = [_slice_positions(o.tree if o.tree is not None else _normalize(None, o.type, (o.n, 0), 2), p)
                 for o in parts]
        tree = _map_many(trees, lambda xs: np.concatenate(xs, axis=0))
        return Outputs(np.concatenate([o.length for o in parts]), tree, first.type, first.tag_names)


class DiscreteKeys:
    """Canonical keys of the discrete part of outputs, the same for every chunk, and their text.

    A key is the output length followed, position by position, by the discrete columns' entries (-1 where a
    payload is absent). Outputs with list-valued elements have no fixed width per position; their keys are
    the outputs' texts (slower, built per distinct output).
    """

    def __init__(self, output_type: Type, tag_names: tuple[str, ...]):
        self.type = output_type
        self.tag_names = tag_names
        self.compact = not _has_list(output_type)

    def count(self, outputs: Outputs) -> dict[bytes | str, int]:
        """Samples per distinct key in these outputs."""
        if not self.compact:
            keys = outputs.discrete_keys(max(1, outputs.positions))
            packed = np.ascontiguousarray(keys).view(np.dtype((np.void, 8 * keys.shape[1]))).ravel()
            _, first, counts = np.unique(packed, return_index=True, return_counts=True)
            return {outputs.text(int(i), hide_reals=True): int(c) for i, c in zip(first, counts)}
        cols = [c for c in outputs.columns() if c.kind in DISCRETE_KINDS]
        n, p = outputs.n, outputs.positions
        if cols and p:
            table = np.stack([np.where(c.valid, c.data, -1).astype(np.int64) for c in cols], axis=2)
        else:
            table = np.zeros((n, p, 0), dtype=np.int64)
        result: dict[bytes | str, int] = {}
        lengths, inverse = np.unique(outputs.length, return_inverse=True)
        for k, length in enumerate(lengths):
            lanes = np.flatnonzero(inverse == k)
            head = np.int64(length).tobytes()
            rows = np.ascontiguousarray(table[lanes, :length, :].reshape(lanes.size, -1))
            if rows.shape[1] == 0:
                result[head] = int(lanes.size)
                continue
            view = rows.view(np.dtype((np.void, 8 * rows.shape[1]))).ravel()
            unique, counts = np.unique(view, return_counts=True)
            for key, c in zip(unique, counts):
                result[head + key.tobytes()] = int(c)
        return result

    def text(self, key: bytes | str) -> str:
        """The output with its reals shown as `·`."""
        if isinstance(key, str):
            return key
        values = np.frombuffer(key, dtype=np.int64)
        length = int(values[0])
        names = [c.name for c in Outputs(np.zeros(1, dtype=np.int64), None, self.type, self.tag_names).columns(1)
                 if c.kind in DISCRETE_KINDS]
        entries = values[1:].reshape(length, len(names)) if names else np.zeros((length, 0), dtype=np.int64)
        parts = [_key_elem(self.type, "", dict(zip(names, row.tolist())), self.tag_names) for row in entries]
        return "[" + ", ".join(parts) + "]"


def _has_list(t: Type) -> bool:
    if isinstance(t, ListType):
        return True
    if isinstance(t, TupleType):
        return any(_has_list(x) for x in t.items)
    if isinstance(t, TagType):
        return any(_has_list(x) for _, payload in t.payloads for x in payload)
    return False


def _key_elem(t: Type, name: str, values: dict[str, int], tags: tuple[str, ...]) -> str:
    def sub(suffix: str) -> str:
        return f"{name}.{suffix}" if name else suffix

    if isinstance(t, TupleType):
        items = [_key_elem(x, sub(str(k)), values, tags) for k, x in enumerate(t.items)]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(t, TagType):
        tag = tags[values[sub("tag")]]
        payload = dict(t.payloads).get(tag, ())
        if not payload:
            return tag
        return tag + "(" + ", ".join(_key_elem(x, sub(f"{tag}.{k}"), values, tags) for k, x in enumerate(payload)) + ")"
    key = name or "value"
    if t == INT:
        return str(values[key])
    if t == BOOL:
        return "true" if values[key] else "false"
    return "·"


# ------------------------------------------------------------------------------------------------ helpers


_DTYPES: dict[Type, type[np.generic]] = {REAL: np.float64, INT: np.int64, BOOL: np.bool_}
_SCALAR_KINDS: dict[Type, str] = {REAL: "real", INT: "int", BOOL: "bool"}


def _dtype(t: Type) -> Any:
    return _DTYPES.get(t)


def _normalize(tree: Tree | None, t: Type, prefix: tuple[int, ...], nprefix: int) -> Tree:
    """The tree with the dtypes and components of type t (missing payloads as zeros)."""
    if isinstance(t, TupleType):
        items = tree.items if isinstance(tree, Tup) else (None,) * len(t.items)
        return Tup(tuple(_normalize(x, it, prefix, nprefix) for x, it in zip(items, t.items)))
    if isinstance(t, TagType):
        if isinstance(tree, TagV):
            code, payloads = tree.code, tree.payloads
            prefix = code.shape
        else:
            code, payloads = np.full(prefix, -1, dtype=np.int16), {}
        out = {}
        for tag, types in t.payloads:
            if not types:
                continue
            given = payloads.get(tag, (None,) * len(types))
            out[tag] = tuple(_normalize(x, pt, prefix, len(prefix)) for x, pt in zip(given, types))
        return TagV(code, out)
    if isinstance(t, ListType):
        if isinstance(tree, ListV):
            length = tree.length.astype(np.int64)
            cap = leaves(tree.elem)[0].shape[len(length.shape)] if tree.elem is not None else 0
            elem = _normalize(tree.elem, t.elem, length.shape + (cap,), len(length.shape) + 1)
            return ListV(elem, length)
        return ListV(_normalize(None, t.elem, prefix + (0,), len(prefix) + 1), np.zeros(prefix, dtype=np.int64))
    dtype = _dtype(t)
    if isinstance(tree, Num):
        return Num(tree.a.astype(dtype, copy=False) if dtype is not None else tree.a)
    if tree is not None:
        return tree
    return Num(np.zeros(prefix, dtype=dtype or np.float64))


def _map_leaves(tree: Tree, f) -> Tree:
    return tmap(f, tree)


def _map_many(trees: list[Tree], f) -> Tree:
    return tmap(lambda *xs: f(list(xs)), *trees)


def _slice_positions(tree: Tree, p: int) -> Tree:
    """Cut or zero-pad the position axis (axis 1) to p entries."""
    def fit(x: np.ndarray) -> np.ndarray:
        if x.shape[1] >= p:
            return x[:, :p]
        pad = [(0, 0)] * x.ndim
        pad[1] = (0, p - x.shape[1])
        return np.pad(x, pad, constant_values=-1 if x.dtype.kind == "i" else 0)
    return _map_leaves(tree, fit)


def _columns(tree: Tree, t: Type, name: str, valid: np.ndarray, tags: tuple[str, ...], out: list[Column]) -> None:
    def sub(suffix: str) -> str:
        return f"{name}.{suffix}" if name else suffix

    if isinstance(t, TupleType):
        for k, (x, it) in enumerate(zip(tree.items, t.items)):
            _columns(x, it, sub(str(k)), valid, tags, out)
        return
    if isinstance(t, TagType):
        out.append(Column(sub("tag"), "tag", tree.code, valid))
        for tag, payload in sorted(tree.payloads.items()):
            has = valid & (tree.code == tags.index(tag)) if tag in tags else np.zeros_like(valid)
            for k, (x, pt) in enumerate(zip(payload, dict(t.payloads)[tag])):
                _columns(x, pt, sub(f"{tag}.{k}"), has, tags, out)
        return
    if isinstance(t, ListType):
        out.append(Column(sub("len"), "length", tree.length, valid))
        cap = leaves(tree.elem)[0].shape[valid.ndim]
        inner = valid[..., None] & (np.arange(cap) < tree.length[..., None])
        _columns(tree.elem, t.elem, sub("[]"), inner, tags, out)
        return
    kind = _SCALAR_KINDS.get(t)
    if kind is not None:  # (a mechanism that outputs nothing has no element type, hence no column)
        out.append(Column(name or "value", kind, tree.a, valid))


def _decode(tree: Tree, t: Type, at: tuple, tags: tuple[str, ...]) -> Any:
    if isinstance(t, TupleType):
        return tuple(_decode(x, it, at, tags) for x, it in zip(tree.items, t.items))
    if isinstance(t, TagType):
        name = tags[int(tree.code[at])]
        types = dict(t.payloads).get(name, ())
        payload = tree.payloads.get(name, ())
        return Tag(name, tuple(_decode(x, pt, at, tags) for x, pt in zip(payload, types)))
    if isinstance(t, ListType):
        length = int(tree.length[at])
        return [_decode(tree.elem, t.elem, at + (k,), tags) for k in range(length)]
    x = tree.a[at]
    if t == REAL:
        return float(x)
    if t == INT:
        return int(x)
    if t == BOOL:
        return bool(x)
    return x.item() if hasattr(x, "item") else x


def _hide(v: Any) -> Any:
    """A value with every real replaced by `·` (for the text of a discrete key)."""
    if isinstance(v, float):
        return _Dot()
    if isinstance(v, Tag):
        return Tag(v.name, tuple(_hide(p) for p in v.payload))
    if isinstance(v, tuple):
        return tuple(_hide(x) for x in v)
    if isinstance(v, list):
        return [_hide(x) for x in v]
    return v


class _Dot:
    def __str__(self) -> str:
        return "·"


def normalize_scalar_output(values: list, t: Type) -> list:
    """Scalar-evaluator outputs with the output type's number kinds (an int output where real is declared
    becomes a float), for comparison with `Outputs.value`."""
    return [_as_type(v, t) for v in values]


def _as_type(v: Any, t: Type) -> Any:
    if isinstance(t, TupleType):
        return tuple(_as_type(x, it) for x, it in zip(v, t.items))
    if isinstance(t, TagType):
        types = dict(t.payloads).get(v.name, ())
        return Tag(v.name, tuple(_as_type(x, pt) for x, pt in zip(v.payload, types)))
    if isinstance(t, ListType):
        return [_as_type(x, t.elem) for x in v]
    if t == REAL:
        return float(v)
    if t == INT:
        return int(v)
    if t == BOOL:
        return bool(v)
    return v


def _rows(x: np.ndarray, n: int) -> np.ndarray:
    """`x` (n, ...) as (n, w): one row per sample. numpy cannot infer w from an empty array (a test sample whose
    Poisson size is 0), so it is the product of the trailing axes."""
    return x.reshape(n, int(np.prod(x.shape[1:], dtype=np.int64)) if x.ndim > 1 else 1)
