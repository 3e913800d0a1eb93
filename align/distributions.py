"""Noise distributions (a registry every stage iterates over): one `Distribution` record per distribution.

A record holds everything any stage knows about its distribution, so that adding one is adding a record
here (or calling `register` from anywhere, as tests/test_registry.py does with a toy distribution) and
nothing else: the resolver's names and arity checks, the checker's support assumptions, well-formedness (C0)
and cost coefficient (C3), the interpreter's sampler and run-time checks, the statistics' log-density, the
R²DP rule's moment generating function, the lexer's word list and the diagnostics' explanations all read it.

A distribution f has cost coefficient c when ln f(x)/f(y) <= c·|x - y| for all x, y in its support
(Free Gap, Definition 7). Where no such c exists the distribution is "not Lipschitz", and Lemma 1 allows
it only where its alignment shift is provably 0 (obligation C3).

Importing this module loads numpy but not sympy (the lexer and `align explain` read it): the symbolic
rules import sympy when they are called.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NamedTuple

from .operators import ORDERS

if TYPE_CHECKING:
    import numpy as np
    import sympy
else:
    class _Numpy:
        """numpy, imported when a sampler or a density first runs: `align check` and the checker never do, and
        importing numpy is a third of `align check`'s time on one spec."""

        def __getattr__(self, name: str) -> Any:
            # lazy: loads numpy only when this runs (start-up; tests/test_layers.py)
            import numpy

            return getattr(numpy, name)

    np = _Numpy()


class Field(NamedTuple):
    """A number domain a cost rule computes in: the rule applies `+ - * /` to its arguments and uses these for the
    rest. Three domains evaluate the rules: sympy (`symbolic.FIELD`, the checker's C3), exact products of powers
    (`monomials.FIELD`, the text of `align check` without importing sympy) and numpy (`interp.noise`, the run-time
    cost of a draw)."""

    one: Any
    """The domain's 1."""
    ln: Callable[[Any], Any]
    """The natural logarithm; a domain without one raises its own 'not in this domain' error."""


CostRule = Callable[[tuple[Any, ...], Field], Any]
"""The cost coefficient c as a function of the parameters, as written (omitted ones are absent), in a `Field`."""
Draw = Callable[["np.random.Generator", tuple[Any, ...], int], "np.ndarray"]
"""draw(generator, parameters (floats, or arrays of length size), size) -> `size` values."""
LogDensity = Callable[["np.ndarray", tuple[float, ...]], "np.ndarray"]
"""log f(z; parameters) elementwise, -inf off the support."""
Masses = Callable[[tuple[Any, ...]], tuple[tuple[Any, Any], ...]]
"""masses(parameters) -> ((value, probability), ...) over the whole support, in any domain with `1 - x` (sympy
expressions, z3 terms, numpy arrays): the values and probabilities as formulas of the parameters."""



@dataclass(frozen=True)
class Param:
    """In a requirement or a support bound: the value of the parameter at this position."""

    index: int


Operand = Param | Fraction
"""A parameter of the distribution or a constant."""


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
            part = ORDERS[op](_operand(left, params, constant), _operand(right, params, constant))
            result = part if result is None else conjunction(result, part)
        return result


ZERO, ONE = Fraction(0), Fraction(1)


def _positive(i: int) -> Requirement:
    return Requirement(i, "positive", ((Param(i), ">", ZERO),))


def _nonnegative(i: int) -> Requirement:
    return Requirement(i, "nonnegative", ((Param(i), ">=", ZERO),))


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
            result = conjunction(result, ORDERS[op](x, bound))
        return result

    @property
    def degenerate(self) -> bool:
        """A single point (Point): no density, so ties between such values have probability 1."""
        return self.lower is not None and self.lower == self.upper


