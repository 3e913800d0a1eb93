"""Checker stage (obligations -> verdicts): discharge each Lemma 1 obligation with z3, length by length.

For every length n = 1 .. max_length of the list parameters (and every value of the integer parameters that
shape the program, within `requires`), the mechanism is executed symbolically twice — on (D, H) and on
(D', φ(H)) — and each obligation becomes a validity query (design.md §1):

- C4a  outputs of the two runs are equal;
- C4c  Σ over the samples drawn on D of c_i·|ψ_i| is at most the claim evaluated at the output;
- C4d  shifted noise with a restricted support stays in it (>= 0; integer shifts where needed);
- C3   noise with no cost coefficient is not shifted;
- C2   two runs on D with equal outputs draw the same samples (self-composition);
- C4b  the noise-dependency graph of the shifts has no cycle for any output (`acyclic.py`).

C1 (bounded loops) and C5 (discrete output reads) hold by construction: resolution rejects programs that
break them. A refutation is the first length at which a query is satisfiable; its model becomes a
counterexample in the spec's own names. An `unknown` answer is never promoted to "proved".
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import z3

from .. import nodes as n
from ..counterexample import Counterexample
from ..interp.values import format_value
from ..limits import MAX_BOUNDED_LENGTH
from ..obligations import KINDS, Obligation, ObligationId, cost_coefficient
from ..resolve import ResolvedMechanism, walk
from ..results import Verdict
from ..rules import RULES, rule_for
from ..status import Status
from ..symbolic import NotSymbolic, to_z3
from ..types import ListType
from . import acyclic
from . import terms as zt
from .densities import density_conditions
from .densities import describe as describe_densities
from .encode import (
    AlignmentEval,
    Draw,
    Encoding,
    EncodingError,
    ListV,
    OutputSeq,
    Run,
    TagV,
    TupV,
    _abs,
    _real,
    tag_name,
)
from .induction import Inductive
from .solver import Answer, Limits, Satisfiability, Validity, check_valid, fresh_context, satisfiable
from .supports import member as _member
from .supports import noise_support, support_conditions
from .verdicts import PendingVerdict

DEFAULT_MAX_LENGTH = 3
_LENGTHS_BEFORE_STOPPING = 1
"""A refutation stops the bounded check only after lengths 0 .. 1: at length 0 a loop's body never runs, and a
per-site obligation of noise drawn in the loop would be reported as checked when nothing was drawn."""


@dataclass(frozen=True)
class Options:
    max_length: int = DEFAULT_MAX_LENGTH
    limits: Limits = field(default_factory=Limits)
    bounded_only: bool = False
    """Skip the proofs for every length: the bounded check's verdicts alone (bench/verify.py --scaling)."""
    distinct_inputs: bool = False
    """Look only for counterexamples with D != D' (and skip the unbounded proofs): the input pairs that
    `align test` takes from the checker (stats/lrtest.checker_pairs). Not for verdicts: an alignment that
    breaks already at D = D' is refuted all the same."""
    every_obligation: bool = False
    """After a refutation, go on checking the other obligations up to `max_length`. By default the bounded
    check stops after the length at which the first refutation was found: the verdict is refuted whatever the
    others are, and they are reported for the lengths checked so far (`align verify --every-obligation`)."""

    @staticmethod
    def of(max_length: int | None = None, timeout: float | None = None, every_obligation: bool = False) -> Options:
        """Options as the command line and the API take them: the timeout in seconds (at least 1 ms)."""
        return Options(max_length=DEFAULT_MAX_LENGTH if max_length is None else max_length,
                       limits=Limits() if timeout is None else Limits(timeout_ms=max(1, int(timeout * 1000))),
                       every_obligation=every_obligation)


@dataclass(frozen=True)
class Coverage:
    """What the bounded check enumerates: every length 0 .. max_length of each list parameter (each list on
    its own), and every value lo .. hi of each integer parameter that shapes the unrolled program, that
    `requires` allows. A proof over this set is `bounded` unless the set is every input (no lists and no
    such integers) or the induction covers the rest."""

    max_length: int | None
    """None when the mechanism has no list parameters."""
    lists: tuple[str, ...]
    structural: tuple[tuple[str, int, int], ...]
    """(name, lo, hi) of each integer parameter that fixes the shape of the program."""
    length_changes: tuple[tuple[str, tuple[int, ...]], ...] = ()
    """(name, the differences len(x') - len(x) admitted) of each list with an add/remove-one-record clause."""

    @property
    def everything(self) -> bool:
        return self.max_length is None and not self.structural

    def text(self) -> str:
        if self.everything:
            return "for all inputs"
        parts = []
        if self.max_length is not None:
            parts.append(f"lengths <= {self.max_length}")
        parts += [f"{lo} <= {name} <= {hi}" for name, lo, hi in self.structural]
        return "for " + " and ".join(parts)

    def length_choices(self) -> list[dict[str, int]]:
        """Each combination of list lengths, shortest first (a counterexample comes at the first that has one)."""
        if self.max_length is None:
            return [{}]
        combos = itertools.product(range(self.max_length + 1), repeat=len(self.lists))
        return [dict(zip(self.lists, c)) for c in sorted(combos, key=lambda c: (max(c, default=0), c))]

    def shapes(self) -> list[tuple[dict[str, int], dict[str, int]]]:
        """Each (lengths on D, lengths on D' of the lists whose length changes), the longest list at most
        max_length on either side, shortest first."""
        result = []
        for lengths in self.length_choices():
            options = [[(name, lengths[name] + d) for d in changes if 0 <= lengths[name] + d <= (self.max_length or 0)]
                       for name, changes in self.length_changes]
            for combo in itertools.product(*options):
                result.append((lengths, dict(combo)))
        return sorted(result, key=lambda s: max([*s[0].values(), *s[1].values()], default=0))

    def structural_choices(self) -> list[dict[str, int]]:
        names = [name for name, _, _ in self.structural]
        ranges = [range(lo, hi + 1) for _, lo, hi in self.structural]
        return [dict(zip(names, values)) for values in itertools.product(*ranges)]


