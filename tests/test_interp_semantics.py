"""The interpreter's semantics, construct by construct, in both evaluators; runtime errors are located diagnostics.

Each program is run by the scalar evaluator (with the noise given) and by the vectorised one (a few lanes), and
both must give the stated output or the stated error.
"""

from __future__ import annotations

import numpy as np
import pytest

from align.diagnostics import SpecError
from align.interp.alignment import evaluate_alignment, lane_noise
from align.interp.errors import RunError
from align.interp.outputs import normalize_scalar_output
from align.interp.runner import chunks, prepare_arguments, prepare_neighbour, run_chunk, sample
from align.interp.scalar import Interpreter, NoiseValues
from align.interp.values import Tag
from align.parse import parse_source, read_source
from align.render.text import summary_text
from align.resolve import resolve
from align.span import Source

from .conftest import SPECS


def mechanism(body: str, params: str = "", header: str = ""):
    text = f"mechanism m({params})\n  privacy 1\n{header}{{\n{body}\n}}\n"
    return resolve(parse_source(Source("test.dp", text))).mechanisms[0]


def both(mech, args: dict, noise: dict | None = None) -> list:
    """The output of the scalar evaluator, checked equal to every lane of a vectorised run when there is no noise."""
    typed = prepare_arguments(mech, args)
    scalar = Interpreter(mech, NoiseValues(mech, noise or {}), trace=False).run(typed)
    result = normalize_scalar_output(scalar.out, mech.published_type)
    if not mech.noise:
        out = sample(mech, typed, 3, seed=0)
        assert [out.value(i) for i in range(3)] == [result] * 3
    return result


def error_of(mech, args: dict, noise: dict | None = None) -> tuple[str, int, list[str]]:
    """The error code and line, from the scalar evaluator; the vectorised one (when noise-free) must agree."""
    typed = prepare_arguments(mech, args)
    with pytest.raises(RunError) as info:
        Interpreter(mech, NoiseValues(mech, noise or {}), trace=False).run(typed)
    d = info.value.diagnostic
    if not mech.noise:
        with pytest.raises(RunError) as vinfo:
            sample(mech, typed, 4, seed=0)
        assert (vinfo.value.diagnostic.code, vinfo.value.diagnostic.span) == (d.code, d.span)
        assert d.message == vinfo.value.diagnostic.message
    return d.code, d.span.line, [n.message for n in d.notes]


def test_for_is_half_open_and_division_is_real():
    mech = mechanism("for i in 2 .. 5 { output i / 2 }")
    assert both(mech, {}) == [1.0, 1.5, 2.0]
    mech = mechanism("for i in 0 .. k { output i * k }", "k: int")
    assert both(mech, {"k": 3}) == [0, 3, 6] and both(mech, {"k": 0}) == []


def test_a_family_member_is_keyed_by_the_loop_variable():
    mech = mechanism("for i in 2 .. 4 { x ~ Lap(1) output x }")
    assert both(mech, {}, {"x": [None, None, 0.5, -0.25]}) == [0.5, -0.25]
    chunk = run_chunk(mech, {}, 7, 0, 5)
    noise = lane_noise(chunk.run, 3)
    assert noise["x"][:2] == [None, None] and len(noise["x"]) == 4
    assert chunk.outputs.value(3) == noise["x"][2:]


def test_a_mechanism_may_output_nothing():
    from align.interp.runner import Summary

    mech = mechanism("y ~ Lap(1)")
    out = sample(mech, {}, 10, seed=0)
    assert out.length.tolist() == [0] * 10 and out.real_values().shape == (10, 0)
    summary = Summary.of(mech)
    summary.add(out)
    assert "10  100.0000%  []" in summary_text(summary)


def test_tags_tuples_and_lists():
    mech = mechanism("v = [1, 2]\nv[2] = 7\nv[0] = 5\noutput TOP(v[0], (v[1], v[2]))\noutput BOT")
    assert both(mech, {}) == [Tag("TOP", (5, (2, 7))), Tag("BOT")]


def test_ties_go_to_the_lower_index():
    mech = mechanism("output (top_k(v, 2), top_k_with_gaps(v, 2), argmax(v), argmin(v), "
                     "argmax(l in 0 .. len(v): v[l]), max(v), min(v))", "v: real[]")
    assert both(mech, {"v": [1, 3, 3, 2, 1]}) == [([1, 2], [(1, 0.0), (2, 1.0)], 1, 0, 1, 3.0, 1.0)]


