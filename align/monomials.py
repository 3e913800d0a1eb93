"""Cost coefficients that are products of powers, computed exactly and printed as sympy prints them, without sympy.

`align check` prints each sampling site's cost coefficient (`obligations.coefficient_texts`), and importing sympy
takes 0.4 s, the whole startup budget of `align check`. Most coefficients are a rational times a product of
integer powers of parameters, with at most one factor `c ± x` (`eps0`, `eps1/2`, `eps*(1 - theta)/(4*k)`). This
module evaluates a site's arguments over the IR the way `symbolic.to_sympy` does, in that fragment, applies the
distribution's cost rule in it (`FIELD`), and prints the result as `symbolic.show` prints sympy's; `exp(m)` is
kept only for `ln` to cancel (a geometric coin's -ln(1 - p) with p = 1 - exp(-eps0) is eps0). Anything outside
the fragment raises `Outside` and the caller asks sympy: ln of anything but exp, an exp left over, abs, a sum of
two parameters, two different `c ± x` factors, a rational times a lone `c ± x` (sympy distributes it into the
sum), and a sign that sympy's `simplify` may move (`Monomial.settled`).

The fragment mirrors sympy's automatic evaluation (a `Mul`'s factors in `Basic.compare` order: symbols by name,
then powers by base, then the sum; like factors combined; integer powers distributed over a product) and its
`StrPrinter` with `order="none"`, which is all `show` uses.
tests/test_monomials.py checks that both give the same text on every coefficient of the corpus and on generated
expressions.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from . import nodes as n
from .distributions import Field
from .operators import INTEGER_OPERATIONS, RING_OPERATIONS
from .visitor import ExprVisitor


class Outside(Exception):
    """The value is not a product of powers this module computes exactly: ask sympy."""


@dataclass(frozen=True)
class Exp:
    """`exp(argument)`: kept only for `ln` to cancel (`-ln(1 - p)` of a geometric coin with p = 1 - exp(-eps0) is
    eps0, as sympy finds for real arguments); a value that still holds one when printed is Outside."""

    argument: Monomial


Atom = str | Exp
"""A parameter's name, or exp of a product."""


@dataclass(frozen=True)
class Binomial:
    """`constant + sign·atom`: sympy's `Add` of a nonzero integer and an atom with coefficient ±1."""

    constant: int
    sign: int
    atom: Atom

    def text(self) -> str:
        return f"{self.constant} {'+' if self.sign > 0 else '-'} {_atom(self.atom)}"


Base = Atom | Binomial
"""A factor of a product."""


def _atom(atom: Atom) -> str:
    if isinstance(atom, Exp):
        raise Outside("exp")
    return atom


