"""Checker (options and coverage): what one run of the checker is asked, and which inputs its bounded check covers.

`Options` are the command line's (`--max-length`, the solver's limits, ...); `coverage` says which input shapes the
bounded check enumerates: every length 0 .. max_length of each list, and every value of the integer parameters
that shape the unrolled program, within `requires`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import z3

from .. import nodes as n
from ..resolve import ResolvedMechanism, statement_exprs, walk, walk_statements
from ..smt import terms as zt
from ..smt.encode import (
    Encoding,
    EncodingError,
)
from ..smt.solver import Limits, Satisfiability, satisfiable
from ..types import ListType

DEFAULT_MAX_LENGTH = 3


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


def _structural_names(mech: ResolvedMechanism) -> list[str]:
    """Integer parameters that fix the shape of the unrolled program: loop bounds, k of top-k, ranges."""
    ints = {p.name for p in mech.params if str(p.type) == "int"}
    used: set[str] = set()
    exprs: list[n.Expr] = []
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
    """The values of the structural parameters (`cover.structural_choices()`) that `requires` allows at these
    lengths: `requires` with the parameters as symbols, each choice substituted and simplified (most choices are
    decided there, `M <= len(q)` false or true), the rest asked of z3 once per formula left; where `requires` needs
    concrete values to be encoded, an encoding per choice."""
    choices = cover.structural_choices()
    symbolic = Encoding(mech, lengths, {})
    try:
        required = symbolic.requires()
        symbols = [(name, symbolic.params[name]) for name in choices[0]] if choices else []
    except EncodingError:
        return _structural_values_one_by_one(mech, lengths, choices, limits)
    result = []
    answers: dict[str, bool] = {}
    for candidate in choices:
        left = z3.simplify(z3.substitute(required, *[(symbol, zt.IntVal(candidate[name])) for name, symbol in symbols]))
        if z3.is_false(left):
            continue
        key = left.sexpr()
        if key not in answers:
            answers[key] = z3.is_true(left) or satisfiable([left], limits).status != Satisfiability.UNSAT
        if answers[key]:
            result.append(candidate)
    return result


def _structural_values_one_by_one(mech: ResolvedMechanism, lengths: dict[str, int], choices: list[dict[str, int]],
                                  limits: Limits) -> list[dict[str, int]]:
    result = []
    for candidate in choices:
        enc = Encoding(mech, lengths, candidate)
        try:
            req = enc.requires()
        except EncodingError:
            continue
        if satisfiable([req], limits).status != Satisfiability.UNSAT:
            result.append(candidate)
    return result


# ---------------------------------------------------------------------------------------- one length
