/* Kernel parameter blocks of the CDNA kernels, shared by the kernels (C++, passed by value) and their hosts
 * (backends/hip and backends/emulator, C). Plain fixed-width fields only, so both sides lay them out alike. */
#ifndef HK_CDNA_PARAMS_H
#define HK_CDNA_PARAMS_H

#include <stdint.h>

/* Rotary: each thread handles one unit of a (token, head): a run of rotated pairs or of copied features.
 * Units per (token, head) = rot_units + copy_units; a block covers tokens_per_block tokens. */
typedef struct hk_rotary_params {
    const void *x;
    void *out;
    const void *cos, *sin;       /* fp32, or the activation type in the _t16 kernels */
    const int32_t *position_ids; /* NULL: position_offset + t */
    int64_t x_stride[3], out_stride[3];
    int64_t position_offset, table_positions;
    int32_t tokens, seqlen, heads, rotary_dim;
    int32_t rot_units, copy_units, tokens_per_block;
    int32_t interleaved;
    float sign; /* -1 for the inverse rotation */
} hk_rotary_params;

/* Fused dropout + residual + LayerNorm/RMSNorm, forward and backward. */
typedef struct hk_ln_params {
    const void *x, *residual, *gamma, *beta; /* backward: x = dy, residual = z, beta = dz_extra */
    void *y, *residual_out;                  /* backward: y = dx, residual_out = dresidual */
    float *mean, *rstd;                      /* backward: read */
    float *partial;                          /* backward: [2][slots][cols] dgamma/dbeta partials */
    uint32_t *mask;                          /* packed keep mask (hk.h), NULL: none; the forward writes it, the
                                              * hk_ln_bwd_mask_* kernels read it instead of drawing Philox */
    int64_t x_stride, residual_stride, y_stride, residual_out_stride, extra_stride;
    int32_t rows, cols, slots;
    int32_t rms, param_f32, has_beta;
    float epsilon, keep_scale;
    uint32_t threshold; /* 0: no dropout */
    uint64_t seed, offset;
} hk_ln_params;

/* dgamma[c] / dbeta[c] = sum over slots of the partials, in slot order. */
typedef struct hk_ln_reduce_params {
    const float *partial;
    float *dgamma, *dbeta;
    int32_t cols, slots;
} hk_ln_reduce_params;

/* GEMM (kernels/cdna/gemm.hip): D = alpha * op(A) op(B) + beta * C over tiles_m x tiles_n macro tiles. */
typedef struct hk_gemm_params {
    const void *a, *b, *c; /* c NULL when beta == 0 */
    void *d;
    int64_t lda, ldb, ldc, ldd;
    int32_t m, n, k;
    int32_t tiles_m, tiles_n;
    int32_t group_m; /* tile rows swept together along N (L2 reuse) */
    int32_t xcds;    /* chiplets: consecutive tiles are kept on one XCD */
    int32_t d_type;  /* HK_GEMM_OUT_* */
    int32_t vec_a, vec_b, vec_c, vec_d; /* 16-byte aligned pointer and leading dimension: vector accesses */
    float alpha;     /* times scale_a * scale_b for fp8 */
    float beta;
} hk_gemm_params;

enum { HK_GEMM_OUT_BF16 = 0, HK_GEMM_OUT_F16 = 1, HK_GEMM_OUT_F32 = 2 };

#endif
