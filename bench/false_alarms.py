"""Benchmark: false alarms of `align test` on every spec expected `proved`.

    python bench/false_alarms.py [--seeds N] [--samples N] [--alpha A] [--jobs J]

For each spec of specs/ with a `# expect: proved` line (a proof exists, so the claim holds and every
"privacy violation confirmed" is a false alarm; output-dependent claims are tested against their maximum over
each event), runs the full search of `align test` (the checker's counterexample pairs, of which a proved spec
has none, then every StatDP pattern, both directions, Bonferroni over all of them; then the longer lengths up to
4 times the example's, each sampled where `align test` would sample it: where the computed stage does not cover
it) once per seed 0 .. N-1 with small samples (one round of --samples per input and length). Prints one row per
spec (runs, false alarms, rate, the smallest adjusted p-value seen) and last the line `false alarms: X/Y (rate R,
alpha A)`. The search's family-wise error is <= alpha per run, so the expected number of alarms is at most
alpha x runs. The column `computed` is what
`align test` computes from the paths when its sampling rounds find nothing (align/exact/, at each length it
computes, once per spec: it is deterministic), and the last line counts its false alarms, which must be 0.

The public arguments per spec come from its `example` clause (thresholds near the generated queries so
that both branches run, theta = 1/2 so that budget splits are exact in binary).
Runs are spread over --jobs processes (default 2); results do not depend on it.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from align.interp.values import example_arguments, example_length
from align.parse import read_source
from align.pipeline import checker_pairs, load_mechanism
from align.stats.lrtest import default_max_length, escalation, search


# spec (under specs/) -> (public arguments, private list length)
def _arguments() -> dict[str, tuple[dict, int]]:
    """spec -> (public arguments, length), from the `example` clause of each spec."""
    found = {}
    for path in sorted((ROOT / "specs").rglob("*.dp")):
        mech = load_mechanism(str(path)).node
        if mech.examples:
            found[str(path.relative_to(ROOT / "specs"))] = (example_arguments(mech), example_length(mech))
    return found


ARGS = _arguments()


def expected_proved() -> dict[str, str]:
    """spec path (relative to specs/) -> its first mechanism, for every `# expect: proved` or `bounded` spec
    outside specs/incorrect/ (a bounded spec there is broken beyond its bound: its alarms are true) and outside
    specs/peers/ (other projects' programs, a benchmark of what align does not prove yet: tests/test_peers.py)."""
    from align.parse import parse_source
    from align.resolve import resolve

    found = {}
    for path in sorted((ROOT / "specs").rglob("*.dp")):
        if path.parent.name in ("incorrect", "peers") or \
                not re.search(r"^# expect: (proved|bounded)\s*$", path.read_text(), re.MULTILINE):
            continue
        mech = resolve(parse_source(read_source(str(path)))).mechanisms[0]
        found[str(path.relative_to(ROOT / "specs"))] = mech.name
    return found


def run_one(task: tuple[str, str, dict, int, int, float, int, dict]) -> tuple[str, int, bool, float, float]:
    spec, mechanism, public, length, samples, alpha, seed, verdicts = task
    started = time.perf_counter()
    # the longer lengths as `align test` searches them: those the computed stage covers are not sampled
    mech = load_mechanism(str(ROOT / "specs" / spec), mechanism)
    result = search(mech, public, length=length, samples=samples, base=samples, alpha=alpha, seed=seed,
                    extra_pairs=checker_pairs(mech), max_length=default_max_length(length), computed=verdicts.get)
    w = result.witness
    return spec, seed, result.violation, (w.adjusted_p if w else 1.0), time.perf_counter() - started


def compute_one(task: tuple[str, str, dict, int]) -> tuple[str, str, float, dict[int, bool | None]]:
    """What `align test` computes after sampling rounds that found nothing (align/exact/), at its length and at
    the longer ones it escalates to: deterministic, so once per spec: (spec, `violation` / `none` / `outside`, the
    strongest bound, the verdict per length: None where the length is not computed, and so sampled)."""
    from align.exact.search import Computed

    spec, mechanism, public, length = task
    mech = load_mechanism(str(ROOT / "specs" / spec), mechanism)
    stage = Computed(mech, public, length, checker_pairs(mech), True)
    for n in escalation(mech, length, default_max_length(length)):
        if stage.at(n):
            break
    if stage.result is None:
        return spec, "outside", float("nan"), stage.verdicts
    s = stage.result.strongest
    return spec, "violation" if stage.result.violation else "none", (s.epsilon if s is not None else float("-inf")), \
        stage.verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--samples", type=int, default=2_000)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    specs = expected_proved()
    missing = sorted(set(specs) - set(ARGS))
    if missing:
        sys.exit(f"no arguments in ARGS for: {', '.join(missing)}")
    started = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        computed = {c[0]: c for c in pool.map(compute_one, [(spec, mech, *ARGS[spec]) for spec, mech in specs.items()])}
        tasks = [(spec, mech, ARGS[spec][0], ARGS[spec][1], args.samples, args.alpha, seed, computed[spec][3])
                 for spec, mech in specs.items() for seed in range(args.seeds)]
        outcomes = list(pool.map(run_one, tasks))
    total = time.perf_counter() - started
    print("| spec | runs | false alarms | rate | smallest adjusted p | s per run | computed (eps >=) | args (length) |")
    print("|---|---:|---:|---:|---:|---:|---|---|")
    runs = alarms = 0
    for spec in specs:
        rows = [o for o in outcomes if o[0] == spec]
        a = sum(o[2] for o in rows)
        runs, alarms = runs + len(rows), alarms + a
        public, length = ARGS[spec]
        shown = " ".join(f"{k}={v}" for k, v in public.items())
        _, verdict, bound, lengths = computed[spec]
        at = ", ".join(str(n) for n, v in lengths.items() if v is not None)
        shown_bound = "" if verdict == "outside" else f" ({bound:.3g}; lengths {at})"
        print(f"| {spec} | {len(rows)} | {a} | {a / len(rows):.3g} | {min(o[3] for o in rows):.3g} | "
              f"{sum(o[4] for o in rows) / len(rows):.2f} | {verdict}{shown_bound} | {shown} ({length}) |")
    print(f"seconds: {total:.1f} with {args.jobs} process(es), {args.samples} samples per input and run")
    print(f"false alarms: {alarms}/{runs} (rate {alarms / runs:.3g}, alpha {args.alpha:g})")
    inside = [c for c in computed.values() if c[1] != "outside"]
    print(f"computed false alarms: {sum(c[1] == 'violation' for c in inside)}/{len(inside)} specs in the class "
          f"(deterministic; {len(computed) - len(inside)} outside)")


if __name__ == "__main__":
    main()
