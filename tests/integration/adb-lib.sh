# SPDX-License-Identifier: Apache-2.0
# Helpers shared by the adb integration tests (sourced after lib.sh, not
# run): querying the server's vms and devices views, driving the fake adb
# server's control port, a minimal JDWP client, and a CPU-time probe for
# "no busy loop" checks. Needs python3 (the tests skip without it).

ADB_Q="$T_TMP/adbq.py"
cat >"$ADB_Q" <<'PY'
import json, sys
# adbq.py rows FILE VIEW            one JSON row per line (snake_case column key -> value)
# adbq.py field FILE VIEW KEYCOL KEY FIELD   the FIELD of the row whose KEYCOL == KEY
# adbq.py keys FILE VIEW KEYCOL PREFIX       the KEYCOL values starting with PREFIX, sorted
def views(d):
    if isinstance(d, dict):
        if "rows" in d and "columns" in d:
            yield d
        for v in d.values():
            yield from views(v)
    elif isinstance(d, list):
        for v in d:
            yield from views(v)
def rows(path, name):
    try:
        doc = json.load(open(path))
    except (OSError, ValueError):
        sys.exit(2)
    for v in views(doc):
        if v.get("name") != name:
            continue
        yield from v["rows"]  # objects keyed by snake_case column name (doc/json.md)
op, path, name = sys.argv[1:4]
if op == "rows":
    for r in rows(path, name):
        print(json.dumps(r))
elif op == "field":
    keycol, key, field = sys.argv[4:7]
    for r in rows(path, name):
        if str(r.get(keycol)) == key:
            v = r.get(field)
            print("" if v is None else v)
            sys.exit(0)
    sys.exit(1)
elif op == "keys":
    keycol, prefix = sys.argv[4:6]
    print(" ".join(sorted(str(r.get(keycol)) for r in rows(path, name) if str(r.get(keycol)).startswith(prefix))))
PY

# Snapshot the server's views into files (return 1 when the server does not answer).
adb_vms_json() { t_ddmon --no-autostart --json vms >"$T_TMP/vms.json" 2>"$T_TMP/vms.err"; }
adb_devices_json() { t_ddmon --no-autostart --json view devices >"$T_TMP/devices.json" 2>"$T_TMP/devices.err"; }
# adb_vm_field KEY FIELD: print a field of VM KEY (fresh query).
adb_vm_field() { adb_vms_json && python3 "$ADB_Q" field "$T_TMP/vms.json" vms key "$1" "$2"; }
# adb_vm_app_is KEY APP: VM KEY is listed with app name APP.
adb_vm_app_is() { [ "$(adb_vm_field "$1" app)" = "$2" ]; }
# adb_vm_has KEY TEXT: some column of VM KEY's row contains TEXT.
adb_vm_has() {
    adb_vms_json && python3 "$ADB_Q" rows "$T_TMP/vms.json" vms | grep -F "\"key\": \"$1\"" | grep -qF -- "$2"
}
# adb_vm_keys PREFIX: the keys of the listed VMs that start with PREFIX, sorted, space-separated.
adb_vm_keys() { adb_vms_json && python3 "$ADB_Q" keys "$T_TMP/vms.json" vms key "$1"; }
adb_vm_keys_are() { [ "$(adb_vm_keys "$1")" = "$2" ]; }
# adb_device_state SERIAL: the state the devices view shows for SERIAL.
adb_device_field() { adb_devices_json && python3 "$ADB_Q" field "$T_TMP/devices.json" devices serial "$1" "$2"; }
adb_device_listed() { adb_devices_json && python3 "$ADB_Q" field "$T_TMP/devices.json" devices serial "$1" serial >/dev/null; }
adb_device_gone() { adb_devices_json && ! python3 "$ADB_Q" field "$T_TMP/devices.json" devices serial "$1" serial >/dev/null; }
# The sorted keys "adb:SERIAL:PID ..." for pids.
adb_keys_for() { local s=$1 p; shift; for p in "$@"; do echo "adb:$s:$p"; done | sort | paste -sd' '; }

