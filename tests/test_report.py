"""`align report`: the proof in Lemma 1's structure (Markdown, HTML, LaTeX), its cost analysis, the
counterexample side by side, the command line, and the API results' Jupyter display. The whole corpus in every
format is in tests/test_formats.py; the HTML in a real browser in tests/test_report_browser.py."""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

import pytest
import sympy

import align
from align.cli import main
from align.interp.divergence import side_by_side
from align.report import FORMATS, jupyter, render
from align.report.costs import analyse
from align.report.document import Code, Text, inlines
from align.status import Status

from .conftest import SPECS

# Its module fixtures verify two specs once per worker: with `--dist loadgroup` one worker runs the file.
pytestmark = pytest.mark.xdist_group("test_report")

SVT = SPECS / "freegap" / "alg2_svt_gap.dp"
LAPLACE = SPECS / "freegap" / "example1_laplace.dp"
STODDARD = SPECS / "incorrect" / "svt_stoddard_no_query_noise.dp"
NEGATIVE = SPECS / "incorrect" / "exp_alignment_leaves_support.dp"
SCALE_READS_DATA = SPECS / "incorrect" / "laplace_scale_reads_data.dp"


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def svt():
    return align.verify(SVT)


@pytest.fixture(scope="module")
def stoddard():
    return align.verify(STODDARD)


def sym(name: str, **assumptions) -> sympy.Symbol:
    return sympy.Symbol(name, real=True, **assumptions)


# ------------------------------------------------------------------------------------------- cost analysis


def test_svt_cost_sum_is_eps0_plus_eps1_per_top_and_reaches_eps_at_k():
    """Free Gap Theorem 5.1's accounting: η costs ε₀ once, each TOP costs ε₁ (|1 + q[i] - q'[i]| ≤ 2 times
    ε₁/2), each BOT nothing; the sum is ε exactly when N_TOP = (ε - ε₀)/ε₁ = k."""
    costs = analyse(align.check(SVT))
    eta, xi = costs.sites
    assert eta.coefficient == sym("eps0") and [c.bound for c in eta.cases] == [sym("eps0")]
    assert [(c.condition, c.bound) for c in xi.cases] == [("out[i] is TOP", sym("eps1")),
                                                          ("not (out[i] is TOP)", 0)]
    (count,) = costs.counts
    assert count.symbol.name == "N_TOP" and count.condition == "out[i] is TOP"
    assert sympy.simplify(costs.total - (sym("eps0") + sym("eps1") * count.symbol)) == 0
    (value,) = costs.equal_at.values()
    from align.report.costs import expand_constants
    assert expand_constants(align.check(SVT), value) == sym("k")


def test_laplace_cost_is_exactly_the_claim():
    """Free Gap Example 1: Lap(100/ε) shifted by q - q' with |q - q'| ≤ 100 costs ε/100 · 100 = ε."""
    costs = analyse(align.check(LAPLACE))
    assert costs.counts == () and costs.within == "="
    assert sympy.simplify(costs.total - sym("eps")) == 0


def test_the_largest_cost_term_is_the_vertex_bound_and_unknown_shapes_have_none():
    """max over |d| ≤ 1 of c·|1 + d| is 2c; a shift that reads the aligned run (noisy top-k's m') has no closed
    form here, and the report says so instead of inventing one."""
    (xi,) = [s for s in analyse(align.check(SVT)).sites if s.site.name == "xi"]
    top = xi.cases[0]
    assert sympy.simplify(top.term.subs({sym("q[i]"): 0, sym("q'[i]"): 1})) == 0  # |1 + 0 - 1| = 0
    assert top.bound == sym("eps1")  # (ε₁/2)·|1 + 1| at q' = q - 1
    topk = analyse(align.check(SPECS / "freegap" / "alg4_noisy_top_k_gap.dp"))
    assert topk.total is None and any(c.bound is None for s in topk.sites for c in s.cases)


