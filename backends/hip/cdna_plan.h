/* Launch planning for the CDNA kernels (kernels/cdna), shared by the HIP backend (real GPUs) and the wave
 * emulator, so both run the same kernel with the same grid and parameters for a call. */
#ifndef HK_CDNA_PLAN_H
#define HK_CDNA_PLAN_H

#include "internal.h"
#include "cdna/params.h"

typedef struct hk_cdna_launch {
    char kernel[64];
    unsigned grid[3], block[3];
    union {
        hk_rotary_params rotary;
        hk_ln_params ln;
        hk_ln_reduce_params reduce;
        hk_gemm_params gemm;
    } params;
} hk_cdna_launch;

/* Run one planned launch: hk_gpu_launch for HIP, the emulator for the emulator. */
typedef hk_status (*hk_cdna_exec)(hk_context *ctx, const hk_cdna_launch *launch, void *stream);

/* Each plan fills up to max launches and returns how many (0: nothing to do), or -1 with why written for an
 * unsupported problem. */
HK_INTERNAL int hk_cdna_plan_rotary(const hk_rotary_args *a, hk_cdna_launch *out, char *why, size_t why_size);
HK_INTERNAL int hk_cdna_plan_ln(const hk_ln_fused_args *a, hk_cdna_launch *out, char *why, size_t why_size);
HK_INTERNAL int hk_cdna_plan_ln_bwd(const hk_ln_fused_bwd_args *a, hk_cdna_launch out[2], char *why, size_t why_size);
/* The LayerNorm backward's workspace, as hk_variant.workspace (args: hk_ln_fused_bwd_args). */
HK_INTERNAL size_t hk_cdna_ln_bwd_workspace(const hk_context *ctx, const void *args);
/* GEMM with the 8-wave 256 x 256 ping-pong kernels (HK_CDNA_GEMM_PINGPONG) or the 4-wave 128 x 128 ones. */
enum { HK_CDNA_GEMM_INTERLEAVED = 0, HK_CDNA_GEMM_PINGPONG = 1 };
HK_INTERNAL int hk_cdna_plan_gemm(const hk_context *ctx, const hk_gemm_args *a, int schedule, hk_cdna_launch *out,
                                  char *why, size_t why_size);

/* supports()/run() bodies for the variants of both backends; `schedule` selects the GEMM kernels (other ops: 0). */
HK_INTERNAL hk_status hk_cdna_supports(const hk_context *ctx, hk_op op, int schedule, const void *args, char *why,
                                       size_t why_size);
HK_INTERNAL hk_status hk_cdna_run(hk_context *ctx, hk_op op, int schedule, const void *args, hk_cdna_exec exec);

#endif
