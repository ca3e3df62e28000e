/* The sm_90a GEMM route (backends/cuda/gemm_plan.c hk_gemm_route) over a grid of problems, device counts and
 * workspaces, on the host: whatever it picks must be a kernel that is built for the layout and dtype, hold fp32 accumulation
 * where asked, and take a K split the shape can run (cluster halves, or pooled parts the workspace holds). The
 * choices themselves are tuning (docs/perf/hopper-gemm.md); these are the rules a wrong choice would break silently. The launch
 * plans around the route (hk_gemm_plan_call) are checked the same way: kernel, grid, workspace and tuning overrides. */
#include <setjmp.h> /* cmocka.h needs these first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "../../backends/cuda/gemm_plan.h"


/* One problem: the rules above, with a message naming the problem on the first broken one. */
static void check_route(int64_t m, int64_t n, int64_t k, int trans_a, int trans_b, int mode, int64_t sms, int64_t ws)
{
    const bool fp8 = mode > 0, promote = mode == 2;
    int32_t split = -1;
    const int id = hk_gemm_route(m, n, k, trans_a, trans_b, fp8 ? HK_GEMM_BOX_K : HK_GEMM_BOX_K / 2, promote, sms, ws,
                                 &split);
    char what[160];
    snprintf(what, sizeof what, "%lldx%lldx%lld trans %d%d mode %d sms %lld workspace %lld -> shape %d split %d",
             (long long)m, (long long)n, (long long)k, trans_a, trans_b, mode, (long long)sms, (long long)ws, id,
             (int)split);
    if (id < 0 || id >= HK_GEMM_NSHAPES)
        fail_msg("no such shape: %s", what);
    const hk_gemm_shape *s = &hk_gemm_shapes[id];
    if (!hk_gemm_layout_built(s->lay, s->swap, fp8, trans_a, trans_b, promote))
        fail_msg("%s not built for the layout: %s", s->name, what);
    if (promote && !HK_GEMM_PROMOTE_FITS(s->bm, s->bn))
        fail_msg("%s cannot hold fp32 accumulation: %s", s->name, what);
    const int64_t km = s->swap ? n : m, kn = s->swap ? m : n;
    const int64_t tiles = hk_gemm_cdiv(km, s->bm) * hk_gemm_cdiv(kn, s->bn);
    if (s->pool) {
        if (split < 2 || split > HK_GEMM_POOLED_MAX)
            fail_msg("%s with %d parts: %s", s->name, (int)split, what);
        if (hk_gemm_pooled_bytes(tiles, split, s->bm, s->bn) > ws)
            fail_msg("%s's parts need more than the workspace: %s", s->name, what);
    } else if (split < 1 || split > s->cluster) {
        fail_msg("%s cannot split K %d ways: %s", s->name, (int)split, what);
    }
    /* the finale (gemm.h hk_gemm_finale_parts) of a persistent walk: 2 or 3 parts, each of some k-blocks, over the last
     * two rounds' tiles (more than one round of them, fewer than two: the walk before them fills whole rounds) */
    if (s->persist) {
        const int64_t ctas = tiles < sms ? tiles : sms, kblocks = hk_gemm_cdiv(k, fp8 ? HK_GEMM_BOX_K : HK_GEMM_BOX_K / 2);
        const int32_t parts = hk_gemm_finale_parts(tiles, ctas, kblocks);
        const int64_t finale = hk_gemm_finale_tiles(tiles, ctas);
        if (parts != 0 && (parts < 2 || parts > 3 || kblocks < parts || finale <= ctas || finale >= 2 * ctas ||
                           (tiles - finale) % ctas != 0))
            fail_msg("finale of %d parts over %lld tiles: %s", (int)parts, (long long)finale, what);
    }
}

