"""Alignment synthesis (align/checker/synthesis.py, learner.py; `align verify`, `--synthesise`, `alignment NAME
auto`): specs proved with an alignment found in the template space, the spec's own alignment removed; a broken
mechanism never proved; the learner's order and its determinism; a smaller claim. The whole corpus runs in
bench/synthesis.py (a minute or two), this file a fast subset."""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from align.checker import learner
from align.checker.synthesis import SYNTHESISED, templates
from align.checker.verify import overall_scope, overall_status, verify_mechanism
from align.cli import main
from align.parse import parse_source, read_source
from align.resolve import resolve
from align.span import Source
from align.status import Status

from .conftest import SPECS, SYNTHESIS, synthesised


def _search(path: Path):
    """A search of its own (not the shared one of `synthesised`): for tests that patch or repeat it."""
    return synthesised.__wrapped__(path)


pytestmark = SYNTHESIS


def _without_alignment(text: str) -> str:
    return text[:text.index("\nalignment ")] + "\n"


PROVED = [
    ("dworkroth/above_threshold.dp", ["rho' = rho + 1", "nu[i]' = nu[i] + (out[i] is TOP ? 2 : 0)"]),
    ("freegap/example1_laplace.dp", ["eta' = eta + q - q'"]),
    ("dworkroth/histogram.dp", ["eta[i]' = eta[i] + q[i] - q'[i]"]),
    ("freegap/alg2_svt_gap.dp", ["eta' = eta + 1", "xi[i]' = xi[i] + (out[i] is TOP ? 1 + q[i] - q'[i] : 0)"]),
    # a ranked family: pieces by membership in the released set, the best unreleased value as a term (Free Gap's
    # Equation (3)); for Noisy Max the simplest proved one shifts the winner by 2
    ("freegap/noisy_max.dp", ["eta[i]' = eta[i] + (i in [out[0]] ? 2 : 0)"]),
    ("freegap/alg4_noisy_top_k_gap.dp", ["let m = max(l not in indices(out): q[l] + eta[l])",
                                         "let m' = max(l not in indices(out): q'[l] + eta[l])",
                                         "eta[i]' = eta[i] + (i in indices(out) ? q[i] - q'[i] + m' - m : 0)"]),
    # add/remove-one-record neighbours: the difference of what the noise is added to, definitions inlined
    ("counting/noisy_count.dp", ["eta' = eta + len(q) - len(q')"]),
    ("counting/record_histogram.dp",
     ["eta[j]' = eta[j] + count(l in 0 .. len(q): q[l] == j) - count(l in 0 .. len(q'): q'[l] == j)"]),
    # pieces by whether the loop goes on: Dwork & Roth's Sparse and NumericSparse (Theorem 3.27's accounting)
    ("dworkroth/sparse.dp", ["rho0' = rho0 + 1", "nu[i]' = nu[i] + (out[i] is TOP ? 2 : 0)",
                             "rho[i]' = rho[i] + (not (count(l in 0 .. i + 1: out[l] is TOP) >= c) ? 1 : 0)"]),
    ("dworkroth/numeric_sparse.dp", ["rho0' = rho0 + 1", "nu[i]' = nu[i] + (out[i] is TOP ? 2 : 0)",
                                     "upsilon[i]' = upsilon[i] + q[i] - q'[i]",
                                     "rho[i]' = rho[i] + (not (count(l in 0 .. i + 1: out[l] is TOP) >= c) ? 1 : 0)"]),
    # noise drawn in a loop of its own, compared by a later loop that may stop early: pieces by the later tag
    ("dworkroth/above_threshold_presampled.dp",
     ["rho' = rho + 1", "nu[i]' = nu[i] + (i < len(out) and out[i] is TOP ? 2 : 0)"]),
    # three tagged sites, 5 x 15^3 x 15^3 instances: Free Gap's Equation (2) for Adaptive SVT with Gap
    ("freegap/alg1_adaptive_svt_gap.dp", ["eta' = eta + 1", "xi[i]' = xi[i] + (out[i] is TOP2 ? 1 + q[i] - q'[i] : 0)",
                                          "zeta[i]' = zeta[i] + (out[i] is TOP1 ? 1 + q[i] - q'[i] : 0)"]),
    # pieces by a discrete payload level (the two TOP branches), and by the direction of a monotone neighbour
    ("freegap/alg1_adaptive_svt_gap_tuples.dp",
     ["eta' = eta + 1", "xi[i]' = xi[i] + (payload(out[i], TOP, (0, 0))[1] == 2 ? 1 + q[i] - q'[i] : 0)",
      "zeta[i]' = zeta[i] + (payload(out[i], TOP, (0, 0))[1] == 1 ? 1 + q[i] - q'[i] : 0)"]),
    ("freegap/alg1_adaptive_svt_gap_monotone.dp",
     ["let down = all(l in 0 .. len(q): q[l] >= q'[l])", "eta' = eta + (down ? 0 : 1)",
      "xi[i]' = xi[i] + (down ? (out[i] is TOP2 ? q[i] - q'[i] : 0) : (out[i] is TOP2 ? 1 + q[i] - q'[i] : 0))",
      "zeta[i]' = zeta[i] + (down ? (out[i] is TOP1 ? q[i] - q'[i] : 0) : (out[i] is TOP1 ? 1 + q[i] - q'[i] : 0))"]),
]
# Searched in a fraction of a second, so in the fast tier; the SVT family and the top-k take seconds each.
QUICK = {"freegap/example1_laplace.dp", "dworkroth/histogram.dp", "freegap/noisy_max.dp", "counting/noisy_count.dp",
         "counting/record_histogram.dp"}


