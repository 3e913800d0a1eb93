"""Report (HTML): one self-contained page that works offline: inline CSS, formulas as MathML (rendered by the
browser, no script), figures as inline PNG (`data:` URLs). Nothing is fetched: no script, font or style sheet
from the network.

A pull request from a stranger controls the spec's text (its comments are in the listing) and its file name:
every string that is not the writer's own markup goes through `_e`, for element content and double-quoted
attribute values alike: `& < > " '` as character references (`html.escape`), control characters and Unicode
overrides as the escapes of diagnostics (`\\x1b`, `span.visible`). Formulas are sympy's MathML of the spec's
expressions (names are identifiers; the printer writes its own text through the XML DOM, which escapes it);
figures are base64 in a `data:` URL. So nothing of the spec's becomes an element, an attribute or a script.
"""

from __future__ import annotations

import base64
import html

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
from .math import mathml, relation_mathml

STYLE = """
.align-report { --good: #1a7f37; --warn: #9a6700; --bad: #cf222e; --muted: #57606a; --mark: #fff1c2;
  --line: #d0d7de; --code: #f6f8fa; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: #1f2328; max-width: 72rem; }
body > .align-report { margin: 2rem auto; padding: 0 1.5rem; }
.align-report h1 { font-size: 1.8rem; border-bottom: 1px solid var(--line); padding-bottom: .3rem; }
.align-report h2 { font-size: 1.35rem; margin-top: 2rem; border-bottom: 1px solid var(--line);
  padding-bottom: .2rem; }
.align-report code, .align-report pre { font: 14px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.align-report code { background: var(--code); padding: .1em .3em; border-radius: 4px; }
.align-report pre.listing { background: var(--code); border: 1px solid var(--line); border-radius: 6px;
  padding: .6rem 0; overflow-x: auto; }
.align-report pre.listing span.ln { display: inline-block; width: 3.5em; padding-right: 1em; text-align: right;
  color: var(--muted); user-select: none; }
.align-report pre.listing div.marked { background: var(--mark); box-shadow: inset 4px 0 var(--bad); }
.align-report table { border: 0; border-collapse: collapse; margin: 1rem 0; }
.align-report th, .align-report td { border: 1px solid var(--line); padding: .3rem .6rem; text-align: left;
  vertical-align: top; }
.align-report th { background: var(--code); }
.align-report tr.marked td { background: var(--mark); }
.align-report tr.marked td:first-child { box-shadow: inset 4px 0 var(--bad); }
.align-report caption { caption-side: bottom; text-align: left; color: var(--muted); font-size: .9rem;
  padding-top: .3rem; }
.align-report .good { color: var(--good); } .align-report .warn { color: var(--warn); }
.align-report .bad { color: var(--bad); } .align-report .muted { color: var(--muted); }
.align-report p.callout { border-left: 4px solid currentColor; padding: .4rem .8rem; background: var(--code); }
.align-report math[display="block"] { margin: 1rem 0; font-size: 1.15rem; }
.align-report figure { margin: 1rem 0; }
.align-report figure img { max-width: 100%; border: 1px solid var(--line); }
.align-report figcaption { color: var(--muted); font-size: .9rem; }
"""

_CLASS = {Tone.GOOD: "good", Tone.WARN: "warn", Tone.BAD: "bad", Tone.MUTED: "muted", Tone.PLAIN: ""}


def _e(text: str) -> str:
    return html.escape(visible(text), quote=True)


class HtmlWriter(Writer):
    name = "html"
    suffix = ".html"

    def __init__(self, figure_stem: str | None = None, fragment: bool = False):
        super().__init__(figure_stem)
        self.fragment = fragment
        """A fragment to embed (a notebook cell): the report's <div> and its scoped <style>, no <html>."""

    def page(self, title: str, blocks: list[str]) -> str:
        body = '<div class="align-report">\n' + "\n".join(blocks) + "\n</div>"
        if self.fragment:
            return f"<style>{STYLE}</style>\n{body}\n"
        return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                "<meta name=\"generator\" content=\"align report\">\n"
                f"<title>{_e(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")

    def heading(self, b: Heading) -> str:
        anchor = f' id="{_e(b.anchor)}"' if b.anchor else ""
        return f"<h{b.level}{anchor}>{_e(b.text)}</h{b.level}>"

    def paragraph(self, b: Paragraph) -> str:
        cls = f' class="callout {_CLASS[b.tone]}"' if b.tone != Tone.PLAIN else ""
        return f"<p{cls}>{self.line(b.content)}</p>"

    def items(self, b: Items) -> str:
        return "<ul>\n" + "\n".join(f"<li>{self.line(i)}</li>" for i in b.items) + "\n</ul>"

    def display_math(self, b: DisplayMath) -> str:
        parts = b.printed(mathml, relation_mathml)
        return f'<math display="block"><mrow>{"".join(parts)}</mrow></math>'

    def listing(self, b: Listing) -> str:
        lines = []
        for number, text in b.lines:
            cls = ' class="marked"' if number in b.marked else ""
            lines.append(f'<div{cls} id="L{number}"><span class="ln">{number}</span>{_e(text)}</div>')
        caption = f'<p class="muted">{_e(b.caption)}</p>' if b.caption else ""
        return f'<pre class="listing">{"".join(lines)}</pre>{caption}'

    def table(self, b: Table) -> str:
        head = "".join(f"<th>{_e(h)}</th>" for h in b.header)
        rows = []
        for r in b.rows:
            cells = "".join(f'<td class="{_CLASS[c.tone]}">{self.line(c.content)}</td>' if c.tone != Tone.PLAIN
                            else f"<td>{self.line(c.content)}</td>" for c in r.cells)
            rows.append(f'<tr class="marked">{cells}</tr>' if r.marked else f"<tr>{cells}</tr>")
        caption = f"<caption>{_e(b.caption)}</caption>" if b.caption else ""
        return (f'<table class="{_e(b.kind)}">{caption}<thead><tr>{head}</tr></thead>\n<tbody>\n'
                + "\n".join(rows) + "\n</tbody></table>")

    def figure(self, b: Figure) -> str:
        data = base64.b64encode(b.png).decode("ascii")
        return (f'<figure><img alt="{_e(b.alt)}" src="data:image/png;base64,{data}">'
                f"<figcaption>{_e(b.caption)}</figcaption></figure>")

    def text(self, i: Text) -> str:
        text = _e(i.text)
        if i.strong:
            text = f"<strong>{text}</strong>"
        return f'<span class="{_CLASS[i.tone]}">{text}</span>' if i.tone != Tone.PLAIN else text

    def code(self, i: Code) -> str:
        return f"<code>{_e(i.text)}</code>"

    def formula(self, i: Formula) -> str:
        return f"<math>{mathml(i.expr)}</math>"
