"""`align test --exact`: the privacy loss of input pairs computed from the program's paths, not sampled.

For each input pair (the checker's counterexample pairs and StatDP's patterns, as the sampling search), the
paths of the mechanism on D and on D' (paths.py) are grouped by the discrete shape of their output (`Slot`s
for noisy values); each shape is an event E, and P[M(D) in E], P[M(D') in E] are bracketed (integrate.py).
Shapes with noisy values also give the events "shape, and value k <= t" (or >= t) for thresholds t spread
over that value's range. The loss of an event is bounded below by

    ln( lower(P[M(D) in E]) / upper(P[M(D') in E]) )     (and with D, D' exchanged),

∞ when E is not a shape any path of D' produces (the enumeration of paths is complete, so P[M(D') in E] = 0).
Each bound is deterministic: no sample, no level. The strongest events of the first pass (on a coarse grid)
are computed again on a fine one (`REFINE`), whose brackets are narrower; the report keeps the larger bound.
A violation is an event whose bound reaches the claim.
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..diagnostics import SpecError, diag
from ..interp.runner import prepare_arguments
from ..interp.values import format_value
from ..resolve import ResolvedMechanism
from ..results import TestReport
from ..stats.lrtest import Pair, Result, Skipped, claim_reads_output, claimed_epsilon, search_pairs
from .integrate import ZERO, Bracket, Family, Integrator
from .linear import Constraint, Linear
from .paths import PATH_LIMIT, Outside, Path, paths, shape

COARSE = 1 << 11
"""Cells of the first pass's grids."""
FINE = 1 << 16
"""Cells of the refinement's windows."""
REFINE = 3
"""How many of the strongest events are computed again on the fine grid."""
AFTER_SAMPLING_PATHS = 1024
"""`align test` computes after sampling only programs with at most this many paths per input."""
FAMILIES = 8
"""Per pair, the threshold events of this many of the most likely shapes and of the shapes with the largest
loss on their own (a shape with a noisy value and both probabilities positive)."""
THRESHOLDS = (-30.0, -15.0, -8.0, -4.0, -2.0, -1.0, 0.0, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
"""Thresholds on a noisy value: its noise-free part plus these multiples of its noise's standard deviation."""


@dataclass(frozen=True)
class Event:
    shape: Any
    """The discrete shape of the output (a tuple of outputs with `Slot`s)."""
    slot: int | None = None
    threshold: float = 0.0
    at_most: bool = True

    def text(self) -> str:
        head = "out = " + format_value(list(self.shape))
        if self.slot is None:
            return head
        return f"{head}, v{self.slot} {'<=' if self.at_most else '>='} {format_value(self.threshold)}"

    def conditions(self, path_slots: Sequence[Linear | float]) -> tuple[Constraint, ...] | None:
        """The event's conditions beyond the shape on a path with these noisy values; None: it excludes the
        path (a value that does not depend on the noise, on the wrong side of the threshold)."""
        if self.slot is None:
            return ()
        v = path_slots[self.slot]
        form = self.threshold - v if self.at_most else v - self.threshold
        if isinstance(form, Linear):
            return (Constraint(form),)
        return () if form >= 0 else None


@dataclass(frozen=True)
class ExactFinding:
    pair: Pair
    event: Event
    forward: bool
    """P[M(D) in E] against P[M(D') in E]; False: the other way."""
    p: Bracket
    """P of the event on the input compared first (D when forward, D' otherwise)."""
    p_prime: Bracket
    """... and on the other input."""
    epsilon: float
    """ln(p.lower / p_prime.upper): a lower bound on the privacy loss (inf when p_prime is exactly 0)."""

    @property
    def inputs(self) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
        """The private values of the input compared first (the `p` side) and of the other."""
        return (self.pair.d, self.pair.d_prime) if self.forward else (self.pair.d_prime, self.pair.d)


@dataclass
class ExactResult:
    claimed_epsilon: float
    pairs: list[Pair]
    findings: list[ExactFinding] = field(default_factory=list)
    paths: int = 0
    """Paths enumerated, all distinct inputs together."""
    skipped: list[Skipped] = field(default_factory=list)
    """The pairs the program stops on (a runtime error on D or D'), left out."""
    lengths: list[int] = field(default_factory=list)
    """The lengths computed, in order (`Computed`: the first, then the longer ones the search escalated to)."""
    outside: str | None = None
    """Why the next length was not computed (outside the class there, with the length), when it was not."""

    def extend(self, other: ExactResult) -> None:
        """Add the computation of another length (the same claim)."""
        self.pairs += other.pairs
        self.findings += other.findings
        self.paths += other.paths
        self.skipped += other.skipped
        self.lengths += other.lengths

    @property
    def strongest(self) -> ExactFinding | None:
        return max(self.findings, key=lambda f: f.epsilon, default=None)

    @property
    def violation(self) -> bool:
        s = self.strongest
        return s is not None and s.epsilon >= self.claimed_epsilon

    @property
    def length(self) -> int | None:
        """The length of the patterns whose pair shows the violation (None: no violation, or a pair given)."""
        s = self.strongest
        return s.pair.length if self.violation and s is not None else None


@dataclass
class _Side:
    """One input's paths grouped by the shape of their output: per shape, (path, its noisy values)."""

    groups: dict[Any, list[tuple[Path, list[Linear | float]]]]
    integrator: Integrator

    def probability(self, event: Event, integrator: Integrator | None = None) -> Bracket:
        total = ZERO
        for path, slots in self.groups.get(event.shape, ()):
            extra = event.conditions(slots)
            if extra is not None:
                total = total + (integrator or self.integrator).probability(path.constraints + extra, path.draws)
        return total

    def family(self, key: Any, slot: int, thresholds: np.ndarray, at_most: bool) -> Bracket:
        """The brackets of "shape `key`, value `slot` <= t" (or >= t) for every threshold t at once."""
        total = Bracket(np.zeros(len(thresholds)), np.zeros(len(thresholds)))
        for path, slots in self.groups.get(key, ()):
            v = slots[slot]
            if isinstance(v, Linear):
                total = total + self.integrator.probability(path.constraints, path.draws,
                                                            Family(v, thresholds, at_most))
            else:
                inside = (thresholds >= v) if at_most else (thresholds <= v)
                p = self.integrator.probability(path.constraints, path.draws)
                total = total + Bracket(p.lower * inside, p.upper * inside)
        return total


def _side(mech: ResolvedMechanism, args: Mapping[str, Any], limit: int = PATH_LIMIT) -> tuple[_Side, int]:
    found = paths(mech, args, limit)
    groups: dict[Any, list[tuple[Path, list[Linear | float]]]] = {}
    for path in found:
        slots: list[Linear] = []
        key = tuple(shape(x, slots) for x in path.out)
        groups.setdefault(key, []).append((path, list(slots)))
    return _Side(groups, Integrator(COARSE)), len(found)


def _bound(p: Bracket, p_prime: Bracket) -> float:
    if p.lower <= 0.0:
        return -math.inf
    if p_prime.upper <= 0.0:
        return math.inf
    return math.log(p.lower / p_prime.upper)


def _thresholds(d: _Side, d2: _Side, key: Any, slot: int) -> np.ndarray:
    """Thresholds for a noisy value: its noise-free part on either input plus multiples of its spread."""
    centres, spreads = [], []
    for side in (d, d2):
        for path, slots in side.groups[key][:1]:
            v = slots[slot]
            if isinstance(v, Linear):
                centres.append(v.const)
                laws = side.integrator
                spreads.append(math.sqrt(sum((a * laws.law((k, path.draws[k])).law.std()) ** 2
                                             for k, a in v.terms.items())))
    if not spreads:
        return np.zeros(0)
    return np.unique([c + z * max(spreads) for c in centres for z in THRESHOLDS])


def _pair_findings(pair: Pair, d: _Side, d2: _Side, both_directions: bool) -> list[ExactFinding]:
    """Every shape of the pair's outputs with its brackets on D and D', both ways unless the neighbouring relation
    is one-sided (then the guarantee is for D before D' only); and the threshold events of the `FAMILIES` most
    likely shapes and the `FAMILIES` with the largest loss as shapes alone (a value whose threshold condition the
    integration cannot follow — a sum of three draws — gives none)."""
    found: list[ExactFinding] = []
    directions = [True, False] if both_directions else [True]

    def add(event: Event, p: Bracket, p2: Bracket) -> None:
        for forward in directions:
            a, b = (p, p2) if forward else (p2, p)
            bound = _bound(a, b)
            if bound > -math.inf:
                found.append(ExactFinding(pair, event, forward, a, b, bound))

    both: list[tuple[Any, Bracket, Bracket]] = []
    for key in dict.fromkeys(list(d.groups) + list(d2.groups)):
        p, p2 = d.probability(Event(key)), d2.probability(Event(key))
        add(Event(key), p, p2)
        if key in d.groups and key in d2.groups and d.groups[key][0][1]:
            both.append((key, p, p2))
    likely = sorted(both, key=lambda x: -max(x[1].upper, x[2].upper))[:FAMILIES]
    lossy = sorted(both, key=lambda x: -max(_estimate(x[1], x[2]), _estimate(x[2], x[1])))[:FAMILIES]
    for key in dict.fromkeys(k for k, _, _ in likely + lossy):
        for slot in range(len(d.groups[key][0][1])):
            ts = _thresholds(d, d2, key, slot)
            for at_most in (True, False):
                try:
                    p, p2 = d.family(key, slot, ts, at_most), d2.family(key, slot, ts, at_most)
                except Outside:  # a value on three draws or more: its thresholds are left to the sampling
                    continue
                for j, t in enumerate(ts):
                    add(Event(key, slot, float(t), at_most), p.at(j), p2.at(j))
    return found


class Computed:
    """`align test`'s computed stage: when the sampling's rounds find no violation, the same pairs are computed
    (at most `AFTER_SAMPLING_PATHS` paths per input) before the confirmation tests, which a computed violation
    makes unnecessary; at each longer length the search escalates to, the patterns of that length are computed
    first (`at`), and sampled only where the program is outside the class. `report` joins both into the
    command's TestReport."""

    def __init__(self, mech: ResolvedMechanism, public: Mapping[str, Any], length: int,
                 extra_pairs: Sequence[Pair], patterns: bool, enabled: bool = True):
        self.mech, self.public, self.length = mech, public, length
        self.extra_pairs, self.patterns, self.enabled = extra_pairs, patterns, enabled
        self.result: ExactResult | None = None
        """Every length computed, in one result."""
        self.outside: str | None = None
        """Why the first length was not computed (then no length is)."""
        self.verdicts: dict[int, bool | None] = {}
        self.progress: Callable[[str], None] | None = None

    def at(self, length: int) -> bool | None:
        """Compute at this length (once): True when a violation is computed, False when none is, None when the
        length is not computed (disabled; outside the class, here or at a shorter length, which the longer ones
        are then taken to be too; no pattern valid there; a claim that differs from the first length's). The
        first length computes the command's pairs (the user's, the checker's and the patterns), a longer one its
        patterns. Nothing is raised: why the first length was not computed is `outside`, why a longer one was not
        is `result.outside`."""
        if length not in self.verdicts:
            self.verdicts[length] = self._at(length)
        return self.verdicts[length]

    def _at(self, length: int) -> bool | None:
        first = length == self.length
        if not self.enabled or self.outside is not None or (self.result is not None and self.result.outside):
            return None
        if self.progress is not None:
            where = "" if first else f" at length {length}"
            self.progress(f"computing the events' probabilities from the program's paths{where}")
        try:
            computed = compute(self.mech, self.public, length, self.extra_pairs if first else (), self.patterns,
                               limit=AFTER_SAMPLING_PATHS)
        except SpecError as error:
            reason = error.diagnostics[0].message
            if first:
                self.outside = reason
            elif self.result is not None and error.diagnostics[0].code == "exact-outside":
                self.result.outside = f"at length {length}: {reason}"
            return None
        if self.result is None:
            self.result = computed
        elif computed.claimed_epsilon == self.result.claimed_epsilon:
            self.result.extend(computed)
        else:
            return None
        return computed.violation

    def report(self, path: str, sampled: Result, seconds: float) -> TestReport:
        """The sampling's result, with the computed one when the sampling found no violation (computed now if the
        search ended before asking)."""
        started = time.perf_counter()
        if not sampled.violation:
            self.at(self.length)
        seconds += time.perf_counter() - started
        lengths = tuple(self.result.lengths) if self.result is not None else ()
        if sampled.violation:
            return TestReport(path, self.mech, sampled, seconds, dict(self.public), computed_lengths=lengths)
        return TestReport(path, self.mech, sampled, seconds, dict(self.public), self.result, self.outside, lengths)


def compute_lengths(mech: ResolvedMechanism, public: Mapping[str, Any], lengths: Sequence[int],
                    extra_pairs: Sequence[Pair] = (), patterns: bool = True) -> ExactResult:
    """`align test --exact`: the computation at `lengths[0]` (a program outside the class raises SpecError,
    `exact-outside`), then at each longer length in turn, with its patterns, while none shows a violation and the
    program stays in the class (`ExactResult.outside` says where it left it)."""
    result = compute(mech, public, lengths[0], extra_pairs, patterns)
    stage = Computed(mech, public, lengths[0], extra_pairs, patterns)
    stage.result, stage.verdicts[lengths[0]] = result, result.violation
    for length in lengths[1:]:
        if result.violation or stage.at(length) is None:
            break
    return result


def compute(mech: ResolvedMechanism, public: Mapping[str, Any], length: int = 5,
            extra_pairs: Sequence[Pair] = (), patterns: bool = True, limit: int = PATH_LIMIT) -> ExactResult:
    """The exact search; raises SpecError (`exact-outside`) where the program is outside what it follows."""
    if claim_reads_output(mech):
        raise SpecError([diag("exact-outside", mech.node.name_span, mechanism=mech.name,
                              reason="the privacy claim reads the output")])
    if mech.release is not None:
        raise SpecError([diag("exact-outside", mech.node.name_span, mechanism=mech.name,
                              reason="it has a release block (the paths are followed to `out`, not further)")])
    public, pairs = search_pairs(mech, public, length, extra_pairs, patterns)
    eps = claimed_epsilon(mech, prepare_arguments(mech, {**public, **pairs[0].d}))
    with _without_cycle_collection():
        result = _compute(mech, public, pairs, eps, limit)
    if any(p.length is not None for p in pairs):  # a length the patterns generated (a list's)
        result.lengths.append(length)
    return result


@contextmanager
def _without_cycle_collection() -> Iterator[None]:
    """Python's cycle collector off while the paths are built: it traverses every live object at each full
    collection, and the paths hold hundreds of thousands of small acyclic ones (Chen's SVT at length 10: 40% of
    the time). Nothing here makes cycles that outlive a path (paths.py cuts the explorer's link)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _compute(mech: ResolvedMechanism, public: Mapping[str, Any], pairs: list[Pair], eps: float,
             limit: int) -> ExactResult:
    result = ExactResult(eps, pairs)
    sides: list[tuple[_Side, _Side]] = []
    known: dict[str, _Side] = {}  # an input in several pairs (StatDP's patterns share D) is explored once

    def side(private: Mapping[str, Any]) -> _Side:
        key = repr(sorted(private.items()))
        if key not in known:
            known[key], count = _side(mech, prepare_arguments(mech, {**public, **private}), limit)
            result.paths += count
        return known[key]

    computed: list[Pair] = []
    try:
        for pair in pairs:
            try:
                d, d2 = side(pair.d), side(pair.d_prime)
            except SpecError as error:  # the program stops on this pair (a division by zero on q = [])
                result.skipped.append(Skipped(pair, error.diagnostics[0]))
                continue
            computed.append(pair)
            sides.append((d, d2))
            result.findings.extend(_pair_findings(pair, d, d2, not mech.one_sided))
        if not computed:  # no pair runs: the program's own error
            raise SpecError([result.skipped[0].diagnostic])
        # The strongest events by their coarse point estimates, computed again on refined grids.
        chosen = sorted((f for f in result.findings if not math.isinf(f.epsilon)),
                        key=lambda f: -_estimate(f.p, f.p_prime))[:REFINE]
        for f in chosen:
            i = computed.index(f.pair)
            a, b = sides[i] if f.forward else sides[i][::-1]
            fine = Integrator(COARSE, FINE)
            p, p2 = a.probability(f.event, fine), b.probability(f.event, fine)
            result.findings.append(ExactFinding(f.pair, f.event, f.forward, p, p2, _bound(p, p2)))
    except Outside as error:
        raise SpecError([diag("exact-outside", error.span or mech.node.name_span, mechanism=mech.name,
                              reason=error.reason)]) from None
    return result


def _estimate(p: Bracket, p_prime: Bracket) -> float:
    """ln of the ratio of the brackets' middles: where the refinement is likely to end."""
    if p_prime.middle <= 0.0 or p.middle <= 0.0:
        return -math.inf
    return math.log(p.middle / p_prime.middle)
