"""The distribution registry: a distribution added in one place (this file) works in every command.

`Sech(a)` is the hyperbolic secant distribution with rate a, density (a/π) sech(a x) on ℝ (a toy here, but a
real distribution): |d/dx ln f| = a |tanh(a x)| <= a, so its cost coefficient is a (Free Gap, Definition 7),
and X = ln(tan(πU/2)) / a for U ~ Uniform(0, 1) draws it (its CDF is (2/π) arctan(e^{a x})). Nothing outside
this file mentions it: `check` prints its cost, `run` samples it, `verify` proves (and refutes) with it, and
`test` finds the violation of a variant whose noise is too small.
"""

from __future__ import annotations

import io
import json
import math
import pickle
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from align.cli import main
from align.distributions import DISTRIBUTIONS, Distribution, Field, Requirement, Support, register
from align.distributions import Param as P
from align.parse import parse_source, read_source
from align.resolve import resolve


def _draw_sech(gen: np.random.Generator, p: tuple, size: int) -> np.ndarray:
    return np.log(np.tan(np.pi * gen.random(size) / 2)) / p[0]


def _log_sech(z: np.ndarray, p: tuple) -> np.ndarray:
    a = p[0]
    return math.log(a / math.pi) - (np.logaddexp(a * z, -a * z) - math.log(2.0))


def _cost_sech(a: tuple, f: Field) -> object:
    return a[0]


SECH = Distribution("Sech", ("a",), "ℝ", "(a/π) sech(a x)", (1.0,), _draw_sech, _cost_sech,
                    cost_note="|d/dx ln f| = a |tanh(a x)| <= a", source="tests/test_registry.py",
                    requirements=(Requirement(0, "positive", ((P(0), ">", 0),)),), log_density=_log_sech)

SPEC = """# A Laplace-style mechanism with hyperbolic secant noise (tests/test_registry.py).
mechanism sech_count(q: real, eps: real)
  adjacent |q - q'| <= 1
  requires eps > 0
  privacy eps
{{
  eta ~ Sech({rate})
  output q + eta
}}

alignment sech_count {{
  eta' = eta + (q - q')
}}
"""


@pytest.fixture
def sech():
    register(SECH)
    try:
        yield SECH
    finally:
        del DISTRIBUTIONS["Sech"]


def _spec(tmp_path: Path, rate: str) -> str:
    path = tmp_path / f"sech_{len(list(tmp_path.iterdir()))}.dp"
    path.write_text(SPEC.format(rate=rate), encoding="utf-8")
    return str(path)


def _main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def test_an_unregistered_distribution_is_a_located_error(tmp_path):
    code, _, err = _main("check", _spec(tmp_path, "eps"))
    assert code == 2 and "error[unknown-distribution]" in err and "sech_0.dp:7:" in err


def test_check_prints_its_cost_coefficient(sech, tmp_path):
    code, out, err = _main("check", "--output-format", "json", _spec(tmp_path, "eps"))
    assert code == 0, err
    (site,) = json.loads(out)["files"][0]["mechanisms"][0]["sampling_sites"]
    assert (site["distribution"], site["lipschitz"], site["cost_coefficient"]) == ("Sech", True, "eps")


def test_run_samples_it_with_its_own_sampler(sech, tmp_path):
    code, out, err = _main("run", _spec(tmp_path, "2"), "--arg", "q=0.5", "--arg", "eps=1", "--samples", "20000",
                           "--seed", "3", "--format", "json")
    assert code == 0, err
    noise = np.asarray([row[0] for row in json.loads(out)["outputs"]], dtype=float) - 0.5
    # Kolmogorov–Smirnov against the CDF (2/π) arctan(e^{2x}); a correct sampler fails at the fixed seed with
    # probability 1e-3.
    assert stats.kstest(noise, lambda x: 2 / np.pi * np.arctan(np.exp(2 * x))).pvalue > 1e-3


def test_verify_proves_with_it_and_refutes_too_little_noise(sech, tmp_path):
    code, out, err = _main("verify", _spec(tmp_path, "eps"))
    assert code == 0 and "proved — ε-differentially private (for all inputs)" in out, out + err
    code, out, err = _main("verify", "--output-format", "json", _spec(tmp_path, "2 * eps"))
    assert code == 1, out + err
    (mech,) = json.loads(out)["files"][0]["mechanisms"]
    refuted = [o["id"] for o in mech["obligations"] if o["status"] == "refuted"]
    assert refuted == ["C4c"], refuted


