"""The `align` command line: parse arguments, run the stages, print, and return a documented exit code.

Exit codes (diagnostics.ExitCode): 0 success/proved, 1 refuted, 2 usage/parse/type/internal error,
3 unknown, or (for `verify`) bounded: proved only for lengths <= N, unless `--accept-bounded`. Machine output
(`--output-format json`) goes to stdout; diagnostics and progress to stderr.
An unexpected exception never escapes as a traceback: it becomes an `internal-error` diagnostic and exit 2.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Sequence
from typing import TextIO

from . import __version__
from .checker.solver import Limits
from .checker.verify import DEFAULT_MAX_LENGTH
from .diagnostics import CODES, ExitCode, SpecError, diag
from .limits import MAX_BOUNDED_LENGTH
from .parse import parse_source, read_source
from .report import (
    FORMATS,
    Style,
    diagnostic_json,
    diagnostic_line,
    mechanism_concise,
    mechanism_json,
    mechanism_text,
    render_diagnostic,
    verdicts_concise,
    verdicts_json,
    verdicts_text,
)
from .resolve import ResolvedSpec, resolve
from .span import Source


class _Parser(argparse.ArgumentParser):
    stream: TextIO = sys.stderr
    """Where usage errors go (the `stderr` given to `main`)."""

    def error(self, message: str) -> None:  # argparse exits 2 on usage errors; keep that, with our wording
        self.print_usage(self.stream)
        self.stream.write(f"align: error[usage]: {message}\n")
        raise SystemExit(ExitCode.ERROR)


def _build_parser(stderr: TextIO) -> argparse.ArgumentParser:
    class Parser(_Parser):
        stream = stderr

    parser = Parser(prog="align", description="Prove differential privacy by randomness alignment.",
                     epilog="Exit codes: 0 success/proved, 1 refuted, 2 error, 3 unknown or only bounded.")
    parser.add_argument("--version", action="version", version=f"align {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    check = sub.add_parser("check", help="parse and resolve specs; list what a proof must establish",
                           description="Parse and resolve each spec and print, for each mechanism, its parameters, "
                                       "adjacency, claim, sampling sites with cost coefficients, alignment shifts and "
                                       "the Lemma 1 obligations that `align verify` will discharge. Proves nothing.")
    check.add_argument("files", nargs="+", metavar="FILE.dp")
    check.add_argument("--output-format", choices=FORMATS, default="full",
                       help="full (default): summaries and diagnostics with source carets; concise: one line each; "
                            "json: one JSON document on stdout")
    explain = sub.add_parser("explain", help="explain a diagnostic code")
    explain.add_argument("code", metavar="CODE")
    verify = sub.add_parser("verify", help="prove ε-DP by Lemma 1 (or the R²DP rule), or refute an obligation",
                            description="Discharge every obligation of each mechanism with z3 and sympy, with the "
                                        "parameters symbolic as `requires` allows; print one line per obligation "
                                        "and the verdict. Exit 0 when everything is proved for every input, 1 when "
                                        "something is refuted, 3 when nothing is refuted but something is unknown or "
                                        "only bounded (proved for lengths <= N; see --accept-bounded).")
    verify.add_argument("files", nargs="+", metavar="FILE.dp")
    verify.add_argument("--output-format", choices=FORMATS, default="full",
                        help="full (default), concise (one line per mechanism) or json (one document on stdout)")
    verify.add_argument("--max-length", type=int, default=DEFAULT_MAX_LENGTH, metavar="N",
                        help=f"the bounded check covers every length 0..N of each list parameter (default "
                             f"{DEFAULT_MAX_LENGTH}); a proof for every length needs the induction")
    verify.add_argument("--timeout", type=float, default=Limits.timeout_ms / 1000, metavar="SECONDS",
                        help=f"wall-clock safety net of each solver query (default {Limits.timeout_ms // 1000}); the "
                             "limit that decides is z3's deterministic resource limit (rlimit "
                             f"{Limits.rlimit:,}), so verdicts do not depend on the machine's speed or load")
    verify.add_argument("--accept-bounded", action="store_true",
                        help="exit 0 when every obligation is proved or bounded (proved only for lengths <= N): "
                             "by default a bounded verdict exits 3, because it is not a proof for longer inputs")
    verify.add_argument("--counterexample", metavar="FILE.json",
                        help="write the first counterexample found, in the format `align run --noise-file` replays")
    verify.add_argument("--confirm", action="store_true",
                        help="when an obligation is refuted, run `align test` on the counterexample's input pair "
                             "(and StatDP's patterns) to tell a broken proof from a broken mechanism")
    verify.add_argument("--confirm-samples", type=int, default=64_000, metavar="N",
                        help="sample budget of each --confirm test (default 64000)")
    from .interp.options import DESCRIPTION as RUN_DESCRIPTION
    from .interp.options import add_run_arguments

    add_run_arguments(sub.add_parser("run", help="run a mechanism: sample it, replay noise, test its alignment",
                                     description=RUN_DESCRIPTION))
    from .stats.command import DESCRIPTION as TEST_DESCRIPTION
    from .stats.command import add_test_arguments

    add_test_arguments(sub.add_parser("test", help="search for a privacy violation by likelihood-ratio tests",
                                      description=TEST_DESCRIPTION))
    return parser


def _load(path: str, fmt: str, stderr: TextIO, documents: list) -> ResolvedSpec | None:
    """Read, parse and resolve one file; on errors print them (or add them to the JSON documents)."""
    source: Source | None = None
    try:
        source = read_source(path)
        return resolve(parse_source(source))
    except SpecError as error:
        if fmt == "json":
            documents.append({"path": path, "ok": False, "mechanisms": [],
                              "diagnostics": [diagnostic_json(d) for d in error.diagnostics]})
        style = Style.for_stream(stderr)
        for d in error.diagnostics:
            if fmt == "full":
                stderr.write(render_diagnostic(d, source, style) + "\n\n")
            elif fmt == "concise":
                stderr.write(diagnostic_line(d, style) + "\n")
        return None


def _check(files: Sequence[str], fmt: str, stdout: TextIO, stderr: TextIO) -> int:
    out_style = Style.for_stream(stdout)
    status = ExitCode.OK
    documents: list = []
    for path in files:
        spec = _load(path, fmt, stderr, documents)
        if spec is None:
            status = ExitCode.ERROR
            continue
        if fmt == "json":
            documents.append({"path": path, "ok": True, "diagnostics": [],
                              "mechanisms": [mechanism_json(m) for m in spec.mechanisms]})
        for mech in spec.mechanisms:
            if fmt == "full":
                stdout.write(mechanism_text(mech, out_style) + "\n\n")
            elif fmt == "concise":
                stdout.write(mechanism_concise(mech) + "\n")
    if fmt == "json":
        json.dump({"command": "check", "files": documents, "exit_code": int(status)}, stdout, indent=2)
        stdout.write("\n")
    return status


def _verify(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from .checker.verify import Options, overall_scope, overall_status, verify_mechanism
    from .status import Status

    if not 1 <= args.max_length <= MAX_BOUNDED_LENGTH:
        stderr.write(f"align: error[usage]: --max-length must be between 1 and {MAX_BOUNDED_LENGTH}\n")
        return ExitCode.ERROR
    options = Options(max_length=args.max_length, limits=Limits(timeout_ms=max(1, int(args.timeout * 1000))))
    out_style = Style.for_stream(stdout)
    documents: list = []
    statuses: list[Status] = []
    errors = False
    first_counterexample = None
    for path in args.files:
        spec = _load(path, args.output_format, stderr, documents)
        if spec is None:
            errors = True
            continue
        mechanisms = []
        for mech in spec.mechanisms:
            verdicts = verify_mechanism(mech, options)
            status = overall_status(verdicts)
            scope = overall_scope(verdicts)
            statuses.append(status)
            if first_counterexample is None:
                first_counterexample = next((v.counterexample for v in verdicts if v.status == "refuted"
                                             and v.counterexample is not None and "args" in v.counterexample), None)
            confirmation = _confirm(path, mech, verdicts, args.confirm_samples) \
                if args.confirm and status == "refuted" else None
            if args.output_format == "full":
                stdout.write(verdicts_text(mech, verdicts, status, scope, out_style) + "\n")
                if confirmation is not None:
                    stdout.write(f"  empirical    {confirmation['text']}\n")
                stdout.write("\n")
            elif args.output_format == "concise":
                stdout.write(verdicts_concise(mech, verdicts, status, scope) +
                             (f" ({confirmation['text']})" if confirmation else "") + "\n")
            document = verdicts_json(mech, verdicts, status, scope)
            if confirmation is not None:
                document["confirm"] = confirmation
            mechanisms.append(document)
        if args.output_format == "json":
            documents.append({"path": path, "ok": True, "diagnostics": [], "mechanisms": mechanisms})
    # Bounded is not proved: it exits like unknown (3) unless the user accepts bounded results.
    worst = Status.merge(statuses)
    code = ExitCode.ERROR if errors else ExitCode.REFUTED if worst == Status.REFUTED else \
        ExitCode.UNKNOWN if worst == Status.UNKNOWN or (worst == Status.BOUNDED and not args.accept_bounded) \
        else ExitCode.OK
    if args.counterexample:
        if first_counterexample is None:
            stderr.write(f"align: no counterexample to write to {args.counterexample}\n")
        else:
            try:
                with open(args.counterexample, "w", encoding="utf-8") as handle:
                    json.dump(first_counterexample, handle, indent=2)
                    handle.write("\n")
            except (OSError, ValueError) as error:  # no such directory, a directory, permission denied, a NUL
                reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
                stderr.write(diagnostic_line(diag("write-error", None, path=args.counterexample, reason=reason),
                                             Style.for_stream(stderr)) + "\n")
                code = ExitCode.ERROR
    if args.output_format == "json":
        json.dump({"command": "verify", "files": documents, "exit_code": int(code)}, stdout, indent=2, default=str)
        stdout.write("\n")
    return code


def _confirm(path: str, mech, verdicts: list, samples: int) -> dict:
    """`align verify --confirm`: run the likelihood-ratio test on a refuted obligation's counterexample pair."""
    from .stats.lrtest import SpecRef, counterexample_pair, search

    cex = next((v.counterexample for v in verdicts if v.status == "refuted" and v.counterexample
                and v.counterexample.get("args")), None)
    if cex is None:
        return {"violation": None, "text": "no counterexample pair to test"}
    public, pair = counterexample_pair(mech, cex)
    # StatDP's patterns at a useful length, besides the counterexample's own (often minimal) pair.
    length = max(5, max((len(v) for v in pair.d.values() if isinstance(v, list)), default=1))
    try:
        result = search(SpecRef(path, mech.name), public, length=length, samples=samples, extra_pairs=[pair])
    except SpecError as error:
        return {"violation": None, "text": "not tested: " + "; ".join(d.message for d in error.diagnostics)}
    # the witness decided (its bound >= its claim, the same exact test as adjusted p <= alpha); the strongest
    # bound is over the findings that reject, so it is >= the claim too (align/stats/lrtest.py, Result)
    best = result.witness
    args_text = ", ".join(f"{k} = {v}" for k, v in public.items())
    if result.violation and best is not None:
        strongest = result.strongest
        infinite = strongest.epsilon_bound == float("inf")
        if infinite:
            bound = ("the true ε is ∞: an output event seen on D is proved impossible on D' "
                     f"({strongest.event.text})")
        else:
            bound = (f"simultaneous {1 - result.alpha:.0%} lower confidence bound on the true ε, from the same "
                     f"exact test inverted: {strongest.epsilon_lower_bound:.3g}")
        return {"violation": True, "p": best.adjusted_p, "samples": result.samples, "epsilon_infinite": infinite,
                "epsilon_lower_bound": strongest.epsilon_lower_bound, "claimed_epsilon": best.eps,
                "text": f"privacy violation confirmed at {args_text}: P[M(D) in E] > e^ε P[M(D') in E] for the "
                        f"claim ε = {best.eps:.3g} (adjusted p = {best.adjusted_p:.3g}; {bound})"}
    smallest = best.adjusted_p if best is not None else 1.0
    return {"violation": False, "samples": result.samples, "smallest_p": smallest,
            "text": f"the alignment fails, but no violation was found with {result.samples} samples at "
                    f"{args_text} (smallest adjusted p = {smallest:.3g})"}