def coverage(mech: ResolvedMechanism, max_length: int) -> Coverage:
    lists = tuple(p.name for p in mech.params if isinstance(p.type, ListType))
    structural = tuple((name, 0, max_length + 1) for name in _structural_names(mech))
    changes = tuple((p.name, a.rule.length_changes) for p in mech.params for a in p.adjacency
                    if a.rule.changes_length)
    return Coverage(max_length if lists else None, lists, structural, changes)


# ------------------------------------------------------------------------------------------ entry point


def verify_mechanism(mech: ResolvedMechanism, options: Options = Options()) -> list[Verdict]:
    with fresh_context():
        return _verify_mechanism(mech, options)


def _verify_mechanism(mech: ResolvedMechanism, options: Options) -> list[Verdict]:
    rule = rule_for(mech)
    obs = rule.obligations(mech)
    verdicts = {id(o): PendingVerdict(o) for o in obs}
    # C1 and C5 hold by construction (resolution rejects what breaks them), and so does C3 for a
    # distribution with a cost coefficient (Free Gap Table 1; well formed by C0).
    constructive = [o for o in obs if o.id in BY_CONSTRUCTION or
                    (o.id == ObligationId.C3 and o.site is not None and mech.noise_site(o.site).distribution.lipschitz)]
    for o in constructive:
        verdicts[id(o)].scope = "by construction"
    # the rule says which obligations the bounded check discharges (the mixture rule: ADJ and C0); those proved by
    # one model (ADJ) are searched for one, the others checked at every input shape
    discharged = [o for o in obs if o.id in rule.bounded and all(o is not c for c in constructive)]
    witnessed = [o for o in discharged if o.kind.witness]
    checked = [o for o in discharged if not o.kind.witness]
    cover = coverage(mech, options.max_length)
    # In z3 contexts of their own: the queries of the obligations below, hence their models, are as without it.
    reaches = {}
    for o in witnessed:
        with zt.scratch_context():
            reaches[id(o)] = _search(mech, WITNESS_CHECKS[o.id], options.max_length, options.limits)
    for o in witnessed:
        _witness_verdict(mech, verdicts[id(o)], reaches[id(o)], cover)
    # No input shape within --max-length that `requires` admits, or none with two distinct neighbours: the bounded
    # check would be about no pair of neighbours, so it runs on to the least bound that has one.
    reach = next(iter(reaches.values()), None)
    extended = _least_reach(mech, reach, options.max_length) if reach is not None else None
    if extended is not None:
        cover = extended[0]
    tried = 0
    tried_up_to = 0
    assumptions: set[str] = set()
    # The proofs for every length come first. The bounded check then runs for the obligations they did not prove
    # (it would prove the others again on a subset of the inputs), and finds each counterexample at the shortest
    # input that has one.
    proof = Inductive()
    if not cover.everything and not options.distinct_inputs and not options.bounded_only and rule.inductive:
        proof = _unbounded(mech, options, checked, verdicts)
    unbounded = proof.proved
    # A counterexample a strategy found (at a length the bounded check may not reach) is the verdict.
    for o in checked:
        found = proof.refuted.get(o.key)
        if found is not None:
            v = verdicts[id(o)]
            v.fail(Status.REFUTED, found.reason, found.counterexample)
            v.notes += found.remarks
    remaining = [o for o in checked if unbounded.get(o.key, "") is not None and o.key not in proof.refuted]
    if len(remaining) < len(checked):
        assumptions |= proof.assumptions
    if extended is not None:
        for o in remaining:
            verdicts[id(o)].note(extended[1])
    stopped: tuple[int, Obligation] | None = None
    """(the longest length checked, the refuted obligation) when a refutation ended the bounded check early."""
    if remaining:
        for lengths, neighbour_lengths in cover.shapes():
            longest = max([*lengths.values(), *neighbour_lengths.values()], default=0)
            refuted = [o for o in remaining if verdicts[id(o)].status == Status.REFUTED]
            if (refuted and longest > max(tried_up_to, _LENGTHS_BEFORE_STOPPING)
                    and not (options.every_obligation or options.distinct_inputs)):
                stopped = tried_up_to, refuted[0]
                break
            tried_up_to = longest
            for structural in structural_values(mech, lengths, cover, options.limits):
                if reach is not None and _shape_key(lengths, neighbour_lengths, structural) in reach.empty:
                    continue
                enc = Encoding(mech, lengths, structural, neighbour_lengths)
                try:
                    if not _feasible(enc, options.limits):
                        continue
                    _check_length(mech, enc, remaining, verdicts, options)
                except EncodingError as error:
                    for o in remaining:
                        verdicts[id(o)].fail(Status.UNKNOWN, f"{_where(enc)}: {error}")
                assumptions |= enc.assumptions
                tried += 1
        _confirm(mech, [verdicts[id(o)] for o in remaining])
    for o in checked:
        v = verdicts[id(o)]
        if v.status == Status.PROVED:
            if cover.everything:
                v.scope = "for all inputs"
                if not tried:
                    v.fail(Status.UNKNOWN, "no pair of inputs that `requires` and the adjacency clauses allow was "
                                           "found to check")
            elif unbounded.get(o.key, "") is None:
                v.scope = "for every input length"
                for note in proof.notes.get(o.id, []):
                    v.note(f"for every length: {note}", Status.PROVED)
            else:
                v.status = Status.BOUNDED
                v.scope = cover.text() if stopped is None else replace(cover, max_length=stopped[0]).text()
                if stopped is not None:
                    v.note(f"checked no further: {stopped[1].name} is refuted at that length, so the "
                           "verdict is refuted whatever this obligation is (`align verify "
                           "--every-obligation` checks it up to --max-length)", Status.BOUNDED, Status.UNKNOWN)
                if unbounded.get(o.key):
                    v.note(f"no proof for every length: {unbounded[o.key]}", Status.BOUNDED, Status.UNKNOWN)
                if not tried:
                    searched = f" ({reach.searched})" if reach is not None else ""
                    v.fail(Status.UNKNOWN, "no pair of inputs that `requires` and the adjacency clauses allow was "
                                           f"found to check{searched}")
        if o.id in ("C4a", "C4b", "C4c", "C4d") and assumptions:
            for assumption in sorted(assumptions):
                v.note(assumption)
    decided = {id(o): decision for o in obs if (decision := rule.decide(mech, o)) is not None}
    # Shifting noise that has no cost coefficient has no finite cost: C4c cannot hold where C3 fails.
    c3_failed = [o.site for o in obs
                 if o.id == "C3" and o.site is not None and verdicts[id(o)].status == Status.REFUTED]
    for o in obs:
        if o.id == "C4c" and c3_failed and verdicts[id(o)].status >= Status.BOUNDED:
            verdicts[id(o)].fail(Status.UNKNOWN, "the cost of shifting " + ", ".join(c3_failed) +
                                 " is not defined: it is not Lipschitz (see C3); the other noise costs at most the "
                                 "claim")
    final = [decided.get(id(o)) or verdicts[id(o)].freeze() for o in obs]
    # a quiet obligation (ADJ) is a line in the reports only when it does not hold
    return [v for v in final if not (v.obligation.kind.quiet and v.status == Status.PROVED)]


