"""The checker: every spec gets its header's expected verdict; every refutation is confirmed by replay."""

from __future__ import annotations

import io
import json
import re
from functools import cache
from pathlib import Path

import pytest
import sympy

from align import nodes as n
from align.checker.mixture import _sample_parameters, _sympy
from align.checker.verify import Options, overall_scope, overall_status, verify_mechanism
from align.cli import main
from align.expectations import read_expectations
from align.obligations import ObligationId
from align.parse import parse_source, read_source
from align.pipeline import verify
from align.resolve import resolve
from align.smt.solver import Limits, fresh_context
from align.span import Source
from align.symbolic import symbol
from align.unparse import unparse

from .conftest import ROOT, SPECS, corpus, corpus_params
from .test_adjacency import STUDENT_HISTOGRAM

FILES = corpus()
# The corpus verification is cached per process (`verified`): with `--dist loadgroup`, every test that reads it
# (here and in test_golden, test_formats and test_words) runs in one worker, so the corpus is verified once.
VERIFIED = pytest.mark.xdist_group("corpus-verdicts")


@cache
def verified(path: Path):
    """The verdicts `align verify` reports (`pipeline.verify`: the checker's, qualified where a proof in exact
    arithmetic rests on a float-sensitive comparison), at the default --max-length."""
    source = read_source(str(path.relative_to(ROOT)))
    mech = resolve(parse_source(source)).mechanisms[0]
    return source, mech, list(verify(mech, Options(max_length=3)).verdicts)


@VERIFIED
@pytest.mark.parametrize("path", corpus_params(FILES))
def test_spec_gets_its_expected_verdict(path: Path):
    source, mech, verdicts = verified(path)
    status = overall_status(verdicts)
    by_id: dict[str, list] = {}
    for v in verdicts:
        by_id.setdefault(v.obligation.id, []).append(v)
    for e in read_expectations(source):
        if e.kind in ("proved", "bounded"):
            # `proved` is for every input; a proof for lengths <= 3 only is `bounded`, never `proved`
            assert status == e.kind, [(v.obligation.id, v.status, v.scope, v.reason) for v in verdicts]
            if e.kind == "proved":
                # every `proved` spec is proved for every input length (or for all inputs): none is bounded
                assert overall_scope(verdicts) in ("for every input length", "for all inputs"), \
                    [(v.obligation.id, v.scope, v.notes) for v in verdicts]
        elif e.kind == "not-proved":
            assert any(v.status == "refuted" for v in by_id[e.obligation]), \
                [(v.obligation.id, v.status, v.reason) for v in verdicts]
        elif e.kind == "unknown":
            assert status == "unknown" and any(v.status == "unknown" for v in by_id[e.obligation]), \
                [(v.obligation.id, v.status, v.reason) for v in verdicts]
        elif e.kind == "mixture-rule":
            (mix,) = [v for v in verdicts if v.obligation.id == "MIX"]
            assert mix.status == "proved", (mix.status, mix.reason)
            assert all(v.status == "proved" for v in verdicts), [(v.obligation.id, v.status) for v in verdicts]
            expected = _sympy(e.value, {})
            # A decimal expectation is the exact value rounded up in its last digit.
            tolerance = 1e-12
            if expected.is_number:
                digits = len(str(sympy.Rational(str(e.value.value)).evalf(20)).split(".")[-1].rstrip("0"))
                tolerance = 10.0 ** -digits if digits else 1e-12
            for point in _sample_parameters(mech, 4, seed=1) or [{}]:
                subs = {symbol(k): sympy.Rational(str(v)) for k, v in point.items()}
                rule = float(mix.value.subs(subs).evalf(30))
                value = float(expected.subs(subs).evalf(30))
                assert rule <= value + 1e-12 and rule == pytest.approx(value, rel=1e-12, abs=tolerance)
    for v in verdicts:
        assert v.status not in ("proved", "bounded") or v.scope, "a proof says what it covers"
        assert v.status != "bounded" or (v.scope.startswith("for ") and "<=" in v.scope), v.scope
        assert v.status != "proved" or "<=" not in v.scope, "a bounded scope is never `proved`"


@VERIFIED
@pytest.mark.parametrize("path", corpus_params(FILES))
def test_every_refutation_really_breaks_its_obligation(path: Path):
    _, _, verdicts = verified(path)
    for v in verdicts:
        if v.status != "refuted":
            continue
        assert v.counterexample is not None
        cex = v.counterexample.to_json()
        assert cex["obligation"] == v.obligation.id
        if v.obligation.id == "C4b":
            # Acyclicity is not a property of one run: the witness is a self-dependent shift or a cycle.
            assert "depends on" in cex["why"] or "cycle" in cex["why"], cex["why"]
        elif v.obligation.id == "MIX":
            assert cex["claim"] < cex["epsilon"]
        elif v.obligation.id != "C2":
            # Replayed with the interpreter's plain floating-point evaluation of the spec.
            assert cex["replay"]["confirmed"], cex["replay"]


SVT_FAMILY = ["freegap/alg1_adaptive_svt_gap.dp", "freegap/alg1_adaptive_svt_gap_monotone.dp",
              "freegap/alg1_adaptive_svt_gap_tuples.dp",
              "freegap/alg2_svt_gap.dp", "freegap/alg3_adaptive_svt_gap_exp.dp", "freegap/alg3_adaptive_svt_gap_geo.dp",
              "dworkroth/above_threshold.dp", "dworkroth/sparse.dp", "dworkroth/numeric_sparse.dp",
              "dworkroth/histogram.dp", "counting/partial_sums.dp", "counting/periodic_counts.dp",
              "counting/noisy_counts_above_threshold.dp", "dworkroth/above_threshold_presampled.dp"]
RANKED = ["freegap/alg4_noisy_top_k_gap.dp", "freegap/alg4_noisy_top_k_gap_counting.dp",
          "freegap/alg6_hybrid_estimates.dp", "freegap/noisy_max.dp", "freegap/noisy_min.dp"]


@pytest.mark.slow
@VERIFIED
@pytest.mark.parametrize("name,how", [(name, "loop invariant:") for name in SVT_FAMILY] +
                         [(name, "for every length: `") for name in RANKED])
def test_loops_and_rankings_are_proved_for_every_input_length(name: str, how: str):
    _, _, verdicts = verified(SPECS / name)
    assert overall_status(verdicts) == "proved"
    assert {v.scope for v in verdicts} == {"by construction", "for every input length"}, \
        [(v.obligation.id, v.scope, v.notes) for v in verdicts]
    # the report says how: the loop invariant, or the ranking's defining relation and the lemmas it used
    (c4a,) = [v for v in verdicts if v.obligation.id == "C4a"]
    assert any(note.startswith(how) for note in c4a.notes), c4a.notes


BOUNDED = "incorrect/noisy_answers_requires_long_input.dp"


@pytest.mark.slow
def test_bounded_proofs_say_so_in_every_format(monkeypatch: pytest.MonkeyPatch):
    _, _, verdicts = verified(SPECS / BOUNDED)
    assert overall_status(verdicts) == "bounded"
    # the scope names what was enumerated: every length up to 3
    assert {v.scope for v in verdicts} == {"by construction", "for every input length", "for lengths <= 3"}
    (bounded,) = [v for v in verdicts if v.status == "bounded"]
    assert bounded.obligation.id == "C4c"
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("NO_COLOR", "1")
    for fmt, accept, expected in (("full", False, 3), ("concise", False, 3), ("json", False, 3), ("full", True, 0)):
        out = io.StringIO()
        argv = ["verify", "--output-format", fmt, f"specs/{BOUNDED}"]
        assert main(argv + (["--accept-bounded"] if accept else []), out, io.StringIO()) == expected
        text = out.getvalue()
        assert "for lengths <= 3" in text
        if fmt == "full":
            assert "verdict      bounded — no obligation refuted, but proved only for lengths <= 3" in text
        if fmt == "concise":
            assert ": bounded (for lengths <= 3): " in text
        if fmt == "json":
            mechanism = json.loads(text)["files"][0]["mechanisms"][0]
            assert mechanism["status"] == "bounded" and mechanism["scope"] == "for lengths <= 3"


