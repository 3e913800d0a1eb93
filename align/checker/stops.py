"""Runtime errors of the body that private data or noise may cause (docs/checker.md, "Runtime errors of the body").

The obligations are about the outputs of runs that end normally: the encodings do not model a run of the body that
stops with a runtime error. A stop is an observable outcome, and where private data decides it, a proof of the outputs
says nothing about it (`y = 1 / x` or `if x > 0 { z = 1 } y = z` with x private, before `output eta`: the run stops
on one neighbour and not on the other). Until the checker proves the body's partial operations defined, `hazards`
finds the ones whose failure is decided by a value that private data or noise flows into, and the verdict on C4a is
unknown there, with the places named.

What is found, and what is not yet: docs/checker.md, "Runtime errors of the body". A value is tainted when a private
parameter or noise flows into it, by assignment or by a branch, loop bound or `break` that decides the assignment, or
as the index of a loop or comprehension whose range it decides, to a fixpoint. An operand whose form fixes its sign
(`1 + abs(x)`), or noise whose support excludes the failure (`ln(u)` with u ~ Uniform(0, 1); `1 / eta` with a
density: a point has probability 0), is safe. A list read whose index or list length such a value decides must be
surely inside the list (`_Walk.within`: z3 proves the index below the list's length from the ranges around it and
the known sizes, or the entry was written before, or `argmax` or `top_k` of the list gave the index); such an entry
write must overwrite or append (`_Walk.writable`); an extremum must be over entries whose number no such value
decides (`_Walk.empty`). An operation on public values that runs under a tainted condition must
be defined for every value `requires` allows (`_Public`, a z3 query over the public parameters).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

import z3

from .. import nodes as n
from ..distributions import Operand, Param
from ..limits import MAX_LOOP_ITERATIONS
from ..operators import COMPARISONS, RING_OPERATIONS
from ..resolve import NoiseSite, ResolvedMechanism, children, rewrite, walk, walk_statements
from ..smt import terms as zt
from ..smt.solver import Limits, Validity, check_valid
from ..span import Span
from ..types import INT, REAL, ListType
from ..unparse import unparse


@dataclass(frozen=True)
class Hazard:
    span: Span
    text: str
    """What may stop the run: `` `1 / x` may divide by zero ``."""

    @property
    def note(self) -> str:
        return f"{self.text} (line {self.span.line})"


def hazards(mech: ResolvedMechanism) -> list[Hazard]:
    """The partial operations and reads of the body whose failure private data or noise may decide."""
    return list(_hazards(_Body(mech, (mech.params, mech.requires, mech.body, mech.noise, mech.constants))))


@dataclass(frozen=True)
class _Body:
    """What the hazards of a mechanism depend on (not its alignment: synthesis verifies one body with many), as the
    key of `_hazards`' cache."""

    mech: ResolvedMechanism = field(compare=False, hash=False)
    key: tuple


@lru_cache(maxsize=64)
def _hazards(body: _Body) -> tuple[Hazard, ...]:
    mech = body.mech
    taint = _spread(mech, {p.name for p in mech.params if not p.public} | {s.name for s in mech.noise})
    noisy = _spread(mech, {s.name for s in mech.noise})
    found: list[Hazard] = []
    _Walk(mech, taint, found, noisy).block(mech.body, False)
    unique = {(h.span.line, h.span.column, h.text): h for h in found}
    return tuple(unique[k] for k in sorted(unique))


def _spread(mech: ResolvedMechanism, sources: set[str]) -> set[str]:
    """The names that `sources` flow into, to a fixpoint (a loop's later iterations read what its earlier ones
    assigned)."""
    taint = set(sources)
    while True:
        before = set(taint)
        _Walk(mech, taint, None).block(mech.body, False)
        if taint == before:
            return taint


