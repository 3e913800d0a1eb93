"""Exact and floating-point arithmetic (align/floats.py, issue 35): which comparisons and rankings the two may
decide differently, how a comment accepts one, and what `align check` and `align verify` say about them.

The checker proves a program in exact arithmetic, the interpreter runs it in doubles. A proof that rests on a
comparison the two decide differently (`0.1 + 0.2 == 0.3`) is not a proof of what runs: specs/incorrect/float_*.dp
were "proved" and are violations that `align test` confirms.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest

from align.cli import main
from align.floats import float_sensitive, qualify
from align.pipeline import load_text, verify
from align.status import Status

from .conftest import SPECS, corpus

HEADER = """mechanism m(q: real, r: real[], T: real, k: int, eps: real)
  adjacent |q - q'| <= 1, |r[i] - r'[i]| <= 1
  requires eps > 0, k >= 1
  privacy eps
{
"""


def findings(body: str) -> list[str]:
    """The text of each float-sensitive place of a mechanism with this body (q, r private; T, k, eps public)."""
    mech = load_text(HEADER + body + "\n}\n").mechanisms[0]
    return [f.what for f in float_sensitive(mech)]


# Each: a body with exactly one decision, and whether it is float-sensitive.
SENSITIVE = {
    "literals": "if 0.1 + 0.2 == 0.3 { output q } else { output T }",
    "a tautology of the reals": "if (q * 3) / 3 == q { output q } else { output T }",
    "an ordering absorbed by rounding": "if q + 1e-17 > q { output q } else { output T }",
    "an input against a literal that is not a double": "if q < 0.3 { output q } else { output T }",
    "a running sum against a budget": "c = eps / 3\n s = c + c + c\n if s > eps { output q } else { output T }",
    "noise that cancels": "eta ~ Lap(1 / eps)\n if q + eta - eta > T { output 1 } else { output 0 }",
    "noise with a coefficient that may be 0": "eta ~ Lap(1 / eps)\n if eta * T > q { output 1 } else { output 0 }",
    "noise inside exp": "eta ~ Lap(1 / eps)\n if exp(q + eta) > T { output 1 } else { output 0 }",
    "integer noise with real arithmetic": "g ~ Geo(0.5)\n if q + g >= T { output 1 } else { output 0 }",
    "a ranking of rounded values": "output argmax([q * 3 / 3, q])",
    "a ranking of entries written away from their own position": (
        "for i in 0 .. len(r) {\n eta ~ Lap(1 / eps)\n v[0] = r[i] + eta\n }\n output argmax(v)"),
    "a ranking of entries that share a member": (
        "first = 0.0\n for i in 0 .. len(r) {\n eta ~ Lap(1 / eps)\n if i == 0 { first = eta }\n"
        " v[i] = r[i] * 3 + first\n }\n output argmax(v)"),
    "a ranking of entries whose own member cancels": (
        "for i in 0 .. len(r) {\n eta ~ Lap(1 / eps)\n x = -eta\n v[i] = r[i] * 3 + eta + x\n }\n output argmax(v)"),
    "a comprehension ranking rounded values": "output argmax(l in 0 .. len(r): r[l] / 3)",
    "a filter of a comprehension": "output count(l in 0 .. len(r): r[l] * 2 > T + 0.1)",
    "a tuple with a rounded part": "if (1, q + 1) == (1, T) { output 1 } else { output 0 }",
    "a ranking of copies of one entry, stored at an inner loop's index": (
        "for i in 0 .. len(r) {\n eta ~ Lap(1 / eps)\n x[i] = r[i] * 3 + eta\n }\n"
        " for i in 0 .. len(r) {\n for j in 0 .. len(r) {\n y[j] = x[i]\n }\n }\n output argmax(y)"),
    "a ranking of entries two of which one iteration writes (found by an adversarial search)": (
        "for i in 0 .. len(r) {\n eta ~ Lap(1 / eps)\n v[i] = eta\n if i > 0 {\n v[i - 1] = r[i] + eta - r[i]\n }\n"
        " }\n output argmax(v)"),
    "a ranking of entries copied twice from one entry": (
        "for i in 0 .. len(r) {\n eta ~ Lap(1 / eps)\n e[i] = eta\n }\n for i in 0 .. len(r) {\n"
        " v[i] = r[i] + e[i]\n if i > 0 {\n v[i - 1] = r[i] * 3 + e[i]\n }\n }\n output argmax(v)"),
    "a ranking of entries that copy another entry's member": (
        "for i in 0 .. len(r) {\n eta ~ Lap(1 / eps)\n x[i] = r[i] * 3 + eta\n }\n"
        " for i in 0 .. len(r) {\n y[i] = x[i] + x[0]\n }\n output argmax(y)"),
    # floor, ceil and round decide where their argument lies between integers (issue 38)
    "a rounding of a rounded value": "if ceil(q * 0.1 * 10) == 3 { output q } else { output T }",
    "a rounding of noise that cancels": "eta ~ Lap(1 / eps)\n output floor(q + eta - eta)",
    "a rounding stored, then read": "n = round(q / 3)\n for i in 0 .. n { output i }",
    "a clamp of rounded values": "if clamp(q * 3 / 3, 0, 1) == q { output q } else { output T }",
    "a noisy rounding with a rounded part added": (
        "eta ~ Lap(1 / eps)\n if floor(q + eta) + 0.1 > T { output 1 } else { output 0 }"),
}
DECIDED = {
    "inputs": "if q >= T { output q } else { output T }",
    "an input against a double literal": "if q > 0.5 { output q } else { output T }",
    "exact operations on inputs": "if min(q, -T) <= abs(T) { output q } else { output T }",
    "integers": "n = len(r) + 2 * k\n if (n + 1) % k == 0 and n // 2 >= k { output 1 } else { output 0 }",
    "the sparse vector's test": ("rho ~ Lap(2 / eps)\n Th = T + rho\n for i in 0 .. len(r) {\n nu ~ Lap(4 / eps)\n"
                                 " if r[i] + nu >= Th { output 1 } else { output 0 }\n }"),
    "a scaled noise": "eta ~ Lap(1 / eps)\n if (q + 2 * eta) / 3 > T * 3 { output 1 } else { output 0 }",
    "a noisy list read at another index": (
        "for i in 0 .. len(r) {\n eta ~ Exp(1 / eps)\n noisy[i] = r[i] + eta\n }\n zeta ~ Lap(1 / eps)\n"
        " Tt = T + zeta\n for j in 0 .. len(r) {\n if noisy[j] >= Tt { output 1 } else { output 0 }\n }"),
    "a ranking of noisy entries at their own positions": (
        "for i in 0 .. len(r) {\n eta ~ Lap(1 / eps)\n noisy[i] = r[i] * 3 + eta\n }\n"
        " output top_k_with_gaps(noisy, 1)"),
    "a comprehension ranking noisy entries": (
        "for i in 0 .. len(r) {\n eta ~ Gumbel(0)\n x[i] = r[i] + eta\n }\n output argmax(l in 0 .. len(r): x[l] / 2)"),
    "a ranking of inputs": "output argmax(r)",
    "a ranking of entries copied at their own positions (fill, then walk)": (
        "for i in 0 .. len(r) {\n eta ~ Lap(1 / eps)\n etas[i] = eta\n }\n"
        " for i in 0 .. len(r) {\n noisy[i] = r[i] * 3 + etas[i]\n }\n output argmax(noisy)"),
    "tags": "out1 = q > T ? TOP(q) : BOT\n if out1 is TOP { output 1 } else { output 0 }",
    "a rounding decided by noise": "eta ~ Lap(1 / eps)\n if floor(q + eta) == 3 { output 1 } else { output 0 }",
    "a rounding of a scaled noise, stored": "eta ~ Lap(1 / eps)\n n = round((q + eta) / 3)\n output n * 2 - 1",
    "roundings and clamps of inputs": (
        "if round(q) + ceil(T) >= floor(q) and clamp(q, -1, 0.5) < T { output q } else { output T }"),
}


@pytest.mark.parametrize("body", SENSITIVE.values(), ids=SENSITIVE.keys())
def test_a_float_sensitive_decision_is_found(body: str):
    assert len(findings(body)) == 1


@pytest.mark.parametrize("body", DECIDED.values(), ids=DECIDED.keys())
def test_a_decision_both_arithmetics_agree_on_is_not_reported(body: str):
    assert findings(body) == []


def test_members_of_one_family_count_as_one_variable():
    # Conservative: `p` holds an earlier member of xi, never the current one, but the analysis does not tell
    # iterations apart, and xi - xi cancels. (A spec that needs it accepts the comparison with a comment.)
    running = ("p = 0.0\n for i in 0 .. len(r) {\n xi ~ Lap(1 / eps)\n"
               " if r[i] + xi > p { output 1 } else { output 0 }\n p = r[i] + xi\n }")
    assert len(findings(running)) == 1
    # ... while twice a member, or a member and a scalar noise variable, decide it
    assert findings(running.replace("p = r[i] + xi\n", "p = r[i] - xi\n")) == []


def test_a_rounding_is_reported_with_what_makes_it_so_and_a_comment_accepts_it():
    mech = load_text(HEADER + "output (ceil(q * 0.1 * 10), floor(q + T))\n}\n").mechanisms[0]
    found = float_sensitive(mech)
    assert [(f.what, f.reason) for f in found] == [
        ("the rounding `ceil(q * 0.1 * 10)`", "its argument is computed with rounding, and no noise with a density "
                                             "decides it"),
        ("the rounding `floor(q + T)`", "its argument is computed with rounding, and no noise with a density decides "
                                       "it")]
    accepted = load_text(HEADER + "output ceil(q * 0.1 * 10)  # align: accept-float-sensitive\n}\n").mechanisms[0]
    assert [f.acceptance is not None for f in float_sensitive(accepted)] == [True]


def test_what_the_interpreter_computes_is_what_the_rule_says():
    # The examples' premises, in Python's doubles (the interpreter's arithmetic).
    q = 0.1
    assert 0.1 + 0.2 != 0.3 and (q * 3) / 3 != q and 1.0 + 1e-17 == 1.0
    assert 0.29999999999999998 == 0.3  # the double nearest 0.3 is below 3/10: `q < 0.3` is false for q = 0.3
    assert math.ceil(3 * 0.1 * 10) == 4  # exactly 3


def test_every_proved_spec_accepts_each_of_its_float_sensitive_places():
    # The corpus' own float-sensitive places (the budget test of SVT with Gap, Algorithm 3's geometric branches)
    # are accepted in the spec, with the reason in its header; nothing else in a proved spec is float-sensitive.
    accepted = set()
    for path in corpus():
        if "# expect: proved" not in path.read_text():
            continue
        for f in float_sensitive(load_text(path.read_text(), str(path)).mechanisms[0]):
            assert f.acceptance is not None, f"{path}:{f.span.line}: {f.what}"
            accepted.add(path.name)
    assert "alg2_svt_gap.dp" in accepted and "alg3_adaptive_svt_gap_geo.dp" in accepted


LEAK = """mechanism leak(q: real, eps: real)
  adjacent |q - q'| <= 1
  requires eps > 0
  privacy eps
{
  eta ~ Lap(1 / eps)
  COMPARISON
    output q + eta
  } else {
    output q
  }
}

