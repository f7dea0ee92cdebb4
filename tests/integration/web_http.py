#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Plain-HTTP checks of the dashboard's request rules (doc/web.md,
"Security"), standard library only: each refusal (no token, wrong token,
bad Host, cross Origin, GET on a POST action, ...) and the ways in.

Usage: web_http.py URL VMKEY   (URL: the one ddmon printed, with ?token=)
Prints one line per check, "PASS desc" or "FAIL desc -- why"; exit 0.
"""
import http.client
import json
import socket
import time
import sys
import urllib.parse

url = urllib.parse.urlsplit(sys.argv[1])
vm = sys.argv[2]
token = urllib.parse.parse_qs(url.query)["token"][0]
host, port = url.hostname, url.port
authority = f"{host}:{port}"
vm_path = "/api/vms/" + urllib.parse.quote(vm, safe="")
results = []


def req(method, path, headers=None, body=None, host_header=authority):
    c = http.client.HTTPConnection(host, port, timeout=30)
    c.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    if host_header is not None:
        c.putheader("Host", host_header)
    for k, v in (headers or {}).items():
        c.putheader(k, v)
    data = body.encode() if isinstance(body, str) else body
    if data is not None:
        c.putheader("Content-Length", str(len(data)))
    c.endheaders(data)
    r = c.getresponse()
    out = (r.status, r.getheaders(), r.read())
    c.close()
    return out


def check(desc, cond, why=""):
    results.append(f"PASS {desc}" if cond else f"FAIL {desc} -- {why}")


def header(hs, name):
    return [v for k, v in hs if k.lower() == name.lower()]


bearer = {"Authorization": "Bearer " + token}
cookie_name = f"ddmon_token_{port}"

# -- refused without the token
s, h, b = req("GET", "/api/vms")
check("no token: 401", s == 401, f"status {s} {b[:200]!r}")
s, h, b = req("GET", "/api/vms", {"Authorization": "Bearer " + "0" * len(token)})
check("wrong bearer token: 401", s == 401, f"status {s}")
s, h, b = req("GET", "/api/vms", {"Cookie": f"{cookie_name}={token[:-1]}x"})
check("wrong token in the cookie: 401", s == 401, f"status {s}")
s, h, b = req("GET", "/?token=" + token[:-1] + "x")
check("wrong ?token= on the page: 401, no cookie", s == 401 and not header(h, "Set-Cookie"),
      f"status {s} {h}")
s, h, b = req("GET", "/api/vms?token=" + token)
check("?token= is not accepted by the API: 401", s == 401, f"status {s}")
s, h, b = req("GET", "/api/stream")
check("the live stream needs the token: 401", s == 401, f"status {s}")

# -- the first visit: cookie, then a redirect without the token
s, h, b = req("GET", "/?token=" + token)
cookies = header(h, "Set-Cookie")
loc = header(h, "Location")
check("the first URL sets the cookie and redirects (303)", s == 303 and len(cookies) == 1,
      f"status {s} {h}")
ck = cookies[0] if cookies else ""
check("the cookie is HttpOnly and SameSite=Strict",
      "HttpOnly" in ck and "SameSite=Strict" in ck and ck.startswith(f"{cookie_name}={token};"), ck)
check("the redirect drops the token from the URL", loc and "token" not in loc[0], f"{loc}")
cookie = {"Cookie": f"{cookie_name}={token}"}

# -- in with the cookie or the bearer
s, h, b = req("GET", "/api/vms", cookie)
ok = s == 200 and vm in json.loads(b).get("vms", {})
check("with the cookie: 200 and the VM listed", ok, f"status {s} {b[:300]!r}")
s, h, b = req("GET", "/api/vms", bearer)
check("with the bearer token: 200", s == 200, f"status {s}")
s, h, b = req("GET", "/", cookie)
check("the page with the cookie: 200 HTML", s == 200 and b"<html" in b.lower(), f"status {s}")

# -- Host: DNS rebinding
s, h, b = req("GET", "/api/vms", bearer, host_header=f"evil.example:{port}")
check("a foreign Host name: 403 even with the token", s == 403, f"status {s}")
s, h, b = req("GET", "/api/vms", bearer, host_header=f"{host}:{port + 1 if port < 65535 else 1}")
check("a Host with another port: 403", s == 403, f"status {s}")
s, h, b = req("GET", "/api/vms", bearer, host_header=None)
check("no Host header: refused (400 from libsoup)", s in (400, 403), f"status {s}")
s, h, b = req("GET", "/api/vms", bearer, host_header=f"localhost:{port}")
check("Host localhost:PORT is fine", s == 200, f"status {s}")

# -- Origin: cross-site requests
s, h, b = req("GET", "/api/vms", {**cookie, "Origin": "http://evil.example"})
check("a cross Origin: 403 even with the cookie", s == 403, f"status {s}")
s, h, b = req("GET", "/api/vms", {**cookie, "Origin": "null"})
check("Origin null: 403", s == 403, f"status {s}")
s, h, b = req("GET", "/api/vms", {**cookie, "Origin": f"https://{authority}"})
check("Origin with another scheme: 403", s == 403, f"status {s}")
s, h, b = req("GET", "/api/vms", {**cookie, "Sec-Fetch-Site": "cross-site"})
check("Sec-Fetch-Site cross-site: 403", s == 403, f"status {s}")
s, h, b = req("GET", "/api/vms", {**cookie, "Origin": f"http://{authority}"})
check("the same Origin is fine", s == 200, f"status {s}")

# -- actions: POST only, with the token
gc = vm_path + "/commands/gc"
s, h, b = req("GET", gc, bearer)
check("GET on a POST action: 405, Allow: POST", s == 405 and header(h, "Allow") == ["POST"],
      f"status {s} {h}")
s, h, b = req("POST", gc, body="")
check("POST without the token: 401", s == 401, f"status {s}")
s, h, b = req("POST", gc, cookie, body="")
check("POST with the cookie but no Origin: 403", s == 403, f"status {s}")
s, h, b = req("POST", gc, {**cookie, "Origin": "http://evil.example"}, body="")
check("POST from another Origin: 403", s == 403, f"status {s}")
s, h, b = req("POST", "/api/vms", bearer, body="")
check("POST on a GET route: 405", s == 405, f"status {s}")
s, h, b = req("POST", gc, bearer, body="x" * (128 * 1024))
check("a request body over the limit: 413", s == 413, f"status {s}")
s, h, b = req("POST", gc, {**cookie, "Origin": f"http://{authority}",
                           "Content-Type": "application/json"}, body="")
doc = json.loads(b) if s == 200 else {}
check("POST with the cookie and the same Origin runs the command",
      s == 200 and doc.get("ok") is True and doc.get("schema") == 1, f"status {s} {b[:300]!r}")
s, h, b = req("POST", gc, bearer, body="not json")
check("a body that is no JSON object: 400", s == 400, f"status {s}")
s, h, b = req("POST", vm_path + "/commands/no-such-command", bearer, body="")
check("an unknown command: 404", s == 404, f"status {s}")

# -- headers every answer carries
s, h, b = req("GET", "/api/vms", bearer)
check("answers forbid framing and sniffing",
      header(h, "X-Frame-Options") == ["DENY"] and header(h, "X-Content-Type-Options") == ["nosniff"]
      and "frame-ancestors 'none'" in (header(h, "Content-Security-Policy") or [""])[0], f"{h}")

# -- at most 64 connections: idle ones (never a full request) take the
# places, the next is closed at once; when they go, requests work again.
idle = []
t_idle = time.time()
for _ in range(64):
    so = socket.create_connection((host, port), timeout=5)
    so.sendall(b"GET /api/vms HTTP/1.1\r\nHost: ")  # and nothing more
    idle.append(so)
time.sleep(0.3)
try:
    s, h, b = req("GET", "/api/vms", bearer)
    refused = False
except (ConnectionError, http.client.HTTPException, OSError):
    refused = True
check("the 65th connection is closed while 64 idle ones are open", refused, f"answered {s}")
# Half a request is not kept waiting for ever: 10 s after they connected
# the server closes them, and the next real request is served although the
# slow clients never hung up.
t0 = time.time()
s = 0
while time.time() < t0 + 20:
    try:
        s, h, b = req("GET", "/api/vms", bearer)
        if s == 200:
            break
    except (ConnectionError, http.client.HTTPException, OSError):
        time.sleep(0.5)
closed_by_server = 0
waited = time.time() - t_idle
deadline = time.time() + 8  # accepted over seconds on a loaded machine: each has its own 10 s
for so in idle:
    so.settimeout(max(0.1, deadline - time.time()))
    try:
        closed_by_server += so.recv(100) == b""
    except (socket.timeout, ConnectionError):
        pass
check("64 half-sent requests are closed by the server after ~10 s; the 65th real request is served",
      s == 200 and 8 < waited < 20 and closed_by_server == 64,
      f"status {s} after {waited:.1f} s ({t0 - t_idle:.1f} s to the first try), {closed_by_server} of 64 closed by the server")
for so in idle:
    so.close()
deadline = time.time() + 10
s = 0
while time.time() < deadline:
    try:
        s, h, b = req("GET", "/api/vms", bearer)
        if s == 200:
            break
    except (ConnectionError, http.client.HTTPException, OSError):
        time.sleep(0.2)
check("once they are closed, requests are served again", s == 200, f"status {s}")

print("\n".join(results))
