"""`align check`: parse and resolve each spec and show what a proof must establish (proves nothing)."""

from __future__ import annotations

import argparse

from ..diagnostics import ExitCode
from ..pipeline import check, load_file
from ..render import Renderer
from ..results import FileResult

DESCRIPTION = ("Parse and resolve each spec and print, for each mechanism, its parameters, adjacency, claim, "
               "sampling sites with cost coefficients, alignment shifts and the Lemma 1 obligations that "
               "`align verify` will discharge. Proves nothing.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", metavar="FILE.dp",
                        help="the specs to check (default: the `paths` of the project's configuration, docs/ci.md)")


def execute(args: argparse.Namespace, renderer: Renderer) -> int:
    # lazy: loads tomli only when this runs (start-up; tests/test_layers.py)
    from .verify import spec_files

    status = ExitCode.OK
    for path in spec_files(args):
        loaded = load_file(path)
        if loaded.spec is None:
            status = ExitCode.ERROR
            renderer.checked_file(FileResult(path, loaded.source, loaded.diagnostics))
        else:
            checked = tuple(check(mech) for mech in loaded.spec.mechanisms)
            renderer.checked_file(FileResult(path, loaded.source, loaded.diagnostics, checked=checked))
    return status
