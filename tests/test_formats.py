"""Every output format on the whole corpus, from one verification of each spec (shared with tests/test_verify.py
and the golden reports): the CI formats `--output-format sarif` (validated against the official SARIF 2.1.0
schema, vendored under tests/data/sarif/ with its licence) and `--output-format github` (workflow commands), and
`align report`'s Markdown, HTML and LaTeX."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from align.checker.verify import overall_scope, overall_status
from align.cli import main
from align.diagnostics import CODES
from align.obligations import KINDS
from align.render import Renderer
from align.render.github import GithubRenderer
from align.render.sarif import SarifRenderer
from align.results import FileResult, MechanismVerdict, VerifyReport
from align.status import Status

from .conftest import ROOT, corpus, corpus_params
from .test_verify import VERIFIED, verified

SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json").read_text())
FILES = corpus()


def _main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def _file(path: Path) -> tuple[FileResult, int]:
    """The corpus spec's verification (shared with tests/test_verify.py and the golden reports), as a file."""
    source, mech, verdicts = verified(path)
    m = MechanismVerdict(mech, tuple(verdicts), overall_status(verdicts), overall_scope(verdicts))
    file = FileResult(str(path.relative_to(ROOT)), source, verified=(m,))
    return file, int(VerifyReport((file,)).exit_code)


def _render(cls: type[Renderer], path: Path) -> tuple[int, str]:
    file, code = _file(path)
    out = io.StringIO()
    renderer = cls("verify", out, io.StringIO())
    renderer.verified_file(file)
    renderer.finish(code)
    return code, out.getvalue()


def _validate(log: dict[str, Any]) -> None:
    jsonschema.Draft4Validator(SCHEMA).validate(log)


@VERIFIED
@pytest.mark.parametrize("path", corpus_params(FILES))
def test_every_corpus_log_is_valid_sarif_with_one_result_per_open_obligation(path: Path):
    code, out = _render(SarifRenderer, path)
    log = json.loads(out)
    _validate(log)
    (run,) = log["runs"]
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": code}]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [str(k) for k in KINDS] + list(CODES)
    _, mech, verdicts = verified(path)
    open_ = [v for v in verdicts if v.status in (Status.REFUTED, Status.UNKNOWN, Status.BOUNDED)]
    assert len(run["results"]) == len(open_)
    for result, verdict in zip(run["results"], open_):
        assert result["ruleId"] == verdict.obligation.id and rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] == ("error" if verdict.status == Status.REFUTED else "warning")
        region = result["locations"][0]["physicalLocation"]["region"]
        span = verdict.obligation.span
        assert (region["startLine"], region["startColumn"], region["endLine"], region["endColumn"]) == \
            (span.line, span.column, span.end_line, span.end_column)
        artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
        assert artifact == {"uri": str(path.relative_to(ROOT)), "uriBaseId": "%SRCROOT%"}
        if verdict.counterexample is not None:
            assert result["properties"]["counterexample"] == verdict.counterexample.to_json()
            assert "counterexample" in result["message"]["text"]
        _check_code_flow(result, verdict, mech)
    assert code in (0, 1, 3)
    if code == 0:
        assert run["results"] == []


def _check_code_flow(result: dict[str, Any], verdict, mech) -> None:
    """A refutation replayed by the interpreter is a code flow of the two runs, whose steps are the replay's, and
    the step where they part (when they do) is the one `essential` location of each run and a related location."""
    from align.interp.divergence import side_by_side

    cex = verdict.counterexample
    steps = side_by_side(mech, cex) if cex is not None and cex.args else None
    if verdict.status != Status.REFUTED or steps is None or steps.replay is None:
        assert "codeFlows" not in result
        return
    (flow,) = result["codeFlows"]
    on_d, on_d_prime = flow["threadFlows"]
    assert [x["location"]["message"]["text"] for x in on_d["locations"]] == [s.on_d for s in steps.steps if s.on_d]
    assert [x["location"]["message"]["text"] for x in on_d_prime["locations"]] == \
        [s.on_d_prime for s in steps.steps if s.on_d_prime]
    essential = [x for x in on_d["locations"] if x["importance"] == "essential"]
    parting = [r for r in result["relatedLocations"] if r["message"]["text"].startswith("the runs part here")]
    if steps.divergence is None:
        assert essential == [] and parting == []
    else:
        assert len(parting) == 1 and len(essential) <= 1
        assert parting[0]["physicalLocation"]["region"]["startLine"] == steps.steps[steps.divergence].line


