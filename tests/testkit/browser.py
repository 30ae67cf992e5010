"""Headless Chromium for the HTML-page tests, driven over the DevTools protocol through a pipe
(``--remote-debugging-pipe``: JSON messages ended by NUL on fds 3 and 4; no websocket client,
no port). The network is blocked twice over (every host name resolves to nothing, and
``Network.setBlockedURLs`` refuses http, https, ws and wss), and every request the page makes is
recorded, as are console errors, uncaught exceptions and log entries of level error.

:func:`chromium_binary` finds the browser (Debian's ``chromium``); tests skip with a loud reason
only when there is none (``scripts/setup.sh`` installs it where it can).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def chromium_binary() -> str | None:
    """The first Chromium on PATH (``MIRAGE_CHROMIUM`` names one explicitly)."""
    explicit = os.environ.get("MIRAGE_CHROMIUM")
    if explicit:
        return explicit if shutil.which(explicit) else None
    return next((found for name in CANDIDATES if (found := shutil.which(name))), None)


@dataclass
class PageVisit:
    """What happened while a page was open."""

    url: str
    requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    log_errors: list[str] = field(default_factory=list)
    screenshot: bytes | None = None
    evaluated: dict = field(default_factory=dict)

    @property
    def external_requests(self) -> list[str]:
        return [u for u in self.requests if u != self.url]

    @property
    def errors(self) -> list[str]:
        return self.console_errors + self.exceptions + self.log_errors


def _high(fd: int) -> int:
    """``fd`` duplicated to a number above 10 (so that moving it to 3 or 4 in the child
    cannot overwrite the other end)."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return high


class Chromium:
    """One headless browser over a DevTools pipe, with one page attached."""

    def __init__(self, binary: str, width: int = 1200, height: int = 1000):
        to_browser_r, to_browser_w = (_high(fd) for fd in os.pipe())
        from_browser_r, from_browser_w = (_high(fd) for fd in os.pipe())
        self.profile = tempfile.mkdtemp(prefix="mirage-chromium-")

        def fds():
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--remote-debugging-pipe",
             "--host-resolver-rules=MAP * ~NOTFOUND", "--disable-gpu",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--metrics-recording-only", "--hide-scrollbars",
             f"--user-data-dir={self.profile}", f"--window-size={width},{height}",
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=fds, pass_fds=(3, 4))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.writer = os.fdopen(to_browser_w, "wb", buffering=0)
        self.reader = os.fdopen(from_browser_r, "rb", buffering=0)
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict] = []
        self.session: str | None = None

    # ------------------------------------------------------------------ protocol

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self.buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self.reader.fileno(), 1 << 16)
            if not chunk:
                raise RuntimeError(f"chromium closed the DevTools pipe (exit "
                                   f"{self.proc.poll()})")
            self.buffer += chunk
        raw, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(raw)

    def send(self, method: str, params: dict | None = None, *, browser: bool = False,
             timeout: float = 30.0) -> dict:
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session and not browser:
            message["sessionId"] = self.session
        self.writer.write(json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 30.0) -> dict:
        deadline = time.monotonic() + timeout
        for event in self.events:
            if event["method"] == method:
                return event
        while True:
            event = self._read_message(deadline)
            if "method" in event:
                self.events.append(event)
                if event["method"] == method:
                    return event

    def attach(self) -> None:
        targets = self.send("Target.getTargets", browser=True)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.send("Target.attachToTarget", {"targetId": page["targetId"],
                                                           "flatten": True},
                                 browser=True)["sessionId"]
        for domain in ("Network", "Runtime", "Log", "Page"):
            self.send(f"{domain}.enable")
        self.send("Network.setBlockedURLs", {"urls": ["http://*", "https://*", "ws://*",
                                                      "wss://*"]})

    def evaluate(self, expression: str) -> object:
        result = self.send("Runtime.evaluate", {"expression": expression,
                                                "returnByValue": True, "awaitPromise": True})
        return result.get("result", {}).get("value")

    def close(self) -> None:
        try:
            self.send("Browser.close", browser=True, timeout=5)
        except Exception:  # already gone: the process is ended below either way
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for f in (self.writer, self.reader):
            f.close()
        shutil.rmtree(self.profile, ignore_errors=True)


def visit(path: Path, *, ready: str = "document.body.hasAttribute('data-items-ready')",
          actions: list[str] = (), probes: dict[str, str] | None = None,
          screenshot: bool = True, full_page: bool = False, binary: str | None = None,
          media: str = "", dark: bool = False, size: tuple[int, int] = (1200, 1000),
          timeout: float = 60.0) -> PageVisit:
    """Open ``path`` (a local file) with the network blocked; wait until ``ready`` is true
    in the page, run ``actions`` (JavaScript), read ``probes`` (name -> expression), take a
    screenshot. ``media`` (``print``) and ``dark`` (``prefers-color-scheme: dark``) emulate
    the reader's medium. Returns what the page requested and every error it raised."""
    binary = binary or chromium_binary()
    if binary is None:
        raise FileNotFoundError("no chromium binary")
    url = Path(path).resolve().as_uri()
    browser = Chromium(binary, *size)
    visit_ = PageVisit(url)
    try:
        browser.attach()
        browser.send("Emulation.setEmulatedMedia", {"media": media, "features": [
            {"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})
        browser.send("Page.navigate", {"url": url})
        browser.wait_for("Page.loadEventFired", timeout)
        deadline = time.monotonic() + timeout
        while not browser.evaluate(ready):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the page never became ready ({ready})")
            time.sleep(0.1)
        for action in actions:
            browser.evaluate(action)
        visit_.evaluated = {name: browser.evaluate(expr)
                            for name, expr in (probes or {}).items()}
        if screenshot:
            params: dict = {"format": "png"}
            if full_page:
                size = browser.send("Page.getLayoutMetrics")["cssContentSize"]
                params.update(captureBeyondViewport=True, clip={
                    "x": 0, "y": 0, "width": size["width"], "height": size["height"],
                    "scale": 1})
            shot = browser.send("Page.captureScreenshot", params)
            visit_.screenshot = base64.b64decode(shot["data"])
        time.sleep(0.3)     # let late events (a deferred image load) arrive
        browser.evaluate("1")
    finally:
        browser.close()
    for event in browser.events:
        method, params = event["method"], event.get("params", {})
        if method == "Network.requestWillBeSent":
            visit_.requests.append(params["request"]["url"])
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            visit_.console_errors.append(" ".join(str(a.get("value", a.get("description")))
                                                  for a in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            visit_.exceptions.append(details.get("exception", {}).get("description")
                                     or details.get("text", "exception"))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            visit_.log_errors.append(f"{params['entry'].get('source')}: "
                                     f"{params['entry'].get('text')} "
                                     f"{params['entry'].get('url', '')}")
    return visit_
