"""C4b: the local alignments must be acyclic (Free Gap, Definition 6).

For one output ω, the shift ψ_a of a noise member a *reads* member b when b occurs in ψ_a — directly, through
a let, through an index (`eta[t]` reads eta[l] when t = l), or through a condition that is not determined by
the output. A condition that the output determines (`out[i] is TOP`, `i in indices(out)`, or any condition
that two runs with the same output provably agree on) selects a branch instead of adding reads. The
alignment is acyclic for ω when the reads graph has no cycle; we ask z3 for an ω (and noise H producing it)
whose graph has a cycle, computing reachability by Floyd–Warshall over formula-labelled edges. A self-loop is
a shift that depends on its own variable, like Equation (5)'s η_t' = η_t − δ* (δ* contains η_t); except for noise
with finitely many values, whose alignment is a value map b' = g(b) of its own variable (rules.ValueMaps).

Reads are syntactic: `eta - eta` counts as a read of eta; a condition that reads noise and is not determined
by the output is taken to make the shift depend on that noise.
"""

from __future__ import annotations

from collections.abc import Callable

import z3

from .. import nodes as n
from ..resolve import ResolvedMechanism, children, walk
from ..smt import terms as zt
from ..smt.encode import AlignmentEval, Encoding, EncodingError, Run, _concrete
from ..smt.solver import Answer, Limits, Satisfiability, Validity, check_valid, satisfiable
from ..unparse import unparse
from ..visitor import IRVisitor

Member = tuple[str, int | None]
Reads = dict[Member, z3.BoolRef]


def _union(*parts: Reads) -> Reads:
    result: Reads = {}
    for part in parts:
        for m, c in part.items():
            result[m] = zt.Or(result[m], c) if m in result else c
    return result


def _guarded(c: z3.BoolRef, reads: Reads) -> Reads:
    return {m: zt.And(c, g) for m, g in reads.items()}


class _ReadAnalysis(IRVisitor[Reads, None]):
    """Which noise members an alignment expression reads, each under the condition that it does."""

    def __init__(self, mech: ResolvedMechanism, enc: Encoding, run: Run, align: AlignmentEval,
                 determined: Callable[[n.Expr, dict], bool | None]):
        self.mech = mech
        self.enc = enc
        self.align = align
        self.determined = determined
        self.let_reads: dict[str, Reads] = {}
        self.approximate = False
        """Set when a condition's dependence on the output could not be decided (then a cycle is not a proof)."""
        if mech.alignment is not None:
            for let in mech.alignment.lets:
                self.let_reads[let.name] = self.reads(let.value)

    def members(self, name: str) -> list[tuple[int | None, z3.ArithRef]]:
        return self.align.members(name)

    def reads(self, e: n.Expr) -> Reads:
        return e.accept(self, None)

    def _children(self, e: n.Expr, ctx: None = None) -> Reads:
        return _union(*(self.reads(c) for c in children(e)))

    def _nothing(self, e: n.Expr, ctx: None = None) -> Reads:
        return {}

    visit_number = visit_bool_lit = visit_param_ref = visit_var_ref = visit_local_ref = visit_out_ref = _nothing
    visit_aligned_cost_ref = visit_tag_lit = _nothing
    visit_call = visit_binary = visit_unary = visit_compare = visit_bool_op = visit_member = _children
    visit_tag_test = visit_index = visit_tuple_lit = visit_list_lit = visit_tag_call = visit_range = _children

    def visit_let_ref(self, e: n.LetRef, ctx: None = None) -> Reads:
        return self.let_reads.get(e.text, {})

    def visit_noise_ref(self, e: n.NoiseRef, ctx: None = None) -> Reads:
        site = self.mech.noise_site(e.id)
        if not site.family and e.id not in self.align.env:
            return {(e.id, None): zt.BoolVal(True)}
        return {}

    def visit_member_ref(self, e: n.MemberRef, ctx: None = None) -> Reads:
        if e.id in self.align.env:
            return self.reads(e.index)
        index = self.align.ev.arith(e.index)
        own = {(e.id, i): (index == i) for i, _ in self.members(e.id)}
        return _union(self.reads(e.index), own)

    def visit_conditional(self, e: n.Conditional, ctx: None = None) -> Reads:
        condition = self.reads(e.condition)
        then, orelse = self.reads(e.then), self.reads(e.orelse)
        if condition and not self._determined(e.condition):
            return _union(condition, then, orelse)
        c = self.align.value(e.condition)
        return _union(_guarded(c, then), _guarded(z3.Not(c), orelse))

    def visit_comprehension(self, e: n.Comprehension, ctx: None = None) -> Reads:
        result: Reads = {}
        for guard, index in self.align.ev.candidates(e):
            saved = self.align.env.get(e.var)
            self.align.env[e.var] = index
            keep = guard
            filter_reads: Reads = {}
            for part, _negate in ((e.excluded, True), (e.condition, False)):
                if part is None:
                    continue
                if part is e.excluded:
                    value = self.align.ev.member(self.align.value(part), index)
                    value = z3.Not(value)
                else:
                    value = self.align.value(part)
                part_reads = self.reads(part)
                if part_reads and not self._determined(part):
                    filter_reads = _union(filter_reads, part_reads)
                keep = zt.And(keep, value)
            result = _union(result, filter_reads, _guarded(keep, self.reads(e.body)))
            if saved is None:
                del self.align.env[e.var]
            else:
                self.align.env[e.var] = saved
        return result

    def _determined(self, condition: n.Expr) -> bool:
        verdict = self.determined(condition, dict(self.align.env))
        if verdict is None:
            self.approximate = True
            return False
        return verdict


