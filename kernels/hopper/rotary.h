/* Kernel parameters of kernels/hopper/rotary.cu, shared by the host glue (C11, backends/cuda/rotary.c) and the
 * device code (nvcc), passed by value as the kernel's single argument. Fixed-width fields only, so that both
 * compilers lay the struct out the same way. */
#ifndef HK_HOPPER_ROTARY_H
#define HK_HOPPER_ROTARY_H

#include <stdint.h>

/* Each thread rotates one chunk of V pairs (V = 16 bytes of elements, or 1 on the scalar path) for up to
 * HK_ROTARY_HEADS_PER_THREAD heads of one token, so the cos/sin chunk is loaded once for all of them. */
#define HK_ROTARY_HEADS_PER_THREAD 4
#define HK_ROTARY_BLOCK 256
/* The lane-mapped HALF kernel (rotary_dim = head_dim): blocks of 64 threads with 2 loads each, within one
 * token's row; small blocks at ~21 per SM beat 256-thread ones (bench/NOTES.md, rotary runs 27-29). */
#define HK_ROTARY_ROW_BLOCK 64
#define HK_ROTARY_ROW_VECTORS 2

typedef struct hk_rotary_params {
    const void *x;
    void *out;
    const void *cos, *sin;       /* fp32, or the activation type in the _t16 kernels */
    const int32_t *position_ids; /* NULL: position_offset + t */
    int64_t x_stride[3], out_stride[3]; /* batch, seq, head; elements */
    int64_t seqlen, heads;
    int64_t table_positions, position_offset;
    int64_t units;       /* threads with work: tokens * head_groups * (chunks + copy_chunks), one per unit */
    int32_t half;        /* rotary_dim / 2 */
    int32_t rotary_dim;
    int32_t chunks;      /* rotated chunks of V pairs per head */
    int32_t copy_chunks; /* pass-through chunks of V features per head (0 in place) */
    int32_t head_groups; /* ceil(heads / HK_ROTARY_HEADS_PER_THREAD) */
    int32_t row_blocks;  /* lane-mapped kernel: blocks per token */
    float sign;          /* -1 rotates by -theta (inverse) */
} hk_rotary_params;

#endif