def _mutant(*replacements: tuple[str, str]):
    text = (SPECS / "freegap" / "alg2_svt_gap.dp").read_text()
    for old, new in replacements:
        assert old in text
        text = text.replace(old, new)
    return resolve(parse_source(Source("mutant.dp", text))).mechanisms[0]


@pytest.mark.parametrize("change,failing", [
    (("privacy eps", "privacy eps / 2"), "C4c"),
    (("xi[i]' = xi[i] + (out[i] is TOP ? 1 + q[i] - q'[i] : 0)", "xi[i]' = xi[i]"), "C4a"),
    (("eta' = eta + 1", "eta' = eta"), "C4a"),
    (("if cost > eps - eps1 { break }", ""), "C4c"),
    (("if cost > eps - eps1 { break }", "if cost > eps { break }"), "C4c"),
    ((("xi ~ Lap(2 / eps1)", "xi ~ Exp(2 / eps1)"), ("? 1 + q[i] - q'[i] :", "? q[i] - q'[i] :")), "C4d"),
    ((("xi ~ Lap(2 / eps1)", "xi ~ Gumbel(0, 2 / eps1)"),), "C3"),
])
def test_broken_variants_are_refuted(change, failing):
    change = change if isinstance(change[0], tuple) else (change,)
    verdicts = verify_mechanism(_mutant(*change), Options(max_length=2))
    refuted = {v.obligation.id for v in verdicts if v.status == "refuted"}
    assert failing in refuted


def test_unknown_is_never_proved():
    mech = _mutant(("privacy eps", "privacy eps"))
    verdicts = verify_mechanism(mech, Options(max_length=2, limits=Limits(timeout_ms=10_000, rlimit=1)))
    assert overall_status(verdicts) == "unknown"
    assert all(v.status in ("unknown", "proved") for v in verdicts)
    # only what needs no solver: by construction, acyclicity of shifts that read no noise (syntax), and C4d of
    # Laplace noise (its support is the whole line: the induction has no condition to ask)
    assert {v.obligation.id for v in verdicts if v.status == "proved"} <= {"C1", "C5", "C3", "C4b", "C4d"}
    for v in verdicts:
        if v.obligation.id == "C4b" and v.status == "proved":
            assert any("no shift reads noise" in note for note in v.notes)


def test_verify_command_exit_codes_and_counterexample_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("NO_COLOR", "1")

    def run(*argv):
        out, err = io.StringIO(), io.StringIO()
        return main(list(argv), out, err), out.getvalue(), err.getvalue()

    code, out, _ = run("verify", "--max-length", "2", "specs/freegap/alg2_svt_gap.dp")
    assert code == 0 and "verdict      proved" in out
    cex_path = tmp_path / "cex.json"
    code, out, _ = run("verify", "--max-length", "2", "--counterexample", str(cex_path),
                       "specs/incorrect/svt_stoddard_no_query_noise.dp")
    assert code == 1 and "C4a        refuted" in out
    data = json.loads(cex_path.read_text())
    assert data["format"] == "align-counterexample/1" and data["obligation"] == "C4a"
    # The interpreter replays the file and sees the alignment fail on it.
    code, out, _ = run("run", "specs/incorrect/svt_stoddard_no_query_noise.dp", "--noise-file", str(cex_path),
                       "--aligned")
    assert code == 1, out
    code, out, _ = run("verify", "--output-format", "json", "--max-length", "2",
                       "specs/freegap/example1_laplace.dp", "tests/diagnostics/undefined_name.dp")
    assert code == 2
    doc = json.loads(out)
    assert doc["files"][0]["mechanisms"][0]["status"] == "proved" and not doc["files"][1]["ok"]
    code, out, _ = run("verify", "--output-format", "concise", "specs/r2dp/gamma.dp")
    assert code == 0 and out.startswith("specs/r2dp/gamma.dp:12:11: mechanism gamma: proved (for all inputs): "
                                        "C0(u)=proved C0(w)=proved MIX=proved")


def test_induction_does_not_prove_what_fails_for_long_inputs():
    from align.checker import induction
    from align.checker.verify import Options, strategy_context

    mech = _mutant(("if cost > eps - eps1 { break }", "if cost > eps { break }"))
    with fresh_context():
        result = induction.prove(mech, strategy_context(Options()))
    assert result.proved[ObligationId.C4C, None] is not None
    mech = _mutant(("privacy eps", "privacy eps"))
    with fresh_context():
        assert induction.prove(mech, strategy_context(Options())).proved[ObligationId.C4C, None] is None


@pytest.mark.parametrize("change,failing", [
    (("eta ~ Lap(1 / eps)", "eta ~ Lap(eps)"), "C4c"),
    (("privacy eps", "privacy eps / 2"), "C4c"),
    (("adjacent sum |q[i] - q'[i]| <= 1", "adjacent sum |q[i] - q'[i]| <= 2"), "C4c"),
    (("eta[i]' = eta[i] + (q[i] - q'[i])", "eta[i]' = eta[i] + 2 * (q[i] - q'[i])"), "C4a"),
])
def test_the_l1_induction_does_not_prove_broken_histograms(change, failing):
    # run directly (the bounded check would refute these first): the L1 ghost must not prove too much
    text = (SPECS / "dworkroth" / "histogram.dp").read_text()
    result = _induction(text, change)
    assert result.proved[ObligationId(failing), None] is not None, result.proved
    proof = _induction(text, (text, text))
    assert all(reason is None for reason in proof.proved.values()), proof.proved


def _induction(text: str, change: tuple[str, str]):
    """induction.prove on the spec text with one replacement (it raises NotInductive where it declines)."""
    from align.checker import induction
    from align.checker.verify import Options, strategy_context

    assert change[0] in text
    mech = resolve(parse_source(Source("mutant.dp", text.replace(change[0], change[1])))).mechanisms[0]
    with fresh_context():
        return induction.prove(mech, strategy_context(Options()))


def test_induction_declines_a_builtin_over_a_whole_list_parameter():
    # The abstract iteration sees a list parameter only at the loop index: `max(q)` in the loop has no encoding
    # there (it used to end in an internal AttributeError); the induction declines, the bounded verdict stands.
    from align.checker import induction
    from align.checker.verify import Options, strategy_context

    mech = _mutant(("if q[i] + xi - Tt >= 0 {", "if q[i] + xi - Tt >= 0 * max(q) {"))
    with fresh_context(), pytest.raises(induction.NotInductive, match="only at the loop index"):
        induction.prove(mech, strategy_context(Options()))


SMART_SUM_WINDOW = "eta1[i]' = eta1[i] + sum(l in i + 1 - M .. i + 1: q[l] - q'[l])"


SLOW = pytest.mark.slow


