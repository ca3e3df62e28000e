/* Kernel parameters of the GEMM kernels of every arch (kernels/hopper/gemm.cu, kernels/cdna/gemm.hip), passed by
 * value and shared with their host glue (C11: backends/cuda/gemm_plan.c, backends/hip/cdna_plan.c) and the wave
 * emulator (host C++). Fixed-width fields only, so every compiler lays the struct out alike. One layout for both
 * arches: D = alpha * op(A) op(B) + beta * C over tiles. The fields only one arch reads share storage (the two
 * unions: sm_90a's members first, gfx9's second), so that the struct is no larger than either arch needs: the
 * sm_90a kernels take it by value, and a larger struct would grow the copy they keep of it. */
#ifndef HK_COMMON_GEMM_PARAMS_H
#define HK_COMMON_GEMM_PARAMS_H

#include <stddef.h>
#include <stdint.h>

/* HK_GEMM_ARCH_FIELDS(sm90, gfx9): the two arches' own fields over the same bytes. nvcc sees the sm_90a ones alone,
 * as plain fields at the same offsets (checked below): with the union in its view it assigned the registers of the
 * pooled kernels, which copy their parameters, differently. */
#ifdef __CUDACC__
#define HK_GEMM_ARCH_FIELDS(sm90, gfx9) sm90
#else
#define HK_GEMM_ARCH_FIELDS(sm90, gfx9) union { struct { sm90 }; struct { gfx9 }; };
#endif

typedef struct hk_gemm_params {
    int32_t m, n, k; /* the kernel's problem: with swapped operands (sm_90a) m and n are the caller's n and m */
    int32_t group_m; /* tile rows per L2 group (swept together along N) */
    HK_GEMM_ARCH_FIELDS(
        /* sm_90a */
        int32_t tma_store; /* D meets TMA rules (16-byte aligned base and row pitch): store through map_d (and the tile
                            * columns past the last whole 128-byte chunk through map_t), else from registers */
        int32_t vec2;      /* else: D (and C) allow 2-element stores (even ld, even n, aligned pointers) */
        int32_t split;     /* CTAs per tile splitting K: in clusters of 2, 1 or 2 (the halves meet in distributed shared
                            * memory); pooled shapes 1 to HK_GEMM_POOLED_MAX (the parts meet in the workspace); others 1 */
        int32_t promote;   /* e4m3 on HK_GEMM_PROMOTE_FITS shapes: each k-block's product (tensor-core fp8 accumulation)
                            * is added to the fp32 accumulator by the consumer; 0: the tensor cores accumulate all of K */
        ,
        /* gfx942/gfx950 */
        int32_t tiles_m;
        int32_t tiles_n;
        int32_t xcds;   /* chiplets: consecutive tiles are kept on one XCD */
        int32_t d_type; /* HK_GEMM_OUT_*: one kernel serves every output type */
    )
    void *d;
    const void *c; /* read only when beta != 0 (gfx9: NULL then); may alias d */
    int64_t ldd, ldc;
    float alpha; /* alpha * scale_a * scale_b (scales: fp8 only) */
    float beta;
    HK_GEMM_ARCH_FIELDS(
        /* sm_90a, which reads A and B through tensor maps */
        void *workspace;        /* pooled split: a slot of bm x bn floats per part per tile; the finale's counters and
                                 * slots */
        int32_t finale;         /* persistent shapes: parts of K per tile of the walk's last two rounds (0: none) */
        int32_t walk_group;     /* the tile walk's divisors (hk_gemm_set_walk): group_m x tiles_n tiles per group, */
        int32_t walk_last_rows; /* the last group's tile rows, */
        float walk_rcp[3];      /* and the reciprocals of walk_group, group_m and walk_last_rows */
        int32_t col_last;       /* the first column of the last tile column (hk_gemm_col_last) */
        ,
        /* gfx942/gfx950, which read A and B through buffer descriptors */
        const void *a;
        const void *b;
        int64_t lda;
        int64_t ldb;
        uint8_t vec_c; /* C, D: 16-byte aligned pointer and leading dimension, vector accesses */
        uint8_t vec_d;
    )
} hk_gemm_params;

/* Both views lay the sm_90a fields out alike. */
#ifdef __cplusplus
static_assert(sizeof(hk_gemm_params) == 112 && offsetof(hk_gemm_params, workspace) == 72 &&
                  offsetof(hk_gemm_params, col_last) == 104 && offsetof(hk_gemm_params, tma_store) == 16,
              "hk_gemm_params: the sm_90a layout");
#else
_Static_assert(sizeof(hk_gemm_params) == 112 && offsetof(hk_gemm_params, workspace) == 72 &&
                   offsetof(hk_gemm_params, col_last) == 104 && offsetof(hk_gemm_params, tma_store) == 16,
               "hk_gemm_params: the sm_90a layout");
#endif

enum { HK_GEMM_OUT_BF16 = 0, HK_GEMM_OUT_F16 = 1, HK_GEMM_OUT_F32 = 2 };

#endif