def check(mech: ResolvedMechanism, enc: Encoding, run: Run, align: AlignmentEval, base: list[z3.BoolRef],
          limits: Limits):
    """Returns (answer, describe(model), note) for C4b at this length."""
    if mech.alignment is None or not mech.alignment.shifts:
        return Answer(Validity.PROVED), (lambda model: ""), "no noise is shifted"
    # A second run on the same D with other noise, for deciding which conditions the output determines.
    other = Run(enc, enc.params, noise_prefix="B.").execute()
    other_align = AlignmentEval(enc, other)
    cache: dict[tuple[str, str, str], bool | None] = {}

    other_drawn = {(d.site, d.index): d.guard for d in other.draws}
    current: list[z3.BoolRef] = []
    """While the shift of a member is analysed: that it is drawn in both runs (a shift matters only where its
    member is drawn, so a condition need only be determined by the output there)."""

    def determined(condition: n.Expr, env: dict) -> bool | None:
        # z3's sexpr, not str: str pretty-prints in Python, a tenth of a peer's whole check
        key = (repr(condition.span),
               repr(sorted((k, v.sexpr() if z3.is_ast(v) else str(v)) for k, v in env.items() if k not in align.lets)),
               repr([c.sexpr() for c in current]))
        if key in cache:
            return cache[key]
        try:
            saved = dict(other_align.env)
            for name, value in env.items():
                if name not in align.lets and name not in enc.params and z3.is_expr(value) \
                        and _concrete(value) is not None:
                    other_align.env[name] = value
            mine, theirs = align.value(condition), other_align.value(condition)
            other_align.env.clear()
            other_align.env.update(saved)
        except EncodingError:
            cache[key] = None
            return None
        # requires() again: the second run's comparisons may add exact ties to exclude (encode.note_ties); a
        # counterexample at a tie (probability 0) is no reason to think the condition not determined
        same = run.output.equal(other.output, enc)
        answer = check_valid([*base, enc.requires(), *current, same], mine == theirs, limits)
        if answer.status != Validity.PROVED and enc.ties and not (
                answer.status == Validity.REFUTED and answer.model is not None and enc.off_ties(answer.model)):
            with enc.excluding_ties():
                answer = check_valid([*base, enc.requires(), *current, same], mine == theirs, limits)
        cache[key] = {Validity.PROVED: True, Validity.REFUTED: False}.get(answer.status)
        return cache[key]

    analysis = _ReadAnalysis(mech, enc, run, align, determined)
    drawn = {(d.site, d.index): d.guard for d in run.draws}
    members = sorted(drawn, key=lambda m: (m[0], -1 if m[1] is None else m[1]))
    edges: dict[tuple[Member, Member], z3.BoolRef] = {}
    for d in run.draws:
        shift = mech.alignment.shift_of(d.site)
        if shift is None:
            continue
        saved = align.env.get(shift.index_var) if shift.index_var else None
        if shift.index_var:
            assert d.index is not None, "a family's draws have an index"
            align.env[shift.index_var] = zt.IntVal(d.index)
        current[:] = [d.guard, other_drawn.get((d.site, d.index), zt.BoolVal(False))]
        reads = analysis.reads(shift.shift)
        current.clear()
        if shift.index_var:
            if saved is None:
                del align.env[shift.index_var]
            else:
                align.env[shift.index_var] = saved
        # a value map `b' = g(b)` of noise with finitely many values reads b by definition: its cost is that of
        # g as a map of b, the others held (rules.ValueMaps), so b's own read is not an edge; reads of others are
        own_map = mech.noise_site(d.site).distribution.finite
        for b, condition in reads.items():
            if b in drawn and not (own_map and b == (d.site, d.index)):
                edges[((d.site, d.index), b)] = z3.simplify(zt.And(d.guard, drawn[b], condition))
    reach = {(a, b): edges.get((a, b), zt.BoolVal(False)) for a in members for b in members}
    for k in members:
        for a in members:
            ak = reach[(a, k)]
            if z3.is_false(ak):
                continue
            for b in members:
                kb = reach[(k, b)]
                if z3.is_false(kb):
                    continue
                reach[(a, b)] = zt.Or(reach[(a, b)], zt.And(ak, kb))
    cycle = zt.Or([reach[(a, a)] for a in members]) if members else zt.BoolVal(False)
    # C4b is "no cycle": a model with a cycle refutes it, no such model proves it
    found = satisfiable([*base, enc.requires(), cycle], limits)
    answer = {Satisfiability.SAT: Answer(Validity.REFUTED, found.model),
              Satisfiability.UNSAT: Answer(Validity.PROVED),
              Satisfiability.UNKNOWN: Answer(Validity.UNKNOWN, reason=found.reason)}[found.status]
    if answer.status == Validity.REFUTED and analysis.approximate:
        answer = Answer(Validity.UNKNOWN, reason="a cycle appears only through conditions whose dependence on the "
                                                 "output could not be decided")

    def name(m: Member) -> str:
        return m[0] if m[1] is None else f"{m[0]}[{m[1]}]"

    def describe(model: z3.ModelRef) -> str:
        true_edges = {e for e, c in edges.items() if z3.is_true(model.eval(c, model_completion=True))}
        for a in members:
            if (a, a) in true_edges:
                return f"the shift of {name(a)} depends on {name(a)} itself"
        for a in members:
            path = _find_cycle(a, true_edges)
            if path:
                return "the shifts form a cycle: " + " -> ".join(name(m) for m in path) + \
                    " (each reads the next)"
        return "the shifts form a cycle"

    note = ""
    if answer.status == Validity.PROVED and members:
        example = satisfiable(base, limits)
        if example.status == Satisfiability.SAT:
            model = example.model
            assert model is not None, "a satisfiable query comes with its model"
            true_edges = {e for e, c in edges.items() if z3.is_true(model.eval(c, model_completion=True))}
            order = _topological(members, true_edges)
            if order:
                note = "an order for one output found by the solver: " + ", ".join(name(m) for m in order)
    return answer, describe, note


