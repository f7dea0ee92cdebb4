#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Query ddmon's JSON output for the integration tests (python3's json only).
#   viewq.py rows FILE VIEW [VMKEY]   one JSON object per table row (column name -> value)
#   viewq.py fields FILE VIEW [VMKEY] the record's fields as one JSON object
#   viewq.py names FILE               "VMKEY VIEW" per view in a snapshot
# FILE is `ddmon snapshot --json` output ({"vms":..,"views":[..]}), or a single
# view object (`ddmon view NAME --json` / `ddmon vms --json`), or a list of views.
import json
import sys


def views_of(doc):
    if isinstance(doc, list):
        for d in doc:
            yield from views_of(d)
    elif isinstance(doc, dict):
        if "kind" in doc and "name" in doc:
            yield doc
        for key in ("vms", "plugins", "views", "result", "view"):
            if key in doc:
                yield from views_of(doc[key])


def pick(doc, name, vm):
    seen = set()
    for v in views_of(doc):
        ident = (v.get("vm"), v.get("name"), v.get("version"))
        if ident in seen:
            continue
        seen.add(ident)
        if v.get("name") == name and (vm is None or str(v.get("vm")) == vm):
            yield v


def main():
    op, path, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(path) as f:
        doc = json.load(f)
    if op == "names":
        for v in views_of(doc):
            print(v.get("vm"), v.get("name"))
        return
    name = rest[0]
    vm = rest[1] if len(rest) > 1 else None
    for v in pick(doc, name, vm):
        if op == "rows":
            cols = [c["name"] for c in v.get("columns", [])]
            for r in v.get("rows", []):
                row = dict(zip(cols, r))
                row["_vm"] = v.get("vm")
                print(json.dumps(row))
        elif op == "fields":
            print(json.dumps({f["key"]: f["value"] for f in v.get("fields", [])}))


if __name__ == "__main__":
    main()