# Each variant takes a second or more but the one the fast tier keeps (a window that ends before i + 1).
@pytest.mark.parametrize("change,failing", [
    pytest.param(("privacy 2 * eps", "privacy 3 * eps / 2"), "C4c", marks=SLOW),
    pytest.param(("eta1 ~ Lap(1 / eps)", "eta1 ~ Lap(1 / (2 * eps))"), "C4c", marks=SLOW),
    ((SMART_SUM_WINDOW, SMART_SUM_WINDOW.replace(".. i + 1:", ".. i:")), "C4a"),
    pytest.param((SMART_SUM_WINDOW, SMART_SUM_WINDOW.replace("i + 1 - M", "i - M")), "C4a", marks=SLOW),
    pytest.param((SMART_SUM_WINDOW, SMART_SUM_WINDOW.replace("i + 1 - M", "i + 2 - M")), "C4a", marks=SLOW),
    pytest.param(("next = block + q[i] + eta1", "next = block + 2 * q[i] + eta1"), "C4a", marks=SLOW),
    pytest.param(("if (i + 1) % M == 0", "if (i + 1) % (M + 1) == 0"), "C4a", marks=SLOW),
    pytest.param(("adjacent sum |q[i] - q'[i]| <= 1", "adjacent |q[i] - q'[i]| <= 1"), "C4c", marks=SLOW),
])
def test_the_block_window_does_not_prove_broken_smart_sums(change, failing):
    # SmartSum's block-end shift reads the window sum(l in i + 1 - M .. i + 1: ...), a ghost reset at each
    # block's end (induction._Window): off-by-one windows, a block schedule the window does not follow, less
    # noise or a smaller claim are not proved (run directly: the bounded check would refute them first)
    from align.checker import induction

    text = (SPECS / "counting" / "smart_sum.dp").read_text()
    try:
        result = _induction(text, change)
    except induction.NotInductive:  # a window that does not end at i + 1 is not a block's: declined
        assert ".. i:" in change[1]
    else:
        assert result.proved[ObligationId(failing), None] is not None, result.proved
    mech = resolve(parse_source(Source("mutant.dp", text.replace(change[0], change[1])))).mechanisms[0]
    assert overall_status(verify_mechanism(mech)) == "refuted"


@pytest.mark.slow
def test_a_window_outside_a_block_end_is_not_known():
    # The ghost gives the window's value only where it ends a block; a shift that reads it in every iteration
    # (here the in-block noise) sees an unconstrained value there, and nothing is proved from it: that
    # alignment is wrong (mid-block the window reaches into the previous block), and the bounded check says so.
    from align.checker import induction
    from align.checker.verify import Options, strategy_context

    text = (SPECS / "counting" / "smart_sum.dp").read_text()
    mech = resolve(parse_source(Source("mutant.dp", text.replace(
        "eta2[i]' = eta2[i] + q[i] - q'[i]", "eta2[i]' = eta2[i] + sum(l in i + 1 - M .. i + 1: q[l] - q'[l])"))
    )).mechanisms[0]
    with fresh_context():
        result = induction.prove(mech, strategy_context(Options()))
    assert result.proved[ObligationId.C4A, None] is not None
    assert overall_status(verify_mechanism(mech)) == "refuted"
    # and a period that `requires` does not keep at least 1 has no block schedule: the induction declines
    mech = resolve(parse_source(Source("mutant.dp", text.replace("1 < M, M < len(q)", "M < len(q)")))).mechanisms[0]
    with fresh_context(), pytest.raises(induction.NotInductive, match="may not span a block"):
        induction.prove(mech, strategy_context(Options()))


def test_induction_over_a_public_bound_declines_reads_by_position():
    # `for j in 0 .. B` with B public: j need not be a valid index of q (B may exceed len(q), where the
    # interpreter stops with index-out-of-range); unless `requires` bounds B by len(q), reading q[j] there is
    # outside the shape, and the induction declines rather than read a symbol the real list does not have
    from align.checker import induction
    from align.checker.verify import Options, strategy_context

    mech = resolve(parse_source(Source("m.dp", """
mechanism bylist(q: real[], eps: real, B: int)
  adjacent |q[i] - q'[i]| <= 1
  requires eps > 0, B >= 1
  privacy eps
{
  for j in 0 .. B {
    eta ~ Lap(1 / eps)
    output q[j] + eta
  }
}

alignment bylist {
  eta[j]' = eta[j] + q[j] - q'[j]
}
"""))).mechanisms[0]
    with fresh_context(), pytest.raises(induction.NotInductive, match=r"may run past the end of q, and `q\[j\]` reads"):
        induction.prove(mech, strategy_context(Options()))


@pytest.mark.slow
def test_counterexamples_do_not_depend_on_earlier_calls():
    # z3's models depend on the history of its context; verify_mechanism starts a fresh one each time
    from align.checker.verify import verify_mechanism
    from align.parse import parse_source, read_source
    from align.resolve import resolve

    root = Path(__file__).resolve().parent.parent

    def counterexamples(path: str) -> list:
        mech = resolve(parse_source(read_source(str(root / path)))).mechanisms[0]
        return [(v.obligation.id, v.counterexample.args, v.counterexample.neighbour)
                for v in verify_mechanism(mech) if v.status == "refuted" and v.counterexample is not None]

    first = counterexamples("specs/incorrect/noisy_max_value_exp.dp")
    counterexamples("specs/incorrect/histogram_lap_eps.dp")
    assert counterexamples("specs/incorrect/noisy_max_value_exp.dp") == first and len(first) == 2


@pytest.mark.slow
def test_distinct_inputs_finds_counterexamples_with_another_neighbour():
    # for align test's input pairs: every refutation then has D != D' (Stoddard's alignment also breaks at
    # D = D', which is where z3 finds it otherwise)
    root = Path(__file__).resolve().parent.parent
    for name in ("svt_stoddard_no_query_noise", "noisy_max_value_exp", "histogram_lap_eps"):
        mech = resolve(parse_source(read_source(str(root / "specs" / "incorrect" / f"{name}.dp")))).mechanisms[0]
        pairs = [(v.counterexample.args["q"], v.counterexample.neighbour["q"])
                 for v in verify_mechanism(mech, Options(distinct_inputs=True))
                 if v.status == "refuted" and v.counterexample is not None and v.counterexample.neighbour]
        assert pairs and all(d != d2 for d, d2 in pairs), name


@pytest.mark.slow
def test_a_refutation_stops_the_bounded_check_after_its_length_unless_every_obligation_is_asked():
    # noisy_max_alignment_empty_max: C4a is refuted at length 1. The others are then checked up to length 1 only,
    # and say so; --every-obligation checks them up to --max-length. The refutation itself is the same.
    path = SPECS / "incorrect" / "noisy_max_alignment_empty_max.dp"
    mech = resolve(parse_source(read_source(str(path)))).mechanisms[0]
    stopped = {v.obligation.name: v for v in verify_mechanism(mech, Options(max_length=3))}
    every = {v.obligation.name: v for v in verify_mechanism(mech, Options(max_length=3, every_obligation=True))}
    assert stopped["C4a"].status == every["C4a"].status == "refuted"
    assert stopped["C4a"].counterexample == every["C4a"].counterexample
    for name in ("C0(eta)", "C2", "C4b", "C4c", "C4d"):
        assert stopped[name].status == every[name].status == "bounded", name
        assert stopped[name].scope == "for lengths <= 1" and every[name].scope == "for lengths <= 3", name
        assert any(note.startswith("checked no further: C4a is refuted") for note in stopped[name].notes), name
        assert not any(note.startswith("checked no further") for note in every[name].notes), name
    # lengths 0 and 1 are always checked: at length 0 the loop's noise xi is never drawn, and its C0 (theta = 1
    # makes eps1 = 0) is refuted at length 1, after C0(eta) at length 0
    closed = resolve(parse_source(read_source(str(SPECS / "incorrect" / "svt_gap_theta_closed.dp")))).mechanisms[0]
    statuses = {v.obligation.name: v.status for v in verify_mechanism(closed)}
    assert statuses["C0(eta)"] == statuses["C0(xi)"] == "refuted"


