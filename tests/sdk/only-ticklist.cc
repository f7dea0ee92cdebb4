/* SPDX-License-Identifier: Apache-2.0
 * <ddmon/ticklist.h> alone, compiled as C++ (see only-ticklist.c). */
#include "only-ticklist.c"
