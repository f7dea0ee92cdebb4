/* SPDX-License-Identifier: Apache-2.0
 *
 * jvm plugin: decoders of the standard JDWP replies it asks for (pure; the
 * layouts are the JDWP specification's). The rule of every ddmon decoder:
 * a length from the wire is checked against the bytes left before
 * anything is allocated for it, bytes after the known fields are ignored.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddmon/bytes.h>

#include "jvm.h"

/* A JDWP string: u4 byte count, then (modified) UTF-8. NULL if short. */
static char *read_string(ddm_reader *r)
{
    uint32_t n = ddm_read_u4(r);
    const uint8_t *p;
    char *s;
    if (!ddm_reader_ok(r) || n > ddm_reader_remaining(r))
        return NULL;
    p = ddm_read_bytes(r, n);
    s = malloc((size_t)n + 1);
    if (!p || !s) {
        free(s);
        return NULL;
    }
    memcpy(s, p, n);
    s[n] = '\0';
    for (uint32_t i = 0; i < n; i++) /* a NUL inside would cut the text short */
        if (s[i] == '\0')
            s[i] = '?';
    return s;
}

static uint64_t read_id(ddm_reader *r, uint32_t size)
{
    uint64_t v = 0;
    for (uint32_t i = 0; i < size; i++)
        v = v << 8 | ddm_read_u1(r);
    return v;
}

void jvm_put_id(uint8_t *p, uint64_t v, uint32_t size)
{
    for (uint32_t i = 0; i < size; i++)
        p[i] = (uint8_t)(v >> (8 * (size - 1 - i)));
}

int jvm_parse_idsizes(const uint8_t *d, size_t n, jvm_idsizes *out)
{
    ddm_reader r;
    int32_t v[5];
    ddm_reader_init(&r, d, n);
    for (int i = 0; i < 5; i++)
        v[i] = ddm_read_i4(&r);
    if (!ddm_reader_ok(&r))
        return -EBADMSG;
    for (int i = 0; i < 5; i++)
        if (v[i] < 1 || v[i] > 8)
            return -EBADMSG;
    out->field = (uint32_t)v[0];
    out->method = (uint32_t)v[1];
    out->object = (uint32_t)v[2];
    out->reftype = (uint32_t)v[3];
    out->frame = (uint32_t)v[4];
    return 0;
}

int jvm_parse_all_threads(const uint8_t *d, size_t n, uint32_t idsize, size_t max, uint64_t **ids,
                          size_t *count)
{
    ddm_reader r;
    int32_t c;
    size_t keep;
    ddm_reader_init(&r, d, n);
    c = ddm_read_i4(&r);
    *ids = NULL;
    *count = 0;
    if (!ddm_reader_ok(&r) || c < 0 || idsize < 1 || idsize > 8 ||
        (uint64_t)c * idsize > ddm_reader_remaining(&r))
        return -EBADMSG;
    keep = (size_t)c < max ? (size_t)c : max;
    if (keep == 0)
        return 0;
    *ids = calloc(keep, sizeof **ids);
    if (!*ids)
        return -ENOMEM;
    for (size_t i = 0; i < keep; i++)
        (*ids)[i] = read_id(&r, idsize);
    *count = keep;
    return 0;
}

char *jvm_parse_string(const uint8_t *d, size_t n)
{
    ddm_reader r;
    ddm_reader_init(&r, d, n);
    return read_string(&r);
}

int jvm_parse_status(const uint8_t *d, size_t n, int32_t *status, int32_t *suspend)
{
    ddm_reader r;
    ddm_reader_init(&r, d, n);
    *status = ddm_read_i4(&r);
    *suspend = ddm_read_i4(&r);
    return ddm_reader_ok(&r) ? 0 : -EBADMSG;
}