def test_obligations_and_verdicts_pickle():
    # details are computed lazily (sympy only when shown); the verdicts still cross process boundaries
    import pickle

    from align.rules import obligations

    mech = resolve(parse_source(read_source(str(SPECS / "incorrect" / "histogram_lap_eps.dp")))).mechanisms[0]
    obs = obligations(mech)
    again = pickle.loads(pickle.dumps(obs))
    assert again == obs and [o.details for o in again] == [o.details for o in obs]
    result = verify(mech)
    assert pickle.loads(pickle.dumps(result)).status == result.status == "refuted"


def test_the_every_obligation_flag_reaches_the_checker(monkeypatch: pytest.MonkeyPatch):
    import align.checker.verify as checker

    seen = []
    real = checker.verify_mechanism
    monkeypatch.setattr(checker, "verify_mechanism", lambda mech, options: seen.append(options) or real(mech, options))
    spec = str(SPECS / "freegap" / "example1_laplace.dp")
    for flags, expected in (([], False), (["--every-obligation"], True)):
        assert main(["verify", *flags, spec], stdout=io.StringIO(), stderr=io.StringIO()) == 0
        assert seen.pop().every_obligation is expected


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gamma", "uniform", "trunc_gaussian", "ensemble", "bernoulli", "point_mass"])
def test_the_mixture_rules_quadrature_cross_check_agrees_with_the_closed_form(name: str):
    """The R²DP cross-check recomputes the output density's ratio by quadrature of scipy's densities, independently
    of the closed-form MGFs, at parameter points that satisfy `requires` (among them Gamma shapes below 1, whose
    density is infinite at 0): it must agree with Theorem 4.1's ε far inside the 1e-6 the verdict allows. The
    quick evaluation the cross-check uses first agrees with the error-controlled one (at the sixth point of the
    truncated Gaussian, fixed-precision mpmath loses every digit: erf near 1 at 280 digits)."""
    from align.checker.mixture import Mixture, _at, _at_quickly, _numeric_sup

    mech = resolve(parse_source(read_source(str(SPECS / "r2dp" / f"{name}.dp")))).mechanisms[0]
    mix = Mixture(mech)
    rule = mix.epsilon()
    points = _sample_parameters(mech, 6)
    assert len(points) == 6
    for point in points:
        subs = {symbol(k): v for k, v in point.items()}
        exact = _at(rule, subs, 20)
        assert abs(_numeric_sup(mix, point) - exact) <= 1e-9 * max(1.0, abs(exact)), point
        assert abs(_at_quickly(rule, subs) - exact) <= 1e-12 * max(1.0, abs(exact)), point


def test_a_cross_check_disagreement_is_evaluated_again_before_it_is_reported(monkeypatch: pytest.MonkeyPatch):
    # the quick evaluation is not error-controlled: a wrong value from it must not make the verdict unknown
    from align.checker import mixture
    from align.rules import obligations

    mech = resolve(parse_source(read_source(str(SPECS / "r2dp" / "gamma.dp")))).mechanisms[0]
    monkeypatch.setattr(mixture, "_at_quickly", lambda e, subs: 1e6)
    verdict = mixture.verify(mech, next(o for o in obligations(mech) if o.id == ObligationId.MIX))
    assert verdict.status == "proved"
    assert not any("DISAGREE" in note for note in verdict.notes)


FUSED = (SPECS / "counting" / "noisy_counts_above_threshold.dp").read_text()


def _fuse(change: tuple[str, str]):
    from align.checker import fusion

    assert change[0] in FUSED
    return fusion.fuse(resolve(parse_source(Source("mutant.dp", FUSED.replace(*change)))).mechanisms[0])


def test_two_loops_in_sequence_are_fused_and_proved_for_every_length():
    """noisy counts, then a loop that thresholds them: fused (the report says so), then the induction's L1 budget."""
    _, _, verdicts = verified(SPECS / "counting" / "noisy_counts_above_threshold.dp")
    assert overall_scope(verdicts) == "for every input length"
    (c4a,) = [v for v in verdicts if v.obligation.id == "C4a"]
    assert any("were fused into one" in note for note in c4a.notes), c4a.notes
    fused = _fuse(("", ""))
    assert fused is not None
    (loop,) = fused.mechanism.body  # the two loops are one
    assert str(fused.mechanism.variables["noisy"]) == "real"  # the list became the iteration's value
    assert [site.loop for site in fused.mechanism.noise] == [loop]


def test_statements_after_the_second_loop_stay_after_the_fused_loop():
    """Loops that fill lists, then a ranking of them (a noisy max split into two loops, as the loop-fission rewrite
    writes it): the first two are fused, what follows them stays after the fused loop, and the program is proved
    for every length by the ranking's encoding."""
    from align.checker import fusion

    text = (SPECS / "freegap" / "noisy_max.dp").read_text()
    written = "    eta ~ Lap(2 / eps)\n    noisy[i] = q[i] + eta\n  }\n"
    assert written in text
    split = text.replace(written, "    eta ~ Lap(2 / eps)\n    etas[i] = eta\n  }\n"
                                  "  for i in 0 .. len(q) {\n    noisy[i] = q[i] + etas[i]\n  }\n")
    mech = resolve(parse_source(Source("split.dp", split))).mechanisms[0]
    fused = fusion.fuse(mech)
    assert fused is not None
    assert [type(st).__name__ for st in fused.mechanism.body] == ["For", "Output"]
    verdicts = list(verify(mech, Options(max_length=3)).verdicts)
    assert overall_status(verdicts) == "proved", [(v.obligation.id, v.status, v.reason) for v in verdicts]
    assert overall_scope(verdicts) == "for every input length"


def test_fill_loops_that_read_their_own_entries_and_a_walk_that_overwrites_them_are_fused():
    """DP-Sniper's SVT: the first loop computes m[i], then cmp[i] from m[i], then res[i]; the walk overwrites
    res[col_idx] once aborted. Each entry is read after it is written, at its own index: fused and proved."""
    verdicts = list(verify(resolve(parse_source(read_source("specs/peers/dpsniper_svt1.dp"))).mechanisms[0],
                           Options(max_length=3)).verdicts)
    assert overall_scope(verdicts) == "for every input length"
    (c4a,) = [v for v in verdicts if v.obligation.id == "C4a"]
    assert any("were fused into one" in note for note in c4a.notes), c4a.notes


ONE_LOOP = FUSED.replace("""    noisy[i] = q[i] + eta
  }
  for j in 0 .. len(q) {
    if noisy[j] >= T {""", """    noisy[i] = q[i] + eta
    if noisy[i] >= T {""")


def _own_entries(text: str):
    from align.checker import own_entries

    return own_entries.own_entries(resolve(parse_source(Source("own.dp", text))).mechanisms[0])


def test_a_list_read_only_at_its_own_index_is_the_iterations_value():
    """The fill loop and the walk of noisy_counts_above_threshold written as one loop that keeps `noisy[i]`: the
    list is the iteration's value, and the induction proves the loop for every length."""
    assert "noisy[i] >= T" in ONE_LOOP and "for j" not in ONE_LOOP
    rewritten = _own_entries(ONE_LOOP)
    assert rewritten is not None and "`noisy` (line" in rewritten.note
    assert str(rewritten.mechanism.variables["noisy"]) == "real"
    verdicts = list(verify(resolve(parse_source(Source("one_loop.dp", ONE_LOOP))).mechanisms[0],
                           Options(max_length=2)).verdicts)
    assert overall_scope(verdicts) == "for every input length"


@pytest.mark.parametrize("change", [
    # read where some path has not written it in this iteration
    ("    noisy[i] = q[i] + eta\n", "    if q[i] > 0 {\n      noisy[i] = q[i] + eta\n    }\n"),
    # another iteration's entry
    ("if noisy[i] >= T {", "if i > 0 and noisy[i - 1] >= T {"),
    # in a comprehension
    ("if noisy[i] >= T {", "if sum(l in 0 .. i + 1: noisy[l]) >= T {"),
    # after the loop
    ("      output BOT\n    }\n  }\n}", "      output BOT\n    }\n  }\n  output noisy[0] >= T ? TOP : BOT\n}"),
])
def test_a_list_read_elsewhere_stays_a_list(change):
    assert change[0] in ONE_LOOP
    assert _own_entries(ONE_LOOP.replace(*change)) is None