def _where(enc: Encoding) -> str:
    """Which input shape a message is about: `length 2`, `lengths q: 2, r: 0`, `k = 1`."""
    parts = []
    if len(enc.shape) == 1:
        parts.append(f"length {enc.n}")
    elif enc.shape:
        parts.append("lengths " + ", ".join(f"{k}: {v}" for k, v in enc.shape.items()))
    parts += [f"{k} = {v}" for k, v in enc.structural.items()]
    return ", ".join(parts) or "all inputs"


def _unbounded(mech: ResolvedMechanism, options: Options, checked: list[Obligation],
               verdicts: dict[int, PendingVerdict]) -> Inductive:
    """The proof for every length (`prove_for_every_length`), its time shared out between the obligations. Its
    `proved` maps each obligation to None (proved) or why not."""
    start = time.perf_counter()
    try:
        result, reasons = prove_for_every_length(mech, options.limits)
    finally:
        elapsed = time.perf_counter() - start
    if result is None:
        return Inductive(proved={o.key: "; ".join(reasons) for o in checked})
    share = elapsed / max(1, len(checked))
    for o in checked:
        verdicts[id(o)].seconds += share
        if o.id in ("C4a", "C4c") and result.invariant and result.proved.get(o.key, "") is None:
            verdicts[id(o)].note("loop invariant: " + "; ".join(map(str, result.invariant)), Status.PROVED)
            verdicts[id(o)].invariant = tuple(result.invariant)
    return result


def prove_for_every_length(mech: ResolvedMechanism, limits: Limits) -> tuple[Inductive | None, list[str]]:
    """The proof for every length: for a body without a loop that reads its lists at fixed entries, by the bounded
    check of the lengths that hold them (`entries.py`); by induction over the main loop (`induction.py`), or for a
    mechanism that ranks a noisy vector, by its quantified encoding (`ranking.py`), the first whose shape fits,
    after the rewrites that bring a program into those shapes (`folds.py`, `fusion.py`); else part by part
    (`phases.py`), each part proved here again. The proof (None when no shape fits), and why each shape did not."""
    from . import entries, folds, fusion, induction, phases, ranking, records
    from .rewrites import NotRewritable

    written = mech
    reasons = []
    rewrite_notes = []
    for name, rewrite in (("folds", folds.fold), ("fusion", fusion.fuse)):
        try:
            rewritten = rewrite(mech)
        except NotRewritable as error:
            reasons.append(f"{name}: {error}")
            continue
        if rewritten is not None:
            mech = rewritten.mechanism
            rewrite_notes.append(rewritten.note)
    hidden = [p.name for p in mech.params if not p.length_public]
    # add/remove-one-record neighbours: the induction and the ranking encoding relate lists of one length
    # (records first: the induction takes them only with a loop over a public bound, whose folds it summarises);
    # a body without a loop: fixed entries first
    strategies: tuple[Any, ...] = (records, induction) if hidden else (induction, ranking)
    if entries.applies(mech):
        strategies = (entries, *strategies)
    result = None
    for strategy in strategies:
        try:
            result = strategy.prove(mech, limits, _cost_term, noise_support)
            break
        except induction.NotInductive as error:
            reasons.append(f"{strategy.NAME}: {error}")
    if result is None:
        try:
            return phases.prove(written, lambda part: prove_for_every_length(part, limits)[0]), reasons
        except induction.NotInductive as error:
            return None, reasons + [f"{phases.NAME}: {error}"]
    for key in (ObligationId.C4A, ObligationId.C4C) if rewrite_notes else ():  # beside the rewritten loop's invariant
        result.notes.setdefault(key, [])[:0] = rewrite_notes
    if (ObligationId.C4B, None) not in result.proved:
        no_reads = acyclic.reads_no_noise(mech)
        result.proved[ObligationId.C4B, None] = None if no_reads else "shifts read noise"
        if no_reads:
            result.notes.setdefault(ObligationId.C4B, []).append("no shift reads noise, so every order of the noise "
                                                                 "is one in which each shift reads only earlier noise")
    return result, reasons


_UNINTERPRETED = "the refutation involves "
"""The start of the note on a refutation that rests on functions z3 leaves uninterpreted (exp, ln)."""


