/* SPDX-License-Identifier: Apache-2.0
 *
 * vminfo: pure decoders of the APNM, WAIT and STAG event payloads
 * (doc/protocol.md, "APNM, WAIT, STAG"). Every length is checked against
 * the payload by the SDK reader; optional tails are taken only when they
 * fit completely, trailing bytes are ignored (doc/protocol.md, "DDM": a
 * newer VM may append fields). No I/O, no host.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ddmon/bytes.h>

#include "vminfo.h"

void vminfo_apnm_clear(vminfo_apnm *a)
{
    free(a->app_name);
    free(a->package_name);
    a->app_name = NULL;
    a->package_name = NULL;
    a->user_id = -1;
}

int vminfo_parse_apnm(const uint8_t *data, size_t len, vminfo_apnm *out, const char **note)
{
    ddm_reader r;
    uint32_t uid;
    char *pkg;

    memset(out, 0, sizeof *out);
    out->user_id = -1;
    *note = NULL;
    ddm_reader_init(&r, data, len);
    out->app_name = ddm_read_lstr(&r);
    if (!out->app_name)
        return -EBADMSG;
    if (ddm_reader_remaining(&r) == 0)
        return 0;
    if (ddm_reader_remaining(&r) < 4) {
        *note = "truncated user id ignored";
        return 0;
    }
    uid = ddm_read_u4(&r);
    /* user ids are small; a value with the top bit set is not one we can show */
    out->user_id = uid <= 0x7fffffffu ? (int32_t)uid : -1;
    if (ddm_reader_remaining(&r) == 0)
        return 0;
    pkg = ddm_read_lstr(&r);
    if (!pkg) {
        *note = "truncated package name ignored";
        return 0;
    }
    out->package_name = pkg;
    return 0;
}

int vminfo_parse_wait(const uint8_t *data, size_t len)
{
    return len >= 1 ? data[0] : -1;
}

int vminfo_parse_stag(const uint8_t *data, size_t len, uint32_t *stage)
{
    ddm_reader r;
    ddm_reader_init(&r, data, len);
    *stage = ddm_read_u4(&r);
    return ddm_reader_ok(&r) ? 0 : -EBADMSG;
}