def test_loops_that_carry_variables_no_later_loop_reads_are_fused():
    """DP-Auditorium's SVT in five loops: fill, draw, compare, count (carrying `counter`, rewriting the outputs at
    their index once aborted), output. The first four merge into one that fills the lists, then fuse with the
    output loop; `counter` is read by no later loop: proved for every length."""
    verdicts = list(verify(resolve(parse_source(read_source("specs/peers/dpauditorium_svt1.dp"))).mechanisms[0],
                           Options(max_length=2)).verdicts)
    assert overall_scope(verdicts) == "for every input length"
    (c4a,) = [v for v in verdicts if v.obligation.id == "C4a"]
    assert any("carries `aborted`, `counter`, which the second neither reads nor writes" in note
               for note in c4a.notes), c4a.notes


@pytest.mark.parametrize("change,reason", [
    # 2. the first loop only samples and fills lists at its index
    (("    noisy[i] = q[i] + eta\n", "    noisy[i] = q[i] + eta\n    output TOP\n"), "more than sample"),
    (("noisy[i] = q[i] + eta", "noisy[len(q) - 1 - i] = q[i] + eta"), "other than at its index"),
    (("    eta ~ Lap(", "    if q[i] > 0 {\n      extra ~ Lap(1)\n    }\n    eta ~ Lap("), "samples in a branch"),
    (("noisy[i] = q[i] + eta", "if q[i] > 0 {\n      noisy[i] = 1\n    }\n    extra[i] = noisy[i]"),
     "reads a list it builds before it is written"),
    # ... and carries variables that no one else reads or writes
    (("  for i in 0 .. len(q) {\n    eta ~ Lap(1 / eps)\n    noisy[i] = q[i] + eta\n  }\n  for j in 0 .. len(q) {\n"
      "    if noisy[j] >= T {",
      "  seen = 0\n  for i in 0 .. len(q) {\n    eta ~ Lap(1 / eps)\n    noisy[i] = q[i] + eta\n    seen = i\n  }\n"
      "  for j in 0 .. len(q) {\n    if noisy[j] >= T + seen {"), "uses a variable that the first loop carries"),
    (("noisy[i] = q[i] + eta", "noisy[i] = q[i] + eta\n    extra[i] = noisy[0]"),
     "the first loop reads `noisy[0]`, not `noisy[i]`"),
    # 3. ... and writes them only there
    (("      output TOP\n", "      output TOP\n      noisy[0] = 0\n"), "other than at its index"),
    # 3. the second loop reads the lists at its own index, and not the first loop's noise
    (("if noisy[j] >= T {", "if noisy[0] >= T {"), "not `noisy[j]`"),
    (("if noisy[j] >= T {", "if sum(l in 0 .. len(q): noisy[l]) >= T {"), "not `noisy[j]`"),
    # 5. no break
    (("      output TOP\n", "      output TOP\n      break\n"), "may break"),
    # 4. after the loops too: the fused loop keeps the first loop's lists as scalars
    (("      output BOT\n    }\n  }\n", "      output BOT\n    }\n  }\n  output noisy[0] > T ? TOP : BOT\n"),
     "outside the loops use a list the first loop builds"),
])
def test_fusion_declines_where_a_hypothesis_fails(change, reason):
    from align.checker import fusion

    with pytest.raises(fusion.NotFusable, match=re.escape(reason)):
        _fuse(change)


def test_fusion_with_a_break_counts_the_outputs_before_the_walk():
    """`i < len(out)` says that iteration i has output only when nothing outputs before the walk (found by an
    adversarial search: presampled AboveThreshold with `output TOP` first was proved, its shifts past the halt not
    0); with P outputs before it on every path, `i < len(out) - P` does, when each iteration outputs at most once."""
    from align.checker import fusion

    text = (SPECS / "dworkroth" / "above_threshold_presampled.dp").read_text()
    first = "  rho ~ Lap("
    guard = "i < len(out) and "
    assert first in text and guard in text
    ahead = text.replace(first, "  output TOP\n" + first, 1)
    mech = resolve(parse_source(Source("first.dp", ahead))).mechanisms[0]
    with pytest.raises(fusion.NotFusable, match=re.escape("is not written `(i < len(out) - 1 and ...) ? e : 0`")):
        fusion.fuse(mech)
    counted = ahead.replace(guard, "i < len(out) - 1 and ").replace("out[i] is TOP", "out[i + 1] is TOP")
    assert counted != ahead
    fused = fusion.fuse(resolve(parse_source(Source("counted.dp", counted))).mechanisms[0])
    assert fused is not None and "holds at every index it draws" in fused.note
    # an output before the walk on some paths only, or an iteration that may output twice: declined
    branch = counted.replace("  output TOP\n" + first, "  if T > 0 { output TOP }\n" + first, 1)
    with pytest.raises(fusion.NotFusable, match="output on some paths only"):
        fusion.fuse(resolve(parse_source(Source("branch.dp", branch))).mechanisms[0])
    twice = text.replace("      output BOT\n", "      output BOT\n      output BOT\n", 1)
    assert twice != text
    with pytest.raises(fusion.NotFusable, match="may output more than once"):
        fusion.fuse(resolve(parse_source(Source("twice.dp", twice))).mechanisms[0])


def test_fusion_with_a_break_needs_the_shift_zero_past_the_output():
    """AboveThreshold with its noise drawn first: fused (its break allowed) only because the shift of nu is 0 past
    the output's end by its guard; the guard is dropped in the fused loop, where it holds at every drawn index."""
    from align.checker import fusion

    text = (SPECS / "dworkroth" / "above_threshold_presampled.dp").read_text()
    mech = resolve(parse_source(Source("presampled.dp", text))).mechanisms[0]
    fused = fusion.fuse(mech)
    assert fused is not None and "holds at every index it draws" in fused.note
    (nu,) = [sh for sh in fused.mechanism.alignment.shifts if sh.var == "nu"]
    assert "len(out)" not in unparse(nu.shift)
    for guard in ("i <= len(out) and ", "i < len(q) and "):  # not the guard: declined, bounded verdict
        mutant = resolve(parse_source(Source("m.dp", text.replace("i < len(out) and ", guard)))).mechanisms[0]
        with pytest.raises(fusion.NotFusable, match="may break"):
            fusion.fuse(mutant)


def test_statements_between_fused_loops_move_before_the_first():
    """The threshold noise drawn between the two loops: it commutes with the first loop (which only samples and
    fills noisy), moves before it, and the mechanism is proved for every length; a statement there that reads the
    list the first loop builds does not commute, and fusion declines."""
    from align.checker import fusion

    text = (SPECS / "dworkroth" / "above_threshold_presampled.dp").read_text()
    prefix = "  rho ~ Lap(2 / eps)\n  T_hat = T + rho\n"
    loop_end = "    noisy[i] = q[i] + nu\n  }\n"
    assert prefix in text and loop_end in text
    moved = text.replace(prefix, "").replace(loop_end, loop_end + prefix)
    mech = resolve(parse_source(Source("between.dp", moved))).mechanisms[0]
    verdicts = verify_mechanism(mech, Options(max_length=3))
    assert overall_status(verdicts) == "proved" and overall_scope(verdicts) == "for every input length"
    (c4a,) = [v for v in verdicts if v.obligation.id == "C4a"]
    assert any("move before the first loop" in note for note in c4a.notes), c4a.notes
    reading = moved.replace("T_hat = T + rho", "T_hat = T + rho + 0 * noisy[0]")
    with pytest.raises(fusion.NotFusable, match="use a list the first loop builds"):
        fusion.fuse(resolve(parse_source(Source("reads.dp", reading))).mechanisms[0])


