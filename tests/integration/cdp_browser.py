#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Headless Chromium driven over the DevTools protocol through
--remote-debugging-pipe (standard library only), for the dashboard's tests
(web_dashboard.py against a server, web_gone_pruned.py against app.js
alone): open a page, evaluate JavaScript in it, wait for a condition."""
import json
import os
import subprocess
import time


class Browser:
    """Chromium with the DevTools protocol on fds 3 (in) and 4 (out),
    one JSON message per NUL-terminated record."""

    def __init__(self, exe, profile):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()
        # Chromium reads fd 3 and writes fd 4.
        def fds():
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-dev-shm-usage", "--remote-debugging-pipe", "--window-size=1400,1700",
             f"--user-data-dir={profile}", "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4),  # dup2ed by fds(), which runs before the close
            stdout=subprocess.DEVNULL, stderr=open(profile + ".log", "w"))
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buf = b""
        self.next_id = 0
        self.session = None

    def send(self, method, params=None, session=True, timeout=30):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while time.time() < deadline:
            while b"\0" not in self.buf:
                chunk = os.read(self.from_chrome, 65536)
                if not chunk:
                    raise RuntimeError("chromium closed the pipe")
                self.buf += chunk
            raw, self.buf = self.buf.split(b"\0", 1)
            m = json.loads(raw)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
        raise RuntimeError(f"{method}: no answer")

    def open(self):
        t = self.send("Target.createTarget", {"url": "about:blank"}, session=False)
        a = self.send("Target.attachToTarget", {"targetId": t["targetId"], "flatten": True},
                      session=False)
        self.session = a["sessionId"]
        self.send("Page.bringToFront")
        self.send("Page.enable")
        self.send("Runtime.enable")

    def eval(self, expr):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        return r.get("result", {}).get("value")

    def wait(self, expr, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            try:
                v = self.eval(expr)
            except RuntimeError:
                v = None
            if v:
                return v
            time.sleep(0.2)
        return None

    def close(self):
        try:
            self.send("Browser.close", session=False, timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
