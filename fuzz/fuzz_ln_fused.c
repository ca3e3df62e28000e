/* hk_ln_fused on arguments decoded from the input (fuzz.h). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    hk_context *ctx = fz_context();
    bool wild = fz_bool(&f);
    struct {
        hk_ln_fused_args a;
        uint64_t newer[2];
    } box;
    memset(&box, 0, sizeof box);
    hk_ln_fused_args *l = &box.a;
    l->norm = (hk_norm_type)fz_range(&f, 0, 2);
    l->dtype = fz_dtype(&f);
    l->param_type = fz_bool(&f) ? HK_DTYPE_NONE : fz_dtype(&f);
    l->rows = fz_size(&f, wild, 12);
    l->cols = fz_size(&f, wild, 100);
    l->x_stride = fz_row_stride(&f, l->cols);
    l->residual_stride = fz_row_stride(&f, l->cols);
    l->y_stride = fz_row_stride(&f, l->cols);
    l->residual_out_stride = fz_row_stride(&f, l->cols);
    l->epsilon = fz_bool(&f) ? 0.0f : fz_float(&f);
    l->dropout_p = fz_bool(&f) ? 0.0f : (float)fz_range(&f, 0, 10) / 10.0f;
    l->seed = fz_bits(&f, 8);
    l->offset = fz_bits(&f, 8);
    size_t given = fz_struct_size(&f, sizeof *l);
    if (given == sizeof *l + 8 && fz_bool(&f))
        box.newer[0] = 1; /* a newer caller's field this library does not know */
    fz_truncate(l, sizeof *l, given);
    bool rows = l->rows > 0 && l->cols > 0;
    bool must_fail = l->rows < 0 || l->cols < 0;
    size_t elem = hk_dtype_size(l->dtype);
    size_t param = hk_dtype_size(l->param_type ? l->param_type : HK_DTYPE_F32);
    int64_t words = l->cols >= 0 && l->cols < INT64_MAX - 31 ? HK_DROPOUT_MASK_WORDS(l->cols) : -1;
    bool opt[5] = {fz_bool(&f), fz_bool(&f), fz_bool(&f), fz_bool(&f), fz_bool(&f)};
#define LN_ROWS(p, s) {(const void **)&l->p, 1, {l->rows}, {l->s ? l->s : l->cols}, l->cols, elem, rows, 0}
    fz_tensor t[9] = {
        LN_ROWS(x, x_stride),
        {&l->residual, 1, {l->rows}, {l->residual_stride ? l->residual_stride : l->cols}, opt[0] ? l->cols : 0, elem, false, 0},
        {&l->gamma, 0, {0}, {0}, l->cols, param, rows, 0},
        {&l->beta, 0, {0}, {0}, opt[1] ? l->cols : 0, param, false, 0},
        LN_ROWS(y, y_stride),
        {(const void **)&l->residual_out, 1, {l->rows}, {l->residual_out_stride ? l->residual_out_stride : l->cols},
         opt[2] ? l->cols : 0, elem, false, 0},
        {(const void **)&l->mean, 0, {0}, {0}, opt[3] ? l->rows : 0, sizeof(float), false, 0},
        {(const void **)&l->rstd, 0, {0}, {0}, opt[3] ? l->rows : 0, sizeof(float), false, 0},
        {(const void **)&l->dropout_mask, 1, {l->rows}, {words}, opt[4] ? words : 0, sizeof(uint32_t), false, 0},
    };
#undef LN_ROWS
    fz_pool pool = {0};
    if (fz_place(&pool, &f, wild, t, 9, &must_fail) && (!wild || must_fail)) {
        fz_truncate(l, sizeof *l, given);
        l->struct_size = given;
        fz_expect(hk_ln_fused(ctx, l), must_fail, "ln_fused");
    }
    fz_release(&pool);
    return 0;
}
