/* HIP variants: the CDNA kernels (kernels/cdna) on gfx942/gfx950, launched from the embedded code objects. */
#include "cdna_plan.h"

static hk_status hip_exec(hk_context *ctx, const hk_cdna_launch *l, void *stream)
{
    void *params[] = {(void *)&l->params};
    return hk_gpu_launch(ctx, l->kernel, l->grid, l->block, 0, stream, params);
}

#define HK_HIP_VARIANT(var, OP, vname, desc, ws)                                                                   \
    static hk_status var##_supports(const hk_context *ctx, const void *args, char *why, size_t why_size)      \
    {                                                                                                          \
        (void)ctx;                                                                                             \
        return hk_cdna_supports(OP, args, why, why_size);                                                      \
    }                                                                                                          \
    static hk_status var##_run(hk_context *ctx, const void *args) { return hk_cdna_run(ctx, OP, args, hip_exec); } \
    static const hk_variant var = {OP, vname, desc, HK_BACKEND_HIP, "gfx942 gfx950", var##_supports, var##_run, ws};

static size_t ln_bwd_workspace(const hk_context *ctx, const void *args)
{
    (void)ctx;
    return hk_cdna_ln_bwd_workspace(args);
}

HK_HIP_VARIANT(hip_rotary, HK_OP_ROTARY, "hip.rotary",
               "one thread per 16-byte unit of rotated pairs (element-wise when unaligned); HALF/INTERLEAVED, "
               "partial rotary_dim, position ids (clamped), in place", NULL)
HK_HIP_VARIANT(hip_ln, HK_OP_LN_FUSED, "hip.ln_fused",
               "row in registers over 1-16 waves, 16-byte buffer loads, fp32 statistics, Philox dropout; "
               "cols <= 65536 bf16/f16, 32768 f32 (8192 unaligned)", NULL)

HK_HIP_VARIANT(hip_ln_bwd, HK_OP_LN_FUSED_BWD, "hip.ln_fused_bwd",
               "row in registers, dgamma/dbeta from per-slot partials summed in slot order (deterministic); "
               "cols <= 16384 bf16/f16, 8192 f32 (2048 unaligned)", ln_bwd_workspace)

HK_INTERNAL const hk_variant *const hk_hip_variants[] = {&hip_rotary, &hip_ln, &hip_ln_bwd, NULL};
