"""Benchmark: wall time of short `align` commands, each in a fresh process, against the bare interpreter.

    python bench/startup.py [--runs N] [SPEC.dp]

Runs each command N times (default 11) in a new Python process and prints the median and the fastest wall
time, and the median over the same run of `python -c pass` (the interpreter's own start, the baseline) as a
ratio. The commands: `align --help`, `align check --output-format concise` (the pre-commit hook's command,
target <= 0.4 s), `align check` (the text report: each cost coefficient is simplified by sympy once, then kept
in the cache directory; target <= 0.4), the same with the kept coefficients removed before each run (a spec
checked for the first time: sympy's import), and `align verify`. The first run of each command is a warm-up: it
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
        "align check, coefficients not kept": [*align, "check", spec],
        "align verify": [*align, "verify", spec],
    }
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "ALIGN_CACHE_DIR": cache}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        rows = []
        for name, argv in commands.items():
            _wall(argv, env)
            cold = "not kept" in name  # the first `align check` on a spec: sympy computes the coefficients
            times = [_wall(argv, env, forget=Path(cache) if cold else None) for _ in range(args.runs)]
            rows.append((name, statistics.median(times), min(times)))
    base = rows[0][1]
    print(f"{'command':40} {'median s':>9} {'min s':>7} {'x baseline':>11}")
    for name, median, fastest in rows:
        print(f"{name:40} {median:9.3f} {fastest:7.3f} {median / base:11.1f}")
    print(f"check concise median s: {rows[2][1]:.3f}, check median s: {rows[3][1]:.3f} (target <= 0.4), "
          f"check with the coefficients computed: {rows[4][1]:.3f}")


if __name__ == "__main__":
    main()
