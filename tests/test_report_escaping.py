"""Reports of an untrusted spec (issue 34): a pull request controls the spec's text (its comments are in the
listing) and its file name, so the report of a hostile spec must show that text literally and nothing else.

Each format is checked by what reads it: the LaTeX output is compiled by pdflatex (with `-recorder`: the `.fls`
lists every file TeX opened, so a `\\input` or `\\openout` that the spec smuggled in shows up there), the
Markdown is rendered by a CommonMark renderer (markdown-it-py, tables on) and the HTML opened in headless
Chromium; in none of them may the spec add an element, an attribute, a script or a TeX command.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import unicodedata
from html.parser import HTMLParser
from pathlib import Path

import pytest

import align
from align.cli import main
from align.report import render
from align.span import visible

from .browser import needs_browser, open_page

# Every line is a comment inside the mechanism, so it is in the listing. `\typeout{\detokenize{INJ}ECTED}`
# prints INJECTED only when TeX runs it: the spec's own text never holds that word (pdflatex's log quotes
# the text of overfull lines).
TEX_PAYLOAD = ("\\end{Verbatim}",
               "\\typeout{\\detokenize{INJ}ECTED}\\input{/etc/hostname}\\newwrite\\w",
               "\\immediate\\openout\\w=pwned.txt\\immediate\\write\\w{x}\\immediate\\closeout\\w",
               "^^5ctypeout{\\detokenize{INJ}ECTED} ^^M % # ~ & $ _ } \\iffalse {{ \\",
               "\\begin{Verbatim} \\catcode`\\^^M=14 \\def~{\\typeout{\\detokenize{INJ}ECTED}}~ \\",
               "\\end{document} \\csname typeout\\endcsname{\\detokenize{INJ}ECTED} \\@@input{/etc/hostname}")
HTML_PAYLOAD = ("``` </pre></code><img src=x onerror=\"document.title='XSS'\">",
                "<script>document.title='XSS'</script> ~~~",
                "![x](javascript:alert(1)) <b>bold</b> &lt; &amp;#60; *em* _u_ | a | b | $x$ ~~s~~ <!-- c -->",
                "<https://example.com/x> [y][z] [z]: javascript:alert(1) <a href=\"javascript:alert(1)\">a</a>")
OTHER = ("control \x1b[2J \x0c \u202e: visible, Unicode ε ≤ é 😀",)
COMMENTS = TEX_PAYLOAD + HTML_PAYLOAD + OTHER

# Parameter and noise names that are TeX primitives: they reach sympy's LaTeX printer (the formulas) too.
_COMMENT_LINES = "\n".join(f"  # {c}" for c in COMMENTS)
SPEC = f"""# a hostile spec
# expect: proved
mechanism typeout(input: real, eps: real)
  adjacent |input - input'| <= 100
  requires eps > 0
  privacy eps
  example eps = 1
{{
{_COMMENT_LINES}
  openout ~ Lap(100 / eps)
  output input + openout
}}

alignment typeout {{
  openout' = openout + (input - input')
}}
"""

NAME = ("a``<img src=x onerror=\"document.title='XSS'\">``b $\\typeout{\\detokenize{INJ}ECTED}$ "
        "%#~^^5c&_{ *x* [l](j:a) ```.dp")
"""The spec's file name: backticks that would close a Markdown code span, HTML, TeX."""


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    spec = tmp_path_factory.mktemp("hostile") / NAME
    spec.write_text(SPEC, encoding="utf-8")
    return spec


def _report(spec: Path, out: Path) -> None:
    err = io.StringIO()
    code = main(["report", str(spec), "-o", str(out)], io.StringIO(), err)
    assert code == 0, err.getvalue()


def _literal(text: str) -> str:
    """What a reader sees, for comparison: typographic quotes and accents back to ASCII, spaces collapsed."""
    text = unicodedata.normalize("NFKC", text)
    for a, b in {"’": "'", "‘": "`", "˜": "~", "ˆ": "^", "∼": "~", "−": "-", "\u00a0": " "}.items():
        text = text.replace(a, b)
    return re.sub(r"\s+", " ", text)


# ------------------------------------------------------------------------------------------------- LaTeX


def _tex_roots() -> list[str]:
    """The TeX installation's trees: the files TeX may read besides the document's own."""
    roots: list[str] = []
    for variable in ("$TEXMF", "$TEXMFCNF", "$TEXMFROOT", "$TEXMFSYSVAR", "$TEXMFSYSCONFIG", "$TEXMFVAR"):
        out = subprocess.run(["kpsewhich", f"-expand-path={variable}"], capture_output=True, text=True, check=False)
        roots += [os.path.realpath(p) for p in out.stdout.strip().split(":") if p]
    return roots


def compile_tex(tex: Path) -> tuple[str, list[tuple[str, str]]]:
    """pdflatex without shell escape, non-stop, with the recorder: the log and the (INPUT|OUTPUT, absolute path)
    of every file TeX opened."""
    subprocess.run(["pdflatex", "-no-shell-escape", "-interaction=nonstopmode", "-recorder", tex.name],
                   cwd=tex.parent, capture_output=True, timeout=120, check=False, stdin=subprocess.DEVNULL)
    log = tex.with_suffix(".log").read_text(errors="replace")
    opened = []
    for line in tex.with_suffix(".fls").read_text(errors="replace").splitlines():
        kind, _, path = line.partition(" ")
        if kind in ("INPUT", "OUTPUT"):
            opened.append((kind, os.path.realpath(os.path.join(tex.parent, path))))
    return log, opened


