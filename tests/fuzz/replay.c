/* SPDX-License-Identifier: Apache-2.0
 *
 * The replay driver: a main() for a fuzz target without libFuzzer, so that
 * `make check` (and CI's sanitizer build) runs every target. It calls
 * LLVMFuzzerTestOneInput on each seed of the target's corpus
 * (tests/fuzz/corpus/NAME/, NAME from the program's name fuzz-NAME), then
 * on a fixed number of deterministic mutations of those seeds: bit flips,
 * interesting bytes, truncations, length-field bumps (u1/u2/u4, either byte
 * order), inserted, deleted and duplicated ranges, splices of two seeds.
 * A fixed PRNG seed makes every run the same, so a failure repeats.
 *
 *   fuzz-NAME [-n MUTATIONS] [-s PRNG_SEED] [-d CORPUS_DIR] [-o SAVE] [-v] [FILE...]
 *
 * With FILEs (a crash file from libFuzzer, say) only those run, with no
 * mutations unless -n is given. With -o each input is written to SAVE
 * before it runs, so after a crash SAVE holds the input that crashed. DDM_FUZZ_MUTATIONS overrides the default
 * count (5000). Each input is copied into a buffer of exactly its size, so
 * AddressSanitizer sees a read past its end. Output is TAP; the exit status
 * is 0 unless an input crashes (under ASan/UBSan: aborts), or the corpus is
 * missing or empty (99, a hard error).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/fuzz/fuzz.h"

#define DEFAULT_MUTATIONS 5000UL
#define DEFAULT_PRNG_SEED 0x6464606d6f6e2121ULL
#define FUZZ_MAX_INPUT (1U << 20)  /* mutations never grow an input past this */
#define MAX_SEEDS 4096

#ifndef DDM_FUZZ_CORPUS_DIR
#define DDM_FUZZ_CORPUS_DIR "tests/fuzz/corpus"
#endif

typedef struct Input {
    uint8_t *p;
    size_t n;
    char *name;
} Input;

static Input g_seeds[MAX_SEEDS];
static size_t g_nseeds;
static int g_verbose;
static const char *g_save;
static uint64_t g_rng;

static uint64_t rnd(void)
{
    /* xorshift64*: small, fixed, the same on every platform */
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * 0x2545F4914F6CDD1DULL;
}

static size_t below(size_t n)
{
    return n ? (size_t)(rnd() % n) : 0;
}

/* A hard error (TAP "Bail out!"): @what, then @arg. */
static void die(const char *what, const char *arg)
{
    printf("Bail out! %s %s\n", what, arg);
    exit(99);
}

static int read_file(const char *path, Input *out)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;

    if (!f)
        return -1;
    for (;;) {
        size_t got;
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            buf = realloc(buf, cap);
            if (!buf)
                abort();
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    out->p = buf;
    out->n = n;
    out->name = strdup(path);
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of @dir, in name order (so runs repeat). */
static void load_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0;

    if (!d)
        die("cannot open the corpus (pass -d DIR?):", dir);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        names = realloc(names, (n + 1) * sizeof *names);
        if (!names)
            abort();
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_name);
    for (size_t i = 0; i < n; i++) {
        size_t plen = strlen(dir) + 1 + strlen(names[i]) + 1;
        char *path = malloc(plen);
        struct stat st;
        if (!path)
            abort();
        snprintf(path, plen, "%s/%s", dir, names[i]);
        free(names[i]);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && g_nseeds < MAX_SEEDS &&
            read_file(path, &g_seeds[g_nseeds]) == 0)
            g_nseeds++;
        free(path);
    }
    free(names);
}

/* Run one input from a buffer of exactly its size. */
static void run(const uint8_t *p, size_t n)
{
    uint8_t *copy = fuzz_dup(p, n);
    if (g_save) {
        FILE *f = fopen(g_save, "wb");
        if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0)
            die("cannot write", g_save);
    }
    LLVMFuzzerTestOneInput(copy, n);
    free(copy);
}

/* A length field at a random offset: set it near its edges or bump it. */
static void bump_length(uint8_t *p, size_t n)
{
    static const unsigned widths[] = {1, 2, 4};
    unsigned w = widths[below(3)];
    int le = (int)below(2);
    size_t at;
    uint64_t v = 0, max = w == 4 ? 0xFFFFFFFFu : w == 2 ? 0xFFFFu : 0xFFu;

    if (n < w)
        return;
    at = below(n - w + 1);
    for (unsigned i = 0; i < w; i++)
        v |= (uint64_t)p[at + (le ? i : w - 1 - i)] << (8 * (le ? i : w - 1 - i));
    switch (below(6)) {
    case 0: v++; break;
    case 1: v--; break;
    case 2: v += 1 + below(64); break;
    case 3: v = max; break;
    case 4: v = max / 2 + below(2); break;
    default: v = n + below(16) - 8; break;
    }
    v &= max;
    for (unsigned i = 0; i < w; i++)
        p[at + (le ? i : w - 1 - i)] = (uint8_t)(v >> (8 * (le ? i : w - 1 - i)));
}