def _find_cycle(start: Member, edges: set[tuple[Member, Member]]) -> list[Member]:
    stack = [(start, [start])]
    seen = set()
    while stack:
        node, path = stack.pop()
        for a, b in edges:
            if a != node:
                continue
            if b == start:
                return path + [start]
            if b not in seen:
                seen.add(b)
                stack.append((b, path + [b]))
    return []


def _topological(members: list[Member], edges: set[tuple[Member, Member]]) -> list[Member]:
    """Members ordered so that each shift reads only earlier ones (edges a -> b: a reads b)."""
    order: list[Member] = []
    remaining = list(members)
    while remaining:
        ready = [a for a in remaining if all(b in order for (x, b) in edges if x == a)]
        if not ready:
            return []
        order += ready
        remaining = [a for a in remaining if a not in ready]
    return order


def reads_no_noise(mech: ResolvedMechanism) -> bool:
    """No shift (nor any let) mentions a noise variable: every order of the noise is a valid one, at any length."""
    if mech.alignment is None:
        return True
    exprs = [s.shift for s in mech.alignment.shifts] + [let.value for let in mech.alignment.lets]
    return not any(mech.reads_noise(e) for e in exprs)


RELEASED_SET_ORDER = ("the shifts of the released members read only members outside the released set, whose shifts "
                      "read no noise (Free Gap Lemma 4's order)")