def _confirm(mech: ResolvedMechanism, verdicts: list[PendingVerdict]) -> None:
    """Replay each refutation in the interpreter; one that rests on uninterpreted functions and does not
    reproduce there is not a refutation of the real mechanism, so it becomes unknown."""
    from .replay import replay

    for v in verdicts:
        if v.status != Status.REFUTED or v.counterexample is None or not v.obligation.kind.replayed:
            continue
        result = replay(mech, v.counterexample)
        v.counterexample = replace(v.counterexample, replay={"confirmed": result.confirmed, "detail": result.detail})
        uninterpreted = [note for note in v.notes if note.text.startswith(_UNINTERPRETED)]
        if result.confirmed:
            v.notes = [note for note in v.notes if note not in uninterpreted]  # it asked for this replay
            v.note("confirmed by replaying the counterexample in the interpreter" + (
                " (which evaluates the functions z3 left uninterpreted)" if uninterpreted else "") + ": "
                + result.detail, Status.REFUTED)
        elif uninterpreted:
            v.status, v.reason = Status.UNKNOWN, f"a z3 model that the interpreter does not reproduce ({result.detail})"
        else:
            v.note("the floating-point replay does not reproduce this exact-arithmetic counterexample: "
                   + result.detail, Status.REFUTED)


def _feasible(enc: Encoding, limits: Limits) -> bool:
    """Whether some parameters satisfy `requires` at this length (otherwise the length is skipped)."""
    return satisfiable([enc.requires()], limits).status != Satisfiability.UNSAT


def _paired(enc: Encoding, limits: Limits) -> bool:
    """Whether some pair D ~ D' of this shape satisfies `requires` and the adjacency clauses (D = D' may: whether
    any shape has distinct neighbours is ADJ's question). A shape without one has no neighbours: every obligation
    holds there of nothing, and the bounded check skips it (`Reach.empty`)."""
    return satisfiable([enc.adjacency(), enc.requires()], limits).status != Satisfiability.UNSAT


def overall_status(verdicts: list[Verdict]) -> Status:
    return Status.merge(v.status for v in verdicts)


def overall_scope(verdicts: list[Verdict]) -> str:
    """What a proved or bounded mechanism's proof covers, as one phrase: the weakest scope of its parts."""
    status = overall_status(verdicts)
    if status == Status.BOUNDED:
        return next(v.scope for v in verdicts if v.status == Status.BOUNDED)
    if status != Status.PROVED:
        return ""
    scopes = {v.scope for v in verdicts} - {"by construction"}
    if "for every input length" in scopes:
        return "for every input length"
    return "for all inputs" if scopes else "by construction"


def _structural_names(mech: ResolvedMechanism) -> list[str]:
    """Integer parameters that fix the shape of the unrolled program: loop bounds, k of top-k, ranges."""
    ints = {p.name for p in mech.params if str(p.type) == "int"}
    used: set[str] = set()
    exprs: list[n.Expr] = []
    from ..resolve import statement_exprs, walk_statements
    for s in walk_statements(mech.body):
        if isinstance(s, n.For):
            exprs += [s.lo, s.hi]
        for value in statement_exprs(s):
            for sub in walk(value):
                if isinstance(sub, n.Call) and sub.func in ("top_k", "top_k_with_gaps"):
                    exprs.append(sub.args[1])
                if isinstance(sub, n.Range):
                    exprs += [sub.lo, sub.hi]
    if mech.alignment is not None:
        values = [let.value for let in mech.alignment.lets] + [s.shift for s in mech.alignment.shifts]
        for value in values:
            for sub in walk(value):
                if isinstance(sub, n.Range):
                    exprs += [sub.lo, sub.hi]
    constants = {s.target: s.value for s in mech.body if isinstance(s, n.Assign) and s.target in mech.constants}
    seen: set[str] = set()
    while exprs:
        e = exprs.pop()
        for sub in walk(e):
            if isinstance(sub, (n.ParamRef, n.VarRef)) and not sub.primed:
                if sub.id in ints:
                    used.add(sub.id)
                elif sub.id in constants and sub.id not in seen:
                    seen.add(sub.id)
                    exprs.append(constants[sub.id])
    return sorted(used)


def structural_values(mech: ResolvedMechanism, lengths: dict[str, int], cover: Coverage,
                       limits: Limits) -> list[dict[str, int]]:
    result = []
    for candidate in cover.structural_choices():
        enc = Encoding(mech, lengths, candidate)
        try:
            req = enc.requires()
        except EncodingError:
            continue
        if satisfiable([req], limits).status != Satisfiability.UNSAT:
            result.append(candidate)
    return result


# ---------------------------------------------------------------------------------------- one length


def _inputs_differ(enc: Encoding) -> z3.BoolRef:
    """D != D': some private parameter (some entry of a private list) differs."""
    parts = []
    for name, there in enc.neighbour.items():
        here = enc.params[name]
        if isinstance(here, ListV):
            assert isinstance(there, ListV), "a list parameter on D is a list on D'"
            if len(here.items) != len(there.items):
                return zt.BoolVal(True)
            parts += [a != b for a, b in zip(here.items, there.items)]
        else:
            parts.append(here != there)
    return zt.Or(parts) if parts else zt.BoolVal(False)


@dataclass
class _Query:
    """What the z3 check of one obligation at one input shape (lengths, structural values) reads: the two runs,
    the alignment, and the assumptions every query makes (`requires`, adjacency, the noise's supports)."""

    mech: ResolvedMechanism
    enc: Encoding
    run1: Run
    run2: Run
    align: AlignmentEval
    base: list[z3.BoolRef]
    limits: Limits

    def assumptions(self) -> list[z3.BoolRef]:
        """`requires()` includes the side conditions, so it is read when the query is made: encoding an
        obligation can add facts of exp and ln."""
        return [self.enc.requires(), *self.base]


