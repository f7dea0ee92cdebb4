#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""GET /metrics for tests/integration/metrics-simvm.sh: scrape, read one
series, and compare what ddmon exposes with ddmon-simvm's ground truth
(its --state-file). Parses the Prometheus text format itself (a few lines
of the format's grammar), so the comparison does not trust ddmon's own
renderer; promtool and prometheus_client check the syntax separately.

  metrics_q.py scrape URL OUT [ACCEPT]   body to OUT; prints "STATUS CONTENT-TYPE"
  metrics_q.py value FILE NAME [L=V...]  the value of the one matching series
  metrics_q.py keys FILE NAME            the VM keys that have a series of NAME
  metrics_q.py heaps FILE TRUTH          heap figures == each VM's last HPIF sent
  metrics_q.py threads FILE TRUTH        threads by state == each VM's last THST sent
  metrics_q.py openmetrics FILE          parse with prometheus_client's OpenMetrics
                                         parser (exit 77 if it is not installed)
Every check prints what differs and exits 1 when something does.
"""
import json
import re
import sys
import urllib.error
import urllib.request

# THST state codes as ddmon names them (doc/protocol.md, "THST").
STATE_NAMES = ["zombie", "running", "timed-wait", "monitor", "wait", "initializing",
               "starting", "native", "vmwait", "suspended"]

SERIES = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?')


def unescape(v):
    return re.sub(r'\\(.)', lambda m: {"n": "\n"}.get(m.group(1), m.group(1)), v)


def parse(path):
    """[(name, {label: value}, float)] of every sample line."""
    out = []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        m = SERIES.match(line)
        if not m:
            raise SystemExit(f"unparsable line: {line!r}")
        labels = {}
        body = m.group(3) or ""
        pos = 0
        while pos < len(body):
            lm = LABEL.match(body, pos)
            if not lm:
                raise SystemExit(f"unparsable labels: {body!r}")
            labels[lm.group(1)] = unescape(lm.group(2))
            pos = lm.end()
        out.append((m.group(1), labels, float(m.group(4))))
    return out


def select(samples, name, want):
    return [s for s in samples if s[0] == name and all(s[1].get(k) == v for k, v in want.items())]


def scrape(url, out, accept=None):
    req = urllib.request.Request(url)
    if accept:
        req.add_header("Accept", accept)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            body, status, ctype = r.read(), r.status, r.headers.get("Content-Type")
    except urllib.error.HTTPError as e:
        body, status, ctype = e.read(), e.code, e.headers.get("Content-Type")
    open(out, "wb").write(body)
    print(status, ctype)


def truth_vms(path):
    return [v for v in json.load(open(path))["vms"] if v.get("ddm") and v.get("connected")]


def vm_key_of(samples, pid):
    keys = {s[1]["key"] for s in select(samples, "ddmon_vm_info", {"pid": str(pid)})}
    return keys.pop() if len(keys) == 1 else None


def truth_vms_keyed(samples, truth, bad):
    """Each VM of truth_vms with its key in ddmon_vm_info; a line in bad for a VM without one."""
    for v in truth_vms(truth):
        key = vm_key_of(samples, v["pid"])
        if key is None:
            bad.append(f"pid {v['pid']}: no ddmon_vm_info")
            continue
        yield v, key


def check_heaps(samples, truth):
    bad = []
    for v, key in truth_vms_keyed(samples, truth, bad):
        for h in v["heaps"]:
            sent = h.get("hpif_sent")
            if not sent:
                bad.append(f"pid {v['pid']} heap {h['id']}: simvm sent no HPIF yet")
                continue
            for metric, field in (("ddmon_heap_max_bytes", "max"), ("ddmon_heap_size_bytes", "size"),
                                  ("ddmon_heap_allocated_bytes", "allocated_bytes"),
                                  ("ddmon_heap_objects", "allocated_objects")):
                got = select(samples, metric, {"key": key, "heap": str(h["id"])})
                if len(got) != 1 or got[0][2] != sent[field]:
                    bad.append(f"pid {v['pid']} heap {h['id']}: {metric} "
                               f"{[g[2] for g in got]}, simvm sent {sent[field]}")
    return bad


def check_threads(samples, truth):
    bad = []
    for v, key in truth_vms_keyed(samples, truth, bad):
        want = {}
        for t in v.get("thst_sent") or []:
            name = STATE_NAMES[t["state"]] if t["state"] < len(STATE_NAMES) else f"state-{t['state']}"
            want[name] = want.get(name, 0) + 1
        got = {s[1]["state"]: s[2] for s in select(samples, "ddmon_threads", {"key": key})}
        if got != want:
            bad.append(f"pid {v['pid']}: ddmon_threads {got}, simvm's last THST {want}")
    return bad


def main(argv):
    cmd = argv[1]
    if cmd == "scrape":
        scrape(argv[2], argv[3], argv[4] if len(argv) > 4 else None)
        return 0
    if cmd == "openmetrics":
        try:
            from prometheus_client.openmetrics.parser import text_string_to_metric_families
        except ImportError:  # a python3 other than Debian's (pyenv): try Debian's packages
            sys.path.append("/usr/lib/python3/dist-packages")
            try:
                from prometheus_client.openmetrics.parser import text_string_to_metric_families
            except ImportError:
                print("python3-prometheus-client is not installed")
                return 77
        families = list(text_string_to_metric_families(open(argv[2], encoding="utf-8").read()))
        print(f"{len(families)} families, {sum(len(f.samples) for f in families)} samples")
        return 0 if families else 1
    samples = parse(argv[2])
    if cmd == "value":
        want = dict(a.split("=", 1) for a in argv[4:])
        got = select(samples, argv[3], want)
        if len(got) != 1:
            print(f"{len(got)} series match")
            return 1
        print(f"{got[0][2]:.17g}")
        return 0
    if cmd == "keys":
        print("\n".join(sorted({s[1].get("key", "") for s in samples if s[0] == argv[3]})))
        return 0
    bad = check_heaps(samples, argv[3]) if cmd == "heaps" else check_threads(samples, argv[3])
    print("; ".join(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
