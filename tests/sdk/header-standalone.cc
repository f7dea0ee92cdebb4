/* SPDX-License-Identifier: Apache-2.0
 *
 * The SDK headers compiled as C++11 (-std=c++11 -pedantic -Werror): see
 * header-standalone.h.
 */
#include "header-standalone.h"

int main()
{
    return run_checks();
}
