"""A headless-Chromium harness for tests of HTML output: open a local file, report what a test needs.

`open_page(path)` starts a real Chromium (the Debian `chromium` package in CI; `ALIGN_CHROMIUM` names another
binary), loads ``file://path`` and, until the page is closed, records every console message, uncaught exception,
browser log entry and network request, evaluates JavaScript in the page and takes full-page screenshots::

    with open_page(report, screenshot=tmp_path / "report.png") as page:
        assert page.errors == []
        assert page.external_requests == []
        assert page.evaluate("document.querySelectorAll('table.obligations').length") == 1

It speaks the Chrome DevTools Protocol itself, over ``--remote-debugging-pipe`` (the browser reads commands from
its fd 3 and writes responses and events to its fd 4, each a JSON message ended by a NUL byte). That needs no
dependency beyond the standard library -- no Selenium, Playwright or websocket client, no driver binary matched to
the browser's version, no TCP port -- and what is tested is the rendering of a real browser, not of a DOM emulator.

By default the page is offline: requests over the network (http, https, ws, wss, ftp; to localhost too) are
recorded, then blocked, so that a stray external reference shows up in `Page.external_requests` instead of stalling
the load event on an unreachable network (a request blocked so is not an error in `Page.log`; one that fails
online is).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import math
import os
import select
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

FLAGS = [
    "--headless",
    "--no-sandbox",  # Chromium will not start as root with its sandbox, nor sandbox itself without user namespaces
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-dev-shm-usage",  # containers often mount a 64 MB /dev/shm, too small for the renderer's buffers
    "--hide-scrollbars",  # screenshots without scrollbars, the same at every width
    "--mute-audio",
]

# Blocked when the page is offline: everything a page can fetch over the network, loopback servers included.
REMOTE_URL_PATTERNS = ["http://*", "https://*", "ws://*", "wss://*", "ftp://*"]


REQUIRED = os.environ.get("ALIGN_REQUIRE_BROWSER", "") not in ("", "0")
"""CI sets ALIGN_REQUIRE_BROWSER=1: a missing browser then fails the tests that need one instead of skipping them."""


class BrowserError(RuntimeError):
    """Chromium could not be started, did not answer in time, or answered a command with an error."""


class JavaScriptError(RuntimeError):
    """A `Page.evaluate` expression threw."""


def chromium_path() -> str | None:
    """The Chromium binary: `$ALIGN_CHROMIUM` if set, else `chromium` or `chromium-browser` on the PATH."""
    override = os.environ.get("ALIGN_CHROMIUM")
    if override:
        return override
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _remote_text(obj: dict[str, Any]) -> str:
    """A console argument (a CDP RemoteObject) as the console would print it."""
    if "value" in obj:
        value = obj["value"]
        return value if isinstance(value, str) else json.dumps(value)
    if "unserializableValue" in obj:
        return str(obj["unserializableValue"])
    if "description" in obj:
        return str(obj["description"])
    return str(obj.get("type", "?"))


def _exception_text(details: dict[str, Any]) -> str:
    """An uncaught exception (CDP ExceptionDetails) as one line: "Uncaught Error: boom (file:///…:3:9)"."""
    text = str(details.get("text", "Uncaught"))
    exception = details.get("exception") or {}
    description = str(exception.get("description") or exception.get("value") or "").strip()
    first_line = description.splitlines()[0] if description else ""
    if first_line and first_line not in text:
        text = f"{text} {first_line}"
    url = details.get("url")
    if url:
        text += f" ({url}:{details.get('lineNumber', 0) + 1}:{details.get('columnNumber', 0) + 1})"
    return text


class _Browser:
    """A Chromium process and the DevTools pipe to it: send commands, pump events, wait for responses."""

    def __init__(self, binary: str, width: int, height: int) -> None:
        self.profile = Path(tempfile.mkdtemp(prefix="align-chromium-"))
        self.pid: int | None = None
        self._next_id = 0
        self._buffer = b""
        self._responses: dict[int, dict[str, Any]] = {}
        self.on_event: Callable[[dict[str, Any]], None] = lambda message: None
        self.closed = False
        # Two pipes: commands (we write, the browser reads on its fd 3) and messages (its fd 4, we read).
        # The browser's ends are first moved to fds >= 10 so that the dup2s onto 3 and 4 cannot clobber each other.
        cmd_read, self._cmd_write = os.pipe()
        msg_read, msg_write = os.pipe()
        self._msg_read = msg_read
        self._poll = select.poll()  # not select.select, which fails on fds over 1023
        self._poll.register(msg_read, select.POLLIN)
        child_cmd = fcntl.fcntl(cmd_read, fcntl.F_DUPFD_CLOEXEC, 10)
        child_msg = fcntl.fcntl(msg_write, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(cmd_read)
        os.close(msg_write)
        self._stderr_path = self.profile / "chromium.log"
        argv = [binary, *FLAGS, f"--user-data-dir={self.profile / 'profile'}", f"--window-size={width},{height}",
                "--remote-debugging-pipe", "about:blank"]
        try:
            # posix_spawn, not Popen: the browser's pipe ends must be exactly fds 3 and 4, which Popen can only do
            # from a preexec_fn. dup2 clears close-on-exec on the targets; every other fd Python opened is
            # close-on-exec already. setpgroup: the browser leads its own process group, so that a browser that
            # will not close can be killed with its renderers and zygotes.
            self.pid = os.posix_spawn(binary, argv, dict(os.environ), file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_OPEN, 1, str(self._stderr_path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
                (os.POSIX_SPAWN_DUP2, 1, 2),
                (os.POSIX_SPAWN_DUP2, child_cmd, 3),
                (os.POSIX_SPAWN_DUP2, child_msg, 4),
            ], setpgroup=0)
        except OSError as err:
            self.close()
            raise BrowserError(f"cannot start {binary}: {err}") from err
        finally:
            os.close(child_cmd)
            os.close(child_msg)

    def stderr_tail(self, lines: int = 20) -> str:
        try:
            text = self._stderr_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def _fail(self, message: str) -> BrowserError:
        tail = self.stderr_tail()
        return BrowserError(f"{message}\n--- chromium stderr (last lines) ---\n{tail}" if tail else message)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self._cmd_write, data):]
        except OSError as err:  # EPIPE: the browser has gone
            raise self._fail(f"chromium closed its DevTools pipe ({err}) while sending {method}") from err
        return self._next_id

    def pump(self, deadline: float) -> bool:
        """Read what the browser has sent, waiting until `deadline` (a `time.monotonic()`) for at least one byte.

        Dispatches every complete message: events to `on_event`, responses to `_responses`. False on timeout.
        """
        if not self._poll.poll(max(0.0, deadline - time.monotonic()) * 1000):
            return False
        chunk = os.read(self._msg_read, 1 << 20)
        if not chunk:
            raise self._fail("chromium closed its DevTools pipe (it exited or crashed)")
        self._buffer += chunk
        *messages, self._buffer = self._buffer.split(b"\0")
        for raw in messages:
            message = json.loads(raw)
            if "id" in message:
                self._responses[message["id"]] = message
            else:
                self.on_event(message)
        return True

    def drain(self) -> None:
        """Dispatch whatever has already arrived, without waiting (nothing once the browser is closed)."""
        while not self.closed and self.pump(time.monotonic()):
            pass

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
             timeout: float = 30.0, deadline: float | None = None) -> dict[str, Any]:
        """Send a command and wait for its result, dispatching the events that arrive meanwhile.

        The wait ends after `timeout` seconds, or at `deadline` if given (`timeout` is then only quoted in errors).
        """
        call_id = self.send(method, params, session)
        if deadline is None:
            deadline = time.monotonic() + timeout
        while call_id not in self._responses:
            if not self.pump(deadline):
                raise self._fail(f"chromium did not answer {method} within the {timeout:g} s timeout")
        response = self._responses.pop(call_id)
        if "error" in response:
            raise BrowserError(f"{method} failed: {response['error'].get('message', response['error'])}")
        result: dict[str, Any] = response.get("result", {})
        return result

    def close(self) -> None:
        """Browser.close, wait a little, then kill its process group; remove the profile."""
        if self.closed:
            return
        self.closed = True
        if self.pid is not None:
            with contextlib.suppress(BrowserError, OSError):
                self.send("Browser.close")
            if not self._wait(5.0):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.pid, signal.SIGKILL)
                self._wait(5.0)
        for fd in (self._cmd_write, self._msg_read):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _wait(self, timeout: float) -> bool:
        """Reap the browser process; False if it is still running after `timeout` seconds."""
        assert self.pid is not None
        deadline = time.monotonic() + timeout
        while True:
            try:
                pid, _ = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return True
            if pid:
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)


class Page:
    """A page open in headless Chromium, and everything it has reported so far."""

    def __init__(self, browser: _Browser, session: str, url: str, width: int, height: int) -> None:
        self._browser = browser
        self._session = session
        self.url = url
        self.width = width
        self.height = height
        self.console: list[tuple[str, str]] = []  # (type, text): ("log", "hello"), ("error", "boom"), …
        self.exceptions: list[str] = []  # uncaught exceptions and unhandled rejections
        self.log: list[tuple[str, str, str]] = []  # (level, text, url) of Log.entryAdded: network, violations, …
        self.requests: list[str] = []  # every URL requested, the page's own first
        self._seen: set[str] = set()  # the names of this page's events so far, for `_wait_event`
        browser.on_event = self._on_event

    # -- what a test reads ---------------------------------------------------------------------------------------

    @property
    def errors(self) -> list[str]:
        """Console errors and failed assertions, uncaught exceptions, and log entries of level "error"."""
        self._browser.drain()
        return ([f"console.{kind}: {text}" for kind, text in self.console if kind in ("error", "assert")]
                + self.exceptions
                + [f"{text} ({url})" if url else text for level, text, url in self.log if level == "error"])

    @property
    def external_requests(self) -> list[str]:
        """Requested URLs other than the page's own file:// URL and data: URLs."""
        self._browser.drain()
        return [url for url in self.requests if url != self.url and not url.startswith("data:")]

    def evaluate(self, expression: str, timeout: float = 30.0) -> Any:
        """The value of a JavaScript expression in the page (JSON-serialised; promises are awaited)."""
        result = self._browser.call("Runtime.evaluate", {
            "expression": expression, "returnByValue": True, "awaitPromise": True,
        }, self._session, timeout)
        if "exceptionDetails" in result:
            raise JavaScriptError(f"{expression!r} threw: {_exception_text(result['exceptionDetails'])}")
        return result["result"].get("value")

    def settle(self, timeout: float = 30.0) -> None:
        """Wait for the page's fonts, a rendered frame and a task after it; dispatch what the page reported meanwhile.

        Called once the load event has fired, so that what a test reads includes the rejections and messages of
        the load's last tasks and the layout has its fonts; call it again after making the page do something.
        """
        self.evaluate("document.fonts.ready.then(() => new Promise(done => {"
                      " requestAnimationFrame(() => setTimeout(done, 0)); setTimeout(done, 1000); }))", timeout)
        self._browser.drain()

    def screenshot(self, path: Path) -> Path:
        """Write a PNG of the whole page (not just the viewport) at the page's width to `path`."""
        metrics = self._call("Page.getLayoutMetrics")
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        height = max(self.height, math.ceil(size["height"]))
        self._call("Emulation.setDeviceMetricsOverride",
                   {"width": self.width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        try:
            shot = self._call("Page.captureScreenshot", {"format": "png", "fromSurface": True})
        finally:
            self._set_viewport()
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    # -- machinery -----------------------------------------------------------------------------------------------

    def _call(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30.0,
              deadline: float | None = None) -> dict[str, Any]:
        return self._browser.call(method, params, self._session, timeout, deadline)

    def _set_viewport(self) -> None:
        self._call("Emulation.setDeviceMetricsOverride",
                   {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False})

    def _on_event(self, message: dict[str, Any]) -> None:
        if message.get("sessionId") != self._session:
            return
        method, params = message["method"], message.get("params", {})
        self._seen.add(method)
        if method == "Runtime.consoleAPICalled":
            self.console.append((params["type"], " ".join(_remote_text(arg) for arg in params.get("args", []))))
        elif method == "Runtime.exceptionThrown":
            self.exceptions.append(_exception_text(params["exceptionDetails"]))
        elif method == "Log.entryAdded":
            entry = params["entry"]
            self.log.append((entry["level"], entry["text"], entry.get("url", "")))
        elif method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])

    def _wait_event(self, name: str, deadline: float, timeout: float) -> None:
        while name not in self._seen:
            if not self._browser.pump(deadline):
                raise self._browser._fail(f"{self.url}: no {name} within the {timeout:g} s timeout")

    def _open(self, offline: bool, deadline: float, timeout: float) -> None:
        def call(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
            return self._call(method, params, timeout, deadline)

        for domain in ("Runtime", "Log", "Network", "Page"):
            call(f"{domain}.enable")
        if offline:
            call("Network.setBlockedURLs", {"urls": REMOTE_URL_PATTERNS})
        call("Emulation.setDeviceMetricsOverride",
             {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False})
        self._seen.clear()  # about:blank's events are not the page's
        navigation = call("Page.navigate", {"url": self.url})
        if navigation.get("errorText"):
            raise BrowserError(f"cannot open {self.url}: {navigation['errorText']}")
        self._wait_event("Page.loadEventFired", deadline, timeout)
        self.settle(max(0.0, deadline - time.monotonic()))


needs_browser = pytest.mark.skipif(
    not REQUIRED and chromium_path() is None,
    reason="no Chromium (install the `chromium` package, or set ALIGN_CHROMIUM; ALIGN_REQUIRE_BROWSER=1 fails instead)",
)
"""The mark of a test module that opens pages."""


@contextlib.contextmanager
def open_page(html_path: Path, screenshot: Path | None = None, width: int = 1200, height: int = 900,
              timeout: float = 60.0, offline: bool = True) -> Iterator[Page]:
    """Open `html_path` in a fresh headless Chromium; yield the `Page` once its load event has fired.

    `timeout` bounds the start of the browser and the load of the page together; it is a safety net, not a wait.
    `screenshot`: write a full-page PNG there once the page has loaded. `offline`: block requests to the network
    (they are still recorded in `requests`). The browser is closed and its profile removed on leaving the block.
    """
    binary = chromium_path()
    if binary is None:
        raise BrowserError("no Chromium found: install the `chromium` package or set ALIGN_CHROMIUM")
    url = Path(html_path).resolve().as_uri()
    deadline = time.monotonic() + timeout
    browser = _Browser(binary, width, height)
    try:
        target = browser.call("Target.createTarget", {"url": "about:blank"}, timeout=timeout, deadline=deadline)
        session = browser.call("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True},
                               timeout=timeout, deadline=deadline)["sessionId"]
        page = Page(browser, session, url, width, height)
        page._open(offline, deadline, timeout)
        if screenshot is not None:
            page.screenshot(screenshot)
        yield page
        browser.drain()
    finally:
        browser.close()