static void test_route_grid(void **state)
{
    (void)state;
    /* sizes around the route's thresholds: skinny m, tile edges, multiples of 96 and 128, one wave of 64 x 64 tiles */
    static const int64_t mn[] = {1,   16,  17,  33,  48,  64,  65,   96,   100,  128,  192,  200,  256,  384,
                                 448, 512, 576, 640, 736, 768, 1000, 1024, 1152, 1536, 2112, 2176, 2304, 4096, 8192};
    static const int64_t ks[] = {1, 64, 200, 1024, 2048, 4096, 8192, 16384, 32768};
    static const int64_t sms[] = {132, 114, 78};
    static const int64_t wss[] = {0, 1 << 20, 64 << 20};
    const size_t nmn = sizeof mn / sizeof mn[0];
    long checked = 0;
    for (size_t i = 0; i < nmn; ++i)
        for (size_t j = 0; j < nmn; ++j)
            for (size_t l = 0; l < sizeof ks / sizeof ks[0]; ++l)
                for (int t = 0; t < 4; ++t)
                    for (int mode = 0; mode < 3; ++mode) {
                        if (mode > 0 && t != 1) /* e4m3 runs nt only */
                            continue;
                        for (size_t d = 0; d < sizeof sms / sizeof sms[0]; ++d)
                            for (size_t w = 0; w < sizeof wss / sizeof wss[0]; ++w, ++checked)
                                check_route(mn[i], mn[j], ks[l], t >> 1, t & 1, mode, sms[d], wss[w]);
                    }
    assert_true(checked > 100000);
}

/* The pooled sum's launch cap (hk_gemm_pooled_sum_shared): where it caps, the shared memory it asks for fits a CTA,
 * ceil(ctas / sms) CTAs still fit on one SM (so the sum stays one wave) even when the allocation rounds up to 8 KiB,
 * and exactly that many fit with the exact allocation. */
static void test_pooled_sum_cap(void **state)
{
    (void)state;
    static const int64_t sms[] = {132, 114, 78};
    long capped = 0;
    for (size_t d = 0; d < sizeof sms / sizeof sms[0]; ++d)
        for (int64_t bm = 64; bm <= 128; bm += 64)
            for (int64_t ctas = 1; ctas <= 16 * sms[d]; ++ctas) {
                const uint32_t bytes = hk_gemm_pooled_sum_shared(bm, ctas, sms[d]);
                const int64_t per_sm = hk_gemm_cdiv(ctas, sms[d]);
                if (!bytes)
                    continue;
                ++capped;
                assert_int_equal(bm, 128);
                assert_true(bytes <= HK_GEMM_SM_SHARED - 1024);
                const int64_t fit_rounded = HK_GEMM_SM_SHARED / (hk_gemm_cdiv(bytes, 8192) * 8192 + 1024);
                const int64_t fit_exact = HK_GEMM_SM_SHARED / (bytes + 1024);
                if (fit_rounded < per_sm || fit_exact != per_sm)
                    fail_msg("%lld sum CTAs on %lld SMs: %u bytes fit %lld-%lld per SM, want %lld", (long long)ctas,
                             (long long)sms[d], bytes, (long long)fit_rounded, (long long)fit_exact, (long long)per_sm);
            }
    assert_true(capped > 100);
}

/* The last tile column's origin (hk_gemm_col_last): it still reaches column n - 1 and starts at or after 0; moved,
 * an N-contiguous B's boxes start on 16 bytes; with C overlapping D it stays at (tiles_n - 1) * bn; otherwise, where
 * n is ragged and wider than a tile, its boxes end at the edge. Every built width, n up to 8 tiles. */
static void test_last_column(void **state)
{
    (void)state;
    long shifted = 0;
    for (int id = 0; id < HK_GEMM_NSHAPES; ++id)
        for (int64_t n = 1; n <= 8 * hk_gemm_shapes[id].bn; ++n)
            for (int b_mn = 0; b_mn < 2; ++b_mn)
                for (int64_t esize = 1; esize <= 2; ++esize)
                    for (int overlap = 0; overlap < 2; ++overlap) {
                        const int64_t bn = hk_gemm_shapes[id].bn, col = hk_gemm_col_last(n, bn, b_mn, esize, overlap),
                                      plain = (hk_gemm_cdiv(n, bn) - 1) * bn;
                        const bool aligned = !b_mn || (n - bn) * esize % 16 == 0;
                        if (col < 0 || col + bn < n || col > plain || (b_mn && col != plain && col * esize % 16) ||
                            (overlap && col != plain) || (!overlap && n > bn && aligned && col + bn != n))
                            fail_msg("%s n %lld b_mn %d esize %lld overlap %d: last column at %lld", hk_gemm_shapes[id].name,
                                     (long long)n, b_mn, (long long)esize, overlap, (long long)col);
                        shifted += col != plain;
                    }
    assert_true(shifted > 1000);
}

