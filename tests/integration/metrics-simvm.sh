#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# GET /metrics through the real ddmon server (--metrics, token-free)
# against ddmon-simvm: `promtool check metrics` (Debian's prometheus)
# accepts the text; OpenMetrics when asked (Accept), parsed by
# prometheus_client; the heap figures equal the HPIF simvm last sent
# and the threads by state its last THST (tests/integration/metrics_q.py
# parses the text itself); a GC (`ddmon gc`) adds one to
# ddmon_heap_gcs_total and the heap figures follow; an app name with a
# quote and a backslash comes back exactly; a VM that goes away takes its
# series; the listener serves nothing but GET /metrics; the dashboard
# (--http) serves it only with its token.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins vminfo heap threads nativeheap || t_skip_all "a plugin metrics come from was configured out"
t_need_tool promtool prometheus
grep -q '^#define HAVE_HTTP 1' "$DDM_TOP_BUILDDIR/build-config.h" ||
    t_skip_all "ddmon was built --without-http (no libsoup 3): no --metrics"
t_plan 20
q="$DDM_TOP_SRCDIR/tests/integration/metrics_q.py"
M="$T_TMP/m.txt"

t_start_simvm --vms 2 --two-heaps --gc-every 0 --thread-activity 0 --seed 21 \
    --base-port 0 --port-file "$T_TMP/ports" --state-file "$T_TMP/truth.json"
t_wait 10 test -s "$T_TMP/ports" || t_fail "simvm started" "$(cat "$T_TMP/simvm.err")"
# A second simulator whose one VM goes away later, with a name to escape.
odd='com.example.q"uote\back'
"$SIMVM" --vms 1 --app "$odd" --seed 22 --base-port 0 --port-file "$T_TMP/ports2" \
    >"$T_TMP/simvm2.out" 2>"$T_TMP/simvm2.err" &
SIMVM2_PID=$!
T_PIDS+=("$SIMVM2_PID")
t_wait 10 test -s "$T_TMP/ports2" || t_fail "second simvm started" "$(cat "$T_TMP/simvm2.err")"
ports=$(cat "$T_TMP/ports" "$T_TMP/ports2" | awk '{print $2}' | sort -n | paste -sd,)
odd_pid=$(awk '{print $1}' "$T_TMP/ports2")

t_start_server --scan=local --scan-ports "$ports" --metrics=127.0.0.1:0 --http=127.0.0.1:0
t_wait 10 grep -q "metrics: http://" "$T_TMP/server.err"
url=$(grep -o 'metrics: http://[^ ]*' "$T_TMP/server.err" | head -1 | cut -d' ' -f2)
case $url in
http://127.0.0.1:*/metrics) t_ok "--metrics=127.0.0.1:0 listens on loopback: $url" ;;
*) t_fail "--metrics=127.0.0.1:0 listens on loopback" "url '$url'" "$(cat "$T_TMP/server.err")" ;;
esac

scrape() { python3 "$q" scrape "$url" "$M" "$@"; }
# The Prometheus text of now in $M has 3 VMs ready and the figures of both
# managed heaps and the threads of every VM (a scrape switches the polls on).
ready() {
    scrape >/dev/null &&
        t_is 3 python3 "$q" value "$M" ddmon_vms serial= state=ready &&
        [ "$(grep -c '^ddmon_threads{' "$M")" -gt 0 ] &&
        [ "$(grep -c '^ddmon_heap_size_bytes{' "$M")" -ge 5 ]
}
if t_wait 20 ready; then
    t_ok "a scrape lists the 3 VMs and, once polled, their heaps and threads"
else
    t_fail "a scrape lists the 3 VMs and, once polled, their heaps and threads" "$(head -c 3000 "$M")"
fi

head=$(scrape)
if [ "$head" = "200 text/plain; version=0.0.4; charset=utf-8" ]; then
    t_ok "no Accept header: the Prometheus text format 0.0.4, no token needed"
