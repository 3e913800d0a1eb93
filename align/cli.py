"""The `align` command line: parse arguments, run the stages, print, and return a documented exit code.

Exit codes (diagnostics.ExitCode): 0 success/proved, 1 refuted, 2 usage/parse/type/internal error,
3 unknown. Machine output (`--output-format json`) goes to stdout; diagnostics and progress to stderr.
An unexpected exception never escapes as a traceback: it becomes an `internal-error` diagnostic and exit 2.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from typing import Sequence, TextIO

from . import __version__
from .diagnostics import CODES, ExitCode, SpecError, diag
from .parse import parse_source, read_source
from .report import (FORMATS, Style, diagnostic_json, diagnostic_line, mechanism_concise, mechanism_json,
                     mechanism_text, render_diagnostic)
from .resolve import resolve
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
                     epilog="Exit codes: 0 success/proved, 1 refuted, 2 error, 3 unknown.")
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
    from .interp.options import DESCRIPTION as RUN_DESCRIPTION, add_run_arguments

    add_run_arguments(sub.add_parser("run", help="run a mechanism: sample it, replay noise, test its alignment",
                                     description=RUN_DESCRIPTION))
    return parser


def _check(files: Sequence[str], fmt: str, stdout: TextIO, stderr: TextIO) -> int:
    err_style, out_style = Style.for_stream(stderr), Style.for_stream(stdout)
    status = ExitCode.OK
    documents = []
    for path in files:
        source: Source | None = None
        try:
            source = read_source(path)
            spec = resolve(parse_source(source))
        except SpecError as error:
            status = ExitCode.ERROR
            if fmt == "json":
                documents.append({"path": path, "ok": False, "mechanisms": [],
                                  "diagnostics": [diagnostic_json(d) for d in error.diagnostics]})
            for d in error.diagnostics:
                if fmt == "full":
                    stderr.write(render_diagnostic(d, source, err_style) + "\n\n")
                elif fmt == "concise":
                    stderr.write(diagnostic_line(d, err_style) + "\n")
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


def _explain(code: str, stdout: TextIO, stderr: TextIO) -> int:
    entry = CODES.get(code)
    if entry is None:
        stderr.write(f"align: error[usage]: no diagnostic code `{code}`\n")
        return ExitCode.ERROR
    stdout.write(f"{entry.name}: {entry.explanation}\n")
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
        if args.command == "run":
            from .interp.command import run_command  # numpy and scipy load only for `run`

            return run_command(args, stdout, stderr)
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