/* C shares memory with D (hk_gemm_overlap): exactly aliased, a row into it, or the other way; not when C is NULL,
 * ends right before D or starts right after D's last element. */
static void test_overlap(void **state)
{
    (void)state;
    static char buf[1 << 16];
    char *d = buf + 4096;
    const int64_t m = 10, n = 30, ld = 40, es = 2, d_bytes = ((m - 1) * ld + n) * es;
    assert_true(hk_gemm_overlap(d, ld, d, ld, m, n, es));
    assert_true(hk_gemm_overlap(d + ld * es, ld, d, ld, m, n, es));
    assert_true(hk_gemm_overlap(d - ld * es, ld, d, ld, m, n, es));
    assert_true(hk_gemm_overlap(d + d_bytes - es, ld, d, ld, m, n, es));
    assert_false(hk_gemm_overlap(NULL, ld, d, ld, m, n, es));
    assert_false(hk_gemm_overlap(d + d_bytes, ld, d, ld, m, n, es));
    assert_false(hk_gemm_overlap(d - d_bytes, ld, d, ld, m, n, es));
}

/* The call's arguments of a problem (mode 0: bf16, 1: e4m3 with fp8_fast_accum, 2: e4m3, 3: f16), as src/validate.c
 * leaves them (packed leading dimensions, 256-byte aligned
 * pointers); none is dereferenced. */
static hk_gemm_args plan_args(int64_t m, int64_t n, int64_t k, int trans_a, int trans_b, int mode, hk_dtype d_type,
                              int64_t ws)
{
    hk_gemm_args a = HK_ARGS_INIT(hk_gemm_args);
    a.m = m;
    a.n = n;
    a.k = k;
    a.a_type = a.b_type = mode == 3 ? HK_DTYPE_F16 : mode ? HK_DTYPE_FP8_E4M3 : HK_DTYPE_BF16;
    a.d_type = d_type;
    a.fp8_fast_accum = mode == 1;
    a.trans_a = trans_a;
    a.trans_b = trans_b;
    a.a = (const void *)(uintptr_t)0x100000;
    a.b = (const void *)(uintptr_t)0x200000;
    a.d = (void *)(uintptr_t)0x300000;
    a.lda = trans_a ? m : k;
    a.ldb = trans_b ? k : n;
    a.ldd = n;
    a.alpha = 1;
    a.scale_a = a.scale_b = 1;
    a.workspace = ws ? (void *)(uintptr_t)0x400000 : NULL;
    a.workspace_size = (size_t)ws;
    return a;
}

/* One plan against the route and the launch rules: the route's shape and split without overrides (f16: the shape of
 * the nearest width built for it where the route's is not, K unsplit), a built kernel of
 * the shape's suffix, the grid of its CTAs, the sum kernel exactly where the parts are parked, a finale only where the
 * workspace holds it, and hk_gemm_plan_workspace's bytes enough for the plan taken with unbounded room. */