class _Walk:
    def __init__(self, mech: ResolvedMechanism, taint: set[str], found: list[Hazard] | None,
                 noisy: frozenset[str] | set[str] = frozenset()):
        self.mech = mech
        self.taint = taint
        self.found: list[Hazard] = found if found is not None else []
        self.recording = found is not None
        """False in the passes that only spread the taint (no z3 query there)."""
        self.noisy = noisy
        """The names noise flows into (`hazards`): an integer overflow is taken for one only where no noise does."""
        self.indices: list[set[str]] = [set()]
        """The loop and comprehension indices in scope whose range private data or noise decides (innermost last)."""
        self.ranges: list[tuple[str, n.Expr, n.Expr, tuple[n.Stmt, ...]]] = []
        """The index, the bounds and the statements (none for a comprehension) of each enclosing loop and
        comprehension over a range (`proved`)."""
        self.lengths = {p.name for p in mech.params if isinstance(p.type, ListType) and not p.length_public}
        """The lists whose length private data or noise may decide: a list parameter whose length is private, a
        list written past its known size at an index that such values decide or under a condition they decide, or
        assigned whole a list whose length they decide (`resize`)."""
        self.wanted: dict[str, set[str]] = {}
        """For each variable that some read uses as an index (`L[j]`), the lists it indexes."""
        for e in _expressions(mech.body):
            if isinstance(e, n.Index) and isinstance(e.index, n.VarRef) and isinstance(e.base, (n.VarRef, n.ParamRef)):
                self.wanted.setdefault(e.index.id, set()).add(e.base.id)
        self.known: dict[str, dict[str, tuple[bool, list[n.Expr]]]] = {}
        """For such a variable and list, as its assignments so far say (`index_assigned`): whether each gave an index
        of the list, and the values of public parameters alone among them, to be proved where the list is read."""
        self.loops: list[tuple[n.For, frozenset[str]]] = []
        """The enclosing loops, each with the names written before it (but the lists known to be empty)."""
        self.answers: dict[tuple, bool] = {}
        """z3's answers so far (`ask`)."""
        self.facts: list[tuple[n.Expr, bool]] = []
        """The conditions that hold where the walk is (innermost last), each with whether it holds or its negation:
        an `if`'s in its branches, a `?:`'s in its values, the left operand's of `and` (`or`) in the right one,
        where the branch assigns nothing the condition reads (`holding`)."""
        self.just: dict[tuple[str, str], frozenset[str]] = {}
        """The entries `(list, index text)` written on every path to here, with the variables their index reads, since
        none of those nor the list was assigned again: a read of one is inside the list (the write made it)."""
        self.balanced: list[set[tuple[str, str]]] = []
        """For each enclosing `if` (innermost last): the entries `(list, index)` that both its branches write at
        their top level, where the `if` itself runs on every path."""
        self.sizes: dict[str, n.Expr | int] = {}
        """The length of a list made in the body, where public values alone fix it: `top_k(x, k)` has k entries, a
        list literal its items, a list filled by `for i in 0 .. n { L[i] = ... }` (no `break`, L new) n, an append
        one more."""
        self.magnitudes = _magnitudes(mech)
        """Bounds of integer values whatever the inputs (`_Magnitudes`): an addition of bounded values is no hazard."""
        self.integers = self.magnitudes.integers
        """The variables that may hold an integer at run time (a real variable assigned `2` on some path does)."""
        self.written: set[str] = set()
        """The names some statement before this one (in the program's order) assigns."""
        self.assigned: dict[str, bool] = {}
        """The scalar variables with a value here: False where the paths to here all assign it, True where a branch
        that tainted values decide may have left it without one."""

    def block(self, body: tuple[n.Stmt, ...], hidden: bool) -> bool:
        """Walk statements run under a tainted condition when `hidden`; returns whether a `break` under a tainted
        condition may end the enclosing loop here."""
        broke = False
        for s in body:
            here = hidden or broke
            if isinstance(s, n.Assign):
                self.expr(s.value, hidden=here)
                if s.index is not None:
                    self.expr(s.index, hidden=here)
                    if self.recording and (here or self.tainted(s.index) or s.target in self.lengths) and \
                            not self.writable(s):
                        self.found.append(Hazard(s.span, f"`{s.target}[{unparse(s.index)}] = ...` may write past "
                                                         f"the end of `{s.target}` (leaving a gap), on one neighbour "
                                                         "only: private data or noise decides the index, the list's "
                                                         "length or whether it runs"))
                if here or self.tainted(s.value) or (s.index is not None and self.tainted(s.index)):
                    self.taint.add(s.target)
                if self.recording:  # (the lists' lengths and indices: the taint's passes need none of them)
                    self.lists(s, here)
                if s.index is None or s.target not in self.written:  # `L[0] = 1` first makes a list L
                    self.assigned[s.target] = False
                self.written.add(s.target)
            elif isinstance(s, n.Sample):
                # C0 asks that its parameters make a density for every value `requires` allows, in both runs (the
                # domains of /, sqrt, ln, clamp, ^); not that they have a value, or fit in 64-bit integers
                for a in s.args:
                    self.expr(a, domains=False, hidden=here)
                self.assigned[s.var] = False
            elif isinstance(s, n.Output):
                self.expr(s.value, hidden=here)
            elif isinstance(s, n.Break):
                broke = broke or here
            elif isinstance(s, n.If):
                self.expr(s.condition, hidden=here)
                inner = here or self.tainted(s.condition)
                # an entry both branches write at the same index is written whichever runs: no length differs
                self.balanced.append(_entries(s.then) & _entries(s.orelse) if not here else set())
                before, written, just = dict(self.assigned), set(self.written), dict(self.just)
                sizes = dict(self.sizes)
                with self.holding(s.condition, True, s.then):
                    broke_then = self.block(s.then, inner)
                just, self.just = self.just, just
                sizes, self.sizes = self.sizes, sizes
                after_then, self.assigned = self.assigned, dict(before)
                # the other branch runs instead: what the first wrote is not written before it (`L[0] = 1` in both
                # makes a list L on both paths)
                written, self.written = self.written, written
                with self.holding(s.condition, False, s.orelse):
                    broke_else = self.block(s.orelse, inner)
                self.written |= written
                self.just = {k: v for k, v in self.just.items() if k in just}
                self.sizes = _same(self.sizes, sizes)  # the sizes both paths agree on
                self.assigned = _join(after_then, self.assigned, inner)
                self.balanced.pop()
                broke = broke or broke_then or broke_else
            elif isinstance(s, n.For):
                self.expr(s.lo, hidden=here)
                self.expr(s.hi, hidden=here)
                inner = here or self.tainted(s.lo) or self.tainted(s.hi)
                fills = self.fills(s) if not inner else []
                self.loops.append((s, frozenset(name for name in self.written if self.sizes.get(name) != 0)))
                sizes = dict(self.sizes)
                # The bounds are read once, at the loop's entry, with the sizes then; a list the body writes (whole
                # or at an index: an append) may have another size at each iteration, and has no known one inside
                # (two walks of the body see two iterations, not the third: appends, lists swapped in turn)
                resized = self.resized(s)
                bounds = (_at_entry(s.lo, resized, sizes), _at_entry(s.hi, resized, sizes))
                self.sizes = {name: size for name, size in self.sizes.items() if name not in resized}
                changed = {x.target for x in walk_statements(s.body) if isinstance(x, n.Assign) and x.index is None}
                changed |= {x.var for x in walk_statements(s.body) if isinstance(x, n.Sample)} | {s.var}
                self.just = {k: v for k, v in self.just.items() if not (v & changed) and k[0] not in changed}
                kept = dict(self.just)
                self.indices.append({s.var} if inner else set())
                self.ranges.append((s.var, *bounds, s.body))
                before = dict(self.assigned)
                if self.block(s.body, inner):  # a tainted break: later iterations may run on one side only
                    inner = True
                self.assigned = {**_join(before, self.assigned, inner), **self.assigned}  # the next iterations
                self.block(s.body, inner)
                self.indices.pop()
                self.ranges.pop()
                self.loops.pop()
                self.sizes = _same(self.sizes, sizes)  # (no iteration may have run)
                start = n.literal_number(s.lo)
                count = s.hi if start == 0 else n.Binary("-", s.hi, s.lo, s.span)
                self.sizes.update(dict.fromkeys(fills, count))
                self.just = kept  # (no iteration may have run)
                self.assigned = _join(before, self.assigned, inner)  # no iteration, or some
            elif isinstance(s, n.While):
                raise AssertionError("`while` is rejected by resolution")
        return broke

    def tainted(self, e: n.Expr) -> bool:
        if isinstance(e, n.Call) and e.func == "len" and isinstance(e.args[0], n.ParamRef):
            param = self.mech.param(e.args[0].id)
            return param is not None and not param.length_public
        if isinstance(e, (n.ParamRef, n.VarRef, n.NoiseRef)) and e.id in self.taint:
            return True
        if isinstance(e, n.LocalRef) and any(e.id in scope for scope in self.indices):
            return True
        return isinstance(e, n.MemberRef) or any(self.tainted(c) for c in children(e))

    def expr(self, e: n.Expr, domains: bool = True, hidden: bool = False) -> None:
        """Record the hazards of e and of its subexpressions (with `domains` False, those that C0 does not cover:
        a missing value, an integer beyond 64 bits); `hidden`: e runs under a condition that private data or noise
        decides."""
        if isinstance(e, n.Comprehension):
            decides = [x for x in (e.domain, e.excluded) if x is not None]
            self.indices.append({e.var} if any(self.tainted(x) for x in decides) else set())
            filtered = e.condition is not None and self.tainted(e.condition)
            ranged = isinstance(e.domain, n.Range)
            if isinstance(e.domain, n.Range):
                self.ranges.append((e.var, e.domain.lo, e.domain.hi, ()))
            for c in children(e):  # the body runs where the filter holds
                if c is e.body and e.condition is not None:
                    with self.holding(e.condition, True, ()):
                        self.expr(c, domains, hidden or filtered)
                else:
                    self.expr(c, domains, hidden)
            if ranged:
                self.ranges.pop()
            self.indices.pop()
        elif isinstance(e, n.Conditional):  # one branch runs, as its condition says
            self.expr(e.condition, domains, hidden)
            inner = hidden or self.tainted(e.condition)
            with self.holding(e.condition, True, ()):
                self.expr(e.then, domains, inner)
            with self.holding(e.condition, False, ()):
                self.expr(e.orelse, domains, inner)
        elif isinstance(e, n.BoolOp):  # the right operand runs as the left says
            self.expr(e.left, domains, hidden)
            with self.holding(e.left, e.op == "and", ()):
                self.expr(e.right, domains, hidden or self.tainted(e.left))
        else:
            for c in children(e):
                self.expr(c, domains, hidden)
        if self.empty(e):
            self.found.append(Hazard(e.span, f"`{unparse(e)}` may be over no entries, on one neighbour only: private "
                                             "data or noise decides how many"))
        if isinstance(e, n.Index) and isinstance(_type(e.base), ListType) and self.recording and \
                (hidden or self.tainted(e.index) or self.length_tainted(e.base)) and not self.inside(e):
            self.found.append(Hazard(e.span, f"`{unparse(e)}` may read past the end of `{unparse(e.base)}`, on one "
                                             "neighbour only: private data or noise decides the index, the list's "
                                             "length or whether the read runs"))
        if isinstance(e, n.Call) and e.func in ("top_k", "top_k_with_gaps") and self.recording and \
                (hidden or self.tainted(e.args[1]) or self.length_tainted(e.args[0])) and not self.ranks(e):
            need = "k < len" if e.func == "top_k_with_gaps" else "k <= len"
            self.found.append(Hazard(e.span, f"`{unparse(e)}` may have too few entries to rank ({need} and k >= 0 "
                                             "are not proved), on one neighbour only: private data or noise decides "
                                             "k, the list's length or whether it runs"))
        if isinstance(e, (n.VarRef, n.NoiseRef)) and self.assigned.get(e.id):
            self.found.append(Hazard(e.span, f"`{unparse(e)}` may have no value here, on one neighbour only (a "
                                             "branch that private data or noise decides may have skipped its "
                                             "assignment)"))
        overflow = "may leave the 64-bit range of integers"
        if isinstance(e, n.Binary):
            if e.op in ("+", "-", "*") and self.integer(e.left) and self.integer(e.right) and \
                    not self.magnitudes.within(e) and (e.op == "*" or not self.reads_noise(e)):
                self.operands(e, [e.left, e.right], overflow, bounded=True)
            elif e.op == "//" and self.integer(e.left) and not _positive_number(e.right):
                self.operands(e, [e.left], overflow + " (`//` by -1)", bounded=True)
            if not domains:
                return
            if e.op in ("/", "//", "%") and _sign(e.right, self.mech) != "positive":
                if not self.in_domain(e.right, "nonzero"):
                    self.operands(e, [e.right], "may divide by zero", nonzero=True)
                self.public(e, hidden, "may divide by zero", lambda t: t(e.right) != 0)
            elif e.op == "^" and not _whole_nonnegative(e.right):
                self.operands(e, [e.left, e.right], "may be outside the domain of `^`")
                self.public(e, hidden, "may be outside the domain of `^`", lambda t: t(e.left) > 0)
        elif isinstance(e, n.Unary) and e.op == "-" and self.integer(e.operand) and not self.magnitudes.within(e):
            self.operands(e, [e.operand], overflow, bounded=True)
        elif isinstance(e, n.Call) and e.func == "abs" and self.integer(e.args[0]) and not self.magnitudes.within(e):
            self.operands(e, [e.args[0]], overflow, bounded=True)
        elif isinstance(e, n.Comprehension) and e.func == "sum" and self.integer(e.body) and \
                not self.magnitudes.within(e):
            self.operands(e, [e.body], overflow + " (a partial sum)", bounded=True)
        elif isinstance(e, n.Call) and e.func in ("floor", "ceil", "round"):
            self.operands(e, [e.args[0]], overflow, bounded=True)
        elif isinstance(e, n.Call) and domains:
            if e.func == "sqrt" and _sign(e.args[0], self.mech) is None:
                if not self.in_domain(e.args[0], "nonnegative"):
                    self.operands(e, [e.args[0]], "may be outside the domain of `sqrt`", nonnegative=True)
                self.public(e, hidden, "may be outside the domain of `sqrt`", lambda t: t(e.args[0]) >= 0)
            elif e.func == "ln" and _sign(e.args[0], self.mech) != "positive":
                if not self.in_domain(e.args[0], "positive"):
                    self.operands(e, [e.args[0]], "may be outside the domain of `ln`", positive=True)
                self.public(e, hidden, "may be outside the domain of `ln`", lambda t: t(e.args[0]) > 0)
            elif e.func == "clamp":
                self.operands(e, list(e.args[1:]), "may have lo > hi")
                self.public(e, hidden, "may have lo > hi", lambda t: t(e.args[1]) <= t(e.args[2]))

    @contextmanager
    def holding(self, condition: n.Expr, holds: bool, branch: tuple[n.Stmt, ...]) -> Iterator[None]:
        """Walk what runs where `condition` holds (or, `holds` False, where it does not) with it among the facts of
        the range proofs, unless `branch` assigns a name it reads: the condition is evaluated before the branch,
        and a name assigned in it may no longer have the value it had then (a list appended to is longer)."""
        assigned = {x.target for x in walk_statements(branch) if isinstance(x, n.Assign)} | \
            {x.var for x in walk_statements(branch) if isinstance(x, (n.Sample, n.For))}
        kept = not (_names(condition) & assigned)
        if kept:
            self.facts.append((condition, holds))
        try:
            yield
        finally:
            if kept:
                self.facts.pop()

    def empty(self, e: n.Expr) -> bool:
        """Whether `e` is a `max`, `min`, `argmax` or `argmin` (of a list or a comprehension) whose number of entries
        private data or noise decides (the interpreter stops with `empty-reduction` on none)."""
        if isinstance(e, n.Call) and e.func in _EXTREMA and len(e.args) == 1:
            x = e.args[0]
            return isinstance(x, (n.VarRef, n.ParamRef)) and x.id in self.lengths
        if not isinstance(e, n.Comprehension) or e.func not in _EXTREMA:
            return False
        if e.condition is not None and self.tainted(e.condition):
            return True
        if e.excluded is not None and self.tainted(e.excluded):
            return True
        domain = e.domain
        if isinstance(domain, n.Range):
            return self.tainted(domain.lo) or self.tainted(domain.hi)
        if isinstance(domain, (n.VarRef, n.ParamRef)):
            return domain.id in self.lengths
        if domain is None:  # the universe is the indices of the lists the body reads at the index
            return any(isinstance(x, n.Index) and isinstance(x.index, n.LocalRef) and x.index.id == e.var and
                       isinstance(x.base, (n.VarRef, n.ParamRef)) and x.base.id in self.lengths
                       for x in walk(e.body))
        return self.tainted(domain)

    def fills(self, loop: n.For) -> list[str]:
        """The new lists that the loop writes at its iteration's entry (`_entry`) on every iteration (their size is
        then the number of iterations, `sizes`), where no `break` can end it early and the bounds read public values
        only."""
        if _entry_text(loop) is None or not self.stable(loop.hi) or \
                any(isinstance(x, n.Break) for x in walk_statements(loop.body)):
            return []
        written = [x for x in walk_statements(loop.body) if isinstance(x, n.Assign)]
        # every path of an iteration writes its entry; every other write of the list in the loop is at the same
        # index (`L[i + 5] = 1` beside them makes it longer)
        return sorted({x.target for x in written if _entry(x, loop) and (x.target not in self.written or
                                                                          self.sizes.get(x.target) == 0)
                       and _always_writes(loop.body, x.target, loop)
                       and all(_entry(y, loop) for y in written if y.target == x.target)})

    def stable(self, e: n.Expr) -> bool:
        """e reads only numbers, public parameters, lengths and the constants (the same value wherever it is read)."""
        if isinstance(e, (n.LocalRef, n.NoiseRef, n.MemberRef)) or self.tainted(e):
            return False
        if isinstance(e, n.VarRef) and e.id not in self.mech.constants:
            return False
        if isinstance(e, n.Call) and e.func == "len":
            return isinstance(e.args[0], n.ParamRef)  # (not tainted: its length is public)
        return all(self.stable(c) for c in children(e))

    def resize(self, s: n.Assign, hidden: bool) -> None:
        """What the assignment does to the length of its target, when it is a list (`lengths`, `sizes`)."""
        if s.index is not None:  # an entry: the list grows unless the index is surely one of its indices
            if self.within(s.index, s.target):
                return
            if not hidden and not self.tainted(s.index) and self.at_end(s.index, s.target):
                size = self.sizes.get(s.target, 0)
                self.sizes[s.target] = size + 1 if isinstance(size, int) else n.Binary(
                    "+", size, n.Number(Fraction(1), True, s.span), s.span)
                return
            self.sizes.pop(s.target, None)
            balanced = bool(self.balanced) and (s.target, unparse(s.index)) in self.balanced[-1]
            if (hidden and not balanced) or self.tainted(s.index):
                self.lengths.add(s.target)
            return
        if not isinstance(_type(s.value), ListType):
            return
        v = s.value
        self.sizes.pop(s.target, None)
        for lists in self.known.values():  # an index of the old list need not be one of the new
            if s.target in lists:
                lists[s.target] = (False, [])
        if hidden or self.length_tainted(v):  # (a literal under a private branch: one length or another)
            self.lengths.add(s.target)
        if isinstance(v, n.ListLit):
            self.sizes[s.target] = len(v.items)
            return
        if isinstance(v, n.Call) and v.func in ("top_k", "top_k_with_gaps") and self.stable(v.args[1]):
            self.sizes[s.target] = v.args[1]
            return
        if isinstance(v, (n.VarRef, n.ParamRef)) and v.id in self.sizes:
            self.sizes[s.target] = self.sizes[v.id]

    def within(self, index: n.Expr, name: str) -> bool:
        """Whether `index` is surely an index of the list `name` here: it is one by its form (`_index_of`); or a
        variable whose every assignment so far gave one (`known`); or z3 proves it at least 0 and below the list's
        length (`proved`)."""
        if _index_of(index, name) or self.ranked(index, name) or (name, unparse(index)) in self.just:
            return True
        if isinstance(index, n.VarRef) and index.id in self.known:
            valid, deferred = self.known[index.id].get(name, (False, []))
            return valid and all(self.proved(x, name) for x in deferred)
        return self.proved(index, name)

    def proved(self, index: n.Expr, name: str) -> bool:
        """z3 proves `0 <= index < len(name)` here (`_Public` with the lengths of list parameters as symbols and the
        known `sizes`), from `requires` and the ranges of the enclosing loops and comprehensions (but a loop's that
        assigns the list whole: it may make the list shorter than its range)."""
        param = self.mech.param(name)
        base: n.Expr = n.ParamRef(name, False, index.span) if param is not None else n.VarRef(name, False, index.span)
        size = n.Call("len", (base,), index.span, index.span)
        ranges = [(var, lo, hi) for var, lo, hi, body in self.ranges
                  if not any(isinstance(x, n.Assign) and x.target == name and x.index is None
                             for x in walk_statements(body))]
        return self.proves_below(index, size, ranges)

    def lists(self, s: n.Assign, hidden: bool) -> None:
        """What the assignment does to the lists' lengths and sizes, the known indices and the entries written."""
        self.resize(s, hidden)
        if s.index is None and not isinstance(_type(s.value), ListType):
            self.index_assigned(s.target, s.value)
        self.just = {k: v for k, v in self.just.items()
                     if s.target not in v and (s.index is not None or k[0] != s.target)}
        if s.index is not None:
            self.just[(s.target, unparse(s.index))] = _names(s.index)

    def length_tainted(self, base: n.Expr) -> bool:
        """Whether private data or noise may decide the length of the list `base`."""
        if isinstance(base, (n.VarRef, n.ParamRef)):
            return base.id in self.lengths
        if isinstance(base, n.ListLit):
            return False
        if isinstance(base, n.Call) and base.func in ("top_k", "top_k_with_gaps"):
            return self.tainted(base.args[1]) or self.length_tainted(base.args[0])
        return True

    def inside(self, e: n.Index) -> bool:
        """The read `e` is surely inside its list (`within` for a list in a variable; a literal's items or top_k's k,
        proved by z3, for a list made in the expression)."""
        base = e.base
        if isinstance(base, (n.VarRef, n.ParamRef)):
            return self.within(e.index, base.id)
        size: n.Expr | int | None = None
        if isinstance(base, n.ListLit):
            size = len(base.items)
        elif isinstance(base, n.Call) and base.func in ("top_k", "top_k_with_gaps"):
            size = base.args[1]
        return size is not None and self.proves_below(e.index, size, [r[:3] for r in self.ranges])

    def resized(self, loop: n.For) -> set[str]:
        """The lists whose length the loop's body may change: assigned whole, or written at an index that z3 does
        not prove inside the size they have at the loop's entry (over the enclosing ranges and this loop's; an
        overwrite keeps the length, an append does not)."""
        writes = [x for x in walk_statements(loop.body) if isinstance(x, n.Assign)]
        whole = {x.target for x in writes if x.index is None}
        written = {x.target for x in writes}
        entry = {name: size for name, size in self.sizes.items() if name not in whole}
        outer = [r[:3] for r in self.ranges]
        ranges = [*outer, (loop.var, _at_entry(loop.lo, whole, self.sizes), _at_entry(loop.hi, whole, self.sizes))]

        def overwrites(x: n.Assign) -> bool:
            # a length the index or the size reads, of a list the body writes, is not known where the write runs
            size = entry.get(x.target)
            if x.index is None or size is None:
                return False
            size = size if isinstance(size, int) else _at_entry(size, written, {})
            index = x.index
            if isinstance(index, n.VarRef) and index.id in written:
                # an index variable the body assigns (`j = clamp(q[i], 0, 2)`, then `h[j] = h[j] + 1`): an index of
                # the list wherever the write runs if it is one at the loop's entry (or has no value there yet) and
                # every assignment of it in the body gives one
                values = [y.value for y in writes if y.target == index.id and y.index is None]
                bound = {y.var for y in walk_statements(loop.body) if isinstance(y, (n.Sample, n.For))}
                return index.id not in bound and bool(values) and \
                    (index.id not in self.assigned or self.within(index, x.target)) and \
                    all(self.proves_below(_at_entry(v, written, {}), size, ranges, entry) for v in values)
            return self.proves_below(_at_entry(index, written, {}), size, ranges, entry)

        return whole | {x.target for x in writes if not overwrites(x)}

    def ranks(self, e: n.Call) -> bool:
        """z3 proves the `top_k(L, k)` call defined: 0 <= k <= len(L) (`top_k_with_gaps`: k < len(L), the k best and
        the next one), L a list in a variable or parameter, or a literal."""
        values, k = e.args
        size: n.Expr | int
        if isinstance(values, (n.VarRef, n.ParamRef)):
            size = n.Call("len", (values,), e.span, e.span)  # (`_Public`: a list made in the body has its known size)
        elif isinstance(values, n.ListLit):
            size = len(values.items)
        else:
            return False
        ranges = [r[:3] for r in self.ranges]
        return self.ask("below" if e.func == "top_k_with_gaps" else "fits", k, size, ranges)

    def proves_below(self, index: n.Expr, size: n.Expr | int, ranges: list[tuple[str, n.Expr, n.Expr]],
                     sizes: dict[str, n.Expr | int] | None = None) -> bool:
        return self.ask("below", index, size, ranges, sizes)

    def ask(self, kind: str, index: n.Expr, size: n.Expr | int, ranges: list[tuple[str, n.Expr, n.Expr]],
            sizes: dict[str, n.Expr | int] | None = None) -> bool:
        """z3's proof that `0 <= index < size` ("below"), `0 <= index <= size` ("fits"), `index == size` ("end"),
        or that `index` is in the domain of an operation ("nonzero", "nonnegative", "positive"; `size` unread)
        under the ranges, the known sizes (those here, or `sizes`) and the branch facts, each asked once (a loop's
        body is walked twice)."""
        sizes = self.sizes if sizes is None else sizes
        key = (kind, unparse(index), _text(size), tuple((v, unparse(lo), unparse(hi)) for v, lo, hi in ranges),
               tuple(sorted((k, _text(v)) for k, v in sizes.items())),
               tuple((unparse(c), holds) for c, holds in self.facts))
        if key not in self.answers:
            public = _Public(self.mech, ranges, sizes, self.facts)
            if kind == "below":
                self.answers[key] = public.proves(lambda t: zt.And(t(index) >= 0, t(index) < _size(t, size)))
            elif kind == "fits":
                self.answers[key] = public.proves(lambda t: zt.And(t(index) >= 0, t(index) <= _size(t, size)))
            elif kind in _DOMAINS:
                self.answers[key] = public.proves(lambda t: _DOMAINS[kind](t(index)))
            else:
                self.answers[key] = public.proves(lambda t: t(index) == _size(t, size))
        return self.answers[key]

    def in_domain(self, x: n.Expr, kind: str) -> bool:
        """z3 proves the operand `x`, which private data decides, nonzero (nonnegative, positive) wherever it is
        evaluated, from the same facts as a read's range (`ask`): a divisor `len(q)` inside a loop over `len(q)`."""
        return self.recording and self.tainted(x) and not self.reads_noise(x) and \
            self.ask(kind, x, 0, [r[:3] for r in self.ranges])

    def writable(self, s: n.Assign) -> bool:
        """The entry write `L[e] = v` cannot leave a gap: it overwrites an entry (`within`), appends one at the known
        size (`at_end`), or e is the innermost loop's iteration's entry (`_entry`: i, or i - c from c), L new before
        the loop, every path of every iteration writing it there and the loop writing it nowhere else (before the
        k-th iteration's write L has k entries)."""
        assert s.index is not None
        if self.within(s.index, s.target) or self.at_end(s.index, s.target):
            return True
        if not self.loops:
            return False
        loop, before = self.loops[-1]
        if not _entry(s, loop) or s.target in before:
            return False
        writes = [x for x in walk_statements(loop.body) if isinstance(x, n.Assign) and x.target == s.target]
        return all(_entry(x, loop) for x in writes) and _always_writes(loop.body, s.target, loop)

    def at_end(self, index: n.Expr, name: str) -> bool:
        """z3 proves the index equal to the list's known size here (0 for a list not written yet): a write there
        appends."""
        size = self.sizes.get(name, 0 if name not in self.written and self.mech.param(name) is None else None)
        if size is None:
            return False
        return self.ask("end", index, size, [r[:3] for r in self.ranges])

    def ranked(self, value: n.Expr, name: str) -> bool:
        """`value` is an entry of a list only ever assigned `top_k(name, k)` whole: an index of `name`."""
        if not isinstance(value, n.Index) or not isinstance(value.base, n.VarRef):
            return False
        sources = [x for x in walk_statements(self.mech.body) if isinstance(x, n.Assign) and x.target == value.base.id]
        return bool(sources) and all(x.index is None and _index_of(n.Index(x.value, value.index, value.span), name)
                                     for x in sources)

    def index_assigned(self, target: str, value: n.Expr) -> None:
        """Record whether the value assigned to a scalar variable is an index of each list that some read indexes
        with the variable (`known`): proved here, or, where it reads public values only (`0`), to be proved where
        it is read (a list only grows, so an index of it stays one; one assigned whole loses them all: `resize`)."""
        for name in self.wanted.get(target, ()):
            valid, deferred = self.known.setdefault(target, {}).get(name, (True, []))
            if not valid or self.within(value, name):
                self.known[target].setdefault(name, (valid, deferred))
            elif self.stable(value):
                self.known[target][name] = (True, [*deferred, value])
            else:
                self.known[target][name] = (False, [])

    def reads_noise(self, e: n.Expr) -> bool:
        if (isinstance(e, (n.VarRef, n.NoiseRef)) and e.id in self.noisy) or isinstance(e, n.MemberRef):
            return True
        return any(self.reads_noise(c) for c in children(e))

    def integer(self, e: n.Expr) -> bool:
        return _may_be_integer(e, self.integers)

    def public(self, e: n.Expr, hidden: bool, what: str, defined) -> None:
        """An operation on public values run under a condition that private data or noise decides: both neighbours
        would evaluate it alike, but only one may run it, so it must be defined for every value `requires` allows
        (proved by z3 over the public parameters: `_Public`)."""
        if not self.recording or not hidden or any(self.tainted(c) for c in children(e)):
            return  # not hidden, or a tainted operand, which `operands` judges
        if not _Public(self.mech, [(r[0], r[1], r[2]) for r in self.ranges], conditions=self.facts).proves(defined):
            self.found.append(Hazard(e.span, f"`{unparse(e)}` {what}, on one neighbour only: it runs under a "
                                             "condition that private data or noise decides, and `requires` does "
                                             "not rule the failure out"))

    def operands(self, e: n.Expr, decide: list[n.Expr], what: str, nonzero: bool = False, nonnegative: bool = False,
                 positive: bool = False, bounded: bool = False) -> None:
        for x in decide:
            if not self.tainted(x):
                continue
            if bounded and self.reads_noise(x):
                # beyond 2^63 only where noise is that far out: not found yet (docs/checker.md)
                continue
            site = self.mech.site(x.id) if isinstance(x, n.NoiseRef) else None
            if site is not None and _safe(site, nonzero, nonnegative, positive, bounded):
                continue
            self.found.append(Hazard(e.span, f"`{unparse(e)}` {what}, on one neighbour only: `{unparse(x)}` reads "
                                             "private data or noise"))
            return


