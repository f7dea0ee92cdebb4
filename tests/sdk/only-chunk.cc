/* SPDX-License-Identifier: Apache-2.0
 * <ddmon/chunk.h> alone, compiled as C++ (see only-chunk.c). */
#include "only-chunk.c"
