"""Renderers (results -> output): one class per output format, each rendering every command's results.

`--output-format NAME` on every subcommand picks `RENDERERS[NAME]`. A renderer receives typed results
(`align.results`, the diagnostics of a file that did not load, the interpreter's reports) as the command
produces them, writes what it can at once, and `finish` writes what it kept (a JSON document is written
whole). Adding a format is adding a module here with a `Renderer` subclass (base.py) and one line in
`RENDERERS`: mypy refuses a subclass that leaves out a method (the methods are abstract), so a new result type cannot
be forgotten by a format. Nothing here decides anything.
"""

from __future__ import annotations

from typing import TextIO

from .base import FilesRenderer, Project, Renderer
from .concise import ConciseRenderer
from .github import GithubRenderer
from .json import JsonRenderer
from .sarif import SarifRenderer
from .text import TextRenderer

__all__ = ["ALIASES", "FORMATS", "RENDERERS", "FilesRenderer", "Project", "Renderer"]

RENDERERS: dict[str, type[Renderer]] = {
    r.name: r for r in (TextRenderer, ConciseRenderer, JsonRenderer, SarifRenderer, GithubRenderer)}
"""Every output format by its `--output-format` name."""
FORMATS: tuple[str, ...] = tuple(RENDERERS)
ALIASES = {"full": "text"}
"""Older names still accepted (`full` was the text format of `check` and `verify`)."""


def renderer(name: str, command: str, stdout: TextIO, stderr: TextIO, project: Project | None = None) -> Renderer:
    return RENDERERS[ALIASES.get(name, name)](command, stdout, stderr, project)