int jvm_parse_id(const uint8_t *d, size_t n, uint32_t size, uint64_t *id)
{
    ddm_reader r;
    if (size < 1 || size > 8)
        return -EBADMSG;
    ddm_reader_init(&r, d, n);
    *id = read_id(&r, size);
    return ddm_reader_ok(&r) ? 0 : -EBADMSG;
}

int jvm_parse_int(const uint8_t *d, size_t n, int32_t *v)
{
    ddm_reader r;
    ddm_reader_init(&r, d, n);
    *v = ddm_read_i4(&r);
    return ddm_reader_ok(&r) ? 0 : -EBADMSG;
}

const char *jvm_status_name(int32_t status)
{
    switch (status) {
    case 0: return "zombie";
    case 1: return "running";
    case 2: return "sleeping";
    case 3: return "monitor";
    case 4: return "wait";
    default: return "unknown";
    }
}

int jvm_parse_version(const uint8_t *d, size_t n, jvm_version *out)
{
    ddm_reader r;
    memset(out, 0, sizeof *out);
    ddm_reader_init(&r, d, n);
    out->description = read_string(&r);
    out->major = ddm_read_i4(&r);
    out->minor = ddm_read_i4(&r);
    out->vm_version = read_string(&r);
    out->vm_name = read_string(&r);
    if (!out->description || !out->vm_version || !out->vm_name || !ddm_reader_ok(&r)) {
        jvm_version_clear(out);
        return -EBADMSG;
    }
    return 0;
}

void jvm_version_clear(jvm_version *v)
{
    free(v->description);
    free(v->vm_version);
    free(v->vm_name);
    memset(v, 0, sizeof *v);
}

/* i4 count, then that many strings, joined with ':'. */
static char *read_path_list(ddm_reader *r)
{
    int32_t c = ddm_read_i4(r);
    size_t len = 0;
    char *out = calloc(1, 1);
    if (!ddm_reader_ok(r) || c < 0 || (uint64_t)c * 4 > ddm_reader_remaining(r) || !out) {
        free(out);
        return NULL;
    }
    for (int32_t i = 0; i < c; i++) {
        char *s = read_string(r);
        char *grown;
        size_t sl;
        if (!s) {
            free(out);
            return NULL;
        }
        sl = strlen(s);
        grown = realloc(out, len + sl + 2);
        if (!grown) {
            free(s);
            free(out);
            return NULL;
        }
        out = grown;
        if (len)
            out[len++] = ':';
        memcpy(out + len, s, sl + 1);
        len += sl;
        free(s);
    }
    return out;
}

int jvm_parse_classpaths(const uint8_t *d, size_t n, jvm_classpaths *out)
{
    ddm_reader r;
    memset(out, 0, sizeof *out);
    ddm_reader_init(&r, d, n);
    out->base_dir = read_string(&r);
    if (out->base_dir)
        out->classpath = read_path_list(&r);
    if (out->classpath)
        out->bootclasspath = read_path_list(&r);
    if (!out->bootclasspath) {
        jvm_classpaths_clear(out);
        return -EBADMSG;
    }
    return 0;
}

void jvm_classpaths_clear(jvm_classpaths *c)
{
    free(c->base_dir);
    free(c->classpath);
    free(c->bootclasspath);
    memset(c, 0, sizeof *c);
}

static const char *const k_caps[] = {
    "canWatchFieldModification", "canWatchFieldAccess", "canGetBytecodes",
    "canGetSyntheticAttribute", "canGetOwnedMonitorInfo", "canGetCurrentContendedMonitor",
    "canGetMonitorInfo", "canRedefineClasses", "canAddMethod", "canUnrestrictedlyRedefineClasses",
    "canPopFrames", "canUseInstanceFilters", "canGetSourceDebugExtension",
    "canRequestVMDeathEvent", "canSetDefaultStratum", "canGetInstanceInfo",
    "canRequestMonitorEvents", "canGetMonitorFrameInfo", "canUseSourceNameFilters",
    "canGetConstantPool", "canForceEarlyReturn",
};

