"""Report (Markdown): GitHub-flavoured Markdown, formulas as `$LaTeX$` (rendered by GitHub, Jupyter, pandoc).

A pull request from a stranger controls the spec's text (its comments are in the listing), its file name and
perhaps the report's, and Markdown renderers pass HTML through: every string that is not the writer's own markup
goes through one function per context, so that it renders as the text it is and never as an element, an
attribute or a link:

- `_escape`, inline text (prose, headings, table cells, captions, image descriptions): a backslash before each
  character that can start markup inside a line (``\\ ` * _ [ ] < | $ ~ & #``: emphasis, code, links and
  images, HTML and autolinks, table cells, math, strikethrough, entities; `>` quotes only at a line's start),
  line breaks as spaces (no new block can start: every block starts with the report's own words or markup),
  control characters as the escapes of diagnostics (`\\x1b`, `span.visible`);
- `_code`, a code span: a fence of one backtick more than the longest run of backticks in the text (CommonMark:
  nothing inside closes it), padded with a space where the text starts or ends with a backtick or both ends are
  spaces (what CommonMark strips); a
  `|` is escaped inside a table cell only (GitHub ends the cell at it even in code; elsewhere `\\|` would show);
- `_fence`, the listing's code block: a fence longer than any run of backticks in its lines;
- `_destination`, a link destination (a figure's file name): percent-encoded (RFC 3986) except for the
  unreserved characters. The names are made of ASCII letters, digits, `-` and `_` anyway
  (`document.figure_name`).

Formulas are sympy's LaTeX of the spec's expressions, whose names are identifiers; a `|` in them is `\\vert`.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from ..span import visible
from .document import (
    Code,
    DisplayMath,
    Figure,
    Formula,
    Heading,
    Items,
    Listing,
    Paragraph,
    Table,
    Text,
    Tone,
    Writer,
)
from .math import latex, relation_latex

_TONE_MARK = {Tone.GOOD: "✅ ", Tone.WARN: "⚠️ ", Tone.BAD: "❌ ", Tone.MUTED: "", Tone.PLAIN: ""}
_MARKUP = re.compile(r"([\\`*_\[\]<|$~&#])")
_BACKTICKS = re.compile(r"`+")


def _plain(text: str) -> str:
    """One line of visible characters: line breaks as spaces, control characters as escapes."""
    return visible(text.replace("\r\n", " ").replace("\n", " "), tab="    ")


def _escape(text: str) -> str:
    return _MARKUP.sub(r"\\\1", _plain(text))


def _longest_backticks(text: str) -> int:
    return max((len(run) for run in _BACKTICKS.findall(text)), default=0)


def _code(text: str, in_cell: bool = False) -> str:
    text = _plain(text)
    if in_cell:
        text = text.replace("|", "\\|")
    fence = "`" * (_longest_backticks(text) + 1)
    # CommonMark strips one space from each end when both ends have one; a backtick at an end would join the fence
    edge = text[:1] == "`" or text[-1:] == "`" or (text[:1] == text[-1:] == " " and text.strip(" ") != "")
    pad = " " if edge else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _fence(body: str) -> str:
    return "`" * max(3, _longest_backticks(body) + 1)


def _destination(name: str) -> str:
    return quote(name, safe="")


class MarkdownWriter(Writer):
    name = "md"
    suffix = ".md"
    _in_cell = False
    """Writing a table's cells (where a `|` in code must be escaped)."""

    def page(self, title: str, blocks: list[str]) -> str:
        return "\n\n".join(blocks) + "\n"

    def heading(self, b: Heading) -> str:
        return "#" * b.level + " " + _escape(b.text)

    def paragraph(self, b: Paragraph) -> str:
        text = self.line(b.content)
        return f"> {_TONE_MARK[b.tone]}{text}" if b.tone != Tone.PLAIN else text

    def items(self, b: Items) -> str:
        return "\n".join("- " + self.line(i) for i in b.items)

    def display_math(self, b: DisplayMath) -> str:
        parts = b.printed(latex, relation_latex)
        return "$$\n" + " ".join(parts) + "\n$$"

    def listing(self, b: Listing) -> str:
        width = len(str(b.lines[-1][0])) if b.lines else 1
        body = "\n".join(f"{'>' if number in b.marked else ' '}{number:>{width}}  {_plain(text)}"
                         for number, text in b.lines)
        caption = f"\n\n{_escape(b.caption)} (lines marked `>`)" if b.caption else ""
        fence = _fence(body)
        return f"{fence}\n{body}\n{fence}{caption}"

    def table(self, b: Table) -> str:
        def cells(values: list[str]) -> str:
            return "| " + " | ".join(v.replace("\n", " ") or " " for v in values) + " |"

        lines = [cells([_escape(h) for h in b.header]), "|" + "---|" * len(b.header)]
        self._in_cell = True
        for r in b.rows:
            values = [_TONE_MARK[c.tone] + self.line(c.content) for c in r.cells]
            if r.marked:
                values[0] = "**→** " + values[0]
            lines.append(cells(values))
        self._in_cell = False
        caption = f"\n\n{self._caption(b.caption)}" if b.caption else ""
        return "\n".join(lines) + caption

    @staticmethod
    def _caption(text: str) -> str:
        return "*" + _escape(text) + "*"

    def figure(self, b: Figure) -> str:
        name = self.figure_file(b)
        if name is None:
            return self._caption(b.caption + " (the figure is written beside the report with -o FILE)")
        return f"![{_escape(b.alt)}]({_destination(name)})\n\n{self._caption(b.caption)}"

    def text(self, i: Text) -> str:
        text = _escape(i.text)
        return f"**{text}**" if i.strong and text.strip() else text

    def code(self, i: Code) -> str:
        return _code(i.text, self._in_cell)

    def formula(self, i: Formula) -> str:
        return "$" + latex(i.expr).replace("|", "\\vert ") + "$"  # a bare | would end a table cell
