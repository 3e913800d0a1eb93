"""bench/rewrites.py, the metamorphic benchmark: every variant it writes means what its original means.

A variant must parse and resolve, and under the reference interpreter run like its original: the same outputs on
the same inputs and noise (noise and parameters renamed where the rewrite renames them, tags mapped to what
replaces them), every drawn value shifted alike by the alignment, and the same outputs on D' with the aligned
noise (`rewrites.check_variant`). A rewrite that changed the meaning would measure the checker on another
mechanism. The fast tests take a sample of specs that between them meet every rewrite's precondition; the
corpus-wide one is slow.
"""

from __future__ import annotations

import dataclasses
import io
import re
from contextlib import redirect_stdout

import pytest

from align import nodes as n

from .conftest import load_bench

rewrites = load_bench("rewrites.py")

SAMPLE = (
    "specs/freegap/alg2_svt_gap.dp",                 # a tag with a payload, a break, constants
    "specs/freegap/noisy_max.dp",                    # argmax, lets, `not in`
    "specs/dworkroth/above_threshold_presampled.dp",  # two loops to fuse
    "specs/freegap/alg1_adaptive_svt_gap_tuples.dp",  # payloads read by the alignment, else-if chains
    "specs/counting/periodic_counts.dp",             # `==` on integers, an if that selects an output
    "specs/counting/record_histogram.dp",            # count comprehensions, add/remove-one-record
    "specs/counting/smart_sum.dp",                   # min(a, b) in a loop bound, draws under branches
    "specs/dworkroth/sparse.dp",                     # count(...) in the alignment, a conditional draw
    "specs/freegap/example1_laplace.dp",             # no loop at all
)


def _variants(path: str) -> list:
    return rewrites.variants(rewrites.load_subject(path))


@pytest.mark.parametrize("path", SAMPLE)
def test_variants_run_like_their_original(path):
    for variant in _variants(path):
        problems = rewrites.check_variant(variant, lengths=(2, 3), seeds=(0, 1))
        assert not problems, f"{variant.rewrite} of {path}:\n" + "\n".join(problems[:3]) + "\n" + variant.text


def test_the_sample_meets_every_rewrite():
    """Each rewrite makes a variant of some spec of the sample (filter-to-excluded: of a variant, below)."""
    made = {v.rewrite for path in SAMPLE for v in _variants(path)}
    assert made | {"filter-to-excluded"} == {r.name for r in rewrites.REWRITES}


def test_every_proved_spec_gets_eight_variants():
    counts = {path: len(_variants(path)) for path in rewrites.proved_specs()}
    assert len(counts) >= 30
    # randomized response is two statements and a one-line alignment (specs/discrete/): six or seven rewrites apply
    small = {p for p in counts if "/discrete/" in p}
    assert min(c for p, c in counts.items() if p not in small) >= 8, {p: c for p, c in counts.items() if c < 8}
    assert min(counts[p] for p in small) >= 6, {p: counts[p] for p in small}
    assert sum(counts.values()) >= 300


def test_filter_to_excluded_undoes_excluded_to_filter():
    subject = rewrites.load_subject("specs/freegap/noisy_max.dp")
    written_out = rewrites.excluded_to_filter(subject)
    assert "l in 0 .. len(q) if l != out[0]" in rewrites.unparse_spec(written_out.spec)
    again = dataclasses.replace(subject, spec=written_out.spec)
    back = rewrites.filter_to_excluded(again)
    assert rewrites.unparse_spec(back.spec) == rewrites.unparse_spec(subject.spec)


def test_the_check_sees_a_rewrite_that_changes_the_meaning():
    """Branches swapped without negating the condition, and a shift changed: both are reported."""
    subject = rewrites.load_subject("specs/freegap/alg2_svt_gap.dp")

    def swap(block):
        out = []
        for st in block:
            if isinstance(st, n.If) and st.orelse:
                st = dataclasses.replace(st, then=st.orelse, orelse=st.then)
            elif isinstance(st, n.For):
                st = dataclasses.replace(st, body=swap(st.body))
            out.append(st)
        return tuple(out)

    wrong_body = rewrites.Rewritten(rewrites.with_parts(subject.spec, body=swap(subject.mechanism.body)))
    assert any("output" in p for p in rewrites.check_variant(rewrites.Variant(subject, "wrong", wrong_body)))

    def double(e):
        return rewrites.bottom_up(e, lambda x: rewrites.num(2) if isinstance(x, n.Number) and x.value == 1
                                  and x.is_integer else x)

    wrong_shift = rewrites.Rewritten(rewrites.map_spec(subject.spec, alignment=double))
    assert any("shift of eta" in p for p in rewrites.check_variant(rewrites.Variant(subject, "wrong", wrong_shift)))


def test_renamed_noise_is_mapped():
    variant = next(v for v in _variants("specs/freegap/alg2_svt_gap.dp") if v.rewrite == "rename-noise")
    assert set(variant.result.noise) == {"eta", "xi"}
    assert "eta" not in re.findall(r"\w+", variant.text.split("\n", 1)[1])


def test_the_last_line_counts_the_variants():
    out = io.StringIO()
    with redirect_stdout(out):
        code = rewrites.main(["--spec", "specs/freegap/example1_laplace.dp", "--rewrite", "commute",
                              "--rewrite", "rename-noise"])
    assert code == 0
    assert out.getvalue().splitlines()[-1] == "variants: 2 same-verdict: 2 same-scope: 2"


@pytest.mark.slow
@pytest.mark.parametrize("path", rewrites.proved_specs())
def test_every_variant_of_the_corpus_runs_like_its_original(path):
    for variant in _variants(path):
        problems = rewrites.check_variant(variant)
        assert not problems, f"{variant.rewrite} of {path}:\n" + "\n".join(problems[:3]) + "\n" + variant.text


def test_comparisons_of_integers_are_not_normalised():
    """`a >= b` -> `a - b >= 0` only for doubles: over integers the difference may leave the 64 bits where the
    comparison cannot (q[l] = -2^63 stops `q[l] - t[i]`), which made a variant that one record more can stop."""
    subject = rewrites.load_subject("specs/counting/above_threshold_record_counts.dp")
    (variant,) = [v for v in rewrites.variants(subject) if v.rewrite == "normalise-compare"]
    assert "q[l] >= t[i]" in variant.text and "q[l] - t[i]" not in variant.text
    assert "- T_hat >= 0" in variant.text  # the noisy comparison of doubles is normalised
