"""Normal forms before the proofs for every length (issue 37): checker/bounds.py writes out loop bounds read through
names the parameters fix (`n = len(q); for i in 0 .. n` is the loop `for i in 0 .. len(q)`), checker/offsets.py
counts loops from 0 (`for i in 1 .. len(q) + 1` reading `q[i - 1]` is `for i in 0 .. len(q)` reading `q[i]`)."""

from __future__ import annotations

from pathlib import Path

import pytest

import align
from align import nodes as n
from align.checker.bounds import inline_bounds
from align.parse import parse_source
from align.resolve import resolve, walk_statements
from align.span import Source
from align.status import Status
from align.unparse import unparse

from .conftest import ROOT

HEADER = """mechanism m(q: real[], eps: real)
  adjacent |q[i] - q'[i]| <= 1
  requires eps > 0
  privacy eps
{
"""


def _proved_for_every_length(path: Path, text: str):
    path.write_text(text)
    verdict = align.verify(str(path))
    assert verdict.status is Status.PROVED and verdict.scope == "for every input length", verdict
    return verdict


def _changed(name: str, text: str, *changes: tuple[str, str]):
    """The mechanism of `text` with each change (old, new) made, each old text asserted to be there."""
    for old, new in changes:
        assert old in text
        text = text.replace(old, new)
    return resolve(parse_source(Source(name, text))).mechanisms[0]


def _mech(body: str):
    return resolve(parse_source(Source("<bounds>", HEADER + body + "}\n"))).mechanisms[0]


def _bounds(body: str) -> list[str] | None:
    rewritten = inline_bounds(_mech(body))
    if rewritten is None:
        return None
    return [f"{unparse(s.lo)} .. {unparse(s.hi)}" for s in walk_statements(rewritten.mechanism.body)
            if isinstance(s, n.For)]


@pytest.mark.parametrize(("body", "expected"), [
    # a parameter-derived constant
    ("  n = len(q)\n  for i in 0 .. n { output q[i] }\n", ["0 .. len(q)"]),
    # through another constant
    ("  n = len(q)\n  m = n - 1\n  for i in 0 .. m + 1 { output q[i] }\n", ["0 .. len(q) - 1 + 1"]),
    # assigned before a nested loop, the same expression every time
    ("  for i in 0 .. len(q) {\n    n = len(q)\n    for l in 0 .. n { output l }\n  }\n",
     ["0 .. len(q)", "0 .. len(q)"]),
    # assigned only under a branch: the loop may start with n unassigned (the interpreter stops), not written out
    ("  if eps > 1 { n = len(q) }\n  for j in 0 .. n { output 1 }\n", None),
    # assigned two different values
    ("  n = len(q)\n  for i in 0 .. n { output 1 }\n  n = 2\n", None),
    # assigned from noise
    ("  eta ~ Lap(1 / eps)\n  n = len(q) + eta\n  for i in 0 .. 3 { output n }\n", None),
])
def test_which_bounds_are_written_out(body: str, expected: list[str] | None):
    assert _bounds(body) == expected


def test_a_bound_named_before_its_loop_is_proved_for_every_length(tmp_path: Path):
    text = (ROOT / "specs" / "dworkroth" / "above_threshold.dp").read_text()
    assert "for i in 0 .. len(q) {" in text
    verdict = _proved_for_every_length(tmp_path / "named_bound.dp",
                                       text.replace("for i in 0 .. len(q) {", "n = len(q)\n  for i in 0 .. n {", 1))
    notes = [note for v in verdict.verdicts for note in v.notes]
    assert any("loop bounds read through" in note for note in notes), notes


# ------------------------------------------------------------------------------------- loops counted from 0


