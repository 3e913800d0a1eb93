"""Checker stage (resolved program -> z3 terms): symbolic execution of a mechanism for one input length.

For a fixed length n of the list parameters (and fixed values of the integer parameters that shape the
program: loop bounds, k of top-k), every loop is unrolled and every variable becomes a z3 term over the
parameters, the inputs and the noise. Branches are encoded by *guarded updates*: a statement executed under
the guard g changes x to If(g, new, old); `break` clears the loop's `running` flag. The output sequence is a
list of slots plus a symbolic length. `Run` executes the program once (on D with H, or on D' with φ(H));
`AlignmentEval` evaluates the alignment block (lets, shifts, claims) over the output of the first run.

Expressions with no z3 counterpart (exp, ln, normal_cdf) become uninterpreted functions: a formula valid
for every interpretation is valid for the real one, so proofs stay sound, while a refutation that relies
on such a function is re-checked before it is reported (`Encoding.uninterpreted`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TypeAlias

import z3

from .. import nodes as n
from ..adjacency import AdjacencyRule
from ..builtins import implemented
from ..limits import MAX_UNROLL
from ..nodes import Domain
from ..operators import INTEGER_OPERATIONS, ORDERS, RING_OPERATIONS
from ..resolve import ResolvedMechanism, walk
from ..types import BOOL, INT, ListType, TagType, TupleType, Type
from ..unparse import unparse
from ..visitor import IRVisitor, StmtVisitor
from . import terms as zt


class EncodingError(Exception):
    """The program uses something this encoding cannot express for the given length (reported as unknown)."""


# ------------------------------------------------------------------------------------------------ values


@dataclass(frozen=True)
class TagV:
    """A tagged value: `code` is the tag's number, `payload` the payload of every tag it may carry."""

    code: z3.ArithRef
    payload: tuple[tuple[str, tuple], ...]

    def fields(self, tag: str) -> tuple:
        return dict(self.payload).get(tag, ())


@dataclass(frozen=True)
class TupV:
    items: tuple


@dataclass(frozen=True)
class ListV:
    items: tuple
    """The elements: a list of the same length on every path (a number in an unrolled program)."""


@dataclass(frozen=True)
class PathList:
    """A list whose length depends on the path: an element was appended only on some paths (under a branch, or
    after a `break` may have ended the loop). `items` are the slots of the longest path; `length` is the run's
    length, a term whose leaves are numbers (`int_bounds`). Where an element is appended on every path (both
    branches of an `if`), the length is one number again and the list a `ListV` (`list_value`). A read past
    `length` is the interpreter's index error: its value is unconstrained. Builtins over the whole list take only
    the entries below `length` (`_entries`), where every path has as many as they need; otherwise, and for a write
    that would leave a gap, an EncodingError says why (`why`)."""

    items: tuple
    length: z3.ArithRef
    name: str = ""
    line: int = 0

    def why(self, use: str) -> str:
        what = f"the length of `{self.name}` (line {self.line})" if self.name else "the length of a list"
        return (f"{what} depends on the path (an element is appended only on some paths, under a branch or after "
                f"a `break`), and {use}")


def list_value(items: tuple, length: z3.ArithRef, name: str = "", line: int = 0) -> ListV | PathList:
    """The list of `items` whose length is `length`: a ListV where that is one number."""
    length = z3.simplify(length)
    if z3.is_int_value(length) and 0 <= length.as_long() <= len(items):
        return ListV(items[:length.as_long()])
    return PathList(items, length, name, line)


def list_length(v: ListV | PathList) -> z3.ArithRef:
    return v.length if isinstance(v, PathList) else zt.IntVal(len(v.items))


def int_bounds(term: z3.ArithRef, facts: dict[int, tuple[int | None, int | None]] | None = None
               ) -> tuple[int, int] | None:
    """The least and the greatest value of an integer term built from numbers by If, + and - (a `PathList`'s
    length, `len(out)`), or None for any other term. In the branches of an If, its condition bounds the term it
    compares with a number (`facts`, by term id): `clamp(q[i], 0, 2)`, If(q[i] < 0, 0, If(q[i] > 2, 2, q[i])), is
    between 0 and 2 whatever q[i] is."""
    facts = facts or {}
    known = facts.get(term.get_id())
    if known is not None and known[0] is not None and known[1] is not None:
        return known[0], known[1]
    if z3.is_int_value(term):
        return term.as_long(), term.as_long()
    if z3.is_app_of(term, z3.Z3_OP_ITE):
        condition = term.arg(0)
        a = int_bounds(term.arg(1), _narrowed(facts, condition, True))
        b = int_bounds(term.arg(2), _narrowed(facts, condition, False))
        return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
    if z3.is_add(term) or z3.is_sub(term):
        parts = [int_bounds(term.arg(k), facts) for k in range(term.num_args())]
        if any(p is None for p in parts):
            return None
        lo, hi = parts[0][0], parts[0][1]  # type: ignore[index]
        for part in parts[1:]:
            assert part is not None
            lo, hi = (lo + part[0], hi + part[1]) if z3.is_add(term) else (lo - part[1], hi - part[0])
        return lo, hi
    return None


_FLIPPED = {z3.Z3_OP_LE: z3.Z3_OP_GE, z3.Z3_OP_LT: z3.Z3_OP_GT, z3.Z3_OP_GE: z3.Z3_OP_LE, z3.Z3_OP_GT: z3.Z3_OP_LT}
_NEGATED = {z3.Z3_OP_LE: z3.Z3_OP_GT, z3.Z3_OP_LT: z3.Z3_OP_GE, z3.Z3_OP_GE: z3.Z3_OP_LT, z3.Z3_OP_GT: z3.Z3_OP_LE}


def _narrowed(facts: dict[int, tuple[int | None, int | None]], condition: z3.BoolRef,
              holds: bool) -> dict[int, tuple[int | None, int | None]]:
    """`facts` where `condition` holds (or fails): an integer term compared with a number gets that bound."""
    while z3.is_not(condition):
        condition, holds = condition.arg(0), not holds
    if not z3.is_app(condition) or condition.num_args() != 2:
        return facts
    kind = condition.decl().kind()
    if kind not in _FLIPPED:
        return facts
    left, right = condition.arg(0), condition.arg(1)
    if z3.is_int_value(left) and not z3.is_int_value(right):
        left, right, kind = right, left, _FLIPPED[kind]
    if not (z3.is_int_value(right) and z3.is_int(left)):
        return facts
    if not holds:
        kind = _NEGATED[kind]
    k = right.as_long()
    lo, hi = facts.get(left.get_id(), (None, None))
    if kind == z3.Z3_OP_LE:
        hi = k if hi is None else min(hi, k)
    elif kind == z3.Z3_OP_LT:
        hi = k - 1 if hi is None else min(hi, k - 1)
    elif kind == z3.Z3_OP_GE:
        lo = k if lo is None else max(lo, k)
    else:
        lo = k + 1 if lo is None else max(lo, k + 1)
    return {**facts, left.get_id(): (lo, hi)}


@dataclass(frozen=True)
class SetV:
    """An index set given by candidate members: element k is a member when guard k holds."""

    members: tuple[tuple[z3.BoolRef, z3.ArithRef], ...]

    def contains(self, x: z3.ArithRef) -> z3.BoolRef:
        return zt.Or([zt.And(g, e == x) for g, e in self.members]) if self.members else zt.BoolVal(False)


@dataclass(frozen=True)
class LoopList:
    """A list parameter seen from one abstract loop iteration: only its element at the loop index is known."""

    here: z3.ArithRef
    length: z3.ArithRef
    index: z3.ArithRef

    def at(self, index: z3.ArithRef) -> z3.ArithRef:
        if not same_index(index, self.index):
            raise EncodingError("an inductive proof reads list parameters only at the loop index")
        return self.here


def same_index(a: z3.ArithRef, b: z3.ArithRef) -> bool:
    """Whether two index terms are the same term once z3 has simplified them (`i + 1 - 1` is `i`)."""
    return a.eq(b) or z3.simplify(a).eq(z3.simplify(b)) or z3.is_true(z3.simplify(a == b))


@dataclass(frozen=True, eq=False)
class RecordList:
    """A list with a private length (an add/remove-one-record clause), seen by the proof for every length
    (`Encoding.records`): its length is a symbol, and it is read only through `sum` and `count` over all its
    records whose body reads it at the comprehension index (`ExprEval.summary`). The views of q and q' share
    the inserted or deleted record and the length change."""

    name: str
    """The parameter (`q`, also for the view of q')."""
    primed: bool
    length: z3.ArithRef
    record: z3.ExprRef
    """The record q and q' do not share."""
    change: z3.ArithRef
    """len(q') - len(q): +1 (q' has the record) or -1 (q has it)."""
    at: z3.ExprRef
    """What q[l] reads in the body of a fold over all the records (`ExprEval.summary`)."""


@dataclass(frozen=True)
class IterOutput:
    """`out` seen from one abstract loop iteration: out[i] is this iteration's output."""

    slot: object
    index: z3.ArithRef

    def select(self, index: z3.ArithRef) -> object:
        if not same_index(index, self.index):
            raise EncodingError("an inductive proof reads the output only at the loop index")
        return self.slot


@dataclass(frozen=True)
class RangeV:
    lo: z3.ArithRef
    hi: z3.ArithRef


@dataclass(frozen=True)
class ArrayV:
    """A list of symbolic length (ranking.py's proofs for every length): element i is `array[i]` for
    0 <= i < length; the elements beyond are unconstrained and never read by a proof."""

    array: z3.ArrayRef
    length: z3.ArithRef


@dataclass(frozen=True)
class RankV:
    """The result of `top_k`/`top_k_with_gaps` over an `ArrayV` (ranking.py): element t (t < count) is the
    index `order[t]`, or the pair (order[t], gaps[t]). `member[l]` says whether index l was selected and
    `position[l]` where (the inverse of `order` on the selected indices)."""

    order: z3.ArrayRef
    gaps: z3.ArrayRef | None
    count: z3.ArithRef
    member: z3.ArrayRef
    position: z3.ArrayRef

    @property
    def length(self) -> z3.ArithRef:
        return self.count

    def at(self, t: z3.ArithRef) -> Value:
        index = z3.Select(self.order, t)
        return index if self.gaps is None else TupV((index, z3.Select(self.gaps, t)))


@dataclass(frozen=True)
class IndexSetV:
    """An index set of symbolic size (ranking.py): `contains(x)` and at most `size` members."""

    contains: Callable[[z3.ArithRef], z3.BoolRef]
    size: z3.ArithRef


@dataclass(frozen=True)
class TailOutput:
    """An output of symbolic length (ranking.py): `fixed` slots, then slot `tail(t)` for 0 <= t < tail_length,
    where `tail` is a value over the symbol `var`."""

    fixed: tuple
    var: z3.ArithRef | None
    tail: Value | None
    tail_length: z3.ArithRef

    @property
    def length(self) -> z3.ArithRef:
        return len(self.fixed) + self.tail_length

    def tail_at(self, t: z3.ArithRef) -> Value:
        assert self.var is not None and self.tail is not None, "only an output with a tail has tail slots"
        return substitute(self.tail, [(self.var, t)])

    def select(self, index: z3.ArithRef) -> Value:
        """out[index]: only a fixed slot is surely there (the interpreter stops with index-out-of-range past the
        end, and C4a includes that the alignment is defined), so any other index has no encoding."""
        position = _concrete(index)
        if position is None or not 0 <= position < len(self.fixed):
            raise EncodingError("the alignment reads `out` at an index that may be past its end")
        return self.fixed[position]


def substitute(v: Value, pairs: list[tuple[z3.ExprRef, z3.ExprRef]]) -> Value:
    """v with each symbol of `pairs` replaced, through tuples and tags."""
    if isinstance(v, TupV):
        return TupV(tuple(substitute(x, pairs) for x in v.items))
    if isinstance(v, TagV):
        return TagV(z3.substitute(v.code, *pairs), tuple((tag, tuple(substitute(x, pairs) for x in fields))
                                                         for tag, fields in v.payload))
    if isinstance(v, z3.ExprRef):
        return z3.substitute(v, *pairs)
    raise EncodingError(f"a {type(v).__name__} cannot be instantiated at an index")


Value: TypeAlias = "z3.ExprRef | TagV | TupV | ListV | PathList | SetV | LoopList | IterOutput | RangeV | " \
    "OutputSeq | ArrayV | RankV | IndexSetV | TailOutput | RecordList"
"""What an expression evaluates to: a z3 term (number or truth value) or one of the structures above."""


def _term(v: Value) -> z3.ExprRef:
    """v as a z3 term (a number or a truth value); a structured value is an EncodingError."""
    if not isinstance(v, z3.ExprRef):  # z3.is_expr
        raise EncodingError(f"expected a number, found {type(v).__name__}")
    return v


