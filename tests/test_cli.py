"""The command line: exit codes, output formats, streams, colour, and no tracebacks whatever happens."""

from __future__ import annotations

import io
import json
import os
import string
import subprocess
import sys
from pathlib import Path

import pytest

import align.cli
import align.pipeline
from align.cli import main
from align.diagnostics import CODES, ExitCode

from .conftest import ROOT

GOOD = "specs/freegap/alg2_svt_gap.dp"
BAD = "tests/diagnostics/undefined_name.dp"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("NO_COLOR", "1")


def test_exit_codes_are_the_documented_ones():
    assert [int(c) for c in ExitCode] == [0, 1, 2, 3]


def test_check_prints_the_obligations_and_exits_0():
    code, out, err = run("check", GOOD)
    assert code == 0 and err == ""
    assert "mechanism svt_gap" in out
    for ob in ("C0", "C1", "C2", "C3", "C4a", "C4b", "C4c", "C4d", "C5"):
        assert f"\n    {ob} " in out
    assert "parameters: public" in out
    assert "c = eps0 = eps*theta" in out
    assert "xi[i]' = xi[i] + (out[i] is TOP ? 1 + q[i] - q'[i] : 0)" in out
    assert "proved" not in out.replace("nothing is proved", ""), "check never claims a verdict"


def test_check_concise_is_one_line_per_mechanism():
    code, out, _ = run("check", "--output-format", "concise", GOOD, "specs/freegap/example1_laplace.dp")
    assert code == 0
    assert len(out.splitlines()) == 2
    line = next(k for k, text in enumerate(Path(GOOD).read_text().splitlines(), 1) if text.startswith("mechanism "))
    assert out.startswith(f"specs/freegap/alg2_svt_gap.dp:{line}:11: mechanism svt_gap:")


def test_check_json_is_one_document_on_stdout():
    code, out, err = run("check", "--output-format", "json", GOOD, BAD)
    assert code == 2 and err == ""
    doc = json.loads(out)
    assert doc["exit_code"] == 2
    good, bad = doc["files"]
    assert good["ok"] and good["mechanisms"][0]["name"] == "svt_gap"
    sites = {s["name"]: s for s in good["mechanisms"][0]["sampling_sites"]}
    assert sites["xi"]["family"] and sites["xi"]["cost_coefficient"].startswith("eps1/2")
    assert [o["id"] for o in good["mechanisms"][0]["obligations"]] == \
        ["ADJ", "C0", "C0", "C1", "C2", "C3", "C3", "C4a", "C4b", "C4c", "C4d", "C5"]
    assert not bad["ok"]
    (diagnostic,) = bad["diagnostics"]
    assert diagnostic["code"] == "undefined-name"
    assert diagnostic["span"]["line"] == 7 and diagnostic["span"]["column"] == 20


def test_errors_go_to_stderr_with_location_caret_and_exit_2():
    code, out, err = run("check", BAD)
    assert code == 2 and out == ""
    first, *rest = err.splitlines()
    assert first == f"{BAD}:7:20: error[undefined-name]: name `y` is not defined"
    assert rest[1] == "7 |   output x + eta + y" and rest[2] == "  |                    ^"


def test_one_bad_file_does_not_hide_the_good_ones():
    code, out, err = run("check", BAD, GOOD)
    assert code == 2
    assert "mechanism svt_gap" in out and "undefined-name" in err


def test_missing_file_is_an_io_error():
    code, out, err = run("check", "no/such/file.dp")
    assert code == 2 and out == ""
    assert err.startswith("no/such/file.dp: error[io-error]: cannot read no/such/file.dp")


def test_a_directory_is_an_io_error(tmp_path: Path):
    code, _, err = run("check", str(tmp_path))
    assert code == 2 and "error[io-error]" in err


def test_non_utf8_is_an_io_error(tmp_path: Path):
    path = tmp_path / "latin1.dp"
    path.write_bytes("# caf\xe9\n".encode("latin-1"))
    code, _, err = run("check", str(path))
    assert code == 2 and "error[io-error]" in err


def test_usage_errors_exit_2():
    assert run()[0] == 2
    assert run("frobnicate")[0] == 2
    code, _, err = run("check", GOOD, "--output-format", "xml")
    assert code == 2 and "error[usage]" in err


def test_an_internal_error_is_caught_and_says_it_is_a_bug(monkeypatch: pytest.MonkeyPatch):
    def explode(spec):
        raise RuntimeError("boom")

    monkeypatch.setattr(align.pipeline, "resolve_source", explode)
    code, _, err = run("check", GOOD)
    assert code == 2
    assert "error[internal-error]: internal error: RuntimeError: boom" in err
    assert "this is probably a bug" in err and "Traceback" not in err


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch: pytest.MonkeyPatch):
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out, err = Tty(), Tty()
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    main(["check", BAD], out, err)
    assert "\x1b[" in err.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    out, err = Tty(), Tty()
    main(["check", BAD], out, err)
    assert "\x1b[" not in err.getvalue()


def test_explain_prints_the_registry_entry():
    code, out, _ = run("explain", "continuous-output-read")
    assert code == 0 and "discrete parts" in out
    assert run("explain", "no-such-code")[0] == 2


def test_every_message_template_formats_with_its_own_fields():
    for code in CODES.values():
        fields = [f for _, f, _, _ in string.Formatter().parse(code.template) if f]
        assert code.template.format(**dict.fromkeys(fields, "X"))
        assert code.name == code.name.lower() and " " not in code.name


def test_python_dash_m_and_the_console_script_agree():
    env = {**os.environ, "NO_COLOR": "1"}
    result = subprocess.run([sys.executable, "-m", "align", "check", "--output-format", "concise", BAD],
                            cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 2
    assert result.stderr.startswith(f"{BAD}:7:20: error[undefined-name]")
    assert "Traceback" not in result.stderr
