/* Coverage lists: what each GPU arch must accept. A case that a GPU context answers with HK_ERR_UNSUPPORTED fails
 * when its arch lists it here, and is skipped (SKIP ... in the log) when it does not (th_op_status), so a supports()
 * that stops covering a listed case breaks the suite instead of turning into a skip.
 *
 * One entry a line: {arch, group, pattern}. arch: the context's arch (hk_context_arch: "sm_90a", "gfx942",
 * "gfx950"; the emulator contexts stand for gfx942 and gfx950); group: the suite's th_run group ("gemm", "rotary",
 * "ln_fused", "attention", "cuda_wide"); pattern: an fnmatch(3) glob over the case name (the name before
 * " on <context>"). A pattern starting with '!' takes back the cases it matches from the entries above it of the
 * same arch and group; the last matching entry decides. To cover more (a new kernel, a new op, a new arch), add
 * lines: e.g. {"sm_90a", "attention", "*"} once sm_90a runs every attention case, then '!' lines for the cases it
 * does not take, naming the rule of its supports() that excludes them.
 *
 * The lists say what each arch covers today, read from each variant's supports() and checked under the emulator. */
#include "harness.h"

#include <fnmatch.h>
#include <string.h>

typedef struct th_coverage {
    const char *arch, *group, *pattern;
} th_coverage;

static const th_coverage th_coverage_list[] = {
    /* sm_90a (backends/cuda): GEMM in every operand type (bf16, f16, f32, e4m3, e4m3fnuz), layout, alignment and
     * size to every output type hk.h allows (TMA + wgmma where A and B rows are on 16 bytes and the kernels are built,
     * cuda.gemm.any otherwise); rotary and LayerNorm forward/backward in bf16/f16/f32 at any shape and alignment. */
    {"sm_90a", "gemm", "*"},
    {"sm_90a", "rotary", "*"},
    {"sm_90a", "ln_fused", "*"},
    {"sm_90a", "cuda_wide", "*"},
    {"sm_90a", "attention", "*"},
    {"sm_90a", "attention", "!*f32*"},       /* f32 attention: the CPU backend only */

    /* gfx942 (backends/hip, the emulator): GEMM bf16, f16, f32 and e4m3fnuz in, every layout, alignment and size,
     * to bf16/f16/f32; rotary at any shape; LayerNorm forward up to 65536 (2-byte) / 32768 (f32) aligned columns,
     * 8192 otherwise, backward up to 16384 / 8192 aligned, 2048 otherwise; the attention forward. */
    {"gfx942", "gemm", "*"},
    {"gfx942", "gemm", "!*_e4m3fn_*"},       /* gfx942's MFMA reads FNUZ only */
    {"gfx942", "rotary", "*"},
    {"gfx942", "ln_fused", "*"},
    {"gfx942", "ln_fused", "!ln_bwd_given_random_mask_f32_300x12000_dz_extra"}, /* f32 backward: 8192 columns */
    /* attention forward: bf16/f16, head_dim and head_dim_v up to 256 (192/128), every mask, layout and length */
    {"gfx942", "attention", "*"},
    {"gfx942", "attention", "!bwd_*"},       /* the backward is not built for CDNA */
    {"gfx942", "attention", "!*f32*"},       /* f32 attention: the CPU backend only (dtype rule of supports()) */

    /* gfx950: as gfx942 with OCP e4m3 in place of e4m3fnuz. */
    {"gfx950", "gemm", "*"},
    {"gfx950", "gemm", "!*e4m3fnuz*"},       /* gfx950's MFMA reads OCP e4m3 only */
    {"gfx950", "rotary", "*"},
    {"gfx950", "ln_fused", "*"},
    {"gfx950", "ln_fused", "!ln_bwd_given_random_mask_f32_300x12000_dz_extra"},
    {"gfx950", "attention", "*"},
    {"gfx950", "attention", "!bwd_*"},
    {"gfx950", "attention", "!*f32*"},
};

const char *th_coverage_stale(const char *group, bool (*registered)(const char *name))
{
    for (size_t i = 0; i < sizeof th_coverage_list / sizeof th_coverage_list[0]; ++i) {
        const th_coverage *e = &th_coverage_list[i];
        const char *name = e->pattern + (e->pattern[0] == '!');
        if (strcmp(e->group, group) == 0 && !strpbrk(name, "*?[") && !registered(name))
            return name;
    }
    return NULL;
}

bool th_must_cover(const char *arch, const char *group, const char *name)
{
    bool covered = false;
    for (size_t i = 0; i < sizeof th_coverage_list / sizeof th_coverage_list[0]; ++i) {
        const th_coverage *e = &th_coverage_list[i];
        if (strcmp(e->arch, arch) != 0 || strcmp(e->group, group) != 0)
            continue;
        const bool take_back = e->pattern[0] == '!';
        if (fnmatch(e->pattern + take_back, name, 0) == 0)
            covered = !take_back;
    }
    return covered;
}