def _entries(v: Value, least: int, use: str) -> tuple[tuple, list[z3.BoolRef]]:
    """The elements of a list value and, for each, where it is one of the run's (a `PathList`'s slots past the
    run's length are not). A builtin that needs `least` elements (`max` one, `top_k_with_gaps` k + 1) takes a
    `PathList` only where every path has that many: otherwise the interpreter stops on some paths and not on
    others, which the checker does not model."""
    if isinstance(v, PathList):
        bounds = int_bounds(z3.simplify(v.length))
        if bounds is None or bounds[0] < least:
            raise EncodingError(v.why(f"{use} needs {least} elements, which some paths may not have"))
        return v.items, [z3.simplify(k < v.length) for k in range(len(v.items))]
    # a list parameter seen from an inductive proof's abstract iteration (`LoopList`) has only its element at the
    # loop index: a builtin over the whole list has no encoding there
    if isinstance(v, LoopList):
        raise EncodingError("an inductive proof reads list parameters only at the loop index")
    if not isinstance(v, ListV):
        raise EncodingError(f"expected a list, found {type(v).__name__}")
    return v.items, [zt.BoolVal(True)] * len(v.items)


def merge(c: z3.BoolRef, a: Value, b: Value) -> Value:
    """If(c, a, b) for structured values of the same shape."""
    if a is b:
        return a
    if isinstance(a, TagV) and isinstance(b, TagV):
        tags = dict(b.payload)
        merged = []
        for tag, fields_a in a.payload:
            fields_b = tags.pop(tag, None)
            merged.append((tag, fields_a if fields_b is None
                           else tuple(merge(c, x, y) for x, y in zip(fields_a, fields_b))))
        merged += sorted(tags.items())
        return TagV(z3.If(c, a.code, b.code), tuple(sorted(merged)))
    if isinstance(a, TupV) and isinstance(b, TupV):
        return TupV(tuple(merge(c, x, y) for x, y in zip(a.items, b.items)))
    if isinstance(a, (ListV, PathList)) and isinstance(b, (ListV, PathList)):
        # the slots of the longer list past the shorter one's end hold its elements on both paths (past the
        # length on the other path, never read there)
        longest = max(len(a.items), len(b.items))
        xs = a.items + b.items[len(a.items):]
        ys = b.items + a.items[len(b.items):]
        assert len(xs) == len(ys) == longest
        named = a if isinstance(a, PathList) else b
        return list_value(tuple(merge(c, x, y) for x, y in zip(xs, ys)), z3.If(c, list_length(a), list_length(b)),
                          *((named.name, named.line) if isinstance(named, PathList) else ()))
    if isinstance(a, SetV) and isinstance(b, SetV):
        return SetV(tuple((zt.And(c, g), e) for g, e in a.members) +
                    tuple((zt.And(z3.Not(c), g), e) for g, e in b.members))
    if isinstance(a, z3.ExprRef) and isinstance(b, z3.ExprRef):  # z3.is_expr
        if a.sort() != b.sort():
            a, b = _real(a), _real(b)
        return z3.If(c, a, b)
    raise EncodingError(f"cannot merge values of different shapes ({type(a).__name__}, {type(b).__name__})")


def equal(a: Value, b: Value) -> z3.BoolRef:
    """Structural equality of two values of the same type (tag payloads compared only for the tag carried)."""
    if isinstance(a, TagV) and isinstance(b, TagV):
        parts = [a.code == b.code]
        codes = {}
        for tag, fa in a.payload:
            fb = b.fields(tag)
            if fa and fb:
                codes[tag] = zt.And([equal(x, y) for x, y in zip(fa, fb)])
        for tag, same in codes.items():
            parts.append(z3.Implies(a.code == tag_number(tag), same))
        return zt.And(parts)
    if isinstance(a, TupV) and isinstance(b, TupV):
        return zt.And([equal(x, y) for x, y in zip(a.items, b.items)])
    if isinstance(a, ListV) and isinstance(b, ListV):
        if len(a.items) != len(b.items):
            return zt.BoolVal(False)
        return zt.And([equal(x, y) for x, y in zip(a.items, b.items)])
    if isinstance(a, (ListV, PathList)) and isinstance(b, (ListV, PathList)):
        # the same length, and the same elements below it
        n = list_length(a)
        return zt.And(n == list_length(b),
                      *[z3.Implies(k < n, equal(x, y)) for k, (x, y) in enumerate(zip(a.items, b.items))])
    if isinstance(a, z3.ExprRef) and isinstance(b, z3.ExprRef):  # z3.is_expr
        if a.sort() != b.sort():
            return _real(a) == _real(b)
        return a == b
    raise EncodingError("cannot compare values of different shapes")


_TAG_TEXT = re.compile(r"[A-Z][A-Z0-9_]*")


def tag_number(tag: str) -> int:
    """The integer that stands for a tag in z3: its name's ASCII bytes read as one number (TOP is 0x544f50).
    A function of the name alone, so the encoding of a mechanism never depends on which tags were encoded
    before it in the process; 0 (the empty name) is the placeholder of a value that is not defined."""
    return int.from_bytes(tag.encode("ascii"), "big")