@pytest.mark.parametrize("name,shifts", [
    pytest.param(*case, marks=() if case[0] in QUICK else pytest.mark.slow) for case in PROVED])
def test_a_proved_spec_is_proved_again_with_a_synthesised_alignment(name: str, shifts: list[str]):
    """The spec's own alignment ignored: the synthesised one is the paper's (Vadhan's for AboveThreshold, Free
    Gap's Equation (2) for SVT with Gap), proved for every length, and pasted into the spec it is proved again."""
    _, source, found = synthesised(SPECS / name)  # the corpus test's search (tests/test_synthesis_corpus.py)
    assert found.status == Status.PROVED and found.alignment is not None and found.mechanism is not None
    assert [line.strip() for line in found.alignment.splitlines()[1:-1]] == shifts
    assert overall_scope(found.verdicts) in ("for every input length", "for all inputs")
    pasted = _without_alignment(source.text) + "\n" + found.alignment
    again = resolve(parse_source(Source("pasted.dp", pasted))).mechanisms[0]
    verdicts = verify_mechanism(again)
    assert overall_status(verdicts) == Status.PROVED and overall_scope(verdicts) == overall_scope(found.verdicts)
    assert found.iterations >= 1 and found.candidates >= found.iterations


@pytest.mark.parametrize("name", ["histogram_lap_eps.dp", "clipped_sum_unclipped.dp",
                                  "cumulative_record_histogram.dp", "svt_checkdp_outputs_noisy_query.dp"])
def test_a_non_private_mechanism_gets_no_alignment(name: str):
    """Laplace noise of scale eps (the claim needs 1/eps), an unclipped sum, cumulative bins (sensitivity B), an
    SVT that releases its noisy query: the examples rule out every instance of the template (`exhausted`: a
    statement about the whole space, each example being a real input pair and noise vector), nothing is proved.
    CheckDP's BadGapSVT is private for three queries (an alignment is proved for lengths <= 3); the learner's
    examples at length 8 rule that one out, so no bounded fallback is offered either."""
    _, _, found = synthesised(SPECS / "incorrect" / name)
    assert found.status == Status.UNKNOWN and found.alignment is None and found.mechanism is None
    assert found.exhausted and found.examples >= 1


