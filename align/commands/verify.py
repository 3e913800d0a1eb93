"""`align verify`: discharge every obligation of each mechanism, and say what the proof covers."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from ..config import NONE as NO_CONFIG
from ..config import spec_paths
from ..diagnostics import ExitCode, SpecError, diag, os_reason
from ..gate import acceptance, judge
from ..limits import BOUNDED_LENGTH, DEFAULT_MAX_LENGTH, DEFAULT_RLIMIT, DEFAULT_TIMEOUT_MS, TIMEOUT_S
from ..pipeline import load_file, verify
from ..render import Renderer
from ..render.common import Style, diagnostic_line
from ..results import Confirmation, FileResult, VerifyReport
from ..span import shown_path
from ..stats.executors import open_executor
from ..status import Status
from . import UsageError, file_name, options

if TYPE_CHECKING:
    from ..checker.verify import Options
    from ..config import Config
    from ..results import MechanismVerdict

T = TypeVar("T")

DESCRIPTION = ("Discharge every obligation of each mechanism with z3 and sympy, with the parameters symbolic as "
               "`requires` allows; print one line per obligation and the verdict. Exit 0 when everything is "
               "proved for every input, 1 when something is refuted, 3 when nothing is refuted but something is "
               "unknown or only bounded (proved for lengths <= N; see --accept-bounded).")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", metavar="FILE.dp",
                        help="the specs to verify (default: the `paths` of the project's configuration, docs/ci.md)")
    add_proof_arguments(parser)
    parser.add_argument("--accept-bounded", action="store_true", default=None,
                        help="exit 0 when every obligation is proved or bounded (proved only for lengths <= N): "
                             "by default a bounded verdict exits 3, because it is not a proof for longer inputs")
    parser.add_argument("--synthesise", "--synthesize", action="store_true",
                        help="a mechanism without an alignment block (or with `alignment NAME auto`) always gets one "
                             "synthesised; with this flag, a written alignment that is not proved is searched for "
                             "too, and a proved one is compared with the template space: does an alignment prove a "
                             "smaller claim? (docs/synthesis.md)")
    parser.add_argument("--counterexample", metavar="FILE.json",
                        help="write the first counterexample found, in the format `align run --noise-file` replays")
    parser.add_argument("--jobs", type=options.JOBS, default=1, metavar="J",
                        help="verify the files in J worker processes (the same verdicts, printed in the same order)")


def add_proof_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of a proof, shared by `align verify` and `align report`."""
    parser.add_argument("--max-length", type=options.BOUNDED_LENGTH, default=None, metavar="N",
                        help=f"the bounded check covers every length 0..N of each list parameter (default "
                             f"{DEFAULT_MAX_LENGTH}); a proof for every length needs the induction")
    parser.add_argument("--timeout", type=options.TIMEOUT_S, default=None, metavar="SECONDS",
                        help=f"wall-clock safety net of each solver query (default {DEFAULT_TIMEOUT_MS // 1000}); "
                             "the limit that decides is z3's deterministic resource limit (rlimit "
                             f"{DEFAULT_RLIMIT:,}), so verdicts do not depend on the machine's speed or load")
    parser.add_argument("--every-obligation", action="store_true",
                        help="after a refutation, go on checking the other obligations up to --max-length (by "
                             "default the bounded check stops after the length of the first refutation: the "
                             "verdict is refuted whatever the others are)")
    parser.add_argument("--confirm", action="store_true",
                        help="when an obligation is refuted, run `align test` on the counterexample's input pair "
                             "(and StatDP's patterns) to tell a broken proof from a broken mechanism")
    parser.add_argument("--confirm-samples", type=options.TEST_SAMPLES, default=64_000, metavar="N",
                        help="sample budget of each --confirm test (default 64000)")


def proof_options(args: argparse.Namespace) -> Options:
    """The options of `add_proof_arguments`, checked, over the project's configuration (flags first)."""
    # lazy: loads lark, sympy, z3 only when this runs (start-up; tests/test_layers.py)
    from ..checker.verify import Options

    config = getattr(args, "config", NO_CONFIG)
    max_length = _first(args.max_length, config.max_length, DEFAULT_MAX_LENGTH)
    timeout = _first(args.timeout, config.timeout, DEFAULT_TIMEOUT_MS / 1000)
    # The flags were read in their ranges (`options`); the configuration's values are checked here against the
    # same ranges, so that `timeout = inf` in a configuration is a usage error, not an OverflowError.
    for key, value, bounds in (("max-length", max_length, BOUNDED_LENGTH), ("timeout", timeout, TIMEOUT_S)):
        problem = bounds.problem(value)
        if problem is not None:
            raise UsageError(f"--{key} (or `{key}` in the configuration) {problem}")
    return Options.of(max_length, timeout, args.every_obligation)


