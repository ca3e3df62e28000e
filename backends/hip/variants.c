/* HIP variants: the CDNA kernels (kernels/cdna) on gfx942/gfx950, launched from the embedded code objects. */
#include "cdna_plan.h"

static hk_status hip_exec(hk_context *ctx, const hk_cdna_launch *l, void *stream)
{
    void *params[] = {(void *)&l->params};
    return hk_gpu_launch_indexed(ctx, l->kernels, l->kernel, false, l->grid, l->block, 0, stream, params);
}

#define HK_HIP_VARIANT(var, OP, SCHED, name, desc, ws)                                                         \
    HK_CDNA_VARIANT_BODIES(hip_##var, OP, SCHED, hip_exec)                                                     \
    static const hk_variant hip_##var = {OP, "hip." name, desc, HK_BACKEND_HIP, "gfx942 gfx950",               \
                                         hip_##var##_supports, hip_##var##_run, ws, false};
HK_CDNA_VARIANTS(HK_HIP_VARIANT)

#define HK_HIP_VARIANT_REF(var, OP, SCHED, name, desc, ws) &hip_##var,
HK_INTERNAL const hk_variant *const hk_hip_variants[] = {HK_CDNA_VARIANTS(HK_HIP_VARIANT_REF) NULL};
