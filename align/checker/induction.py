"""Unbounded proofs: Lemma 1's obligations for every input length, by induction over the main loop.

Applies to mechanisms of the SVT shape: statements without loops (the prefix), then one loop
`for i in 0 .. len(q)` over the queries (or `for i in 0 .. B`, B public), and nothing after it. Lists with a
private length (add/remove-one-record clauses) are read only through their folds (Encoding.summary), and the
record's share of the folds is spent as a budget of 1 once z3 proves it lands in at most one iteration
(`_record_budget`). Inside the loop, list parameters are read at
the loop index only (q[i], q'[i]), noise drawn in the loop is a family indexed by i, and the alignment reads
the output at the loop index only (out[i]); each iteration that runs outputs exactly one item.

The proof runs the prefix twice (on D with H and on D' with φ(H)), then one *abstract* iteration from a
symbolic loop-head state of both runs and of the aligned cost so far. A loop invariant is found by Houdini
elimination over candidates of the shapes that LightDP/ShadowDP-style proofs use, built from the program:

- a loop-carried variable has the same value in both runs (x' = x), or keeps its distance at entry
  (x' - x = d, e.g. the noisy threshold, T̃' = T̃ + 1);
- the aligned cost so far is at most a program variable that tracks the budget (aligned_cost <= cost), or
  at most the claim;
- the negation of every `break` condition holds at the loop head (cost <= eps - eps1);
- `invariant` clauses written in the alignment block (aligned_cost, primed names = the aligned run).

Candidates that do not hold at entry, or are not preserved by an iteration that continues, are dropped until
the rest is inductive. The obligations then become facts about one iteration (C4a: equal outputs and the
same decision to stop; C4c: aligned cost within the claim at every head and after a `break`; C4d, C3: the
shifts of the iteration), plus the prefix.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypedDict, TypeVar

import z3

from .. import nodes as n
from ..obligations import ObligationId
from ..resolve import ResolvedMechanism, ResolvedParam, children, statement_exprs, walk, walk_statements
from ..results import Conjunct
from ..smt import terms as zt
from ..smt.chc import cast_like, constants_of, find_invariant
from ..smt.encode import (
    CURRENT,
    OUTPUT_TIES,
    Z3_SPLIT_OPS,
    Draw,
    Encoding,
    EncodingError,
    ExprEval,
    IterOutput,
    LoopList,
    OutputSeq,
    RecordList,
    Run,
    TagV,
    Value,
    _real,
    _symbols,
    _term,
    default_value,
    equal,
    note_equality_ties,
    record_adjacency,
    same_index,
    tag_code,
)
from ..smt.solver import Limits, Validity, check_valid
from ..symbolic import NotSymbolic, formula_text, from_z3, simplify, to_z3, z3_text
from ..types import INT, ListType
from ..unparse import unparse
from . import acyclic, bounds
from .every_length import Context, Inductive, NotInductive, draw_conditions

NAME = "induction"
"""How the report names this proof when it declines."""


@dataclass(frozen=True)
class _Naming:
    """An invariant's text that names a formula (`b`, a z3 term of the parameters), made a `Conjunct` only if the
    invariant keeps it (sympy's simplify takes milliseconds)."""

    text: str
    name: str
    term: z3.ExprRef


def _conjunct(text: str | _Naming) -> Conjunct:
    if isinstance(text, str):
        return Conjunct(text)
    try:
        return Conjunct(text.text, ((text.name, simplify(from_z3(text.term))),))
    except NotSymbolic:
        return Conjunct(f"{text.text}, {text.name} = {z3_text(text.term)}")


def _shape(mech: ResolvedMechanism) -> tuple[list[n.Stmt], n.For, list[n.Stmt]]:
    """The prefix, the loop and the statements after it (`_Exit`)."""
    body = list(mech.body)
    loops = [k for k, s in enumerate(body) if isinstance(s, n.For)]
    if not loops:
        raise NotInductive("the body has no loop (a body without one is proved by fixed entries or by the records' "
                           "summaries, which did not apply)")
    if len(loops) != 1 or any(isinstance(s, (n.For, n.While)) for s in walk_statements(body[loops[0] + 1:])):
        lines = ", ".join(str(body[k].span.line) for k in loops)
        raise NotInductive(f"the body is not a prefix, one loop and statements without a loop: loops at lines {lines} "
                           "(loops in sequence are proved when they fuse into one, or part by part: see those notes)")
    loop = body[loops[0]]
    assert isinstance(loop, n.For)  # the one loop
    prefix, suffix = body[:loops[0]], body[loops[0] + 1:]
    nested = [s for s in walk_statements(loop.body) if isinstance(s, (n.For, n.While))]
    if nested:
        raise NotInductive(f"the loop at line {nested[0].span.line} is nested in another (a nested loop that only "
                           "computes a sum or a count is read as a fold, `sum(...)`/`count(...)`, when it draws no "
                           "noise, outputs nothing and does not break)")
    over_list = isinstance(loop.hi, n.Call) and loop.hi.func == "len" and isinstance(loop.hi.args[0], n.ParamRef)
    if not (isinstance(loop.lo, n.Number) and loop.lo.value == 0 and (over_list or _public_bound(mech, loop.hi))):
        raise NotInductive(f"the loop at line {loop.span.line} is not `for i in 0 .. len(q)` or over a public bound "
                           f"(it runs over `{unparse(loop.lo)} .. {unparse(loop.hi)}`)")
    if over_list:
        # one abstract iteration of both runs: they must iterate together (specs/incorrect/records_loop_outputs.dp)
        assert isinstance(loop.hi, n.Call) and isinstance(loop.hi.args[0], n.ParamRef)  # over_list
        runs_over = mech.param(loop.hi.args[0].id)
        if runs_over is not None and not runs_over.length_public:
            raise NotInductive(f"the loop runs over {runs_over.name}, whose length differs between neighbours")
    built = [s for s in walk_statements(loop.body) if isinstance(s, n.Assign) and s.index is not None]
    if built:
        raise NotInductive(f"the loop builds a list, `{built[0].target}` (line {built[0].span.line}): a list read only "
                           "at the loop's index after this iteration writes it, on every path, is the iteration's "
                           "value; a list read by a later loop over the same range fuses with it")
    if over_list:
        for p in mech.params:
            for adj in p.adjacency:
                if adj.rule.measure is not None and p.name != _loop_list(loop):
                    raise NotInductive(f"`{adj.rule.total_text(p.name)}` is bounded on a list the loop does not "
                                       "run over")
    if suffix:
        if any(isinstance(s, (n.Output, n.Break)) for s in walk_statements(loop.body)) or \
                any(isinstance(s, n.Output) for s in walk_statements(prefix)):
            raise NotInductive("statements after the loop, and an output or a `break` before them")
        if any(isinstance(s, n.Output) for s in walk_statements(suffix) if s not in suffix):
            raise NotInductive("an output after the loop under a condition")
    return prefix, loop, suffix


def _indexed_lists(mech: ResolvedMechanism, by_position_only: bool = False) -> dict[str, str]:
    """The list parameters with a public length that the loop reads at its index, or (unless `by_position_only`)
    whose clause bounds a total over their entries, each with what does (a read `q[e]` in the body or the
    alignment, or the clause): the proof needs the loop's bound to be at most their length."""
    found: dict[str, str] = {}
    roots = [e for st in walk_statements(mech.body) for e in statement_exprs(st)]
    if mech.alignment is not None:
        roots += [let.value for let in mech.alignment.lets] + [s.shift for s in mech.alignment.shifts]
    for x in (y for e in roots for y in walk(e)):
        if isinstance(x, n.Index) and isinstance(x.base, n.ParamRef) and not isinstance(x.index, n.Number):
            p = mech.param(x.base.id)
            if p is not None and isinstance(p.type, ListType) and p.length_public:
                found.setdefault(p.name, f"`{unparse(x)}` reads it by position")
    for p in mech.params if not by_position_only else ():
        for adj in p.adjacency:
            if adj.rule.measure is not None:
                found.setdefault(p.name, f"`{adj.rule.total_text(p.name)}` is bounded over its entries")
    return found


def _public_bound(mech: ResolvedMechanism, e: n.Expr) -> bool:
    """Whether the loop bound e reads only numbers, public scalar parameters and the lengths of lists with a
    public length, through arithmetic, `min` and `max` (`for j in 0 .. B`, `0 .. min(T + 1, len(q))`): the same
    number of iterations in both runs, a symbol of its own in the proof."""
    if isinstance(e, n.Number):
        return True
    if isinstance(e, n.ParamRef):
        p = mech.param(e.id)
        return p is not None and p.public and not isinstance(p.type, ListType)
    if isinstance(e, n.Call) and e.func == "len" and len(e.args) == 1 and isinstance(e.args[0], n.ParamRef):
        p = mech.param(e.args[0].id)
        return p is not None and p.length_public
    if (isinstance(e, n.Call) and e.func in ("min", "max")) or isinstance(e, (n.Binary, n.Unary)):
        return all(_public_bound(mech, child) for child in children(e))
    return False


def _loop_list(loop: n.For) -> str | None:
    """q of the loop `for i in 0 .. len(q)` that `_shape` accepted; None for a loop over a public bound."""
    if isinstance(loop.hi, n.Call) and loop.hi.func == "len" and isinstance(loop.hi.args[0], n.ParamRef):
        return loop.hi.args[0].id
    return None


def _loop_bound(loop: n.For, enc: Encoding, lengths: dict) -> z3.ArithRef:
    """The number of iterations: the symbolic length of q, or the public bound's value."""
    q = _loop_list(loop)
    return lengths[q] if q is not None else ExprEval(enc, dict(enc.params), {}).arith(loop.hi)


def _code(slot: Value) -> z3.ArithRef:
    """The tag number of an output slot (the ghost counters exist only for tagged outputs)."""
    assert isinstance(slot, TagV), "a ghost counter reads a tagged output"
    return slot.code


class _State(TypedDict):
    """Where a candidate invariant is read: both runs' variables, the aligned cost so far, the loop index and
    the number of outputs of each tag so far."""

    s1: dict[str, Value]
    s2: dict[str, Value]
    acost: z3.ArithRef
    i: z3.ArithRef
    g: dict[str, z3.ArithRef]
    u: dict[str, z3.ArithRef]
    w: dict[str, z3.ArithRef]
    f: dict[str, z3.ExprRef]


@dataclass(frozen=True)
class _Fold:
    """A ghost for `max`, `min`, `sum` or `count(l in 0 .. n ...: f(l))` over the loop's whole range, read by the
    alignment while the loop runs (Free Gap's best loser `max(l not in [out[0]]: q[l] + eta[l])`): its value is
    a prophecy M, a symbol fixed for the whole run, and the ghost G (with `seen`, whether a member passed) folds
    f(i) into itself at every iteration whose i is a member. Where the loop ends the proof assumes G = M (when a
    member passed, for max and min: a max over nothing is not defined, which C4a's claim at the end says), so it
    covers every run (`_Exit`)."""

    text: str
    func: str
    member: z3.BoolRef
    """Whether this iteration's index is a member (range, exclusions, filter)."""
    current: z3.ExprRef
    """f(i)."""
    head: z3.ExprRef
    seen: z3.BoolRef
    prophecy: z3.ExprRef

    def after(self) -> tuple[z3.ExprRef, z3.BoolRef]:
        """(G, seen) after this iteration."""
        g, x = self.head, self.current
        if self.func == "count":
            return z3.If(self.member, g + 1, g), zt.Or(self.seen, self.member)
        if self.func == "sum":
            return z3.If(self.member, g + x, g), zt.Or(self.seen, self.member)
        better = x > g if self.func == "max" else x < g
        return z3.If(self.member, z3.If(zt.And(self.seen, z3.Not(better)), g, x), g), zt.Or(self.seen, self.member)

    def entry(self) -> tuple[z3.ExprRef, z3.BoolRef]:
        return (zt.IntVal(0) if z3.is_int(self.head) else zt.RealVal(0)), zt.BoolVal(False)

    def at_end(self) -> z3.BoolRef:
        """What the end assumes: the ghost is the prophecy."""
        if self.func in ("max", "min"):
            return z3.Implies(self.seen, self.head == self.prophecy)
        return self.head == self.prophecy

    def defined(self) -> z3.BoolRef:
        """The comprehension has a value (a max or min over at least one member)."""
        return self.seen if self.func in ("max", "min") else zt.BoolVal(True)


@dataclass(frozen=True)
class _PrefixFold:
    """A ghost for `sum` or `count(l in 0 .. i + 1: f(l))` (or `0 .. i`) read by the alignment: f summed over the
    iterations before this one (`head`, 0 at entry), each term computed in its own iteration from what it reads at
    its index l — its output out[l], its member eta[l], q[l] — so this iteration adds `step`, f(i) where i is a
    member (and, when f reads the output, where this iteration outputs). `count(l in 0 .. i + 1: out[l] is TAG)` is
    the ghost counter of TAG, its special case."""

    text: str
    head: z3.ArithRef
    step: z3.ArithRef


def _fold_state(folds: dict[str, _Fold], values: dict[str, tuple[z3.ExprRef, z3.BoolRef]]) -> dict[str, z3.ExprRef]:
    """The folds' part of a `_State`: each ghost's value and whether a member passed, by text."""
    state: dict[str, z3.ExprRef] = {}
    for text in folds:
        state[text + "#value"], state[text + "#seen"] = values[text]
    return state


@dataclass(frozen=True)
class _Window:
    """A ghost for `sum(l in i + 1 - M .. i + 1: f(l))` read by the alignment (SmartSum's block): the sum of f
    over the current block of M iterations before this one. It is 0 at entry (i = 0 starts a block), and an
    iteration adds f(i), or resets it to 0 when it ends a block ((i + 1) % M == 0). So at the end of a block,
    where the window starts at the block's first index i + 1 - M, the window's value is head + f(i) exactly;
    anywhere else the comprehension is an unconstrained value (nothing can be proved from it)."""

    text: str
    so_far: str
    """How an invariant names the ghost: `(q[l] - q'[l] summed over the current block so far)`."""
    head: z3.ArithRef
    period: z3.ArithRef
    current: z3.ArithRef
    """f(i), this iteration's term."""
    elsewhere: z3.ArithRef
    """The comprehension's value in an iteration that does not end a block: a symbol of its own, unconstrained."""

    def ends_block(self, i: z3.ArithRef) -> z3.BoolRef:
        return (i + 1) % self.period == 0

    def after(self, i: z3.ArithRef) -> z3.ArithRef:
        return z3.If(self.ends_block(i), zt.RealVal(0), self.head + self.current)


class _Product:
    """One abstract iteration of the two runs from a symbolic head state."""

    def __init__(self, mech: ResolvedMechanism, loop: n.For, carried: list[str], enc: Encoding,
                 entry1: dict, entry2: dict, constants: dict, lengths: dict,
                 noise1: dict | None = None, noise2: dict | None = None, out: OutputSeq | None = None,
                 reals: frozenset[str] = frozenset(), folds: dict[str, _Fold] | None = None):
        self.mech = mech
        self.out = out
        """What the alignment reads as `out` when the outputs come after the loop: their prophecy (`_Exit`)."""
        self.enc = enc
        self.constants = constants
        self.lengths = lengths
        """The symbolic length of each list parameter; the loop runs over the first."""
        self.i = zt.Int("%i")
        self.n = _loop_bound(loop, enc, lengths)
        # `reals`: set to an integer before the loop, to a real in it (`bq = 0`, then `bq = q[i] + eta`)
        self.head1 = {x: zt.Real(f"{x}@1") if x in reals else _fresh_like(entry1[x], f"{x}@1") for x in carried}
        self.head2 = {x: zt.Real(f"{x}@2") if x in reals else _fresh_like(entry2[x], f"{x}@2") for x in carried}
        # the first run's state at the head is a function of the noise drawn before this iteration (`note_ties`)
        enc.earlier |= {h.decl().name() for h in self.head1.values() if z3.is_expr(h)}
        self.acost = zt.Real("%aligned_cost")
        self.ghost_head = {t: zt.Int(f"#{t}@1") for t in sorted(mech.output_tags)}
        self.used: dict[str, tuple[z3.ArithRef, z3.ArithRef, z3.ArithRef, str]] = {}
        """For each L1 clause `sum |q[i] - q'[i]| <= B`: (the distance used by the iterations before this one,
        |q[i] - q'[i]| of this one, B, B's source text). Every neighbouring pair satisfies 0 <= used and
        used + |q[i] - q'[i]| <= B at every iteration, which is all the abstract iteration assumes. The records'
        budget (`_record_budget`) is one more such total, with B = 1."""
        self.witness_primed: dict = {}
        self.entries: dict[tuple[str, int], tuple[z3.ArithRef, z3.ArithRef]] = {}
        """The fixed entries q[k] the iteration reads (`_EntriesList`): (q[k], q'[k]) by (q, k)."""
        self.windows: dict[str, _Window] = {}
        """The window sums the alignment reads (`_Window`), by their text."""
        self.prefix_folds: dict[str, _PrefixFold] = {}
        """`sum`/`count(l in 0 .. i + 1: f(l))` the alignment reads (`_PrefixFold`), by their text."""
        self.folds: dict[str, _Fold] = folds if folds is not None else {}
        """The whole-run folds the alignment reads (`_Fold`), by their text; only with `out` a prophecy. Shared with
        the product that evaluates the prefix's shifts (`folds`): one ghost and one prophecy per comprehension
        (specs/incorrect/fold_prophecies_collide.dp)."""
        self._witness_base: dict = {}
        inputs1, inputs2, self.adjacent = self._inputs()
        self.inputs1, self.inputs2 = inputs1, inputs2
        base1 = {**constants, **{k: v for k, v in entry1.items() if k not in carried}, **inputs1}
        base2 = {**constants, **{k: v for k, v in entry2.items() if k not in carried}, **inputs2}
        self.run1 = Run(enc, {**base1, **self.head1, loop.var: self.i})
        # the scalar noise the prefix drew, which the body may read (`q[i] + nu >= T + rho`): in the aligned run,
        # its aligned value
        self.run1.current = dict(noise1 or {})
        self.run1.running.append(zt.BoolVal(True))
        self.run1.block(loop.body)
        self.align = _IterAlignment(self, inputs1, inputs2, constants)
        self.run2 = Run(enc, {**base2, **self.head2, loop.var: self.i}, shift=self.align.shift, twin=self.run1)
        self.run2.current = dict(noise2 or {})
        self.run2.running.append(zt.BoolVal(True))
        self.run2.block(loop.body)
        self.continues1, self.continues2 = self.run1.running[-1], self.run2.running[-1]

    def current_is(self, tag: str):
        slot = self.run1.slots[0] if self.run1.slots else None
        if slot is None:
            return zt.BoolVal(False)
        return zt.And(self.run1.length >= 1, _code(slot) == tag_code(tag))

    def witness_env(self, name: str) -> dict:
        """Parameters seen at a witness index j (with its own adjacency constraints)."""
        j = zt.Int(name + "#j")
        env: dict[str, Value] = {}
        primed: dict[str, Value] = {}
        for p in self.mech.params:
            if isinstance(self.enc.params[p.name], RecordList):
                env[p.name], primed[p.name] = self.enc.params[p.name], self.enc.neighbour[p.name]
            elif isinstance(p.type, ListType):
                here = _scalar(f"{p.name}[{name}#j]", p.type.elem)
                env[p.name] = LoopList(here, self.lengths[p.name], j)
                if not p.public:
                    there = _scalar(f"{p.name}'[{name}#j]", p.type.elem)
                    primed[p.name] = LoopList(there, self.lengths[p.name], j)
                    # The entry relations only: dropping the measures' totals assumes less (sound).
                    self.enc.side.extend(self._domain(p, here, there))
                    for adj in p.adjacency:
                        if adj.rule.entry is not None:
                            self.enc.side.append(adj.rule.entry(Z3_SPLIT_OPS, here, there, self._bound(adj),
                                                                _up(p)))
            else:
                env[p.name] = self.enc.params[p.name]
                if p.name in self.enc.neighbour:
                    primed[p.name] = self.enc.neighbour[p.name]
        self.enc.side.extend([j >= 0, j < self.n])
        self.witness_primed = primed
        return env

    def _inputs(self) -> tuple[dict[str, Value], dict[str, Value], list[z3.BoolRef]]:
        inputs1: dict[str, Value] = {}
        inputs2: dict[str, Value] = {}
        adjacent: list[z3.BoolRef] = []
        for p in self.mech.params:
            value = self.enc.params[p.name]
            if isinstance(value, RecordList):
                # read only through len and the folds over all its records (Encoding.summary); its clause is
                # among `_record_facts`
                inputs1[p.name], inputs2[p.name] = value, self.enc.neighbour[p.name]
            elif isinstance(p.type, ListType):
                here = _scalar(f"{p.name}[i]", p.type.elem)
                pointwise = all(adj.rule.measure is None for adj in p.adjacency)
                inputs1[p.name] = _EntriesList(here, self.lengths[p.name], self.i,
                                               self._entry(p, False) if pointwise else None)
                adjacent += self._domain(p, here)
                if not p.public:
                    there = _scalar(f"{p.name}'[i]", p.type.elem)
                    inputs2[p.name] = _EntriesList(there, self.lengths[p.name], self.i,
                                                   self._entry(p, True) if pointwise else None)
                    adjacent += self._domain(p, there)
                    for adj in p.adjacency:
                        bound = self._bound(adj)
                        if adj.rule.entry is not None:
                            adjacent.append(adj.rule.entry(Z3_SPLIT_OPS, here, there, bound, _up(p)))
                        if adj.rule.measure is not None:
                            # The total so far is carried across iterations: what is left bounds this entry.
                            assert bound is not None, "a clause with a measure has a bound"
                            total = adj.rule.total_text(p.name)
                            used = zt.Real(f"%used({total})")
                            step = _real(adj.rule.measure(Z3_SPLIT_OPS, here, there))
                            assert adj.bound is not None
                            self.used[total] = (used, step, _real(bound), unparse(adj.bound))
                            adjacent += [used >= 0, used + step <= bound]
                else:
                    inputs2[p.name] = inputs1[p.name]
            else:
                inputs1[p.name] = value
                inputs2[p.name] = self.enc.neighbour.get(p.name, value)
                for adj in p.adjacency:
                    assert adj.rule.entry is not None and adj.rule.measure is None, "a scalar clause relates one value"
                    here, there = _term(value), _term(inputs2[p.name])
                    adjacent.append(adj.rule.entry(Z3_SPLIT_OPS, here, there, self._bound(adj), _up(p)))
        return inputs1, inputs2, adjacent

    def _entry(self, p, primed: bool) -> Callable[[int], z3.ArithRef]:
        """q[k] (q'[k] when `primed`) for a number k: a symbol fixed for the whole run, with the clauses' relation
        between q[k] and q'[k] among the iteration's facts, and k among the entries to show in range."""
        def entry(k: int) -> z3.ArithRef:
            here = _scalar(f"{p.name}[{k}]", p.type.elem)
            there = _scalar(f"{p.name}'[{k}]", p.type.elem) if not p.public else here
            if (p.name, k) not in self.entries:
                self.entries[p.name, k] = (here, there)
                self.adjacent += self._domain(p, here, there)
                for adj in p.adjacency:
                    if adj.rule.entry is not None:
                        self.adjacent.append(adj.rule.entry(Z3_SPLIT_OPS, here, there, self._bound(adj),
                                                            _up(p)))
            return there if primed else here
        return entry

    def _domain(self, p: ResolvedParam, *entries: z3.ArithRef) -> list[z3.BoolRef]:
        """The declared domain of list parameter p for these entries of q or q' (a scalar's: `Encoding.domains`)."""
        if p.domain is None:
            return []
        return p.domain_facts(Z3_SPLIT_OPS, entries, *self.enc.domain_ends(p.domain))

    def _bound(self, adj: n.Adjacency) -> z3.ExprRef | None:
        return ExprEval(self.enc, dict(self.enc.params), {}).value(adj.bound) if adj.bound is not None else None

    def iteration_cost(self, cost_term) -> z3.ArithRef:
        terms = []
        for d in self.run1.draws:
            psi = self.align.shift(d.site, d.index)
            site = self.mech.noise_site(d.site)
            if site.distribution.cost is None:
                continue
            terms.append(z3.If(d.guard, cost_term(self.enc, site, d) * z3.If(_real(psi) >= 0, _real(psi), -_real(psi)),
                               0))
        return zt.Sum(terms) if terms else zt.RealVal(0)


def _term_at(ev: ExprEval, e: n.Expr, i: z3.ArithRef) -> tuple[z3.BoolRef, z3.ExprRef]:
    """(whether the iteration's index i is a member of comprehension e, e's term at i), as `ev` evaluates them: the
    exclusions and the filter read at i, and for `count` the body too, which is the predicate counted (the term is
    then 1: specs/incorrect/count_fold_ignores_body.dp)."""
    assert isinstance(e, n.Comprehension)
    _reads_only_its_own_index(e)
    saved = ev.env.get(e.var)
    ev.env[e.var] = i
    try:
        member = zt.BoolVal(True)
        if e.excluded is not None:
            member = zt.And(member, z3.Not(ev.member(ev.value(e.excluded), i)))
        if e.condition is not None:
            member = zt.And(member, ev.guarded(member, e.condition))
        current = ev.guarded(member, e.body)
    finally:
        if saved is None:
            del ev.env[e.var]
        else:
            ev.env[e.var] = saved
    if e.func == "count":
        if not z3.is_bool(current):
            raise EncodingError("`count` of a value that is not a truth value")
        member, current = zt.And(member, current), zt.IntVal(1)
    if not z3.is_expr(current) or not z3.is_arith(current):
        raise EncodingError(f"`{e.func}` over the loop's range of a value that is not a number")
    return member, current


def _so_far(ev: ExprEval, e: n.Comprehension, lo: z3.ArithRef, hi: z3.ArithRef, i: z3.ArithRef,
            length: z3.ArithRef, ghosts: dict[str, _PrefixFold], tag: str) -> z3.ArithRef | None:
    """`sum`/`count(l in 0 .. i + 1: f(l))` (or `0 .. i`) as its ghost in `ghosts` (`_PrefixFold`: f summed over the
    iterations before this one, f(i) this iteration's term, where i is a member and, when f reads the output,
    where this iteration outputs: `length` >= 1), made at its first read; None for any other comprehension."""
    whole = z3.is_true(z3.simplify(hi == i + 1))
    if e.func not in ("count", "sum") or not z3.is_true(z3.simplify(lo == 0)) or \
            not (whole or z3.is_true(z3.simplify(hi == i))):
        return None
    text = unparse(e)
    if text not in ghosts:
        member, current = _term_at(ev, e, i)
        if any(isinstance(x, n.OutRef) for x in walk(e)):  # out[l] is there only where iteration l outputs
            member = zt.And(member, length >= 1)
        make = zt.Int if z3.is_int(current) else zt.Real
        ghosts[text] = _PrefixFold(text, make(f"%so_far{len(ghosts)}@{tag}"), z3.If(member, current, 0))
    fold = ghosts[text]
    return fold.head + fold.step if whole else fold.head


class _InductiveEval(ExprEval):
    """Alignment expressions seen from the abstract iteration: two comprehension shapes over the whole run
    have exact abstractions here; any other comprehension over a run-dependent range is not supported."""

    def __init__(self, product: _Product, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.product = product

    def visit_comprehension(self, e: n.Comprehension, ctx: None = None):
        p = self.product
        d = e.domain
        summary = self.summary(e) if self.enc.records else None
        if summary is not None:  # a fold over all the records of a list with a private length
            return summary
        if isinstance(d, n.Range):
            lo, hi = self.arith(d.lo), self.arith(d.hi)
            starts_at_zero = z3.is_true(z3.simplify(lo == 0))
            # count(l in 0 .. i + 1: out[l] is TAG): the ghost counter of TAG plus this iteration's output.
            if e.func == "count" and starts_at_zero and isinstance(e.body, n.TagTest) and \
                    isinstance(e.body.value, n.Index) and isinstance(e.body.value.base, n.OutRef) and \
                    isinstance(e.body.value.index, n.LocalRef) and e.body.value.index.id == e.var and \
                    e.condition is None and e.excluded is None:
                ghost = p.ghost_head[e.body.tag]
                if z3.is_true(z3.simplify(hi == p.i + 1)):
                    return ghost + z3.If(p.current_is(e.body.tag), 1, 0)
                if z3.is_true(z3.simplify(hi == p.i)):
                    return ghost
            so_far = _so_far(self, e, lo, hi, p.i, p.run1.length, p.prefix_folds, "") if p.out is None else None
            if so_far is not None:
                return so_far
            window = self._window(e, lo, hi)
            if window is not None:
                return window
            if p.out is not None and starts_at_zero and z3.is_true(z3.simplify(hi == p.n)) and \
                    e.func in ("max", "min", "sum", "count"):
                return self._fold(e).prophecy
            # all/any(l in 0 .. len(q): P(l)) over list parameters: a fresh truth value A with
            # A => P(i) and not A => not P(j) for a witness j (dually for any): exact for every run.
            if e.func in ("all", "any") and starts_at_zero and z3.is_true(z3.simplify(hi == p.n)) \
                    and e.condition is None and e.excluded is None:
                _reads_only_its_own_index(e)
                # one truth value per comprehension, however often and wherever it is written (an inlined let),
                # named by its text: the same in every product of this proof
                name = f"%{unparse(e)}"
                value = zt.Bool(name)
                here = self._body_at(e, p.i, self.env)
                there = self._body_at(e, zt.Int(name + "#j"), p.witness_env(name))
                if e.func == "all":
                    p.enc.side.extend([z3.Implies(value, here), z3.Implies(z3.Not(value), z3.Not(there))])
                else:
                    p.enc.side.extend([z3.Implies(z3.Not(value), z3.Not(here)), z3.Implies(value, there)])
                return value
        raise EncodingError(f"`{e.func}` over a range that grows with the input has no inductive encoding")

    def _window(self, e: n.Comprehension, lo: z3.ArithRef, hi: z3.ArithRef) -> z3.ArithRef | None:
        """`sum(l in i + 1 - M .. i + 1: f(l))`, M fixed over the loop: the block's ghost (`_Window`)."""
        p = self.product
        if e.func != "sum" or e.condition is not None or e.excluded is not None or \
                not z3.is_true(z3.simplify(hi == p.i + 1)):
            return None
        _reads_only_its_own_index(e)
        period = z3.simplify(hi - lo)
        if not z3.is_int(period) or p.i.decl().name() in _symbols(period) or _moves(p, period):
            return None
        text = unparse(e)
        if text not in p.windows:
            current = _real(self._body_at(e, p.i, self.env))
            k = len(p.windows)
            so_far = f"({unparse(e.body)} summed over the current block so far)"
            p.windows[text] = _Window(text, so_far, zt.Real(f"%window{k}@"), period, current,
                                      zt.Real(f"%window{k}@elsewhere"))
        window = p.windows[text]
        return z3.If(window.ends_block(p.i), window.head + window.current, window.elsewhere)

    def _term_at_index(self, e: n.Expr) -> tuple[z3.BoolRef, z3.ExprRef]:
        return _term_at(self, e, self.product.i)

    def element(self, b: Value, index_node: n.Expr) -> Value:
        """`out[k]` of the outputs after the loop (their prophecy) only at a number k below their count: at another
        index the alignment may read past the end, where it is not defined."""
        p = self.product
        if p.out is not None and b is p.out:
            k = z3.simplify(self.arith(index_node))
            if not (z3.is_int_value(k) and 0 <= k.as_long() < len(p.out.slots)):
                raise EncodingError("the alignment reads the outputs after the loop at an index that is not a number "
                                    "below their count")
            return p.out.slots[k.as_long()]
        return super().element(b, index_node)

    def _fold(self, e: n.Comprehension) -> _Fold:
        """The ghost of a whole-run fold (`_Fold`), made at its first read."""
        p = self.product
        text = unparse(e)
        if text not in p.folds:
            member, current = self._term_at_index(e)
            k = len(p.folds)
            make = zt.Int if z3.is_int(current) else zt.Real
            p.folds[text] = _Fold(text, e.func, z3.simplify(member), current, make(f"%fold{k}@"),
                                  zt.Bool(f"%fold{k}@seen"), make(f"%fold{k}"))
        return p.folds[text]

    def _body_at(self, e: n.Comprehension, index, env: dict):
        saved_env, saved_primed = self.env, self.primed
        self.env = {**env, e.var: index}
        if env is not saved_env:
            self.primed = dict(self.product.witness_primed)
        try:
            return self.value(e.body)
        finally:
            self.env, self.primed = saved_env, saved_primed


def _reads_only_its_own_index(e: n.Comprehension) -> None:
    """A comprehension that a ghost stands for reads no index but its own (and those of comprehensions inside it):
    the ghost evaluates its body once per iteration, at that iteration's index, so a shift's index `i` read inside
    would be taken to be l (specs/incorrect/fold_reads_shift_index.dp)."""
    bound = {x.var for x in walk(e) if isinstance(x, n.Comprehension)}
    parts = [x for x in (e.body, e.condition, e.excluded) if x is not None]
    for x in (y for part in parts for y in walk(part)):
        if isinstance(x, n.LocalRef) and x.id not in bound:
            raise EncodingError(f"`{unparse(e)}` reads `{x.id}`, an index other than its own, over a range that "
                                "grows with the input")


class _IterAlignment:
    """ψ for the members drawn in the abstract iteration (and for the prefix's scalar noise)."""

    def __init__(self, product: _Product, inputs1: dict, inputs2: dict, constants: dict):
        self.product = product
        enc = product.enc
        env = {**constants, **inputs1}
        primed = dict(inputs2)
        out: Any = product.out if product.out is not None else \
            IterOutput(product.run1.slots[0] if product.run1.slots else default_value(enc.mech.output_type), product.i)
        self.ev = _InductiveEval(product, enc, env, primed, noise=self._noise, out=out)
        self.env = env
        mech = enc.mech
        if mech.alignment is not None:
            for let in mech.alignment.lets:
                env[let.name] = self.ev.value(let.value)

    def _noise(self, name: str, index, node):
        site = self.product.mech.site(name)
        if site is None:
            return None
        enc = self.product.enc
        if index is None:
            if site.family:
                raise EncodingError("a family read without index")
            return enc.noise_symbol(name, None, site.distribution.integer)
        if not same_index(index, self.product.i):
            raise EncodingError("an inductive proof reads noise families only at the loop index")
        return enc.noise_symbol(name, CURRENT, site.distribution.integer)

    def shift(self, name: str, index) -> z3.ArithRef:
        shift = self.product.mech.alignment.shift_of(name) if self.product.mech.alignment else None
        if shift is None:
            return zt.IntVal(0)
        if shift.index_var:
            saved = self.env.get(shift.index_var)
            self.env[shift.index_var] = self.product.i
            try:
                return self.ev.arith(shift.shift)
            finally:
                if saved is None:
                    del self.env[shift.index_var]
                else:
                    self.env[shift.index_var] = saved
        return self.ev.arith(shift.shift)


@dataclass(frozen=True)
class _EntriesList(LoopList):
    """A list parameter seen from the abstract iteration, read at the loop index or at a fixed entry `q[k]` (k a
    number): the entry is a symbol of its own, the same in every iteration, with its clause's relation to q'[k]
    among the iteration's facts, and k < len(q) among what the proof must show (`_Product.entries`)."""

    entry: Callable[[int], z3.ArithRef] | None = None

    def at(self, index: z3.ArithRef) -> z3.ArithRef:
        k = z3.simplify(index)
        if self.entry is not None and z3.is_int_value(k) and not same_index(index, self.index):
            return self.entry(k.as_long())
        return super().at(index)


def _up(p: ResolvedParam) -> z3.BoolRef:
    """The direction of a `monotone` clause's list: one per list, as in the bounded encoding (`encode.py`): two lists
    may move in opposite directions."""
    return zt.Bool(f"%up({p.name})")


def _scalar(name: str, t) -> z3.ExprRef:
    return zt.Int(name) if t == INT else zt.Real(name)


def _fresh_like(value, name: str):
    if z3.is_int(value):
        return zt.Int(name)
    if z3.is_bool(value):
        return zt.Bool(name)
    if z3.is_expr(value):
        return zt.Real(name)
    raise NotInductive(f"loop-carried variable {name} is not a number")


def prove(mech: ResolvedMechanism, context: Context) -> Inductive:
    """Try the inductive proof; raises NotInductive when the shape does not fit."""
    try:
        return _prove(mech, context.limits, context.cost_term, context.support_of)
    except EncodingError as error:  # anything else is a bug, reported as one
        raise NotInductive(str(error)) from None


def _prove(mech: ResolvedMechanism, limits: Limits, cost_term, support_of) -> Inductive:
    prefix, loop, suffix = _shape(mech)
    if mech.alignment is None:
        raise NotInductive("no alignment")
    if any(isinstance(sub, n.OutRef) for sub in walk(mech.claim)):
        raise NotInductive("the claim depends on the output")
    assigned = {s.target for s in walk_statements(loop.body) if isinstance(s, n.Assign)}
    enc = Encoding(mech, Encoding.uniform(mech, 0), {},
                   records=any(isinstance(p.type, ListType) and not p.length_public for p in mech.params))
    lengths = _symbolic_lengths(mech, enc)
    # a loop reads a list at its index i, or (over a public bound) spends a total over its entries, only where
    # i < len(q): the bound must be at most the length for every input `requires` allows (a read past the end stops
    # the run with an error, on one neighbour and not the other: specs/incorrect/list_read_past_its_end.dp)
    bound = _loop_bound(loop, enc, lengths)
    over = _loop_list(loop)
    for name, why in _indexed_lists(mech, by_position_only=over is not None).items():
        if name != over and check_valid([enc.requires(), *(length >= 0 for length in lengths.values())],
                                        bound <= lengths[name], limits, vacuity=False).status != Validity.PROVED:
            raise NotInductive(f"the loop may run past the end of {name}, and {why} (a `requires` clause "
                               f"len({name}) >= {unparse(loop.hi)} would rule that out)")
    # The prefix on D and on D' (with the shifts of its scalar noise), for every length: it sees each list only
    # through its symbolic length (reading an element there is outside this proof's shape).
    try:
        pre1 = Run(enc, enc.params)
        pre1.block(prefix)
    except EncodingError as error:
        raise NotInductive(str(error)) from None
    reads_out = any(isinstance(x, n.OutRef) for e in [*(let.value for let in mech.alignment.lets),
                                                      *(sh.shift for sh in mech.alignment.shifts)] for x in walk(e))
    if pre1.slots and reads_out:
        # `out[i]` is read as iteration i's output: outputs before the loop would move it (found by an adversarial
        # search: a constant `output BOT` first, and a proof of the alignment with out[i + 1])
        raise NotInductive("outputs before the loop, and an alignment that reads `out`")
    constants = {c: pre1.vars[c] for c in mech.constants if c in pre1.vars}
    before = set(pre1.vars)
    carried = sorted(x for x in assigned if x in before)
    result = Inductive()
    prophecy = _prophecy(mech, suffix)
    folds: dict[str, _Fold] = {}
    try:
        probe = _Product(mech, loop, carried, enc, pre1.vars, pre1.vars, constants, lengths, pre1.current,
                         pre1.current, prophecy, folds=folds)
        reals = frozenset(x for x in carried if z3.is_expr(probe.head1[x]) and z3.is_int(probe.head1[x]) and
                          z3.is_expr(probe.run1.vars[x]) and z3.is_real(probe.run1.vars[x]))
        if reals:
            probe = _Product(mech, loop, carried, enc, pre1.vars, pre1.vars, constants, lengths, pre1.current,
                             pre1.current, prophecy, reals, folds)
    except EncodingError as error:
        raise NotInductive(str(error)) from None

    def prefix_shift(name: str, index):
        return probe.align.shift(name, index) if index is None else zt.IntVal(0)

    pre2_inputs = {**enc.params, **enc.neighbour}
    pre2 = Run(enc, pre2_inputs, shift=prefix_shift, twin=pre1)
    pre2.block(prefix)
    product = _Product(mech, loop, carried, enc, pre1.vars, pre2.vars, constants, lengths, pre1.current, pre2.current,
                       prophecy, reals, folds)
    try:
        ending = _Exit.of(mech, enc, suffix, product, pre1, pre2, carried, prophecy) if prophecy is not None else None
    except EncodingError as error:
        raise NotInductive(str(error)) from None
    for name, k in product.entries:  # a fixed entry read in the loop is there for every input `requires` allows
        if k < 0 or check_valid([enc.requires(), *(length >= 0 for length in lengths.values())], k < lengths[name],
                                limits, vacuity=False).status != Validity.PROVED:
            raise NotInductive(f"the loop reads `{name}[{k}]`, which may be past the end of {name}")
    entry_cost = _prefix_cost(pre1, probe, cost_term)
    claim = _real(ExprEval(enc, {**enc.params, **constants}, {}).arith(mech.claim))
    nonnegative = [length >= 0 for length in lengths.values()] + _record_facts(mech, enc)
    support = support_of(enc, draws=pre1.draws + product.run1.draws)
    # Every length that `requires` allows, 0 included: at entry the loop may not run at all.
    entry_base = [enc.requires(), *support, *nonnegative]
    budget = _record_budget(product, loop, entry_base, limits)
    if budget is not None:
        result.notes.setdefault(ObligationId.C4C, []).append(budget)
    for window in product.windows.values():
        # the block schedule (i + 1) % M == 0 resets the ghost once every M iterations only for M >= 1
        if check_valid(entry_base, window.period >= 1, limits, vacuity=False).status != Validity.PROVED:
            raise NotInductive(f"the window `{window.text}` may not span a block of at least one iteration")
    base = [*entry_base, *product.adjacent, product.i >= 0, product.i < product.n]

    # Candidate invariants: (text, formula over the head state, formula at entry, formula after the iteration).
    def at(state1: dict[str, Value], state2: dict[str, Value], acost: z3.ArithRef, index: z3.ArithRef,
           ghosts: dict[str, z3.ArithRef], used: dict[str, z3.ArithRef], windows: dict[str, z3.ArithRef],
           folds: dict[str, z3.ExprRef]) -> _State:
        return {"s1": state1, "s2": state2, "acost": acost, "i": index, "g": ghosts, "u": used, "w": windows,
                "f": folds}


    entry_ghosts = {t: zt.Sum([z3.If(zt.And(k < pre1.length, _code(slot) == tag_code(t)), 1, 0)
                               for k, slot in enumerate(pre1.slots)]) if pre1.slots else zt.IntVal(0)
                    for t in product.ghost_head}
    after_ghosts = {t: g + z3.If(product.current_is(t), 1, 0) for t, g in product.ghost_head.items()}
    if product.prefix_folds and pre1.slots:
        raise NotInductive("a sum over the iterations so far, and outputs before the loop")
    for text, prefix_fold in product.prefix_folds.items():  # in the ghosts' part of the state, by their text
        entry_ghosts[text] = zt.IntVal(0) if z3.is_int(prefix_fold.head) else zt.RealVal(0)
        after_ghosts[text] = prefix_fold.head + prefix_fold.step
    windows = product.windows
    folds_in_state = len(product.folds)
    entry = at(pre1.vars, pre2.vars, entry_cost, zt.IntVal(0), entry_ghosts,
               {q: zt.RealVal(0) for q in product.used}, {w: zt.RealVal(0) for w in windows},
               _fold_state(product.folds, {t: f.entry() for t, f in product.folds.items()}))
    head = at(product.head1, product.head2, product.acost, product.i,
              {**product.ghost_head, **{t: f.head for t, f in product.prefix_folds.items()}},
              {q: used for q, (used, _, _, _) in product.used.items()}, {w: x.head for w, x in windows.items()},
              _fold_state(product.folds, {t: (f.head, f.seen) for t, f in product.folds.items()}))
    after = at(product.run1.vars, product.run2.vars, product.acost + product.iteration_cost(cost_term), product.i + 1,
               after_ghosts, {q: used + step for q, (used, step, _, _) in product.used.items()},
               {w: x.after(product.i) for w, x in windows.items()},
               _fold_state(product.folds, {t: f.after() for t, f in product.folds.items()}))
    steps = [b for b in (_iteration_cost_bound(mech, product, cost_term, limits),
                         _iteration_cost_bound(mech, product, cost_term, limits, tight=True))
             if b is not None and _fixed_over_loop(product, b)]
    if len(steps) == 2 and z3.eq(z3.simplify(steps[0]), z3.simplify(steps[1])):
        steps.pop()
    # Each formula takes a `_State`; `...` because the lambdas bind their loop values as default arguments.
    candidates: list[tuple[str | _Naming, Callable[..., z3.BoolRef]]] = []
    for x in carried:
        if not z3.is_expr(pre1.vars[x]) or z3.is_bool(pre1.vars[x]):
            continue
        candidates.append((f"{x}' = {x}", lambda s, x=x: s["s2"][x] == s["s1"][x]))
        distance = z3.simplify(_real(pre2.vars[x]) - _real(pre1.vars[x]))
        if not (z3.is_rational_value(distance) and distance.as_fraction() == 0):
            candidates.append((f"{x}' - {x} = {z3_text(distance)}",
                               lambda s, x=x, d=distance: _real(s["s2"][x]) - _real(s["s1"][x]) == d))
        candidates.append((f"aligned_cost <= {x}", lambda s, x=x: s["acost"] <= _real(s["s1"][x])))
        if z3.is_int(pre1.vars[x]):
            for b in steps:  # a counter of the iterations that cost, counting up or down
                candidates.append((_Naming(f"aligned_cost <= (its value at entry) + ({x} - {x} at entry)·b", "b", b),
                                   lambda s, x=x, b=b: s["acost"] <= entry_cost + _real(s["s1"][x] - pre1.vars[x]) * b))
                candidates.append((_Naming(f"aligned_cost <= (its value at entry) + ({x} at entry - {x})·b", "b", b),
                                   lambda s, x=x, b=b: s["acost"] <= entry_cost + _real(pre1.vars[x] - s["s1"][x]) * b))
        if z3.is_int(pre1.vars[x]):
            for t in product.ghost_head:
                offset = z3.simplify(pre1.vars[x] - entry_ghosts[t])
                so_far = f"number of {t} outputs so far"
                shown = so_far if z3.is_int_value(offset) and offset.as_long() == 0 else \
                    f"({so_far}) + {z3_text(offset)}"
                candidates.append((f"{x} = {shown}",
                                   lambda s, x=x, t=t, o=offset: s["s1"][x] == s["g"][t] + o))
                candidates.append((f"number of {t} outputs so far <= {x}", lambda s, x=x, t=t: s["g"][t] <= s["s1"][x]))
            for t, prefix_fold in product.prefix_folds.items():
                if not z3.is_int(prefix_fold.head):
                    continue
                offset = z3.simplify(pre1.vars[x] - entry_ghosts[t])
                shown = f"`{t}` so far" if z3.is_int_value(offset) and offset.as_long() == 0 else \
                    f"(`{t}` so far) + {z3_text(offset)}"
                candidates.append((f"{x} = {shown}", lambda s, x=x, t=t, o=offset: s["s1"][x] == s["g"][t] + o))
    candidates.append(("aligned_cost <= claim", lambda s: s["acost"] <= claim))
    # A clause with a measure (L1, count): the budget is spent in proportion to the measure used so far,
    # B·(aligned_cost - its value at entry) <= (claim - its value at entry)·used.
    for q, (_, _, bound, bound_text) in product.used.items():
        candidates.append((f"aligned_cost <= (its value at entry) + (claim - its value at entry)·"
                           f"{_share(bound_text)}, d = {q} so far",
                           lambda s, q=q, b=bound: b * (s["acost"] - entry_cost) <= (claim - entry_cost) * s["u"][q]))
    # A window sum that the alignment reads (SmartSum's block): a carried variable's difference between the runs is
    # the window so far (block - block' = Σ (q[l] - q'[l]) over the block), and the budget template counts
    # what the window's shift will cost at the end of the block: B·(aligned_cost - entry) + c·|W| <= (claim -
    # entry)·used, for c each cost coefficient of the loop's noise.
    coefficients: dict[str, z3.ArithRef] = {}
    for d in product.run1.draws:
        site = mech.noise_site(d.site)
        if site.distribution.cost is not None:
            c = _real(cost_term(enc, site, d))
            if _fixed_over_loop(product, c):
                coefficients.setdefault(c.sexpr(), c)
    for w in product.windows:
        for x in carried:
            if z3.is_expr(pre1.vars[x]) and not z3.is_bool(pre1.vars[x]):
                candidates.append((f"{x} - {x}' = {product.windows[w].so_far}",
                                   lambda s, x=x, w=w: _real(s["s1"][x]) - _real(s["s2"][x]) == s["w"][w]))
                candidates.append((f"{x}' - {x} = {product.windows[w].so_far}",
                                   lambda s, x=x, w=w: _real(s["s2"][x]) - _real(s["s1"][x]) == s["w"][w]))
        for q, (_, _, bound, bound_text) in product.used.items():
            for c in coefficients.values():
                c_text = z3_text(c)
                candidates.append((
                    f"aligned_cost + {c_text}·|{product.windows[w].so_far}| <= (its value at entry) + "
                    f"(claim - its value at entry)·{_share(bound_text)}, d = {q} so far",
                    lambda s, q=q, b=bound, w=w, c=c: b * (s["acost"] - entry_cost) +
                    b * c * z3.If(s["w"][w] >= 0, s["w"][w], -s["w"][w]) <= (claim - entry_cost) * s["u"][q]))
    candidates.append(("aligned_cost <= its value at entry", lambda s: s["acost"] <= entry_cost))
    fixed = {name: e for name, e in bounds.fixed_definitions(mech).items() if name not in mech.constants}
    for s in walk_statements(loop.body):
        if isinstance(s, n.If) and len(s.then) == 1 and isinstance(s.then[0], n.Break) and not s.orelse:
            # names the parameters fix read as their expressions (`g1 = eps - eps1` assigned in the loop)
            cond = bounds.inline(s.condition, fixed)
            candidates.append((f"not ({unparse(cond)})", lambda st, c=cond: z3.Not(
                _eval_in(enc, {**st["s1"], loop.var: st["i"]}, constants, c))))
    candidates.append(("aligned_cost >= 0", lambda s: s["acost"] >= 0))
    # The `invariant` clauses of the alignment: candidates like the others (Houdini keeps one only if it holds at
    # entry and every iteration that continues preserves it), read over the head state: x in the run on D, x' in
    # the aligned run, aligned_cost the cost so far, the loop index.
    written_texts: list[str] = []
    unused: list[str] = []
    """What became of the written invariants that the proof does not use."""
    for written in mech.alignment.invariants:
        def stated(st: _State, c: n.Expr = written.condition) -> z3.BoolRef:
            state = {**st["s1"], **{f"{x}'": v for x, v in st["s2"].items()},
                     "aligned_cost": st["acost"], loop.var: st["i"]}
            return _eval_in(enc, state, constants, c)
        text = unparse(written.condition)
        try:
            stated(entry), stated(head), stated(after)
        except EncodingError as error:
            unused.append(f"the invariant `{text}` cannot be read at the loop head ({error}), so it was not used")
            continue
        written_texts.append(text)
        candidates.append((text, stated))
    # Houdini: keep what holds at entry and is preserved by an iteration that continues.
    # The final queries below make sure that the assumptions are not vacuous; these rounds only search.
    entry_base = [enc.requires(), *support, *nonnegative]  # again: candidates may add side conditions
    alive = _houdini([c for c in candidates
                      if check_valid(entry_base, c[1](entry), limits, vacuity=False).status == Validity.PROVED],
                     lambda kept: [enc.requires(), *base[1:]] + [c[1](head) for c in kept] + [product.continues1],
                     lambda c: c[1](after), limits)
    result.invariant = [_conjunct(text) for text, _ in alive]
    kept = {text for text, _ in alive}
    unused += [f"the invariant `{text}` was not used: it does not hold at the loop's entry for every input, or an "
               "iteration that goes on may break it (with the other conjuncts assumed)"
               for text in written_texts if text not in kept]
    for obligation in (ObligationId.C4A, ObligationId.C4C):
        result.notes.setdefault(obligation, []).extend(unused)
    inv = [c[1](head) for c in alive]
    base = [enc.requires(), *base[1:]]
    assume = base + inv
    # Every invariant holds at entry, for every model of the entry assumptions: so `assume` has a model whenever
    # `base` has one (the head state taken at entry). The final queries ask z3 for a model of `base`.
    witness = base

    # C4a: each iteration outputs one item, the same in both runs, and both runs stop together — or it is the last
    # one, which stops before it draws or outputs anything (`if count >= N { break }` first): then out[i] is the
    # output of iteration i still, and no shift of that iteration reads past the end of `out`.
    length1, length2 = product.run1.length, product.run2.length
    stops_quietly = zt.And(length1 == 0, z3.Not(product.continues1),
                           *(z3.Not(d.guard) for d in product.run1.draws))
    one = zt.And(length1 == length2, zt.Or(length1 == 1, stops_quietly))
    same = zt.And(z3.Implies(length1 == 1, equal(product.run1.slots[0], product.run2.slots[0]))
                  if product.run1.slots and product.run2.slots else length1 == 0,
                  product.continues1 == product.continues2)
    prefix_same = OutputSeq(tuple(pre1.slots), pre1.length).equal(OutputSeq(tuple(pre2.slots), pre2.length)) \
        if pre1.slots else zt.BoolVal(True)
    # C4c: within the claim at every loop head (the loop may end there) and right after a `break`.
    # At a head the loop may end (i = n), so this check does not assume i < n.

    if ending is not None:  # no output before the end of the loop, no `break`: the iterations output nothing
        one, same = zt.And(length1 == 0, length2 == 0), zt.BoolVal(True)

    def at_exit(assume: list[z3.BoolRef]) -> list[z3.BoolRef]:
        assert ending is not None
        return [f for f in assume if not f.eq(product.i < product.n)] + ending.facts

    # Where a final query fails, a state the invariant allows and the obligation does not: what the proof needed
    # ruled out (the failure notes, `_state_text`).
    failures: dict[ObligationId, str] = {}

    def holds(key: ObligationId, where: str, answer) -> bool:
        if answer.status == Validity.REFUTED and answer.model is not None and key not in failures:
            failures[key] = f"{where} {_state_text(answer.model, product, carried)}"
        return answer.status == Validity.PROVED

    def c4a_holds(assume: list[z3.BoolRef]) -> bool:
        failures.pop(ObligationId.C4A, None)
        ends = ending is None or holds(ObligationId.C4A, "where the loop ends, the outputs after it differ at",
                                       check_valid(at_exit(assume), ending.same, limits, satisfiable_if=witness))
        return ends and \
            holds(ObligationId.C4A, "an iteration's outputs differ, or one run stops and the other goes on, from",
                  check_valid(assume, zt.And(one, same), limits, satisfiable_if=witness)) and \
            check_valid(entry_base, prefix_same, limits).status == Validity.PROVED

    def c4c_holds(assume: list[z3.BoolRef]) -> bool:
        failures.pop(ObligationId.C4C, None)
        if ending is not None:  # the cost of the whole run, at its end
            final = product.acost + ending.cost(product, cost_term)
            return holds(ObligationId.C4C, "the aligned cost of the whole run exceeds the claim where the loop ends at",
                         check_valid(at_exit(assume), final <= claim, limits, satisfiable_if=witness))
        at_head = [f for f in assume if not f.eq(product.i < product.n)] + [product.i <= product.n]
        # The second query is a case (the loop stops in this iteration): when no iteration stops, it is vacuous
        # and there is nothing to prove.
        return holds(ObligationId.C4C, "the aligned cost exceeds the claim at the loop head",
                     check_valid(at_head, product.acost <= claim, limits, satisfiable_if=witness)) and \
            holds(ObligationId.C4C, "the aligned cost exceeds the claim after a `break` from",
                  check_valid(assume + [z3.Not(product.continues1)], after["acost"] <= claim, limits,
                              vacuity=False)) and \
            check_valid(entry_base, entry_cost <= claim, limits).status == Validity.PROVED

    c4a, c4c = c4a_holds(assume), c4c_holds(assume)
    init = [enc.requires(), *support_of(enc, draws=pre1.draws), *nonnegative]
    search = _Search(mech, enc, product, carried, entry, head, after, claim, entry_cost, cost_term, limits)
    # Houdini's candidates were not enough: an invariant of the product program searched by Spacer (chc.py), kept
    # only once checked here like any candidate; then again on almost every noise vector, the exact ties of the
    # first run's comparisons in the iteration excluded (`encode.note_ties`): the invariant then holds at every
    # head almost surely, which is what Lemma 1 needs.
    for excluded in (False, True):
        if (c4a and c4c) or (excluded and not enc.ties):
            break
        with _within(enc, excluded):
            tried = [enc.requires(), *assume[1:]]  # assume[0] is `requires`, now with the ties
            goals = ([z3.Not(zt.And(one, same))] if not c4a else [], not c4c)
            found = search.invariant(tried, init, pre1.draws, probe, *goals, ending)
            if found is None:
                continue
            text, formula = found
            inv.append(formula)
            assume = [*tried, formula]
            result.invariant.append(Conjunct(text))
            # the checks below read the invariant (and, for C2, `assume`): they hold almost surely too
            tie_notes = sorted({t.text for t in enc.ties.values()}) if excluded else []
            for kind in (ObligationId.C0, ObligationId.C2, ObligationId.C4A, ObligationId.C4C, ObligationId.C4D):
                searched = [SEARCHED] if kind in (ObligationId.C4A, ObligationId.C4C) else []
                notes = result.notes.setdefault(kind, [])
                notes.extend(x for x in [*searched, *tie_notes] if x not in notes)
            c4a, c4c = c4a_holds(assume), c4c_holds(assume)
    needed = ("; an `invariant` clause in the alignment that rules such a state out (and holds at entry and after "
              "every iteration) would complete the proof, if the mechanism never reaches it" +
              "".join(f"; {x}" for x in unused))
    result.proved[ObligationId.C4A, None] = None if c4a else \
        "the iteration's outputs could not be shown equal from the invariant" + \
        (f": {failures[ObligationId.C4A]}{needed}" if ObligationId.C4A in failures else "")
    result.proved[ObligationId.C4C, None] = None if c4c else \
        "the aligned cost could not be bounded by the claim from the invariant" + \
        (f": {failures[ObligationId.C4C]}{needed}" if ObligationId.C4C in failures else "")
    # C4d, C3 and C0 of the prefix's draws and of the iteration's.
    def shift_in(align: Any) -> Callable[[Any], Any]:
        return lambda d: align.shift(d.site, d.index if d.index == CURRENT else None)

    shifted = [(pre1.draws, shift_in(probe.align)), (product.run1.draws, shift_in(product.align))]
    conditions = draw_conditions(mech, enc, shifted, [(pre1.draws, pre2.draws),
                                                      (product.run1.draws, product.run2.draws)])
    for key, formulas in conditions.items():
        ok = not formulas or check_valid([enc.requires(), *base[1:], *inv], zt.And(formulas), limits,
                                         satisfiable_if=witness).status == Validity.PROVED
        result.proved[key] = None if ok else "not shown for every iteration"
    if ending is not None:  # and of the draws after the loop, where it ends
        after_loop = draw_conditions(mech, enc, [(ending.run1.draws, ending.shift(product))],
                                     [(ending.run1.draws, ending.run2.draws)])
        for key, formulas in after_loop.items():
            if formulas and result.proved.get(key) is None and \
                    check_valid(at_exit(assume), zt.And(formulas), limits,
                                satisfiable_if=witness).status != Validity.PROVED:
                result.proved[key] = "not shown after the loop"
    sc = _self_composition(mech, enc, prefix, loop, carried, constants, limits, support_of, lengths)
    determined, c2_ties = _samples_determined(enc, sc, limits)
    result.proved[ObligationId.C2, None] = \
        determined or _same_draws_across_runs(product, pre1, pre2, assume, entry_base + [prefix_same], limits)
    if ending is not None and result.proved[ObligationId.C2, None] is None and not ending.draws_unconditionally():
        result.proved[ObligationId.C2, None] = "a sample after the loop is drawn under a condition"
    if result.proved[ObligationId.C2, None] is None and c2_ties:
        c2_notes = result.notes.setdefault(ObligationId.C2, [])
        c2_notes.extend(x for x in sorted(c2_ties) if x not in c2_notes)
    if not acyclic.reads_no_noise(mech):
        # `_acyclic` reads the output of each iteration, which a prophecy is not (the outputs come after the loop:
        # specs/incorrect/suffix_condition_not_decided.dp), and its order has no place for noise drawn after the
        # loop; the released-set order is about the alignment alone
        not_acyclic, notes = ("outputs after the loop", []) if ending is not None else \
            _acyclic(mech, enc, sc, loop, constants, limits)
        if not_acyclic is None:
            result.proved[ObligationId.C4B, None] = None
            result.notes.setdefault(ObligationId.C4B, []).extend([
                "the noise drawn before the loop, then each iteration's members, is an order in which each shift "
                "reads only earlier noise: the output decides every condition a shift reads noise in", *notes])
        elif acyclic.released_set_order(mech) is None:
            result.proved[ObligationId.C4B, None] = None
            result.notes.setdefault(ObligationId.C4B, []).append(acyclic.RELEASED_SET_ORDER)
    if len(product.folds) != folds_in_state:
        raise NotInductive("a fold over the loop's range read after the product's state was fixed")
    result.assumptions = set(enc.assumptions)
    return result


def _number_text(value: z3.ExprRef) -> str:
    """A model's value in the spec's notation (1/2, not a z3 repr)."""
    if z3.is_true(value):
        return "true"
    if z3.is_false(value):
        return "false"
    if z3.is_int_value(value):
        return str(value.as_long())
    if z3.is_rational_value(value):
        fraction = value.as_fraction()
        return str(fraction.numerator) if fraction.denominator == 1 else f"{fraction.numerator}/{fraction.denominator}"
    if z3.is_algebraic_value(value):
        return value.as_decimal(6).rstrip("?")
    return z3_text(value)


def _state_text(model: z3.ModelRef, product: _Product, carried: list[str]) -> str:
    """A loop head's state in a model: the index, each carried variable in both runs (x, x'), the aligned cost."""
    parts = [f"i = {_number_text(model.eval(product.i, model_completion=True))}"]
    for x in carried:
        for value, name in ((product.head1[x], x), (product.head2[x], f"{x}'")):
            if z3.is_expr(value):
                parts.append(f"{name} = {_number_text(model.eval(value, model_completion=True))}")
    parts.append(f"aligned_cost = {_number_text(model.eval(product.acost, model_completion=True))}")
    return ", ".join(parts)


def _prophecy(mech: ResolvedMechanism, suffix: list[n.Stmt]) -> OutputSeq | None:
    """The outputs after the loop as symbols fixed for the whole run, what the alignment reads as `out` before
    they are computed (a prophecy variable): the proof holds for every value of them, and where the loop ends it
    assumes that they are the first run's outputs (`_Exit.facts`), so it covers every run. None without
    statements after the loop."""
    if not suffix:
        return None
    count = sum(1 for s in suffix if isinstance(s, n.Output))
    sample = default_value(mech.output_type)
    if not z3.is_expr(sample):
        raise NotInductive("an output after the loop that is not a number or a truth value")
    return OutputSeq(tuple(_fresh_like(sample, f"%out[{k}]") for k in range(count)), zt.IntVal(count))


@dataclass
class _Exit:
    """The statements after the loop, run by both runs from a loop head where the loop ends (i = n, the head
    state the invariant describes; the loop has no `break`), with the outputs read as their prophecy P."""

    run1: Run
    run2: Run
    facts: list[z3.BoolRef]
    """i = max(n, 0), and the first run's outputs are P."""
    same: z3.BoolRef
    """The aligned run's outputs are P too (C4a at the end)."""

    @staticmethod
    def of(mech: ResolvedMechanism, enc: Encoding, suffix: list[n.Stmt], product: _Product, pre1: Run, pre2: Run,
           carried: list[str], prophecy: OutputSeq) -> _Exit:
        if not z3.is_true(z3.simplify(product.continues1)):
            raise EncodingError("statements after a loop that may `break`")
        run1 = Run(enc, {**{k: v for k, v in pre1.vars.items() if k not in carried}, **product.head1})
        run1.current = dict(pre1.current)
        run1.block(suffix)
        run2 = Run(enc, {**{k: v for k, v in pre2.vars.items() if k not in carried}, **product.head2},
                   shift=lambda name, index: product.align.shift(name, None), twin=run1)
        run2.current = dict(pre2.current)
        run2.block(suffix)
        count = len(prophecy.slots)
        if len(run1.slots) != count or len(run2.slots) != count:
            raise EncodingError("the outputs after the loop are not one per `output`")
        # the loop ends at i = n, or at once where n <= 0 (specs/incorrect/suffix_negative_bound.dp)
        facts = [product.i == z3.If(product.n >= 0, product.n, 0), run1.length == count,
                 *(equal(a, p) for a, p in zip(run1.slots, prophecy.slots)),
                 *(f.at_end() for f in product.folds.values())]
        same = zt.And(run2.length == count, *(equal(b, p) for b, p in zip(run2.slots, prophecy.slots)),
                      *(f.defined() for f in product.folds.values()))
        return _Exit(run1, run2, facts, same)

    def shift(self, product: _Product) -> Callable[[Draw], z3.ArithRef]:
        return lambda d: product.align.shift(d.site, None)

    def cost(self, product: _Product, cost_term) -> z3.ArithRef:
        """The aligned cost of the draws after the loop."""
        terms = []
        for d in self.run1.draws:
            site = product.mech.noise_site(d.site)
            if site.distribution.cost is not None:
                psi = _real(product.align.shift(d.site, None))
                terms.append(z3.If(d.guard, cost_term(product.enc, site, d) * z3.If(psi >= 0, psi, -psi), 0))
        return zt.Sum(terms) if terms else zt.RealVal(0)

    def draws_unconditionally(self) -> bool:
        """Both runs draw the same samples after the loop, whatever the state (C2 there)."""
        return len(self.run1.draws) == len(self.run2.draws) and \
            all(z3.is_true(z3.simplify(d.guard)) for d in [*self.run1.draws, *self.run2.draws])


SEARCHED = ("the invariant's conjuncts after Houdini's were found by Spacer, z3's engine for Horn clauses, over the "
            "product program (both runs, the aligned cost as a count of shifts W, the ghosts), then checked like the "
            "others: they hold at entry and every iteration that goes on keeps them")
"""The note of an invariant that `_Search` found."""


class _Search:
    """An invariant of the product program that Houdini's candidates do not give (a running maximum, a cost
    bounded through a clause's direction): the loop head's state — the index, both runs' carried variables, the
    ghosts, and the aligned cost as W = aligned_cost / r, r the cost coefficient of one draw, so that with the
    ratios of the other coefficients to r numbers or fixed values (sympy) an iteration adds Σ k·|ψ| to W, linear
    where the shifts are — searched by Spacer (smt/chc.py) against the obligations that failed (C4a's iteration,
    C4c's W <= claim / r), then checked with aligned_cost = r·W like any candidate (`invariant`)."""

    def __init__(self, mech: ResolvedMechanism, enc: Encoding, product: _Product, carried: list[str], entry: _State,
                 head: _State, after: _State, claim: z3.ArithRef, entry_cost: z3.ArithRef, cost_term,
                 limits: Limits):
        self.mech, self.enc, self.product, self.carried = mech, enc, product, carried
        self.states = entry, head, after
        self.claim, self.entry_cost, self.cost_term, self.limits = claim, entry_cost, cost_term, limits
        self.fixed_values = [v for v in [*entry["s1"].values(), *entry["s2"].values(), *product.constants.values(),
                                         *(x for pair in product.entries.values() for x in pair)]
                             if z3.is_expr(v)]
        """The values before the loop (the prefix's variables in both runs, the constants)."""

    def _vector(self, state: _State, w: z3.ArithRef) -> list[z3.ExprRef]:
        return [state["i"], *(state["s1"][x] for x in self.carried), *(state["s2"][x] for x in self.carried), w,
                *(state["g"][t] for t in sorted(state["g"])), *(state["u"][q] for q in sorted(state["u"])),
                *(state["w"][k] for k in sorted(state["w"])), *(state["f"][k] for k in sorted(state["f"]))]

    def _ratio(self, c: z3.ArithRef, r: z3.ArithRef) -> z3.ArithRef | None:
        """c / r simplified by sympy (`eps/2` over `eps/(2*N)` is N), or None."""
        try:
            ratio = simplify(from_z3(c) / from_z3(r))
            return to_z3(ratio, {t.decl().name(): t for t in constants_of([c, r])}, zt.current())
        except (NotSymbolic, ZeroDivisionError, TypeError):
            return None

    def _weighted(self, draws, shift, r: z3.ArithRef) -> z3.ArithRef | None:
        """Σ over the draws with a cost of If(drawn, (c / r)·|ψ|, 0); None when a ratio is not simple."""
        terms = []
        for d in draws:
            site = self.mech.noise_site(d.site)
            if site.distribution.cost is None:
                continue
            k = self._ratio(_real(self.cost_term(self.enc, site, d)), r)
            if k is None:
                return None
            psi = _real(shift(d))
            terms.append(z3.If(d.guard, k * z3.If(psi >= 0, psi, -psi), 0))
        return zt.Sum(terms) if terms else zt.RealVal(0)

    def invariant(self, assume: list[z3.BoolRef], init: list[z3.BoolRef], pre_draws, probe: _Product,
                  c4a_bad: list[z3.BoolRef], c4c: bool, ending: _Exit | None) -> tuple[str, z3.BoolRef] | None:
        """(its text, the invariant over the head state with the aligned cost) when Spacer finds one that rules
        out `c4a_bad` (the negation of C4a's iteration claim; with `ending`, also of its claim at the end), and
        when `c4c` the aligned cost above the claim (at the end, with `ending`), and it is checked; else None."""
        product, enc, limits = self.product, self.enc, self.limits
        entry, head, after = self.states
        acost = product.acost
        after_loop = ending.run1.draws if ending is not None else []
        costly = [d for d in [*product.run1.draws, *pre_draws, *after_loop]
                  if self.mech.noise_site(d.site).distribution.cost]
        r = _real(self.cost_term(enc, self.mech.noise_site(costly[0].site), costly[0])) if costly else None
        w = zt.Real("%W")
        w_entry = w_after = goal = None
        if r is not None and check_valid([enc.requires()], r > 0, limits, vacuity=False).status == Validity.PROVED:
            w_entry = self._weighted(pre_draws, lambda d: probe.align.shift(d.site, None), r)
            step_w = self._weighted(product.run1.draws, lambda d: product.align.shift(d.site, d.index), r)
            w_after = w + step_w if step_w is not None else None
            goal = self._ratio(self.claim, r)
        w_end = self._weighted(ending.run1.draws, ending.shift(product), r) if ending is not None and r is not None \
            else zt.RealVal(0)
        costs = c4c and w_entry is not None and w_after is not None and goal is not None and w_end is not None
        if not c4a_bad and not costs:
            return None
        # Houdini's conjuncts about the aligned cost stay out: W stands for it in the search
        plain = [f for f in assume if acost.decl().name() not in _symbols(f)]
        head_v = self._vector(head, w)
        entry_v = self._vector(entry, w_entry if w_entry is not None else zt.RealVal(0))
        after_v = self._vector(after, w_after if w_after is not None else w)
        iteration = constants_of([*(d.value for d in [*product.run1.draws, *product.run2.draws]),
                                  *(x.here for x in [*product.inputs1.values(), *product.inputs2.values()]
                                    if isinstance(x, LoopList))])
        # what holds at entry about the iteration's symbols (the support of its noise, eta >= 0 for Exp) is a fact
        # of each iteration, among the step's: not a premise of the entry clause
        init = _without(init, iteration)
        # what keeps its value for the whole run: the parameters, lengths, and what the prefix computed and drew
        fixed = constants_of([*init, *entry_v, *([goal] if goal is not None else []), *self.fixed_values,
                              *(product.out.slots if product.out is not None else ()),
                              *(f.prophecy for f in product.folds.values())])
        if {t.decl().name() for t in fixed} & {t.decl().name() for t in iteration}:
            return None  # this iteration's symbols read at entry: the clauses would not be per iteration
        bad = []
        at_end = [f for f in plain if not f.eq(product.i < product.n)] + (ending.facts if ending is not None else [])
        if c4a_bad:
            bad.append([*plain, *c4a_bad])
            if ending is not None:
                bad.append([*at_end, z3.Not(ending.same)])
        if costs and ending is not None:
            assert goal is not None and w_end is not None
            bad.append([*at_end, w + w_end > goal])
        elif costs:
            assert goal is not None and w_after is not None
            at_head = [f for f in plain if not f.eq(product.i < product.n)] + [product.i <= product.n]
            bad += [[*at_head, w > goal], [*plain, z3.Not(product.continues1), w_after > goal]]
        found = find_invariant(head_v, fixed, init, entry_v, [*plain, product.continues1], after_v, bad, limits)
        if found is None and len(bad) > 1:  # each obligation on its own: the cost's clauses may be out of reach
            parts = [find_invariant(head_v, fixed, init, entry_v, [*plain, product.continues1], after_v, [b], limits)
                     for b in bad]
            found = zt.And([p for p in parts if p is not None]) if any(p is not None for p in parts) else None
        if found is None:
            return None
        formula = z3.substitute(found, (w, acost / r)) if r is not None else found
        if r is None and w.decl().name() in _symbols(formula):
            return None

        def at(state: _State) -> z3.BoolRef:
            heads = self._vector(head, acost)
            values = cast_like(heads, self._vector(state, state["acost"]))
            assert values is not None, "the search's own vectors were cast"
            pairs = [(h, v) for h, v in zip(heads, values) if not h.eq(v)]
            return z3.substitute(formula, *pairs) if pairs else formula

        if check_valid(init, at(entry), limits, vacuity=False).status != Validity.PROVED or \
                check_valid([*assume, formula, product.continues1], at(after), limits,
                            vacuity=False).status != Validity.PROVED:
            return None
        if r is None or w.decl().name() not in _symbols(found):
            return self._text(found), formula
        return f"{self._text(found)}, W = aligned_cost·{z3_text(1 / r)}", formula

    def _text(self, formula: z3.BoolRef) -> str:
        """The invariant in the spec's names: x for the run on D, x' for the aligned run, W, i."""
        product = self.product
        renames = [(zt.Real("%W"), zt.Real("W")), (product.i, zt.Int("i"))]
        for x in self.carried:
            for value, mark in ((product.head1[x], ""), (product.head2[x], "'")):
                if z3.is_int(value):
                    renames.append((value, zt.Int(x + mark)))
                elif z3.is_bool(value):
                    renames.append((value, zt.Bool(x + mark)))
                else:
                    renames.append((value, zt.Real(x + mark)))
        if product.out is not None:
            renames += [(p, _fresh_like(p, f"out[{k}]")) for k, p in enumerate(product.out.slots)]
        renames += [(used, zt.Real(f"used({total})")) for total, (used, _, _, _) in product.used.items()]
        legend = []
        for k, prefix_fold in enumerate(product.prefix_folds.values()):
            renames.append((prefix_fold.head, _fresh_like(prefix_fold.head, f"S{k}")))
            legend.append(f"S{k} = `{prefix_fold.text}` over the iterations before this one")
        for k, fold in enumerate(product.folds.values()):
            renames += [(fold.head, _fresh_like(fold.head, f"G{k}")), (fold.seen, zt.Bool(f"G{k}_seen")),
                        (fold.prophecy, _fresh_like(fold.prophecy, f"G{k}_end"))]
            legend.append(f"G{k} = `{fold.text}` over the iterations so far (G{k}_seen: some member so far), "
                          f"G{k}_end its value at the end")
        text = formula_text(z3.substitute(formula, *renames))
        return "; ".join([text, *legend])


def _same_draws_across_runs(product: _Product, pre1: Run, pre2: Run, assume: list, entry: list,
                            limits: Limits) -> str | None:
    """C2 across the runs: when the outputs agree, (D, H) and (D', φ(H)) draw the same samples, in the prefix
    (`entry`: the prefixes' outputs agree) and in every iteration (`assume`: the invariant). The cost and the
    support conditions read the first run's draws only; a sample drawn only by the aligned run would be
    shifted with no term counting it (checks._same_draws_across_runs)."""
    run1, run2 = product.run1, product.run2
    if len(run1.draws) != len(run2.draws) or len(pre1.draws) != len(pre2.draws):
        return "the two runs have different sampling statements"
    same_out = run1.output.equal(run2.output)
    for premise, first, second in ((assume + [same_out], run1.draws, run2.draws), (entry, pre1.draws, pre2.draws)):
        same = [a.guard == b.guard for a, b in zip(first, second)]
        if same and check_valid(premise, zt.And(same), limits, vacuity=False).status != Validity.PROVED:
            return "a sample could not be shown to be drawn by both runs when the outputs agree"
    return None


@dataclass
class _SelfComposition:
    """Two runs on the same D with independent noise (A., B.), the prefix and one abstract iteration each, and what
    holds of them when their outputs agree: the loop-carried variables that provably agree at every loop head
    (Houdini), the iteration's outputs equal."""

    pre_a: Run
    pre_b: Run
    a: Run
    b: Run
    i: z3.ArithRef
    inputs: dict[str, Value]
    entry: list[z3.BoolRef]
    """What every query assumes at entry (requires, supports, lengths >= 0)."""
    base: list[z3.BoolRef]
    """entry, and 0 <= i < n."""
    assume: list[z3.BoolRef]
    """base, the invariant, and the iteration's outputs equal."""
    same_prefix_out: z3.BoolRef
    same_iter_out: z3.BoolRef
    heads: tuple[dict[str, z3.ExprRef], dict[str, z3.ExprRef]]
    """The loop-carried variables' values at the loop head, in A and in B."""
    carried: list[str]


def _self_composition(mech, enc, prefix, loop, carried, constants, limits, support_of, lengths) -> _SelfComposition:
    runs = []
    for tag in ("A.", "B."):
        pre = Run(enc, enc.params, noise_prefix=tag)
        pre.block(prefix)
        runs.append(pre)
    pre_a, pre_b = runs
    i, n_len = zt.Int("%i"), _loop_bound(loop, enc, lengths)
    inputs = {}
    for p in mech.params:
        if isinstance(enc.params[p.name], RecordList):
            inputs[p.name] = enc.params[p.name]
        elif isinstance(p.type, ListType):
            # a fixed entry q[k] is the product's symbol (both runs read D here)
            def fixed_entry(k: int, p=p) -> z3.ArithRef:
                return _scalar(f"{p.name}[{k}]", p.type.elem)

            inputs[p.name] = _EntriesList(_scalar(f"{p.name}[i]", p.type.elem), lengths[p.name], i, fixed_entry)
        else:
            inputs[p.name] = enc.params[p.name]
    heads = [{x: _fresh_like(pre.vars[x], f"{x}@{tag}") for x in carried} for pre, tag in ((pre_a, "A"), (pre_b, "B"))]
    iters = []
    for pre, head, tag in ((pre_a, heads[0], "A."), (pre_b, heads[1], "B.")):
        state = {**constants, **{k: v for k, v in pre.vars.items() if k not in carried}, **inputs, **head, loop.var: i}
        run = Run(enc, state, noise_prefix=tag)
        run.current = dict(pre.current)
        run.running.append(zt.BoolVal(True))
        run.block(loop.body)
        iters.append(run)
    a, b = iters
    entry = [enc.requires(), *support_of(enc), *(length >= 0 for length in lengths.values())]
    base = [*entry, i >= 0, i < n_len]
    same_prefix_out = OutputSeq(tuple(pre_a.slots), pre_a.length).equal(OutputSeq(tuple(pre_b.slots), pre_b.length)) \
        if pre_a.slots else zt.BoolVal(True)
    same_iter_out = zt.And(a.length == b.length, *(z3.Implies(k < a.length, equal(x, y))
                                                   for k, (x, y) in enumerate(zip(a.slots, b.slots))))
    # Two runs that draw the same noise agree on everything: the assumptions below have a model whenever
    # `entry` (resp. `base`) has one, which the final queries check; the Houdini rounds only search.
    alive = [x for x in carried if z3.is_expr(pre_a.vars[x]) and not z3.is_bool(pre_a.vars[x]) and
             check_valid(entry + [same_prefix_out], pre_a.vars[x] == pre_b.vars[x], limits,
                         vacuity=False).status == Validity.PROVED]
    alive = _houdini(alive, lambda kept: base + [heads[0][x] == heads[1][x] for x in kept] + [same_iter_out,
                                                                                            a.running[-1]],
                     lambda x: a.vars[x] == b.vars[x], limits)
    assume = base + [heads[0][x] == heads[1][x] for x in alive] + [same_iter_out]
    return _SelfComposition(pre_a, pre_b, a, b, i, inputs, entry, base, assume, same_prefix_out, same_iter_out,
                            (heads[0], heads[1]), list(carried))


_C = TypeVar("_C")
"""A candidate conjunct of an invariant (`_houdini`)."""


def _houdini(candidates: list[_C], assumptions: Callable[[list[_C]], list[z3.BoolRef]],
             after: Callable[[_C], z3.BoolRef], limits: Limits) -> list[_C]:
    """Houdini: the candidates that hold after an iteration from a head where all of them hold, dropped until the
    rest are preserved. A candidate that does not follow from the current set is in no preserved subset of it
    (assuming fewer proves less), so each round drops every one that fails there: the set that dropping one at a
    time gives, in fewer queries (an unknown counts as a failure either way)."""
    alive = list(candidates)
    while alive:
        assume = assumptions(alive)
        failing = {id(c) for c in alive
                   if check_valid(assume, after(c), limits, vacuity=False).status != Validity.PROVED}
        if not failing:
            break
        alive = [c for c in alive if id(c) not in failing]
    return alive


def _samples_determined(enc: Encoding, sc: _SelfComposition, limits: Limits) -> tuple[str | None, set[str]]:
    """C2 by induction on a self-composition: two runs on the same D whose outputs agree draw the same samples.
    The invariant keeps the loop-carried variables that provably agree between the two runs."""
    a, b, pre_a, pre_b = sc.a, sc.b, sc.pre_a, sc.pre_b
    guards = [da.guard == db.guard for da, db in zip(a.draws, b.draws)]
    prefix_guards = [da.guard == db.guard for da, db in zip(pre_a.draws, pre_b.draws)]
    if a.slots and b.slots:
        note_equality_ties(enc, a.slots[0], b.slots[0], OUTPUT_TIES)

    def ok() -> bool:
        # requires() read again: it carries the exact ties while they are excluded
        return check_valid([*sc.assume, enc.requires()], zt.And(*guards, a.running[-1] == b.running[-1]), limits,
                           satisfiable_if=sc.base).status == Validity.PROVED and \
            check_valid([*sc.entry, enc.requires(), sc.same_prefix_out],
                        zt.And(prefix_guards) if prefix_guards else zt.BoolVal(True),
                        limits, satisfiable_if=sc.entry).status == Validity.PROVED

    # almost surely: an exact tie of probability 0 excluded (a released noisy value equal to a sentinel)
    for excluding in _passes(enc):
        with _within(enc, excluding):
            if ok():
                return None, {t.text for t in enc.ties.values()} if excluding else set()
    # the carried variables that agree are not enough (they agree only off the ties, or only until the run stops):
    # an invariant of the self-composition searched for
    same: list[tuple[list[z3.BoolRef], z3.BoolRef]] = [([], zt.And(*guards, a.running[-1] == b.running[-1]))]
    for excluding in _passes(enc):
        with _within(enc, excluding):
            if prefix_guards and check_valid([*sc.entry, enc.requires(), sc.same_prefix_out],
                                             zt.And(prefix_guards), limits,
                                             satisfiable_if=sc.entry).status != Validity.PROVED:
                continue
            invariant = _decided_by_search(enc, sc, ({}, {}), same, limits, "so the two runs draw the same samples")
            if invariant is not None:
                return None, {invariant, *({t.text for t in enc.ties.values()} if excluding else set())}
    return "the draws of an iteration could not be shown to be determined by the output", set()


class _NotAcyclicHere(Exception):
    """The shifts read noise in a way the proof for every length of C4b does not take (the message says how)."""


def _own_reads(mech: ResolvedMechanism, e: n.Expr, loop_sites: set[str], prefix_sites: set[str],
               conditions: list[n.Expr]) -> None:
    """The reads of a shift of a member drawn in the loop, at the loop index: noise drawn before the loop (first in
    the order), and members drawn in this iteration only inside a condition of `?:` (collected in `conditions`: the
    output must decide each, and then it selects a branch and adds no read). Raises `_NotAcyclicHere` otherwise."""
    if isinstance(e, n.Conditional):
        if any(isinstance(x, (n.MemberRef, n.NoiseRef)) for x in walk(e.condition)):
            for x in walk(e.condition):
                if isinstance(x, n.NoiseRef) and x.id not in prefix_sites:
                    raise _NotAcyclicHere(f"a condition reads `{x.id}`")
                if isinstance(x, n.MemberRef) and x.id not in loop_sites:
                    raise _NotAcyclicHere(f"a condition reads `{unparse(x)}`")
            conditions.append(e.condition)
        _own_reads(mech, e.then, loop_sites, prefix_sites, conditions)
        _own_reads(mech, e.orelse, loop_sites, prefix_sites, conditions)
        return
    if isinstance(e, n.NoiseRef):
        if e.id not in prefix_sites:
            raise _NotAcyclicHere(f"a shift reads `{e.id}`")
        return
    if isinstance(e, n.MemberRef):
        raise _NotAcyclicHere(f"a shift reads `{unparse(e)}` outside a condition")
    if isinstance(e, n.Comprehension) and any(isinstance(x, (n.MemberRef, n.NoiseRef)) for x in walk(e)):
        raise _NotAcyclicHere("a comprehension in a shift reads noise")
    for child in children(e):
        _own_reads(mech, child, loop_sites, prefix_sites, conditions)


def _acyclic(mech: ResolvedMechanism, enc: Encoding, sc: _SelfComposition, loop: n.For, constants: dict,
             limits: Limits) -> tuple[str | None, list[str]]:
    """C4b for every length: an order of the noise in which each shift reads only earlier noise exists for every
    output when (1) no shift of noise drawn before the loop, and no let, reads noise; (2) the shift of a member
    drawn in the loop reads noise drawn before the loop, and members of its own iteration only inside conditions
    of `?:`; (3) the output decides each such condition: two runs on D with the same output (`sc`, the
    self-composition of C2, whose invariant holds at every loop head) agree on it in every iteration, almost surely
    (an exact tie of probability 0 excluded, `encode.note_ties`). Then the noise drawn before the loop, followed by
    the members in the order of the iterations, is such an order: a condition the output decides selects a branch
    and adds no read (acyclic.py). Returns (None, the ties it excluded) or (why not, {})."""
    assert mech.alignment is not None, "C4b is of an alignment"
    loop_sites = {site.name for site in mech.noise if site.loop is loop}
    prefix_sites = {site.name for site in mech.noise if site.loop is None}
    if any(mech.reads_noise(let.value) for let in mech.alignment.lets):
        return "a let reads noise", []
    conditions: list[tuple[n.Expr, str | None, str]] = []
    try:
        for shift in mech.alignment.shifts:
            if shift.var in loop_sites:
                found: list[n.Expr] = []
                _own_reads(mech, shift.shift, loop_sites, prefix_sites, found)
                conditions += [(c, shift.index_var, shift.var) for c in found]
            elif mech.reads_noise(shift.shift):
                return f"the shift of {shift.var}, drawn before the loop, reads noise", []
    except _NotAcyclicHere as error:
        return str(error), []
    if not conditions:
        return None, []

    folds: tuple[dict[str, _PrefixFold], dict[str, _PrefixFold]] = ({}, {})

    def value_in(run: Run, pre: Run, condition: n.Expr, index_var: str | None,
                 ghosts: dict[str, _PrefixFold]):
        prefix = run.noise_prefix

        def noise(name: str, index, node):
            site = mech.site(name)
            if site is None:
                return None
            if index is None:
                return pre.current.get(name)
            if not same_index(index, sc.i):
                raise EncodingError("a condition reads another iteration's noise")
            return enc.noise_symbol(name, CURRENT, site.distribution.integer, prefix)

        out: Any = IterOutput(run.slots[0] if run.slots else default_value(mech.output_type), sc.i)
        env = {**constants, **sc.inputs, **({index_var: sc.i} if index_var else {})}
        return _RunEval(ghosts, prefix, sc.i, run.length, enc, env, {}, noise=noise, out=out).value(condition)

    def drawn(run: Run, site: str) -> z3.BoolRef:
        return zt.Or([d.guard for d in run.draws if d.site == site])

    if sc.a.slots and sc.b.slots:
        note_equality_ties(enc, sc.a.slots[0], sc.b.slots[0], OUTPUT_TIES)
    used: set[str] = set()
    decided: list[tuple[list[z3.BoolRef], z3.BoolRef]] = []
    """(where the shifted member is drawn in both runs, the condition's values agree) for each condition."""
    for condition, index_var, site in conditions:
        try:
            mine = value_in(sc.a, sc.pre_a, condition, index_var, folds[0])
            theirs = value_in(sc.b, sc.pre_b, condition, index_var, folds[1])
        except EncodingError as error:
            return str(error), []
        # only where the shifted member is drawn (a member that is not drawn has no shift to decide)
        decided.append(([drawn(sc.a, site), drawn(sc.b, site)], mine == theirs))
    failed = None
    for (where, agree), (condition, _, _) in zip(decided, conditions):
        premise = [*sc.assume, *where]
        answer = check_valid([*premise, enc.requires()], agree, limits, vacuity=False)
        if answer.status != Validity.PROVED and enc.ties:
            with enc.excluding_ties():
                answer = check_valid([*premise, enc.requires()], agree, limits, vacuity=False)
            if answer.status == Validity.PROVED:
                used |= {t.text for t in enc.ties.values()}
        if answer.status != Validity.PROVED:
            failed = f"the output could not be shown to decide `{unparse(condition)}` in every iteration"
            break
    if failed is None:
        return None, sorted(used)
    for excluding in _passes(enc):
        with _within(enc, excluding):
            invariant = _decided_by_search(enc, sc, folds, decided, limits, "so the output decides each condition")
        if invariant is not None:
            return None, [invariant, *(sorted(t.text for t in enc.ties.values()) if excluding else [])]
    return failed, []


def _decided_by_search(enc: Encoding, sc: _SelfComposition,
                       folds: tuple[dict[str, _PrefixFold], dict[str, _PrefixFold]],
                       decided: list[tuple[list[z3.BoolRef], z3.BoolRef]], limits: Limits,
                       conclusion: str) -> str | None:
    """What two runs on D with the same output must agree on in every iteration — C4b's conditions that the output
    decides, C2's draws — by an invariant of the self-composition that Spacer finds (smt/chc.py) when the carried
    variables' equalities are not enough: its state is the index, both runs' carried variables and their ghosts of
    `sum`/`count(l in 0 .. i: f(l))` (`_RunEval`); an iteration goes on in both runs with equal outputs; the bad
    states are those where (in `decided`, each where its premises hold) the runs disagree. The invariant is then
    checked like any other (entry, preservation, each agreement). Returns the note that states it (ending with
    `conclusion`), or None."""
    a, b = sc.a, sc.b
    if set(folds[0]) != set(folds[1]):
        return None
    names = sorted(folds[0])
    carried = [x for x in sc.carried if z3.is_expr(sc.pre_a.vars[x]) and z3.is_expr(sc.pre_b.vars[x])]
    head = [sc.i, *(sc.heads[0][x] for x in carried), *(sc.heads[1][x] for x in carried),
            *(folds[k][t].head for k in (0, 1) for t in names)]
    entry = [zt.IntVal(0), *(sc.pre_a.vars[x] for x in carried), *(sc.pre_b.vars[x] for x in carried),
             *(_zero_like(folds[k][t].head) for k in (0, 1) for t in names)]
    after = [sc.i + 1, *(a.vars[x] for x in carried), *(b.vars[x] for x in carried),
             *(folds[k][t].head + folds[k][t].step for k in (0, 1) for t in names)]
    entry_v, after_v = cast_like(head, entry), cast_like(head, after)
    if entry_v is None or after_v is None:
        return None
    step = [*sc.base, enc.requires(), sc.same_iter_out, a.running[-1], b.running[-1]]
    iteration = constants_of([*(d.value for d in [*a.draws, *b.draws]),
                              *(x.here for x in sc.inputs.values() if isinstance(x, LoopList))])
    # requires as at entry (the ties excluded are of one iteration), without the facts of an iteration's symbols
    init = _without([*sc.entry, sc.same_prefix_out], iteration)
    # what keeps its value for the whole run: the parameters, lengths, and what the prefixes computed and drew
    fixed = constants_of([*init, *entry_v, *(v for pre in (sc.pre_a, sc.pre_b) for v in pre.current.values()
                                             if z3.is_expr(v))])
    if {t.decl().name() for t in fixed} & {t.decl().name() for t in iteration}:
        return None
    bad = [[*sc.base, enc.requires(), sc.same_iter_out, *where, z3.Not(agree)] for where, agree in decided]
    found = find_invariant(head, fixed, init, entry_v, step, after_v, bad, limits)
    if found is None:
        return None

    def at(values: list[z3.ExprRef]) -> z3.BoolRef:
        pairs = [(h, v) for h, v in zip(head, values) if not h.eq(v)]
        return z3.substitute(found, *pairs) if pairs else found

    if check_valid(init, at(entry_v), limits, vacuity=False).status != Validity.PROVED or \
            check_valid([*step, found], at(after_v), limits, vacuity=False).status != Validity.PROVED or \
            not all(check_valid([*sc.base, enc.requires(), sc.same_iter_out, found, *where], agree, limits,
                                satisfiable_if=sc.base).status == Validity.PROVED for where, agree in decided):
        return None
    renames = [(h, _fresh_like(h, h.decl().name())) for h in head[1:1 + 2 * len(carried)]]
    legend = []
    for k, t in enumerate(names):
        renames += [(folds[0][t].head, _fresh_like(folds[0][t].head, f"S{k}@A")),
                    (folds[1][t].head, _fresh_like(folds[1][t].head, f"S{k}@B"))]
        legend.append(f"S{k} = `{t}` so far")
    renames.append((sc.i, zt.Int("i")))
    text = formula_text(z3.substitute(found, *renames))
    return "; ".join([f"two runs on D with independent noise and the same output (x@A, x@B: x in each) keep "
                      f"`{text}` at every loop head (found by Spacer, z3's engine for Horn clauses, and checked), "
                      f"{conclusion}", *legend])


def _passes(enc: Encoding) -> list[bool]:
    """Whether the exact ties are excluded in each pass of a check: as written, then, when ties were noted, almost
    surely (`_within`)."""
    return [False, True] if enc.ties else [False]


def _within(enc: Encoding, excluding: bool) -> contextlib.AbstractContextManager:
    """The pass: with the exact ties excluded or not."""
    return enc.excluding_ties() if excluding else contextlib.nullcontext()


def _without(facts: list[z3.BoolRef], symbols: list[z3.ExprRef]) -> list[z3.BoolRef]:
    """The facts that read none of `symbols` (dropping a premise of an entry clause only makes it stronger)."""
    names = {t.decl().name() for t in symbols}
    return [f for f in facts if not _symbols(f) & names]


def _zero_like(x: z3.ExprRef) -> z3.ExprRef:
    return zt.IntVal(0) if z3.is_int(x) else zt.RealVal(0)


class _RunEval(ExprEval):
    """A shift's condition seen from one run of the self-composition (C4b): `sum`/`count(l in 0 .. i + 1: f(l))`
    (or `0 .. i`) is that run's ghost (`_PrefixFold`: f summed over the iterations before this one, f(i) this
    iteration's term, `_so_far`); any other comprehension as `ExprEval` has it."""

    def __init__(self, ghosts: dict[str, _PrefixFold], tag: str, i: z3.ArithRef, length: z3.ArithRef, *args,
                 **kwargs):
        super().__init__(*args, **kwargs)
        self.ghosts, self.tag, self.i, self.length = ghosts, tag, i, length

    def visit_comprehension(self, e: n.Comprehension, ctx: None = None):
        if e.func in ("count", "sum") and isinstance(e.domain, n.Range):
            so_far = _so_far(self, e, self.arith(e.domain.lo), self.arith(e.domain.hi), self.i, self.length,
                             self.ghosts, self.tag)
            if so_far is not None:
                return so_far
        return super().visit_comprehension(e, ctx)


def _share(bound_text: str) -> str:
    """d/B in an invariant's text (d alone when B is 1)."""
    return "d" if bound_text == "1" else f"d/{bound_text}" if bound_text.isidentifier() else f"d/({bound_text})"


def _record_facts(mech: ResolvedMechanism, enc: Encoding) -> list[z3.BoolRef]:
    """The add/remove-one-record clauses over the records views of the lists with a private length."""
    facts = []
    for p in mech.params:
        here, there = enc.params[p.name], enc.neighbour.get(p.name)
        if isinstance(here, RecordList) and isinstance(there, RecordList):
            facts += [f for adj in p.adjacency if adj.rule.changes_length
                      for f in record_adjacency(adj.rule, here, there)]
    return facts


RECORD_BUDGET = "the record's share of the folds"
"""The name of the records' ghost total (`_record_budget`) in the invariant's text."""


def _record_budget(product: _Product, loop: n.For, entry: list[z3.BoolRef], limits: Limits) -> str | None:
    """The record r that q and q' do not share, as a budget spent by the iterations (a histogram of records:
    bin j counts r only where r = j). The share of iteration i is s(i) = Σ |fold(q') - fold(q)| over the folds
    it evaluates that depend on i, each fold's difference being change·f_i(r) (Encoding.summary). When z3
    proves s(i) <= 1 for every iteration and s(i) = 0 or s(j) = 0 for any two iterations i < j — the record
    counts in at most one — every neighbouring pair has used + s(i) <= 1 at every iteration, used the shares of
    the iterations before: the L1 clause's ghost total with bound 1, and its invariant template
    aligned_cost <= (claim)·used applies. Returns the note for C4c, or None when the lemma does not hold (or
    a share reads what changes from one iteration to the next: the head state, the iteration's noise)."""
    enc = product.enc
    index = product.i.decl().name()
    shares = [t for t in enc.record_terms.values() if index in _symbols(t)]
    if not shares:
        return None
    share = zt.Sum([z3.If(t >= 0, t, -t) for t in shares])
    if _moves(product, share) or not _counts_once(product, share, entry, limits):
        return None
    used = zt.Real(f"%used({RECORD_BUDGET})")
    product.used[RECORD_BUDGET] = (used, share, zt.RealVal(1), "1")
    product.adjacent += [used >= 0, used + share <= 1]
    return (f"the record that q and q' do not share changes the folds of at most one "
            f"iteration of the loop at line {loop.span.line}, by at most 1 (z3: no two iterations both "
            f"change), so the iterations spend at most a budget of 1 between them")


def _moves(product: _Product, term: z3.ArithRef) -> bool:
    """Whether term reads something other than the index and what stays fixed over the loop (parameters, the
    record, the prefix's values): the head state, the aligned cost, the ghost counters, this iteration's noise.
    Such a term is not the same function of the index at every iteration: a records' share that `_counts_once`
    compares at two indices, a window's period."""
    return any(_symbols(term) & _symbols(x) for x in _moving(product) if z3.is_expr(x))


def _moving(product: _Product) -> list:
    """What changes from one iteration to the next: the head state, the aligned cost, the ghosts, this iteration's
    noise."""
    return [*product.head1.values(), *product.head2.values(), product.acost, *product.ghost_head.values(),
            *(f.head for f in product.prefix_folds.values()), *(d.value for d in product.run1.draws)]


def _fixed_over_loop(product: _Product, term: z3.ArithRef) -> bool:
    """Whether term has one value in every iteration: it reads neither what changes between iterations
    (`_moving`) nor the index nor an entry read at the index (`T[i]`). A template's coefficient must (a noise scale
    that reads a counter gives a cost coefficient that changes with the head state: as a fixed b, each iteration
    would be checked against a b of its own, specs/incorrect/counter_template_scale_reads_counter.dp)."""
    at_index = [*_moving(product), product.i, *(d.value for d in product.run2.draws),
                *(x.here for x in [*product.inputs1.values(), *product.inputs2.values()] if isinstance(x, LoopList))]
    return not any(_symbols(term) & _symbols(x) for x in at_index if z3.is_expr(x))


def _counts_once(product: _Product, share: z3.ArithRef, entry: list[z3.BoolRef], limits: Limits) -> bool:
    """The lemma of the records' budget: s(i) <= 1 at every iteration, and s(i) = 0 or s(j) = 0 for any two
    iterations i < j (then the shares of all the iterations sum to at most 1)."""
    later = zt.Int("%i#later")
    share_later = z3.substitute(share, (product.i, later))
    once = check_valid([*entry, product.i >= 0, product.i < later, later < product.n],
                       zt.Or(share == 0, share_later == 0), limits, vacuity=False)
    small = check_valid([*entry, product.i >= 0, product.i < product.n], share <= 1, limits, vacuity=False)
    return once.status == Validity.PROVED and small.status == Validity.PROVED


def _symbolic_lengths(mech: ResolvedMechanism, enc: Encoding) -> dict:
    """A length symbol of its own for each list parameter (`len(q)` in `requires` and in the prefix reads it),
    and the list parameters of `enc` replaced by views that know only that length."""
    lengths = {}
    for p in mech.params:
        value = enc.params[p.name]
        if isinstance(value, RecordList):
            lengths[p.name] = value.length
        elif isinstance(p.type, ListType):
            length = zt.Int(f"len({p.name})")
            lengths[p.name] = length
            nowhere = zt.Int(f"%no_index({p.name})")
            enc.params[p.name] = LoopList(_scalar(f"{p.name}[?]", p.type.elem), length, nowhere)
            if p.name in enc.neighbour:
                enc.neighbour[p.name] = LoopList(_scalar(f"{p.name}'[?]", p.type.elem), length, nowhere)
    return lengths


def _prefix_cost(pre1: Run, probe: _Product, cost_term) -> z3.ArithRef:
    terms = []
    for d in pre1.draws:
        site = probe.mech.noise_site(d.site)
        if site.distribution.cost is None:
            continue
        psi = _real(probe.align.shift(d.site, None))
        terms.append(z3.If(d.guard, cost_term(probe.enc, site, d) * z3.If(psi >= 0, psi, -psi), 0))
    return zt.Sum(terms) if terms else zt.RealVal(0)


def _eval_in(enc: Encoding, state: dict, constants: dict, e: n.Expr):
    return ExprEval(enc, {**enc.params, **constants, **state}, {}).value(e)


def _iteration_cost_bound(mech: ResolvedMechanism, product: _Product, cost_term, limits: Limits,
                          tight: bool = False) -> z3.ArithRef | None:
    """Σ over the iteration's sampling sites of c·(a bound on |ψ|), for the template
    aligned_cost <= a + b·counter; None when some shift has no syntactic bound. With `tight`, each shift's bound
    is the largest of its parts' bounds rather than their sum (`(down ? 0 : Delta) + q[i] - q'[i]` is at most
    Delta under a one-sided adjacency): only a candidate, which Houdini keeps if the iterations preserve it."""
    assert mech.alignment is not None, "_prove requires an alignment"
    total = []
    seen = set()
    for d in product.run1.draws:
        if d.site in seen:
            continue
        seen.add(d.site)
        shift = mech.alignment.shift_of(d.site)
        if shift is None or not mech.noise_site(d.site).distribution.lipschitz:
            continue
        bound = _shift_bound(mech, product, shift.shift, limits, tight)
        if bound is None:
            return None
        total.append(cost_term(product.enc, mech.noise_site(d.site), d) * bound)
    return zt.Sum(total) if total else None


def _larger(enc: Encoding, a: z3.ArithRef, b: z3.ArithRef, limits: Limits) -> z3.ArithRef:
    """max(a, b), written without a case when `requires` decides it."""
    for larger, smaller in ((a, b), (b, a)):
        if check_valid([enc.requires()], larger >= smaller, limits, vacuity=False).status == Validity.PROVED:
            return larger
    return z3.If(a >= b, a, b)


def _shift_bound(mech: ResolvedMechanism, product: _Product, e: n.Expr, limits: Limits,
                 tight: bool = False) -> z3.ArithRef | None:
    """An upper bound of |e| from its shape: constants, conditionals, and x - x' paired by adjacency (with
    `tight`, the largest of the terms' bounds instead of their sum: a candidate, not a bound)."""
    enc = product.enc
    if isinstance(e, n.Conditional):
        a, b = (_shift_bound(mech, product, e.then, limits, tight),
                _shift_bound(mech, product, e.orelse, limits, tight))
        if a is None or b is None:
            return None
        return _larger(enc, a, b, limits)
    terms: list[tuple[int, n.Expr]] = []

    def flatten(x: n.Expr, sign: int) -> None:
        if isinstance(x, n.Binary) and x.op in "+-":
            flatten(x.left, sign)
            flatten(x.right, sign if x.op == "+" else -sign)
        elif isinstance(x, n.Unary) and x.op == "-":
            flatten(x.operand, -sign)
        else:
            terms.append((sign, x))

    flatten(e, 1)
    total: z3.ArithRef | None = None

    def add(x: z3.ArithRef) -> None:
        nonlocal total
        total = x if total is None else _larger(enc, total, x, limits) if tight else total + x

    used: set[int] = set()
    for k, (sign, term) in enumerate(terms):
        if k in used:
            continue
        fixed = _fixed_value(mech, product, term)
        if fixed is not None:  # a number, or the same value in every iteration of both runs
            add(_abs(enc, fixed, limits))
            continue
        if isinstance(term, n.Binary) and term.op == "*":
            for factor, other in ((term.left, term.right), (term.right, term.left)):
                scale = _fixed_value(mech, product, factor)
                bound = _shift_bound(mech, product, other, limits, tight) if scale is not None else None
                if scale is not None and bound is not None:
                    add(_abs(enc, scale, limits) * bound)
                    break
            else:
                return None
            continue
        if isinstance(term, n.Conditional):
            bound = _shift_bound(mech, product, term, limits, tight)
            if bound is None:
                return None
            add(bound)
            continue
        base = term.base if isinstance(term, n.Index) else term
        if not isinstance(base, n.ParamRef):
            return None
        partner = next((j for j, (s2, t2) in enumerate(terms) if j not in used and j != k and s2 == -sign and
                        _same_place(term, t2) and _primed(t2) != base.primed), None)
        param = mech.param(base.id)
        if partner is None or param is None or not param.adjacency:
            return None
        adj = next((a for a in param.adjacency if a.rule.bounds_entries and a.rule.measure is None), None)
        if adj is None:
            return None
        used.add(partner)
        assert adj.bound is not None, "a clause that bounds every entry has a bound"
        add(_real(ExprEval(enc, dict(enc.params), {}).arith(adj.bound)))
    return total if total is not None else zt.RealVal(0)


def _abs(enc: Encoding, x: z3.ArithRef, limits: Limits) -> z3.ArithRef:
    """|x|, written without a case when `requires` decides the sign (`2 * Delta` with Delta > 0)."""
    x = _real(x)
    for sign in (1, -1):
        if check_valid([enc.requires()], sign * x >= 0, limits, vacuity=False).status == Validity.PROVED:
            return z3.simplify(sign * x)
    return z3.If(x >= 0, x, -x)


def _fixed_value(mech: ResolvedMechanism, product: _Product, e: n.Expr) -> z3.ArithRef | None:
    """The value of `e` when it is the same in every iteration and both runs — it reads only numbers, public scalar
    parameters and the constants derived from them — else None."""
    for sub in walk(e):
        if isinstance(sub, (n.NoiseRef, n.MemberRef, n.OutRef, n.LocalRef, n.LetRef, n.Comprehension, n.Index)):
            return None
        if isinstance(sub, n.ParamRef):
            param = mech.param(sub.id)
            if sub.primed or param is None or not param.public or isinstance(param.type, ListType):
                return None
        if isinstance(sub, n.VarRef) and sub.id not in mech.constants:
            return None
    try:
        value = ExprEval(product.enc, {**product.enc.params, **product.constants}, {}).value(e)
    except EncodingError:
        return None
    return _real(value) if z3.is_expr(value) and z3.is_arith(value) else None


def _primed(e: n.Expr) -> bool:
    """Whether `x'` or `x'[i]` names the neighbour's value."""
    base = e.base if isinstance(e, n.Index) else e
    return isinstance(base, n.ParamRef) and base.primed


def _same_place(a: n.Expr, b: n.Expr) -> bool:
    def strip(x: n.Expr) -> str:
        return unparse(x).replace("'", "")

    return strip(a) == strip(b)
