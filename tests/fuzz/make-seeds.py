#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
#
# Writes the generated seeds of tests/fuzz/corpus/NAME/ (files named
# gen-*): small valid inputs for every target, in the layouts its header
# comment describes (doc/protocol.md for the chunks). Run it from anywhere
# after changing a layout; regression seeds (named after what they caught)
# are added by hand and left alone.
import base64
import json
import os
import struct
import sys
import zlib

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(TOP, "tests", "fuzz", "corpus")


def u1(v): return struct.pack(">B", v)
def u2(v): return struct.pack(">H", v)
def u4(v): return struct.pack(">I", v)
def i4(v): return struct.pack(">i", v)
def u8(v): return struct.pack(">Q", v)
def str16(s): return s.encode("utf-16-be")
def lstr(s): return u4(len(s.encode("utf-16-be")) // 2) + str16(s)
def chunk(t, data): return t.encode() + u4(len(data)) + data
def chunk_crc(t, data): return u4(len(data)) + t + data + u4(zlib.crc32(t + data) & 0xffffffff)


def jdwp_cmd(pid, cmdset, cmd, data):
    return u4(11 + len(data)) + u4(pid) + u1(0) + u1(cmdset) + u1(cmd) + data


def jdwp_reply(pid, err, data):
    return u4(11 + len(data)) + u4(pid) + u1(0x80) + u2(err) + data


def unhex(path):
    out = bytearray()
    for line in open(path):
        line = line.split("#", 1)[0]
        for tok in line.replace("|", " ").replace(":", " ").replace("-", " ").split():
            out += bytes.fromhex(tok)
    return bytes(out)


def helo_payload(tails=True):
    p = u4(1) + u4(4242) + u4(len("Dalvik v1")) + u4(len("com.example")) + str16("Dalvik v1") + str16("com.example")
    if tails:
        p += i4(0) + lstr("arm64-v8a") + lstr("-Xcheck:jni") + u1(1) + lstr("com.example") + u4(3)
    return p


def feat_payload():
    names = ["hprof-heap-dump", "method-trace-profiling", "view-hierarchy"]
    return u4(len(names)) + b"".join(lstr(n) for n in names)


def fail_payload():
    return u4(2) + u4(len("not supported")) + str16("not supported")


def thst_real(n=3):
    p = u1(4) + u1(18) + u2(n)
    for i in range(n):
        p += u4(i + 1) + u1([1, 2, 5][i % 3]) + u4(1000 + i) + u4(50 * i) + u4(7 * i) + u1(i & 1)
    return p


def thst_draft():
    return u4(2) + u4(1) + u1(1) + u1(0) + u4(7) + u1(3) + u1(1)


def stkl_payload():
    frames = [("java.lang.Thread", "sleep", "Thread.java", -2),
              ("com.example.Main", "run", "Main.java", 42),
              ("com.example.Gen", "<init>", "", -1)]
    p = u4(0) + u4(1) + u4(len(frames))
    for c, m, f, line in frames:
        p += lstr(c) + lstr(m) + lstr(f) + i4(line)
    return p


def real_payload(entries=True):
    classes = ["Ljava/lang/String;", "[I", "Lcom/example/Foo;"]
    methods = ["<init>", "run"]
    files = ["String.java", "Foo.java"]
    body = b""
    if entries:
        body += u4(24) + u2(1) + u2(0) + u1(2) + (u2(0) + u2(0) + u2(0) + struct.pack(">h", 10)) + (u2(2) + u2(1) + u2(1) + struct.pack(">h", -2))
        body += u4(64) + u2(2) + u2(1) + u1(0)
        body += u4(8) + u2(1) + u2(2) + u1(1) + (u2(2) + u2(1) + u2(1) + struct.pack(">h", -1))
    count = 3 if entries else 0
    str_off = 15 + len(body)
    hdr = u1(15) + u1(9) + u1(8) + u2(count) + u4(str_off) + u2(len(classes)) + u2(len(methods)) + u2(len(files))
    strings = b"".join(lstr(s) for s in classes + methods + files)
    return hdr + body + strings


def real_long_fields():
    # longer header, entries and frames than the known fields (forward compatibility)
    classes = ["LA;"]
    body = u4(16) + u2(1) + u2(0) + u1(1) + b"\xee\xee" + (u2(0) + u2(0) + u2(0) + struct.pack(">h", 3) + b"\xff")
    hdr_len = 17
    str_off = hdr_len + len(body)
    hdr = u1(hdr_len) + u1(11) + u1(9) + u2(1) + u4(str_off) + u2(1) + u2(1) + u2(1) + b"\0\0"
    return hdr + body + lstr("LA;") + lstr("m") + lstr("A.java")


def hpif_payload(n=2):
    p = u4(n)
    for i in range(n):
        p += u4(1 + i) + u8(1700000000000 + i) + u1(3) + u4(64 << 20) + u4(8 << 20) + u4(5 << 20) + u4(12345 + i)
    return p


ST = lambda solidity, kind: (kind << 3) | solidity


def long_runs(n, shift=0):
    """n runs past the decoder's eight-pair windows: objects, arrays, adjacent
    free runs, and partial sequences starting at every place of a window."""
    runs, i = [], 0
    while len(runs) < n:
        k = (i + shift) % 11
        if k == 3:
            runs += [(0x80 | ST(1, 2 + i % 4), 255)] * (1 + i % 3) + [(ST(1, 2 + i % 4), i % 200)]
        elif k in (5, 6):
            runs.append((ST(0, i % 8), (i * 13) % 256))
        else:
            runs.append((ST(1, i % 6), (i * 7) % 40))
        i += 1
    return runs[:n - 1] + [(runs[n - 1][0] & 0x7f, runs[n - 1][1])]


def seg_piece(runs, unit=8, heap=1, start=0x12c00000, offset=0):
    units = sum(r[1] + 1 for r in runs)
    return u4(heap) + u1(unit) + u4(start) + u4(offset) + u4(units) + b"".join(u1(s) + u1(n) for s, n in runs)


MAPS = (b"12c00000-12e00000 rw-p 00000000 00:00 0   [anon:dalvik-main space]\n"
        b"70000000-70100000 r-xp 00010000 fd:01 1234   /system/lib64/libc.so\n"
        b"70100000-70180000 r-xp 00000000 fd:01 1235   /system/lib64/libart.so\n"
        b"7fff0000-7fff8000 rw-p 00000000 00:00 0   [stack]\n")


def nhgt_v1():
    bt = 4
    recs = b""
    for size, count, frames in [(32, 2, [0x70000100, 0x70100020, 0, 0]), (0x80000010, 1, [0x70000200, 0, 0, 0])]:
        recs += struct.pack("<II", size, count) + b"".join(struct.pack("<I", f) for f in frames)
    info = 8 + 4 * bt
    return struct.pack("<IIIII", len(MAPS), len(recs), info, 4096, bt) + MAPS + recs


def nhgt_v2():
    bt = 3
    recs = b""
    for size, count, frames in [(64, 3, [0x70000100, 0x70100020, 0x7fff0010]), (16, 1, [0x70000200, 0, 0])]:
        recs += struct.pack("<QQ", size, count) + b"".join(struct.pack("<Q", f) for f in frames)
    info = 16 + 8 * bt
    return struct.pack("<IHH", 0x812345DD, 2, 8) + struct.pack("<QQQQQ", len(MAPS), len(recs), info, 8192, bt) + MAPS + recs


def nhgt_off():
    return struct.pack("<IIIII", len(MAPS), 0, 0, 123456, 0) + MAPS


def varint(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def pb_field(num, wt, payload):
    key = varint((num << 3) | wt)
    if wt == 0:
        return key + varint(payload)
    return key + varint(len(payload)) + payload


def app_entry(pid, debuggable, arch, name, profileable=False):
    e = pb_field(1, 0, pid) + pb_field(2, 0, 1 if debuggable else 0)
    if profileable:
        e += pb_field(3, 0, 1)
    if arch:
        e += pb_field(4, 2, arch.encode())
    if name:
        e += pb_field(6, 2, name.encode())
    return pb_field(1, 2, e)


def hex4(s):
    return ("%04x" % len(s)).encode() + s


def view_table():
    return {"name": "threads", "vm": "127.0.0.1:8000", "owner": "threads", "title": "Threads",
            "kind": "table", "version": 3,
            "columns": [{"name": "id", "type": "int", "unit": ""},
                        {"name": "name", "type": "string", "unit": ""},
                        {"name": "cpu", "type": "double", "unit": "%"},
                        {"name": "daemon", "type": "bool", "unit": ""}],
            "rows": [[1, "main", 12.5, False], [2, "Signal Catcher\u00e9", 0.0, True], [3, None, None, None]]}


def view_record():
    return {"name": "vminfo", "vm": "4242", "owner": "vminfo", "title": "VM", "kind": "record", "version": 1,
            "fields": [{"key": "app", "type": "string", "value": "com.example"},
                       {"key": "pid", "type": "int", "value": 4242},
                       {"key": "heap", "type": "int", "value": 8388608, "unit": "bytes"}]}


def view_blob():
    return {"name": "heap-bitmap", "vm": "4242", "owner": "heap", "title": "Heap bitmap", "kind": "blob",
            "version": 2, "media_type": "image/png", "size": 4, "data_base64": "iVBORw=="}


def view_json_blob():
    """A JSON blob (core/views/json_blob.h): its data is a document the
    renderer prints as an outline."""
    doc = {"schema": 1, "window": "w/x@1", "views": 2, "properties": True,
           "root": {"class": "a.Root", "hash": "1", "id": "NO_ID",
                    "bounds": {"left": 0, "top": 0, "right": 10, "bottom": 20},
                    "properties": {"mID": "NO_ID", "x": 1.5, "ok": False},
                    "children": [{"class": "b\u001bKid", "hash": "2", "id": None, "bounds": None,
                                  "properties": {}, "children": []}]}}
    data = json.dumps(doc).encode()
    return {"name": "ui", "vm": None, "owner": "viewdebug", "title": "View tree", "kind": "blob",
            "version": 1, "media_type": "application/json", "size": len(data),
            "data_base64": base64.b64encode(data).decode()}


def elf_plugin(machine=62, relative=8, rela=True, magic=0x44444D50, shstrip=False):
    """A minimal plugin file for core/pluginhost/elfdesc.c: little-endian
    ELF64 ET_DYN, one PT_LOAD over the whole file (addresses = offsets),
    .dynstr, .dynsym (ddm_plugin_descriptor), .rela.dyn (RELATIVE
    relocations of the descriptor's name, version, license, summary and
    init) or none (the values stored in place), the descriptor and its
    strings. Not loadable; just what the reader reads."""
    le = lambda fmt, *v: struct.pack("<" + fmt, *v)
    dynstr = b"\0ddm_plugin_descriptor\0"
    strs, addrs = b"", []
    for t in (b"seed", b"1.0", b"Apache-2.0", b"a seed plugin"):
        addrs.append(208 + len(strs))
        strs += t + b"\0"
    addrs.append(0x100)  # init: any address, never read
    DESC, RELA = 256, 320
    stored = addrs if not rela else [0] * 5
    desc = le("IHHI", magic, 1, 2, 64) + b"\0" * 4 + b"".join(le("Q", a) for a in stored) + le("Q", 0)
    relas = b"".join(le("QQq", DESC + 16 + 8 * k, relative, a) for k, a in enumerate(addrs)) if rela else b""
    sym = b"\0" * 24 + le("IBBHQQ", 1, 0x11, 0, 4, DESC, 64)
    body = bytearray(RELA + len(relas))
    body[128:128 + len(dynstr)] = dynstr
    body[160:160 + len(sym)] = sym
    body[208:208 + len(strs)] = strs
    body[DESC:DESC + len(desc)] = desc
    body[RELA:RELA + len(relas)] = relas
    shoff = (len(body) + 7) & ~7
    body += b"\0" * (shoff - len(body))

    def sh(typ, off, size, link=0, entsize=0):
        return le("IIQQQQIIQQ", 0, typ, 2, off, off, size, link, 0, 8, entsize)
    shdrs = sh(0, 0, 0) + sh(3, 128, len(dynstr)) + sh(11, 160, 48, 1, 24)
    shdrs += sh(4, RELA, len(relas), 2, 24) if rela else sh(1, RELA, 0)
    shdrs += sh(1, DESC, 64)
    total = shoff + len(shdrs)
    ident = b"\x7fELF" + bytes([2, 1, 1]) + b"\0" * 9
    eh = ident + le("HHIQQQIHHHHHH", 3, machine, 1, 0, 64, 0 if shstrip else shoff, 0, 64, 56, 1, 64, 5, 0)
    ph = le("IIQQQQQQ", 1, 5, 0, 0, 0, total, total, 0x1000)
    body[0:64] = eh
    body[64:120] = ph
    return bytes(body) + shdrs


def seeds():
    s = {}
    stream = unhex(os.path.join(TOP, "tests", "fixtures", "jdwp-vm-stream.hex"))
    s["jdwp"] = {
        "gen-vm-stream": u1(1 | 2) + u1(7) + stream,                   # handshake, space/commit
        "gen-vm-stream-feed": u1(1) + u1(200) + stream,                 # handshake, feed()
        "gen-vm-stream-smallcap": u1(1 | (5 << 2)) + u1(3) + stream,    # cap 411
        "gen-vm-stream-budget": u1(1 | 2) + u1(0x40 | 7) + stream,      # through a budget's scratch
        "gen-packets": u1(2) + u1(1) + jdwp_cmd(0x40000000, 0xC7, 1, chunk("HELO", u4(1)))
        + jdwp_reply(0x40000000, 0, chunk("HELO", helo_payload())) + jdwp_reply(5, 99, b""),
        "gen-race": u1(1) + u1(9) + jdwp_cmd(0x80000001, 0xC7, 1, chunk("APNM", lstr("a"))) + b"JDWP-Handshake"
        + jdwp_cmd(1, 1, 1, b""),
    }
    s["ddm"] = {
        "gen-helo": chunk("HELO", helo_payload()),
        "gen-feat-fail": chunk("FEAT", feat_payload()) + chunk("FAIL", fail_payload()),
        "gen-zlib": chunk("ZLIB", b"THST" + u4(len(thst_real())) + zlib.compress(thst_real())),
        "gen-trailing": chunk("WAIT", u1(0)) + b"\x00\x01",
    }
    raw = zlib.compressobj(9, zlib.DEFLATED, -15)
    rawdata = raw.compress(stkl_payload()) + raw.flush()
    s["zlib"] = {
        "gen-zlib": u1(6) + b"THST" + u4(len(thst_real())) + zlib.compress(thst_real()),
        "gen-raw": u1(8) + b"STKL" + u4(len(stkl_payload())) + rawdata,
        "gen-empty": u1(0) + b"HPIF" + u4(0) + zlib.compress(b""),
        "gen-bomb": u1(2) + b"HPSG" + u4(1 << 20) + zlib.compress(b"\0" * (1 << 16)),
    }
    s["helo"] = {
        "gen-helo-full": u1(0) + helo_payload(),
        "gen-helo-short": u1(0) + helo_payload(False),
        "gen-feat": u1(1) + feat_payload(),
        "gen-fail": u1(2) + fail_payload(),
    }
    devs = b"emulator-5554\tdevice\nR58M123\tunauthorized\n"
    s["adb"] = {
        "gen-devices": u1(5) + b"OKAY" + hex4(devs) + hex4(b"emulator-5554\tdevice\n") + hex4(b""),
        "gen-pids": u1(9) + b"OKAY" + hex4(b"1234\n5678\n") + hex4(b"5678\n91011\n1234\n"),
        "gen-fail": u1(1) + b"FAIL" + hex4(b"device offline (no transport)"),
    }
    s["adb-app"] = {
        "gen-two": app_entry(1234, True, "arm64", "com.example") + app_entry(99, False, "x86_64", "system_server", True),
        "gen-old-adbd": app_entry(4321, True, None, None),
        "gen-empty": b"",
    }
    reqs = [{"op": "vms"}, {"op": "view", "name": "threads", "vm": "1234", "blobs": True},
            {"op": "command", "argv": ["gc", "1234"], "cwd": "/tmp"}, {"op": "watch", "name": None},
            {"op": "scan", "spec": "local,adb"}, {"op": "select", "spec": "com.example"},
            {"op": "views"}, {"op": "plugins"}, {"op": "commands"}, {"op": "version"}]
    lines = b"".join(json.dumps(r).encode() + b"\n" for r in reqs)
    s["ctl"] = {
        "gen-requests": u1(200) + u1(17) + lines,
        "gen-small-cap": u1(3) + u1(5) + b'{"op":"vms"}\r\n\n{"op":"view","name":"x"}\n' + b"x" * 200 + b"\n",
        "gen-deep": u1(255) + u1(1) + b'{"op":"vms","x":' + b"[" * 70 + b"]" * 70 + b"}\n",
    }
    s["view-json"] = {
        "gen-table": u1(1) + json.dumps({"ok": True, "view": view_table()}).encode(),
        "gen-table-narrow": u1(1 | (12 << 1)) + json.dumps({"ok": True, "view": view_table()}).encode(),
        "gen-record": u1(0) + json.dumps({"ok": True, "view": view_record()}).encode(),
        "gen-blob": u1(1) + json.dumps({"ok": True, "view": view_blob()}).encode(),
        "gen-json-blob": u1(1 | (30 << 1)) + json.dumps({"ok": True, "view": view_json_blob()}).encode(),
        "gen-error": u1(0) + json.dumps({"ok": False, "error": "no such view", "code": 3, "kind": "not-found"}).encode(),
    }
    def jq_str(b): return u1(len(b)) + b
    jq_cols = (u1(5) + u1(0) + jq_str(b"key") + u1(1) + jq_str(b"pid") + u1(0) + jq_str(b"app \"x\"")
               + u1(2) + jq_str(b"CPU %") + u1(3) + jq_str(b"debug port"))
    jq_row = (u1(3) + u1(1) + u1(1) + b"\x00\x01\x02\x03" + u1(1) + jq_str("é\t\x1f\x7f\"\\".encode())
              + u1(1) + b"\x00\x00\x30\x39" + u1(6) + u1(1))
    jq_recs = (u1(2) + u1(0) + u1(1) + u1(3) + jq_str(b"threads_count") + u1(1) + u1(1) + b"\x00\x00\x00\x0e"
               + jq_str(b"pid") + u1(1) + u1(1) + b"\x00\x00\x00\x01"
               + jq_str(b"heap %") + u1(2) + u1(1) + b"\x00\x01\x00\x00" + u1(3)
               + u1(0x81) + jq_str(b"vm\\1") + u1(1) + jq_str(b"x") + u1(0) + u1(3) + u1(1))
    def dbl(d): return struct.pack("=d", d)  # the machine's byte order, as the target reads it
    s["jq-text"] = {
        "gen-vms": dbl(0.5) + jq_cols + u1(2) + jq_row + jq_row + jq_recs,
        "gen-no-columns": dbl(-0.0) + u1(0) + u1(3) + jq_recs,
        "gen-nan": dbl(float("nan")) + u1(1) + u1(2) + jq_str(b"load") + u1(1) + u1(2) + u1(0),
        "gen-exponent": dbl(3e17) + u1(0) + u1(0) + u1(0),
        "gen-max": dbl(1.7976931348623157e308) + u1(0) + u1(0) + u1(0),
        "gen-denormal": dbl(5e-324) + u1(0) + u1(0) + u1(0),
    }
    good = seg_piece([(ST(0, 0), 3), (ST(1, 0), 0), (0x80 | ST(1, 2), 255), (ST(1, 2), 43), (ST(1, 1), 1)])
    s["segdecode"] = {
        "gen-piece": good,
        "gen-native": seg_piece([(ST(1, 7), 9), (ST(0, 0), 9)], unit=16, heap=0),
        "gen-empty-runs": seg_piece([], unit=8),
        "gen-long": seg_piece(long_runs(300)),
        # the largest free run is the last pair of the first eight-pair window
        "gen-free-at-7": seg_piece([(ST(1, 0), 3)] * 7 + [(ST(0, 0), 255)] + [(ST(1, 1), 9)] * 9),
    }
    ops = b""
    ops += u1(0 | (1 << 2))                      # HPST heap 1
    ops += u1(1) + u1(len(good)) + good           # HPSG
    p2 = seg_piece([(ST(1, 0), 7)], offset=0x1000)
    ops += u1(2) + u1(len(p2)) + p2               # HPSO
    ops += u1(3 | (1 << 2))                      # HPEN heap 1
    ops += u1(0 | (2 << 2)) + u1(1) + u1(len(p2)) + p2 + u1(3 | (2 << 2))
    s["segcollect"] = {
        "gen-update": u1(6) + ops,
        "gen-small-cap": u1(0) + ops,
        "gen-implicit": u1(8) + u1(1) + u1(len(good)) + good + u1(3 | (1 << 2)) + u1(3 | (1 << 2)),
        "gen-long": u1(8) + u1(0 | (1 << 2)) + b"".join(
            u1(1) + u1(len(p)) + p for p in (seg_piece(long_runs(110, k), offset=k * 0x10000)
                                               for k in range(3))) + u1(3 | (1 << 2)),
    }
    s["alloc-real"] = {
        "gen-real": real_payload(),
        "gen-empty": real_payload(False),
        "gen-long-fields": real_long_fields(),
    }
    s["hpif"] = {"gen-two": hpif_payload(2), "gen-zero": hpif_payload(0)}
    s["nhgt"] = {"gen-v1": nhgt_v1(), "gen-v2": nhgt_v2(), "gen-off": nhgt_off()}
    s["nhmaps"] = {"gen-maps": MAPS, "gen-no-newline": MAPS.rstrip(b"\n")}
    s["thst"] = {"gen-real": thst_real(), "gen-draft": thst_draft(), "gen-empty": u1(4) + u1(18) + u2(0)}
    s["stkl"] = {"gen-three": stkl_payload(), "gen-empty": u4(0) + u4(1) + u4(0)}
    def jstr(t): return u4(len(t.encode())) + t.encode()
    def rec(op, data): return u1(op) + u2(len(data)) + data
    def name_chunk(tid, name): return u4(tid) + lstr(name)
    s["thread-chunks"] = {
        "gen-mixed": rec(0, name_chunk(1, "main")) + rec(0, name_chunk(2, "worker")) + rec(3, thst_real())
        + rec(4, b"") + rec(1, name_chunk(2, "renamed")) + rec(2, u4(1)) + rec(3, thst_real(2)) + rec(4, b""),
        "gen-desc": rec(3, u1(4) + u1(18) + u2(100) + b"".join(
            u4(100 - i) + u1(1) + u4(i) + u4(i) + u4(i) + u1(0) for i in range(100)))
        + rec(2, u4(50)) + rec(2, u4(7)) + rec(0, name_chunk(200, "late")) + rec(4, b""),
        "gen-draft": rec(3, thst_draft()) + rec(2, u4(7)) + rec(4, b""),
    }
    s["jvm"] = {
        "gen-version": u1(0) + u1(8) + jstr("Java Debug Wire Protocol (Reference Implementation)")
        + i4(17) + i4(0) + jstr("17.0.9") + jstr("OpenJDK 64-Bit Server VM"),
        "gen-version-dalvik": u1(0) + u1(8) + jstr("Android DDM") + i4(1) + i4(6) + jstr("1.6.0") + jstr("Dalvik"),
        "gen-idsizes": u1(1) + u1(8) + u4(8) * 5,
        "gen-all-threads": u1(2) + u1(8) + u4(2) + u8(1) + u8(2),
        "gen-string": u1(3) + u1(8) + jstr("Ljava/lang/Thread;"),
        "gen-status": u1(4) + u1(8) + u4(1) + u4(0),
        "gen-caps": u1(5) + u1(8) + bytes([1, 0, 1, 1, 0, 1, 0]),
        "gen-caps-new": u1(6) + u1(8) + bytes(i & 1 for i in range(32)),
        "gen-classpaths": u1(7) + u1(8) + jstr("/app") + u4(2) + jstr("a.jar") + jstr("b.jar") + u4(0),
        "gen-frames": u1(8) + u1(8) + u4(1) + u8(0x10) + u1(1) + u8(0x20) + u8(0x30) + u8(4),
        "gen-methods": u1(9) + u1(8) + u4(1) + u8(1) + jstr("run") + jstr("()V") + u4(1),
        "gen-lines": u1(10) + u1(8) + u8(0) + u8(10) + u4(2) + u8(0) + u4(41) + u8(5) + u4(42),
    }
    s["vminfo"] = {
        "gen-apnm": u1(0) + lstr("com.example") + u4(10) + lstr("com.example.pkg"),
        "gen-apnm-old": u1(0) + lstr("com.example"),
        "gen-wait": u1(1) + u1(0),
        "gen-stag": u1(2) + u4(3),
    }
    vulw_names = ["com.example.app/com.example.app.MainActivity/android.view.ViewRootImpl@5d2c6f1",
                  "Toast/android.view.ViewRootImpl@1b3a"]
    s["vulw"] = {
        "gen-two": u4(2) + b"".join(lstr(n) for n in vulw_names),
        "gen-none": u4(0),
        "gen-huge-count": u4(0xFFFFFFFF) + lstr("x"),
    }
    tree = ("com.android.internal.policy.DecorView@a1 layout:mLeft=1,0 layout:mTop=1,0 "
            "layout:mRight=4,1080 layout:mBottom=4,2340 mID=5,NO_ID \n"
            " android.widget.LinearLayout@b2 mID=10,id/content \n"
            "  android.widget.TextView@c3 mID=8,id/title text:mText=5,Hello \n"
            "  android.widget.Button@d4 \n"
            " android.view.View@e5 \n"
            "DONE.\n").encode()
    theme = b"android:attr/colorPrimary\n#ff6200ee\nandroid:attr/textColor\nnull\nDONE.\n"
    s["vurt"] = {
        "gen-tree": u1(0) + tree,
        "gen-tree-jump": u1(0) + b"a.B@1 \n   c.D@2 \nDONE.\n",
        "gen-theme": u1(1) + theme,
    }
    png = (b"\x89PNG\r\n\x1a\n" + chunk_crc(b"IHDR", struct.pack(">IIBBBBB", 3, 2, 8, 6, 0, 0, 0))
           + chunk_crc(b"IDAT", zlib.compress(b"".join(b"\x00" + b"".join(bytes([40 * x, 80 * y, 120, 255])
                                                                    for x in range(3)) for y in range(2))))
           + chunk_crc(b"IEND", b""))
    s["vupng"] = {
        "gen-3x2": png,
        "gen-bad-crc": png[:29] + bytes([png[29] ^ 0xff]) + png[30:],
        "gen-truncated": png[:20],
        "gen-gif": b"GIF89a\x01\x00\x01\x00",
    }
    s["elfdesc"] = {
        "gen-rela": elf_plugin(),
        "gen-stored": elf_plugin(rela=False),
        "gen-aarch64": elf_plugin(machine=183, relative=1027),
        "gen-bad-magic": elf_plugin(magic=0xDEADBEEF),
        "gen-no-sections": elf_plugin(shstrip=True),
    }
    return s


def main():
    for name, files in seeds().items():
        d = os.path.join(CORPUS, name)
        os.makedirs(d, exist_ok=True)
        for old in os.listdir(d):
            if old.startswith("gen-"):
                os.unlink(os.path.join(d, old))
        for fname, data in files.items():
            with open(os.path.join(d, fname), "wb") as f:
                f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
