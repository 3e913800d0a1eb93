"""Statistics (the `align test` command): search for a privacy violation and print the verdict.

Exit codes: 0 no violation found (the claim survived the test; it is not proved), 1 a violation confirmed at
level alpha, 2 usage, input, parse, type or runtime error. The verdict and every printed eps lower bound come
from one test (the exact conditional test of two Poisson rates, inverted into the bound; bounds.py): a
confirmed violation prints a bound >= its claim, "no violation found" a largest bound below it. Only the
result goes to stdout; progress goes to stderr (a rich status line), and only when stderr is a terminal.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from ..diagnostics import ExitCode, SpecError, diag
from ..report import report_errors
from ..span import Source

DESCRIPTION = (
    "Search for a privacy violation by likelihood-ratio tests on samples of the reference interpreter: input "
    "pairs (D, D') from the checker's counterexamples and StatDP's patterns at the adjacency bound (or the pair "
    "given with --arg and --neighbour, or a counterexample file's), output events chosen on one sample and "
    "tested on a fresh one with an exact test of P[M(D) in E] <= e^eps P[M(D') in E], Bonferroni-corrected, "
    "with sample sizes doubling up to "
    "--samples. Public parameters need --arg; private lists are generated with --length entries. Exit 1 when a "
    "violation is confirmed at level --alpha, 0 when none is found, 2 on errors. docs/testing.md.")


def add_test_arguments(test: Any) -> None:
    test.add_argument("file", metavar="FILE.dp")
    test.add_argument("--mechanism", metavar="NAME", help="the mechanism to test, when the file defines several")
    test.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                      help="a public parameter's value (required for each one, e.g. --arg eps=0.5); a private "
                           "parameter's value on D only together with --neighbour")
    test.add_argument("--neighbour", action="append", default=[], metavar="NAME=VALUE",
                      help="a private parameter's value on D': test only the pair given by --arg and --neighbour")
    test.add_argument("--counterexample", metavar="FILE.json",
                      help="also try the pair (D, D') of a counterexample file (e.g. from `align verify "
                           "--counterexample`), first")
    test.add_argument("--no-checker", action="store_true",
                      help="do not add the pairs of the checker's counterexamples (by default `align verify` runs "
                           "first, lengths <= 3, and each refuted obligation's (D, D') is tried before the "
                           "patterns)")
    test.add_argument("--length", type=int, default=5, metavar="L",
                      help="length of the generated private lists (default 5)")
    test.add_argument("--samples", type=int, default=64_000, metavar="N",
                      help="largest number of samples per input and round (default 64000; rounds double from "
                           "2000)")
    test.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    test.add_argument("--seed", type=int, default=0, metavar="S", help="seed (default 0)")
    test.add_argument("--jobs", type=int, default=1, metavar="J",
                      help="worker processes (default 1); the result does not depend on it")
    test.add_argument("--format", choices=("text", "json"), default="text")
    test.add_argument("--plot", metavar="FILE.png",
                      help="also draw the p-value against the test eps (alpha and the claimed eps marked) and the "
                           "eps lower bound per input pair into FILE.png (needs matplotlib: pip install "
                           "'align[plot]')")


class UsageError(Exception):
    pass


def test_command(args: Any, stdout: TextIO, stderr: TextIO) -> int:
    from ..interp.command import UsageError as RunUsageError
    from ..interp.command import _pairs, _select
    from ..parse import parse_source, read_source
    from ..resolve import resolve
    from .lrtest import Pair, SpecRef, counterexample_pair, search

    source: Source | None = None
    try:
        if args.length < 1 or args.samples < 1 or args.jobs < 1:
            raise UsageError("--length, --samples and --jobs must be at least 1")
        if not 0 < args.alpha < 1:
            raise UsageError("--alpha must be between 0 and 1")
        plot = getattr(args, "plot", None)
        if plot:
            from .plot import available

            if not available():
                raise SpecError([diag("plot-needs-matplotlib", None)])
        source = read_source(args.file)
        mech = _select(resolve(parse_source(source)), args.mechanism, args.file)
        try:
            given = _pairs(args.arg, "--arg")
            neighbour = _pairs(args.neighbour, "--neighbour")
        except RunUsageError as error:
            raise UsageError(str(error)) from None
        private = {p.name for p in mech.params if not p.public}
        public = {k: v for k, v in given.items() if k not in private}
        d = {k: v for k, v in given.items() if k in private}
        extra: list[Pair] = []
        if d or neighbour:
            if set(d) != private or set(neighbour) != private:
                raise UsageError("give every private parameter (" + ", ".join(sorted(private)) +
                                 ") both --arg (its value on D) and --neighbour (on D'), or neither")
            extra.append(Pair("given", d, neighbour))
        if args.counterexample:
            from ..counterexample import load

            ce_public, pair = counterexample_pair(mech, load(args.counterexample))
            extra.append(pair)
            public = {**ce_public, **public}
        started = time.perf_counter()
        executor = None
        if args.jobs > 1:
            from concurrent.futures import ProcessPoolExecutor

            executor = ProcessPoolExecutor(args.jobs)
        try:
            with _progress(stderr) as progress:
                result = search(SpecRef(args.file, mech.name), public, length=args.length, samples=args.samples,
                                alpha=args.alpha, seed=args.seed, executor=executor, extra_pairs=extra,
                                patterns=not (d or neighbour), progress=progress,
                                checker=not (d or neighbour or getattr(args, "no_checker", False)))
        finally:
            if executor is not None:
                executor.shutdown()
        seconds = time.perf_counter() - started
        if plot:
            from .plot import write_plot

            try:
                write_plot(plot, mech.name, result)
            except OSError as error:
                raise UsageError(f"cannot write {plot}: {error.strerror or error}") from None
        if args.format == "json":
            json.dump(result_json(args.file, mech.name, result, seconds), stdout, indent=2)
            stdout.write("\n")
        else:
            stdout.write(result_text(args.file, mech.name, result, seconds) + "\n")
        return ExitCode.REFUTED if result.violation else ExitCode.OK
    except UsageError as error:
        stderr.write(f"align: error[usage]: {error}\n")
        return ExitCode.ERROR
    except SpecError as error:
        report_errors(error, source, "test", args.file, args.format == "json", stdout, stderr)
        return ExitCode.ERROR


@contextmanager
def _progress(stderr: TextIO) -> Iterator[Callable[[str], None] | None]:
    """A one-line status on stderr (rich's spinner), only when stderr is a terminal: the search reports what it
    is doing (the checker, each round, the support proofs) through the callback this yields; None otherwise,
    so that a pipe or a file gets nothing but diagnostics. The line is cleared when the search ends."""
    if not stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), console=Console(file=stderr),
                  transient=True) as bar:
        task = bar.add_task("align test: starting", total=None)
        # refresh=True draws each step at once (not at the next tick), so none is skipped
        yield lambda line: bar.update(task, description=f"align test: {line}", refresh=True)


def _values(values: dict) -> str:
    from ..interp.values import format_value

    return ", ".join(f"{k} = {format_value(v)}" for k, v in values.items())


def _bound_text(x: float) -> str:
    return "-inf" if x == -math.inf else f"{x:.4g}"


def _p1_bound(result: Any, f: Any) -> float:
    """lcb(P1): Clopper–Pearson on c1 of the n1 samples of M(D) (c1 | N1 ~ Binomial(N1, P1)), at the level
    alpha / tests of the finding's eps bound."""
    from .bounds import lower_bound

    return float(lower_bound(f.c1, f.n1, result.alpha / result.tests))


def _strongest_text(f: Any) -> str:
    return "= inf" if f.epsilon_bound == math.inf else f">= {_bound_text(f.epsilon_lower_bound)}"


def _method(result: Any) -> str:
    """How the bound was obtained: the test that decided, inverted, at its Bonferroni-adjusted level."""
    return f"the exact test inverted at level alpha/{result.tests}, simultaneous"


def result_text(path: str, mechanism: str, result: Any, seconds: float) -> str:
    if getattr(result, "claim_reads_output", False):
        lines = [(f"mechanism {mechanism}  ({path}); the claim reads the output: each event is tested against "
                  f"the claim's largest value over the event")]
    else:
        lines = [f"mechanism {mechanism}  ({path}); claimed eps = {result.claimed_epsilon:.6g}"]
    w = result.witness
    confidence = f"{1 - result.alpha:.0%}"
    if result.violation:
        lines.append(f"privacy violation confirmed: p = {w.adjusted_p:.3g} <= alpha = {result.alpha:g} "
                     f"(exact test, Bonferroni over {result.tests} tests)")
        lines.append(f"  D:      {_values(dict(w.pair.d))}")
        lines.append(f"  D':     {_values(dict(w.pair.d_prime))}")
        lines.append(f"  event:  {w.event.text}")
        if getattr(result, "claim_reads_output", False):
            lines.append(f"  claim:  eps = {w.eps:.6g} (its largest value over the event)")
        lines.append(f"  M(D):   {w.c1} of {w.n1} samples in the event")
        mismatch = "  (support mismatch: never seen under D')" if w.support_mismatch else ""
        lines.append(f"  M(D'):  {w.c2} of {w.n2} samples in the event{mismatch}")
        if w.epsilon_bound == math.inf:
            lines.append(f"  eps = inf: P[M(D') in E] = 0 is proved ({w.impossible}), and "
                         f"P[M(D) in E] >= {_p1_bound(result, w):.3g} with {confidence} confidence "
                         f"(the samples alone give eps >= {_bound_text(w.epsilon_lower_bound)})")
        else:
            lines.append(f"  eps >= {_bound_text(w.epsilon_lower_bound)} with {confidence} confidence "
                         f"({_method(result)})" + (
                             "; finite only because of the sample size" if w.support_mismatch else ""))
        s = result.strongest
        stronger = s is not None and (s.epsilon_bound, s.epsilon_lower_bound) > \
            (w.epsilon_bound, w.epsilon_lower_bound + 1e-12)
        if stronger:
            proved = " (P[M(D') in E] = 0 proved)" if s.epsilon_bound == math.inf else ""
            claim = f"; claim eps = {s.eps:.6g}" if getattr(result, "claim_reads_output", False) else ""
            lines.append(f"  strongest bound: eps {_strongest_text(s)} on {s.event.text} ({s.c1} of {s.n1} vs "
                         f"{s.c2} of {s.n2}{proved}{claim}; D: {_values(dict(s.pair.d))}; "
                         f"D': {_values(dict(s.pair.d_prime))})")
    else:
        smallest = f"{w.adjusted_p:.3g}" if w is not None else "1"
        lines.append(f"no violation found: smallest adjusted p = {smallest} > alpha = {result.alpha:g} "
                     f"(this is not a proof)")
        s = result.strongest
        if s is not None:
            # the same test: no claim rejected means every bound is below the claim it was tested against
            below = "each below its event's claim" if getattr(result, "claim_reads_output", False) else \
                f"< claimed eps = {result.claimed_epsilon:.6g}"
            lines.append(f"  largest eps lower bound: {_bound_text(s.epsilon_lower_bound)} ({below}; "
                         f"{confidence} confidence, {_method(result)})")
    lines.append(f"samples: {result.samples} in {result.rounds} round(s), {len(result.pairs)} input pair(s), "
                 f"seed {result.seed}, {seconds:.2f} s")
    return "\n".join(lines)


def finding_json(f: Any) -> dict:
    from ..interp.values import to_json

    return {"d": to_json(dict(f.pair.d)), "d_prime": to_json(dict(f.pair.d_prime)), "pattern": f.pair.name,
            "event": f.event.text, "count_d": f.c1, "samples_d": f.n1, "count_d_prime": f.c2,
            "samples_d_prime": f.n2, "p_value": f.p_value, "adjusted_p_value": f.adjusted_p,
            "epsilon_lower_bound": None if f.epsilon_lower_bound == -math.inf else f.epsilon_lower_bound,
            "support_mismatch": f.support_mismatch, "epsilon": getattr(f, "eps", None),
            "rejects": f.rejects,
            "epsilon_infinite": f.epsilon_bound == math.inf, "support_proof": f.impossible or None}


def result_json(path: str, mechanism: str, result: Any, seconds: float) -> dict:
    w, s = result.witness, result.strongest
    return {"command": "test", "path": path, "mechanism": mechanism, "ok": True,
            "claimed_epsilon": result.claimed_epsilon, "alpha": result.alpha, "seed": result.seed,
            "claim_reads_output": getattr(result, "claim_reads_output", False),
            "violation": result.violation, "tests": result.tests, "samples": result.samples,
            "rounds": result.rounds, "pairs": len(result.pairs), "pair_names": [p.name for p in result.pairs],
            "seconds": seconds,
            "witness": finding_json(w) if w is not None else None,
            "strongest": finding_json(s) if s is not None else None,
            "exit_code": int(ExitCode.REFUTED if result.violation else ExitCode.OK)}
