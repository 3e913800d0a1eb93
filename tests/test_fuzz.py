"""The quick subset of bench/fuzz.py: a few hundred hostile, mutated and generated inputs through `align check`,
a few dozen through `align verify` and `align run`; none may end in an internal error or a hang."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.slow  # corpus-wide or statistical: `pytest -m "not slow"` skips it


@pytest.fixture(scope="module")
def fuzz():
    spec = importlib.util.spec_from_file_location("align_bench_fuzz", ROOT / "bench" / "fuzz.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def test_quick_fuzz_finds_no_internal_error_and_no_hang(fuzz):
    summary, _ = fuzz.fuzz(quick=True, jobs=2)
    report = fuzz.table(summary) + "".join(f"\n{o.status} {c.category} #{i}: {o.detail} {c.argv!a}"
                                           for i, c, o in summary.failures)
    counts = {command: sum(v[0] for k, v in summary.rows.items() if k.startswith(command + "/"))
              for command in ("check", "verify", "run", "report")}
    assert counts["check"] >= 250 and counts["verify"] >= 30 and counts["run"] >= 30, counts
    assert counts["report"] >= 8, counts
    assert summary.internal == 0 and summary.hangs == 0, report
    assert summary.last_line == f"inputs: {summary.inputs} internal: 0 hangs: 0"


def test_the_inputs_are_deterministic(fuzz):
    first = fuzz.build_cases(fuzz.QUICK)
    assert fuzz.build_cases(fuzz.QUICK) == first


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
    ("check", 2, "", "a.dp:1:1: error[undefined-name]: name `\x1b[2J` is not defined\n", "raw control"),
    ("check", 2, "", "", "without a diagnostic"),
    ("check", 7, "", "", "exit code"),
    ("run", 2, "", "align: error[invalid-argument]: cannot read the value of `q`: nan\n", None),
    ("check", 2, "", "align: error[invalid-argument]: cannot read the value of `q`: nan\n", "no location"),
])
def test_classify(fuzz, command: str, code: int, out: str, err: str, verdict: str | None):
    got = fuzz.classify(command, code, out, err)
    assert (got is None) if verdict is None else (got is not None and verdict in got), got
