/* SPDX-License-Identifier: Apache-2.0
 *
 * A tiny deterministic random generator (splitmix64) for the simulated
 * VMs: every model draws from its own SimRng seeded from --seed, so the
 * same seed gives the same names, threads and heaps on every run.
 * Non-goal: cryptographic quality.
 */
#ifndef SIMVM_RNG_H
#define SIMVM_RNG_H

#include <stdint.h>

typedef struct SimRng {
    uint64_t s;
} SimRng;

static inline void sim_rng_seed(SimRng *r, uint64_t seed)
{
    r->s = seed ^ 0x5DEECE66DULL;
}

static inline uint64_t sim_rng_next(SimRng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/** Uniform in [0, n); 0 when n is 0. */
static inline uint32_t sim_rng_below(SimRng *r, uint32_t n)
{
    return n ? (uint32_t)(sim_rng_next(r) % n) : 0;
}

/** Uniform in [lo, hi] (inclusive). */
static inline uint32_t sim_rng_range(SimRng *r, uint32_t lo, uint32_t hi)
{
    return hi <= lo ? lo : lo + sim_rng_below(r, hi - lo + 1);
}

/** Uniform in [0, 1). */
static inline double sim_rng_unit(SimRng *r)
{
    return (double)(sim_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

static inline int sim_rng_chance(SimRng *r, double p)
{
    return sim_rng_unit(r) < p;
}

/** Mix two values into a seed (for per-object sub-generators). */
static inline uint64_t sim_rng_mix(uint64_t a, uint64_t b)
{
    SimRng r = { a ^ (b * 0xD1B54A32D192ED03ULL) };
    return sim_rng_next(&r);
}

#endif /* SIMVM_RNG_H */