@dataclass(frozen=True)
class Mixing:
    """What the R²DP rule needs of a mixing variable X (seed 002, Theorem 4.1 and Corollary 4.2).

    The closed forms are sympy expressions of the parameters; the numeric reference (`atoms` for a discrete
    X, the distribution's `law` for one with a density) is independent of them, for the rule's quadrature
    cross-check."""

    mgf: Callable[[tuple[Any, ...], Any], Any]
    """M_X(t) = E[e^{tX}] in closed form: mgf(parameters, t)."""
    mean: Callable[[tuple[Any, ...]], Any] | None = None
    """E[X] where M_X'(0) is not a substitution (Uniform's M is 0/0 at t = 0); None: M_X'(0)."""
    atoms: Callable[[tuple[float, ...]], tuple[tuple[float, float], ...]] | None = None
    """A discrete X: its (value, probability) pairs at numeric parameters."""


@dataclass(frozen=True)
class Distribution:
    """One noise distribution: what the language calls it, what its parameters must be, where its values lie,
    how to draw it, its density, and what each proof rule needs of it."""

    name: str
    params: tuple[str, ...]
    """Parameter names, in the order they are written."""
    support: str
    """The support, as the docs print it."""
    density: str
    """Density or mass function, as the docs print it."""
    defaults: tuple[float, ...]
    """Valid parameter values, one per parameter: stand-ins on lanes that do not draw, and the value of an
    omitted optional parameter."""
    draw: Draw
    """The sampler (numpy), in exactly the parameterisation of `density`."""
    cost: CostRule | None
    """Lemma 1's cost coefficient as a function of the parameters, in any `Field`; None: not Lipschitz."""
    min_params: int | None = None
    """Trailing parameters beyond this count are optional (Gumbel and Logistic have a default scale of 1);
    None: every parameter is required."""
    cost_note: str = ""
    """Why the coefficient is what it is, or why there is none."""
    source: str = ""
    """Where the parameterisation comes from."""
    whole_shifts: bool = False
    """The cost bound holds only for shifts that are whole numbers (besides integer-valued noise)."""
    requirements: tuple[Requirement, ...] = ()
    """What makes the parameters well formed (checked by the interpreter at run time and by C0)."""
    values: Support = Support()
    """Where the values lie (the interpreter's support checks and the checker's noise assumptions), and
    whether they are integers."""
    log_density: LogDensity | None = None
    """ln f at numeric parameters, -inf off the support, exact up to a constant that depends on the parameters
    only (what `align test`'s privacy-loss events need); None: `align test` uses its other events."""
    mixing: Mixing | None = None
    """Closed forms for the R²DP rule; None: cannot be a mixing variable."""
    law: Callable[[tuple[float, ...]], Any] | None = None
    """A distribution with a density: the scipy.stats frozen distribution at numeric parameters (its cdf, sf,
    ppf and isf), for the computed event probabilities of `align test --exact` and the R²DP rule's quadrature
    cross-check; None: not available (integer-valued, or no scipy counterpart)."""
    masses: Masses | None = None
    """Finitely many values: each value with its probability, as formulas of the parameters (`Masses`). An
    alignment may then map the values to values (`b' = 1 - b`), at the exact cost ln P[g⁻¹(g(b))] − ln P[g(b)]
    (the rule `ValueMaps`, rules.py); None: an alignment can only shift it, at a Lipschitz cost (C3)."""

    def __post_init__(self) -> None:
        if len(self.defaults) != len(self.params):
            raise ValueError(f"{self.name}: one default per parameter")

    @property
    def required(self) -> int:
        """How many parameters must be written."""
        return len(self.params) if self.min_params is None else self.min_params

    @property
    def integer(self) -> bool:
        """Integer-valued: its aligned shifts must be integers (obligation C4d)."""
        return self.values.integer

    @property
    def nonnegative(self) -> bool:
        """Support within [0, ∞): aligned values must stay >= 0 (obligation C4d)."""
        lower = self.values.lower
        return isinstance(lower, Fraction) and lower >= 0

    @property
    def continuous(self) -> bool:
        """Has a density on the reals: ties between values that carry such noise have probability 0."""
        return not self.integer and not self.values.degenerate

    @property
    def lipschitz(self) -> bool:
        return self.cost is not None

    @property
    def finite(self) -> bool:
        """Finitely many values with known probabilities: aligned by value maps at their exact cost."""
        return self.masses is not None

    @property
    def alignable(self) -> bool:
        """An alignment may move its values (C3 holds by construction): a Lipschitz cost, or exact masses."""
        return self.lipschitz or self.finite

    @property
    def integer_shifts(self) -> bool:
        """Aligned shifts must be integers: integer-valued noise, or a cost bound that needs whole shifts."""
        return self.integer or self.whole_shifts

    def full_params(self, params: Sequence[Any]) -> tuple[Any, ...]:
        """The parameters with omitted optional ones filled in from `defaults` (Logistic and Gumbel: scale 1)."""
        return tuple(params) + tuple(self.defaults[len(params):])

    def arity_text(self) -> str:
        count = len(self.params)
        if self.required == count:
            return f"{count} parameter{'s' if count != 1 else ''} ({', '.join(self.params)})"
        return f"{self.required} or {count} parameters ({', '.join(self.params)})"