def test_a_loop_counted_from_1_is_proved_for_every_length(tmp_path: Path):
    # Report Noisy Max with its loop counted from 1, as the paper writes it: `noisy[i - 1] = q[i - 1] + eta`, the
    # members of eta numbered from 1, the alignment reading `eta[l + 1]` (bench/rewrites.py, loop-offset)
    text = (ROOT / "specs" / "freegap" / "noisy_max.dp").read_text()
    written = {
        "for i in 0 .. len(q) {": "for i in 1 .. len(q) + 1 {",
        "noisy[i] = q[i] + eta": "noisy[i - 1] = q[i - 1] + eta",
        "q[l] + eta[l]": "q[l] + eta[l + 1]",
        "q'[l] + eta[l]": "q'[l] + eta[l + 1]",
        "eta[i]' = eta[i] + (i in [out[0]] ? q[i] - q'[i] + m' - m : 0)":
            "eta[i]' = eta[i] + (i - 1 in [out[0]] ? q[i - 1] - q'[i - 1] + m' - m : 0)",
    }
    for a, b in written.items():
        assert a in text, a
        text = text.replace(a, b)
    verdict = _proved_for_every_length(tmp_path / "from_one.dp", text)
    notes = [note for v in verdict.verdicts for note in v.notes]
    assert any("counted from 0" in note for note in notes), notes


@pytest.mark.parametrize(("body", "expected"), [
    ("  for i in 1 .. len(q) + 1 { output q[i - 1] }\n", ["0 .. len(q)"]),
    ("  for i in 2 .. len(q) { output q[i] }\n", ["0 .. len(q) - 2"]),
    # a start read from the list's public length
    ("  for i in len(q) - 1 .. len(q) { output q[i] }\n", ["0 .. len(q) - (len(q) - 1)"]),
])
def test_which_loops_are_counted_from_0(body: str, expected: list[str]):
    from align.checker.offsets import from_zero

    rewritten = from_zero(_mech(body))
    assert rewritten is not None
    assert [f"{unparse(s.lo)} .. {unparse(s.hi)}" for s in walk_statements(rewritten.mechanism.body)
            if isinstance(s, n.For)] == expected


def test_a_start_that_the_loop_may_change_is_not_moved():
    # `i + x` read in the body would see x after the body changed it; the loop started from its value before
    from align.checker.offsets import from_zero

    assert from_zero(_mech("  x = 1\n  for i in x .. len(q) {\n    x = x + 1\n    output q[i]\n  }\n")) is None


def test_a_start_read_from_private_data_is_not_moved():
    from align.checker.offsets import from_zero

    mech = resolve(parse_source(Source("<offsets>", """mechanism m(q: real[], k: int, eps: real)
  adjacent |q[i] - q'[i]| <= 1, |k - k'| <= 1
  requires eps > 0
  privacy eps
{
  for i in k .. len(q) { output 1 }
}
"""))).mechanisms[0]
    assert from_zero(mech) is None


# --------------------------------------------------------------------------------------- the alignment's forms


def test_the_alignment_of_noisy_max_written_another_way_is_proved_for_every_length(tmp_path: Path):
    # `let j = out[0]`, `i == j ? ... : 0` and a filter `l != j` instead of `i in [out[0]]` and `l not in [out[0]]`
    # (issue 37's first example: C4c was bounded)
    text = (ROOT / "specs" / "freegap" / "noisy_max.dp").read_text()
    start = text.index("alignment noisy_max {")
    path = tmp_path / "written_another_way.dp"
    path.write_text(text[:start] + """alignment noisy_max {
  let j = out[0]
  let m = max(l in 0 .. len(q) if l != j: q[l] + eta[l])
  let m' = max(l in 0 .. len(q) if j != l: q'[l] + eta[l])
  eta[i]' = eta[i] + (i != j ? 0 : q[i] - q'[i] + m' - m)
}
""")
    verdict = align.verify(str(path))
    assert verdict.status is Status.PROVED and verdict.scope == "for every input length", verdict