def _explain(code: str, stdout: TextIO, stderr: TextIO) -> int:
    entry = CODES.get(code)
    if entry is None:
        stderr.write(f"align: error[usage]: no diagnostic code `{code}`\n")
        return ExitCode.ERROR
    stdout.write(f"{entry.name}: {entry.explain()}\n")
    return ExitCode.OK


def main(argv: Sequence[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Run the command line; returns the exit code instead of exiting (the console script exits with it)."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        args = _build_parser(stderr).parse_args(argv)
        if args.command == "check":
            return _check(args.files, args.output_format, stdout, stderr)
        if args.command == "explain":
            return _explain(args.code, stdout, stderr)
        if args.command == "verify":
            return _verify(args, stdout, stderr)
        if args.command == "run":
            from .interp.command import run_command  # numpy and scipy load only for `run`

            return run_command(args, stdout, stderr)
        if args.command == "test":
            from .stats.command import test_command  # numpy and scipy load only for `test`

            return test_command(args, stdout, stderr)
        raise AssertionError(f"unhandled command {args.command}")
    except SystemExit as exit_:
        return int(exit_.code) if isinstance(exit_.code, int) else ExitCode.ERROR
    except KeyboardInterrupt:
        stderr.write("align: interrupted\n")
        return ExitCode.ERROR
    except Exception as error:  # the promised last line of defence: no traceback reaches the user
        d = diag("internal-error", None, error=f"{type(error).__name__}: {error}")
        stderr.write(diagnostic_line(d, Style.for_stream(stderr)) + "\n")
        return ExitCode.ERROR


def run() -> None:
    """Console-script entry point."""
    # Die quietly when a reader such as `head` closes stdout early, as other Unix tools do.
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
