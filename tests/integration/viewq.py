#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Query ddmon's JSON output (doc/json.md) for the integration tests (python3's json only).
#   viewq.py rows FILE VIEW [VMKEY]   one JSON object per table row (snake_case key -> value)
#   viewq.py fields FILE VIEW [VMKEY] the record's fields as one JSON object
#   viewq.py names FILE               "VMKEY VIEW" per view in a snapshot
# FILE is `ddmon snapshot --json` output ({"vms":{KEY:{..,"views":{NAME:VIEW}}},
# "global":{NAME:VIEW}}), a single view (`ddmon view NAME --vm K --json`,
# `ddmon vms --json`), `ddmon view NAME --json` (grouped as the snapshot),
# or a command's answer ({"result":VIEW}).
import json
import sys


def views_of(doc):
    """Every view in @doc: an object with "kind" and "name"; nothing inside a view."""
    if isinstance(doc, list):
        for d in doc:
            yield from views_of(d)
    elif isinstance(doc, dict):
        if "kind" in doc and "name" in doc:
            yield doc
            return
        for value in doc.values():
            if isinstance(value, (dict, list)):
                yield from views_of(value)


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
            for r in v.get("rows", []):
                print(json.dumps(dict(r, _vm=v.get("vm"))))
        elif op == "fields":
            print(json.dumps(v.get("fields", {})))

if __name__ == "__main__":
    main()
