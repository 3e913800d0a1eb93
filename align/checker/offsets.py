"""Loops counted from a number other than 0 are counted from 0: `for i in a .. b` becomes `for i in 0 .. b - a` with
every read of i in its body written `i + a`, so that the proofs for every length see a loop over the list.

    for i in 1 .. len(q) + 1 {                              for i in 0 .. len(q) {
      eta ~ Lap(1 / eps)                            ⟶        eta ~ Lap(1 / eps)
      output q[i - 1] + eta                                   output q[i] + eta
    }                                                       }
    eta[i]' = eta[i] + q[i - 1] - q'[i - 1]                 eta[i]' = eta[i] + q[i] - q'[i]

Hypotheses, each checked here (the loop stays as written otherwise):

1. `a` reads only numbers, public scalar parameters and the lengths of lists with a public length: the same value
   in both runs and wherever it is read, so iteration j of the new loop is iteration j + a of the old one, in both
   runs, and the body computes, draws and outputs the same.
2. The members of a family drawn in the loop are numbered by the loop's index, so member j + a of the old program is
   member j of the new one: the alignment says the same of them when its shift of member k is the old shift of
   member k + a, and every read `x[e]` of such a family (in a shift, a let or an invariant) reads member e - a.
   Renaming the coordinates of the noise vector changes none of Lemma 1's conditions.

Counted from 0, `i - 1` reads `i` (and `eta[l + 1]` reads `eta[l]`); other index terms are compared after z3's
simplification.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

from .. import nodes as n
from ..resolve import ResolvedMechanism
from ..types import INT, ListType
from ..unparse import unparse
from .exprs import map_expr, map_statement
from .rewrites import Rewritten

NAME = "offsets"


def _fixed(mech: ResolvedMechanism, e: n.Expr) -> bool:
    """Hypothesis 1: numbers, public scalar parameters, lengths of lists with a public length, arithmetic."""
    if isinstance(e, n.Number):
        return True
    if isinstance(e, n.ParamRef):
        p = mech.param(e.id)
        return not e.primed and p is not None and p.public and not isinstance(p.type, ListType)
    if isinstance(e, n.Call) and e.func == "len" and len(e.args) == 1 and isinstance(e.args[0], n.ParamRef):
        p = mech.param(e.args[0].id)
        return p is not None and p.length_public
    if isinstance(e, n.Binary):
        return e.op in ("+", "-", "*") and _fixed(mech, e.left) and _fixed(mech, e.right)
    if isinstance(e, n.Unary):
        return e.op == "-" and _fixed(mech, e.operand)
    return False


def _zero(e: n.Expr) -> bool:
    return isinstance(e, n.Number) and e.value == 0


def _same(a: n.Expr, b: n.Expr) -> bool:
    return unparse(a) == unparse(b)


def _plus(e: n.Expr, a: n.Expr) -> n.Expr:
    """e + a, written x when e is x - a."""
    if isinstance(e, n.Binary) and e.op == "-" and _same(e.right, a):
        return e.left
    return n.Binary("+", e, a, e.span, INT)


def _minus(e: n.Expr, a: n.Expr) -> n.Expr:
    """e - a, written x when e is x + a."""
    if isinstance(e, n.Binary) and e.op == "+" and _same(e.right, a):
        return e.left
    return n.Binary("-", e, a, e.span, INT)


def _index_plus(x: n.Expr, var: str, lo: n.Expr) -> n.Expr | None:
    """x with the index `var` read as `var + lo`: `var - lo` is `var`; None where x is neither (look inside)."""
    if isinstance(x, n.LocalRef) and x.id == var:
        return _plus(x, lo)
    if isinstance(x, n.Binary) and x.op == "-" and isinstance(x.left, n.LocalRef) and x.left.id == var and \
            _same(x.right, lo):
        return x.left
    return None


def from_zero(mech: ResolvedMechanism) -> Rewritten | None:
    """The mechanism with every loop counted from a fixed number other than 0 counted from 0 (hypotheses above);
    None when there is none."""
    starts: dict[str, n.Expr] = {}  # family -> the start of its loop
    rewritten: list[str] = []
    loops: dict[int, n.For] = {}

    def block(statements: tuple[n.Stmt, ...]) -> tuple[n.Stmt, ...]:
        out: list[n.Stmt] = []
        for st in statements:
            if isinstance(st, n.For):
                body = block(st.body)
                new = st if body == st.body else dataclasses.replace(st, body=body)
                if not _zero(st.lo) and _fixed(mech, st.lo):
                    lo = st.lo

                    def shifted(x: n.Expr, var: str = st.var, lo: n.Expr = lo) -> n.Expr | None:
                        return _index_plus(x, var, lo)

                    new = dataclasses.replace(new, lo=_zero_like(st.lo), hi=_less(st.hi, lo),
                                              body=tuple(map_statement(s, shifted) for s in new.body))
                    for site in mech.noise:
                        if site.loop is st:
                            starts[site.name] = lo
                    rewritten.append(f"line {st.span.line}: `for {st.var} in {unparse(st.lo)} .. {unparse(st.hi)}` "
                                     f"counted from 0")
                if new is not st:
                    loops[id(st)] = new
                    st = new
            elif isinstance(st, n.If):
                then, orelse = block(st.then), block(st.orelse)
                if (then, orelse) != (st.then, st.orelse):
                    st = dataclasses.replace(st, then=then, orelse=orelse)
            out.append(st)
        return tuple(out)

    body = block(mech.body)
    if not rewritten:
        return None

    def member_down(x: n.Expr) -> n.Expr | None:
        if isinstance(x, n.MemberRef) and x.id in starts:
            return dataclasses.replace(x, index=_minus(map_expr(x.index, member_down), starts[x.id]))
        return None

    alignment = mech.alignment
    if alignment is not None:
        shifts = []
        for shift in alignment.shifts:
            psi = map_expr(shift.shift, member_down)
            if shift.var in starts and shift.index_var is not None:
                def up(x: n.Expr, k: str = shift.index_var, lo: n.Expr = starts[shift.var]) -> n.Expr | None:
                    return _index_plus(x, k, lo)
                psi = map_expr(psi, up)
            shifts.append(dataclasses.replace(shift, shift=psi))
        alignment = dataclasses.replace(
            alignment, shifts=tuple(shifts),
            lets=tuple(dataclasses.replace(let, value=map_expr(let.value, member_down)) for let in alignment.lets),
            invariants=tuple(dataclasses.replace(inv, condition=map_expr(inv.condition, member_down))
                             for inv in alignment.invariants))
    noise = tuple(dataclasses.replace(site, loop=loops.get(id(site.loop), site.loop)) for site in mech.noise)
    return Rewritten(dataclasses.replace(mech, body=body, noise=noise, alignment=alignment),
                     "loops counted from a fixed number were counted from 0 (" + "; ".join(rewritten) + ")")


def _less(hi: n.Expr, lo: n.Expr) -> n.Expr:
    """hi - lo, written `x` when hi is `x + lo` (`len(q) + 1` counted from 1 runs `len(q)` times)."""
    if isinstance(hi, n.Binary) and hi.op == "+" and unparse(hi.right) == unparse(lo):
        return hi.left
    return _minus(hi, lo)


def _zero_like(e: n.Expr) -> n.Expr:
    return n.Number(Fraction(0), True, e.span, INT)
