"""Checker stage (support): the one place solvers are made — fixed seed, a deterministic resource limit that
binds, and a wall-clock timeout far above it as a safety net only.

A verdict must not depend on the speed or the load of the machine. z3's `rlimit` counts internal steps, so the
same formula, seed and z3 version give the same answer everywhere; the wall clock does not. Every query is
therefore bounded by `Limits.rlimit`, chosen with headroom over the hardest query of the corpus (about 8.3
million steps; see docs/checker.md, "Limits"), and the timeout is set so far above what that many steps
take that it only stops a runaway query on a machine that is stalled, never decides a verdict. When it does
fire, the answer is `unknown` with the reason "wall-clock safety net", never a proof.

A verdict comes from `check_valid`: the negation of the claim is unsat (proved), sat (refuted, with a model)
or unknown (with z3's reason). z3 `unknown` is never turned into "proved". A proof whose assumptions are
themselves unsatisfiable proves nothing about any run (it is *vacuous*), so `check_valid` also asks whether
the assumptions have a model at all, and reports a vacuous proof as unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

import z3
from z3 import z3core

from . import terms as zt
from .terms import fresh_context

__all__ = ["SEED", "Answer", "Limits", "Satisfiability", "Solution", "Validity", "check_valid", "fresh_context",
           "make_solver", "satisfiable"]

SEED = 7
"""z3's random seed for every query, so that verdicts and models are the same on every run."""

VACUOUS = ("vacuous: the assumptions (requires, adjacency, support, path, side conditions) have no model, so the "
           "proof says nothing")


@dataclass(frozen=True)
class Limits:
    rlimit: int = 20_000_000
    """z3's deterministic resource limit per query: the limit that binds. The hardest query of the corpus
    takes about 8.3 million steps (Free Gap Algorithm 5 at length 3)."""
    timeout_ms: int = 300_000
    """Wall-clock safety net per query, far above what `rlimit` steps take (a few seconds on a slow machine):
    it never decides a verdict on a working machine."""
    nlsat: bool = True
    """Whether z3 may call nlsat, its complete procedure for nonlinear real arithmetic. It is the one part of
    z3 whose work is not all counted against `rlimit` (resultants, root isolation): a C4c query of a
    soundness-harness mutant (a Laplace scale 2/ε₁·(1 + |q[i]|)) ran 650 s counting fewer than 5 of 9 million
    steps, so there the wall-clock safety net decides (the answer is then unknown, never a proof). Without
    nlsat, z3 cannot find models of simple nonlinear assumptions (`0 < theta < 1` with θ·ε) and spends the
    whole rlimit on tangent lemmas: harness mutants refuted in 5 s became unknown after 200 s. So it stays on;
    no corpus query reaches nlsat's uncounted work (tests/test_determinism.py runs them with every core busy)."""
    flatten: bool = False
    """Preprocess the formula (simplify, propagate values, solve equations, lift if-then-else terms out of
    the arithmetic) before solving it with the default solver (the queries of align/stats/support.py)."""
    nlsat_tactic: bool = False
    """`check_valid` first gives a nonlinear query to z3's `qfnra-nlsat` tactic whole (`_unsat_by_nlsat`), with the
    same limits, and takes only its unsat; for the bounded check's first pass (its C4c: parameters times sums of
    shifts), which keeps only proofs."""
    by_cases: bool = False
    """`check_valid` first tries to prove a claim case by case, when the assumptions hold a disjunction of
    conjunctions of equalities (`_unsat_by_cases`); only a proof is taken from the cases, and z3's models depend
    on the queries a context has seen, so this is for the bounded check's first pass (checker/verify.py), which
    keeps only proofs and solves in contexts of its own."""


class Validity(str, Enum):
    """`check_valid`'s answer: the claim follows from the assumptions (and they have a model), a model of
    the assumptions breaks it, or neither is known."""

    PROVED = "proved"
    REFUTED = "refuted"
    UNKNOWN = "unknown"


class Satisfiability(str, Enum):
    """`satisfiable`'s answer: a model exists (it comes with the answer), none does, or z3 cannot tell."""

    SAT = "sat"
    UNSAT = "unsat"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Answer:
    """What `check_valid` says."""

    status: Validity
    model: z3.ModelRef | None = None
    """With REFUTED: a model of the assumptions in which the claim is false."""
    reason: str = ""
    """With UNKNOWN: why (z3's reason, the resource limit, vacuity)."""


