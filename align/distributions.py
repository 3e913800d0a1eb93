"""Noise distributions: their parameters, supports, and Lemma 1's cost coefficients (design.md §1).

A distribution f has cost coefficient c when ln f(x)/f(y) <= c·|x - y| for all x, y in its support
(Free Gap, Definition 7). Where no such c exists the distribution is "not Lipschitz", and Lemma 1 allows
it only where its alignment shift is provably 0 (obligation C3).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import sympy

CostRule = Callable[[tuple[sympy.Expr, ...]], sympy.Expr]


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
                     source="Free Gap Table 1"),
        Distribution("Exp", ("b",), 1, False, "[0, ∞)", True, "exp(-x/b) / b (mean b)", lambda a: 1 / a[0],
                     source="Free Gap Table 1"),
        Distribution("Geo", ("p",), 1, True, "{0, 1, 2, ...}", True, "p (1-p)^n", lambda a: -sympy.log(1 - a[0]),
                     cost_note="mean (1-p)/p on n >= 0", source="Free Gap Table 1"),
        Distribution("DLap", ("a",), 1, True, "ℤ", False, "tanh(a/2) exp(-a|n|)", lambda a: a[0],
                     source="two-sided geometric (Ghosh et al.), Free Gap Section 3.1"),
        Distribution("Staircase", ("eps", "gamma"), 2, False, "ℝ", False, "staircase density, sensitivity 1",
                     lambda a: a[0], cost_note="bound holds for shifts that are whole multiples of the sensitivity",
                     source="Geng & Viswanath, cited in Free Gap Section 3.1", whole_shifts=True),
        Distribution("Logistic", ("loc", "scale"), 1, False, "ℝ", False, "logistic(loc, scale)",
                     lambda a: 1 / _default(a, 1, 1),
                     cost_note="|d/dx ln f| = |tanh((x-loc)/(2 scale))| / scale <= 1/scale",
                     source="Free Gap Theorem 8.3"),
        Distribution("Gumbel", ("loc", "scale"), 1, False, "ℝ", False,
                     "exp(-(x-loc)/s - exp(-(x-loc)/s)) / s", None,
                     cost_note="ln f(x)/f(y) = (y-x)/s + e^{-(y-loc)/s} - e^{-(x-loc)/s} is unbounded",
                     source="Free Gap Section 8.1"),
        Distribution("Uniform", ("a", "b"), 2, False, "[a, b]", False, "1/(b-a)", None,
                     cost_note="the density ratio is infinite across the boundary of the support"),
        Distribution("Gamma", ("k", "theta"), 2, False, "(0, ∞)", True, "x^(k-1) exp(-x/theta) / (Γ(k) theta^k)",
                     None, cost_note="d/dx ln f = (k-1)/x - 1/theta is unbounded near 0 (k != 1)",
                     source="R²DP Appendix B (shape k, scale theta)"),
        Distribution("Bernoulli", ("p",), 1, True, "{0, 1}", True, "P[1] = p", None,
                     cost_note="a shift leaves the support {0, 1}"),
        Distribution("Point", ("v",), 1, False, "{v}", False, "P[v] = 1", None,
                     cost_note="any nonzero shift leaves the support {v}",
                     source="R²DP Appendix B.0.1 (1), the degenerate distribution"),
        Distribution("Normal", ("mu", "sigma"), 2, False, "ℝ", False, "Gaussian", None,
                     cost_note="ln f(x)/f(y) grows quadratically"),
        Distribution("TruncNormal", ("mu", "sigma", "a", "b"), 4, False, "[a, b]", False,
                     "Gaussian(mu, sigma) conditioned on [a, b]", None,
                     cost_note="bounded support and quadratic log-density",
                     source="R²DP Appendix B"),
    )
}
