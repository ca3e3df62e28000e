/* ISA/resource check of the CDNA code objects from the build's reports (kernels/cdna/isa_report.py):
 * both archs built, every kernel present, no scratch, no spills, LDS within the arch (64 KiB gfx942,
 * 160 KiB gfx950), and the MFMA atoms compiled to the intended opcodes (gfx950 fp8 with zero scales must be the
 * unscaled v_mfma_*_f8f6f4). GEMM: the main loop issues exactly the MFMAs of one K step of the wave's tile (none
 * outside it), registers fit the waves a block needs per SIMD, LDS is the double-buffered tiles. Attention: the MFMAs
 * of one KV block per wave in the main loop, the designed LDS and waves per SIMD.
 * argv: the report files. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

typedef struct row {
    char arch[16], kernel[96], ops[160];
    long vgpr, agpr, sgpr, vspill, sspill, lds, scratch, threads, mfma, loop_mfma, occupancy;
} row;

static row rows[512];
static int nrows;
static char **reports;
static int nreports;

static void load(void **state)
{
    (void)state;
    nrows = 0;
    for (int i = 0; i < nreports; ++i) {
        FILE *f = fopen(reports[i], "r");
        if (!f)
            fail_msg("cannot open %s", reports[i]);
        char line[512];
        if (!fgets(line, sizeof line, f))
            fail_msg("%s is empty", reports[i]);
        while (fgets(line, sizeof line, f) && nrows < 512) {
            row *r = &rows[nrows];
            char object[96];
            if (sscanf(line, "%15s %95s %95s %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %159s", r->arch, object,
                       r->kernel, &r->vgpr, &r->agpr, &r->sgpr, &r->vspill, &r->sspill, &r->lds, &r->scratch,
                       &r->threads, &r->mfma, &r->loop_mfma, &r->occupancy, r->ops) != 15)
                fail_msg("%s: bad row: %s", reports[i], line);
            ++nrows;
        }
        fclose(f);
    }
}

static const row *find(const char *arch, const char *kernel)
{
    for (int i = 0; i < nrows; ++i)
        if (strcmp(rows[i].arch, arch) == 0 && strcmp(rows[i].kernel, kernel) == 0)
            return &rows[i];
    return NULL;
}

static void test_resources(void **state)
{
    load(state);
    assert_true(nrows > 0);
    for (int i = 0; i < nrows; ++i) {
        const row *r = &rows[i];
        const long lds_max = strcmp(r->arch, "gfx950") == 0 ? 160 * 1024 : 64 * 1024;
        if (r->scratch != 0 || r->vspill != 0 || r->sspill != 0 || r->lds > lds_max || r->occupancy < 1)
            fail_msg("%s %s: scratch %ld, spills %ld/%ld, LDS %ld (max %ld), occupancy %ld", r->arch, r->kernel,
                     r->scratch, r->vspill, r->sspill, r->lds, lds_max, r->occupancy);
        print_message("%s %-36s vgpr %3ld agpr %3ld sgpr %3ld lds %6ld occupancy %ld\n", r->arch, r->kernel, r->vgpr,
                      r->agpr, r->sgpr, r->lds, r->occupancy);
    }
}

static void test_kernels_present(void **state)
{
    load(state);
    static const char *const archs[] = {"gfx942", "gfx950"};
    static const char *const types[] = {"bf16", "f16", "f32"};
    static const char *const fwd[] = {"w1n2", "w1n8", "w4n8", "w16n8"}, *const bwd[] = {"w1n2", "w2n4", "w4n4", "w8n4"};
    for (int a = 0; a < 2; ++a) {
        int arch_rows = 0;
        for (int i = 0; i < nrows; ++i)
            arch_rows += strcmp(rows[i].arch, archs[a]) == 0;
        if (arch_rows == 0) {
            print_message("%s not in the amd_archs option: not checked\n", archs[a]);
            continue;
        }
        assert_non_null(find(archs[a], "hk_ln_bwd_reduce"));
        char name[96];
        for (int t = 0; t < 3; ++t)
            for (int v = 0; v < 2; ++v) {
                snprintf(name, sizeof name, "hk_rotary_%s_%s", types[t], v ? "s" : "v");
                if (!find(archs[a], name))
                    fail_msg("%s: %s missing", archs[a], name);
                /* bf16/f16 with cos/sin in their own type */
                snprintf(name, sizeof name, "hk_rotary_%s_%s_t16", types[t], v ? "s" : "v");
                if (t < 2 && !find(archs[a], name))
                    fail_msg("%s: %s missing", archs[a], name);
                for (int c = 0; c < 4; ++c) {
                    snprintf(name, sizeof name, "hk_ln_fwd_%s_%s_%s", types[t], v ? "s" : "v", fwd[c]);
                    if (!find(archs[a], name))
                        fail_msg("%s: %s missing", archs[a], name);
                    snprintf(name, sizeof name, "hk_ln_bwd_%s_%s_%s", types[t], v ? "s" : "v", bwd[c]);
                    if (!find(archs[a], name))
                        fail_msg("%s: %s missing", archs[a], name);
                    snprintf(name, sizeof name, "hk_ln_bwd_mask_%s_%s_%s", types[t], v ? "s" : "v", bwd[c]);
                    if (!find(archs[a], name))
                        fail_msg("%s: %s missing", archs[a], name);
                }
            }
    }
}

