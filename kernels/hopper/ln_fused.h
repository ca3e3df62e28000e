/* Launch configurations of kernels/hopper/ln_fused.cu, shared by the host glue (C11, backends/cuda/ln_fused.c) and
 * the device code (nvcc); the parameters are common/ln_params.h. */
#ifndef HK_HOPPER_LN_FUSED_H
#define HK_HOPPER_LN_FUSED_H

#include "common/ln_params.h"

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

#endif