# ------------------------------------------------------------------------------------------------ samplers


def _geo(gen: np.random.Generator, p: Any, size: int) -> np.ndarray:
    # numpy's geometric counts trials up to the first success (n >= 1); ours counts failures (n >= 0).
    return gen.geometric(p, size) - 1


def _draw_lap(gen: np.random.Generator, p: tuple[Any, ...], size: int) -> np.ndarray:
    return gen.laplace(0.0, p[0], size)


def _draw_exp(gen: np.random.Generator, p: tuple[Any, ...], size: int) -> np.ndarray:
    return gen.exponential(p[0], size)


def _draw_geo(gen: np.random.Generator, p: tuple[Any, ...], size: int) -> np.ndarray:
    return _geo(gen, p[0], size)


def _draw_dlap(gen: np.random.Generator, params: tuple[Any, ...], size: int) -> np.ndarray:
    # X - Y for X, Y ~ Geo(1 - e^-a) on n >= 0 has mass proportional to e^(-a|n|).
    p = -np.expm1(-np.asarray(params[0], dtype=float))
    return _geo(gen, p, size) - _geo(gen, p, size)


def _draw_staircase(gen: np.random.Generator, params: tuple[Any, ...], size: int) -> np.ndarray:
    """Geng & Viswanath, "The optimal noise-adding mechanism in differential privacy" (sensitivity Δ = 1).

    S = ±1 with probability 1/2; G ~ Geo(1 - b) on n >= 0 with b = e^-eps; U ~ Uniform[0, 1];
    B = 1 with probability (1-γ)b / (γ + (1-γ)b); X = S((1-B)(G + γU) + B(G + γ + (1-γ)U)).
    The density is a(γ) on [0, γ), a(γ)e^-eps on [γ, 1), repeated with factor e^-eps per unit and mirrored,
    where a(γ) = (1 - b) / (2(γ + (1-γ)b)).
    """
    eps, gamma = (np.asarray(x, dtype=float) for x in params)
    b = np.exp(-eps)
    sign = np.where(gen.random(size) < 0.5, -1.0, 1.0)
    g = _geo(gen, -np.expm1(-eps), size).astype(float)
    u = gen.random(size)
    upper = gen.random(size) < (1 - gamma) * b / (gamma + (1 - gamma) * b)
    return sign * np.where(upper, g + gamma + (1 - gamma) * u, g + gamma * u)


def _draw_logistic(gen: np.random.Generator, p: tuple[Any, ...], size: int) -> np.ndarray:
    return gen.logistic(p[0], p[1], size)


