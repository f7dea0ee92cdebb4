/* SPDX-License-Identifier: Apache-2.0
 *
 * Test-only web modules for tests/unit/server/test-web-module.c: the table
 * of ddmon-web.so (web/module.h) as this build makes it, with no web code
 * behind it, and one way of it being wrong per build of this file
 * (FIXTURE_KIND, tests/unit/server/local.mk): another table version, a
 * smaller table, another package version, another build's token, a NULL
 * entry, a NULL table, no exported ddm_web_module. The server must accept
 * the first and refuse each of the others, saying why, before calling
 * anything in it.
 */
#include <build-config.h>

#include "web/module.h"

#define FIXTURE_GOOD 0
#define FIXTURE_VERSION 1
#define FIXTURE_SIZE 2
#define FIXTURE_PACKAGE 3
#define FIXTURE_TOKEN 4
#define FIXTURE_NULL_ENTRY 5
#define FIXTURE_NULL_TABLE 6
#define FIXTURE_NO_SYMBOL 7
#ifndef FIXTURE_KIND
#error "build with -DFIXTURE_KIND=FIXTURE_..."
#endif

/* Never called: the test only checks that the table is accepted. */
static DdmWeb *web_new(DdmDaemon *daemon, const DdmWebOptions *opts, GError **error)
{
    (void)daemon, (void)opts, (void)error;
    return NULL;
}
static void web_free(DdmWeb *web)
{
    (void)web;
}
static struct DdmHttpServer *web_http(DdmWeb *web)
{
    (void)web;
    return NULL;
}
static const char *web_url(const DdmWeb *web)
{
    (void)web;
    return "fixture";
}
static DdmMetricsEndpoint *metrics_new(DdmDaemon *daemon, struct DdmHttpServer *dashboard,
                                       const char *listen, GError **error)
{
    (void)daemon, (void)dashboard, (void)listen, (void)error;
    return NULL;
}
static void metrics_free(DdmMetricsEndpoint *ep)
{
    (void)ep;
}
static char *metrics_url(const DdmMetricsEndpoint *ep)
{
    (void)ep;
    return NULL;
}

static const DdmWebModule table = {
    .version = FIXTURE_KIND == FIXTURE_VERSION ? DDM_WEB_MODULE_VERSION + 1 : DDM_WEB_MODULE_VERSION,
    .size = FIXTURE_KIND == FIXTURE_SIZE ? sizeof(DdmWebModule) - sizeof(void *)
                                         : sizeof(DdmWebModule),
    .package_version = FIXTURE_KIND == FIXTURE_PACKAGE ? "0.0.0-fixture" : PACKAGE_VERSION,
    .build_token = FIXTURE_KIND == FIXTURE_TOKEN ? "fixture-build" : DDM_BUILD_TOKEN,
    .web_new = web_new,
    .web_free = web_free,
    .web_http = web_http,
    .web_url = web_url,
    .metrics_new = metrics_new,
    .metrics_free = metrics_free,
    .metrics_url = FIXTURE_KIND == FIXTURE_NULL_ENTRY ? NULL : metrics_url,
};

#if FIXTURE_KIND == FIXTURE_NO_SYMBOL
const DdmWebModule *ddm_web_module_fixture(void);
const DdmWebModule *ddm_web_module_fixture(void)
#else
const DdmWebModule *ddm_web_module(void)
#endif
{
    return FIXTURE_KIND == FIXTURE_NULL_TABLE ? NULL : &table;
}
