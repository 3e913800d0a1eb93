"""Obligation C0 — each noise variable has one fixed density in both runs — and the other hypotheses a proof
must check (docs/checker.md, "What a proof assumes"): every sampling site's parameters are equal on (D, H) and
(D', φ(H)) and well formed; side conditions do not make assumptions vacuous; ties are excluded only where they
have probability 0."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from align.checker.verify import Options, overall_status, verify_mechanism
from align.distributions import DISTRIBUTIONS
from align.parse import parse_source, read_source
from align.resolve import resolve
from align.smt import terms as zt
from align.smt.encode import Encoding, _generic
from align.smt.solver import fresh_context
from align.span import Source

ROOT = Path(__file__).resolve().parent.parent
C0_SPECS = {
    # spec -> the site whose density differs or is not one
    "randomized_response_private_bias": "c",
    "laplace_scale_reads_data": "eta",
    "laplace_scale_reads_range": "eta",
    "uniform_bounds_read_data": "u",
    "point_location_reads_data": "z",
    "scale_reads_shifted_noise": "w",
    "laplace_negative_scale": "eta",
    "svt_gap_theta_closed": "eta",
    "r2dp_scale_reads_data": "u",
}


def _mech(text: str):
    return resolve(parse_source(Source("test.dp", text))).mechanisms[0]


def _verdicts(mech, max_length: int = 2):
    return {(v.obligation.id, v.obligation.site): v for v in verify_mechanism(mech, Options(max_length=max_length))}


@pytest.mark.parametrize("name", sorted(C0_SPECS))
def test_each_class_is_refused_by_c0_with_the_two_parameter_values(name: str):
    mech = resolve(parse_source(read_source(str(ROOT / "specs" / "incorrect" / f"{name}.dp")))).mechanisms[0]
    verdicts = _verdicts(mech, 3)
    v = verdicts[("C0", C0_SPECS[name])]
    assert v.status == "refuted", (v.status, v.reason)
    assert v.counterexample is not None
    cex = v.counterexample.to_json()
    assert cex["obligation"] == "C0" and cex["parameters"]["site"].startswith(C0_SPECS[name])
    assert len(cex["parameters"]["on_D"]) == len(cex["parameters"]["on_D_prime_aligned"]) >= 1
    # the interpreter sees the same thing: it refuses the parameters, or they differ between its two runs
    assert cex["replay"]["confirmed"], cex["replay"]


@pytest.mark.slow
def test_every_distribution_requirement_is_checked_both_ways():
    """For each distribution, one mechanism with well-formed public parameters (C0 proved) and one whose
    parameters break a requirement for some value `requires` allows (C0 refuted)."""
    good = {"Lap": "1 / eps", "Exp": "1 / eps", "Geo": "1 - exp(-eps)", "DLap": "eps", "Staircase": "eps, 1 / 2",
            "Logistic": "0, 1 / eps", "Gumbel": "0, 1 / eps", "Uniform": "0, eps", "Gamma": "2, eps",
            "Bernoulli": "1 / 2", "Categorical": "exp(eps), 1, 0", "Point": "eps", "Normal": "0, eps",
            "TruncNormal": "0, eps, -1, 1"}
    bad = {"Lap": "eps - 1", "Exp": "-eps", "Geo": "eps", "DLap": "0 * eps", "Staircase": "eps, eps",
           "Logistic": "0, eps - 1", "Gumbel": "0, -eps", "Uniform": "eps, 0", "Gamma": "eps - 1, 1",
           "Bernoulli": "eps", "Categorical": "1, 1 - eps", "Normal": "0, -eps", "TruncNormal": "0, eps, 1, -1"}
    assert set(good) == set(DISTRIBUTIONS) and set(bad) == {d for d in DISTRIBUTIONS if DISTRIBUTIONS[d].requirements}
    for name in DISTRIBUTIONS:
        for args, expected in ((good[name], "proved"), (bad.get(name), "refuted")):
            if args is None:
                continue
            mech = _mech(f"mechanism m(q: real, eps: real)\n  adjacent |q - q'| <= 1\n  requires eps > 0\n"
                         f"  privacy eps\n{{\n  x ~ {name}({args})\n  output q\n}}\n")
            v = _verdicts(mech)[("C0", "x")]
            assert v.status == expected, (name, args, v.status, v.reason)


def test_a_parameter_equal_in_both_runs_is_allowed_even_when_it_reads_data():
    """Adaptive composition: a scale chosen from what was released (here from the branch the output shows)
    reads the data and noise, but is equal in both runs; only a value that differs breaks C0."""
    mech = _mech("""
mechanism adaptive(q: real, eps: real)
  adjacent |q - q'| <= 1
  requires eps > 0
  privacy 2 * eps
{
  eta ~ Lap(1 / eps)
  if q + eta >= 0 { output TOP; s = 1 } else { output BOT; s = 2 }
  w ~ Lap(s / eps)
  output OTHER(q + w)
}
alignment adaptive {
  eta' = eta + q - q'
  w' = w + q - q'
}
""")
    verdicts = _verdicts(mech)
    assert verdicts[("C0", "w")].status == "proved"
    assert overall_status(list(verdicts.values())) == "proved"


def test_the_mixture_rule_applies_c0_to_the_laplace_scale():
    mech = _mech("""