char *jvm_parse_capabilities(const uint8_t *d, size_t n, int is_new)
{
    size_t want = is_new ? 32 : 7, known = sizeof k_caps / sizeof k_caps[0], len = 0;
    char *out;
    if (n < want)
        return NULL;
    out = calloc(1, 1024);
    if (!out)
        return NULL;
    for (size_t i = 0; i < want; i++) {
        char name[32];
        const char *s = name;
        if (!d[i])
            continue;
        if (i < known)
            s = k_caps[i];
        else
            snprintf(name, sizeof name, "reserved%zu", i + 1);
        len += (size_t)snprintf(out + len, 1024 - len, "%s%s", len ? "," : "", s);
        if (len >= 1000)
            break;
    }
    return out;
}

int jvm_parse_frames(const uint8_t *d, size_t n, const jvm_idsizes *ids, size_t max,
                     jvm_frame **out, size_t *count)
{
    ddm_reader r;
    int32_t c;
    size_t each = ids->frame + 1 + ids->reftype + ids->method + 8, keep;
    ddm_reader_init(&r, d, n);
    c = ddm_read_i4(&r);
    *out = NULL;
    *count = 0;
    if (!ddm_reader_ok(&r) || c < 0 || (uint64_t)c * each > ddm_reader_remaining(&r))
        return -EBADMSG;
    keep = (size_t)c < max ? (size_t)c : max;
    if (!keep)
        return 0;
    *out = calloc(keep, sizeof **out);
    if (!*out)
        return -ENOMEM;
    for (size_t i = 0; i < keep; i++) {
        jvm_frame *f = &(*out)[i];
        f->frame_id = read_id(&r, ids->frame);
        f->type_tag = ddm_read_u1(&r);
        f->class_id = read_id(&r, ids->reftype);
        f->method_id = read_id(&r, ids->method);
        f->index = ddm_read_u8(&r);
    }
    *count = keep;
    return 0;
}

char *jvm_parse_method_name(const uint8_t *d, size_t n, const jvm_idsizes *ids, uint64_t method_id)
{
    ddm_reader r;
    int32_t c;
    ddm_reader_init(&r, d, n);
    c = ddm_read_i4(&r);
    if (!ddm_reader_ok(&r) || c < 0)
        return NULL;
    for (int32_t i = 0; i < c; i++) {
        uint64_t id = read_id(&r, ids->method);
        char *name = read_string(&r);
        char *sig = read_string(&r);
        (void)ddm_read_i4(&r);
        free(sig);
        if (!name || !ddm_reader_ok(&r)) {
            free(name);
            return NULL;
        }
        if (id == method_id)
            return name;
        free(name);
    }
    return NULL;
}

int32_t jvm_parse_line(const uint8_t *d, size_t n, uint64_t index)
{
    ddm_reader r;
    int32_t c, line = -1;
    uint64_t best = 0;
    int have = 0;
    ddm_reader_init(&r, d, n);
    (void)ddm_read_u8(&r); /* start */
    (void)ddm_read_u8(&r); /* end */
    c = ddm_read_i4(&r);
    if (!ddm_reader_ok(&r) || c < 0 || (uint64_t)c * 12 > ddm_reader_remaining(&r))
        return -1;
    /* The line of the last entry whose code index is <= @index. */
    for (int32_t i = 0; i < c; i++) {
        uint64_t at = ddm_read_u8(&r);
        int32_t ln = ddm_read_i4(&r);
        if (at <= index && (!have || at >= best)) {
            best = at;
            line = ln;
            have = 1;
        }
    }
    return line;
}

char *jvm_class_name(const char *sig)
{
    size_t n;
    char *out;
    if (!sig)
        return NULL;
    n = strlen(sig);
    if (n >= 2 && sig[0] == 'L' && sig[n - 1] == ';') {
        sig++;
        n -= 2;
    }
    out = malloc(n + 1);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++)
        out[i] = sig[i] == '/' ? '.' : sig[i];
    out[n] = '\0';
    return out;
}