static void expect_op(const char *arch, const char *kernel, const char *op)
{
    const row *r = find(arch, kernel);
    if (!r)
        return; /* arch not built */
    if (strcmp(r->ops, op) != 0)
        fail_msg("%s %s: MFMA opcodes %s, expected %s", arch, kernel, r->ops, op);
}

static void test_mfma_opcodes(void **state)
{
    load(state);
    expect_op("gfx942", "hk_probe_bf16_16x16x16", "v_mfma_f32_16x16x16_bf16");
    expect_op("gfx942", "hk_probe_bf16_32x32x8", "v_mfma_f32_32x32x8_bf16");
    expect_op("gfx942", "hk_probe_f16_16x16x16", "v_mfma_f32_16x16x16_f16");
    expect_op("gfx942", "hk_probe_f16_32x32x8", "v_mfma_f32_32x32x8_f16");
    expect_op("gfx950", "hk_probe_f16_16x16x32", "v_mfma_f32_16x16x32_f16");
    expect_op("gfx950", "hk_probe_f16_32x32x16", "v_mfma_f32_32x32x16_f16");
    expect_op("gfx942", "hk_probe_bf16_default_32x32x64", "v_mfma_f32_16x16x16_bf16");
    expect_op("gfx942", "hk_probe_fp8_16x16x32", "v_mfma_f32_16x16x32_fp8_fp8");
    expect_op("gfx942", "hk_probe_fp8_32x32x16", "v_mfma_f32_32x32x16_fp8_fp8");
    expect_op("gfx950", "hk_probe_bf16_16x16x32", "v_mfma_f32_16x16x32_bf16");
    expect_op("gfx950", "hk_probe_bf16_32x32x16", "v_mfma_f32_32x32x16_bf16");
    expect_op("gfx950", "hk_probe_bf16_default_32x32x64", "v_mfma_f32_16x16x32_bf16");
    expect_op("gfx950", "hk_probe_fp8_16x16x128", "v_mfma_f32_16x16x128_f8f6f4");
    expect_op("gfx950", "hk_probe_fp8_32x32x64", "v_mfma_f32_32x32x64_f8f6f4");
    /* GEMM: one opcode per arch and input type. */
    for (int i = 0; i < nrows; ++i) {
        const row *r = &rows[i];
        if (strncmp(r->kernel, "hk_gemm_", 8) != 0)
            continue;
        const int gfx950 = strcmp(r->arch, "gfx950") == 0, fp8 = strncmp(r->kernel, "hk_gemm_fp8", 11) == 0;
        const int f16 = strncmp(r->kernel, "hk_gemm_f16", 11) == 0, f32 = strncmp(r->kernel, "hk_gemm_f32", 11) == 0;
        expect_op(r->arch, r->kernel, fp8 ? (gfx950 ? "v_mfma_f32_32x32x64_f8f6f4" : "v_mfma_f32_16x16x32_fp8_fp8")
                                      : f16 ? (gfx950 ? "v_mfma_f32_16x16x32_f16" : "v_mfma_f32_16x16x16_f16")
                                      : f32 ? "v_mfma_f32_16x16x4_f32"
                                            : (gfx950 ? "v_mfma_f32_16x16x32_bf16" : "v_mfma_f32_16x16x16_bf16"));
    }
    /* The memory-bound kernels use no MFMA. */
    for (int i = 0; i < nrows; ++i)
        if (strncmp(rows[i].kernel, "hk_probe_", 9) != 0 && strncmp(rows[i].kernel, "hk_gemm_", 8) != 0 &&
            strncmp(rows[i].kernel, "hk_attn_", 8) != 0 && rows[i].mfma != 0)
            fail_msg("%s %s: unexpected MFMA", rows[i].arch, rows[i].kernel);
}

