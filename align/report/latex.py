"""Report (LaTeX): a standalone article (`pdflatex report.tex`), standard packages only; formulas from sympy's
LaTeX printer, figures as PNG files beside the .tex (with -o FILE).

A pull request from a stranger controls the spec's text (its comments are in the listing) and its file name, and
a student compiles the report: no text of theirs may leave the place it is printed in, or TeX would run it
(`\\input` a file of the machine into the PDF, `\\openout` a file). So there is no verbatim environment, whose
end marker a comment could hold; every string that is not the writer's own markup goes through one function per
context, each of which turns every character TeX treats specially into a command that prints it:

- `escape`: text in the roman font (prose, headings, table cells, captions). `\\ { } $ & # % _ ^ ~ < > |` become
  `\\textbackslash{}`, `\\{`, ..., `\\^{}`, `$\\sim$` (in the report's prose `~` is the neighbouring relation
  D ~ D'), `\\textless{}` ...: commands of the OT1 encoding that need no extra font.
- `typewriter`: program text in `\\texttt` (code and the listing). The same characters become `{\\char N}`, the
  glyph at their ASCII position in the typewriter font, so `~` prints as a tilde and a backslash as a
  backslash; in the listing, spaces are `~` (kept, and the columns with them).
- both: `^` never reaches TeX with its own meaning, so TeX's `^^5c` notation cannot spell a backslash; a line
  break is a space, so a `%` or a `\\` at a line's end has nothing to act on; control characters (and Unicode
  overrides) are shown as the escapes of diagnostics (`\\x1b`, `span.visible`); Unicode becomes its symbol
  where the report uses one (ε, ≤, →) and `?` otherwise (pdflatex without a Unicode font set-up).
- `typewriter` outside the listing also lets a line break after `/ _ , ; . ( [` (`\\allowbreak`): a long path or
  name in a table cell or a paragraph wraps instead of running into the margin.
- `graphic`: a figure's file name in `\\includegraphics`; the writer only makes names of ASCII letters,
  digits, `-` and `_` (`document.figure_name`), and this refuses any other.

Formulas are sympy's LaTeX of the spec's expressions, whose names are identifiers (letters, digits, `_`): sympy
makes subscripts and Greek letters of them, never a command of the spec's choosing.

Layout (what fits the page): every table is a `longtable` of `p{}` columns whose widths share out the line in
proportion to their contents (`_widths`), so that text wraps inside its column; the listing's lines longer than
the page are cut into rows of `LISTING_WIDTH` characters, each continuation marked `+` in the line-number column
(the typewriter font has one width, so the cut is exact); a formula wider than its line or column is scaled down to
fit (`\\alignfit`), never cut. tests/test_words.py compiles every corpus report and refuses an overfull box.
"""

from __future__ import annotations

import math
import re

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

_ROMAN = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#", "%": r"\%",
          "_": r"\_", "^": r"\^{}", "~": r"$\sim$", "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
          "-": "-{}"}
"""`-` too: the roman font makes `--` an en dash, and `--confirm` is an option."""
_TYPEWRITER = {ch: f"{{\\char{ord(ch)}}}" for ch in "\\{}$&#%_^~<>|`"}
"""The backquote too: cmtt's only ligatures are !` and ?` (¡ and ¿), and a group ends a ligature."""
_UNICODE = {"ε": r"$\varepsilon$", "ψ": r"$\psi$", "φ": r"$\varphi$", "η": r"$\eta$", "Σ": r"$\Sigma$",
            "≤": r"$\le$", "≥": r"$\ge$", "−": "-", "—": "---", "→": r"$\to$", "∞": r"$\infty$", "·": r"$\cdot$",
            "ᵢ": r"$_i$", "₁": r"$_1$", "₂": r"$_2$", "²": r"$^2$", "′": "'", "✓": "", "∼": r"$\sim$",
            "θ": r"$\theta$", "ω": r"$\omega$", "α": r"$\alpha$", "Δ": r"$\Delta$", "≠": r"$\ne$"}
_BREAK_AFTER = frozenset("/_,;.([")
"""Where a line may break inside program text outside the listing (a path, a long name)."""
_COLOUR = {Tone.GOOD: "alignGood", Tone.WARN: "alignWarn", Tone.BAD: "alignBad", Tone.MUTED: "gray"}
_GRAPHIC = re.compile(r"[A-Za-z0-9_-]+\.png")


def _characters(text: str, special: dict[str, str], space: str, breaks: frozenset[str] = frozenset()) -> str:
    out = []
    for ch in visible(text.replace("\r\n", " ").replace("\n", " "), tab="    "):
        if ch in special:
            out.append(special[ch])
        elif ch == " ":
            out.append(space)
        elif ch in _UNICODE:
            out.append(_UNICODE[ch])
        elif " " < ch < "\x7f":
            out.append(ch)
        else:
            out.append("?")  # pdflatex without fonts for it: a visible placeholder, never a compile error
        if ch in breaks:
            out.append("\\allowbreak{}")
    return "".join(out)


