"""The cost coefficients `align check` computes without sympy (align/monomials.py) are sympy's, text for text.

`obligations.coefficient_texts` takes the product-of-powers path whenever it answers; sympy (`cost_coefficient`,
then `show`) is the reference. Both are compared on every coefficient of the corpus and on generated
expressions; the corpus test also pins which coefficients leave the fragment (so a regression that sends every
coefficient to sympy, slow but correct, fails too).
"""

from __future__ import annotations

import glob
import os
import random
from fractions import Fraction

import pytest

from align import monomials as m
from align import pipeline
from align.diagnostics import SpecError
from align.obligations import _monomial_texts, constant_bindings, cost_coefficient
from align.symbolic import show

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _sympy_texts(mech, site) -> tuple[str | None, str | None]:
    local = cost_coefficient(site)
    expanded = cost_coefficient(site, constant_bindings(mech))
    return (None if local is None else show(local), None if expanded is None else show(expanded))


def _corpus_sites():
    """Every cost coefficient of the corpus and of specs/peers/ (other projects' programs as they write them)."""
    for path in sorted(glob.glob(os.path.join(ROOT, "specs", "**", "*.dp"), recursive=True)):
        try:
            spec = pipeline.load(path)
        except SpecError:
            continue
        for mech in spec.mechanisms:
            for site in mech.noise:
                if site.distribution.cost is not None:
                    yield os.path.relpath(path, ROOT), mech, site


def test_every_corpus_coefficient_in_the_fragment_is_printed_as_sympy_prints_it():
    outside = set()
    answered = 0
    for path, mech, site in _corpus_sites():
        quick = _monomial_texts(mech, site)
        if quick is None:
            outside.add((path, site.name))
            continue
        answered += 1
        assert quick == _sympy_texts(mech, site), (path, site.name)
    # the peers' scales are theirs (sums and differences of parameters: `(max_value - min_value) / eps`); the
    # corpus's own are pinned below
    outside = {(path, name) for path, name in outside if not path.startswith(os.path.join("specs", "peers"))}
    # scales that read the data or the state (abs, max, len, a conditional, a counter: only the incorrect specs
    # have them): sympy's
    assert outside == {
        ("specs/incorrect/counter_template_scale_reads_counter.dp", "nu"),
        ("specs/incorrect/fixed_entries_scale_reads_length.dp", "eta"),
        ("specs/incorrect/laplace_scale_reads_data.dp", "eta"),
        ("specs/incorrect/laplace_scale_reads_range.dp", "eta"),
        ("specs/incorrect/noisy_count_scale_reads_length.dp", "eta"),
        ("specs/incorrect/scale_reads_shifted_noise.dp", "w"),
    }
    assert answered >= 120


# ------------------------------------------------------------------------------------ generated expressions

NAMES = ("a", "b", "eps", "k", "theta", "T", "c1")
DISTRIBUTIONS = ("Lap({})", "Exp({})", "DLap({})", "Logistic(0, {})", "Staircase({}, 0.5)", "Geo(1 - exp(-{}))",
                 "Geo({})")
SPEC = """mechanism m(q: real, a: real, b: real, eps: real, k: int, theta: real, T: real)
  adjacent |q - q'| <= 1
  privacy eps
{{
  c1 = {constant}
  x ~ {distribution}
  output q + x
}}
"""


def _any_expression(rng: random.Random, depth: int) -> str:
    """Random arithmetic, exp and ln over the parameters, the constant c1 and small numbers (sympy's automatic
    evaluation and simplify meet every rule of the fragment here: signs, like factors, a number times a sum, ln of
    exp)."""
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(NAMES + ("0", "1", "2", "3", "4", "0.5", "1.5"))
    r = rng.random()
    if r < 0.1:
        return f"{rng.choice(('exp', 'ln'))}({_any_expression(rng, depth - 1)})"
    if r < 0.7:
        return f"({_any_expression(rng, depth - 1)} {rng.choice('+-*/')} {_any_expression(rng, depth - 1)})"
    if r < 0.85:
        return f"({_any_expression(rng, depth - 1)} ^ {rng.randint(-3, 3)})"
    return f"(-{_any_expression(rng, depth - 1)})"


def _product_with_a_sum(rng: random.Random) -> str:
    """A product of powers with one factor `c - x`, in any order, maybe under a division: the corpus's shape
    (`(1 - theta) * eps / k`), most of which the fragment answers."""
    factors = [rng.choice(("1", "2", "3", "0.5", "0.25", "3 / 4"))]
    factors += [f"{x} ^ {rng.choice((-2, -1, 1, 1, 2, 3))}" for x in rng.sample(NAMES, rng.randint(0, 4))]
    factors.append(f"({rng.randint(1, 4)} - {rng.choice(NAMES)})")
    rng.shuffle(factors)
    product = " * ".join(factors)
    return rng.choice((product, f"1 / ({product})", f"{rng.choice(NAMES)} / ({product})"))


@pytest.mark.parametrize("seed", [0, *(pytest.param(seed, marks=pytest.mark.slow) for seed in range(1, 4))])
def test_generated_coefficients_agree_with_sympy(seed):
    rng = random.Random(seed)
    answered = geometric = 0
    for _ in range(300):
        constant = rng.choice(("theta * eps", "(1 - theta) * eps / k", _any_expression(rng, 3)))
        argument = _any_expression(rng, 4) if rng.random() < 0.6 else _product_with_a_sum(rng)
        distribution = rng.choice(DISTRIBUTIONS)
        text = SPEC.format(constant=constant, distribution=distribution.format(argument))
        try:
            mech = pipeline.load_text(text).mechanisms[0]
        except SpecError:  # a constant division by zero, a parameter requirement folded false ...
            continue
        site = mech.noise[0]
        quick = _monomial_texts(mech, site)
        if quick is not None:
            answered += 1
            geometric += distribution.startswith("Geo")
            assert quick == _sympy_texts(mech, site), text
    assert answered >= 60 and geometric >= 3  # 74-95 and 4-10 for these seeds


# ------------------------------------------------------------------------------------ the algebra itself


def test_a_number_times_a_lone_sum_is_left_to_sympy_which_distributes_it():
    x = m.Monomial(Fraction(1), (("theta", 1),))
    assert (1 - x).text() == "1 - theta"
    assert (-(1 - x)).text() == "-1 + theta"
    with pytest.raises(m.Outside):
        _ = 2 * (1 - x)
    assert (x * (1 - x) / 4).text() == "theta*(1 - theta)/4"


def test_ln_cancels_exp_and_nothing_else():
    x = m.Monomial(Fraction(1), (("eps0", 1),))
    p = 1 - m.Monomial(Fraction(1), ((m.Exp(-x), 1),))  # a geometric coin's 1 - exp(-eps0)
    assert m.FIELD.ln(m.FIELD.one - p) == -x
    with pytest.raises(m.Outside):
        m.FIELD.ln(x)
    with pytest.raises(m.Outside):
        p.settled()  # an exp that is left is never printed here
