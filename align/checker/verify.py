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

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace

from ..counterexample import Counterexample
from ..limits import MAX_BOUNDED_LENGTH
from ..obligations import Obligation, ObligationId
from ..resolve import ResolvedMechanism
from ..results import Verdict
from ..rules import RULES, rule_for
from ..smt import terms as zt
from ..smt.encode import (
    Encoding,
    EncodingError,
)
from ..smt.solver import Answer, Limits, Satisfiability, Validity, fresh_context, satisfiable
from ..smt.supports import noise_support
from ..status import Status
from . import mixture
from .checks import (
    BY_CONSTRUCTION,
    WITNESS_CHECKS,
    Z3_CHECKS,
    Describe,
    Query,
    Witness,
    aligned_runs,
    cost_term,
    inputs_differ,
)
from .every_length import Context
from .induction import Inductive
from .models import counterexample
from .options import Coverage, Options, coverage, structural_values
from .replay import replay
from .stops import hazards
from .strategies import prove_for_every_length
from .verdicts import PendingVerdict

DECIDERS: dict[ObligationId, Callable[[ResolvedMechanism, Obligation], Verdict]] = {
    ObligationId.MIX: mixture.verify,
}
"""How the checker decides each obligation a proof rule decides itself (`ProofRule.decided`), not by the bounded
check: the R²DP rule's closed form (checker/mixture.py)."""
assert all(o in DECIDERS for rule in RULES for o in rule.decided), "a rule decides an obligation with no decider"

_LENGTHS_BEFORE_STOPPING = 1
"""A refutation stops the bounded check only after lengths 0 .. 1: at length 0 a loop's body never runs, and a
per-site obligation of noise drawn in the loop would be reported as checked when nothing was drawn."""


def verify_mechanism(mech: ResolvedMechanism, options: Options | None = None) -> list[Verdict]:
    with fresh_context():
        return _verify_mechanism(mech, options or Options())


def _verify_mechanism(mech: ResolvedMechanism, options: Options) -> list[Verdict]:
    rule = rule_for(mech)
    obs = rule.obligations(mech)
    verdicts = {id(o): PendingVerdict(o) for o in obs}
    # C1 and C5 hold by construction (resolution rejects what breaks them), and so does C3 for a
    # distribution with a cost coefficient (Free Gap Table 1; well formed by C0).
    constructive = [o for o in obs if o.id in BY_CONSTRUCTION or
                    (o.id == ObligationId.C3 and o.site is not None and mech.noise_site(o.site).distribution.alignable)]
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
        # In a z3 context of its own: the bounded check's queries, whose time (nlsat's, not all counted against
        # rlimit) moves with the ids of the terms made before them, are as without the proof's.
        with zt.fresh_context():
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
                used = _check_shape(mech, (lengths, neighbour_lengths, structural), remaining, verdicts, options)
                if used is not None:
                    assumptions |= used
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
        if o.kind.of_alignment and assumptions:
            for assumption in sorted(assumptions):
                v.note(assumption)
    decided = {id(o): DECIDERS[o.id](mech, o) for o in obs if o.id in rule.decided}
    # Shifting noise that has no cost coefficient has no finite cost: C4c cannot hold where C3 fails.
    c3_failed = [o.site for o in obs
                 if o.id == ObligationId.C3 and o.site is not None and verdicts[id(o)].status == Status.REFUTED]
    for o in obs:
        if o.id == ObligationId.C4C and c3_failed and verdicts[id(o)].status >= Status.BOUNDED:
            verdicts[id(o)].fail(Status.UNKNOWN, "the cost of shifting " + ", ".join(c3_failed) +
                                 " is not defined: it is not Lipschitz (see C3); the other noise costs at most the "
                                 "claim")
    final = [decided.get(id(o)) or verdicts[id(o)].freeze() for o in obs]
    final = _stops(mech, final)
    # a quiet obligation (ADJ) is a line in the reports only when it does not hold
    return [v for v in final if not (v.obligation.kind.quiet and v.status == Status.PROVED)]


STOPS_OBLIGATIONS = (ObligationId.C4A, ObligationId.MIX)
"""Where a runtime error that private data or noise decides makes the verdict unknown (`stops.hazards`): the
alignment's C4a (M(D, H) = ω implies M(D', φ(H)) = ω, a stop being an outcome), or the mixture rule's MIX."""


