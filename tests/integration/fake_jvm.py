#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# A JDWP peer that plays a plain JVM slow to read, for the relay's
# backpressure test. It echoes the handshake and answers every command with
# an empty success reply (VirtualMachine.Version with a plausible body, so
# ddmon lists it as a plain JVM), until the first command carrying a payload
# (jdwpc's "blast"): from then on it reads nothing until the file GO exists
# (or 30 s passed), then reads every blast packet and checks it (command
# 1/1, the payload pattern of jdwpc's blast, ids strictly increasing) and
# writes {"received": N, "bad": B, "ordered": true|false, "bytes": total} to
# RESULT once N packets arrived or the connection closed.
#
#   fake_jvm.py PORT GO RESULT EXPECT
import json, os, socket, struct, sys, time

port, go, result, expect = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
HANDSHAKE = b"JDWP-Handshake"


def jdwp_string(s):
    b = s.encode()
    return struct.pack(">I", len(b)) + b


def reply(conn, pid, body=b""):
    conn.sendall(struct.pack(">IIBH", 11 + len(body), pid, 0x80, 0) + body)


def read_exact(conn, n):
    buf = bytearray()
    while len(buf) < n:
        part = conn.recv(n - len(buf))
        if not part:
            return None
        buf += part
    return bytes(buf)


ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", port))
ls.listen(4)
print("listening", flush=True)
conn, _ = ls.accept()
conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
if read_exact(conn, len(HANDSHAKE)) != HANDSHAKE:
    sys.exit("fake_jvm: bad handshake")
conn.sendall(HANDSHAKE)
version = jdwp_string("fake JVM") + struct.pack(">II", 17, 0) + jdwp_string("17") + jdwp_string("FakeVM")

received = bad = total = 0
ordered = True
last_id = None
stalled = False
while received < expect:
    head = read_exact(conn, 11)
    if head is None:
        break
    length, pid, flags, cmdset, cmd = struct.unpack(">IIBBB", head)
    body = read_exact(conn, length - 11) if length > 11 else b""
    if body is None:
        break
    if flags & 0x80:
        continue
    if not body:
        reply(conn, pid, version if (cmdset, cmd) == (1, 1) else b"")
        continue
    if not stalled:
        stalled = True
        deadline = time.time() + 30
        while not os.path.exists(go) and time.time() < deadline:
            time.sleep(0.05)
    j = received
    want = bytes((j + k) % 251 for k in range(len(body)))
    if (cmdset, cmd) != (1, 1) or body != want:
        bad += 1
    if last_id is not None and pid <= last_id:
        ordered = False
    last_id = pid
    received += 1
    total += length
tmp = result + ".tmp"
with open(tmp, "w") as f:
    json.dump({"received": received, "bad": bad, "ordered": ordered, "bytes": total}, f)
os.rename(tmp, result)
# Stay connected (a closing VM would close the debugger) until killed.
time.sleep(60)
