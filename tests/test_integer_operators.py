"""`//` and `%` on ints (docs/language.md, "Operators"): Python's floor quotient and the remainder with the sign of
the divisor, the same in every back end — the parser's constant folding, the argument reader, both interpreters,
sympy and z3 (whose own integer division is Euclidean) — and a zero divisor refused where it is evaluated."""

from __future__ import annotations

import itertools

import pytest
import sympy
import z3

from align.interp.errors import RunError
from align.interp.values import read_value_text
from align.parse import parse_expression
from align.smt import terms as zt
from align.smt.encode import Encoding, ExprEval, floor_quotient
from align.smt.solver import fresh_context
from align.symbolic import to_sympy

from .test_interp_semantics import both, error_of, mechanism

PAIRS = [(a, b) for a, b in itertools.product(range(-7, 8), (-3, -2, -1, 1, 2, 3))]


def test_python_semantics_in_both_interpreters():
    mech = mechanism("output (a // b, a % b)", "a: int, b: int")
    for a, b in PAIRS:
        assert both(mech, {"a": a, "b": b}) == [(a // b, a % b)], (a, b)


def test_python_semantics_in_constants_and_arguments():
    for a, b in PAIRS:
        for op, expected in (("//", a // b), ("%", a % b)):
            assert read_value_text("x", f"{a} {op} {b}") == expected
            assert read_value_text("x", f"({a}) {op} ({b})") == expected


def test_python_semantics_in_sympy():
    for a, b in PAIRS:
        for op, expected in (("//", a // b), ("%", a % b)):
            assert to_sympy(parse_expression(f"x {op} y"), {}).subs({sympy.Symbol("x", real=True): a,
                                                                      sympy.Symbol("y", real=True): b}) == expected


def test_python_semantics_in_z3_for_every_integer():
    # z3 divides the Euclidean way; the checker's floor agrees with Python's `//` and `%` on every pair
    with fresh_context():
        a, b = zt.Int("a"), zt.Int("b")
        q = floor_quotient(a, b)
        r = a - b * q
        solver = z3.Solver(ctx=zt.current())
        solver.add(b != 0, z3.Not(zt.And(a == b * q + r, z3.Implies(b > 0, zt.And(r >= 0, r < b)),
                                         z3.Implies(b < 0, zt.And(r <= 0, r > b)))))
        assert solver.check() == z3.unsat
        mech = mechanism("output (a // b, a % b)", "a: int, b: int")
        enc = Encoding(mech, {}, {})
        for a_, b_ in PAIRS:
            ev = ExprEval(enc, {"a": zt.IntVal(a_), "b": zt.IntVal(b_)}, {})
            expr = mech.body[0].value
            got = [z3.simplify(ev.arith(item)).as_long() for item in expr.items]
            assert got == [a_ // b_, a_ % b_], (a_, b_)


@pytest.mark.parametrize("op", ["//", "%"])
def test_a_zero_divisor_is_a_located_error(op: str):
    mech = mechanism(f"output a {op} b", "a: int, b: int")
    code, line, _ = error_of(mech, {"a": 7, "b": 0})
    assert (code, line) == ("division-by-zero", 4)  # the `output` line
    with pytest.raises(RunError, match="divides by zero"):
        read_value_text("x", f"7 {op} 0")


def test_the_lowest_integer_divided_by_minus_one_is_an_overflow():
    mech = mechanism("output a // b", "a: int, b: int")
    code, _, _ = error_of(mech, {"a": -2 ** 63, "b": -1})
    assert code == "integer-overflow"


def test_abs_of_the_lowest_integer_is_an_overflow():
    """|-2^63| = 2^63 is outside the 64 bits: numpy's abs wrapped it back to -2^63 in the vectorised interpreter
    while the scalar one returned 2^63; both stop now, and agree below it."""
    mech = mechanism("output abs(a)", "a: int")
    code, _, _ = error_of(mech, {"a": -2 ** 63})
    assert code == "integer-overflow"
    assert both(mech, {"a": -2 ** 63 + 1}) == [2 ** 63 - 1]


def test_an_integer_sum_is_a_fold_of_plus_within_64_bits():
    """`sum` of integers stops where a partial sum leaves the 64 bits, as `a + b` does: the vectorised interpreter
    wrapped 2 * (-2^63) to 0 and the scalar one went past the range; a sum that comes back within it but left it on
    the way stops too (each `+` of the fold is checked)."""
    mech = mechanism("output sum(l in 0 .. 2: a)", "a: int")
    assert error_of(mech, {"a": -2 ** 63})[0] == "integer-overflow"
    assert error_of(mech, {"a": 2 ** 62})[0] == "integer-overflow"
    assert both(mech, {"a": -2 ** 62}) == [-2 ** 63]
    mech = mechanism("output sum(l in 0 .. 3: l == 1 ? a : b)", "a: int, b: int")
    assert error_of(mech, {"a": 2 ** 63 - 1, "b": 1})[0] == "integer-overflow"  # 1 + (2^63 - 1) then + 1
    assert both(mech, {"a": 2 ** 62, "b": -1}) == [2 ** 62 - 2]
