"""Loops that only accumulate become folds: a deterministic loop nested in the main loop (or in the prefix),
which adds to running totals and does nothing else, is rewritten into `sum`/`count` comprehensions, which the
induction (`induction.py`) and the records' summaries (`records.py`) know how to prove for every length.

    c = 0                                                  c = 0
    for l in 0 .. len(q) {                          ⟶      c = c + count(l in 0 .. len(q): q[l] >= t[i])
      if q[l] >= t[i] { c = c + 1 }
    }

The rewritten program computes the same values as the written one, draws the same noise and outputs the same,
so a proof of either is a proof of both. Hypotheses, each checked here (the reason is reported otherwise, and
the loop stays as written):

1. The loop draws no noise, outputs nothing, does not `break` and holds no loop: it is a deterministic
   computation, and the only trace it leaves is the variables it assigns (its index is not visible after it).
2. Every assignment in it is an update `x = x + e` or `x = x - e` of a scalar variable x (an accumulator),
   possibly under `if` conditions; no list is written.
3. No condition, no added term and no bound reads a variable that the loop assigns, the accumulator itself
   included.
   Then iteration l adds to x exactly d_x(l) = Σ over its updates of (conditions ? ±e : 0), a function of l and
   of values that the loop does not change, so after the loop x = x + Σ_{l in lo .. hi} d_x(l): the sum the
   comprehension computes. The bounds are evaluated once, before the first iteration, in both programs; an
   empty range (hi ≤ lo) adds nothing in both. The conditional `c ? e : 0` evaluates e only where c holds, as
   the loop does, so the rewritten program fails (an index out of range, a division by zero) exactly where the
   written one does.

Without hypothesis 3, `specs/incorrect/fold_reads_its_accumulator.dp` (a loop whose term reads the running
total: x doubles on every record, so one record more changes the count released by up to 2^len(q)) would become
a sum of terms evaluated with the total before the loop: the sensitivity-1 count that the alignment pays for.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction

from .. import nodes as n
from ..resolve import ResolvedMechanism, free_names, walk_statements
from ..types import BOOL, INT, RANGE, REAL, Scalar, Type
from ..unparse import unparse
from .rewrites import NotRewritable, Rewritten


class NotFoldable(NotRewritable):
    """A nested loop that is not a fold (the message says which hypothesis fails)."""


Folded = Rewritten


@dataclass(frozen=True)
class _Update:
    guards: tuple[n.Expr, ...]
    term: n.Expr
    sign: int


def fold(mech: ResolvedMechanism) -> Folded | None:
    """The mechanism with every loop nested in another loop, and every loop of the prefix that writes no list,
    rewritten into folds; None when there is no such loop. Raises NotFoldable when a nested loop is not a fold."""
    rewritten: list[str] = []
    loops: dict[int, n.For] = {}  # id of a rebuilt outer loop -> the rebuilt loop

    def block(body: tuple[n.Stmt, ...], nested: bool) -> tuple[n.Stmt, ...]:
        out: list[n.Stmt] = []
        for st in body:
            if isinstance(st, n.For) and (nested or _candidate(st)):
                folds = _fold_loop(st)
                out += folds
                rewritten.append(f"line {st.span.line}: " + "; ".join(unparse_assign(a) for a in folds))
            elif isinstance(st, n.For):
                inner = block(st.body, True)
                if inner != st.body:
                    new = dataclasses.replace(st, body=inner)
                    loops[id(st)] = new
                    st = new
                out.append(st)
            elif isinstance(st, n.If):
                then, orelse = block(st.then, nested), block(st.orelse, nested)
                out.append(st if (then, orelse) == (st.then, st.orelse)
                           else dataclasses.replace(st, then=then, orelse=orelse))
            else:
                out.append(st)
        return tuple(out)

    body = block(mech.body, False)
    if not rewritten:
        return None
    noise = tuple(dataclasses.replace(site, loop=loops.get(id(site.loop), site.loop)) for site in mech.noise)
    folded = dataclasses.replace(mech, body=body, noise=noise)
    note = ("loops that only accumulate were rewritten into folds, which compute the same values ("
            + "; ".join(rewritten) + ")")
    return Folded(folded, note)


def unparse_assign(a: n.Assign) -> str:
    return f"{a.target} = {unparse(a.value)}"


def _candidate(loop: n.For) -> bool:
    """A loop of the prefix (not nested) is folded only when it looks like a fold: it draws nothing, outputs
    nothing and writes no list (a map loop or the main loop is not one, and keeps its own proof)."""
    for st in walk_statements(loop.body):
        if isinstance(st, (n.Sample, n.Output, n.Break, n.For, n.While)):
            return False
        if isinstance(st, n.Assign) and st.index is not None:
            return False
    return True


def _fold_loop(loop: n.For) -> list[n.Assign]:
    updates: dict[str, list[_Update]] = {}
    first: dict[str, n.Assign] = {}

    def visit(body: tuple[n.Stmt, ...], guards: tuple[n.Expr, ...]) -> None:
        for st in body:
            if isinstance(st, n.If):
                visit(st.then, (*guards, st.condition))
                visit(st.orelse, (*guards, n.Unary("not", st.condition, st.condition.span, type=BOOL)))
            elif isinstance(st, n.Assign):
                if st.index is not None:
                    raise NotFoldable(f"the loop at line {loop.span.line} writes the list `{st.target}`")
                term = _increment(st)
                if term is None:
                    raise NotFoldable(f"the loop at line {loop.span.line} assigns `{st.target}` other than by "
                                      f"`{st.target} = {st.target} + e` (line {st.span.line})")
                first.setdefault(st.target, st)
                updates.setdefault(st.target, []).append(_Update(guards, *term))
            else:
                what = {n.Sample: "draws noise", n.Output: "outputs", n.Break: "breaks", n.For: "holds a loop",
                        n.While: "holds a loop"}.get(type(st), "does more than accumulate")
                raise NotFoldable(f"the nested loop at line {loop.span.line} {what} (line {st.span.line})")

    visit(loop.body, ())
    _reads_nothing_written(loop, updates)
    return [_accumulate(loop, name, ups, first[name]) for name, ups in updates.items()]


def _reads_nothing_written(loop: n.For, updates: dict[str, list[_Update]]) -> None:
    """Hypothesis 3: no condition, no term and no bound reads a variable the loop assigns (the folds are
    assigned one after another, so a bound reading one accumulator would see another's new value)."""
    for e in (loop.lo, loop.hi, *(x for ups in updates.values() for up in ups for x in (*up.guards, up.term))):
        reads = free_names(e) & set(updates)
        if reads:
            raise NotFoldable(f"the loop at line {loop.span.line} reads `{sorted(reads)[0]}` while it "
                              "accumulates it: not a fold")


def _increment(st: n.Assign) -> tuple[n.Expr, int] | None:
    """(e, +1) for `x = x + e` (x any summand of a chain `a + b + ...`), (e, -1) for `x = x - e`; None
    otherwise."""
    v = st.value
    if not isinstance(v, n.Binary) or v.op not in ("+", "-"):
        return None
    if v.op == "-":
        return (v.right, -1) if _is_var(v.left, st.target) else None
    summands: list[n.Expr] = []

    def flatten(e: n.Expr) -> None:
        if isinstance(e, n.Binary) and e.op == "+":
            flatten(e.left)
            flatten(e.right)
        else:
            summands.append(e)

    flatten(v)
    at = next((k for k, x in enumerate(summands) if _is_var(x, st.target)), None)
    if at is None:
        return None
    rest = summands[:at] + summands[at + 1:]
    term = rest[0]
    for x in rest[1:]:
        term = n.Binary("+", term, x, x.span, type=_sum_type(term, x))
    return term, 1


def _type(e: n.Expr) -> Type:
    assert not isinstance(e, n.Name), "a resolved program has no Name"
    return e.type or REAL


def _sum_type(a: n.Expr, b: n.Expr) -> Scalar:
    return INT if _type(a) == INT and _type(b) == INT else REAL


def _is_var(e: n.Expr, name: str) -> bool:
    return isinstance(e, n.VarRef) and e.id == name and not e.primed


def _conjunction(guards: tuple[n.Expr, ...]) -> n.Expr:
    c = guards[0]
    for g in guards[1:]:
        c = n.BoolOp("and", c, g, g.span, type=BOOL)
    return c


def _accumulate(loop: n.For, name: str, updates: list[_Update], at: n.Assign) -> n.Assign:
    """`x = x + count(l in lo .. hi: c)` for one guarded `+ 1`, `x = x + sum(l in lo .. hi: d(l))` otherwise."""
    span = loop.span
    target_type = _type(at.value)
    domain = n.Range(loop.lo, loop.hi, span, type=RANGE)
    if len(updates) == 1 and updates[0].guards and updates[0].sign == 1 and _is_one(updates[0].term):
        body: n.Expr = _conjunction(updates[0].guards)
        comp = n.Comprehension("count", loop.var, loop.var_span, domain, None, None, body, span, span, type=INT)
    else:
        terms: list[n.Expr] = []
        for up in updates:
            term = up.term if up.sign == 1 else n.Unary("-", up.term, up.term.span, type=_type(up.term))
            if up.guards:
                zero = n.Number(Fraction(0), _type(term) == INT, span, type=_type(term))
                term = n.Conditional(_conjunction(up.guards), term, zero, span, type=_type(term))
            terms.append(term)
        body = terms[0]
        for t in terms[1:]:
            body = n.Binary("+", body, t, span, type=_sum_type(body, t))
        comp = n.Comprehension("sum", loop.var, loop.var_span, domain, None, None, body, span, span,
                               type=_type(body))
    value = n.Binary("+", n.VarRef(name, False, at.target_span, type=target_type), comp, span, type=target_type)
    return n.Assign(name, at.target_span, None, value, span)


def _is_one(e: n.Expr) -> bool:
    return isinstance(e, n.Number) and e.value == 1