def test_an_equality_inside_a_count_is_not_read_as_an_index_set():
    # only a conditional's condition `i == e` becomes `i in [e]`: the records' summaries compare the alignment's
    # `count(l ...: q[l] == j)` with the program's, term for term
    from align.checker.alignments import normal_alignment

    mech = resolve(parse_source(Source("<forms>", """mechanism m(q: int[], eps: real, B: int)
  adjacent len(q') = len(q) ± 1
  requires eps > 0, B >= 1
  privacy eps
{
  for j in 0 .. B {
    eta ~ Lap(1 / eps)
    output count(l in 0 .. len(q): q[l] == j) + eta
  }
}

alignment m {
  eta[j]' = eta[j] + count(l in 0 .. len(q): q[l] == j) - count(l in 0 .. len(q'): q'[l] == j)
}
"""))).mechanisms[0]
    assert normal_alignment(mech) is None


def test_a_filter_not_in_the_released_indices_is_proved_for_every_length(tmp_path: Path):
    # Noisy Top-K with Gap's alignment with `max(l in 0 .. len(q) if l not in I: ...)`, the filter the corpus writes
    # `max(l not in I: ...)`: the same indices, so the same proof
    text = (ROOT / "specs" / "freegap" / "alg4_noisy_top_k_gap.dp").read_text()
    start = text.index("alignment noisy_top_k_gap {")
    path = tmp_path / "filtered.dp"
    path.write_text(text[:start] + """alignment noisy_top_k_gap {
  let I = indices(out)
  let m = max(l in 0 .. len(q) if l not in I: q[l] + eta[l])
  let m' = max(l in 0 .. len(q) if not (l in I): q'[l] + eta[l])
  eta[i]' = eta[i] + (i in I ? q[i] - q'[i] + m' - m : 0)
}
""")
    verdict = align.verify(str(path))
    assert verdict.status is Status.PROVED and verdict.scope == "for every input length", verdict


@pytest.mark.parametrize(("filtered", "excluded"), [
    ("max(l in 0 .. len(q) if l not in indices(out): q[l])", "indices(out)"),
    ("max(l in 0 .. len(q) if not (l in indices(out)): q[l])", "indices(out)"),
    ("max(l in 0 .. len(q) if l != out[0][0]: q[l])", "[out[0][0]]"),
    # a set that reads the bound index, a range, a filter that keeps the set: as written
    ("max(l in 0 .. len(q) if l not in [l]: q[l])", None),
    ("max(l in 0 .. len(q) if l not in 0 .. 2: q[l])", None),
    ("max(l in 0 .. len(q) if l in indices(out): q[l])", None),
])
def test_which_filters_become_excluded_sets(filtered: str, excluded: str | None):
    from align.checker.alignments import normal_alignment

    mech = resolve(parse_source(Source("<forms>", f"""mechanism m(q: real[], k: int, eps: real)
  adjacent |q[i] - q'[i]| <= 1
  requires eps > 0, 1 <= k, k < len(q)
  privacy eps
{{
  for i in 0 .. len(q) {{
    eta ~ Lap(2 * k / eps)
    noisy[i] = q[i] + eta
  }}
  pairs = top_k_with_gaps(noisy, k)
  for j in 0 .. k {{ output pairs[j] }}
}}

alignment m {{
  let m = {filtered}
  eta[i]' = eta[i] + (i in indices(out) ? m : 0)
}}
"""))).mechanisms[0]
    rewritten = normal_alignment(mech)
    (let,) = (rewritten.mechanism if rewritten else mech).alignment.lets
    assert isinstance(let.value, n.Comprehension)
    if excluded is None:  # as written: the filter stays
        assert let.value.excluded is None and let.value.condition is not None
    else:  # the filter is the excluded set, over the same domain
        assert let.value.condition is None and unparse(let.value.excluded) == excluded
        assert unparse(let.value.domain) == "0 .. len(q)"


# ------------------------------------------------------------------- a noise parameter through a name (cost)


def _definitions(body: str) -> dict[str, str]:
    from align.obligations import site_definitions

    mech = _mech(body)
    (site,) = [s for s in mech.noise if s.name == "xi"]
    return {name: str(formula) for name, formula in site_definitions(mech, site).items()}


