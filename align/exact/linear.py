"""Affine forms in the noise draws: the values a path of the program computes from its noise.

A `Linear` is c + Σ a_k·x_k over draws x_k (keyed by site and loop member), with float coefficients: the same
IEEE arithmetic as the interpreter, so that a form evaluated at the noise a run drew is the value that run
computed, up to the order of the additions. Sums, differences, products and quotients with numbers stay
`Linear`; a form whose coefficients all vanish is its constant. What an affine form cannot follow (a product of
two forms, a division by one, a power, `float()` of one) raises `NotAffine`.

Comparing a form with a number or another form is where a path forks: the comparison asks the `Decider` the
form belongs to for the outcome (paths.py explores each). An equality of forms whose difference depends on
the noise has probability 0 (continuous draws), so it is false without a fork; the same form is equal to itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..span import Span

Key = tuple[str, int | None]
"""A draw: the noise site's name and the loop member (None for a draw outside loops)."""


class NotAffine(Exception):
    """The program computes something from its noise that is not affine (a product of draws, a power, ...)."""


class Decider(Protocol):
    def decide(self, form: Linear) -> bool:
        """The outcome of `form >= 0` on the path being explored (which also records it)."""


@dataclass(frozen=True)
class Constraint:
    """`form >= 0` on a path (the boundary `form = 0` has probability 0: every draw is continuous)."""

    form: Linear
    span: Span | None = None
    """The statement that made the path's decision (for a diagnostic that the integration cannot follow it)."""

    def text(self) -> str:
        return f"{self.form.text()} >= 0"


class Linear:
    __slots__ = ("const", "decider", "mag", "terms")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, terms: Mapping[Key, float], const: float, decider: Decider, mag: float | None = None):
        self.terms = {k: a for k, a in terms.items() if a != 0.0}
        self.const = const
        self.decider = decider
        self.mag = abs(const) if mag is None else mag
        """A bound on the magnitudes the constant was computed from (the sum of the operands' and results'):
        its rounding error is at most a small multiple of 2^-53 · mag (integrate.py widens by 2^-40 · mag)."""

    @staticmethod
    def draw(key: Key, decider: Decider) -> Linear:
        return Linear({key: 1.0}, 0.0, decider)

    @property
    def keys(self) -> frozenset[Key]:
        return frozenset(self.terms)

    def _make(self, terms: Mapping[Key, float], const: float, mag: float) -> Any:
        result = Linear(terms, const, self.decider, mag + abs(const))
        return result if result.terms else result.const

    def _combine(self, other: Any, sign: float) -> Any:
        if isinstance(other, Linear):
            terms = dict(self.terms)
            for k, a in other.terms.items():
                terms[k] = terms.get(k, 0.0) + sign * a
            return self._make(terms, self.const + sign * other.const, self.mag + other.mag)
        if isinstance(other, bool) or not isinstance(other, (int, float)):
            raise NotAffine(f"{type(other).__name__} combined with a noise value")
        return self._make(self.terms, self.const + sign * float(other), self.mag + abs(float(other)))

    def __add__(self, other: Any) -> Any:
        return self._combine(other, 1.0)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        return self._combine(other, -1.0)

    def __rsub__(self, other: Any) -> Any:
        return (-self)._combine(other, 1.0)

    def __neg__(self) -> Any:
        return self._make({k: -a for k, a in self.terms.items()}, -self.const, self.mag)

    def __pos__(self) -> Any:
        return self

    def _scale(self, factor: Any) -> Any:
        if isinstance(factor, Linear):
            raise NotAffine("a product of two values that depend on the noise")
        if isinstance(factor, bool) or not isinstance(factor, (int, float)):
            raise NotAffine(f"a noise value multiplied by {type(factor).__name__}")
        f = float(factor)
        return self._make({k: a * f for k, a in self.terms.items()}, self.const * f, self.mag * abs(f))

    def __mul__(self, other: Any) -> Any:
        return self._scale(other)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Any:
        if isinstance(other, Linear):
            raise NotAffine("a division by a value that depends on the noise")
        f = float(other)
        return self._make({k: a / f for k, a in self.terms.items()}, self.const / f, self.mag / abs(f))

    def __rtruediv__(self, other: Any) -> Any:
        raise NotAffine("a division by a value that depends on the noise")

    def __pow__(self, other: Any) -> Any:
        raise NotAffine("a power of a value that depends on the noise")

    __rpow__ = __pow__

    def __float__(self) -> float:
        raise NotAffine("a function of a value that depends on the noise other than + - and scaling")

    def __bool__(self) -> bool:
        raise NotAffine("a noise value used as a truth value")

    def __abs__(self) -> Any:
        return self if self.decider.decide(self) else -self

    # -- comparisons: forks -----------------------------------------------------------------------------
    def __ge__(self, other: Any) -> bool:
        return _at_least(self, other, strict=False)

    def __gt__(self, other: Any) -> bool:
        return _at_least(self, other, strict=True)

    def __le__(self, other: Any) -> bool:
        return _at_least(other, self, strict=False)

    def __lt__(self, other: Any) -> bool:
        return _at_least(other, self, strict=True)

    def __eq__(self, other: object) -> bool:
        """Equal when the difference is the constant 0 (the same form); a difference that depends on the noise
        is 0 with probability 0 (continuous draws), so it is false without a fork."""
        if not isinstance(other, (Linear, int, float)) or isinstance(other, bool):
            return False
        difference = self - other
        return not isinstance(difference, Linear) and difference == 0

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def value(self, draws: Mapping[Key, float]) -> float:
        return self.const + sum(a * draws[k] for k, a in self.terms.items())

    def text(self) -> str:
        parts = []
        for (name, member), a in sorted(self.terms.items(), key=lambda t: (t[0][0], t[0][1] or 0)):
            label = name if member is None else f"{name}[{member}]"
            parts.append(f"{'-' if a < 0 else '+'} {'' if abs(a) == 1 else f'{abs(a):g}·'}{label}")
        if self.const != 0 or not parts:
            parts.append(f"{'-' if self.const < 0 else '+'} {abs(self.const):g}")
        head = parts[0]
        return ("-" if head.startswith("-") else "") + head[2:] + "".join(f" {p}" for p in parts[1:])


def _at_least(a: Any, b: Any, strict: bool) -> bool:
    """a >= b (a > b when strict) where at least one side is a form: the path's decision. A difference that
    depends on the noise is 0 with probability 0, so strict and not are one fork; a difference that does not is
    a number, compared as the interpreter compares it (`nu > nu` is false)."""
    difference = a - b
    if not isinstance(difference, Linear):
        return bool(difference > 0) if strict else bool(difference >= 0)
    return difference.decider.decide(difference)
