"""`release` blocks: what a mechanism publishes, computed from its `out` (post-processing, Dwork & Roth Prop. 2.1).

The checker proves the body's `out`; the interpreters, `align run` and `align test` run the block after the body;
resolution keeps the block a function of `out` and the public parameters (tests/diagnostics/release_*.dp)."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

import align
from align.cli import main
from align.interp.runner import prepare_arguments
from align.interp.scalar import Interpreter, NoiseValues
from align.parse import parse_source
from align.pipeline import load, load_text
from align.rules import POST_PROCESSING
from align.span import Source
from align.unparse import unparse_spec

from .conftest import PEERS, ROOT

STRESS = ROOT / "tests" / "interp" / "stress_release.dp"

# eps-DP for out = [q + eta], claimed at eps / 2: refuted, and the doubled release is as private as out (eps)
DOUBLED = """
mechanism doubled(q: real, eps: real)
  adjacent |q - q'| <= 1
  requires eps > 0
  privacy eps / 2
{
  eta ~ Lap(1 / eps)
  output q + eta
}

release doubled {
  output 2 * out[0]
}

alignment doubled {
  eta' = eta + q - q'
}
"""


def _run(path: str, args: dict, noise: dict, release: bool = True):
    mech = load(path).mechanisms[0]
    mech = mech if release else mech.without_release()
    values = prepare_arguments(mech, args)
    return Interpreter(mech, NoiseValues(mech, noise), trace=False).run(values)


def _published(out: list, q: list, k: int) -> list:
    """stress_release.dp's release block, by hand."""
    gaps = [x.payload[0] for x in out if x.name == "TOP"]
    return [len(out) + 10 * k + 100 * len(q), sum(1 for x in out if x.name == "BOT"), max([0, *gaps]), sum(gaps),
            max(gaps) if gaps else -1]


def test_published_values_are_the_block_applied_to_out():
    rng = np.random.default_rng(7)
    q, k = [3.0, 5.0, 5.0, 4.0, 1.0, 0.0], 2
    for _ in range(60):
        noise = {"eta": float(rng.laplace(0, 2)), "xi": [float(x) for x in rng.laplace(0, 8, len(q))]}
        body = _run(str(STRESS), {"q": q, "k": k, "eps": 1}, noise, release=False)
        run = _run(str(STRESS), {"q": q, "k": k, "eps": 1}, noise)
        assert run.body_out == body.out and body.body_out is None
        expected = _published(body.out, q, k)
        assert len(run.out) == len(expected)
        assert all(float(a) == pytest.approx(float(b)) for a, b in zip(run.out, expected)), (run.out, expected)


def test_unparse_keeps_the_block():
    text = STRESS.read_text()
    spec = parse_source(Source(str(STRESS), text))
    again = parse_source(Source("again.dp", unparse_spec(spec)))
    assert len(again.releases) == 1 and unparse_spec(again) == unparse_spec(spec)
    assert load_text(unparse_spec(spec)).mechanisms[0].release is not None


def test_the_peers_are_proved_through_their_release_blocks():
    for name in ("statdp_svt", "checkdp_adaptive_svt"):
        result = align.verify(PEERS / f"{name}.dp")
        assert result.status == "proved" and result.scope == "for every input length", name
        assert result.mechanism.release is not None


def test_the_verdict_and_the_reports_say_the_proof_is_of_out():
    stdout, stderr = io.StringIO(), io.StringIO()
    assert main(["verify", str(STRESS)], stdout, stderr) == 0
    text = stdout.getvalue()
    assert f"then {POST_PROCESSING.name}" in text and "the proof is of `out`" in text
    stdout = io.StringIO()
    main(["check", str(STRESS), "--output-format", "json"], stdout, io.StringIO())
    checked = json.loads(stdout.getvalue())["files"][0]["mechanisms"][0]
    assert checked["published_type"] == "real" and checked["output_type"] == "tag BOT | TOP(real)"
    assert POST_PROCESSING.name in checked["proof_rule"]
    stdout = io.StringIO()
    assert main(["report", str(STRESS), "--format", "md"], stdout, io.StringIO()) == 0
    report = stdout.getvalue()
    assert "they prove it private, and the published value follows by" in report


def test_a_refuted_body_says_the_release_is_a_separate_question(tmp_path):
    path = tmp_path / "doubled.dp"
    path.write_text(DOUBLED)
    result = align.verify(path)
    assert result.status == "refuted"
    stdout = io.StringIO()
    main(["verify", str(path)], stdout, io.StringIO())
    assert "a privacy violation of what it publishes is a separate question" in stdout.getvalue()


def test_align_test_samples_what_the_block_publishes(tmp_path):
    # out = [q + eta] at claim eps / 2 is violated, and so is 2 * out[0] (the same loss, eps)
    path = tmp_path / "doubled.dp"
    path.write_text(DOUBLED)
    report = align.test(path, {"eps": 1.0}, samples=8000, length=1)
    assert report.violation and report.result.witness is not None
    # a release that publishes almost nothing about out: the same refuted body, no violation of what is published
    hidden = tmp_path / "hidden.dp"
    hidden.write_text(DOUBLED.replace("output 2 * out[0]", "output out[0] > 1000 ? 1 : 0"))
    report = align.test(hidden, {"eps": 1.0}, samples=8000, length=1)
    assert not report.violation
    assert "release block" in (report.not_computed or "")


def test_run_traces_the_block_and_prints_both_sequences():
    stdout = io.StringIO()
    code = main(["run", str(STRESS), "--arg", "q=[3, 5]", "--arg", "k=1", "--arg", "eps=1", "--noise", "eta=0",
                 "--noise", "xi=[-9, 1]"], stdout, io.StringIO())
    assert code == 0
    text = stdout.getvalue()
    assert "release stress_release: out = [BOT, TOP(" in text and "published[0] = 212" in text
    assert "\nout = [BOT, TOP(" in text and "\npublished = [212, 1, " in text
