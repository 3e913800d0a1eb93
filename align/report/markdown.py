"""Report (Markdown): GitHub-flavoured Markdown, formulas as `$LaTeX$` (rendered by GitHub, Jupyter, pandoc)."""

from __future__ import annotations

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


def _escape(text: str) -> str:
    for ch in "\\`*_[]<>|$":
        text = text.replace(ch, "\\" + ch)
    return text


class MarkdownWriter(Writer):
    name = "md"
    suffix = ".md"

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
        body = "\n".join(f"{'>' if number in b.marked else ' '}{number:>{width}}  {text}" for number, text in b.lines)
        caption = f"\n\n{_escape(b.caption)} (lines marked `>`)" if b.caption else ""
        return f"```\n{body}\n```{caption}"

    def table(self, b: Table) -> str:
        def cells(values: list[str]) -> str:
            return "| " + " | ".join(v.replace("\n", " ") or " " for v in values) + " |"

        lines = [cells([_escape(h) for h in b.header]), "|" + "---|" * len(b.header)]
        for r in b.rows:
            values = [_TONE_MARK[c.tone] + self.line(c.content) for c in r.cells]
            if r.marked:
                values[0] = "**→** " + values[0]
            lines.append(cells(values))
        caption = f"\n\n{self._caption(b.caption)}" if b.caption else ""
        return "\n".join(lines) + caption

    @staticmethod
    def _caption(text: str) -> str:
        return "*" + _escape(text) + "*"

    def figure(self, b: Figure) -> str:
        name = self.figure_file(b)
        if name is None:
            return self._caption(b.caption + " (the figure is written beside the report with -o FILE)")
        return f"![{_escape(b.alt)}]({name})\n\n{self._caption(b.caption)}"

    def text(self, i: Text) -> str:
        text = _escape(i.text)
        return f"**{text}**" if i.strong and text.strip() else text

    def code(self, i: Code) -> str:
        fence = "``" if "`" in i.text else "`"
        pad = " " if "`" in i.text else ""
        text = i.text.replace("|", "\\|")  # inside a table cell, `|` ends the cell even in code
        return f"{fence}{pad}{text}{pad}{fence}"

    def formula(self, i: Formula) -> str:
        return "$" + latex(i.expr).replace("|", "\\vert ") + "$"  # a bare | would end a table cell
