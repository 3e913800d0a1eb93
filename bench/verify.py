"""Benchmark: `align verify` over the whole spec corpus, one row per spec.

    python bench/verify.py [--max-length N] [--with-peers] [SPEC.dp ...]
    python bench/verify.py --scaling [--up-to 8] [--only-longest] [SPEC.dp ...]

The first form prints spec, status, scope, number of obligations and seconds, and last
`verify median s: X max s: Y unbounded: U/P` (U of the P proved specs proved for every input length or for
all inputs, the rest bounded). Targets on the 2-core reference machine (issue 12): median <= 0.25 s,
max <= 2 s per spec, U = P; `--with-peers` adds specs/peers/ to the corpus (issue 37's target is over both).

`--scaling` times the bounded check alone (the unbounded proofs are skipped), checking every obligation (a
refutation does not end it: `Options.every_obligation`), at --max-length 1 .. N for every spec, one column per
length, so that the growth with the input length stays visible (docs/checker.md). Each
cell is a fresh verification in this process, with the overall status's letter (b bounded, r refuted,
u unknown, p proved for all inputs), run in a process of its own; a cell that takes over 60 s is stopped and
ends the row (shown as `>60`). Then the totals per length, the number of specs whose longest length took at most
10 s (issue 37's target: all of them), and last the unknown verdicts per length (issue 12: none at
--max-length 5, besides the specs that expect one). Spec paths given on the command line (under specs/) replace
the whole corpus, to add rows for new specs. The corpus is every spec under specs/ except specs/peers/, the other
projects' programs (specs/peers/README.md): `python bench/verify.py specs/peers/*.dp` times those.
`--only-longest` runs the last column alone (a check at --max-length N covers every length up to N, which is what
the target is about), about an eighth of the time of the whole table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "specs" / "peers"
sys.path.insert(0, str(ROOT))

from align.checker.options import DEFAULT_MAX_LENGTH, Options
from align.checker.verify import overall_scope, overall_status, verify_mechanism
from align.parse import parse_source, read_source
from align.resolve import resolve
from align.status import Status

CELL_LIMIT_S = 60.0
TARGET_S = 10.0
"""Issue 37: every corpus spec's bounded check at the longest length within this many seconds."""


def _mechanisms(only: list[str]):
    # specs/peers/ (other projects' programs, tests/test_peers.py) is not the corpus: name its files to add them
    paths = [ROOT / p for p in only] if only else sorted(p for p in (ROOT / "specs").rglob("*.dp")
                                                         if PEERS not in p.parents)
    for path in paths:
        rel = path.resolve().relative_to(ROOT)
        yield rel, resolve(parse_source(read_source(str(rel)))).mechanisms[0]


def corpus(max_length: int, only: list[str]) -> None:
    rows = []
    for rel, mech in _mechanisms(only):
        start = time.perf_counter()
        verdicts = verify_mechanism(mech, Options(max_length=max_length))
        seconds = time.perf_counter() - start
        status, scope = overall_status(verdicts), overall_scope(verdicts)
        rows.append((str(rel), status, scope, seconds))
        print(f"{rel!s:58} {status:8} {scope:24} {len(verdicts):3d} obligations {seconds:7.2f} s", flush=True)
    times = [r[3] for r in rows]
    proved = [r for r in rows if r[1] in (Status.PROVED, Status.BOUNDED) and "incorrect" not in r[0]]
    unbounded = [r for r in proved if r[1] == Status.PROVED]
    print(f"verify median s: {statistics.median(times):.2f} max s: {max(times):.2f} "
          f"unbounded: {len(unbounded)}/{len(proved)}")


def _cell(rel: str, n: int, answers) -> None:
    """One cell of the scaling table, in a process of its own (so that a slow one can be stopped)."""
    mech = resolve(parse_source(read_source(rel))).mechanisms[0]
    start = time.perf_counter()
    status = overall_status(verify_mechanism(mech, Options(max_length=n, bounded_only=True, every_obligation=True)))
    answers.put((time.perf_counter() - start, status.value))


def scaling(up_to: int, only: list[str], only_longest: bool = False) -> None:
    import multiprocessing

    context = multiprocessing.get_context("fork")
    lengths = [up_to] if only_longest else list(range(1, up_to + 1))
    print(f"{'spec':58} " + " ".join(f"{'<=' + str(n):>7}" for n in lengths) + "  (seconds, bounded check only)")
    totals = [0.0] * len(lengths)
    unknown = [0] * len(lengths)
    within, rows = 0, 0
    for rel, _ in _mechanisms(only):
        rows += 1
        cells = []
        for k, n in enumerate(lengths):
            answers = context.Queue()
            worker = context.Process(target=_cell, args=(str(rel), n, answers))
            worker.start()
            worker.join(CELL_LIMIT_S)
            if worker.is_alive():
                worker.kill()
                worker.join()
                cells += [f"{'>' + str(int(CELL_LIMIT_S)):>7}"] + [f"{'-':>7}"] * (len(lengths) - k - 1)
                break
            seconds, status = answers.get()
            totals[k] += seconds
            unknown[k] += status == Status.UNKNOWN.value
            cells.append(f"{seconds:6.2f}{status[0]}")
            within += n == up_to and seconds <= TARGET_S
        print(f"{rel!s:58} " + " ".join(cells), flush=True)
    print(f"{'total (the cells that finished)':58} " + " ".join(f"{t:7.1f}" for t in totals))
    print(f"{'specs within ' + str(int(TARGET_S)) + ' s at <=' + str(up_to):58} {within} of {rows}")
    print(f"{'unknown verdicts':58} " + " ".join(f"{u:7d}" for u in unknown))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-length", type=int, default=DEFAULT_MAX_LENGTH)
    parser.add_argument("--scaling", action="store_true", help="seconds of the bounded check per length")
    parser.add_argument("--up-to", type=int, default=8, help="longest length for --scaling (default 8)")
    parser.add_argument("--only-longest", action="store_true", help="--scaling at the longest length only")
    parser.add_argument("--with-peers", action="store_true", help="the corpus and specs/peers/ (one median, one max)")
    parser.add_argument("specs", nargs="*", help="specs to run instead of the whole corpus")
    args = parser.parse_args()
    if args.with_peers:
        corpus_specs = sorted(p for p in (ROOT / "specs").rglob("*.dp"))
        args.specs = [str(p.relative_to(ROOT)) for p in corpus_specs] + args.specs
    if args.scaling:
        scaling(args.up_to, args.specs, args.only_longest)
    else:
        corpus(args.max_length, args.specs)


if __name__ == "__main__":
    main()