def tag_name(number: int) -> str:
    """The tag whose `tag_number` is `number` ("?" for a number that is not one: the placeholder 0)."""
    if number <= 0:
        return "?"
    text = number.to_bytes((number.bit_length() + 7) // 8, "big").decode("ascii", errors="replace")
    return text if _TAG_TEXT.fullmatch(text) else "?"


def tag_code(tag: str) -> z3.ArithRef:
    return zt.IntVal(tag_number(tag))


def _real(x: z3.ArithRef) -> z3.ArithRef:
    return z3.ToReal(x) if z3.is_int(x) else x


def num(value: Fraction, is_integer: bool) -> z3.ArithRef:
    if is_integer and value.denominator == 1:
        return zt.IntVal(value.numerator)
    return zt.RealVal(value)


def default_value(t: Type) -> Value:
    """A placeholder for a value that is not defined on some path (never observed when the path is taken)."""
    if t == INT:
        return zt.IntVal(0)
    if t == BOOL:
        return zt.BoolVal(False)
    if isinstance(t, TagType):
        return TagV(zt.IntVal(0), tuple((tag, tuple(default_value(p) for p in payload)) for tag, payload in t.payloads))
    if isinstance(t, TupleType):
        return TupV(tuple(default_value(i) for i in t.items))
    if isinstance(t, ListType):
        return ListV(())
    return zt.RealVal(0)


# ----------------------------------------------------------------------------------------------- encoding


@dataclass(frozen=True)
class Tie:
    """An exact tie of a comparison that has probability 0, excluded: `formula` says the difference is not 0."""

    formula: z3.BoolRef
    text: str
    """The assumption, as the verdicts print it."""


@dataclass
class TieMemo:
    """`note_ties`'s memory, by z3 term id; every term is kept with its entry, since z3 gives the id of a term that
    is freed to the next one it makes. An unrolled program's values share their subterms (a chain of `If`s, one
    per iteration), and without it `_cases` and `_symbols` walked a shared subterm once per path to it: Free Gap
    Algorithm 1 at length 4 spent three quarters of its bounded check there."""

    symbols: dict[int, tuple[z3.ExprRef, frozenset[str]]] = field(default_factory=dict)
    """The symbols of each term looked at (`_known_symbols`)."""
    cases: dict[int, tuple[z3.ExprRef, list[z3.ExprRef], int]] = field(default_factory=dict)
    """The cases (`_cases`) of each term looked at, with the budget that computing them spent."""
    noted: dict[tuple[int, int], z3.ExprRef] = field(default_factory=dict)
    """The differences noted, by (term id, the size of `Encoding.earlier` then): the ties of a difference depend
    on it and on `earlier` alone (a symbol's other facts are fixed when it is made, before any term reads it), and
    `earlier` only grows."""


@dataclass
class Encoding:
    """Symbols shared by every run of one mechanism at one length: parameters, inputs, noise."""

    mech: ResolvedMechanism
    lengths: dict[str, int]
    """The length of each list parameter (each list has its own, unless `requires` ties them)."""
    structural: dict[str, int]
    """Concrete values chosen for integer parameters that shape the program (loop bounds, k of top-k)."""
    neighbour_lengths: dict[str, int] = field(default_factory=dict)
    """The length on D' of each list with an add/remove-one-record clause (the others: as on D)."""
    prefix: str = ""
    params: dict[str, Value] = field(default_factory=dict)
    """Values on D (public parameters are shared with D')."""
    neighbour: dict[str, Value] = field(default_factory=dict)
    """Values on D' of the parameters with an adjacency clause."""
    noise: dict[tuple[str, int | None], z3.ArithRef] = field(default_factory=dict)
    """Noise symbols, keyed by (variable, loop index) (index None for a scalar noise variable)."""
    side: list[z3.BoolRef] = field(default_factory=list)
    """Side conditions of auxiliary symbols (square roots, positivity of exp)."""
    uninterpreted: set[str] = field(default_factory=set)
    assumptions: set[str] = field(default_factory=set)
    """Measure-zero assumptions used (reported with the verdicts)."""
    noted_ties: dict[str, Tie] = field(default_factory=dict)
    """The exact ties worked out of the differences noted so far (`ties` works out the rest)."""
    pending_ties: list[tuple[z3.ArithRef, str, frozenset[str], frozenset[str]]] = field(default_factory=list)
    """Differences noted (`_note_difference`) and not yet worked out, with `earlier` and `current_members` as they
    were then: most queries are proved without the ties, so their cases are worked out only when asked for."""
    exclude_ties: bool = False
    fold_shapes: dict[int, tuple[str, tuple] | None] = field(default_factory=dict)
    """Each comprehension's `_fold_shape` (by node id; None: not a sum or count of data)."""
    data_folds: dict[tuple, tuple[tuple, Value]] = field(default_factory=dict)
    """Sums and counts of data evaluated (`ExprEval._data_key`): their value, by the comprehension and the z3 ids
    of the values it read."""
    required: tuple[tuple, list[z3.BoolRef]] | None = None
    """`requires` evaluated (`requires()`), with the parameters' values it was evaluated on."""
    tie_memo: TieMemo = field(default_factory=lambda: TieMemo())
    """What `note_ties` has worked out of the terms it looked at (their symbols, their cases, the differences
    noted): the runs of one shape compare the same values again and again, and their terms share subterms."""
    earlier: set[str] = field(default_factory=set)
    """Symbols that stand for values fixed before the noise of the abstract loop iteration is drawn (the first run's
    state at the loop head, checker/induction.py): a tie c·η + a with η a member drawn in that iteration and a
    reading them fixes η to one point, given everything drawn before it."""
    current_members: set[str] = field(default_factory=set)
    """The noise symbols of the members drawn in the abstract loop iteration (`noise_symbol` at `CURRENT`)."""
    _frozen: tuple[tuple[int, int], frozenset[str], frozenset[str]] | None = None
    continuous: set[str] = field(default_factory=set)
    noise_sites: dict[str, str] = field(default_factory=dict)
    """The noise variable of each noise symbol."""
    noise_runs: dict[str, str] = field(default_factory=dict)
    """The noise vector each noise symbol belongs to, by its run's prefix ("" for H, which the aligned run shifts;
    "A.", "B." for the independent runs of a self-composition)."""
    """Names of the z3 symbols of noise with a density (not Point, not integer-valued)."""
    functions: dict[str, z3.FuncDeclRef] = field(default_factory=dict)
    applications: dict[str, list[tuple[z3.ArithRef, z3.ArithRef]]] = field(default_factory=dict)
    """(argument, application) of each uninterpreted function, for the facts relating them."""
    roots: list[tuple[z3.ArithRef, z3.ArithRef, z3.BoolRef]] = field(default_factory=list)
    """Square roots: (symbol s, argument x, its side condition s >= 0 and s*s = x, which is in `side`)."""
    undefined: list[tuple[z3.ArithRef, str, tuple[z3.ArithRef, ...]]] = field(default_factory=list)
    """The value of a builtin outside its domain (`clamp` with lo > hi), where the interpreter stops with
    `math-domain`: (a symbol free of any condition, what went wrong as a template with a `{}` per term, the
    terms). C0 asks that no noise parameter evaluates one (densities.partial_operations)."""
    counter: int = 0
    relational: bool = False
    """`max`, `min`, `argmax`, `argmin` and the ranking of `top_k` are fresh symbols with the facts that define them
    (`_extremum`, `_ranked_symbols`), not chains of `If`s: the same values, and the queries equisatisfiable. The
    bounded check's first pass (checker/verify.py) encodes long inputs so: a cost that reads the largest noisy
    value outside the chosen ones (Free Gap Algorithm 4) is then a few case splits, not one per path of the chain."""
    records: bool = False
    """Lists with a private length are RecordLists of symbolic length (the proof for every length of
    add/remove-one-record neighbours), not lists of `lengths` entries."""
    summaries: dict[tuple[str, str, str], tuple[z3.ArithRef, z3.ArithRef]] = field(default_factory=dict)
    """(sum or count, list, body on the record) -> its value over q and over q'."""
    record_terms: dict[tuple[str, str, str], z3.ArithRef] = field(default_factory=dict)
    """(sum or count, list, body on the record) -> the record's share of it, change·body(r): its value over q'
    minus its value over q (the induction's budget of the record, induction.py)."""

    @property
    def shape(self) -> dict[str, int]:
        """The length of each list on D, and on D' (`q'`) of those whose length changes."""
        return {**self.lengths, **{f"{k}'": v for k, v in self.neighbour_lengths.items()}}

    @property
    def n(self) -> int:
        """The longest list (what a report calls the length of a counterexample)."""
        return max(self.shape.values(), default=0)

    @staticmethod
    def uniform(mech: ResolvedMechanism, n: int) -> dict[str, int]:
        """Every list parameter of length n."""
        return {p.name: n for p in mech.params if isinstance(p.type, ListType)}

    def __post_init__(self) -> None:
        for p in self.mech.params:
            if self.records and isinstance(p.type, ListType) and not p.length_public:
                shared = (self._scalar(f"%record({p.name})", p.type.elem), zt.Int(f"%change({p.name})"),
                          self._scalar(f"%at({p.name})", p.type.elem))
                self.params[p.name] = RecordList(p.name, False, zt.Int(f"len({p.name})"), *shared)
                self.neighbour[p.name] = RecordList(p.name, True, zt.Int(f"len({p.name}')"), *shared)
                continue
            self.params[p.name] = self._symbol(p.name, p.type)
            if not p.public:
                self.neighbour[p.name] = self._symbol(p.name + "'", p.type)

    def summary(self, func: str, over: RecordList, body: z3.ExprRef) -> z3.ArithRef:
        """`func(l in 0 .. len(q): body)` over a RecordList, `body` evaluated on the symbol `over.at` standing
        for q[l]: one symbol per (func, list, body) on each side, and the fact relating them: q' is q with the
        record r inserted (change +1) or deleted (change -1), and sum and count do not depend on the order, so
        the value over q' is the value over q plus change·body(r)."""
        term = z3.If(body, 1, 0) if func == "count" else body
        key = (func, over.name, term.sexpr())
        if key not in self.summaries:
            integer = func == "count" or z3.is_int(term)
            pair = tuple(zt.Int(f"%{func}{len(self.summaries)}({over.name}{prime})") if integer else
                         zt.Real(f"%{func}{len(self.summaries)}({over.name}{prime})") for prime in ("", "'"))
            self.summaries[key] = pair[0], pair[1]
            self.record_terms[key] = over.change * z3.substitute(term, (over.at, over.record))
            self.side.append(pair[1] == pair[0] + self.record_terms[key])
        here, there = self.summaries[key]
        return there if over.primed else here

    def _symbol(self, name: str, t: Type) -> Value:
        if name in self.structural:
            return zt.IntVal(self.structural[name])
        if isinstance(t, ListType):
            base = name.rstrip("'")
            length = self.neighbour_lengths.get(base, self.lengths[base]) if name.endswith("'") else self.lengths[base]
            return ListV(tuple(self._scalar(f"{name}[{i}]", t.elem) for i in range(length)))
        return self._scalar(name, t)

    def _scalar(self, name: str, t: Type) -> z3.ExprRef:
        name = self.prefix + name
        if t == INT:
            return zt.Int(name)
        if t == BOOL:
            return zt.Bool(name)
        return zt.Real(name)

    def noise_symbol(self, name: str, index: int | None, integer: bool, prefix: str = "") -> z3.ArithRef:
        key = (prefix + name, index)
        if key not in self.noise:
            member = name if index is None else f"{name}[i]" if index == -1 else f"{name}[{index}]"
            label = self.prefix + prefix + member
            self.noise[key] = zt.Int(label) if integer else zt.Real(label)
            self.noise_runs[label] = prefix
            self.noise_sites[label] = name
            if index == -1:  # CURRENT
                self.current_members.add(label)
            site = self.mech.site(name)
            if site is not None and site.distribution.continuous:
                self.continuous.add(label)
        return self.noise[key]

    def fresh(self, base: str, sort: str = "real") -> z3.ArithRef:
        self.counter += 1
        name = f"{self.prefix}%{base}{self.counter}"
        return zt.Int(name) if sort == "int" else zt.Real(name)

    def function(self, name: str) -> Callable[[z3.ArithRef], z3.ArithRef]:
        """The uninterpreted function `name`, as a callable that also states, for each new argument, the facts
        of the real function that z3 cannot know (`FUNCTION_FACTS`: exp is positive, increasing, 1 at 0 ...).
        They are true of the real functions, so they keep every proof sound and never make assumptions
        vacuous; they let z3 see that Geo(1 - exp(-eps0)) has p in (0, 1) when eps0 > 0."""
        if name not in self.functions:
            self.functions[name] = zt.Function(name, zt.RealSort(), zt.RealSort())
            self.uninterpreted.add(name)
            self.applications[name] = []
        decl = self.functions[name]

        def apply(argument: z3.ArithRef) -> z3.ArithRef:
            argument = _real(argument)
            value = decl(argument)
            seen = self.applications[name]
            if all(not argument.eq(a) for a, _ in seen):
                single, pair = FUNCTION_FACTS.get(name, (None, None))
                if single is not None:
                    self.side.append(single(argument, value))
                if pair is not None:
                    self.side.extend(pair(a, fa, argument, value) for a, fa in seen)
                seen.append((argument, value))
            return value

        return apply

    def adjacency(self) -> z3.BoolRef:
        """The neighbouring relation D ~ D' from the `adjacent` clauses (align/adjacency.py): every entry
        satisfies the entry relation, and the measure's total is at most the bound."""
        parts = []
        for p in self.mech.params:
            for adj in p.adjacency:
                here, there = self.params[p.name], self.neighbour[p.name]
                bound = ExprEval(self, self.params, {}).value(adj.bound) if adj.bound is not None else None
                rule = adj.rule
                if rule.changes_length and isinstance(here, RecordList) and isinstance(there, RecordList):
                    parts += record_adjacency(rule, here, there)
                    continue
                if rule.changes_length:
                    assert isinstance(here, ListV) and isinstance(there, ListV)
                    parts.append(rule.one_record_apart(Z3_OPS, list(here.items), list(there.items)))
                    continue
                if rule.on_list:
                    # List clauses are on list parameters (resolve/check.py), whose symbols `_symbol` makes ListVs.
                    assert isinstance(here, ListV) and isinstance(there, ListV)
                    pairs = list(zip(here.items, there.items))
                else:
                    pairs = [(_term(here), _term(there))]
                up = zt.Bool(f"%up({p.name})")
                if rule.entry is not None:
                    parts += [rule.entry(Z3_OPS, a, b, bound, up) for a, b in pairs]
                if rule.measure is not None:
                    parts.append(zt.Sum([rule.measure(Z3_OPS, a, b) for a, b in pairs] or [zt.IntVal(0)]) <= bound)
        return zt.And(parts + self.domains(private=True))

    def domains(self, private: bool) -> list[z3.BoolRef]:
        """The declared domains (`x: int in lo .. hi`) of the private parameters, on D and D' (part of D ~ D'),
        or of the public ones (part of `requires`). A records view (add/remove-one-record) bounds its unshared
        record and the record a fold reads; a view of one iteration of a proof for every length bounds nothing
        here (induction.py and ranking.py state its entries' domains)."""
        facts: list[z3.BoolRef] = []
        for p in self.mech.params:
            if p.domain is None or p.public == private:
                continue
            lo, hi = self.domain_ends(p.domain)
            for values in (self.params, self.neighbour) if private else (self.params,):
                value = values[p.name]
                if isinstance(value, ListV):
                    facts += p.domain_facts(Z3_OPS, list(value.items), lo, hi)
                elif isinstance(value, RecordList):  # the record q and q' do not share, and any record a fold reads
                    facts += p.domain_facts(Z3_OPS, [value.record, value.at], lo, hi)
                elif isinstance(value, z3.ExprRef):
                    facts += p.domain_facts(Z3_OPS, [value], lo, hi)
        return facts

    def domain_ends(self, domain: Domain) -> tuple[z3.ArithRef, z3.ArithRef]:
        """lo and hi of a declared domain `in lo .. hi`, as terms of the public parameters."""
        ev = ExprEval(self, dict(self.params), {})
        return ev.arith(domain.lo), ev.arith(domain.hi)

    @contextmanager
    def excluding_ties(self) -> Iterator[None]:
        """Within: `requires()` assumes that no exact tie of probability 0 (`ties`) happens."""
        saved, self.exclude_ties = self.exclude_ties, True
        try:
            yield
        finally:
            self.exclude_ties = saved

    @property
    def ties(self) -> dict[str, Tie]:
        """The exact ties of comparisons that have probability 0 (`note_ties`), by formula; assumed by `requires()`
        only while `exclude_ties` is set (the checker first tries a query without them, so that a proof that does
        not need them does not say it used them)."""
        pending, self.pending_ties = self.pending_ties, []
        for difference, text, earlier, members in pending:
            _work_out_ties(self, difference, text, earlier, members)
        return self.noted_ties

    def frozen_state(self) -> tuple[frozenset[str], frozenset[str]]:
        """`earlier` and `current_members` now (both only grow, so their sizes tell whether they changed)."""
        key = (len(self.earlier), len(self.current_members))
        if self._frozen is None or self._frozen[0] != key:
            self._frozen = (key, frozenset(self.earlier), frozenset(self.current_members))
        return self._frozen[1], self._frozen[2]

    def off_ties(self, model: z3.ModelRef) -> bool:
        """Whether `model` is at none of the exact ties noted so far (a counterexample there is not one of the
        null set that almost-sure semantics excludes)."""
        return all(z3.is_true(model.eval(t.formula, model_completion=True)) for t in self.ties.values())

    def requires(self) -> z3.BoolRef:
        # `requires` evaluated once per values of the parameters (a proof for every length replaces the lists by
        # views of one iteration): each check asks for it, and evaluating it again made the same terms, with
        # fresh symbols and their side conditions again where it reads `max` or `sqrt`
        values = tuple(self.params.values())
        if self.required is None or len(self.required[0]) != len(values) or \
                any(a is not b for a, b in zip(self.required[0], values)):
            ev = ExprEval(self, self.params, {})
            self.required = (values, [ev.value(r) for r in self.mech.requires] + self.domains(private=False))
        ties = [t.formula for t in self.ties.values()] if self.exclude_ties else []
        return zt.And(self.required[1] + list(self.side) + ties)


def record_adjacency(rule: AdjacencyRule, here: RecordList, there: RecordList) -> list[z3.BoolRef]:
    """An add/remove-one-record clause over the records views of q and q': the lengths differ by the change,
    one of those the clause admits."""
    return [here.length >= 0, there.length >= 0, there.length == here.length + here.change,
            zt.Or([here.change == d for d in rule.length_changes])]


def _abs(x: z3.ArithRef) -> z3.ArithRef:
    return z3.If(x >= 0, x, -x)


class _Z3Ops:
    """align/adjacency.py's relations over z3 terms. Two spellings of |x - y|, equal in value: the bounded
    encoding's and the one the proofs for every length were tuned with (the quantified queries' times depend
    on the exact terms, docs/checker.md)."""

    def __init__(self, split: bool):
        self.split = split

    def distance(self, x: z3.ArithRef, y: z3.ArithRef) -> z3.ArithRef:
        return z3.If(x >= y, x - y, y - x) if self.split else _abs(x - y)

    def le(self, x: z3.ArithRef, y: z3.ArithRef) -> z3.BoolRef:
        return x <= y

    def ge(self, x: z3.ArithRef, y: z3.ArithRef) -> z3.BoolRef:
        return x >= y

    def either(self, up: z3.BoolRef, then: z3.BoolRef, otherwise: z3.BoolRef) -> z3.BoolRef:
        return z3.If(up, then, otherwise)

    def differs(self, x: z3.ArithRef, y: z3.ArithRef) -> z3.ArithRef:
        return z3.If(x == y, 0, 1)

    def same(self, x: z3.ArithRef, y: z3.ArithRef) -> z3.BoolRef:
        return x == y

    def all_of(self, parts: list[z3.BoolRef]) -> z3.BoolRef:
        return zt.And(parts)

    def any_of(self, parts: list[z3.BoolRef]) -> z3.BoolRef:
        return zt.Or(parts)


Z3_OPS = _Z3Ops(split=False)
"""For the bounded encoding."""
Z3_SPLIT_OPS = _Z3Ops(split=True)
"""For the proofs for every length (induction.py, ranking.py)."""


# --------------------------------------------------------------------------------------- expression eval


class ExprEval(IRVisitor[Value, None]):
    """Evaluates expressions to z3 values in an environment (parameters, variables, noise, lets, `out`)."""

    def __init__(self, enc: Encoding, env: dict[str, Value], primed: dict[str, Value],
                 noise: Callable[[str, Value | None, n.Expr], Value] | None = None,
                 out: OutputSeq | TailOutput | None = None,
                 run: Run | None = None):
        self.enc = enc
        self.env = env
        self.primed = primed
        self.noise = noise
        self.out = out
        self.run = run
        """The run being executed (its rankings decide the no-ties assumption); None for alignment code."""
        self.guard: z3.BoolRef = zt.BoolVal(True)
        """When the expression being evaluated is read at all: the interpreter evaluates only the taken side of
        `c ? a : b`, the right operand of `and`/`or` only when it decides, a comprehension's body only where its
        filter holds."""
        self.reads: list[tuple[z3.BoolRef, str]] | None = None
        """If a list: each read of `out` adds the condition that its index is in range where it is read."""
        self.reading: tuple[RecordList, z3.ArithRef] | None = None
        """Within a summary's body: (the list, the comprehension's index); q[index] reads the list's `at`."""

    @contextmanager
    def recording(self, reads: list[tuple[z3.BoolRef, str]]) -> Iterator[None]:
        """Within: what the expression needs to have a value (each read of `out` within its length, each
        max/min over a non-empty set) goes to `reads`, with what it breaks when it fails."""
        saved, self.reads = self.reads, reads
        try:
            yield
        finally:
            self.reads = saved

    def guarded(self, condition: z3.BoolRef, e: n.Expr) -> Value:
        """`e` evaluated where `condition` also holds."""
        if self.reads is None:
            return self.value(e)
        saved = self.guard
        self.guard = zt.And(saved, condition)
        try:
            return self.value(e)
        finally:
            self.guard = saved

    def value(self, e: n.Expr) -> Value:
        return e.accept(self, None)

    def arith(self, e: n.Expr) -> z3.ArithRef:
        return _term(self.value(e))

    def visit_number(self, e: n.Number, ctx: None = None) -> Value:
        return num(e.value, e.is_integer)

    def visit_bool_lit(self, e: n.BoolLit, ctx: None = None) -> Value:
        return zt.BoolVal(e.value)

    def named(self, e: n.Ref, ctx: None = None) -> Value:
        """The value of a name: from the environment (primed: the neighbour's), `out`, or the noise."""
        if isinstance(e, (n.ParamRef, n.VarRef, n.LetRef)) and e.primed:  # the kinds of name that can be primed
            if e.text in self.env:
                return self.env[e.text]
            if e.id in self.primed:
                return self.primed[e.id]
            raise EncodingError(f"no value for {e.text}")
        if e.text in self.env:
            return self.env[e.text]
        if isinstance(e, n.OutRef) and self.out is not None:
            return self.out
        if self.noise is not None:
            v = self.noise(e.text, None, e)
            if v is not None:
                return v
        raise EncodingError(f"no value for {e.text}")

    visit_param_ref = visit_var_ref = visit_noise_ref = visit_let_ref = visit_local_ref = named
    visit_out_ref = visit_aligned_cost_ref = named

    def visit_tag_lit(self, e: n.TagLit, ctx: None = None) -> Value:
        return TagV(tag_code(e.tag), ((e.tag, ()),))

    def visit_tag_call(self, e: n.TagCall, ctx: None = None) -> Value:
        return TagV(tag_code(e.tag), ((e.tag, tuple(self.value(a) for a in e.args)),))

    def visit_call(self, e: n.Call, ctx: None = None) -> Value:
        return _BUILTINS[e.func](self, e)

    def visit_comprehension(self, e: n.Comprehension, ctx: None = None) -> Value:
        key = self._data_key(e)
        if key is not None:
            known = self.enc.data_folds.get(key[0])
            if known is not None:
                return known[1]
        value = self._comprehension(e)
        if key is not None:
            self.enc.data_folds[key[0]] = (key[1], value)
        return value

    def _data_key(self, e: n.Comprehension) -> tuple[tuple, tuple] | None:
        """For a sum or count of data (`_fold_shape`): its key in `Encoding.data_folds`, its text with the names it
        reads numbered and the z3 ids of their values, with those values (kept, so that the ids stay theirs); None
        for any other comprehension. The runs of one shape (the run on D, the two runs of a self-composition, the
        aligned run on D' and the alignment's own count of D') count the same data again and again: a histogram's
        count per bin was most of its bounded check."""
        if self.reading is not None or self.enc.records:
            return None
        if id(e) not in self.enc.fold_shapes:
            self.enc.fold_shapes[id(e)] = _fold_shape(e)
        shape = self.enc.fold_shapes[id(e)]
        if shape is None:
            return None
        ids: list[object] = [shape[0]]
        kept: list[Value] = []
        for x in shape[1]:
            v = self.env.get(x.text, self.primed.get(x.id) if x.primed else None)
            if isinstance(v, ListV) and all(isinstance(item, z3.ExprRef) for item in v.items):
                ids.append(tuple(item.get_id() for item in v.items))
            elif isinstance(v, z3.ExprRef):
                ids.append(v.get_id())
            else:
                return None
            kept.append(v)
        return tuple(ids), tuple(kept)

    def _comprehension(self, e: n.Comprehension) -> Value:
        if self.enc.records:
            summary = self.summary(e)
            if summary is not None:
                return summary
        candidates = self.candidates(e)
        results = []
        for guard, index in candidates:
            saved = self.env.get(e.var)
            self.env[e.var] = index
            ok = guard
            if e.excluded is not None:
                ok = zt.And(ok, z3.Not(self.member(self.value(e.excluded), index)))
            if e.condition is not None:
                ok = zt.And(ok, self.guarded(ok, e.condition))
            body = self.guarded(ok, e.body)
            results.append((z3.simplify(ok), index, body))
            if saved is None:
                del self.env[e.var]
            else:
                self.env[e.var] = saved
        if self.reads is not None and e.func in ("max", "min", "argmax", "argmin"):
            # the interpreter stops with `empty-reduction` where no member passes
            self.reads.append((z3.Implies(self.guard, zt.Or([g for g, _, _ in results])),
                               f"takes `{e.func}` over an empty set at line {e.span.line}"))
        return _fold(e.func, results, self.enc)

    def summary(self, e: n.Comprehension) -> Value | None:
        """`sum`/`count(l in 0 .. len(q): body)` over a RecordList q, body reading q only as q[l]: the
        summary symbol of `Encoding.summary`; None for any other comprehension."""
        if e.func not in ("sum", "count") or not isinstance(e.domain, n.Range) or e.excluded is not None or \
                e.condition is not None or _concrete(self.arith(e.domain.lo)) != 0:
            return None
        hi = e.domain.hi
        over = self.value(hi.args[0]) if isinstance(hi, n.Call) and hi.func == "len" else None
        if not isinstance(over, RecordList):
            return None
        index = self.enc.fresh("l", "int")
        saved_var, saved_reading = self.env.get(e.var), self.reading
        self.env[e.var], self.reading = index, (over, index)
        try:
            body = self.value(e.body)
        finally:
            self.reading = saved_reading
            if saved_var is None:
                del self.env[e.var]
            else:
                self.env[e.var] = saved_var
        if not z3.is_expr(body) or index.decl().name() in _symbols(body):
            raise EncodingError("the body of a sum or count over a list with a private length reads its index "
                                "other than as the record")
        return self.enc.summary(e.func, over, body)

    def candidates(self, e: n.Comprehension) -> list[tuple[z3.BoolRef, z3.ArithRef]]:
        if e.domain is None:
            raise EncodingError(f"comprehension over `{e.var}` has no universe")
        d = self.value(e.domain)
        if isinstance(d, RangeV):
            lo, hi = _concrete(d.lo), _concrete(d.hi)
            if lo is not None and hi is not None:
                if hi - lo > MAX_UNROLL:
                    raise EncodingError(f"a comprehension over more than {MAX_UNROLL} indices (align/limits.py)")
                return [(zt.BoolVal(True), zt.IntVal(i)) for i in range(lo, hi)]
            # a bound that depends on the path (the length of a `PathList`): each index it can reach, guarded
            lows, highs = int_bounds(z3.simplify(d.lo)), int_bounds(z3.simplify(d.hi))
            if lows is None or highs is None:
                raise EncodingError("a comprehension range must have bounds fixed by the length and the structural "
                                    "parameters, or lengths of lists")
            if highs[1] - lows[0] > MAX_UNROLL:
                raise EncodingError(f"a comprehension over more than {MAX_UNROLL} indices (align/limits.py)")
            return [(z3.simplify(zt.And(d.lo <= i, i < d.hi)), zt.IntVal(i)) for i in range(lows[0], highs[1])]
        if isinstance(d, SetV):
            return [(g, x) for g, x in d.members]
        if isinstance(d, ListV):
            return [(zt.BoolVal(True), x) for x in d.items]
        if isinstance(d, PathList):
            return [(z3.simplify(k < d.length), x) for k, x in enumerate(d.items)]
        raise EncodingError("unsupported comprehension domain")

    def member(self, collection: Value, x: z3.ArithRef) -> z3.BoolRef:
        if isinstance(collection, RangeV):
            return zt.And(collection.lo <= x, x < collection.hi)
        if isinstance(collection, SetV):
            return collection.contains(x)
        if isinstance(collection, ListV):
            return zt.Or([x == y for y in collection.items]) if collection.items else zt.BoolVal(False)
        if isinstance(collection, PathList):
            return zt.Or([zt.And(k < collection.length, x == y) for k, y in enumerate(collection.items)])
        if isinstance(collection, IndexSetV):
            return collection.contains(x)
        raise EncodingError("unsupported membership test")

    def visit_range(self, e: n.Range, ctx: None = None) -> Value:
        return RangeV(self.arith(e.lo), self.arith(e.hi))

    def visit_binary(self, e: n.Binary, ctx: None = None) -> Value:
        a, b = self.arith(e.left), self.arith(e.right)
        if self.reads is not None and e.op in ("/", "//", "%"):
            # the interpreter stops on a zero divisor (`division-by-zero`): the alignment has no value there
            self.reads.append((z3.Implies(self.guard, b != 0), f"divides by zero in `{unparse(e)}`"))
        if e.op in RING_OPERATIONS:
            return RING_OPERATIONS[e.op](a, b)
        if e.op in INTEGER_OPERATIONS:
            return floor_quotient(a, b) if e.op == "//" else a - b * floor_quotient(a, b)
        if e.op == "/":
            return _real(a) / _real(b)
        exponent = _concrete(b)
        if exponent is not None and 0 <= exponent <= 8:
            result = zt.RealVal(1) if not z3.is_int(a) else zt.IntVal(1)
            for _ in range(exponent):
                result = result * a
            return result
        return _real(a) ** _real(b)

    def visit_unary(self, e: n.Unary, ctx: None = None) -> Value:
        v = self.value(e.operand)
        return z3.Not(v) if e.op == "not" else -_term(v)

    def visit_compare(self, e: n.Compare, ctx: None = None) -> Value:
        values = [self.value(x) for x in e.operands]
        parts = []
        for op, a, b in zip(e.ops, values, values[1:]):
            if z3.is_arith(a) and z3.is_arith(b):
                note_ties(self.enc, _real(a) - _real(b), e)
            if op == "==":
                parts.append(equal(a, b))
            elif op == "!=":
                parts.append(z3.Not(equal(a, b)))
            else:
                parts.append(ORDERS[op](_term(a), _term(b)))
        return zt.And(parts) if len(parts) > 1 else parts[0]

    def visit_bool_op(self, e: n.BoolOp, ctx: None = None) -> Value:
        a = self.value(e.left)
        b = self.guarded(a if e.op == "and" else z3.Not(a), e.right)
        return zt.And(a, b) if e.op == "and" else zt.Or(a, b)

    def visit_member(self, e: n.Member, ctx: None = None) -> Value:
        inside = self.member(self.value(e.collection), self.arith(e.element))
        return z3.Not(inside) if e.negated else inside

    def visit_tag_test(self, e: n.TagTest, ctx: None = None) -> Value:
        v = self.value(e.value)
        if not isinstance(v, TagV):
            raise EncodingError("tag test on a value that is not tagged")
        return v.code == tag_code(e.tag)

    def visit_conditional(self, e: n.Conditional, ctx: None = None) -> Value:
        c = self.value(e.condition)
        return merge(c, self.guarded(c, e.then), self.guarded(z3.Not(c), e.orelse))

    def visit_member_ref(self, e: n.MemberRef, ctx: None = None) -> Value:
        if e.id not in self.env and self.noise is not None:
            v = self.noise(e.id, self.arith(e.index), e)
            if v is not None:
                return v
        return self.element(self.named(n.NoiseRef(e.id, e.id_span)), e.index)

    def visit_index(self, e: n.Index, ctx: None = None) -> Value:
        return self.element(self.value(e.base), e.index)

    def element(self, b: Value, index_node: n.Expr) -> Value:
        """b[index_node] for a tuple, the output, a list or a loop's list."""
        if isinstance(b, TupV):
            assert isinstance(index_node, n.Number), "resolution guarantees an integer literal"
            return b.items[int(index_node.value)]
        if isinstance(b, OutputSeq) and self.reads is not None:
            index = self.arith(index_node)
            inside = zt.And(index >= 0, index < b.length)
            self.reads.append((z3.Implies(self.guard, inside), "reads `out` past its end"))
            return b.select(index)
        if isinstance(b, (OutputSeq, IterOutput)):
            return b.select(self.arith(index_node))
        if isinstance(b, ListV):
            return select(b.items, self.arith(index_node), self.enc)
        if isinstance(b, PathList):
            # a read past the run's length is the interpreter's index error: an unconstrained value there
            index = self.arith(index_node)
            value = select(b.items, index, self.enc)
            past = _unconstrained(value, self.enc)
            if past is None:
                raise EncodingError(b.why("a read of it may be past its end on some paths"))
            return merge(z3.simplify(zt.And(index >= 0, index < b.length)), value, past)
        if isinstance(b, LoopList):
            return b.at(self.arith(index_node))
        if isinstance(b, RecordList):
            index = self.arith(index_node)
            if self.reading is None or self.reading[0] is not b or not index.eq(self.reading[1]):
                raise EncodingError("a list with a private length is read only by sum and count over all its "
                                    "records, at the comprehension's index")
            return b.at
        if isinstance(b, ArrayV):
            return z3.Select(b.array, self.arith(index_node))
        if isinstance(b, RankV):
            return b.at(self.arith(index_node))
        if isinstance(b, TailOutput):
            return b.select(self.arith(index_node))
        raise EncodingError(f"cannot index a {type(b).__name__}")

    def visit_tuple_lit(self, e: n.TupleLit, ctx: None = None) -> Value:
        return TupV(tuple(self.value(i) for i in e.items))

    def visit_list_lit(self, e: n.ListLit, ctx: None = None) -> Value:
        return ListV(tuple(self.value(i) for i in e.items))




_NAMES = (n.ParamRef, n.VarRef, n.LetRef, n.LocalRef)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_0-9]*'?")