def _bound(site: NoiseSite, bound: Operand | None) -> Fraction | None:
    """A bound of the site's support as a number: a constant, or a parameter written as a number."""
    if isinstance(bound, Fraction):
        return bound
    if isinstance(bound, Param) and bound.index < len(site.args):
        return n.literal_number(site.args[bound.index])
    return None


def _safe(site: NoiseSite, nonzero: bool, nonnegative: bool, positive: bool, bounded: bool) -> bool:
    """Whether a noise variable of this site, as the operand, cannot make the operation fail (but on a set of
    probability 0: a point, for noise with a density)."""
    distribution = site.distribution
    lo, hi = _bound(site, distribution.values.lower), _bound(site, distribution.values.upper)
    if positive:
        return lo is not None and (lo > 0 or (lo == 0 and distribution.continuous))
    if nonnegative:
        return lo is not None and lo >= 0
    if nonzero:
        return distribution.continuous or (lo is not None and lo > 0)
    if bounded:
        return lo is not None and hi is not None
    return False


def _sign(e: n.Expr, mech: ResolvedMechanism) -> str | None:
    """"positive" or "nonnegative" where the form of e says so whatever its values (`1 + abs(x)`, `exp(x)`, `x * x`,
    a sum of squares, noise whose support starts at 0 or above), else None."""
    if isinstance(e, n.Number):
        return "positive" if e.value > 0 else "nonnegative" if e.value == 0 else None
    if isinstance(e, n.NoiseRef):
        site = mech.site(e.id)
        lo = _bound(site, site.distribution.values.lower) if site is not None else None
        return None if lo is None else "positive" if lo > 0 else "nonnegative" if lo == 0 else None
    if isinstance(e, n.Call):
        if e.func == "exp":
            return "positive"
        if e.func in ("abs", "sqrt", "len", "count"):
            return "nonnegative"
        return None
    if isinstance(e, n.Comprehension) and e.func == "count":
        return "nonnegative"
    if isinstance(e, n.Comprehension) and e.func == "sum":
        return "nonnegative" if _sign(e.body, mech) is not None else None
    if isinstance(e, n.Binary):
        a, b = _sign(e.left, mech), _sign(e.right, mech)
        if e.op == "*" and unparse(e.left) == unparse(e.right):
            return "nonnegative" if a is None else a
        exponent = n.literal_number(e.right)
        if e.op == "^" and exponent is not None and exponent % 2 == 0:
            return "nonnegative"
        if e.op in ("+", "*", "/") and a is not None and b is not None:
            if e.op == "+":
                return "positive" if "positive" in (a, b) else "nonnegative"
            return "positive" if a == b == "positive" else "nonnegative"
    return None


