#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The web API's interest (web/api.c): a view fetched once with GET stays
# watched for a while (INTEREST_SECONDS), so the threads plugin keeps
# polling the VM (THST about every threads.interval) for the next GET. The
# interest table holds at most MAX_INTERESTS (256) notes, the oldest going
# for a new one; a GET of a view that does not exist notes nothing. So
# after one GET of VM A's threads and 300 GETs of views that do not exist
# (404), A's threads are still watched: the simulator (its --state-file:
# the last THST it sent) keeps being asked for THST. Before, each 404 noted
# an interest too, the 256th evicted A's threads, and the polls stopped.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
grep -q '^#define HAVE_HTTP 1' "$DDM_TOP_BUILDDIR/build-config.h" ||
    t_skip_all "ddmon was built --without-http (no libsoup 3)"
t_have_plugins threads || t_skip_all "the threads plugin was not built"
t_plan 4
state="$T_TMP/state.json"

# Threads come and go every 300 ms on average: every THST differs.
t_start_simvm --vms 1 --base-port 0 --port-file "$T_TMP/ports" --seed 7 \
    --state-file "$state" --thread-activity 300
t_wait 10 test -s "$T_TMP/ports" || t_fail "simvm started" "$(cat "$T_TMP/simvm.err")"
port=$(awk '{print $2}' "$T_TMP/ports")
A="127.0.0.1:$port"
t_start_server --scan=local --scan-ports "$port" --selected-port 0 --debug-port-base 0 \
    --http=127.0.0.1:0 || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
url=$(t_web_url "$T_TMP/server.err")
[ -n "$url" ] || t_fail "the server prints the web URL" "$(tail -5 "$T_TMP/server.err")"
t_wait 15 t_is ready t_vm_field "$A" state

# thst: the last THST the simulator sent (JSON), "null" before the first.
thst() {
    python3 -c 'import json,sys
print(json.dumps(json.load(open(sys.argv[1]))["vms"][0]["thst_sent"], sort_keys=True))' "$state"
}

# get.py URL PATH...: GET each path with the token; prints one status a line.
cat >"$T_TMP/get.py" <<'PY'
import http.client, sys, urllib.parse
url = urllib.parse.urlsplit(sys.argv[1])
token = urllib.parse.parse_qs(url.query)["token"][0]
for path in sys.argv[2:]:  # a connection each: the server may close one after an error
    c = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    c.request("GET", path, headers={"Authorization": "Bearer " + token})
    r = c.getresponse()
    r.read()
    c.close()
    print(r.status)
PY
vm_path="/api/vms/$(python3 -c 'import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1], safe=""))' "$A")"

st=$(python3 "$T_TMP/get.py" "$url" "$vm_path/views/threads")
[ "$st" = 200 ] && t_ok "GET of A's threads: 200" || t_fail "GET of A's threads: 200" "status $st"
# A's threads are watched now: the plugin polls A.
t0=$(thst)
changed() { [ "$(thst)" != "$t0" ]; }
t_wait 5 changed && t_ok "A is asked for THST while its threads are watched" \
    || t_fail "A is asked for THST while its threads are watched" "thst_sent stays $t0"

# 300 GETs of views that do not exist: global ones and A's.
paths=()
for i in $(seq 1 150); do paths+=("/api/views/nosuch$i" "$vm_path/views/nosuch$i"); done
python3 "$T_TMP/get.py" "$url" "${paths[@]}" >"$T_TMP/statuses"
n404=$(grep -c '^404$' "$T_TMP/statuses")
[ "$n404" = 300 ] && t_ok "300 GETs of views that do not exist: 404" \
    || t_fail "300 GETs of views that do not exist: 404" "$(sort "$T_TMP/statuses" | uniq -c)"

# A's threads are still watched: new THSTs keep coming (about one a
# second; 8 s for at least 2 new tables, so a loaded machine's slow polls
# or a table that happens not to change do not fail it; the bug: none).
seen=1
last=$(thst)
end=$(($(date +%s) + 8))
while [ "$(date +%s)" -lt "$end" ]; do
    sleep 0.2
    cur=$(thst)
    if [ "$cur" != "$last" ]; then seen=$((seen + 1)); last=$cur; fi
done
if [ "$seen" -ge 3 ]; then
    t_ok "A is still asked for THST after the 404s ($((seen - 1)) new tables in 8 s)"
else
    t_fail "A is still asked for THST after the 404s" "$((seen - 1)) new tables in 8 s"
fi
