"""The Python API (align.api) and the renderer layer (align.render): typed results, the same answers as the
command line, and every command in every output format."""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

import align
from align.cli import main
from align.render import RENDERERS, Renderer
from align.status import Status

from .conftest import ROOT

LAPLACE = "specs/freegap/example1_laplace.dp"
SVT = "specs/freegap/alg2_svt_gap.dp"
BROKEN = "specs/incorrect/histogram_lap_eps.dp"


def _main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def test_import_align_loads_no_solver():
    code = "import sys, align; print(sorted(m for m in ('sympy', 'z3', 'numpy', 'lark') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_explain_loads_no_solver():
    code = ("import sys, io; from align.cli import main; main(['explain', 'usage'], io.StringIO()); "
            "print(sorted(m for m in ('sympy', 'z3') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_verify_returns_typed_results_equal_to_the_command_lines():
    result = align.verify(LAPLACE)
    assert result.status is Status.PROVED and result.mechanism.name == "laplace_salary_sum"
    code, out, _ = _main("verify", "--output-format", "json", LAPLACE)
    (document,) = json.loads(out)["files"][0]["mechanisms"]
    assert code == result.exit_code == 0
    assert [(o["id"], o["status"]) for o in document["obligations"]] == \
        [(v.obligation.id, str(v.status)) for v in result.verdicts]


def test_verify_synthesises_a_missing_alignment_as_the_command_line_does():
    text = (ROOT / LAPLACE).read_text()
    auto = text[:text.index("\nalignment ")] + "\nalignment laplace_salary_sum auto\n"
    result = align.verify(auto)
    assert result.status is Status.PROVED and result.synthesis is not None and result.synthesis.found
    assert "eta' = eta + q - q'" in (result.synthesis.alignment or "")
    tighter = align.verify(LAPLACE, synthesise=True)  # proved as written: is a smaller claim proved?
    assert tighter.status is Status.PROVED and tighter.synthesis is not None and not tighter.synthesis.found


def test_a_spec_can_be_given_as_text_or_path():
    text = (ROOT / LAPLACE).read_text()
    assert align.check(text).name == align.check(Path(ROOT / LAPLACE)).name == "laplace_salary_sum"
    with pytest.raises(align.SpecError) as info:
        align.check("mechanism m(q: real) {")
    assert info.value.diagnostics[0].code == "unexpected-end"
    with pytest.raises(align.SpecError) as info:
        align.check(LAPLACE, mechanism="nope")
    assert info.value.diagnostics[0].code == "no-such-mechanism"


def test_run_gives_the_command_lines_samples():
    outputs = list(align.run(LAPLACE, {"eps": 1, "q": 3}, samples=50, seed=7).outputs())
    code, out, _ = _main("run", LAPLACE, "--arg", "eps=1", "--arg", "q=3", "--samples", "50", "--seed", "7",
                         "--output-format", "json")
    assert code == 0 and json.loads(out)["outputs"] == outputs


def test_replay_applies_the_alignment():
    replay = align.replay(LAPLACE, {"eps": 1, "q": 0}, {"eta": 0.25}, neighbour={"q": 100})
    assert replay.output_match and replay.failures == () and replay.exit_code == 0
    assert replay.alignment is not None and replay.alignment.cost == pytest.approx(1.0)


def test_test_finds_the_violation_the_command_line_finds():
    report = align.test(BROKEN, {"eps": 0.5}, samples=8000, length=1)
    code, out, _ = _main("test", BROKEN, "--arg", "eps=0.5", "--samples", "8000", "--length", "1",
                         "--output-format", "json")
    assert report.violation and code == report.exit_code == 1
    assert json.loads(out)["witness"]["event"] == report.result.witness.event.text


def test_every_renderer_renders_every_result():
    # abstract methods: a renderer that leaves one out cannot be built (and mypy says so before)
    for name, cls in RENDERERS.items():
        assert cls.name == name and cls(command="check", stdout=io.StringIO(), stderr=io.StringIO())
    abstract = set(Renderer.__abstractmethods__)
    assert {"checked_file", "verified_file", "errors", "samples", "replay", "alignment_check", "tested",
            "explained"} <= abstract


COMMANDS = {
    "check": (["check", LAPLACE], 0),
    "check-error": (["check", "specs/no_such_file.dp"], 2),
    "verify": (["verify", LAPLACE], 0),
    "explain": (["explain", "usage"], 0),
    "run": (["run", LAPLACE, "--arg", "eps=1", "--arg", "q=0", "--samples", "20"], 0),
    "replay": (["run", BROKEN, "--arg", "eps=0.5", "--arg", "q=[0]", "--noise", "eta=[0.3]", "--aligned",
                "--neighbour", "q=[1]"], 1),
    "check-alignment": (["run", LAPLACE, "--arg", "eps=1", "--arg", "q=0", "--neighbour", "q=50",
                         "--check-alignment", "--samples", "100"], 0),
    "run-error": (["run", LAPLACE, "--arg", "eps=-1", "--arg", "q=0"], 2),
    "test": (["test", BROKEN, "--arg", "eps=0.5", "--samples", "4000", "--length", "1"], 1),
}


@pytest.mark.parametrize("fmt", sorted(RENDERERS))
@pytest.mark.parametrize("case", sorted(COMMANDS))
def test_every_command_in_every_format(case: str, fmt: str):
    argv, expected = COMMANDS[case]
    code, out, err = _main(*argv, "--output-format", fmt)
    served = RENDERERS[fmt].commands
    if served is not None and argv[0] not in served:
        # a format for some commands only (sarif, github): the others are refused with a usage error
        assert code == 2 and err.startswith(f"align: error[usage]: --output-format {fmt} is for") and not out
        return
    assert code == expected, out + err
    assert "Traceback" not in err and "internal-error" not in err
    if fmt == "json":
        document = json.loads(out)  # one document, whatever happened
        assert document.get("exit_code", code) == code
    elif fmt == "concise" and case not in ("explain", "check-error", "run-error"):
        assert len(out.splitlines()) == 1, out
    elif fmt == "sarif":
        assert json.loads(out)["runs"][0]["invocations"][0]["exitCode"] == code
    if case.endswith("error"):
        if fmt == "json":
            assert "error[" not in err  # in the document, not on stderr
        elif fmt in ("sarif", "github"):
            assert "io-error" in out  # the diagnostic is a result / an annotation
        else:
            assert "error[" in err


def test_older_option_names_still_work():
    assert _main("check", "--output-format", "full", LAPLACE)[0] == 0
    code, out, _ = _main("run", LAPLACE, "--arg", "eps=1", "--arg", "q=0", "--samples", "3", "--format", "json")
    assert code == 0 and len(json.loads(out)["outputs"]) == 3


def test_a_usage_error_is_a_registered_diagnostic():
    code, _, err = _main("verify", "--max-length", "0", LAPLACE)
    assert code == 2 and "\nalign: error[usage]: argument --max-length: must be an integer between 1 and 16, not 0" \
        in err
    code, _, err = _main("explain", "no-such-code")
    assert code == 2 and "error[usage]: no diagnostic code `no-such-code`" in err


def test_a_bug_is_an_internal_error_not_a_spec_error(monkeypatch: pytest.MonkeyPatch):
    import align.api

    def explode(source):
        raise KeyError("boom")

    monkeypatch.setattr(align.api, "resolve_source", explode)
    with pytest.raises(align.InternalError) as info:
        align.check(LAPLACE)
    assert isinstance(info.value.__cause__, KeyError) and "probably a bug" in str(info.value)


def test_the_api_checks_its_arguments_as_the_command_line_does():
    with pytest.raises(align.SpecError) as info:
        align.verify(LAPLACE, max_length=10**6)
    assert info.value.diagnostics[0].code == "usage"


@pytest.mark.parametrize("call", [
    lambda: align.verify(LAPLACE, timeout=math.inf), lambda: align.verify(LAPLACE, timeout=1e308),
    lambda: align.verify(LAPLACE, timeout=math.nan), lambda: align.run(LAPLACE, {"q": 1, "eps": 1}, seed=-1),
    lambda: align.run(LAPLACE, {"q": 1, "eps": 1}, samples=10**21),
    lambda: align.test(LAPLACE, {"eps": 1}, samples=10**21), lambda: align.test(LAPLACE, {"eps": 1}, length=10**8),
    lambda: align.test(LAPLACE, {"eps": 1}, alpha=math.nan), lambda: align.compute(LAPLACE, {"eps": 1}, length=10**8),
], ids=["timeout inf", "timeout 1e308", "timeout nan", "seed -1", "samples 10^21", "test samples 10^21",
        "test length 10^8", "alpha nan", "compute length 10^8"])
def test_numbers_out_of_range_are_usage_errors(call):
    """The ranges of the command line's numeric options (align/limits.py) hold for the API's arguments too."""
    with pytest.raises(align.SpecError) as info:
        call()
    (problem,) = info.value.diagnostics
    assert problem.code == "usage" and "must be" in problem.message


def test_github_workflow_command_values_are_escaped():
    from pathlib import Path

    from align.render.github import command
    from align.span import Span

    span = Span("dir,with:odd%chars/spec.dp", 3, 5, 3, 9)
    line = command("error", span, "unused", "align: m C4a, refuted", "first line\nsecond: 100%", Path.cwd())
    assert line == ("::error file=dir%2Cwith%3Aodd%25chars/spec.dp,line=3,col=5,endLine=3,endColumn=9,"
                    "title=align%3A m C4a%2C refuted::first line%0Asecond: 100%25")
