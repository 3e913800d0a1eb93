"""Benchmark: alignment synthesis (align/checker/synthesis.py) over the corpus, each spec's own alignment ignored.

    python bench/synthesis.py [--jobs J] [SPEC.dp ...]

For every spec of the corpus that uses Lemma 1 (an `alignment` block; the R²DP specs have their own rule) the search
runs from the template space alone, with the spec's `example` values, and prints: the spec's expectation, the
synthesis outcome (proved for every length, bounded, no alignment in the space — the examples rule out every
instance — or none found), the candidates the learner proposed, the examples z3 found, the checker calls, the
seconds, and the synthesised alignment's shifts. Last: `synthesised: X/Y median s: M max s: T` over the specs
expected `proved` (X proved for every length with a synthesised alignment), and the soundness line `violations
proved: V` over the specs that expect a violation — it must be 0. Specs expected `not-proved` without a violation
have a private mechanism and a broken written alignment: a synthesised proof there is a right answer, shown as such.
Targets (issue 15): median <= 5 s, max <= 30 s.
"""

from __future__ import annotations

import argparse
import statistics
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from align.checker.synthesis import synthesise
from align.expectations import read_expectations
from align.interp.values import example_arguments
from align.parse import parse_source, read_source
from align.resolve import resolve
from align.status import Status

ROOT = Path(__file__).resolve().parent.parent


def _expected(source) -> str:
    kinds = {e.kind for e in read_expectations(source)}
    return "violation" if "violation" in kinds else "proved" if "proved" in kinds else \
        "bounded" if "bounded" in kinds else "not-proved"


def run(path: str) -> tuple[str, str, str, int, int, int, float, str]:
    source = read_source(path)
    mech = resolve(parse_source(source)).mechanisms[0]
    public = example_arguments(mech.node)
    result = synthesise(mech, source, public)
    shifts = "; ".join(line.strip() for line in (result.alignment or "").splitlines()[1:-1])
    outcome = {Status.PROVED: "proved", Status.BOUNDED: "bounded"}.get(
        result.status, "no alignment" if result.exhausted else "none found")
    return (path, _expected(source), outcome, result.candidates, result.examples, result.iterations, result.seconds,
            shifts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("specs", nargs="*")
    args = parser.parse_args()
    paths = args.specs or [str(p.relative_to(ROOT)) for p in sorted((ROOT / "specs").rglob("*.dp"))
                           if "\nalignment " in p.read_text()]
    with ProcessPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(run, paths))
    print(f"{'spec':58} {'expected':10} {'synthesis':12} {'cands':>5} {'exs':>4} {'calls':>5} {'s':>6}  alignment")
    for path, expected, outcome, candidates, examples, calls, seconds, shifts in rows:
        print(f"{path:58} {expected:10} {outcome:12} {candidates:5d} {examples:4d} {calls:5d} {seconds:6.2f}  {shifts}")
    proved = [r for r in rows if r[1] == "proved"]
    done = [r for r in proved if r[2] == "proved"]
    times = [r[6] for r in proved] or [0.0]
    unsound = [r for r in rows if r[1] == "violation" and r[2] in ("proved", "bounded")]
    print(f"synthesised: {len(done)}/{len(proved)} median s: {statistics.median(times):.2f} "
          f"max s: {max(times):.2f} violations proved: {len(unsound)}")


if __name__ == "__main__":
    main()
