#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/adb_min_client.py: the baseline of `bench/scale.sh --adb`.

The least a monitor must do to name every VM of a device through the adb
server, in one asyncio loop: track-jdwp on the device, and for each pid it
lists a jdwp:PID stream, the JDWP handshake, a DDM HELO request and its
reply (the app name; a VM still "<pre-initialized>" or unnamed is named
by its APNM event). The same work ddmon does before it lists a VM ready
with its name, and nothing else: no FEAT, no views, no plugins.

    adb_min_client.py --port ADB_PORT --serial SERIAL --vms N [--timeout S]

Prints one line "named N in MS ms" once N VMs are named (exit 0), or what
it got at the timeout (exit 1). Holds every connection open until then,
as a monitor would.
"""
import argparse
import asyncio
import struct
import sys
import time

HELO = 0x48454C4F
APNM = 0x41504E4D
DDM_CMDSET, DDM_CMD = 0xC7, 0x01


def adb_request(text):
    data = text.encode()
    return b"%04x" % len(data) + data


async def adb_open(port, serial, service):
    """A stream to @service on device @serial; (reader, writer)."""
    r, w = await asyncio.open_connection("127.0.0.1", port)
    for req in ("host:transport:" + serial, service):
        w.write(adb_request(req))
        status = await r.readexactly(4)
        if status != b"OKAY":
            n = int(await r.readexactly(4), 16)
            raise OSError("adb refused %s: %s" % (req, (await r.readexactly(n)).decode(errors="replace")))
    return r, w


def helo_packet(pkt_id):
    body = struct.pack(">II", HELO, 4) + struct.pack(">I", 1)
    return struct.pack(">IIBBB", 11 + len(body), pkt_id, 0, DDM_CMDSET, DDM_CMD) + body


def str16(buf, off, nchars):
    raw = buf[off:off + 2 * nchars]
    return raw.decode("utf-16-be", errors="replace"), off + 2 * nchars


def usable(name):
    return bool(name) and name != "<pre-initialized>"


async def name_vm(port, serial, pid, streams):
    """Open jdwp:PID, handshake, HELO; the app name (from HELO or APNM)."""
    r, w = await adb_open(port, serial, "jdwp:%d" % pid)
    streams.append(w)
    w.write(b"JDWP-Handshake")
    if await r.readexactly(14) != b"JDWP-Handshake":
        raise OSError("pid %d: no JDWP handshake" % pid)
    w.write(helo_packet(0x40000001))
    while True:
        hdr = await r.readexactly(11)
        length, pkt_id, flags = struct.unpack(">IIB", hdr[:9])
        body = await r.readexactly(length - 11)
        if flags & 0x80:  # a reply: ours, the HELO
            if pkt_id != 0x40000001 or len(body) < 8 + 16:
                continue
            ctype, clen = struct.unpack(">II", body[:8])
            if ctype != HELO:
                raise OSError("pid %d: HELO answered with another chunk" % pid)
            _ver, _pid, vlen, alen = struct.unpack(">IIII", body[8:24])
            _vm, off = str16(body, 24, vlen)
            app, _ = str16(body, off, alen)
            if usable(app):
                return app
        elif hdr[9] == DDM_CMDSET and hdr[10] == DDM_CMD and len(body) >= 12:
            ctype, clen = struct.unpack(">II", body[:8])
            if ctype == APNM:
                n = struct.unpack(">I", body[8:12])[0]
                app, _ = str16(body, 12, n)
                if usable(app):
                    return app


async def track(port, serial, want, deadline):
    """Pids from track-jdwp until @want of them are known."""
    r, w = await adb_open(port, serial, "track-jdwp")
    pids = set()
    while len(pids) < want:
        n = int(await asyncio.wait_for(r.readexactly(4), deadline - time.monotonic()), 16)
        text = (await r.readexactly(n)).decode()
        pids |= {int(x) for x in text.split() if x.isdigit()}
        yield pids, w


async def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--serial", required=True)
    ap.add_argument("--vms", type=int, required=True)
    ap.add_argument("--timeout", type=float, default=120.0)
    a = ap.parse_args()
    t0 = time.monotonic()
    deadline = t0 + a.timeout
    streams, tasks, started = [], [], set()
    named = {}

    async def one(pid):
        named[pid] = await name_vm(a.port, a.serial, pid, streams)

    tracker = None
    try:
        async for pids, tracker in track(a.port, a.serial, a.vms, deadline):
            for pid in pids - started:
                started.add(pid)
                tasks.append(asyncio.ensure_future(one(pid)))
        await asyncio.wait_for(asyncio.gather(*tasks), deadline - time.monotonic())
    except (asyncio.TimeoutError, OSError, asyncio.IncompleteReadError) as e:
        print("named %d of %d (%s)" % (len(named), a.vms, e or type(e).__name__), file=sys.stderr)
        return 1
    ms = (time.monotonic() - t0) * 1000.0
    print("named %d in %.0f ms" % (len(named), ms))
    for w in streams + ([tracker] if tracker else []):
        w.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
