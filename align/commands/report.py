"""`align report`: verify one mechanism and write its proof (or refutation) as a course would: Markdown, HTML
or LaTeX (`align.report`)."""

from __future__ import annotations

import argparse
import os

from ..diagnostics import ExitCode, SpecError, diag, os_reason
from ..render import Renderer
from .verify import add_proof_arguments

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
                        help="write the report here (figures of md and tex go beside it as FILE-1.png ...); "
                             "default: standard output")
    add_proof_arguments(parser)  # --max-length, --timeout, --confirm, --confirm-samples, as `align verify`


def _format(args: argparse.Namespace) -> str:
    """--format, else the writer whose suffix -o has (.htm and .markdown too), else Markdown."""
    from ..report import FORMATS

    if args.report_format is not None:
        return str(args.report_format)
    suffix = os.path.splitext(args.output or "")[1].lower()
    by_suffix = {w.suffix: name for name, w in FORMATS.items()} | {".htm": "html", ".markdown": "md"}
    return by_suffix.get(suffix, "md")


def execute(args: argparse.Namespace, renderer: Renderer) -> int:
    from dataclasses import replace

    from ..config import NONE as NO_CONFIG
    from ..pipeline import read, resolve_source, select, verify
    from ..report import render
    from ..results import exit_code
    from ..status import Status
    from .verify import confirm, proof_options

    config = getattr(args, "config", NO_CONFIG)
    options = proof_options(args)
    fmt = _format(args)
    source = None
    try:
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
            folder = os.path.dirname(args.output)
            for name, data in figures.items():
                with open(os.path.join(folder, name), "wb") as f:
                    f.write(data)
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text)
        except (OSError, ValueError) as error:
            renderer.errors(None, None, [diag("write-error", None, path=args.output, reason=os_reason(error))])
            return ExitCode.ERROR
    accept_bounded = bool(config.accept_bounded)
    return exit_code(result.status, accept_bounded)