def _fold_shape(e: n.Comprehension) -> tuple[str, tuple] | None:
    """For a sum or count whose value is a function of the names it reads alone (no noise, no `out`, no builtin
    but `len` and `abs`, no other comprehension, no division, which `ExprEval.reads` would record): its text with
    those names numbered in the order they appear (`count(l in 0 .. len(#0): #0[l] == #1)` for the body's count
    over q and the alignment's over q'), and the references in that order; None for any other comprehension."""
    if e.func not in ("sum", "count") or not all(
            not isinstance(x, (n.NoiseRef, n.MemberRef, n.OutRef, n.AlignedCostRef)) and
            not (isinstance(x, n.Call) and x.func not in ("len", "abs")) and
            not (isinstance(x, n.Comprehension) and x is not e) and
            not (isinstance(x, n.Binary) and x.op in ("/", "//", "%"))
            for x in walk(e)):
        return None
    refs: dict[str, n.Expr] = {}
    for x in walk(e):
        if isinstance(x, _NAMES) and x.id != e.var:
            refs.setdefault(x.text, x)
    text = unparse(e)
    order: dict[str, int] = {}
    for m in _IDENTIFIER.finditer(text):
        if m.group() in refs and m.group() not in order:
            order[m.group()] = len(order)
    if len(order) != len(refs):
        return None
    canonical = _IDENTIFIER.sub(lambda m: f"#{order[m.group()]}" if m.group() in order else m.group(), text)
    return canonical, tuple(refs[name] for name in order)