def escape(text: str) -> str:
    """Text printed in the roman font, every special character as a command that prints it."""
    return _characters(text, _ROMAN, " ")


def typewriter(text: str, hard_spaces: bool = False) -> str:
    """Program text inside `\\texttt`: every special character as its typewriter glyph (`{\\char92}`); with
    `hard_spaces` (the listing), spaces that TeX neither drops nor merges and no break at all (the writer cuts the
    listing's lines itself); else a line may break at a space or after `_BREAK_AFTER`."""
    if hard_spaces:
        return _characters(text, _TYPEWRITER, "~")
    return _characters(text, _TYPEWRITER, " ", _BREAK_AFTER)


LISTING_WIDTH = 110
"""Characters of a listing row: the small typewriter font's 5.25 pt each, beside the line numbers, fit the
landscape page's line (`LINE_PT`) with room to spare."""
LINE_PT = 681.0
"""The text width of the page (US letter, landscape, 2 cm margins), in TeX points."""
CHARACTER_PT = 6.0
"""About how wide a character of the tables' small text is (a bold header's are the widest)."""
PADDING_PT = 13.0
"""A column's padding (2\\tabcolsep) and rule."""


def _words(parts) -> tuple[str, list[str]]:
    """A cell's text as it prints (about), and what its lines cannot break inside: the words of its text, its
    program text cut where `typewriter` lets it break (a formula may be scaled down to fit, so it counts as a
    short word)."""
    text, words = [], []
    for p in parts:
        if isinstance(p, Formula):
            text.append(str(p.expr))
            words.append("x" * min(len(str(p.expr)), 12))
        elif isinstance(p, Code):
            text.append(p.text)
            words += re.split(r"(?<=[/_,;.(\[])| ", p.text)
        else:
            text.append(p.text)
            words += p.text.split()
    return " ".join(text), words


def _widths(header: tuple[str, ...], rows) -> list[float]:
    """Each column's share of the line (at most 1 in all): a column whose contents fit in an equal share of what
    is left gets what they need, and the others share the rest in proportion to the square root of their
    contents (a long column of reasons would otherwise squeeze its neighbours to a word a line), each at least as
    wide as its longest word."""
    natural, least = [], []
    for k, h in enumerate(header):
        cells = [_words(r.cells[k].content) for r in rows if k < len(r.cells)]
        # a header is bold, a little wider than the cells' text
        length = max([len(text) for text, _ in cells] + [len(h) + 2])
        word = max([len(w) for _, words in cells for w in words] + [len(w) + 1 for w in h.split()] + [1])
        least.append(word * CHARACTER_PT + PADDING_PT)
        natural.append(max(length * CHARACTER_PT + PADDING_PT, least[-1]))
    widths = [0.0] * len(natural)
    open_ = set(range(len(natural)))
    left = LINE_PT
    while open_:
        # the columns that need no more than an equal share, or that an equal share of the rest would make
        # narrower than their longest word, get what they need; then the next round shares what is left
        fair = left / len(open_)
        total = sum(math.sqrt(natural[k]) for k in open_)
        fixed = {k for k in open_ if natural[k] <= fair or least[k] >= left * math.sqrt(natural[k]) / total}
        if not fixed:
            for k in open_:
                widths[k] = left * math.sqrt(natural[k]) / total
            break
        for k in fixed:
            widths[k] = natural[k] if natural[k] <= fair else least[k]
            left -= widths[k]
        open_ -= fixed
    return [w / LINE_PT for w in widths]


def _columns(shares: list[float]) -> str:
    """`p{}` columns of those shares of the line, less their padding and rules, set ragged right."""
    return "|" + "".join(">{\\raggedright\\arraybackslash}"
                         f"p{{\\dimexpr {share:.4f}\\linewidth-2\\tabcolsep-0.8pt\\relax}}|" for share in shares)


def _cut(text: str, width: int) -> list[str]:
    """A listing line in rows of `width` characters (the escapes of control characters counted as printed)."""
    shown = visible(text, tab="    ")
    return [shown[k:k + width] for k in range(0, len(shown), width)] or [""]


def graphic(name: str) -> str:
    """A figure's file name for `\\includegraphics` (made safe where it is made: `document.figure_name`)."""
    if not _GRAPHIC.fullmatch(name):
        raise ValueError(f"the figure name {name} is not one the report makes")
    return name