else
    t_fail "no Accept header: the Prometheus text format 0.0.4, no token needed" "got '$head'"
fi
if promtool check metrics <"$M" >"$T_TMP/promtool.out" 2>&1; then
    t_ok "promtool check metrics accepts it ($(grep -c '^[a-z]' "$M") samples)"
else
    t_fail "promtool check metrics accepts it" "$(cat "$T_TMP/promtool.out")" "$(head -c 2000 "$M")"
fi

head=$(scrape "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
if [ "$head" = "200 application/openmetrics-text; version=1.0.0; charset=utf-8" ] &&
    [ "$(tail -n 1 "$M")" = "# EOF" ] && grep -q '^# UNIT ddmon_heap_size_bytes bytes$' "$M" &&
    grep -q '^# TYPE process_cpu_seconds counter$' "$M" && grep -q '^process_cpu_seconds_total ' "$M"; then
    t_ok "Accept as Prometheus sends it: OpenMetrics (UNIT lines, counters without _total, # EOF)"
else
    t_fail "Accept as Prometheus sends it: OpenMetrics" "got '$head'" "$(tail -n 5 "$M")"
fi
python3 "$q" openmetrics "$M" >"$T_TMP/om.out" 2>&1
case $? in
0) t_ok "prometheus_client's OpenMetrics parser reads it: $(cat "$T_TMP/om.out")" ;;
77) t_ok "# SKIP $(cat "$T_TMP/om.out")" ;;
*) t_fail "prometheus_client's OpenMetrics parser reads it" "$(tail -n 5 "$T_TMP/om.out")" ;;
esac

# Heaps and threads equal simvm's ground truth (retried: a THST or an HPIF
# may arrive between the scrape and the state file).
heaps_match() { scrape >/dev/null && python3 "$q" heaps "$M" "$T_TMP/truth.json"; }
threads_match() { scrape >/dev/null && python3 "$q" threads "$M" "$T_TMP/truth.json"; }
if t_wait 15 heaps_match; then
    t_ok "ddmon_heap_{max,size,allocated}_bytes and ddmon_heap_objects equal simvm's last HPIF"
else
    t_fail "heap figures equal simvm's last HPIF" "$(python3 "$q" heaps "$M" "$T_TMP/truth.json")"
fi
if t_wait 15 threads_match; then
    t_ok "ddmon_threads by state equals simvm's last THST, every VM"
else
    t_fail "ddmon_threads by state equals simvm's last THST" "$(python3 "$q" threads "$M" "$T_TMP/truth.json")"
fi
has_cpu() { scrape >/dev/null && grep -q '^ddmon_thread_cpu_seconds_total{' "$M"; }
t_wait 10 has_cpu
cpu=$(grep -c '^ddmon_thread_cpu_seconds_total{' "$M")
if [ "$cpu" -gt 0 ]; then
    t_ok "ddmon_thread_cpu_seconds_total has $cpu series"
else
    t_fail "ddmon_thread_cpu_seconds_total has series" "$(grep thread_cpu "$M")"
fi

# A GC: the counter grows by one and the heap figures follow the new HPIF.
pid1=$(head -n 1 "$T_TMP/ports" | awk '{print $1}')
key1=$(python3 - "$M" "$pid1" <<'PY'
import re, sys
for line in open(sys.argv[1]):
    m = re.match(r'ddmon_vm_info\{key="([^"]*)",serial="[^"]*",pid="' + sys.argv[2] + '"', line)
    if m:
        print(m.group(1))
PY
)
gcs_before=$(python3 "$q" value "$M" ddmon_heap_gcs_total key="$key1")
t_ddmon --no-autostart gc "$pid1" >"$T_TMP/gc.out" 2>&1
gcs_is() { scrape >/dev/null && t_is "$1" python3 "$q" value "$M" ddmon_heap_gcs_total key="$key1"; }
if [ -n "$gcs_before" ] && t_wait 10 gcs_is $((gcs_before + 1)); then
    t_ok "ddmon gc: ddmon_heap_gcs_total of $key1 went from $gcs_before to $((gcs_before + 1))"