_EXTREMA = ("max", "min", "argmax", "argmin")




def _type(e: n.Expr) -> Any:
    return getattr(e, "type", None)


def _size(term: Any, size: n.Expr | int) -> Any:
    return zt.IntVal(size) if isinstance(size, int) else term(size)


def _entries(body: tuple[n.Stmt, ...]) -> set[tuple[str, str]]:
    """The entries `(list, index text)` that the statements write at their top level, where no `break` among them
    can end the loop before the write."""
    if any(isinstance(s, n.Break) for s in walk_statements(body)):
        return set()
    return {(s.target, unparse(s.index)) for s in body if isinstance(s, n.Assign) and s.index is not None}


def _over(lo: n.Expr, hi: n.Expr, name: str) -> bool:
    """`lo .. hi` is a range of indices of the list `name`: lo a number >= 0, hi at most `len(name)` by its form
    (`len(name)`, `len(name) - c` with a number c >= 0, `min(..., len(name), ...)`)."""
    start = n.literal_number(lo)
    return start is not None and start >= 0 and _at_most_length(hi, name)


def _at_most_length(e: n.Expr, name: str) -> bool:
    if isinstance(e, n.Call) and e.func == "len":
        return isinstance(e.args[0], (n.VarRef, n.ParamRef)) and e.args[0].id == name
    if isinstance(e, n.Call) and e.func == "min":
        return any(_at_most_length(a, name) for a in e.args)
    if isinstance(e, n.Binary) and e.op == "-":
        c = n.literal_number(e.right)
        return c is not None and c >= 0 and _at_most_length(e.left, name)
    return False


