"""Alignment synthesis (align/checker/synthesis.py, `align verify --synthesise`): specs proved with an alignment
found in the template space, the spec's own alignment removed; a broken mechanism never proved; the search's
order and its determinism. The whole corpus runs in bench/synthesis.py (minutes), this file a fast subset."""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from align.checker.synthesis import SYNTHESISED, _simplest_first, example_pairs, synthesise, templates
from align.checker.verify import overall_scope, overall_status, verify_mechanism
from align.cli import main
from align.interp.values import example_arguments
from align.parse import parse_source, read_source
from align.resolve import resolve
from align.span import Source
from align.status import Status

from .conftest import SPECS


def _search(path: Path):
    source = read_source(str(path))
    mech = resolve(parse_source(source)).mechanisms[0]
    public = example_arguments(mech.node)
    return mech, source, synthesise(mech, source, public, example_pairs(mech, public))


def _without_alignment(text: str) -> str:
    return text[:text.index("\nalignment ")] + "\n"


@pytest.mark.parametrize("name,shifts", [
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
])
def test_a_proved_spec_is_proved_again_with_a_synthesised_alignment(name: str, shifts: list[str]):
    """The spec's own alignment ignored: the synthesised one is the paper's (Vadhan's for AboveThreshold, Free
    Gap's Equation (2) for SVT with Gap), proved for every length, and pasted into the spec it is proved again."""
    _, source, found = _search(SPECS / name)
    assert found.status == Status.PROVED and found.alignment is not None and found.mechanism is not None
    assert [line.strip() for line in found.alignment.splitlines()[1:-1]] == shifts
    assert overall_scope(found.verdicts) in ("for every input length", "for all inputs")
    pasted = _without_alignment(source.text) + "\n" + found.alignment
    again = resolve(parse_source(Source("pasted.dp", pasted))).mechanisms[0]
    verdicts = verify_mechanism(again)
    assert overall_status(verdicts) == Status.PROVED and overall_scope(verdicts) == overall_scope(found.verdicts)
    assert found.iterations >= 1 and found.candidates >= found.iterations


@pytest.mark.parametrize("name", ["histogram_lap_eps.dp", "clipped_sum_unclipped.dp",
                                  "cumulative_record_histogram.dp"])
def test_a_non_private_mechanism_gets_no_alignment(name: str):
    """Laplace noise of scale eps (the claim needs 1/eps), an unclipped sum, cumulative bins (sensitivity B):
    every candidate fails, nothing is proved."""
    _, _, found = _search(SPECS / "incorrect" / name)
    assert found.status == Status.UNKNOWN and found.alignment is None and found.mechanism is None
    assert found.candidates == found.space


def test_the_template_follows_the_program():
    mech = resolve(parse_source(read_source(str(SPECS / "freegap" / "alg2_svt_gap.dp")))).mechanisms[0]
    eta, xi = templates(mech)
    assert (eta.site, eta.index, eta.conditions, eta.terms) == ("eta", None, (), ("1",))
    assert (xi.site, xi.index, xi.conditions, xi.terms) == ("xi", "i", ("out[i] is TOP", "out[i] is BOT"),
                                                            ("1", "q[i] - q'[i]"))
    assert len(xi.shifts()) == 15 ** 2 and xi.shifts()[0] == (0, "xi[i]' = xi[i] + 0")  # equal pieces: no test


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


def test_candidates_come_simplest_first_and_each_once():
    options = [[(0, "a0"), (2, "a1"), (3, "a2")], [(0, "b0"), (1, "b1")]]
    weights = {"a0": 0, "a1": 2, "a2": 3, "b0": 0, "b1": 1}
    order = list(_simplest_first(options, 100))
    assert len(order) == len(set(order)) == 6
    totals = [sum(weights[x] for x in combo) for combo in order]
    assert totals == sorted(totals)
    assert list(_simplest_first(options, 4)) == order[:4]


def test_the_search_is_deterministic():
    first = _search(SPECS / "dworkroth" / "above_threshold.dp")[2]
    second = _search(SPECS / "dworkroth" / "above_threshold.dp")[2]
    assert (first.alignment, first.candidates, first.iterations) == (second.alignment, second.candidates,
                                                                      second.iterations)


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


def test_verify_synthesise_prints_an_alignment_to_paste(tmp_path: Path):
    text = _without_alignment((SPECS / "dworkroth" / "above_threshold.dp").read_text())
    code, out = _verify(tmp_path, text)
    assert code == 1, "without --synthesise, no alignment block means no noise shifted: C4a is refuted"
    code, out = _verify(tmp_path, text, "--synthesise")
    assert code == 0 and "a synthesised alignment is proved" in out and "paste it into the spec" in out
    assert "rho' = rho + 1" in out and "(for every input length)" in out
    assert SYNTHESISED in out  # the alignment's obligations point at the synthesised block
    code, out = _verify(tmp_path, text, "--synthesise", "--output-format", "json")
    document = json.loads(out)["files"][0]["mechanisms"][0]
    assert code == 0 and document["synthesis"]["found"] and "rho' = rho + 1" in document["synthesis"]["alignment"]


def test_verify_synthesise_says_unknown_when_no_alignment_is_found(tmp_path: Path):
    """Never "not private" from a failed search: a spec without an alignment whose search fails is unknown
    (exit 3), with `align test` suggested."""
    text = _without_alignment((SPECS / "incorrect" / "histogram_lap_eps.dp").read_text())
    code, out = _verify(tmp_path, text, "--synthesise")
    assert code == 3, out
    assert "no alignment found in the template space" in out and re.search(r"`align test .*spec\.dp`", out)
    assert "refuted" not in out.split("verdict")[-1].splitlines()[0]
