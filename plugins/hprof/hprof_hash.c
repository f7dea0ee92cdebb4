/* SPDX-License-Identifier: Apache-2.0
 *
 * SHA-256 for heap dumps (hprof_hash.h): a thin shell over a library's
 * implementation, chosen at build time.
 */
#include "build-config.h"

#include "hprof_hash.h"

#include <stdlib.h>
#include <string.h>

#ifdef HAVE_LIBCRYPTO
#include <openssl/evp.h>

struct hprof_hash {
    EVP_MD_CTX *ctx;
};

hprof_hash *hprof_hash_new(void)
{
    hprof_hash *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->ctx = EVP_MD_CTX_new();
    if (!h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(h->ctx);
        free(h);
        return NULL;
    }
    return h;
}

void hprof_hash_update(hprof_hash *h, const uint8_t *p, size_t n)
{
    if (n)
        EVP_DigestUpdate(h->ctx, p, n);
}

void hprof_hash_hex(hprof_hash *h, char hex[HPROF_SHA256_HEX + 1])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    static const char digits[] = "0123456789abcdef";

    EVP_DigestFinal_ex(h->ctx, md, &len);
    for (unsigned i = 0; i < 32 && i < len; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[HPROF_SHA256_HEX] = '\0';
}

void hprof_hash_free(hprof_hash *h)
{
    if (!h)
        return;
    EVP_MD_CTX_free(h->ctx);
    free(h);
}

const char *hprof_hash_impl(void)
{
    return "libcrypto";
}

#else /* GLib */
#include <glib.h>

struct hprof_hash {
    GChecksum *sum;
};

hprof_hash *hprof_hash_new(void)
{
    hprof_hash *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->sum = g_checksum_new(G_CHECKSUM_SHA256);
    return h;
}

void hprof_hash_update(hprof_hash *h, const uint8_t *p, size_t n)
{
    /* GChecksum takes a gssize: feed huge pieces in parts */
    while (n > 0) {
        size_t part = n > (size_t)1 << 30 ? (size_t)1 << 30 : n;
        g_checksum_update(h->sum, p, (gssize)part);
        p += part;
        n -= part;
    }
}

void hprof_hash_hex(hprof_hash *h, char hex[HPROF_SHA256_HEX + 1])
{
    const char *s = g_checksum_get_string(h->sum);
    strncpy(hex, s ? s : "", HPROF_SHA256_HEX);
    hex[HPROF_SHA256_HEX] = '\0';
}

void hprof_hash_free(hprof_hash *h)
{
    if (!h)
        return;
    g_checksum_free(h->sum);
    free(h);
}

const char *hprof_hash_impl(void)
{
    return "glib";
}
#endif
