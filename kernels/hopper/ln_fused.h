/* Kernel parameters of kernels/hopper/ln_fused.cu, shared by the host glue (C11, backends/cuda/ln_fused.c) and
 * the device code (nvcc), passed by value. Fixed-width fields only. */
#ifndef HK_HOPPER_LN_FUSED_H
#define HK_HOPPER_LN_FUSED_H

#include <stdint.h>

/* Threads per block of the any-shape kernels and of the dgamma/dbeta reduction. */
#define HK_LN_ANY_BLOCK 256
#define HK_LN_REDUCE_COLS 32
#define HK_LN_REDUCE_SLICES 16

/* Register-resident kernels: X(TPR, NV) builds one whose rows are covered by TPR threads holding NV vectors of
 * 16 bytes each, so cols <= TPR * NV * (16 / element size). Blocks have max(TPR, 256) threads. The host
 * picks the first entry that fits; kernels are named hk_ln_<fwd|bwd>_<dtype>_t<TPR>_n<NV>. */
#define HK_LN_FWD_CONFIGS_2BYTE(X) X(32, 1) X(32, 2) X(32, 4) X(64, 4) X(128, 4) X(256, 4) X(512, 4) X(1024, 4)
#define HK_LN_FWD_CONFIGS_4BYTE(X) X(32, 2) X(32, 4) X(64, 4) X(128, 4) X(256, 4) X(512, 4) X(1024, 4)
/* The backward also keeps dgamma/dbeta partials in registers, so it holds fewer vectors per thread. Its grid
 * is persistent: X(TPR, NV, MINB, STAGES) is built for MINB resident blocks per SM (__launch_bounds__), and the
 * host launches multiprocessors * MINB blocks. STAGES 0: the next row waits in registers (prefetch form); else
 * the rows ahead wait in up to STAGES shared-memory stages (staged form), which the wide rows prefer
 * (on the H200: D4096 t256_n2 staged 71% of copy vs 65% for t512_n1 prefetch; D1024 prefetch 72%
 * vs 57% staged). fp32 rows hold twice the registers per element: their prefetch forms run 2 blocks per SM
 * (at 3 they spilled 0.8 KB and ran 11-14 points slower). Staged kernels whose held values would fill their
 * register budget form xhat again in pass 2 instead of holding it: 2-byte rows of 4097-8191 columns on two
 * blocks of 256 x 4 vectors per SM (the host's pick between equal capacities), rows past 8192 on 512 threads x
 * 4 (2-byte) or 8 (fp32) vectors (1024-thread blocks spilled 1.5-5.7 KB at their 64-register cap). */
#define HK_LN_BWD_CONFIGS_2BYTE(X) \
    X(32, 1, 3, 0) X(64, 1, 3, 0) X(128, 1, 3, 0) X(256, 1, 3, 0) X(256, 2, 2, 2) X(256, 4, 2, 2) X(512, 2, 1, 2) X(512, 4, 1, 2)
#define HK_LN_BWD_CONFIGS_4BYTE(X) \
    X(32, 2, 2, 0) X(64, 2, 2, 0) X(128, 2, 2, 0) X(256, 2, 2, 0) X(512, 2, 1, 2) X(512, 4, 1, 2) X(512, 8, 1, 2)
#define HK_LN_MIN_BLOCK 256
/* The staged form's stages (the current row and the ones in flight) are HK_LN_BWD_STAGE_BYTES(block, nv, loads)
 * each (loads: 2 vectors per element, 3 with dz_extra; plus mean, rstd and a mask word per vector and thread);
 * the kernel waits with cp.async.wait_group, so at most 4. */
#define HK_LN_BWD_MAX_STAGES 4
#define HK_LN_BWD_STAGE_BYTES(block, nv, loads) ((block) * ((loads) * (nv) * 16 + 8 + (nv) * 4))

typedef struct hk_ln_fwd_params {
    const void *x, *residual, *gamma, *beta; /* residual, beta may be NULL */
    void *y, *residual_out;                  /* residual_out may be NULL */
    float *mean, *rstd;                      /* may be NULL */
    int64_t x_stride, residual_stride, y_stride, residual_out_stride;
    int64_t rows, cols;
    uint64_t seed, offset;
    float epsilon;
    float dropout_scale;        /* 1 / (1 - p) */
    uint32_t dropout_threshold; /* hk_dropout_threshold(p) */
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
    float *dgamma_part, *dbeta_part;       /* [gridDim.x][cols] partial sums, NULL when not wanted */
    int64_t dy_stride, z_stride, dz_extra_stride, dx_stride, dresidual_stride;
    int64_t rows, cols;
    uint64_t seed, offset;
    float dropout_scale;
    uint32_t dropout_threshold;
    int32_t dropout; /* p > 0 or a mask to apply */
    int32_t rms;
    int32_t param_f32;
    int32_t stages; /* staged form: rows staged per segment, 1 .. HK_LN_BWD_MAX_STAGES (dynamic shared memory) */
    const uint32_t *dropout_mask; /* may be NULL: keep bits to apply instead of Philox (dropout is then set) */
    int64_t mask_words;
} hk_ln_bwd_params;

/* Sums the partials in index order: dgamma[c] = sum_b dgamma_part[b][c] (dbeta likewise). */
typedef struct hk_ln_reduce_params {
    const float *dgamma_part, *dbeta_part;
    float *dgamma, *dbeta;
    int64_t parts, cols;
} hk_ln_reduce_params;

#endif
