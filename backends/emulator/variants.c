/* Emulator variants: the same CDNA kernels and launch plans as the HIP backend (backends/hip/cdna_plan.c), run
 * on the host by the wave emulator for the context's arch. */
#include "../hip/cdna_plan.h"
#include "tiles/emu/emu.h"

#include <string.h>

static hk_status emu_exec(hk_context *ctx, const hk_cdna_launch *l, void *stream)
{
    (void)stream;
    const int gfx = strcmp(ctx->arch, "gfx950") == 0 ? 950 : 942;
    const hk_emu_kernel *k = hk_emu_find(gfx, l->kernel);
    if (!k)
        return hk_fail(HK_ERR_INTERNAL, "emulator: kernel %s is not built for gfx%d", l->kernel, gfx);
    if (l->block[0] > (unsigned)k->max_threads || l->block[1] != 1 || l->block[2] != 1)
        return hk_fail(HK_ERR_INTERNAL, "emulator: %s launched with %u threads; it allows %d", l->kernel, l->block[0],
                       k->max_threads);
    char msg[320];
    if (hk_emu_run(gfx, k->entry, &l->params, l->grid, l->block[0], msg, sizeof msg) != 0)
        return hk_fail(HK_ERR_INTERNAL, "emulator: %s: %s", l->kernel, msg);
    return HK_OK;
}

#define HK_EMU_VARIANT(var, OP, SCHED, vname, desc, ws)                                                       \
    static hk_status var##_supports(const hk_context *ctx, const void *args, char *why, size_t why_size)      \
    {                                                                                                          \
        return hk_cdna_supports(ctx, OP, SCHED, args, why, why_size);                                          \
    }                                                                                                          \
    static hk_status var##_run(hk_context *ctx, const void *args) { return hk_cdna_run(ctx, OP, SCHED, args, emu_exec); } \
    static const hk_variant var = {OP, vname, desc, HK_BACKEND_EMULATOR, "gfx942 gfx950", var##_supports, var##_run, ws, false};

HK_EMU_VARIANT(emu_rotary, HK_OP_ROTARY, 0, "emulator.rotary", "hip.rotary's kernel under the wave emulator", NULL)
HK_EMU_VARIANT(emu_ln, HK_OP_LN_FUSED, 0, "emulator.ln_fused", "hip.ln_fused's kernels under the wave emulator", NULL)
HK_EMU_VARIANT(emu_ln_bwd, HK_OP_LN_FUSED_BWD, 0, "emulator.ln_fused_bwd",
               "hip.ln_fused_bwd's kernels under the wave emulator", hk_cdna_ln_bwd_workspace)
HK_EMU_VARIANT(emu_gemm_pp, HK_OP_GEMM, HK_CDNA_GEMM_PINGPONG, "emulator.gemm.pingpong256",
               "hip.gemm.pingpong256's kernels under the wave emulator (8 XCDs)", NULL)
HK_EMU_VARIANT(emu_gemm_il, HK_OP_GEMM, HK_CDNA_GEMM_INTERLEAVED, "emulator.gemm.interleaved128",
               "hip.gemm.interleaved128's kernels under the wave emulator (8 XCDs)", NULL)

HK_INTERNAL const hk_variant *const hk_emulator_variants[] = {&emu_rotary, &emu_ln, &emu_ln_bwd, &emu_gemm_pp,
                                                              &emu_gemm_il, NULL};