@dataclass(frozen=True)
class Monomial:
    """coefficient · Π base^exponent, with no zero exponent and at most one `Binomial` base."""

    coefficient: Fraction
    powers: tuple[tuple[Base, int], ...]
    """In sympy's order of a product's factors."""

    # ------------------------------------------------------------------------------------------- arithmetic

    def __mul__(self, other: object) -> Monomial:
        o = lift(other)
        powers = dict(self.powers)
        for base, e in o.powers:
            powers[base] = powers.get(base, 0) + e
        return _product(self.coefficient * o.coefficient, powers)

    __rmul__ = __mul__

    def __pow__(self, k: object) -> Monomial:
        o = lift(k)
        if o.powers or o.coefficient.denominator != 1:
            raise Outside("a power that is not a whole number")
        e = int(o.coefficient)
        if abs(e) > _LARGEST_POWER:
            raise Outside("a large power")
        if e == 0:
            return ONE
        if self.coefficient == 0 and e < 0:
            raise Outside("division by zero")
        return _product(self.coefficient ** e, {base: x * e for base, x in self.powers})

    def __truediv__(self, other: object) -> Monomial:
        return self * (lift(other) ** -1)

    def __rtruediv__(self, other: object) -> Monomial:
        return lift(other) * (self ** -1)

    def __neg__(self) -> Monomial:
        return self * MINUS_ONE

    def __add__(self, other: object) -> Monomial:
        o = lift(other)
        if self.coefficient == 0:
            return o
        if o.coefficient == 0:
            return self
        if self.powers == o.powers and not self.is_sum():  # like terms
            return _product(self.coefficient + o.coefficient, dict(self.powers))
        for number, term in ((self, o), (o, self)):
            if number.powers or number.coefficient.denominator != 1:
                continue
            if term.is_sum():  # c + (k ± x) is (c + k) ± x
                b = term.powers[0][0]
                assert isinstance(b, Binomial)
                if number.coefficient + b.constant == 0:
                    return Monomial(Fraction(b.sign), ((b.atom, 1),))
                return _sum(int(number.coefficient) + b.constant, b.sign, b.atom)
            if len(term.powers) == 1 and abs(term.coefficient) == 1 and not isinstance(term.powers[0][0], Binomial) \
                    and term.powers[0][1] == 1:
                return _sum(int(number.coefficient), int(term.coefficient), term.powers[0][0])
        raise Outside("a sum")

    __radd__ = __add__

    def __sub__(self, other: object) -> Monomial:
        return self + (-lift(other))

    def __rsub__(self, other: object) -> Monomial:
        return lift(other) + (-self)

    def settled(self) -> Monomial:
        """This value, where sympy's `simplify` would leave it as it is; Outside where it might not. simplify
        moves a sign into or out of a sum (`-(-1 + x)/2` becomes `(1 - x)/2`); with the sign outside and the sum
        as `c - x` (c > 0) and not raised to a power there is nothing to move (it rewrites `(1 - x)^3` as
        `-(-1 + x)^3`), and a product of powers alone has nothing to rewrite. An exp that ln did not cancel is
        Outside too (it is never printed here)."""
        for base, e in self.powers:
            if isinstance(base, Exp) or (isinstance(base, Binomial) and isinstance(base.atom, Exp)):
                raise Outside("exp")
            if isinstance(base, Binomial) and (self.coefficient < 0 or base.constant < 0 or base.sign > 0
                                               or e != 1):
                raise Outside("a sum with a sign simplify may move")
        return self

    def is_sum(self) -> bool:
        """Whether sympy holds this value as an `Add` (a lone `c ± x`)."""
        return self.coefficient == 1 and len(self.powers) == 1 and isinstance(self.powers[0][0], Binomial) \
            and self.powers[0][1] == 1

    # ------------------------------------------------------------------------------------------- printing

    def text(self) -> str:
        """As `sympy.sstr(value, order="none")` prints it, then in the language's notation (`^`)."""
        return notation(self._sympy_text())

    def _sympy_text(self) -> str:
        c = self.coefficient
        if not self.powers:
            return str(c)
        if c == 1 and len(self.powers) == 1:
            base, e = self.powers[0]
            if e == 1:
                return base.text() if isinstance(base, Binomial) else _atom(base)
            if e == -1:
                return f"1/{_factor(base)}"
            return f"{_factor(base)}**{e if e > 0 else f'({e})'}"
        sign = "-" if c < 0 else ""
        c = abs(c)
        above = [str(c.numerator)] if c.numerator != 1 else []
        below = [str(c.denominator)] if c.denominator != 1 else []
        for base, e in self.powers:
            (above if e > 0 else below).append(_factor(base) if abs(e) == 1 else f"{_factor(base)}**{abs(e)}")
        text = sign + ("*".join(above) or "1")
        if len(below) == 1:
            return f"{text}/{below[0]}"
        return f"{text}/({'*'.join(below)})" if below else text


def _factor(base: Base) -> str:
    return f"({base.text()})" if isinstance(base, Binomial) else _atom(base)


def _sum(constant: int, sign: int, atom: Atom) -> Monomial:
    return Monomial(Fraction(1), ((Binomial(constant, sign, atom), 1),))


def _order(item: tuple[Base, int]) -> tuple[int, str]:
    """sympy's order of a product's factors (`Basic.compare`: Symbol < Pow < Add; a power by its base, and a
    Symbol's base before an Add's). At most one Binomial occurs, so its key needs no more detail."""
    base, e = item
    if isinstance(base, str):
        return (0, base) if e == 1 else (1, base)
    if isinstance(base, Exp):  # never printed: any order that is the same for equal values
        return (4, repr(base))
    return (2, "") if e != 1 else (3, "")


def _product(coefficient: Fraction, powers: dict[Base, int]) -> Monomial:
    if coefficient == 0:
        return Monomial(Fraction(0), ())
    kept = tuple(sorted(((b, e) for b, e in powers.items() if e != 0), key=_order))
    if sum(isinstance(b, Binomial) for b, _ in kept) > 1:
        raise Outside("two sums")
    if len(kept) == 1 and isinstance(kept[0][0], Binomial) and kept[0][1] == 1 and coefficient != 1:
        # sympy distributes a number over a lone sum: -(1 - x) is -1 + x, 2*(1 - x) is 2 - 2*x
        b = kept[0][0]
        if coefficient == -1:
            return _sum(-b.constant, -b.sign, b.atom)
        raise Outside("a number times a sum")
    return Monomial(coefficient, kept)


