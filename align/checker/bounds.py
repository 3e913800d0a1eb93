"""Loop bounds written through names: a bound that reads a name the parameters fix (a parameter-derived constant,
or a variable always assigned the same expression of parameters) is rewritten with that expression, so that the
proofs for every length see what the loop runs over.

    n = len(q)                                             n = len(q)
    for i in 0 .. n { ... }                         ⟶      for i in 0 .. len(q) { ... }

Such a name is one whose every assignment, wherever it stands, sets it to the same expression, which reads only
parameters (unprimed: the run's own) and other such names — a parameter-derived constant (docs/language.md,
section 10.3) is one — and one of those assignments comes before the loop, unconditionally, in the loop's block or
a block around it (a loop that may run 0 times, or a branch, may leave it unassigned: the interpreter stops there,
and the rewritten program would not). Wherever the loop starts, the name then holds that expression's value, in both
runs, so the rewritten bound has the value the written one has and the program computes, draws and outputs the same.
The variables stay assigned (other statements may read them); the alignment's reads of the constants are written out
too (the same values).
"""

from __future__ import annotations

import dataclasses

from .. import nodes as n
from ..resolve import ResolvedMechanism, free_names, walk, walk_statements
from ..unparse import unparse
from .exprs import map_expr
from .rewrites import Rewritten

NAME = "bounds"


def fixed_definitions(mech: ResolvedMechanism) -> dict[str, n.Expr]:
    """Each name whose value is fixed by the parameters wherever it is read, with the expression that gives it (the
    names it reads inlined): a parameter-derived constant, or a variable that every one of its assignments, wherever
    they stand (in a loop too: `n = len(q)` before a nested loop), sets to the same expression of parameters and
    such names. A read comes after an assignment (resolution rejects a read before one), and each gives the same
    value."""
    assigned: dict[str, list[n.Expr | None]] = {}
    for st in walk_statements(mech.body):
        if isinstance(st, n.Assign):
            assigned.setdefault(st.target, []).append(st.value if st.index is None else None)
    params = {p.name for p in mech.params}
    found: dict[str, n.Expr] = {}
    changed = True
    while changed:  # a definition may read names defined by others, in any order
        changed = False
        for name, values in assigned.items():
            exprs = [v for v in values if v is not None]
            if name in found or len(exprs) < len(values):
                continue
            texts = {unparse(v) for v in exprs}
            reads = set().union(*(free_names(v) for v in exprs))
            if len(texts) == 1 and reads <= params | set(found) and name not in reads and \
                    not any(isinstance(x, (n.NoiseRef, n.MemberRef, n.OutRef)) or
                            (isinstance(x, n.ParamRef) and x.primed) for v in exprs for x in walk(v)):
                found[name] = inline(exprs[0], found)
                changed = True
    return found


def inline(e: n.Expr, definitions: dict[str, n.Expr]) -> n.Expr:
    """`e` with every read of a name in `definitions` replaced by its definition."""
    return map_expr(e, lambda x: definitions[x.id] if isinstance(x, n.VarRef) and not x.primed and
                    x.id in definitions else None)


def _minmax(e: n.Expr) -> n.Expr:
    """`a <= b ? a : b` (`<` too) as `min(a, b)`, `a >= b ? a : b` (`>`) as `max(a, b)`, and the same with the
    branches the other way round: the same value (at a = b either branch is a)."""
    def step(x: n.Expr) -> n.Expr | None:
        if not (isinstance(x, n.Conditional) and isinstance(x.condition, n.Compare) and len(x.condition.ops) == 1
                and x.condition.ops[0] in ("<", "<=", ">", ">=")):
            return None
        a, b = x.condition.operands
        smaller = x.condition.ops[0] in ("<", "<=")
        same = unparse(x.then) == unparse(a) and unparse(x.orelse) == unparse(b)
        swapped = unparse(x.then) == unparse(b) and unparse(x.orelse) == unparse(a)
        if not (same or swapped):
            return None
        func = "min" if smaller == same else "max"
        return n.Call(func, (_minmax(a), _minmax(b)), x.span, x.span, type=x.type)

    return map_expr(e, step)


