#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Drive headless Chromium over the DevTools protocol (through
--remote-debugging-pipe: standard library only) against ddmon's web
dashboard, and check what a person would see:
  - the VM list shows a row per VM of the server;
  - a VM's page shows the thread names the API lists for it;
  - a thread-state change (the main thread's, switched by the simulator
    on a schedule) shows up without a reload, and flashes;
  - a screenshot of the VM page is kept as an artifact.

Usage: web_dashboard.py CHROMIUM URL VMKEY APPNAME SCREENSHOT.png
Prints "PASS desc" / "FAIL desc -- why" lines; exit 0 (2 if Chromium could
not be driven at all).
"""
import base64
import http.client
import json
import os
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True  # nothing written next to the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp_browser import Browser  # noqa: E402

chromium, url, vm, app, shot = sys.argv[1:6]
parts = urllib.parse.urlsplit(url)
token = urllib.parse.parse_qs(parts.query)["token"][0]
results = []


def check(desc, cond, why=""):
    results.append(f"PASS {desc}" if cond else f"FAIL {desc} -- {why}")


def api(path):
    c = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    c.request("GET", path, headers={"Authorization": "Bearer " + token})
    r = c.getresponse()
    body = r.read()
    c.close()
    return json.loads(body) if r.status == 200 else None


profile = os.path.join(os.path.dirname(shot) or ".", "chromium-profile")
b = Browser(chromium, profile)
try:
    b.open()
except Exception as e:  # no display stack, no chromium that runs here
    print(f"SKIP chromium could not be driven: {e}")
    b.close()
    sys.exit(2)

try:
    b.send("Page.navigate", {"url": url})
    # The first URL redirects to "/" with the token in a cookie.
    here = b.wait("location.search === '' && document.readyState === 'complete' && location.href", 15)
    check("the tokenised URL lands on the dashboard without the token in the address",
          here and "token" not in here, f"at {b.eval('location.href')}")
    b.eval("window.__loadMark = 'same page'")

    # The VM list.
    keys = b.wait("(() => { const r = [...document.querySelectorAll('tr.vm-row')];"
                  " return r.length ? r.map(e => e.dataset.key) : null })()", 15) or []
    vms = (api("/api/vms") or {}).get("vms", {})
    check("the VM list has a row per VM the API lists", set(keys) == set(vms) and len(keys) > 0,
          f"rows {keys}, API {list(vms)}")
    text = b.eval("document.querySelector('section[data-view=vms]').innerText") or ""
    check("the VM list shows the simulated VM's app name", app in text, text[:300])

    # The VM page, reached by a click on its row (no page load).
    b.eval(f"document.querySelector('tr.vm-row[data-key=\"{vm}\"]').click()")
    names_js = ("(() => [...document.querySelectorAll('section[data-view=threads] td[data-col=name]')]"
                ".map(e => e.textContent))()")
    dom = set()
    api_names = set()
    deadline = time.time() + 20
    while time.time() < deadline:
        dom = set(b.eval(names_js) or [])
        v = api("/api/vms/" + urllib.parse.quote(vm, safe="") + "/views/threads") or {}
        api_names = {r["name"] for r in v.get("rows", [])}
        if dom and dom == api_names:
            break
        time.sleep(0.3)
    check("the VM page shows the thread names the API lists", dom and dom == api_names,
          f"DOM {sorted(dom)} API {sorted(api_names)}")
    check("the threads include the VM's main thread", "main" in dom, f"{sorted(dom)}")

    # A thread-state change, live. The simulator switches the main thread
    # between waiting and runnable every 1.5 s and at no other time
    # (--main-state-every), so a change comes on a known schedule. A row's
    # state is "\u2014" until the first THST reply reaches the page (the
    # names come earlier, with THCR): only known states are compared.
    main_js = ("(() => { for (const r of document.querySelectorAll("
               "'section[data-view=threads] tr[data-row]')) {"
               " const n = r.querySelector('td[data-col=name]');"
               " if (!n || n.textContent !== 'main') continue;"
               " const c = r.querySelector('td[data-col=state]');"
               " return c ? [c.textContent, c.classList.contains('flash')] : ['no state cell', false] }"
               " return null })()")
    t0 = time.time()
    known = None       # main's first known state
    known_after = None  # seconds until the page showed it
    changed = None
    flashed = False
    seen = []
    deadline = t0 + 60
    while time.time() < deadline and not (changed and flashed):
        now = b.eval(main_js)
        if now and now[0] != "\u2014":
            if not seen or seen[-1] != now[0]:
                seen.append(now[0])
            if known is None:
                known, known_after = now[0], time.time() - t0
            elif now[0] != known:
                if changed is None:  # a few more switches to catch the flash, not 60 s
                    changed = (known, now[0])
                    deadline = min(deadline, time.time() + 10)
                flashed = flashed or now[1]
        time.sleep(0.1)
    if known_after is not None:
        results.append(f"# main's state known {known_after:.1f} s after the names")
    check("a thread-state change shows up without a reload",
          changed is not None and b.eval("window.__loadMark") == "same page",
          f"main's states seen {seen}; now {b.eval(main_js)}; mark {b.eval('window.__loadMark')}")
    if changed:
        results.append(f"# main: {changed[0]} -> {changed[1]}")
    check("a changed state flashes", flashed, f"no td.flash on main's state cell over {seen}")
    spark = b.eval("(() => { const s = document.querySelector('section[data-view=threads]');"
                   " return [s.querySelectorAll('tr[data-row]').length,"
                   " s.querySelectorAll('svg.spark polyline').length] })()") or [0, -1]
    check("each thread has a CPU sparkline", spark[0] > 0 and spark[0] == spark[1],
          f"{spark[1]} sparklines for {spark[0]} rows")
    chart = b.wait("document.querySelector('#charts svg.chart polyline') !== null", 10)
    check("the figures over time are charted", bool(chart), "no chart")

    # The GC button: the heap bitmap appears, with its legend.
    b.eval("document.querySelector('button[data-command=gc]').click()")
    img = b.wait("(() => { const i = document.querySelector('section[data-view=\"heap.bitmap\"] img');"
                 " return i && i.complete && i.naturalWidth > 0 ? [i.naturalWidth, i.naturalHeight] : null })()",
                 20)
    legend = b.eval("document.querySelectorAll('section[data-view=\"heap.bitmap\"] .legend span').length")
    said = b.eval("(document.querySelector('#commands .result') || {}).innerText")
    check("the gc button fills the heap bitmap image, with its legend", img and legend and legend >= 2,
          f"image {img}, {legend} legend entries, result {said}")
    # heap.summary's timestamp (unit epoch_ms, a point in time) reads as a
    # date and time, not as a count of milliseconds
    ts = b.wait("(() => { const e = document.querySelector('section[data-view=\"heap.summary\"] "
                "td[data-col=timestamp]'); return e && e.textContent ? e.textContent : null })()", 20)
    check("heap.summary's timestamp shows as a date and time (unit epoch_ms)",
          ts and not ts.replace(" ", "").rstrip("ms").isdigit() and str(time.localtime().tm_year) in ts, f"{ts!r}")
    # Per-VM buttons only for commands that take a VM; exit asks first.
    buttons = b.eval("[...document.querySelectorAll('#commands button')].map(e => e.dataset.command)") or []
    cmds = (api("/api/commands") or {}).get("commands", {})
    no_vm = sorted(n for n, c in cmds.items() if c.get("takes_vm") is False)
    check("the VM page has a button for each command that takes a VM, none for the others",
          set(buttons) == {n for n, c in cmds.items() if c.get("takes_vm")} and
          not set(buttons) & set(no_vm), f"buttons {buttons}, not a VM's: {no_vm}")
    if "exit" in buttons:
        b.eval("window.__asked = []; window.confirm = (q) => { window.__asked.push(q); return false; }")
        b.eval("document.querySelector('button[data-command=exit]').click()")
        time.sleep(1.5)
        asked = b.eval("window.__asked") or []
        vms = (api("/api/vms") or {}).get("vms", {})
        check("the exit button asks first, and a 'no' leaves the VM running",
              len(asked) == 1 and vm in asked[0] and vms.get(vm, {}).get("state") == "ready",
              f"asked {asked}, VM {vms.get(vm)}")
    else:
        check("the exit button asks first, and a 'no' leaves the VM running", False, "no exit button")
    b.eval("window.scrollTo(0, 0)")

    # The screenshot, kept.
    time.sleep(1.5)  # let the flash fade
    png = base64.b64decode(b.send("Page.captureScreenshot", {"format": "png"})["data"])
    with open(shot, "wb") as f:
        f.write(png)
    check("the screenshot is a PNG", png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10000,
          f"{len(png)} bytes")

    # The VM exits (its exit button, a 'yes'): its page says it is gone,
    # keeps what it showed last (its views, its chart) and its command
    # buttons are off.
    b.eval("window.confirm = () => true")
    b.eval("document.querySelector('button[data-command=exit]').click()")
    gone = b.wait("(() => { const g = document.getElementById('gone');"
                  " const bs = [...document.querySelectorAll('#commands button')];"
                  " return g && !g.hidden && bs.length && bs.every((x) => x.disabled) ?"
                  " [g.innerText, document.getElementById('crumb').innerText,"
                  "  document.querySelectorAll('#views section').length,"
                  "  document.querySelectorAll('#charts svg.chart').length] : null })()", 30)
    check("a VM that exits: its page says it is gone, keeps its views and chart, its buttons off",
          gone and "left" in gone[0] and gone[1].endswith("gone") and gone[2] > 0 and gone[3] > 0,
          f"{gone}")
finally:
    b.close()
print("\n".join(results))
