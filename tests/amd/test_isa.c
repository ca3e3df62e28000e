/* ISA/resource check of the CDNA code objects from the build's reports (kernels/cdna/isa_report.py):
 * both archs built, every kernel present, no scratch, no spills, LDS within the arch (64 KiB gfx942,
 * 160 KiB gfx950), and the MFMA atoms compiled to the intended opcodes (gfx950 fp8 with zero scales must be the
 * unscaled v_mfma_*_f8f6f4). argv: the report files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

typedef struct row {
    char arch[16], kernel[96], ops[160];
    long vgpr, agpr, sgpr, vspill, sspill, lds, scratch, threads, mfma, occupancy;
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
            if (sscanf(line, "%15s %95s %95s %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %159s", r->arch, object, r->kernel,
                       &r->vgpr, &r->agpr, &r->sgpr, &r->vspill, &r->sspill, &r->lds, &r->scratch, &r->threads,
                       &r->mfma, &r->occupancy, r->ops) != 14)
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
                for (int c = 0; c < 4; ++c) {
                    snprintf(name, sizeof name, "hk_ln_fwd_%s_%s_%s", types[t], v ? "s" : "v", fwd[c]);
                    if (!find(archs[a], name))
                        fail_msg("%s: %s missing", archs[a], name);
                    snprintf(name, sizeof name, "hk_ln_bwd_%s_%s_%s", types[t], v ? "s" : "v", bwd[c]);
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
    expect_op("gfx942", "hk_probe_bf16_default_32x32x64", "v_mfma_f32_16x16x16_bf16");
    expect_op("gfx942", "hk_probe_fp8_16x16x32", "v_mfma_f32_16x16x32_fp8_fp8");
    expect_op("gfx942", "hk_probe_fp8_32x32x16", "v_mfma_f32_32x32x16_fp8_fp8");
    expect_op("gfx950", "hk_probe_bf16_16x16x32", "v_mfma_f32_16x16x32_bf16");
    expect_op("gfx950", "hk_probe_bf16_32x32x16", "v_mfma_f32_32x32x16_bf16");
    expect_op("gfx950", "hk_probe_bf16_default_32x32x64", "v_mfma_f32_16x16x32_bf16");
    expect_op("gfx950", "hk_probe_fp8_16x16x128", "v_mfma_f32_16x16x128_f8f6f4");
    expect_op("gfx950", "hk_probe_fp8_32x32x64", "v_mfma_f32_32x32x64_f8f6f4");
    /* The memory-bound kernels use no MFMA. */
    for (int i = 0; i < nrows; ++i)
        if (strncmp(rows[i].kernel, "hk_probe_", 9) != 0 && rows[i].mfma != 0)
            fail_msg("%s %s: unexpected MFMA", rows[i].arch, rows[i].kernel);
}

int main(int argc, char **argv)
{
    reports = argv + 1;
    nreports = argc - 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resources),
        cmocka_unit_test(test_kernels_present),
        cmocka_unit_test(test_mfma_opcodes),
    };
    const int n = (int)(sizeof tests / sizeof tests[0]);
    int failed = cmocka_run_group_tests_name("amd-isa", tests, NULL, NULL);
    printf("%d passed, %d failed\n", n - failed, failed);
    return failed ? 1 : 0;
}