def inline_bounds(mech: ResolvedMechanism) -> Rewritten | None:
    """The mechanism with every loop's bounds read through names fixed by the parameters written out, and a
    conditional that picks the smaller or larger of two values as `min` or `max`; None when no bound changes."""
    definitions = fixed_definitions(mech)
    rewritten: list[str] = []
    loops: dict[int, n.For] = {}

    def block(statements: tuple[n.Stmt, ...], available: dict[str, n.Expr]) -> tuple[n.Stmt, ...]:
        available = dict(available)  # what this block assigns is available after the assignment, in it
        out: list[n.Stmt] = []
        for st in statements:
            if isinstance(st, n.Assign) and st.index is None and st.target in definitions:
                available[st.target] = definitions[st.target]
            elif isinstance(st, n.For):
                new = dataclasses.replace(st, body=block(st.body, available))
                lo, hi = _minmax(inline(st.lo, available)), _minmax(inline(st.hi, available))
                if unparse(lo) != unparse(st.lo) or unparse(hi) != unparse(st.hi):
                    new = dataclasses.replace(new, lo=lo, hi=hi)
                    rewritten.append(f"line {st.span.line}: `{unparse(st.lo)} .. {unparse(st.hi)}` is "
                                     f"`{unparse(new.lo)} .. {unparse(new.hi)}`")
                if new != st:
                    loops[id(st)] = new
                    st = new
            elif isinstance(st, n.If):
                then, orelse = block(st.then, available), block(st.orelse, available)
                if (then, orelse) != (st.then, st.orelse):
                    st = dataclasses.replace(st, then=then, orelse=orelse)
            out.append(st)
        return tuple(out)

    body = block(mech.body, {})
    if not rewritten:
        return None
    noise = tuple(dataclasses.replace(site, loop=loops.get(id(site.loop), site.loop)) for site in mech.noise)
    alignment = mech.alignment
    if alignment is not None:
        # the alignment reads the constants the same way (`out[n + j]` is `out[len(q) + j]`: the parts of a
        # sequential composition are recognised by their number of outputs, docs/checker.md)
        alignment = dataclasses.replace(
            alignment,
            lets=tuple(dataclasses.replace(let, value=inline(let.value, definitions)) for let in alignment.lets),
            shifts=tuple(dataclasses.replace(shift, shift=inline(shift.shift, definitions))
                         for shift in alignment.shifts))
    return Rewritten(dataclasses.replace(mech, body=tuple(body), noise=noise, alignment=alignment),
                     "loop bounds read through names the parameters fix were written out, a choice of the smaller or "
                     "larger of two values as `min` or `max` ("
                     + "; ".join(rewritten) + ")")


def length_at_least(mech: ResolvedMechanism, name: str, least: int) -> bool:
    """Whether a `requires` clause says len(name) >= least: `len(name) >= k` or `== k` with k >= least, or
    `len(name) > k` with k >= least - 1, either way round."""
    for clause in mech.requires:
        if not (isinstance(clause, n.Compare) and len(clause.ops) == 1):
            continue
        a, b = clause.operands
        op = clause.ops[0]
        if _is_len(b, name) and not _is_len(a, name):
            a, b, op = b, a, {"<=": ">=", "<": ">", ">=": "<=", ">": "<", "==": "=="}.get(op, op)
        if _is_len(a, name) and isinstance(b, n.Number) and \
                ((op in (">=", "==") and b.value >= least) or (op == ">" and b.value >= least - 1)):
            return True
    return False


def _is_len(e: n.Expr, name: str) -> bool:
    return isinstance(e, n.Call) and e.func == "len" and isinstance(e.args[0], n.ParamRef) and e.args[0].id == name
