/* Kernel parameters of the fused dropout + residual + LayerNorm/RMSNorm kernels of every arch
 * (kernels/hopper/ln_fused.cu, kernels/cdna/ln_fused.hip), passed by value and shared with their host glue (C11:
 * backends/cuda/ln_fused.c, backends/hip/cdna_plan.c) and the wave emulator (host C++): one struct per direction and
 * one for the backward's dgamma/dbeta reduction, each the same for both arches. Fixed-width fields only, so every
 * compiler lays them out alike. Rows and columns are 64-bit; the gfx9 kernels index with their low words (their
 * plan keeps both below 2^31). The field order is the one the sm_90a kernels were tuned with: ptxas pairs the loads
 * of neighbouring 4-byte parameters, and the same fields in another order compiled those kernels differently. */
#ifndef HK_COMMON_LN_PARAMS_H
#define HK_COMMON_LN_PARAMS_H

#include <stdint.h>

typedef struct hk_ln_fwd_params {
    const void *x, *residual, *gamma, *beta; /* residual, beta may be NULL (beta: always for RMSNorm) */
    void *y, *residual_out;                  /* residual_out may be NULL */
    float *mean, *rstd;                      /* may be NULL */
    int64_t x_stride, residual_stride, y_stride, residual_out_stride;
    int64_t rows, cols;
    uint64_t seed, offset;
    float epsilon;
    float dropout_scale;        /* 1 / (1 - p) */
    uint32_t dropout_threshold; /* hk_dropout_threshold(p): 0 draws no Philox */
    int32_t dropout;            /* p > 0 or a mask to write */
    int32_t rms;                /* RMSNorm: no mean, no beta */
    int32_t param_f32;          /* gamma/beta are fp32 (else the activation dtype) */
    int32_t pad_;
    uint32_t *dropout_mask;     /* may be NULL: the keep bits, mask_words per row (hk.h) */
    int64_t mask_words;
} hk_ln_fwd_params;

typedef struct hk_ln_bwd_params {
    const void *dy, *z, *dz_extra, *gamma; /* dz_extra may be NULL */
    const float *mean, *rstd;              /* mean unused for RMSNorm */
    void *dx, *dresidual;                  /* dresidual may be NULL */
    /* [parts][cols] partial sums, NULL when not wanted: a part per block of the grid (sm_90a), per row slot (gfx9,
     * where dbeta_part follows dgamma_part) */
    float *dgamma_part, *dbeta_part;
    int64_t dy_stride, z_stride, dz_extra_stride, dx_stride, dresidual_stride;
    int64_t rows, cols;
    uint64_t seed, offset;
    float dropout_scale;
    uint32_t dropout_threshold;
    int32_t dropout; /* p > 0 or a mask to apply */
    int32_t rms;
    int32_t param_f32;
    union {
        int32_t stages; /* sm_90a staged form: rows staged per segment, 1 .. HK_LN_BWD_MAX_STAGES (dynamic shared
                         * memory) */
        int32_t slots;  /* gfx9: row slots, slot s walking rows s, s + slots, ... (the partials' parts) */
    };
    const uint32_t *dropout_mask; /* may be NULL: keep bits to apply instead of Philox (dropout is then set) */
    int64_t mask_words;
} hk_ln_bwd_params;

/* Sums the partials in index order: dgamma[c] = sum_p dgamma_part[p][c] (dbeta likewise); NULL outputs are
 * skipped. */
typedef struct hk_ln_reduce_params {
    const float *dgamma_part, *dbeta_part;
    float *dgamma, *dbeta;
    int64_t parts, cols;
} hk_ln_reduce_params;

#endif