def _text(x: n.Expr | int) -> str:
    return str(x) if isinstance(x, int) else unparse(x)


def _same(a: dict[str, n.Expr | int], b: dict[str, n.Expr | int]) -> dict[str, n.Expr | int]:
    """The sizes two paths agree on."""
    return {k: v for k, v in a.items() if k in b and _text(b[k]) == _text(v)}


def _entry_text(loop: n.For) -> str | None:
    """The index of the loop's iteration's entry, counted from 0: `i` for `i in 0 .. n`, `i - c` for `i in c .. n`
    (c a number)."""
    start = n.literal_number(loop.lo)
    if start is None or start.denominator != 1:
        return None
    return loop.var if start == 0 else f"{loop.var} - {start}"


def _entry(s: n.Stmt, loop: n.For) -> bool:
    """`s` writes an entry at the loop's iteration's entry (`_entry_text`)."""
    return isinstance(s, n.Assign) and s.index is not None and unparse(s.index) == _entry_text(loop)


def _always_writes(body: tuple[n.Stmt, ...], target: str, loop: n.For) -> bool:
    """Every path through the statements writes `target` at the loop's iteration's entry (at their top level, or in
    both branches of an `if`)."""
    return any((_entry(s, loop) and isinstance(s, n.Assign) and s.target == target) or
               (isinstance(s, n.If) and _always_writes(s.then, target, loop) and _always_writes(s.orelse, target, loop))
               for s in body)