def test_the_template_follows_the_program():
    mech = resolve(parse_source(read_source(str(SPECS / "freegap" / "alg2_svt_gap.dp")))).mechanisms[0]
    eta, xi = templates(mech)
    assert (eta.site, eta.index, eta.conditions, eta.terms) == ("eta", None, (), ("1",))
    assert (xi.site, xi.index, xi.conditions, xi.terms) == ("xi", "i", ("out[i] is TOP", "out[i] is BOT"),
                                                            ("1", "q[i] - q'[i]"))
    assert xi.domains() == [(0, 1, 2, -1, -2), (0, 1, -1)]
    assert xi.line([[0, 0], [0, 0]]) == "xi[i]' = xi[i] + 0"  # equal pieces: no test
    assert xi.line([[1, 1], [0, 0]]) == "xi[i]' = xi[i] + (out[i] is TOP ? 1 + q[i] - q'[i] : 0)"
    assert xi.line([["_h0", "_h1"], ["_h2", "_h3"]]) == \
        "xi[i]' = xi[i] + (out[i] is TOP ? _h0 + _h1 * (q[i] - q'[i]) : _h2 + _h3 * (q[i] - q'[i]))"


def test_a_noise_that_is_not_lipschitz_is_never_shifted():
    """C3: Gumbel noise has no cost coefficient, so its template's only instance is the shift 0."""
    mech = resolve(parse_source(read_source(str(SPECS / "freegap" / "alg7_gumbel_exp_mech_gap.dp")))).mechanisms[0]
    (g,) = templates(mech)
    assert not g.lipschitz and all(d == (0,) for d in g.domains())


def test_the_template_adds_the_difference_of_what_the_noise_is_added_to():
    """`output total + eta` with `total = sum(...)` assigned once: the term inlines the definition (an alignment
    may not read program variables) and primes the private list."""
    mech = resolve(parse_source(read_source(str(SPECS / "counting" / "clipped_sum.dp")))).mechanisms[0]
    (eta,) = templates(mech)
    assert eta.terms == ("1", "sum(l in 0 .. len(q): min(max(q[l], 0), c)) - "
                              "sum(l in 0 .. len(q'): min(max(q'[l], 0), c))")


def test_a_family_drawn_at_one_tag_gets_pieces_by_whether_the_loop_goes_on():
    """Sparse refreshes its threshold at every TOP; whether the loop goes on after it is the negated `break`
    condition, its counter read as the number of TOPs so far (the counter is set to 0 before the loop and only
    incremented where TOP is output). A counter updated elsewhere is program state: no such pieces."""
    text = (SPECS / "dworkroth" / "sparse.dp").read_text()
    mech = resolve(parse_source(Source("sparse.dp", text))).mechanisms[0]
    rho = next(t for t in templates(mech) if t.site == "rho")
    assert rho.conditions == ("not (count(l in 0 .. i + 1: out[l] is TOP) >= c)", "otherwise")
    bot = "    } else {\n      output BOT\n"
    changed = text.replace(bot, bot + "      count = count + 1\n")
    assert changed != text
    mutant = resolve(parse_source(Source("sparse.dp", changed))).mechanisms[0]
    rho = next(t for t in templates(mutant) if t.site == "rho")
    assert "count(" not in " ".join(rho.conditions)


def test_candidates_come_least_weight_first(monkeypatch):
    """The learner proposes a least-weight assignment of the holes consistent with the examples: the first is the
    identity (weight 0), and since examples only remove assignments, the weights never decrease."""
    weights: list[int] = []
    propose = learner.Learner.propose

    def recording(self):
        values = propose(self)
        if values is not None:
            weights.append(sum(0 if v == 0 else 1 + abs(v) for v in values.values()))
        return values

    monkeypatch.setattr(learner.Learner, "propose", recording)
    found = _search(SPECS / "freegap" / "alg2_svt_gap.dp")[2]
    assert found.status == Status.PROVED and weights[0] == 0 and weights == sorted(weights) and len(weights) >= 3


@pytest.mark.slow
def test_the_search_is_deterministic():
    first = _search(SPECS / "dworkroth" / "above_threshold.dp")[2]
    second = _search(SPECS / "dworkroth" / "above_threshold.dp")[2]
    assert (first.alignment, first.candidates, first.iterations, first.examples) == \
        (second.alignment, second.candidates, second.iterations, second.examples)


def _verify(tmp_path: Path, text: str, *flags: str) -> tuple[int, str]:
    spec = tmp_path / "spec.dp"
    spec.write_text(text)
    out = io.StringIO()
    with redirect_stdout(out):
        try:
            code = main(["verify", *flags, str(spec)])
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    return code, out.getvalue()


