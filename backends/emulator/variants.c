/* Emulator variants: the same CDNA kernels, launch plans and variant table as the HIP backend
 * (backends/hip/cdna_plan.h), run on the host by the wave emulator for the context's arch. */
#include "../hip/cdna_plan.h"
#include "tiles/emu/emu.h"

#include <string.h>

static hk_status emu_exec(hk_context *ctx, const hk_cdna_launch *l, void *stream)
{
    (void)stream;
    const int gfx = strcmp(ctx->arch, "gfx950") == 0 ? 950 : 942;
    /* The same kernel set and index as a HIP launch, resolved by name at each launch: next to emulating the
     * kernel, the lookup costs nothing. */
    char name[HK_MAX_KERNEL_NAME];
    if (!l->kernels->name(l->kernel, name, sizeof name))
        return hk_fail(HK_ERR_INTERNAL, "emulator: kernel %zu of its set is not built", l->kernel);
    const hk_emu_kernel *k = hk_emu_find(gfx, name);
    if (!k)
        return hk_fail(HK_ERR_INTERNAL, "emulator: kernel %s is not built for gfx%d", name, gfx);
    if (l->block[0] > (unsigned)k->max_threads || l->block[1] != 1 || l->block[2] != 1)
        return hk_fail(HK_ERR_INTERNAL, "emulator: %s launched with %u threads; it allows %d", name, l->block[0],
                       k->max_threads);
    char msg[320];
    if (hk_emu_run(gfx, k->entry, &l->params, l->grid, l->block[0], msg, sizeof msg) != 0)
        return hk_fail(HK_ERR_INTERNAL, "emulator: %s: %s", name, msg);
    return HK_OK;
}

#define HK_EMU_VARIANT(var, OP, SCHED, name, desc, ws)                                                         \
    HK_CDNA_VARIANT_BODIES(emu_##var, OP, SCHED, emu_exec)                                                     \
    static const hk_variant emu_##var = {OP, "emulator." name, desc, HK_BACKEND_EMULATOR, "gfx942 gfx950",      \
                                         emu_##var##_supports, emu_##var##_run, ws, false};
HK_CDNA_VARIANTS(HK_EMU_VARIANT)

#define HK_EMU_VARIANT_REF(var, OP, SCHED, name, desc, ws) &emu_##var,
HK_INTERNAL const hk_variant *const hk_emulator_variants[] = {HK_CDNA_VARIANTS(HK_EMU_VARIANT_REF) NULL};
