#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The web API's live stream and commands, over plain HTTP (standard
library only; doc/web-api.md):
  - GET /api/stream?vm=KEY sends every view of the VM, then changes;
  - GET .../views/headline/history has the record's recent samples;
  - POST .../commands/gc fills the heap bitmap, a PNG served as image/png;
  - POST .../commands/hprof writes a dump that GET /api/downloads serves,
    byte for byte (sha256 as the plugin reported it; hprof-conv reads it);
  - POST .../commands/trace (when the profile plugin is built) writes the
    .trace named in its arguments into its run directory, downloaded and
    read by dmtracedump;
  - downloads outside a run, unfinished, FIFOs and links are not served;
  - at most 16 streams at once (the next gets 503).

  - a stream client that does not read is dropped once 4 MiB wait for it,
    and the server answers others meanwhile.

Usage: web_commands.py URL VMKEY OUTDIR SERVERLOG
Prints "PASS desc" / "FAIL desc -- why" lines.
"""
import hashlib
import http.client
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.parse

url, vm, outdir, server_log = sys.argv[1:5]
parts = urllib.parse.urlsplit(url)
token = urllib.parse.parse_qs(parts.query)["token"][0]
auth = {"Authorization": "Bearer " + token}
vm_path = "/api/vms/" + urllib.parse.quote(vm, safe="")
results = []


def file_names(reply):
    """The names of the files a command reply offers (an object keyed by name)."""
    return sorted(reply.get("files") or {})


def check(desc, cond, why=""):
    results.append(f"PASS {desc}" if cond else f"FAIL {desc} -- {why}")


def req(method, path, body=None, timeout=120):
    c = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    c.request(method, path, body=body, headers=auth)
    r = c.getresponse()
    out = (r.status, r.getheader("Content-Type"), r.read())
    c.close()
    return out


class Stream(threading.Thread):
    """One GET /api/stream reader; keeps the events."""

    def __init__(self, query):
        super().__init__(daemon=True)
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        self.conn.request("GET", "/api/stream" + query, headers=auth)
        self.resp = self.conn.getresponse()
        self.events = []
        self.error = None

    def run(self):
        try:
            data = []
            while True:
                line = self.resp.fp.readline()
                if not line:
                    return
                line = line.decode().rstrip("\r\n")
                if line.startswith("data: "):
                    data.append(line[6:])
                elif line == "" and data:
                    self.events.append(json.loads("\n".join(data)))
                    data = []
        except Exception as e:  # closed by us at the end
            self.error = e

    def close(self):
        self.conn.close()


# A record made only when asked (vminfo), asked for its history before
# anything made it (the stream below would): it is made, with a history.
s, t, b = req("GET", vm_path + "/views/vminfo/history")
check("GET vminfo/history: 200 (a record made when asked)", s == 200 and b'"pid"' in b, f"{s} {b[:200]!r}")
st = Stream("?vm=" + urllib.parse.quote(vm, safe=""))
check("the stream answers 200 text/event-stream",
      st.resp.status == 200 and st.resp.getheader("Content-Type", "").startswith("text/event-stream"),
      f"{st.resp.status} {st.resp.getheader('Content-Type')}")
st.start()
deadline = time.time() + 15
while time.time() < deadline and not any(e["event"] == "changed" and e["name"] == "threads"
                                         for e in st.events):
    time.sleep(0.2)
added = {e["name"] for e in st.events if e["event"] == "added"}
check("the stream starts with the VM's views and the VM list as 'added'",
      {"threads", "vms", "heap.bitmap"} <= added, f"added {sorted(added)}")
ch = [e for e in st.events if e["event"] == "changed" and e["name"] == "threads"]
ok = bool(ch) and ch[-1]["schema"] == 1 and ch[-1]["vm"] == vm and \
    isinstance(ch[-1]["view"]["rows"], list) and "name" in ch[-1]["view"]["rows"][0]
check("thread changes arrive as they happen, rows keyed by column", ok,
      f"{len(st.events)} events, last {json.dumps(ch[-1])[:300] if ch else None}")
other = [e for e in st.events if e.get("vm") not in (None, vm)]
check("the stream of one VM carries no other VM's views", not other,
      f"{[(e['vm'], e['name']) for e in other[:3]]}")

# GC: the heap bitmap (its segments are switched on while the stream watches).
s, t, b = req("POST", vm_path + "/commands/gc", body="")
d = json.loads(b) if s == 200 else {}
check("POST gc: ok", s == 200 and d.get("ok") is True, f"{s} {b[:300]!r}")
png_view = None
deadline = time.time() + 15
while time.time() < deadline:
    s, t, b = req("GET", vm_path + "/views/heap.bitmap")
    png_view = json.loads(b) if s == 200 else None
    if png_view and png_view.get("size_bytes"):
        break
    time.sleep(0.3)
s, t, png = req("GET", png_view["data_url"]) if png_view and png_view.get("data_url") else (0, None, b"")
w = h = 0
if png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR":
    w, h = struct.unpack(">II", png[16:24])
check("after gc the heap bitmap is a PNG served as image/png",
      s == 200 and t == "image/png" and w > 0 and h > 0 and len(png) == png_view["size_bytes"],
      f"{s} {t} {len(png)} bytes, {w}x{h}, view {png_view}")
bm_events = [e for e in st.events if e["name"] == "heap.bitmap" and e["event"] == "changed"]
check("the stream announced the new bitmap with its data_url, not its bytes",
      bm_events and "data_url" in bm_events[-1]["view"] and "data_base64" not in bm_events[-1]["view"],
      f"{bm_events[-1] if bm_events else None}")

# The recent past of a record, sampled at most once a second. The heap
# figures join the headline when the first HPIF has been read, which under
# load can be after the first samples: ask again for up to 20 s.
deadline = time.time() + 20
while True:
    s, t, b = req("GET", vm_path + "/views/headline/history")
    hist = json.loads(b) if s == 200 else {}
    ts = hist.get("t", [])
    fields = hist.get("fields", {})
    ok = (s == 200 and hist.get("schema") == 1 and hist.get("name") == "headline" and len(ts) >= 2
          and all(b2 - a2 >= 0.9 for a2, b2 in zip(ts, ts[1:])) and len(ts) <= 300
          and all(len(v) == len(ts) for v in fields.values())
          and any(x is not None for x in fields.get("heap_size_bytes", [])))
    if ok or time.time() > deadline:
        break
    time.sleep(1)
check("a record's history: samples a second or more apart, fields aligned, heap figures in it", ok,
      f"{s} {b[:400]!r}")
s, t, b = req("GET", vm_path + "/views/threads/history")
check("a table has no history: 404", s == 404, f"{s}")

# HPROF: a dump in a run directory, downloaded.
s, t, b = req("POST", vm_path + "/commands/hprof", body=json.dumps({"args": []}))
d = json.loads(b) if s == 200 else {}
files = d.get("files")
check("POST hprof: ok, one file offered, in an object keyed by its name",
      s == 200 and d.get("ok") and isinstance(files, dict) and len(files) == 1 and
      all(set(v) == {"size_bytes", "url"} and v["url"].endswith("/" + urllib.parse.quote(n))
          for n, v in files.items()), f"{s} {b[:400]!r}")
if files:
    name, f = next(iter(files.items()))
    s, t, dump = req("GET", f["url"])
    digest = hashlib.sha256(dump).hexdigest()
    fields = (d.get("result") or {}).get("fields") or {}
    check("the download is the dump, byte for byte (size and sha256 as hprof reported)",
          s == 200 and len(dump) == f["size_bytes"] == fields.get("bytes") and
          digest == fields.get("sha256") and dump.startswith(b"JAVA PROFILE 1.0"),
          f"{s} {len(dump)} bytes, {f}, sha {digest} vs {fields.get('sha256')}")
    check("the result's path is the file's name, as the message says it (no run id, no server path)",
          fields.get("path") == name and name in (d.get("message") or ""),
          f"path {fields.get('path')!r}, message {d.get('message')!r}, file {name!r}")
    path = os.path.join(outdir, "web.hprof")
    with open(path, "wb") as fh:
        fh.write(dump)
    conv = shutil.which("hprof-conv") or next(
        (p for p in ["/usr/lib/android-sdk/platform-tools/hprof-conv"] if os.access(p, os.X_OK)), None)
    if conv:
        r = subprocess.run([conv, path, path + ".std"], capture_output=True)
        check("hprof-conv reads the downloaded dump", r.returncode == 0 and
              os.path.getsize(path + ".std") > 0, r.stderr[:200])
    else:
        results.append("PASS hprof-conv reads the downloaded dump # SKIP no hprof-conv")
    run = f["url"].split("/")[3]
    for bad, why in ((f"/api/downloads/{run}/..%2F..%2Fddmon.sock", "a path out of the run"),
                     (f"/api/downloads/999-x/{urllib.parse.quote(name)}", "an unknown run"),
                     (f"/api/downloads/{run}/{urllib.parse.quote(name)}.part", "an unfinished file"),
                     (f"/api/downloads/{run}/.hidden", "a hidden file")):
        s, t, b = req("GET", bad)
        check(f"no download of {why}: 404 (400 from libsoup for an encoded slash)",
              s == 404 or (s == 400 and "%2F" in bad), f"{bad}: {s}")
    # a FIFO at a name in the run: refused, never opened blocking (an open
    # that waits for a writer would stop the server's loop)
    fifo = os.path.join(outdir, "ddmon.downloads", run, "pipe.hprof")
    os.mkfifo(fifo, 0o600)
    try:
        s, t, b = req("GET", f"/api/downloads/{run}/pipe.hprof", timeout=10)
    except OSError as e:
        s = f"no answer in 10 s ({e})"
        try:  # a writer frees a server blocked in its open
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
    os.unlink(fifo)
    check("no download of a FIFO in the run, and no wait on it: 404", s == 404, f"{s}")
    # links planted in the run, to a file and to a directory outside it,
    # are not followed (O_NOFOLLOW at every step of the walk); a regular
    # file planted next to them is served (the 404s are the links')
    rundir = os.path.join(outdir, "ddmon.downloads", run)
    outside = os.path.join(outdir, "outside")
    os.makedirs(outside, exist_ok=True)
    with open(os.path.join(outside, "secret.hprof"), "w") as fh:
        fh.write("not for the web\n")
    with open(os.path.join(rundir, "plain.hprof"), "w") as fh:
        fh.write("planted\n")
    os.symlink(os.path.join(outside, "secret.hprof"), os.path.join(rundir, "link.hprof"))
    os.symlink(outside, os.path.join(rundir, "linkdir"))
    got = {u: req("GET", f"/api/downloads/{run}/{u}", timeout=10)
           for u in ("plain.hprof", "link.hprof", "linkdir/secret.hprof")}
    check("a regular file planted in the run is served: 200",
          got["plain.hprof"][0] == 200 and got["plain.hprof"][2] == b"planted\n", f"{got['plain.hprof'][:1]}")
    check("no download through a link in the run, to a file or a directory outside it: 404",
          got["link.hprof"][0] == 404 and got["linkdir/secret.hprof"][0] == 404
          and b"not for the web" not in got["link.hprof"][2] + got["linkdir/secret.hprof"][2],
          f"{got['link.hprof'][0]} {got['linkdir/secret.hprof'][0]}")
    for n in ("plain.hprof", "link.hprof", "linkdir"):
        os.unlink(os.path.join(rundir, n))

# --out-dir=sub: the dumps in the run's subdirectory are listed as
# "sub/NAME" and served at /api/downloads/RUN/sub/NAME.
s, t, b = req("POST", vm_path + "/commands/hprof", body=json.dumps({"args": ["--out-dir=sub"]}))
d = json.loads(b) if s == 200 else {}
sub = {n: f for n, f in (d.get("files") or {}).items() if n.startswith("sub/")}
got = req("GET", next(iter(sub.values()))["url"]) if sub else (0, None, b"")
check("hprof --out-dir=sub: its dump listed as sub/NAME and downloaded from the run",
      s == 200 and d.get("ok") and len(sub) == 1 and got[0] == 200 and
      got[2].startswith(b"JAVA PROFILE 1.0") and len(got[2]) == next(iter(sub.values()))["size_bytes"],
      f"{s} {b[:300]!r} then {got[0]}")
# A file name that is not ASCII: an ASCII filename= and the UTF-8 one in
# filename*= (RFC 5987).
s, t, b = req("POST", vm_path + "/commands/hprof", body=json.dumps({"args": ["\u00e9 \u00fc.hprof"]}))
d = json.loads(b) if s == 200 else {}
f = (d.get("files") or {}).get("\u00e9 \u00fc.hprof")
disp = None
if f:
    c = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    c.request("GET", f["url"], headers=auth)
    r = c.getresponse()
    r.read()
    disp = r.getheader("Content-Disposition")
    c.close()
check("a UTF-8 file name: Content-Disposition with an ASCII filename and filename*=UTF-8''",
      disp == "attachment; filename=\"_ _.hprof\"; filename*=UTF-8''%C3%A9%20%C3%BC.hprof",
      f"{s} {b[:200]!r}: {disp!r}")
# Confinement: a command from the web writes only into its own run
# directory, and replies never show where the server keeps its files.
check("the hprof reply does not show the server's directory",
      outdir not in d.get("message", "") and outdir.encode() not in b, f"{b[:300]!r}")
escape = os.path.join(outdir, "escape")
os.makedirs(escape, exist_ok=True)
for args in (["--out-dir", escape], ["--out-dir=" + escape], [escape + "/x.hprof"]):
    s, t, b = req("POST", vm_path + "/commands/hprof", body=json.dumps({"args": args}))
    d2 = json.loads(b) if s == 200 else {}
    check(f"POST hprof {args[0][:16]}...: refused, nothing written outside the run",
          s == 200 and d2.get("ok") is False and "absolute path" in d2.get("error", "")
          and not os.listdir(escape) and outdir.encode() not in b.replace(escape.encode(), b""),
          f"{s} {b[:300]!r}, {os.listdir(escape)}")
precious = os.path.join(outdir, "precious.txt")
with open(precious, "w") as fh:
    fh.write("keep me\n")
# A run directory is OUTDIR/ddmon.downloads/N-heap-bitmap: ../../ is OUTDIR.
for arg in ("../../precious.txt", "sub/../../../precious.txt", "--out=../../precious.txt"):
    s, t, b = req("POST", vm_path + "/commands/heap-bitmap", body=json.dumps({"args": [arg]}))
    d2 = json.loads(b) if s == 200 else {}
    with open(precious) as fh:
        kept = fh.read() == "keep me\n"
    check(f"POST heap-bitmap {arg}: refused ('..'), the file outside is untouched",
          s == 200 and d2.get("ok") is False and "'..'" in d2.get("error", "") and kept,
          f"{s} {b[:300]!r} kept={kept}")
s, t, b = req("POST", vm_path + "/commands/heap-bitmap", body=json.dumps({"args": ["bm.png"]}))
d2 = json.loads(b) if s == 200 else {}
check("POST heap-bitmap with a relative FILE still works, and shows no server path",
      s == 200 and d2.get("ok") is True and "bm.png" in file_names(d2) and
      outdir.encode() not in b, f"{s} {b[:300]!r}")
s, t, b = req("GET", "/api/commands")
cmds = json.loads(b).get("commands", {}) if s == 200 else {}
check("/api/commands says which commands take a VM",
      cmds.get("gc", {}).get("takes_vm") is True and cmds.get("hprof", {}).get("takes_vm") is True
      and all(c.get("takes_vm") is False for n, c in cmds.items() if n == "trace-summary"),
      f"{ {n: c.get('takes_vm') for n, c in cmds.items()} }")
if "trace-summary" in cmds:
    s, t, b = req("POST", vm_path + "/commands/trace-summary", body=json.dumps({"args": []}))
    check("a command that takes no VM (trace-summary FILE) is not run on a VM: 400",
          s == 400, f"{s} {b[:200]!r}")

# A trace: arguments after the VM, a relative FILE landing in the run
# directory.
s, t, b = req("GET", "/api/commands")
cmds = json.loads(b).get("commands", {}) if s == 200 else {}
if "trace" in cmds:
    s, t, b = req("POST", vm_path + "/commands/trace",
                  body=json.dumps({"args": ["web.trace", "--sampling", "--seconds", "1"]}))
    d = json.loads(b) if s == 200 else {}
    files = d.get("files") or {}
    ok = s == 200 and d.get("ok") and file_names(d) == ["web.trace"]
    check("POST trace with arguments: the .trace offered for download", ok, f"{s} {b[:300]!r}")
    if ok:
        s, t, trace = req("GET", files["web.trace"]["url"])
        path = os.path.join(outdir, "web.trace")
        with open(path, "wb") as fh:
            fh.write(trace)
        dmt = shutil.which("dmtracedump")
        r = subprocess.run([dmt, "-o", path], capture_output=True) if dmt else None
        check("the downloaded trace is whole and dmtracedump reads it",
              s == 200 and len(trace) == files["web.trace"]["size_bytes"] and trace[:4] in (b"SLOW", b"*ver")
              and (r is None or (r.returncode == 0 and b"Threads" in r.stdout)),
              f"{s} {len(trace)} bytes {trace[:8]!r} {r.returncode if r else 'no dmtracedump'}")
    else:
        check("the downloaded trace is whole and dmtracedump reads it", False, "no trace")
    # The trace's view names its file without the server's directory.
    s, t, b = req("GET", vm_path + "/views/profile.trace")
    check("the profile.trace view on the web shows no path where the server keeps files",
          s == 200 and b"web.trace" in b and outdir.encode() not in b, f"{s} {b[:400]!r}")
else:
    results.append("PASS POST trace with arguments # SKIP the profile plugin was not built")
    results.append("PASS the downloaded trace is read by dmtracedump # SKIP no profile plugin")
    results.append("PASS the profile.trace view shows no server path # SKIP no profile plugin")

# At most 16 streams.
more = [st]
for _ in range(15):
    more.append(Stream(""))
statuses = [m.resp.status for m in more]
extra = Stream("")
check("16 streams are served, the 17th gets 503",
      all(x == 200 for x in statuses) and extra.resp.status == 503, f"{statuses} then {extra.resp.status}")
for m in more + [extra]:
    m.close()
# A closed stream is noticed at its next write: an event, or the ping
# every 15 s.
deadline = time.time() + 25
while True:
    again = Stream("")
    status = again.resp.status
    again.close()
    if status == 200 or time.time() > deadline:
        break
    time.sleep(1)
check("a stream closed by its client frees its place (within a ping)", status == 200,
      f"{status}")
# A client that never reads: a small receive buffer, then GCs, each of
# which changes the heap views (tens of KiB of JSON) it streams.
def slow_client():
    """A stream that reads its status line, then nothing: (socket, status)."""
    so = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    so.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    so.connect((parts.hostname, parts.port))
    so.sendall((f"GET /api/stream?vm={urllib.parse.quote(vm, safe='')} HTTP/1.1\r\n"
                f"Host: {parts.hostname}:{parts.port}\r\nAuthorization: Bearer {token}\r\n\r\n").encode())
    line = b""
    while not line.endswith(b"\n"):
        line += so.recv(1)
    return so, line.split()[1].decode()


# The streams closed above free their places at their next write.
deadline = time.time() + 25
while True:
    slow, status = slow_client()
    if status == "200" or time.time() > deadline:
        break
    slow.close()
    time.sleep(1)
dropped = False
worst = 0.0
for i in range(400):
    t0 = time.time()
    s, t, b = req("POST", vm_path + "/commands/gc", body="", timeout=30)
    worst = max(worst, time.time() - t0)
    with open(server_log, errors="replace") as fh:
        if "dropping a stream client" in fh.read():
            dropped = True
            break
check("a stream client that does not read is dropped (4 MiB queued)", dropped,
      f"not after {i + 1} GCs")
t0 = time.time()
s, t, b = req("GET", "/api/vms")
check("meanwhile the server answers others at once", s == 200 and time.time() - t0 < 2 and worst < 10,
      f"{s} in {time.time() - t0:.2f} s, slowest gc {worst:.2f} s")
slow.settimeout(10)
closed = False
try:
    while True:  # what the kernel had taken, then the end
        if not slow.recv(65536):
            closed = True
            break
except (ConnectionResetError, socket.timeout) as e:
    closed = isinstance(e, ConnectionResetError)
check("the dropped client's connection is closed", closed, "still open")
slow.close()
print("\n".join(results))