Describe = Callable[[z3.ModelRef], Any]
"""Says why a model refutes the obligation (a text, or a text and the C0 parameters)."""
Check = Callable[[_Query, Obligation, PendingVerdict], "tuple[Answer, Describe] | None"]
"""The z3 check of one obligation at one input shape; None when there is nothing to check there."""


def _check_c0(q: _Query, o: Obligation, v: PendingVerdict) -> tuple[Answer, Describe] | None:
    densities = density_conditions(q.enc, q.run1.draws, q.run2.draws, o.site)
    if not densities:
        return None
    answer = check_valid(q.assumptions(), zt.And([c.formula for c in densities]), q.limits)
    return answer, lambda model: describe_densities(model, densities, _show)


def _check_c2(q: _Query, o: Obligation, v: PendingVerdict) -> tuple[Answer, Describe] | None:
    answer, describe = _samples_determined(q.mech, q.enc, q.limits)
    if answer.status != Validity.PROVED or not (q.run1.draws or q.run2.draws):
        return answer, describe
    return _same_draws_across_runs(q)


def _same_draws_across_runs(q: _Query) -> tuple[Answer, Describe]:
    """C2 across the two runs: Lemma 1 pairs each sample of the run on (D, H) with the same sample of the run on
    (D', φ(H)), so when the outputs agree the two runs draw the same samples. The cost (C4c) and the support
    (C4d) are sums and conditions over the first run's draws: a sample drawn only by the aligned run (under a
    branch that reads private data, or by a loop over a list one record longer) would be shifted with no
    term counting it (specs/incorrect/shifted_draw_only_on_neighbour.dp)."""
    conditions = same_draw_conditions(q.enc, q.run1, q.run2)
    premise = [*q.assumptions(), q.run1.output.equal(q.run2.output)]
    answer = check_valid(premise, zt.And([c for c, _ in conditions]), q.limits, satisfiable_if=q.assumptions())
    return answer, lambda model: _first_false(model, conditions)


def same_draw_conditions(enc: Encoding, run1: Run, run2: Run) -> list[tuple[z3.BoolRef, str]]:
    """For each sample either run may draw: it is drawn in both or in neither (and why that matters)."""
    def drawn(run: Run) -> dict[tuple[str, int | None], tuple[z3.BoolRef, Draw]]:
        found: dict[tuple[str, int | None], tuple[z3.BoolRef, Draw]] = {}
        for d in run.draws:
            guard, first = found.get((d.site, d.index), (zt.BoolVal(False), d))
            found[d.site, d.index] = zt.Or(guard, d.guard), first
        return found

    on_d, on_d2 = drawn(run1), drawn(run2)
    why = "the two inputs have different lengths, and " if enc.neighbour_lengths else ""
    false = zt.BoolVal(False)
    conditions = []
    for key in dict.fromkeys([*on_d, *on_d2]):
        g1, d = on_d.get(key, (false, None))
        g2, d2 = on_d2.get(key, (false, None))
        draw = d or d2
        assert draw is not None, "each key comes from a draw of one of the runs"
        conditions.append((g1 == g2, f"{_member(draw)} (line {draw.stmt.span.line}) is drawn in one run and not in "
                                     f"the other with the same output: {why}Lemma 1 needs the same samples on "
                                     "(D, H) and (D', φ(H)) when the outputs agree"))
    return conditions


def _check_c3(q: _Query, o: Obligation, v: PendingVerdict) -> tuple[Answer, Describe] | None:
    conditions = [(z3.Implies(d.guard, q.align.shift(d.site, d.index) == 0),
                   f"{_member(d)} ({d.stmt.dist}, not Lipschitz) has a nonzero shift")
                  for d in q.run1.draws if d.site == o.site and not q.mech.noise_site(d.site).distribution.lipschitz]
    if not conditions:
        return None
    answer = check_valid(q.assumptions(), zt.And([c for c, _ in conditions]), q.limits)
    return answer, lambda model: _first_false(model, conditions)


def _check_c4a(q: _Query, o: Obligation, v: PendingVerdict) -> tuple[Answer, Describe] | None:
    defined = q.align.defined()
    preserved = q.run1.output.equal(q.run2.output)
    answer = check_valid(q.assumptions(), zt.And([preserved, *(c for c, _ in defined)]), q.limits)
    return answer, lambda model: (_first_false(model, defined, None) or
                                  _first_difference(model, q.run1.output, q.run2.output))


def _check_c4b(q: _Query, o: Obligation, v: PendingVerdict) -> tuple[Answer, Describe] | None:
    answer, describe, note = acyclic.check(q.mech, q.enc, q.run1, q.align, q.assumptions(), q.limits)
    v.notes = [x for x in v.notes if not x.text.startswith("an order")]
    if note:
        v.note(note, Status.PROVED, Status.BOUNDED)
    return answer, describe


def _check_c4c(q: _Query, o: Obligation, v: PendingVerdict) -> tuple[Answer, Describe] | None:
    cost, _ = aligned_cost(q.enc, q.run1, q.align)
    claim = q.align.claim()
    answer = check_valid(q.assumptions(), cost <= claim, q.limits)
    return answer, lambda model: f"aligned cost {_show(model, cost)} exceeds the claim {_show(model, claim)}"


def _check_c4d(q: _Query, o: Obligation, v: PendingVerdict) -> tuple[Answer, Describe] | None:
    conditions = support_conditions(q.run1, q.align)
    answer = check_valid(q.assumptions(), zt.And([c for c, _ in conditions]), q.limits)
    return answer, lambda model: _first_false(model, conditions)