def _draw_gumbel(gen: np.random.Generator, p: tuple[Any, ...], size: int) -> np.ndarray:
    return gen.gumbel(p[0], p[1], size)


def _draw_uniform(gen: np.random.Generator, p: tuple[Any, ...], size: int) -> np.ndarray:
    return gen.uniform(p[0], p[1], size)


def _draw_gamma(gen: np.random.Generator, p: tuple[Any, ...], size: int) -> np.ndarray:
    return gen.gamma(p[0], p[1], size)


def _draw_bernoulli(gen: np.random.Generator, p: tuple[Any, ...], size: int) -> np.ndarray:
    return (gen.random(size) < p[0]).astype(np.int64)


def _draw_categorical(gen: np.random.Generator, p: tuple[Any, ...], size: int) -> np.ndarray:
    # numpy's choice(k, p = w / sum(w)) by its inverse cdf, with weights per lane: the value is how many of the
    # cumulative weights w0, w0 + w1, ... (all but the total) a uniform draw on [0, total) reaches; a weight 0 is
    # never drawn
    cumulative = np.cumsum(np.stack([np.broadcast_to(np.asarray(w, dtype=float), (size,)) for w in p]), axis=0)
    u = gen.random(size) * cumulative[-1]
    return np.sum(u >= cumulative[:-1], axis=0).astype(np.int64)


def _draw_point(gen: np.random.Generator, p: tuple[Any, ...], size: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(p[0], dtype=float), (size,)).copy()


def _draw_normal(gen: np.random.Generator, p: tuple[Any, ...], size: int) -> np.ndarray:
    return gen.normal(p[0], p[1], size)


def _draw_truncnormal(gen: np.random.Generator, params: tuple[Any, ...], size: int) -> np.ndarray:
    """`scipy.stats.truncnorm` (standardised ends) with the generator as random_state."""
    # lazy: loads scipy only when this runs (start-up; tests/test_layers.py)
    from scipy.stats import truncnorm

    mu, sigma, a, b = (np.asarray(x, dtype=float) for x in params)
    lo, hi = (a - mu) / sigma, (b - mu) / sigma
    degenerate = ~(lo < hi)
    if not degenerate.any():
        return np.asarray(truncnorm.rvs(lo, hi, loc=mu, scale=sigma, size=size, random_state=gen), dtype=float)
    # mu so far from [a, b] (|mu| near 2^63, say) that both ends standardise to one double: scipy refuses the
    # empty interval, but all the mass lies within rounding of the end nearest mu, which is then the sample.
    near = np.broadcast_to(np.where(mu < a, a, b), (size,))
    safe = np.asarray(truncnorm.rvs(np.where(degenerate, 0.0, lo), np.where(degenerate, 1.0, hi), loc=mu,
                                    scale=sigma, size=size, random_state=gen), dtype=float)
    return np.where(np.broadcast_to(degenerate, (size,)), near, safe)


# ------------------------------------------------------------------------------------------- log densities
# Lap, Normal, Logistic and Gumbel up to constants shared by D and D'; Staircase, Exp, Geo, DLap and Uniform
# exactly (normalised: tests/test_loss_events.py compares them with scipy.stats and the samplers).


def _log_lap(z: np.ndarray, p: tuple[float, ...]) -> np.ndarray:
    return -np.abs(z) / p[0] - np.log(2 * p[0])


def _log_normal(z: np.ndarray, p: tuple[float, ...]) -> np.ndarray:
    return -0.5 * ((z - p[0]) / p[1]) ** 2 - np.log(p[1])


def _log_logistic(z: np.ndarray, p: tuple[float, ...]) -> np.ndarray:
    return -(z - p[0]) / p[1] - 2 * np.logaddexp(0.0, -(z - p[0]) / p[1]) - np.log(p[1])


def _log_gumbel(z: np.ndarray, p: tuple[float, ...]) -> np.ndarray:
    return -(z - p[0]) / p[1] - np.exp(-(z - p[0]) / p[1]) - np.log(p[1])


