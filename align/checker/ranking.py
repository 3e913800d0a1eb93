"""Unbounded proofs: Lemma 1's obligations for every input length, for mechanisms that rank a noisy vector.

Applies to the shape of Report Noisy Max, Noisy Top-K (with Gap) and the hybrids of Free Gap Sections 6-7:

    prefix            statements without loops (scalar noise allowed: Algorithm 6's threshold), no output
    map loop          for i in 0 .. len(q) { eta ~ D(...); x[i] = e(q[i], eta, ...) }
    ranking           statements without loops: r = top_k_with_gaps(x, k) / top_k(x, k) / argmax(x) / argmin(x)
                      (and outputs that read them)
    output loop       optionally last: for t in 0 .. K { ...; output e } (or `if c { output e } else { break }`)

Instead of unrolling, every list is a z3 array of symbolic length (`ArrayV`): the map loop's body is run once
at a symbolic index i and its lists become `Lambda i. e(i)`; list parameters and noise families are arrays.
Each vector builtin is stated by the relation that defines it, with quantifiers over indices (z3 arrays and
∀ with E-matching) — stated once here, and true of the interpreter's builtins (tests/test_ranking.py checks
the relation against `align/interp` on random vectors):

- top_k(v, k) = J (0 <= k <= n): J is injective into 0 .. n-1 (an inverse `position` on the selected set S),
  v[J[0]] > v[J[1]] > ... > v[J[k-1]], and every l not in S has v[l] < v[J[k-1]]. With no ties (see below)
  exactly one J satisfies this, the one the interpreter returns.
- top_k_with_gaps(v, k) (0 <= k < n): the same J, with gaps v[J[t]] - v[J[t+1]] and, for the last,
  v[J[k-1]] - M, where M = max(l not in S: v[l]).
- argmax(v) = J[0] of top_k(v, 1) (n >= 1); argmin(v) the same for -v.
- max/min(l in 0 .. n [not in S]: e(l)) = M with a witness w in the domain, e(w) = M, and e(l) <= M for every
  l in the domain. The domain must be non-empty: for `not in S` with S the selected indices of a ranking
  of length n, that is |S| < n (a set of fewer than n indices misses one of 0 .. n-1), proved from `requires`.
- an output loop `for t in 0 .. K` that outputs one item per iteration until a `break`: its length is the
  L with 0 <= L <= K, the loop continuing at every t < L, and stopping at L when L < K.

Ties: the values ranked are a + c·η_i with c a nonzero number and η_i the i-th member of a noise family with a
density, read at no other index (checked on the element term), so ties have probability 0 (Theorem 10.1) and
the first run's relation uses strict inequalities.

The aligned run (D', φ(H)) is not ranked afresh: C4a asks that the first run's J satisfy the defining relation
on the aligned values (strictly, so it is the aligned run's result whatever the tie-breaking), that the first
run's output length satisfy the aligned loop's stopping relation, and that the outputs agree slot by slot.
Definitions of auxiliary symbols (a maximum, an output length) are conservative: each has a value in every
model of the rest (the maximum over a non-empty finite set, the first stop), so they never make the
assumptions vacuous.

Cost (C4c) is a sum over a symbolic set of noise members, which no quantifier-free query states. Two facts
bound it, each checked by z3:
- a family whose shift is 0 outside the released indices S = indices(out) ("gated": proved for every index
  not in S) contributes Σ_{x in S} c·|ψ(x)| <= |S|·max_{x in S} c·|ψ(x)|, with |S| <= len(out);
- any other family contributes at most n·max_i c·|ψ(i)|.
So C4c is proved when prefix cost + |S|·c·|ψ(x)| + n·c'·|ψ'(i)| <= claim for every x in S and every i < n.

Acyclicity (C4b) for every length: every shift that reads noise is `i in S ? e : e0` where e0 reads no noise,
S is determined by the output, and e reads noise only as members eta[l] of comprehensions over `l not in S`,
whose own shifts are then e0-branches: every read goes from a member in S to one outside S, which reads
nothing (Free Gap Lemma 4's order: the members outside I_w first).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import z3

from .. import nodes as n
from ..obligations import ObligationId
from ..resolve import ResolvedMechanism, statement_exprs, walk, walk_statements
from ..smt import terms as zt
from ..smt.densities import well_formed
from ..smt.encode import (
    CURRENT,
    Z3_SPLIT_OPS,
    ArrayV,
    Draw,
    Encoding,
    EncodingError,
    ExprEval,
    IndexSetV,
    ListV,
    RangeV,
    RankV,
    Run,
    TailOutput,
    TupV,
    Value,
    _abs,
    _concrete,
    _real,
    _symbols,
    _term,
    equal,
    subterms,
)
from ..smt.solver import Limits, Validity, check_valid
from ..smt.supports import member_support
from ..types import ListType
from ..unparse import unparse
from .acyclic import RELEASED_SET_ORDER, reads_noise_through, released_set_order
from .every_length import Context, Inductive, NotInductive, draw_conditions
from .induction import _loop_list

PER_INDEX_RLIMIT = 500_000
"""z3's resource limit for the quantified attempt at a per-draw obligation (C4d, C3, C0 at a symbolic index), made
only when the attempt without quantifiers fails. Every such obligation of the corpus that holds is proved without
quantifiers (their quantified queries took at most 65,000 steps); a failing one can search far longer for a model
of the quantified definitions (Free Gap Section 6.2's alignment with Exp noise: 6.7 million steps, 3 s, to find
that C4d may fail). Nothing rests on its answer but whether the bounded check runs: an obligation not proved here
goes there, which refutes it at the shortest length or reports it bounded (docs/checker.md, "Limits")."""

RANKINGS = ("top_k", "top_k_with_gaps", "argmax", "argmin")
NAME = "ranking"
"""How the report names this proof when it declines."""


@dataclass
class _Vectors:
    """The quantified facts of one proof: definitions (assumed), the aligned run's relations (C4a goals) and
    the preconditions of the builtins and comprehensions (proved from the assumptions)."""

    enc: Encoding
    axioms: list[z3.BoolRef] = field(default_factory=list)
    goals: list[z3.BoolRef] = field(default_factory=list)
    defined: list[tuple[z3.BoolRef, str, int]] = field(default_factory=list)
    """(condition, what fails without it, how many axioms were stated before it): a definition that claims a
    value exists (a maximum's witness, a ranking) is sound only where its precondition holds, so each
    precondition is proved from the axioms stated before it, never from its own."""
    ranked: dict[int, RankV] = field(default_factory=dict)
    """What the first run's ranking at each call (by node) decided, for the aligned run to be checked against."""
    observed: dict[int, z3.ArithRef] = field(default_factory=dict)
    """For a ranking whose indices the output loop releases in order (order[t] at step t < L): L, the length of
    the prefix of the ranking that the output shows (rankings not here are observed whole)."""
    released: dict[int, RankV] = field(default_factory=dict)
    """The ranking whose indices the output loop releases, by the output loop's length symbol."""
    lemmas: dict[ObligationId, list[str]] = field(default_factory=dict)
    """What each obligation's proof relied on (shown in the report)."""
    extrema: list[_Extremum] = field(default_factory=list)
    """Every max/min of a comprehension, with its witness: their ground instances (`_Extremum.ground`) are what
    Free Gap's Lemma 5 (the maxima over D and D' differ by at most the entries' difference) rests on."""
    count: int = 0

    def release(self, out: TailOutput) -> None:
        """Whether the output loop releases order[t] of one ranking at each step t < L (proved), recorded."""
        first = _term(out.tail.items[0]) if isinstance(out.tail, TupV) else _term(out.tail) \
            if out.tail is not None and z3.is_expr(out.tail) else None
        if first is None or out.var is None:
            return
        ranks = [(node, rank) for node, rank in self.ranked.items()
                 if any(a.eq(rank.order) for a in _selects_at(first, out.var))]
        if len(ranks) != 1:
            return
        (node, rank), = ranks
        t = self.index("t")
        length = out.tail_length
        self.require(_forall(t, z3.Implies(_in(zt.IntVal(0), t, length), z3.substitute(first, (out.var, t)) ==
                                           z3.Select(rank.order, t))),
                     "the output loop releases the ranking's indices in order")
        if rank.gaps is None:  # gaps read the next index and the best of the rest: observed whole
            self.observed[node] = length
        self.released[length.get_id()] = rank

    def fresh(self, base: str, sort: z3.SortRef) -> z3.ExprRef:
        self.count += 1
        return z3.Const(f"%{base}{self.count}", sort)

    def index(self, base: str) -> z3.ArithRef:
        index = self.fresh(base, zt.IntSort())
        assert isinstance(index, z3.ArithRef)
        return index

    def require(self, condition: z3.BoolRef, text: str) -> None:
        self.defined.append((condition, text, len(self.axioms)))

    def lemma(self, text: str, *obligations: ObligationId) -> None:
        for o in obligations or (ObligationId.C4A, ObligationId.C4C):
            if text not in self.lemmas.setdefault(o, []):
                self.lemmas[o].append(text)


def _in(lo: z3.ArithRef, x: z3.ArithRef, hi: z3.ArithRef) -> z3.BoolRef:
    return zt.And(lo <= x, x < hi)


def _ground(term: z3.ExprRef) -> bool:
    """Whether term has no quantifier."""
    return not any(z3.is_quantifier(t) for t in subterms(term))


@dataclass(frozen=True)
class _Extremum:
    """M = max (or min) of body over domain, attained at the witness w (the definition `_extremum` states)."""

    highest: bool
    witness: z3.ArithRef
    value: z3.ArithRef
    domain: Callable[[z3.ArithRef], z3.BoolRef]
    body: Callable[[z3.ArithRef], z3.ArithRef]

    def bounds_at(self, x: z3.ArithRef) -> z3.BoolRef:
        """The definition's ∀ instantiated at x: x in the domain implies body(x) <= M (>= for min)."""
        at = self.body(x)
        return z3.Implies(self.domain(x), at <= self.value if self.highest else at >= self.value)

    @staticmethod
    def ground(extrema: list[_Extremum], points: list[z3.ArithRef]) -> list[z3.BoolRef]:
        """Quantifier-free consequences of the definitions: each witness is in its domain and attains the value,
        and each ∀ is instantiated at every witness and at `points`. For two maxima whose bodies differ by at
        most d at every index (m over q, m' over q'), these give m' - m <= body'(w') - body(w') and
        m' - m >= body'(w) - body(w): with the adjacency at w and w', |m' - m| <= d — Lemma 5's proof, whose
        hypothesis is only ever instantiated at these indices."""
        facts = [zt.And(e.domain(e.witness), e.body(e.witness) == e.value) for e in extrema]
        at = [e.witness for e in extrema] + points
        facts += [e.bounds_at(x) for e in extrema for x in at if not x.eq(e.witness)]
        return facts


def _forall(x: z3.ArithRef, body: z3.BoolRef) -> z3.BoolRef:
    return z3.ForAll([x], body)


class _VectorEval(ExprEval):
    """Expressions over symbolic-length lists: the vector builtins by their defining relations."""

    def __init__(self, vec: _Vectors, *args, aligned: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.vec = vec
        self.aligned = aligned

    def visit_call(self, e: n.Call, ctx: None = None) -> Value:
        if e.func in RANKINGS:
            values = self.value(e.args[0])
            if isinstance(values, ArrayV):
                return self._rank(e, values)
        if e.func == "indices":
            v = self.value(e.args[0])
            if isinstance(v, TailOutput):
                return self._indices(v)
        if e.func in ("max", "min") and len(e.args) == 1:
            v = self.value(e.args[0])
            if isinstance(v, ArrayV):
                raise EncodingError(f"`{e.func}` of a whole list has no encoding for every length; write it as a "
                                    f"comprehension")
        return super().visit_call(e, ctx)

    # -- rankings ---------------------------------------------------------------------------------
    def _rank(self, e: n.Call, values: ArrayV) -> Value:
        vec = self.vec
        n_ = values.length
        if e.func in ("argmax", "argmin"):
            k: z3.ArithRef = zt.IntVal(1)
            vec.require(n_ >= 1, f"`{e.func}` at line {e.span.line} needs a non-empty list")
        else:
            k = self.arith(e.args[1])
            if e.func == "top_k":
                vec.require(zt.And(k >= 0, k <= n_), f"`top_k` at line {e.span.line} needs 0 <= k <= len")
            else:
                vec.require(zt.And(k >= 0, k < n_), f"`top_k_with_gaps` at line {e.span.line} needs 0 <= k < len")
        if e.func == "argmin":
            i = vec.index("i")
            values = ArrayV(z3.Lambda([i], -z3.Select(values.array, i)), n_)
        if not self.aligned:
            _generic(vec.enc, values, e)
            rank = self._relation(e, values, k)
            vec.ranked[id(e)] = rank
            vec.lemma(f"`{e.func}` at line {e.span.line}: its defining relation over a list of every length "
                      "(quantified over indices), no ties (continuous noise: probability 0, Theorem 10.1)")
        else:
            first = vec.ranked.get(id(e))
            if first is None:
                raise EncodingError(f"the ranking at line {e.span.line} is not reached in the first run")
            rank = self._aligned_rank(e, values, k, first)
        if e.func in ("argmax", "argmin"):
            return z3.Select(rank.order, zt.IntVal(0))
        return rank

    def _aligned_rank(self, e: n.Call, values: ArrayV, k: z3.ArithRef, first: RankV) -> RankV:
        """The aligned run's ranking, from the first run's: C4a's goal is that the first run's order (or the prefix
        of it that the output shows) is also the order of the aligned values."""
        vec = self.vec
        v, n_ = values.array, values.length
        J, S, P = first.order, first.member, first.position
        shown = vec.observed.get(id(e))
        length = k if shown is None else shown
        t, l_ = vec.index("t"), vec.index("l")
        outside = zt.And(_in(zt.IntVal(0), l_, n_), z3.Not(zt.And(z3.Select(S, l_), z3.Select(P, l_) < length)))
        ordered = _forall(t, z3.Implies(zt.And(t >= 0, t + 1 < length), z3.Select(v, z3.Select(J, t)) >
                                        z3.Select(v, z3.Select(J, t + 1))))
        above = _forall(l_, z3.Implies(zt.And(outside, length >= 1),
                                       z3.Select(v, l_) < z3.Select(v, z3.Select(J, length - 1))))
        vec.goals.append(zt.And(ordered, above))
        if shown is None:
            gaps = self._gaps(e, values, k, first) if first.gaps is not None else None
            return replace(first, gaps=gaps)
        if first.gaps is not None:
            raise EncodingError(f"the gaps of the ranking at line {e.span.line} when only a prefix is output")
        # Past the prefix: the next index is the best of the rest (when there is one); later ones are unknown
        # (an arbitrary array: whatever the aligned run ranks there, the proof holds).
        nxt = vec.index("next")
        m = vec.index("l")
        outside_m = zt.And(_in(zt.IntVal(0), m, n_), z3.Not(zt.And(z3.Select(S, m), z3.Select(P, m) < length)))
        vec.axioms.append(z3.Implies(length < k, zt.And(
            _in(zt.IntVal(0), nxt, n_), z3.Not(zt.And(z3.Select(S, nxt), z3.Select(P, nxt) < length)),
            _forall(m, z3.Implies(outside_m, z3.Select(v, m) <= z3.Select(v, nxt))))))
        unknown = vec.fresh("unranked", z3.ArraySort(zt.IntSort(), zt.IntSort()))
        u = vec.index("t")
        order = z3.Lambda([u], z3.If(u < length, z3.Select(J, u), z3.If(u == length, nxt, z3.Select(unknown, u))))
        opaque = vec.fresh("aligned_selected", z3.ArraySort(zt.IntSort(), z3.BoolSort(ctx=zt.current())))
        where = vec.fresh("aligned_position", z3.ArraySort(zt.IntSort(), zt.IntSort()))
        vec.lemma(f"`{e.func}` at line {e.span.line}: the output shows a prefix of the ranking; the first indices of "
                  "top_k are those of top_L for L <= k")
        return RankV(order, None, k, opaque, where)

    def _relation(self, e: n.Call, values: ArrayV, k: z3.ArithRef) -> RankV:
        vec = self.vec
        v, n_ = values.array, values.length
        J = vec.fresh(f"order@{e.span.line}:", z3.ArraySort(zt.IntSort(), zt.IntSort()))
        P = vec.fresh(f"position@{e.span.line}:", z3.ArraySort(zt.IntSort(), zt.IntSort()))
        S = vec.fresh(f"selected@{e.span.line}:", z3.ArraySort(zt.IntSort(), z3.BoolSort(ctx=zt.current())))
        t, l_ = vec.index("t"), vec.index("l")
        jt = z3.Select(J, t)
        vec.axioms += [
            _forall(t, z3.Implies(_in(zt.IntVal(0), t, k), zt.And(_in(zt.IntVal(0), jt, n_), z3.Select(S, jt),
                                                                  z3.Select(P, jt) == t))),
            _forall(l_, z3.Implies(z3.Select(S, l_), zt.And(_in(zt.IntVal(0), l_, n_),
                                                            _in(zt.IntVal(0), z3.Select(P, l_), k),
                                                            z3.Select(J, z3.Select(P, l_)) == l_))),
            _forall(t, z3.Implies(zt.And(t >= 0, t + 1 < k), z3.Select(v, jt) > z3.Select(v, z3.Select(J, t + 1)))),
            _forall(l_, z3.Implies(zt.And(_in(zt.IntVal(0), l_, n_), z3.Not(z3.Select(S, l_)), k >= 1),
                                   z3.Select(v, l_) < z3.Select(v, z3.Select(J, k - 1)))),
        ]
        # The same facts between any two positions (their transitive closure, which E-matching cannot derive by
        # chaining a symbolic number of steps): consequences of the relation, so stating them is sound.
        u = vec.index("t")
        vec.axioms += [
            z3.ForAll([t, u], z3.Implies(zt.And(t >= 0, t < u, u < k),
                                         z3.Select(v, jt) > z3.Select(v, z3.Select(J, u)))),
            z3.ForAll([l_, t], z3.Implies(zt.And(_in(zt.IntVal(0), l_, n_), z3.Not(z3.Select(S, l_)),
                                                 _in(zt.IntVal(0), t, k)), z3.Select(v, l_) < z3.Select(v, jt))),
        ]
        rank = RankV(J, None, k, S, P)
        if e.func == "top_k_with_gaps":
            rank = replace(rank, gaps=self._gaps(e, values, k, rank))
        return rank

    def _gaps(self, e: n.Call, values: ArrayV, k: z3.ArithRef, rank: RankV) -> z3.ArrayRef:
        v = values.array
        best = self._extremum("max", lambda l_: z3.Select(v, l_), lambda l_: zt.And(
            _in(zt.IntVal(0), l_, values.length), z3.Not(z3.Select(rank.member, l_))), f"gap@{e.span.line}:",
            real=True)
        t = self.vec.index("t")
        here = z3.Select(v, z3.Select(rank.order, t))
        return z3.Lambda([t], z3.If(t + 1 < k, here - z3.Select(v, z3.Select(rank.order, t + 1)), here - best))

    def _extremum(self, func: str, body: Callable[[z3.ArithRef], z3.ArithRef],
                  domain: Callable[[z3.ArithRef], z3.BoolRef], name: str, real: bool,
                  argument: bool = False) -> z3.ArithRef:
        """M = max/min of body over domain (non-empty: the caller proves it), defined by a witness w and a bound;
        with `argument`, w (some index where the extremum is attained: a proof over every such index covers the
        one the interpreter picks, the lowest)."""
        vec = self.vec
        w, l_ = vec.index(name + "w"), vec.index("l")
        best = vec.fresh(name, zt.RealSort() if real else zt.IntSort())
        assert isinstance(best, z3.ArithRef)
        below = (lambda a: a <= best) if func == "max" else (lambda a: a >= best)
        vec.axioms += [domain(w), body(w) == best, _forall(l_, z3.Implies(domain(l_), below(body(l_))))]
        vec.extrema.append(_Extremum(func == "max", w, best, domain, body))
        return w if argument else best

    # -- index sets and comprehensions --------------------------------------------------------------
    def _indices(self, out: TailOutput) -> IndexSetV:
        """indices(out): the first items of the output's pairs; the tail's must be `order[t]` of a ranking."""
        fixed = []
        for slot in out.fixed:
            if not isinstance(slot, TupV):
                raise EncodingError("indices(out) of outputs that are not pairs")
            fixed.append(_term(slot.items[0]))
        tail: Callable[[z3.ArithRef], z3.BoolRef] | None = None
        if out.tail is not None:
            rank = self.vec.released.get(out.tail_length.get_id()) if out.tail_length is not None else None
            if rank is None:
                raise EncodingError("indices(out) where the output loop does not release a ranking's indices")
            length = out.tail_length

            def tail(x: z3.ArithRef, rank: RankV = rank, length: z3.ArithRef = length) -> z3.BoolRef:
                return zt.And(z3.Select(rank.member, x), z3.Select(rank.position, x) < length)

        def contains(x: z3.ArithRef) -> z3.BoolRef:
            return zt.Or([x == f for f in fixed] + ([tail(x)] if tail is not None else []))

        return IndexSetV(contains, out.length)

    def visit_comprehension(self, e: n.Comprehension, ctx: None = None) -> Value:
        domain = self.value(e.domain) if e.domain is not None else None
        excluded = self.value(e.excluded) if e.excluded is not None else None
        symbolic = isinstance(domain, RangeV) and (_concrete(domain.hi) is None or _concrete(domain.lo) is None)
        if not symbolic and not isinstance(excluded, IndexSetV):
            return super().visit_comprehension(e, ctx)
        excluded = _index_set(excluded) if excluded is not None else None
        if e.excluded is not None and excluded is None:
            raise EncodingError(f"`{e.func}` excludes a set that has no encoding for every length")
        if e.func not in ("max", "min", "argmax", "argmin") or not isinstance(domain, RangeV) or \
                e.condition is not None:
            raise EncodingError(f"`{e.func}` over an index set of symbolic size has no encoding for every length")
        lo, hi = domain.lo, domain.hi
        if isinstance(excluded, IndexSetV):
            # |S| < hi - lo leaves a member (S has at most `size` members): the pigeonhole principle.
            self.vec.require(excluded.size < hi - lo, f"the domain of `{e.func}` at line {e.span.line} may be empty")
            self.vec.lemma(f"`{e.func}` at line {e.span.line}: a maximum over indices not in a set of fewer "
                           "members than the range is attained (pigeonhole)")
        else:
            self.vec.require(lo < hi, f"the domain of `{e.func}` at line {e.span.line} may be empty")

        def inside(l_: z3.ArithRef) -> z3.BoolRef:
            parts = [lo <= l_, l_ < hi]
            if isinstance(excluded, IndexSetV):
                parts.append(z3.Not(excluded.contains(l_)))
            return zt.And(parts)

        def body(l_: z3.ArithRef) -> z3.ArithRef:
            saved = self.env.get(e.var)
            self.env[e.var] = l_
            try:
                return self.arith(e.body)
            finally:
                if saved is None:
                    del self.env[e.var]
                else:
                    self.env[e.var] = saved

        probe = body(self.vec.index("l"))
        return self._extremum(e.func.removeprefix("arg"), body, inside, f"{e.func}@{e.span.line}:",
                              real=not z3.is_int(probe), argument=e.func.startswith("arg"))


def _generic(enc: Encoding, values: ArrayV, e: n.Expr) -> None:
    """Ties among the ranked values have probability 0: element i is a + c·η[i] with c a nonzero number, η a
    family with a density read at index i only, and a free of η (ranking.py's docstring)."""
    i = zt.Int("%generic")
    term = z3.simplify(z3.Select(values.array, i))
    parts = term.children() if z3.is_app_of(term, z3.Z3_OP_ADD) else [term]
    own = []
    for part in parts:
        families = _family_reads(part)
        if families:
            own.append((part, families))
    if len(own) == 1:
        part, families = own[0]
        if len(families) == 1:
            (name, index), = families
            site = enc.mech.site(name)
            coefficient = _scale_of(part)
            if site is not None and site.distribution.continuous and index.eq(i) and coefficient:
                enc.assumptions.add(f"no ties among the noisy values ranked at line {e.span.line} (continuous "
                                    "noise: probability 0, Theorem 10.1)")
                return
    raise EncodingError(f"the values ranked at line {e.span.line} may tie with positive probability (each must "
                        "be a + c·eta[i] with its own noise member)")


def _family_reads(t: z3.ExprRef) -> set[tuple[str, z3.ExprRef]]:
    """(family, index) of each `select(noise array, index)` in t."""
    found: set[tuple[str, z3.ExprRef]] = set()
    todo = [t]
    while todo:
        x = todo.pop()
        if z3.is_select(x) and z3.is_const(x.arg(0)) and x.arg(0).decl().name().startswith("noise:"):
            found.add((x.arg(0).decl().name()[len("noise:"):], x.arg(1)))
        todo.extend(x.children())
    return found


def _selects_at(t: z3.ExprRef, index: z3.ExprRef) -> list[z3.ExprRef]:
    """The arrays that t reads at `index`."""
    found: dict[int, z3.ExprRef] = {}
    todo = [t]
    while todo:
        x = todo.pop()
        if z3.is_select(x) and x.arg(1).eq(index):
            found[x.arg(0).get_id()] = x.arg(0)
        todo.extend(x.children())
    return list(found.values())


def _scale_of(part: z3.ExprRef) -> bool:
    """Whether part is c·select(η, i) (or select(η, i)) with c a nonzero number."""
    if z3.is_select(part):
        return True
    if z3.is_app_of(part, z3.Z3_OP_TO_REAL):
        return _scale_of(part.arg(0))
    if z3.is_app_of(part, z3.Z3_OP_MUL) and part.num_args() == 2:
        c, x = part.children()
        if z3.is_select(c) or z3.is_app_of(c, z3.Z3_OP_TO_REAL):
            c, x = x, c
        value = z3.simplify(c)
        number = z3.is_rational_value(value) or z3.is_int_value(value)
        return number and _scale_of(x) and \
            (value.as_fraction() if z3.is_rational_value(value) else value.as_long()) != 0
    return False


# ------------------------------------------------------------------------------------------------- runs


class _VectorRun(Run):
    """A run over symbolic-length lists: the map loop at a symbolic index, the output loop at a symbolic t."""

    def __init__(self, vec: _Vectors, enc: Encoding, inputs: dict[str, Value], arrays: dict[str, z3.ArrayRef],
                 shift: Callable[[str, z3.ArithRef | None], z3.ArithRef] | None = None, twin: Run | None = None):
        super().__init__(enc, inputs, twin=twin)
        self.vec = vec
        self.arrays = arrays
        self.vector_shift = shift
        self.shift = (lambda name, index: shift(name, None)) if shift is not None else None  # scalar draws
        self.map_index: z3.ArithRef | None = None
        self.elements: dict[str, Value] = {}
        self.outer: set[str] = set()
        """Inside a loop run at a symbolic index: the names defined before it. Assigning one would carry a value
        from one iteration to the next, which one abstract iteration does not compute."""

    def evaluator(self) -> ExprEval:
        return _VectorEval(self.vec, self.enc, self.vars, {}, noise=self._noise_read, run=self,
                           aligned=self.twin is not None)

    def visit_assign(self, s: n.Assign, ctx: None = None) -> None:
        if s.target in self.outer:
            raise EncodingError(f"line {s.span.line} carries `{s.target}` from one iteration to the next")
        if s.index is None:
            super().visit_assign(s, ctx)
            return
        if self.map_index is None or not _term(self.eval(s.index)).eq(self.map_index):
            raise EncodingError(f"line {s.span.line} assigns a list element other than the map loop's own")
        self.elements[s.target] = self.eval(s.value)

    def sample(self, s: n.Sample) -> None:
        site = self.enc.mech.noise_site(s.var)
        if site.loop is None:
            super().sample(s)
            return
        if self.map_index is None or site.loop.var not in self.vars or \
                not _term(self.vars[site.loop.var]).eq(self.map_index):
            raise EncodingError(f"noise {s.var} is drawn outside the map loop")
        base = z3.Select(self.arrays[s.var], self.map_index)
        value = base if self.vector_shift is None else base + self.vector_shift(s.var, self.map_index)
        args = tuple(self.eval(a) for a in s.args)
        self.current[s.var] = value
        self.draws.append(Draw(s.var, CURRENT, z3.simplify(self.active), base, s, args, dict(self.vars)))

    def map_loop(self, loop: n.For, index: z3.ArithRef, length: z3.ArithRef) -> None:
        before = set(self.vars)
        self.map_index = index
        self.vars[loop.var] = index
        self.running.append(zt.BoolVal(True))
        self.outer = before
        self.block(loop.body)
        self.outer = set()
        if not z3.is_true(z3.simplify(self.running.pop())):
            raise EncodingError("the map loop may stop early")
        self.map_index = None
        for name in set(self.vars) - before:  # the iteration's scalars are not read after it
            del self.vars[name]
        for name, value in self.elements.items():
            if name in before:
                raise EncodingError(f"line {loop.span.line}: `{name}` is built by the map loop and also before it")
            self.vars[name] = ArrayV(z3.Lambda([index], _term(value)), length)
        self.elements = {}

    def output_loop(self, loop: n.For, t: z3.ArithRef) -> tuple[Value, z3.BoolRef]:
        """One iteration at a symbolic t: its output and whether the loop goes on."""
        before = set(self.vars)
        slots, length = self.slots, self.length
        self.slots, self.length = [], zt.IntVal(0)
        self.vars[loop.var] = t
        self.running.append(zt.BoolVal(True))
        outer = self.active
        self.outer = before
        self.block(loop.body)
        self.outer = set()
        goes_on = self.running.pop()
        self.active = outer
        produced, self.slots, self.length = (self.slots, self.length), slots, length
        for name in set(self.vars) - before:
            del self.vars[name]
        if len(produced[0]) != 1:
            raise EncodingError(f"the loop at line {loop.span.line} does not output one item per iteration")
        self.vec.require(produced[1] == z3.If(goes_on, 1, 0),
                         f"the loop at line {loop.span.line} outputs exactly one item per iteration it completes")
        return produced[0][0], goes_on


# ------------------------------------------------------------------------------------------------- shape


@dataclass
class _Shape:
    prefix: list[n.Stmt]
    map_loop: n.For
    middle: list[n.Stmt]
    tail: n.For | None


def _shape(mech: ResolvedMechanism) -> _Shape:
    body = list(mech.body)
    loops = [k for k, s in enumerate(body) if isinstance(s, n.For)]
    if not loops or len(loops) > 2:
        raise NotInductive("not a map loop followed by a ranking")
    first = body[loops[0]]
    assert isinstance(first, n.For)
    if not (isinstance(first.lo, n.Number) and first.lo.value == 0 and isinstance(first.hi, n.Call) and
            first.hi.func == "len" and isinstance(first.hi.args[0], n.ParamRef)):
        raise NotInductive("the first loop is not `for i in 0 .. len(q)`")
    if any(not isinstance(s, (n.Assign, n.Sample)) for s in first.body):
        raise NotInductive("the map loop has branches, outputs or loops")
    if not any(isinstance(x, n.Call) and x.func in RANKINGS for s in body for x in _stmt_exprs_deep(s)):
        raise NotInductive("no ranking (top_k, top_k_with_gaps, argmax, argmin)")
    tail: n.For | None = None
    if len(loops) == 2:
        if loops[1] != len(body) - 1:
            raise NotInductive("statements after the output loop")
        last = body[-1]
        assert isinstance(last, n.For)
        tail = last
        if any(isinstance(s, (n.For, n.While, n.Sample)) for s in walk_statements(tail.body)):
            raise NotInductive("the output loop draws noise or nests loops")
    middle = body[loops[0] + 1: loops[1] if tail is not None else len(body)]
    prefix = body[:loops[0]]
    for s in walk_statements(prefix + middle):
        if isinstance(s, (n.For, n.While)):
            raise NotInductive("a nested loop")
    if any(isinstance(s, n.Output) for s in walk_statements(prefix)):
        raise NotInductive("outputs before the map loop")
    if any(isinstance(s, n.Sample) for s in walk_statements(middle)):
        raise NotInductive("noise drawn after the map loop")
    if any(isinstance(s, n.If) for s in middle):
        raise NotInductive("a branch between the ranking and the output loop")
    return _Shape(prefix, first, middle, tail)


def _stmt_exprs_deep(s: n.Stmt) -> list[n.Expr]:
    found = []
    for t in walk_statements([s]):
        for e in statement_exprs(t):
            found += list(walk(e))
    return found


# ------------------------------------------------------------------------------------------------ proof


def prove(mech: ResolvedMechanism, context: Context) -> Inductive:
    """The proof for every length of a ranking mechanism; raises NotInductive when the shape does not fit."""
    try:
        return _prove(mech, context.limits, context.cost_term, context.support_of)
    except EncodingError as error:
        raise NotInductive(str(error)) from None


class _Alignment:
    """ψ over the first run's output of symbolic length."""

    def __init__(self, vec: _Vectors, enc: Encoding, env: dict[str, Value], primed: dict[str, Value],
                 arrays: dict[str, z3.ArrayRef], out: TailOutput):
        self.enc, self.arrays = enc, arrays
        self.env = env
        self.ev = _VectorEval(vec, enc, env, primed, noise=self._noise, out=out)
        mech = enc.mech
        self._cache: dict[tuple[str, int], z3.ArithRef] = {}
        if mech.alignment is not None:
            for let in mech.alignment.lets:
                env[let.name] = self.ev.value(let.value)

    def _noise(self, name: str, index: Value | None, node: n.Expr) -> Value | None:
        site = self.enc.mech.site(name)
        if site is None:
            return None
        if site.family:
            if index is None:
                raise EncodingError(f"the family {name} read without an index")
            return z3.Select(self.arrays[name], _term(index))
        return self.enc.noise_symbol(name, None, site.distribution.integer)

    def shift(self, name: str, index: z3.ArithRef | None) -> z3.ArithRef:
        key = (name, index.get_id() if index is not None else -1)
        if key in self._cache:
            return self._cache[key]
        shift = self.enc.mech.alignment.shift_of(name) if self.enc.mech.alignment else None
        value: z3.ArithRef
        if shift is None:
            value = zt.IntVal(0)
        elif shift.index_var:
            assert index is not None, "a family's shift is taken at an index"
            self.env[shift.index_var] = index
            try:
                value = self.ev.arith(shift.shift)
            finally:
                del self.env[shift.index_var]
        else:
            value = self.ev.arith(shift.shift)
        self._cache[key] = value
        return value

    def claim(self) -> z3.ArithRef:
        return _real(self.ev.arith(self.enc.mech.claim))


def _prove(mech: ResolvedMechanism, limits: Limits, cost_term, support_of) -> Inductive:
    shape = _shape(mech)
    if mech.alignment is None:
        raise NotInductive("no alignment")
    enc = Encoding(mech, Encoding.uniform(mech, 0), {})
    vec = _Vectors(enc)
    lengths: dict[str, z3.ArithRef] = {}
    adjacency: list[z3.BoolRef] = []
    pointwise = _Pointwise()
    for p in mech.params:
        if not isinstance(p.type, ListType):
            continue
        length = zt.Int(f"len({p.name})")
        lengths[p.name] = length
        sort = zt.IntSort() if str(p.type.elem) == "int" else zt.RealSort()
        here = ArrayV(z3.Array(p.name, zt.IntSort(), sort), length)
        enc.params[p.name] = here
        private = p.name in enc.neighbour
        if not private and p.domain is None:
            continue
        j = vec.index("j")
        lists = [here]
        if private:
            there = ArrayV(z3.Array(p.name + "'", zt.IntSort(), sort), length)
            enc.neighbour[p.name] = there
            lists.append(there)
        if p.domain is not None:  # the declared domain of every entry of q (and of q')
            entries = [z3.Select(v.array, j) for v in lists]
            pointwise.add(length, j, zt.And(p.domain_facts(Z3_SPLIT_OPS, entries, *enc.domain_ends(p.domain))))
        if not private:
            continue
        a, b = z3.Select(here.array, j), z3.Select(there.array, j)
        for adj in p.adjacency:
            # The entry relation holds at every index (quantified); a total over the list has no encoding here.
            if adj.rule.measure is not None:
                raise NotInductive(f"`{adj.rule.total_text(p.name)}` has no encoding over a list of every length")
            assert adj.rule.entry is not None, "a clause without a measure relates the entries"
            bound = ExprEval(enc, dict(enc.params), {}).arith(adj.bound) if adj.bound is not None else None
            # one direction per `monotone` list, as in the bounded encoding: two lists may move apart
            pointwise.add(length, j, adj.rule.entry(Z3_SPLIT_OPS, a, b, bound, zt.Bool(f"%up({p.name})")))
    for p in mech.params:
        if not isinstance(p.type, ListType):
            for adj in p.adjacency:
                assert adj.rule.entry is not None and adj.bound is not None, "a scalar clause has a bound"
                bound = ExprEval(enc, dict(enc.params), {}).arith(adj.bound)
                here_s, there_s = _term(enc.params[p.name]), _term(enc.neighbour[p.name])
                adjacency.append(adj.rule.entry(Z3_SPLIT_OPS, here_s, there_s, bound, zt.Bool(f"%up({p.name})")))
    adjacency += enc.domains(private=True)  # (the scalars': the lists above are arrays, which it skips)
    loop_list = _loop_list(shape.map_loop)
    assert loop_list is not None, "_shape accepts only `for i in 0 .. len(q)` as the map loop"
    n_ = lengths[loop_list]
    arrays = {s.name: z3.Array("noise:" + s.name, zt.IntSort(), zt.IntSort() if s.distribution.integer
                               else zt.RealSort()) for s in mech.noise if s.family}
    inputs1 = dict(enc.params)
    inputs2 = {**enc.params, **enc.neighbour}

    def execute(run: _VectorRun, i: z3.ArithRef, t: z3.ArithRef) -> tuple[TailOutput, list[Draw], list[Draw],
                                                                           z3.BoolRef | None]:
        run.block(shape.prefix)
        prefix_draws = list(run.draws)
        run.map_loop(shape.map_loop, i, n_)
        map_draws = run.draws[len(prefix_draws):]
        run.block(shape.middle)
        fixed = tuple(run.slots)
        if _concrete(run.length) != len(fixed):
            raise EncodingError("the outputs before the output loop depend on the run")
        tail_slot, goes_on = (None, None) if shape.tail is None else run.output_loop(shape.tail, t)
        return TailOutput(fixed, t if shape.tail else None, tail_slot, zt.IntVal(0)), prefix_draws, map_draws, goes_on

    i, t = zt.Int("%i"), zt.Int("%t")
    run1 = _VectorRun(vec, enc, inputs1, arrays)
    out1, pre_draws1, map_draws1, goes_on1 = execute(run1, i, t)
    bound_k = None
    if shape.tail is not None:
        lo = _concrete(_term(run1.eval(shape.tail.lo)))
        if lo != 0:
            raise NotInductive("the output loop does not start at 0")
        bound_k = _term(run1.eval(shape.tail.hi))
        L = zt.Int("%len_tail")
        assert goes_on1 is not None
        t2 = vec.index("t")
        vec.axioms += [L >= 0, bound_k >= L,
                       _forall(t2, z3.Implies(_in(zt.IntVal(0), t2, L), z3.substitute(goes_on1, (t, t2)))),
                       z3.Implies(bound_k > L, z3.Not(z3.substitute(goes_on1, (t, L))))]
        out1 = replace(out1, tail_length=L)
        vec.release(out1)
    constants = {c: run1.vars[c] for c in mech.constants if c in run1.vars}
    align = _Alignment(vec, enc, {**enc.params, **constants}, dict(enc.neighbour), arrays, out1)
    first_run = len(vec.axioms)
    """The definitions of the first run and of the alignment: all that C4c, C4d, C3 and C0 read (a query with
    fewer assumptions is as sound, and z3 does not wander into the aligned run's quantifiers)."""
    run2 = _VectorRun(vec, enc, inputs2, arrays, shift=align.shift, twin=run1)
    out2, pre_draws2, map_draws2, goes_on2 = execute(run2, i, t)

    # C4a: the aligned run's rankings and stopping point are the first run's, and the outputs agree.
    c4a_goals = list(vec.goals)
    if len(out1.fixed) != len(out2.fixed):
        raise EncodingError("the two runs output different numbers of items before the output loop")
    c4a_goals += [equal(a, b) for a, b in zip(out1.fixed, out2.fixed)]
    if shape.tail is not None:
        assert goes_on2 is not None and bound_k is not None and out1.tail is not None and out2.tail is not None
        L = out1.tail_length
        t3 = vec.index("t")
        c4a_goals.append(_forall(t3, z3.Implies(_in(zt.IntVal(0), t3, L), zt.And(
            z3.substitute(goes_on2, (t, t3)), equal(out1.tail_at(t3), out2.tail_at(t3))))))
        c4a_goals.append(z3.Implies(bound_k > L, z3.Not(z3.substitute(goes_on2, (t, L)))))

    # The assumptions: requires, adjacency, the support of every noise member, the definitions.
    in_range = _in(zt.IntVal(0), i, n_)
    support = list(support_of(enc, draws=pre_draws1))  # the map loop's, at every index, below
    for d in map_draws1:
        site = mech.noise_site(d.site)
        inside = member_support(site.distribution, d.value, d.args)
        if inside:
            pointwise.add(n_, i, z3.Implies(well_formed(enc, d, d.args), zt.And(inside)))
    nonnegative = [length >= 0 for length in lengths.values()]
    base = [enc.requires(), *nonnegative, *adjacency, *support, *pointwise.facts()]
    witness = [enc.requires(), *nonnegative, *adjacency, *support, *pointwise.instances()]
    """The final queries ask z3 for a model of these (the definitions are conservative: each has a value in every
    model of the rest, their preconditions proved first)."""
    result = Inductive()

    def valid(goal: z3.BoolRef, extra: tuple[z3.BoolRef, ...] = (), axioms: int | None = None,
              within: Limits = limits) -> bool:
        facts = base + vec.axioms[:axioms] + list(extra)
        return check_valid(facts, goal, within, satisfiable_if=witness).status == Validity.PROVED

    def valid_ground_first(goal: z3.BoolRef, points: list[z3.ArithRef], extra: tuple[z3.BoolRef, ...],
                           obligation: ObligationId, lemma: str, within: Limits = limits) -> bool:
        """`valid` after the first run's definitions, first without quantifiers: those definitions and the adjacency
        instantiated at `points` and at the maxima's witnesses (every fact an instance of the assumptions of
        `valid`, so a proof here is a proof there; `lemma` is noted when the goal reads a maximum); the quantified
        query, whose time depends on z3's instantiation (docs/checker.md), within `within`, only when that is not
        enough."""
        ground = [enc.requires(), *nonnegative, *adjacency, *support,
                  *(a for a in vec.axioms[:first_run] if _ground(a)),
                  *pointwise.at(points + [e.witness for e in vec.extrema]), *_Extremum.ground(vec.extrema, points),
                  *extra]
        if check_valid(ground, goal, limits, satisfiable_if=witness).status == Validity.PROVED:
            if _symbols(goal) & {e.value.decl().name() for e in vec.extrema}:
                vec.lemma(lemma, obligation)
            return True
        return valid(goal, extra, first_run, within)

    # In the order stated: a later precondition may rest on an earlier definition, which is sound only where
    # its own precondition holds (and a failed one would leave z3 searching inconsistent axioms)
    for condition, text, stated in vec.defined:
        if not valid(condition, axioms=stated):
            raise NotInductive(text)
    result.proved[ObligationId.C4A, None] = None if valid(zt.And(c4a_goals)) else \
        "the outputs of the two runs could not be shown equal for every length"

    # C4c: prefix cost + |S|·(gated cost at a member of S) + n·(other cost at an index) <= claim.
    claim = align.claim()
    prefix_cost = zt.Sum([z3.If(d.guard, cost_term(enc, mech.noise_site(d.site), d) *
                                _abs(_real(align.shift(d.site, None))), 0)
                          for d in pre_draws1 if mech.noise_site(d.site).distribution.cost is not None]) \
        if pre_draws1 else zt.RealVal(0)
    # Each family's gating set: S of a shift `i in S ? e : e0`, else the released indices; a family is gated
    # when its shift is 0 outside its set (proved for every index), and gated families are summed per set.
    groups: dict[str, tuple[IndexSetV, str, list[z3.ArithRef]]] = {}
    dense = []
    for d in map_draws1:
        site = mech.noise_site(d.site)
        if site.distribution.cost is None:
            continue
        psi = align.shift(d.site, i)
        term = cost_term(enc, site, d) * _abs(_real(psi))
        gate = _gating_set(align, out1, mech.alignment.shift_of(d.site))
        if gate is not None and valid(z3.Implies(zt.And(in_range, z3.Not(gate[1].contains(i))), psi == 0),
                                      axioms=first_run):
            groups.setdefault(gate[0], (gate[1], gate[2], []))[2].append(term)
        else:
            dense.append(term)
    parts = [prefix_cost]
    extra = []
    points = [i]
    """The indices the cost terms read (a member of each gating set, and i)."""
    for text, (gate_set, size_text, terms) in groups.items():
        x = vec.index("x")
        points.append(x)
        size = gate_set.size
        parts.append(z3.If(size > 0, _real(size) * zt.Sum([z3.substitute(t, (i, x)) for t in terms]), 0))
        extra += [z3.Implies(size > 0, zt.And(gate_set.contains(x), _in(zt.IntVal(0), x, n_)))]
        vec.lemma(f"cost: only the members in {text} are shifted (at most {size_text}), each costing at most the "
                  "largest share", ObligationId.C4C)
    if dense:
        parts.append(z3.If(n_ > 0, _real(n_) * zt.Sum(dense), 0))
        extra += [z3.Implies(n_ > 0, in_range)]
        vec.lemma(f"cost: at most len({loop_list}) members shifted, each costing at most the largest share",
                  ObligationId.C4C)
    goal = zt.Sum(parts) <= claim
    # The ground facts at the indices the cost reads (Lemma 5 without quantifiers), then the quantified query.
    lemma5 = ("cost: the maxima's definitions instantiated at each other's witnesses (Free Gap Lemma 5: the maxima "
              "over D and D' differ by at most the entries' difference), without quantifiers")
    result.proved[ObligationId.C4C, None] = None if valid_ground_first(goal, points, tuple(extra), ObligationId.C4C,
                                                                       lemma5) else \
        "the aligned cost could not be bounded by the claim for every length"

    # C4d, C3, C0 per draw: the prefix's, and the map loop's at a symbolic index i < n.
    conditions = draw_conditions(mech, enc, [(pre_draws1, lambda d: align.shift(d.site, None)),
                                             (map_draws1, lambda d: align.shift(d.site, i))],
                                 [(pre_draws1, pre_draws2), (map_draws1, map_draws2)])
    # Each first without quantifiers (as C4c), then quantified within PER_INDEX_RLIMIT.
    per_index = replace(limits, rlimit=min(limits.rlimit, PER_INDEX_RLIMIT))
    for key, formulas in conditions.items():
        ok = not formulas or valid_ground_first(
            zt.And(formulas), [i], (in_range,), key[0],
            "the maxima's definitions instantiated at the member's index and at each other's witnesses, without "
            "quantifiers", per_index)
        result.proved[key] = None if ok else "not shown for every index"
    # C2: every sample is drawn on every run (no draw under a branch), so the output determines them.
    drawn_always = all(z3.is_true(z3.simplify(d.guard)) for d in pre_draws1 + map_draws1)
    result.proved[ObligationId.C2, None] = None if drawn_always else "a sample is drawn under a branch"
    acyclic = released_set_order(mech)
    result.proved[ObligationId.C4B, None] = acyclic
    lets = {let.name: let.value for let in mech.alignment.lets}
    if acyclic is None and any(reads_noise_through(mech, s.shift, lets) for s in mech.alignment.shifts):
        vec.lemma(RELEASED_SET_ORDER, ObligationId.C4B)
    result.notes = vec.lemmas
    result.assumptions = set(enc.assumptions)
    return result


def _gating_set(align: _Alignment, out: TailOutput, shift) -> tuple[str, IndexSetV, str] | None:
    """The set S of a family shift `i in S ? e : e0` (its text, value and size as text), else the released
    indices."""
    if shift is None:
        return None
    e = shift.shift
    if isinstance(e, n.Conditional) and isinstance(e.condition, n.Member) and not e.condition.negated and \
            isinstance(e.condition.element, n.LocalRef) and e.condition.element.id == shift.index_var:
        value = _index_set(align.ev.value(e.condition.collection))
        if value is not None:
            text = _text(e.condition.collection)
            return f"`{text}`", value, "len(out)" if "indices(out)" in text else _show(value.size)
    try:
        return "`indices(out)`", align.ev._indices(out), "len(out)"
    except EncodingError:
        return None


def _index_set(v: Value) -> IndexSetV | None:
    if isinstance(v, IndexSetV):
        return v
    if isinstance(v, ListV) and all(z3.is_expr(x) for x in v.items):
        items = [_term(x) for x in v.items]
        return IndexSetV(lambda x: zt.Or([x == y for y in items]), zt.IntVal(len(items)))
    return None


_SHOWN = {"%len_tail": "the number of iterations of the output loop"}
"""Internal symbols as a report names them."""


def _show(t: z3.ExprRef) -> str:
    text = " ".join(str(z3.simplify(t)).split())
    return _SHOWN.get(text, text)


class _Pointwise:
    """Facts about every index of a list, `∀ x in 0 .. L: body(x)`, where body reads the arrays at x only.

    Their satisfiability (is a proof vacuous?) is asked of one instance per length, at an index w in range (or
    L = 0): from a model of the instances, arrays constant at their value at w satisfy every ∀. z3 decides the
    quantifier-free instances at once, where the ∀ forms sent it searching for minutes."""

    def __init__(self) -> None:
        self.items: list[tuple[z3.ArithRef, z3.ArithRef, z3.BoolRef]] = []

    def add(self, length: z3.ArithRef, x: z3.ArithRef, body: z3.BoolRef) -> None:
        self.items.append((length, x, body))

    def facts(self) -> list[z3.BoolRef]:
        return [_forall(x, z3.Implies(_in(zt.IntVal(0), x, length), body)) for length, x, body in self.items]

    def at(self, points: list[z3.ArithRef]) -> list[z3.BoolRef]:
        """Each fact instantiated at each of `points` (where it is in range)."""
        return [z3.Implies(_in(zt.IntVal(0), p, length), z3.substitute(body, (x, p)))
                for length, x, body in self.items for p in points]

    def instances(self) -> list[z3.BoolRef]:
        by_length: dict[int, tuple[z3.ArithRef, z3.ArithRef, list[z3.BoolRef]]] = {}
        for length, x, body in self.items:
            key = length.get_id()
            if key not in by_length:
                by_length[key] = (length, zt.Int(f"%witness_index{len(by_length)}"), [])
            w = by_length[key][1]
            by_length[key][2].append(z3.substitute(body, (x, w)))
        return [zt.Or(length == 0, zt.And(_in(zt.IntVal(0), w, length), *bodies))
                for length, w, bodies in by_length.values()]


# ------------------------------------------------------------------------------------------- acyclicity


def _text(e: n.Expr) -> str:
    return unparse(e)