def test_loops_over_different_ranges_are_not_fusions_shape():
    from align.checker import fusion

    shifted = FUSED.replace("for j in 0 .. len(q) {", "for j in 1 .. len(q) {")
    assert fusion.fuse(resolve(parse_source(Source("r.dp", shifted))).mechanisms[0]) is None


def test_fusion_declines_when_the_first_loop_reads_what_runs_after_it():
    """Fused, the first loop runs after the statements between the loops and interleaved with the second: a scale
    `s` that either writes would be read with another value (`nu ~ Lap(s)` with s doubled by the second loop
    draws more noise fused than written)."""
    from align.checker import fusion

    text = FUSED.replace("    eta ~ Lap(1 / eps)\n", "    eta ~ Lap(s)\n").replace(
        "  for i in 0 .. len(q) {\n", "  s = 1 / eps\n  for i in 0 .. len(q) {\n", 1)
    assert "Lap(s)" in text and "s = 1 / eps" in text
    for where, change in (("second", ("  for j in 0 .. len(q) {\n", "  for j in 0 .. len(q) {\n    s = s * 2\n")),
                          ("between", ("  for j in 0 .. len(q) {\n", "  s = 2 / eps\n  for j in 0 .. len(q) {\n"))):
        mutant = resolve(parse_source(Source(f"{where}.dp", text.replace(*change)))).mechanisms[0]
        with pytest.raises(fusion.NotFusable, match="the first loop reads `s`"):
            fusion.fuse(mutant)
    assert fusion.fuse(resolve(parse_source(Source("same.dp", text))).mechanisms[0]) is not None


def test_fusion_refusals_leave_the_bounded_check_to_decide():
    # hypothesis 3 and 5's guard specs: refuted by the bounded check, with fusion's reason in the notes
    for name, reason in (("fused_loops_read_next_entry", "not `noisy[j]`"),
                         ("fused_loops_break_alignment_past_output", "may break")):
        _, _, verdicts = verified(SPECS / "incorrect" / f"{name}.dp")
        assert overall_status(verdicts) == "refuted"
        assert any(reason in note for v in verdicts for note in v.notes), name


FOLDED = (SPECS / "counting" / "above_threshold_record_counts.dp").read_text()


def _fold(text: str):
    from align.checker import folds

    return folds.fold(resolve(parse_source(Source("fold.dp", text))).mechanisms[0])


def test_a_nested_loop_that_accumulates_becomes_a_fold_and_is_proved_for_every_length():
    _, _, verdicts = verified(SPECS / "counting" / "above_threshold_record_counts.dp")
    assert overall_status(verdicts) == "proved" and overall_scope(verdicts) == "for every input length"
    (c4a,) = [v for v in verdicts if v.obligation.id == "C4a"]
    assert any("c = c + count(l in 0 .. len(q): q[l] >= t[i])" in note for note in c4a.notes), c4a.notes
    folded = _fold(FOLDED)
    assert folded is not None
    (loop,) = [st for st in folded.mechanism.body if isinstance(st, n.For)]
    assert not any(isinstance(st, n.For) for st in loop.body)
    assert [site.loop for site in folded.mechanism.noise if site.family] == [loop]


@pytest.mark.parametrize("changes", [
    (),
    # signed terms, an else branch, a second accumulator read by the query
    ((("        c = c + 1\n", "        c = c + 2 * q[l]\n      } else {\n        c = c - 1\n        d = d + q[l]\n"),
      ("    c = 0\n", "    c = 0\n    d = 0\n"), ("if c + nu >= T_hat", "if c - d + nu >= T_hat"))),
])
def test_a_fold_computes_what_the_loop_computes(changes):
    """The interpreter runs the written and the rewritten program with one seed: the same outputs, sample by
    sample."""
    import numpy as np

    from align.interp.runner import sample
    from align.interp.trees import leaves

    text = FOLDED
    for change in changes:
        assert change[0] in text
        text = text.replace(*change)
    written = resolve(parse_source(Source("w.dp", text))).mechanisms[0]
    folded = _fold(text)
    assert folded is not None
    args = {"q": [0, 3, 1, 4, 2, 5, 1], "t": [1, 2, 3, 4, 5], "T": 5.0, "eps": 1.0}
    a, b = sample(written, args, 2000, 7), sample(folded.mechanism, args, 2000, 7)
    assert np.array_equal(a.length, b.length) and len(set(a.length.tolist())) > 1
    assert all(np.array_equal(x, y) for x, y in zip(leaves(a.tree), leaves(b.tree), strict=True))


BINS = STUDENT_HISTOGRAM.replace("    h[j] = h[j] + 1\n", """    if q[i] != 1 {
      h[j] = h[j] + 1
    } else {
      h[j] = h[j] - q[i]
    }
""")
"""tests/test_adjacency.py's loop histogram with a signed update in an `else`."""


def test_a_fold_of_bins_computes_what_the_loop_computes():
    """Bins counted in a loop through a temporary index (checker/folds.py, hypotheses 4 and 5), a signed update
    in an `else`: one fold per bin, and the interpreter runs the written and the rewritten program alike."""
    import numpy as np

    from align.interp.runner import sample
    from align.interp.trees import leaves

    written = resolve(parse_source(Source("w.dp", BINS))).mechanisms[0]
    assert BINS != STUDENT_HISTOGRAM
    folded = _fold(BINS)
    assert folded is not None and "h[2] = h[2] + sum(i in 0 .. len(q): " in folded.note
    args = {"q": [0, 3, 1, 4, -2, 2, 1, 7], "eps": 1.0}
    a, b = sample(written, args, 500, 7), sample(folded.mechanism, args, 500, 7)
    assert all(np.array_equal(x, y) for x, y in zip(leaves(a.tree), leaves(b.tree), strict=True))


@pytest.mark.parametrize("change,reason", [
    # hypothesis 4: the loop writes a list that is not bins, so it is not taken for a fold at all
    (("clamp(q[i], 0, 2)", "clamp(q[i], 0, 3)"), None),                          # a fourth bin: past the end
    (("clamp(q[i], 0, 2)", "q[i]"), None),                                       # any index
    (("h = [0, 0, 0]", "h = [0, 0, 0]\n  h = [0, 0]"), None),                     # assigned whole twice
    (("      h[j] = h[j] + 1", "      h[j] = h[j] + h[0]"), "writes the list `h` other than by"),
    # hypothesis 5: a temporary read after the loop is a variable the loop assigns
    (("  for b in 0 .. 3 {", "  eta0 ~ Lap(1 / eps)\n  output j + eta0\n  for b in 0 .. 3 {"),
     "assigns `j` other than by `j = j + e`"),
])
def test_folds_of_bins_decline_where_a_hypothesis_fails(change, reason):
    """Hypothesis 4 (every bin index inside the list whatever the inputs, the list assigned whole once) and 5 (a
    temporary read nowhere after the loop): otherwise the loop is left as written."""
    from align.checker import folds

    assert change[0] in BINS
    if reason is None:
        assert _fold(BINS.replace(*change, 1)) is None
        return
    with pytest.raises(folds.NotFoldable, match=re.escape(reason)):
        _fold(BINS.replace(*change, 1))