def test_a_loose_bound_is_not_claimed_equal_to_the_claim():
    """The Stoddard variant's threshold shift costs ε/2 ≤ ε: shown as ≤, from `requires eps > 0`."""
    costs = analyse(align.check(STODDARD))
    assert costs.within == "<="
    assert sympy.simplify(costs.expanded - sym("eps") / 2) == 0


# ------------------------------------------------------------------------------------------- side by side


def test_the_counterexample_parts_at_the_branch_that_the_shifted_threshold_flips(stoddard):
    steps = side_by_side(stoddard.mechanism, stoddard.counterexample)
    assert steps.divergence is not None
    first = steps.steps[steps.divergence]
    assert first.diverges and first.line == 24 and "true" in first.on_d and "false" in first.on_d_prime
    assert not any(s.diverges for s in steps.steps[:steps.divergence])  # nothing before it is marked
    assert all(s.on_d.split(" = ")[0] == s.on_d_prime.split(" = ")[0] for s in steps.steps[:steps.divergence])


def test_a_negative_aligned_noise_is_marked_without_a_divergence():
    result = align.verify(NEGATIVE)
    assert result.counterexample is not None and result.counterexample.obligation == "C4d"
    steps = side_by_side(result.mechanism, result.counterexample)
    assert steps.divergence is None  # the runs agree; the support is what fails
    assert [d.draw.display for d in steps.draws if not d.in_support] == ["eta[0]"]
    text, _ = render(result, "md")
    assert re.search(r"\| \*\*→\*\* `eta\[0\]` \| [^|]+ \| [^|]+ \| ❌ -", text)


def test_a_density_that_reads_the_data_parts_at_the_draw():
    result = align.verify(SCALE_READS_DATA)
    steps = side_by_side(result.mechanism, result.counterexample)
    first = steps.steps[steps.divergence]
    assert "Lap(2)" in first.on_d and "Lap(1)" in first.on_d_prime


# ---------------------------------------------------------------------------------------------- documents


def _sections(md: str) -> list[str]:
    return [re.sub(r"^\d+ ", "", h) for h in re.findall(r"^## (.+)$", md, re.M)]


def test_a_proof_has_lemma_1s_structure(svt):
    md, figures = render(svt, "md")
    assert figures == {}
    assert _sections(md) == ["The mechanism", "Parameters and neighbouring inputs", "The proof rule",
                             "Noise sites and the alignment", "The cost sum", "Acyclicity (C4b)",
                             "The loop invariant", "The obligations", "Conclusion"]
    assert "  5  mechanism svt_gap(" in md and " 30    xi[i]' = xi[i] +" in md  # numbered listing, alignment too
    assert "Lemma 1 (Free Gap, Section 4)" in md
    assert "N_{TOP} \\epsilon_{1} + \\epsilon_{0}" in md  # the cost sum, typeset by sympy
    assert "`aligned_cost <= claim`" in md  # the invariant's conjuncts
    for v in svt.verdicts:
        assert f"| `{v.obligation.name}` |" in md
    assert "by the rule above the mechanism is ε-differentially private" in md


def test_markdown_tables_keep_their_columns(svt, stoddard):
    """A `|` inside a cell (|q[i] - q'[i]|, LaTeX's absolute value) must not split it."""
    for result in (svt, stoddard):
        md, _ = render(result, "md")
        for table in re.findall(r"(?:^\|.*\|\n)+", md, re.M):
            rows = table.strip().split("\n")
            widths = {len(re.findall(r"(?<!\\)\|", r)) for r in rows}
            assert len(widths) == 1, table


def test_a_refutation_shows_the_counterexample_and_marks_its_lines(stoddard):
    md, _ = render(stoddard, "md")
    assert "The counterexample" in _sections(md)
    assert "| **→** 4 | 24 | `  if q[i] >= T_hat: true` | ❌ `  if q[i] >= T_hat: false` |" in md
    assert ">24      if q[i] >= T_hat {" in md  # the line where the runs part, marked in the listing
    assert "| **→** `C4a` |" in md
    assert "not a privacy violation until a test confirms one" in md


