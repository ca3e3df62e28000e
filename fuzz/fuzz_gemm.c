/* hk_gemm and hk_gemm_workspace_size on arguments decoded from the input (fuzz.h). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    hk_context *ctx = fz_context();
    bool wild = fz_bool(&f);
    struct {
        hk_gemm_args a;
        uint64_t newer[2];
    } box;
    memset(&box, 0, sizeof box);
    hk_gemm_args *g = &box.a;
    g->m = fz_size(&f, wild, 40);
    g->n = fz_size(&f, wild, 40);
    g->k = fz_size(&f, wild, 40);
    g->a_type = fz_dtype(&f);
    g->b_type = fz_bool(&f) ? g->a_type : fz_dtype(&f);
    g->d_type = fz_dtype(&f);
    g->trans_a = fz_bool(&f);
    g->trans_b = fz_bool(&f);
    int64_t a_rows = g->trans_a ? g->k : g->m, a_cols = g->trans_a ? g->m : g->k;
    int64_t b_rows = g->trans_b ? g->n : g->k, b_cols = g->trans_b ? g->k : g->n;
    g->lda = fz_bool(&f) && wild ? fz_size(&f, true, 0) : fz_plus(a_cols, fz_range(&f, -1, 6));
    g->ldb = fz_bool(&f) && wild ? fz_size(&f, true, 0) : fz_plus(b_cols, fz_range(&f, -1, 6));
    g->ldd = fz_plus(g->n, fz_range(&f, -1, 6));
    g->ldc = fz_bool(&f) ? g->ldd : fz_plus(g->n, fz_range(&f, -1, 6));
    g->alpha = fz_float(&f);
    g->beta = fz_bool(&f) ? 0.0f : fz_float(&f);
    g->scale_a = fz_float(&f);
    g->scale_b = fz_float(&f);
    g->fp8_fast_accum = (int)fz_range(&f, -1, 2);
    static const size_t ws[] = {0, 0, 16, 256, 4096, 1 << 16};
    g->workspace_size = ws[fz_bits(&f, 1) % 6];

    size_t given = fz_struct_size(&f, sizeof *g);
    if (given == sizeof *g + 8 && fz_bool(&f))
        box.newer[0] = 1; /* a newer caller's field this library does not know */
    fz_truncate(g, sizeof *g, given);
    bool product = g->m > 0 && g->n > 0 && g->k > 0, out = g->m > 0 && g->n > 0;
    bool must_fail = g->m < 0 || g->n < 0 || g->k < 0;
    fz_tensor t[5] = {
        {&g->a, 1, {a_rows}, {g->lda}, a_cols, hk_dtype_size(g->a_type), product, 0},
        {&g->b, 1, {b_rows}, {g->ldb}, b_cols, hk_dtype_size(g->b_type), product, 0},
        {(const void **)&g->d, 1, {g->m}, {g->ldd}, g->n, hk_dtype_size(g->d_type), out, 0},
        {&g->c, 1, {g->m}, {g->ldc}, g->n, hk_dtype_size(g->d_type), out && g->beta != 0.0f, 0},
        {(const void **)&g->workspace, 0, {0}, {0}, (int64_t)g->workspace_size, 1, false, 0},
    };
    fz_pool pool = {0};
    if (fz_place(&pool, &f, wild, t, 5, &must_fail) && (!wild || must_fail)) {
        fz_truncate(g, sizeof *g, given);
        g->struct_size = given;
        size_t bytes = 0;
        hk_status st = hk_gemm_workspace_size(ctx, g, &bytes);
        fz_expect(st, must_fail, "gemm_workspace_size");
        st = hk_gemm(ctx, g);
        fz_expect(st, must_fail, "gemm");
    }
    fz_release(&pool);
    return 0;
}