def lift(value: object) -> Monomial:
    if isinstance(value, Monomial):
        return value
    if isinstance(value, int | Fraction) and not isinstance(value, bool):
        return Monomial(Fraction(value), ())
    raise Outside(f"not a product of powers: {value!r}")


_LARGEST_POWER = 64
"""Beyond this exponent the exact coefficient may grow without bound: sympy's problem, then."""

ONE = Monomial(Fraction(1), ())
MINUS_ONE = Monomial(Fraction(-1), ())


def _ln(x: Any) -> Any:
    """ln(exp(m)) = m (sympy's own evaluation for a real m; every symbol here is real); any other ln is Outside."""
    v = lift(x)
    if v.coefficient == 1 and len(v.powers) == 1 and isinstance(v.powers[0][0], Exp) and v.powers[0][1] == 1:
        return v.powers[0][0].argument
    raise Outside("ln")


FIELD = Field(ONE, _ln)
"""Products of powers as a cost rule's number domain (`distributions.Field`)."""


def notation(text: str) -> str:
    """sympy's printed text in the spec language's own notation (`ln`, `^`, `abs`, `max`, `min`, `ceil`)."""
    for sympy_name, ours in (("**", "^"), ("log(", "ln("), ("Abs(", "abs("), ("Max(", "max("), ("Min(", "min("),
                             ("ceiling(", "ceil(")):
        text = text.replace(sympy_name, ours)
    return text


# ----------------------------------------------------------------------------------------- from the IR


Bindings = dict[str, Monomial | None]
"""Constants' formulas in terms of the parameters; None for a constant outside the fragment (reading it is
Outside: sympy may know its formula)."""


def of(e: n.Expr, bindings: Bindings | None = None) -> Monomial:
    """e's value, as `symbolic.to_sympy(e, bindings)` computes it; raises Outside beyond the fragment."""
    return e.accept(_Of(), bindings or {})


class _Of(ExprVisitor[Monomial, Bindings]):
    def outside(self, e: n.Expr, bindings: Bindings) -> Monomial:
        raise Outside(type(e).__name__)

    visit_bool_lit = visit_comprehension = visit_range = visit_bool_op = visit_member = outside
    visit_tag_test = visit_conditional = visit_tuple_lit = visit_list_lit = visit_tag_call = outside
    visit_compare = visit_index = visit_member_ref = visit_tag_lit = outside

    def visit_number(self, e: n.Number, bindings: Bindings) -> Monomial:
        return Monomial(e.value, ())

    def named(self, e: n.Ref | n.Name, bindings: Bindings) -> Monomial:
        if not e.primed and e.text in bindings:
            found = bindings[e.text]
            if found is None:
                raise Outside(e.text)
            return found
        return Monomial(Fraction(1), ((e.text, 1),))

    visit_param_ref = visit_var_ref = visit_noise_ref = visit_let_ref = visit_local_ref = named
    visit_out_ref = visit_aligned_cost_ref = visit_name = named

    def visit_call(self, e: n.Call, bindings: Bindings) -> Monomial:
        if len(e.args) != 1:
            raise Outside(e.func)
        argument = e.args[0].accept(self, bindings)
        if e.func == "exp":
            if not argument.powers:
                raise Outside("exp of a number")  # sympy keeps exp(2), and exp(0) is 1
            return Monomial(Fraction(1), ((Exp(argument), 1),))
        if e.func == "ln":
            return FIELD.ln(argument)
        raise Outside(e.func)

    def visit_binary(self, e: n.Binary, bindings: Bindings) -> Monomial:
        left, right = e.left.accept(self, bindings), e.right.accept(self, bindings)
        if e.op in RING_OPERATIONS:
            return RING_OPERATIONS[e.op](left, right)
        if e.op in INTEGER_OPERATIONS:
            raise Outside(e.op)
        if e.op == "/":
            return left / right
        return left ** right

    def visit_unary(self, e: n.Unary, bindings: Bindings) -> Monomial:
        if e.op == "-":
            return -e.operand.accept(self, bindings)
        raise Outside(e.op)
