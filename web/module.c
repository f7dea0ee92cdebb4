/* SPDX-License-Identifier: Apache-2.0
 *
 * The entry point of ddmon-web.so (module.h): the one exported symbol,
 * which hands the server the module's function table.
 */
#include <build-config.h>

#include "web/module.h"

static const DdmWebModule table = {
    .version = DDM_WEB_MODULE_VERSION,
    .size = sizeof(DdmWebModule),
    .package_version = PACKAGE_VERSION,
    .build_token = DDM_BUILD_TOKEN,
    .web_new = ddm_web_new,
    .web_free = ddm_web_free,
    .web_http = ddm_web_http,
    .web_url = ddm_web_url,
    .metrics_new = ddm_metrics_endpoint_new,
    .metrics_free = ddm_metrics_endpoint_free,
    .metrics_url = ddm_metrics_endpoint_url,
};

const DdmWebModule *ddm_web_module(void)
{
    return &table;
}