@pytest.mark.parametrize(("body", "expected"), [
    # assigned once in the loop, before the draw: written out, and so is a constant with exp
    ("  c = 1 - exp(-eps)\n  for i in 0 .. len(q) {\n    s = 1 - exp(-eps / 2)\n    xi ~ Geo(s)\n"
     "    output q[i] + xi\n  }\n", {"c": "1 - exp(-eps)", "s": "1 - exp(-eps/2)"}),
    # a constant without exp or ln stays a name
    ("  e2 = eps / 2\n  xi ~ Geo(1 - exp(-e2))\n  output q[0] + xi\n", {}),
    # assigned twice: its value at the draw depends on the iteration
    ("  s = 1 - exp(-eps)\n  for i in 0 .. len(q) {\n    xi ~ Geo(s)\n    output q[i] + xi\n"
     "    s = 1 - exp(-2 * eps)\n  }\n", {}),
    # assigned under a branch that does not hold the draw, or after it, or from data
    ("  for i in 0 .. len(q) {\n    if q[i] > 0 { s = 1 - exp(-eps) }\n    xi ~ Geo(0.5)\n    output xi\n  }\n", {}),
    ("  for i in 0 .. len(q) {\n    xi ~ Geo(0.5)\n    s = 1 - exp(-eps)\n    output xi + s\n  }\n", {}),
    ("  for i in 0 .. len(q) {\n    s = 1 - exp(-eps * q[i])\n    xi ~ Geo(0.5)\n    output xi + s\n  }\n", {}),
])
def test_which_names_a_cost_coefficient_writes_out(body: str, expected: dict[str, str]):
    assert _definitions(body) == expected


def test_a_geometric_scale_named_in_the_loop_is_proved_for_every_length(tmp_path: Path):
    # Free Gap Algorithm 3 (geometric) with each noise parameter named in the loop (`scale1 = 1 - exp(-eps2 / 2)`,
    # `xi ~ Geo(scale1)`): the cost coefficient -ln(1 - scale1) is eps2/2 in exact arithmetic
    text = (ROOT / "specs" / "freegap" / "alg3_adaptive_svt_gap_geo.dp").read_text()
    assert "    xi ~ Geo(1 - exp(-eps2 / 2))\n" in text
    text = text.replace("    xi ~ Geo(1 - exp(-eps2 / 2))\n", "    scale1 = 1 - exp(-eps2 / 2)\n    xi ~ Geo(scale1)\n")
    _proved_for_every_length(tmp_path / "named_scale.dp", text)


# ------------------------------------------------------------------------- a guard true at every drawn member

ONE_LOOP_GUARDED = (ROOT / "specs" / "dworkroth" / "above_threshold_presampled.dp").read_text()


def _one_loop(text: str) -> str:
    """AboveThreshold with its noise drawn first, written as one loop (the alignment's guard kept)."""
    fill = "  for i in 0 .. len(q) {\n    nu ~ Lap(4 / eps)\n    noisy[i] = q[i] + nu\n  }\n"
    walk = "  for j in 0 .. len(q) {\n"
    assert fill in text and walk in text
    return text.replace(fill, "").replace(walk, walk + "    nu ~ Lap(4 / eps)\n    noisy[j] = q[j] + nu\n", 1)


def test_a_guard_past_the_output_in_one_loop_is_proved_for_every_length(tmp_path: Path):
    # `i < len(out) and ...` in the shift of a loop whose every iteration outputs: true at every drawn member
    _proved_for_every_length(tmp_path / "one_loop.dp", _one_loop(ONE_LOOP_GUARDED))


@pytest.mark.parametrize(("change", "kept"), [
    (None, False),
    # an iteration that may halt before it outputs: member i may be drawn with i = len(out)
    (("    if noisy[j] >= T_hat {\n", "    if noisy[j] >= T_hat + 1 { break }\n    if noisy[j] >= T_hat {\n"), True),
    # a loop that does not start at 0
    (("for j in 0 .. len(q) {", "for j in 1 .. len(q) {"), True),
])
def test_when_a_guard_is_true_at_every_drawn_member(change, kept: bool):
    from align.checker.guards import drawn_guards

    rewritten = drawn_guards(_changed("g.dp", _one_loop(ONE_LOOP_GUARDED), *([change] if change else [])))
    assert (rewritten is None) == kept
    if rewritten is not None:
        (nu,) = [sh for sh in rewritten.mechanism.alignment.shifts if sh.var == "nu"]
        assert "len(out)" not in unparse(nu.shift)