def _names(e: n.Expr) -> frozenset[str]:
    """The variables, parameters, noise and indices that e reads."""
    return frozenset(x.id for x in walk(e) if isinstance(x, (n.VarRef, n.ParamRef, n.NoiseRef, n.LocalRef)))


def _uniform(mech: ResolvedMechanism) -> dict[str, n.Expr]:
    """The variables whose every assignment is the same expression of public values alone (`n = len(q)` in a loop):
    that value wherever they have one."""
    values: dict[str, list[n.Assign]] = {}
    for s in walk_statements(mech.body):
        if isinstance(s, n.Assign):
            values.setdefault(s.target, []).append(s)
    return {name: found[0].value for name, found in values.items()
            if all(a.index is None and unparse(a.value) == unparse(found[0].value) for a in found) and
            _public_only(found[0].value, mech)}


def _public_only(e: n.Expr, mech: ResolvedMechanism) -> bool:
    if isinstance(e, n.Call) and e.func == "len":
        return isinstance(e.args[0], n.ParamRef)
    if isinstance(e, n.ParamRef):
        param = mech.param(e.id)
        return param is not None and param.public
    if isinstance(e, (n.VarRef, n.LocalRef, n.NoiseRef, n.MemberRef, n.Index, n.Comprehension)):
        return False
    return all(_public_only(c, mech) for c in children(e))


def _expressions(body: tuple[n.Stmt, ...]) -> list[n.Expr]:
    """Every expression of the statements and their subexpressions."""
    found: list[n.Expr] = []
    for s in walk_statements(body):
        parts: tuple[n.Expr | None, ...] = ()
        if isinstance(s, n.Assign):
            parts = (s.value, s.index)
        elif isinstance(s, n.Sample):
            parts = s.args
        elif isinstance(s, n.Output):
            parts = (s.value,)
        elif isinstance(s, n.If):
            parts = (s.condition,)
        elif isinstance(s, n.For):
            parts = (s.lo, s.hi)
        for part in parts:
            found += walk(part) if part is not None else []
    return found


def _index_of(value: n.Expr, name: str) -> bool:
    """`value` is an index of the list `name` when `name` is not empty: `argmax(name)`, `argmin(name)`, their
    comprehensions over `lo .. len(name)` (an empty list stops the run there, which `hazards` judges apart), or an
    entry of `top_k(name, k)` (an entry past its k is judged as a read of it)."""
    if isinstance(value, n.Index) and isinstance(value.base, n.Call) and value.base.func == "top_k":
        return isinstance(value.base.args[0], (n.VarRef, n.ParamRef)) and value.base.args[0].id == name
    if isinstance(value, n.Call) and value.func in ("argmax", "argmin") and len(value.args) == 1:
        return isinstance(value.args[0], (n.VarRef, n.ParamRef)) and value.args[0].id == name
    return isinstance(value, n.Comprehension) and value.func in ("argmax", "argmin") and \
        isinstance(value.domain, n.Range) and value.excluded is None and \
        _over(value.domain.lo, value.domain.hi, name)


def _join(a: dict[str, bool], b: dict[str, bool], hidden: bool) -> dict[str, bool]:
    """The names with a value after two paths meet: those with one on both (tainted if either is), and those with one
    on one path only, tainted, if a tainted condition chose the path or they were tainted there."""
    joined: dict[str, bool] = {}
    for name in a.keys() | b.keys():
        if name in a and name in b:
            joined[name] = a[name] or b[name]
        elif hidden or a.get(name) or b.get(name):  # the path that has it may still lack it on one neighbour
            joined[name] = True
    return joined


def _may_be_integer(e: n.Expr, integers: set[str]) -> bool:
    """Whether e may be an integer at run time (`integers`: the variables that may hold one)."""
    if isinstance(e, n.Number):
        return e.is_integer
    if isinstance(e, n.VarRef):
        return e.id in integers
    if isinstance(e, n.Binary) and e.op in ("+", "-", "*", "//", "%"):
        return _may_be_integer(e.left, integers) and _may_be_integer(e.right, integers)
    if isinstance(e, n.Unary):
        return e.op == "-" and _may_be_integer(e.operand, integers)
    if isinstance(e, n.Conditional):
        return _may_be_integer(e.then, integers) or _may_be_integer(e.orelse, integers)
    return getattr(e, "type", None) == INT


def _integer_variables(mech: ResolvedMechanism) -> set[str]:
    """The variables that may hold an integer at run time: assigned one on some path (a real variable assigned `2`
    holds the integer 2), to a fixpoint (`w = v`)."""
    assigns = [s for s in walk_statements(mech.body) if isinstance(s, n.Assign) and s.index is None]
    found: set[str] = set()
    while True:
        more = {a.target for a in assigns if _may_be_integer(a.value, found)}
        if more <= found:
            return found
        found |= more


def _positive_number(e: n.Expr) -> bool:
    value = n.literal_number(e)
    return value is not None and value > 0


def _whole_nonnegative(e: n.Expr) -> bool:
    value = n.literal_number(e)
    return value is not None and value >= 0 and value.denominator == 1


_DOMAINS: dict[str, Any] = {"nonzero": lambda x: x != 0, "nonnegative": lambda x: x >= 0, "positive": lambda x: x > 0}
"""The domains `_Walk.ask` proves an operand in."""

LONGEST_LIST = 2 ** 40
"""More entries than any list has (`_Magnitudes`): 8 TiB of doubles. A count or a length is below it."""

INT64_BOUND = 2 ** 63
"""The interpreter's integers are those of magnitude below this (and -2^63): `_Magnitudes` proves a result below it."""


