"""Resolution: what names mean, noise families, shifts, constants, mixtures and cost coefficients."""

from __future__ import annotations

import dataclasses

import pytest
import sympy

from align import nodes as n
from align.diagnostics import SpecError
from align.obligations import cost_coefficient, parameter_reads
from align.parse import parse_source
from align.resolve import resolve
from align.rules import obligations
from align.span import Source
from align.symbolic import symbol
from align.types import INT, REAL, ListType, TagType, TupleType
from align.unparse import unparse


def resolve_text(text: str):
    return resolve(parse_source(Source("t.dp", text))).mechanisms[0]


def codes(text: str) -> list[str]:
    with pytest.raises(SpecError) as info:
        resolve(parse_source(Source("t.dp", text)))
    return [d.code for d in info.value.diagnostics]


SVT = """
mechanism svt(q: real[], T: real, eps: real)
  adjacent |q[i] - q'[i]| <= 1
  privacy eps
{
  e0 = eps / 2
  half = e0
  eta ~ Lap(1 / e0)
  Tt = T + eta
  for i in 0 .. len(q) {
    xi ~ Lap(4 / eps)
    if q[i] + xi >= Tt { output TOP(q[i] + xi - Tt) } else { output BOT }
  }
}
alignment svt {
  eta' = eta + 1
  xi[i]' = 1 - q'[i] + xi[i] + (out[i] is TOP ? q[i] : 0) - 1
  invariant aligned_cost <= e0 + Tt' - Tt
}
"""


def test_noise_sites_families_and_types():
    mech = resolve_text(SVT)
    eta, xi = mech.noise
    assert (eta.name, eta.family, eta.type) == ("eta", False, REAL)
    assert (xi.name, xi.family, xi.loop.var, xi.display) == ("xi", True, "i", "xi[i]")
    assert mech.output_type == TagType((("BOT", ()), ("TOP", (REAL,))))
    assert mech.constants == {"e0", "half"}
    assert mech.variables["Tt"] == REAL


def test_a_shift_is_the_rest_of_the_sum():
    mech = resolve_text(SVT)
    eta, xi = mech.alignment.shifts
    assert unparse(eta.shift) == "1"
    assert unparse(xi.shift) == "1 - q'[i] + (out[i] is TOP ? q[i] : 0) - 1"


def test_invariants_read_program_state_primed_and_aligned_cost():
    mech = resolve_text(SVT)
    (inv,) = mech.alignment.invariants
    assert unparse(inv.condition) == "aligned_cost <= e0 + Tt' - Tt"


def test_cost_coefficients_follow_the_design_table():
    eps, b, p, a = symbol("eps"), symbol("b"), symbol("p"), symbol("a")
    mech = resolve_text("""
mechanism m(x: real, eps: real, b: real, p: real, a: real)
  adjacent |x - x'| <= 1
  privacy eps
{
  l ~ Lap(b)
  e ~ Exp(b)
  g ~ Geo(p)
  g2 ~ Geo(1 - exp(-eps))
  d ~ DLap(a)
  s ~ Staircase(eps, a)
  lo ~ Logistic(0, b)
  lo1 ~ Logistic(0)
  gu ~ Gumbel(0)
  u ~ Uniform(0, b)
  output x + l + e + g + g2 + d + s + lo + lo1 + gu + u
}
""")
    c = {site.name: cost_coefficient(site) for site in mech.noise}
    assert c["l"] == 1 / b and c["e"] == 1 / b
    assert c["g"] == -sympy.log(1 - p)
    assert c["g2"] == eps, "Geo(1 - e^-eps) costs exactly eps per unit shift"
    assert c["d"] == a and c["s"] == eps
    assert c["lo"] == 1 / b and c["lo1"] == 1
    assert c["gu"] is None and c["u"] is None, "Gumbel and Uniform are not Lipschitz"
    assert {s.name: s.type for s in mech.noise}["g"] == INT