def _log_exp(z: np.ndarray, p: tuple[float, ...]) -> np.ndarray:
    return np.where(z >= 0, -z / p[0] - math.log(p[0]), -np.inf)


def _log_geo(z: np.ndarray, p: tuple[float, ...]) -> np.ndarray:
    return np.where((z >= 0) & (np.floor(z) == z), math.log(p[0]) + z * math.log1p(-p[0]), -np.inf)


def _log_dlap(z: np.ndarray, p: tuple[float, ...]) -> np.ndarray:
    return np.where(np.floor(z) == z, math.log(math.tanh(p[0] / 2)) - p[0] * np.abs(z), -np.inf)


def _log_uniform(z: np.ndarray, p: tuple[float, ...]) -> np.ndarray:
    return np.where((z >= p[0]) & (z <= p[1]), -math.log(p[1] - p[0]), -np.inf)


def _log_staircase(z: np.ndarray, p: tuple[float, ...]) -> np.ndarray:
    """Geng & Viswanath's staircase density for sensitivity 1, as `_draw_staircase` samples it: with
    b = e^-eps and a = (1 - b) / (2 (gamma + (1 - gamma) b)), the density is a b^g on |z| in [g, g + gamma)
    and a b^(g+1) on [g + gamma, g + 1), g = 0, 1, ... (the sampler's two pieces G + gamma U and
    G + gamma + (1 - gamma) U, U in [0, 1))."""
    eps, gamma = p[0], p[1]
    b = math.exp(-eps)
    log_a = math.log1p(-b) - math.log(2.0 * (gamma + (1.0 - gamma) * b))
    r = np.abs(z)
    g = np.floor(r)
    return log_a - eps * (g + (r - g >= gamma))


# ------------------------------------------------------------------------------------ cost coefficients


def _reciprocal_first(a: tuple[Any, ...], f: Field) -> Any:
    return 1 / a[0]


def _first(a: tuple[Any, ...], f: Field) -> Any:
    return a[0]


def _geo_cost(a: tuple[Any, ...], f: Field) -> Any:
    return -f.ln(f.one - a[0])


def _reciprocal_scale(a: tuple[Any, ...], f: Field) -> Any:
    """1/scale, with Logistic's default scale of 1 when it is omitted."""
    return f.one / a[1] if len(a) > 1 else f.one


# ------------------------------------------------------------------------------- R²DP's mixing variables


def normal_cdf(x: sympy.Expr) -> sympy.Expr:
    """Φ(x) in sympy (the `normal_cdf` builtin and the truncated normal's closed forms)."""
    # lazy: loads sympy only when this runs (start-up; tests/test_layers.py)
    import sympy

    return (1 + sympy.erf(x / sympy.sqrt(2))) / 2


def normal_pdf(x: sympy.Expr) -> sympy.Expr:
    """φ(x) in sympy."""
    # lazy: loads sympy only when this runs (start-up; tests/test_layers.py)
    import sympy

    return sympy.exp(-x ** 2 / 2) / sympy.sqrt(2 * sympy.pi)


def _mgf_point(a: tuple[Any, ...], t: Any) -> Any:
    # lazy: loads sympy only when this runs (start-up; tests/test_layers.py)
    import sympy

    return sympy.exp(t * a[0])


def _mgf_bernoulli(a: tuple[Any, ...], t: Any) -> Any:
    # lazy: loads sympy only when this runs (start-up; tests/test_layers.py)
    import sympy

    return 1 - a[0] + a[0] * sympy.exp(t)


def _mgf_gamma(a: tuple[Any, ...], t: Any) -> Any:
    return (1 - a[1] * t) ** (-a[0])


def _mgf_exp(a: tuple[Any, ...], t: Any) -> Any:
    return 1 / (1 - a[0] * t)


