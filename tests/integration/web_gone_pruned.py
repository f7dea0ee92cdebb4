#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The dashboard's app.js alone in headless Chromium (no server): a page
made from web/static/index.html whose EventSource and fetch are fakes the
test feeds. Many VMs leave one after another, each watched on its page as
it goes (its view removed, then its row gone from the VM list); then:
  - each of the last GONE_KEPT (app.js's constant) still shows its page as
    when it left: marked gone, its last view kept, its app name in the
    title;
  - each older one shows nothing of its own any more: what the page held
    of it (kept views, its last row) was dropped, so the page's maps do not
    grow with every VM ever seen;
  - a VM that comes back before it is dropped leaves the gone list.

Usage: web_gone_pruned.py CHROMIUM SRCDIR WORKDIR
Prints "PASS desc" / "FAIL desc -- why" lines and "# ..." notes; exit 0 (2
if Chromium could not be driven at all).
"""
import json
import os
import re
import sys
import time

sys.dont_write_bytecode = True  # nothing written next to the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp_browser import Browser  # noqa: E402

chromium, srcdir, work = sys.argv[1:4]
app_js = os.path.join(srcdir, "web", "static", "app.js")
results = []


def check(desc, cond, why=""):
    results.append(f"PASS {desc}" if cond else f"FAIL {desc} -- {why}")


with open(app_js) as f:
    m = re.search(r"const GONE_KEPT = (\d+);", f.read())
if not m:
    print("FAIL app.js declares GONE_KEPT -- no 'const GONE_KEPT = N;' in app.js")
    sys.exit(0)
kept = int(m.group(1))
n_vms = kept + 4

# The page: index.html with app.js from the source tree behind fakes of
# EventSource (each one the page opens is kept; __send feeds the newest)
# and fetch (nothing to fetch: no server).
fakes = """<script>
window.__sources = [];
window.EventSource = class {
  constructor(url) { this.url = url; this.readyState = 1; window.__sources.push(this); }
  close() { this.readyState = 2; }
};
window.EventSource.CLOSED = 2;
window.fetch = () => Promise.resolve({ ok: false, status: 404, json: () => Promise.resolve({}) });
window.__send = (ev) => {
  const s = window.__sources[window.__sources.length - 1];
  s.onmessage({ data: JSON.stringify(ev) });
};
</script>
"""
with open(os.path.join(srcdir, "web", "static", "index.html")) as f:
    html = f.read()
tag = '<script src="/static/app.js" defer></script>'
if tag not in html:
    print(f"FAIL index.html loads app.js as the test expects -- no {tag}")
    sys.exit(0)
html = html.replace(tag, fakes + f'<script src="file://{app_js}" defer></script>')
html = re.sub(r'<link rel="stylesheet"[^>]*>', "", html)
page = os.path.join(work, "gone.html")
with open(page, "w") as f:
    f.write(html)


def vm_list(keys):
    """The VM list event of @keys (each VM's pid: 1000 + its number)."""
    return {"event": "updated", "vm": None, "name": "vms", "view": {
        "kind": "table", "name": "vms", "title": "Virtual machines", "version": 1,
        "columns": {"key": {"name": "key", "type": "str"}, "app": {"name": "app", "type": "str"},
                    "pid": {"name": "pid", "type": "int"}, "state": {"name": "state", "type": "str"}},
        "rows": [{"key": k, "app": "app-" + k, "pid": 1000 + int(k.rsplit(":", 1)[1]) - 8100,
                  "state": "ready"} for k in keys]}}


def threads(vm):
    return {"event": "updated", "vm": vm, "name": "threads", "view": {
        "kind": "table", "name": "threads", "title": "Threads", "version": 1, "owner": "threads",
        "vm": vm, "columns": {"name": {"name": "name", "type": "str"}},
        "rows": [{"name": "main-of-" + vm}]}}


def send(b, ev):
    b.eval(f"window.__send({json.dumps(ev)})")


# What a VM's page shows: [gone note shown, crumb, thread names in its views].
PAGE_JS = ("(() => { const g = document.getElementById('gone');"
           " return [!!g && !g.hidden, document.getElementById('crumb').textContent,"
           " [...document.querySelectorAll('#views td[data-col=name]')].map(e => e.textContent)] })()")


def show(b, vm):
    """Go to VM's page; what it shows once drawn (None if it never was)."""
    b.eval(f"location.hash = '#/vm/' + encodeURIComponent({json.dumps(vm)})")
    return b.wait(f"(() => {{ const m = document.getElementById('main');"
                  f" return m.dataset.page === {json.dumps(vm)} && m.querySelector('#commands') ?"
                  f" {PAGE_JS} : null }})()", 10)


profile = os.path.join(work, "chromium-profile")
b = Browser(chromium, profile)
try:
    b.open()
except Exception as e:  # no display stack, no chromium that runs here
    print(f"SKIP chromium could not be driven: {e}")
    b.close()
    sys.exit(2)

try:
    b.send("Page.navigate", {"url": "file://" + page + "#/"})
    ready = b.wait("document.readyState === 'complete' && window.__sources.length > 0", 15)
    check("app.js runs on the test page and opens its stream", ready,
          f"at {b.eval('location.href')}, sources {b.eval('window.__sources && window.__sources.length')}")
    vms = [f"127.0.0.1:{8100 + i}" for i in range(n_vms)]
    results.append(f"# GONE_KEPT {kept}: {n_vms} VMs leave one after another")

    # Each VM in turn: its page open, its view in, then the VM goes (its
    # view removed, its row out of the list), as when a watched app exits.
    alive = list(vms)
    watched_ok = True
    for vm in vms:
        if show(b, vm) is None:
            watched_ok = False
        send(b, vm_list(alive))
        send(b, threads(vm))
        seen = b.wait(f"(() => {{ const r = {PAGE_JS}; return r[2].length ? r : null }})()", 10)
        send(b, {"event": "removed", "vm": vm, "name": "threads"})
        alive.remove(vm)
        send(b, vm_list(alive))
        gone = b.wait(f"(() => {{ const r = {PAGE_JS}; return r[0] ? r : null }})()", 10)
        if not (seen and gone and gone[2] == ["main-of-" + vm] and gone[1].startswith("app-" + vm)):
            watched_ok = False
            results.append(f"# {vm}: live {seen}, gone {gone}")
    check("each VM's page, as it leaves, says it is gone and keeps its last view", watched_ok)

    # Now on the page list, then each gone VM's page, newest first.
    b.eval("location.hash = '#/'")
    pages = {vm: show(b, vm) for vm in reversed(vms)}
    recent, old = vms[-kept:], vms[:-kept]
    bad = {vm: p for vm, p in pages.items() if vm in recent and
           not (p and p[0] and p[2] == ["main-of-" + vm] and p[1] == f"app-{vm} (pid {1000 + vms.index(vm)}) · gone")}
    check(f"the last {kept} VMs to leave keep their page: gone, their last view, their app name",
          not bad, f"{bad}")
    bad = {vm: p for vm, p in pages.items() if vm in old and not (p and p[0] and p[2] == [] and p[1] == vm + " · gone")}
    check(f"the {len(old)} VMs that left before them are dropped: no kept view, no last row",
          not bad, f"{bad}")

    # A gone VM that comes back (same key: a port reused) is live again.
    back = recent[-1]
    send(b, vm_list([back]))
    p = show(b, back)
    check("a VM back in the list is shown live again", p and not p[0] and "gone" not in p[1], f"{p}")
finally:
    b.close()
print("\n".join(results))