def _unconstrained(value: Value, enc: Encoding) -> Value | None:
    """A value of `value`'s shape that no fact constrains (fresh symbols: a number, a truth value, a tuple or a tag
    of them), for a read the interpreter stops at; None for any other shape."""
    if isinstance(value, z3.BoolRef):
        enc.counter += 1
        return zt.Bool(f"{enc.prefix}%out_of_range{enc.counter}")
    if isinstance(value, z3.ArithRef):
        return enc.fresh("out_of_range", "int" if z3.is_int(value) else "real")
    if isinstance(value, TupV):
        items = [_unconstrained(x, enc) for x in value.items]
        return None if any(x is None for x in items) else TupV(tuple(items))
    if isinstance(value, TagV):
        payload = []
        for tag, fields in value.payload:
            made = [_unconstrained(x, enc) for x in fields]
            if any(x is None for x in made):
                return None
            payload.append((tag, tuple(made)))
        return TagV(enc.fresh("out_of_range", "int"), tuple(payload))
    return None


_OUT = "out"
"""`Run.filled`'s key for the output's length: `out` is a reserved name, never a list the program writes."""


def _agreed(lengths: list[dict[str, int | None]]) -> dict[str, int | None]:
    """The lists' lengths where paths with each of `lengths` are active: a number where they agree, else None."""
    names = set().union(*lengths)
    return {name: lengths[0].get(name) if all(f.get(name) == lengths[0].get(name) for f in lengths) else None
            for name in names}


def _concrete(x: z3.ExprRef) -> int | None:
    x = z3.simplify(x)
    if z3.is_int_value(x):
        return x.as_long()
    if z3.is_rational_value(x) and x.denominator_as_long() == 1:
        return x.numerator_as_long()
    return None


def select(items: tuple, index: z3.ArithRef, enc: Encoding | None = None) -> Value:
    """items[index] for a symbolic index: an If-chain. A read out of range (which the interpreter reports as an
    error) gives an unconstrained value, so nothing can be proved from it; such reads occur in branches that
    are not taken, as in `l == 0 ? T : q[l - 1]`."""
    if not items:
        raise EncodingError("indexing an empty list")
    concrete = _concrete(index)
    if concrete is not None:
        if not 0 <= concrete < len(items):
            if enc is None or not z3.is_expr(items[0]):
                raise EncodingError(f"index {concrete} is out of range for a list of length {len(items)}")
            return enc.fresh("out_of_range", "int" if z3.is_int(items[0]) else "real")
        return items[concrete]
    result = items[-1]
    for k in range(len(items) - 2, -1, -1):
        result = merge(index == k, items[k], result)
    return result


def _fold(func: str, results: list[tuple[z3.BoolRef, z3.ArithRef, Value]], enc: Encoding | None = None) -> Value:
    """max/min/argmax/argmin/sum/count/all/any over guarded candidates; ties go to the earliest candidate."""
    if enc is not None and enc.relational and func in _EXTREMA and len(results) > 2 and \
            all(isinstance(v, z3.ArithRef) for _, _, v in results):
        return _extremum(func, results, enc)
    if func == "sum":
        return zt.Sum([z3.If(g, v, 0) for g, _, v in results]) if results else zt.IntVal(0)
    if func == "count":
        return zt.Sum([z3.If(zt.And(g, v), 1, 0) for g, _, v in results]) if results else zt.IntVal(0)
    if func == "all":
        return zt.And([z3.Implies(g, v) for g, _, v in results])
    if func == "any":
        return zt.Or([zt.And(g, v) for g, _, v in results]) if results else zt.BoolVal(False)
    if not results:
        raise EncodingError(f"`{func}` over an empty set")
    better = (lambda a, b: a > b) if func in ("max", "argmax") else (lambda a, b: a < b)
    found = zt.BoolVal(False)
    best_v: Value = results[0][2]
    best_i: z3.ArithRef = results[0][1]
    for g, i, v in results:
        take = zt.And(g, zt.Or(z3.Not(found), better(v, best_v)))
        best_v = z3.If(take, v, best_v)
        best_i = z3.If(take, i, best_i)
        found = zt.Or(found, g)
    return best_v if func in ("max", "min") else best_i


_EXTREMA = ("max", "min", "argmax", "argmin")


def _extremum(func: str, results: list[tuple[z3.BoolRef, z3.ArithRef, Value]], enc: Encoding) -> z3.ArithRef:
    """`_fold`'s max/min/argmax/argmin as a fresh symbol m (and i for the arg), stated in `enc.side` with the facts
    that make them exactly the values `_fold` computes, whatever the other symbols are: each candidate that passes
    its guard is at most m (at least, for min) and one is m, and i is the index of the first such; when none
    passes, m and i are the first candidate's. Given the other symbols, one value of m and i satisfies the facts, so
    a query is satisfiable with them exactly when it is with `_fold`'s terms."""
    values = [_real(v) if any(not z3.is_int(w) for _, _, w in results) else v for _, _, v in results]
    m = enc.fresh(func, "int" if all(z3.is_int(v) for v in values) else "real")
    largest = func in ("max", "argmax")
    guards = [g for g, _, _ in results]
    none = z3.Not(zt.Or(guards))
    facts = [z3.Implies(g, v <= m if largest else v >= m) for g, v in zip(guards, values)]
    facts.append(zt.Or([zt.And(g, m == v) for g, v in zip(guards, values)] + [zt.And(none, m == values[0])]))
    enc.side.append(zt.And(facts))
    if func in ("max", "min"):
        return m
    i = enc.fresh(f"{func}_index", "int")
    first = [zt.And(g, m == v, i == index, *[z3.Implies(h, w < m if largest else w > m)
                                            for h, w in zip(guards[:k], values[:k])])
             for k, (g, v, (_, index, _)) in enumerate(zip(guards, values, results))]
    enc.side.append(zt.Or([*first, zt.And(none, i == results[0][1])]))
    return i


def _ranked(values: tuple, count: int, enc: Encoding | None = None,
            guards: list[z3.BoolRef] | None = None) -> list[tuple[z3.ArithRef, Value]]:
    """The `count` largest entries as (index, value), descending; ties go to the lower index (a total order,
    so the result is a function of the values, with no measure-zero assumption). With `guards`, only the entries
    whose guard holds take part (a `PathList`'s, `_entries`: at least `count` of them on every path)."""
    every = guards is None or all(z3.is_true(g) for g in guards)
    if enc is not None and enc.relational and every and 0 < count <= len(values) and len(values) > 2 and \
            all(isinstance(v, z3.ArithRef) for v in values):
        return _ranked_symbols(values, count, enc)
    chosen: list[z3.ArithRef] = []
    out = []
    for _ in range(count):
        found = zt.BoolVal(False)
        best_i: z3.ArithRef = zt.IntVal(0)
        best_v: Value = values[0]
        for j, v in enumerate(values):
            free = zt.And([c != j for c in chosen] + ([] if guards is None else [guards[j]]))
            take = zt.And(free, zt.Or(z3.Not(found), v > best_v))
            best_v = z3.If(take, v, best_v)
            best_i = z3.If(take, zt.IntVal(j), best_i)
            found = zt.Or(found, free)
        chosen.append(best_i)
        out.append((best_i, best_v))
    return out


def _b_len(ev: ExprEval, e: n.Call) -> Value:
    v = ev.value(e.args[0])
    if isinstance(v, OutputSeq):
        return v.length
    if isinstance(v, (ListV, PathList)):
        return list_length(v)
    if isinstance(v, (LoopList, ArrayV, RankV, TailOutput, RecordList)):
        return v.length
    raise EncodingError("len of a non-list")


def _b_min_max(ev: ExprEval, e: n.Call) -> Value:
    if len(e.args) == 1:
        items, guards = _entries(ev.value(e.args[0]), 1, f"`{e.func}`")
    else:
        items = tuple(ev.value(a) for a in e.args)
        guards = [zt.BoolVal(True)] * len(items)
    results = [(g, zt.IntVal(k), v) for k, (g, v) in enumerate(zip(guards, items))]
    return _fold(e.func, results, ev.enc)


def _b_argmax(ev: ExprEval, e: n.Call) -> Value:
    items, guards = _entries(ev.value(e.args[0]), 1, f"`{e.func}`")
    _assume_no_ties(ev, items, e)
    return _fold(e.func, [(g, zt.IntVal(k), v) for k, (g, v) in enumerate(zip(guards, items))], ev.enc)


def _b_abs(ev: ExprEval, e: n.Call) -> Value:
    return _abs(ev.arith(e.args[0]))


def _b_sqrt(ev: ExprEval, e: n.Call) -> Value:
    x = _real(ev.arith(e.args[0]))
    concrete = z3.simplify(x)
    s = ev.enc.fresh("sqrt")
    # Only where the root exists: a sqrt of a negative number in a branch that is not taken (or on a path
    # that C0 or the interpreter rejects) must not make every assumption false, which would prove anything.
    side = z3.Implies(concrete >= 0, zt.And(s >= 0, s * s == concrete))
    ev.enc.side.append(side)
    ev.enc.roots.append((s, concrete, side))
    return s


def _b_floor(ev: ExprEval, e: n.Call) -> Value:
    """z3's to_int is the floor of a real; an int is its own floor. floor(q + eta) is no sum c·eta + a: an exact tie
    of it (`floor(q + eta) == 3`, probability > 0) is never excluded (`_linear_in`; specs/incorrect/
    tie_hidden_by_floor.dp)."""
    x = ev.arith(e.args[0])
    return x if z3.is_int(x) else z3.ToInt(x)


