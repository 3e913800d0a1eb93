"""Reports (`align report`): a verdict written as the proof a course would teach, in Markdown, HTML or LaTeX.

`proof.build` turns a `MechanismVerdict` into a format-neutral `document.Document`; each format is one
`document.Writer` in `FORMATS` (markdown.py, html.py, latex.py). The API's results show the same document in
Jupyter (jupyter.py registers the views with IPython's display formatters). sympy is imported here: keep
`import align.report` out of paths that must start fast (`align explain`, `--help`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .document import Document, Writer
from .html import HtmlWriter
from .latex import LatexWriter
from .markdown import MarkdownWriter

if TYPE_CHECKING:
    from ..results import MechanismVerdict
    from ..span import Source

FORMATS: dict[str, type[Writer]] = {w.name: w for w in (MarkdownWriter, HtmlWriter, LatexWriter)}
"""`--format` value -> writer."""


def document(result: MechanismVerdict, source: Source | None = None, path: str = "") -> Document:
    """The report's document; `source` (default: the result's own, from the Python API) gives the listing."""
    # lazy: loads lark only when this runs (start-up; tests/test_layers.py)
    from .proof import build

    return build(result, source or result.source, path or result.mechanism.node.span.path)


def render(result: MechanismVerdict, fmt: str, source: Source | None = None, path: str = "",
           figure_stem: str | None = None) -> tuple[str, dict[str, bytes]]:
    """The report in one format, and the figure files to write beside it (by name; Markdown and LaTeX only,
    and only with a `figure_stem`)."""
    writer = FORMATS[fmt](figure_stem)
    text = writer.write(document(result, source, path))
    return text, writer.files


def render_fragment(result: MechanismVerdict) -> str:
    """The HTML report as a fragment to embed in a page (a notebook cell): no <html>, styles scoped to it."""
    return HtmlWriter(fragment=True).write(document(result))
