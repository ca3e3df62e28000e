/* hk_rotary against the float64 oracle on every available context. */
#include "harness.h"

#include <math.h>
#include <string.h>

#define BF HK_DTYPE_BF16
#define F16 HK_DTYPE_F16
#define F32 HK_DTYPE_F32

typedef struct rot_case {
    const char *name;
    unsigned kinds;
    hk_dtype dt;
    int64_t batch, seqlen, heads, d, rotary_dim; /* rotary_dim 0: head_dim */
    int interleaved, inverse, in_place;
    int64_t offset;
    int pos_ids;
    int64_t pad; /* padding elements after each head, row and batch of x (out gets pad + 8) */
    int64_t row_pad; /* padding after each token row and batch only, heads packed (out gets row_pad + 8) */
    hk_dtype table;  /* table_type: NONE (F32 by default) or dt */
    int64_t table_shift; /* elements cos and sin start past an aligned allocation (NaN before them) */
} rot_case;

static const rot_case cases[] = {
    {"half", TH_ALL, BF, 2, 64, 4, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"interleaved", TH_ALL, BF, 2, 64, 4, 64, 64, 1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"half_default_rotary_dim_d128", TH_ALL, BF, 1, 32, 2, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    /* whole heads, HALF, with ids, inverse, f32, f16 in place and head counts that are not multiples of 4 */
    {"half_whole_heads_position_ids", TH_ALL, BF, 2, 32, 5, 128, 128, 0, 0, 0, 0, 1, 0, 0, 0, 0},
    {"half_whole_heads_f32_inverse_17", TH_ALL, F32, 2, 16, 17, 64, 64, 0, 1, 0, 3, 0, 0, 0, 0, 0},
    {"half_whole_heads_d32_in_place", TH_ALL, F16, 1, 24, 33, 32, 32, 0, 0, 1, 0, 0, 0, 0, 0, 0},
    {"half_partial_32_of_64", TH_ALL, BF, 2, 48, 3, 64, 32, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"interleaved_partial_16_of_128", TH_ALL, BF, 1, 40, 2, 128, 16, 1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"half_offset", TH_ALL, BF, 2, 33, 2, 64, 64, 0, 0, 0, 100, 0, 0, 0, 0, 0},
    {"interleaved_position_ids", TH_ALL, BF, 3, 17, 2, 64, 64, 1, 0, 0, 0, 1, 0, 0, 0, 0},
    {"half_position_ids_partial", TH_ALL, BF, 2, 32, 4, 128, 64, 0, 0, 0, 0, 1, 0, 0, 0, 0},
    {"half_inverse", TH_ALL, BF, 2, 32, 2, 64, 64, 0, 1, 0, 7, 0, 0, 0, 0, 0},
    {"interleaved_inverse_position_ids", TH_ALL, BF, 2, 32, 2, 64, 48, 1, 1, 0, 0, 1, 0, 0, 0, 0},
    {"half_in_place", TH_ALL, BF, 2, 32, 4, 64, 64, 0, 0, 1, 3, 0, 0, 0, 0, 0},
    {"interleaved_in_place_partial_inverse", TH_ALL, BF, 1, 32, 3, 64, 32, 1, 1, 1, 0, 1, 0, 0, 0, 0},
    {"half_strided", TH_ALL, BF, 2, 32, 3, 64, 64, 0, 0, 0, 5, 0, 8, 0, 0, 0},
    {"interleaved_strided_in_place", TH_ALL, BF, 2, 32, 3, 64, 32, 1, 0, 1, 0, 1, 16, 0, 0, 0},
    {"half_f16", TH_ALL, F16, 2, 32, 2, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"interleaved_f32", TH_ALL, F32, 2, 32, 2, 64, 64, 1, 0, 0, 9, 0, 0, 0, 0, 0},
    {"half_f32_partial_inverse", TH_ALL, F32, 1, 16, 2, 32, 16, 0, 1, 0, 0, 1, 0, 0, 0, 0},
    {"seqlen_1", TH_ALL, BF, 1, 1, 1, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"odd_head_dim_7_rotary_6", TH_ALL, BF, 2, 7, 3, 7, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"odd_head_dim_7_interleaved_in_place", TH_ALL, F32, 1, 7, 1, 7, 4, 1, 0, 1, 2, 0, 0, 0, 0, 0},
    {"odd_strides", TH_NOT_EMU, BF, 2, 15, 3, 64, 64, 1, 0, 0, 0, 0, 3, 0, 0, 0},
    {"long_1000", TH_NOT_EMU, BF, 1, 1000, 8, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"long_1000_heads_127", TH_NOT_EMU, BF, 2, 1000, 127, 64, 32, 1, 1, 0, 12, 0, 8, 0, 0, 0},
    /* packed heads, padded token rows: whole-row copies (the CUDA bulk kernels) with gaps between rows */
    {"packed_heads_padded_rows", TH_NOT_EMU, BF, 3, 100, 4, 64, 64, 0, 0, 0, 0, 1, 0, 24, 0, 0},
    {"packed_heads_padded_rows_partial_f32", TH_NOT_EMU, F32, 2, 50, 3, 64, 32, 1, 1, 0, 4, 0, 0, 12, 0, 0},
    /* many tiles per persistent CTA: every shared-memory stage is reused several times */
    {"many_tiles_f16_interleaved", TH_GPU, F16, 8, 8192, 4, 64, 64, 1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"many_tiles_in_place", TH_GPU, BF, 1, 65536, 4, 64, 64, 0, 1, 1, 0, 1, 0, 0, 0, 0},
    /* lane-mapped kernel with 32 lanes per head; a batch past its grid (z <= 65535) takes the chunk kernel */
    {"half_d256_heads_3_position_ids", TH_ALL, BF, 2, 20, 3, 256, 256, 0, 0, 0, 0, 1, 0, 0, 0, 0},
    {"batch_70000_past_the_row_grid", TH_GPU, BF, 70000, 1, 2, 64, 64, 0, 0, 0, 5, 0, 0, 0, 0, 0},
    /* tables in the activation dtype: the lane-mapped kernel (CUDA), the vector path (partial, ids, in place,
     * inverse) and the scalar path (odd shapes, strides, tables not 16-byte aligned) */
    {"half_table_bf16", TH_ALL, BF, 2, 64, 4, 64, 64, 0, 0, 0, 0, 0, 0, 0, BF, 0},
    {"half_whole_heads_d32_in_place_table_f16", TH_ALL, F16, 1, 24, 33, 32, 32, 0, 0, 1, 0, 0, 0, 0, F16, 0},
    {"half_d256_position_ids_table_bf16", TH_ALL, BF, 2, 20, 3, 256, 256, 0, 0, 0, 0, 1, 0, 0, BF, 0},
    {"half_offset_table_f16", TH_ALL, F16, 2, 33, 2, 64, 64, 0, 0, 0, 100, 0, 0, 0, F16, 0},
    {"interleaved_position_ids_table_bf16", TH_ALL, BF, 3, 17, 2, 64, 64, 1, 0, 0, 0, 1, 0, 0, BF, 0},
    {"half_partial_inverse_table_f16", TH_ALL, F16, 2, 48, 3, 64, 32, 0, 1, 0, 0, 0, 0, 0, F16, 0},
    {"interleaved_in_place_partial_inverse_table_bf16", TH_ALL, BF, 1, 32, 3, 64, 32, 1, 1, 1, 0, 1, 0, 0, BF, 0},
    {"packed_heads_padded_rows_table_bf16", TH_ALL, BF, 3, 100, 4, 64, 64, 0, 0, 0, 0, 1, 0, 24, BF, 0},
    {"long_1000_heads_127_table_bf16", TH_ALL, BF, 2, 1000, 127, 64, 32, 1, 1, 0, 12, 0, 8, 0, BF, 0},
    {"odd_head_dim_7_rotary_6_table_bf16", TH_ALL, BF, 2, 7, 3, 7, 6, 0, 0, 0, 0, 0, 0, 0, BF, 0},
    {"interleaved_odd_strides_table_f16", TH_ALL, F16, 2, 15, 3, 64, 64, 1, 0, 0, 0, 0, 3, 0, F16, 0},
    {"half_misaligned_tables_bf16", TH_ALL, BF, 2, 32, 4, 64, 64, 0, 0, 0, 3, 0, 0, 0, BF, 1},
    {"interleaved_partial_misaligned_tables_f16", TH_ALL, F16, 2, 32, 2, 128, 64, 1, 0, 0, 0, 1, 0, 0, F16, 3},
};

static th_tensor layout(const rot_case *r, int64_t pad, int64_t row_pad, int64_t stride[3])
{
    int64_t sh = r->d + pad, ss = r->heads * sh + pad + row_pad, sb = r->seqlen * ss + pad + row_pad;
    if (pad == 0 && row_pad == 0) {
        stride[0] = stride[1] = stride[2] = 0;
    } else {
        stride[0] = sb;
        stride[1] = ss;
        stride[2] = sh;
    }
    return th_tensor4(r->dt, r->batch, r->seqlen, r->heads, r->d, sb, ss, sh);
}

/* A table of count values (already rounded to t), shift elements past an aligned allocation whose leading
 * elements hold NaN (a kernel that reads before the table produces NaN). */
static const void *upload_table(const th_ctx *c, hk_dtype t, const float *v, int64_t count, int64_t shift)
{
    double *d = th_host(sizeof(double) * (size_t)(count + shift));
    for (int64_t i = 0; i < count + shift; ++i)
        d[i] = i < shift ? NAN : v[i - shift];
    th_tensor tt = th_matrix(t, 1, count + shift, count + shift);
    return (const char *)th_dev_tensor(c, &tt, d) + shift * orc_dtype_size(t);
}

static void run_case(const th_ctx *c, const void *param)
{
    const rot_case *r = param;
    th_rng rng = th_rng_for_case();
    int64_t rd = r->rotary_dim ? r->rotary_dim : r->d, half = rd / 2;
    int64_t ntok = r->batch * r->seqlen, n = ntok * r->heads * r->d;
    int64_t table = r->offset + r->seqlen + 5;

    /* cos/sin of a real rotary table: angle p * 10000^(-2i / rd), rounded to the table type, so that the oracle
     * sees what the library reads and the activation dtype's tolerance applies */
    const hk_dtype tt = r->table ? r->table : F32;
    float *cs = th_host(sizeof(float) * (size_t)(table * half + 1)), *sn = th_host(sizeof(float) * (size_t)(table * half + 1));
    for (int64_t p = 0; p < table; ++p)
        for (int64_t i = 0; i < half; ++i) {
            double angle = (double)p * pow(10000.0, -2.0 * (double)i / (double)rd);
            cs[p * half + i] = (float)orc_round(tt, cos(angle));
            sn[p * half + i] = (float)orc_round(tt, sin(angle));
        }
    int64_t *pos = th_host(sizeof(int64_t) * (size_t)ntok);
    int32_t *pos32 = th_host(sizeof(int32_t) * (size_t)ntok);
    for (int64_t t = 0; t < ntok; ++t) {
        pos[t] = r->pos_ids ? (int64_t)(th_next(&rng) % (uint64_t)table) : r->offset + t % r->seqlen;
        pos32[t] = (int32_t)pos[t];
    }
    double *x = th_host(sizeof(double) * (size_t)n), *ref = th_host(sizeof(double) * (size_t)n);
    th_fill_normal(&rng, r->dt, x, n, 1.0);

    hk_rotary_args args = HK_ARGS_INIT(hk_rotary_args);
    args.dtype = r->dt;
    args.batch = r->batch;
    args.seqlen = r->seqlen;
    args.heads = r->heads;
    args.head_dim = r->d;
    args.rotary_dim = r->rotary_dim;
    th_tensor xt = layout(r, r->pad, r->row_pad, args.x_stride);
    th_tensor ot = r->in_place ? xt : layout(r, r->pad ? r->pad + 8 : 0, r->row_pad ? r->row_pad + 8 : 0, args.out_stride);
    args.x = th_dev_tensor(c, &xt, x);
    if (r->in_place) {
        args.out = (void *)args.x;
        memcpy(args.out_stride, args.x_stride, sizeof args.out_stride);
    } else {
        args.out = th_dev(c, th_bytes(&ot));
    }
    args.table_type = r->table;
    args.cos = upload_table(c, tt, cs, table * half, r->table_shift);
    args.sin = upload_table(c, tt, sn, table * half, r->table_shift);
    args.table_positions = table;
    args.position_offset = r->pos_ids ? 0 : r->offset;
    if (r->pos_ids) {
        int32_t *ids = th_dev(c, sizeof(int32_t) * (size_t)ntok);
        th_upload(c, ids, pos32, sizeof(int32_t) * (size_t)ntok);
        args.position_ids = ids;
    }
    args.style = r->interleaved ? HK_ROTARY_INTERLEAVED : HK_ROTARY_HALF;
    args.inverse = r->inverse;

    th_op_status(c, hk_rotary(c->ctx, &args), "hk_rotary");

    orc_rotary_args o = {r->batch, r->seqlen, r->heads, r->d, rd, r->interleaved, r->inverse};
    orc_rotary(&o, x, cs, sn, pos, ref);

    bool ok = true;
    double *out = th_fetch_tensor(c, &ot, args.out, &ok, "out");
    ok &= th_check("out", out, ref, n, th_tol_for(r->dt, c));
    if (rd < r->d) {
        /* the features past rotary_dim are copied bit for bit */
        int64_t npass = 0;
        double *got = th_host(sizeof(double) * (size_t)n), *want = th_host(sizeof(double) * (size_t)n);
        for (int64_t i = 0; i < n; ++i)
            if (i % r->d >= rd) {
                got[npass] = out[i];
                want[npass++] = x[i];
            }
        ok &= th_check_exact("out (features past rotary_dim)", got, want, npass);
    }
    th_expect(ok, "hk_rotary result");
}

/* Rotating and then rotating back in place returns the input (up to two roundings). */
static void run_roundtrip(const th_ctx *c, const void *param)
{
    (void)param;
    th_rng rng = th_rng_for_case();
    const int64_t B = 2, S = 32, H = 2, D = 64, table = 64;
    int64_t n = B * S * H * D;
    float *cs = th_host(sizeof(float) * table * D / 2), *sn = th_host(sizeof(float) * table * D / 2);
    for (int64_t i = 0; i < table * D / 2; ++i) {
        double angle = th_uniform(&rng, -3.2, 3.2);
        cs[i] = (float)cos(angle);
        sn[i] = (float)sin(angle);
    }
    double *x = th_host(sizeof(double) * (size_t)n);
    th_fill_normal(&rng, HK_DTYPE_BF16, x, n, 1.0);
    th_tensor xt = th_tensor4(HK_DTYPE_BF16, B, S, H, D, S * H * D, H * D, D);
    void *dx = th_dev_tensor(c, &xt, x);
    float *dcos = th_dev(c, sizeof(float) * table * D / 2), *dsin = th_dev(c, sizeof(float) * table * D / 2);
    th_upload(c, dcos, cs, sizeof(float) * table * D / 2);
    th_upload(c, dsin, sn, sizeof(float) * table * D / 2);

    hk_rotary_args args = HK_ARGS_INIT(hk_rotary_args);
    args.dtype = HK_DTYPE_BF16;
    args.batch = B;
    args.seqlen = S;
    args.heads = H;
    args.head_dim = D;
    args.x = dx;
    args.out = dx;
    args.cos = dcos;
    args.sin = dsin;
    args.table_positions = table;
    args.position_offset = 11;
    args.style = HK_ROTARY_INTERLEAVED;
    th_op_status(c, hk_rotary(c->ctx, &args), "hk_rotary (forward)");
    args.inverse = 1;
    th_op_status(c, hk_rotary(c->ctx, &args), "hk_rotary (inverse)");
    bool ok = true;
    double *back = th_fetch_tensor(c, &xt, dx, &ok, "x");
    th_tol tol = th_tol_for(HK_DTYPE_BF16, c);
    ok &= th_check("inverse(forward(x))", back, x, n, tol);
    th_expect(ok, "rotary round trip");
}

int main(void)
{
    th_open_contexts();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        th_add(cases[i].name, run_case, &cases[i], cases[i].kinds);
    th_add("roundtrip_in_place", run_roundtrip, NULL, TH_ALL);
    return th_run("rotary");
}