/* GEMM kernels (kernels/cdna/gemm.hip): hk_gemm_<bf16|f16|f32|fp8>_<nn|nt|tn|tt>_<pp256|i128|i128_u>. Per arch and
 * input
 * type the K step BK (one LDS row: 64 bytes on gfx942, 128 on gfx950) and the MFMA instruction's M x N x K; per
 * schedule the block (threads, macro tile) and the wave tile. One K step of a wave is TM x TN x BK of MACs. */
static void test_gemm_main_loop(void **state)
{
    load(state);
    static const char *const archs[] = {"gfx942", "gfx950"}, *const ins[] = {"bf16", "fp8", "f16", "f32"};
    static const char *const layouts[] = {"nn", "nt", "tn", "tt"}, *const scheds[] = {"pp256", "i128", "i128_u"};
    for (int a = 0; a < 2; ++a)
        for (int t = 0; t < 4; ++t)
            for (int s = 0; s < 3; ++s)
                for (int l = 0; l < 4; ++l) {
                    char name[96];
                    snprintf(name, sizeof name, "hk_gemm_%s_%s_%s", ins[t], layouts[l], scheds[s]);
                    const row *r = find(archs[a], name);
                    if (!r) {
                        bool built = false;
                        for (int i = 0; i < nrows; ++i)
                            built = built || strcmp(rows[i].arch, archs[a]) == 0;
                        if (built)
                            fail_msg("%s: %s missing", archs[a], name);
                        continue;
                    }
                    const int elem = t == 1 ? 1 : t == 3 ? 4 : 2, row_bytes = a ? 128 : 64, bk = row_bytes / elem;
                    /* [arch][bf16, fp8, f16, f32]: f16 as bf16 */
                    static const int inst[2][4][3] = {{{16, 16, 16}, {16, 16, 32}, {16, 16, 16}, {16, 16, 4}},
                                                      {{16, 16, 32}, {32, 32, 64}, {16, 16, 32}, {16, 16, 4}}};
                    const int *mnk = inst[a][t];
                    const int pp = s == 0, tm = pp ? 128 : 64, tn = 64, tile = pp ? 256 : 128;
                    const long want = (long)tm * tn * bk / (mnk[0] * mnk[1] * mnk[2]);
                    const long lds = 2L * (2 * tile) * row_bytes, regs = (r->vgpr + 3) / 4 * 4 + r->agpr;
                    if (r->loop_mfma != want || r->mfma != want)
                        fail_msg("%s %s: %ld MFMAs in the main loop, %ld in all; one K step of %dx%dx%d is %ld", archs[a],
                                 name, r->loop_mfma, r->mfma, tm, tn, bk, want);
                    if (r->lds != lds)
                        fail_msg("%s %s: LDS %ld bytes, expected two stages of %d x %d-byte rows = %ld", archs[a], name,
                                 r->lds, 2 * tile, row_bytes, lds);
                    if (regs > (pp ? 256 : 512) || r->threads != (pp ? 512 : 256))
                        fail_msg("%s %s: %ld VGPR + AGPR for %ld threads (2 waves per SIMD allow 256, 1 allows 512)",
                                 archs[a], name, regs, r->threads);
                    print_message("%s %-24s MFMA/K-step %3ld (%s), VGPR %3ld + AGPR %3ld, LDS %6ld, waves/SIMD %ld\n",
                                  archs[a], name, r->loop_mfma, r->ops, r->vgpr, r->agpr, r->lds, r->occupancy);
                }
}