"""The note of a C4b proved by `released_set_order`."""


def released_set_order(mech: ResolvedMechanism) -> str | None:
    """C4b for every length by the released-set argument (Free Gap Lemma 4's order), None when it applies, else why
    not: every shift that reads noise is a family's `i in S ? e : e0`, S read from the output only, e0 reading no
    noise, and e reading only members outside S (`max(l not in S: ...)`), of families gated by S too or not at
    all. Then the members outside S, whose shifts read no noise, come first, and the members in S after them: an
    order in which each shift reads only earlier noise, whatever the program that draws them. Scalar shifts must
    read no noise."""
    alignment = mech.alignment
    assert alignment is not None, "checked by _prove"
    lets = {let.name: let.value for let in alignment.lets}
    gate: dict[str, str | None] = {}
    for s in alignment.shifts:
        if not reads_noise_through(mech, s.shift, lets):
            gate[s.var] = None
            continue
        shift = s.shift
        if s.index_var is None or not isinstance(shift, n.Conditional) or \
                not isinstance(shift.condition, n.Member) or shift.condition.negated or \
                not isinstance(shift.condition.element, n.LocalRef) or shift.condition.element.id != s.index_var or \
                reads_noise_through(mech, shift.condition.collection, lets) or \
                reads_noise_through(mech, shift.orelse, lets):
            return f"the shift of {s.var} reads noise outside the released-set pattern (`i in S ? e : e0`)"
        gate[s.var] = unparse(shift.condition.collection)
    for s in alignment.shifts:
        collection = gate.get(s.var)
        if collection is None:
            continue
        assert isinstance(s.shift, n.Conditional)
        reads = _outside_reads(mech, s.shift.then, lets, collection, None)
        if reads is None:
            return f"the shift of {s.var} reads noise other than members outside `{collection}`"
        for family in reads:
            if family in gate and gate[family] not in (None, collection):
                return f"the shift of {s.var} reads {family}, whose shift is gated by another set"
    return None


def reads_noise_through(mech: ResolvedMechanism, e: n.Expr, lets: dict[str, n.Expr]) -> bool:
    """Whether e reads noise, itself or through the lets it names."""
    for x in walk(e):
        if isinstance(x, n.LetRef) and x.text in lets and reads_noise_through(mech, lets[x.text], lets):
            return True
    return mech.reads_noise(e)


def _outside_reads(mech: ResolvedMechanism, e: n.Expr, lets: dict[str, n.Expr], collection: str,
                   bound: str | None) -> set[str] | None:
    """The families e reads, when every noise read is a member `eta[l]` of a comprehension `l not in S` (S
    written `collection`); None when some read is not."""
    noise = {s.name for s in mech.noise}
    if isinstance(e, n.LetRef) and e.text in lets:
        return _outside_reads(mech, lets[e.text], lets, collection, None)
    if isinstance(e, n.NoiseRef) and e.id in noise:
        return None
    if isinstance(e, n.MemberRef) and e.id in noise:
        if bound is not None and isinstance(e.index, n.LocalRef) and e.index.id == bound:
            return {e.id}
        return None
    if isinstance(e, n.Comprehension):
        inner = bound
        if e.excluded is not None and unparse(e.excluded) == collection:
            inner = e.var
        found: set[str] = set()
        for part, scope in ((e.domain, bound), (e.excluded, bound), (e.condition, inner), (e.body, inner)):
            if part is None:
                continue
            sub = _outside_reads(mech, part, lets, collection, scope)
            if sub is None:
                return None
            found |= sub
        return found
    found = set()
    for child in children(e):
        sub = _outside_reads(mech, child, lets, collection, bound)
        if sub is None:
            return None
        found |= sub
    return found
