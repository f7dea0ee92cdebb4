#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compare ddmon's plugin views with what ddmon-simvm says it sent.

  compare_truth.py TRUTH.json VIEWS.json...
VIEWS files hold `ddmon view NAME --json` outputs (any shape viewq.py reads).
Prints one "ok"/"FAIL" line per check; exit 1 if any check failed.
"""
import json
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from viewq import views_of  # noqa: E402

KIND = {"free": None, "data object": "object", "class object": "class", "1-byte array": "array1",
        "2-byte array": "array2", "4-byte array": "array4", "8-byte array": "array8",
        "unknown object": "unknown", "native": "native"}
failures = 0


def check(cond, what):
    global failures
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures += 1


def rows(v):
    return v["rows"]  # objects keyed by snake_case column name (doc/json.md)


def kind_key(name):
    for prefix, key in KIND.items():
        if name.startswith(prefix):
            return prefix, key
    return None, None


def main():
    truth = json.load(open(sys.argv[1]))
    views = {}
    for path in sys.argv[2:]:
        for v in views_of(json.load(open(path))):
            views[(v.get("vm"), v["name"])] = v
    key_of = {}
    for (vm, name), v in views.items():
        if name == "vminfo":
            key_of[v["fields"]["pid"]] = vm
    checked_vms = 0
    for svm in truth["vms"]:
        if not svm.get("ddm") or not svm.get("connected"):
            continue
        pid = svm["pid"]
        vm = key_of.get(pid)
        check(vm is not None, f"pid {pid}: ddmon has a vminfo view")
        if vm is None:
            continue
        checked_vms += 1
        f = views[(vm, "vminfo")]["fields"]
        check(f["app"] == svm["app"], f"pid {pid}: app {f['app']!r} == {svm['app']!r}")
        check(f.get("abi") == svm.get("abi"), f"pid {pid}: abi")
        for heap in svm["heaps"]:
            hid = heap["id"]
            sent = heap.get("hpif_sent")
            summ = [r for r in rows(views[(vm, "heap.summary")]) if r["heap"] == hid] if (vm, "heap.summary") in views else []
            if sent:
                check(len(summ) == 1, f"pid {pid} heap {hid}: one summary row")
                if summ:
                    r = summ[0]
                    check((r["size"], r["allocated"], r["objects"], r["max"]) ==
                          (sent["size"], sent["allocated_bytes"], sent["allocated_objects"], sent["max"]),
                          f"pid {pid} heap {hid}: summary size/allocated/objects/max match HPIF sent")
            seg = heap.get("segments_sent")
            if seg and (vm, "heap.segments") in views:
                got = {}
                for r in rows(views[(vm, "heap.segments")]):
                    if r["heap"] != hid:
                        continue
                    prefix, key = kind_key(r["kind"])
                    got[prefix if key is None else key] = (r["count"], r["bytes"])
                check(got.get("free") == (seg["free_count"], seg["free_bytes"]),
                      f"pid {pid} heap {hid}: free runs/bytes {got.get('free')} == {(seg['free_count'], seg['free_bytes'])}")
                for k, want in seg["kinds"].items():
                    have = got.get(k, (0, 0))
                    check(have == (want["count"], want["bytes"]),
                          f"pid {pid} heap {hid}: {k} count/bytes {have} == {(want['count'], want['bytes'])}")
                frag = [r for r in rows(views[(vm, "heap.fragmentation")]) if r["heap"] == hid]
                check(bool(frag) and frag[0]["largest_free"] == seg["largest_free"],
                      f"pid {pid} heap {hid}: largest free run {frag[0]['largest_free'] if frag else None} == {seg['largest_free']}")
        nseg = (svm.get("native") or {}).get("segments_sent")
        if nseg and (vm, "nativeheap.segments") in views:
            r = rows(views[(vm, "nativeheap.segments")])[0]
            check((r["free"], r["free_count"], r["native"], r["native_count"], r["largest_free"]) ==
                  (nseg["free_bytes"], nseg["free_count"], nseg["kinds"]["native"]["bytes"],
                   nseg["kinds"]["native"]["count"], nseg["largest_free"]),
                  f"pid {pid}: native segments match what was sent")
        nhgt = (svm.get("native") or {}).get("nhgt_sent")
        if nhgt and (vm, "nativeheap.summary") in views:
            f = views[(vm, "nativeheap.summary")]["fields"]
            check(f.get("total_memory") == nhgt["total_memory"],
                  f"pid {pid}: native total memory {f.get('total_memory')} == {nhgt['total_memory']}")
        recent = svm.get("thst_recent") or ([svm["thst_sent"]] if svm.get("thst_sent") else [])
        if recent and (vm, "threads") in views:
            # The view holds whichever THST reply ddmon got last; simvm keeps
            # its last few, so match the view against one of them exactly.
            have = {r["id"]: r for r in rows(views[(vm, "threads")])}
            names = {t["id"]: t["name"] for t in svm["threads"]}

            def mismatches(thst):
                bad = []
                if set(have) != {t["id"] for t in thst}:
                    bad.append(f"thread ids {sorted(have)} == {sorted(t['id'] for t in thst)}")
                for t in thst:
                    r = have.get(t["id"])
                    if r is None:
                        continue
                    if (r["tid"], r["daemon"], r["name"]) != (t["tid"], t["daemon"], names.get(t["id"])):
                        bad.append(f"thread {t['id']}: tid/daemon/name {(r['tid'], r['daemon'], r['name'])}")
                    if (r["utime"], r["stime"]) != (t["utime"] * 10, t["stime"] * 10):
                        bad.append(f"thread {t['id']}: utime/stime {r['utime']}/{r['stime']} ms "
                                   f"== ticks*10 ({t['utime'] * 10}/{t['stime'] * 10})")
                return bad
            tried = [mismatches(thst) for thst in recent]
            best = min(tried, key=len)
            check(not best, f"pid {pid}: thread table equals one of the last {len(recent)} THST sent"
                  + ("" if not best else "; closest differs in: " + "; ".join(best[:4])))
    check(checked_vms > 0, f"{checked_vms} VMs compared")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
