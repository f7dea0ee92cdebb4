/* SPDX-License-Identifier: Apache-2.0
 * <ddmon/bytes.h> alone, compiled as C++ (see only-bytes.c). */
#include "only-bytes.c"
