#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ddmon's track-app handling against a small fake adb server (inline below)
# for what a simulated device does not do: a device whose track-app lists a
# profileable-only app (listed in device-processes, never offered as a VM),
# one whose track-app stream ends before its first update, one that sends
# a malformed AppProcesses message, and one that answers FAIL (all three
# fall back to track-jdwp); a device whose track-jdwp stream is cut later
# reopens track-jdwp, never track-app again (the choice is remembered).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v python3 >/dev/null || t_skip_all "no python3"
. "$DDM_TOP_SRCDIR/tests/integration/adb-lib.sh"
PLAN=9
export LC_ALL=C

FAKE="$T_TMP/fake_trackapp.py"
cat >"$FAKE" <<'PY'
# A fake adb server: host:track-devices, host:transport:SERIAL, track-app and
# track-jdwp (per-device behaviour below), jdwp:PID (always FAIL). Counts the
# tracking requests per device in a JSON file.
import asyncio, json, sys
port_file, stats_file = sys.argv[1], sys.argv[2]
DEVICES = ["app-dev", "cut-dev", "bad-dev", "old-dev"]
JDWP = {"app-dev": [], "cut-dev": [201, 202], "bad-dev": [301], "old-dev": [401, 402]}
stats = {}
def varint(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        out += bytes([b | (0x80 if v else 0)])
        if not v:
            return out
def field(n, wire, payload):
    if wire == 0:
        return varint(n << 3) + varint(payload)
    return varint(n << 3 | 2) + varint(len(payload)) + payload
def entry(pid, debuggable, profileable, arch, name):
    e = field(1, 0, pid) + field(2, 0, debuggable) + field(3, 0, profileable) + field(4, 2, arch.encode())
    e += field(5, 0, 0) + field(6, 2, name.encode()) + field(7, 2, name.encode()) + field(9, 0, 10123)
    return field(1, 2, e)
APPS = (entry(101, 1, 1, "arm64", "com.example.debug") + entry(102, 0, 1, "arm64", "com.example.prof")
        + entry(103, 1, 0, "x86", "com.example.dbgonly"))
def frame(b):
    return b"%04x" % len(b) + b
def count(serial, what):
    key = "%s %s" % (serial, what)
    stats[key] = stats.get(key, 0) + 1
    with open(stats_file + ".tmp", "w") as f:
        json.dump(stats, f)
    import os
    os.replace(stats_file + ".tmp", stats_file)
async def handle(reader, writer):
    serial = None
    try:
        while True:
            n = int(await reader.readexactly(4), 16)
            req = (await reader.readexactly(n)).decode()
            if req == "host:track-devices":
                writer.write(b"OKAY" + frame("".join("%s\tdevice\n" % d for d in DEVICES).encode()))
                await writer.drain()
                await reader.read()  # hold until the client goes
                return
            if req.startswith("host:transport:") and req[15:] in DEVICES:
                serial = req[15:]
                writer.write(b"OKAY")
            elif req == "track-app" and serial:
                count(serial, "track-app")
                if serial == "old-dev":
                    writer.write(b"FAIL" + frame(b"unknown service track-app"))
                    await writer.drain()
                    return
                writer.write(b"OKAY")
                if serial == "cut-dev":
                    await writer.drain()
                    return  # closed before the first update
                writer.write(frame(APPS if serial == "app-dev" else b"\x0b\x01"))
                await writer.drain()
                await reader.read()
                return
            elif req == "track-jdwp" and serial:
                count(serial, "track-jdwp")
                writer.write(b"OKAY" + frame("".join("%d\n" % p for p in JDWP[serial]).encode()))
                await writer.drain()
                if serial == "cut-dev" and stats["cut-dev track-jdwp"] == 1:
                    await asyncio.sleep(1)
                    return  # the first track-jdwp stream is cut after its update
                await reader.read()
                return
            elif req.startswith("jdwp:"):
                writer.write(b"FAIL" + frame(b"no such process"))
                await writer.drain()
                return
            else:
                writer.write(b"FAIL" + frame(("unknown service " + req).encode()))
                await writer.drain()
                return
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, ValueError):
        pass
    finally:
        writer.close()
async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    with open(port_file, "w") as f:
        f.write("%d\n" % server.sockets[0].getsockname()[1])
    async with server:
        await server.serve_forever()
asyncio.run(main())
PY

t_plan $PLAN

# 1-2: the fake and ddmon.
python3 "$FAKE" "$T_TMP/fake.port" "$T_TMP/stats.json" >"$T_TMP/fake.out" 2>"$T_TMP/fake.err" &
T_PIDS+=("$!")
if t_wait 10 test -s "$T_TMP/fake.port"; then
    t_ok "fake adb server started"
else
    t_fail "fake adb server started" "$(cat "$T_TMP/fake.err")"
    adb_bail $PLAN "no fake adb server"
fi
export ANDROID_ADB_SERVER_PORT=$(cat "$T_TMP/fake.port")
unset ADB_SERVER_SOCKET
if t_start_server --scan=adb --debug-port-base "$(t_free_ports 8)"; then
    t_ok "ddmon server started with --scan=adb"
