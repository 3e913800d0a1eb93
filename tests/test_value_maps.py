"""The rule of value maps (rules.ValueMaps, docs/checker.md "Value maps"): noise with finitely many values aligned by
a map of its values, at the exact cost ln P[g⁻¹(g(b))] − ln P[g(b)]."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy

from align.checker.options import Options
from align.checker.verify import overall_status, verify_mechanism
from align.distributions import DISTRIBUTIONS
from align.interp.noise import map_cost
from align.obligations import map_cost_leaves
from align.parse import parse_source
from align.resolve import resolve
from align.rules import ValueMaps, rule_for
from align.span import Source
from align.status import Status

RR = """
mechanism rr(x: int, eps: real)
  adjacent |x - x'| <= 1
  requires eps > 0
  privacy CLAIM
{
  p = exp(eps) / (1 + exp(eps))
  keep ~ Bernoulli(p)
  bit = clamp(x, 0, 1)
  output keep == 1 ? bit : 1 - bit
}

alignment rr {
  keep' = clamp(x, 0, 1) == clamp(x', 0, 1) ? keep : 1 - keep
}
"""

RR_LOOP = """
mechanism rr_all(q: int[], eps: real)
  adjacent |q[i] - q'[i]| <= 1, count q[i] != q'[i] <= 1
  requires eps > 0
  privacy eps
{
  p = exp(eps) / (1 + exp(eps))
  for i in 0 .. len(q) {
    keep ~ Bernoulli(p)
    bit = clamp(q[i], 0, 1)
    output keep == 1 ? bit : 1 - bit
  }
}

