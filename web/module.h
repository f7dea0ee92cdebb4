/* SPDX-License-Identifier: Apache-2.0
 *
 * The web module's function table: what the server (server/web_module.c)
 * may call in ddmon-web.so, the module that holds the web dashboard
 * (web.h) and GET /metrics (metrics_http.h) with libsoup 3 and its
 * dependencies, so that a server without --http or --metrics maps none of
 * them (doc/web.md, "How the web part is loaded").
 *
 * The module exports one symbol, DDM_WEB_MODULE_SYMBOL, a function that
 * returns the table. The module calls back into the ddmon binary (the
 * daemon, the views), whose functions have no stable ABI: a module only
 * fits the binary it was built with. The server therefore checks, before
 * calling anything in the table, that its version is DDM_WEB_MODULE_VERSION,
 * its size at least the size it knows, and that it was built from the same
 * package version and in the same build (DDM_BUILD_TOKEN, configure.ac: a
 * hash of the version, compiler and options). Bump DDM_WEB_MODULE_VERSION with any change to the
 * table.
 *
 * Only pointers to incomplete types cross the table: this header needs no
 * libsoup header.
 */
#ifndef DDM_WEB_MODULE_H
#define DDM_WEB_MODULE_H

#include <stdint.h>

#include <glib.h>

#include "core/daemon/daemon.h"
#include "web/metrics_http.h"
#include "web/web.h"

/* The module's file name, in the package's library directory (pkglibdir). */
#define DDM_WEB_MODULE_FILE "ddmon-web.so"
/* The one symbol the module exports: a DdmWebModuleGetFunc. */
#define DDM_WEB_MODULE_SYMBOL "ddm_web_module"
#define DDM_WEB_MODULE_VERSION 2u

typedef struct DdmWebModule {
    uint32_t version;            /* DDM_WEB_MODULE_VERSION */
    uint32_t size;               /* sizeof (DdmWebModule) of the module's build */
    const char *package_version; /* PACKAGE_VERSION of the module's build */
    const char *build_token;     /* DDM_BUILD_TOKEN of the module's build (since 2) */
    /* web.h */
    DdmWeb *(*web_new)(DdmDaemon *daemon, const DdmWebOptions *opts, GError **error);
    void (*web_free)(DdmWeb *web);
    struct DdmHttpServer *(*web_http)(DdmWeb *web);
    const char *(*web_url)(const DdmWeb *web);
    /* metrics_http.h */
    DdmMetricsEndpoint *(*metrics_new)(DdmDaemon *daemon, struct DdmHttpServer *dashboard,
                                       const char *listen, GError **error);
    void (*metrics_free)(DdmMetricsEndpoint *ep);
    char *(*metrics_url)(const DdmMetricsEndpoint *ep);
} DdmWebModule;

/** The table (static; transfer none). */
typedef const DdmWebModule *(*DdmWebModuleGetFunc)(void);

/* Defined in the module (web/module.c) only. */
const DdmWebModule *ddm_web_module(void);

#endif /* DDM_WEB_MODULE_H */
