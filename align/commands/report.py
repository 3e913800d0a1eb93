"""`align report`: verify one mechanism and write its proof (or refutation) as a course would: Markdown, HTML
or LaTeX (`align.report`).

Files: the report goes to the file -o names (created, or replaced: the user's choice). Markdown and LaTeX
reports have their figures beside it, `<stem>-1.png` ... (`document.figure_name`: the stem reduced to ASCII
letters, digits, `-` and `_`); those names the user did not choose, so a figure goes only to a new file:
created exclusively (`O_CREAT | O_EXCL | O_NOFOLLOW`), never through a symbolic link nor over a file that
exists, which refuses the report as a whole with a `write-error` naming it. The report is opened before any
figure is written, and nothing is left behind when a write fails. HTML embeds its figures.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
from dataclasses import replace

from ..config import NONE as NO_CONFIG
from ..diagnostics import ExitCode, SpecError, diag, os_reason
from ..files import open_output
from ..gate import acceptance, judge
from ..pipeline import read, resolve_source, select, verify
from ..render import Renderer
from ..results import exit_code
from ..status import Status
from . import UsageError
from .verify import add_proof_arguments, confirm, proof_options

DESCRIPTION = ("Verify one mechanism (as `align verify`) and write the proof in the structure of Lemma 1: the "
               "listing, the parameters and neighbouring inputs, the noise sites with their cost coefficients, "
               "shifts and cost terms, the cost sum against ε, the acyclic order, the loop invariant, each "
               "obligation and the scope; for a refuted obligation, the counterexample as two runs side by side "
               "with the first divergence marked. HTML is one self-contained page that works offline. The exit "
               "code is `align verify`'s (0 proved, 1 refuted, 3 unknown or bounded).")

FORMAT_CHOICES = ("md", "html", "tex")
"""`align.report.FORMATS`' names (not imported here: it loads sympy, and `--help` must stay fast)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE.dp")
    parser.add_argument("--mechanism", metavar="NAME", help="the mechanism to report (when the file has several)")
    parser.add_argument("--format", dest="report_format", choices=FORMAT_CHOICES, default=None,
                        help="md (GitHub Markdown with $LaTeX$), html (self-contained, MathML) or tex (a LaTeX "
                             "article); default: from the suffix of -o, else md")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write the report here (figures of md and tex go beside it as FILE-1.png ..., only to "
                             "new files: docs/report.md); default: standard output")
    add_proof_arguments(parser)  # --max-length, --timeout, --confirm, --confirm-samples, as `align verify`


def _format(args: argparse.Namespace) -> str:
    """--format, else the writer whose suffix -o has (.htm and .markdown too), else Markdown."""
    # lazy: loads sympy only when this runs (start-up; tests/test_layers.py)
    from ..report import FORMATS

    if args.report_format is not None:
        return str(args.report_format)
    suffix = os.path.splitext(args.output or "")[1].lower()
    by_suffix = {w.suffix: name for name, w in FORMATS.items()} | {".htm": "html", ".markdown": "md"}
    return by_suffix.get(suffix, "md")


def execute(args: argparse.Namespace, renderer: Renderer) -> int:
    # lazy: loads sympy only when this runs (start-up; tests/test_layers.py)
    from ..report import render

    config = getattr(args, "config", NO_CONFIG)
    options = proof_options(args)
    fmt = _format(args)
    if args.output == "":
        raise UsageError("-o needs a file name")
    source = None
    try:
        if args.output is not None:
            _check_output(args.output)  # before the proof: a report that cannot be written is not worth one
        source = read(args.file)
        mech = select(resolve_source(source), args.mechanism, args.file)
    except SpecError as error:
        renderer.errors(args.file, source, error.diagnostics)
        return ExitCode.ERROR
    result = verify(mech, options, source=source)  # no alignment written: the synthesised one's proof
    if args.confirm and result.status == Status.REFUTED:
        result = replace(result, confirmation=confirm(result, args.confirm_samples))
    stem = os.path.splitext(args.output)[0] if args.output else None
    text, figures = render(result, fmt, source, args.file, figure_stem=os.path.basename(stem) if stem else None)
    if args.output is None:
        renderer.stdout.write(text)
    else:
        try:
            write_report(args.output, text, figures)
        except SpecError as error:
            renderer.errors(None, None, error.diagnostics)
            return ExitCode.ERROR
    accepted, _ = judge(result, acceptance(args.file, source, None, config))
    return exit_code(result.status, accepted)


def _write_error(path: str, error: OSError | ValueError | str) -> SpecError:
    reason = error if isinstance(error, str) else os_reason(error)
    return SpecError([diag("write-error", None, path=path, reason=reason)])


def _check_output(path: str) -> None:
    """-o names a file in a folder that exists (checked again when it is written)."""
    if os.path.isdir(path):
        raise _write_error(path, "it is a directory")
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise _write_error(path, f"no folder {folder}")


_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
"""A figure's file: created here or not at all (O_EXCL also refuses a symbolic link, dangling or not)."""


def write_report(output: str, text: str, figures: dict[str, bytes]) -> None:
    """Write the report to `output` and each figure, by name, to a new file beside it. When one cannot be
    written: `SpecError` (write-error, naming it), and the figures written so far are removed, and the report
    too if it did not exist (one that existed is left as it was unless its own write failed)."""
    folder = os.path.dirname(output)
    existed = os.path.lexists(output)
    try:
        report = open_output(output, truncate=False)  # it can be written; not emptied yet (closed below)
    except (OSError, ValueError) as error:
        raise _write_error(output, error) from None
    created: list[str] = []
    current = output
    try:
        with report:
            for name, data in figures.items():
                current = os.path.join(folder, name)
                fd = os.open(current, _NEW_FILE, 0o666)
                created.append(current)
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
            current = output
            if stat.S_ISREG(os.fstat(report.fileno()).st_mode):
                report.truncate(0)  # appends now start at 0 (a pipe or /dev/stdout has nothing to empty)
            report.write(text.encode("utf-8"))
    except (OSError, ValueError) as error:
        for path in created if existed else [*created, output]:
            with contextlib.suppress(OSError):
                os.unlink(path)
        if isinstance(error, FileExistsError) and current != output:
            raise _write_error(current, "a file of that name exists, and align report writes its figures only "
                                        "to new files: move it away, or choose another -o") from None
        raise _write_error(current, error) from None
