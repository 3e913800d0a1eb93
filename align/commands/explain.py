"""`align explain CODE`: a diagnostic code's explanation, from the registry (`diagnostics.CODES`)."""

from __future__ import annotations

import argparse

from ..diagnostics import CODES, ExitCode
from ..render import Renderer
from . import UsageError

DESCRIPTION = "Print the explanation of a diagnostic code (the codes are listed in docs/language.md)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("code", metavar="CODE")


def execute(args: argparse.Namespace, renderer: Renderer) -> int:
    entry = CODES.get(args.code)
    if entry is None:
        raise UsageError(f"no diagnostic code `{args.code}`")
    renderer.explained(entry)
    return ExitCode.OK