Z3_CHECKS: dict[ObligationId, Check] = {
    ObligationId.C0: _check_c0, ObligationId.C2: _check_c2, ObligationId.C3: _check_c3,
    ObligationId.C4A: _check_c4a, ObligationId.C4B: _check_c4b, ObligationId.C4C: _check_c4c,
    ObligationId.C4D: _check_c4d,
}
"""The z3 check of each obligation that depends on the input shape. The others hold by construction (C1, C5:
resolution rejects what would break them) or have a rule of their own (MIX: `mixture.verify`)."""
Witness = Callable[[Encoding], "list[z3.BoolRef]"]
"""The constraints whose model, at one input shape, proves an obligation proved by one model
(`ObligationKind.witness`)."""


def _distinct_neighbours(enc: Encoding) -> list[z3.BoolRef]:
    """ADJ at one input shape: D ~ D' (the adjacency clauses) with D != D' (some private parameter, an entry of a
    private list, or a list's length differs), under `requires`. The types are the symbols' sorts (an int parameter
    is a z3 Int: two ints never differ by 1/2), the lengths the shape's."""
    return [enc.adjacency(), _inputs_differ(enc), enc.requires()]


WITNESS_CHECKS: dict[ObligationId, Witness] = {ObligationId.ADJ: _distinct_neighbours}
"""The z3 check of each obligation that one model proves: `_search` looks for one over the input shapes."""
BY_CONSTRUCTION = frozenset({ObligationId.C1, ObligationId.C5})
assert set(Z3_CHECKS) | set(WITNESS_CHECKS) | BY_CONSTRUCTION | {ObligationId.MIX} == set(ObligationId), \
    "an obligation has no check"
assert set(WITNESS_CHECKS) == {k.id for k in KINDS.values() if k.witness}, "a witness obligation has no model search"
assert all(rule.bounded <= set(Z3_CHECKS) | set(WITNESS_CHECKS) for rule in RULES), \
    "a rule's bounded obligation has no z3 check"


@dataclass(frozen=True)
class Reach:
    """Where the input shapes admit inputs (`_search`): the least bound at which `requires` admits one, and at which
    a witness exists (for ADJ: two distinct neighbours). A bound is a --max-length: the shapes of `coverage`."""

    admitted: int | None
    """The least bound with an input shape where `requires` and the adjacency admit a pair (`_feasible`); None: none
    up to the search's last."""
    found: int | None
    """The least bound with a witness; None: none up to the search's last (or one query was unknown)."""
    searched: str
    """Where the search looked, as a verdict says it ("for all inputs", "at any length <= 16")."""
    unknown: str = ""
    """Why a shape's query was unknown (z3's reason, or what could not be encoded), when no witness was found."""
    empty: frozenset[tuple] = frozenset()
    """The shapes searched that have no pair D ~ D' at all (`_paired`, keyed by `_shape_key`): the bounded check
    skips them (the others' queries are as they were, so their models too)."""


def _search(mech: ResolvedMechanism, witness: Witness, max_length: int, limits: Limits) -> Reach:
    """A witness over the input shapes: those of the bounded check (`coverage(mech, max_length)`), then those of
    every longer bound up to MAX_BOUNDED_LENGTH; for a mechanism without lists and integer parameters that shape
    it, its one shape. Each query is small (no run of the program): `requires`, the adjacency and the
    witness's constraints over the parameters' symbols."""
    first = coverage(mech, max_length)
    last = MAX_BOUNDED_LENGTH if first.lists or first.structural else max_length
    admitted = None
    unknown = ""
    seen: set[tuple] = set()
    empty: set[tuple] = set()
    for bound in range(max_length, max(last, max_length) + 1):
        cover = coverage(mech, bound)
        # The bounded check's shapes longest first (a witness anywhere among them will do, and a long list has the
        # most room to differ: `requires k < len(q)`); beyond them, bound by bound, for the least that has one.
        shapes = cover.shapes()
        for lengths, neighbour_lengths in reversed(shapes) if bound == max_length else shapes:
            for structural in cover.structural_choices():
                key = _shape_key(lengths, neighbour_lengths, structural)
                if key in seen:
                    continue
                seen.add(key)
                enc = Encoding(mech, lengths, structural, neighbour_lengths)
                try:
                    answer = satisfiable(witness(enc), limits)
                    if answer.status == Satisfiability.SAT:
                        return Reach(bound if admitted is None else admitted, bound, _searched(cover),
                                     empty=frozenset(empty))
                    if not _paired(enc, limits):
                        empty.add(key)
                    elif admitted is None:
                        admitted = bound
                except EncodingError as error:
                    unknown = unknown or f"{_where(enc)}: {error}"
                    continue
                if answer.status == Satisfiability.UNKNOWN:
                    unknown = unknown or f"{_where(enc)}: z3 says {answer.reason}"
    return Reach(admitted, None, _searched(coverage(mech, max(last, max_length))), unknown, frozenset(empty))


def _shape_key(lengths: dict[str, int], neighbour_lengths: dict[str, int], structural: dict[str, int]) -> tuple:
    return tuple(lengths.items()), tuple(neighbour_lengths.items()), tuple(structural.items())


def _searched(last: Coverage) -> str:
    """The shapes up to `last`'s bound, in words."""
    if last.everything:
        return "whatever the public parameters"
    ranges = " and ".join(f"{lo} <= {name} <= {hi}" for name, lo, hi in last.structural)
    if last.max_length is None:
        return f"for {ranges}; larger values were not searched"
    within = f" with {ranges}" if ranges else ""
    return f"at any length <= {last.max_length}{within}; longer lengths were not searched"