def _b_ceil(ev: ExprEval, e: n.Call) -> Value:
    x = ev.arith(e.args[0])
    return x if z3.is_int(x) else -z3.ToInt(-x)


def _b_round(ev: ExprEval, e: n.Call) -> Value:
    """The integer nearest x, a tie to the even one (Python's round, numpy's rint): with f = floor(x), f below
    f + 1/2, f + 1 above it, and at x = f + 1/2 whichever of the two is even."""
    x = ev.arith(e.args[0])
    if z3.is_int(x):
        return x
    f = z3.ToInt(x)
    twice = 2 * (x - z3.ToReal(f))
    return z3.If(twice < 1, f, z3.If(twice > 1, f + 1, z3.If(f % 2 == 0, f, f + 1)))


def _b_clamp(ev: ExprEval, e: n.Call) -> Value:
    """min(max(x, lo), hi) where lo <= hi (an If per case, as max and min: the tie exclusion reads them case by
    case). Where lo > hi the interpreter stops with `math-domain`: the value is a symbol free of any condition, as a
    square root of a negative number is (a proof then holds whatever it is), the alignment's reads ask lo <= hi
    where it is evaluated, and C0 asks it of noise parameters (`Encoding.undefined`)."""
    x, lo, hi = (ev.arith(a) for a in e.args)
    integer = z3.is_int(x) and z3.is_int(lo) and z3.is_int(hi)
    if not integer:
        x, lo, hi = _real(x), _real(lo), _real(hi)
    clamped = z3.If(x < lo, lo, z3.If(x > hi, hi, x))
    if z3.is_true(z3.simplify(lo <= hi)):
        # bounds in order whatever the inputs (numbers): no value outside the domain, so the same term at every
        # evaluation (a fold `count(l in 0 .. len(q): clamp(q[l], 0, 2) == b)` is then one fold, records.py)
        return clamped
    if ev.reads is not None:
        ev.reads.append((z3.Implies(ev.guard, lo <= hi),
                         f"calls `{unparse(e)}` with its lower end above its upper end"))
    outside = ev.enc.fresh("clamp", "int" if integer else "real")
    ev.enc.undefined.append((outside, "clamp between {} and {}, a lower end above the upper end", (lo, hi)))
    return z3.If(lo <= hi, clamped, outside)


def _b_function(name: str) -> Callable[[ExprEval, n.Call], Value]:
    def apply(ev: ExprEval, e: n.Call) -> Value:
        return ev.enc.function(name)(_real(ev.arith(e.args[0])))
    return apply


def _monotone(x: z3.ArithRef, fx: z3.ArithRef, y: z3.ArithRef, fy: z3.ArithRef) -> z3.BoolRef:
    return zt.And(z3.Implies(x < y, fx < fy), z3.Implies(y < x, fy < fx))


def _monotone_positive(x: z3.ArithRef, fx: z3.ArithRef, y: z3.ArithRef, fy: z3.ArithRef) -> z3.BoolRef:
    return z3.Implies(zt.And(x > 0, y > 0), _monotone(x, fx, y, fy))


FUNCTION_FACTS: dict[str, tuple[Callable[..., z3.BoolRef] | None, Callable[..., z3.BoolRef] | None]] = {
    # exp: positive, above its tangent at 0, 1 exactly at 0, increasing.
    "exp": (lambda x, fx: zt.And(fx > 0, fx >= 1 + x, z3.Implies(x < 0, fx < 1), z3.Implies(x > 0, fx > 1),
                                 z3.Implies(x == 0, fx == 1)), _monotone),
    # ln on (0, ∞): below its tangent at 1, 0 exactly at 1, increasing (no fact outside its domain).
    "ln": (lambda x, fx: z3.Implies(x > 0, zt.And(fx <= x - 1, z3.Implies(x < 1, fx < 0), z3.Implies(x > 1, fx > 0),
                                                  z3.Implies(x == 1, fx == 0))), _monotone_positive),
    "normal_cdf": (lambda x, fx: zt.And(fx > 0, fx < 1, z3.Implies(x == 0, fx * 2 == 1)), _monotone),
    "normal_pdf": (lambda x, fx: zt.And(fx > 0, fx * 5 < 2), None),  # at most 1/sqrt(2π) ≈ 0.399
}


def subterms(term: z3.ExprRef) -> Iterator[z3.ExprRef]:
    """Every distinct subterm of `term` (a quantifier's body included), each once."""
    todo = [term]
    seen: set[int] = set()
    while todo:
        t = todo.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        yield t
        todo.extend(t.children())


def _symbols(term: z3.ExprRef) -> set[str]:
    """The names of the symbols (uninterpreted constants) in `term`."""
    return {t.decl().name() for t in subterms(term) if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED}


def _known_symbols(term: z3.ExprRef, memo: TieMemo) -> frozenset[str]:
    """`_symbols(term)`, each subterm's worked out once in `memo` (a term's symbols are its children's)."""
    known = memo.symbols.get(term.get_id())
    if known is not None:
        return known[1]
    # children first, without recursion (an unrolled program nests deeply)
    todo = [term]
    while todo:
        t = todo[-1]
        if t.get_id() in memo.symbols:
            todo.pop()
            continue
        children = t.children()
        missing = [c for c in children if c.get_id() not in memo.symbols]
        if missing:
            todo.extend(missing)
            continue
        todo.pop()
        if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            names = frozenset({t.decl().name()})
        else:
            names = frozenset().union(*(memo.symbols[c.get_id()][1] for c in children))
        memo.symbols[t.get_id()] = (t, names)
    return memo.symbols[term.get_id()][1]


def _continuous_symbols(term: z3.ExprRef, enc: Encoding) -> set[str]:
    return set(_known_symbols(term, enc.tie_memo) & enc.continuous)


def _linear_in(term: z3.ExprRef, name: str, enc: Encoding) -> bool:
    """Whether term = a + c·x for the symbol x named `name`, with c a nonzero number and a free of x (after
    z3's simplification, which cancels `0*x` and `x - x`)."""
    def is_x(t: z3.ExprRef) -> bool:
        if z3.is_app_of(t, z3.Z3_OP_TO_REAL):
            t = t.children()[0]
        return z3.is_const(t) and t.decl().name() == name

    def scaled_x(t: z3.ExprRef) -> bool:
        if is_x(t):
            return True
        if z3.is_app_of(t, z3.Z3_OP_MUL) and t.num_args() == 2:
            c, x = t.children()
            if is_x(c):
                c, x = x, c
            value = z3.simplify(c)
            number = z3.is_rational_value(value) or z3.is_int_value(value)
            return is_x(x) and number and \
                (value.as_fraction() if z3.is_rational_value(value) else value.as_long()) != 0
        return False

    term = z3.simplify(term)
    parts = term.children() if z3.is_app_of(term, z3.Z3_OP_ADD) else [term]
    with_x = [s for s in parts if name in _continuous_symbols(s, enc)]
    return len(with_x) == 1 and scaled_x(with_x[0])


_MAX_TIE_CASES = 256
"""How many cases (`_cases`) of one difference the tie exclusion looks at; beyond, it excludes nothing there."""


def _cases(term: z3.ExprRef, budget: list[int], memo: TieMemo) -> list[z3.ExprRef] | None:
    """The terms without `If` that `term` equals, one for each way its conditions go (`If(c, x, y) - b` is x - b or
    y - b); None past `_MAX_TIE_CASES` of them. Every value of `term` is a value of one of them.

    `budget` is spent on the combinations formed, None once it is overdrawn. The cases of a subterm met before are
    taken from `memo` and the budget they took is spent again: the answer is the one computing them again gives
    (the budget only goes down, so a computation that ends overdrawn passes below 0 on the way)."""
    known = memo.cases.get(term.get_id())
    if known is not None:
        budget[0] -= known[2]
        return None if budget[0] < 0 else known[1]
    before = budget[0]
    cases = _cases_of(term, budget, memo)
    if cases is not None:
        memo.cases[term.get_id()] = (term, cases, before - budget[0])
    return cases


def _cases_of(term: z3.ExprRef, budget: list[int], memo: TieMemo) -> list[z3.ExprRef] | None:
    if z3.is_app_of(term, z3.Z3_OP_ITE):
        _condition, then, orelse = term.children()
        first, second = _cases(then, budget, memo), _cases(orelse, budget, memo)
        if first is None or second is None:
            return None
        return list({t.get_id(): t for t in (*first, *second)}.values())
    if not z3.is_app(term) or term.num_args() == 0 or not z3.is_arith(term) or \
            term.decl().kind() == z3.Z3_OP_UNINTERPRETED:
        return [term]
    options = [_cases(c, budget, memo) if z3.is_arith(c) else [c] for c in term.children()]
    if any(o is None for o in options):
        return None
    combined: list[list[z3.ExprRef]] = [[]]
    for option in options:
        assert option is not None
        combined = [[*prefix, c] for prefix in combined for c in option]
        budget[0] -= len(combined)
        if budget[0] < 0 or len(combined) > _MAX_TIE_CASES:
            return None
    if len(combined) == 1:
        return [term]
    return list({t.get_id(): t for t in (z3.simplify(term.decl()(*args)) for args in combined)}.values())


OUTPUT_TIES = ("exact ties between released values are excluded: a released value whose noise has a density "
               "equals another value with probability 0 (Theorem 10.1)")


def note_equality_ties(enc: Encoding, a: Value, b: Value, text: str) -> None:
    """`note_ties` for each pair of numbers that `equal(a, b)` compares."""
    if isinstance(a, TagV) and isinstance(b, TagV):
        for tag, fa in a.payload:
            for x, y in zip(fa, b.fields(tag)):
                note_equality_ties(enc, x, y, text)
    elif isinstance(a, (TupV, ListV, PathList)) and isinstance(b, (TupV, ListV, PathList)):
        for x, y in zip(a.items, b.items):
            note_equality_ties(enc, x, y, text)
    elif z3.is_expr(a) and z3.is_expr(b) and z3.is_arith(a) and z3.is_arith(b):
        _note_difference(enc, _real(a) - _real(b), text)


def note_ties(enc: Encoding, difference: z3.ArithRef, e: n.Compare) -> None:
    """Almost-sure semantics (Theorem 10.1: Lemma 1's conditions need to hold for almost every noise vector):
    the difference of two compared values is 0 with probability 0 in each case of its conditions (`_cases`) that
    is c·η + a, with η noise that has a density, c a nonzero number and a free of η — conditioned on the rest,
    a tie fixes η to one point. Each such case's `!= 0` is a `Tie` (assumed only when a query needs it). Never for
    noise without a density (Point, Geo, integer-valued noise), never when η's coefficient is not a nonzero
    number (`x*eta` with x possibly 0), and never for a value that is not linear in η (specs/incorrect/
    tie_*.dp; floor, ceil and round are z3's to_int of η, constant on intervals: `floor(eta) == 0` has probability
    about 1/3, tie_hidden_by_floor.dp and tie_hidden_by_round.dp). The aligned run's values are functions of H
    through the shifts; their cases are terms in H too, so the same test applies to them directly; but a
    difference of values of two runs with independent noise is never excluded (see `_note_difference`)."""
    _note_difference(enc, difference, f"exact ties of `{unparse(e)}` (line {e.span.line}) are excluded: the noise "
                                      "in them has a density, so a tie has probability 0 (Theorem 10.1)")


def _plain_symbol(enc: Encoding, name: str) -> bool:
    """A parameter's value, or noise that is not a function of other noise: noise with a density, or noise
    without one whose parameters read no noise."""
    site_name = enc.noise_sites.get(name)
    if site_name is None:
        return name.removeprefix(enc.prefix).split("[")[0].rstrip("'") in {p.name for p in enc.mech.params}
    site = enc.mech.site(site_name)
    return site is not None and (site.distribution.continuous or
                                 not any(enc.mech.reads_noise(arg) for arg in site.args))


def _note_difference(enc: Encoding, difference: z3.ArithRef, text: str) -> None:
    # A difference noted before has no tie to add (`text` only describes the first tie of each formula, below).
    key = (difference.get_id(), len(enc.earlier))
    if key in enc.tie_memo.noted:
        return
    enc.tie_memo.noted[key] = difference
    enc.pending_ties.append((difference, text, *enc.frozen_state()))


