"""Stage 2 (constants): the exact value of a literal expression, an example's value or an argument's text.

An `example` item (`eps = 1/2`, `len(q) = 5`) and a value given on the command line (`--arg eps=1/3`) are
literal expressions: numbers, `true`/`false`, lists, and arithmetic on numbers (`+ - * / // % ^`, an integer
exponent), evaluated exactly with `Fraction`s. The resolver evaluates every example here and reports one that
has no value (`1/0`, `0^-1`, `ln(0)`: `example-item` at the clause), so that no later stage (`align run`, the
sampling and exact searches of `align test`, the synthesis of `align verify`) meets a division by zero. Every
number obeys the limits of spec literals (align/limits.py, `parse.checked_number`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from .. import nodes as n
from ..limits import MAX_POWER_EXPONENT
from ..operators import INTEGER_OPERATIONS, RING_OPERATIONS
from ..parse import checked_number

ALLOWED = "an example or argument is a number, true/false or a list, with arithmetic (+ - * / // % ^) on numbers"


def literal_value(e: n.Expr) -> Any:
    """The exact value of a literal expression (ints and Fractions, bools, lists), or ValueError saying why it
    has none: a division by zero, 0 to a negative power, a number out of range, or something not literal."""
    if isinstance(e, n.Number):
        return int(e.value) if e.is_integer else e.value
    if isinstance(e, n.BoolLit):
        return e.value
    if isinstance(e, n.ListLit):
        return [literal_value(x) for x in e.items]
    if isinstance(e, n.Unary) and e.op == "-":
        value = literal_value(e.operand)
        if _number(value):
            return -value
    if isinstance(e, n.Binary):
        a, b = literal_value(e.left), literal_value(e.right)
        if _number(a) and _number(b):
            return checked_number(_arithmetic(e.op, a, b))
    if isinstance(e, n.Call):
        raise ValueError(f"{ALLOWED}, not a call of `{e.func}`")
    raise ValueError(ALLOWED)


def _number(x: Any) -> bool:
    return isinstance(x, (int, Fraction)) and not isinstance(x, bool)


def _arithmetic(op: str, a: int | Fraction, b: int | Fraction) -> int | Fraction:
    if op in RING_OPERATIONS:
        return RING_OPERATIONS[op](a, b)
    if op in INTEGER_OPERATIONS or op == "/":
        if b == 0:
            raise ValueError("it divides by zero")
        if op == "/":
            return Fraction(a) / Fraction(b)
        if isinstance(a, int) and isinstance(b, int):
            return INTEGER_OPERATIONS[op](a, b)
        raise ValueError(f"`{op}` takes integers")
    if op == "^":
        if not isinstance(b, int) or abs(b) > MAX_POWER_EXPONENT:
            raise ValueError(f"a power's exponent is an integer between -{MAX_POWER_EXPONENT} and "
                             f"{MAX_POWER_EXPONENT}")
        if a == 0 and b < 0:
            raise ValueError("0 to a negative power divides by zero")
        return Fraction(a) ** b if b < 0 else a ** b
    raise ValueError(ALLOWED)
