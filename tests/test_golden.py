"""Golden reports: `align verify`'s text and JSON reports of every corpus spec, byte for byte.

They pin every verdict, scope, reason, note and counterexample of the corpus, so that a refactoring which
changes any of them fails here and shows the difference. Timings are the only thing masked (`*.**s` in the
text, `"seconds": 0` in JSON). After an intended change, regenerate with

    python -m pytest tests/test_golden.py --update-golden

and read the diff before committing it. The verdicts are the ones tests/test_verify.py computes (one
verification per spec for both files), at `--max-length 3`, the default.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from align.checker.verify import overall_scope, overall_status
from align.render.common import Style
from align.render.json import verdicts_json
from align.render.text import verdicts_text

from .conftest import ROOT, SPECS, corpus
from .test_verify import verified

pytestmark = pytest.mark.slow  # corpus-wide or statistical: `pytest -m "not slow"` skips it

FILES = corpus()
IDS = [str(p.relative_to(SPECS)) for p in FILES]
GOLDEN = ROOT / "tests" / "golden" / "verify"

_SECONDS = re.compile(r"\b\d+\.\d\ds\b")


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


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_verify_text_report_is_unchanged(path: Path, update_golden: bool):
    _compare(GOLDEN / path.relative_to(SPECS).with_suffix(".txt"), _text(path), update_golden)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_verify_json_report_is_unchanged(path: Path, update_golden: bool):
    _compare(GOLDEN / path.relative_to(SPECS).with_suffix(".json"), _json(path), update_golden)


def test_every_golden_file_belongs_to_a_spec():
    expected = {GOLDEN / p.relative_to(SPECS).with_suffix(s) for p in FILES for s in (".txt", ".json")}
    stale = sorted(str(p) for p in GOLDEN.rglob("*") if p.is_file() and p not in expected)
    assert not stale, f"golden files without a spec (remove them): {stale}"