def _work_out_ties(enc: Encoding, difference: z3.ArithRef, text: str, earlier: frozenset[str],
                   members: frozenset[str]) -> None:
    """The ties of one noted difference, with `earlier` and `current_members` as they were when it was noted."""
    cases = _cases(z3.simplify(difference), [4 * _MAX_TIE_CASES], enc.tie_memo)
    if cases is None:
        return
    for case in cases:
        case = z3.simplify(case)
        # A tie is excluded within one noise vector: two runs with independent noise (C2's self-composition, C4b's
        # second run) are compared where their outputs agree, an event of probability 0 itself when the outputs
        # are continuous; only sets N × anything or anything × N of probability 0 may be left out of it
        # (specs/incorrect/tie_across_independent_runs.dp).
        symbols = _known_symbols(case, enc.tie_memo)
        if len({enc.noise_runs[s] for s in symbols if s in enc.noise_runs}) > 1:
            continue
        # "a free of η" must hold of what the symbols stand for, not only of their names: an auxiliary symbol
        # (`%sqrt3`, tied to its argument by a side condition; a summary; an out-of-range read) or a noise
        # without a density whose parameters read noise (`z ~ Point(max(eta, 0))`) may be a function of η
        # (specs/incorrect/tie_hidden_by_sqrt.dp, tie_hidden_by_point.dp).
        # A symbol of `enc.earlier` is free of η when η is drawn in the abstract iteration, after it.
        for eta in sorted(_continuous_symbols(case, enc)):
            if all(_plain_symbol(enc, name) or (eta in members and name in earlier)
                   for name in symbols) and _linear_in(case, eta, enc):
                formula = case != 0
                enc.noted_ties.setdefault(formula.sexpr(), Tie(formula, text))
                break


def _generic(values: tuple, enc: Encoding) -> bool:
    """Ties among the values have probability 0: each value is a + c·η with a number c != 0 and a noise
    variable η of its own, drawn from a distribution with a density, that occurs in no other value and not in
    a. Conditioned on everything else, a tie then fixes η to one point. Syntax is not enough: `0 * z` and
    `x - x` carry a noise symbol but are constants."""
    own = [_continuous_symbols(v, enc) for v in values]
    for k, symbols in enumerate(own):
        others = set().union(*(own[j] for j in range(len(own)) if j != k))
        if not any(_linear_in(values[k], name, enc) for name in sorted(symbols - others)):
            return False
    return True


def _assume_no_ties(ev: ExprEval, values: tuple, e: n.Expr) -> None:
    """Lemma 1's proof ignores sets of noise of probability 0 (Theorem 10.1): when the ranked values are
    generic (`_generic`), ties among them have probability 0 and are excluded.

    The aligned run ranks the values of D' at φ(H), which carry shifts; they are generic exactly when the
    first run's values at the same place are (the values on D' at H' are the same functions of H' as those
    on D of H, and the acyclic shift alignment φ maps sets of probability 0 to sets of probability 0, its
    Jacobian being 1). So the first run decides, and the aligned run (`Run.twin`) follows its decision."""
    enc = ev.enc
    if len(values) < 2 or not all(z3.is_expr(v) for v in values):
        return
    run = ev.run
    if run is None:
        generic = _generic(values, enc)
    else:
        key = (id(e), run.rankings.get(id(e), 0))
        run.rankings[id(e)] = key[1] + 1
        if run.twin is not None:
            generic = run.twin.tie_decisions.get(key, False)
        else:
            generic = _generic(values, enc)
            run.tie_decisions[key] = generic
    if not generic:
        return
    enc.side.append(z3.Distinct(*[_real(v) for v in values]))
    enc.assumptions.add(f"no ties among the noisy values ranked at line {e.span.line} (continuous noise: "
                        "probability 0, Theorem 10.1)")


def _ranked_symbols(values: tuple, count: int, enc: Encoding) -> list[tuple[z3.ArithRef, Value]]:
    """`_ranked` as fresh symbols, the index j_t and the value w_t of the t-th entry, stated in `enc.side` with
    facts that make them its result whatever the other symbols are (`Encoding.relational`): w_t is entry j_t, the
    j_t are distinct, each comes before the next in the strict total order `_ranked` follows (larger value first,
    then lower index), and the last comes before every entry not chosen. By transitivity every entry not chosen
    then comes after every chosen one, so the chosen are the `count` first entries of that order, in order: the
    one solution."""
    real = any(not z3.is_int(v) for v in values)
    items = [_real(v) if real else v for v in values]
    chosen = [(enc.fresh("rank_index", "int"), enc.fresh("rank", "real" if real else "int")) for _ in range(count)]

    def before(i: z3.ArithRef, w: z3.ArithRef, j: z3.ArithRef | int, v: z3.ArithRef) -> z3.BoolRef:
        return zt.Or(w > v, zt.And(w == v, i < j))

    facts = [zt.Or([zt.And(i == k, w == v) for k, v in enumerate(items)]) for i, w in chosen]
    facts += [chosen[t][0] != chosen[u][0] for t in range(count) for u in range(t + 1, count)]
    facts += [before(*chosen[t], *chosen[t + 1]) for t in range(count - 1)]
    last = chosen[-1]
    facts += [z3.Implies(zt.And([i != k for i, _ in chosen]), before(*last, k, v)) for k, v in enumerate(items)]
    enc.side.append(zt.And(facts))
    return [(i, w) for i, w in chosen]


def _b_top_k_with_gaps(ev: ExprEval, e: n.Call) -> Value:
    listed = ev.value(e.args[0])
    k = _concrete(ev.arith(e.args[1]))
    if k is None:
        raise EncodingError("top_k_with_gaps needs a concrete k at a fixed length")
    values, guards = _entries(listed, k + 1, "top_k_with_gaps")
    _assume_no_ties(ev, values, e)
    if not 0 <= k < len(values):
        raise EncodingError(f"top_k_with_gaps needs more than k = {k} values, got {len(values)}")
    ranked = _ranked(values, k + 1, ev.enc, guards)
    return ListV(tuple(TupV((ranked[r][0], _term(ranked[r][1]) - ranked[r + 1][1])) for r in range(k)))


def _b_top_k(ev: ExprEval, e: n.Call) -> Value:
    listed = ev.value(e.args[0])
    k = _concrete(ev.arith(e.args[1]))
    if k is None:
        raise EncodingError("top_k needs a concrete k no larger than the list")
    values, guards = _entries(listed, k, "top_k")
    _assume_no_ties(ev, values, e)
    if not 0 <= k <= len(values):
        raise EncodingError("top_k needs a concrete k no larger than the list")
    return ListV(tuple(i for i, _ in _ranked(values, k, ev.enc, guards)))


def _b_indices(ev: ExprEval, e: n.Call) -> Value:
    v = ev.value(e.args[0])
    if isinstance(v, OutputSeq):
        return SetV(tuple((zt.And(k < v.length), slot.items[0]) for k, slot in enumerate(v.slots)))
    if isinstance(v, ListV):
        return SetV(tuple((zt.BoolVal(True), item.items[0]) for item in v.items))
    raise EncodingError("indices of an unsupported value")


def _b_count(ev: ExprEval, e: n.Call) -> Value:
    v = ev.value(e.args[0])
    tag = e.args[1]
    assert isinstance(tag, n.TagLit), "resolution guarantees a tag"
    code = tag_code(tag.tag)
    if isinstance(v, OutputSeq):
        return zt.Sum([z3.If(zt.And(k < v.length, slot.code == code), 1, 0) for k, slot in enumerate(v.slots)]) \
            if v.slots else zt.IntVal(0)
    items, guards = _entries(v, 0, "count")
    return zt.Sum([z3.If(zt.And(g, item.code == code), 1, 0) for g, item in zip(guards, items)]) \
        if items else zt.IntVal(0)


def _b_payload(ev: ExprEval, e: n.Call) -> Value:
    tag = e.args[1]
    assert isinstance(tag, n.TagLit), "resolution guarantees a tag"
    v = ev.value(e.args[0])
    assert isinstance(v, TagV), "resolution guarantees a tagged value"
    default = ev.value(e.args[2])
    fields = v.fields(tag.tag)
    if not fields:
        return default
    carried = fields[0] if len(fields) == 1 else TupV(tuple(fields))
    return merge(v.code == tag_code(tag.tag), carried, default)


_BUILTINS: Mapping[str, Callable[[ExprEval, n.Call], Value]] = implemented("z3 encoder", {
    "len": _b_len, "min": _b_min_max, "max": _b_min_max, "argmax": _b_argmax, "argmin": _b_argmax,
    "abs": _b_abs, "sqrt": _b_sqrt, "exp": _b_function("exp"), "ln": _b_function("ln"),
    "normal_cdf": _b_function("normal_cdf"), "normal_pdf": _b_function("normal_pdf"), "floor": _b_floor,
    "ceil": _b_ceil, "round": _b_round, "clamp": _b_clamp,
    "top_k_with_gaps": _b_top_k_with_gaps, "top_k": _b_top_k, "indices": _b_indices, "count": _b_count,
    "payload": _b_payload,
})


# -------------------------------------------------------------------------------------------- output


@dataclass(frozen=True)
class OutputSeq:
    """The output sequence of a run: slot k holds the k-th output when k < length."""

    slots: tuple
    length: z3.ArithRef
    past: Value | None = None
    """The value read past the last slot, where no output can be (a run's: the output type's default, as in a slot
    past `length`); None: such a read has no encoding. The alignment's reads there are C4a's (`defined`)."""

    def select(self, index: z3.ArithRef) -> Value:
        if self.past is None:
            return select(self.slots, index)
        position = _concrete(index)
        if position is not None and position >= len(self.slots):
            return self.past
        return select((*self.slots, self.past), index)

    def equal(self, other: OutputSeq, enc: Encoding | None = None) -> z3.BoolRef:
        """The two sequences are equal; with `enc`, the exact ties of their numbers are noted (`note_ties`)."""
        parts = [self.length == other.length]
        for k, (a, b) in enumerate(zip(self.slots, other.slots)):
            if enc is not None:
                note_equality_ties(enc, a, b, OUTPUT_TIES)
            parts.append(z3.Implies(k < self.length, equal(a, b)))
        return zt.And(parts)


# ---------------------------------------------------------------------------------------------- runs


@dataclass
class Draw:
    """One execution of a sampling statement: the noise member, whether it was drawn, and its value."""

    site: str
    index: int | None
    guard: z3.BoolRef
    value: z3.ArithRef
    """The noise value in the first run (the aligned run adds the shift)."""
    stmt: n.Sample
    args: tuple
    """The distribution's parameters as evaluated when the sample was drawn."""
    env: dict
    """The program variables when the sample was drawn (cost coefficients are read in it)."""


CURRENT = -1
"""The loop index of the noise member drawn in the abstract iteration of an inductive proof."""


