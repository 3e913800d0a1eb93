"""Alignment synthesis (the learner): a template's unknown coefficients solved by z3 over examples.

CheckDP's counterexample-guided inductive synthesis (Wang et al., CCS 2020), with the parameters symbolic in
the proof. The template (`synthesis.SiteTemplate`) is written once with a *hole* for each coefficient: an
integer public parameter `_h0`, `_h1` ... of the mechanism, read only by the alignment. The checker's symbolic
execution (`encode.py`) at a few input shapes gives, for each shape, the formula F(parameters, D, D', H, holes)
of the obligations one run decides (C4a: the aligned run has the output of the first and the alignment is
defined on it, C2: it draws the same samples, C4c: the cost is within the claim, C4d: the aligned noise is in
its support). Then:

- **verify** a candidate (holes fixed to numbers): is there a (D, D', H) at one of the shapes (an input length
  and values of the public parameters), allowed by `requires`, the adjacency and the noise's supports, where F
  is false? Such a model is an *example*;
- **learn** from the examples: F with an example's values substituted for the parameters, inputs and noise
  is a formula over the holes alone (the comparisons of the unrolled program become linear constraints on the
  coefficients); the next candidate is a solution of all of them, of least weight (the weight of a
  coefficient c is 0 when c = 0, else 1 + |c|: fewest and smallest coefficients first), by z3 with a bound on
  the weight lowered until no solution is left.

When no assignment of the holes satisfies the examples, no instance of the template is an alignment: each
example is a real input pair and noise vector on which every instance breaks an obligation. The learner
only proposes; the caller (`synthesis.synthesise`) has every candidate that survives the examples proved by
the full checker, for every length.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import z3

from ..resolve import ResolvedMechanism
from ..smt import terms as zt
from ..smt.encode import Encoding, EncodingError, num, subterms
from ..smt.solver import Limits, Satisfiability, make_solver, satisfiable
from ..smt.supports import noise_support, support_conditions
from ..types import INT, REAL
from .checks import aligned_cost, aligned_runs, same_draw_conditions
from .options import coverage, structural_values

LIMITS = Limits(flatten=True)
"""A verification query on the shapes: the checker's deterministic resource limit, on a preprocessed goal. A
query that reaches it finds no example (the candidate then goes to the checker, or is ruled out by itself): it
decides how soon the search moves on, never a verdict."""


@dataclass(frozen=True)
class Hole:
    """One unknown coefficient: its parameter's name and the values it may take."""

    name: str
    values: tuple[int, ...]


@dataclass
class _Shape:
    """The obligations' formula at one input shape, and what a verification query assumes there."""

    assumptions: list[z3.BoolRef]
    obligations: z3.BoolRef
    side: list[z3.BoolRef]
    base: set[str]
    """The symbols an example fixes: parameters (other than the holes), inputs on D and D', noise."""
    exact: bool
    """The encoding has no uninterpreted functions."""


