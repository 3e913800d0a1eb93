"""Renderer (GitHub Actions): workflow commands that annotate the pull request's files.

`::error file=F,line=L,col=C,endLine=..,endColumn=..,title=T::message` for every refuted obligation and every
error diagnostic, `::warning ...` for every unknown or only bounded obligation (and warning diagnostic), at
the obligation's span; and one plain summary line per mechanism for the log. Values are escaped as the
workflow-command syntax requires (`%`, CR and LF everywhere; `:` and `,` in properties too).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..diagnostics import Diagnostic, Severity
from ..span import Source, Span
from ..status import Status
from . import FilesRenderer

if TYPE_CHECKING:
    from ..results import FileResult

LEVELS: dict[Status, str] = {Status.REFUTED: "error", Status.UNKNOWN: "warning", Status.BOUNDED: "warning"}
"""The verdicts that are annotated, and how."""


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(level: str, span: Span | None, path: str, title: str, message: str) -> str:
    """One workflow command, located at `span` (at the file alone when there is none)."""
    props = {"file": span.path if span is not None else path}
    if span is not None:
        props.update(line=str(span.line), col=str(span.column), endLine=str(span.end_line),
                     endColumn=str(span.end_column))
    props["title"] = title
    return f"::{level} " + ",".join(f"{k}={escape_property(v)}" for k, v in props.items()) + \
        f"::{escape_data(message)}"


class GithubRenderer(FilesRenderer):
    name = "github"
    description = "GitHub Actions workflow commands (check, verify): annotations on the changed files"

    def _diagnostics(self, path: str, diagnostics: Sequence[Diagnostic]) -> None:
        for d in diagnostics:
            level = "error" if d.severity is Severity.ERROR else "warning"
            self.stdout.write(command(level, d.span, path, f"align: {d.code}", d.message) + "\n")

    def checked_file(self, file: FileResult) -> None:
        self._diagnostics(file.path, file.diagnostics)

    def verified_file(self, file: FileResult) -> None:
        from .text import counterexample_lines

        self._diagnostics(file.path, file.diagnostics)
        for m in file.verified:
            for v in m.verdicts:
                if v.status not in LEVELS:
                    continue
                o = v.obligation
                subject = f"{o.id}({o.site})" if o.site else str(o.id)
                scope = f" ({v.scope})" if v.scope else ""
                lines = [f"{o.title}: {v.status}{scope}" + (f": {v.reason}" if v.reason else "")]
                if v.counterexample is not None:
                    lines += counterexample_lines(v.counterexample)
                title = f"align: {m.mechanism.name} {subject} {v.status}"
                self.stdout.write(command(LEVELS[v.status], o.span, file.path, title, "\n".join(lines)) + "\n")
            scope = f" ({m.scope})" if m.scope else ""
            self.stdout.write(f"{m.mechanism.node.name_span}: mechanism {m.mechanism.name}: {m.status}{scope}\n")

    def errors(self, path: str | None, source: Source | None, diagnostics: Sequence[Diagnostic]) -> None:
        self._diagnostics(path or "", diagnostics)
