/* SPDX-License-Identifier: Apache-2.0
 *
 * SHA-256 for heap dumps (hprof_hash.h): a thin shell over a library's
 * implementation. With libcrypto at build time (HAVE_LIBCRYPTO), libcrypto
 * is loaded (dlopen, by the soname of the OpenSSL the build saw) at the
 * first dump, not linked: mapping and relocating it cost a server ~1.4 MB
 * of RSS from start-up on, whether it ever wrote a dump or not (issue 16,
 * doc/memory.md). Without it, or when it cannot be loaded, GLib's
 * GChecksum (slower: no hardware SHA) computes the same digest.
 */
#include "build-config.h"

#include "hprof_hash.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_LIBCRYPTO
#include <dlfcn.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>

/* The soname of the libcrypto the headers are from. */
#if defined(OPENSSL_VERSION_MAJOR) && OPENSSL_VERSION_MAJOR >= 3
#define HPROF_STR_(x) #x
#define HPROF_STR(x) HPROF_STR_(x)
#define HPROF_LIBCRYPTO "libcrypto.so." HPROF_STR(OPENSSL_VERSION_MAJOR)
#else
#define HPROF_LIBCRYPTO "libcrypto.so.1.1"
#endif

/* libcrypto's functions, found once (main loop only); NULL: use GLib. */
static struct {
    int tried;
    EVP_MD_CTX *(*ctx_new)(void);
    void (*ctx_free)(EVP_MD_CTX *);
    int (*init)(EVP_MD_CTX *, const EVP_MD *, ENGINE *);
    int (*update)(EVP_MD_CTX *, const void *, size_t);
    int (*final)(EVP_MD_CTX *, unsigned char *, unsigned int *);
    const EVP_MD *(*sha256)(void);
} crypto;

static int crypto_load(void)
{
    void *lib;
    if (crypto.tried)
        return crypto.sha256 != NULL;
    crypto.tried = 1;
    lib = dlopen(HPROF_LIBCRYPTO, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return 0;
    /* kept loaded: a second dump uses it again (dlclose would not give the
     * pages back on every system anyway) */
    *(void **)&crypto.ctx_new = dlsym(lib, "EVP_MD_CTX_new");
    *(void **)&crypto.ctx_free = dlsym(lib, "EVP_MD_CTX_free");
    *(void **)&crypto.init = dlsym(lib, "EVP_DigestInit_ex");
    *(void **)&crypto.update = dlsym(lib, "EVP_DigestUpdate");
    *(void **)&crypto.final = dlsym(lib, "EVP_DigestFinal_ex");
    *(void **)&crypto.sha256 = dlsym(lib, "EVP_sha256");
    if (!crypto.ctx_new || !crypto.ctx_free || !crypto.init || !crypto.update || !crypto.final ||
        !crypto.sha256) {
        memset(&crypto, 0, sizeof crypto);
        crypto.tried = 1;
        dlclose(lib); /* unusable: not kept mapped */
        return 0;
    }
    return 1;
}
#else
static int crypto_load(void)
{
    return 0;
}
#endif

/* hprof_hash_force_glib: tests hash with GLib with libcrypto there. */
static int force_glib;

void hprof_hash_force_glib(int on)
{
    force_glib = on != 0;
}

struct hprof_hash {
#ifdef HAVE_LIBCRYPTO
    EVP_MD_CTX *ctx; /* libcrypto's, or NULL */
#endif
    GChecksum *sum;  /* GLib's when libcrypto is not there */
};

hprof_hash *hprof_hash_new(void)
{
    hprof_hash *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
#ifdef HAVE_LIBCRYPTO
    if (!force_glib && crypto_load()) {
        h->ctx = crypto.ctx_new();
        if (h->ctx && crypto.init(h->ctx, crypto.sha256(), NULL) == 1)
            return h;
        if (h->ctx)
            crypto.ctx_free(h->ctx);
        h->ctx = NULL;
    }
#endif
    h->sum = g_checksum_new(G_CHECKSUM_SHA256);
    if (!h->sum) {
        free(h);
        return NULL;
    }
    return h;
}

void hprof_hash_update(hprof_hash *h, const uint8_t *p, size_t n)
{
#ifdef HAVE_LIBCRYPTO
    if (h->ctx) {
        if (n)
            crypto.update(h->ctx, p, n);
        return;
    }
#endif
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
#ifdef HAVE_LIBCRYPTO
    if (h->ctx) {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int len = 0;
        static const char digits[] = "0123456789abcdef";

        memset(hex, '0', HPROF_SHA256_HEX);
        crypto.final(h->ctx, md, &len);
        for (unsigned i = 0; i < 32 && i < len; i++) {
            hex[2 * i] = digits[md[i] >> 4];
            hex[2 * i + 1] = digits[md[i] & 15];
        }
        hex[HPROF_SHA256_HEX] = '\0';
        return;
    }
#endif
    const char *s = g_checksum_get_string(h->sum);
    strncpy(hex, s ? s : "", HPROF_SHA256_HEX);
    hex[HPROF_SHA256_HEX] = '\0';
}

void hprof_hash_free(hprof_hash *h)
{
    if (!h)
        return;
#ifdef HAVE_LIBCRYPTO
    if (h->ctx)
        crypto.ctx_free(h->ctx);
#endif
    if (h->sum)
        g_checksum_free(h->sum);
    free(h);
}

const char *hprof_hash_impl(void)
{
    return !force_glib && crypto_load() ? "libcrypto" : "glib";
}
