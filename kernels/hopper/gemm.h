/* Kernel parameters and launch shape of kernels/hopper/gemm.cu, shared by the host glue (C11,
 * backends/cuda/gemm.c) and the device code (nvcc). Fixed-width fields only, so that both compilers lay
 * the struct out the same way. Every kernel takes (map_a, map_b, map_d, params), the three tensor maps
 * passed by value (__grid_constant__). */
#ifndef HK_HOPPER_GEMM_H
#define HK_HOPPER_GEMM_H

#include <stdint.h>

#define HK_GEMM_BM 128     /* output tile rows: two consumer warpgroups of 64 */
#define HK_GEMM_BN 256     /* output tile columns */
#define HK_GEMM_BOX_K 128  /* bytes of K per k-block (64 bf16 or 128 e4m3): one 128-byte swizzle row */
#define HK_GEMM_BOX_MN 64  /* M/N elements per box of an M/N-contiguous operand */
#define HK_GEMM_EPI_ROWS 64 /* D store box: 64 rows x 128 bytes */
#define HK_GEMM_THREADS 384 /* producer warpgroup + two consumer warpgroups */
#define HK_GEMM_STAGES 4
/* 4 stages of (A 128 x 128 B + B 256 x 128 B), 32 KiB of epilogue staging, 1 KiB alignment slack */
#define HK_GEMM_SHARED_BYTES (HK_GEMM_STAGES * (HK_GEMM_BM + HK_GEMM_BN) * 128 + 32768 + 1024)
#define HK_GEMM_GROUP_M 8 /* tile rows per L2 group of the persistent walk */

typedef struct hk_gemm_params {
    int32_t m, n, k;
    int32_t group_m;   /* tile rows per L2 group */
    int32_t tma_store; /* D meets TMA rules (16-byte aligned base and row pitch): store through map_d */
    int32_t vec2;      /* else: D (and C) allow 2-element stores (even ld, even n, aligned pointers) */
    void *d;
    const void *c;     /* read only when beta != 0; may alias d */
    int64_t ldd, ldc;
    float alpha;       /* alpha * scale_a * scale_b */
    float beta;
} hk_gemm_params;

#endif