# fake_ctl COMMAND...: one command on the fake adb server's control port; prints its answer.
fake_ctl() {
    local line=""
    exec 7<>"/dev/tcp/127.0.0.1/$FAKE_CTL" || return 1
    echo "$*" >&7
    read -r -t 5 line <&7
    exec 7>&- 7<&-
    echo "$line"
    [ "${line%% *}" = ok ]
}
# fake_stat NAME: one counter of the fake's stats.
fake_stat() { fake_ctl stats | sed 's/^ok //' | python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

# cpu_ticks PID: user+system clock ticks the process used so far.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

# jdwp_version PORT: handshake + VirtualMachine.Version on 127.0.0.1:PORT; prints the VM description.
jdwp_version() {
    python3 - "$1" <<'PY'
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"JDWP-Handshake")
got = b""
while len(got) < 14:
    b = s.recv(14 - len(got))
    if not b:
        sys.exit("no handshake echo")
    got += b
if got != b"JDWP-Handshake":
    sys.exit("bad handshake %r" % got)
s.sendall(struct.pack(">IIBBB", 11, 0x4242, 0, 1, 1))
buf = b""
while True:  # skip events (e.g. DDM chunks) until our reply
    while len(buf) < 11:
        b = s.recv(65536)
        if not b:
            sys.exit("closed before the reply")
        buf += b
    n, pid, flags = struct.unpack(">IIB", buf[:9])
    while len(buf) < n:
        b = s.recv(65536)
        if not b:
            sys.exit("closed mid-packet")
        buf += b
    pkt, buf = buf[:n], buf[n:]
    if flags & 0x80 and pid == 0x4242:
        err = struct.unpack(">H", pkt[9:11])[0]
        if err:
            sys.exit("error %d" % err)
        ln = struct.unpack(">I", pkt[11:15])[0]
        print(pkt[15:15 + ln].decode("utf-8", "replace"))
        sys.exit(0)
PY
}

# adb_bail PLAN REASON: report the remaining tests of PLAN as failed (not run) and stop.
adb_bail() {
    local plan=$1; shift
    while [ "$T_N" -lt "$plan" ]; do t_fail "not run: $*"; done
    exit 0
}

# Predicates for t_wait (which re-runs a command: never pass it "$(...)", that is evaluated once).
fake_stat_gt() { [ "$(fake_stat "$1")" -gt "$2" ]; }
adb_device_state_is() { [ "$(adb_device_field "$1" state)" = "$2" ]; }
file_lines_ge() { [ "$(wc -l <"$1" 2>/dev/null || echo 0)" -ge "$2" ]; }

# fake_adb_start: start tests/integration/fake_adb.py on free ports (a few
# tries: a port free when probed may be taken by the time it binds). Sets
# FAKE_PORT, FAKE_CTL, FAKE_PID; writes "$T_TMP/fake.ports" once it listens.
fake_adb_start() {
    local try
    for try in 1 2 3 4 5; do
        FAKE_PORT=$(t_free_port) && FAKE_CTL=$(t_free_port) || return 1
        [ "$FAKE_PORT" != "$FAKE_CTL" ] || continue
        rm -f "$T_TMP/fake.ports"
        python3 "$DDM_TOP_SRCDIR/tests/integration/fake_adb.py" --port "$FAKE_PORT" --control-port "$FAKE_CTL" \
            --port-file "$T_TMP/fake.ports" >"$T_TMP/fake.out" 2>"$T_TMP/fake.err" &
        FAKE_PID=$!
        T_PIDS+=("$FAKE_PID")
        t_wait 10 fake_up && return 0
    done
    return 1
}
fake_up() { t_dead "$FAKE_PID" && return 2; test -s "$T_TMP/fake.ports"; }
