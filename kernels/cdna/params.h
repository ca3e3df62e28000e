/* Kernel parameter blocks of the CDNA kernels, shared by the kernels (C++, passed by value) and their hosts
 * (backends/hip and backends/emulator, C). Plain fixed-width fields only, so both sides lay them out alike. */
#ifndef HK_CDNA_PARAMS_H
#define HK_CDNA_PARAMS_H

#include <stdint.h>

#include "common/attn_params.h"
#include "common/gemm_params.h"
#include "common/rotary_params.h"

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

#endif