def _stops(mech: ResolvedMechanism, final: list[Verdict]) -> list[Verdict]:
    """A run of the body that may stop with a runtime error on one neighbour and not on the other is an outcome that
    the obligations do not cover (docs/checker.md, "Runtime errors of the body"): no proof while one may."""
    found = hazards(mech)
    if not found:
        return final
    reason = ("the run may stop with a runtime error on one neighbour and not on the other, which the obligations "
              "about outputs do not cover (align does not prove the body's partial operations defined yet): " +
              "; ".join(h.note for h in found))
    target = next((v for v in final for id_ in STOPS_OBLIGATIONS if v.obligation.id == id_), None)
    return [replace(v, status=Status.UNKNOWN, reason=reason, scope="") if v is target and v.status >= Status.BOUNDED
            else v for v in final]


FIRST_PASS_FROM = 4
"""The bounded check's first pass (`_first_pass`) checks the input shapes whose longest list has at least this many
entries, or whose integer parameters that shape the program are at least this large. Below, the queries are small
and fast as they stand (and the verdicts at the default --max-length 3 are exactly as without a first pass)."""

Shape = tuple[dict[str, int], dict[str, int], dict[str, int]]
"""One input shape: the lengths of the lists on D, those on D' that differ, the structural values."""


def _check_shape(mech: ResolvedMechanism, shape: Shape, remaining: list[Obligation],
                 verdicts: dict[int, PendingVerdict], options: Options) -> set[str] | None:
    """Check the remaining obligations at one input shape into `verdicts`: the measure-zero assumptions used, or
    None when `requires` admits no input of this shape. A long shape goes through the first pass first, and only
    what it does not prove is checked the usual way."""
    used: set[str] = set()
    left = remaining
    if max([*shape[0].values(), *shape[1].values(), *shape[2].values()], default=0) >= FIRST_PASS_FROM:
        first = _first_pass(mech, shape, remaining, verdicts, options)
        if first is None:
            return None
        proved, used = first
        left = [o for o in remaining if o not in proved]
        if not left:
            return used
    lengths, neighbour_lengths, structural = shape
    enc = Encoding(mech, lengths, structural, neighbour_lengths)
    try:
        if not _feasible(enc, options.limits):
            return None
        _check_length(mech, enc, left, verdicts, options)
    except EncodingError as error:
        for o in left:
            verdicts[id(o)].fail(Status.UNKNOWN, f"{_where(enc)}: {error}")
    return used | enc.assumptions


class _Probe(PendingVerdict):
    """A verdict of the first pass: a check that does not prove its obligation only marks it `failed` (the
    obligation is then checked the usual way, which gives its verdict)."""

    failed: bool = False

    @staticmethod
    def of(v: PendingVerdict) -> _Probe:
        """A probe that starts from `v` (its notes copied, no time spent yet)."""
        return _Probe(**{f.name: getattr(v, f.name) for f in fields(PendingVerdict)} |
                      {"notes": list(v.notes), "seconds": 0.0})

    def fail(self, status: Status, reason: str = "", counterexample: Counterexample | None = None) -> None:
        self.failed = True


def _first_pass(mech: ResolvedMechanism, shape: Shape, remaining: list[Obligation],
                verdicts: dict[int, PendingVerdict], options: Options) -> tuple[list[Obligation], set[str]] | None:
    """The checks of one input shape with the program encoded for long inputs: `max`, `min`, `argmax` and the
    ranking of `top_k` as symbols with their defining facts (`Encoding.relational`), an add/remove-one-record
    clause split into its cases (`Limits.by_cases`), in z3 contexts made for this shape (a context that has solved
    many queries solves the next one more slowly). Each of its queries is
    satisfiable exactly when the usual one is, so a proof here is a proof of the usual query; only proofs are
    kept: what it does not prove is checked the usual way, whose answers (a counterexample, an unknown) are the
    verdicts. Returns the obligations proved and the measure-zero assumptions they used, or None when `requires`
    admits no input of this shape."""
    probes = {id(o): _Probe.of(verdicts[id(o)]) for o in remaining}
    with zt.fresh_context():
        lengths, neighbour_lengths, structural = shape
        enc = Encoding(mech, lengths, structural, neighbour_lengths, relational=True)
        try:
            if not _feasible(enc, options.limits):
                return None
            _check_length(mech, enc, remaining, probes, replace(options, limits=replace(options.limits, by_cases=True)))
        except EncodingError:
            return [], set()
        failed = {id(o) for o in remaining if probes[id(o)].failed}
        for o in remaining:
            verdicts[id(o)].seconds += probes[id(o)].seconds
            if id(o) not in failed:
                verdicts[id(o)].notes = probes[id(o)].notes
        return [o for o in remaining if id(o) not in failed], set(enc.assumptions)


