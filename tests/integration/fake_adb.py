#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A fake adb server (the host side of the adb protocol) for fault injection.

It serves host:track-devices, host:transport:SERIAL, track-jdwp and jdwp:PID
(bridged to a TCP port, e.g. a ddmon-simvm VM), and misbehaves on command.
Driven through a control port, one command per line, answered "ok ..." or
"err ...":

  devices SERIAL=STATE ...      replace the device list (pushed to trackers)
  pids SERIAL PID ...           replace a device's pid list (pushed to trackers)
  vm SERIAL PID HOST:PORT       jdwp:PID on SERIAL bridges to HOST:PORT
  fail-jdwp SERIAL PID REASON   jdwp:PID answers FAIL with REASON
  garbage                       send non-hex to every track-devices client
  cut                           send half a frame to track-devices clients, then close them
  biglen                        send a length larger than the data, then close
  badstatus                     answer the next request with neither OKAY nor FAIL
  die                           stop listening and close every connection
  revive                        listen again on the same port
  stats                         counters as JSON
Usage: fake_adb.py --port P --control-port C [--port-file F]
"""
import argparse
import asyncio
import json
import sys


class FakeAdb:
    def __init__(self, port):
        self.port = port
        self.devices = {}          # serial -> state
        self.pids = {}             # serial -> [pid]
        self.vms = {}              # (serial, pid) -> (host, port)
        self.fail_jdwp = {}        # (serial, pid) -> reason
        self.device_trackers = set()
        self.jdwp_trackers = {}    # writer -> serial
        self.conns = set()
        self.server = None
        self.bad_status_next = False
        self.stats = {"connections": 0, "track_devices": 0, "track_jdwp": 0, "jdwp": 0,
                      "transport": 0, "requests": 0}

    @staticmethod
    def frame(text):
        data = text.encode()
        return b"%04x" % len(data) + data

    def devices_text(self):
        return "".join(f"{s}\t{st}\n" for s, st in self.devices.items())

    def pids_text(self, serial):
        return "".join(f"{p}\n" for p in self.pids.get(serial, []))

    async def start(self):
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", self.port, reuse_address=True)

    async def die(self):
        if self.server:
            self.server.close()
            await self.server.wait_closed()
            self.server = None
        for w in list(self.conns):
            w.close()
        self.conns.clear()
        self.device_trackers.clear()
        self.jdwp_trackers.clear()

    async def read_request(self, reader):
        head = await reader.readexactly(4)
        n = int(head.decode(), 16)
        return (await reader.readexactly(n)).decode()

    async def status(self, writer, ok, reason=""):
        if self.bad_status_next:
            self.bad_status_next = False
            writer.write(b"WHAT")
        elif ok:
            writer.write(b"OKAY")
        else:
            writer.write(b"FAIL" + self.frame(reason))
        await writer.drain()

    async def handle(self, reader, writer):
        self.stats["connections"] += 1
        self.conns.add(writer)
        serial = None
        try:
            while True:
                req = await self.read_request(reader)
                self.stats["requests"] += 1
                if req == "host:version":
                    await self.status(writer, True)
                    writer.write(self.frame("0029"))
                elif req == "host:track-devices":
                    self.stats["track_devices"] += 1
                    await self.status(writer, True)
                    self.device_trackers.add(writer)
                    writer.write(self.frame(self.devices_text()))
                    await writer.drain()
                    await reader.read()  # until the client leaves
                    return
                elif req.startswith("host:transport:"):
                    self.stats["transport"] += 1
                    serial = req[len("host:transport:"):]
                    if self.devices.get(serial) != "device":
                        await self.status(writer, False, f"device '{serial}' not found")
                        return
                    await self.status(writer, True)
                elif req == "track-jdwp" and serial:
                    self.stats["track_jdwp"] += 1
                    await self.status(writer, True)
                    self.jdwp_trackers[writer] = serial
                    writer.write(self.frame(self.pids_text(serial)))
                    await writer.drain()
                    await reader.read()
                    return
                elif req.startswith("jdwp:") and serial:
                    self.stats["jdwp"] += 1
                    pid = int(req[5:])
                    if (serial, pid) in self.fail_jdwp:
                        await self.status(writer, False, self.fail_jdwp[(serial, pid)])
                        return
                    target = self.vms.get((serial, pid))
                    if pid not in self.pids.get(serial, []) or not target:
                        await self.status(writer, False, f"no such process {pid}")
                        return
                    vr, vw = await asyncio.open_connection(*target)
                    await self.status(writer, True)
                    await self.bridge(reader, writer, vr, vw)
                    return
                else:
                    await self.status(writer, False, f"unknown service {req}")
                    return
        except (asyncio.IncompleteReadError, ConnectionError, ValueError, OSError):
            pass
        finally:
            self.device_trackers.discard(writer)
            self.jdwp_trackers.pop(writer, None)
            self.conns.discard(writer)
            writer.close()

    async def bridge(self, r1, w1, r2, w2):
        async def pump(r, w):
            try:
                while True:
                    data = await r.read(65536)
                    if not data:
                        break
                    w.write(data)
                    await w.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                w.close()
        self.conns.add(w2)
        await asyncio.gather(pump(r1, w2), pump(r2, w1))
        self.conns.discard(w2)

    async def push_devices(self):
        for w in list(self.device_trackers):
            w.write(self.frame(self.devices_text()))

    async def push_pids(self, serial):
        for w, s in list(self.jdwp_trackers.items()):
            if s == serial:
                w.write(self.frame(self.pids_text(serial)))

    async def command(self, line):
        words = line.split()
        if not words:
            return "err empty"
        op, args = words[0], words[1:]
        if op == "devices":
            self.devices = dict(a.split("=", 1) for a in args)
            await self.push_devices()
        elif op == "pids":
            self.pids[args[0]] = sorted({int(p) for p in args[1:]})
            await self.push_pids(args[0])
        elif op == "vm":
            host, port = args[2].rsplit(":", 1)
            self.vms[(args[0], int(args[1]))] = (host, int(port))
        elif op == "fail-jdwp":
            self.fail_jdwp[(args[0], int(args[1]))] = " ".join(args[2:])
        elif op == "unfail-jdwp":
            self.fail_jdwp.pop((args[0], int(args[1])), None)
        elif op == "garbage":
            for w in list(self.device_trackers):
                w.write(b"zz!!")
        elif op in ("cut", "biglen"):
            for w in list(self.device_trackers):
                w.write(b"00" if op == "cut" else b"ffffabc")
                await w.drain()
                w.close()
            self.device_trackers.clear()
        elif op == "badstatus":
            self.bad_status_next = True
        elif op == "die":
            await self.die()
        elif op == "revive":
            await self.start()
        elif op == "stats":
            return "ok " + json.dumps(self.stats)
        else:
            return "err unknown command " + op
        return "ok"


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--control-port", type=int, required=True)
    ap.add_argument("--port-file")
    a = ap.parse_args()
    fake = FakeAdb(a.port)
    await fake.start()

    async def control(reader, writer):
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                writer.write((await fake.command(line.decode().strip()) + "\n").encode())
                await writer.drain()
        finally:
            writer.close()

    ctl = await asyncio.start_server(control, "127.0.0.1", a.control_port, reuse_address=True)
    if a.port_file:
        with open(a.port_file, "w") as f:
            f.write(f"{a.port} {a.control_port}\n")
    print("fake adb server on", a.port, "control", a.control_port, flush=True)
    async with ctl:
        await ctl.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