class _Magnitudes:
    """An upper bound of |e| for integer expressions, whatever the inputs (None where there is none): numbers,
    lengths (below LONGEST_LIST), counts, loop and comprehension indices within bounded ranges, `+ - * // %`, `abs`,
    `min`, `max`, `clamp`, `?:`, the parameters (and entries of list parameters) whose declared domain has bounded
    ends, and the variables and list entries every assignment of which is bounded or adds a
    bounded value to itself (`c = c + 1`, `h[j] = h[j] + 1`): such an assignment runs at most MAX_LOOP_ITERATIONS
    times in a loop (the interpreter's limit for all loops together), once outside. Flow-insensitive: a name's bound
    covers each of its assignments of a value that may be an integer (a real one makes the arithmetic on it a
    double's), a loop variable's each loop over it. Parameters, private or public, have none but their domain's.
    With it, `c + 1` for a count is not an overflow hazard (`_Walk.expr`), while `x + 1` with x a private int is."""

    def __init__(self, mech: ResolvedMechanism):
        self.mech = mech
        self.integers = _integer_variables(mech)
        self.ranges: dict[str, list[n.Expr | None]] = {}
        """The ranges' bounds of each loop and comprehension variable (None: a list's indices)."""
        for s in walk_statements(mech.body):
            if isinstance(s, n.For):
                self.ranges.setdefault(s.var, []).extend((s.lo, s.hi))
        for e in _expressions(mech.body):
            if isinstance(e, n.Comprehension):
                domain = e.domain
                self.ranges.setdefault(e.var, []).extend(
                    (domain.lo, domain.hi) if isinstance(domain, n.Range) else (None,))
        self.assignments: dict[str, list[tuple[n.Expr, bool, bool]]] = {}
        """Each assignment's value, whether it is to an entry, and whether it runs in a loop."""
        self._collect(mech.body, False)
        self.bounds: dict[str, int | None] = {}
        self._solving: set[str] = set()

    def _collect(self, body: tuple[n.Stmt, ...], looped: bool) -> None:
        for s in body:
            if isinstance(s, n.Assign):
                self.assignments.setdefault(s.target, []).append((s.value, s.index is not None, looped))
            elif isinstance(s, n.Sample):
                self.assignments.setdefault(s.var, []).append((s, False, looped))  # type: ignore[arg-type]
            elif isinstance(s, n.If):
                self._collect(s.then, looped)
                self._collect(s.orelse, looped)
            elif isinstance(s, n.For):
                self._collect(s.body, True)

    def name(self, name: str) -> int | None:
        """The bound of a variable (or of a list variable's entries)."""
        if name in self.bounds:
            return self.bounds[name]
        if name in self._solving or name not in self.assignments:
            return None  # a cycle other than adding to itself, or a name no statement assigns (a parameter)
        self._solving.add(name)
        self.bounds[name] = self._assigned(name)
        self._solving.discard(name)
        return self.bounds[name]

    def _assigned(self, name: str) -> int | None:
        """The bound of the integers that `name`'s assignments give it (`name`)."""
        start, step = 0, 0
        for value, entry, looped in self.assignments[name]:
            if isinstance(value, n.Sample):
                return None
            if not _may_be_integer(value, self.integers) and not isinstance(value, n.ListLit):
                continue  # a real value: arithmetic on it is in doubles, which do not overflow
            added = self._increment(value, name)
            if added is not None:
                b = self.bound(added)
                if b is None:
                    return None
                step += b * (MAX_LOOP_ITERATIONS if looped else 1)
                continue
            if isinstance(value, n.ListLit) and not entry:
                b = self._max(list(value.items))
            else:
                b = self.bound(value)
            if b is None:
                return None
            start = max(start, b)
        return start + step

    @staticmethod
    def _increment(value: n.Expr, name: str) -> n.Expr | None:
        """x in `name + x`, `x + name` or `name - x` (an entry `name[j]` for a list), else None."""
        def own(e: n.Expr) -> bool:
            return (isinstance(e, n.VarRef) and e.id == name) or \
                (isinstance(e, n.Index) and isinstance(e.base, n.VarRef) and e.base.id == name)
        if isinstance(value, n.Binary) and value.op in ("+", "-"):
            if own(value.left) and not _reads(value.right, name):
                return value.right
            if value.op == "+" and own(value.right) and not _reads(value.left, name):
                return value.left
        return None

    def bound(self, e: n.Expr) -> int | None:
        """The bound of the values of e that are integers at run time (0 where none is: a double does not overflow,
        and `q[l] >= 0 ? q[l] : 0` over a real q is an integer only where it is 0)."""
        if not _may_be_integer(e, self.integers):
            return 0
        if isinstance(e, n.Conditional):
            return self._max([x for x in (e.then, e.orelse) if _may_be_integer(x, self.integers)])
        if isinstance(e, n.Number):
            return int(abs(e.value)) + 1
        if isinstance(e, n.VarRef):
            return self.name(e.id)
        if isinstance(e, n.LocalRef):
            bounds = [LONGEST_LIST if x is None else self.bound(x) for x in self.ranges.get(e.id, [None])]
            return None if None in bounds else max(bounds)  # type: ignore[type-var]
        if isinstance(e, n.Index) and isinstance(e.base, n.VarRef):
            return self.name(e.base.id)
        ref = e.base if isinstance(e, n.Index) else e
        if isinstance(ref, n.ParamRef):  # a parameter (or a list parameter's entry) in a declared domain
            param = self.mech.param(ref.id)
            declared = param.domain if param is not None else None
            return self._max([declared.lo, declared.hi]) if declared is not None else None
        if isinstance(e, n.Unary) and e.op == "-":
            return self.bound(e.operand)
        if isinstance(e, n.Binary) and e.op in ("+", "-", "*", "//", "%"):
            a, b = self.bound(e.left), self.bound(e.right)
            if e.op == "//":
                return a
            if e.op == "%":
                return b
            if a is None or b is None:
                return None
            return a + b if e.op in ("+", "-") else a * b
        if isinstance(e, n.Call):
            if e.func in ("len", "argmax", "argmin"):  # a length, an index
                return LONGEST_LIST
            if e.func in ("abs", "min", "max"):
                return self._max(list(e.args))
            if e.func == "clamp":
                return self._max(list(e.args[1:]))
            return None
        if isinstance(e, n.Comprehension):
            domain = e.domain
            if isinstance(domain, n.Range):
                lo, hi = self.bound(domain.lo), self.bound(domain.hi)
                count = None if lo is None or hi is None else lo + hi
            else:
                count = LONGEST_LIST
            if e.func == "count":
                return count
            if e.func == "sum":
                body = self.bound(e.body)
                return None if body is None or count is None else body * count
            if e.func in ("max", "min"):
                return self.bound(e.body)
            if e.func in ("argmax", "argmin"):
                return self.bound(n.LocalRef(e.var, e.var_span))
        return None

    def _max(self, items: list[n.Expr]) -> int | None:
        bounds = [self.bound(x) for x in items]
        return None if None in bounds else max(bounds, default=0)  # type: ignore[type-var]

    def within(self, e: n.Expr) -> bool:
        """Whether e surely stays within the interpreter's integers (and each of its partial sums, for `sum`)."""
        b = self.bound(e)
        return b is not None and b < INT64_BOUND


def _reads(e: n.Expr, name: str) -> bool:
    return any(isinstance(x, n.VarRef) and x.id == name for x in walk(e))  # (a list's entry: its base)


@lru_cache(maxsize=64)
def _magnitudes(mech: ResolvedMechanism) -> _Magnitudes:
    return _Magnitudes(mech)