def test_ties_under_integer_noise_agree_between_evaluators():
    mech = mechanism("for i in 0 .. 4 { g ~ Geo(0.9)\n noisy[i] = q[i] + g }\noutput (top_k(noisy, 3), argmax(noisy))",
                     "q: int[]")
    args = prepare_arguments(mech, {"q": [0, 0, 0, 0]})
    for chunk in chunks(mech, args, 300, seed=2):
        for lane in range(chunk.outputs.n):
            scalar = Interpreter(mech, NoiseValues(mech, lane_noise(chunk.run, lane)), trace=False).run(args)
            assert normalize_scalar_output(scalar.out, mech.published_type) == chunk.outputs.value(lane)
    # Geo(0.9) is 0 with probability 0.9, so all four are tied in 0.9^4 = 66% of the samples: lowest indices win.
    values = [chunk.outputs.value(lane) for lane in range(chunk.outputs.n)]
    assert sum(v == [([0, 1, 2], 0)] for v in values) > 0.5 * len(values)


def test_comprehensions_with_filters_and_index_sets():
    mech = mechanism("pairs = top_k_with_gaps(v, 2)\nI = indices(pairs)\n"
                     "output (sum(l in 0 .. len(v) if l != 2: l), count(l in 0 .. len(v): v[l] > 1), "
                     "all(l in I: v[l] >= 3), any(l in 0 .. 5 if l not in I: l == 1), "
                     "max(l in 0 .. len(v) if l not in I: v[l]), argmin(l in I: v[l]), 3 in I, 0 in 1 .. 3)",
                     "v: real[]")
    assert both(mech, {"v": [1, 4, 2, 3]}) == [(4, 3, True, False, 2.0, 3, True, False)]


def test_short_circuits_guard_errors():
    mech = mechanism("for i in 0 .. 4 { if i < len(v) and v[i] > 0 { output i } }\n"
                     "output (len(v) > 9 ? v[9] : -1.0)", "v: real[]")
    assert both(mech, {"v": [1, -1, 2]}) == [0, 2, -1.0]


def test_break_is_per_sample():
    mech = mechanism("for i in 0 .. 10 { x ~ Lap(1)\n output i\n if x > 0 { break } }")
    out = sample(mech, {}, 2000, seed=3)
    assert out.length.min() >= 1 and out.length.max() <= 10 and len(set(out.length.tolist())) > 3
    assert abs(np.mean(out.length == 1) - 0.5) < 0.05


def test_errors_on_lanes_that_do_not_run_are_not_errors():
    mech = mechanism("x ~ Lap(1)\nif x > 0 { output ln(x) } else { output ln(-x) }")
    out = sample(mech, {}, 1000, seed=1)
    assert out.n == 1000


@pytest.mark.parametrize("body,params,args,code,line", [
    ("output v[3]", "v: real[]", {"v": [1, 2]}, "index-out-of-range", 4),
    ("output v[-1]", "v: real[]", {"v": [1, 2]}, "index-out-of-range", 4),
    ("x[0] = 1\nx[2] = 3", "", {}, "list-gap", 5),
    ("output ln(a)", "a: real", {"a": 0}, "math-domain", 4),
    ("output sqrt(a)", "a: real", {"a": -1}, "math-domain", 4),
    ("output a ^ 0.5", "a: real", {"a": -8}, "math-domain", 4),
    ("output 1 / a", "a: real", {"a": 0}, "division-by-zero", 4),
    ("output top_k_with_gaps(v, 2)", "v: real[]", {"v": [1, 2]}, "too-few-entries", 4),
    ("output top_k(v, 3)", "v: real[]", {"v": [1, 2]}, "too-few-entries", 4),
    ("output max(l in 0 .. len(v): v[l])", "v: real[]", {"v": []}, "empty-reduction", 4),
    ("output argmax(v)", "v: real[]", {"v": []}, "empty-reduction", 4),
    ("if a > 0 { y = 1 }\noutput y", "a: real", {"a": -1}, "undefined-value", 5),
])
def test_runtime_errors_are_located(body, params, args, code, line):
    mech = mechanism(body, params)
    assert error_of(mech, args)[:2] == (code, line)


def test_parameters_cannot_be_assigned():
    with pytest.raises(SpecError):
        mechanism("v[3] = 1.0", "v: real[]")


def test_a_vector_error_names_the_sample():
    mech = mechanism("x ~ Lap(1)\nif x > 3 { output ln(x - 100) }")
    with pytest.raises(RunError) as info:
        sample(mech, {}, 5000, seed=1)
    notes = [n.message for n in info.value.diagnostic.notes]
    assert info.value.diagnostic.code == "math-domain" and notes and notes[0].startswith("in sample ")