def test_comprehension_universe_is_inferred_from_what_the_body_indexes():
    mech = resolve_text("""
mechanism top(q: real[], k: int, eps: real)
  adjacent |q[i] - q'[i]| <= 1
  privacy eps
{
  for i in 0 .. len(q) { eta ~ Lap(2 * k / eps); noisy[i] = q[i] + eta }
  pairs = top_k_with_gaps(noisy, k)
  for j in 0 .. k { output pairs[j] }
}
alignment top {
  let I = indices(out)
  let m = max(l not in I: q[l] + eta[l])
  eta[i]' = eta[i] + (i in I ? q[i] - q'[i] + max(l not in I: q'[l] + eta[l]) - m : 0)
}
""")
    assert mech.output_type == TupleType((INT, REAL))
    assert mech.variables["noisy"] == ListType(REAL)
    lets = {let.name: unparse(let.value) for let in mech.alignment.lets}
    assert lets["m"] == "max(l in 0 .. len(q) if l not in I: q[l] + eta[l])"
    assert "max(l in 0 .. len(q) if l not in I: q'[l] + eta[l])" in unparse(mech.alignment.shifts[0].shift)


R2DP = """
mechanism r2dp(q: real, k: real, theta: real, dq: real)
  adjacent |q - q'| <= dq
  privacy (k + 1) * ln(1 + dq * theta)
{
  u ~ Gamma(k, theta)
  scale = 1 / u
  w ~ Lap(scale)
  output q + w
}
"""


def test_scale_mixtures_are_recognised():
    mech = resolve_text(R2DP)
    assert [s.name for s in mech.mixture_sites] == ["w"]
    # C0 (one density per noise variable in both runs) holds for the mixture rule as for Lemma 1, and so does ADJ
    # (distinct neighbours exist)
    assert [o.id for o in obligations(mech)] == ["ADJ", "C0", "C0", "MIX"]


def test_a_mixture_whose_scale_reads_the_data_is_still_a_mixture_and_c0_reads_it():
    # the mixture rule has no guard of its own: C0 refutes a scale that reads the data (checker tests)
    mech = resolve_text(R2DP.replace("scale = 1 / u", "scale = 1 / u + q"))
    assert [s.name for s in mech.mixture_sites] == ["w"]
    reads = parameter_reads(mech, mech.site("w"))
    assert not reads.public and reads.variables == ("scale",)


@pytest.mark.parametrize("change", [
    ("w ~ Lap(scale)", "w ~ Exp(scale)"),            # R²DP's first fold is Laplace
    ("output q + w\n}", "output q + w\n}\nalignment r2dp { w' = w + q - q' }"),  # the user asks for Lemma 1
])
def test_only_laplace_scale_mixtures_without_alignment_use_the_mixture_rule(change):
    mech = resolve_text(R2DP.replace(*change))
    assert mech.mixture_sites == ()
    assert "MIX" not in [o.id for o in obligations(mech)]


def test_output_dependent_claims_read_discrete_parts_only():
    ok = """
mechanism m(q: real[], k: int, eps: real)
  adjacent |q[i] - q'[i]| <= 1
  privacy len(out) / k * eps + count(out, TOP) * 0
{
  for i in 0 .. len(q) { eta ~ Lap(1 / eps); if q[i] + eta > 0 { output TOP } else { output BOT } }
}
"""
    assert resolve_text(ok).claim is not None
    assert codes(ok.replace("count(out, TOP) * 0", "count(out, TOPP) * 0")) == ["unknown-tag"]
    real_out = ok.replace("output TOP } else { output BOT }", "output q[i] + eta } else { output 0 }") \
                 .replace(" + count(out, TOP) * 0", " + out[0]")
    assert codes(real_out) == ["continuous-output-read"]


def test_alignments_read_constants_but_not_noisy_state():
    base = SVT.replace("invariant aligned_cost <= e0 + Tt' - Tt", "")
    assert resolve_text(base.replace("eta' = eta + 1", "eta' = eta + half / e0")).alignment
    assert codes(base.replace("eta' = eta + 1", "eta' = eta + Tt - T")) == ["alignment-reads-state"]


