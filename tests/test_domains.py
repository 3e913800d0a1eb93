"""Declared domains of parameters, `x: int in lo .. hi` (docs/language.md 4.1): the integers lo, ..., hi - 1 of the
value or of every entry, on D and on D'. Each back end assumes it where it states the inputs, and each is shown to
need it: the same mechanism without the domain is refuted."""

from __future__ import annotations

import pytest

from align.checker.options import Options
from align.checker.stops import hazards
from align.checker.verify import overall_status, verify_mechanism
from align.diagnostics import SpecError
from align.interp.runner import prepare_arguments, prepare_neighbour
from align.parse import parse_source
from align.resolve import resolve
from align.span import Source
from align.stats.lrtest import input_pairs
from align.status import Status
from align.unparse import unparse_mechanism

RR = """
mechanism rr(x: int DOMAIN, eps: real)
  adjacent |x - x'| <= 1
  requires eps > 0
  privacy eps
{
  p = exp(eps) / (1 + exp(eps))
  keep ~ Bernoulli(p)
  output keep == 1 ? x : 1 - x
}

alignment rr {
  keep' = x == x' ? keep : 1 - keep
}
"""

# induction: the count clause lets one entry change, by at most 1 within the domain {0, 1}
BITS = """
mechanism bits(q: int[] DOMAIN, eps: real)
  adjacent count q[i] != q'[i] <= 1
  requires eps > 0
  privacy eps
{
  for i in 0 .. len(q) {
    eta ~ Lap(1 / eps)
    output q[i] + eta
  }
}

alignment bits {
  eta[i]' = eta[i] + q[i] - q'[i]
}
"""

# the ranking encoding (quantified over the entries): the clause allows 7, the domain 1
NOISY_MAX = """
mechanism noisy_max(q: int[] DOMAIN, eps: real)
  adjacent |q[i] - q'[i]| <= 7
  requires eps > 0, len(q) >= 2
  privacy eps
{
  for i in 0 .. len(q) {
    eta ~ Lap(2 / eps)
    noisy[i] = q[i] + eta
  }
  output argmax(noisy)
}

alignment noisy_max {
  let m = max(l not in [out[0]]: q[l] + eta[l])
  let m' = max(l not in [out[0]]: q'[l] + eta[l])
  eta[i]' = eta[i] + (i in [out[0]] ? q[i] - q'[i] + m' - m : 0)
}
"""

# add/remove-one-record: the records view bounds the record that q and q' do not share
BIT_SUM = """
mechanism bit_sum(q: int[] DOMAIN, eps: real)
  adjacent len(q') = len(q) +- 1
  requires eps > 0
  privacy eps
{
  eta ~ Lap(1 / eps)
  output sum(l in 0 .. len(q): q[l]) + eta
}

alignment bit_sum {
  eta' = eta + sum(l in 0 .. len(q): q[l]) - sum(l in 0 .. len(q'): q'[l])
}
"""


def _mech(text: str, domain: str = "in 0 .. 2"):
    return resolve(parse_source(Source("t.dp", text.replace("DOMAIN", domain)))).mechanisms[0]


@pytest.mark.parametrize(("text", "scope"), [(RR, "for all inputs"), (BITS, "for every input length"),
                                             (NOISY_MAX, "for every input length"),
                                             (BIT_SUM, "for every input length")],
                         ids=["scalar", "induction", "ranking", "records"])
def test_each_back_end_assumes_the_domain_and_needs_it(text: str, scope: str):
    verdicts = verify_mechanism(_mech(text), Options(max_length=3))
    assert overall_status(verdicts) == Status.PROVED
    assert all(v.scope in (scope, "by construction") for v in verdicts if v.status == Status.PROVED)
    # without the domain the neighbours move further, and the same alignment is refuted on a counterexample
    verdicts = verify_mechanism(_mech(text, domain=""), Options(max_length=3))
    assert overall_status(verdicts) == Status.REFUTED
    assert any(v.counterexample is not None for v in verdicts if v.status == Status.REFUTED)


