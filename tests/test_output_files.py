"""Output files (issue 34): a command writes only the files the user named (-o, --plot, --counterexample, ...) and
the report's figures, which go only to new files beside the report, never through a symbolic link, never over a
file that exists, and only once the report itself can be written. A name the command cannot use is a usage
diagnostic that names it, before the expensive work; a failed write is a `write-error`.

The report tests refute and confirm svt_stoddard once (the refutation and the empirical check are computed by
the real pipeline, then reused by each command-line run), so the tests exercise the writing, not the search.
"""

from __future__ import annotations

import io
import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

import align
from align.cli import main

from .conftest import SPECS
from .test_report_escaping import _Elements, assert_only_expected_files, compile_tex, markdown_html, needs_pdflatex

# Its module fixtures verify and confirm svt_stoddard once per worker: with `--dist loadgroup` one worker runs the file.
pytestmark = pytest.mark.xdist_group("test_output_files")

STODDARD = SPECS / "incorrect" / "svt_stoddard_no_query_noise.dp"
LAPLACE = SPECS / "freegap" / "example1_laplace.dp"
PNG = b"\x89PNG\r\n\x1a\n"


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def confirmed():
    """svt_stoddard refuted, with the likelihood-ratio test's confirmation (and so a figure)."""
    pytest.importorskip("matplotlib")
    from align.commands.verify import confirm

    result = align.verify(STODDARD)
    return replace(result, confirmation=confirm(result, 2000))


@pytest.fixture
def report(confirmed, monkeypatch):
    """`align report STODDARD --confirm ARGS...`, with the verification and its confirmation computed once."""
    import align.commands.verify
    import align.pipeline

    monkeypatch.setattr(align.pipeline, "verify", lambda mech, options, source=None, **_: confirmed)
    monkeypatch.setattr(align.commands.verify, "confirm", lambda result, samples: confirmed.confirmation)

    def run(*argv: str | Path) -> tuple[int, str, str]:
        return _cli("report", STODDARD, "--confirm", *argv)

    return run


# --------------------------------------------------------------------------------------- report figures


def test_a_figure_goes_beside_the_report(report, tmp_path: Path):
    code, _, err = report("-o", tmp_path / "out.md")
    assert code == 1, err
    assert "![privacy-loss plot](out-1.png)" in (tmp_path / "out.md").read_text()
    assert (tmp_path / "out-1.png").read_bytes().startswith(PNG)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out-1.png", "out.md"]


def test_a_figure_is_never_written_through_a_symbolic_link(report, tmp_path: Path):
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file\n")
    (tmp_path / "out-1.png").symlink_to(victim)
    code, _, err = report("-o", tmp_path / "out.md")
    assert code == 2 and "write-error" in err and "out-1.png" in err
    assert victim.read_text() == "the user's file\n"
    assert (tmp_path / "out-1.png").is_symlink()
    assert not (tmp_path / "out.md").exists()  # refused as a whole: no report without its figure


def test_a_figure_never_overwrites_a_file(report, tmp_path: Path):
    keep = tmp_path / "keep-1.png"
    keep.write_bytes(b"a figure of another report")
    (tmp_path / "keep.md").write_text("an older report\n")
    code, _, err = report("-o", tmp_path / "keep.md")
    assert code == 2 and "write-error" in err and "keep-1.png" in err
    assert keep.read_bytes() == b"a figure of another report"
    assert (tmp_path / "keep.md").read_text() == "an older report\n"  # nothing changed


def test_no_figure_is_written_when_the_report_cannot_be(report, tmp_path: Path):
    (tmp_path / "adir").mkdir()
    code, _, err = report("-o", tmp_path / "adir")
    assert code == 2 and "write-error" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir"]
    code, _, err = report("-o", tmp_path / "no" / "such.md")
    assert code == 2 and "write-error" in err and list(tmp_path.iterdir()) == [tmp_path / "adir"]


def test_an_empty_output_name_is_a_usage_error(report):
    code, out, err = report("-o", "")
    assert code == 2 and out == "" and "error[usage]" in err and "-o" in err


