/* The sm_90a GEMM route (kernels/hopper/gemm.h hk_gemm_route) over a grid of problems, device counts and workspaces,
 * on the host: whatever it picks must be a kernel that is built for the layout and dtype, hold fp32 accumulation
 * where asked, and take a K split the shape can run (cluster halves, or pooled parts the workspace holds). The
 * choices themselves are tuning (docs/perf/hopper-gemm.md); these are the rules a wrong choice would break silently. */
#include <setjmp.h> /* cmocka.h needs these first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>

#include "hopper/gemm.h"

typedef struct shape_info {
    const char *name;
    int bm, bn, cluster, persist, swap, lay, pool;
} shape_info;
#define SHAPE_INFO(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool)                                      \
    {#id, bm, bn, cluster, persist, swap, lay, pool},
static const shape_info shapes[HK_GEMM_NSHAPES] = {HK_GEMM_SHAPES(SHAPE_INFO)};

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
    const shape_info *s = &shapes[id];
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
        for (int64_t n = 1; n <= 8 * shapes[id].bn; ++n)
            for (int b_mn = 0; b_mn < 2; ++b_mn)
                for (int64_t esize = 1; esize <= 2; ++esize)
                    for (int overlap = 0; overlap < 2; ++overlap) {
                        const int64_t bn = shapes[id].bn, col = hk_gemm_col_last(n, bn, b_mn, esize, overlap),
                                      plain = (hk_gemm_cdiv(n, bn) - 1) * bn;
                        const bool aligned = !b_mn || (n - bn) * esize % 16 == 0;
                        if (col < 0 || col + bn < n || col > plain || (b_mn && col != plain && col * esize % 16) ||
                            (overlap && col != plain) || (!overlap && n > bn && aligned && col + bn != n))
                            fail_msg("%s n %lld b_mn %d esize %lld overlap %d: last column at %lld", shapes[id].name,
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

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_route_grid), cmocka_unit_test(test_pooled_sum_cap),
                                       cmocka_unit_test(test_last_column), cmocka_unit_test(test_overlap)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