def assert_only_expected_files(tex: Path, opened: list[tuple[str, str]], figures: tuple[str, ...] = ()) -> None:
    own = {os.path.realpath(tex.parent / name) for name in (tex.name, *figures)}
    own |= {os.path.realpath(tex.with_suffix(s)) for s in (".aux", ".log", ".pdf")}
    roots = _tex_roots()
    for kind, path in opened:
        if path in own:
            continue
        assert kind == "INPUT" and any(path.startswith(r + os.sep) for r in roots), (kind, path)
    assert not (tex.parent / "pwned.txt").exists()


LATEX_REQUIRED = os.environ.get("ALIGN_REQUIRE_LATEX", "") not in ("", "0")
"""CI sets ALIGN_REQUIRE_LATEX=1 (and installs TeX): a missing pdflatex or pdftotext then fails the tests that need
them instead of skipping them."""

needs_pdflatex = pytest.mark.skipif(
    not LATEX_REQUIRED and (shutil.which("pdflatex") is None or shutil.which("kpsewhich") is None),
    reason="no pdflatex (Debian: texlive-latex-base, texlive-latex-recommended; ALIGN_REQUIRE_LATEX=1 fails instead)")


@needs_pdflatex
def test_a_hostile_spec_compiles_to_its_literal_text_and_runs_no_tex(hostile: Path, tmp_path: Path):
    tex = tmp_path / "report.tex"
    _report(hostile, tex)
    log, opened = compile_tex(tex)
    assert "INJECTED" not in log
    assert all("/etc/hostname" not in path for _, path in opened)
    assert_only_expected_files(tex, opened)
    assert tex.with_suffix(".pdf").exists(), log[-3000:]
    if shutil.which("pdftotext") is None and not LATEX_REQUIRED:
        return
    subprocess.run(["pdftotext", "-layout", "report.pdf", "report.txt"], cwd=tmp_path, check=True)
    text = _literal((tmp_path / "report.txt").read_text())
    for comment in TEX_PAYLOAD + HTML_PAYLOAD:
        assert _literal(f"# {comment}") in text, comment
    assert _literal("# control \\x1b[2J \\x0c \\u202e: visible") in text  # no Unicode font set-up: ASCII only
    assert _literal(f"{NAME}, mechanism typeout") in text


def test_latex_escapes_every_special_character_of_the_spec(hostile: Path):
    """Without pdflatex: no spec text reaches the .tex raw (a special character only in its escaped form)."""
    tex, _ = render(align.verify(hostile), "tex")
    assert "\\typeout" not in tex and "\\input" not in tex and "\\openout" not in tex and "\\iffalse" not in tex
    assert "^^" not in tex and "\x1b" not in tex and "\x0c" not in tex
    assert all(ord(ch) < 128 for ch in tex)
    assert "\\begin{document}" in tex and tex.count("\\end{document}") == 1


def test_latex_prints_the_neighbour_relation_as_sim(hostile: Path):
    tex, _ = render(align.verify(hostile), "tex")
    assert "\\~{}" not in tex  # an accent over nothing, not the relation
    assert "D $\\sim$ D'" in tex


# ---------------------------------------------------------------------------------------------- Markdown


class _Elements(HTMLParser):
    """Every element and attribute of an HTML text, and its text."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.elements.append(("!--", {}))


MARKDOWN_ELEMENTS = {"h1", "h2", "h3", "p", "blockquote", "ul", "li", "table", "thead", "tbody", "tr", "th", "td",
                     "strong", "em", "code", "pre"}
"""What the report's Markdown makes (links and images are checked on their own)."""


def markdown_html(md: str) -> str:
    markdown_it = pytest.importorskip("markdown_it")
    return str(markdown_it.MarkdownIt("commonmark").enable("table").render(md))


def test_markdown_of_a_hostile_spec_and_name_renders_no_html_of_theirs(hostile: Path):
    md, _ = render(align.verify(hostile), "md")
    page = _Elements(markdown_html(md))
    assert {tag for tag, _ in page.elements} <= MARKDOWN_ELEMENTS, {tag for tag, _ in page.elements}
    assert all(not attrs for tag, attrs in page.elements if tag != "code")  # no href, src, onerror, style
    text = "".join(page.text)
    assert f"{NAME}, mechanism typeout" in text  # the file name literally, in one code span
    for comment in COMMENTS:
        assert f"# {visible(comment)}" in text, comment


# -------------------------------------------------------------------------------------------------- HTML


def test_html_of_a_hostile_spec_has_only_the_report_s_elements(hostile: Path):
    html, _ = render(align.verify(hostile), "html")
    page = _Elements(html)
    tags = {tag for tag, _ in page.elements}
    assert not tags & {"script", "img", "a", "iframe", "object", "embed", "link", "b", "!--"}
    assert not [name for _, attrs in page.elements for name in attrs if name.startswith("on")]
    text = "".join(page.text)
    assert f"{NAME}, mechanism typeout" in text
    for comment in COMMENTS:
        assert f"# {visible(comment)}" in text, comment


@needs_browser
@pytest.mark.slow
def test_html_of_a_hostile_spec_injects_nothing_in_a_browser(hostile: Path, tmp_path: Path):
    out = tmp_path / "report.html"
    _report(hostile, out)
    with open_page(out) as page:
        assert page.errors == [] and page.external_requests == []
        assert page.evaluate("document.title") == "Proof report: typeout"
        assert page.evaluate("document.querySelectorAll('script, img, a, iframe, b').length") == 0
        assert page.evaluate("[...document.querySelectorAll('*')].flatMap(e => [...e.attributes])"
                             ".filter(a => a.name.startsWith('on')).length") == 0
        listing = page.evaluate("document.querySelector('pre.listing').textContent")
        for comment in COMMENTS:
            assert f"# {visible(comment)}" in listing, comment
        assert NAME in page.evaluate("document.body.textContent")