alignment rr_all {
  keep[i]' = clamp(q[i], 0, 1) == clamp(q'[i], 0, 1) ? keep[i] : 1 - keep[i]
}
"""


def _mech(text: str):
    return resolve(parse_source(Source("t.dp", text))).mechanisms[0]


def test_the_flip_of_randomized_response_costs_exactly_eps():
    mech = _mech(RR.replace("CLAIM", "eps"))
    leaves = map_cost_leaves(mech.noise[0], {"p": sympy.exp(sympy.Symbol("eps", real=True)) /
                                                  (1 + sympy.exp(sympy.Symbol("eps", real=True)))})
    assert leaves is not None
    eps = sympy.Symbol("eps", real=True)
    # the value 1 mapped alone onto 0, and 0 alone onto 1: ln(p/(1-p)) = eps and its negation
    assert sympy.simplify(leaves[frozenset({1}), 0] - eps) == 0
    assert sympy.simplify(leaves[frozenset({0}), 1] + eps) == 0
    # both values onto one: ln(1/P[target])
    assert sympy.simplify(leaves[frozenset({0, 1}), 1] - sympy.log(1 + sympy.exp(-eps))) == 0


def test_the_numeric_cost_is_the_preimage_mass_over_the_target():
    bernoulli = DISTRIBUTIONS["Bernoulli"]
    # a flip of Bernoulli(3/4) from 1 to 0: ln(3/4) - ln(1/4) = ln 3
    assert map_cost(bernoulli, (0.75,), np.array([0.0]), [np.array([1.0]), np.array([0.0])])[0] == \
        pytest.approx(math.log(3))
    # both values of a fair coin onto 1: ln 1 - ln(1/2) = ln 2, where a bijection's formula would give 0
    assert map_cost(bernoulli, (0.5,), np.array([1.0]), [np.array([1.0]), np.array([1.0])])[0] == \
        pytest.approx(math.log(2))
    # onto a value of probability 0: an infinite cost
    assert map_cost(bernoulli, (1.0,), np.array([0.0]), [np.array([1.0]), np.array([0.0])])[0] == math.inf


@pytest.mark.parametrize(("claim", "status"), [("eps", Status.PROVED), ("eps * 0.99", Status.REFUTED)])
def test_randomized_response_is_proved_at_eps_and_refuted_below(claim: str, status: Status):
    mech = _mech(RR.replace("CLAIM", claim))
    assert isinstance(rule_for(mech), ValueMaps)
    verdicts = verify_mechanism(mech, Options(max_length=2))
    assert overall_status(verdicts) == status
    if status == Status.REFUTED:
        refuted = [v for v in verdicts if v.status == Status.REFUTED]
        assert [v.obligation.name for v in refuted] == ["C4c"]
        assert refuted[0].counterexample is not None
    assert not any(v.obligation.name == "C3" for v in verdicts), "a mapped variable needs no Lipschitz constant"


def test_a_value_map_in_a_loop_is_checked_length_by_length_and_says_so():
    verdicts = verify_mechanism(_mech(RR_LOOP), Options(max_length=3))
    assert overall_status(verdicts) == Status.BOUNDED
    c4c = next(v for v in verdicts if v.obligation.name == "C4c")
    assert c4c.scope == "for lengths <= 3"
    assert any("maps the values of keep[i]" in note for note in c4c.notes)


def test_identity_keeps_lemma_1():
    mech = _mech(RR.replace("CLAIM", "eps").replace("clamp(x, 0, 1) == clamp(x', 0, 1) ? keep : 1 - keep", "keep"))
    assert not isinstance(rule_for(mech), ValueMaps)


def test_categorical_draws_as_numpy_choice_with_normalised_weights():
    categorical = DISTRIBUTIONS["Categorical"]
    weights = (math.e, 1.0, 1.0, 1.0)
    values = categorical.draw(np.random.default_rng(7), weights, 200_000)
    reference = np.random.default_rng(8).choice(4, size=200_000, p=np.array(weights) / sum(weights))
    ours, theirs = np.bincount(values, minlength=4) / 200_000, np.bincount(reference, minlength=4) / 200_000
    # 200 000 draws: each frequency within 5 standard errors (sd <= 0.0012) of the other sample's
    assert np.all(np.abs(ours - theirs) < 0.006), (ours, theirs)
    # a weight left out is 0: its value is never drawn, here nor in the omitted fourth place
    sparse = categorical.draw(np.random.default_rng(1), (0.5, 0.0, 0.5, 0.0), 10_000)
    assert set(np.unique(sparse)) == {0, 2}
    assert categorical.full_params((0.25, 0.25, 0.5)) == (0.25, 0.25, 0.5, 0.0)


K_ARY = """
mechanism k_ary(x: int in 0 .. 4, eps: real)
  adjacent |x - x'| <= 3
  requires eps > 0
  privacy CLAIM
{
  u ~ Categorical(exp(eps), 1, 1, 1)
  output (x + u) % 4
}

alignment k_ary {
  u' = (x - x' + u) % 4
}
"""


@pytest.mark.parametrize(("claim", "status"), [("eps", Status.PROVED), ("eps * 0.99", Status.REFUTED)])
def test_k_ary_randomized_response_is_proved_at_eps_and_refuted_below(claim: str, status: Status):
    verdicts = verify_mechanism(_mech(K_ARY.replace("CLAIM", claim)), Options(max_length=1))
    assert overall_status(verdicts) == status
    if status == Status.REFUTED:
        assert [v.obligation.name for v in verdicts if v.status == Status.REFUTED] == ["C4c"]


def test_a_left_out_weight_is_no_target_and_adds_nothing_to_a_preimage():
    mech = _mech(RR.replace("CLAIM", "ln(3)").replace("Bernoulli(p)", "Categorical(1 / 4, 3 / 4)"))
    leaves = map_cost_leaves(mech.noise[0], {"p": sympy.Integer(0)})
    assert leaves is not None
    assert all(k in (0, 1) for _, k in leaves)  # values 2 and 3 have probability 0
    assert float(leaves[frozenset({1}), 0]) == pytest.approx(math.log(3))
    assert float(leaves[frozenset({1, 3}), 0]) == pytest.approx(math.log(3))
    assert float(leaves[frozenset({0, 1, 2}), 1]) == pytest.approx(math.log(4 / 3))
