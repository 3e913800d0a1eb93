"""Checker stage (support): loop invariants found by z3's Spacer engine over constrained Horn clauses.

A proof for every length (checker/induction.py) is an inductive invariant of the product program — both runs, the
aligned cost and the ghosts, one abstract loop iteration from a symbolic head state. `find_invariant` states the
search for one as three kinds of Horn clauses over an unknown predicate Inv(head, fixed):

    entry:     init(fixed, x)                           -> Inv(entry(x), fixed)
    iteration: Inv(head, fixed) ∧ step(head, fixed, x)  -> Inv(after(head, x), fixed)
    goal:      Inv(head, fixed) ∧ bad_k(head, fixed, x) -> false       (one clause per bad_k)

every clause universally closed over its symbols. `fixed` are the symbols that keep one value for the whole
execution (parameters, lengths, the noise drawn before the loop, a prophesied output); every other symbol of a
clause (this iteration's noise, q[i]) is quantified per clause, so per iteration: a symbol wrongly taken as
per-iteration only weakens the clauses (never unsound), and the caller keeps this iteration's symbols out of
`fixed` (`find_invariant` refuses an overlap).

Spacer is a search, never the proof: the invariant it returns is a formula over the head state and `fixed`, and
the caller checks it like any other candidate (`solver.check_valid`: it holds at entry, an iteration preserves it,
it implies the obligations), with its own assumptions and limits. The search is deterministic (fixed seed, the
resource limit of `Limits`); an answer other than "an invariant exists" is None.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import z3
from z3 import z3core

from . import terms as zt
from .solver import SEED, Limits

__all__ = ["cast_like", "constants_of", "find_invariant"]


def constants_of(terms: Iterable[z3.ExprRef]) -> list[z3.ExprRef]:
    """The uninterpreted constants of `terms`, each once, sorted by name and sort. Walked through z3's C interface,
    each shared subterm once: the Python objects of a walk with `children()` were a quarter of the proof for every
    length of CheckDP's broken adaptive SVT (0.9 s of 3.7)."""
    terms = [t for t in terms if z3.is_expr(t)]
    if not terms:
        return []
    context = terms[0].ctx
    ref = context.ref()
    found: dict[tuple[str, str], z3.ExprRef] = {}
    seen: set[int] = set()
    todo = [t.as_ast() for t in terms]
    while todo:
        a = todo.pop()
        key = z3core.Z3_get_ast_id(ref, a)
        if key in seen or z3core.Z3_get_ast_kind(ref, a) != z3.Z3_APP_AST:
            continue
        seen.add(key)
        app = z3core.Z3_to_app(ref, a)
        count = z3core.Z3_get_app_num_args(ref, app)
        if count == 0:
            decl = z3core.Z3_get_app_decl(ref, app)
            if z3core.Z3_get_decl_kind(ref, decl) == z3.Z3_OP_UNINTERPRETED:
                t = z3.z3._to_expr_ref(a, context)
                found.setdefault((t.decl().name(), t.sort().name()), t)
            continue
        todo.extend(z3core.Z3_get_app_arg(ref, app, k) for k in range(count))
    return [found[k] for k in sorted(found)]


def cast_like(head: Sequence[z3.ExprRef], values: Sequence[object]) -> list[z3.ExprRef] | None:
    """`values` in the sorts of `head` (an int where a real is: as a real); None when one does not fit."""
    cast: list[z3.ExprRef] = []
    for h, v in zip(head, values):
        if not isinstance(v, z3.ExprRef):
            return None
        if h.sort() == v.sort():
            cast.append(v)
        elif z3.is_real(h) and z3.is_int(v):
            cast.append(z3.ToReal(v))
        else:
            return None
    return cast


def find_invariant(head: Sequence[z3.ExprRef], fixed: Sequence[z3.ExprRef], init: Sequence[z3.BoolRef],
                   entry: Sequence[z3.ExprRef], step: Sequence[z3.BoolRef], after: Sequence[z3.ExprRef],
                   bad: Sequence[Sequence[z3.BoolRef]], limits: Limits) -> z3.BoolRef | None:
    """An inductive invariant over `head` and `fixed` that rules out every `bad` (each a list of conditions on the
    head state and one iteration), as Spacer finds it; None when Spacer finds none within the limits (or reports
    that a bad state is reachable, which the caller's own checks then show as they do).

    head: the state's symbols at a loop head; entry/after: their values at entry and after one iteration (same
    order); init: what holds at entry; step: what an iteration that goes on assumes (including the head's bounds).
    """
    assert len(head) == len(entry) == len(after), "one value per state symbol"
    head_names = {(h.decl().name(), h.sort().name()) for h in head}
    fixed = [f for f in fixed if (f.decl().name(), f.sort().name()) not in head_names]
    ctx = zt.current()
    args = [*head, *fixed]
    inv = z3.Function("Inv%", *(a.sort() for a in args), z3.BoolSort(ctx))

    def closed(premises: Sequence[z3.BoolRef], conclusion: z3.BoolRef) -> z3.BoolRef:
        body = z3.Implies(zt.And(*premises), conclusion)
        symbols = constants_of([body])
        return z3.ForAll(symbols, body) if symbols else body

    entry_values, after_values = cast_like(head, entry), cast_like(head, after)
    if entry_values is None or after_values is None:
        return None
    solver = z3.SolverFor("HORN", ctx=ctx)
    solver.set("rlimit", limits.rlimit)
    solver.set("timeout", limits.timeout_ms)
    solver.set("fp.spacer.random_seed", SEED)
    false = z3.BoolVal(False, ctx)
    solver.add(closed(list(init), inv(*entry_values, *fixed)))
    solver.add(closed([inv(*head, *fixed), *step], inv(*after_values, *fixed)))
    for conditions in bad:
        solver.add(closed([inv(*head, *fixed), *conditions], false))
    try:
        if solver.check() != z3.sat:
            return None
        model = solver.model()
        interpretation = next((model[d] for d in model.decls() if d.name() == inv.name()), None)
    except z3.Z3Exception:  # a theory Spacer does not take (arrays of reals with quantifiers, exp)
        return None
    if interpretation is None or not isinstance(interpretation, z3.FuncInterp) or interpretation.num_entries():
        return None
    # the body reads the k-th argument as Var(k)
    found = z3.substitute_vars(interpretation.else_value(), *args) if args else \
        interpretation.else_value()
    return found if z3.is_bool(found) and not _quantified(found) else None


def _quantified(term: z3.ExprRef) -> bool:
    """Whether a quantifier occurs in term (Spacer may describe a set of states with one: not an invariant the
    checks take in their fragment)."""
    seen: set[int] = set()
    todo = [term]
    while todo:
        t = todo.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_quantifier(t):
            return True
        if z3.is_app(t):
            todo.extend(t.children())
    return False