def _mgf_uniform(a: tuple[Any, ...], t: Any) -> Any:
    # lazy: loads sympy only when this runs (start-up; tests/test_layers.py)
    import sympy

    lo, hi = a
    return (sympy.exp(t * hi) - sympy.exp(t * lo)) / (t * (hi - lo))


def _mean_uniform(a: tuple[Any, ...]) -> Any:
    return (a[0] + a[1]) / 2


def _mgf_truncnormal(a: tuple[Any, ...], t: Any) -> Any:
    # lazy: loads sympy only when this runs (start-up; tests/test_layers.py)
    import sympy

    mu, sigma, lo, hi = a
    alpha, beta = (lo - mu) / sigma, (hi - mu) / sigma
    return (sympy.exp(mu * t + sigma ** 2 * t ** 2 / 2) *
            (normal_cdf(beta - sigma * t) - normal_cdf(alpha - sigma * t)) / (normal_cdf(beta) - normal_cdf(alpha)))


def _mean_truncnormal(a: tuple[Any, ...]) -> Any:
    mu, sigma, lo, hi = a
    alpha, beta = (lo - mu) / sigma, (hi - mu) / sigma
    return mu + sigma * (normal_pdf(alpha) - normal_pdf(beta)) / (normal_cdf(beta) - normal_cdf(alpha))


def _masses_bernoulli(a: tuple[Any, ...]) -> tuple[tuple[Any, Any], ...]:
    return ((0, 1 - a[0]), (1, a[0]))


def _masses_categorical(a: tuple[Any, ...]) -> tuple[tuple[Any, Any], ...]:
    total = a[0]
    for w in a[1:]:
        total = total + w
    return tuple((j, w / total) for j, w in enumerate(a))


def _masses_point(a: tuple[Any, ...]) -> tuple[tuple[Any, Any], ...]:
    return ((a[0], 1),)


def _atoms_point(v: tuple[float, ...]) -> tuple[tuple[float, float], ...]:
    return ((v[0], 1.0),)


def _atoms_bernoulli(v: tuple[float, ...]) -> tuple[tuple[float, float], ...]:
    return ((0.0, 1 - v[0]), (1.0, v[0]))


def _scipy_lap(v: tuple[float, ...]) -> Any:
    # lazy: loads scipy only when this runs (start-up; tests/test_layers.py)
    from scipy import stats

    return stats.laplace(scale=v[0])


def _scipy_logistic(v: tuple[float, ...]) -> Any:
    # lazy: loads scipy only when this runs (start-up; tests/test_layers.py)
    from scipy import stats

    return stats.logistic(v[0], v[1])


def _scipy_gumbel(v: tuple[float, ...]) -> Any:
    # lazy: loads scipy only when this runs (start-up; tests/test_layers.py)
    from scipy import stats

    return stats.gumbel_r(v[0], v[1])


def _scipy_normal(v: tuple[float, ...]) -> Any:
    # lazy: loads scipy only when this runs (start-up; tests/test_layers.py)
    from scipy import stats

    return stats.norm(v[0], v[1])


def _scipy_gamma(v: tuple[float, ...]) -> Any:
    # lazy: loads scipy only when this runs (start-up; tests/test_layers.py)
    from scipy import stats

    return stats.gamma(v[0], scale=v[1])


def _scipy_exp(v: tuple[float, ...]) -> Any:
    # lazy: loads scipy only when this runs (start-up; tests/test_layers.py)
    from scipy import stats

    return stats.expon(scale=v[0])


def _scipy_uniform(v: tuple[float, ...]) -> Any:
    # lazy: loads scipy only when this runs (start-up; tests/test_layers.py)
    from scipy import stats

    return stats.uniform(v[0], v[1] - v[0])


def _scipy_truncnormal(v: tuple[float, ...]) -> Any:
    # lazy: loads scipy only when this runs (start-up; tests/test_layers.py)
    from scipy import stats

    mu, sigma, a, b = v
    return stats.truncnorm((a - mu) / sigma, (b - mu) / sigma, loc=mu, scale=sigma)


