/* SPDX-License-Identifier: Apache-2.0
 * <ddmon/plugin.h> alone, compiled as C++ (see only-plugin.c). */
#include "only-plugin.c"
