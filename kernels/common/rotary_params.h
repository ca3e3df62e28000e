/* Kernel parameters of the rotary kernels of every arch (kernels/hopper/rotary.cu, kernels/cdna/rotary.hip), passed
 * by value as the kernel's single argument and shared with their host glue (C11: backends/cuda/rotary.c,
 * backends/hip/cdna_plan.c) and the wave emulator (host C++). Fixed-width fields only, so every compiler lays the
 * struct out alike. One layout for both arches; the fields only one arch reads share storage (the unions: sm_90a's
 * members first, gfx9's second), so the struct is no larger than either arch needs. */
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
    /* sm_90a: each thread rotates one chunk of V pairs for up to HK_ROTARY_HEADS_PER_THREAD heads of one token
     * (kernels/hopper/rotary.h). gfx9: each thread handles one unit of a (token, head), a run of rotated pairs or of
     * copied features; units per (token, head) = rot_units + copy_units; a block covers tokens_per_block tokens. */
    union {
        int64_t units; /* sm_90a: threads with work, tokens * head_groups * (chunks + copy_chunks), one per unit */
        struct {       /* gfx942/gfx950 */
            int32_t tokens;
            int32_t rot_units;
        };
    };
    union {
        int32_t half;       /* sm_90a: rotary_dim / 2 */
        int32_t copy_units; /* gfx942/gfx950 */
    };
    int32_t rotary_dim;
    union {
        struct {                 /* sm_90a */
            int32_t chunks;      /* rotated chunks of V pairs per head */
            int32_t copy_chunks; /* pass-through chunks of V features per head (0 in place) */
            int32_t head_groups; /* ceil(heads / HK_ROTARY_HEADS_PER_THREAD) */
            int32_t row_blocks;  /* lane-mapped kernel: blocks per token */
        };
        struct { /* gfx942/gfx950 */
            int32_t tokens_per_block;
            int32_t interleaved;
        };
    };
    float sign; /* -1 rotates by -theta (inverse) */
} hk_rotary_params;

#endif
