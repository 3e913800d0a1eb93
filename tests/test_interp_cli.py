"""`align run`: summaries, raw samples, replays with traces, aligned replays, the alignment check, the
counterexample file format, and errors that exit 2 without a traceback."""

from __future__ import annotations

import io
import json
from fractions import Fraction
from pathlib import Path

import pytest

from align.cli import main
from align.counterexample import FORMAT, Counterexample, load, save
from align.diagnostics import SpecError

from .conftest import ROOT

SVT = "specs/freegap/alg2_svt_gap.dp"
SVT_ARGS = ["--arg", "q=[3,1,4]", "--arg", "T=3", "--arg", "k=1", "--arg", "eps=1", "--arg", "theta=1/2"]
BROKEN = "specs/incorrect/svt_gap_outputs_noisy_query.dp"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", *argv], out, err)
    assert "Traceback" not in err.getvalue() and "internal-error" not in err.getvalue()
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("NO_COLOR", "1")


def test_summary_counts_discrete_outputs_and_quantiles_real_parts():
    code, out, err = run(SVT, *SVT_ARGS, "--samples", "20000", "--seed", "7")
    assert code == 0 and err == ""
    assert "20000 samples" in out and "[TOP(·)]" in out and "out[].TOP.0" in out
    counts = [int(line.split()[0]) for line in out.splitlines() if line.strip().endswith("]") and "%" in line]
    assert sum(counts) == 20000