@pytest.mark.slow
def test_a_spec_without_an_alignment_gets_one_synthesised(tmp_path: Path):
    """No alignment block, or `alignment NAME auto`: `align verify` synthesises one and prints it to paste."""
    text = _without_alignment((SPECS / "dworkroth" / "above_threshold.dp").read_text())
    for spec in (text, text + "\nalignment above_threshold auto\n"):
        code, out = _verify(tmp_path, spec)
        assert code == 0 and "a synthesised alignment is proved" in out and "paste it into the spec" in out
        assert "rho' = rho + 1" in out and "(for every input length)" in out
        assert SYNTHESISED in out  # the alignment's obligations point at the synthesised block
    code, out = _verify(tmp_path, text, "--output-format", "json")
    document = json.loads(out)["files"][0]["mechanisms"][0]
    assert code == 0 and document["synthesis"]["found"] and "rho' = rho + 1" in document["synthesis"]["alignment"]
    assert document["synthesis"]["examples"] >= 1


def test_synthesise_searches_when_the_written_alignment_fails(tmp_path: Path):
    text = (SPECS / "dworkroth" / "above_threshold.dp").read_text().replace("(out[i] is TOP ? 2 : 0)",
                                                                            "(out[i] is TOP ? 1 : 0)")
    code, out = _verify(tmp_path, text)
    assert code == 1 and "  synthesis  " not in out
    code, out = _verify(tmp_path, text, "--synthesise")
    assert code == 0 and "the written alignment is not proved; a synthesised alignment is proved" in out


def test_synthesise_says_unknown_when_no_alignment_is_found(tmp_path: Path):
    """Never "not private" from a failed search: a spec without an alignment whose search fails is unknown
    (exit 3), with `align test` suggested."""
    text = _without_alignment((SPECS / "incorrect" / "histogram_lap_eps.dp").read_text())
    code, out = _verify(tmp_path, text)
    assert code == 3, out
    assert "no instance of the template is an alignment" in out and re.search(r"`align test .*spec\.dp`", out)
    assert "refuted" not in out.split("verdict")[-1].splitlines()[0]


def test_confirm_looks_for_a_violation_after_a_failed_search(tmp_path: Path):
    """`--confirm` after a failed search: `align test` on StatDP's patterns finds the violation (Laplace noise of
    scale eps where the claim needs 1/eps); the verdict stays unknown."""
    text = _without_alignment((SPECS / "incorrect" / "histogram_lap_eps.dp").read_text())
    code, out = _verify(tmp_path, text, "--confirm")
    assert code == 3 and "privacy violation confirmed" in out


@pytest.mark.slow
def test_synthesise_finds_an_alignment_for_a_smaller_claim(tmp_path: Path):
    """A proved written alignment: `--synthesise` asks whether the template space proves half the claim (then a
    quarter ...). AboveThreshold with twice the noise is eps/2-private; as written it is tight."""
    text = (SPECS / "dworkroth" / "above_threshold.dp").read_text()
    code, out = _verify(tmp_path, text, "--synthesise")
    assert code == 0 and "no alignment of the template space proves a smaller claim, 1/2 * (eps)" in out
    noisier = text.replace("Lap(4 / eps)", "Lap(8 / eps)").replace("Lap(2 / eps)", "Lap(4 / eps)")
    code, out = _verify(tmp_path, noisier, "--synthesise")
    assert code == 0 and "a better alignment exists: it proves the smaller claim 1/2 * (eps)" in out
    assert "nu[i]' = nu[i] + (out[i] is TOP ? 2 : 0)" in out


def test_the_proof_report_shows_the_synthesised_alignment(tmp_path: Path):
    """`align report` on a spec without an alignment: the proof is about the synthesised block, which it prints."""
    spec = tmp_path / "spec.dp"
    spec.write_text(_without_alignment((SPECS / "dworkroth" / "above_threshold.dp").read_text()))
    out = io.StringIO()
    with redirect_stdout(out):
        try:
            code = main(["report", str(spec)])
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    text = out.getvalue()
    assert code == 0 and "`align verify` synthesised this one" in text
    assert "rho' = rho + 1" in text and "nu[i]' = nu[i] + (out[i] is TOP ? 2 : 0)" in text