static void check_plan(const hk_gemm_args *a, int64_t sms, const hk_tuning *tune, const char *what)
{
    hk_gemm_plan plan;
    hk_gemm_plan_call(a, sms, tune, &plan);
    const hk_gemm_shape *s = &hk_gemm_shapes[plan.shape];
    const bool fp8 = a->a_type == HK_DTYPE_FP8_E4M3;
    if (!tune->gemm_forced) {
        int32_t split = 0;
        int id = hk_gemm_route(a->m, a->n, a->k, a->trans_a, a->trans_b, fp8 ? HK_GEMM_BOX_K : HK_GEMM_BOX_K / 2,
                                     fp8 && !a->fp8_fast_accum, sms, (int64_t)a->workspace_size, &split);
        if (a->a_type == HK_DTYPE_F16 && !HK_GEMM_F16_BUILT(id)) {
            const hk_gemm_shape *r = &hk_gemm_shapes[id];
            id = r->persist ? (r->bn >= 256 ? HK_GEMM_P256 : HK_GEMM_P128) : HK_GEMM_M64N64;
            split = 1;
        }
        if (id != plan.shape || split != plan.split)
            fail_msg("%s: plan %s split %d, route %s split %d", what, s->name, (int)plan.split, hk_gemm_shapes[id].name,
                     (int)split);
    }
    char name[96];
    if (!hk_gemm_kernels.name(plan.kernel, name, sizeof name) || plan.kernel >= hk_gemm_kernels.count)
        fail_msg("%s: kernel %zu of %s is not built", what, plan.kernel, s->name);
    const size_t len = strlen(name), suffix = strlen(s->suffix);
    const char *prefix = fp8 ? "hk_gemm_sm90_e4m3_"
                         : a->a_type == HK_DTYPE_F16 ? "hk_gemm_sm90_f16_"
                                                     : "hk_gemm_sm90_bf16_";
    if (len < suffix || strcmp(name + len - suffix, s->suffix) != 0 || strncmp(name, prefix, strlen(prefix)) != 0)
        fail_msg("%s: kernel %s for shape %s", what, name, s->name);
    const int64_t tiles = plan.tiles_m * plan.tiles_n, units = tiles * plan.split;
    const int64_t ctas = s->persist ? (units < sms ? units : sms) : s->cluster * hk_gemm_cdiv(units, s->cluster);
    if ((int64_t)plan.grid != ctas || plan.block != (unsigned)HK_GEMM_THREADS(s->bm) || plan.shared != s->smem ||
        plan.shared > HK_GEMM_SMEM_LIMIT)
        fail_msg("%s: grid %u block %u shared %u for %s", what, plan.grid, plan.block, plan.shared, s->name);
    if (plan.pooled != (s->pool && plan.split > 1) || plan.params.split != plan.split ||
        (plan.pooled && (plan.params.workspace != a->workspace || plan.params.tma_store ||
                         hk_gemm_pooled_bytes(tiles, plan.split, s->bm, s->bn) > (int64_t)a->workspace_size)))
        fail_msg("%s: pooled %d split %d on %s", what, plan.pooled, (int)plan.split, s->name);
    if (plan.pooled) {
        if (!hk_gemm_kernels.name(plan.sum_kernel, name, sizeof name) || strstr(name, "pooled_sum") == NULL ||
            (int64_t)plan.sum_grid != HK_GEMM_POOLED_SUM_CTAS(tiles, s->bm, s->bn))
            fail_msg("%s: sum kernel %zu, %u CTAs", what, plan.sum_kernel, plan.sum_grid);
    }
    if (plan.params.finale) {
        const int64_t finale = hk_gemm_finale_tiles(tiles, ctas);
        if (!s->persist || plan.pooled || plan.zero_words == 0 || plan.params.workspace != a->workspace ||
            hk_gemm_finale_bytes(finale, plan.params.finale, s->bm, s->bn) > (int64_t)a->workspace_size)
            fail_msg("%s: finale of %d parts on %s", what, (int)plan.params.finale, s->name);
    } else if (plan.zero_words) {
        fail_msg("%s: counters zeroed without a finale", what);
    }
    if (plan.params.m != (s->swap ? a->n : a->m) || plan.params.n != (s->swap ? a->m : a->n) || plan.params.k != a->k)
        fail_msg("%s: problem %dx%dx%d", what, plan.params.m, plan.params.n, plan.params.k);
    /* the workspace it asks for holds the plan taken with unbounded room, which that workspace gets again */
    const size_t want = hk_gemm_plan_workspace(a, sms, tune);
    hk_gemm_args roomy = *a, exact = *a;
    roomy.workspace = (void *)(uintptr_t)0x400000;
    roomy.workspace_size = SIZE_MAX / 2;
    exact.workspace = want ? (void *)(uintptr_t)0x400000 : NULL;
    exact.workspace_size = want;
    hk_gemm_plan p1, p2;
    hk_gemm_plan_call(&roomy, sms, tune, &p1);
    hk_gemm_plan_call(&exact, sms, tune, &p2);
    if (p1.shape != p2.shape || p1.split != p2.split || p1.params.finale != p2.params.finale)
        fail_msg("%s: %zu bytes of workspace plan %s/%d/%d, unbounded %s/%d/%d", what, want, hk_gemm_shapes[p2.shape].name,
                 (int)p2.split, (int)p2.params.finale, hk_gemm_shapes[p1.shape].name, (int)p1.split, (int)p1.params.finale);
}

