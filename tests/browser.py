"""Headless Chromium for the overlay's browser tests, driven through --remote-debugging-pipe (JSON messages
separated by NUL on file descriptors 3 and 4): no WebSocket client and no browser-automation package needed.

``OBSERVE`` reads what an overlay page shows: its seats, board, pot and winner, and the state it draws from.
"""

import base64
import fcntl
import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (scripts/bootstrap)")

OBSERVE = """(() => {
  const text = (el, sel) => { const f = el.querySelector(sel); return f ? f.textContent : null; };
  const seats = [...document.querySelectorAll('#seats .seat')].map(el => ({
    seat: Number(el.dataset.seat), name: text(el, '.player'), stack: text(el, '.stack'),
    cards: [...el.querySelectorAll('.cards .card[data-card]')].map(c => c.dataset.card),
    backs: el.querySelectorAll('.cards .card.back').length, folded: el.classList.contains('folded'),
    equity: text(el, '.equity .pct'), toAct: el.classList.contains('to-act')}));
  const state = window.overlayState;
  return {now: Date.now() / 1000, seats, hand: state.hand, winnerHand: state.winnerHand, connected: state.connected,
          connects: state.connects, resyncs: state.resyncs,
          board: [...document.querySelectorAll('#board .card')].map(c => c.dataset.card),
          pot: document.querySelector('#pot .amount').textContent,
          winner: document.getElementById('winner').hidden ? null : document.getElementById('winner').textContent,
          stateCards: Object.values(state.seats).flatMap(s => s.cards),
          stateEquity: Object.values(state.seats).filter(s => s.equity).length};
})()"""


class Chromium:
    """Headless Chromium with a DevTools pipe: ``call(method, params, session)`` returns the result. ``extra_args``:
    more of Chromium's flags (a certificate to trust, say)."""

    def __init__(self, user_data_dir: Path, extra_args: tuple[str, ...] = ()):
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # above 4, so the redirections to 3 and 4 cannot overwrite one of them (bash: dash takes one digit only)
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_browser_r, from_browser_w)]
        for fd in (to_browser_r, from_browser_w):
            os.close(fd)
        args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-extensions", "--disable-default-apps", "--no-first-run", "--mute-audio",
                "--hide-scrollbars", "--remote-debugging-pipe", f"--user-data-dir={user_data_dir}",
                # every tab plays on time, as each OBS browser source does: no throttled timers in a tab behind
                "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                "--disable-backgrounding-occluded-windows",
                "--window-size=1920,1080", *extra_args, "about:blank"]
        self.proc = subprocess.Popen(["/bin/bash", "-c", f'exec "$0" "$@" 3<&{high[0]} 4>&{high[1]}', *args],
                                     pass_fds=high, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in high:
            os.close(fd)
        self._out = os.fdopen(to_browser_w, "wb", buffering=0)
        self._in = os.fdopen(from_browser_r, "rb", buffering=0)
        self._next = 0
        self.tabs: dict[str, str] = {}  # session → its tab's target id
        self._replies: dict[int, dict] = {}
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buffer = b""
        while True:
            chunk = self._in.read(65536)
            if not chunk:
                return
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "id" in message:
                    with self._cond:
                        self._replies[message["id"]] = message
                        self._cond.notify_all()

    def call(self, method: str, params: dict | None = None, session: str | None = None, timeout_s: float = 20):
        with self._cond:
            self._next += 1
            ident = self._next
        message = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._out.write(json.dumps(message).encode() + b"\0")
        with self._cond:
            if not self._cond.wait_for(lambda: ident in self._replies, timeout_s):
                raise TimeoutError(f"chromium did not answer {method} within {timeout_s} s")
            reply = self._replies.pop(ident)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    def open(self, url: str, before_load: str | None = None) -> str:
        """A new 1920×1080 tab with a transparent background on ``url``; returns its session. ``before_load``: a
        script run in the page before its own (to watch what the page does from its start)."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.tabs[session] = target
        self.call("Emulation.setDeviceMetricsOverride", {"width": 1920, "height": 1080, "deviceScaleFactor": 1,
                                                         "mobile": False}, session)
        self.call("Emulation.setDefaultBackgroundColorOverride", {"color": {"r": 0, "g": 0, "b": 0, "a": 0}}, session)
        self.call("Page.enable", {}, session)
        if before_load is not None:
            self.call("Page.addScriptToEvaluateOnNewDocument", {"source": before_load}, session)
        self.call("Page.navigate", {"url": url}, session)
        deadline = time.monotonic() + 15
        while not self.evaluate(session, "!!window.overlayState"):
            if time.monotonic() > deadline:
                raise AssertionError(f"{url} did not load the overlay: "
                                     f"{self.evaluate(session, 'document.documentElement.outerHTML')[:500]}")
            time.sleep(0.05)
        return session

    def open_connected(self, url: str, before_load: str | None = None) -> str:
        """:meth:`open`, then wait until the page is connected to the broker."""
        session = self.open(url, before_load)
        deadline = time.monotonic() + 15
        while not self.evaluate(session, "state.connected"):
            assert time.monotonic() < deadline, f"{url} did not connect to the broker"
            time.sleep(0.05)
        return session

    def evaluate(self, session: str, expression: str):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session)
        if "exceptionDetails" in result:
            raise RuntimeError(f"page: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, session: str, path: Path) -> None:
        data = self.call("Page.captureScreenshot", {"format": "png"}, session)["data"]
        path.write_bytes(base64.b64decode(data))

    def close_tab(self, session: str) -> None:
        self.call("Target.closeTarget", {"targetId": self.tabs.pop(session)})

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout_s=5)
        except (TimeoutError, RuntimeError, OSError):
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._out.close()
