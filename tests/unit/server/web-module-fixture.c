/* SPDX-License-Identifier: Apache-2.0
 *
 * Test-only web modules for tests/unit/server/test-web-module.c: the table
 * of ddmon-web.so (web/module.h) as this build makes it, with no web code
 * behind it, and one way of it being wrong per build of this file
 * (FIXTURE_KIND, tests/unit/server/local.mk): another table version, a
 * smaller table, another package version, another build's token, a NULL
 * entry, a NULL table, no exported ddm_web_module. The server must accept
 * the first and refuse each of the others, saying why, before calling
 * anything in it. The kinds and the table header are
 * tests/harness/module-fixture.h's, shared with the terminal UI's fixture.
 */
#include <build-config.h>

#include "tests/harness/module-fixture.h"
#include "web/module.h"

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
    FIXTURE_TABLE_HEADER(DdmWebModule, DDM_WEB_MODULE_VERSION),
    .web_new = web_new,
    .web_free = web_free,
    .web_http = web_http,
    .web_url = web_url,
    .metrics_new = metrics_new,
    .metrics_free = metrics_free,
    .metrics_url = FIXTURE_ENTRY(metrics_url),
};

const DdmWebModule *FIXTURE_EXPORTED(ddm_web_module)(void);
const DdmWebModule *FIXTURE_EXPORTED(ddm_web_module)(void)
{
    return FIXTURE_TABLE(&table);
}
