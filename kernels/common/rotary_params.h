/* Kernel parameters of the rotary kernels of every arch (kernels/hopper/rotary.cu, kernels/cdna/rotary.hip), passed
 * by value as the kernel's single argument and shared with their host glue (C11: backends/cuda/rotary.c,
 * backends/hip/cdna_plan.c) and the wave emulator (host C++). Fixed-width fields only, so every compiler lays the
 * struct out alike. One layout for both arches; the fields that only one arch reads say so. */
#ifndef HK_COMMON_ROTARY_PARAMS_H
#define HK_COMMON_ROTARY_PARAMS_H

#include <stdint.h>

typedef struct hk_rotary_params {
    const void *x;
    void *out;
    const void *cos, *sin;       /* fp32, or the activation type in the _t16 kernels */
    const int32_t *position_ids; /* NULL: position_offset + t */
    int64_t x_stride[3], out_stride[3]; /* batch, seq, head; elements */
    int64_t seqlen, heads;
    int64_t table_positions, position_offset;
    /* sm_90a only, units to row_blocks: each thread rotates one chunk of pairs for up to HK_ROTARY_HEADS_PER_THREAD
     * heads of one token (kernels/hopper/rotary.h) */
    int64_t units;       /* threads with work: tokens * head_groups * (chunks + copy_chunks), one per unit */
    int32_t half;        /* rotary_dim / 2 */
    int32_t rotary_dim;  /* both arches */
    int32_t chunks;      /* rotated chunks of V pairs per head */
    int32_t copy_chunks; /* pass-through chunks of V features per head (0 in place) */
    int32_t head_groups; /* ceil(heads / HK_ROTARY_HEADS_PER_THREAD) */
    int32_t row_blocks;  /* lane-mapped kernel: blocks per token */
    float sign;          /* both arches: -1 rotates by -theta (inverse) */
    /* gfx942/gfx950 only: each thread handles one unit of a (token, head), a run of rotated pairs or of copied
     * features; units per (token, head) = rot_units + copy_units; a block covers tokens_per_block tokens */
    int32_t tokens;
    int32_t rot_units, copy_units, tokens_per_block;
    int32_t interleaved;
} hk_rotary_params;

#endif
