"""The operators of the language: one record each, with the operation wherever one function serves every back end.

The stages evaluate in several number domains: exact rationals (the parser's constant folding), Python and numpy
numbers (the interpreters), z3 and sympy terms (the checker, reports). `+ - *` and the comparisons mean the same
in all of them, so their record holds the one function (`apply`) that every back end calls. `/` and `^` need
each domain's care (division by zero, z3's integer division, the domain of a power: docs/language.md section
6), so their `apply` is None and each back end implements them; `==`/`!=` on tuples, tags and lists compare
structurally in each back end. `//` and `%` are the integer operations (both operands int): Python's floor
quotient and the remainder with the sign of the divisor, so `apply` serves Python and numpy integers, exact
fractions and sympy; z3's integer division is Euclidean, so the checker builds the floor from it, and every back
end refuses a zero divisor. The resolver reads the typing rule from the record.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any


class OperatorKind(Enum):
    ARITHMETIC = "arithmetic"
    """number, number -> number"""
    ORDER = "order"
    """number, number -> bool"""
    EQUALITY = "equality"
    """two values of one type -> bool"""


@dataclass(frozen=True)
class Operator:
    symbol: str
    kind: OperatorKind
    meaning: str
    apply: Callable[[Any, Any], Any] | None
    """The operation, where one function is right in every number domain (see the module's text)."""
    real_result: bool = False
    """The result is real even for int operands (`/` and `^`); otherwise int op int is int."""
    domain: str | None = None
    """Where the operation is defined, when not everywhere (evaluation outside it is an error)."""
    integer: bool = False
    """Both operands must be int, and the result is int (`//`, `%`)."""


OPERATORS: dict[str, Operator] = {o.symbol: o for o in (
    Operator("+", OperatorKind.ARITHMETIC, "sum", operator.add),
    Operator("-", OperatorKind.ARITHMETIC, "difference", operator.sub),
    Operator("*", OperatorKind.ARITHMETIC, "product", operator.mul),
    Operator("/", OperatorKind.ARITHMETIC, "quotient", None, real_result=True, domain="divisor != 0"),
    Operator("//", OperatorKind.ARITHMETIC, "floor quotient", operator.floordiv, domain="divisor != 0", integer=True),
    Operator("%", OperatorKind.ARITHMETIC, "remainder, with the sign of the divisor", operator.mod,
             domain="divisor != 0", integer=True),
    Operator("^", OperatorKind.ARITHMETIC, "power", None, real_result=True,
             domain="not 0 to a negative power; a negative base needs a whole exponent"),
    Operator("<", OperatorKind.ORDER, "less than", operator.lt),
    Operator("<=", OperatorKind.ORDER, "at most", operator.le),
    Operator(">", OperatorKind.ORDER, "greater than", operator.gt),
    Operator(">=", OperatorKind.ORDER, "at least", operator.ge),
    Operator("==", OperatorKind.EQUALITY, "equal", operator.eq),
    Operator("!=", OperatorKind.EQUALITY, "not equal", operator.ne),
)}

RING_OPERATIONS: dict[str, Callable[[Any, Any], Any]] = {
    s: o.apply for s, o in OPERATORS.items()
    if o.kind is OperatorKind.ARITHMETIC and o.apply is not None and not o.integer}
"""`+ - *`: the arithmetic that means the same in every domain."""

INTEGER_OPERATIONS: dict[str, Callable[[Any, Any], Any]] = {
    s: o.apply for s, o in OPERATORS.items() if o.integer and o.apply is not None}
"""`//` and `%` on ints, as Python computes them (z3 needs its own floor: `smt/encode.py`); the divisor must
not be 0."""

ORDERS: dict[str, Callable[[Any, Any], Any]] = {
    s: o.apply for s, o in OPERATORS.items() if o.kind is OperatorKind.ORDER and o.apply is not None}
"""`< <= > >=` on numbers."""

COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    s: o.apply for s, o in OPERATORS.items() if o.kind is not OperatorKind.ARITHMETIC and o.apply is not None}
"""Every comparison on numbers (`==`/`!=` on other values compare structurally, in each back end)."""
