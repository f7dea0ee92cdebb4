/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pnglib: loads libpng at the first image (dlopen by soname, so only the
 * system's library path and the user's own LD_LIBRARY_PATH are searched);
 * see pnglib.h.
 */
#include "pnglib.h"

#include <dlfcn.h>
#include <stdio.h>

static ddm_pnglib loaded_lib;
static int lib_state; /* 0 not tried, 1 loaded, -1 failed (retried: a later install works) */

const ddm_pnglib *ddm_pnglib_get(char *why, size_t why_len)
{
    if (lib_state == 1)
        return &loaded_lib;
    void *handle = dlopen(DDM_PNG_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *e = dlerror();
        snprintf(why, why_len, "libpng (%s) could not be loaded: %s", DDM_PNG_SONAME,
                 e != NULL ? e : "unknown error");
        lib_state = -1;
        return NULL;
    }
    ddm_pnglib lib;
    void *sym;
#define DDM_PNGLIB_RESOLVE(name)                                                                   \
    sym = dlsym(handle, #name);                                                                    \
    if (sym == NULL) {                                                                             \
        snprintf(why, why_len, "libpng (%s) has no %s", DDM_PNG_SONAME, #name);                    \
        dlclose(handle);                                                                           \
        lib_state = -1;                                                                            \
        return NULL;                                                                               \
    }                                                                                              \
    *(void **)&lib.name = sym;
    DDM_PNGLIB_FUNCTIONS(DDM_PNGLIB_RESOLVE)
#undef DDM_PNGLIB_RESOLVE
    loaded_lib = lib; /* the handle stays open for the process's life */
    lib_state = 1;
    return &loaded_lib;
}

int ddm_pnglib_loaded(void)
{
    return lib_state == 1;
}
