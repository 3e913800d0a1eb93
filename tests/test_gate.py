"""Issue 35, CI conventions: the gate's acceptance of bounded verdicts (per spec, never a synthesised alignment by
the global flag alone), paths relative to the project's root in GitHub annotations and SARIF, `helpUri`, `align
check` on the configured paths, and `align verify --jobs`."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from .conftest import ROOT, SPECS
from .test_config import _main  # the command line in-process: (exit code, stdout, stderr)

BOUNDED = SPECS / "incorrect" / "noisy_answers_requires_long_input.dp"  # a written alignment, proved for short inputs
PROVED = SPECS / "freegap" / "example1_laplace.dp"
REFUTED = SPECS / "incorrect" / "histogram_lap_eps.dp"
SYNTHESISED = ROOT / "tests" / "data" / "gate" / "sparse_synthesised_bounded.dp"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "specs" / "legacy").mkdir(parents=True)
    shutil.copy(BOUNDED, tmp_path / "specs" / "bounded.dp")
    shutil.copy(BOUNDED, tmp_path / "specs" / "legacy" / "old.dp")
    shutil.copy(PROVED, tmp_path / "specs" / "proved.dp")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _concise(out: str) -> dict[str, str]:
    return {line.split(":")[0]: line for line in out.splitlines()}


def test_bounded_is_accepted_per_spec_by_the_configuration_or_the_spec_itself(repo: Path):
    code, out, _ = _main("verify", "--output-format", "concise", "specs/bounded.dp", "specs/legacy/old.dp")
    assert code == 3 and "accepted" not in out
    # one glob of the configuration accepts the legacy specs only
    (repo / "align.toml").write_text('accept-bounded = ["specs/legacy/*.dp"]\n')
    code, out, _ = _main("verify", "--output-format", "concise", "specs/bounded.dp", "specs/legacy/old.dp")
    lines = _concise(out)
    assert code == 3 and "accepted" not in lines["specs/bounded.dp"]
    assert "accepted (bounded is not a proof for longer inputs) by the configuration's accept-bounded " \
           "(`specs/legacy/*.dp`)" in lines["specs/legacy/old.dp"]
    code, _, _ = _main("verify", "specs/legacy/old.dp", "specs/proved.dp")
    assert code == 0
    # the spec's own line, reported with its line number
    text = (repo / "specs" / "bounded.dp").read_text()
    (repo / "specs" / "bounded.dp").write_text("# align: accept-bounded\n" + text)
    code, out, _ = _main("verify", "specs/bounded.dp", "specs/legacy/old.dp")
    assert code == 0 and "gate         accepted (bounded is not a proof for longer inputs) by the spec's " \
                          "`# align: accept-bounded` (line 1)" in out
    code, out, _ = _main("verify", "--output-format", "json", "specs/bounded.dp")
    document = json.loads(out)["files"][0]["mechanisms"][0]
    assert code == 0 and document["accepted"] is True and "line 1" in document["acceptance"]
    # and for every spec, as before
    (repo / "align.toml").write_text("accept-bounded = true\n")
    assert _main("verify", "specs/legacy/old.dp")[0] == 0
    (repo / "align.toml").unlink()
    code, out, _ = _main("verify", "--accept-bounded", "specs/legacy/old.dp", "--output-format", "github")
    assert code == 0 and out.splitlines()[-1].endswith("by --accept-bounded")


def test_a_glob_of_accept_bounded_is_checked_like_paths(repo: Path):
    (repo / "align.toml").write_text('accept-bounded = ["../*.dp"]\n')
    code, _, err = _main("verify", "specs/bounded.dp")
    assert code == 2 and "error[config-value]" in err and "`..` leaves the configuration's folder" in err


@pytest.mark.slow  # synthesis runs twice (about 7 s each)
def test_a_synthesised_alignment_proved_only_bounded_needs_the_specs_own_acceptance(repo: Path):
    shutil.copy(SYNTHESISED, repo / "specs" / "sparse.dp")
    code, out, _ = _main("verify", "--accept-bounded", "specs/sparse.dp")
    assert code == 3 and "bounded" in out and "a synthesised alignment is bounded" in out
    assert "not accepted: the alignment was synthesised, and --accept-bounded accepts only written ones" in out
    (repo / "align.toml").write_text('accept-bounded = ["specs/sparse.dp"]\n')
    code, out, _ = _main("verify", "specs/sparse.dp", "--output-format", "concise")
    assert code == 0 and "accepted (a synthesised alignment, bounded is not a proof for longer inputs)" in out


# ------------------------------------------------------------------------------ paths from the project's root

def test_annotations_and_sarif_name_files_from_the_projects_root_whatever_the_working_directory(repo: Path):
    shutil.copy(REFUTED, repo / "specs" / "legacy" / "refuted.dp")
    os.chdir(repo / "specs")
    code, out, _ = _main("verify", "legacy/refuted.dp", "--output-format", "github")
    assert code == 1 and "::error file=specs/legacy/refuted.dp,line=" in out
    code, out, _ = _main("verify", "legacy/refuted.dp", "--output-format", "sarif")
    run = json.loads(out)["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"] for loc in r["locations"]}
    assert uris == {"specs/legacy/refuted.dp"}
    assert all("helpUri" not in rule for rule in run["tool"]["driver"]["rules"])
    # a file outside the project: an absolute file: URI
    outside = repo.parent / "elsewhere.dp"
    shutil.copy(REFUTED, outside)
    code, out, _ = _main("verify", str(outside), "--output-format", "sarif")
    (uri,) = {loc["physicalLocation"]["artifactLocation"]["uri"] for r in json.loads(out)["runs"][0]["results"]
              for loc in r["locations"]}
    assert uri == outside.resolve().as_uri()


def test_docs_url_gives_every_sarif_rule_a_help_uri(repo: Path):
    (repo / "align.toml").write_text('docs-url = "https://example.org/align/docs/"\n')
    code, out, _ = _main("verify", "specs/proved.dp", "--output-format", "sarif")
    rules = {r["id"]: r for r in json.loads(out)["runs"][0]["tool"]["driver"]["rules"]}
    assert code == 0 and rules["C4a"]["helpUri"] == "https://example.org/align/docs/checker.md"
    assert rules["usage"]["helpUri"] == "https://example.org/align/docs/language.md"
    for bad in ('"javascript:alert(1)"', '"https://x/<script>"', '"https://a b"', "1"):
        (repo / "align.toml").write_text(f"docs-url = {bad}\n")
        code, _, err = _main("verify", "specs/proved.dp")
        assert code == 2 and "error[config-value]" in err


def test_check_without_files_checks_the_configured_paths(repo: Path):
    code, _, err = _main("check")
    assert code == 2 and "no FILE.dp given, and no `paths` configured" in err
    (repo / "align.toml").write_text('paths = ["specs/**/*.dp"]\n')
    code, out, _ = _main("check", "--output-format", "concise")
    assert code == 0 and sorted(_concise(out)) == ["specs/bounded.dp", "specs/legacy/old.dp", "specs/proved.dp"]


# ------------------------------------------------------------------------------------------------------ --jobs

def test_verify_jobs_gives_the_same_verdicts_in_the_same_order(repo: Path):
    shutil.copy(REFUTED, repo / "specs" / "refuted.dp")
    files = ["specs/refuted.dp", "specs/proved.dp", "specs/bounded.dp", "specs/legacy/old.dp"]
    one = _main("verify", "--output-format", "concise", *files)
    two = _main("verify", "--output-format", "concise", "--jobs", "2", *files)
    assert one == two and one[0] == 1 and list(_concise(one[1])) == files
