"""Report (LaTeX): a standalone article (`pdflatex report.tex`), standard packages only; formulas from sympy's
LaTeX printer, figures as PNG files beside the .tex (with -o FILE)."""

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

_SPECIAL = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#", "%": r"\%",
            "_": r"\_", "^": r"\^{}", "~": r"\~{}", "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"}
_UNICODE = {"ε": r"$\varepsilon$", "ψ": r"$\psi$", "φ": r"$\varphi$", "η": r"$\eta$", "Σ": r"$\Sigma$",
            "≤": r"$\le$", "≥": r"$\ge$", "−": "-", "—": "---", "→": r"$\to$", "∞": r"$\infty$", "·": r"$\cdot$",
            "ᵢ": r"$_i$", "₁": r"$_1$", "₂": r"$_2$", "²": r"$^2$", "′": "'", "✓": "", "∼": r"$\sim$",
            "θ": r"$\theta$", "ω": r"$\omega$", "α": r"$\alpha$", "Δ": r"$\Delta$"}
_COLOUR = {Tone.GOOD: "alignGood", Tone.WARN: "alignWarn", Tone.BAD: "alignBad", Tone.MUTED: "gray"}


def escape(text: str) -> str:
    out = []
    for ch in text:
        if ch in _SPECIAL:
            out.append(_SPECIAL[ch])
        elif ch in _UNICODE:
            out.append(_UNICODE[ch])
        elif ord(ch) < 128:
            out.append(ch)
        else:
            out.append("?")  # pdflatex without fonts for it: a visible placeholder, never a compile error
    return "".join(out)


class LatexWriter(Writer):
    name = "tex"
    suffix = ".tex"

    def page(self, title: str, blocks: list[str]) -> str:
        return ("\\documentclass[11pt]{article}\n\\usepackage[margin=2cm,landscape]{geometry}\n"
                "\\usepackage{amsmath,amssymb}\n\\usepackage[table]{xcolor}\n\\usepackage{graphicx}\n"
                "\\usepackage{longtable}\n\\usepackage{fancyvrb}\n"
                "\\definecolor{alignGood}{HTML}{1A7F37}\\definecolor{alignWarn}{HTML}{9A6700}"
                "\\definecolor{alignBad}{HTML}{CF222E}\\definecolor{alignMark}{HTML}{FFF1C2}\n"
                f"\\title{{{escape(title)}}}\n\\date{{}}\n\\begin{{document}}\n"
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
        width = len(str(b.lines[-1][0])) if b.lines else 1
        lines = [f"{'>' if number in b.marked else ' '}{number:>{width}}  {text}" for number, text in b.lines]
        body = "\n".join(_ascii(line) for line in lines)
        caption = f"\n\n{escape(b.caption)} (lines marked >)" if b.caption else ""
        return f"\\begin{{Verbatim}}[fontsize=\\small,frame=single]\n{body}\n\\end{{Verbatim}}{caption}"

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
        return (f"\\begin{{center}}\\includegraphics[width=0.9\\linewidth]{{{name}}}\\\\\n"
                f"\\small {escape(b.caption)}\\end{{center}}")

    def text(self, i: Text) -> str:
        text = escape(i.text)
        if i.strong:
            text = f"\\textbf{{{text}}}"
        return f"\\textcolor{{{_COLOUR[i.tone]}}}{{{text}}}" if i.tone in _COLOUR else text

    def code(self, i: Code) -> str:
        return f"\\texttt{{{escape(i.text)}}}"

    def formula(self, i: Formula) -> str:
        return f"${latex(i.expr)}$"


def _ascii(text: str) -> str:
    """Verbatim text for pdflatex: the spec's Unicode (comments may have ε, ≤) as ASCII approximations."""
    table = {"ε": "eps", "≤": "<=", "≥": ">=", "−": "-", "—": "--", "ψ": "psi", "φ": "phi", "η": "eta", "·": "*",
             "²": "^2", "′": "'"}
    return "".join(table.get(ch, ch if ord(ch) < 128 else "?") for ch in text)