def _witness_verdict(mech: ResolvedMechanism, v: PendingVerdict, reach: Reach, cover: Coverage) -> None:
    """The verdict of an obligation that one model proves: proved by the model `_search` found; otherwise unknown,
    and for ADJ, vacuous: every other obligation holds of no pair of distinct neighbours."""
    if reach.found is not None:
        v.scope = "for all inputs" if cover.everything else "for every input length"
    elif reach.unknown:
        v.fail(Status.UNKNOWN, f"whether two distinct neighbours exist is unknown ({reach.searched}): {reach.unknown}")
    else:
        if all(p.public for p in mech.params):
            why = "the mechanism has no private parameter (no `adjacent` clause): D = D' always"
        elif reach.admitted is None:
            why = (f"no pair of inputs satisfies `requires` and the adjacency clauses ({reach.searched}), not even "
                   "D = D'")
        else:
            why = (f"no two distinct inputs D ≠ D' satisfy `requires` and the adjacency clauses ({reach.searched}): "
                   "every other obligation holds of D = D' alone")
        v.fail(Status.UNKNOWN, f"vacuous: {why}, so the proofs say nothing about privacy")
        v.vacuous = True


def _least_reach(mech: ResolvedMechanism, reach: Reach, max_length: int) -> tuple[Coverage, str] | None:
    """The bounded check's shapes when those of --max-length admit no input, or no two distinct neighbours: those
    of the least bound that does (`coverage` at that bound, with the note that says so); None to keep them."""
    before = coverage(mech, max_length).text().removeprefix("for ")
    if reach.admitted is not None and reach.admitted > max_length:
        wider = coverage(mech, reach.found if reach.found is not None else reach.admitted)
        why = f"`requires` and the adjacency clauses admit no pair of inputs at {before}"
    elif reach.found is not None and reach.found > max_length:
        wider = coverage(mech, reach.found)
        why = f"no two distinct neighbours at {before}"
    else:
        return None
    least = "some distinct neighbours exist" if reach.found is not None else "they admit a pair"
    return wider, (f"{why}: the bounded check runs on to {wider.text().removeprefix('for ')}, the least bound at "
                   f"which {least}")


def _check_length(mech: ResolvedMechanism, enc: Encoding, checked: list[Obligation],
                  verdicts: dict[int, PendingVerdict], options: Options) -> None:
    run1, align, run2 = aligned_runs(enc)
    differ = [_inputs_differ(enc)] if options.distinct_inputs else []
    query = _Query(mech, enc, run1, run2, align, [enc.adjacency(), *noise_support(enc, draws=run1.draws), *differ],
                   options.limits)

    def record(o: Obligation, answer: Answer, seconds: float, describe: Describe) -> None:
        v = verdicts[id(o)]
        v.seconds += seconds
        if answer.status == Validity.REFUTED:
            assert answer.model is not None, "a refutation has a model"
            cex = counterexample(enc, run1, run2, align, answer.model, o)
            why = describe(answer.model)
            if isinstance(why, tuple):
                why, parameters = why
                cex = replace(cex, parameters=parameters)
            cex = replace(cex, why=why)
            if enc.uninterpreted:
                v.note(_UNINTERPRETED + ", ".join(sorted(enc.uninterpreted)) +
                       " as uninterpreted functions; replay it to confirm", Status.REFUTED)
            v.fail(Status.REFUTED, why, cex)
        elif answer.status == Validity.UNKNOWN:
            v.fail(Status.UNKNOWN, f"{_where(enc)}: z3 says {answer.reason}")

    for o in checked:
        v = verdicts[id(o)]
        if v.status == Status.REFUTED:
            continue
        start = time.perf_counter()
        outcome = Z3_CHECKS[o.id](query, o, v)
        if outcome is not None:
            record(o, outcome[0], time.perf_counter() - start, outcome[1])


def aligned_runs(enc: Encoding) -> tuple[Run, AlignmentEval, Run]:
    """The run on (D, H), the alignment over its output, and the run on (D', φ(H))."""
    run1 = Run(enc, enc.params).execute()
    align = AlignmentEval(enc, run1)
    run2 = Run(enc, {**enc.params, **enc.neighbour}, shift=align.shift, twin=run1).execute()
    return run1, align, run2


def aligned_cost(enc: Encoding, run: Run, align: AlignmentEval) -> tuple[z3.ArithRef, list[tuple[Draw, z3.ArithRef]]]:
    """Σ over the samples drawn in `run` of c_i·|ψ_i| (Definition 7), with c_i from the design table."""
    terms = []
    for d in run.draws:
        site = enc.mech.noise_site(d.site)
        psi = align.shift(d.site, d.index)
        if z3.is_int_value(z3.simplify(psi)) and z3.simplify(psi).as_long() == 0:
            continue
        if site.distribution.cost is None:
            continue  # no cost coefficient: C3 decides whether it is shifted at all
        c = _cost_term(enc, site, d)
        terms.append((d, z3.If(d.guard, c * _abs(_real(psi)), 0)))
    return (zt.Sum([t for _, t in terms]) if terms else zt.RealVal(0)), terms


def _cost_term(enc: Encoding, site, d: Draw) -> z3.ArithRef:
    if site.distribution.cost is None:
        # Not Lipschitz: no finite coefficient. C3 fails separately; the cost has no bound.
        return enc.function("unbounded_cost")(zt.RealVal(0))
    coefficient = cost_coefficient(site)
    if coefficient is None:
        raise EncodingError(f"the cost coefficient of {site.display} is not symbolic")

    def lookup(name: str):
        if name in d.env:
            return _real(d.env[name])
        if name in enc.params:
            return _real(enc.params[name])
        raise NotSymbolic(name)

    try:
        return _real(to_z3(coefficient, lookup, enc.function))
    except NotSymbolic as error:
        raise EncodingError(f"cannot encode the cost coefficient of {site.display}: {error}") from None


