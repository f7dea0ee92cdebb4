/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pnglib: loads libpng at the first image (dlopen by soname, no path: the
 * dynamic linker's own search, as for a library linked in); see pnglib.h.
 */
#include "pnglib.h"

#include <dlfcn.h>
#include <stdio.h>

static ddm_pnglib loaded_lib;
static int lib_state;        /* 0 not tried, 1 loaded, -1 failed (for good) */
static char lib_failure[256]; /* why, once lib_state is -1 */

static const ddm_pnglib *failed(char *why, size_t why_len)
{
    lib_state = -1;
    snprintf(why, why_len, "%s", lib_failure);
    return NULL;
}

const ddm_pnglib *ddm_pnglib_get(char *why, size_t why_len)
{
    if (lib_state == 1)
        return &loaded_lib;
    if (lib_state == -1)
        return failed(why, why_len);
    void *handle = dlopen(DDM_PNG_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *e = dlerror();
        snprintf(lib_failure, sizeof lib_failure, "libpng (%s) could not be loaded: %s",
                 DDM_PNG_SONAME, e != NULL ? e : "unknown error");
        return failed(why, why_len);
    }
    ddm_pnglib lib;
    void *sym;
#define DDM_PNGLIB_RESOLVE(name)                                                                   \
    sym = dlsym(handle, #name);                                                                    \
    if (sym == NULL) {                                                                             \
        snprintf(lib_failure, sizeof lib_failure, "libpng (%s) has no %s", DDM_PNG_SONAME, #name); \
        dlclose(handle);                                                                           \
        return failed(why, why_len);                                                               \
    }                                                                                              \
    *(void **)&lib.name = sym;
    DDM_PNGLIB_FUNCTIONS(DDM_PNGLIB_RESOLVE)
#undef DDM_PNGLIB_RESOLVE
    loaded_lib = lib; /* the handle stays open for the process's life */
    lib_state = 1;
    return &loaded_lib;
}

const char *ddm_pnglib_failure(void)
{
    return lib_state == -1 ? lib_failure : NULL;
}