def execute(args: argparse.Namespace, renderer: Renderer) -> int:
    # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
    from ..counterexample import save

    config = getattr(args, "config", NO_CONFIG)  # flags override the project's configuration
    job = Job(proof_options(args), args.synthesise, args.confirm_samples if args.confirm else None,
              args.accept_bounded, config)
    counterexample = file_name(args.counterexample, "--counterexample")
    paths = spec_files(args)
    files = []
    first_counterexample = None
    with open_executor(None, min(args.jobs, len(paths))) as pool:
        # in the order of the paths, each printed as soon as it and those before it are done
        for file in (pool.map(partial(verify_file, job=job), paths) if pool is not None
                     else (verify_file(path, job) for path in paths)):
            if first_counterexample is None:
                first_counterexample = next((m.counterexample for m in file.verified if m.counterexample), None)
            renderer.verified_file(file)
            files.append(file)
    code = VerifyReport(tuple(files)).exit_code
    if counterexample is not None:
        if first_counterexample is None:
            renderer.stderr.write(f"align: no counterexample to write to {shown_path(counterexample)}\n")
        else:
            try:
                save(first_counterexample, counterexample)
            except (OSError, ValueError) as error:  # no such directory, a directory, permission denied, a NUL

                problem = diag("write-error", None, path=counterexample, reason=os_reason(error))
                renderer.stderr.write(diagnostic_line(problem, Style.for_stream(renderer.stderr)) + "\n")
                code = ExitCode.ERROR
    return code


@dataclass(frozen=True)
class Job:
    """What `align verify` does to each file (it travels to the worker processes of `--jobs`)."""

    options: Options
    synthesise: bool
    confirm_samples: int | None
    """`--confirm`: the sample budget of each test; None without it."""
    accept_bounded: bool | None
    """`--accept-bounded` (None: not given)."""
    config: Config


def verify_file(path: str, job: Job) -> FileResult:
    """Load one file and verify each of its mechanisms: its verdicts, each bounded one judged by the gate
    (`gate.judge`: who accepts it), or the diagnostics that stopped it."""

    loaded = load_file(path)
    if loaded.spec is None:
        return FileResult(path, loaded.source, loaded.diagnostics)
    accepts = acceptance(path, loaded.source, job.accept_bounded, job.config)
    results = []
    for mech in loaded.spec.mechanisms:
        result = verify(mech, job.options, source=loaded.source, synthesise=job.synthesise)
        if job.confirm_samples is not None and (result.status == Status.REFUTED or
                                                (result.synthesis is not None and not result.synthesis.found)):
            result = replace(result, confirmation=confirm(result, job.confirm_samples))
        accepted, why = judge(result, accepts)
        results.append(replace(result, accepted=accepted, acceptance=why))
    return FileResult(path, loaded.source, loaded.diagnostics, verified=tuple(results))  # its warnings


def spec_files(args: argparse.Namespace) -> list[str]:
    """The files named on the command line, else the configuration's `paths` (`check` and `verify`)."""
    paths = args.files or list(spec_paths(getattr(args, "config", NO_CONFIG)))
    if not paths:
        raise UsageError("no FILE.dp given, and no `paths` configured (align.toml, or [tool.align] in "
                         "pyproject.toml: docs/ci.md)")
    return paths


def _first(*values: T | None) -> T:
    """The first value that is set: the flag, then the configuration, then the default."""
    return next(v for v in values if v is not None)


def confirm(result: MechanismVerdict, samples: int) -> Confirmation:
    """`align verify --confirm`: run the likelihood-ratio test on a refuted obligation's counterexample pair, or,
    when no alignment was found by synthesis, on StatDP's patterns with the spec's example values."""
    # lazy: loads lark, numpy, scipy only when this runs (start-up; tests/test_layers.py)
    from ..interp.values import example_arguments, example_length, format_values
    from ..stats.lrtest import counterexample_pair, search

    mech, cex = result.mechanism, result.counterexample
    failed = "the alignment fails"
    if cex is not None:
        public, pair = counterexample_pair(mech, cex)
        extra = [pair]
        # StatDP's patterns at a useful length, besides the counterexample's own (often minimal) pair.
        length = max(5, max((len(v) for v in pair.d.values() if isinstance(v, list)), default=1))
    elif result.synthesis is not None and not result.synthesis.found:
        public, extra, length = example_arguments(mech.node), [], max(5, example_length(mech.node))
        failed = "no alignment was found"
    else:
        return Confirmation(None, "no counterexample pair to test")
    try:
        found = search(mech, public, length=length, samples=samples, extra_pairs=extra)
    except SpecError as error:
        return Confirmation(None, "not tested: " + "; ".join(d.message for d in error.diagnostics))
    # the witness decided (its bound >= its claim, the same exact test as adjusted p <= alpha); the strongest
    # bound is over the findings that reject, so it is >= the claim too (align/stats/lrtest.py, Result)
    best = found.witness
    args_text = format_values(public)
    if found.violation and best is not None:
        strongest = found.strongest
        assert strongest is not None, "a violation has a finding that rejects"
        infinite = strongest.epsilon_bound == float("inf")
        if infinite:
            bound = ("the true ε is ∞: an output event seen on D is proved impossible on D' "
                     f"({strongest.event.text})")
        else:
            bound = (f"simultaneous {1 - found.alpha:.0%} lower confidence bound on the true ε, from the same "
                     f"exact test inverted: {strongest.epsilon_lower_bound:.3g}")
        return Confirmation(True, f"privacy violation confirmed at {args_text}: P[M(D) in E] > e^ε P[M(D') in E] "
                                  f"for the claim ε = {best.eps:.3g} (adjusted p = {best.adjusted_p:.3g}; {bound})",
                            p=best.adjusted_p, samples=found.samples, epsilon_infinite=infinite,
                            epsilon_lower_bound=strongest.epsilon_lower_bound, claimed_epsilon=best.eps,
                            search=found)
    smallest = best.adjusted_p if best is not None else 1.0
    return Confirmation(False, f"{failed}, but no violation was found with {found.samples} samples at "
                               f"{args_text} (smallest adjusted p = {smallest:.3g})",
                        samples=found.samples, smallest_p=smallest, search=found)