# ------------------------------------------------------------------------------------------ the registry

DISTRIBUTIONS: dict[str, Distribution] = {}
"""Every distribution the language knows, by the name a spec writes."""


def register(dist: Distribution) -> Distribution:
    """Add a distribution to the language (every stage reads `DISTRIBUTIONS` when it needs one)."""
    if not dist.name.isidentifier() or not dist.name[:1].isupper() or dist.name.isupper():
        raise ValueError(f"a distribution's name is a capitalised identifier that is not all capitals (those "
                         f"are tags): {dist.name!r}")
    if dist.name in DISTRIBUTIONS:
        raise ValueError(f"distribution {dist.name} is already registered")
    bounds = [b for b in (dist.values.lower, dist.values.upper) if isinstance(b, Param)]
    read = [x for r in dist.requirements for c in r.comparisons for x in (c[0], c[2]) if isinstance(x, Param)]
    if any(p.index >= dist.required for p in bounds):
        raise ValueError(f"{dist.name}: a support bound reads an optional parameter (it may not be written)")
    if any(p.index >= len(dist.params) for p in read):
        raise ValueError(f"{dist.name}: a requirement reads a parameter it does not have")
    DISTRIBUTIONS[dist.name] = dist
    return dist


for _d in (
    Distribution("Lap", ("b",), "ℝ", "exp(-|x|/b) / (2b)", (1.0,), _draw_lap, _reciprocal_first,
                 source="Free Gap Table 1", requirements=(_positive(0),), log_density=_log_lap, law=_scipy_lap),
    Distribution("Exp", ("b",), "[0, ∞)", "exp(-x/b) / b (mean b)", (1.0,), _draw_exp, _reciprocal_first,
                 source="Free Gap Table 1", requirements=(_positive(0),), values=Support(lower=ZERO),
                 log_density=_log_exp, mixing=Mixing(_mgf_exp), law=_scipy_exp),
    Distribution("Geo", ("p",), "{0, 1, 2, ...}", "p (1-p)^n", (0.5,), _draw_geo, _geo_cost,
                 cost_note="mean (1-p)/p on n >= 0", source="Free Gap Table 1", requirements=(_open_unit(0),),
                 values=Support(lower=ZERO, integer=True), log_density=_log_geo),
    Distribution("DLap", ("a",), "ℤ", "tanh(a/2) exp(-a|n|)", (1.0,), _draw_dlap, _first,
                 source="two-sided geometric (Ghosh et al.), Free Gap Section 3.1", requirements=(_positive(0),),
                 values=Support(integer=True), log_density=_log_dlap),
    Distribution("Staircase", ("eps", "gamma"), "ℝ", "staircase density, sensitivity 1", (1.0, 0.5),
                 _draw_staircase, _first,
                 cost_note="bound holds for shifts that are whole multiples of the sensitivity",
                 source="Geng & Viswanath, cited in Free Gap Section 3.1", whole_shifts=True,
                 requirements=(_positive(0), _closed_unit(1)), log_density=_log_staircase),
    Distribution("Logistic", ("loc", "scale"), "ℝ", "logistic(loc, scale)", (0.0, 1.0), _draw_logistic,
                 _reciprocal_scale, min_params=1,
                 cost_note="|d/dx ln f| = |tanh((x-loc)/(2 scale))| / scale <= 1/scale",
                 source="Free Gap Theorem 8.3", requirements=(_positive(1),), log_density=_log_logistic,
                 law=_scipy_logistic),
    Distribution("Gumbel", ("loc", "scale"), "ℝ", "exp(-(x-loc)/s - exp(-(x-loc)/s)) / s", (0.0, 1.0),
                 _draw_gumbel, None, min_params=1,
                 cost_note="ln f(x)/f(y) = (y-x)/s + e^{-(y-loc)/s} - e^{-(x-loc)/s} is unbounded",
                 source="Free Gap Section 8.1", requirements=(_positive(1),), log_density=_log_gumbel,
                 law=_scipy_gumbel),
    Distribution("Uniform", ("a", "b"), "[a, b]", "1/(b-a)", (0.0, 1.0), _draw_uniform, None,
                 cost_note="the density ratio is infinite across the boundary of the support",
                 requirements=(_ordered(0, 1, "a"),), values=Support(lower=Param(0), upper=Param(1)),
                 log_density=_log_uniform, mixing=Mixing(_mgf_uniform, _mean_uniform),
                 law=_scipy_uniform),
    Distribution("Gamma", ("k", "theta"), "(0, ∞)", "x^(k-1) exp(-x/theta) / (Γ(k) theta^k)", (1.0, 1.0),
                 _draw_gamma, None, cost_note="d/dx ln f = (k-1)/x - 1/theta is unbounded near 0 (k != 1)",
                 source="R²DP Appendix B (shape k, scale theta)", requirements=(_positive(0), _positive(1)),
                 values=Support(lower=ZERO, lower_open=True), mixing=Mixing(_mgf_gamma), law=_scipy_gamma),
    Distribution("Bernoulli", ("p",), "{0, 1}", "P[1] = p", (0.5,), _draw_bernoulli, None,
                 cost_note="no Lipschitz constant: an alignment maps 0 and 1 to 0 and 1 (`b' = 1 - b`) at the exact "
                           "cost ln P[g⁻¹(g(b))] − ln P[g(b)]", requirements=(_closed_unit(0),),
                 values=Support(lower=ZERO, upper=ONE, integer=True),
                 mixing=Mixing(_mgf_bernoulli, atoms=_atoms_bernoulli), masses=_masses_bernoulli),
    Distribution("Categorical", ("w0", "w1", "w2", "w3"), "{0, 1, 2, 3}", "P[j] = wj / (w0 + w1 + w2 + w3)",
                 (1.0, 1.0, 0.0, 0.0), _draw_categorical, None, min_params=2,
                 cost_note="no Lipschitz constant: an alignment maps the values 0 .. 3 to values (`u' = (u + 1) % 4`) "
                           "at the exact cost ln P[g⁻¹(g(u))] − ln P[g(u)]",
                 source="numpy's choice(k, p) with p proportional to the weights (omitted ones are 0)",
                 requirements=(_positive(0), _nonnegative(1), _nonnegative(2), _nonnegative(3)),
                 values=Support(lower=ZERO, upper=Fraction(3), integer=True), masses=_masses_categorical),
    Distribution("Point", ("v",), "{v}", "P[v] = 1", (0.0,), _draw_point, None,
                 cost_note="any nonzero shift leaves the support {v}",
                 source="R²DP Appendix B.0.1 (1), the degenerate distribution",
                 values=Support(lower=Param(0), upper=Param(0)), mixing=Mixing(_mgf_point, atoms=_atoms_point),
                 masses=_masses_point),
    Distribution("Normal", ("mu", "sigma"), "ℝ", "Gaussian", (0.0, 1.0), _draw_normal, None,
                 cost_note="ln f(x)/f(y) grows quadratically", requirements=(_positive(1),),
                 log_density=_log_normal, law=_scipy_normal),
    Distribution("TruncNormal", ("mu", "sigma", "a", "b"), "[a, b]", "Gaussian(mu, sigma) conditioned on [a, b]",
                 (0.0, 1.0, -1.0, 1.0), _draw_truncnormal, None,
                 cost_note="bounded support and quadratic log-density",
                 source="R²DP Appendix B", requirements=(_positive(1), _ordered(2, 3, "a")),
                 values=Support(lower=Param(2), upper=Param(3)),
                 mixing=Mixing(_mgf_truncnormal, _mean_truncnormal), law=_scipy_truncnormal),
):
    register(_d)