else
    t_fail "ddmon gc: ddmon_heap_gcs_total grows by one" "before '$gcs_before'" \
        "$(cat "$T_TMP/gc.out")" "$(grep gcs_total "$M")"
fi
if t_wait 15 heaps_match; then
    t_ok "... and the heap figures equal the HPIF simvm sent at that GC"
else
    t_fail "... and the heap figures equal the HPIF simvm sent at that GC" \
        "$(python3 "$q" heaps "$M" "$T_TMP/truth.json")"
fi

# The odd app name: escaped in the text, read back exactly.
scrape >/dev/null
got=$(python3 - "$M" "$odd_pid" <<'PY'
import sys
sys.path.insert(0, __import__("os").environ["DDM_TOP_SRCDIR"] + "/tests/integration")
import metrics_q
for name, labels, value in metrics_q.parse(sys.argv[1]):
    if name == "ddmon_vm_info" and labels.get("pid") == sys.argv[2]:
        print(labels["app"])
PY
)
if [ "$got" = "$odd" ] && grep -qF 'app="com.example.q\"uote\\back"' "$M"; then
    t_ok "an app name with a quote and a backslash is escaped and reads back exactly"
else
    t_fail "an app name with a quote and a backslash reads back exactly" "got '$got'" \
        "$(grep -F 'q\"' "$M" | head -n 2)"
fi
odd_key=$(python3 "$q" keys "$M" ddmon_vm_info | while read -r k; do
    python3 "$q" value "$M" ddmon_vm_debugger_attached key="$k" pid="$odd_pid" >/dev/null 2>&1 && echo "$k"
done)

# That VM goes away: its series go with it, the others stay.
t_stop "$SIMVM2_PID"
gone() {
    scrape >/dev/null && ! grep -qF "key=\"$odd_key\"" "$M" &&
        t_is 2 python3 "$q" value "$M" ddmon_vms serial= state=ready
}
if [ -n "$odd_key" ] && t_wait 15 gone; then
    t_ok "the VM $odd_key went away: no series has its key, ddmon_vms{state=ready} is 2"
else
    t_fail "a VM that goes away takes its series" "key '$odd_key'" "$(grep -F "$odd_key" "$M" | head -n 5)"
fi
if grep -q "^ddmon_heap_size_bytes{key=\"$key1\"" "$M" && grep -q "^ddmon_threads{key=\"$key1\"" "$M"; then
    t_ok "... and the other VMs' series are still there"
else
    t_fail "... and the other VMs' series are still there" "$(head -c 2000 "$M")"
fi

# The listener serves nothing else.
head=$(python3 "$q" scrape "${url%/metrics}/" "$T_TMP/other.txt")
if [ "${head%% *}" = 404 ]; then
    t_ok "GET / on the metrics listener: 404"
else
    t_fail "GET / on the metrics listener: 404" "got '$head'"
fi
code=$(python3 - "$url" <<'PY'
import sys, urllib.request, urllib.error
try:
    urllib.request.urlopen(urllib.request.Request(sys.argv[1], data=b"x", method="POST"), timeout=10)
    print(200)
except urllib.error.HTTPError as e:
    print(e.code)
PY
)
if [ "$code" = 405 ]; then
    t_ok "POST /metrics: 405"
else
    t_fail "POST /metrics: 405" "got '$code'"