class _Public:
    """z3 terms of values that public parameters alone decide: numbers, public scalar parameters, lengths of lists
    whose length is public, the constants computed from them, indices of enclosing loops (within their ranges),
    `+ - * /`, negation, `abs`, `min`, `max` and `exp` (by its sign facts); `requires` as the assumptions (the
    conditions it can read). Anything else has no term, and nothing is proved of it."""

    def __init__(self, mech: ResolvedMechanism, ranges: list[tuple[str, n.Expr, n.Expr]],
                 sizes: dict[str, n.Expr | int] | None = None, conditions: Sequence[tuple[n.Expr, bool]] = ()):
        self.mech = mech
        self.ranges = ranges
        self.sizes = sizes
        self.conditions = list(conditions)
        """The branch conditions that hold here (`_Walk.facts`), assumed where they have a term."""
        """Given (`_Walk.within`): the length of every list parameter is a symbol, private or not (a proof for every
        length is a proof for both neighbours'), and a list made in the body has its known size."""
        self.facts: list[z3.BoolRef] = []
        self.fresh = 0
        self.definitions = {s.target: s.value for s in mech.body if isinstance(s, n.Assign) and s.index is None
                            and s.target in mech.constants}
        if sizes is not None:
            self.definitions.update(_uniform(mech))

    def proves(self, defined) -> bool:
        with zt.scratch_context():
            try:
                claim = defined(self.term)
            except _NoTerm:
                return False
            assumptions: list[z3.BoolRef] = []
            for r in self.mech.requires:
                try:
                    assumptions.append(self.term(r))
                except _NoTerm:
                    continue  # a condition it cannot read: assuming less proves less
            for var, lo, hi in self.ranges:
                try:
                    i = zt.Int(var)
                    assumptions += [self.term(lo) <= i, i < self.term(hi)]
                except _NoTerm:
                    continue
            for condition, holds in (atom for c in self.conditions for atom in _atoms(*c)):
                try:
                    fact = self.term(condition)
                except _NoTerm:
                    continue  # (`q[0] > 0`: private, no term; assuming less proves less)
                assumptions.append(fact if holds else z3.Not(fact))
            # the facts of every term built above (lengths >= 0, what exp is), requires' and the loops' included
            answer = check_valid([*self.facts, *assumptions], claim, _LIMITS, vacuity=False)
            return answer.status == Validity.PROVED

    def term(self, e: n.Expr) -> Any:
        if isinstance(e, n.Number):
            return zt.IntVal(int(e.value)) if e.is_integer else zt.RealVal(e.value)
        if isinstance(e, n.BoolLit):
            return zt.BoolVal(e.value)
        if isinstance(e, n.ParamRef) and not e.primed:
            param = self.mech.param(e.id)
            if param is not None and param.public and param.type in (INT, REAL):
                return zt.Int(e.id) if param.type == INT else zt.Real(e.id)
        if isinstance(e, n.VarRef) and not e.primed and e.id in self.definitions:
            return self.term(self.definitions[e.id])
        if isinstance(e, n.LocalRef) and any(var == e.id for var, _, _ in self.ranges):
            return zt.Int(e.id)
        if isinstance(e, n.Call) and e.func == "len" and isinstance(e.args[0], n.ParamRef):
            param = self.mech.param(e.args[0].id)
            if param is not None and (param.length_public or self.sizes is not None):
                length = zt.Int(f"len({e.args[0].id})")
                self.facts.append(length >= 0)
                return length
        if isinstance(e, n.Call) and e.func == "len" and isinstance(e.args[0], n.VarRef) and self.sizes is not None:
            # a list made in the body: its known size, else its length now, a symbol (a list only grows; a range
            # over it whose loop assigns it whole is not among the facts: `_Walk.proved`)
            size = self.sizes.get(e.args[0].id)
            if size is not None:
                return zt.IntVal(size) if isinstance(size, int) else self.term(size)
            length = zt.Int(f"len({e.args[0].id})")
            self.facts.append(length >= 0)
            return length
        if isinstance(e, n.Call) and e.func == "exp":
            # what the proofs of definedness need of exp: positive, and above, at or below 1 with its argument's sign
            x = self.term(e.args[0])
            x = z3.ToReal(x) if z3.is_int(x) else x
            value = zt.Function("exp", zt.RealSort(), zt.RealSort())(x)
            self.facts += [value > 0, z3.Implies(x > 0, value > 1), z3.Implies(x < 0, value < 1),
                           z3.Implies(x == 0, value == 1)]
            return value
        if self.sizes is not None and isinstance(e, n.Conditional):
            # for every value: a condition without a term is either way (`q[0] > 0 ? 1 : 0` is 0 or 1)
            try:
                condition = self.term(e.condition)
            except _NoTerm:
                self.fresh += 1
                condition = zt.Bool(f"%either{self.fresh}")
            return z3.If(condition, self.term(e.then), self.term(e.orelse))
        if self.sizes is not None and isinstance(e, n.Call) and e.func in ("argmax", "argmin") and \
                len(e.args) == 1 and isinstance(e.args[0], (n.VarRef, n.ParamRef)):
            # an index of the list (an empty one stops there: `_Walk.empty`)
            self.fresh += 1
            index = zt.Int(f"%index{self.fresh}")
            length = self.term(n.Call("len", (e.args[0],), e.span, e.span))
            self.facts += [index >= 0, index < length]
            return index
        if self.sizes is not None and isinstance(e, n.Call) and e.func == "clamp" and len(e.args) == 3:
            # between its bounds, whatever its value (a private one too): where lo > hi the run stops at the clamp,
            # before whatever reads its value (that stop is `hazards`' own finding), so lo <= hi here
            lo, hi = self.term(e.args[1]), self.term(e.args[2])
            self.fresh += 1
            value = zt.Real(f"%clamped{self.fresh}") if e.type == REAL else zt.Int(f"%clamped{self.fresh}")
            self.facts += [lo <= hi, lo <= value, value <= hi]
            try:
                x = self.term(e.args[0])
                self.facts.append(value == z3.If(x < lo, lo, z3.If(x > hi, hi, x)))
            except _NoTerm:
                pass
            return value
        if self.sizes is not None and isinstance(e, n.Binary) and e.op == "%":
            # with the sign of the divisor, below it in size, whatever the dividend (where the divisor is 0 the run
            # stops there first)
            divisor = self.term(e.right)
            self.fresh += 1
            value = zt.Real(f"%remainder{self.fresh}") if e.type == REAL else zt.Int(f"%remainder{self.fresh}")
            self.facts += [divisor != 0, z3.Implies(divisor > 0, zt.And(value >= 0, value < divisor)),
                           z3.Implies(divisor < 0, zt.And(value <= 0, value > divisor))]
            return value
        if isinstance(e, n.Call) and e.func in ("min", "max") and e.args:
            values = [self.term(a) for a in e.args]
            result = values[0]
            for x in values[1:]:
                result = z3.If(x < result, x, result) if e.func == "min" else z3.If(x > result, x, result)
            return result
        if isinstance(e, n.Call) and e.func == "abs":
            x = self.term(e.args[0])
            return z3.If(x >= 0, x, -x)
        if isinstance(e, n.Unary):
            x = self.term(e.operand)
            return z3.Not(x) if e.op == "not" else -x
        if isinstance(e, n.Binary) and e.op in ("+", "-", "*", "/"):
            a, b = self.term(e.left), self.term(e.right)
            if e.op == "/":
                return z3.ToReal(a) / z3.ToReal(b) if z3.is_int(a) and z3.is_int(b) else a / b
            return RING_OPERATIONS[e.op](a, b)
        if isinstance(e, n.Compare):
            values = [self.term(x) for x in e.operands]
            parts = [COMPARISONS[op](a, b) for op, a, b in zip(e.ops, values, values[1:])]
            return zt.And(parts)
        if isinstance(e, n.BoolOp):
            a, b = self.term(e.left), self.term(e.right)
            return zt.And(a, b) if e.op == "and" else zt.Or(a, b)
        raise _NoTerm


def _at_entry(bound: n.Expr, resized: set[str], sizes: dict[str, n.Expr | int]) -> n.Expr:
    """A loop's bound as it was read at the loop's entry: `len(L)` of a list the body writes is the size L had then
    where it was known, else a name that no proof can read (the range is then not a fact)."""
    def entry(e: n.Expr) -> n.Expr | None:
        if not (isinstance(e, n.Call) and e.func == "len" and isinstance(e.args[0], n.VarRef)
                and e.args[0].id in resized):
            return None
        size = sizes.get(e.args[0].id)
        if size is None:
            return n.VarRef(f"%len({e.args[0].id}) at the loop's entry", False, e.span)
        return n.Number(Fraction(size), True, e.span) if isinstance(size, int) else size
    return rewrite(bound, entry)


def _atoms(condition: n.Expr, holds: bool) -> Iterator[tuple[n.Expr, bool]]:
    """The parts of a condition that hold (or not) on their own where it holds (or not): both operands of an `and`
    that holds or of an `or` that does not, through `not`; each part is assumed where it has a term."""
    if isinstance(condition, n.Unary) and condition.op == "not":
        yield from _atoms(condition.operand, not holds)
    elif isinstance(condition, n.BoolOp) and (condition.op == "and") == holds:
        yield from _atoms(condition.left, holds)
        yield from _atoms(condition.right, holds)
    else:
        yield condition, holds


class _NoTerm(Exception):
    """An expression `_Public` has no term for."""


_LIMITS = Limits(rlimit=2_000_000)
"""Small queries over the public parameters: a tenth of the checker's step limit (an unknown is no proof)."""
