"""floor, ceil, round and clamp (issue 38): one exact meaning in every back end.

The interpreters (scalar and vectorised) must agree with numpy's floor, ceil, rint and clip on doubles, the z3 terms
with the interpreters on every value they both have, and the resolver, the float-sensitivity analysis, sympy and the
checker must say what each function is. The ties these functions hide (`floor(eta) == 0` has positive probability)
are tests/test_ties.py's.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import sympy
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

import align
from align.diagnostics import SpecError
from align.exact.paths import Outside, paths
from align.interp.errors import RunError
from align.interp.runner import prepare_arguments, sample
from align.interp.scalar import Interpreter, NoiseValues
from align.obligations import ObligationId
from align.parse import parse_expression, parse_source
from align.resolve import resolve
from align.smt import terms as zt
from align.smt.encode import Encoding, ExprEval
from align.smt.formulas import to_z3
from align.smt.solver import fresh_context
from align.span import Source
from align.status import Status
from align.symbolic import NotSymbolic, show, to_sympy

from .test_interp_semantics import both, error_of, mechanism

HALVES = [-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 2.0 ** 52 - 0.5, -(2.0 ** 52) + 0.5, 1e15 + 0.5]
"""Exact halves: round takes the even neighbour (2.5 -> 2, -2.5 -> -2, 0.5 -> 0, 2^52 - 1/2 -> 2^52)."""
VALUES = [*HALVES, -2.0, -0.0, 0.0, 3.0, 0.49999999999999994, -0.49999999999999994, 0.1, -0.1, 7.25, -7.75,
          1.0000000000000002, -1e15 - 0.25, 9.2e18, -9.2e18]


def _expected(x: float, lo: float, hi: float) -> tuple:
    return int(np.floor(x)), int(np.ceil(x)), int(np.rint(x)), float(np.clip(x, lo, hi))


# -- the interpreters ------------------------------------------------------------------------------------------


def test_both_interpreters_round_reals_as_numpy_does():
    mech = mechanism("for i in 0 .. len(v) {\n output (floor(v[i]), ceil(v[i]), round(v[i]), clamp(v[i], -1, 1.5))\n }",
                     "v: real[]")
    got = both(mech, {"v": VALUES})
    assert got == [_expected(x, -1, 1.5) for x in VALUES]
    assert all(type(item) is int for out in got for item in out[:3])
    # ties to even, as Python's round: the language's round is both
    assert [out[2] for out in got[:8]] == [-4, -2, -2, 0, 0, 2, 2, 4] == [round(x) for x in HALVES[:8]]
    assert got[8][2] == 2 ** 52 and got[9][2] == -(2 ** 52) and got[10][2] == 10 ** 15


def test_an_int_is_its_own_floor_ceil_and_round_and_clamp_of_ints_is_an_int():
    mech = mechanism("for i in 0 .. len(k) {\n output (floor(k[i]), ceil(k[i]), round(k[i]), clamp(k[i], -1, 2),"
                     " clamp(k[i], -1, 2.5))\n }", "k: int[]")
    ks = [-(2 ** 63), -3, -1, 0, 1, 2, 3, 2 ** 62 + 1, 2 ** 63 - 1]
    got = both(mech, {"k": ks})
    assert got == [(k, k, k, min(max(k, -1), 2), float(min(max(k, -1), 2.5))) for k in ks]
    assert all(type(item) is int for out in got for item in out[:4])
    assert str(mech.output_type) == "(int, int, int, int, real)"


def test_the_vectorised_interpreter_rounds_every_lane_as_numpy_and_the_scalar_one_does():
    # DLap noise over 4 makes quarters on every lane: exact halves (k = 2 mod 4), negatives, integers
    mech = mechanism("k ~ DLap(0.05)\n x = k / 4\n output (k, floor(x), ceil(x), round(x), clamp(x, -2, 3.5))")
    out = sample(mech, {}, 4000, seed=3)
    lanes = [out.value(i)[0] for i in range(4000)]
    ks = np.array([lane[0] for lane in lanes])
    assert (ks % 4 == 2).sum() > 500 and (ks < -40).sum() > 100 and (ks > 40).sum() > 100
    for lane in lanes:
        k = lane[0]
        assert lane[1:] == _expected(k / 4, -2, 3.5), lane
    for lane in lanes[:200]:
        scalar = Interpreter(mech, NoiseValues(mech, {"k": lane[0]}), trace=False).run({})
        assert scalar.out == [lane]


@pytest.mark.parametrize("call", ["floor(x)", "ceil(x)", "round(x)"])
def test_a_real_beyond_the_64_bit_integers_is_an_overflow(call: str):
    mech = mechanism(f"output {call}", "x: real")
    for x in (9.3e18, -9.3e18, 1e300):
        code, line, _ = error_of(mech, {"x": x})
        assert (code, line) == ("integer-overflow", 4)
    assert both(mech, {"x": -(2.0 ** 63)}) == [-(2 ** 63)]  # the lowest int64 is a double


def test_clamp_outside_its_domain_is_a_located_math_domain_error():
    mech = mechanism("output (clamp(x, a, b), clamp(x, 2, b))", "x: real, a: real, b: int")
    code, line, _ = error_of(mech, {"x": 0.5, "a": 1.5, "b": 1})
    assert (code, line) == ("math-domain", 4)
    with pytest.raises(RunError, match=r"`clamp\(x, a, b\)` is undefined: clamp needs lo <= hi, but lo is a = 1\.5 "
                                       r"and hi is b = 1$"):
        Interpreter(mech, NoiseValues(mech, {}), trace=False).run(prepare_arguments(mech, {"x": 0, "a": 1.5, "b": 1}))
    with pytest.raises(RunError, match=r"clamp needs lo <= hi, but lo is 2 and hi is b = 1$"):
        sample(mech, prepare_arguments(mech, {"x": 0, "a": 1, "b": 1}), 3, seed=0)
    assert both(mech, {"x": 0.5, "a": 1, "b": 2}) == [(1.0, 2)]  # lo == hi is in the domain
    # on the lanes where uniform noise puts hi below lo
    noisy = mechanism("u ~ Uniform(-1, 1)\n output clamp(0, 0, u)")
    with pytest.raises(RunError) as info:
        sample(noisy, {}, 100, seed=0)
    assert info.value.diagnostic.code == "math-domain"


def test_the_exact_computation_follows_clamp_and_not_a_rounding():
    # `align test --exact` runs the scalar interpreter on affine forms of the noise: clamp is a choice among its
    # arguments (three paths), floor of a form is not affine (`exact-outside` at its statement)
    clamped = mechanism("eta ~ Lap(1)\n output clamp(x + eta, 0, 1)", "x: real")
    found = paths(clamped, prepare_arguments(clamped, {"x": 0.25}))
    assert sorted(tuple(c.text() for c in p.constraints) for p in found) == [
        ("-eta - 0.25 >= 0",), ("eta + 0.25 >= 0", "-eta + 0.75 >= 0"), ("eta + 0.25 >= 0", "eta - 0.75 >= 0")]
    for call in ("floor", "ceil", "round"):
        rounded = mechanism(f"eta ~ Lap(1)\n output {call}(x + eta)", "x: real")
        with pytest.raises(Outside, match="a function of a value that depends on the noise") as info:
            paths(rounded, prepare_arguments(rounded, {"x": 0.25}))
        assert info.value.span is not None and info.value.span.line == 5


# -- the resolver ------------------------------------------------------------------------------------------------


def _diagnostics(text: str) -> list[tuple[str, int, int]]:
    with pytest.raises(SpecError) as info:
        resolve(parse_source(Source("t.dp", text)))
    return [(d.code, d.span.line, d.span.column) for d in info.value.diagnostics]


def test_floor_ceil_round_make_ints_and_clamp_joins_its_arguments():
    mech = mechanism("output (floor(x), ceil(x), round(x), clamp(k, 0, 1), clamp(x, 0, 1), clamp(k, 0.5, 1))",
                     "x: real, k: int")
    assert str(mech.output_type) == "(int, int, int, int, real, real)"
    # an int where the language needs one: a loop bound, an index, `//`
    mech = mechanism("for i in 0 .. floor(x) {\n output v[round(x)] + ceil(x) // 2\n }", "x: real, v: real[]")
    assert str(mech.output_type) == "real"


def test_a_call_with_the_wrong_number_of_arguments_is_located_at_the_function():
    head = "mechanism m(x: real)\n  privacy 1\n{\n"
    assert _diagnostics(head + "  output floor(x, 1)\n}\n") == [("call-arity", 4, 10)]
    assert _diagnostics(head + "  output clamp(x, 0)\n}\n") == [("call-arity", 4, 10)]
    assert _diagnostics(head + "  output round()\n}\n") == [("call-arity", 4, 10)]
    with pytest.raises(SpecError, match="`clamp` takes 3 arguments, but 2 arguments given"):
        resolve(parse_source(Source("t.dp", head + "  output clamp(x, 0)\n}\n")))


def test_an_argument_that_is_not_a_number_is_located_at_the_argument():
    head = "mechanism m(x: real)\n  privacy 1\n{\n"
    assert _diagnostics(head + "  output ceil(x > 0)\n}\n") == [("type-mismatch", 4, 15)]
    assert _diagnostics(head + "  output clamp(x, 0, true)\n}\n") == [("type-mismatch", 4, 22)]


# -- z3 -------------------------------------------------------------------------------------------------------

DYADIC = st.builds(lambda m, e: Fraction(m, 2 ** e), st.integers(-2 ** 40, 2 ** 40), st.integers(0, 6))
"""Rationals that are doubles: the interpreter computes on exactly the number the checker reasons about."""


@settings(max_examples=300, deadline=None, derandomize=True)
@given(x=DYADIC, lo=DYADIC, hi=DYADIC)
def test_the_z3_terms_take_the_interpreters_values(x: Fraction, lo: Fraction, hi: Fraction):
    mech = mechanism("output (floor(x), ceil(x), round(x), clamp(x, lo, hi))", "x: real, lo: real, hi: real")
    with fresh_context():
        ev = ExprEval(Encoding(mech, {}, {}), {"x": zt.RealVal(x), "lo": zt.RealVal(lo), "hi": zt.RealVal(hi)}, {})
        terms = [z3.simplify(ev.arith(item)) for item in mech.body[0].value.items]
        args = {"x": float(x), "lo": float(lo), "hi": float(hi)}
        if lo > hi:
            # the interpreter stops; z3's value is a symbol no fact constrains
            assert error_of(mech, args)[0] == "math-domain"
            assert z3.is_const(terms[3]) and not z3.is_rational_value(terms[3])
            terms = terms[:3]
            mech = mechanism("output (floor(x), ceil(x), round(x))", "x: real")
            args = {"x": float(x)}
        values = [t.as_long() if z3.is_int_value(t) else Fraction(t.as_fraction()) for t in terms]
        assert tuple(values) == both(mech, args)[0]


def test_the_z3_terms_are_the_functions_for_every_real():
    mech = mechanism("output (floor(x), ceil(x), round(x))", "x: real")
    with fresh_context():
        x = zt.Real("x")
        ev = ExprEval(Encoding(mech, {}, {}), {"x": x}, {})
        f, c, r = (ev.arith(item) for item in mech.body[0].value.items)
        assert all(z3.is_int(t) for t in (f, c, r))
        solver = z3.Solver(ctx=zt.current())
        half = zt.RealVal(Fraction(1, 2))
        solver.add(z3.Not(zt.And(
            z3.ToReal(f) <= x, x < z3.ToReal(f) + 1, z3.ToReal(c) - 1 < x, x <= z3.ToReal(c),
            z3.ToReal(r) - half <= x, x <= z3.ToReal(r) + half,
            z3.Implies(z3.Or(x - z3.ToReal(r) == half, z3.ToReal(r) - x == half), r % 2 == 0))))
        assert solver.check() == z3.unsat
        # an int is its own floor, ceil and round: the same term
        ints = mechanism("output (floor(k), ceil(k), round(k))", "k: int")
        k = zt.Int("k")
        ev = ExprEval(Encoding(ints, {}, {}), {"k": k}, {})
        assert all(ev.arith(item).eq(k) for item in ints.body[0].value.items)


def _verify(tmp_path: Path, text: str, name: str = "spec.dp"):
    path = tmp_path / name
    path.write_text(text)
    return align.verify(str(path))


def _status(verdict, obligation: ObligationId) -> Status:
    return next(v.status for v in verdict.verdicts if v.obligation.id == obligation)


RELEASED = """mechanism released(q: real, eps: real)
  adjacent |q - q'| <= 1
  requires eps > 0
  privacy eps
{
  eta ~ Lap(1 / eps)
  output (floor(q + eta), ceil(q + eta), round(q + eta), clamp(q + eta, 0, 10))
}