@dataclass(frozen=True)
class Solution:
    """What `satisfiable` says."""

    status: Satisfiability
    model: z3.ModelRef | None = None
    """With SAT: the model."""
    reason: str = ""
    """With UNKNOWN: why."""


_PREPROCESS = ("simplify", "propagate-values", "solve-eqs", "elim-term-ite")


def make_solver(limits: Limits, ctx: z3.Context | None = None) -> z3.Solver:
    """z3's default solver in the current context, with the fixed seed and both limits.

    A tactic pipeline turned into a solver (`Then(..., "smt").solver()`) ran into the wall clock with the resource
    limit set (tried on z3 4.15 and 5.4), so `Limits.flatten` preprocesses the goal with tactics (`_preprocess`)
    and solves the result here. (`qfnra-nlsat` alone does stop at `rlimit`: `_unsat_by_nlsat`.)"""
    solver = z3.Solver(ctx=ctx or zt.current())
    solver.set("random_seed", SEED)
    solver.set("rlimit", limits.rlimit)
    solver.set("timeout", limits.timeout_ms)
    solver.set("smt.arith.nl.nra", limits.nlsat)
    return solver


def _preprocess(constraints: list[z3.BoolRef], ctx: z3.Context) -> tuple[list[z3.BoolRef], z3.Goal | None]:
    """The guarded updates of the encoding (encode.py) nest if-then-else terms deeply, and z3's default
    solver spends its time on them: simplifying first is 50x faster on the ground formulas of one concrete
    input (align/stats/support.py). Every step preserves satisfiability; the goal converts models back."""
    goal = z3.Goal(ctx=ctx)
    goal.add(*constraints)
    result = z3.Then(*_PREPROCESS, ctx=ctx)(goal)
    if len(result) != 1:
        return constraints, None
    subgoal = result[0]
    return [subgoal.as_expr()], subgoal


def _reason(solver: z3.Solver, limits: Limits) -> str:
    reason = solver.reason_unknown() or "unknown"
    if reason in ("canceled", "max. resource limit exceeded"):
        return f"resource limit reached (rlimit {limits.rlimit})"
    if reason == "timeout":
        return f"wall-clock safety net reached ({limits.timeout_ms / 1000:g} s)"
    return reason


def _solve(constraints: list[z3.BoolRef], limits: Limits) -> tuple[z3.CheckSatResult, z3.Solver, z3.Goal | None]:
    # Solved in a context of its own, into which the query is copied: the context the terms are built in has
    # a history (terms created and freed while encoding, in an order that depends on how the code is written),
    # and z3's choices, hence its models, depend on it. The solving context sees only the queries, in order,
    # so a model depends on the queries alone, not on incidental details of the code that built them.
    ctx = zt.solving()
    constraints = [c.translate(ctx) for c in constraints]
    goal = None
    if limits.flatten:
        constraints, goal = _preprocess(constraints, ctx)
    solver = make_solver(limits, ctx)
    solver.add(*constraints)
    return solver.check(), solver, goal


MAX_CASES = 17
"""The most disjuncts `_unsat_by_cases` splits a query into (an add/remove-one-record clause at length 16 has 17)."""

_CASE_TACTICS = ("simplify", "propagate-values", "solve-eqs", "simplify")


def _unsat_by_cases(constraints: list[z3.BoolRef], limits: Limits, renaming: bool) -> bool:
    """Whether `constraints` are unsat, shown case by case: when one of their conjuncts is a disjunction of
    conjunctions of equalities (`_equalities_by_case`; with `renaming`, only equalities between two symbols), each
    case is solved on its own after its equalities are substituted (`solve-eqs`, which keeps satisfiability); the
    constraints are unsat exactly when every case is. An add/remove-one-record clause says that q' is q with the
    record at position 0, or at 1, ... (adjacency.py): in each case the two lists' counts and sums cancel but for
    the record's share, and the C4c query of the record histogram with lists of 3 and 4 entries and B = 5 went from
    z3's resource limit (20 million steps, 4 s) to 20,000 steps. False when there is no such disjunction or some
    case is not unsat (each has the resource limit of a query)."""
    conjuncts: list[z3.BoolRef] = []
    for c in constraints:
        _flatten(c, conjuncts)
    split = next((k for k, c in enumerate(conjuncts) if _equalities_by_case(c, renaming)), None)
    if split is None:
        return False
    ctx = zt.solving()
    rest = [c.translate(ctx) for c in conjuncts[:split] + conjuncts[split + 1:]]
    for case in conjuncts[split].children():
        goal = z3.Goal(ctx=ctx)
        goal.add(*rest, case.translate(ctx))
        for subgoal in z3.Then(*_CASE_TACTICS, ctx=ctx)(goal):
            solver = make_solver(limits, ctx)
            solver.add(subgoal.as_expr())
            if solver.check() != z3.unsat:
                return False
    return True


