/* Philox4x32-10 (Salmon et al., SC'11) and the dropout mask rule of hk.h, shared verbatim by the CPU
 * backend (C11), CUDA (nvcc) and HIP (clang) so that every backend draws the bit-identical mask. */
#ifndef HK_PHILOX_H
#define HK_PHILOX_H

#include <stdint.h>

#if defined(__CUDACC__) || defined(__HIP__)
#define HK_PHILOX_FN __host__ __device__ static inline
#else
#define HK_PHILOX_FN static inline
#endif

typedef struct hk_philox_out { uint32_t w[4]; } hk_philox_out;

HK_PHILOX_FN uint32_t hk_mulhilo32(uint32_t a, uint32_t b, uint32_t *hi)
{
#if defined(HK_TILES_MUL_WIDE_U32) && (defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__))
    /* the arch layer's one-instruction 32 x 32 -> 64 multiply (tiles/<arch>/arch.hpp, included first) */
    return HK_TILES_MUL_WIDE_U32(a, b, hi);
#else
    uint64_t p = (uint64_t)a * (uint64_t)b;
    *hi = (uint32_t)(p >> 32);
    return (uint32_t)p;
#endif
}

/* counter {c0, c1, c2, c3}, key {k0, k1}; ten rounds with the reference multipliers and Weyl constants. */
HK_PHILOX_FN hk_philox_out hk_philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0,
                                            uint32_t k1)
{
    for (int round = 0; round < 10; ++round) {
        uint32_t hi0, hi1;
        uint32_t lo0 = hk_mulhilo32(0xD2511F53u, c0, &hi0);
        uint32_t lo1 = hk_mulhilo32(0xCD9E8D57u, c2, &hi1);
        uint32_t n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
        c0 = n0; c1 = n1; c2 = n2; c3 = n3;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    hk_philox_out out = {{c0, c1, c2, c3}};
    return out;
}

/* The four mask words for elements 4g .. 4g+3 of a (seed, offset) stream (hk.h documents the mapping). */
HK_PHILOX_FN hk_philox_out hk_dropout_words(uint64_t seed, uint64_t offset, uint64_t group)
{
    return hk_philox4x32_10((uint32_t)group, (uint32_t)(group >> 32), (uint32_t)offset, (uint32_t)(offset >> 32),
                            (uint32_t)seed, (uint32_t)(seed >> 32));
}

/* Element i is kept iff its word >= threshold. */
HK_PHILOX_FN int hk_dropout_keep(uint64_t seed, uint64_t offset, uint64_t index, uint32_t threshold)
{
    hk_philox_out r = hk_dropout_words(seed, offset, index >> 2);
    return r.w[index & 3] >= threshold;
}

/* Element c of one row of hk.h's packed dropout_mask (bit c % 32 of word c / 32): kept? */
HK_PHILOX_FN int hk_dropout_mask_kept(const uint32_t *row, int64_t c) { return (row[c >> 5] >> (c & 31)) & 1u; }

#endif