def test_a_hostile_output_name_makes_no_markdown_element(report, tmp_path: Path):
    name = "m) <img src=x onerror=alert(1)> ([l](javascript:x) `a` %41 (.md"
    code, _, err = report("-o", tmp_path / name)
    assert code == 1, err
    md = (tmp_path / name).read_text()
    (figure,) = [p.name for p in tmp_path.iterdir() if p.suffix == ".png"]
    assert re.fullmatch(r"[A-Za-z0-9_-]+-1\.png", figure)  # from a sanitised stem
    page = _Elements(markdown_html(md))
    assert [attrs for tag, attrs in page.elements if tag == "img"] == [{"src": figure, "alt": "privacy-loss plot"}]
    assert not [tag for tag, attrs in page.elements if tag == "a" or any(a.startswith("on") for a in attrs)]


@pytest.mark.slow
@needs_pdflatex
def test_a_hostile_output_name_runs_no_tex(report, tmp_path: Path):
    name = "r}\\typeout{\\detokenize{INJ}ECTED}\\iffalse{ ^^5c%#.tex"
    code, _, err = report("-o", tmp_path / name)
    assert code == 1, err
    (figure,) = [p.name for p in tmp_path.iterdir() if p.suffix == ".png"]
    assert re.fullmatch(r"[A-Za-z0-9_-]+-1\.png", figure)
    tex = tmp_path / "report.tex"  # compiled under a plain name: the figure's name is the point
    (tmp_path / name).rename(tex)
    log, opened = compile_tex(tex)
    assert "INJECTED" not in log
    assert_only_expected_files(tex, opened, (figure,))
    assert ("INPUT", os.path.realpath(tmp_path / figure)) in opened  # the figure is in the PDF


# ------------------------------------------------------------------------------ --plot, --counterexample


@pytest.fixture
def laplace_test():
    pytest.importorskip("matplotlib")

    def run(*argv: str | Path) -> tuple[int, str, str]:
        return _cli("test", LAPLACE, "--arg", "eps=1", "--samples", "2000", "--confirm", "0", "--no-exact",
                    "--no-checker", *argv)

    return run


@pytest.mark.parametrize("target,says", [
    ("adir", "is a directory"),
    ("x.txt", ".txt"),
    ("", "needs a file name"),
])
def test_a_plot_name_that_cannot_be_used_is_a_usage_error_before_the_search(laplace_test, tmp_path: Path,
                                                                         monkeypatch, target: str, says: str):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "adir").mkdir()
    import align.stats.lrtest

    def no_search(*args, **kwargs):
        raise AssertionError("the search ran")

    monkeypatch.setattr(align.stats.lrtest, "search", no_search)
    code, out, err = laplace_test("--plot", target)
    assert code == 2 and out == "" and "error[usage]" in err and says in err, err
    assert f"--plot {target}" in err if target else "--plot" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir"]  # not ./adir.png, nor x.txt


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_a_plot_that_cannot_be_written_is_a_write_error(laplace_test):
    code, out, err = laplace_test("--plot", "/dev/full")
    assert code == 2 and "error[write-error]" in err and "/dev/full" in err
    assert "no violation found" in out  # the result is still printed


def test_a_plot_goes_exactly_where_it_is_named(laplace_test, tmp_path: Path):
    """In the format of its suffix; PNG without one, into that very name (matplotlib would add `.png`)."""
    code, _, err = laplace_test("--plot", tmp_path / "figure.svg")
    assert code == 0, err
    code, _, err = laplace_test("--plot", tmp_path / "noext")
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figure.svg", "noext"]
    assert b"<svg" in (tmp_path / "figure.svg").read_bytes()
    assert (tmp_path / "noext").read_bytes().startswith(PNG)


@pytest.mark.parametrize("argv", [
    ("verify", STODDARD, "--counterexample", ""),
    ("test", LAPLACE, "--arg", "eps=1", "--counterexample", ""),
    ("run", LAPLACE, "--noise-file", ""),
    ("run", LAPLACE, "--check-alignment", "--neighbour", "q=1", "--counterexample-out", ""),
])
def test_an_empty_file_name_is_a_usage_error(argv):
    code, out, err = _cli(*argv)
    assert code == 2 and out == "" and "error[usage]" in err and "needs a file name" in err, err