@pytest.mark.parametrize("change,reason", [
    (("        c = c + 1\n", "        c = c + c + 1\n"), "reads `c` while it accumulates it"),
    (("      if q[l] >= t[i] {", "      if q[l] >= t[i] + c {"), "reads `c` while it accumulates it"),
    (("    for l in 0 .. len(q) {", "    for l in 0 .. len(q) - c {"), "reads `c` while it accumulates it"),
    (("        c = c + 1\n", "        c = 2 * c\n"), "other than by `c = c + e`"),
    (("        c = c + 1\n", "        c = c + 1\n        break\n"), "breaks"),
    (("        c = c + 1\n", "        c = c + 1\n        output BOT\n"), "outputs"),
])
def test_folds_decline_where_a_hypothesis_fails(change, reason):
    from align.checker import folds

    assert change[0] in FOLDED
    with pytest.raises(folds.NotFoldable, match=re.escape(reason)):
        _fold(FOLDED.replace(*change))


def test_without_the_accumulator_check_a_non_private_fold_is_proved(monkeypatch: pytest.MonkeyPatch):
    """specs/incorrect/fold_reads_its_accumulator.dp (query 2^k - 1, not a count) is declined by hypothesis 3 of
    checker/folds.py (and refuted by the bounded check); with the hypothesis taken for granted, the proof for every
    length proves it."""
    from align.checker import folds, induction
    from align.checker.verify import Options, strategy_context

    text = (SPECS / "incorrect" / "fold_reads_its_accumulator.dp").read_text()
    with pytest.raises(folds.NotFoldable, match="reads `c` while it accumulates it"):
        _fold(text)
    monkeypatch.setattr(folds, "_reads_nothing_written", lambda loop, updates, *bins: None)
    folded = _fold(text)
    assert folded is not None
    with fresh_context():
        proof = induction.prove(folded.mechanism, strategy_context(Options()))
    assert proof.proved and all(reason is None for reason in proof.proved.values()), proof.proved


PARTS = (SPECS / "counting" / "histogram_then_above_threshold.dp").read_text()


def _parts(text: str):
    from align.checker import phases
    from align.checker.strategies import prove_for_every_length
    from align.checker.verify import Options, strategy_context

    mech = resolve(parse_source(Source("parts.dp", text))).mechanisms[0]
    with fresh_context():
        return phases.prove(mech, lambda part: prove_for_every_length(part, strategy_context(Options()))[0])


def test_two_parts_in_sequence_are_proved_part_by_part():
    """A histogram, then AboveThreshold: each part proved with its summand of the claim (the report says which),
    and every obligation of the whole proved for every length."""
    _, _, verdicts = verified(SPECS / "counting" / "histogram_then_above_threshold.dp")
    assert overall_status(verdicts) == "proved" and overall_scope(verdicts) == "for every input length"
    (c4c,) = [v for v in verdicts if v.obligation.id == "C4c"]
    assert any("with claim eps1 and lines" in note and "with claim eps2" in note for note in c4c.notes), c4c.notes
    result = _parts(PARTS)
    assert result is not None and all(reason is None for reason in result.proved.values())
    assert {key[1] for key in result.proved if key[0] == "C0"} == {"eta", "rho", "nu"}


def test_a_threshold_drawn_before_the_first_part_moves_to_the_second():
    """`rho ~ Lap(2 / eps2); T_hat = T + rho` written before the histogram's loop: only AboveThreshold reads them,
    and they commute with the loop, so they move to the second part's start and the parts are proved."""
    body = PARTS.split("{\n", 1)[1]
    moved = PARTS.replace(body, "  rho ~ Lap(2 / eps2)\n  T_hat = T + rho\n" +
                          body.replace("  rho ~ Lap(2 / eps2)\n  T_hat = T + rho\n", ""))
    assert moved != PARTS
    result = _parts(moved)
    assert result is not None and all(reason is None for reason in result.proved.values())


@pytest.mark.parametrize("change,reason", [
    # 1. the second part reads what the first assigns
    # (the threshold drawn before the first loop, whose answers read it too: AboveThreshold then reads T_hat from
    # the first part; a threshold that only the second part reads moves to it, below)
    ((PARTS.split("{\n", 1)[1], "  rho ~ Lap(2 / eps2)\n  T_hat = T + rho\n" +
      PARTS.split("{\n", 1)[1].replace("  rho ~ Lap(2 / eps2)\n  T_hat = T + rho\n", "")
      .replace("output NUM(q[i] + eta)", "output NUM(q[i] + eta + 0 * T_hat)")),
     "reads `T_hat`, which the first part assigns"),
    # 2. the claim's summands: one budget for both parts
    (("privacy eps1 + eps2", "privacy eps1"), "no share of the claim proves both parts"),
    (("privacy eps1 + eps2", "privacy eps2 + eps1 / 2"), "no share of the claim proves both parts"),
    # 3. a shift that reads the other part's noise
    (("rho' = rho + 1", "rho' = rho + 1 + eta[0] - eta[0]"), "the other part's noise"),
    # 4. the second part's alignment reads the output other than past the first part's outputs
    (("out[len(q) + j] is TOP", "out[j] is TOP"), "other than as `out[K + e]`"),
    (("out[len(q) + j] is TOP", "j < len(out) - 1 and out[len(q) + j] is TOP"), "other than as `out[K + e]`"),
])
def test_parts_decline_where_a_hypothesis_fails(change, reason):
    from align.checker.induction import NotInductive

    assert change[0] in PARTS
    with pytest.raises(NotInductive, match=re.escape(reason)):
        _parts(PARTS.replace(*change))


def test_a_second_part_reads_len_out_less_the_first_parts_outputs():
    # `len(out) - len(q)` past a first part that outputs len(q) items is the second part's own `len(out)`
    from align.checker import phases

    mech = resolve(parse_source(Source("p.dp", PARTS.replace(
        "out[len(q) + j] is TOP", "j < len(out) - len(q) and out[len(q) + j] is TOP")))).mechanisms[0]
    (nu,) = [sh for sh in mech.alignment.shifts if sh.var == "nu"]
    count = n.Call("len", (n.ParamRef("q", False, nu.shift.span),), nu.shift.span, nu.shift.span)
    assert unparse(phases._rebased(nu.shift, count)) == "j < len(out) and out[j] is TOP ? 1 + q[j] - q'[j] : 0"


def test_a_first_part_with_a_break_leaves_no_count_to_read_the_output_past():
    """The first part halts at a TOP: its number of outputs is not len(q), so `out[len(q) + j]` does not name the
    second part's outputs, and the proof in parts declines."""
    from align.checker.induction import NotInductive

    loop_end = "    output NUM(q[i] + eta)\n"
    text = PARTS.replace(loop_end, loop_end + "    if q[i] + eta >= T { break }\n")
    with pytest.raises(NotInductive, match=re.escape("other than as `out[K + e]`")):
        _parts(text)


@pytest.mark.parametrize("name,failing", [("sequential_parts_one_budget.dp", "no share of the claim"),
                                          ("sequential_parts_share_noise.dp", "reads `T_hat`"),
                                          ("sequential_parts_released_then_reassigned.dp", "reads `t`, which")])
def test_the_parts_guards_are_not_proved(name: str, failing: str):
    """Each guard would be proved by a checker without the hypothesis it names; here the parts decline and the
    bounded check refutes the alignment."""
    from align.checker.induction import NotInductive

    text = (SPECS / "incorrect" / name).read_text()
    with pytest.raises(NotInductive, match=re.escape(failing)):
        _parts(text)
    _, _, verdicts = verified(SPECS / "incorrect" / name)
    assert overall_status(verdicts) == "refuted"


def test_a_constant_of_the_first_part_is_copied_to_the_second():
    """`half = eps2 / 2` before the first loop, read by the second part's noise: a value of public parameters,
    so the second part gets its definition and the mechanism is still proved in parts."""
    text = PARTS.replace("{\n  for i in 0 .. len(q) {", "{\n  half = eps2 / 2\n  for i in 0 .. len(q) {", 1)
    text = text.replace("rho ~ Lap(2 / eps2)", "rho ~ Lap(1 / half)")
    result = _parts(text)
    assert result is not None and all(reason is None for reason in result.proved.values())