def test_json_gives_every_sample_and_does_not_depend_on_the_chunk_size():
    code, out, _ = run(SVT, *SVT_ARGS, "--samples", "20000", "--seed", "3", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and len(doc["outputs"]) == 20000 and doc["args"]["theta"] == 0.5
    assert doc["outputs"][0][-1]["tag"] == "TOP"
    _, again, _ = run(SVT, *SVT_ARGS, "--samples", "20000", "--seed", "3", "--format", "json", "--chunk-size", "5")
    assert json.loads(again)["outputs"] == doc["outputs"]


def test_replay_prints_the_trace():
    code, out, _ = run(SVT, *SVT_ARGS, "--noise", "eta=0.31", "--noise", "xi=[-1.2, 2.5, 0.3]")
    assert code == 0
    assert "eta ~ Lap(2) = 0.31" in out and "xi[1] ~ Lap(4) = 2.5" in out
    assert "if q[i] + xi - Tt >= 0: true" in out and "break" in out
    assert "out = [BOT, TOP(0.19)]" in out and "unused noise values: xi[2]" in out


def test_replay_needs_every_drawn_value():
    code, _, err = run(SVT, *SVT_ARGS, "--noise", "eta=0.31", "--noise", "xi=[-1.2]")
    assert code == 2 and "error[missing-noise]" in err and "xi[1]" in err
    code, _, err = run(SVT, *SVT_ARGS, "--noise", "zeta=1")
    assert code == 2 and "error[unknown-noise]" in err


def test_aligned_replay_of_a_proof_step():
    code, out, _ = run(SVT, *SVT_ARGS, "--noise", "eta=0.31", "--noise", "xi=[-1.2, 2.5, 0.3]", "--aligned",
                       "--neighbour", "q=[4, 0, 3]")
    assert code == 0
    assert "cost 1 <= claim eps = 1: ok" in out and "out' = [BOT, TOP(0.19)]" in out
    assert "outputs match: yes" in out and "the alignment holds for this H" in out


def test_check_alignment_writes_a_counterexample_that_replays(tmp_path: Path):
    target = tmp_path / "cx.json"
    code, out, _ = run(BROKEN, *SVT_ARGS, "--check-alignment", "--neighbour", "q=[4,0,3]", "--samples", "2000",
                       "--counterexample-out", str(target))
    assert code == 1 and "C4a  outputs preserved:" in out and "failing samples" in out
    example = load(str(target))
    assert example.obligation == "C4a" and example.mechanism == "svt_gap_outputs_noisy_query"
    assert example.args["theta"] == 0.5 and example.neighbour == {"q": [4.0, 0.0, 3.0]}
    code, out, _ = run(BROKEN, "--noise-file", str(target), "--aligned")
    assert code == 1 and "outputs match: no: C4a fails" in out
    code, out, _ = run(BROKEN, "--noise-file", str(target), "--aligned", "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["alignment"]["failures"] == ["C4a"] and doc["exit_code"] == 1


def test_check_alignment_passes_on_a_proved_spec():
    code, out, _ = run(SVT, *SVT_ARGS, "--check-alignment", "--neighbour", "q=[2,2,5]", "--samples", "3000",
                       "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["failed_samples"] == 0 and doc["samples"] == 3000


@pytest.mark.parametrize("argv,code,needle", [
    ([SVT, "--aligned", *SVT_ARGS], 2, "error[usage]"),
    ([SVT, "--check-alignment", "--noise", "eta=1", *SVT_ARGS], 2, "error[usage]"),
    ([SVT, "--arg", "q"], 2, "error[usage]"),
    ([SVT, *SVT_ARGS, "--arg", "eps=abc"], 2, "error[invalid-argument]"),
    ([SVT, *SVT_ARGS, "--arg", "eps=-1"], 2, "error[requires-violated]"),
    (["specs/r2dp/ensemble.dp"], 2, "error[missing-argument]"),  # private q: no example gives a private value
    ([SVT, *SVT_ARGS, "--check-alignment"], 2, "error[missing-argument]"),
    ([SVT, *SVT_ARGS, "--check-alignment", "--neighbour", "q=[5,1,4]"], 2, "error[not-adjacent]"),
    (["specs/r2dp/gamma.dp", "--arg", "q=0", "--arg", "k=2", "--arg", "theta=1", "--arg", "dq=1",
      "--check-alignment", "--neighbour", "q=1"], 2, "error[no-alignment]"),
    (["missing.dp"], 2, "error[io-error]"),
])
def test_errors_exit_2(argv, code, needle):
    got, _, err = run(*argv)
    assert got == code and needle in err


def test_an_invalid_distribution_parameter_is_located(tmp_path: Path):
    spec = tmp_path / "bad.dp"
    spec.write_text("mechanism m(b: real, n: int)\n  privacy 1\n{\n  for i in 0 .. n {\n    x ~ Lap(b - i)\n"
                    "    output x\n  }\n}\n")
    code, _, err = run(str(spec), "--arg", "b=2", "--arg", "n=4", "--samples", "10")
    assert code == 2
    assert (f"{spec}:5:13: error[invalid-distribution-parameter]: the parameter b of Lap must be positive, "
            "but it is 0") in err
    assert "in sample 0 of the run (seed 0)" in err


def test_a_file_with_several_mechanisms_needs_a_choice(tmp_path: Path):
    spec = tmp_path / "two.dp"
    spec.write_text("mechanism a(x: real) privacy 1 { output x }\nmechanism b(x: real) privacy 1 { output 2 * x }\n")
    code, _, err = run(str(spec), "--arg", "x=1")
    assert code == 2 and "error[which-mechanism]" in err
    code, out, _ = run(str(spec), "--mechanism", "b", "--arg", "x=1", "--samples", "5", "--format", "json")
    assert code == 0 and json.loads(out)["outputs"] == [[2.0]] * 5


def test_json_errors_are_a_document():
    code, out, err = run(SVT, "--format", "json")
    doc = json.loads(out)
    assert code == 2 and err == "" and doc["diagnostics"][0]["code"] == "missing-argument"


# ----------------------------------------------------------------------------------- counterexample files


def test_counterexample_round_trip(tmp_path: Path):
    c = Counterexample("specs/x.dp", "m", "C4c", {"q": [1, Fraction(1, 3)], "eps": 0.5}, {"q": [2, 0]},
                       {"eta": 0.25, "xi": [None, -1.5]}, "note", {"checker": {"solver": "z3"}})
    path = tmp_path / "c.json"
    save(c, str(path))
    data = json.loads(path.read_text())
    assert data["format"] == FORMAT and data["args"]["q"] == [1, "1/3"] and data["noise"]["xi"] == [None, -1.5]
    assert load(str(path)) == c


@pytest.mark.parametrize("content,reason", [
    ("[]", "no JSON object"), ('{"format": "other"}', '"format"'), ("{", "not JSON"),
    ('{"format": "align-counterexample/1", "spec": "s", "mechanism": "m", "obligation": "C9"}', '"obligation"'),
    ('{"format": "align-counterexample/1", "spec": "s", "mechanism": "m", "obligation": "C4a", "noise": {"x": "a"}}',
     "not a number"),
])
def test_malformed_counterexamples_are_diagnostics(tmp_path: Path, content: str, reason: str):
    path = tmp_path / "c.json"
    path.write_text(content)
    with pytest.raises(SpecError) as info:
        load(str(path))
    d = info.value.diagnostics[0]
    assert d.code == "counterexample-format" and reason in d.message


def test_the_example_clause_supplies_what_arg_does_not():
    # alg2's clause: T = 1, k = 2, eps = 1, theta = 0.5, len(q) = 5; --arg overrides one value at a time
    code, out, _ = run(SVT, "--arg", "q=[3,1,4]", "--samples", "10", "--output-format", "json")
    assert code == 0
    assert json.loads(out)["args"] == {"q": [3.0, 1.0, 4.0], "T": 1.0, "k": 2, "eps": 1.0, "theta": 0.5}
    code, out, _ = run(SVT, "--arg", "q=[3,1,4]", "--arg", "k=1", "--samples", "10", "--output-format", "json")
    assert json.loads(out)["args"]["k"] == 1
    # without the clause every public parameter still needs --arg
    code, _, err = run("specs/r2dp/ensemble.dp", "--samples", "10")
    assert code == 2 and "error[" in err


def test_align_test_takes_the_example_values_and_length():
    out, err = io.StringIO(), io.StringIO()
    code = main(["test", "specs/incorrect/svt_lee_clifton.dp", "--samples", "4000", "--output-format", "json"],
                out, err)
    report = json.loads(out.getvalue())
    assert code == 1 and report["violation"], err.getvalue()
    # svt_lee_clifton's clause: T = 0, c = 1, eps = 1, len(q) = 10
    assert len(report["witness"]["d"]["q"]) == 10