def test_arguments_are_checked_against_types_and_requires():
    mech = mechanism("output k", "k: int, v: real[], b: bool", "  requires k >= 1, len(v) > k\n")
    assert prepare_arguments(mech, {"k": 1, "v": [1, 2.5], "b": True}) == {"k": 1, "v": [1.0, 2.5], "b": True}
    for args, code in [({"k": 1, "v": [1, 2]}, "missing-argument"),
                       ({"k": 1.5, "v": [1, 2], "b": True}, "argument-type"),
                       ({"k": 1, "v": [1, "x"], "b": True}, "argument-type"),
                       ({"k": 1, "v": 3, "b": True}, "argument-type"),
                       ({"k": 1, "v": [1, 2], "b": 1}, "argument-type"),
                       ({"k": 1, "v": [1, 2], "b": True, "z": 0}, "unknown-argument"),
                       ({"k": 0, "v": [1, 2], "b": True}, "requires-violated"),
                       ({"k": 2, "v": [1, 2], "b": True}, "requires-violated")]:
        with pytest.raises(SpecError) as info:
            prepare_arguments(mech, args)
        assert info.value.diagnostics[0].code == code, args


def test_neighbours_must_be_adjacent():
    path = SPECS / "freegap" / "alg1_adaptive_svt_gap_monotone.dp"
    mech = resolve(parse_source(read_source(str(path)))).mechanisms[0]
    args = prepare_arguments(mech, {"q": [1, 2, 3], "T": 1, "k": 1, "eps": 1, "theta": 0.5})
    assert prepare_neighbour(mech, args, {"q": [2, 3, 4]}) == {"q": [2.0, 3.0, 4.0]}
    for q, detail in [([3, 2, 3], "|q[0] - q'[0]| = 2 > 1"), ([2, 1, 3], "neither"), ([1, 2], "len(q') = 2")]:
        with pytest.raises(SpecError) as info:
            prepare_neighbour(mech, args, {"q": q})
        assert info.value.diagnostics[0].code == "not-adjacent" and detail in info.value.diagnostics[0].message
    with pytest.raises(SpecError) as info:
        prepare_neighbour(mech, args, {"T": 2, "q": [1, 2, 3]})
    assert info.value.diagnostics[0].code == "unknown-argument"


def test_the_claim_reads_the_output():
    """Lemma 7: Algorithm 5 claims (t/k) eps with t = len(out); the check evaluates it at each sample's output."""
    mech = resolve(parse_source(read_source(str(SPECS / "freegap" / "alg5_hybrid_identity.dp")))).mechanisms[0]
    args = prepare_arguments(mech, {"q": [3, 1, 4, 1, 5], "T": 2, "k": 3, "eps": 1})
    chunk = run_chunk(mech, args, 1, 0, 500)
    _, claim = evaluate_alignment(mech, args, prepare_neighbour(mech, args, {"q": [4, 2, 5, 2, 6]}), chunk.run)
    assert np.allclose(claim, chunk.outputs.length / 3 * 1.0)
    assert len(set(chunk.outputs.length.tolist())) > 1


def test_dwork_roth_monitoring_example():
    """Seed 004's example (its symbols were lost; T and eps are ours): 1000 sensitivity-1 metrics, all 0 except
    an anomaly. AboveThreshold (T = 100, eps = 1) halts at 700 in every one of 2000 runs; Sparse (c = 3,
    T = 150, eps = 2) reports exactly the anomalies at 100, 400 and 800 (value 300) and halts after the third."""
    above = resolve(parse_source(read_source(str(SPECS / "dworkroth" / "above_threshold.dp")))).mechanisms[0]
    q = [0] * 1000
    q[700] = 200
    out = sample(above, prepare_arguments(above, {"q": q, "T": 100, "eps": 1}), 2000, seed=7)
    assert (out.length == 701).all()
    assert all(out.value(i)[-1] == Tag("TOP") for i in range(0, 2000, 97))
    sparse = resolve(parse_source(read_source(str(SPECS / "dworkroth" / "sparse.dp")))).mechanisms[0]
    q = [0] * 1000
    for j in (100, 400, 800):
        q[j] = 300
    out = sample(sparse, prepare_arguments(sparse, {"q": q, "T": 150, "c": 3, "eps": 2}), 2000, seed=7)
    assert (out.length == 801).all()
    tags = out.columns()[0]
    assert tags.name == "tag"
    top = sparse.tags.index("TOP")
    hits = [set(np.flatnonzero(row == top).tolist()) for row in tags.data[:50]]
    assert all(h == {100, 400, 800} for h in hits)
    assert ((tags.data == top) & tags.valid).sum(axis=1).tolist() == [3] * 2000