alignment released {
  eta' = eta + q - q'
}
"""


def test_a_mechanism_releasing_each_function_is_proved_by_its_alignment_and_refuted_by_another(tmp_path: Path):
    assert _verify(tmp_path, RELEASED).status is Status.PROVED
    verdict = _verify(tmp_path, RELEASED.replace("eta + q - q'", "eta"))
    assert verdict.status is Status.REFUTED and _status(verdict, ObligationId.C4A) is Status.REFUTED


SCALED = """mechanism scaled(q: real, s: real, eps: real)
  adjacent |q - q'| <= 1
  requires eps > 0, s >= 1
  privacy eps
{
  eta ~ Lap(floor(s) / eps)
  output q + eta
}

alignment scaled {
  eta' = eta + q - q'
}
"""


@pytest.mark.parametrize("scale", ["floor(s)", "ceil(s)", "clamp(s, 1, 2)"])
def test_a_cost_coefficient_through_a_rounding_is_proved_and_a_doubled_shift_refuted(tmp_path: Path, scale: str):
    text = SCALED.replace("floor(s)", scale)
    assert _verify(tmp_path, text).status is Status.PROVED
    verdict = _verify(tmp_path, text.replace("eta + q - q'", "eta + 2 * (q - q')"))
    assert _status(verdict, ObligationId.C4C) is Status.REFUTED


def test_a_cost_coefficient_through_round_is_unknown_not_proved(tmp_path: Path):
    # sympy has no round of a symbol: the coefficient is not symbolic, and nothing is proved that needs it
    verdict = _verify(tmp_path, SCALED.replace("floor(s)", "round(s)"))
    assert _status(verdict, ObligationId.C4C) is Status.UNKNOWN
    assert verdict.status is not Status.PROVED


CLAIMED = """mechanism claimed(q: real, s: real, eps: real)
  adjacent |q - q'| <= 1
  requires eps > 0, s >= 1
  privacy eps * ceil(s)
{
  eta ~ Lap(1 / eps)
  output s * q + eta
}