def test_align_test_finds_the_violation_with_its_log_density(sech, tmp_path):
    code, out, err = _main("test", _spec(tmp_path, "4 * eps"), "--arg", "eps=0.5", "--samples", "16000",
                           "--format", "json")
    assert code == 1, out + err
    assert json.loads(out)["violation"] is True
    code, out, err = _main("test", _spec(tmp_path, "eps"), "--arg", "eps=0.5", "--samples", "16000",
                           "--format", "json")
    assert code == 0, out + err


def test_the_resolved_program_and_every_distribution_pickle(sech, tmp_path):
    for dist in DISTRIBUTIONS.values():
        assert pickle.loads(pickle.dumps(dist)) == dist
    spec = resolve(parse_source(read_source(_spec(tmp_path, "eps"))))
    again = pickle.loads(pickle.dumps(spec))
    assert again.mechanisms[0].noise[0].distribution == SECH


def test_registering_checks_the_name_and_refuses_duplicates(sech):
    with pytest.raises(ValueError):
        register(SECH)
    for name in ("sech", "SECH", "Se ch"):
        with pytest.raises(ValueError):
            register(Distribution(name, ("a",), "ℝ", "", (1.0,), _draw_sech, _cost_sech))


# A distribution with an upper bound: the checker's C4d must read the support declaration itself (it once
# knew only "non-negative" and "integer", and would have proved the spec below).


def _draw_negexp(gen: np.random.Generator, p: tuple, size: int) -> np.ndarray:
    return -gen.exponential(p[0], size)


def _log_negexp(z: np.ndarray, p: tuple) -> np.ndarray:
    return np.where(z <= 0, z / p[0] - math.log(p[0]), -np.inf)


def _cost_negexp(a: tuple, f: Field) -> object:
    return 1 / a[0]


NEGEXP = Distribution("NegExp", ("b",), "(-∞, 0]", "exp(x/b) / b on x <= 0", (1.0,), _draw_negexp, _cost_negexp,
                      requirements=(Requirement(0, "positive", ((P(0), ">", 0),)),),
                      values=Support(upper=Fraction(0)), log_density=_log_negexp)

NEGEXP_SPEC = """# The Laplace mechanism's alignment, with noise that lives on (-inf, 0] (tests/test_registry.py).
mechanism negexp_count(q: real, eps: real)
  adjacent |q - q'| <= 1
  requires eps > 0
  privacy eps
{
  eta ~ NegExp(1 / eps)
  output q + eta
}

alignment negexp_count {
  eta' = eta + (q - q')
}
"""


@pytest.fixture
def negexp():
    register(NEGEXP)
    try:
        yield NEGEXP
    finally:
        del DISTRIBUTIONS["NegExp"]


def test_c4d_reads_an_upper_bound_of_the_support(negexp, tmp_path):
    path = tmp_path / "negexp.dp"
    path.write_text(NEGEXP_SPEC, encoding="utf-8")
    code, out, err = _main("verify", "--output-format", "json", str(path))
    assert code == 1, out + err
    (mech,) = json.loads(out)["files"][0]["mechanisms"]
    (c4d,) = [o for o in mech["obligations"] if o["id"] == "C4d"]
    assert c4d["status"] == "refuted" and "is above the support (-∞, 0]" in c4d["reason"], c4d
    assert "eta + (q - q') <= 0 (NegExp has support (-∞, 0])" in c4d["details"]
    # the sampled check and the test agree: the shift leaves the support, and the outputs' supports differ
    code, out, _ = _main("run", str(path), "--arg", "q=0", "--arg", "eps=1", "--neighbour", "q=-1",
                         "--check-alignment", "--samples", "2000", "--output-format", "json")
    assert code == 1 and json.loads(out)["failures"]["C4d"] > 0
    code, out, _ = _main("test", str(path), "--arg", "eps=1", "--samples", "8000", "--output-format", "json")
    assert code == 1 and json.loads(out)["witness"]["support_mismatch"]