RELEASED = (SPECS / "counting" / "released_estimate_then_above_threshold.dp").read_text()


def test_a_value_the_first_part_outputs_as_it_is_is_public_to_the_second():
    """Adaptive composition: the second part reads `base`, which the first part outputs as it is; it is proved with
    `base` as a public parameter of its own, and the report says so."""
    _, _, verdicts = verified(SPECS / "counting" / "released_estimate_then_above_threshold.dp")
    assert overall_status(verdicts) == "proved" and overall_scope(verdicts) == "for every input length"
    (c4c,) = [v for v in verdicts if v.obligation.id == "C4c"]
    assert any("but what it outputs as it is: `base`, public to the second" in note for note in c4c.notes), c4c.notes
    # the output index may be written either way round
    result = _parts(RELEASED.replace("out[1 + i]", "out[i + 1]"))
    assert result is not None and all(reason is None for reason in result.proved.values())


def test_a_second_part_reads_the_length_of_its_own_outputs():
    """The above-threshold part with its noise drawn in a loop of its own (fission) and the shift guarded by
    `i < len(out) - 1`: the second part's `len(out) - 1` is the length of its own outputs (the first outputs one),
    and the fused walk proves it for every length."""
    loop = "  for i in 0 .. len(q) {\n    nu ~ Lap(4 / eps2)\n"
    assert loop in RELEASED
    split = RELEASED.replace(loop, "  for i in 0 .. len(q) {\n    nu ~ Lap(4 / eps2)\n    nus[i] = nu\n  }\n"
                                   "  for i in 0 .. len(q) {\n").replace("q[i] + nu >=", "q[i] + nus[i] >=")
    split = split.replace("(out[1 + i] is TOP ? 2 : 0)", "(i < len(out) - 1 ? out[1 + i] is TOP ? 2 : 0 : 0)")
    assert "nus[i] >=" in split and "len(out) - 1" in split
    result = _parts(split)
    assert result is not None and all(reason is None for reason in result.proved.values()), result.proved
    # a length the first part's outputs do not explain (`len(out) - 2`): declined
    from align.checker.every_length import NotInductive

    with pytest.raises(NotInductive, match="len\\(out\\) - K"):
        _parts(split.replace("i < len(out) - 1 ?", "i < len(out) - 2 ?"))


@pytest.mark.parametrize("change,reason", [
    # output under a branch, not at the top level
    (("  output NUM(base)\n", "  if T > 0 {\n    output NUM(base)\n  }\n  output NUM(0)\n"), "reads `base`, which"),
    # output before it is assigned: the second part then computes base from t, which the first part draws and
    # nothing there reads, so the draw moves to the second part (it commutes), which is then not proved within
    # any share of the claim
    (("  base = q[0] + t\n  output NUM(base)\n", "  base = 0\n  output NUM(base)\n  base = q[0] + t\n"),
     "no share of the claim proves both parts"),
    # ... and where the first part reads t too (through base), the second part reads the first part's noise
    (("  base = q[0] + t\n  output NUM(base)\n", "  base = t\n  output NUM(base + 1)\n  base = q[0] + t\n"),
     "reads `base`, `t`, which"),
    # output something else than the variable itself
    (("  output NUM(base)\n", "  output NUM(base + 1)\n"), "reads `base`, which"),
])
def test_only_a_value_output_as_it_is_is_released(change, reason):
    from align.checker.induction import NotInductive

    assert change[0] in RELEASED
    with pytest.raises(NotInductive, match=re.escape(reason)):
        _parts(RELEASED.replace(*change))


@pytest.mark.parametrize("sites", ["u ~ Point(1 / b0)\n  w ~ Lap(1 / (u - u))",
                                   "u ~ Point(1 / (b0 - b0))\n  w ~ Lap(1 / u)",
                                   "u ~ Point(1 / b0)\n  w ~ Lap(0 / u)", "u ~ Point(1 / b0)\n  w ~ Lap(u / 0)"])
def test_a_mixture_whose_scale_divides_by_zero_is_unknown_with_the_reason(tmp_path: Path, sites: str):
    """R²DP's rule needs a positive scale: one that divides by zero (sympy's zoo, nan) gives no ε, and the rule's
    verdict says so instead of converting an undefined number to a float."""
    text = (SPECS / "r2dp" / "point_mass.dp").read_text()
    text = text.replace("u ~ Point(1 / b0)\n  w ~ Lap(1 / u)", sites)
    assert sites in text
    out, err = io.StringIO(), io.StringIO()
    path = tmp_path / "zero_scale.dp"
    path.write_text(text)
    code = main(["verify", "--output-format", "json", str(path)], stdout=out, stderr=err)
    assert code in (1, 3), out.getvalue() + err.getvalue()  # C0 refutes a scale of 0 or 1/0 where it can
    assert "internal-error" not in err.getvalue()
    mixture = [o for m in json.loads(out.getvalue())["files"][0]["mechanisms"] for o in m["obligations"]
               if o["id"] == "MIX"]
    assert mixture and mixture[0]["status"] == "unknown" and "zero" in json.dumps(mixture[0]), mixture


ZERO_DIVISOR = """mechanism zero_divisor(q: real[], eps: real)
  adjacent sum |q[i] - q'[i]| <= 1
  requires eps > 0, len(q) >= 1
  privacy eps
{
  for i in 0 .. len(q) {
    eta ~ Lap(1 / eps)
    output q[i] + eta
  }
}

alignment zero_divisor {
  let z = DIVIDED
  eta[i]' = eta[i] + q[i] - q'[i] + 0 * z
}
"""


def test_an_alignment_that_divides_by_zero_is_not_defined_there():
    """C4a includes that φ has a value: a let `1 / (q[0] - q'[0])` has none where q[0] = q'[0] (the interpreter
    stops with division-by-zero), even though 0 times it is 0 in z3's arithmetic; the replay confirms it. Under a
    guard that excludes the zero divisor, the division is read only where it has a value."""
    def c4a(divided: str):
        mech = resolve(parse_source(Source("zero_divisor.dp", ZERO_DIVISOR.replace("DIVIDED", divided))))
        (verdict,) = [v for v in verify(mech.mechanisms[0], Options(max_length=3)).verdicts
                      if v.obligation.id == "C4a"]
        return verdict

    refuted = c4a("1 / (q[0] - q'[0])")
    assert refuted.status.value == "refuted" and "divides by zero in `1 / (q[0] - q'[0])`" in refuted.reason
    assert refuted.counterexample is not None and refuted.counterexample.replay["confirmed"], \
        refuted.counterexample.replay
    guarded = c4a("q[0] == q'[0] ? 0 : 1 / (q[0] - q'[0])")
    assert guarded.status.value != "refuted", guarded.reason


def test_a_rewrites_fresh_name_is_none_of_the_programs():
    # noise, loop indices, comprehension indices, the alignment's lets and shift indices are names too (a fresh
    # `released` equal to a noise variable's name was one symbol for two values: specs/incorrect/named_output_*)
    from align.resolve import names_used

    mech = resolve(parse_source(Source("names.dp", """mechanism names(q: real[], eps: real)
  adjacent |q[i] - q'[i]| <= 1
  requires eps > 0
  privacy eps
{
  released ~ Lap(1 / eps)
  for k in 0 .. len(q) {
    output q[k] + released + count(l in 0 .. len(q): q[l] > 0)
  }
}

alignment names {
  let d = 0
  released' = released + d
}
"""))).mechanisms[0]
    assert {"q", "eps", "released", "k", "l", "d", "out", "len", "count"} <= names_used(mech)
