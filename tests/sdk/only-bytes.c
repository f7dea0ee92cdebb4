/* SPDX-License-Identifier: Apache-2.0
 *
 * <ddmon/bytes.h> alone, first and only include: it must bring everything it needs.
 */
#include <ddmon/bytes.h>

int sdk_only_bytes(void);

int sdk_only_bytes(void)
{
    ddm_reader r;
    ddm_reader_init(&r, "", 0);
    return ddm_read_u1(&r) == 0 && !ddm_reader_ok(&r);
}