class Run(StmtVisitor[None, None]):
    """One symbolic execution: on D with H (`shift` None) or on D' with φ(H) (`shift` gives ψ per draw)."""

    def __init__(self, enc: Encoding, inputs: dict[str, Value], noise_prefix: str = "",
                 shift: Callable[[str, int | None], z3.ArithRef] | None = None, twin: Run | None = None):
        self.enc = enc
        self.twin = twin
        """For an aligned run: the first run, whose rankings decide where ties are excluded."""
        self.rankings: dict[int, int] = {}
        self.tie_decisions: dict[tuple[int, int], bool] = {}
        self.unrolled = 0
        """Loop iterations unrolled so far (bounded by MAX_UNROLL)."""
        self.nesting: list[int] = []
        self.inputs = inputs
        self.noise_prefix = noise_prefix
        self.shift = shift
        self.vars: dict[str, Value] = dict(inputs)
        self.draws: list[Draw] = []
        self.current: dict[str, z3.ArithRef] = {}
        self.slots: list[Value] = []
        self.length: z3.ArithRef = zt.IntVal(0)
        self.filled: dict[str, int | None] = {
            _OUT: 0, **{name: len(v.items) for name, v in inputs.items() if isinstance(v, ListV)}}
        """The length of the output (`out`, a reserved name: `here`) and of each list the run has written on every
        path where `active` holds, when one number (an output goes to that slot, not to each slot under
        `length == k`; a write at that index appends, below it overwrites); None when paths of different lengths are
        active."""
        self.exits: dict[int, list[dict[str, int | None]]] = {}
        """For each loop `_loop` is in, by its depth in `running`: `filled` at each of its breaks (a proof for every
        length runs one iteration with `running` set up by itself, and reads the slots of that iteration only)."""
        self.running: list[z3.BoolRef] = []
        self.active: z3.BoolRef = zt.BoolVal(True)
        self.output_type = enc.mech.output_type

    # -- evaluation -----------------------------------------------------------------------------
    def evaluator(self) -> ExprEval:
        return ExprEval(self.enc, self.vars, {}, noise=self._noise_read, run=self)

    def _noise_read(self, name: str, index: Value | None, node: n.Expr) -> Value | None:
        if index is None and name in self.current:
            return self.current[name]
        return None

    def eval(self, e: n.Expr) -> Value:
        return self.evaluator().value(e)

    # -- statements ---------------------------------------------------------------------------------
    def execute(self) -> Run:
        self.block(self.enc.mech.body)
        return self

    def block(self, body: Iterable[n.Stmt]) -> None:
        for s in body:
            self.statement(s)

    @property
    def here(self) -> int | None:
        """The length of the output on every active path, when one number (`filled`)."""
        return self.filled[_OUT]

    @here.setter
    def here(self, value: int | None) -> None:
        self.filled[_OUT] = value

    def set(self, name: str, value: Value) -> None:
        if isinstance(value, (ListV, PathList)):
            length = z3.simplify(list_length(value))
            self.filled[name] = length.as_long() if z3.is_int_value(length) else None
            if name not in self.vars and not z3.is_true(z3.simplify(self.active)):
                # made on some paths only: on the others there is no list (a write at 0 would make one), which
                # `filled` keeps for the paths active now
                self.vars[name] = ListV(())
        old = self.vars.get(name)
        if old is None:
            self.vars[name] = value
        else:
            self.vars[name] = merge(self.active, value, old)

    def statement(self, s: n.Stmt) -> None:
        if z3.is_false(z3.simplify(self.active)):
            return
        s.accept(self, None)

    def visit_assign(self, s: n.Assign, ctx: None = None) -> None:
        value = self.eval(s.value)
        if s.index is None:
            self.set(s.target, value)
            return
        index = self.eval(s.index)
        old = self.vars.get(s.target, ListV(()))
        assert isinstance(old, (ListV, PathList)), "`x[i] = e` makes x a list (resolve/check.py)"
        position = _concrete(index)
        length = list_length(old)
        if position is not None:
            items = list(old.items)
            # the list's length on every active path (`filled`); a list the active paths have not written yet is
            # not defined there, and a write at 0 makes it (the interpreter's `x[0] = e` on a new name)
            known = self.filled.get(s.target, 0)
            if known is None:
                least = int_bounds(z3.simplify(length))
                if least is None or position > least[0]:
                    # past the end on some active paths: a gap there (the interpreter stops with `list-gap`),
                    # which the checker does not model
                    raise EncodingError(f"line {s.span.line} assigns {s.target}[{position}] where the list's length "
                                        "depends on the path: past its end (a gap) on some paths")
            elif position > known:
                # the interpreter stops with `list-gap`; the checker does not model runtime errors
                raise EncodingError(f"line {s.span.line} assigns {s.target}[{position}] to a list of "
                                    f"length {known} (a gap)")
            if position == len(items):
                items.append(value)  # past the length on the paths where this write does not run
            else:
                items[position] = merge(self.active, value, items[position])
            # an append where the list ends at `position`, an overwrite where it is longer
            if known is None:
                length = z3.If(zt.And(self.active, length == position), position + 1, length)
            elif position == known:
                length = z3.If(self.active, position + 1, length)
                self.filled[s.target] = position + 1
            self.vars[s.target] = list_value(tuple(items), length, s.target, s.span.line)
        elif isinstance(old, PathList):
            # at an index that is not a number, the write may append on some paths and not on others
            raise EncodingError(old.why(f"line {s.span.line} writes it at an index that is not a number"))
        else:
            # at an index that is not a number: an overwrite below the end, an append at it; past it (or below 0)
            # the interpreter stops with `list-gap`, which the checker does not model
            size = len(old.items)
            bounds = int_bounds(z3.simplify(index))
            if bounds is None or bounds[0] < 0 or bounds[1] > size:
                raise EncodingError(f"line {s.span.line} assigns {s.target} at an index that is not a number and "
                                    f"may be past the end of the list (at most {size} here)")
            items = [merge(zt.And(self.active, index == k), value, item) for k, item in enumerate(old.items[:size])]
            if bounds[1] == size:
                items.append(value)
                self.filled[s.target] = None
                self.vars[s.target] = list_value(tuple(items), z3.If(zt.And(self.active, index == size), size + 1,
                                                                      size), s.target, s.span.line)
            else:
                self.vars[s.target] = ListV(tuple(items))

    def visit_sample(self, s: n.Sample, ctx: None = None) -> None:
        self.sample(s)

    def visit_if(self, s: n.If, ctx: None = None) -> None:
        c = self.eval(s.condition)
        outer = self.active
        before = dict(self.filled)
        self.active = zt.And(outer, c)
        self.block(s.then)
        then_filled, then_ended = self.filled, z3.is_false(z3.simplify(self.active))
        self.filled = before
        self.active = zt.And(outer, z3.Not(c), *self._running_now())
        self.block(s.orelse)
        # a branch that ends in a break leaves no active path: the lengths after are the other branch's
        if z3.is_false(z3.simplify(self.active)):
            self.filled = then_filled
        elif not then_ended:
            self.filled = _agreed([then_filled, self.filled])
        self.active = zt.And(outer, *self._running_now())

    def visit_for(self, s: n.For, ctx: None = None) -> None:
        self.loop(s)

    def visit_break(self, s: n.Break, ctx: None = None) -> None:
        self.running[-1] = zt.And(self.running[-1], z3.Not(self.active))
        self.exits.get(len(self.running), []).append(dict(self.filled))
        self.active = zt.BoolVal(False)

    def visit_output(self, s: n.Output, ctx: None = None) -> None:
        value = self.eval(s.value)
        if self.here is not None:
            # every active path has output `here` values: the value goes to that slot
            new_slots = list(self.slots)
            if self.here < len(new_slots):
                new_slots[self.here] = merge(self.active, value, new_slots[self.here])
            else:
                assert self.here == len(new_slots), "a run's length never exceeds its slots"
                new_slots.append(merge(self.active, value, default_value(self.output_type)))
            self.here += 1
        else:
            new_slots = [merge(zt.And(self.active, self.length == k), value, slot) for k, slot in enumerate(self.slots)]
            new_slots.append(merge(zt.And(self.active, self.length == len(self.slots)), value,
                                   default_value(self.output_type)))
        self.slots = [z3.simplify(x) if z3.is_expr(x) else x for x in new_slots]
        self.length = z3.simplify(z3.If(self.active, self.length + 1, self.length))

    def visit_while(self, s: n.While, ctx: None = None) -> None:
        raise AssertionError("`while` is rejected by resolution")

    def _running_now(self) -> list[z3.BoolRef]:
        return [self.running[-1]] if self.running else []

    def loop(self, s: n.For) -> None:
        lo, hi = _concrete(self.eval(s.lo)), _concrete(self.eval(s.hi))
        if lo is None or hi is None:
            raise EncodingError(f"the loop at line {s.span.line} has bounds that are not fixed by the length and "
                                "the structural parameters")
        # Every iteration becomes z3 terms: bound the iterations unrolled in this run, nested loops multiplied.
        copies = max(0, hi - lo) * (self.nesting[-1] if self.nesting else 1)
        self.unrolled += copies
        if self.unrolled > MAX_UNROLL:
            raise EncodingError(f"the loop at line {s.span.line} would unroll more than {MAX_UNROLL} iterations "
                                "(align/limits.py, MAX_UNROLL)")
        self.nesting.append(max(1, copies))
        try:
            self._loop(s, lo, hi)
        finally:
            self.nesting.pop()

    def _loop(self, s: n.For, lo: int, hi: int) -> None:
        outer = self.active
        self.running.append(zt.BoolVal(True))
        self.exits[len(self.running)] = []
        saved = self.vars.get(s.var)
        for i in range(lo, hi):
            self.vars[s.var] = zt.IntVal(i)
            self.active = zt.And(outer, self.running[-1])
            self.block(s.body)
        # after the loop, the paths that broke out of it are active again, with the length they had then
        exits = self.exits.pop(len(self.running))
        self.running.pop()
        self.filled = _agreed([self.filled, *exits])
        self.active = outer
        if saved is None:
            self.vars.pop(s.var, None)
        else:
            self.vars[s.var] = saved

    def sample(self, s: n.Sample) -> None:
        site = self.enc.mech.noise_site(s.var)
        index = None
        if site.loop is not None:
            index = _concrete(self.vars[site.loop.var])
            if index is None:
                index = CURRENT  # the member of the abstract iteration of an inductive proof
        base = self.enc.noise_symbol(s.var, index, site.distribution.integer, self.noise_prefix)
        value = base if self.shift is None else base + self.shift(s.var, index)
        args = tuple(self.eval(a) for a in s.args)  # before the draw: parameters cannot read the value drawn
        self.current[s.var] = value
        self.draws.append(Draw(s.var, index, z3.simplify(self.active), base, s, args, dict(self.vars)))

    @property
    def output(self) -> OutputSeq:
        return OutputSeq(tuple(self.slots), self.length, default_value(self.output_type))


# -------------------------------------------------------------------------------------------- alignment


def floor_quotient(a: z3.ArithRef, b: z3.ArithRef) -> z3.ArithRef:
    """a // b as Python computes it, floor(a / b), on z3 integers. z3's integer division is Euclidean (the
    remainder is never negative): the floor for a positive divisor, and for a negative one the floor is
    (-a) div (-b). The divisor 0 is left unspecified, as z3 leaves it; the interpreter refuses it."""
    return z3.If(b > 0, a / b, (-a) / (-b))


class AlignmentEval:
    """The local alignment φ_{D,D',ω} of a first run: lets, shifts ψ and the claim, read over its output ω."""

    def __init__(self, enc: Encoding, run: Run):
        self.enc = enc
        self.run = run
        self.prefix = run.noise_prefix
        mech = enc.mech
        env: dict[str, Value] = dict(enc.params)
        for name in mech.constants:
            if name in run.vars:
                env[name] = run.vars[name]
        self.env = env
        self.ev = ExprEval(enc, env, enc.neighbour, noise=self._noise, out=run.output)
        self._always: list[tuple[z3.BoolRef, str]] = []
        """Reads of `out` by the lets (evaluated on every output); the claim's and each shift's are kept apart."""
        self._claim_reads: list[tuple[z3.BoolRef, str]] = []
        self.ev.reads = self._always
        self.lets: dict[str, Value] = {}
        if mech.alignment is not None:
            for let in mech.alignment.lets:
                value = self.ev.value(let.value)
                self.lets[let.name] = value
                env[let.name] = value
        self._cache: dict[tuple[str, int | None], z3.ArithRef] = {}
        self._shift_reads: dict[tuple[str, int | None], list[tuple[z3.BoolRef, str]]] = {}

    def defined(self) -> list[tuple[z3.BoolRef, str]]:
        """The conditions under which φ has a meaning on the first run's output: every `out[j]` that the
        lets, the claim and the shift of a drawn member read has 0 <= j < len(out), and every max/min they take
        is over a non-empty set. The reference interpreter stops with `index-out-of-range` or `empty-reduction`
        there; an alignment defined only by the checker's value for it is not one the user wrote."""
        self.claim()
        conditions = [(c, f"the alignment {what}") for c, what in self._always + self._claim_reads]
        for d in self.run.draws:
            self.shift(d.site, d.index)
            reads = self._shift_reads.get((d.site, d.index), [])
            member = d.site if d.index is None else f"{d.site}[{d.index}]"
            for what in dict.fromkeys(w for _, w in reads):
                conditions.append((z3.Implies(d.guard, zt.And([c for c, w in reads if w == what])),
                                   f"the shift of {member} {what}"))
        return conditions

    def members(self, name: str) -> list[tuple[int | None, z3.ArithRef]]:
        return sorted(((i, v) for (site, i), v in self.enc.noise.items() if site == self.prefix + name),
                      key=lambda kv: -1 if kv[0] is None else kv[0])

    def _noise(self, name: str, index: Value | None, node: n.Expr) -> Value | None:
        site = self.enc.mech.site(name)
        if site is None:
            return None
        members = self.members(name)
        integer = site.distribution.integer
        if index is None:
            return members[0][1] if members else self.enc.noise_symbol(name, None, integer, self.prefix)
        concrete = _concrete(index)
        if concrete is not None:
            return self.enc.noise_symbol(name, concrete, integer, self.prefix)
        if not members:
            raise EncodingError(f"noise family {name} has no members at this length")
        result = members[-1][1]
        for i, v in reversed(members[:-1]):
            result = z3.If(index == i, v, result)
        return result

    def shift(self, name: str, index: int | None) -> z3.ArithRef:
        """ψ for one noise member (0 when the alignment does not shift it)."""
        key = (name, index)
        if key in self._cache:
            return self._cache[key]
        shift = self.enc.mech.alignment.shift_of(name) if self.enc.mech.alignment else None
        if shift is None:
            value: z3.ArithRef = zt.IntVal(0)
        else:
            saved = self.env.get(shift.index_var) if shift.index_var else None
            if shift.index_var:
                assert index is not None, "a family's shift is taken for one member at a time"
                self.env[shift.index_var] = zt.IntVal(index)
            with self.ev.recording(self._shift_reads.setdefault(key, [])):
                value = self.ev.arith(shift.shift)
            if shift.index_var:
                if saved is None:
                    del self.env[shift.index_var]
                else:
                    self.env[shift.index_var] = saved
        self._cache[key] = value
        return value

    def claim(self) -> z3.ArithRef:
        self._claim_reads = []
        with self.ev.recording(self._claim_reads):
            return _real(self.ev.arith(self.enc.mech.claim))

    def value(self, e: n.Expr) -> Value:
        return self.ev.value(e)