def _samples_determined(mech: ResolvedMechanism, enc: Encoding, limits: Limits):
    """C2 by self-composition: two runs on the same D whose outputs agree draw the same samples."""
    run_a = Run(enc, enc.params, noise_prefix="A.").execute()
    run_b = Run(enc, enc.params, noise_prefix="B.").execute()
    pairs = list(zip(run_a.draws, run_b.draws))
    same = zt.And([a.guard == b.guard for a, b in pairs]) if pairs else zt.BoolVal(True)
    base = [enc.requires(), *noise_support(enc)]
    # Two runs that draw the same noise have the same output: the assumptions have a model when base has one.
    answer = check_valid(base + [run_a.output.equal(run_b.output)], same, limits, satisfiable_if=base)

    def describe(model):
        for a, b in pairs:
            if not z3.is_true(model.eval(a.guard == b.guard, model_completion=True)):
                return (f"two runs on the same input with the same output differ on whether {_member(a)} is drawn "
                        f"(line {a.stmt.span.line})")
        return "the samples drawn are not determined by the output"

    return answer, describe


# ----------------------------------------------------------------------------------------- counterexamples


def _number(model: z3.ModelRef, term: z3.ExprRef) -> Any:
    value = model.eval(term, model_completion=True)
    if z3.is_int_value(value):
        return value.as_long()
    if z3.is_rational_value(value):
        f = Fraction(value.numerator_as_long(), value.denominator_as_long())
        return f.numerator if f.denominator == 1 else f"{f.numerator}/{f.denominator}"
    if z3.is_algebraic_value(value):
        return float(value.approx(20).as_decimal(17).rstrip("?"))
    if z3.is_true(value):
        return True
    if z3.is_false(value):
        return False
    return str(value)


def _show(model: z3.ModelRef, term: z3.ExprRef) -> str:
    v = _number(model, term)
    if isinstance(v, str) and "/" in v:
        p, q = v.split("/")
        return f"{v} ≈ {int(p) / int(q):.6g}"
    return str(v)


def _concrete_value(model: z3.ModelRef, value: Any) -> Any:
    if isinstance(value, ListV):
        return [_concrete_value(model, v) for v in value.items]
    if isinstance(value, TupV):
        return [_concrete_value(model, v) for v in value.items]
    if isinstance(value, TagV):
        code = _number(model, value.code)
        tag = tag_name(code) if isinstance(code, int) else "?"
        fields = [_concrete_value(model, f) for f in value.fields(tag)]
        return {"tag": tag, "payload": fields} if fields else {"tag": tag}
    if z3.is_expr(value):
        return _number(model, value)
    return str(value)


def _index(d: Draw) -> int:
    """The index of a draw of a family member (every draw of a family has one)."""
    assert d.index is not None, f"{d.site} is a scalar noise variable"
    return d.index


def output_value(model: z3.ModelRef, out: OutputSeq) -> list:
    length = _number(model, out.length)
    return [_concrete_value(model, out.slots[k]) for k in range(int(length))]


def counterexample(enc: Encoding, run1: Run, run2: Run, align: AlignmentEval, model: z3.ModelRef,
                   o: Obligation) -> Counterexample:
    mech = enc.mech
    args = {name: _concrete_value(model, value) for name, value in enc.params.items()}
    neighbour = {name: _concrete_value(model, value) for name, value in enc.neighbour.items()}
    noise: dict[str, Any] = {}
    for site in mech.noise:
        draws = [d for d in run1.draws if d.site == site.name]
        if site.family:
            size = max((_index(d) for d in draws), default=-1) + 1
            values: list[Any] = [None] * size
            for d in draws:
                if z3.is_true(model.eval(d.guard, model_completion=True)):
                    values[_index(d)] = _number(model, d.value)
            noise[site.name] = values
        else:
            drawn = [d for d in draws if z3.is_true(model.eval(d.guard, model_completion=True))]
            noise[site.name] = _number(model, drawn[0].value) if drawn else None
    shifts: dict[str, Any] = {}
    for site in mech.noise:
        draws = [d for d in run1.draws if d.site == site.name and
                 z3.is_true(model.eval(d.guard, model_completion=True))]
        if site.family:
            size = max((_index(d) for d in run1.draws if d.site == site.name), default=-1) + 1
            values = [None] * size
            for d in draws:
                values[_index(d)] = _number(model, align.shift(d.site, d.index))
            shifts[site.name] = values
        elif draws:
            shifts[site.name] = _number(model, align.shift(site.name, None))
    return Counterexample(
        mech.node.span.path, mech.name, o.id, _exact(args), _exact(neighbour), _exact(noise),
        length=enc.n if enc.lengths else None,
        lengths=enc.shape if len(enc.shape) > 1 else None,
        shifts=_exact(shifts),
        output=output_value(model, run1.output),
        aligned_output=output_value(model, run2.output),
        claim=_number(model, align.claim()) if o.id == ObligationId.C4C else None,
    )


def _exact(value: Any) -> Any:
    """A model's values for a Counterexample: "p/q" as a Fraction (the file format writes it back as "p/q")."""
    if isinstance(value, dict):
        return {k: _exact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_exact(v) for v in value]
    if isinstance(value, str) and "/" in value:
        p, q = value.split("/")
        return Fraction(int(p), int(q))
    return value


def _first_difference(model: z3.ModelRef, a: OutputSeq, b: OutputSeq) -> str:
    out_a, out_b = output_value(model, a), output_value(model, b)
    if len(out_a) != len(out_b):
        return f"the output on D has {len(out_a)} item(s), the aligned run on D' has {len(out_b)}"
    for k, (x, y) in enumerate(zip(out_a, out_b)):
        if x != y:
            return (f"output {k} differs: {format_value(x, digits=None)} on D, {format_value(y, digits=None)} on D' "
                    "with the aligned noise")
    return "the outputs differ"


def _first_false(model: z3.ModelRef, conditions: list[tuple[z3.BoolRef, str]],
                 otherwise: str | None = "a condition fails") -> str | None:
    for condition, text in conditions:
        if not z3.is_true(model.eval(condition, model_completion=True)):
            return text
    return otherwise
