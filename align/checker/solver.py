"""The one place solvers are made: fixed seed, deterministic resource limit, wall-clock timeout.

A verdict comes from `check_valid`: the negation is unsat (proved), sat (refuted, with a model) or unknown
(with z3's reason). z3 `unknown` is never turned into "proved".
"""

from __future__ import annotations

from dataclasses import dataclass

import z3

SEED = 7
"""z3's random seed for every query, so that verdicts and models are the same on every run."""


@dataclass(frozen=True)
class Limits:
    timeout_ms: int = 10_000
    """Wall-clock limit per query."""
    rlimit: int = 20_000_000
    """z3's deterministic resource limit per query: the same formula gives the same answer on any machine."""
    flatten: bool = False
    """Solve through the tactic pipeline of `make_solver` instead of z3's default solver (the queries of
    align/stats/support.py use it)."""


@dataclass(frozen=True)
class Answer:
    status: str
    """"proved", "refuted" or "unknown"."""
    model: z3.ModelRef | None = None
    reason: str = ""


def fresh_context() -> None:
    """Start a new z3 main context. z3's answers depend on the history of the context (terms created
    earlier change internal ids and hence the search order), so a second verification in one process could
    return another model, hence another counterexample. Each entry point (checker.verify.verify_mechanism,
    stats.support.check_event) calls this first: the same spec gives the same verdicts and counterexamples
    in every process and on every call. z3 objects of an earlier call must not be mixed with later ones
    (none are kept: verdicts hold Python values)."""
    z3.z3._main_ctx = z3.Context()


def make_solver(limits: Limits) -> z3.Solver:
    """A solver with the fixed seed and both limits. With `limits.flatten`: first simplify, propagate values,
    solve equations and lift the if-then-else terms out of the arithmetic, then SMT. The guarded updates of
    the encoding (encode.py) nest if-then-else terms deeply, and z3's default solver spends its time on them:
    the pipeline is 50x faster on the ground formulas of one concrete input (align/stats/support.py). Every
    step preserves satisfiability. The checker keeps the default solver: with the pipeline the corpus
    verified 1.5x faster (warm median 0.16 s against 0.24 s, same verdicts), but one query of
    dworkroth/numeric_sparse.dp ran into the 10 s timeout in one run of two (unknown instead of proved)."""
    if limits.flatten:
        solver = z3.Then("simplify", "propagate-values", "solve-eqs", "elim-term-ite", "smt").solver()
    else:
        solver = z3.Solver()
    solver.set("random_seed", SEED)
    solver.set("rlimit", limits.rlimit)
    solver.set("timeout", limits.timeout_ms)
    return solver


def check_valid(assumptions: list[z3.BoolRef], claim: z3.BoolRef, limits: Limits) -> Answer:
    """Is `claim` true whenever all `assumptions` hold?"""
    solver = make_solver(limits)
    solver.add(*assumptions)
    solver.add(z3.Not(claim))
    result = solver.check()
    if result == z3.unsat:
        return Answer("proved")
    if result == z3.sat:
        return Answer("refuted", solver.model())
    return Answer("unknown", reason=solver.reason_unknown() or "unknown")


def satisfiable(constraints: list[z3.BoolRef], limits: Limits) -> Answer:
    """Is there a model of all `constraints`? ("refuted" carries it; "proved" means none exists.)"""
    solver = make_solver(limits)
    solver.add(*constraints)
    result = solver.check()
    if result == z3.sat:
        return Answer("refuted", solver.model())
    if result == z3.unsat:
        return Answer("proved")
    return Answer("unknown", reason=solver.reason_unknown() or "unknown")
