"""Golden verdicts: what `align verify` decides for every corpus spec, pinned narrowly, and a few whole reports.

tests/golden/verdicts/<folder>.json pins, for every spec of specs/<folder>/, the verdict (status, scope,
one-sidedness, proof rule) and each obligation's id, noise site, location, status, scope, reason and
counterexample (its values, and whether replaying it in the interpreter confirmed it), one obligation a line. A
refactoring that changes any verdict of the corpus fails here and shows which; a new note, a reworded title or
detail, or a new report section leaves these files alone.

tests/golden/verify/ keeps the whole text and JSON report, byte for byte, of the few specs in WHOLE: one for each
kind of verdict and each section of the report (proved for every length with a loop invariant and a summary
note, proved for all inputs by the R²DP mixture rule, bounded, refuted with counterexamples confirmed by replay
and obligations checked no further, refuted by the mixture rule, refuted without an alignment, unknown, vacuous,
one-sided). Timings are the only thing masked (`*.**s` in the text, `"seconds": 0` in JSON). After an intended
change, regenerate with

    python -m pytest tests/test_golden.py --update-golden

and read the diff before committing it. The verdicts are the ones tests/test_verify.py computes (one
verification per spec for every file), at `--max-length 3`, the default.
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from align.checker.verify import overall_scope, overall_status
from align.render.common import Style
from align.render.json import verdicts_json
from align.render.text import verdicts_text

from .conftest import ROOT, SPECS, corpus
from .test_verify import VERIFIED, verified

pytestmark = [pytest.mark.slow, VERIFIED]  # corpus-wide: `pytest -m "not slow"` skips it

FILES = corpus()
FOLDERS = sorted({p.parent.name for p in FILES})
GOLDEN = ROOT / "tests" / "golden"
VERDICTS = GOLDEN / "verdicts"
REPORTS = GOLDEN / "verify"

# One spec for each kind of verdict and each section of the report.
WHOLE = [
    "freegap/alg2_svt_gap.dp",                  # proved for every length: loop invariants, a summary note
    "r2dp/point_mass.dp",                       # proved for all inputs by the R²DP mixture rule, exactly
    "counting/one_sided_histogram.dp",          # proved, one-sided
    "incorrect/repeated_answer_loop_bound.dp",  # bounded, over a public parameter's range
    "incorrect/histogram_lap_eps.dp",           # refuted: a cost counterexample confirmed by replay
    "incorrect/noise_per_record.dp",            # refuted at several lengths; bounded obligations; checked no further
    "incorrect/r2dp_scale_reads_data.dp",       # refuted by the mixture rule (a counterexample with its ε)
    "incorrect/dead_branch_sqrt_negative.dp",   # refuted without an alignment (shifting no noise)
    "incorrect/top_k_gap_k_equals_length.dp",   # unknown
    "incorrect/vacuous_adjacency.dp",           # unknown: vacuous (ADJ)
]

_SECONDS = re.compile(r"\b\d+\.\d\ds\b")
# What a counterexample repeats from its obligation (`why` is the reason) or says in words (the replay's detail).
_CEX_LEFT_OUT = ("format", "spec", "mechanism", "obligation", "why", "replay")


def _document(path: Path) -> dict[str, Any]:
    """The JSON report of `align verify`, as a JSON reader gets it back."""
    _, mech, verdicts = verified(path)
    document = verdicts_json(mech, verdicts, overall_status(verdicts), overall_scope(verdicts))
    return json.loads(json.dumps(document, default=str))


def verdict_summary(document: dict[str, Any]) -> dict[str, Any]:
    """The verdicts of one JSON report of `align verify`: what tests/golden/verdicts/ pins of each spec."""
    path = document["span"]["path"]
    return {
        "mechanism": document["name"],
        "proof_rule": document["proof_rule"],
        "status": document["status"],
        "scope": document["scope"],
        "one_sided": document["one_sided"],
        "obligations": [_obligation_summary(o, path) for o in document["obligations"]],
    }


def _obligation_summary(o: dict[str, Any], path: str) -> dict[str, Any]:
    span = o["span"]
    entry: dict[str, Any] = {"id": o["id"]}
    if o["site"] is not None:
        entry["site"] = o["site"]
    where = f"{span['line']}:{span['column']}"
    entry["at"] = where if span["path"] == path else f"{span['path']}:{where}"
    entry.update(status=o["status"], scope=o["scope"], reason=o["reason"])
    cex = o["counterexample"]
    if cex is not None:
        summary = {k: v for k, v in cex.items() if k not in _CEX_LEFT_OUT and v is not None}
        if cex.get("obligation") != o["id"]:
            summary["obligation"] = cex.get("obligation")
        if cex.get("why") is not None and cex["why"] != o["reason"]:
            summary["why"] = cex["why"]
        if "replay" in cex:
            summary["replay_confirmed"] = cex["replay"]["confirmed"]
        entry["counterexample"] = summary
    return entry


def dump_verdicts(entries: dict[str, dict[str, Any]]) -> str:
    """JSON with one obligation a line, so that a changed verdict is a one-line diff."""
    lines = ["{"]
    for i, (name, entry) in enumerate(entries.items()):
        lines.append(f"  {json.dumps(name)}: {{")
        for key, value in entry.items():
            if key != "obligations":
                lines.append(f"    {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},")
        lines.append('    "obligations": [')
        obligations = entry["obligations"]
        for j, o in enumerate(obligations):
            lines.append("      " + json.dumps(o, ensure_ascii=False) + ("," if j < len(obligations) - 1 else ""))
        lines.append("    ]")
        lines.append("  }" + ("," if i < len(entries) - 1 else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _text(path: Path) -> str:
    _, mech, verdicts = verified(path)
    report = verdicts_text(mech, verdicts, overall_status(verdicts), overall_scope(verdicts), Style(False))
    return _SECONDS.sub("*.**s", report) + "\n"


def _json(path: Path) -> str:
    _, mech, verdicts = verified(path)
    document = verdicts_json(mech, verdicts, overall_status(verdicts), overall_scope(verdicts))
    for obligation in document["obligations"]:
        obligation["seconds"] = 0
    return json.dumps(document, indent=2, default=str, ensure_ascii=False) + "\n"


def _compare(expected_path: Path, actual: str, update: bool) -> None:
    if update:
        expected_path.parent.mkdir(parents=True, exist_ok=True)
        expected_path.write_text(actual, encoding="utf-8")
        return
    assert expected_path.exists(), f"no golden file {expected_path}; run pytest with --update-golden"
    expected = expected_path.read_text(encoding="utf-8")
    assert actual == expected, f"{expected_path} differs (regenerate with --update-golden if intended)"


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_verdict_of_the_corpus_is_unchanged(folder: str, update_golden: bool):
    actual = {str(p.relative_to(SPECS / folder)): verdict_summary(_document(p))
              for p in FILES if p.parent.name == folder}
    golden = VERDICTS / f"{folder}.json"
    if update_golden:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(dump_verdicts(actual), encoding="utf-8")
        return
    assert golden.exists(), f"no golden file {golden}; run pytest with --update-golden"
    expected = json.loads(golden.read_text(encoding="utf-8"))
    changed = []
    for name in sorted(set(expected) | set(actual)):
        if expected.get(name) != actual.get(name):
            before = dump_verdicts({name: expected[name]}) if name in expected else ""
            after = dump_verdicts({name: actual[name]}) if name in actual else ""
            changed.append("".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                                        f"golden {folder}/{name}", f"now {folder}/{name}")))
    assert not changed, (f"{len(changed)} spec(s) of specs/{folder} changed verdicts (regenerate {golden} with "
                         "--update-golden if intended):\n" + "\n".join(changed))


@pytest.mark.parametrize("name", WHOLE)
def test_verify_text_report_is_unchanged(name: str, update_golden: bool):
    _compare((REPORTS / name).with_suffix(".txt"), _text(SPECS / name), update_golden)


@pytest.mark.parametrize("name", WHOLE)
def test_verify_json_report_is_unchanged(name: str, update_golden: bool):
    _compare((REPORTS / name).with_suffix(".json"), _json(SPECS / name), update_golden)


def test_every_golden_file_belongs_to_a_spec():
    assert all((SPECS / name).is_file() for name in WHOLE), [name for name in WHOLE if not (SPECS / name).is_file()]
    expected = {(REPORTS / name).with_suffix(s) for name in WHOLE for s in (".txt", ".json")}
    expected |= {VERDICTS / f"{folder}.json" for folder in FOLDERS}
    stale = sorted(str(p) for p in GOLDEN.rglob("*") if p.is_file() and p not in expected)
    assert not stale, f"golden files without a spec (remove them): {stale}"