static void test_plans(void **state)
{
    (void)state;
    static const int64_t mn[] = {1, 17, 64, 100, 128, 200, 256, 512, 736, 1000, 1152, 1536, 2176, 4096};
    static const int64_t ks[] = {0, 64, 1024, 4096, 16384};
    static const int64_t wss[] = {0, 1 << 20, 64 << 20};
    static const hk_dtype outs[] = {HK_DTYPE_BF16, HK_DTYPE_F32, HK_DTYPE_F16};
    const hk_tuning none = {0};
    long checked = 0;
    for (size_t i = 0; i < sizeof mn / sizeof mn[0]; ++i)
        for (size_t j = 0; j < sizeof mn / sizeof mn[0]; ++j)
            for (size_t l = 0; l < sizeof ks / sizeof ks[0]; ++l)
                for (int t = 0; t < 4; ++t)
                    for (int mode = 0; mode < 4; ++mode)
                        for (size_t o = 0; o < 3; ++o)
                            for (size_t w = 0; w < sizeof wss / sizeof wss[0]; ++w, ++checked) {
                                if (((mode == 1 || mode == 2) && (t != 1 || outs[o] == HK_DTYPE_F16)))
                                    continue;
                                const hk_gemm_args a = plan_args(mn[i], mn[j], ks[l], t >> 1, t & 1, mode, outs[o], wss[w]);
                                char what[160];
                                snprintf(what, sizeof what, "%lldx%lldx%lld trans %d%d mode %d out %zu workspace %lld",
                                         (long long)a.m, (long long)a.n, (long long)a.k, t >> 1, t & 1, mode, o,
                                         (long long)wss[w]);
                                check_plan(&a, 132, &none, what);
                            }
    assert_true(checked > 10000);
}

/* Tuning overrides: a forced shape is taken where it is built (and holds fp32 accumulation where asked), with the
 * split it names where the shape can take it (pooled: where the workspace holds the parts), else split 1; persistent
 * shapes take a split of 2 or 3 as the finale's parts where the tiles have a finale and the workspace holds it. */
