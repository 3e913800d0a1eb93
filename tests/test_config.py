"""Project configuration ([tool.align] in pyproject.toml, or align.toml): what it sets, what flags override,
and located diagnostics for everything wrong in it."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from align.cli import main

from .conftest import SPECS

BOUNDED = SPECS / "incorrect" / "noisy_answers_requires_long_input.dp"  # proved for short inputs only
PROVED = SPECS / "freegap" / "example1_laplace.dp"


def _main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()  # the search for a configuration stops at the checkout's root
    (tmp_path / "specs").mkdir()
    shutil.copy(BOUNDED, tmp_path / "specs" / "bounded.dp")
    shutil.copy(PROVED, tmp_path / "specs" / "proved.dp")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_verify_without_files_verifies_the_configured_paths_with_the_configured_options(project: Path):
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.align]\npaths = ["specs/*.dp"]\nmax-length = 2\n'
        'output-format = "concise"\n')
    code, out, err = _main("verify")
    assert code == 3 and not err
    lines = out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["specs/bounded.dp", "specs/proved.dp"]
    assert "bounded (for lengths <= 2)" in lines[0] and "proved (for all inputs)" in lines[1]
    # flags override the configuration
    code, out, _ = _main("verify", "--max-length", "3", "--output-format", "json", "specs/bounded.dp")
    document = json.loads(out)
    assert code == 3 and document["files"][0]["mechanisms"][0]["scope"] == "for lengths <= 3"


def test_align_toml_comes_first_and_accept_bounded_turns_bounded_into_success(project: Path):
    (project / "pyproject.toml").write_text('[tool.align]\npaths = ["specs/proved.dp"]\n')
    (project / "align.toml").write_text('paths = ["specs/bounded.dp"]\naccept-bounded = true\n')
    code, out, _ = _main("verify", "--output-format", "concise")
    assert code == 0 and out.startswith("specs/bounded.dp:") and "bounded" in out


def test_the_search_goes_up_to_the_checkout_root_and_no_further(project: Path, monkeypatch: pytest.MonkeyPatch):
    (project / "align.toml").write_text('paths = ["specs/proved.dp"]\n')
    sub = project / "a" / "b"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    code, out, _ = _main("verify", "--output-format", "concise")
    # the configured files are outside the working directory: shown as absolute paths
    assert code == 0 and out.startswith(f"{project.resolve() / 'specs' / 'proved.dp'}:") and "proved" in out
    inner = sub / "repo"
    (inner / ".git").mkdir(parents=True)
    monkeypatch.chdir(inner)
    code, _, err = _main("verify")
    assert code == 2 and "error[usage]: no FILE.dp given, and no `paths` configured" in err


@pytest.mark.parametrize(("text", "code", "line", "column", "message"), [
    ('[tool.align]\npaths = ["specs/*.dp"]\nmax-lenght = 2\n', "config-unknown-key", 3, 1,
     "unknown key `max-lenght` in [tool.align]; did you mean `max-length`?"),
    ('[tool.align]\n  max-length = "4"\n', "config-value", 2, 3,
     'must be an integer between 1 and 16'),
    ('[tool.align]\naccept-bounded = 1\n', "config-value", 2, 1,
     "`accept-bounded` must be true, false, or a list of globs"),
    ('[tool.align]\noutput-format = "xml"\n', "config-value", 2, 1,
     '`output-format` must be one of text, concise, json, sarif, github, not "xml"'),
    ('[tool.align]\ntimeout = -1\n', "config-value", 2, 1,
     "a number greater than 0 and at most 86400 (seconds), not int -1"),
    ('[tool.align]\npaths = ["specs/*.dp"\n', "config-syntax", None, None, "pyproject.toml is not valid TOML"),
])
def test_a_wrong_configuration_is_a_located_diagnostic(project: Path, text: str, code: str, line: int | None,
                                                        column: int | None, message: str):
    (project / "pyproject.toml").write_text(text)
    status, out, err = _main("verify", "--output-format", "json")
    (diagnostic,) = json.loads(out)["files"][0]["diagnostics"]
    assert status == 2 and diagnostic["code"] == code and message in diagnostic["message"], diagnostic
    if line is not None:
        assert (diagnostic["span"]["line"], diagnostic["span"]["column"]) == (line, column)
        assert diagnostic["span"]["path"] == "pyproject.toml"
    else:
        assert diagnostic["span"] is not None and diagnostic["span"]["line"] >= 2
    # every command stops on it, with the caret under the key in text
    status, _, err = _main("check", "specs/proved.dp")
    assert status == 2 and f"error[{code}]" in err and "|" in err
    status, _, err = _main("explain", "usage")
    assert status == 2 and f"error[{code}]" in err


def test_a_configured_format_that_does_not_serve_the_command_is_not_used(project: Path):
    (project / "align.toml").write_text('output-format = "sarif"\n')
    code, out, _ = _main("explain", "usage")
    assert code == 0 and out.startswith("usage: ")
    code, out, _ = _main("verify", "specs/proved.dp")
    assert code == 0 and json.loads(out)["version"] == "2.1.0"
