"""What Jupyter shows for the Python API's results: the proof report of a `MechanismVerdict`, the search report
of a `TestReport`, the text report of an `ExactReport`, in HTML (a fragment whose style is scoped to it) and in
Markdown.

The results are data (results.py imports no renderer); IPython's display formatters are told about them here,
by type: `align.api` calls `register` on its first result in an IPython kernel (`%load_ext align.report.jupyter`
does the same by hand). `html` and `markdown` are what a cell shows, for a caller that wants the text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..render.text import computed_text
from ..results import ExactReport, MechanismVerdict, TestReport
from . import render, render_fragment
from .html import HtmlWriter
from .markdown import MarkdownWriter
from .search import build


def _exact_markdown(report: ExactReport) -> str:
    return "```text\n" + computed_text(report) + "\n```\n"


HTML: dict[type, Callable[[Any], str]] = {
    MechanismVerdict: render_fragment,
    TestReport: lambda report: HtmlWriter(fragment=True).write(build(report)),
}
"""Result type -> its HTML fragment."""

MARKDOWN: dict[type, Callable[[Any], str]] = {
    MechanismVerdict: lambda result: render(result, "md")[0],
    TestReport: lambda report: MarkdownWriter().write(build(report)),
    ExactReport: _exact_markdown,
}
"""Result type -> its Markdown."""

_FORMATTERS = {"text/html": HTML, "text/markdown": MARKDOWN}


def html(result: Any) -> str | None:
    """What a notebook cell shows as HTML for a result (None for a type with no HTML view)."""
    show = HTML.get(type(result))
    return show(result) if show is not None else None


def markdown(result: Any) -> str | None:
    """What a Markdown front end shows for a result (None for a type with no Markdown view)."""
    show = MARKDOWN.get(type(result))
    return show(result) if show is not None else None


def register(shell: Any) -> None:
    """Teach an IPython shell's display formatters the results' views (idempotent)."""
    formatters = shell.display_formatter.formatters
    for mime, table in _FORMATTERS.items():
        for kind, show in table.items():
            formatters[mime].for_type(kind, show)


def load_ipython_extension(shell: Any) -> None:
    """`%load_ext align.report.jupyter`."""
    register(shell)
