/* SPDX-License-Identifier: Apache-2.0
 *
 * threads: names of THST status codes. Dalvik uses 0-9; ART reports a
 * subset through the same codes (doc/protocol.md, "THST": starting and
 * terminated -> 0, runnable/native/suspended -> 1, sleeping -> 2, blocked
 * -> 3, every waiting state -> 4), so one table serves both. The draft's
 * codes 1-8 are the same. Unknown codes read "state-N".
 */
#include <stdio.h>

#include "threads.h"

static const char *const k_state_names[] = {
    "zombie",       /* 0 */
    "running",      /* 1 */
    "timed-wait",   /* 2: sleep, or wait with a timeout */
    "monitor",      /* 3: blocked on a monitor */
    "wait",         /* 4 */
    "initializing", /* 5 */
    "starting",     /* 6 */
    "native",       /* 7 */
    "vmwait",       /* 8 */
    "suspended",    /* 9: by GC or debugger */
};

const char *threads_state_name(uint8_t code, char buf[16])
{
    if (code < sizeof k_state_names / sizeof k_state_names[0])
        return k_state_names[code];
    snprintf(buf, 16, "state-%u", (unsigned)code);
    return buf;
}
