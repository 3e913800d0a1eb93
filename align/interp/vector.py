"""Interpreter (vectorised evaluator): run a resolved mechanism for a whole chunk of samples at once.

Every variable holds a value for each sample (a tree of numpy arrays whose first axis is the sample, see
`trees.py`). Control flow becomes masks: `if` runs both blocks, each on the lanes whose condition selects it;
`for` iterates in Python over the loop variable's values (never over samples) with a per-lane range mask; a
`break` adds the lanes that reach it to the loop's "broken" mask, which every later statement of the loop
excludes. A statement whose mask is empty is skipped. Noise is drawn for every lane of the chunk from the
keyed streams of `noise.py` and kept on the lanes that reach the sampling statement, so skipping work never
changes a value.

The semantics are those of the scalar evaluator (`scalar.py`, the reference); the test suite replays samples
drawn here through it and requires identical outputs. Runtime errors (index out of range, ln of a
non-positive number, ...) are checked only on the lanes that execute the failing expression: in "raise" mode
the first one stops the run with a located diagnostic; in "collect" mode (the neighbour's run of the
alignment check) the failing lanes are marked dead and the others go on.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, overload

import numpy as np
from scipy import special

from .. import nodes as n
from ..builtins import implemented
from ..limits import MAX_ARRAY_CELLS, MAX_LIST_NESTING, MAX_LOOP_ITERATIONS
from ..operators import COMPARISONS, INTEGER_OPERATIONS, RING_OPERATIONS
from ..resolve import NoiseSite, ResolvedMechanism
from ..types import BOOL, INT, REAL, ListType, Type
from ..unparse import unparse
from ..visitor import IRVisitor, StmtVisitor
from .errors import RunError, clamp_domain, fail
from .noise import draw_block_values, parameter_checks, sanitize
from .trees import (
    ListV,
    Num,
    RangeV,
    SetV,
    TagV,
    Tree,
    Tup,
    equal,
    lanes,
    leaves,
    list_get,
    list_set,
    tmap,
    uniform,
    unify,
    valid_positions,
    where,
    zeros_like,
)

INT64 = np.int64


def _partial_sum(e: n.Comprehension, a: np.ndarray, b: np.ndarray) -> Callable[[int], dict[str, str]]:
    """The detail of an integer `sum` whose partial sum a + b leaves the 64 bits, at lane k."""
    return lambda k: dict(detail=f"the `sum` of `{unparse(e)}` reaching {_fmt(_at(a, k))} + {_fmt(_at(b, k))} is "
                                 "outside the 64-bit range")


def integer_ring(op: str, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """a op b for 64-bit integer arrays (op in + - *), and where the exact result leaves the 64-bit range.
    The language's integers are exact (the checker's are), so a wrapped result must never be used."""
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    with np.errstate(over="ignore"):
        result = (a + b) if op == "+" else (a - b) if op == "-" else (a * b)
    if op == "+":
        overflow = ((a ^ result) & (b ^ result)) < 0
    elif op == "-":
        overflow = ((a ^ b) & (a ^ result)) < 0
    else:
        # |a·b| < 2^62 by the float estimate is safe; the rest (rare) is decided with Python's exact integers
        estimate = np.abs(a.astype(np.float64) * b.astype(np.float64))
        overflow = np.zeros(np.broadcast(a, b).shape, dtype=bool)
        risky = estimate >= 2.0 ** 62
        if risky.any():
            lo, hi = int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)
            aa, bb = np.broadcast_to(a, overflow.shape), np.broadcast_to(b, overflow.shape)
            for k in np.flatnonzero(np.broadcast_to(risky, overflow.shape)):
                exact = int(aa.flat[k]) * int(bb.flat[k])
                overflow.flat[k] = not lo <= exact <= hi
    return result, overflow
TAG_CODE = np.int16
"""dtype of tag codes (a mechanism has far fewer than 32768 tags)."""
_SQRT_2PI = math.sqrt(2 * math.pi)


def arg_tree(value: Any, t: Type) -> Tree:
    """A typed Python argument (see values.convert) as a uniform tree."""
    if isinstance(t, ListType):
        dtype = _dtype(t.elem)
        data = np.asarray([value], dtype=dtype).reshape(1, len(value))
        return ListV(Num(data), uniform(len(value), INT64))
    return Num(uniform(value, _dtype(t)))


_DTYPES: dict[Type, type[np.generic]] = {REAL: np.float64, INT: INT64, BOOL: np.bool_}


def _dtype(t: Type) -> Any:
    return _DTYPES.get(t, np.float64)


# --------------------------------------------------------------------------------------------- noise


@dataclass
class SiteRecord:
    """The noise one sampling site drew in a chunk, with the parameters it was drawn with."""

    site: NoiseSite
    index: int
    """The site's position in `ResolvedMechanism.noise` (its seeding key)."""
    values: np.ndarray
    """(n,) for a scalar site; (n, L) for a family, column c holding member `offset + c`."""
    drawn: np.ndarray
    """Boolean, same shape: where the run actually reached the sampling statement."""
    params: list
    """The distribution's parameters (optional ones filled in), each of shape (1 or n,) or (1 or n, L)."""
    offset: int = 0

    @property
    def family(self) -> bool:
        return self.site.family

    def record(self, member: int, values: np.ndarray, mask: np.ndarray | None, params: tuple) -> None:
        if not self.family:
            self.values = values.astype(self.values.dtype, copy=False) if mask is None else \
                np.where(mask, values, self.values)
            self.drawn = np.ones_like(self.drawn) if mask is None else self.drawn | mask
            self.params = [_merge_param(old, p, mask) for old, p in zip(self.params, params)]
            return
        if self.values.shape[1] == 0:
            self.offset = member
        col = member - self.offset
        if col >= self.values.shape[1]:
            grow = max(col + 1, 2 * self.values.shape[1], 4)
            self.values = _grow(self.values, grow)
            self.drawn = _grow(self.drawn, grow)
            self.params = [_grow(p, grow) for p in self.params]
        # Writes of the masked lanes only (by their indices: cheaper than merging whole columns).
        rows = None if mask is None else np.flatnonzero(mask)
        if rows is None:
            self.values[:, col] = values
        else:
            column = self.values[:, col]
            column[rows] = values[rows] if values.shape[0] > 1 else values[0]
        self.drawn[:, col] = True if mask is None else mask
        merged = []
        for old, p in zip(self.params, params):
            if p.shape[0] > old.shape[0]:
                old = np.asfortranarray(np.broadcast_to(old, (p.shape[0], old.shape[1])))
            if rows is None or old.shape[0] == 1:
                old[:, col] = p
            else:
                old[rows, col] = p[rows] if p.shape[0] > 1 else p[0]
            merged.append(old)
        self.params = merged

    def reserve(self, start: int, stop: int) -> None:
        """Room for members start .. stop - 1 of a family (its loop's range), before the first draw."""
        if self.family and self.values.shape[1] == 0 and stop > start:
            self.offset = start
            self.values = np.zeros((self.values.shape[0], stop - start), dtype=self.values.dtype, order="F")
            self.drawn = np.zeros(self.values.shape, dtype=bool, order="F")
            self.params = [np.zeros((1, stop - start)) for _ in self.params]

    def trim(self) -> None:
        """Drop the spare capacity of a family's arrays."""
        if self.family:
            used = int(np.flatnonzero(self.drawn.any(axis=0)).max()) + 1 if self.drawn.any() else 0
            self.values, self.drawn = self.values[:, :used], self.drawn[:, :used]
            self.params = [p[:, :used] for p in self.params]


