"""Benchmark: the test suite's two tiers, each run as a whole process, as a developer and `.ci/run` run them.

    python bench/tiers.py [--fast-only] [--runs N] [--budget S] [--check] [--coverage]

The fast tier is `python -m pytest -q -m "not slow"` (the inner loop; target <= 60 s on two cores), the full
suite `python -m pytest -q` (README's test command, what `.ci/run` runs; target <= 10 minutes). Each runs N times
(default 1) with `--durations=0` added; the table gives the median and the fastest wall time, the number of
tests, and the sum of the tests' own times (setup, call and teardown; the rest of the wall time is start-up,
collection in each worker and the wait for the last worker). Then the 10 slowest tests of the fast tier, and
every fast-tier test over the per-test budget (default 5 s): mark it `slow` (`@pytest.mark.slow`, or
`pytest.param(..., marks=pytest.mark.slow)` for one parameter; corpus-wide tests use tests/conftest.py's
`corpus_params`) or make it quicker. This script is the budget check: no test measures its own time.

`--check` exits 1 when a tier is over its target or a fast test over its budget (timings are those of the
machine at the time: rerun on a loaded machine before acting on one). `--coverage` also runs the fast tier once
under pytest-cov (not a dependency: `pip install pytest-cov`) and lists each module of align/ none of whose
functions the fast tier ran, with the share of align's statements it ran.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTEST = [sys.executable, "-m", "pytest", "-q"]
TIERS = {"fast": (["-m", "not slow"], 60.0), "full": ([], 600.0)}
_DURATION = re.compile(r"^\s*([\d.]+)s (?:setup|call|teardown)\s+(\S.*)$")
_SUMMARY = re.compile(r"^=*\s*(\d+ \w+.*?) in [\d.]+s\b")  # pytest's last line: "2252 passed, 1 skipped in 61.34s"
_RAN = ("passed", "failed", "skipped", "xfailed", "xpassed", "error", "errors")


@dataclass
class Run:
    wall: float
    code: int
    summary: str
    tests: dict[str, float] = field(default_factory=dict)  # test id -> setup + call + teardown, in seconds

    @property
    def count(self) -> int:
        """Tests that ran (passed, failed, skipped, xfailed, errors), from pytest's last line."""
        return sum(int(n) for n, what in re.findall(r"(\d+) (\w+)", self.summary) if what in _RAN)


def run_tier(args: list[str]) -> Run:
    start = time.perf_counter()
    done = subprocess.run([*PYTEST, *args, "--durations=0"], cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    tests: dict[str, float] = defaultdict(float)
    summary = ""
    for line in done.stdout.splitlines():
        if m := _DURATION.match(line):
            tests[m.group(2)] += float(m.group(1))
        elif m := _SUMMARY.match(line):
            summary = m.group(1)
    if done.returncode not in (0, 5):  # 5: no test collected
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-2000:])
    return Run(wall, done.returncode, summary, dict(tests))


def uncovered_modules() -> tuple[list[str], float]:
    """The fast tier under pytest-cov: modules of align/ none of whose function bodies ran, and the share of
    align's statements that ran."""
    import coverage

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / ".coverage"
        subprocess.run([*PYTEST, "-m", "not slow", "--cov=align", "--cov-report=", "-p", "no:cacheprovider"],
                       cwd=ROOT, capture_output=True, check=False, env={**os.environ, "COVERAGE_FILE": str(data)})
        cov = coverage.Coverage(data_file=str(data))
        cov.load()
        ran = {Path(f).resolve(): set(cov.get_data().lines(f) or ()) for f in cov.get_data().measured_files()}
        statements = executed = 0
        for f in ran:
            _, lines, _, missing, _ = cov.analysis2(str(f))
            statements += len(lines)
            executed += len(lines) - len(missing)
    missing_modules = []
    for path in sorted((ROOT / "align").rglob("*.py")):
        bodies = {stmt.lineno for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                  for top in node.body for stmt in ast.walk(top) if isinstance(stmt, ast.stmt)}
        if bodies and not bodies & ran.get(path.resolve(), set()):
            missing_modules.append(str(path.relative_to(ROOT)))
    return missing_modules, executed / max(statements, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast-only", action="store_true", help="skip the full suite")
    parser.add_argument("--runs", type=int, default=1, help="runs of each tier (default 1)")
    parser.add_argument("--budget", type=float, default=5.0, help="seconds a fast-tier test may take (default 5)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a tier or a fast test is over its time")
    parser.add_argument("--coverage", action="store_true",
                        help="list the modules of align/ the fast tier leaves unrun (needs pytest-cov)")
    args = parser.parse_args()
    tiers = ["fast"] if args.fast_only else ["fast", "full"]
    runs: dict[str, list[Run]] = {tier: [run_tier(TIERS[tier][0]) for _ in range(args.runs)] for tier in tiers}
    failed = [tier for tier in tiers if any(r.code != 0 for r in runs[tier])]

    print(f"{'tier':6} {'command':36} {'tests':>6} {'median s':>9} {'min s':>7} {'tests s':>8} {'target s':>9}")
    over = []
    for tier in tiers:
        walls = [r.wall for r in runs[tier]]
        median, target = statistics.median(walls), TIERS[tier][1]
        command = " ".join(["python -m pytest -q", *(f'-m "{a}"' if a == "not slow" else a
                                                      for a in TIERS[tier][0] if a != "-m")])
        last = runs[tier][-1]
        print(f"{tier:6} {command:36} {last.count:6d} {median:9.1f} {min(walls):7.1f} "
              f"{sum(last.tests.values()):8.1f} {target:9.0f}{'  OVER' if median > target else ''}")
        if median > target:
            over.append(tier)

    fast = runs["fast"][-1].tests
    print("\n10 slowest tests of the fast tier (setup + call + teardown, last run):")
    for test, seconds in sorted(fast.items(), key=lambda kv: -kv[1])[:10]:
        print(f"  {seconds:6.2f} s  {test}")
    heavy = {t: s for t, s in fast.items() if s > args.budget}
    print(f"\nfast-tier tests over the budget of {args.budget:g} s: {len(heavy) or 'none'}")
    for test, seconds in sorted(heavy.items(), key=lambda kv: -kv[1]):
        print(f"  {seconds:6.2f} s  {test}  (mark it slow, or make it quicker)")
    if failed:
        print(f"\nfailing tests in: {', '.join(failed)} (pytest's output above)")

    uncovered: list[str] = []
    if args.coverage:
        try:
            import pytest_cov  # noqa: F401
        except ImportError:
            print("\n--coverage needs pytest-cov: pip install pytest-cov")
            return 2
        uncovered, share = uncovered_modules()
        print(f"\nthe fast tier runs {share:.1%} of align's statements; modules none of whose functions it runs: "
              f"{len(uncovered) or 'none'}")
        for module in uncovered:
            print(f"  {module}")
    if failed:
        return 1
    return 1 if args.check and (over or heavy or uncovered) else 0


if __name__ == "__main__":
    sys.exit(main())
