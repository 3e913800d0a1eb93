"""The headless-Chromium harness (tests/browser.py) reports what a page does: errors, requests, layout, pixels.

Skipped where no Chromium is installed, unless ALIGN_REQUIRE_BROWSER is set (CI sets it to 1): then a missing
browser fails these tests instead of silently skipping every test that opens a page.
"""

from __future__ import annotations

import os
import struct
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from .browser import BrowserError, JavaScriptError, chromium_path, needs_browser, open_page

pytestmark = needs_browser

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def page(tmp_path: Path, body: str, name: str = "page.html") -> Path:
    path = tmp_path / name
    path.write_text(f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{name}</title></head>\n'
                    f"<body>\n{body}\n</body></html>\n", encoding="utf-8")
    return path


def test_chromium_is_installed() -> None:
    binary = chromium_path()
    assert binary is not None, "no chromium or chromium-browser on the PATH, and ALIGN_CHROMIUM is unset"
    assert os.access(binary, os.X_OK), binary


def test_align_chromium_overrides_the_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALIGN_CHROMIUM", "/opt/elsewhere/chrome")
    assert chromium_path() == "/opt/elsewhere/chrome"


@pytest.mark.slow
def test_console_error_is_an_error(tmp_path: Path) -> None:
    html = page(tmp_path, '<script>console.log("fine", 1); console.error("proof table missing", 42);</script>')
    with open_page(html) as p:
        assert ("log", "fine 1") in p.console
        assert ("error", "proof table missing 42") in p.console
        assert p.errors == ["console.error: proof table missing 42"]


@pytest.mark.slow
def test_uncaught_exceptions_are_errors(tmp_path: Path) -> None:
    html = page(tmp_path, '<script>throw new TypeError("boom")</script>\n'
                          '<script>Promise.reject(new Error("rejected"))</script>')
    with open_page(html) as p:
        assert len(p.exceptions) == 2, p.exceptions
        assert "TypeError: boom" in p.exceptions[0]
        assert "Error: rejected" in p.exceptions[1]
        assert p.errors == p.exceptions


def test_clean_page_with_table_and_mathml(tmp_path: Path) -> None:
    html = page(tmp_path, """
<table class="obligations"><tr><th>obligation</th><th>status</th></tr><tr><td>ψ₁</td><td>proved</td></tr></table>
<p>The loss is <math><mfrac><mi>ε</mi><mn>2</mn></mfrac></math> per query.</p>
<script>console.log("rendered")</script>
""")
    with open_page(html) as p:
        assert p.errors == []
        assert p.exceptions == [] and p.log == []
        assert p.console == [("log", "rendered")]
        assert p.external_requests == []
        assert p.evaluate("document.querySelectorAll('table.obligations').length") == 1
        assert p.evaluate("document.querySelector('math') instanceof MathMLElement")
        assert p.evaluate("document.querySelector('math').getBoundingClientRect().width") > 0
        # MathML Core layout, not inline text: the numerator is stacked above the denominator.
        numerator_bottom, denominator_top = p.evaluate(
            "['mi', 'mn'].map((tag, i) => { const r = document.querySelector('mfrac ' + tag).getBoundingClientRect();"
            " return i === 0 ? r.bottom : r.top; })")
        assert numerator_bottom <= denominator_top


@pytest.mark.slow
def test_external_requests_are_reported(tmp_path: Path) -> None:
    html = page(tmp_path, '<img src="http://example.com/x.png" alt="remote">\n'
                          '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="inline">')
    with open_page(html) as p:
        assert p.external_requests == ["http://example.com/x.png"]
        assert p.requests[0] == p.url == html.resolve().as_uri()


@pytest.fixture
def http_server() -> Iterator[tuple[str, list[str]]]:
    """A server on 127.0.0.1 that records the paths it is asked for: its base URL and that record."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(404)
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
@pytest.mark.parametrize("offline", [True, False])
def test_offline_pages_reach_no_server(tmp_path: Path, http_server: tuple[str, list[str]], offline: bool) -> None:
    base, hits = http_server
    html = page(tmp_path, f'<img src="{base}/remote.png" alt="remote">')
    with open_page(html, offline=offline) as p:
        assert p.external_requests == [f"{base}/remote.png"]
        assert hits == ([] if offline else ["/remote.png"])
        # Blocked, the request is no error of the page's; answered 404, it is.
        assert p.errors == ([] if offline else [f"Failed to load resource: the server responded with a status of "
                                                f"404 (Not Found) ({base}/remote.png)"])


@pytest.mark.slow
def test_missing_local_files_are_errors(tmp_path: Path) -> None:
    html = page(tmp_path, '<link rel="stylesheet" href="missing.css"><img src="missing.png" alt="missing">')
    with open_page(html) as p:
        assert p.errors == [f"Failed to load resource: net::ERR_FILE_NOT_FOUND ({(tmp_path / name).as_uri()})"
                            for name in ("missing.css", "missing.png")]
        assert p.external_requests == [(tmp_path / name).as_uri() for name in ("missing.css", "missing.png")]


@pytest.mark.slow
def test_evaluate_raises_what_the_page_throws(tmp_path: Path) -> None:
    with open_page(page(tmp_path, "<p>hi</p>")) as p:
        assert p.evaluate("document.querySelector('p').textContent") == "hi"
        assert p.evaluate("Promise.resolve({a: [1, 2]})") == {"a": [1, 2]}
        with pytest.raises(JavaScriptError, match="no such thing"):
            p.evaluate("(() => { throw new Error('no such thing') })()")
        assert p.errors == []


@pytest.mark.slow
def test_screenshot_is_a_full_page_png(tmp_path: Path) -> None:
    html = page(tmp_path, '<h1>Proof report</h1><div style="height: 2500px; background: #d0e0ff">tall</div>'
                          "<p>end</p>")
    shot = tmp_path / "shot.png"
    with open_page(html, screenshot=shot, width=800, height=600) as p:
        assert p.evaluate("innerWidth") == 800  # the viewport is restored after the full-page capture
    data = shot.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert width == 800
    assert height > 2500  # the whole page, not the 600-pixel viewport
    assert len(data) > 1000


@pytest.mark.slow
def test_load_timeout_is_a_clear_error(tmp_path: Path) -> None:
    html = page(tmp_path, "<script>while (true) {}</script>")  # the load event never fires
    start = time.monotonic()
    # Within the timeout the browser starts (slower on a loaded machine) and the page hangs; either way the error
    # says which answer or event did not come, and the hung browser is still closed.
    with pytest.raises(BrowserError, match=r"(no Page\.loadEventFired|did not answer \S+) within the 2 s timeout"), \
            open_page(html, timeout=2):
        pass
    assert time.monotonic() - start < 15