class LatexWriter(Writer):
    name = "tex"
    suffix = ".tex"

    def page(self, title: str, blocks: list[str]) -> str:
        return ("\\documentclass[11pt]{article}\n\\usepackage[margin=2cm,landscape]{geometry}\n"
                "\\usepackage{amsmath,amssymb}\n\\usepackage[table]{xcolor}\n\\usepackage{graphicx}\n"
                "\\usepackage{longtable,array}\n"
                # a formula wider than the line (or its table column) is scaled down to fit, never cut
                "\\newsavebox{\\alignbox}\\newcommand{\\alignfit}[1]{\\sbox{\\alignbox}{#1}"
                "\\ifdim\\wd\\alignbox>\\linewidth\\resizebox{\\linewidth}{!}{\\usebox{\\alignbox}}"
                "\\else\\usebox{\\alignbox}\\fi}\n"
                "\\definecolor{alignGood}{HTML}{1A7F37}\\definecolor{alignWarn}{HTML}{9A6700}"
                "\\definecolor{alignBad}{HTML}{CF222E}\\definecolor{alignMark}{HTML}{FFF1C2}\n"
                "\\renewcommand{\\labelitemi}{$\\bullet$}\n"  # not \textbullet, whose TS1 font mktexpk would make
                f"\\title{{{escape(title)}}}\n\\date{{}}\n\\begin{{document}}\n\\raggedright\n"
                + "\n\n".join(blocks) + "\n\\end{document}\n")

    def heading(self, b: Heading) -> str:
        command = {1: "section*", 2: "subsection*"}.get(b.level, "subsubsection*")
        return f"\\{command}{{{escape(b.text)}}}"

    def paragraph(self, b: Paragraph) -> str:
        text = self.line(b.content)
        if b.tone in _COLOUR:
            return f"\\begin{{quote}}\\color{{{_COLOUR[b.tone]}}}{text}\\end{{quote}}"
        return text

    def items(self, b: Items) -> str:
        return "\\begin{itemize}\n" + "\n".join(f"\\item {self.line(i)}" for i in b.items) + "\n\\end{itemize}"

    def display_math(self, b: DisplayMath) -> str:
        parts = b.printed(latex, relation_latex)
        return "\\[\n\\alignfit{$\\displaystyle " + " ".join(parts) + "$}\n\\]"

    def listing(self, b: Listing) -> str:
        # A longtable (it breaks across pages) of line numbers and lines, every character of the spec printed
        # by `typewriter`: no verbatim environment, so no end marker for a comment to hold.
        # A line longer than the page is cut into rows of LISTING_WIDTH characters, each continuation numbered `+`.
        width = len(str(b.lines[-1][0])) if b.lines else 1
        rows = []
        for number, text in b.lines:
            marked = number in b.marked
            colour = "\\rowcolor{alignMark}" if marked else ""
            for k, piece in enumerate(_cut(text, LISTING_WIDTH)):
                label = f"{'>' if marked else ' '}{number:>{width}}" if k == 0 else f" {'+':>{width}}"
                rows.append(f"{colour}\\texttt{{{typewriter(label, True)}}} & "
                            f"\\texttt{{{typewriter(piece, True)}}} \\\\")
        caption = f"\n\\emph{{{escape(b.caption + ' (lines marked >)')}}}" if b.caption else ""
        return ("{\\small\\setlength{\\LTleft}{0pt}\\begin{longtable}{|r|l|}\n\\hline\n" + "\n".join(rows)
                + "\n\\hline\n\\end{longtable}}" + caption)

    def table(self, b: Table) -> str:
        spec = _columns(_widths(b.header, b.rows))
        head = " & ".join(f"\\textbf{{{escape(h)}}}" for h in b.header) + " \\\\ \\hline"
        rows = []
        for r in b.rows:
            cells = []
            for c in r.cells:
                text = self.line(c.content)
                cells.append(f"\\textcolor{{{_COLOUR[c.tone]}}}{{{text}}}" if c.tone in _COLOUR else text)
            prefix = "\\rowcolor{alignMark}" if r.marked else ""
            rows.append(prefix + " & ".join(cells) + " \\\\ \\hline")
        caption = f"\n\\emph{{{escape(b.caption)}}}" if b.caption else ""
        # \\endhead: the header row again at the top of every page the table runs onto
        return (f"{{\\small\\setlength{{\\LTleft}}{{0pt}}\\begin{{longtable}}{{{spec}}}\n\\hline\n{head}\n\\endhead\n"
                + "\n".join(rows)
                + "\n\\end{longtable}}" + caption)

    def figure(self, b: Figure) -> str:
        name = self.figure_file(b)
        if name is None:
            return f"\\emph{{{escape(b.caption)} (written beside the report with -o FILE)}}"
        return (f"\\begin{{center}}\\includegraphics[width=0.9\\linewidth]{{{graphic(name)}}}\\\\\n"
                f"\\small {escape(b.caption)}\\end{{center}}")

    def text(self, i: Text) -> str:
        text = escape(i.text)
        if i.strong:
            text = f"\\textbf{{{text}}}"
        return f"\\textcolor{{{_COLOUR[i.tone]}}}{{{text}}}" if i.tone in _COLOUR else text

    def code(self, i: Code) -> str:
        return f"\\texttt{{{typewriter(i.text)}}}"

    def formula(self, i: Formula) -> str:
        return f"\\alignfit{{${latex(i.expr)}$}}"