/* Attention forward kernels (kernels/cdna/attn_fwd.hip): hk_attn_fwd_<bf16|f16>_d<D>_<DV>[_u]. Waves of QW query
 * rows (32 up to D = 128, else 16) over KV blocks of 64 keys: 8 waves in ping-pong for the aligned kernels up to
 * D = 128 (two waves per SIMD by design), else 4 (what the LDS allows, up to 2, for the aligned ones; the unaligned
 * ones, element by element, may take more registers). Per KV block a wave issues the MFMAs of S^T (64 x QW x D) and
 * O^T (DV x QW x 64), 16 x 16 x 16 instructions on gfx942 and 16 x 16 x 32 on gfx950, all inside the main loop but
 * for the ping-pong's last O^T, which follows it. LDS: two stages of K (64 x D) and V^T (DV x 64) where the arch's
 * LDS holds them, else one. */
static void test_attn_main_loop(void **state)
{
    load(state);
    static const char *const archs[] = {"gfx942", "gfx950"}, *const types[] = {"bf16", "f16"};
    static const int dims[4][2] = {{64, 64}, {128, 128}, {192, 128}, {256, 256}};
    int checked = 0;
    for (int a = 0; a < 2; ++a) {
        bool built = false;
        for (int i = 0; i < nrows; ++i)
            built = built || strcmp(rows[i].arch, archs[a]) == 0;
        if (!built)
            continue;
        const long lds_max = a ? 160 * 1024 : 64 * 1024, inst_k = a ? 32 : 16;
        for (int t = 0; t < 2; ++t)
            for (int d = 0; d < 4; ++d)
                for (int u = 0; u < 2; ++u) {
                    char name[96], op[64];
                    snprintf(name, sizeof name, "hk_attn_fwd_%s_d%d_%d%s", types[t], dims[d][0], dims[d][1],
                             u ? "_u" : "");
                    const row *r = find(archs[a], name);
                    if (!r)
                        fail_msg("%s: %s missing", archs[a], name);
                    const long D = dims[d][0], DV = dims[d][1], qw = D > 128 ? 16 : 32, bn = 64;
                    const bool pp = !u && D <= 128;
                    const long pv = DV * qw * bn / (16 * 16 * inst_k), want = bn * qw * D / (16 * 16 * inst_k) + pv;
                    const long stage = bn * (D + DV) * 2, lds = 2 * stage <= lds_max ? 2 * stage : stage;
                    const long regs = (r->vgpr + 3) / 4 * 4 + r->agpr, by_lds = lds_max / lds;
                    const long waves = pp ? 2 : u ? 1 : by_lds < 2 ? by_lds : 2;
                    snprintf(op, sizeof op, "v_mfma_f32_16x16x%ld_%s", inst_k, types[t]);
                    if (r->loop_mfma != want || r->mfma != want + (pp ? pv : 0))
                        fail_msg("%s %s: %ld MFMAs in the main loop, %ld in all; one KV block of a wave is %ld",
                                 archs[a], name, r->loop_mfma, r->mfma, want);
                    if (strcmp(r->ops, op) != 0)
                        fail_msg("%s %s: MFMA opcodes %s, expected %s", archs[a], name, r->ops, op);
                    if (r->lds != lds)
                        fail_msg("%s %s: LDS %ld bytes, expected %ld", archs[a], name, r->lds, lds);
                    if (regs > 512 || r->threads != (pp ? 512 : 256) || r->occupancy < waves)
                        fail_msg("%s %s: %ld VGPR + AGPR, %ld threads, %ld waves per SIMD (designed: %ld)", archs[a],
                                 name, regs, r->threads, r->occupancy, waves);
                    print_message("%s %-28s MFMA/KV block %3ld, VGPR %3ld + AGPR %3ld, LDS %6ld, waves/SIMD %ld\n",
                                  archs[a], name, r->loop_mfma, r->vgpr, r->agpr, r->lds, r->occupancy);
                    ++checked;
                }
    }
    assert_true(checked > 0);
}

int main(int argc, char **argv)
{
    reports = argv + 1;
    nreports = argc - 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resources),
        cmocka_unit_test(test_kernels_present),
        cmocka_unit_test(test_mfma_opcodes),
        cmocka_unit_test(test_gemm_main_loop),
        cmocka_unit_test(test_attn_main_loop),
    };
    const int n = (int)(sizeof tests / sizeof tests[0]);
    int failed = cmocka_run_group_tests_name("amd-isa", tests, NULL, NULL);
    printf("%d passed, %d failed\n", n - failed, failed);
    return failed ? 1 : 0;
}