def _grow(x: np.ndarray, cols: int) -> np.ndarray:
    out = np.zeros((x.shape[0], cols), dtype=x.dtype, order="F")
    out[:, : x.shape[1]] = x
    return out


def _merge_param(old: np.ndarray, new: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    if mask is None:
        return new
    return np.where(mask, new, old)


class NoiseSource(Protocol):
    def values(self, site: NoiseSite, index: int, member: int, params: tuple,
               mask: np.ndarray | None) -> np.ndarray: ...


class RandomSource:
    """Fresh noise from the keyed streams of `noise.py` for samples start .. start + n - 1 of a run."""

    def __init__(self, root: np.random.SeedSequence, start: int, n: int):
        self.root, self.start, self.n = root, start, n

    def values(self, site: NoiseSite, index: int, member: int, params: tuple,
               mask: np.ndarray | None) -> np.ndarray:
        dist = site.distribution
        return draw_block_values(dist, self.root, index, member, self.start, self.n, sanitize(dist, params, mask))


class GivenSource:
    """Noise given in advance (the aligned noise φ(H) of the alignment check), per site: values, where a value
    exists, and the family offset. `missing` collects the lanes that needed a value that does not exist."""

    def __init__(self, given: dict[str, tuple[np.ndarray, np.ndarray, int]], n: int):
        self.given = given
        self.missing = np.zeros(n, dtype=bool)
        self.used: dict[str, np.ndarray] = {}

    def values(self, site: NoiseSite, index: int, member: int, params: tuple,
               mask: np.ndarray | None) -> np.ndarray:
        values, available, offset = self.given[site.name]
        if site.family:
            col = member - offset
            if 0 <= col < values.shape[1]:
                v, ok = values[:, col], available[:, col]
            else:
                v, ok = np.zeros(values.shape[0], dtype=values.dtype), np.zeros(values.shape[0], dtype=bool)
        else:
            v, ok = values, available
        self.missing |= ~ok if mask is None else mask & ~ok
        return v


# ------------------------------------------------------------------------------------------- machine


@dataclass
class _Loop:
    broken: np.ndarray | None = None


@dataclass
class VectorRun:
    """What one chunk's run produced."""

    n: int
    out: ListV
    """The output sequence: element tree with a position axis, and its per-lane length."""
    records: dict[str, SiteRecord]
    env: dict[str, Tree]
    dead: np.ndarray | None
    """Collect mode: lanes stopped by a runtime error (their errors are in `errors`)."""
    errors: dict[int, RunError] = field(default_factory=dict)


class Machine(IRVisitor[Tree, 'np.ndarray | None'], StmtVisitor[None, 'np.ndarray | None']):
    """Evaluates statements and expressions of one mechanism for n lanes."""

    MAX_KEPT_ERRORS = 1000

    def __init__(self, mech: ResolvedMechanism, n: int, mode: str = "raise"):
        self.mech = mech
        self.release = mech.release
        """The release block run after the body; the alignment check runs `mech.without_release()`."""
        self.n = n
        self.tag_names = mech.tags
        self.tags = {t: k for k, t in enumerate(self.tag_names)}
        """Each tag's code (`TagTest` names its tag; `TagLit` and `TagCall` carry the code)."""
        self.mode = mode
        self.env: dict[str, Tree] = {}
        self.undefined: dict[str, tuple[np.ndarray, str]] = {}
        """Lanes on which a name has no value (shape (1,) meaning all lanes), and the code reported on a read."""
        self.families: dict[str, SiteRecord] = {}
        """Noise families readable as `x[e]` (alignment expressions)."""
        self.loops: list[_Loop] = []
        self.dead: np.ndarray | None = None
        self.errors: dict[int, RunError] = {}
        self.out = ListV(None, np.zeros(n, dtype=INT64), True)
        self.source: NoiseSource | None = None
        self.loop_stop: dict[str, int] = {}
        """The end of each running loop's range, by loop variable: `x[i] = ...` allocates x that long at once."""
        self.out_hint = 0
        """Expected length of the longest output (from the loop being run), to allocate `out` once."""
        self.records: dict[str, SiteRecord] = {}
        self.sites = {s.name: (k, s) for k, s in enumerate(mech.noise)}
        self.iterations = 0
        """Loop iterations run so far, all loops together (at most MAX_LOOP_ITERATIONS)."""

    # -- running -----------------------------------------------------------------------------------
    def run(self, args: dict[str, Tree], source: NoiseSource) -> VectorRun:
        self.source = source
        for k, site in enumerate(self.mech.noise):
            dtype = INT64 if site.distribution.integer else np.float64
            shape = (self.n, 0) if site.family else (self.n,)
            self.records[site.name] = SiteRecord(site, k, np.zeros(shape, dtype=dtype), np.zeros(shape, dtype=bool),
                                                 [np.zeros((1,) + shape[1:]) for _ in site.distribution.defaults])
        self.env.update(args)
        with np.errstate(all="ignore"):
            self.exec_block(self.mech.body, None)
        for r in self.records.values():
            r.trim()
        if self.release is None:
            return VectorRun(self.n, self.out, self.records, self.env, self.dead, self.errors)
        post = Machine(self.release, self.n, self.mode)
        post.dead, post.errors, post.iterations = self.dead, self.errors, self.iterations
        done = post.run({**{p.name: self.env[p.name] for p in self.release.params if p.name in self.env},
                         "out": self.out}, source)
        return VectorRun(self.n, done.out, self.records, self.env, done.dead, done.errors)

    # -- masks and errors --------------------------------------------------------------------------
    @overload
    def live(self, mask: np.ndarray) -> np.ndarray: ...
    @overload
    def live(self, mask: None) -> np.ndarray | None: ...

    def live(self, mask: np.ndarray | None) -> np.ndarray | None:
        if self.dead is None:
            return mask
        return ~self.dead if mask is None else mask & ~self.dead

    def _cur(self, mask: np.ndarray | None) -> np.ndarray | None:
        m = mask
        if self.loops and self.loops[-1].broken is not None:
            b = self.loops[-1].broken
            m = ~b if m is None else m & ~b
        return self.live(m)

    def bad_lanes(self, bad: np.ndarray, mask: np.ndarray | None) -> np.ndarray | None:
        """The live lanes of mask where `bad` holds, or None if there is none."""
        if bad.shape[0] == 1:
            if not bad[0]:
                return None
            b = np.ones(self.n, dtype=bool) if mask is None else mask
        else:
            b = bad if mask is None else bad & mask
        b = self.live(b)
        return b if b.any() else None

    def check(self, bad: np.ndarray, mask: np.ndarray | None, code: str, span, args_at: Callable[[int], dict]) -> None:
        b = self.bad_lanes(np.asarray(bad), mask)
        if b is None:
            return
        lane = int(np.argmax(b))
        error = fail(code, span, lane=lane, **args_at(lane))
        if self.mode == "raise":
            raise error
        self.dead = b.copy() if self.dead is None else self.dead | b
        for k in np.flatnonzero(b)[: self.MAX_KEPT_ERRORS - len(self.errors)]:
            self.errors.setdefault(int(k), RunError(error.diagnostic, int(k)))

    # -- statements --------------------------------------------------------------------------------
    def exec_block(self, body: tuple[n.Stmt, ...], mask: np.ndarray | None) -> None:
        for s in body:
            m = self._cur(mask)
            if m is not None and not m.any():
                return
            s.accept(self, m)

    def assign(self, name: str, value: Tree, m: np.ndarray | None) -> None:
        old = self.env.get(name)
        if m is None or old is None:
            self.env[name] = value
            if m is None:
                self.undefined.pop(name, None)
            elif old is None:
                self.undefined[name] = (~m, "undefined-value")
            return
        self.env[name] = where(m, value, old)
        if name in self.undefined:
            lanes_, code = self.undefined[name]
            left = lanes_ & ~m
            if left.any():
                self.undefined[name] = (left, code)
            else:
                del self.undefined[name]

    def check_cells(self, positions: int, span) -> None:
        """Refuse an array of `positions` list positions for every lane past MAX_ARRAY_CELLS, before numpy
        allocates it (a huge allocation may succeed lazily and then fill the machine's memory)."""
        if self.n * positions > MAX_ARRAY_CELLS:
            raise fail("run-too-large", span, cells=self.n * positions, lanes=self.n, positions=positions,
                       limit=MAX_ARRAY_CELLS)

    @staticmethod
    def check_nesting(items: list, span) -> None:
        """Refuse to put these values into a list when that list would nest past MAX_LIST_NESTING: every
        level is an array axis after the lane axis, and numpy has at most 32 axes (64 from numpy 2)."""
        if max((x.ndim for v in items for x in leaves(v)), default=1) > MAX_LIST_NESTING:
            raise fail("list-too-deep", span, limit=MAX_LIST_NESTING)

    def visit_assign(self, s: n.Assign, m: np.ndarray | None) -> None:
        value = self.ev(s.value, m)
        if s.index is None:
            self.assign(s.target, value, m)
            return
        j = self.ev(s.index, m).a
        lst = self.env.get(s.target)
        fresh = lst is None
        if lst is None:
            lst = ListV(None, uniform(0, INT64), True)
        elif s.target in self.undefined:
            # Lanes on which the variable has no value start a new, empty list (as the scalar evaluator does).
            lst = ListV(lst.elem, np.where(self.undefined[s.target][0], 0, lst.length), lst.exclusive)
        length = lst.length
        self.check((j < 0) | (j > length), m, "list-gap", s.index.span,
                   lambda k: dict(name=s.target, index=int(_at(j, k)), length=int(_at(length, k))))
        live = self.live(m)
        j_safe = j if live is None else np.where(live, j, 0) if j.shape[0] > 1 else j
        hint = self.loop_stop.get(s.index.id, 0) if isinstance(s.index, n.LocalRef) else 0
        self.check_nesting([value], s.span)
        self.check_cells(max(hint, int(j.max()) + 1 if j.size else 0), s.span)
        self.env[s.target] = list_set(lst, np.asarray(j_safe, dtype=INT64), value, live, self.n, hint)
        if fresh and m is not None:
            self.undefined[s.target] = (~m, "undefined-value")
        elif s.target in self.undefined:
            left = self.undefined[s.target][0] & (np.zeros(1, dtype=bool) if m is None else ~m)
            if left.any():
                self.undefined[s.target] = (left, "undefined-value")
            else:
                del self.undefined[s.target]

    def visit_sample(self, s: n.Sample, m: np.ndarray | None) -> None:
        index, site = self.sites[s.var]
        given = [np.asarray(self.ev(a, m).a, dtype=np.float64) for a in s.args]
        params = site.distribution.full_params(given)
        params = tuple(p if isinstance(p, np.ndarray) else uniform(p, np.float64) for p in params)
        names = site.distribution.params
        for bad, k, requirement in parameter_checks(site.distribution, params):
            span = s.args[k].span if k < len(s.args) else s.span

            def args_at(lane: int, k: int = k, r: str = requirement) -> dict:
                return dict(dist=site.distribution.name, param=names[k], requirement=r,
                            value=_fmt(_at(params[k], lane)))

            self.check(bad, m, "invalid-distribution-parameter", span, args_at)
        live = self.live(m)
        if live is not None and not live.any():
            return  # collect mode: every lane that reaches this draw has failed
        member = 0
        if site.loop is not None:
            member = int(self.env[site.loop.var].a[0])
        assert self.source is not None, "statements run inside run(), which sets the source"
        values = self.source.values(site, index, member, params, live)
        self.records[s.var].record(member, values, live, params)
        self.assign(s.var, Num(values), m)

    def visit_if(self, s: n.If, m: np.ndarray | None) -> None:
        c = self.ev(s.condition, m).a
        if c.shape[0] == 1:
            self.exec_block(s.then if c[0] else s.orelse, m)
            return
        then = c if m is None else m & c
        if then.any():
            self.exec_block(s.then, then)
        if s.orelse:
            other = ~c if m is None else m & ~c
            if other.any():
                self.exec_block(s.orelse, other)

    def visit_for(self, s: n.For, m: np.ndarray | None) -> None:
        lo, hi = self.ev(s.lo, m).a, self.ev(s.hi, m).a
        live = self.live(m)
        if lo.shape[0] == 1 and hi.shape[0] == 1:
            start, stop, per_lane = int(lo[0]), int(hi[0]), False
        else:
            sel = np.ones(self.n, dtype=bool) if live is None else live
            if not sel.any():
                return
            lo_l, hi_l = np.broadcast_to(lo, (self.n,))[sel], np.broadcast_to(hi, (self.n,))[sel]
            start, stop, per_lane = int(lo_l.min()), int(hi_l.max()), True
        count = max(0, stop - start)
        if count > MAX_LOOP_ITERATIONS - self.iterations:  # before reserving room for the whole range
            raise fail("loop-too-long", s.span, count=count, limit=MAX_LOOP_ITERATIONS)
        families = [site.name for site in self.mech.noise if site.loop is s]
        for name in families:
            self.check_cells(count, s.span)
            self.records[name].reserve(start, stop)
        per_iteration = _max_outputs(s.body)
        if per_iteration and not self.loops:
            self.out_hint = int(self.out.length.max()) + per_iteration * count
            self.check_cells(self.out_hint, s.span)
        loop = _Loop()
        self.loops.append(loop)
        try:
            for v in range(start, stop):
                iteration = m
                if per_lane:
                    in_range = (lo <= v) & (v < hi)
                    iteration = in_range if iteration is None else iteration & in_range
                iteration = self._cur(iteration)
                if iteration is not None and not iteration.any():
                    if not per_lane:
                        break  # every lane has left the loop (break or error): nothing can run again
                    continue
                self.iterations += 1
                self.env[s.var] = Num(uniform(v, INT64))
                self.loop_stop[s.var] = stop
                for name in families:
                    self.undefined[name] = (uniform(True), "undefined-value")
                self.exec_block(s.body, iteration)
        finally:
            self.loops.pop()
            self.env.pop(s.var, None)
            self.loop_stop.pop(s.var, None)

    def visit_break(self, s: n.Break, m: np.ndarray | None) -> None:
        loop = self.loops[-1]
        if m is None:
            loop.broken = np.ones(self.n, dtype=bool)
        else:
            loop.broken = m.copy() if loop.broken is None else loop.broken | m

    def visit_output(self, s: n.Output, m: np.ndarray | None) -> None:
        value = self.ev(s.value, m)
        self.check_cells(int(self.out.length.max()) + 1, s.span)
        self.out = list_set(self.out, self.out.length, value, m, self.n, self.out_hint, fresh=True)

    def visit_while(self, s: n.While, m: np.ndarray | None) -> None:
        raise AssertionError("`while` is rejected by resolution")

    # -- expressions -------------------------------------------------------------------------------
    def ev(self, e: n.Expr, m: np.ndarray | None) -> Tree:
        return e.accept(self, m)

    def borrow(self, e: n.Expr, m: np.ndarray | None) -> Tree:
        """Evaluate e for reading only: a list variable keeps its exclusive (update-in-place) flag."""
        if isinstance(e, n.Ref) and e.text in self.env:
            self._check_defined(e.text, e.span, m)
            return self.env[e.text]
        return self.ev(e, m)

    def num(self, e: n.Expr, m: np.ndarray | None) -> np.ndarray:
        return self.ev(e, m).a

    def _check_defined(self, name: str, span, m: np.ndarray | None) -> None:
        entry = self.undefined.get(name)
        if entry is not None:
            lanes_, code = entry
            self.check(lanes_, m, code, span, lambda k: dict(name=name))

    def visit_number(self, e: n.Number, m: np.ndarray | None) -> Tree:
        if e.is_integer:
            return Num(uniform(int(e.value), INT64))
        return Num(uniform(float(e.value), np.float64))

    def visit_bool_lit(self, e: n.BoolLit, m: np.ndarray | None) -> Tree:
        return Num(uniform(e.value, np.bool_))

    def read(self, e: n.Ref, m: np.ndarray | None) -> Tree:
        key = e.text
        if key in self.env:
            self._check_defined(key, e.span, m)
            value = self.env[key]
            if isinstance(value, ListV):
                value.exclusive = False
            return value
        if isinstance(e, (n.VarRef, n.NoiseRef)):
            # Assigned somewhere, but on no lane so far: an error on the lanes that read it.
            self.check(uniform(True), m, "undefined-value", e.span, lambda k: dict(name=key))
            return Num(np.zeros(1))
        raise AssertionError(f"unbound name {key} at {e.span}")

    visit_param_ref = visit_var_ref = visit_noise_ref = visit_let_ref = visit_local_ref = visit_out_ref = read

    def visit_aligned_cost_ref(self, e: n.AlignedCostRef, m: np.ndarray | None) -> Tree:
        raise AssertionError("`aligned_cost` exists in invariants only, which the interpreter never runs")

    def visit_tag_lit(self, e: n.TagLit, m: np.ndarray | None) -> Tree:
        return TagV(uniform(e.code, TAG_CODE), {})

    def visit_tag_call(self, e: n.TagCall, m: np.ndarray | None) -> Tree:
        return TagV(uniform(e.code, TAG_CODE), {e.tag: tuple(self.ev(a, m) for a in e.args)})

    def visit_range(self, e: n.Range, m: np.ndarray | None) -> Tree:
        return RangeV(self.num(e.lo, m), self.num(e.hi, m))

    def visit_tuple_lit(self, e: n.TupleLit, m: np.ndarray | None) -> Tree:
        return Tup(tuple(self.ev(x, m) for x in e.items))

    def visit_list_lit(self, e: n.ListLit, m: np.ndarray | None) -> Tree:
        values = [self.ev(x, m) for x in e.items]
        if not values:
            return ListV(None, uniform(0, INT64))
        template = values[0]
        for v in values[1:]:
            template, _ = unify(template, v)
        values = [unify(template, v)[1] for v in values]
        self.check_nesting(values, e.span)
        width = max(lanes(v) for v in values)
        if width > 1:
            self.check_cells(len(values), e.span)
        elem = tmap(lambda *xs: np.stack([np.broadcast_to(x, (width,) + x.shape[1:]) for x in xs], axis=1), *values)
        return ListV(elem, uniform(len(values), INT64))

    def visit_unary(self, e: n.Unary, m: np.ndarray | None) -> Tree:
        x = self.num(e.operand, m)
        if e.op != "not" and x.dtype.kind in "iu":
            self.check(x == np.iinfo(np.int64).min, m, "integer-overflow", e.span, lambda k: dict(
                detail=f"`{unparse(e)}` of {_fmt(_at(x, k))} is outside the 64-bit range"))
        return Num(~x if e.op == "not" else -x)

    def visit_binary(self, e: n.Binary, m: np.ndarray | None) -> Tree:
        a, b = self.num(e.left, m), self.num(e.right, m)
        if e.op in RING_OPERATIONS:
            if a.dtype.kind in "iu" and b.dtype.kind in "iu":
                result, overflow = integer_ring(e.op, a, b)
                self.check(overflow, m, "integer-overflow", e.span, lambda k: dict(
                    detail=f"`{unparse(e)}` with {_fmt(_at(a, k))} {e.op} {_fmt(_at(b, k))} is outside the 64-bit "
                           "range"))
                return Num(result)
            return Num(RING_OPERATIONS[e.op](a, b))
        if e.op == "/" or e.op in INTEGER_OPERATIONS:
            self.check(b == 0, m, "division-by-zero", e.span, lambda k: dict(
                detail=f"`{unparse(e)}` with {unparse(e.right)} = 0"))
            if e.op == "/":
                return Num(np.true_divide(a, b, dtype=np.float64))
            # int64: only the lowest int64 divided by -1 leaves the range (numpy would wrap it)
            self.check((a == np.iinfo(np.int64).min) & (b == -1), m, "integer-overflow", e.span, lambda k: dict(
                detail=f"`{unparse(e)}` with {_fmt(_at(a, k))} {e.op} -1 is outside the 64-bit range"))
            safe = np.where(b == 0, 1, b)  # lanes outside the mask may divide by 0: never read
            return Num(INTEGER_OPERATIONS[e.op](a, safe).astype(np.int64))
        fa, fb = a.astype(np.float64), b.astype(np.float64)
        self.check((fa == 0) & (fb < 0), m, "math-domain", e.span, lambda k: dict(
            operation="`^`", detail=f"0 ^ {_fmt(_at(fb, k))} divides by zero"))
        self.check((fa < 0) & (np.floor(fb) != fb), m, "math-domain", e.span, lambda k: dict(
            operation="`^`",
            detail=f"a negative base {_fmt(_at(fa, k))} needs a whole exponent, not {_fmt(_at(fb, k))}"))
        return Num(np.power(fa, fb))

    def visit_compare(self, e: n.Compare, m: np.ndarray | None) -> Tree:
        left = self.borrow(e.operands[0], m)
        result = None
        for op, right_e in zip(e.ops, e.operands[1:]):
            sub = m if result is None else _and(m, result)
            right = self.borrow(right_e, sub)
            if isinstance(left, Num) and isinstance(right, Num):
                r = COMPARISONS[op](left.a, right.a)
            else:  # == and != on tuples, tags and lists
                same = equal(left, right, self.tags)
                r = same if op == "==" else ~same
            result = r if result is None else result & r
            left = right
        assert result is not None, "a comparison has an operator"
        return Num(result)

    def visit_bool_op(self, e: n.BoolOp, m: np.ndarray | None) -> Tree:
        a = self.num(e.left, m)
        if a.shape[0] == 1:
            if (e.op == "and") != bool(a[0]):
                return Num(a)
            return Num(np.asarray(self.num(e.right, m), dtype=bool))
        b = self.num(e.right, _and(m, a if e.op == "and" else ~a))
        return Num(a & b if e.op == "and" else a | b)

    def visit_conditional(self, e: n.Conditional, m: np.ndarray | None) -> Tree:
        c = self.num(e.condition, m)
        if c.shape[0] == 1:
            return self.ev(e.then if c[0] else e.orelse, m)
        then_m, else_m = _and(m, c), _and(m, ~c)
        live = self.live(m)
        sel = np.ones(self.n, dtype=bool) if live is None else live
        if not (then_m & sel).any():
            return self.ev(e.orelse, m)
        if not (else_m & sel).any():
            return self.ev(e.then, m)
        return where(c, self.ev(e.then, then_m), self.ev(e.orelse, else_m))

    def visit_tag_test(self, e: n.TagTest, m: np.ndarray | None) -> Tree:
        v = self.borrow(e.value, m)
        return Num(v.code == self.tags[e.tag])

    def visit_member(self, e: n.Member, m: np.ndarray | None) -> Tree:
        x = self.num(e.element, m)
        inside = self.contains(self.borrow(e.collection, m), x)
        return Num(~inside if e.negated else inside)

    def contains(self, coll: Tree, x: np.ndarray) -> np.ndarray:
        """Lanewise: whether x is in a range, index set or int list."""
        if isinstance(coll, RangeV):
            return (coll.lo <= x) & (x < coll.hi)
        if isinstance(coll, ListV):
            coll = self.to_set(coll)
        size = coll.mask.shape[1]
        idx = x - coll.offset
        ok = (idx >= 0) & (idx < size)
        if size == 0:
            return np.broadcast_to(ok, np.broadcast(ok, coll.mask[:, :1]).shape[:1]).copy()
        safe = np.clip(idx, 0, size - 1)
        if idx.shape[0] == 1:
            return coll.mask[:, int(safe[0])] & ok
        if coll.mask.shape[0] == 1:
            return coll.mask[0, safe] & ok
        return coll.mask[np.arange(coll.mask.shape[0]), safe] & ok

    def to_set(self, lst: ListV) -> SetV:
        """The set of the entries of an int list (or of the first components of a list of tuples)."""
        if lst.elem is None:
            return SetV(np.zeros((lst.length.shape[0], 0), dtype=bool), 0)
        values = lst.elem.items[0].a if isinstance(lst.elem, Tup) else lst.elem.a
        valid = valid_positions(lst)
        valid = np.broadcast_to(valid, np.broadcast(valid, values).shape)
        values = np.broadcast_to(values, valid.shape)
        live = self.live(None)
        if live is not None and valid.shape[0] == self.n:
            valid = valid & live[:, None]
        if not valid.any():
            return SetV(np.zeros((valid.shape[0], 0), dtype=bool), 0)
        lo, hi = int(values[valid].min()), int(values[valid].max())
        mask = np.zeros((valid.shape[0], hi - lo + 1), dtype=bool)
        rows, cols = np.nonzero(valid)
        mask[rows, values[rows, cols] - lo] = True
        return SetV(mask, lo)

    def visit_index(self, e: n.Index, m: np.ndarray | None) -> Tree:
        base = e.base
        b = self.borrow(base, m)
        if isinstance(b, Tup):
            assert isinstance(e.index, n.Number), "resolution guarantees an integer literal"
            return b.items[int(e.index.value)]
        j = self.num(e.index, m)
        length = b.length
        self.check((j < 0) | (j >= length), m, "index-out-of-range", e.index.span, lambda k: dict(
            index=int(_at(j, k)), what=f"`{unparse(base)}`", length=int(_at(length, k))))
        if b.elem is None or _cap(b) == 0:
            return _zero_elem(b, j)
        return list_get(b, j)

    def visit_member_ref(self, e: n.MemberRef, m: np.ndarray | None) -> Tree:
        rec = self.families[e.id]
        j = self.num(e.index, m)
        col = j - rec.offset
        width = rec.values.shape[1]
        inside = (col >= 0) & (col < width)
        safe = np.clip(col, 0, max(width - 1, 0))
        if width == 0:
            drawn = np.zeros(self.n, dtype=bool)
        elif col.shape[0] == 1:
            drawn = rec.drawn[:, int(safe[0])] & inside
        else:
            drawn = rec.drawn[np.arange(self.n), safe] & inside
        self.check(~drawn, m, "noise-not-drawn", e.span, lambda k: dict(name=f"{e.id}[{int(_at(j, k))}]"))
        if width == 0:
            return Num(np.zeros(self.n, dtype=rec.values.dtype))
        if col.shape[0] == 1:
            return Num(rec.values[:, int(safe[0])].copy())
        return Num(rec.values[np.arange(self.n), safe])

    # -- calls ---------------------------------------------------------------------------------------
    def visit_call(self, e: n.Call, m: np.ndarray | None) -> Tree:
        return _BUILTINS[e.func](self, e, m)

    def _b_len(self, e: n.Call, m) -> Tree:
        return Num(self.borrow(e.args[0], m).length)

    def _b_abs(self, e: n.Call, m) -> Tree:
        x = self.num(e.args[0], m)
        if x.dtype.kind in "iu":  # |lowest int64| is outside the range (numpy would wrap it)
            self.check(x == np.iinfo(np.int64).min, m, "integer-overflow", e.span, lambda k: dict(
                detail=f"`{unparse(e)}` of {_fmt(_at(x, k))} is outside the 64-bit range"))
        return Num(np.abs(x))

    def _reduce_list(self, e: n.Call, m, kind: str) -> Tree:
        lst = self.borrow(e.args[0], m)
        self.check(lst.length == 0, m, "empty-reduction", e.span, lambda k: dict(func=e.func, what="list"))
        if lst.elem is None or _cap(lst) == 0:
            return Num(np.zeros(lst.length.shape[0], dtype=np.float64))
        data = lst.elem.a
        valid = valid_positions(lst)
        fill = _extreme(data.dtype, low=kind in ("max", "argmax"))
        masked = np.where(valid, data, fill)
        if kind == "max":
            return Num(masked.max(axis=1))
        if kind == "min":
            return Num(masked.min(axis=1))
        if kind == "argmax":
            return Num(masked.argmax(axis=1).astype(INT64))
        return Num(masked.argmin(axis=1).astype(INT64))

    def _min_max(self, e: n.Call, m, kind: str) -> Tree:
        if len(e.args) == 1:
            return self._reduce_list(e, m, kind)
        values = [self.num(a, m) for a in e.args]
        f = np.maximum if kind == "max" else np.minimum
        result = values[0]
        for v in values[1:]:
            result = f(result, v)
        return Num(result)

    def _b_max(self, e, m):
        return self._min_max(e, m, "max")

    def _b_min(self, e, m):
        return self._min_max(e, m, "min")

    def _b_argmax(self, e, m):
        return self._reduce_list(e, m, "argmax")

    def _b_argmin(self, e, m):
        return self._reduce_list(e, m, "argmin")

    def _b_sqrt(self, e, m):
        x = self.num(e.args[0], m)
        self.check(x < 0, m, "math-domain", e.span, lambda k: dict(
            operation=f"`{unparse(e)}`",
            detail=f"sqrt needs a number >= 0, but {unparse(e.args[0])} = {_fmt(_at(x, k))}"))
        return Num(np.sqrt(x.astype(np.float64)))

    def _b_exp(self, e, m):
        return Num(np.exp(self.num(e.args[0], m).astype(np.float64)))

    def _b_ln(self, e, m):
        x = self.num(e.args[0], m)
        self.check(x <= 0, m, "math-domain", e.span, lambda k: dict(
            operation=f"`{unparse(e)}`", detail=f"ln needs a number > 0, but {unparse(e.args[0])} = {_fmt(_at(x, k))}"))
        return Num(np.log(x.astype(np.float64)))

    def _b_normal_cdf(self, e, m):
        return Num(special.ndtr(self.num(e.args[0], m).astype(np.float64)))

    def _b_normal_pdf(self, e, m):
        x = self.num(e.args[0], m).astype(np.float64)
        return Num(np.exp(-(x * x) / 2) / _SQRT_2PI)

    def _to_integer(self, e: n.Call, m, rounding) -> Tree:
        """floor, ceil, round (`rounding`: np.floor, np.ceil, np.rint, which rounds a tie to even): an int is its
        own value; a real's integer must be one of the 64-bit integers the interpreter computes in."""
        x = self.num(e.args[0], m)
        if x.dtype.kind in "iu":
            return Num(x)
        whole = rounding(x.astype(np.float64))
        outside = ~((whole >= -2.0 ** 63) & (whole < 2.0 ** 63))  # inf and nan too
        self.check(outside, m, "integer-overflow", e.span, lambda k: dict(
            detail=f"`{unparse(e)}` with {unparse(e.args[0])} = {_fmt(_at(x, k))} is outside the 64-bit range"))
        return Num(np.where(outside, 0.0, whole).astype(INT64))  # lanes outside the mask are never read

    def _b_floor(self, e, m):
        return self._to_integer(e, m, np.floor)

    def _b_ceil(self, e, m):
        return self._to_integer(e, m, np.ceil)

    def _b_round(self, e, m):
        return self._to_integer(e, m, np.rint)

    def _b_clamp(self, e, m):
        x, lo, hi = (self.num(a, m) for a in e.args)
        self.check(lo > hi, m, "math-domain", e.span, lambda k: dict(
            operation=f"`{unparse(e)}`", detail=clamp_domain(e, _fmt(_at(lo, k)), _fmt(_at(hi, k)))))
        return Num(np.minimum(np.maximum(x, lo), hi))

    def _top(self, e: n.Call, m, gaps: bool) -> tuple[ListV, np.ndarray, np.ndarray, np.ndarray]:
        lst = self.borrow(e.args[0], m)
        k = self.num(e.args[1], m)
        length = lst.length
        too_short = (k < 0) | ((k >= length) if gaps else (k > length))
        need = "0 <= k < len(v) (the k largest and the next one)" if gaps else "0 <= k <= len(v)"
        self.check(too_short, m, "too-few-entries", e.span, lambda j: dict(
            func=e.func, need=need, k=int(_at(k, j)), length=int(_at(length, j))))
        live = self.live(m)
        ks = k if k.shape[0] == 1 or live is None else k[live]
        kmax = int(ks.max()) if ks.size else 0
        kmax = max(0, min(kmax, _cap(lst) - (1 if gaps else 0)))
        take_n = kmax + 1 if gaps else kmax
        data = lst.elem.a if lst.elem is not None else np.zeros((lst.length.shape[0], 0))
        order = _descending(data, valid_positions(lst), take_n)
        return lst, np.clip(k, 0, kmax), order, data

    def _b_top_k(self, e: n.Call, m) -> Tree:
        _, k, order, _ = self._top(e, m, gaps=False)
        return ListV(Num(order.astype(INT64)), k.astype(INT64))

    def _b_top_k_with_gaps(self, e: n.Call, m) -> Tree:
        _, k, order, data = self._top(e, m, gaps=True)
        kmax = order.shape[1] - 1 if order.shape[1] else 0
        if order.shape[1] == 0:
            idx = np.zeros((order.shape[0], 0), dtype=INT64)
            gap = np.zeros((order.shape[0], 0))
        else:
            values = np.take_along_axis(np.broadcast_to(data, (order.shape[0], data.shape[1])), order, axis=1)
            values = values.astype(np.float64)
            idx = order[:, :kmax].astype(INT64)
            gap = values[:, :kmax] - values[:, 1:kmax + 1]
        return ListV(Tup((Num(idx), Num(gap))), k.astype(INT64))

    def _b_indices(self, e: n.Call, m) -> Tree:
        return self.to_set(self.borrow(e.args[0], m))

    def _b_payload(self, e: n.Call, m) -> Tree:
        tag = e.args[1]
        assert isinstance(tag, n.TagLit), "resolution guarantees a tag"
        v = self.borrow(e.args[0], m)
        default = self.ev(e.args[2], m)
        fields = v.payloads.get(tag.tag)
        if not fields:
            return default  # no lane carries this tag here
        carried = fields[0] if len(fields) == 1 else Tup(tuple(fields))
        return where(v.code == self.tags[tag.tag], carried, default)

    def _b_count(self, e: n.Call, m) -> Tree:
        lst = self.borrow(e.args[0], m)
        tag = e.args[1]
        assert isinstance(tag, n.TagLit), "resolution guarantees a tag"
        if lst.elem is None or _cap(lst) == 0:
            return Num(np.zeros(lst.length.shape[0], dtype=INT64))
        hits = (lst.elem.code == tag.code) & valid_positions(lst)
        return Num(hits.sum(axis=1).astype(INT64))

    # -- comprehensions ------------------------------------------------------------------------------
    def _domain(self, e: n.Comprehension, m) -> Iterator[tuple[int, np.ndarray | None]]:
        """The values of the bound variable, each with the lanes on which it is in the domain."""
        d = e.domain
        assert d is not None, "resolution makes every comprehension's domain explicit"
        if isinstance(d, n.Range):
            lo, hi = self.num(d.lo, m), self.num(d.hi, m)
            if lo.shape[0] == 1 and hi.shape[0] == 1:
                for v in range(int(lo[0]), int(hi[0])):
                    yield v, None
                return
            live = self.live(m)
            sel = np.ones(self.n, dtype=bool) if live is None else live
            if not sel.any():
                return
            lo_b, hi_b = np.broadcast_to(lo, (self.n,)), np.broadcast_to(hi, (self.n,))
            for v in range(int(lo_b[sel].min()), int(hi_b[sel].max())):
                yield v, (lo <= v) & (v < hi)
            return
        coll = self.borrow(d, m)
        if isinstance(coll, RangeV):
            yield from self._range_domain(coll, m)
            return
        if isinstance(coll, ListV):
            coll = self.to_set(coll)
        for u in range(coll.mask.shape[1]):
            column = coll.mask[:, u]
            if column.any():
                yield u + coll.offset, (column if column.shape[0] > 1 else None)

    def _range_domain(self, r: RangeV, m):
        lo, hi = r.lo, r.hi
        live = self.live(m)
        sel = np.ones(self.n, dtype=bool) if live is None else live
        lo_b, hi_b = np.broadcast_to(lo, (self.n,)), np.broadcast_to(hi, (self.n,))
        if not sel.any():
            return
        uniform_bounds = lo.shape[0] == 1 and hi.shape[0] == 1
        for v in range(int(lo_b[sel].min()), int(hi_b[sel].max())):
            yield v, None if uniform_bounds else (lo <= v) & (v < hi)

    def visit_comprehension(self, e: n.Comprehension, m: np.ndarray | None) -> Tree:
        excluded = self.borrow(e.excluded, m) if e.excluded is not None else None
        f = e.func
        acc: Any = None
        best: Any = None
        arg: Any = None
        have = np.zeros(1, dtype=bool)
        saved = self.env.get(e.var)
        try:
            for v, in_domain in self._domain(e, m):
                v_arr = uniform(v, INT64)
                sel = in_domain
                if excluded is not None:
                    keep = ~self.contains(excluded, v_arr)
                    sel = keep if sel is None else sel & keep
                self.env[e.var] = Num(v_arr)
                if e.condition is not None:
                    c = self.num(e.condition, _and(m, sel) if sel is not None else m)
                    sel = c if sel is None else sel & c
                if sel is not None and sel.shape[0] == 1 and not sel[0]:
                    continue
                body = self.num(e.body, _and(m, sel) if sel is not None else m)
                on = np.ones(1, dtype=bool) if sel is None else sel
                if f == "sum":  # a fold of `+`: each partial sum of integers within 64 bits, as `+` is
                    term = np.where(on, body, np.zeros(1, dtype=body.dtype))
                    if acc is not None and acc.dtype.kind in "iu" and term.dtype.kind in "iu":
                        total, overflow = integer_ring("+", acc, term)
                        self.check(overflow, m, "integer-overflow", e.span, _partial_sum(e, acc, term))
                        acc = total
                    else:
                        acc = term if acc is None else acc + term
                elif f == "count":
                    term = (on & body).astype(INT64)
                    acc = term if acc is None else acc + term
                elif f == "all":
                    term = ~on | body
                    acc = term if acc is None else acc & term
                elif f == "any":
                    term = on & body
                    acc = term if acc is None else acc | term
                else:
                    if best is None:
                        best = np.where(on, body, np.zeros(1, dtype=body.dtype))
                        arg = np.where(on, v_arr, np.zeros(1, dtype=INT64))
                    else:
                        better = body > best if f in ("max", "argmax") else body < best
                        take = on & (~have | better)
                        best = np.where(take, body, best)
                        arg = np.where(take, v_arr, arg)
                    have = have | on
        finally:
            if saved is None:
                self.env.pop(e.var, None)
            else:
                self.env[e.var] = saved
        if f in ("sum", "count", "all", "any"):
            if acc is None:
                acc = {"sum": uniform(0, INT64), "count": uniform(0, INT64), "all": uniform(True),
                       "any": uniform(False)}[f]
            return Num(acc)
        self.check(~have, m, "empty-reduction", e.span, lambda k: dict(func=f, what="comprehension"))
        if best is None:
            return Num(np.zeros(1, dtype=INT64 if f in ("argmax", "argmin") else np.float64))
        return Num(arg if f in ("argmax", "argmin") else best)


def _max_outputs(body: tuple[n.Stmt, ...]) -> int | None:
    """An upper bound on the outputs one run of `body` appends (None when it has a loop: unknown)."""
    total = 0
    for s in body:
        if isinstance(s, n.Output):
            total += 1
        elif isinstance(s, n.If):
            a, b = _max_outputs(s.then), _max_outputs(s.orelse)
            if a is None or b is None:
                return None
            total += max(a, b)
        elif isinstance(s, (n.For, n.While)) and _max_outputs(s.body):
            return None
    return total


def _and(m: np.ndarray | None, x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=bool)
    if m is None:
        return x
    if x.shape[0] == 1:
        return m if x[0] else np.zeros_like(m)
    return m & x


def _at(x: np.ndarray, lane: int) -> Any:
    return x[lane if x.shape[0] > 1 else 0]


def _fmt(x: Any) -> str:
    if isinstance(x, (bool, np.bool_)):
        return "true" if x else "false"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    return f"{float(x):.6g}"


def _cap(lst: ListV) -> int:
    return leaves(lst.elem)[0].shape[1] if lst.elem is not None else 0


def _zero_elem(lst: ListV, j: np.ndarray) -> Tree:
    """The element read on lanes where the read is out of range anyway (an empty list): zeros."""
    if lst.elem is None:
        return Num(np.zeros(max(j.shape[0], lst.length.shape[0])))
    return zeros_like(lst.elem, (max(j.shape[0], lst.length.shape[0]),), 2)


def _extreme(dtype: np.dtype, low: bool) -> Any:
    if dtype.kind == "f":
        return -np.inf if low else np.inf
    if dtype.kind == "b":
        return not low and True
    info = np.iinfo(dtype)
    return info.min if low else info.max


_TILE_ROWS, _TILE_COLS = 4096, 16


def _copy_rows(src: np.ndarray, r0: int, r1: int, out: np.ndarray) -> np.ndarray:
    """src[r0:r1] into the C-ordered `out` (rows 0 .. r1 - r0), in tiles of 16 columns: a column-major source (a
    list filled position by position) is copied about twice as fast as by numpy's own transposing copy."""
    view = out[: r1 - r0]
    for c in range(0, src.shape[1], _TILE_COLS):
        view[:, c:c + _TILE_COLS] = src[r0:r1, c:c + _TILE_COLS]
    return view


def _descending(data: np.ndarray, valid: np.ndarray, count: int) -> np.ndarray:
    """Per lane, the positions of the `count` largest valid entries, largest first; ties go to the lower position.

    When count is small and every valid entry is finite: `count` argmax passes (argmax returns the first
    maximum, so ties go to the lower position), each removing its pick, over tiles of lanes copied to a
    row-major scratch array (each lane is independent); otherwise a stable sort.
    """
    rows = max(data.shape[0], valid.shape[0])
    if count == 0 or data.shape[1] == 0:
        return np.zeros((rows, 0), dtype=np.intp)
    if data.shape[0] == rows and data.dtype == np.float64:
        src = data
    else:
        src = np.ascontiguousarray(np.broadcast_to(data, (rows, data.shape[1])), dtype=np.float64)
    all_valid = bool(valid.all())
    if all_valid:
        finite = bool(np.isfinite(src).all())
    else:
        valid = np.broadcast_to(valid, src.shape)
        finite = bool(np.isfinite(src[valid]).all())
    if count <= 8 and finite:
        order = np.empty((rows, count), dtype=np.intp)
        scratch = np.empty((min(rows, _TILE_ROWS), src.shape[1]), dtype=np.float64)
        for r0 in range(0, rows, _TILE_ROWS):
            r1 = min(rows, r0 + _TILE_ROWS)
            keys = _copy_rows(src, r0, r1, scratch)
            if not all_valid:
                keys[~valid[r0:r1]] = -np.inf
            ar = np.arange(r1 - r0)
            for c in range(count):
                pick = keys.argmax(axis=1)
                order[r0:r1, c] = pick
                keys[ar, pick] = -np.inf  # below every valid (finite) entry; only lanes with too few entries re-pick
        return order
    keys = np.array(src, order="C", copy=True)
    if not all_valid:
        keys[~valid] = -np.inf
    return np.argsort(-keys, axis=1, kind="stable")[:, :count]


_BUILTINS: Mapping[str, Callable[[Machine, n.Call, np.ndarray | None], Tree]] = implemented("vectorised interpreter", {
    "len": Machine._b_len, "abs": Machine._b_abs, "min": Machine._b_min, "max": Machine._b_max,
    "argmax": Machine._b_argmax, "argmin": Machine._b_argmin, "sqrt": Machine._b_sqrt, "exp": Machine._b_exp,
    "ln": Machine._b_ln, "normal_cdf": Machine._b_normal_cdf, "normal_pdf": Machine._b_normal_pdf,
    "floor": Machine._b_floor, "ceil": Machine._b_ceil, "round": Machine._b_round, "clamp": Machine._b_clamp,
    "top_k": Machine._b_top_k, "top_k_with_gaps": Machine._b_top_k_with_gaps, "indices": Machine._b_indices,
    "count": Machine._b_count, "payload": Machine._b_payload,
})