# ------------------------------------------------------------------------------ a list computed once, hoisted

ALG6 = (ROOT / "specs" / "freegap" / "alg6_hybrid_estimates.dp").read_text()


def _inlined(text: str) -> str:
    """Algorithm 6 with `order = top_k(noisy, k)` written where it is read, in the loop."""
    assert "  order = top_k(noisy, k)\n" in text and "    j = order[i]\n" in text
    return text.replace("  order = top_k(noisy, k)\n", "").replace("    j = order[i]\n", "    j = top_k(noisy, k)[i]\n")


def test_a_ranking_computed_in_the_loop_is_proved_for_every_length(tmp_path: Path):
    _proved_for_every_length(tmp_path / "inlined.dp", _inlined(ALG6))


@pytest.mark.parametrize(("change", "hoisted"), [
    (None, True),
    # the loop may not run (no clause makes k >= 1): the call would run where the written program does not
    (("requires eps > 0, 1 <= k, k <= len(q), 0 < theta < 1", "requires eps > 0, k <= len(q), 0 < theta < 1"),
     False),
    # evaluated only on some iterations (under a branch of a conditional expression)
    (("    j = top_k(noisy, k)[i]\n", "    j = i > 0 ? top_k(noisy, k)[i] : 0\n"), False),
    # reads what the loop writes
    (("    j = top_k(noisy, k)[i]\n", "    noisy[0] = 0\n    j = top_k(noisy, k)[i]\n"), False),
])
def test_when_a_call_in_a_loop_is_hoisted(change, hoisted: bool):
    from align.checker.hoist import hoist

    rewritten = hoist(_changed("h.dp", _inlined(ALG6), *([change] if change else [])))
    assert (rewritten is not None) == hoisted
    if rewritten is not None:
        assert [unparse(s.value) for s in rewritten.mechanism.body if isinstance(s, n.Assign)
                and s.target == "top_k_value"] == ["top_k(noisy, k)"]


# ------------------------------------------------------------------- an output value read again, named once

RELEASED = (ROOT / "specs" / "counting" / "released_estimate_then_above_threshold.dp").read_text()


def _written_out(text: str) -> str:
    """The released estimate with `base` written out where it is output and where the threshold reads it."""
    for old, new in (("  base = q[0] + t\n", ""), ("output NUM(base)", "output NUM(q[0] + t)"),
                     ("T_hat = T + base + rho", "T_hat = T + (q[0] + t) + rho")):
        assert old in text
        text = text.replace(old, new)
    return text


def test_an_output_value_read_again_is_proved_in_parts_for_every_length(tmp_path: Path):
    _proved_for_every_length(tmp_path / "written_out.dp", _written_out(RELEASED))


@pytest.mark.parametrize(("change", "named"), [
    (None, True),
    # a name the value reads is assigned again after the output: a later `q[0] + t + s` is another value
    (("output NUM(q[0] + t)", "s = 0\n  output NUM(q[0] + t + s)\n  s = 1"), False),
])
def test_when_an_output_value_is_named(change, named: bool):
    from align.checker.named_outputs import name_outputs

    # the changed program's alignment reads the same value as its output
    changes = [change, ("T + (q[0] + t) + rho", "T + (q[0] + t + s) + rho")] if change else []
    rewritten = name_outputs(_changed("o.dp", _written_out(RELEASED), *changes))
    assert (rewritten is not None) == named
    if rewritten is not None:
        body = [unparse(s.value) if isinstance(s, (n.Assign, n.Output)) else None for s in rewritten.mechanism.body]
        assert body[1:3] == ["q[0] + t", "NUM(released)"]