def test_a_counterexample_stays_in_the_domain():
    mech = _mech(RR.replace("privacy eps", "privacy eps / 2"))
    verdicts = verify_mechanism(mech, Options(max_length=2))
    refuted = [v for v in verdicts if v.status == Status.REFUTED]
    assert refuted and all(v.counterexample is not None for v in refuted)
    for v in refuted:
        assert v.counterexample is not None
        assert v.counterexample.args["x"] in (0, 1) and v.counterexample.neighbour["x"] in (0, 1)


def test_a_domain_end_may_read_a_public_parameter():
    text = RR.replace("eps: real)", "eps: real, k: int)").replace("requires eps > 0", "requires eps > 0, k >= 2")
    mech = _mech(text, "in 0 .. k")
    # x = 2 and x' = 1 are in the domain for k = 3, and there the alignment's 1 - x is -1 against 1 - 1 = 0
    assert overall_status(verify_mechanism(mech, Options(max_length=1))) == Status.REFUTED
    verdicts = verify_mechanism(_mech(text.replace("k >= 2", "k == 2"), "in 0 .. k"), Options(max_length=1))
    assert {v.obligation.name: v.status for v in verdicts}["C4c"] == Status.PROVED
    # (C4a is unknown: `1 - x` with x below a public k has no magnitude bound for the runtime-error analysis)
    assert overall_status(verdicts) == Status.UNKNOWN


def test_an_empty_domain_leaves_no_neighbours():
    verdicts = verify_mechanism(_mech(RR, "in 1 .. 1"), Options(max_length=1))
    adj = next(v for v in verdicts if v.obligation.name == "ADJ")
    assert adj.vacuous and overall_status(verdicts) == Status.UNKNOWN


def test_the_interpreter_rejects_values_outside_the_domain_with_a_location():
    mech = _mech(BITS)
    args = prepare_arguments(mech, {"q": [0, 1, 1], "eps": 1.0})
    with pytest.raises(SpecError) as error:
        prepare_arguments(mech, {"q": [0, 2, 1], "eps": 1.0})
    d = error.value.diagnostics[0]
    assert d.code == "outside-domain" and d.message == "q[1] = 2 is outside the domain of `q`, 0 .. 2"
    assert d.span is not None and (d.span.line, d.span.column) == (2, 28)
    with pytest.raises(SpecError) as error:
        prepare_neighbour(mech, args, {"q": [0, 1, -1]})
    assert error.value.diagnostics[0].message == "q'[2] = -1 is outside the domain of `q`, 0 .. 2"
    assert prepare_neighbour(mech, args, {"q": [0, 1, 0]}) == {"q": [0, 1, 0]}


def test_align_test_generates_pairs_inside_the_domain():
    for text in (RR, BITS, NOISY_MAX):
        mech = _mech(text)
        pairs = input_pairs(mech, {"eps": 1.0}, 5)
        assert pairs
        for pair in pairs:
            assert pair.d != pair.d_prime
            for values in (pair.d, pair.d_prime):
                for value in values.values():
                    assert all(v in (0, 1) for v in (value if isinstance(value, list) else [value]))


def test_a_bounded_private_int_is_no_overflow_hazard():
    assert any("64-bit" in h.text for h in hazards(_mech(RR, "")))
    assert hazards(_mech(RR)) == []


def test_unparse_writes_the_domain_back():
    text = RR.replace("DOMAIN", "in 0 .. k + 1").replace("eps: real)", "eps: real, k: int)")
    node = parse_source(Source("t.dp", text)).mechanisms[0]
    again = parse_source(Source("u.dp", unparse_mechanism(node) + "\n")).mechanisms[0]
    assert "x: int in 0 .. k + 1" in unparse_mechanism(node)
    assert unparse_mechanism(again) == unparse_mechanism(node)
