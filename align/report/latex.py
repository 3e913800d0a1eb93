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
- `graphic`: a figure's file name in `\\includegraphics`; the writer only makes names of ASCII letters,
  digits, `-` and `_` (`document.figure_name`), and this refuses any other.

Formulas are sympy's LaTeX of the spec's expressions, whose names are identifiers (letters, digits, `_`): sympy
makes subscripts and Greek letters of them, never a command of the spec's choosing.
"""

from __future__ import annotations

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
          "_": r"\_", "^": r"\^{}", "~": r"$\sim$", "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"}
_TYPEWRITER = {ch: f"{{\\char{ord(ch)}}}" for ch in "\\{}$&#%_^~<>|`"}
"""The backquote too: cmtt's only ligatures are !` and ?` (¡ and ¿), and a group ends a ligature."""
_UNICODE = {"ε": r"$\varepsilon$", "ψ": r"$\psi$", "φ": r"$\varphi$", "η": r"$\eta$", "Σ": r"$\Sigma$",
            "≤": r"$\le$", "≥": r"$\ge$", "−": "-", "—": "---", "→": r"$\to$", "∞": r"$\infty$", "·": r"$\cdot$",
            "ᵢ": r"$_i$", "₁": r"$_1$", "₂": r"$_2$", "²": r"$^2$", "′": "'", "✓": "", "∼": r"$\sim$",
            "θ": r"$\theta$", "ω": r"$\omega$", "α": r"$\alpha$", "Δ": r"$\Delta$", "≠": r"$\ne$"}
_COLOUR = {Tone.GOOD: "alignGood", Tone.WARN: "alignWarn", Tone.BAD: "alignBad", Tone.MUTED: "gray"}
_GRAPHIC = re.compile(r"[A-Za-z0-9_-]+\.png")


def _characters(text: str, special: dict[str, str], space: str) -> str:
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
    return "".join(out)


def escape(text: str) -> str:
    """Text printed in the roman font, every special character as a command that prints it."""
    return _characters(text, _ROMAN, " ")


def typewriter(text: str, hard_spaces: bool = False) -> str:
    """Program text inside `\\texttt`: every special character as its typewriter glyph (`{\\char92}`); with
    `hard_spaces`, spaces that TeX neither drops nor merges (the listing's indentation)."""
    return _characters(text, _TYPEWRITER, "~" if hard_spaces else " ")


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
                "\\usepackage{longtable}\n"
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
        return "\\[\n" + " ".join(parts) + "\n\\]"

    def listing(self, b: Listing) -> str:
        # A longtable (it breaks across pages) of line numbers and lines, every character of the spec printed
        # by `typewriter`: no verbatim environment, so no end marker for a comment to hold.
        width = len(str(b.lines[-1][0])) if b.lines else 1
        rows = []
        for number, text in b.lines:
            marked = number in b.marked
            colour = "\\rowcolor{alignMark}" if marked else ""
            shown = typewriter(f"{'>' if marked else ' '}{number:>{width}}", True)
            rows.append(f"{colour}\\texttt{{{shown}}} & \\texttt{{{typewriter(text, True)}}} \\\\")
        caption = f"\n\\emph{{{escape(b.caption + ' (lines marked >)')}}}" if b.caption else ""
        return ("{\\small\\setlength{\\LTleft}{0pt}\\begin{longtable}{|r|l|}\n\\hline\n" + "\n".join(rows)
                + "\n\\hline\n\\end{longtable}}" + caption)

    def table(self, b: Table) -> str:
        spec = "|" + "l|" * len(b.header)
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
        return (f"{{\\small\\begin{{longtable}}{{{spec}}}\n\\hline\n{head}\n" + "\n".join(rows)
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
        return f"${latex(i.expr)}$"

