"""Noise distributions: their parameters, supports, and Lemma 1's cost coefficients (design.md §1).

A distribution f has cost coefficient c when ln f(x)/f(y) <= c·|x - y| for all x, y in its support
(Free Gap, Definition 7). Where no such c exists the distribution is "not Lipschitz", and Lemma 1 allows
it only where its alignment shift is provably 0 (obligation C3).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Sequence

import sympy

CostRule = Callable[[tuple[sympy.Expr, ...]], sympy.Expr]



@dataclass(frozen=True)
class Param:
    """In a requirement or a support bound: the value of the parameter at this position."""

    index: int


Operand = Param | Fraction
"""A parameter of the distribution or a constant."""

_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def _operand(x: Operand, params: Sequence[Any], constant: Callable[[Fraction], Any] = float) -> Any:
    return params[x.index] if isinstance(x, Param) else constant(x)


@dataclass(frozen=True)
class Requirement:
    """One condition that makes the parameters well formed (a proper density, Lemma 1's f_i; obligation C0).

    Written as comparisons between parameters and constants so that every back end evaluates the same
    condition: `holds` takes the parameter values (floats, numpy arrays or z3 terms) and a conjunction for
    that back end (`np.logical_and`, `z3.And`)."""

    param: int
    """The parameter the message is about (its position)."""
    text: str
    """What it must be, in words: `positive`, `in (0, 1)`, `greater than a`."""
    comparisons: tuple[tuple[Operand, str, Operand], ...]

    def holds(self, params: Sequence[Any], conjunction: Callable[[Any, Any], Any],
              constant: Callable[[Fraction], Any] = float) -> Any:
        """`constant` turns the Fraction constants into the back end's numbers (float; z3's RealVal)."""
        result = None
        for left, op, right in self.comparisons:
            part = _COMPARE[op](_operand(left, params, constant), _operand(right, params, constant))
            result = part if result is None else conjunction(result, part)
        return result


ZERO, ONE = Fraction(0), Fraction(1)


def _positive(i: int) -> Requirement:
    return Requirement(i, "positive", ((Param(i), ">", ZERO),))


def _open_unit(i: int) -> Requirement:
    return Requirement(i, "in (0, 1)", ((Param(i), ">", ZERO), (Param(i), "<", ONE)))


def _closed_unit(i: int) -> Requirement:
    return Requirement(i, "in [0, 1]", ((Param(i), ">=", ZERO), (Param(i), "<=", ONE)))


def _ordered(lo: int, hi: int, name: str) -> Requirement:
    return Requirement(hi, f"greater than {name}", ((Param(hi), ">", Param(lo)),))


@dataclass(frozen=True)
class Support:
    """The set a distribution's values lie in: [lower, upper] (a bound None is infinite), integers or reals.
    One declaration for the sampler's checks (numpy) and for the checker's assumptions (z3)."""

    lower: Operand | None = None
    upper: Operand | None = None
    lower_open: bool = False
    """(lower, ...: Gamma lives on (0, ∞)."""
    integer: bool = False

    def bounds(self, params: Sequence[Any], constant: Callable[[Fraction], Any] = float) -> list[tuple[Any, str]]:
        """The comparisons a value must satisfy, as (bound value, operator for `value OP bound`)."""
        result = []
        if self.lower is not None:
            result.append((_operand(self.lower, params, constant), ">" if self.lower_open else ">="))
        if self.upper is not None:
            result.append((_operand(self.upper, params, constant), "<="))
        return result

    def contains(self, x: Any, params: Sequence[Any], conjunction: Callable[[Any, Any], Any],
                 truth: Any = True, constant: Callable[[Fraction], Any] = float) -> Any:
        """Whether x (a float, an array or a z3 term) lies within the bounds; integrality is the caller's
        (z3 encodes it in the symbol's sort, numpy checks it with `floor`)."""
        result = truth
        for bound, op in self.bounds(params, constant):
            result = conjunction(result, _COMPARE[op](x, bound))
        return result

    @property
    def degenerate(self) -> bool:
        """A single point (Point): no density, so ties between such values have probability 1."""
        return self.lower is not None and self.lower == self.upper


@dataclass(frozen=True)
class Distribution:
    name: str
    params: tuple[str, ...]
    """Parameter names, in the order they are written."""
    min_params: int
    """Trailing parameters beyond this count are optional (Gumbel and Logistic have a default scale of 1)."""
    integer: bool
    """Integer-valued: its aligned shifts must be integers (obligation C4d)."""
    support: str
    """The support, as the docs print it."""
    nonnegative: bool
    """Support within [0, ∞): aligned values must stay >= 0 (obligation C4d)."""
    density: str
    """Density or mass function, as the docs print it."""
    cost: CostRule | None
    """The cost coefficient as a function of the (sympy) parameters; None: not Lipschitz."""
    cost_note: str = ""
    source: str = ""
    """Where the parameterisation comes from."""
    whole_shifts: bool = False
    """The cost bound holds only for shifts that are whole numbers (besides integer-valued noise)."""
    requirements: tuple[Requirement, ...] = ()
    """What makes the parameters well formed (checked by the interpreter at run time and by C0)."""
    values: Support = Support()
    """Where the values lie (the interpreter's support checks and the checker's noise assumptions)."""

    @property
    def continuous(self) -> bool:
        """Has a density on the reals: ties between values that carry such noise have probability 0."""
        return not self.integer and not self.values.degenerate

    @property
    def lipschitz(self) -> bool:
        return self.cost is not None

    @property
    def integer_shifts(self) -> bool:
        """Aligned shifts must be integers: integer-valued noise, or a cost bound that needs whole shifts."""
        return self.integer or self.whole_shifts

    def arity_text(self) -> str:
        count = len(self.params)
        if self.min_params == count:
            return f"{count} parameter{'s' if count != 1 else ''} ({', '.join(self.params)})"
        return f"{self.min_params} or {count} parameters ({', '.join(self.params)})"


def _default(args: tuple[sympy.Expr, ...], index: int, value: int) -> sympy.Expr:
    return args[index] if len(args) > index else sympy.Integer(value)


DISTRIBUTIONS: dict[str, Distribution] = {
    d.name: d
    for d in (
        Distribution("Lap", ("b",), 1, False, "ℝ", False, "exp(-|x|/b) / (2b)", lambda a: 1 / a[0],
                     source="Free Gap Table 1", requirements=(_positive(0),)),
        Distribution("Exp", ("b",), 1, False, "[0, ∞)", True, "exp(-x/b) / b (mean b)", lambda a: 1 / a[0],
                     source="Free Gap Table 1", requirements=(_positive(0),), values=Support(lower=ZERO)),
        Distribution("Geo", ("p",), 1, True, "{0, 1, 2, ...}", True, "p (1-p)^n", lambda a: -sympy.log(1 - a[0]),
                     cost_note="mean (1-p)/p on n >= 0", source="Free Gap Table 1", requirements=(_open_unit(0),),
                     values=Support(lower=ZERO, integer=True)),
        Distribution("DLap", ("a",), 1, True, "ℤ", False, "tanh(a/2) exp(-a|n|)", lambda a: a[0],
                     source="two-sided geometric (Ghosh et al.), Free Gap Section 3.1", requirements=(_positive(0),),
                     values=Support(integer=True)),
        Distribution("Staircase", ("eps", "gamma"), 2, False, "ℝ", False, "staircase density, sensitivity 1",
                     lambda a: a[0], cost_note="bound holds for shifts that are whole multiples of the sensitivity",
                     source="Geng & Viswanath, cited in Free Gap Section 3.1", whole_shifts=True,
                     requirements=(_positive(0), _closed_unit(1))),
        Distribution("Logistic", ("loc", "scale"), 1, False, "ℝ", False, "logistic(loc, scale)",
                     lambda a: 1 / _default(a, 1, 1),
                     cost_note="|d/dx ln f| = |tanh((x-loc)/(2 scale))| / scale <= 1/scale",
                     source="Free Gap Theorem 8.3", requirements=(_positive(1),)),
        Distribution("Gumbel", ("loc", "scale"), 1, False, "ℝ", False,
                     "exp(-(x-loc)/s - exp(-(x-loc)/s)) / s", None,
                     cost_note="ln f(x)/f(y) = (y-x)/s + e^{-(y-loc)/s} - e^{-(x-loc)/s} is unbounded",
                     source="Free Gap Section 8.1", requirements=(_positive(1),)),
        Distribution("Uniform", ("a", "b"), 2, False, "[a, b]", False, "1/(b-a)", None,
                     cost_note="the density ratio is infinite across the boundary of the support",
                     requirements=(_ordered(0, 1, "a"),), values=Support(lower=Param(0), upper=Param(1))),
        Distribution("Gamma", ("k", "theta"), 2, False, "(0, ∞)", True, "x^(k-1) exp(-x/theta) / (Γ(k) theta^k)",
                     None, cost_note="d/dx ln f = (k-1)/x - 1/theta is unbounded near 0 (k != 1)",
                     source="R²DP Appendix B (shape k, scale theta)", requirements=(_positive(0), _positive(1)),
                     values=Support(lower=ZERO, lower_open=True)),
        Distribution("Bernoulli", ("p",), 1, True, "{0, 1}", True, "P[1] = p", None,
                     cost_note="a shift leaves the support {0, 1}", requirements=(_closed_unit(0),),
                     values=Support(lower=ZERO, upper=ONE, integer=True)),
        Distribution("Point", ("v",), 1, False, "{v}", False, "P[v] = 1", None,
                     cost_note="any nonzero shift leaves the support {v}",
                     source="R²DP Appendix B.0.1 (1), the degenerate distribution", values=Support(lower=Param(0), upper=Param(0))),
        Distribution("Normal", ("mu", "sigma"), 2, False, "ℝ", False, "Gaussian", None,
                     cost_note="ln f(x)/f(y) grows quadratically", requirements=(_positive(1),)),
        Distribution("TruncNormal", ("mu", "sigma", "a", "b"), 4, False, "[a, b]", False,
                     "Gaussian(mu, sigma) conditioned on [a, b]", None,
                     cost_note="bounded support and quadratic log-density",
                     source="R²DP Appendix B", requirements=(_positive(1), _ordered(2, 3, "a")),
                     values=Support(lower=Param(2), upper=Param(3))),
    )
}
