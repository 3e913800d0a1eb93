"""Benchmark: wall time of short `align` commands, each in a fresh process, against the bare interpreter.

    python bench/startup.py [--runs N] [SPEC.dp]

Runs each command N times (default 11) in a new Python process and prints the median and the fastest wall
time, and the median over the same run of `python -c pass` (the interpreter's own start, the baseline) as a
ratio. The commands: `align --help`, `align check --output-format concise` (the pre-commit hook's command,
target <= 0.4 s), `align check` (the text report, which simplifies each cost coefficient with sympy), and
`align verify`. The first run of each command is a warm-up: it builds the LALR parser and saves it in the
cache directory (`ALIGN_CACHE_DIR`, here a temporary one), as the first `align` command a user runs does; every
later run loads it. Bytecode is compiled first (pip does so when it installs align; a `PYTHONDONTWRITEBYTECODE`
checkout would otherwise compile align's modules on every run).
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


def _wall(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("spec", nargs="?", default=str(ROOT / "specs" / "freegap" / "alg2_svt_gap.dp"))
    args = parser.parse_args()
    compileall.compile_dir(str(ROOT / "align"), quiet=1)
    align = [sys.executable, "-m", "align"]
    commands = {
        "python -c pass (baseline)": [sys.executable, "-c", "pass"],
        "align --help": [*align, "--help"],
        "align check --output-format concise": [*align, "check", "--output-format", "concise", args.spec],
        "align check": [*align, "check", args.spec],
        "align verify": [*align, "verify", args.spec],
    }
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "ALIGN_CACHE_DIR": cache}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        rows = []
        for name, argv in commands.items():
            _wall(argv, env)
            times = [_wall(argv, env) for _ in range(args.runs)]
            rows.append((name, statistics.median(times), min(times)))
    base = rows[0][1]
    print(f"{'command':40} {'median s':>9} {'min s':>7} {'x baseline':>11}")
    for name, median, fastest in rows:
        print(f"{name:40} {median:9.3f} {fastest:7.3f} {median / base:11.1f}")
    concise = rows[2][1]
    print(f"check concise median s: {concise:.3f} (target <= 0.4)")


if __name__ == "__main__":
    main()
