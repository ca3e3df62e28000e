/* Kernel parameters of the fused dropout + residual + LayerNorm/RMSNorm kernels of every arch
 * (kernels/hopper/ln_fused.cu, kernels/cdna/ln_fused.hip), forward and backward, passed by value and shared with
 * their host glue (C11: backends/cuda/ln_fused.c, backends/hip/cdna_plan.c) and the wave emulator (host C++).
 * Fixed-width fields only, so every compiler lays the struct out alike. One layout for both directions: where the
 * forward and the backward pass different tensors in the same role, the two names share storage (each union: the
 * forward's name first, the backward's second), so each side's code reads in its own terms.
 * The offsets are those the sm_90a backward kernels had with a struct of their own: ptxas pairs the loads of
 * neighbouring 4-byte parameters, and with the flags paired otherwise it compiled those kernels differently (the
 * forward kernels, whose old order no shared layout can keep as well, get the same instructions in another order). */
#ifndef HK_COMMON_LN_PARAMS_H
#define HK_COMMON_LN_PARAMS_H

#include <stddef.h>
#include <stdint.h>

typedef struct hk_ln_params {
    union { const void *x; const void *dy; };
    union { const void *residual; const void *z; }; /* forward: may be NULL */
    union { const void *beta; const void *dz_extra; }; /* may be NULL (beta: always for RMSNorm) */
    const void *gamma;
    float *mean, *rstd; /* forward: written where not NULL; backward: read (mean not for RMSNorm) */
    union { void *y; void *dx; };
    union { void *residual_out; void *dresidual; }; /* may be NULL */
    /* Backward: dgamma / dbeta partial sums, [parts][cols] each (sm_90a: a part per block of the grid; gfx9: per
     * row slot), NULL when not wanted. */
    float *dgamma_part, *dbeta_part;
    union { int64_t x_stride; int64_t dy_stride; };
    union { int64_t residual_stride; int64_t z_stride; };
    int64_t dz_extra_stride;
    union { int64_t y_stride; int64_t dx_stride; };
    union { int64_t residual_out_stride; int64_t dresidual_stride; };
    int64_t rows, cols;
    uint64_t seed, offset;
    float dropout_scale;        /* 1 / (1 - p) */
    uint32_t dropout_threshold; /* hk_dropout_threshold(p): 0 draws no Philox */
    int32_t dropout;            /* p > 0 or a mask to write (forward) or apply (backward) */
    int32_t rms;                /* RMSNorm: no mean, no beta */
    int32_t param_f32;          /* gamma/beta are fp32 (else the activation dtype) */
    union {
        int32_t stages; /* sm_90a backward, staged form: rows staged per segment, 1 .. HK_LN_BWD_MAX_STAGES */
        int32_t slots;  /* gfx9 backward: row slots, slot s walking rows s, s + slots, ...; the partials' parts */
    };
    uint32_t *dropout_mask; /* packed keep bits (hk.h), NULL: none; the forward writes them, the backward reads them
                             * instead of drawing Philox */
    int64_t mask_words;     /* HK_DROPOUT_MASK_WORDS(cols): the mask's words per row */
    float epsilon;          /* forward */
} hk_ln_params;

/* Every compiler lays it out as the sm_90a backward kernels want it (the header's comment). */
#ifdef __cplusplus
static_assert(offsetof(hk_ln_params, gamma) == 24 && offsetof(hk_ln_params, dgamma_part) == 64 &&
                  offsetof(hk_ln_params, rows) == 120 && offsetof(hk_ln_params, dropout_scale) == 152 &&
                  offsetof(hk_ln_params, stages) == 172 && offsetof(hk_ln_params, dropout_mask) == 176,
              "hk_ln_params: the sm_90a backward's offsets");
#else
_Static_assert(offsetof(hk_ln_params, gamma) == 24 && offsetof(hk_ln_params, dgamma_part) == 64 &&
                   offsetof(hk_ln_params, rows) == 120 && offsetof(hk_ln_params, dropout_scale) == 152 &&
                   offsetof(hk_ln_params, stages) == 172 && offsetof(hk_ln_params, dropout_mask) == 176,
               "hk_ln_params: the sm_90a backward's offsets");
#endif

/* dgamma[c] = sum over p < parts of dgamma_part[p][c] in index order (dbeta likewise); NULL outputs are skipped. */
typedef struct hk_ln_reduce_params {
    const float *dgamma_part, *dbeta_part;
    float *dgamma, *dbeta;
    int64_t parts, cols;
} hk_ln_reduce_params;

#endif
