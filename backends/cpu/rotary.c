/* CPU rotary embedding: one task per (batch, token, head) row; fp32 math, dtype and table_type through
 * hk_load/store_scalar. */
#include "cpu.h"

/* The table row of token t of batch b. Validation bounds position_offset + seqlen by table_positions (>= 1)
 * but cannot read position_ids, so those are clamped into [0, table_positions) rather than read out of bounds. */
static int64_t hk_rotary_position(const hk_rotary_args *a, int64_t b, int64_t t)
{
    if (!a->position_ids)
        return a->position_offset + t;
    int64_t pos = a->position_ids[b * a->seqlen + t], last = a->table_positions - 1;
    return pos < 0 ? 0 : pos > last ? last : pos;
}

static void hk_rotary_rows(int64_t begin, int64_t end, void *user)
{
    const hk_rotary_args *a = user;
    const int64_t half = a->rotary_dim / 2;
    /* HALF pairs (i, i + half); INTERLEAVED pairs (2i, 2i + 1). Either way pair i uses frequency i. */
    const int64_t step = a->style == HK_ROTARY_INTERLEAVED ? 2 : 1;
    const int64_t partner = a->style == HK_ROTARY_INTERLEAVED ? 1 : half;
    const float sign = a->inverse ? -1.0f : 1.0f;
    const size_t esize = hk_dtype_size(a->dtype);

    for (int64_t row = begin; row < end; ++row) {
        int64_t h = row % a->heads, t = (row / a->heads) % a->seqlen, b = row / (a->heads * a->seqlen);
        int64_t xo = b * a->x_stride[0] + t * a->x_stride[1] + h * a->x_stride[2];
        int64_t oo = b * a->out_stride[0] + t * a->out_stride[1] + h * a->out_stride[2];
        int64_t table = hk_rotary_position(a, b, t) * half;

        for (int64_t i = 0; i < half; ++i) {
            int64_t i1 = i * step, i2 = i1 + partner;
            /* Both inputs are read before either output is written: out may be x. */
            float x1 = hk_load_scalar(a->dtype, a->x, xo + i1);
            float x2 = hk_load_scalar(a->dtype, a->x, xo + i2);
            float c = hk_load_scalar(a->table_type, a->cos, table + i);
            float s = sign * hk_load_scalar(a->table_type, a->sin, table + i);
            hk_store_scalar(a->dtype, a->out, oo + i1, x1 * c - x2 * s);
            hk_store_scalar(a->dtype, a->out, oo + i2, x2 * c + x1 * s);
        }
        /* Features past rotary_dim pass through; in place they already hold their value. */
        const char *src = (const char *)a->x + (size_t)xo * esize;
        char *dst = (char *)a->out + (size_t)oo * esize;
        if (src != dst)
            for (int64_t d = a->rotary_dim; d < a->head_dim; ++d)
                hk_store_scalar(a->dtype, a->out, oo + d, hk_load_scalar(a->dtype, a->x, xo + d));
    }
}

static hk_status hk_cpu_rotary_run(hk_context *ctx, const void *args)
{
    (void)ctx;
    const hk_rotary_args *a = args;
    int64_t rows = a->batch * a->seqlen * a->heads;
    if (rows == 0 || a->head_dim == 0)
        return HK_OK;
    /* Tasks of about 4096 features keep the threading overhead small for short heads. */
    int64_t grain = 4096 / a->head_dim + 1;
    hk_parallel_for(rows, grain, hk_rotary_rows, (void *)a);
    return HK_OK;
}

HK_INTERNAL const hk_variant hk_cpu_rotary = {
    .op = HK_OP_ROTARY,
    .name = "cpu.rotary",
    .description = "reference rotary embedding: HALF and INTERLEAVED, partial rotary_dim, position ids, in place, "
                   "fp32 or activation-dtype tables",
    .backend = HK_BACKEND_CPU,
    .archs = NULL,
    .supports = hk_cpu_supports_all,
    .run = hk_cpu_rotary_run,
    .workspace = NULL,
};