/* One to four mutations of a seed (spliced with another one sometimes) into @buf. */
static size_t mutate(uint8_t *buf)
{
    static const uint8_t interesting[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0xfe, 0x0a, 0x20};
    const Input *a = &g_seeds[below(g_nseeds)];
    size_t n = a->n < FUZZ_MAX_INPUT ? a->n : FUZZ_MAX_INPUT, rounds = 1 + below(4);

    memcpy(buf, a->p, n);
    for (size_t r = 0; r < rounds; r++) {
        switch (below(9)) {
        case 0: /* bit flip */
            if (n)
                buf[below(n)] ^= (uint8_t)(1u << below(8));
            break;
        case 1: /* interesting byte */
            if (n)
                buf[below(n)] = interesting[below(sizeof interesting)];
            break;
        case 2: /* truncate */
            n = below(n + 1);
            break;
        case 3:
        case 4: /* length field */
            bump_length(buf, n);
            break;
        case 5: { /* insert random bytes */
            size_t at = below(n + 1), k = 1 + below(16);
            if (n + k > FUZZ_MAX_INPUT)
                break;
            memmove(buf + at + k, buf + at, n - at);
            for (size_t i = 0; i < k; i++)
                buf[at + i] = (uint8_t)rnd();
            n += k;
            break;
        }
        case 6: { /* delete a range */
            size_t at = below(n + 1), k = below(n - at + 1);
            memmove(buf + at, buf + at + k, n - at - k);
            n -= k;
            break;
        }
        case 7: { /* duplicate a range */
            size_t at = below(n + 1), k = below(n - at + 1);
            if (n + k > FUZZ_MAX_INPUT)
                break;
            memmove(buf + at + k, buf + at, n - at);
            n += k;
            break;
        }
        default: { /* splice: our prefix, another seed's suffix */
            const Input *b = &g_seeds[below(g_nseeds)];
            size_t keep = below(n + 1), from = below(b->n + 1);
            if (keep + (b->n - from) > FUZZ_MAX_INPUT)
                break;
            memcpy(buf + keep, b->p + from, b->n - from);
            n = keep + (b->n - from);
            break;
        }
        }
    }
    return n;
}

static const char *target_name(const char *argv0)
{
    const char *base = strrchr(argv0, '/');
    base = base ? base + 1 : argv0;
    if (strncmp(base, "lt-", 3) == 0) /* a libtool wrapper's real program */
        base += 3;
    if (strncmp(base, "fuzz-", 5) == 0)
        base += 5;
    return base;
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [-n MUTATIONS] [-s PRNG_SEED] [-d CORPUS_DIR] [-o SAVE] [-v] [FILE...]\n",
            argv0);
    exit(2);
}

int main(int argc, char **argv)
{
    const char *name = target_name(argv[0]);
    const char *dir = NULL, *env;
    unsigned long mutations = DEFAULT_MUTATIONS;
    int have_n = 0, opt;
    char *defdir = NULL;
    uint8_t *buf;

    g_rng = DEFAULT_PRNG_SEED;
    if ((env = getenv("DDM_FUZZ_MUTATIONS")) != NULL && *env)
        mutations = strtoul(env, NULL, 10);
    while ((opt = getopt(argc, argv, "n:s:d:o:vh")) != -1) {
        switch (opt) {
        case 'n':
            mutations = strtoul(optarg, NULL, 10);
            have_n = 1;
            break;
        case 's':
            g_rng = strtoull(optarg, NULL, 0);
            if (!g_rng)
                g_rng = DEFAULT_PRNG_SEED;
            break;
        case 'd':
            dir = optarg;
            break;
        case 'o':
            g_save = optarg;
            break;
        case 'v':
            g_verbose = 1;
            break;
        default:
            usage(argv[0]);
        }
    }
    if (optind < argc) {
        for (int i = optind; i < argc && g_nseeds < MAX_SEEDS; i++) {
            if (read_file(argv[i], &g_seeds[g_nseeds]) != 0)
                die("cannot read", argv[i]);
            g_nseeds++;
        }
        if (!have_n)
            mutations = 0;
    } else {
        if (!dir) {
            size_t dlen = strlen(DDM_FUZZ_CORPUS_DIR) + 1 + strlen(name) + 1;
            defdir = malloc(dlen);
            if (!defdir)
                abort();
            snprintf(defdir, dlen, "%s/%s", DDM_FUZZ_CORPUS_DIR, name);
            dir = defdir;
        }
        load_dir(dir);
        if (g_nseeds == 0)
            die("no seeds in", dir);
    }

    printf("1..2\n");
    for (size_t i = 0; i < g_nseeds; i++) {
        if (g_verbose)
            printf("# %s (%zu bytes)\n", g_seeds[i].name, g_seeds[i].n);
        fflush(stdout);
        run(g_seeds[i].p, g_seeds[i].n);
    }
    printf("ok 1 - %s: %zu seed(s)\n", name, g_nseeds);
    fflush(stdout);

    buf = malloc(FUZZ_MAX_INPUT);
    if (!buf)
        abort();
    for (unsigned long i = 0; i < mutations; i++) {
        uint64_t state = g_rng;
        size_t n = mutate(buf);
        if (g_verbose)
            printf("# mutation %lu (%zu bytes, state 0x%llx)\n", i, n, (unsigned long long)state);
        run(buf, n);
    }
    printf("ok 2 - %s: %lu mutation(s)\n", name, mutations);
    free(buf);
    free(defdir);
    for (size_t i = 0; i < g_nseeds; i++) {
        free(g_seeds[i].p);
        free(g_seeds[i].name);
    }
    return 0;
}
