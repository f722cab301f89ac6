// src/base/rng.c: counter-based random numbers (Philox-4x32-10, Salmon et al., SC'11).
// The value at (seed, stream, position) is a pure function, so a generator that gives stream
// i to row i (or edge block i) produces the same numbers whatever thread runs it.
#include "base/base.h"

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

static inline uint32_t mulhilo(uint32_t a, uint32_t b, uint32_t *hi)
{
    uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    return (uint32_t)p;
}

// One Philox-4x32 block: counter (stream, position) under key seed -> 128 bits; we use 64.
static uint64_t philox(uint64_t seed, uint64_t stream, uint64_t position)
{
    uint32_t c0 = (uint32_t)position, c1 = (uint32_t)(position >> 32);
    uint32_t c2 = (uint32_t)stream, c3 = (uint32_t)(stream >> 32);
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        uint32_t hi0, hi1;
        uint32_t lo0 = mulhilo(PHILOX_M0, c0, &hi0);
        uint32_t lo1 = mulhilo(PHILOX_M1, c2, &hi1);
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
        k0 += PHILOX_W0;
        k1 += PHILOX_W1;
    }
    return ((uint64_t)c1 << 32) | c0;
}

uint64_t dsmm_rng_at(uint64_t seed, uint64_t stream, uint64_t position)
{
    return philox(seed, stream, position);
}

void dsmm_rng_init(dsmm_rng *r, uint64_t seed, uint64_t stream)
{
    r->key = seed;
    r->stream = stream;
    r->counter = 0;
}

uint64_t dsmm_rng_u64(dsmm_rng *r)
{
    return philox(r->key, r->stream, r->counter++);
}

double dsmm_rng_uniform(dsmm_rng *r)
{
    return (double)(dsmm_rng_u64(r) >> 11) * 0x1.0p-53;
}
