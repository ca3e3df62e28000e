/* Kernel parameters and launch shape of kernels/hopper/gemm.cu, shared by the host glue (C11,
 * backends/cuda/gemm.c) and the device code (nvcc). Fixed-width fields only, so that both compilers lay
 * the struct out the same way. Every kernel takes (map_a, map_b, map_d, params), the three tensor maps
 * passed by value (__grid_constant__). */
#ifndef HK_HOPPER_GEMM_H
#define HK_HOPPER_GEMM_H

#include <stdint.h>

#define HK_GEMM_BM 128     /* output tile rows: two consumer warpgroups of 64 */
#define HK_GEMM_BN 256     /* output tile columns of the persistent kernels */
#define HK_GEMM_BN_SK 128  /* output tile columns of the split-K kernels */
#define HK_GEMM_BOX_K 128  /* bytes of K per k-block (64 bf16 or 128 e4m3): one 128-byte swizzle row */
#define HK_GEMM_BOX_MN 64  /* M/N elements per box of an M/N-contiguous operand */
#define HK_GEMM_BOX_B_ROWS 128 /* N rows per box of an N-row (K-major) B: the multicast unit */
#define HK_GEMM_EPI_ROWS 64 /* D store box: 64 rows x 128 bytes */
#define HK_GEMM_THREADS 384 /* producer warpgroup + two consumer warpgroups */
#define HK_GEMM_STAGES 4    /* persistent: 4 x (A 16 KiB + B 32 KiB) */
#define HK_GEMM_STAGES_SK 6 /* split-K: 6 x (A 16 KiB + B 16 KiB), deeper for the memory-bound skinny shapes */
/* stages, 32 KiB of epilogue staging, 1 KiB alignment slack: the same for both tile shapes */
#define HK_GEMM_SHARED_BYTES (HK_GEMM_STAGES * (HK_GEMM_BM + HK_GEMM_BN) * 128 + 32768 + 1024)
#define HK_GEMM_GROUP_M 8 /* tile rows per L2 group of the persistent walk */

/* Kernel families (name suffix), one per launch shape:
 *  ""     persistent, one CTA per SM walks 128 x 256 tiles;
 *  "_mc2" the same in clusters of 2 CTAs on vertically adjacent tiles: each loads half of the shared B
 *         k-block and multicasts it to both (a third less L2 -> SM traffic); grid even;
 *  "_sk2" one 128 x 128 tile per CTA, clusters of 2; with params.split = 2 both CTAs of a cluster share a
 *         tile, each taking half of K, and add their partial tiles through distributed shared memory (no
 *         workspace); grid = 2 * ceil(tiles * split / 2). For shapes with fewer tiles than SMs. */
#define HK_GEMM_CLUSTER_SK 2

typedef struct hk_gemm_params {
    int32_t m, n, k;
    int32_t group_m;   /* tile rows per L2 group */
    int32_t tma_store; /* D meets TMA rules (16-byte aligned base and row pitch): store through map_d */
    int32_t vec2;      /* else: D (and C) allow 2-element stores (even ld, even n, aligned pointers) */
    int32_t split;     /* "_sk2" kernels: CTAs per tile splitting K (1 or 2); others ignore it */
    int32_t pad_;
    void *d;
    const void *c;     /* read only when beta != 0; may alias d */
    int64_t ldd, ldc;
    float alpha;       /* alpha * scale_a * scale_b */
    float beta;
} hk_gemm_params;

#endif
