/* SPDX-License-Identifier: Apache-2.0
 *
 * The test kit's plugin state: the plugin's data (set_data/get_data) and
 * the configuration a test sets for it (fake_host_set_config, config_get).
 */
#include "kit-private.h"

void fh_set_data(ddm_plugin *self, void *data, ddm_free_fn data_free)
{
    fake_host *fh = host_of(self);
    if (fh->pdata && fh->pdata_free && fh->pdata != data)
        fh->pdata_free(fh->pdata);
    fh->pdata = data;
    fh->pdata_free = data_free;
}

void *fh_get_data(ddm_plugin *self)
{
    return host_of(self)->pdata;
}

static const char *config_lookup(fake_host *fh, const char *key)
{
    size_t i;
    for (i = 0; i < fh->config.n; i++) {
        fh_kv *kv = fh->config.v[i];
        if (strcmp(kv->key, key) == 0)
            return kv->value;
    }
    return NULL;
}

const char *fh_config_get(ddm_plugin *self, const char *key)
{
    fake_host *fh = host_of(self);
    char buf[512];
    assert_non_null(key);
    /* As the core: the option "<plugin name>.<key>", nothing else. */
    if (!fh->plugin.desc || !fh->plugin.desc->name ||
        (size_t)snprintf(buf, sizeof buf, "%s.%s", fh->plugin.desc->name, key) >= sizeof buf)
        return NULL;
    return config_lookup(fh, buf);
}

void fake_host_set_config(fake_host *fh, const char *key, const char *value)
{
    size_t i;
    fh_kv *kv;
    for (i = 0; i < fh->config.n; i++) {
        kv = fh->config.v[i];
        if (strcmp(kv->key, key) == 0) {
            free(kv->value);
            if (value) {
                kv->value = xstrdup(value);
            } else {
                free(kv->key);
                free(kv);
                vec_remove_at(&fh->config, i);
            }
            return;
        }
    }
    if (!value)
        return;
    kv = xcalloc(1, sizeof *kv);
    kv->key = xstrdup(key);
    kv->value = xstrdup(value);
    vec_push(&fh->config, kv);
}
