"""Benchmark: wall time of short `align` commands, each in a fresh process, against the bare interpreter.

    python bench/startup.py [--runs N] [--corpus] [SPEC.dp]

Runs each command N times (default 11) in a new Python process and prints the median and the fastest wall
time, and the median over the same run of `python -c pass` (the interpreter's own start, the baseline) as a
ratio. The commands: `align --help`, `align check --output-format concise` (the pre-commit hook's command,
target <= 0.4 s), `align check` (the text report, target <= 0.4 s: its cost coefficients are products of powers,
computed without sympy by align/monomials.py, as those of every correct spec of the corpus are), `align check` of
a spec whose coefficient needs sympy (a Laplace scale that reads the data, 1 + abs(q): specs/incorrect/) with
sympy's texts removed from the cache directory before each run (its first check: sympy's import) and kept (later
checks), and `align verify`. With `--corpus`, also the first `align check` of every corpus spec (one run each,
with no coefficient texts kept) and the specs over 0.4 s. The first run of each command is a warm-up: it
builds the LALR parser and saves it in the cache directory (`ALIGN_CACHE_DIR`, here a temporary one), as the
first `align` command a user runs does; every later run loads it. Bytecode is compiled first (pip does so when
it installs align; a `PYTHONDONTWRITEBYTECODE` checkout would otherwise compile align's modules on every run).
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NEEDS_SYMPY = str(ROOT / "specs" / "incorrect" / "laplace_scale_reads_data.dp")


def _wall(argv: list[str], env: dict[str, str], forget: Path | None = None) -> float:
    if forget is not None:
        for kept in forget.glob("coefficients-*.json"):
            kept.unlink()
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--corpus", action="store_true",
                        help="also time the first `align check` of every corpus spec (one run each)")
    parser.add_argument("spec", nargs="?", default=str(ROOT / "specs" / "freegap" / "alg2_svt_gap.dp"))
    args = parser.parse_args()
    compileall.compile_dir(str(ROOT / "align"), quiet=1)
    align = [sys.executable, "-m", "align"]
    spec = args.spec
    commands = {
        "python -c pass (baseline)": [sys.executable, "-c", "pass"],
        "align --help": [*align, "--help"],
        "align check --output-format concise": [*align, "check", "--output-format", "concise", spec],
        "align check": [*align, "check", spec],
        "align check, sympy's coefficients, not kept": [*align, "check", NEEDS_SYMPY],
        "align check, sympy's coefficients, kept": [*align, "check", NEEDS_SYMPY],
        "align verify": [*align, "verify", spec],
    }
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "ALIGN_CACHE_DIR": cache}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        rows = []
        for name, argv in commands.items():
            _wall(argv, env)
            cold = "not kept" in name  # the first `align check` of the spec: sympy computes its coefficients
            times = [_wall(argv, env, forget=Path(cache) if cold else None) for _ in range(args.runs)]
            rows.append((name, statistics.median(times), min(times)))
    base = rows[0][1]
    print(f"{'command':46} {'median s':>9} {'min s':>7} {'x baseline':>11}")
    for name, median, fastest in rows:
        print(f"{name:46} {median:9.3f} {fastest:7.3f} {median / base:11.1f}")
    print(f"check concise median s: {rows[2][1]:.3f}, check median s: {rows[3][1]:.3f} (target <= 0.4), "
          f"check with coefficients sympy computes: {rows[4][1]:.3f} (first) {rows[5][1]:.3f} (kept)")
    if args.corpus:
        _corpus(align)


def _corpus(align: list[str]) -> None:
    """The first `align check` (text) of every corpus spec: a fresh cache directory holding only the parser."""
    times = {}
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "ALIGN_CACHE_DIR": cache}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        _wall([*align, "check", str(ROOT / "specs" / "freegap" / "alg2_svt_gap.dp")], env)  # builds the parser
        for path in sorted((ROOT / "specs").rglob("*.dp")):
            times[path.relative_to(ROOT).as_posix()] = _wall([*align, "check", str(path)], env, forget=Path(cache))
    slow = sorted((t, p) for p, t in times.items() if t > 0.4)
    print(f"first check of each corpus spec: {len(times)} specs, median s: {statistics.median(times.values()):.3f}, "
          f"max s: {max(times.values()):.3f}, over 0.4 s: {len(slow)}")
    for t, p in slow:
        print(f"  {t:.3f}  {p}")


if __name__ == "__main__":
    main()