def test_html_is_one_offline_page_with_mathml(svt, stoddard):
    for result in (svt, stoddard):
        page, figures = render(result, "html")
        assert figures == {}
        assert page.startswith("<!DOCTYPE html>") and "<style>" in page
        assert "<math" in page and '<table class="obligations">' in page
        assert not re.search(r"<script|<link|@import|url\(|src=\"(?!data:)", page)  # nothing to fetch
        assert not re.search(r"(?:href|src)=\"https?:", page)
    page, _ = render(stoddard, "html")
    assert page.count('<tr class="marked">') >= 2  # the refuted obligation and the first divergence


def test_latex_is_a_balanced_standalone_article(svt, stoddard):
    for result in (svt, stoddard):
        tex, _ = render(result, "tex")
        assert tex.startswith("\\documentclass") and tex.rstrip().endswith("\\end{document}")
        begins = re.findall(r"\\begin\{(\w+)\}", tex)
        ends = re.findall(r"\\end\{(\w+)\}", tex)
        assert sorted(begins) == sorted(ends)
        body = re.sub(r"\\begin\{Verbatim\}.*?\\end\{Verbatim\}", "", tex, flags=re.S)
        body = body.replace("\\{", "").replace("\\}", "")
        assert body.count("{") == body.count("}")
        assert all(ord(ch) < 128 for ch in tex)  # pdflatex without Unicode fonts
        assert "\\varepsilon" in tex or "\\epsilon" in tex


def test_every_format_has_a_writer_for_every_block():
    from align.commands.report import FORMAT_CHOICES
    from align.report.document import Writer

    assert tuple(FORMATS) == FORMAT_CHOICES  # the command line offers exactly the writers
    for writer in FORMATS.values():
        assert issubclass(writer, Writer) and not writer.__abstractmethods__


def test_backquotes_in_prose_become_code():
    assert inlines("run `align test` now") == (Text("run "), Code("align test"), Text(" now"))
    assert inlines("a lone ` stays") == (Text("a lone ` stays"),)


# ------------------------------------------------------------------------------------------- command line


def test_report_exits_as_verify_and_writes_the_chosen_format(tmp_path: Path):
    out = tmp_path / "svt.html"
    code, stdout, stderr = _cli("report", str(SVT), "-o", str(out))
    assert (code, stdout, stderr) == (0, "", "")
    assert out.read_text().startswith("<!DOCTYPE html>")  # the format from the suffix
    code, stdout, _ = _cli("report", str(STODDARD), "--format", "tex")
    assert code == 1 and stdout.startswith("\\documentclass")
    code, stdout, _ = _cli("report", str(STODDARD))
    assert code == 1 and stdout.startswith("# Is svt\\_stoddard")  # Markdown by default


def test_report_of_a_bad_spec_is_a_located_diagnostic(tmp_path: Path):
    bad = tmp_path / "bad.dp"
    bad.write_text("mechanism m(q: real) {\n  x ~ Lap(\n}\n")
    code, stdout, stderr = _cli("report", str(bad))
    assert code == 2 and stdout == ""
    assert re.search(r"bad\.dp:\d+:\d+: error\[", stderr) and "^" in stderr
    code, _, stderr = _cli("report", str(tmp_path / "missing.dp"))
    assert code == 2 and "io-error" in stderr
    code, _, stderr = _cli("report", str(SVT), "-o", str(tmp_path / "no" / "such" / "dir.md"))
    assert code == 2 and "write-error" in stderr
    code, _, stderr = _cli("report", str(SVT), "--output-format", "sarif")
    assert code == 2 and "usage" in stderr
    for command in ("report", "verify"):  # the proof options are checked in one place for both
        code, _, stderr = _cli(command, str(STODDARD), "--confirm", "--confirm-samples", "0")
        assert code == 2 and "argument --confirm-samples: must be an integer between 1 and" in stderr
        code, _, stderr = _cli(command, str(STODDARD), "--max-length", "0")
        assert code == 2 and "argument --max-length: must be an integer between 1 and" in stderr