alignment leak {
  eta' = eta + (q - q')
}
"""


def _leak(comparison: str) -> str:
    return LEAK.replace("COMPARISON", comparison)


@pytest.mark.parametrize("written, accepted", [
    ("if 0.1 + 0.2 == 0.3 {", False),
    ("if 0.1 + 0.2 == 0.3 {  # align: accept-float-sensitive", True),
    ("if 0.1 + 0.2 == 0.3 {  #align:accept-float-sensitive because I say so", True),
    ("# align: accept-float-sensitive\n  if 0.1 + 0.2 == 0.3 {", True),
    ("# align: accept-float-sensitive\n\n  if 0.1 + 0.2 == 0.3 {", False),  # not directly above
    ("x = 1  # align: accept-float-sensitive\n  if 0.1 + 0.2 == 0.3 {", False),  # marks its own line only
    ("if 0.1 + 0.2 == 0.3 {  # align: accept-float-sensitive-not", False),
    ("if 0.1 + 0.2 == 0.3 {  # align: accept-float", False),
])
def test_a_comment_accepts_the_comparison_on_its_line_or_below_it(written: str, accepted: bool):
    (found,) = float_sensitive(load_text(_leak(written)).mechanisms[0])
    assert (found.acceptance is not None) == accepted


def test_verify_does_not_prove_what_rests_on_a_float_sensitive_comparison():
    mech = load_text(_leak("if (q * 3) / 3 == q {"), "leak.dp").mechanisms[0]
    result = verify(mech)
    assert result.status == Status.UNKNOWN and result.scope == ""
    by_id = {str(v.obligation.id): v for v in result.verdicts}
    for key in ("C0", "C2", "C4a", "C4b", "C4c", "C4d"):
        v = by_id[key]
        assert v.status == Status.UNKNOWN, key
        assert v.reason.startswith("proved in exact arithmetic only (for all inputs): the comparison "
                                   "`q * 3 / 3 == q` at line 7 is float-sensitive"), v.reason
        assert "# align: accept-float-sensitive" in v.reason
    # what holds by construction does not follow the branches
    assert by_id["C1"].status == by_id["C5"].status == by_id["C3"].status == Status.PROVED


def test_an_accepted_comparison_keeps_the_proof_and_says_so():
    text = _leak("if (q * 3) / 3 == q {  # align: accept-float-sensitive I checked it")
    result = verify(load_text(text, "leak.dp").mechanisms[0])
    assert result.status == Status.PROVED
    for v in result.verdicts:
        if v.scope != "by construction":
            assert ("the comparison `q * 3 / 3 == q` at line 7 is float-sensitive, accepted by the comment "
                    "`# align: accept-float-sensitive I checked it` (line 7): it is decided in exact arithmetic "
                    "here, in doubles by the interpreter" in v.notes), v.notes


def test_refutations_stay_refuted():
    # Only a proof is qualified: a refutation (replayed in doubles) says as much as before.
    mech = load_text(_leak("if (q * 3) / 3 == q {").replace("eta' = eta + (q - q')", "eta' = eta"),
                     "leak.dp").mechanisms[0]
    result = verify(mech)
    assert result.status == Status.REFUTED
    assert any(v.status == Status.REFUTED and v.obligation.id == "C4a" for v in result.verdicts)
    assert qualify(mech, result.verdicts) == result.verdicts


def _run(*argv: str) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout, stderr)
    return code, stdout.getvalue(), stderr.getvalue()


def test_check_warns_at_the_comparison_and_still_succeeds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("NO_COLOR", "1")
    spec = tmp_path / "leak.dp"
    spec.write_text(_leak("if 0.1 + 0.2 == 0.3 {"))
    code, out, err = _run("check", str(spec))
    assert code == 0 and "mechanism leak" in out
    assert err.startswith(f"{spec}:7:6: warning[float-sensitive]: the comparison `0.1 + 0.2 == 0.3` can be "
                          "decided differently in floating point than in exact arithmetic: its sides are computed "
                          "with rounding, and no noise with a density decides it\n  |\n7 |   if 0.1 + 0.2 == 0.3 {\n"
                          "  |      ^^^^^^^^^^^^^^^^"), err
    code, out, _ = _run("verify", "--output-format", "json", str(spec))
    document = json.loads(out)
    assert code == 3 and document["files"][0]["ok"]
    (warning,) = document["files"][0]["diagnostics"]
    assert warning["code"] == "float-sensitive" and warning["severity"] == "warning"
    assert (warning["span"]["line"], warning["span"]["column"]) == (7, 6)
    spec.write_text(_leak("if 0.1 + 0.2 == 0.3 {  # align: accept-float-sensitive"))
    code, out, err = _run("verify", str(spec))
    assert code == 0 and err == "" and "accepted by the comment `# align: accept-float-sensitive` (line 7)" in out


def test_printed_files_keep_their_acceptances():
    # bench/soundness.py writes mutants with `unparse_spec`: an accepted comparison it leaves alone stays accepted
    from align.parse import parse_source
    from align.span import Source
    from align.unparse import unparse_spec

    for comparison in ("if 0.1 + 0.2 == 0.3 {  # align: accept-float-sensitive why",
                       "# align: accept-float-sensitive why\n  if 0.1 + 0.2 == 0.3 {"):
        text = unparse_spec(parse_source(Source("leak.dp", _leak(comparison))))
        assert "# align: accept-float-sensitive why" in text
        (found,) = float_sensitive(load_text(text).mechanisms[0])
        assert found.acceptance is not None and found.acceptance.reason == "why"


@pytest.mark.parametrize("name", ["float_literal_sum", "float_tautology_exact_only", "float_tautology_histogram",
                                  "float_ordering_absorbed", "float_noise_cancels"])
def test_the_attackers_specs_are_float_sensitive_at_their_test(name: str):
    path = SPECS / "incorrect" / f"{name}.dp"
    (found,) = float_sensitive(load_text(path.read_text(), str(path)).mechanisms[0])
    assert found.acceptance is None
    assert path.read_text().splitlines()[found.span.line - 1].lstrip().startswith("if ")


def test_a_comment_accepts_one_comparison_and_one_that_accepts_nothing_is_reported(tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch):
    # one comment, one comparison: a float-sensitive test written inside the accepted one is checked afresh
    (outer, inner) = float_sensitive(load_text(_leak(
        "if (0.1 + 0.2 == 0.3 ? q : 0.5) * 3 / 3 == q {  # align: accept-float-sensitive")).mechanisms[0])
    assert outer.acceptance is not None and inner.acceptance is None, (outer, inner)
    # a comment that accepts nothing would accept what is written there later: a warning says so
    monkeypatch.setenv("NO_COLOR", "1")
    spec = tmp_path / "unused.dp"
    spec.write_text(_leak("if q >= 1 {  # align: accept-float-sensitive"))
    code, _, err = _run("check", str(spec))
    assert code == 0 and "warning[unused-acceptance]" in err and f"{spec}:7:" in err, err