def _unsat_by_nlsat(constraints: list[z3.BoolRef], limits: Limits) -> bool:
    """Whether nonlinear `constraints` are unsat by z3's `qfnra-nlsat` tactic on the whole formula, under `rlimit`
    (it counts its steps and stops there). The default solver gives the nonlinear part to nlsat one Boolean branch
    at a time, and there nlsat's work is not all counted: the first pass's C4c of Free Gap Algorithm 1 at length 4
    (θ and (1 − θ)/k times sums of shifts) ran 40 s on 6 million steps, which the tactic proves in 2.8 million
    (0.2 s). False for a linear query (nothing to gain) and for any answer but unsat."""
    if not _nonlinear(constraints):
        return False
    ctx = zt.solving()
    solver = z3.Tactic("qfnra-nlsat", ctx=ctx).solver()
    solver.set("seed", SEED)
    solver.set("rlimit", limits.rlimit)
    solver.set("timeout", limits.timeout_ms)
    solver.add(*(c.translate(ctx) for c in constraints))
    return solver.check() == z3.unsat


def _nonlinear(terms: list[z3.BoolRef]) -> bool:
    """Whether `terms` multiply or divide two terms that are not numbers. Walked through z3's C interface, each
    shared subterm once: the Python objects of a walk with `children()` cost more than the query's other
    preparation (Free Gap Algorithm 4's first pass at length 5: 0.5 s of its 8)."""
    if not terms:
        return False
    ctx = terms[0].ctx_ref()

    def app(a: Any) -> tuple[int, Any]:
        node = z3core.Z3_to_app(ctx, a)
        return z3core.Z3_get_decl_kind(ctx, z3core.Z3_get_app_decl(ctx, node)), node

    def numeral(a: Any) -> bool:
        while not (z3core.Z3_is_numeral_ast(ctx, a) or z3core.Z3_is_algebraic_number(ctx, a)):
            if z3core.Z3_get_ast_kind(ctx, a) != z3.Z3_APP_AST:
                return False
            kind, node = app(a)
            if kind not in (z3.Z3_OP_TO_REAL, z3.Z3_OP_TO_INT):
                return False
            a = z3core.Z3_get_app_arg(ctx, node, 0)
        return True

    seen: set[int] = set()
    todo = [t.as_ast() for t in terms]
    while todo:
        a = todo.pop()
        key = z3core.Z3_get_ast_id(ctx, a)
        if key in seen or z3core.Z3_get_ast_kind(ctx, a) != z3.Z3_APP_AST:
            continue
        seen.add(key)
        kind, node = app(a)
        args = [z3core.Z3_get_app_arg(ctx, node, k) for k in range(z3core.Z3_get_app_num_args(ctx, node))]
        if kind == z3.Z3_OP_MUL and sum(not numeral(x) for x in args) > 1:
            return True
        if kind in (z3.Z3_OP_DIV, z3.Z3_OP_IDIV) and not numeral(args[1]):
            return True
        todo.extend(args)
    return False


def _flatten(formula: z3.BoolRef, into: list[z3.BoolRef]) -> None:
    if z3.is_and(formula):
        for c in formula.children():
            _flatten(c, into)
    elif not z3.is_true(formula):
        into.append(formula)


