/* SPDX-License-Identifier: Apache-2.0
 *
 * The SDK headers compiled as strict C99 (-std=c99 -pedantic -Werror):
 * see header-standalone.h.
 */
#include "header-standalone.h"

int main(void)
{
    return run_checks();
}
