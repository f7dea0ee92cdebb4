#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A tiny JDWP/DDM client for ddmon-simvm's heap dumps.

  hprof_client.py PORT feat              features, one "feature=NAME" line each
  hprof_client.py PORT hpds [N]          N HPDS requests at once (default 1)
  hprof_client.py PORT hpdu DEVICEPATH   one HPDU request

Prints key=value lines. For HPDS, each event's payload is streamed into a
sha256 (never held in memory): "event.K.declared=", "event.K.chunk_len=",
"event.K.bytes=", "event.K.sha256="; the order packets came in as "order=";
each reply as "reply.ID=empty|FAIL:code:msg|TYPE:len|none"; "closed=1" when
the VM closed the connection; "silent_after=BYTES" when the VM stopped
sending in the middle of a packet.
"""
import hashlib
import socket
import struct
import sys

HANDSHAKE = b"JDWP-Handshake"
TIMEOUT = 10.0
QUIET = 3.0  # a VM silent this long in the middle of a packet "went quiet"


class Closed(Exception):
    pass


class Quiet(Exception):
    pass


def recv_exact(s, n):
    buf = bytearray()
    while len(buf) < n:
        try:
            b = s.recv(n - len(buf))
        except socket.timeout:
            raise Quiet()
        if not b:
            raise Closed()
        buf += b
    return bytes(buf)


def chunk(type4, payload=b""):
    return type4.encode() + struct.pack(">I", len(payload)) + payload


def command(pid, data):
    return struct.pack(">IIBBB", 11 + len(data), pid, 0, 0xC7, 1) + data


def lstr(s):
    u = s.encode("utf-16-be")
    return struct.pack(">I", len(u) // 2) + u


def utf16(b):
    return b.decode("utf-16-be", "replace")


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    s.sendall(HANDSHAKE)
    if recv_exact(s, len(HANDSHAKE)) != HANDSHAKE:
        sys.exit("bad handshake echo")
    return s


def describe_reply(err, data):
    if err:
        return f"error:{err}"
    if not data:
        return "empty"
    typ = data[:4].decode("latin-1")
    if typ == "FAIL" and len(data) >= 16:
        code, n = struct.unpack(">II", data[8:16])
        return f"FAIL:{code}:{utf16(data[16:16 + 2 * n])}"
    if typ == "HPDU" and len(data) >= 9:
        return f"HPDU:{data[8]}"
    return f"{typ}:{len(data) - 8}"


def run(port, what, args):
    s = connect(port)
    ids = []
    if what == "feat":
        s.sendall(command(1, chunk("FEAT")))
        ids = [1]
    elif what == "hpds":
        n = int(args[0]) if args else 1
        ids = list(range(1, n + 1))
        s.sendall(b"".join(command(i, chunk("HPDS")) for i in ids))
    elif what == "hpdu":
        s.sendall(command(1, chunk("HPDU", lstr(args[0]))))
        ids = [1]
    else:
        sys.exit("unknown request " + what)
    pending = set(ids)
    order = []
    events = 0
    s.settimeout(QUIET)
    try:
        while pending:
            head = recv_exact(s, 11)
            length, pid, flags = struct.unpack(">IIB", head[:9])
            if flags & 0x80:
                data = recv_exact(s, length - 11)
                err = struct.unpack(">H", head[9:11])[0]
                print(f"reply.{pid}={describe_reply(err, data)}")
                if what == "feat" and data[:4] == b"FEAT":
                    count = struct.unpack(">I", data[8:12])[0]
                    at = 12
                    for _ in range(count):
                        n = struct.unpack(">I", data[at:at + 4])[0]
                        print("feature=" + utf16(data[at + 4:at + 4 + 2 * n]))
                        at += 4 + 2 * n
                order.append(f"reply{pid}")
                pending.discard(pid)
                continue
            # a VM event: stream its payload through sha256
            k = events
            events += 1
            ctype, clen = struct.unpack(">4sI", recv_exact(s, 8))
            ctype = ctype.decode("latin-1")
            order.append(f"event{ctype}")
            body = length - 19
            print(f"event.{k}.type={ctype}")
            print(f"event.{k}.declared={body}")
            print(f"event.{k}.chunk_len={clen}")
            h = hashlib.sha256()
            got = 0
            try:
                while got < body:
                    try:
                        b = s.recv(min(1 << 20, body - got))
                    except socket.timeout:
                        print(f"silent_after={got}")
                        raise Quiet()
                    if not b:
                        raise Closed()
                    h.update(b)
                    got += len(b)
            finally:
                print(f"event.{k}.bytes={got}")
                print(f"event.{k}.sha256={h.hexdigest()}")
    except Closed:
        print("closed=1")
    except Quiet:
        pass
    for pid in sorted(pending):
        print(f"reply.{pid}=none")
    print("order=" + ",".join(order))
    s.close()


if __name__ == "__main__":
    run(int(sys.argv[1]), sys.argv[2], sys.argv[3:])