def test_index_variables_may_reuse_program_names_but_lets_may_not():
    # A shift's index is local to the shift; a let is visible to invariants, which also see program state.
    text = SVT.replace("xi[i]' = 1 - q'[i] + xi[i] + (out[i] is TOP ? q[i] : 0) - 1",
                       "xi[Tt]' = xi[Tt] + (out[Tt] is TOP ? 1 : 0)")
    assert resolve_text(text).alignment.shifts[1].index_var == "Tt"
    for let in ("let Tt = 1", "let eps = 1", "let e0 = 1", "let eta = 1", "let q' = 1"):
        assert codes(SVT.replace("invariant aligned_cost <= e0 + Tt' - Tt", let)) == ["shadowed-name"]


def test_constants_are_top_level_single_assignments_from_parameters():
    mech = resolve_text("""
mechanism m(q: real[], k: int, eps: real)
  adjacent |q[i] - q'[i]| <= 1
  privacy eps
{
  eta ~ Lap(1 / eps)
  late = 2 * eps
  total = sum(l in 0 .. k: l)
  twice = 1
  twice = 2
  if eps > 1 { guarded = 1 } else { guarded = 2 }
  n = len(q)
  output q[0] + eta
}
""")
    assert mech.constants == {"late", "total", "n"}


def test_public_clauses_cannot_read_private_data_except_lengths():
    head = "mechanism m(q: real[], k: int, eps: real)\n  adjacent |q[i] - q'[i]| <= 1\n"
    body = "{\n  n = len(q)\n  first = q[0]\n  eta ~ Lap(1 / eps)\n  output q[0] + eta\n}\n"
    assert resolve_text(head + "  requires k < len(q)\n  privacy eps * n / len(q)\n" + body)
    assert codes(head + "  privacy eps * q[0]\n" + body) == ["private-in-public"]
    assert codes(head + "  privacy eps * first\n" + body) == ["private-in-public"]
    assert codes(head + "  requires q[0] > 0\n  privacy eps\n" + body) == ["private-in-public"]


@pytest.mark.parametrize("rhs,ok", [
    ("eta", True), ("eta + 1", True), ("1 + eta", True), ("eta - 1", True), ("2 + eta - 1", True),
    ("eta + (1 - eta)", True), ("eta + eta", True),  # legal shifts; C4b rejects their self-dependence
    ("-eta + 1", False), ("1 - eta", False), ("2 * eta", False), ("eta' + 1", False), ("q + 1", False),
])
def test_shift_forms(rhs: str, ok: bool):
    text = f"""
mechanism m(x: real, q: real, eps: real)
  adjacent |x - x'| <= 1
  privacy eps
{{
  eta ~ Lap(1 / eps)
  output x + eta
}}
alignment m {{
  eta' = {rhs}
}}
"""
    if ok:
        (shift,) = resolve_text(text).alignment.shifts
        assert shift.var == "eta"
        if rhs == "eta + (1 - eta)":
            assert unparse(shift.shift) == "1 - eta"
    else:
        assert codes(text)[0] in ("not-a-shift", "undefined-name")


def test_every_error_is_reported_not_just_the_first():
    found = codes("""
mechanism m(x: real, eps: real)
  privacy eps
{
  eta ~ Lap(1 / eps, 2)
  output y + z
  while true { break }
}
""")
    assert found == ["distribution-arity", "undefined-name", "undefined-name", "unbounded-loop"]


def test_nodes_are_frozen():
    mech = resolve_text(SVT)
    with pytest.raises(dataclasses.FrozenInstanceError):
        mech.node.name = "other"  # type: ignore[misc]
    assert isinstance(mech.claim, n.ParamRef) and mech.claim.type == REAL


def test_desugaring_under_an_error_reports_the_error():
    # The fuzzer's find: a comprehension that checking never reached (the arguments of a rejected call) is
    # still desugared; it has no type, and that must not turn the located error into an internal one.
    text = """
    mechanism m(q: real[], eps: real)
      adjacent |q[i] - q'[i]| <= 1
      privacy eps
    {
      x ~ Lap(1 / eps)
      output x
    }
    alignment m {
      let a = m(max(l not in indices(out): q[l]))
      x' = x
    }
    """
    assert codes(text) == ["recursive-call"]
