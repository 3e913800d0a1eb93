"""Renderer (GitHub Actions): workflow commands that annotate the pull request's files.

`::error file=F,line=L,col=C,endLine=..,endColumn=..,title=T::message` for every refuted obligation and every
error diagnostic, `::warning ...` for every unknown or only bounded obligation (and warning diagnostic), at
the obligation's span; and one plain summary line per mechanism for the log. Values are escaped as the
workflow-command syntax requires (`%`, CR and LF everywhere; `:` and `,` in properties too).

A pull request names the files, so every line this format prints starts with align's own text (`::error `,
`::warning `, `align: `), never with a path: a spec named `::stop-commands::TOKEN.dp` or with a line break in
its name cannot start a workflow command of its own. Messages are `visible` (control characters escaped, no
`##[`) before the workflow escaping, and so is the `file` property: a name without control characters is
kept as it is (escaped for the property), so that the annotation lands on that file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..diagnostics import Diagnostic, Severity
from ..files import project_path
from ..span import Source, Span, visible
from .base import FilesRenderer
from .common import FINDING_LEVELS, finding_lines

if TYPE_CHECKING:
    from ..results import FileResult



def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(level: str, span: Span | None, path: str, title: str, message: str, root: Path) -> str:
    """One workflow command, located at `span` (at the file alone when there is none); the file as a path from
    the project's root (GitHub resolves it from the checkout's top, whatever directory align ran in)."""
    where = span.path if span is not None else path
    props = {"file": visible(project_path(where, root) or os.path.abspath(where))}
    if span is not None:
        props.update(line=str(span.line), col=str(span.column), endLine=str(span.end_line),
                     endColumn=str(span.end_column))
    props["title"] = visible(title)
    text = "\n".join(visible(line) for line in message.split("\n"))
    return f"::{level} " + ",".join(f"{k}={escape_property(v)}" for k, v in props.items()) + f"::{escape_data(text)}"


class GithubRenderer(FilesRenderer):
    name = "github"
    description = "GitHub Actions workflow commands (check, verify): annotations on the changed files"

    def _diagnostics(self, path: str, diagnostics: Sequence[Diagnostic]) -> None:
        for d in diagnostics:
            level = "error" if d.severity is Severity.ERROR else "warning"
            self.stdout.write(command(level, d.span, path, f"align: {d.code}", d.message, self.project.root) + "\n")

    def checked_file(self, file: FileResult) -> None:
        self._diagnostics(file.path, file.diagnostics)

    def verified_file(self, file: FileResult) -> None:
        self._diagnostics(file.path, file.diagnostics)
        for m in file.verified:
            for v in m.verdicts:
                if v.status in FINDING_LEVELS:
                    title = f"align: {m.mechanism.name} {v.obligation.name} {v.status}"
                    self.stdout.write(command(FINDING_LEVELS[v.status], v.obligation.span, file.path, title,
                                              "\n".join(finding_lines(v)), self.project.root) + "\n")
            scope = f" ({m.scope})" if m.scope else ""
            where = m.mechanism.node.name_span
            gate = f"; {m.acceptance}" if m.acceptance else ""
            self.stdout.write(f"align: mechanism {m.mechanism.name} ({where}): {m.status}{scope}{gate}\n")

    def errors(self, path: str | None, source: Source | None, diagnostics: Sequence[Diagnostic]) -> None:
        self._diagnostics(path or "", diagnostics)