def test_a_file_that_does_not_load_is_a_located_error_result(tmp_path: Path):
    spec = tmp_path / "bad.dp"
    spec.write_text("mechanism m(eps: real) privacy eps {\n  x ~ Lap(1 / eps\n}\n")
    code, out, err = _main("verify", str(spec), "--output-format", "sarif")
    log = json.loads(out)
    _validate(log)
    (result,) = log["runs"][0]["results"]
    assert code == 2 and not err and result["level"] == "error" and result["ruleId"] in CODES
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == spec.as_uri() and location["region"]["startLine"] == 3
    _, check_out, _ = _main("check", str(spec), "--output-format", "sarif")
    _validate(json.loads(check_out))


COMMAND = re.compile(r"::(error|warning) ((?:[A-Za-z]+=[^,:]*)(?:,[A-Za-z]+=[^,:]*)*)::(.*)")


@VERIFIED
@pytest.mark.parametrize("path", corpus_params(FILES))
def test_github_annotations_are_workflow_commands_one_per_open_obligation(path: Path):
    _, out = _render(GithubRenderer, path)
    _, sarif = _render(SarifRenderer, path)
    results = json.loads(sarif)["runs"][0]["results"]
    commands = [line for line in out.splitlines() if line.startswith("::")]
    assert len(commands) == len(results)
    for line, result in zip(commands, results):
        m = COMMAND.fullmatch(line)
        assert m, line
        assert m.group(1) == result["level"]
        props = dict(part.split("=", 1) for part in m.group(2).split(","))
        region = result["locations"][0]["physicalLocation"]["region"]
        assert props["file"] == str(path.relative_to(ROOT))
        assert (int(props["line"]), int(props["col"])) == (region["startLine"], region["startColumn"])
        if "\n" in result["message"]["text"]:  # a multi-line message travels on one line, escaped
            assert "%0A" in m.group(3)
    summaries = [line for line in out.splitlines() if not line.startswith("::")]
    assert summaries and all(line.startswith("align: mechanism ") for line in summaries)


# ------------------------------------------------------------------------------------------------ align report


@VERIFIED
@pytest.mark.parametrize("path", corpus_params(FILES))
def test_every_corpus_report_has_its_proof_in_every_format(path: Path):
    from align.obligations import ObligationId
    from align.report import FORMATS, document

    file, _ = _file(path)
    (result,) = file.verified
    doc = document(result, file.source, file.path)  # one document, every writer
    md, html, tex = (FORMATS[f]().write(doc) for f in ("md", "html", "tex"))
    sections = [re.sub(r"^\d+ ", "", h) for h in re.findall(r"^## (.+)$", md, re.M)]
    assert sections[:3] == ["The mechanism", "Parameters and neighbouring inputs", "The proof rule"]
    assert sections[-1] == "Conclusion" and "The obligations" in sections
    assert f"**Verdict: {result.status}**" in md
    for v in result.verdicts:  # one row per obligation, with its status
        assert re.search(rf"^\| (?:\*\*→\*\* )?`{re.escape(v.obligation.name)}` \|.*\| [^|]*{v.status} \|", md, re.M)
    for table in re.findall(r"(?:^\|.*\|\n)+", md, re.M):
        assert len({len(re.findall(r"(?<!\\)\|", r)) for r in table.strip().split("\n")}) == 1, table
    mixture = any(v.obligation.id == ObligationId.MIX for v in result.verdicts)
    assert ("The mixture rule" in sections) == mixture
    assert ("Noise sites and the alignment" in sections) != mixture
    cex = result.counterexample
    assert ("The counterexample" in sections) == (cex is not None and result.status == Status.REFUTED)
    if cex is not None and cex.obligation in ("C0", "C4a", "C4c", "C4d"):
        assert "| step | line | run on D | run on D' with φ(H) |" in md or "the run on D stops" in md

    obligations = re.search(r'<table class="obligations">.*?</table>', html, re.S)
    assert obligations is not None and obligations.group(0).count("<tr") == len(result.verdicts) + 1
    assert not re.search(r"<script|<link|@import|url\(|(?:href|src)=\"(?!data:|#)", html)
    assert "<math" in html

    assert tex.startswith("\\documentclass") and tex.rstrip().endswith("\\end{document}")
    assert sorted(re.findall(r"\\begin\{(\w+)\}", tex)) == sorted(re.findall(r"\\end\{(\w+)\}", tex))
    body = re.sub(r"\\begin\{Verbatim\}.*?\\end\{Verbatim\}", "", tex, flags=re.S).replace("\\{", "").replace("\\}", "")
    assert body.count("{") == body.count("}") and all(ord(ch) < 128 for ch in tex)