mechanism mix(q: real, k: real, theta: real, dq: real)
  adjacent |q - q'| <= dq
  requires k > 0, theta > 0, dq > 0
  privacy (k + 1) * ln(1 + dq * theta)
{
  u ~ Gamma(k, theta)
  w ~ Lap(1 / u + abs(q))
  output q + w
}
""")
    assert mech.mixture_sites
    verdicts = _verdicts(mech)
    assert verdicts[("C0", "u")].status == "proved"
    assert verdicts[("C0", "w")].status == "refuted"
    assert "another density" in verdicts[("C0", "w")].reason


def test_a_division_by_zero_that_requires_allows_is_not_a_density():
    mech = _mech("mechanism m(q: real, a: real, eps: real)\n  adjacent |q - q'| <= 1\n  requires eps > 0, a >= 0\n"
                 "  privacy eps\n{\n  x ~ Lap(1 / (a * eps))\n  output q + x\n}\n"
                 "alignment m {\n  x' = x + q - q'\n}\n")
    v = _verdicts(mech)[("C0", "x")]
    assert v.status == "refuted" and "division by" in v.reason
    assert v.counterexample is not None and v.counterexample.args["a"] == 0


@pytest.mark.parametrize("values,generic", [
    (("q0 + e0", "q1 + e1"), True),            # each value has a noise of its own, with coefficient 1
    (("q0 + 2 * e0", "q1 - e1"), True),
    (("0 * e0", "0 * e1"), False),              # the noise cancels: the values are equal constants
    (("e0 - e0 + q0", "q1 + e1"), False),
    (("q0 + e0", "q1 + e0"), False),            # one noise in both values: the difference is q0 - q1
    (("q0 + p0", "q1 + p1"), False),            # Point noise has no density
    (("q0 + g0", "q1 + g1"), False),            # integer-valued noise ties with positive probability
])
def test_ties_are_excluded_only_when_they_have_probability_0(values, generic):
    mech = _mech("mechanism m(q: real, eps: real)\n  adjacent |q - q'| <= 1\n  privacy eps\n{\n"
                 "  e0 ~ Lap(1)\n  e1 ~ Lap(1)\n  p0 ~ Point(0)\n  p1 ~ Point(0)\n  g0 ~ Geo(1 / 2)\n"
                 "  g1 ~ Geo(1 / 2)\n  output q\n}\n")
    with fresh_context():
        enc = Encoding(mech, {}, {})
        symbols = {name: enc.noise_symbol(name, None, mech.site(name).distribution.integer)
                   for name in ("e0", "e1", "p0", "p1", "g0", "g1")}
        symbols.update(q0=zt.Real("q0"), q1=zt.Real("q1"))
        terms = tuple(eval(v, {}, dict(symbols)) for v in values)
        assert _generic(terms, enc) == generic


def test_a_sqrt_side_condition_holds_only_where_the_root_exists():
    """s*s = x for x < 0 has no model; stated unconditionally it made every assumption false."""
    mech = _mech("mechanism m(q: real, t: real, eps: real)\n  adjacent |q - q'| <= 1\n  privacy eps\n{\n"
                 "  if t > t + 1 { d = sqrt(-1 - abs(t)) }\n  output q\n}\n")
    verdicts = _verdicts(mech)
    assert verdicts[("C4a", None)].status == "refuted"


@pytest.mark.slow
def test_structural_integers_are_part_of_the_scope():
    mech = resolve(parse_source(read_source(str(ROOT / "specs/incorrect/repeated_answer_loop_bound.dp")))).mechanisms[0]
    verdicts = verify_mechanism(mech, Options(max_length=3))
    assert overall_status(verdicts) == "bounded"
    assert {v.scope for v in verdicts if v.status == "bounded"} == {"for 0 <= m <= 4"}
    # a larger bound covers larger m, and finds the violation at m = 6
    verdicts = verify_mechanism(mech, Options(max_length=5))
    assert overall_status(verdicts) == "refuted"
    cex = next(v.counterexample for v in verdicts if v.status == "refuted")
    assert cex is not None and cex.args["m"] == 6 and Fraction(str(cex.claim)) < 6 * Fraction(str(cex.args["eps"]))


def test_the_interpreter_never_wraps_an_integer_the_checker_reasons_about_exactly():
    from align.diagnostics import SpecError
    from align.interp.runner import chunks, prepare_arguments
    from align.interp.scalar import Interpreter, NoiseValues

    mech = resolve(parse_source(read_source(str(ROOT / "tests/interp/integer_wraparound.dp")))).mechanisms[0]
    verdicts = verify_mechanism(mech, Options())
    # exact integers: the output is always 1; but the run stops at q = 1 and not at q = 0, an outcome the proof of the
    # outputs does not cover (checker/stops.py): unknown, with the place named
    assert overall_status(verdicts) == "unknown"
    c4a = next(v for v in verdicts if v.obligation.id == "C4a")
    assert "may leave the 64-bit range of integers" in c4a.reason, c4a.reason
    assert [list(c.outputs.value(0)) for c in chunks(mech, prepare_arguments(mech, {"q": 0, "eps": 1}), 4, seed=0)] \
        == [[1]]
    for run in (lambda args: list(chunks(mech, args, 4, seed=0)),
                lambda args: Interpreter(mech, NoiseValues(mech, {}), trace=False).run(args)):
        with pytest.raises(SpecError) as info:
            run(prepare_arguments(mech, {"q": 1, "eps": 1}))  # 2 * 2^62 leaves the 64-bit range
        assert [d.code for d in info.value.diagnostics] == ["integer-overflow"]