static void test_forced_plans(void **state)
{
    (void)state;
    static const int64_t problems[][3] = {{130, 300, 1000}, {1100, 1000, 1040}, {1792, 2560, 1008}, {16, 1000, 1040},
                                          {200, 400, 4096}, {4096, 4096, 4096}};
    long forced = 0;
    for (int shape = 0; shape < HK_GEMM_NSHAPES; ++shape)
        for (int32_t split = 0; split <= 17; ++split)
            for (size_t q = 0; q < sizeof problems / sizeof problems[0]; ++q)
                for (int t = 0; t < 4; ++t)
                    for (int mode = 0; mode < 4; ++mode)
                        for (int64_t ws = 0; ws <= (64 << 20); ws += 64 << 20) {
                            if ((mode == 1 || mode == 2) && t != 1)
                                continue;
                            const hk_tuning tune = {.gemm_forced = true, .gemm_shape = shape, .gemm_split = split};
                            const hk_gemm_args a = plan_args(problems[q][0], problems[q][1], problems[q][2], t >> 1, t & 1,
                                                             mode, HK_DTYPE_BF16, ws);
                            const hk_gemm_shape *s = &hk_gemm_shapes[shape];
                            char what[160];
                            snprintf(what, sizeof what, "%s:%d %lldx%lldx%lld trans %d%d mode %d workspace %lld", s->name,
                                     (int)split, (long long)a.m, (long long)a.n, (long long)a.k, t >> 1, t & 1, mode,
                                     (long long)ws);
                            check_plan(&a, 132, &tune, what);
                            hk_gemm_plan plan;
                            hk_gemm_plan_call(&a, 132, &tune, &plan);
                            const bool takes = hk_gemm_plan_built(&a, shape) &&
                                               (mode != 2 || HK_GEMM_PROMOTE_FITS(s->bm, s->bn));
                            if (takes && plan.shape != shape)
                                fail_msg("%s: planned %s", what, hk_gemm_shapes[plan.shape].name);
                            if (!takes)
                                continue;
                            ++forced;
                            const int32_t most = s->cluster == 2 ? 2 : s->pool ? HK_GEMM_POOLED_MAX : 1;
                            if (plan.split != split && !(plan.split == 1 && (split < 1 || split > most || s->pool)))
                                fail_msg("%s: split %d", what, (int)plan.split);
                            if (s->persist && plan.params.finale && plan.params.finale != split && (split == 2 || split == 3))
                                fail_msg("%s: finale of %d parts", what, (int)plan.params.finale);
                        }
    assert_true(forced > 1000);
}

/* Every kernel the set names is a distinct symbol, and the set names at least one kernel of every shape. */
static void test_kernel_names(void **state)
{
    (void)state;
    static char names[39 * HK_GEMM_NSHAPES][96];
    size_t named = 0;
    int per_shape[HK_GEMM_NSHAPES] = {0};
    assert_int_equal(hk_gemm_kernels.count, 39 * HK_GEMM_NSHAPES); /* 3 operand types x 4 layouts x 3 outputs, sums */
    for (size_t i = 0; i < hk_gemm_kernels.count; ++i) {
        char name[96];
        if (!hk_gemm_kernels.name(i, name, sizeof name))
            continue;
        for (size_t j = 0; j < named; ++j)
            if (strcmp(names[j], name) == 0)
                fail_msg("kernels %zu and another are both %s", i, name);
        snprintf(names[named++], sizeof names[0], "%s", name);
        per_shape[i % HK_GEMM_NSHAPES]++;
    }
    for (int s = 0; s < HK_GEMM_NSHAPES; ++s)
        if (!per_shape[s])
            fail_msg("no kernel of %s", hk_gemm_shapes[s].name);
    assert_false(hk_gemm_kernels.name(hk_gemm_kernels.count, (char[96]){0}, 96));
}

/* Shape names parse in any case, whole: "p256" and "P256" name P256, "p25" and "p2560" nothing. */
static void test_shape_names(void **state)
{
    (void)state;
    assert_int_equal(hk_gemm_shape_named("p256", 4), HK_GEMM_P256);
    assert_int_equal(hk_gemm_shape_named("M192N128", 8), HK_GEMM_M192N128);
    assert_int_equal(hk_gemm_shape_named("sk64:2", 4), HK_GEMM_SK64);
    assert_int_equal(hk_gemm_shape_named("p25", 3), -1);
    assert_int_equal(hk_gemm_shape_named("p2560", 5), -1);
    for (int s = 0; s < HK_GEMM_NSHAPES; ++s)
        assert_int_equal(hk_gemm_shape_named(hk_gemm_shapes[s].name, strlen(hk_gemm_shapes[s].name)), s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_route_grid), cmocka_unit_test(test_pooled_sum_cap),
                                       cmocka_unit_test(test_last_column), cmocka_unit_test(test_overlap),
                                       cmocka_unit_test(test_plans),          cmocka_unit_test(test_forced_plans),
                                       cmocka_unit_test(test_kernel_names),   cmocka_unit_test(test_shape_names)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
