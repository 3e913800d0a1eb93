"""Statistics (the `align test` command): search for a privacy violation and print the verdict.

Exit codes: 0 no violation found (the claim survived the test; it is not proved), 1 a violation confirmed at
level alpha (or, when the sampling found none, computed from the program's paths: align/exact/), 2 usage, input,
parse, type or runtime error. The verdict and every printed eps lower bound come
from one test (the exact conditional test of two Poisson rates, inverted into the bound; bounds.py): a
confirmed violation prints a bound >= its claim, "no violation found" a largest bound below it. Only the
result goes to stdout; progress goes to stderr (a rich status line), and only when stderr is a terminal.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from ..diagnostics import ExitCode, SpecError, diag, os_reason
from ..pipeline import checker_pairs, read, resolve_source, select
from ..render import Renderer
from ..results import ExactReport
from ..stats.executors import executor_problem, open_executor
from . import UsageError, file_name, options
from .run import read_pairs

DESCRIPTION = (
    "Search for a privacy violation by likelihood-ratio tests on samples of the reference interpreter: input "
    "pairs (D, D') from the checker's counterexamples and StatDP's patterns at the adjacency bound (or the pair "
    "given with --arg and --neighbour, or a counterexample file's), output events chosen on one sample and "
    "tested on a fresh one with an exact test of P[M(D) in E] <= e^eps P[M(D') in E], Bonferroni-corrected, "
    "with sample sizes doubling up to "
    "--samples; when the rounds find none, the events' probabilities are computed from the program's paths where "
    "it allows (--exact: only that; --no-exact: never). Public parameters need --arg; private lists are generated "
    "with --length entries. Exit 1 when a violation is confirmed at level --alpha or computed, 0 when none is "
    "found, 2 on errors. docs/testing.md.")


def add_arguments(test: Any) -> None:
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
    test.add_argument("--length", type=options.TEST_LENGTH, default=None, metavar="L",
                      help="length of the generated private lists (default: the longest `len(q) = N` of the "
                           "spec's `example` clause, else 5)")
    test.add_argument("--max-length", type=options.TEST_LENGTH, default=None, metavar="M",
                      help="when nothing is found at --length, search the patterns at longer lengths, doubling up to "
                           "M: each computed from the program's paths where it allows, else sampled (default 4 "
                           "times --length, at most 100; --max-length equal to --length: that length only)")
    test.add_argument("--samples", type=options.TEST_SAMPLES, default=64_000, metavar="N",
                      help="largest number of samples per input and round (default 64000; rounds double from "
                           "2000)")
    test.add_argument("--confirm", type=options.CONFIRM_TESTS, default=3, metavar="C",
                      help="when the rounds find no violation, test the C most promising events once more on "
                           "fresh samples 32 times the largest round's (default 3; 0: no confirmation)")
    test.add_argument("--sharpen", action="store_true",
                      help="run the confirmation tests after a violation too, for a tighter lower bound on the "
                           "loss (same level; costs their samples)")
    test.add_argument("--exact", action="store_true",
                      help="compute the events' probabilities from the program's paths instead of sampling: "
                           "deterministic bounds, for programs whose noise has a density and whose branches compare "
                           "affine functions of it (docs/testing.md, \"Exact event probabilities\"); the sampling "
                           "options do not apply")
    test.add_argument("--no-exact", action="store_true",
                      help="when the sampling finds no violation, do not compute the events' probabilities from "
                           "the program's paths (by default they are, for programs in that class)")
    test.add_argument("--alpha", type=options.ALPHA, default=0.05, metavar="A",
                      help="significance level, between 0 and 1 (default 0.05)")
    test.add_argument("--seed", type=options.SEED, default=0, metavar="S", help="seed (default 0)")
    test.add_argument("--jobs", type=options.JOBS, default=1, metavar="J",
                      help="worker processes (default 1); the result does not depend on it")
    test.add_argument("--executor", metavar="WHERE",
                      help="where the sampling runs: local (this process), processes (a pool of --jobs processes; "
                           "the default when --jobs > 1), dask (a local Dask cluster of --jobs worker processes) or "
                           "dask://HOST:PORT (a running Dask scheduler); the counts do not depend on it. Dask needs "
                           "pip install 'align[dask]'")
    test.add_argument("--plot", metavar="FILE.png",
                      help="also draw the p-value against the test eps (alpha and the claimed eps marked) and the "
                           "eps lower bound per input pair into FILE.png (exactly that file; the format is the "
                           "suffix's: .png, .pdf, .svg, ..., PNG without one; needs matplotlib: pip install "
                           "'align[plot]')")


def execute(args: argparse.Namespace, renderer: Renderer) -> int:
    # lazy: loads lark, numpy, scipy only when this runs (start-up; tests/test_layers.py)
    from ..exact.search import Computed
    from ..interp.values import example_arguments, example_length
    from ..stats.lrtest import Pair, counterexample_pair, default_max_length, escalation, search

    problem = None if args.executor is None else executor_problem(args.executor)
    if problem is not None:
        raise UsageError(problem)
    counterexample = file_name(args.counterexample, "--counterexample")
    source = None
    try:
        plot = _plot_file(getattr(args, "plot", None))
        source = read(args.file)
        mech = select(resolve_source(source), args.mechanism, args.file)
        given = read_pairs(args.arg, "--arg")
        neighbour = read_pairs(args.neighbour, "--neighbour")
        private = {p.name for p in mech.params if not p.public}
        public = {**example_arguments(mech.node), **{k: v for k, v in given.items() if k not in private}}
        length = args.length if args.length is not None else example_length(mech.node)
        max_length = args.max_length if args.max_length is not None else default_max_length(length)
        if max_length < length:
            raise UsageError(f"--max-length {max_length} is below the length searched first ({length}): give at "
                             "least that, or --length")
        d = {k: v for k, v in given.items() if k in private}
        extra: list[Pair] = []
        if d or neighbour:
            if set(d) != private or set(neighbour) != private:
                raise UsageError("give every private parameter (" + ", ".join(sorted(private)) +
                                 ") both --arg (its value on D) and --neighbour (on D'), or neither")
            extra.append(Pair("given", d, neighbour))
        if counterexample is not None:
            # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
            from ..counterexample import load

            ce_public, pair = counterexample_pair(mech, load(counterexample))
            extra.append(pair)
            public = {**ce_public, **public}
        started = time.perf_counter()
        patterns = not (d or neighbour)
        checker = not (d or neighbour or getattr(args, "no_checker", False))
        if args.exact:
            if plot is not None or args.executor is not None or args.sharpen or args.no_exact:
                raise UsageError("--exact computes instead of sampling: leave out --plot, --executor, --sharpen "
                                 "and --no-exact")
            # lazy: loads lark, numpy, scipy only when this runs (start-up; tests/test_layers.py)
            from ..exact.search import compute_lengths

            lengths = escalation(mech, length, max_length) if patterns else [length]
            if checker:
                extra += checker_pairs(mech)
            exact = compute_lengths(mech, public, lengths, extra_pairs=extra, patterns=patterns)
            computed = ExactReport(args.file, mech, exact, time.perf_counter() - started, dict(public))
            renderer.computed(computed)
            return computed.exit_code
        with open_executor(args.executor, args.jobs) as executor, _progress(renderer.stderr) as progress:
            if checker:
                if progress is not None:
                    progress("running the checker for counterexample pairs")
                extra += checker_pairs(mech)
            stage = Computed(mech, public, length, extra, patterns, enabled=not args.no_exact)
            stage.progress = progress
            result = search(mech, public, length=length, samples=args.samples,
                            alpha=args.alpha, seed=args.seed, executor=executor, extra_pairs=extra,
                            patterns=patterns, progress=progress, confirm=args.confirm,
                            sharpen=args.sharpen, max_length=max_length, computed=stage.at)
            report = stage.report(args.file, result, time.perf_counter() - started)
        write_error: SpecError | None = None
        if plot is not None:
            # lazy: loads numpy only when this runs (start-up; tests/test_layers.py)
            from ..stats.plot import write_plot

            try:
                write_plot(plot, mech.name, result)
            except (OSError, ValueError) as error:  # a full disk, permission denied, no such folder
                write_error = SpecError([diag("write-error", None, path=plot, reason=os_reason(error))])
                if renderer.one_document:  # one document on stdout: the error's
                    raise write_error from None
        renderer.tested(report)
        if write_error is not None:  # the result is out; the figure the user asked for is not: exit 2
            raise write_error
        return report.exit_code
    except SpecError as error:
        renderer.errors(args.file, source, error.diagnostics)
        return ExitCode.ERROR


def _plot_file(value: str | None) -> str | None:
    """--plot's file, checked before the search: a name, not a directory, with a suffix that names a format
    matplotlib writes, or none (PNG). matplotlib itself would write `adir.png` beside a directory `adir`, and
    `x.png` for `x`: `write_plot` writes exactly the file named."""
    plot = file_name(value, "--plot")
    if plot is None:
        return None
    if os.path.isdir(plot):
        example = os.path.join(plot, "plot.png")
        raise UsageError(f"--plot {plot} is a directory: name the figure's file (e.g. {example})")
    # lazy: loads numpy only when this runs (start-up; tests/test_layers.py)
    from ..stats.plot import available, formats, plot_format

    if not available():
        raise SpecError([diag("plot-needs-matplotlib", None)])
    if plot_format(plot) is None:
        raise UsageError(f"--plot {plot}: the figure's format is its file name's suffix, and matplotlib writes no "
                         f"{os.path.splitext(plot)[1]} file (it writes " + ", ".join(f".{f}" for f in formats()) + ")")
    return plot


@contextmanager
def _progress(stderr: TextIO) -> Iterator[Callable[[str], None] | None]:
    """A one-line status on stderr (rich's spinner), only when stderr is a terminal: the search reports what it
    is doing (the checker, each round, the support proofs) through the callback this yields; None otherwise,
    so that a pipe or a file gets nothing but diagnostics. The line is cleared when the search ends."""
    if not stderr.isatty():
        yield None
        return
    # lazy: loads rich only when this runs (start-up; tests/test_layers.py)
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), console=Console(file=stderr),
                  transient=True) as bar:
        task = bar.add_task("align test: starting", total=None)
        # refresh=True draws each step at once (not at the next tick), so none is skipped
        yield lambda line: bar.update(task, description=f"align test: {line}", refresh=True)
