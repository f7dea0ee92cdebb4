/* SPDX-License-Identifier: Apache-2.0
 *
 * <ddmon/chunk.h> alone, first and only include: it must bring everything it needs.
 */
#include <ddmon/chunk.h>

int sdk_only_chunk(void);

int sdk_only_chunk(void)
{
    return DDM_CHUNK_HELO == DDM_CHUNK('H', 'E', 'L', 'O');
}