@dataclass
class Learner:
    mech: ResolvedMechanism
    """The mechanism with the holed template as its alignment (the holes among its public parameters)."""
    holes: Sequence[Hole]
    public: dict[str, Any] = field(default_factory=dict)
    """The spec's example values of public parameters: the examples are found with these values (as CheckDP fixes
    ε; the checker then proves the candidate for every value), which keeps the queries linear where the program
    multiplies parameters (θ·ε), and the integers among them choose the shapes (k of top-k, c of Sparse)."""
    shapes: list[_Shape] = field(default_factory=list)
    examples: int = 0
    proposals: int = 0
    blocked: int = 0
    """Candidates ruled out one by one (the checker did not prove them, and no example shows why)."""
    exact: bool = True
    """Every example is a real input and noise vector: none was found in an encoding with uninterpreted
    functions (exp, ln), whose models may give them values the real functions do not take."""
    exhausted: bool = False
    """The examples alone rule out every assignment of the holes: the template space holds no alignment."""
    least: int = 0
    """A lower bound of the weight of every assignment the examples and blocks leave (`propose`)."""

    def __post_init__(self) -> None:
        self.keys: set[tuple] = set()
        self.symbols = {h.name: zt.Int(h.name) for h in self.holes}
        self.solver = make_solver(Limits())
        for h in self.holes:
            x = self.symbols[h.name]
            self.solver.add(zt.Or([x == v for v in h.values]))
        self.weight = zt.Sum([z3.If(x == 0, 0, 1 + z3.If(x > 0, x, -x)) for x in self.symbols.values()]) \
            if self.holes else zt.IntVal(0)

    # ------------------------------------------------------------------------------------------- shapes

    def add_length(self, length: int, at: dict[str, Any] | None = None) -> bool:
        """Verify from now on at the shapes whose longest list has `length`, with the public values `at` (a
        refutation's) or else the spec's example values: those of the integers that shape the program where they
        fit, else the largest allowed (the most of the program unrolled). False: nothing new was added."""
        values = {**self.public, **(at or {})}
        prefer = {k: v for k, v in values.items() if isinstance(v, int) and not isinstance(v, bool)}
        pinned = tuple(sorted((k, str(v)) for k, v in values.items() if isinstance(v, (int, float, Fraction))))
        cover = coverage(self.mech, length)
        added = False
        for lengths, neighbour_lengths in cover.shapes():
            longest = max([*lengths.values(), *neighbour_lengths.values()], default=0)
            if longest != length and cover.max_length is not None:
                continue  # (without lists, `length` bounds only the integers that shape the program)
            choices = structural_values(self.mech, lengths, cover, LIMITS)
            preferred = [c for c in choices if all(c.get(k) == v for k, v in prefer.items() if k in c)]
            for structural in preferred[:1] or choices[-1:]:
                key = (tuple(sorted(lengths.items())), tuple(sorted(neighbour_lengths.items())),
                       tuple(sorted(structural.items())), pinned)
                if key in self.keys:
                    continue
                self.keys.add(key)
                try:
                    enc = Encoding(self.mech, lengths, structural, neighbour_lengths)
                    self.shapes.append(self._shape(enc, values))
                    added = True
                except EncodingError:
                    continue
        return added

    def _shape(self, enc: Encoding, values: dict[str, Any]) -> _Shape:
        run1, align, run2 = aligned_runs(enc)
        preserved = run1.output.equal(run2.output)
        cost, _ = aligned_cost(enc, run1, align)
        same_draws = zt.And([c for c, _ in same_draw_conditions(enc, run1, run2)])
        parts = [preserved, *(c for c, _ in align.defined()), cost <= align.claim(),
                 *(c for c, _ in support_conditions(run1, align)), z3.Implies(preserved, same_draws)]
        obligations = z3.simplify(zt.And(parts))
        pins = [enc.params[p.name] == num(Fraction(str(values[p.name])), p.type == INT)
                for p in self.mech.params if p.public and isinstance(values.get(p.name), (int, float, Fraction))
                and p.name not in self.symbols and p.name not in enc.structural and p.type in (INT, REAL)]
        assumptions = [enc.requires(), enc.adjacency(), *noise_support(enc, draws=run1.draws), *pins]
        base = {str(t) for v in [*enc.params.values(), *enc.neighbour.values(), *enc.noise.values()]
                for t in _leaves(v)} - set(self.symbols)
        return _Shape(assumptions, obligations, list(enc.side), base, not enc.uninterpreted)

    # ------------------------------------------------------------------------------------------- loop

    def propose(self) -> dict[str, int] | None:
        """The least-weight assignment of the holes that satisfies every example; None when there is none (or
        z3 cannot tell).

        Examples and blocks only ever add constraints, so the least weight never goes down: the last proposal's,
        once proved least, is a lower bound (`least`). The search asks for an assignment of weight at most the
        bound, then the bound + 1, + 2, + 4 ... until one exists, then halves the gap: a few queries where a descent
        from the first model, one or two units at a time, took 154 satisfiable queries for Free Gap Alg. 1
        (monotone), 21 of its 26 s."""
        answer = self.solver.check()
        if answer != z3.sat:
            self.exhausted = answer == z3.unsat and self.exact and not self.blocked
            return None
        best = self._values(self.solver.model())
        low, high = self.least, self._weight(best)  # low <= the least weight <= high, the weight of `best`
        step: int | None = 0
        while low < high:
            bound = min(low + step, high - 1) if step is not None else (low + high - 1) // 2
            self.solver.push()
            try:
                self.solver.add(self.weight <= bound)
                answer = self.solver.check()
                if answer == z3.sat:
                    best = self._values(self.solver.model())
                    high, step = self._weight(best), None
            finally:
                self.solver.pop()
            if answer == z3.unsat:
                low = bound + 1
                step = None if step is None else max(1, 2 * step)
            elif answer != z3.sat:
                break  # z3 cannot tell: `best` is the least found, and `least` stays a lower bound
        if low == high:
            self.least = high
        self.proposals += 1
        return best

    @staticmethod
    def _weight(values: dict[str, int]) -> int:
        """`weight` of an assignment of the holes."""
        return sum(0 if v == 0 else 1 + abs(v) for v in values.values())

    def refute(self, values: dict[str, int]) -> bool:
        """Look for an example on which the candidate breaks an obligation, at each shape in turn; found: it
        joins the examples (True)."""
        fix = [self.symbols[k] == v for k, v in values.items()]
        for shape in self.shapes:
            answer = satisfiable([*shape.assumptions, *fix, z3.Not(shape.obligations)], LIMITS)
            if answer.status == Satisfiability.SAT:
                assert answer.model is not None
                self._learn(shape, answer.model)
                return True
        return False

    def block(self, values: dict[str, int]) -> None:
        """Rule one candidate out (the checker did not prove it, and no example shows why)."""
        self.blocked += 1
        self.solver.add(zt.Or([self.symbols[k] != v for k, v in values.items()]))

    def _learn(self, shape: _Shape, model: z3.ModelRef) -> None:
        """F with the example's parameters, inputs and noise (and the model's values of exp, ln ... at them)
        substituted: a constraint on the holes, with a copy per example of the encoding's auxiliary symbols."""
        self.examples += 1
        self.exact = self.exact and shape.exact
        formula = zt.And([shape.obligations, *shape.side])
        pairs = []
        holes = []
        for t in _constants(formula):
            name = str(t)
            if name in self.symbols:  # kept apart from the model, which gives them the candidate's values
                holes.append((t, z3.Const(f"{name}#hole", t.sort())))
            elif name in shape.base:
                pairs.append((t, model.eval(t, model_completion=True)))
            else:  # an auxiliary symbol of the encoding (the aligned run's order, a root): a copy per example
                pairs.append((t, z3.Const(f"{name}#{self.examples}", t.sort())))
        ground = model.eval(z3.substitute(formula, *pairs, *holes), model_completion=False)
        self.solver.add(z3.simplify(z3.substitute(ground, *((c, h) for h, c in holes))))

    def _values(self, model: z3.ModelRef) -> dict[str, int]:
        return {k: model.eval(x, model_completion=True).as_long() for k, x in self.symbols.items()}


def _leaves(value: object) -> Iterable[z3.ExprRef]:
    """The z3 constants of a parameter's, input's or noise's value (a list's items, a number)."""
    if isinstance(value, z3.ExprRef):
        yield from (t for t in subterms(value) if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED)
        return
    for item in getattr(value, "items", ()):
        yield from _leaves(item)


def _constants(term: z3.ExprRef) -> list[z3.ExprRef]:
    return sorted((t for t in subterms(term) if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED),
                  key=str)
