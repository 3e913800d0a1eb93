"""Benchmark: `align verify` over the whole spec corpus, one row per spec.

    python bench/verify.py [--max-length N]

Prints spec, status, number of obligations and seconds, and last `verify median s: X max s: Y`.
Targets on the 2-core reference machine: median <= 0.5 s, max <= 5 s per spec.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from align.checker.verify import DEFAULT_MAX_LENGTH, Options, overall_status, verify_mechanism
from align.parse import parse_source, read_source
from align.resolve import resolve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-length", type=int, default=DEFAULT_MAX_LENGTH)
    args = parser.parse_args()
    rows = []
    for path in sorted((ROOT / "specs").rglob("*.dp")):
        rel = path.relative_to(ROOT)
        mech = resolve(parse_source(read_source(str(rel)))).mechanisms[0]
        start = time.perf_counter()
        verdicts = verify_mechanism(mech, Options(max_length=args.max_length))
        seconds = time.perf_counter() - start
        rows.append((str(rel), overall_status(verdicts), len(verdicts), seconds))
        print(f"{rel!s:58} {rows[-1][1]:8} {len(verdicts):3d} obligations {seconds:7.2f} s", flush=True)
    times = [r[3] for r in rows]
    print(f"verify median s: {statistics.median(times):.2f} max s: {max(times):.2f}")


if __name__ == "__main__":
    main()