fi
# The dashboard serves /metrics too, under its token (a bearer, as
# Prometheus sends it).
web=$(grep -o 'web dashboard: http://[^ ]*' "$T_TMP/server.err" | head -1 | cut -d' ' -f3)
token=${web##*token=}
base=${web%%\?*}
head=$(python3 "$q" scrape "${base}metrics" "$T_TMP/dash.txt")
if [ -n "$web" ] && [ "${head%% *}" = 401 ]; then
    t_ok "GET /metrics on the dashboard without its token: 401"
else
    t_fail "GET /metrics on the dashboard without its token: 401" "url '$web'" "got '$head'"
fi
code=$(python3 - "${base}metrics" "$token" "$T_TMP/dash.txt" <<'PY'
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1], headers={"Authorization": "Bearer " + sys.argv[2]})
try:
    with urllib.request.urlopen(req, timeout=10) as r:
        open(sys.argv[3], "wb").write(r.read())
        print(r.status)
except urllib.error.HTTPError as e:
    print(e.code)
PY
)
if [ "$code" = 200 ] && grep -q '^ddmon_vms{serial="",state="ready"} 2$' "$T_TMP/dash.txt"; then
    t_ok "... and with it as a bearer: 200, the same figures"
else
    t_fail "... and with it as a bearer: 200, the same figures" "got '$code'" "$(head -n 5 "$T_TMP/dash.txt")"
fi
# Our own resource use is there and plausible.
scrape >/dev/null
rss=$(python3 "$q" value "$M" process_resident_memory_bytes)
fds=$(python3 "$q" value "$M" process_open_fds)
if [ "${rss%.*}" -gt 1000000 ] 2>/dev/null && [ "${fds%.*}" -gt 3 ] 2>/dev/null; then
    t_ok "process_resident_memory_bytes $rss, process_open_fds $fds"
else
    t_fail "ddmon's own resource use" "rss '$rss' fds '$fds'"
fi
# Off loopback (--metrics=0.0.0.0:0, read-only and token-free), Prometheus
# scrapes under any name and through a port forward (any Host), but a web
# page's script may not read it (DNS rebinding); on loopback the Host rules
# stay strict (the listener above).
"$DDMON" --socket "$T_TMP/wide.sock" --plugin-dir "$PLUGINDIR" --no-adb-start \
    server --foreground --scan=local --scan-ports "$ports" --metrics=0.0.0.0:0 \
    >"$T_TMP/wide.out" 2>"$T_TMP/wide.err" &
T_PIDS+=("$!")
t_wait 10 grep -q "metrics: http://" "$T_TMP/wide.err"
wide=$(grep -o 'metrics: http://[^ ]*' "$T_TMP/wide.err" | head -1 | cut -d' ' -f2)
codes=$(python3 - "$wide" "$url" <<'PY'
import http.client, sys, urllib.parse
def get(url, headers):
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    c.putrequest("GET", u.path, skip_host=True)
    for k, v in headers.items():
        c.putheader(k, v)
    c.endheaders()
    r = c.getresponse()
    body = r.read()
    return f"{r.status}" + ("+ok" if r.status == 200 and b"process_open_fds" in body else "")
wide, narrow = sys.argv[1:3]
print(get(wide, {"Host": "vm.lab.example:9585"}),             # another name and port
      get(wide, {"Host": "vm.lab.example"}),
      get(wide, {"Host": "vm.lab.example:9585", "Sec-Fetch-Mode": "navigate"}),
      get(wide, {"Host": "vm.lab.example:9585", "Sec-Fetch-Mode": "cors"}),
      get(wide, {"Host": "vm.lab.example:9585", "Origin": "http://vm.lab.example:9585"}),
      get(wide, {"Host": "vm.lab.example:"}),
      get(narrow, {"Host": "vm.lab.example:" + str(urllib.parse.urlsplit(narrow).port)}))
PY
)
if [ "$codes" = "200+ok 200+ok 200+ok 403 403 403 403" ]; then
    t_ok "--metrics off loopback: any Host (200), no page script or Origin (403); loopback stays strict"
else
    t_fail "--metrics off loopback: any Host, no page script" "got '$codes' (want 200+ok 200+ok 200+ok 403 403 403 403)" "$wide"
fi
exit $((T_FAILED > 0))
