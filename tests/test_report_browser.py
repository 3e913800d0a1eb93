"""The HTML report in a real headless Chromium (tests/browser.py): a proved and a refuted spec render with no
console error and no network request, with the obligations table, the MathML laid out, the first divergence
marked by the page's own style, and the privacy-loss plot decoded. Screenshots are kept under the test's tmp
dir (`pytest --basetemp=DIR` keeps them where you can look)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import align
from align.cli import main
from align.report import jupyter

from .browser import needs_browser, open_page
from .conftest import SPECS

pytestmark = [needs_browser, pytest.mark.slow]

SVT = SPECS / "freegap" / "alg2_svt_gap.dp"
STODDARD = SPECS / "incorrect" / "svt_stoddard_no_query_noise.dp"

MATH_WIDTHS = "[...document.querySelectorAll('math')].map(m => m.getBoundingClientRect().width)"


def _report(spec: Path, out: Path, *flags: str) -> int:
    return main(["report", str(spec), "-o", str(out), *flags], io.StringIO(), io.StringIO())


def _common(page, verdicts: int) -> None:
    assert page.errors == []
    assert page.external_requests == []
    assert page.evaluate("document.querySelectorAll('table.obligations').length") == 1
    assert page.evaluate("document.querySelectorAll('table.obligations tbody tr').length") == verdicts
    widths = page.evaluate(MATH_WIDTHS)
    assert len(widths) >= 5 and min(widths) > 0  # every formula is laid out as math, not left as unknown tags
    assert page.evaluate("document.querySelector('math mfrac, math msub') !== null")


def test_a_proof_renders(tmp_path: Path):
    out = tmp_path / "svt.html"
    assert _report(SVT, out) == 0
    result = align.verify(SVT)
    with open_page(out, screenshot=tmp_path / "svt.png") as page:
        _common(page, len(result.verdicts))
        assert page.evaluate("document.querySelectorAll('pre.listing div[id^=L]').length") == 27  # lines 5..31
        assert page.evaluate("document.querySelector('.callout.good').textContent").startswith("Verdict: proved")
    assert (tmp_path / "svt.png").stat().st_size > 10_000


def test_a_refutation_renders_with_its_divergence_marked_and_its_plot(tmp_path: Path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "stoddard.html"
    assert _report(STODDARD, out, "--confirm", "--confirm-samples", "16000") == 1
    result = align.verify(STODDARD)
    with open_page(out, screenshot=tmp_path / "stoddard.png") as page:
        _common(page, len(result.verdicts))
        marked = page.evaluate("[...document.querySelectorAll('table.trace tr.marked')].map(r => r.textContent)")
        assert len(marked) == 1 and "true" in marked[0] and "false" in marked[0]
        # the page's style marks it: the marked row's background is not the table's
        colours = page.evaluate("['table.trace tr.marked td', 'table.trace tbody tr:not(.marked) td']"
                                ".map(s => getComputedStyle(document.querySelector(s)).backgroundColor)")
        assert colours[0] != colours[1]
        assert page.evaluate("document.querySelectorAll('pre.listing div.marked').length") >= 1
        size = page.evaluate("(() => { const i = document.querySelector('figure img');"
                             " return [i.complete, i.naturalWidth, i.naturalHeight]; })()")
        assert size[0] and size[1] > 500 and size[2] > 200  # the PNG decoded
    assert (tmp_path / "stoddard.png").stat().st_size > 10_000


def test_the_notebook_fragment_renders_inside_another_page(tmp_path: Path):
    """What Jupyter shows (`_repr_html_`): a fragment whose style is scoped, so the host page keeps its own."""
    result = align.verify(STODDARD)
    host = tmp_path / "notebook.html"
    host.write_text('<!DOCTYPE html><html><head><meta charset="utf-8"><title>host</title>'
                    "<style>table { border: 5px solid rgb(1, 2, 3); }</style></head><body>"
                    '<table id="host"><tr><td>host</td></tr></table>' + jupyter.html(result) + "</body></html>")
    with open_page(host, screenshot=tmp_path / "fragment.png") as page:
        _common(page, len(result.verdicts))
        assert page.evaluate("getComputedStyle(document.getElementById('host')).borderTopColor") == "rgb(1, 2, 3)"
        # and the report keeps its own: the host's table border does not reach the report's tables
        assert page.evaluate("getComputedStyle(document.querySelector('table.obligations')).borderTopWidth") == "0px"