@pytest.mark.slow
def test_confirm_adds_the_empirical_result_and_the_privacy_loss_plot(tmp_path: Path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "stoddard.md"
    code, _, stderr = _cli("report", str(STODDARD), "--confirm", "--confirm-samples", "16000", "-o", str(out))
    assert code == 1, stderr
    md = out.read_text()
    assert "Empirical check" in _sections(md) and "privacy violation confirmed" in md
    assert "| input pair | event | ε lower bound |" in md and "∞" in md
    assert "![privacy-loss plot](stoddard-1.png)" in md
    assert (tmp_path / "stoddard-1.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    html = tmp_path / "stoddard.html"
    assert _cli("report", str(STODDARD), "--confirm", "--confirm-samples", "16000", "-o", str(html))[0] == 1
    page = html.read_text()
    png = re.search(r'src="data:image/png;base64,([^"]+)"', page)
    assert png is not None and base64.b64decode(png.group(1)).startswith(b"\x89PNG")
    assert list(tmp_path.glob("stoddard.html-*")) == [] and len(list(tmp_path.glob("*.png"))) == 1


# ------------------------------------------------------------------------------------------------ Jupyter


def test_api_results_render_themselves(svt, stoddard):
    for result in (svt, stoddard):
        html = jupyter.html(result)
        assert html.startswith("<style>") and "<html" not in html and '<div class="align-report">' in html
        assert '<table class="obligations">' in html and "<math" in html
        assert "<span class=\"ln\">" in html  # the API keeps the source: the listing is there
        assert jupyter.markdown(result) == render(result, "md")[0]
    assert svt.status == Status.PROVED


def test_inline_spec_text_has_its_listing_too():
    text = LAPLACE.read_text()
    result = align.verify(text)
    assert result.source is not None and "mechanism" in jupyter.markdown(result)
    assert result.source.text == text


@pytest.mark.slow
def test_a_test_report_renders_its_findings_and_plot():
    report = align.test(STODDARD, {"T": 0.5, "eps": 1}, samples=16_000)
    assert report.violation and report.args == {"T": 0.5, "eps": 1}
    md = jupyter.markdown(report)
    assert "Violation found" in md and "| input pair | event E |" in md and "The witness pair" in md
    html = jupyter.html(report)
    assert '<table class="findings">' in html
    if pytest.importorskip("matplotlib"):
        assert 'src="data:image/png;base64,' in html


def test_a_cycle_marks_the_shifts_that_read_noise():
    result = align.verify(SPECS / "incorrect" / "alignment_cycle.dp")
    assert any(v.obligation.name == "C4b" and v.status == Status.REFUTED for v in result.verdicts)
    md, _ = render(result, "md")
    marked = re.findall(r"^>(\d+) ", md, re.M)
    assert {"24", "25"} <= set(marked)  # a' reads b and b' reads a
    assert "the shift of a depends on a itself" in md or "cycle" in md


def test_the_listing_shows_control_characters_as_escapes(tmp_path: Path):
    """A comment inside the mechanism may hold ESC or a bidi override: no format prints it raw (a report of an
    untrusted spec must not drive the reader's terminal, nor show other text than was parsed)."""
    spec = tmp_path / "m.dp"
    spec.write_text(LAPLACE.read_text().replace("{\n", "{ # \x1b[2J \u202e hidden\n", 1))
    result = align.verify(spec)
    for fmt in FORMATS:
        text, _ = render(result, fmt)
        assert "\x1b" not in text and "\u202e" not in text
        assert "\\x1b[2J" in text.replace("\\textbackslash{}", "\\").replace("{\\char92}", "\\")
