"""Statistics (the search): input pairs x output events, tested sequentially, in parallel and reproducibly.

For each round k (sizes n_k = base * 2^k, up to `samples`) and each input pair (D, D'):

1. selection: draw n_k samples of M(D) and of M(D') and rank candidate events (events.py) by a
   Clopper–Pearson lower bound on the loss, in both directions (so each pair is tried in both orders; only
   D before D' when the neighbouring relation is one-sided, `ResolvedMechanism.one_sided`);
2. test: on FRESH samples (independent seeds; Poissonised sizes N ~ Poisson(n_k), see bounds.py) count the
   `top` best events and compute the exact p-value of H0: P[M(D) in E] <= e^eps P[M(D') in E].

Every p-value is multiplied by the number of tests the whole search may run (rounds x pairs x top:
Bonferroni, fixed in advance, so stopping early is allowed). Each finding's epsilon lower bound is the same
exact test inverted at level delta = alpha / (number of tests) (bounds.py), so all of them hold simultaneously
with probability >= 1 - alpha, and a finding rejects its claim eps exactly when its bound is >= eps, which is
exactly when its adjusted p-value is <= alpha. The decision is made on the bound (`Finding.rejects`), so that
a confirmed violation always reports a bound >= the claim it was tested against, and "no violation found"
always means every bound is below its claim. The search stops at the end of the first round with a rejection.

Lengths (`search`'s `max_length`): when the rounds at the first length find nothing, the patterns of longer
lengths (`escalation`: doubling) are tried in turn, each computed from the program's paths where the command's
callback can (align/exact/, deterministic: no test) and sampled in one round otherwise. The Bonferroni factor
counts every round of every length from the start, sampled or not, so the family-wise error stays <= alpha
whatever the search ends up running. A pair the program stops on (a runtime error: a mean of no records) is
left out with its error (`Result.skipped`); only a first length where no pair runs is an error.

At the end, the support mismatches (seen under D, never under D') go to z3 (support.py): when the event is
proved impossible on D', P[M(D') in E] = 0 exactly and the finding's eps is inf (`Finding.epsilon_bound`).

Seeds: the (round k, pair i) unit draws from SeedSequence(seed, spawn_key=(k, i)) and its spawned children
(selection D, selection D', test D, test D', sizes), so a unit's counts depend only on (seed, k, i): the same
seed gives the same counts whether units run in this process, in threads or in a process pool (`executor`;
a Dask `Client.get_executor()` works the same way).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import partial
from typing import Any

import numpy as np

from .. import nodes
from ..counterexample import Counterexample
from ..diagnostics import Diagnostic, SpecError, diag
from ..interp.outputs import DiscreteKeys
from ..interp.runner import chunks, prepare_arguments, prepare_neighbour, sample
from ..interp.scalar import Interpreter
from ..interp.values import convert_arguments
from ..limits import MAX_TEST_LENGTH
from ..resolve import ResolvedMechanism, walk
from ..types import INT, ListType
from .bounds import epsilon_lower_bound, lower_bound, p_value, rejected
from .events import Candidate, Event, Layout, additive_noise, candidates

# ------------------------------------------------------------------------------------------------ pairs


@dataclass(frozen=True)
class Pair:
    """Values of the private parameters on D and on D' (the public ones are the user's)."""

    name: str
    d: Mapping[str, Any]
    d_prime: Mapping[str, Any]
    length: int | None = None
    """The length of the lists a pattern generated (the search's length, `escalation`); None for a pair given
    (the user's, a counterexample file's, the checker's), whose lists have the lengths they have."""


@dataclass(frozen=True)
class Skipped:
    """An input pair the program cannot run (a runtime error on D or on D': a division by zero on an empty
    list, a noise parameter out of range): left out of the search, with the program's diagnostic."""

    pair: Pair
    diagnostic: Diagnostic


def _pattern_lists(length: int, c: float, sparse: bool,
                   changes: int | None = None) -> list[tuple[str, list[float], list[float]]]:
    """StatDP's patterns (Ding et al., CCS 2018, Section 5.1) with the adjacency bound c as the unit change;
    `sparse`: the clauses limit how many entries change (L1, count), so the patterns change one or two;
    `changes`: a `count` clause lets that many entries change (by c each), and the patterns move them all."""
    n, h = length, length // 2 if length > 1 else 1
    base = [c] * n
    if sparse:
        result = [("one above", base, [2 * c] + base[1:]), ("last above", base, base[:-1] + [2 * c]),
                  ("zeros, one above", [0.0] * n, [c] + [0.0] * (n - 1))]
        if n >= 2:
            result.append(("split", base, [1.5 * c, 1.5 * c] + base[2:]))
        m = min(n, changes or 0)
        if m >= 2:
            result = [(f"{m} above", base, [2 * c] * m + base[m:]), (f"{m} below", base, [0.0] * m + base[m:]),
                      (f"zeros, {m} above", [0.0] * n, [c] * m + [0.0] * (n - m)),
                      (f"{m} alternating", base, [2 * c if k % 2 else 0.0 for k in range(m)] + base[m:]),
                      *result]
        return result
    result = [
        ("one above", base, [2 * c] + base[1:]),
        ("one below", base, [0.0] + base[1:]),
        ("one above, rest below", base, [2 * c] + [0.0] * (n - 1)),
        ("one below, rest above", base, [0.0] + [2 * c] * (n - 1)),
        ("half above, half below", base, [2 * c] * h + [0.0] * (n - h)),
        ("all above", base, [2 * c] * n),
        ("all above but last", base, [2 * c] * (n - 1) + [c]),
        ("x-shape", [c] * h + [0.0] * (n - h), [0.0] * h + [c] * (n - h)),
        ("one dominant", [c * n] + [0.0] * (n - 1), [c * n - c] + [c] * (n - 1)),
    ]
    return result


def _record_patterns(length: int, c: float, changes: tuple[int, ...]) -> list[tuple[str, list[float], list[float]]]:
    """Add/remove-one-record neighbours of a list of `length` records: one record added (or, for a clause that
    only removes, removed) at the end or in front, above the others or at zero, and one added in front of
    alternating records (every record moves one position, and every position changes its value: the pattern for
    mechanisms that read records by position). A symmetric clause is tested both ways round, so a record
    removed is the same pair swapped."""
    base = [c] * length
    alternating = [2 * c if k % 2 else 0.0 for k in range(length)]
    if 1 in changes:
        return [("one record added", base, base + [2 * c]), ("one record added in front", base, [2 * c] + base),
                ("one zero record added", base, base + [0.0]),
                ("one record added in front of alternating records", alternating, [2 * c] + alternating)]
    rest, alternating = base[1:], alternating[:-1]
    return [("one record removed", rest + [2 * c], rest), ("one record removed in front", [2 * c] + rest, rest),
            ("one zero record removed", rest + [0.0], rest),
            ("one record removed in front of alternating records", [2 * c] + alternating, alternating)]


def _into(x: float, lo: int, hi: int) -> int:
    """x rounded and moved into the domain lo .. hi (the integers lo, ..., hi - 1); lo where it is empty."""
    return max(lo, min(round(x), hi - 1))


def input_pairs(mech: ResolvedMechanism, public: Mapping[str, Any], length: int) -> list[Pair]:
    """The candidate pairs for the private parameters: StatDP's patterns at the adjacency bound.

    A pair that violates `requires` or the adjacency is dropped later (`valid_pairs`).
    """
    it = Interpreter(mech, trace=False)
    private = [p for p in mech.params if not p.public]
    # an adjacency bound may read the length of a private list (equal on D and D'): the generated lists have `length`
    it.env = {**{p.name: [0.0] * length for p in private if isinstance(p.type, ListType) and p.length_public},
              **public}
    per_param: dict[str, list[tuple[str, Any, Any]]] = {}
    for p in private:
        # The unit change: the tightest bound on each entry's change (1 when no clause bounds it).
        c = min((float(it.ev(a.bound)) for a in p.adjacency if a.rule.bounds_entries and a.bound is not None),
                default=1.0)
        is_int = (p.type.elem if isinstance(p.type, ListType) else p.type) == INT
        cast: Callable[[float], Any] = round if is_int else float  # round(float) is an int
        if p.domain is not None:
            # a declared domain: the patterns' values are moved into it (a pattern that becomes D = D' is dropped)
            lo, hi = int(it.ev(p.domain.lo)), int(it.ev(p.domain.hi))
            cast = partial(_into, lo=lo, hi=hi)
        if isinstance(p.type, ListType):
            if p.length_public:
                counts = [int(it.ev(a.bound)) for a in p.adjacency if a.rule.counts_entries and a.bound is not None]
                rows = _pattern_lists(length, c, sparse=any(a.rule.sparse for a in p.adjacency),
                                      changes=min(counts, default=None))
            else:
                rows = _record_patterns(length, c, next(a.rule.length_changes for a in p.adjacency))
            if any(a.rule.one_sided for a in p.adjacency):
                # A one-sided relation admits the pairs of one direction only: offer each pattern both ways.
                rows += [(f"{name}, swapped", b, a) for name, a, b in rows]
            per_param[p.name] = [(name, [cast(x) for x in a], [cast(x) for x in b]) for name, a, b in rows]
        else:
            per_param[p.name] = [("shift", cast(0.0), cast(c)), ("shift up", cast(c), cast(2 * c))]
        if p.domain is not None:
            per_param[p.name] = [row for row in per_param[p.name] if row[1] != row[2]] or per_param[p.name][:1]
    names: list[str] = []
    for rows in per_param.values():
        for name, _, _ in rows:
            if name not in names:
                names.append(name)
    pairs = []
    for name in names:
        d, d2 = {}, {}
        for p in private:
            row = next((r for r in per_param[p.name] if r[0] == name), per_param[p.name][0])
            d[p.name], d2[p.name] = row[1], row[2]
        pairs.append(Pair(name, d, d2, length if any(isinstance(p.type, ListType) for p in private) else None))
    return pairs


ESCALATION = 4
"""By default `align test` searches up to this many times the first length (`default_max_length`)."""


def default_max_length(length: int) -> int:
    """The longest length `align test` escalates to by default: ESCALATION times the first (at most
    MAX_TEST_LENGTH)."""
    return max(length, min(MAX_TEST_LENGTH, ESCALATION * length))


def escalation(mech: ResolvedMechanism, length: int, max_length: int | None) -> list[int]:
    """The lengths the search tries, in order: `length`, then doubling up to `max_length` (the last one may be
    less than double). Only `length` when the patterns do not depend on it (no private list), when it is 0, or
    without `max_length`."""
    lengths = [length]
    if max_length is None or length <= 0 or \
            not any(isinstance(p.type, ListType) for p in mech.params if not p.public):
        return lengths
    while lengths[-1] < max_length:
        lengths.append(min(2 * lengths[-1], max_length))
    return lengths


def search_pairs(mech: ResolvedMechanism, public: Mapping[str, Any], length: int, extra_pairs: Sequence[Pair],
               patterns: bool) -> tuple[dict[str, Any], list[Pair]]:
    """The public values converted to their types, and the input pairs `align test` tries, in order: the given
    ones (the user's, a counterexample file's, then the checker's counterexamples: `pipeline.checker_pairs`),
    StatDP's patterns at `length` (with `patterns`), those that meet `requires` and the adjacency. SpecError
    (`no-input-pair`) when none does. The sampling search and the computed one (align/exact/) both start here."""
    public_names = {p.name for p in mech.params if p.public}
    public = convert_arguments(mech.name, mech.params, dict(public), only=public_names, span=mech.node.name_span)
    candidates = list(extra_pairs) + (input_pairs(mech, public, length) if patterns else [])
    pairs = valid_pairs(mech, public, candidates)
    if not pairs:
        raise SpecError([diag("no-input-pair", mech.node.name_span, mechanism=mech.name, length=length)])
    return public, pairs


def valid_pairs(mech: ResolvedMechanism, public: Mapping[str, Any], pairs: Sequence[Pair]) -> list[Pair]:
    result = []
    for pair in pairs:
        try:
            args = prepare_arguments(mech, {**public, **pair.d})
            prepare_arguments(mech, {**public, **pair.d_prime})
            prepare_neighbour(mech, args, dict(pair.d_prime))
        except SpecError:
            continue
        result.append(pair)
    return result


def counterexample_pair(mech: ResolvedMechanism, counterexample: Counterexample,
                        name: str = "counterexample") -> tuple[dict[str, Any], Pair]:
    """(public values, Pair) of a counterexample (the checker's, or a file read by counterexample.load).
    Values as floats (the model's are rationals)."""
    def plain(value: Any) -> Any:
        if isinstance(value, list):
            return [plain(v) for v in value]
        return float(value) if isinstance(value, Fraction) else value

    args, neighbour = counterexample.args, counterexample.neighbour
    private = {p.name for p in mech.params if not p.public}
    public = {k: plain(v) for k, v in args.items() if k not in private}
    return public, Pair(name, {k: plain(args[k]) for k in private if k in args},
                        {k: plain(neighbour[k]) for k in private if k in neighbour})


# ------------------------------------------------------------------------------------------ the units


@dataclass(frozen=True)
class Unit:
    """One (round, pair): selection then test."""

    mech: ResolvedMechanism
    """The mechanism (it pickles: a process pool's workers get it whole, never re-reading the file)."""
    args: Mapping[str, Any]
    """All parameters on D."""
    args_prime: Mapping[str, Any]
    """All parameters on D'."""
    n: int
    seed: int
    round: int
    pair: int
    top: int
    eps: float | None
    """The claimed epsilon (ranks the candidates); None when the claim reads the output (evaluated per sample)."""


@dataclass(frozen=True)
class Tested:
    """One event tested on the fresh sample of one unit."""

    candidate: Candidate
    c1: int
    """Count in the first sample (D when forward, D' otherwise) ..."""
    n1: int
    """... of this many samples (a Poisson draw of mean `mean`)."""
    c2: int
    n2: int
    mean: int
    """The Poisson mean of both sample sizes."""
    eps: float = 0.0
    """The epsilon the event is tested against (the claim's largest value over the event when it reads `out`)."""

    @staticmethod
    def of(candidate: Candidate, counts: tuple[int, int], sizes: tuple[int, int], mean: int, eps: float) -> Tested:
        """The event's counts on D and on D' (of `sizes` samples each), in the order of its direction."""
        (a, b), (m1, m2) = counts, sizes
        if candidate.forward:
            return Tested(candidate, a, m1, b, m2, mean, eps)
        return Tested(candidate, b, m2, a, m1, mean, eps)


def _test_sizes(seed: np.random.SeedSequence, mean: int) -> tuple[int, int]:
    """The Poisson(mean) sizes of the two test samples (bounds.py: Poissonisation makes the test exact)."""
    m1, m2 = np.random.Generator(np.random.PCG64(seed)).poisson(mean, size=2)
    return int(m1), int(m2)


@dataclass(frozen=True)
class UnitResult:
    round: int
    pair: int
    tested: tuple[Tested, ...]
    samples: int
    """Samples drawn by the unit (selection and test, both sides)."""
    error: Diagnostic | None = None
    """Why the program stopped on the pair (then nothing was tested, and no sample is counted)."""


def run_unit(unit: Unit) -> UnitResult:
    """Selection and test of one (round, pair); a pure function of the unit (module level: it pickles). A pair the
    program stops on (a runtime error) gives the error instead of tests."""
    try:
        return _run_unit(unit)
    except SpecError as error:
        return UnitResult(unit.round, unit.pair, (), 0, error.diagnostics[0])


def _run_unit(unit: Unit) -> UnitResult:
    mech = unit.mech
    root = np.random.SeedSequence(unit.seed, spawn_key=(unit.round, unit.pair))
    sel1, sel2, test1, test2, sizes = root.spawn(5)
    s1 = sample(mech, unit.args, unit.n, sel1)
    s2 = sample(mech, unit.args_prime, unit.n, sel2)
    layout = Layout.of(s1, max(1, s1.positions, s2.positions), additive_noise(mech, unit.args, unit.args_prime))
    describe = DiscreteKeys(mech.published_type, mech.tags)
    varying = unit.eps is None
    e1 = claim_values(mech, unit.args, s1) if varying else None
    e2 = claim_values(mech, unit.args_prime, s2) if varying else None
    chosen = candidates(layout, describe, layout.keys(s1), layout.reals(s1), layout.keys(s2), layout.reals(s2),
                        unit.top, 0.0 if unit.eps is None else unit.eps, e1, e2, both_directions=not mech.one_sided)
    m1, m2 = _test_sizes(sizes, unit.n)
    f1 = sample(mech, unit.args, m1, test1)
    f2 = sample(mech, unit.args_prime, m2, test2)
    k1, r1, k2, r2 = layout.keys(f1), layout.reals(f1), layout.keys(f2), layout.reals(f2)
    if varying:
        assert e1 is not None and e2 is not None
        g1, g2 = claim_values(mech, unit.args, f1), claim_values(mech, unit.args_prime, f2)
        largest = max(float(x.max(initial=-np.inf)) for x in (e1, e2, g1, g2))
    tested = []
    for cand in chosen:
        in1, in2 = cand.event.contains(k1, r1), cand.event.contains(k2, r2)
        a, b = int(in1.sum()), int(in2.sum())
        eps: float | None = unit.eps
        if varying:
            # the bound must hold with the claim's maximum over the event: the selection samples' maximum, raised
            # by any test sample in the event with a larger claim
            eps = max(cand.eps if cand.eps is not None else -np.inf, float(g1[in1].max(initial=-np.inf)),
                      float(g2[in2].max(initial=-np.inf)))
            if not np.isfinite(eps):
                eps = largest if np.isfinite(largest) else 0.0
        assert eps is not None, "a fixed claim, or the claim's largest value over the event"
        tested.append(Tested.of(cand, (a, b), (m1, m2), unit.n, float(eps)))
    return UnitResult(unit.round, unit.pair, tuple(tested), 2 * unit.n + m1 + m2)


@dataclass(frozen=True)
class Confirmation:
    """One confirmation test: a (pair, event) chosen from the rounds' findings, counted on fresh samples of
    Poisson(n) size on each side (chunk by chunk: n is large)."""

    mech: ResolvedMechanism
    args: Mapping[str, Any]
    """All parameters on D, as the pair was sampled in the rounds (the event's loss column reads this order)."""
    args_prime: Mapping[str, Any]
    n: int
    seed: int
    index: int
    candidate: Candidate
    eps: float


CONFIRMATION_KEY = 1 << 20
"""The first spawn key of the confirmations' seeds, above any round number: their samples are independent of
every round's."""


def run_confirmation(unit: Confirmation) -> Tested | Diagnostic:
    """Count the candidate's event on fresh samples of M(D) and M(D'); a pure function of the unit. The error of a
    program that stops on the pair (one that depends on the noise: the rounds ran) instead of the counts."""
    try:
        return _run_confirmation(unit)
    except SpecError as error:
        return error.diagnostics[0]


def _run_confirmation(unit: Confirmation) -> Tested:
    root = np.random.SeedSequence(unit.seed, spawn_key=(CONFIRMATION_KEY, unit.index))
    side1, side2, sizes = root.spawn(3)
    m1, m2 = _test_sizes(sizes, unit.n)
    loss = additive_noise(unit.mech, unit.args, unit.args_prime)
    event = unit.candidate.event
    counts = []
    for args, seed, m in ((unit.args, side1, m1), (unit.args_prime, side2, m2)):
        count = 0
        for chunk in chunks(unit.mech, args, m, seed):
            layout = Layout.of(chunk.outputs, event.positions, loss)
            count += int(event.contains(layout.keys(chunk.outputs), layout.reals(chunk.outputs)).sum())
        counts.append(count)
    return Tested.of(unit.candidate, (counts[0], counts[1]), (m1, m2), unit.n, unit.eps)


PROMISE_DELTA = 0.05
"""The level of the (unadjusted) bound that ranks findings for a confirmation."""

SAME_COUNTS = 0.1
"""Two findings of one pair whose counts differ by less than this (in ln) on both sides are taken to be the
same set of outputs written two ways (`out[6] TOP payload <= t` and `out = [BOT, ..., TOP(·)] and ...`)."""


def _promising(result: Result, count: int, skipped: Collection[int] = ()) -> list[Finding]:
    """The `count` findings with the largest lower bound above their claim at the unadjusted level
    PROMISE_DELTA, among those whose point estimate of the loss, ln(c1/c2), is above their claim: events the
    rounds already saw with some evidence (one seen 33 vs 8 times, 0.45 after the Bonferroni correction, ranks
    high; one seen 3 vs 0 does not: projecting small counts to a larger sample picks the noise, which a fresh
    sample regresses). One per set of outputs (SAME_COUNTS); none when every event looks private."""
    def score(f: Finding) -> float:
        mean = f.mean or max(f.n1, f.n2)
        return float(epsilon_lower_bound(f.c1, mean, f.c2, mean, PROMISE_DELTA)) - f.eps

    def same(f: Finding, g: Finding) -> bool:
        return f.pair_index == g.pair_index and f.forward == g.forward and f.mean == g.mean and \
            abs(math.log((f.c1 + 1) / (g.c1 + 1))) < SAME_COUNTS and \
            abs(math.log((f.c2 + 1) / (g.c2 + 1))) < SAME_COUNTS

    chosen: list[Finding] = []
    for f in sorted(result.findings, key=score, reverse=True):
        if f.c1 == 0 or (f.c2 > 0 and math.log(f.c1 / f.c2) <= f.eps) or any(same(f, g) for g in chosen) or \
                f.pair_index in skipped:
            continue
        chosen.append(f)
        if len(chosen) == count:
            break
    return chosen


# ------------------------------------------------------------------------------------------ the search


@dataclass(frozen=True)
class Finding:
    """One tested (pair, event) with its statistics."""

    pair: Pair
    event: Event
    forward: bool
    c1: int
    n1: int
    c2: int
    n2: int
    p_value: float
    """Raw exact p-value of H0: P1 <= e^eps P2."""
    adjusted_p: float
    """Bonferroni-adjusted: min(1, p * tests)."""
    epsilon_lower_bound: float
    """The exact conditional test inverted at level alpha / tests (bounds.epsilon_lower_bound, simultaneous with
    all others): a lower confidence bound on ln(P1 / P2), >= eps exactly when the test rejects eps."""
    mean: int = 0
    """The Poisson mean of both sample sizes (the p-value's n1 = n2; 0 when unknown: use n1, n2)."""
    eps: float = 0.0
    """The epsilon this event was tested against: the claim, or, for a claim that reads the output, its
    largest value over the event (the pointwise guarantee P[M(D) = w] <= e^eps(w) P[M(D') = w] gives
    P1(E) <= e^(max over E of eps) P2(E))."""

    impossible: str = ""
    """Non-empty when P[M(D') in E] = 0 is proved (support.py says why): with c1 > 0, eps = inf."""
    pair_index: int = 0
    """The position of the pair in `Result.pairs` (names need not be unique: two refuted C0 obligations give
    two pairs named `counterexample (C0)`)."""

    @property
    def rejects(self) -> bool:
        """The test rejects H0: P1 <= e^eps P2 at level alpha / tests, for this finding's eps: decided on the
        bound (eps_L >= eps), which the duality of Clopper–Pearson with the binomial tail makes the same as
        p_value <= alpha / tests (bounds.py); the bound and the decision cannot disagree."""
        return rejected(self.epsilon_lower_bound, self.eps)

    @property
    def epsilon_bound(self) -> float:
        """The reported bound: inf when the event is proved impossible on D' and was seen on D (then
        P1 >= lcb(P1) > 0 and P2 = 0), otherwise the sampling bound `epsilon_lower_bound`. Proofs are only
        attempted for findings that reject (`_prove_support`), so inf never stands beside a claim that held."""
        return math.inf if self.impossible and self.c1 > 0 else self.epsilon_lower_bound

    def p_value_at(self, eps: float) -> float:
        """The raw exact p-value of H0: P1 <= e^eps P2 for another eps (the same counts)."""
        m1, m2 = (self.mean, self.mean) if self.mean else (self.n1, self.n2)
        return p_value(self.c1, m1, self.c2, m2, eps)

    @property
    def support_mismatch(self) -> bool:
        return self.c1 > 0 and self.c2 == 0


@dataclass
class Result:
    claimed_epsilon: float
    """The claim; for a claim that reads the output, the epsilon used by the witness (see Finding.eps)."""
    alpha: float
    seed: int
    tests: int
    """Bonferroni factor: rounds x pairs x events per pair, summed over every length the search may try, plus the
    confirmation tests: fixed before the first sample (a length computed instead of sampled, or not reached,
    only leaves its share unspent)."""
    pairs: list[Pair]
    """The pairs sampled, those of the first length first (a finding's `pair_index` is a position here)."""
    samples: int = 0
    """Samples drawn in all (selection and test, D and D')."""
    rounds: int = 0
    findings: list[Finding] = field(default_factory=list)
    claim_reads_output: bool = False
    """The claim depends on the output: each finding was tested against its own epsilon (Finding.eps)."""
    confirmations: int = 0
    """Confirmation tests run after the rounds (`search`'s `confirm`): each a fresh, larger sample for one
    promising (pair, event)."""
    lengths: list[int] = field(default_factory=list)
    """The lengths whose patterns were sampled, in order (the first, then those the search escalated to that the
    computed stage did not cover); none when no pattern generates a list (scalars, or only given pairs)."""
    skipped: list[Skipped] = field(default_factory=list)
    """The pairs the program stopped on, left out from then on."""

    def p1_lower_bound(self, f: Finding) -> float:
        """lcb(P1) of a finding: Clopper–Pearson on c1 of the n1 samples of M(D) (c1 | N1 ~ Binomial(N1, P1)), at
        the level alpha / tests of its eps bound (what an eps = inf finding states of P[M(D) in E])."""
        return float(lower_bound(f.c1, f.n1, self.alpha / self.tests))

    @property
    def witness(self) -> Finding | None:
        """A finding that rejects its claim when there is one, and among those (or among all, when none does)
        the one with the smallest p-value (ties: the larger bound). Rejecting is adjusted p <= alpha, so this
        is the smallest p-value; putting the decision first keeps the witness one that rejects even where the
        p-value and the bound round differently at the boundary."""
        if not self.findings:
            return None
        return min(self.findings, key=lambda f: (not f.rejects, f.adjusted_p, -f.epsilon_lower_bound))

    @property
    def strongest(self) -> Finding | None:
        """The finding with the largest epsilon lower bound (a proved support mismatch first), among those that
        reject when there is a violation: with a claim that reads the output, an event with a large loss but a
        larger claim is no evidence of a violation, and a report of one shows only bounds above their claims."""
        pool = [f for f in self.findings if f.rejects] or self.findings
        if not pool:
            return None
        return max(pool, key=lambda f: (f.epsilon_bound, f.epsilon_lower_bound))

    @property
    def violation(self) -> bool:
        """A finding rejects its claim: its bound is >= the claim (the same exact test as adjusted p <= alpha)."""
        w = self.witness
        return w is not None and w.rejects


def round_sizes(base: int, samples: int) -> list[int]:
    sizes, n = [], max(1, base)
    while True:
        sizes.append(min(n, samples))
        if n >= samples:
            return sizes
        n *= 2


def claim_reads_output(mech: ResolvedMechanism) -> bool:
    """Whether the claim depends on the output (Free Gap Lemmas 7 and 8: `len(out) / k * eps`); resolution
    lets a claim read only the discrete parts of `out`."""
    return any(isinstance(x, nodes.OutRef) for x in walk(mech.claim))


def claimed_epsilon(mech: ResolvedMechanism, args: Mapping[str, Any]) -> float:
    """The claim as one number (a claim that does not read the output)."""
    it = Interpreter(mech, trace=False)
    it.env = dict(args)
    return float(it.ev(mech.claim))


def claim_values(mech: ResolvedMechanism, args: Mapping[str, Any], outputs: Any) -> np.ndarray:
    """The claim eps(w) at each sample's output w (the interpreter evaluates it with `out` bound to w).

    The claim reads only discrete parts of `out`, so it is evaluated once per distinct discrete output."""
    if outputs.n == 0:
        return np.zeros(0)
    keys = outputs.discrete_keys()
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    it = Interpreter(mech, trace=False)
    values = np.empty(len(first))
    for r, i in enumerate(first):
        it.env = {**dict(args), "out": outputs.value(int(i))}
        values[r] = float(it.ev(mech.claim))
    return values[inverse.ravel()]


@dataclass(frozen=True)
class _Stage:
    """The pairs of one length and the sizes of their rounds."""

    length: int
    pairs: list[Pair]
    sizes: list[int]
    first_round: int
    """The round number of its first round in the seeds' spawn keys (unique over the stages)."""


def search(mech: ResolvedMechanism, public: Mapping[str, Any], length: int = 5, samples: int = 64_000,
           base: int = 2_000, alpha: float = 0.05, seed: int = 0, top: int = 3, executor: Executor | None = None,
           extra_pairs: Sequence[Pair] = (), patterns: bool = True, stop_early: bool = True,
           progress: Callable[[str], None] | None = None, prove_support: bool = True,
           confirm: int = 3, confirm_factor: int = 32, sharpen: bool = False,
           max_length: int | None = None, computed: Callable[[int], bool | None] | None = None) -> Result:
    """Search for a violation of the mechanism's claim; see the module docstring.

    `public`: values of the public parameters (the private ones come from the pairs). `extra_pairs` (the
    user's D and D', a counterexample file's, the pairs of the checker's own counterexamples:
    `pipeline.checker_pairs`) are tried first, then StatDP's patterns unless `patterns` is False.

    Lengths: with `max_length` (and the patterns), when the rounds at `length` find no violation the search
    escalates (`escalation`: doubling up to `max_length`) to the patterns at each longer length, in order.
    `computed(n)`, when given, is asked first at each length (the command's probabilities computed from the
    program's paths, align/exact/): True, a violation is computed there and the search ends; False, computed
    without one, so that length is not sampled; None, not computed (outside that class), so its patterns are
    sampled, in one round of `samples * length / n` per side (at least `base`): about the sample-entries of half
    the first length's rounds. Every test of every length is in the Bonferroni factor from the start.

    When no length shows a violation, the `confirm` most promising (pair, event)s are each tested once more
    on fresh samples `confirm_factor` times their length's largest round (`_promising`, `run_confirmation`); the
    Bonferroni factor counts those tests from the start. With `sharpen`, the confirmations run after a violation
    too: the same tests at the same level, on a larger sample, so the lower bound on the loss is tighter (the
    violation itself was decided by the rounds).

    A pair the program stops on (a runtime error on D or D') is left out from then on (`Result.skipped`); when
    no pair of the first length runs, its error is raised. Raises SpecError for bad arguments or no valid pair.
    """
    public, pairs = search_pairs(mech, public, length, extra_pairs, patterns)
    args0 = prepare_arguments(mech, {**public, **pairs[0].d})
    varying = claim_reads_output(mech)
    eps = None if varying else claimed_epsilon(mech, args0)
    sizes = round_sizes(base, samples)
    stages = [_Stage(length, pairs, sizes, 0)]
    for longer in (escalation(mech, length, max_length) if patterns else [length])[1:]:
        more = valid_pairs(mech, public, input_pairs(mech, public, longer))
        # a claim that reads a list's length is not the same claim at another length: the search stays at the first
        if more and (varying or claimed_epsilon(mech, prepare_arguments(mech, {**public, **more[0].d})) == eps):
            n = min(samples, max(base, samples * length // longer))
            stages.append(_Stage(longer, more, [n], stages[-1].first_round + len(stages[-1].sizes)))
    if varying:
        confirm = 0  # an event's claim is its largest over the samples in it: a fresh sample could raise it
    tests = sum(len(stage.sizes) * len(stage.pairs) for stage in stages) * top + confirm
    result = Result(0.0 if eps is None else eps, alpha, seed, tests, [], claim_reads_output=varying)
    delta = alpha / tests
    arguments: list[tuple[dict[str, Any], dict[str, Any]]] = []
    largest: list[int] = []  # per pair: the largest round of its length (a confirmation's unit of samples)
    skipped: set[int] = set()

    def sample_stage(stage: _Stage) -> None:
        first = len(result.pairs)
        result.pairs.extend(stage.pairs)
        if any(p.length is not None for p in stage.pairs):  # a length the patterns generated (a list's)
            result.lengths.append(stage.length)
        arguments.extend((prepare_arguments(mech, {**public, **p.d}), prepare_arguments(mech, {**public, **p.d_prime}))
                         for p in stage.pairs)
        largest.extend([stage.sizes[-1]] * len(stage.pairs))
        where = f" at length {stage.length}" if len(stages) > 1 else ""
        for k, n in enumerate(stage.sizes):
            active = [i for i in range(first, len(result.pairs)) if i not in skipped]
            if not active:
                return
            if progress is not None:
                progress(f"round {k + 1}/{len(stage.sizes)}{where}: sampling {n} per side for {len(active)} input "
                         "pair(s)")
            units = [Unit(mech, *arguments[i], n, seed, stage.first_round + k, i, top, eps) for i in active]
            outcomes = list(executor.map(run_unit, units)) if executor is not None else [run_unit(u) for u in units]
            result.rounds += 1
            for outcome in outcomes:
                if outcome.error is not None:
                    skipped.add(outcome.pair)
                    result.skipped.append(Skipped(result.pairs[outcome.pair], outcome.error))
                    continue
                result.samples += outcome.samples
                for t in outcome.tested:
                    result.findings.append(_finding(result.pairs, outcome.pair, t, tests, delta))
            if progress is not None:
                w = result.witness
                progress(f"round {k + 1}/{len(stage.sizes)}{where}: {n} samples per side, smallest adjusted p = "
                         f"{w.adjusted_p:.3g}" if w else f"round {k + 1}/{len(stage.sizes)}{where}")
            if stop_early and result.violation:
                return

    sample_stage(stages[0])
    if result.skipped and not result.samples:  # no pair of the first length runs: the program's own error
        raise SpecError([result.skipped[0].diagnostic])
    decided = False  # a violation computed from the paths
    for stage in stages:
        if result.violation or decided:
            break
        verdict = computed(stage.length) if computed is not None else None
        if verdict:
            decided = True
        elif verdict is None and stage is not stages[0]:
            sample_stage(stage)
    if confirm and (sharpen or not result.violation) and not decided:
        chosen = _promising(result, confirm, skipped)
        if progress is not None and chosen:
            progress(f"confirmation: {len(chosen)} event(s), {largest[chosen[0].pair_index] * confirm_factor} "
                     "samples per side each")
        confirmations = [Confirmation(mech, *arguments[f.pair_index], largest[f.pair_index] * confirm_factor, seed,
                                      j, Candidate(f.event, f.forward, 0.0), f.eps) for j, f in enumerate(chosen)]
        tested = list(executor.map(run_confirmation, confirmations)) if executor is not None else \
            [run_confirmation(c) for c in confirmations]
        for f, t in zip(chosen, tested):
            if isinstance(t, Diagnostic):  # an error that depends on the noise: the rounds ran, this did not
                if f.pair_index not in skipped:
                    skipped.add(f.pair_index)
                    result.skipped.append(Skipped(result.pairs[f.pair_index], t))
                continue
            result.samples += t.n1 + t.n2
            result.findings.append(_finding(result.pairs, f.pair_index, t, tests, delta))
        result.confirmations = len(confirmations)
    if varying and result.witness is not None:
        result.claimed_epsilon = result.witness.eps
    if prove_support:
        if progress is not None and any(f.support_mismatch for f in result.findings):
            progress("proving support mismatches with z3")
        _prove_support(mech, public, result)
    return result


def _finding(pairs: Sequence[Pair], index: int, t: Tested, tests: int, delta: float) -> Finding:
    """A tested event of pairs[index] as a finding: the p-value and its inversion, both with the Poisson means
    (c1 ~ Poisson(mean P1) exactly), and the pair in the order of the direction tested."""
    p = p_value(t.c1, t.mean, t.c2, t.mean, t.eps)
    bound = float(epsilon_lower_bound(t.c1, t.mean, t.c2, t.mean, delta))
    pair = pairs[index]
    d, d2 = (pair.d, pair.d_prime) if t.candidate.forward else (pair.d_prime, pair.d)
    return Finding(replace(pair, d=d, d_prime=d2), t.candidate.event, t.candidate.forward, t.c1, t.n1, t.c2, t.n2, p,
                   min(1.0, p * tests), bound, t.mean, t.eps, pair_index=index)


PROOF_ATTEMPTS = 8
"""Distinct (D', event) support mismatches sent to z3 per search: the witness, then by decreasing bound."""


def _prove_support(mech: ResolvedMechanism, public: Mapping[str, Any], result: Result) -> None:
    """Mark the support mismatches whose event z3 proves impossible on D' (support.py): their eps is inf.

    Only findings that reject their claim are tried: the proof strengthens a bound the test already put above
    the claim, and never makes a report show eps = inf beside a claim the test did not reject.

    The event must also be possible on D in exact arithmetic (z3 finds noise for it): the samples in it are
    then not a floating-point artefact of a set the exact semantics gives probability 0."""
    # lazy: loads sympy, z3 only when this runs (start-up; tests/test_layers.py)
    from .support import check_event

    def status(args: Mapping[str, Any], event: Event) -> tuple[str, str]:
        try:
            return check_event(mech, prepare_arguments(mech, {**public, **args}), event)
        except SpecError as error:  # arguments the interpreter rejects: no claim
            return "unsupported", "; ".join(d.message for d in error.diagnostics)

    w = result.witness
    order = sorted(range(len(result.findings)),
                   key=lambda i: (result.findings[i] is not w, -result.findings[i].epsilon_lower_bound))
    proofs: dict[tuple, str] = {}
    for i in order:
        f = result.findings[i]
        if not f.support_mismatch or not f.rejects:
            continue
        key = (repr(sorted(f.pair.d_prime.items())), repr(sorted(f.pair.d.items())), f.event)
        if key not in proofs:
            if len(proofs) >= PROOF_ATTEMPTS:
                continue
            there, why = status(f.pair.d_prime, f.event)
            proofs[key] = why if there == "impossible" and status(f.pair.d, f.event)[0] == "possible" else ""
        if proofs[key]:
            result.findings[i] = replace(f, impossible=proofs[key])