else
    t_fail "ddmon server started with --scan=adb" "$(tail -5 "$T_TMP/server.err")"
    adb_bail $PLAN "no ddmon server"
fi

dev_is() { # dev_is SERIAL TRACKING DEBUGGABLE PROFILEABLE
    adb_devices_json || return 1
    local f="$T_TMP/devices.json"
    [ "$(python3 "$ADB_Q" field "$f" devices serial "$1" tracking)" = "$2" ] &&
        [ "$(python3 "$ADB_Q" field "$f" devices serial "$1" debuggable)" = "$3" ] &&
        [ "$(python3 "$ADB_Q" field "$f" devices serial "$1" profileable)" = "$4" ]
}
devices_rows() { python3 "$ADB_Q" rows "$T_TMP/devices.json" devices; }

# 3-4: track-app with a profileable-only app: only debuggable pids become VMs.
if t_wait 15 dev_is app-dev track-app 2 2 && t_wait 10 adb_vm_keys_are "adb:app-dev:" "adb:app-dev:101 adb:app-dev:103"; then
    t_ok "track-app device: debuggable pids 101 and 103 are VMs, profileable-only 102 is not"
else
    t_fail "track-app device: debuggable pids 101 and 103 are VMs, profileable-only 102 is not" "$(devices_rows)" \
        "$(adb_vm_keys "adb:")"
fi
procs() {
    t_ddmon --no-autostart --json view device-processes >"$T_TMP/procs.json" 2>/dev/null &&
        python3 "$ADB_Q" rows "$T_TMP/procs.json" device-processes
}
want_procs='{"serial": "app-dev", "pid": 101, "vm": "adb:app-dev:101", "debuggable": true, "profileable": true, "architecture": "arm64", "process": "com.example.debug"}
{"serial": "app-dev", "pid": 102, "vm": null, "debuggable": false, "profileable": true, "architecture": "arm64", "process": "com.example.prof"}
{"serial": "app-dev", "pid": 103, "vm": "adb:app-dev:103", "debuggable": true, "profileable": false, "architecture": "x86", "process": "com.example.dbgonly"}'
procs_are() { [ "$(procs)" = "$want_procs" ]; }
if t_wait 10 procs_are; then
    t_ok "device-processes lists all three with flags, architecture and name; the profileable-only one has no VM"
else
    t_fail "device-processes lists all three with flags, architecture and name" "$(procs)"
fi

# 5-7: the three ways track-app is not usable: each device falls back to track-jdwp, VMs listed.
fell_back() { # fell_back SERIAL KEYS...
    local s=$1; shift
    dev_is "$s" track-jdwp "$#" "" && adb_vm_keys_are "adb:$s:" "$(adb_keys_for "$s" "$@")"
}
for c in "old-dev|answers FAIL|refused: unknown service track-app|401 402" \
         "cut-dev|ends its stream before the first update|the stream ended before its first update|201 202" \
         "bad-dev|sends a malformed AppProcesses|it sent a malformed update|301"; do
    IFS='|' read -r s what why pids <<<"$c"
    # shellcheck disable=SC2086
    if t_wait 15 fell_back "$s" $pids && grep -qF "device $s: tracking VMs with track-jdwp (track-app: $why" "$T_TMP/server.err"; then
        t_ok "track-app $what: $s uses track-jdwp, its VMs are listed"
    else
        t_fail "track-app $what: $s uses track-jdwp, its VMs are listed" "$(devices_rows)" "$(adb_vm_keys "adb:$s:")" \
            "$(grep -F "$s" "$T_TMP/server.err" | tail -5)"
    fi
done

# 8: the choice is remembered: cut-dev's first track-jdwp stream was cut; ddmon reopened track-jdwp only.
stat() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], 0))' "$T_TMP/stats.json" "$1"; }
reopened() { [ "$(stat "cut-dev track-jdwp")" -ge 2 ]; }
if t_wait 15 reopened && sleep 1 && [ "$(stat "cut-dev track-app")" = 1 ] && [ "$(stat "old-dev track-app")" = 1 ] &&
    [ "$(stat "bad-dev track-app")" = 1 ] && [ "$(stat "app-dev track-jdwp")" = 0 ] && t_wait 10 fell_back cut-dev 201 202; then
    t_ok "a cut track-jdwp stream is reopened as track-jdwp; track-app asked once per device"
else
    t_fail "a cut track-jdwp stream is reopened as track-jdwp; track-app asked once per device" "$(cat "$T_TMP/stats.json")"
fi

# 9: one line per choice, and ddmon still serves.
n=$(grep -c "tracking \(apps\|VMs\) with track-" "$T_TMP/server.err")
if [ "$n" = 4 ] && ! t_dead "$DDMON_PID" && adb_vms_json; then
    t_ok "each device's tracking service logged once; ddmon still answers"
else
    t_fail "each device's tracking service logged once; ddmon still answers" "$n lines" \
        "$(grep "tracking" "$T_TMP/server.err")"
fi
exit 0
