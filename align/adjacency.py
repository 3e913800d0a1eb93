"""The neighbouring relations D ~ D': one record per kind of `adjacent` clause, which every layer iterates over.

A clause relates a private parameter `q` to its neighbour value `q'`. Each kind is stated once, here, as

* an **entry relation** between q[i] and q'[i] that every entry must satisfy (for a scalar: between x and x'),
  possibly reading one direction chosen once for the whole list (`monotone`: all entries move up, or all down);
* an **additive measure** of one entry's change, whose sum over the list is at most the clause's bound (L1: the
  absolute difference; `count`: 1 where the entry differs);
* or a **change of length**: q' is q with one entry (a record) inserted or deleted anywhere (add/remove-one-record,
  "unbounded" DP), the lists otherwise equal in order. Such a clause is the only one of its parameter, and the
  length of the list is then private.

The back ends interpret these two functions with their own arithmetic (`Ops`): z3 terms over a list of known
length (the bounded check), z3 terms of one loop iteration with the measure carried as a running total
(induction), z3 arrays with the entry relation quantified over indices (the ranking encoding, which refuses a
measure), and Python numbers (the interpreter's check of a neighbour given with `--neighbour`). Texts for
reports, `unparse` and diagnostics come from the record too. Adding a kind means adding an `AdjacencyKind`, a
record, and a grammar alternative that builds it — no back end changes.

Reading of the guarantee: Lemma 1 bounds P[M(D) ∈ E] by e^ε P[M(D') ∈ E] for every pair the clauses admit. A
symmetric relation (every kind but `increasing` and `decreasing`) gives the usual two-sided ε-DP; a one-sided
relation gives the bound only for neighbours on that side (docs/language.md, "Adjacency").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol, TypeVar

__all__ = ["ADJACENCY", "AdjacencyKind", "AdjacencyRule", "Ops", "PythonOps", "Violation"]

T = TypeVar("T")
B = TypeVar("B")


class AdjacencyKind(str, Enum):
    POINTWISE = "pointwise"  # every entry moves by at most the bound
    L1 = "l1"  # the entries move by at most the bound in all
    COUNT = "count"  # at most the bound's number of entries differ
    SCALAR = "scalar"  # the value moves by at most the bound
    MONOTONE = "monotone"  # all entries move the same way (all up, or all down)
    INCREASING = "increasing"  # no entry moves down (one-sided)
    DECREASING = "decreasing"  # no entry moves up (one-sided)
    ADD_REMOVE = "add/remove"  # one record added or removed: len(q') = len(q) ± 1
    ADD = "add"  # one record added (one-sided)
    REMOVE = "remove"  # one record removed (one-sided)


class Ops(Protocol[T, B]):
    """The arithmetic a back end interprets the relations with: T numbers, B truth values."""

    def distance(self, x: T, y: T) -> T:
        """|x - y|."""
        ...
    def le(self, x: T, y: T) -> B: ...
    def ge(self, x: T, y: T) -> B: ...
    def either(self, up: B, then: B, otherwise: B) -> B: ...
    def differs(self, x: T, y: T) -> T:
        """1 where x != y, else 0."""
        ...
    def same(self, x: T, y: T) -> B: ...
    def all_of(self, parts: list[B]) -> B: ...
    def any_of(self, parts: list[B]) -> B: ...


@dataclass(frozen=True)
class PythonOps:
    """Python numbers, with a tolerance for the floats that `--neighbour` values and bounds arrive as."""

    slack: float = 0.0

    def distance(self, x: Any, y: Any) -> Any:
        return abs(x - y)

    def le(self, x: Any, y: Any) -> bool:
        return bool(x <= y + self.slack)

    def ge(self, x: Any, y: Any) -> bool:
        return bool(x + self.slack >= y)

    def either(self, up: bool, then: bool, otherwise: bool) -> bool:
        return then if up else otherwise

    def differs(self, x: Any, y: Any) -> int:
        return 0 if abs(x - y) <= self.slack else 1

    def same(self, x: Any, y: Any) -> bool:
        return bool(abs(x - y) <= self.slack)

    def all_of(self, parts: list[bool]) -> bool:
        return all(parts)

    def any_of(self, parts: list[bool]) -> bool:
        return any(parts)


EntryRelation = Callable[[Any, Any, Any, Any, Any], Any]
"""(ops, q[i], q'[i], bound, up) -> truth value; `bound` is None for a clause without one."""
Measure = Callable[[Any, Any, Any], Any]
"""(ops, q[i], q'[i]) -> the entry's share of the bound."""


@dataclass(frozen=True)
class AdjacencyRule:
    kind: AdjacencyKind
    syntax: str
    """The clause as written: {x} the parameter, {y} the name on the primed side (the same, unless a clause is
    wrong), {i} and {j} the indices of the two sides, {c} the bound (unparse, reports, diagnostics)."""
    on_list: bool
    """Whether the clause is on a list parameter (real[] or int[]); otherwise on a real or int."""
    has_bound: bool
    entry: EntryRelation | None = None
    """The relation every entry satisfies, or None."""
    measure: Measure | None = None
    """The additive measure whose total is at most the bound, or None."""
    entry_failure: str = ""
    """How an entry that breaks the entry relation is shown: {x} the name, {at} `[k]` (empty for a scalar), {a}
    and {b} the two values, {d} their distance, {c} the bound."""
    measure_text: str = ""
    """The total as written, for {x}: `sum |q[i] - q'[i]|`."""
    bounds_entries: bool = False
    """Whether the clause alone bounds every entry's change |q[i] - q'[i]| (or |x - x'|) by its bound: the
    cost bounds of the reports and of the loop invariants read it."""
    reads_direction: bool = False
    """Whether the entry relation reads the one direction chosen for the whole list (`monotone`)."""
    sparse: bool = False
    """Whether the bound limits how many entries change (few entries differ): `align test` then tries
    patterns that change one or two entries rather than all of them."""
    counts_entries: bool = False
    """Whether the bound is a number of entries that may change (`count`): `align test` then moves that many."""
    one_sided: bool = False
    """Whether the relation is not symmetric (the guarantee holds for neighbours on one side only)."""
    prefix_closed: bool = False
    """Whether a pair of lists of one length restricted to their first m entries is a pair of the clause at length
    m, and such a pair extended by unchanged entries is one again (an unchanged entry meets the entry relation and
    adds nothing to the measure). checker/entries.py rests on it: a program that reads fixed entries only is then
    checked for every length by the short ones. For a clause on a scalar there is nothing to restrict."""
    length_changes: tuple[int, ...] = ()
    """For add/remove-one-record: the differences len(q') - len(q) the clause admits (q' is q with one entry
    inserted, +1, or deleted, -1); empty for the clauses between lists of one length. Such a clause makes the
    length private."""

    @property
    def changes_length(self) -> bool:
        return bool(self.length_changes)

    def one_record_apart(self, ops: Ops[Any, B], here: list, there: list) -> B:
        """Whether `there` is `here` with one entry inserted or deleted, as the clause admits: the difference of
        the lengths is one of `length_changes`, and the shorter list is the longer one without its entry at some
        position p."""
        if len(there) - len(here) not in self.length_changes:
            return ops.any_of([])
        short, long = (here, there) if len(here) < len(there) else (there, here)
        return ops.any_of([ops.all_of([ops.same(short[j], long[j if j < p else j + 1]) for j in range(len(short))])
                           for p in range(len(long))])

    def text(self, name: str, bound: str = "", primed: str = "", indices: tuple[str, str] = ("i", "i")) -> str:
        return self.syntax.format(x=name, y=primed or name, i=indices[0], j=indices[1], c=bound)

    def total_text(self, name: str) -> str:
        return self.measure_text.format(x=name)

    def violation(self, ops: Ops[Any, Any], here: Any, there: Any, bound: Any) -> Violation | None:
        """Why Python values `here`, `there` (two lists, or two scalars) do not satisfy the clause, or None."""
        if self.changes_length:
            return None if self.one_record_apart(ops, list(here), list(there)) else \
                Violation(self, lengths=(len(here), len(there)))
        if self.on_list and len(here) != len(there):
            return Violation(self, lengths=(len(here), len(there)))
        pairs = list(zip(here, there)) if self.on_list else [(here, there)]
        if self.entry is not None:
            directions = (True, False) if self.reads_direction else (True,)
            if not any(all(self.entry(ops, a, b, bound, up) for a, b in pairs) for up in directions):
                if self.reads_direction:
                    return Violation(self, mixed=True)
                k = next(k for k, (a, b) in enumerate(pairs) if not self.entry(ops, a, b, bound, True))
                return Violation(self, index=k if self.on_list else None, values=pairs[k])
        if self.measure is not None:
            total = sum(self.measure(ops, a, b) for a, b in pairs)
            if not ops.le(total, bound):
                return Violation(self, total=total)
        return None


@dataclass(frozen=True)
class Violation:
    """What a neighbour value breaks: an entry (index and values), the total, or the single direction."""

    rule: AdjacencyRule
    index: int | None = None
    values: tuple[Any, Any] | None = None
    total: Any = None
    mixed: bool = False
    lengths: tuple[int, int] | None = None
    """For lists whose lengths the clause does not admit: (len(q), len(q'))."""

    def describe(self, name: str, show: Callable[[Any], str], bound: str) -> str:
        if self.lengths is not None:
            a, b = self.lengths
            if not self.rule.changes_length:
                return f"len({name}') = {b} but len({name}) = {a} (lengths are public)"
            wanted = " or ".join(("one record added" if d > 0 else "one record removed")
                                 for d in self.rule.length_changes)
            return f"{name}' (length {b}) is not {name} (length {a}) with {wanted}"
        if self.mixed:
            return f"{name}' is neither everywhere >= nor everywhere <= {name}"
        if self.total is not None:
            return f"{self.rule.total_text(name)} = {show(self.total)} > {bound}"
        assert self.values is not None, "an entry violation has the entry's values"
        a, b = self.values
        at = f"[{self.index}]" if self.index is not None else ""
        return self.rule.entry_failure.format(x=name, at=at, a=show(a), b=show(b), d=show(abs(a - b)), c=bound)


def _within(ops: Ops, a: Any, b: Any, c: Any, up: Any) -> Any:
    return ops.le(ops.distance(a, b), c)


def _up_or_down(ops: Ops, a: Any, b: Any, c: Any, up: Any) -> Any:
    return ops.either(up, ops.le(a, b), ops.ge(a, b))


def _up(ops: Ops, a: Any, b: Any, c: Any, up: Any) -> Any:
    return ops.le(a, b)


def _down(ops: Ops, a: Any, b: Any, c: Any, up: Any) -> Any:
    return ops.ge(a, b)


def _distance(ops: Ops, a: Any, b: Any) -> Any:
    return ops.distance(a, b)


def _changed(ops: Ops, a: Any, b: Any) -> Any:
    return ops.differs(a, b)


_TOO_FAR = "|{x}{at} - {x}'{at}| = {d} > {c}"

ADJACENCY: dict[AdjacencyKind, AdjacencyRule] = {r.kind: r for r in (
    AdjacencyRule(AdjacencyKind.POINTWISE, "|{x}[{i}] - {y}'[{j}]| <= {c}",
                  on_list=True, has_bound=True, entry=_within, entry_failure=_TOO_FAR, bounds_entries=True,
                  prefix_closed=True),
    AdjacencyRule(AdjacencyKind.L1, "sum |{x}[{i}] - {y}'[{j}]| <= {c}",
                  on_list=True, has_bound=True, measure=_distance, measure_text="sum |{x}[i] - {x}'[i]|",
                  bounds_entries=True, sparse=True, prefix_closed=True),
    AdjacencyRule(AdjacencyKind.COUNT, "count {x}[{i}] != {y}'[{j}] <= {c}",
                  on_list=True, has_bound=True, measure=_changed, measure_text="count {x}[i] != {x}'[i]",
                  sparse=True, counts_entries=True, prefix_closed=True),
    AdjacencyRule(AdjacencyKind.SCALAR, "|{x} - {y}'| <= {c}",
                  on_list=False, has_bound=True, entry=_within, entry_failure=_TOO_FAR, bounds_entries=True,
                  prefix_closed=True),
    AdjacencyRule(AdjacencyKind.MONOTONE, "monotone {x}",
                  on_list=True, has_bound=False, entry=_up_or_down, reads_direction=True, prefix_closed=True),
    AdjacencyRule(AdjacencyKind.INCREASING, "{y}'[{j}] >= {x}[{i}]",
                  on_list=True, has_bound=False, entry=_up,
                  entry_failure="{x}'{at} = {b} < {x}{at} = {a}", one_sided=True, prefix_closed=True),
    AdjacencyRule(AdjacencyKind.DECREASING, "{y}'[{j}] <= {x}[{i}]",
                  on_list=True, has_bound=False, entry=_down,
                  entry_failure="{x}'{at} = {b} > {x}{at} = {a}", one_sided=True, prefix_closed=True),
    AdjacencyRule(AdjacencyKind.ADD_REMOVE, "len({y}') = len({x}) ± 1", on_list=True, has_bound=False,
                  length_changes=(1, -1)),
    AdjacencyRule(AdjacencyKind.ADD, "len({y}') = len({x}) + 1", on_list=True, has_bound=False,
                  length_changes=(1,), one_sided=True),
    AdjacencyRule(AdjacencyKind.REMOVE, "len({y}') = len({x}) - 1", on_list=True, has_bound=False,
                  length_changes=(-1,), one_sided=True),
)}
assert set(ADJACENCY) == set(AdjacencyKind), "every kind has its record"

