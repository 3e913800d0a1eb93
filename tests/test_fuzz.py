"""The quick subset of bench/fuzz.py: a few hundred hostile, mutated and generated inputs through `align check`,
a few dozen through `align verify`, `align run` and `align report`, and the first few of every family of the
repository's surfaces (configuration, symlinks, file names, command-line values, report injection); none may end
in an internal error, a hang or an escape. Then the harness's own checks, on texts made to fail them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from .conftest import ROOT
from .test_report_escaping import needs_pdflatex


@pytest.fixture(scope="module")
def fuzz():
    spec = importlib.util.spec_from_file_location("align_bench_fuzz", ROOT / "bench" / "fuzz.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their annotations through sys.modules
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def quick_cases(fuzz):
    """The quick inputs, built once (5 s) for the two tests below, which share a worker."""
    return fuzz.build_cases(fuzz.QUICK)


QUICK_CASES = pytest.mark.xdist_group("test_fuzz_quick_cases")


@pytest.mark.slow
@QUICK_CASES
def test_quick_fuzz_finds_no_internal_error_and_no_hang(fuzz, quick_cases):
    summary, _ = fuzz.fuzz(quick=True, jobs=2, cases=quick_cases)
    report = fuzz.table(summary) + "".join(f"\n{o.status} {c.category} #{i}: {o.detail} {c.argv!a}"
                                           for i, c, o in summary.failures)
    counts = {group: sum(v[0] for k, v in summary.rows.items() if k.startswith(group + "/"))
              for group in fuzz.SURFACES}
    assert counts["check"] >= 250 and counts["verify"] >= 30 and counts["run"] >= 30, counts
    assert counts["report"] >= 30 and counts["config"] >= 20 and counts["symlinks"] >= 20, counts
    assert counts["names"] >= 40 and counts["cli"] >= 30, counts
    families = {k.split(":")[0] for k in summary.rows}
    assert {"config/paths", "config/values", "config/toml", "config/files", "symlinks/files", "symlinks/loops",
            "names/check", "names/report", "cli/test", "cli/out", "report/inject"} <= families, families
    assert summary.internal == 0 and summary.hangs == 0 and summary.escapes == 0, report
    assert summary.last_line == f"inputs: {summary.inputs} internal: 0 hangs: 0 escapes: 0"


@pytest.mark.slow
@QUICK_CASES
def test_the_inputs_are_deterministic(fuzz, quick_cases):
    assert fuzz.build_cases(fuzz.QUICK) == quick_cases


@pytest.mark.slow
def test_a_hang_is_detected_and_the_worker_replaced(fuzz, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(fuzz.LIMIT_S, "verify", 0.05)
    # a verification that takes seconds: Algorithm 5's bounded check of every obligation (without
    # --every-obligation its refutation ends it in 0.3 s, too close to the limit to be a hang on a fast worker)
    slow = fuzz.Case("verify", "verify/test", ("verify", "--every-obligation",
                                               str(ROOT / "specs" / "freegap" / "alg5_hybrid_identity.dp")))
    quick = fuzz.Case("check", "check/test", ("check", str(ROOT / "specs" / "freegap" / "alg2_svt_gap.dp")))
    outcomes = fuzz.run_cases([slow, quick, quick], jobs=1, scratch=tmp_path)
    assert [o.status for o in outcomes] == ["hang", "ok", "ok"]


@pytest.mark.parametrize("command,code,out,err,verdict", [
    ("check", 0, "mechanism m ...", "", None),
    ("check", 2, "", "a.dp:3:4: error[undefined-name]: name `x` is not defined\n", None),
    ("check", 2, "", "a.dp: error[io-error]: cannot read a.dp: it is a FIFO\n", None),
    ("check", 2, "", "align: error[internal-error]: internal error: boom\n", "internal-error"),
    ("check", 2, "", "Traceback (most recent call last):\n", "traceback"),
    ("check", 2, "", "error[undefined-name]: name `x` is not defined\n", "no location"),
    ("check", 2, "", "a.dp: error[undefined-name]: name `x` is not defined\n", "no location"),
    ("check", 2, "", "a.dp:1:1: error[made-up]: what\n", "unregistered code"),
    ("check", 2, "::error file=a.dp,line=1,col=1,endLine=1,endColumn=2,title=align%3A x::y\n", "", None),
    ("check", 2, "{\"runs\": [{\"rules\": [{\"id\": \"internal-error\"}]}], \"level\": \"error\"}", "", None),
    ("check", 2, "::error file=a.dp,title=align%3A internal-error::boom\n", "", "internal-error"),
    ("test", 2, "", "x.json: error[counterexample-format]: x.json: not a counterexample file\n", None),
    ("check", 2, "", "", "without a diagnostic"),
    ("check", 7, "", "", "exit code"),
    ("run", 2, "", "align: error[invalid-argument]: cannot read the value of `q`: nan\n", None),
    ("check", 2, "", "align: error[invalid-argument]: cannot read the value of `q`: nan\n", "no location"),
])
def test_classify(fuzz, command: str, code: int, out: str, err: str, verdict: str | None):
    got = fuzz.classify(command, code, out, err)
    assert (got is None) if verdict is None else (got is not None and verdict in got), got


def _case(fuzz, argv=("check", "a.dp"), files=(), command="check"):
    return fuzz.Case(command, "check/test", tuple(argv), tuple(files))


def _escape(fuzz, tmp_path: Path, out: str = "", err: str = "", case=None, write=None, argv=None):
    """The escape verdict of one result in a fresh checkout (`write` makes files as the command would)."""
    case = case or _case(fuzz)
    repo = fuzz._prepare(case, tmp_path / "case", "ALIGN_CANARY_test")
    before = fuzz._snapshot(tmp_path / "case")
    if write:
        write(repo)
    after = fuzz._snapshot(tmp_path / "case")
    argv = list(argv or case.argv)
    return fuzz.escapes(case, argv, repo, tmp_path / "case", out, err, before, after, [b"ALIGN_CANARY_test"], {})


@pytest.mark.parametrize("out,verdict", [
    ("mechanism m: proved\n", None),
    ("::error file=a.dp,line=1,col=1,endLine=1,endColumn=2,title=align%3A m C4a refuted::no%0Amore\n", None),
    ("::warning file=a.dp::fine\n", None),
    ("::stop-commands::tok\n", "not an annotation"),
    ("::set-output name=x::y\n", "not an annotation"),
    ("  ::add-mask::x\n", "not an annotation"),
    ("##[error]x\n", "workflow command"),
    ("::error file=a:b.dp::x\n", "not an annotation"),
    ("::error file=a,b.dp,line=1::x\n", "property"),
    ("::error file=a%b.dp::x\n", "property"),
    ("::error file=a.dp::100%\n", "message"),
    ("a.dp:1:1: error[x]: ALIGN_CANARY_test\n", "canary"),
    ("name `\x1b[2J` is not defined\n", "raw control"),
    ("a\rb\n", "raw control"),
])
def test_escapes_in_the_output(fuzz, tmp_path: Path, out: str, verdict: str | None):
    got = _escape(fuzz, tmp_path, out=out)
    assert (got is None) if verdict is None else (got is not None and verdict in got), got


def test_a_line_begun_by_a_file_name_escapes(fuzz, tmp_path: Path):
    case = _case(fuzz, ("check", "specs/x\nspoofed: error[x]: y.dp"))
    got = _escape(fuzz, tmp_path, out="specs/x\nspoofed: error[x]: y.dp:1:1: error[parse]\n", case=case)
    assert got is not None and "file name" in got, got


def test_a_file_the_command_line_did_not_name_escapes(fuzz, tmp_path: Path):
    case = _case(fuzz, ("report", "spec.dp", "-o", "r.md"), command="report")
    assert _escape(fuzz, tmp_path, case=case, write=lambda repo: (repo / "r.md").write_text("# x\n")) is None
    assert _escape(fuzz, tmp_path, case=case, write=lambda repo: (repo / "r-1.png").write_bytes(b"png")) is None
    got = _escape(fuzz, tmp_path, case=case, write=lambda repo: (repo / "other.md").write_text("x"))
    assert got is not None and "other.md" in got and "did not name" in got, got
    got = _escape(fuzz, tmp_path, case=case, write=lambda repo: (repo.parent / fuzz.CANARY).write_text("x"))
    assert got is not None and "canary.dp" in got, got


@pytest.mark.parametrize("text,verdict", [
    ("# Report\n\n```\n 1  <img src=x onerror=alert(1)>\n```\n\n`a` and \\<b\\>\n", None),
    ("# Report\n\n<img src=x onerror=alert(1)>\n", "raw HTML"),
    ("Spec `` a``<script>alert(1)</script>`` ``\n", "raw HTML"),
    ("see [x](https://example.invalid) and <https://example.invalid>\n", "link"),
    ("![plot](r-1.png)\n", None),
    ("![plot](x)\n", "image"),
])
def test_markdown_reports(fuzz, text: str, verdict: str | None):
    baseline = {("p", ""), ("h1", ""), ("pre", ""), ("code", ""), ("img", ""), ("img", "src"), ("img", "alt")}
    got = fuzz.markdown_problem(text, {"r-1.png"}, baseline)
    assert (got is None) if verdict is None else (got is not None and verdict in got), got


@pytest.mark.parametrize("text,verdict", [
    ('<!DOCTYPE html><p class="good">a &lt;img&gt;</p><img alt="p" src="data:image/png;base64,AA">', None),
    ("<!DOCTYPE html><p>a<img src=x onerror=alert(1)></p>", "attribute"),
    ("<!DOCTYPE html><p>a</p><script>alert(1)</script>", "element"),
    ("<!DOCTYPE html><p>a</p><b>x</b>", "element"),
    ("<!DOCTYPE html><math><mfrac><mi>x</mi><mn>2</mn></mfrac></math>", None),
])
def test_html_reports(fuzz, text: str, verdict: str | None):
    baseline = {("p", ""), ("p", "class"), ("img", ""), ("img", "alt"), ("img", "src")}
    got = fuzz.html_problem(text, baseline)
    assert (got is None) if verdict is None else (got is not None and verdict in got), got


@pytest.mark.parametrize("listing,verdict", [
    (" 1  # \\input{x} \\typeout{y}", None),
    (" 1  # \\end{Verbatim}\\input{x}", "closes no listing"),
])
def test_tex_reports(fuzz, listing: str, verdict: str | None):
    text = ("\\documentclass{article}\\begin{document}\n\\begin{Verbatim}[frame=single]\n" + listing
            + "\n\\end{Verbatim}\n\\texttt{\\textbackslash{}input}\n\\end{document}\n")
    got = fuzz.tex_problem(text, ["# \\input{x} \\typeout{y} \\end{Verbatim}"], {"documentclass", "begin", "end",
                                                                                  "texttt", "textbackslash"})
    assert (got is None) if verdict is None else (got is not None and verdict in got), got
    if verdict is not None:
        return
    raw = text.replace("\\texttt{\\textbackslash{}input}", "\\input{../canary.dp}")
    got = fuzz.tex_problem(raw, ["\\input{../canary.dp}"], {"documentclass", "begin", "end", "texttt"})
    assert got is not None and "input" in got, got


def test_saved_inputs_replay_as_they_were(fuzz, tmp_path: Path):
    case = fuzz.Case("check", "names/check:x", ("check", "specs/a\n\udcff.dp"), (("specs/a\n\udcff.dp", b"\xff"),),
                     (("symlink", "specs/l=/etc/passwd"),))
    outcome = fuzz.Outcome("escape", "detail")
    summary = fuzz.Summary(failures=[(7, case, outcome)])
    fuzz._save(summary, tmp_path)
    record = tmp_path / "00007_names_check_x.json"
    assert fuzz._case_of(__import__("json").loads(record.read_text())) == case
    assert (tmp_path / "00007_names_check_x" / fuzz.REPO / "specs" / "a\n\udcff.dp").read_bytes() == b"\xff"
    assert (tmp_path / "00007_names_check_x" / fuzz.REPO / "specs" / "l").is_symlink()


@pytest.mark.slow
@needs_pdflatex
def test_a_compiled_report_that_reads_outside_or_runs_injected_code_escapes(fuzz, tmp_path: Path):
    (tmp_path / "canary.dp").write_text("ALIGN_CANARY_test\n")
    folder = tmp_path / "repo"
    folder.mkdir()
    page = "\\documentclass{article}\\begin{document}\n%s\n\\end{document}\n"
    assert fuzz.tex_compile_problem(page % "fine", folder, set()) is None
    got = fuzz.tex_compile_problem(page % "\\input{../canary.dp}", folder, set())
    assert got is not None and "canary.dp" in got, got
    got = fuzz.tex_compile_problem(page % fuzz.TYPEOUT, folder, set())
    assert got is not None and "typeout" in got, got
