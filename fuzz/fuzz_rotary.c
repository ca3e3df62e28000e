/* hk_rotary on arguments decoded from the input (fuzz.h). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    hk_context *ctx = fz_context();
    bool wild = fz_bool(&f);
    struct {
        hk_rotary_args a;
        uint64_t newer[2];
    } box;
    memset(&box, 0, sizeof box);
    hk_rotary_args *r = &box.a;
    r->dtype = fz_dtype(&f);
    r->table_type = fz_bool(&f) ? HK_DTYPE_NONE : fz_dtype(&f);
    r->batch = fz_size(&f, wild, 3);
    r->seqlen = fz_size(&f, wild, 9);
    r->heads = fz_size(&f, wild, 4);
    r->head_dim = fz_size(&f, wild, 40);
    r->rotary_dim = fz_bool(&f) ? 0 : fz_size(&f, wild, 40);
    r->table_positions = fz_size(&f, wild, 24);
    r->position_offset = fz_size(&f, wild, 16);
    r->style = (hk_rotary_style)fz_range(&f, 0, 2);
    r->inverse = (int)fz_range(&f, -1, 1);
    int64_t xs[3], os[3];
    fz_strides3(&f, wild, r->x_stride, xs, r->seqlen, r->heads, r->head_dim, true);
    size_t given = fz_struct_size(&f, sizeof *r);
    if (given == sizeof *r + 8 && fz_bool(&f))
        box.newer[0] = 1; /* a newer caller's field this library does not know */
    fz_truncate(r, sizeof *r, given);
    bool in_place = fz_bits(&f, 1) % 4 == 0;
    if (in_place)
        memcpy(r->out_stride, r->x_stride, sizeof xs), memcpy(os, xs, sizeof xs);
    else
        fz_strides3(&f, wild, r->out_stride, os, r->seqlen, r->heads, r->head_dim, true);
    bool rows = r->batch > 0 && r->seqlen > 0 && r->heads > 0;
    int64_t rd = r->rotary_dim ? r->rotary_dim : r->head_dim, table = 0;
    bool must_fail = r->batch < 0 || r->seqlen < 0 || r->heads < 0 || r->head_dim < 1 || r->rotary_dim < 0 ||
                     r->position_offset < 0 || (rows && r->table_positions < 1);
    if (__builtin_mul_overflow(r->table_positions, rd / 2, &table))
        table = -1;
    size_t elem = hk_dtype_size(r->dtype), telem = hk_dtype_size(r->table_type ? r->table_type : HK_DTYPE_F32);
    bool ids = fz_bool(&f);
    fz_tensor t[5] = {
        {&r->x, 3, {r->batch, r->seqlen, r->heads}, {xs[0], xs[1], xs[2]}, r->head_dim, elem, rows, 0},
        {(const void **)&r->out, 3, {r->batch, r->seqlen, r->heads}, {os[0], os[1], os[2]}, r->head_dim, elem, rows, 0},
        {&r->cos, 0, {0}, {0}, table, telem, rows && rd >= 2, 0},
        {&r->sin, 0, {0}, {0}, table, telem, rows && rd >= 2, 0},
        {(const void **)&r->position_ids, 1, {r->batch}, {r->seqlen}, ids ? r->seqlen : 0, sizeof(int32_t), false, 0},
    };
    fz_pool pool = {0};
    if (fz_place(&pool, &f, wild, t, 5, &must_fail) && (!wild || must_fail)) {
        if (in_place && fz_bool(&f))
            r->out = (void *)r->x;
        fz_truncate(r, sizeof *r, given);
        r->struct_size = given;
        fz_expect(hk_rotary(ctx, r), must_fail, "rotary");
    }
    fz_release(&pool);
    return 0;
}
