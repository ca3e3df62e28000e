/* HIP variants: the CDNA kernels (kernels/cdna) on gfx942/gfx950, launched from the embedded code objects. */
#include "cdna_plan.h"

static hk_status hip_exec(hk_context *ctx, const hk_cdna_launch *l, void *stream)
{
    void *params[] = {(void *)&l->params};
    return hk_gpu_launch(ctx, l->kernel, l->grid, l->block, 0, stream, params);
}

#define HK_HIP_VARIANT(var, OP, SCHED, vname, desc, ws)                                                       \
    static hk_status var##_supports(const hk_context *ctx, const void *args, char *why, size_t why_size)      \
    {                                                                                                          \
        return hk_cdna_supports(ctx, OP, SCHED, args, why, why_size);                                          \
    }                                                                                                          \
    static hk_status var##_run(hk_context *ctx, const void *args) { return hk_cdna_run(ctx, OP, SCHED, args, hip_exec); } \
    static const hk_variant var = {OP, vname, desc, HK_BACKEND_HIP, "gfx942 gfx950", var##_supports, var##_run, ws, false};

HK_HIP_VARIANT(hip_rotary, HK_OP_ROTARY, 0, "hip.rotary",
               "one thread per 16-byte unit of rotated pairs (element-wise when unaligned); HALF/INTERLEAVED, "
               "partial rotary_dim, position ids (clamped), in place; fp32 or activation-dtype tables", NULL)
HK_HIP_VARIANT(hip_ln, HK_OP_LN_FUSED, 0, "hip.ln_fused",
               "row in registers over 1-16 waves, 16-byte buffer loads, fp32 statistics, Philox dropout (packed keep "
               "mask out); "
               "cols <= 65536 bf16/f16, 32768 f32 (8192 unaligned)", NULL)

HK_HIP_VARIANT(hip_ln_bwd, HK_OP_LN_FUSED_BWD, 0, "hip.ln_fused_bwd",
               "row in registers, dgamma/dbeta from per-slot partials summed in slot order (deterministic), a given "
               "dropout mask read instead of Philox; "
               "cols <= 16384 bf16/f16, 8192 f32 (2048 unaligned)", hk_cdna_ln_bwd_workspace)

/* GEMM: the ping-pong kernels first (large problems), then the 4-wave ones (everything else). */
#define HK_GEMM_COVERS                                                                                         \
    "bf16 in (both archs), fp8 in (e4m3fnuz on gfx942, OCP e4m3 on gfx950, per-tensor scales); bf16/f16/f32 out; "  \
    "all transposes; alpha/beta, C aliasing D; any M, N, K"
HK_HIP_VARIANT(hip_gemm_pp, HK_OP_GEMM, HK_CDNA_GEMM_PINGPONG, "hip.gemm.pingpong256",
               "8 waves, 256x256 macro tile in two ping-pong groups (MFMA vs memory phases), double-buffered LDS, "
               "XCD-aware tile order; " HK_GEMM_COVERS "; needs M, N >= 256, enough tiles for half the CUs and "
               "16-byte aligned operands", NULL)
HK_HIP_VARIANT(hip_gemm_il, HK_OP_GEMM, HK_CDNA_GEMM_INTERLEAVED, "hip.gemm.interleaved128",
               "4 waves, 128x128 macro tile, loads and MFMA interleaved, double-buffered LDS; " HK_GEMM_COVERS
               "; unaligned operands element by element", NULL)

HK_INTERNAL const hk_variant *const hk_hip_variants[] = {&hip_rotary, &hip_ln, &hip_ln_bwd, &hip_gemm_pp, &hip_gemm_il,
                                                         NULL};