alignment claimed {
  eta' = eta + s * (q - q')
}
"""


def test_a_claim_through_a_rounding_is_proved_where_it_holds_and_refuted_where_not(tmp_path: Path):
    assert _verify(tmp_path, CLAIMED).status is Status.PROVED
    verdict = _verify(tmp_path, CLAIMED.replace("ceil(s)", "floor(s)"))  # s = 1.5: cost 1.5 eps, claim eps
    assert verdict.status is Status.REFUTED and _status(verdict, ObligationId.C4C) is Status.REFUTED


def test_clamp_in_a_noise_parameter_needs_its_domain(tmp_path: Path):
    text = SCALED.replace("floor(s)", "clamp(s, 1, b)").replace("s: real,", "s: real, b: real,")
    verdict = _verify(tmp_path, text)
    c0 = next(v for v in verdict.verdicts if v.obligation.id == ObligationId.C0)
    assert c0.status is Status.REFUTED and "a lower end above the upper end" in c0.reason, c0
    assert _verify(tmp_path, text.replace("s >= 1", "s >= 1, b >= 1")).status is Status.PROVED


def test_clamp_in_the_alignment_needs_its_domain(tmp_path: Path):
    # the shift is q - q' wherever it has a value; clamp(q, 0, q') has none where q' < 0
    text = RELEASED.replace("output (", "output q + eta\n  z = (").replace("eta + q - q'",
                                                                          "eta + q - q' + 0 * clamp(q, 0, q')")
    verdict = _verify(tmp_path, text)
    c4a = next(v for v in verdict.verdicts if v.obligation.id == ObligationId.C4A)
    assert c4a.status is Status.REFUTED and "with its lower end above its upper end" in c4a.reason, c4a
    assert c4a.counterexample is not None and c4a.counterexample.replay["confirmed"], c4a


# -- sympy ------------------------------------------------------------------------------------------------------


def test_sympy_has_floor_ceil_and_clamp_and_says_round_is_not_symbolic():
    x, y = sympy.Symbol("x", real=True), sympy.Symbol("y", real=True)
    assert to_sympy(parse_expression("floor(x) + ceil(y)")) == sympy.floor(x) + sympy.ceiling(y)
    assert show(to_sympy(parse_expression("eps / ceil(s)"))) == "eps/ceil(s)"
    assert to_sympy(parse_expression("clamp(x, 0, 1)")) == sympy.Min(sympy.Max(x, 0), 1)
    with pytest.raises(NotSymbolic):
        to_sympy(parse_expression("round(x)"))
    with fresh_context():
        value = to_z3(sympy.floor(x) - sympy.ceiling(y), lambda name: zt.RealVal(Fraction(-5, 2)), None)
        assert z3.simplify(value).as_long() == -3 - -2
