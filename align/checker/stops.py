"""Runtime errors of the body that private data or noise may cause (docs/checker.md, "Runtime errors of the body").

The obligations are about the outputs of runs that end normally: the encodings do not model a run of the body that
stops with a runtime error. A stop is an observable outcome, and where private data decides it, a proof of the outputs
says nothing about it (`y = 1 / x` or `if x > 0 { z = 1 } y = z` with x private, before `output eta`: the run stops
on one neighbour and not on the other). Until the checker proves the body's partial operations defined, `hazards`
finds the ones whose failure is decided by a value that private data or noise flows into, and the verdict on C4a is
unknown there, with the places named.

What is found: a divisor of `/`, `//`, `%`; an operand of `^`; the argument of `sqrt`, `ln`; the bounds of `clamp`;
an operand of an integer `*` (the interpreter's integers stop beyond 64 bits); a read of a scalar variable that a
branch on such a value may have left without one. A value is tainted when a private parameter or noise flows into it,
by assignment or by a branch, loop bound or `break` that decides the assignment, to a fixpoint. A noise variable
itself, as an operand, is taken by its support: `ln(u)` with u ~ Uniform(0, 1) or `1 / g` with g ~ Gamma cannot fail
(a point of a density has probability 0).

What is not found yet (the rest of the gap, docs/checker.md): an operation that public values decide, run under a
branch that private data decides (`if q[0] > 0 { y = 1 / k }` with k = 0 allowed); list reads past the end, empty
reductions and top-k of too short a list; integer `+` and `-` beyond 64 bits.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .. import nodes as n
from ..distributions import Distribution
from ..resolve import ResolvedMechanism, children
from ..span import Span
from ..types import INT
from ..unparse import unparse


@dataclass(frozen=True)
class Hazard:
    span: Span
    text: str
    """What may stop the run: `` `1 / x` may divide by zero ``."""

    @property
    def note(self) -> str:
        return f"{self.text} (line {self.span.line})"


def hazards(mech: ResolvedMechanism) -> list[Hazard]:
    """The partial operations and reads of the body whose failure private data or noise may decide."""
    taint = {p.name for p in mech.params if not p.public} | {s.name for s in mech.noise}
    while True:  # to a fixpoint: a loop's later iterations read what its earlier ones assigned
        before = set(taint)
        _Walk(mech, taint, []).block(mech.body, False)
        if taint == before:
            break
    found: list[Hazard] = []
    _Walk(mech, taint, found).block(mech.body, False)
    unique = {(h.span.line, h.span.column, h.text): h for h in found}
    return [unique[k] for k in sorted(unique)]


class _Walk:
    def __init__(self, mech: ResolvedMechanism, taint: set[str], found: list[Hazard]):
        self.mech = mech
        self.taint = taint
        self.found = found
        self.assigned: dict[str, bool] = {}
        """The scalar variables with a value here: False where the paths to here all assign it, True where a branch
        that tainted values decide may have left it without one."""

    def block(self, body: tuple[n.Stmt, ...], hidden: bool) -> bool:
        """Walk statements run under a tainted condition when `hidden`; returns whether a `break` under a tainted
        condition may end the enclosing loop here."""
        broke = False
        for s in body:
            here = hidden or broke
            if isinstance(s, n.Assign):
                self.expr(s.value)
                if s.index is not None:
                    self.expr(s.index)
                if here or self.tainted(s.value) or (s.index is not None and self.tainted(s.index)):
                    self.taint.add(s.target)
                if s.index is None:
                    self.assigned[s.target] = False
            elif isinstance(s, n.Sample):
                # its parameters are C0's: they make a density for every value `requires` allows, in both runs
                self.assigned[s.var] = False
            elif isinstance(s, n.Output):
                self.expr(s.value)
            elif isinstance(s, n.Break):
                broke = broke or here
            elif isinstance(s, n.If):
                self.expr(s.condition)
                inner = here or self.tainted(s.condition)
                before = dict(self.assigned)
                broke_then = self.block(s.then, inner)
                after_then, self.assigned = self.assigned, dict(before)
                broke_else = self.block(s.orelse, inner)
                self.assigned = _join(after_then, self.assigned, inner)
                broke = broke or broke_then or broke_else
            elif isinstance(s, n.For):
                self.expr(s.lo)
                self.expr(s.hi)
                inner = here or self.tainted(s.lo) or self.tainted(s.hi)
                before = dict(self.assigned)
                if self.block(s.body, inner):  # a tainted break: later iterations may run on one side only
                    inner = True
                self.assigned = {**_join(before, self.assigned, inner), **self.assigned}  # the next iterations
                self.block(s.body, inner)
                self.assigned = _join(before, self.assigned, inner)  # no iteration, or some
            elif isinstance(s, n.While):
                raise AssertionError("`while` is rejected by resolution")
        return broke

    def tainted(self, e: n.Expr) -> bool:
        if isinstance(e, n.Call) and e.func == "len" and isinstance(e.args[0], n.ParamRef):
            param = self.mech.param(e.args[0].id)
            return param is not None and not param.length_public
        if isinstance(e, (n.ParamRef, n.VarRef, n.NoiseRef)) and e.id in self.taint:
            return True
        return isinstance(e, n.MemberRef) or any(self.tainted(c) for c in children(e))

    def expr(self, e: n.Expr) -> None:
        for c in children(e):
            self.expr(c)
        if isinstance(e, (n.VarRef, n.NoiseRef)) and self.assigned.get(e.id):
            self.found.append(Hazard(e.span, f"`{unparse(e)}` may have no value here, on one neighbour only (a "
                                             "branch that private data or noise decides may have skipped its "
                                             "assignment)"))
        if isinstance(e, n.Binary):
            if e.op in ("/", "//", "%"):
                self.operands(e, [e.right], "may divide by zero", nonzero=True)
            elif e.op == "^":
                self.operands(e, [e.left, e.right], "may be outside the domain of `^`")
            elif e.op == "*" and e.type == INT:
                self.operands(e, [e.left, e.right], "may leave the 64-bit range of integers", bounded=True)
        elif isinstance(e, n.Call):
            if e.func == "sqrt":
                self.operands(e, [e.args[0]], "may be outside the domain of `sqrt`", nonnegative=True)
            elif e.func == "ln":
                self.operands(e, [e.args[0]], "may be outside the domain of `ln`", positive=True)
            elif e.func == "clamp":
                self.operands(e, list(e.args[1:]), "may have lo > hi")

    def operands(self, e: n.Expr, decide: list[n.Expr], what: str, nonzero: bool = False, nonnegative: bool = False,
                 positive: bool = False, bounded: bool = False) -> None:
        for x in decide:
            if not self.tainted(x):
                continue
            site = self.mech.site(x.id) if isinstance(x, n.NoiseRef) else None
            if site is not None and _safe(site.distribution, nonzero, nonnegative, positive, bounded):
                continue
            self.found.append(Hazard(e.span, f"`{unparse(e)}` {what}, on one neighbour only: `{unparse(x)}` reads "
                                             "private data or noise"))
            return


def _safe(distribution: Distribution, nonzero: bool, nonnegative: bool, positive: bool, bounded: bool) -> bool:
    """Whether a noise variable of this distribution, as the operand, cannot make the operation fail (but on a set of
    probability 0: a point, for noise with a density)."""
    lo, hi = distribution.values.lower, distribution.values.upper
    lo = lo if isinstance(lo, Fraction) else None
    hi = hi if isinstance(hi, Fraction) else None
    if positive:
        return lo is not None and (lo > 0 or (lo == 0 and distribution.continuous))
    if nonnegative:
        return lo is not None and lo >= 0
    if nonzero:
        return distribution.continuous or (lo is not None and lo > 0)
    if bounded:
        return lo is not None and hi is not None
    return False


def _join(a: dict[str, bool], b: dict[str, bool], hidden: bool) -> dict[str, bool]:
    """The names with a value after two paths meet: those with one on both (tainted if either is), and those with one
    on one path only, tainted, if a tainted condition chose the path or they were tainted there."""
    joined: dict[str, bool] = {}
    for name in a.keys() | b.keys():
        if name in a and name in b:
            joined[name] = a[name] or b[name]
        elif hidden or a.get(name) or b.get(name):  # the path that has it may still lack it on one neighbour
            joined[name] = True
    return joined