def _equalities_by_case(formula: z3.BoolRef, renaming: bool) -> bool:
    """A disjunction of at most MAX_CASES conjunctions of equalities; with `renaming`, equalities between two
    symbols (q[j] = q'[j + 1]), where each case renames symbols and leaves a query over fewer."""
    if not z3.is_or(formula) or formula.num_args() > MAX_CASES:
        return False
    return all(all(z3.is_eq(e) and (not renaming or all(_is_symbol(x) for x in e.children()))
                   for e in (d.children() if z3.is_and(d) else [d])) for d in formula.children())


def _is_symbol(term: z3.ExprRef) -> bool:
    return z3.is_const(term) and term.decl().kind() == z3.Z3_OP_UNINTERPRETED


def _model(solver: z3.Solver, goal: z3.Goal | None) -> z3.ModelRef:
    model = solver.model()
    model = goal.convert_model(model) if goal is not None else model
    return model.translate(zt.current())


def check_valid(assumptions: list[z3.BoolRef], claim: z3.BoolRef, limits: Limits, vacuity: bool = True,
                satisfiable_if: list[z3.BoolRef] | None = None) -> Answer:
    """Is `claim` true whenever all `assumptions` hold — and do the assumptions hold anywhere at all?

    `vacuity=False` skips the second question, for queries whose "proved" is not a verdict but a step of a
    search whose final queries ask it (the Houdini rounds of induction.py). `satisfiable_if`: a part of the
    assumptions whose satisfiability implies that of all of them, by an argument the caller states (C2's
    "both runs have the same output" holds whenever the two runs draw the same noise); the second question
    is then asked of that part, which is smaller and shared between queries."""
    # With `by_cases`: a renaming split first (it is what makes those queries fast); any split of a disjunction of
    # equalities only when the query as it stands is unknown (the facts that define the relational encoding's
    # ranking, `encode._ranked_symbols`, are such disjunctions: split first, they made Free Gap Algorithm 4's queries
    # several times slower, but its C4a at length 6 is proved only split, on which entry is the largest).
    constraints = [*assumptions, z3.Not(claim)]
    if not ((limits.by_cases and _unsat_by_cases(constraints, limits, renaming=True))
            or (limits.nlsat_tactic and _unsat_by_nlsat(constraints, limits))):
        result, solver, goal = _solve(constraints, limits)
        if result == z3.sat:
            return Answer(Validity.REFUTED, _model(solver, goal))
        if result != z3.unsat and not (limits.by_cases and _unsat_by_cases(constraints, limits, renaming=False)):
            return Answer(Validity.UNKNOWN, reason=_reason(solver, limits))
    if not vacuity:
        return Answer(Validity.PROVED)
    exists = _assumptions_satisfiable(list(assumptions if satisfiable_if is None else satisfiable_if), limits)
    if exists.status == Satisfiability.UNSAT:
        return Answer(Validity.UNKNOWN, reason=VACUOUS)
    if exists.status == Satisfiability.UNKNOWN:
        return Answer(Validity.UNKNOWN, reason="the claim follows from the assumptions, but whether the "
                                               "assumptions have a model is unknown: " + exists.reason)
    return Answer(Validity.PROVED)


def _assumptions_satisfiable(assumptions: list[z3.BoolRef], limits: Limits) -> Solution:
    """`satisfiable(assumptions)`, remembered for the current context: the obligations of one length share
    their assumptions (requires, adjacency, support), so each set is solved once."""
    ctx = zt.current()
    cache: dict[tuple[frozenset[int], Limits], tuple[Solution, list]] = ctx.__dict__.setdefault("_align_sat", {})
    key = (frozenset(a.get_id() for a in assumptions), limits)
    if key not in cache:
        answer = satisfiable(assumptions, limits)
        # The terms are kept with the answer: z3 reuses the id of a deleted term, and a reused id would
        # make another set of assumptions hit this entry.
        cache[key] = (Solution(answer.status, None, answer.reason), list(assumptions))
    return cache[key][0]


def satisfiable(constraints: list[z3.BoolRef], limits: Limits) -> Solution:
    """Is there a model of all `constraints`? (SAT carries it.)"""
    result, solver, goal = _solve(list(constraints), limits)
    if result == z3.sat:
        return Solution(Satisfiability.SAT, _model(solver, goal))
    if result == z3.unsat:
        return Solution(Satisfiability.UNSAT)
    return Solution(Satisfiability.UNKNOWN, reason=_reason(solver, limits))
