"""The command line's subcommands: one module per command, one `Command` record per module.

Each module has `add_arguments(parser)` and `execute(args, renderer) -> exit code`, and imports what it
needs (z3, sympy, numpy) inside `execute`: building the parser stays cheap, so `align explain` and `--help`
never load the solvers. `cli.py` builds the parser from `COMMANDS`, adds `--output-format` to each, and runs
the chosen one; adding a command is adding a module and a line here.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module

from ..render import Renderer


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    """One line for `align --help`."""
    module: str
    """The module (in this package) with `DESCRIPTION`, `add_arguments` and `execute`."""

    def load(self) -> tuple[str, Callable[[argparse.ArgumentParser], None],
                            Callable[[argparse.Namespace, Renderer], int]]:
        module = import_module(f"{__name__}.{self.module}")
        return module.DESCRIPTION, module.add_arguments, module.execute


COMMANDS: tuple[Command, ...] = (
    Command("check", "parse and resolve specs; list what a proof must establish", "check"),
    Command("explain", "explain a diagnostic code", "explain"),
    Command("verify", "prove ε-DP by Lemma 1 (or the R²DP rule), or refute an obligation", "verify"),
    Command("run", "run a mechanism: sample it, replay noise, test its alignment", "run"),
    Command("test", "search for a privacy violation by likelihood-ratio tests", "test"),
    Command("report", "write a mechanism's proof or refutation for a course: Markdown, HTML or LaTeX", "report"),
)


class UsageError(Exception):
    """A command-line value the command cannot use: printed as `align: error[usage]: ...`, exit 2."""


def file_name(value: str | None, option: str) -> str | None:
    """The file an option names (None when the option is not given). An empty name is a usage error: `--plot ""`
    (a script's unset variable) would otherwise read as no option at all, and the file silently not written."""
    if value == "":
        raise UsageError(f"{option} needs a file name")
    return value
