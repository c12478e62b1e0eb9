"""Headless Chromium for tests of HTML pages: load a file, report console errors and images.

Debian's ``chromium`` (``.ci/run`` installs it); the tests that use it skip
with a reason where it is missing and cannot be installed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


# ---------------------------------------------------------------------------
# Headless Chromium: the page loads without console errors and every image renders
# ---------------------------------------------------------------------------


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        exe = shutil.which(name)
        if exe:
            return exe
    can_install = (
        os.environ.get("CI")
        and hasattr(os, "geteuid")
        and os.geteuid() == 0
        and shutil.which("apt-get")
    )
    if can_install:
        subprocess.run(
            "apt-get update -qq && apt-get install -y -qq chromium",
            shell=True,
            check=False,
            capture_output=True,
            timeout=900,
        )
        exe = shutil.which("chromium")
        if exe:
            return exe
    pytest.skip(
        "headless Chromium is not installed (Debian: apt-get install chromium); "
        "the report's rendering is not checked"
    )


class _DevTools:
    """A minimal Chrome DevTools Protocol client over one page's websocket."""

    def __init__(self, ws_url: str) -> None:
        import websocket

        self.ws = websocket.create_connection(ws_url, timeout=20, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        msg_id = self.next_id
        self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                result: dict[str, Any] = msg.get("result", {})
                return result
            self.events.append(msg)

    def wait_for(self, method: str, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {method} within {timeout} s")
            self.events.append(json.loads(self.ws.recv()))

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    def errors(self) -> list[str]:
        found = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(f"exception: {params['exceptionDetails'].get('text')}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append(f"console.{params['type']}: {params.get('args')}")
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                found.append(f"log: {params['entry'].get('text')} {params['entry'].get('url', '')}")
        return found

    def close(self) -> None:
        self.ws.close()


@contextmanager
def browser() -> Iterator[Callable[[Path], dict[str, Any]]]:
    pytest.importorskip("websocket", reason="the DevTools client needs websocket-client")
    exe = _chromium()
    # Chromium's helper processes (crashpad, GPU, renderers) may still be writing into the
    # profile as the directory is removed: ending the whole process group first makes that
    # rare, and a leftover file in a temporary directory is not a test failure.
    profile_dir = tempfile.TemporaryDirectory(prefix="ecnsim-chromium-", ignore_cleanup_errors=True)
    with profile_dir as profile:
        proc = subprocess.Popen(
            [
                exe,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                "--remote-debugging-port=0",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            port_file = Path(profile) / "DevToolsActivePort"
            deadline = time.monotonic() + 20
            while not (port_file.is_file() and port_file.read_text().strip()):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("Chromium did not start its DevTools server")
                time.sleep(0.05)
            port = int(port_file.read_text().split()[0])
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
                targets = json.load(r)
            page = next(t for t in targets if t.get("type") == "page")

            def load(path: Path) -> dict[str, Any]:
                dt = _DevTools(page["webSocketDebuggerUrl"])
                try:
                    for domain in ("Page", "Runtime", "Log"):
                        dt.call(f"{domain}.enable")
                    dt.events.clear()
                    dt.call("Page.navigate", url=path.resolve().as_uri())
                    dt.wait_for("Page.loadEventFired")
                    images = dt.evaluate(
                        "Array.from(document.images).map(i => "
                        "({complete: i.complete, width: i.naturalWidth, height: i.naturalHeight}))"
                    )
                    resources = dt.evaluate(
                        "performance.getEntriesByType('resource').map(e => e.name)"
                    )
                    title = dt.evaluate("document.title")
                    time.sleep(0.2)  # let late console messages arrive
                    dt.call("Runtime.evaluate", expression="1")
                    return {
                        "images": images,
                        "resources": resources,
                        "title": title,
                        "errors": dt.errors(),
                    }
                finally:
                    dt.close()

            yield load
        finally:
            _end_group(proc, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                _end_group(proc, signal.SIGKILL)
                proc.wait()


def _end_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    """Send ``sig`` to Chromium and every process it started (its own session)."""
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)