def _where(enc: Encoding) -> str:
    """Which input shape a message is about: `length 2`, `lengths q: 2, r: 0`, `k = 1`."""
    parts = []
    if len(enc.shape) == 1:
        parts.append(f"length {enc.n}")
    elif enc.shape:
        parts.append("lengths " + ", ".join(f"{k}: {v}" for k, v in enc.shape.items()))
    parts += [f"{k} = {v}" for k, v in enc.structural.items()]
    return ", ".join(parts) or "all inputs"


def strategy_context(options: Options) -> Context:
    """What the proofs for every length read (checker/every_length.py): the solver's limits, the cost and support
    terms of the noise, and this module's bounded check of every obligation at the lengths <= t."""
    def bounded(part: ResolvedMechanism, t: int) -> list[Verdict]:
        return verify_mechanism(part, Options(max_length=t, limits=options.limits, bounded_only=True,
                                              every_obligation=True))

    return Context(options.limits, cost_term, noise_support, bounded)


def _unbounded(mech: ResolvedMechanism, options: Options, checked: list[Obligation],
               verdicts: dict[int, PendingVerdict]) -> Inductive:
    """The proof for every length (`prove_for_every_length`), its time shared out between the obligations. Its
    `proved` maps each obligation to None (proved) or why not."""
    start = time.perf_counter()
    try:
        result, reasons = prove_for_every_length(mech, strategy_context(options))
    finally:
        elapsed = time.perf_counter() - start
    if result is None:
        return Inductive(proved={o.key: "; ".join(reasons) for o in checked})
    share = elapsed / max(1, len(checked))
    for o in checked:
        verdicts[id(o)].seconds += share
        if o.kind.by_invariant and result.invariant and result.proved.get(o.key, "") is None:
            verdicts[id(o)].note("loop invariant: " + "; ".join(map(str, result.invariant)), Status.PROVED)
            verdicts[id(o)].invariant = tuple(result.invariant)
    return result


_UNINTERPRETED = "the refutation involves "
"""The start of the note on a refutation that rests on functions z3 leaves uninterpreted (exp, ln)."""


def _confirm(mech: ResolvedMechanism, verdicts: list[PendingVerdict]) -> None:
    """Replay each refutation in the interpreter; one that rests on uninterpreted functions and does not
    reproduce there is not a refutation of the real mechanism, so it becomes unknown."""
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


def _without_ties(query: Query, o: Obligation, v: PendingVerdict) -> tuple[Answer, Describe] | None:
    """The check of `o` again, on almost every noise vector: the exact ties of probability 0 (`encode.note_ties`)
    excluded, when it failed without them other than by a counterexample off every tie. Its answer is the verdict
    (a counterexample without ties, or a proof that says what it assumed)."""
    enc = query.enc
    with enc.excluding_ties():
        outcome = Z3_CHECKS[o.id](query, o, v)
    if outcome is not None and outcome[0].status == Validity.PROVED:
        for text in sorted({t.text for t in enc.ties.values()}):
            if all(x.text != text for x in v.notes):
                v.note(text, Status.PROVED, Status.BOUNDED)
    return outcome


def _check_length(mech: ResolvedMechanism, enc: Encoding, checked: list[Obligation],
                  verdicts: Mapping[int, PendingVerdict], options: Options) -> None:
    run1, align, run2 = aligned_runs(enc)
    differ = [inputs_differ(enc)] if options.distinct_inputs else []
    query = Query(mech, enc, run1, run2, align, [enc.adjacency(), *noise_support(enc, draws=run1.draws), *differ],
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
        if outcome is not None and outcome[0].status != Validity.PROVED and enc.ties and not (
                outcome[0].status == Validity.REFUTED and outcome[0].model is not None
                and enc.off_ties(outcome[0].model)):
            outcome = _without_ties(query, o, v) or outcome
        if outcome is not None:
            record(o, outcome[0], time.perf_counter() - start, outcome[1])
