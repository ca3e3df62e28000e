/* The CDNA kernels under the wave emulator (gfx942 and gfx950) against the CPU backend through the public API.
 * Rotary and fused LayerNorm: random inputs, odd sizes (element-wise kernels), padded strides, in place,
 * out-of-range position ids, every LayerNorm configuration size class, and the dropout mask bit for bit; rotary
 * tables in fp32 and in the 16-bit activation dtype.
 * GEMM: both schedules (8-wave ping-pong 256 x 256, 4-wave 128 x 128 aligned and unaligned), every transpose,
 * square / skinny / ragged shapes, alpha/beta with C separate or aliasing D, bf16 / f16 / f32 out, fp8 with scales
 * (the arch's e4m3), K = 0; every element of D (padding included) checked after poisoning it with NaN. The
 * emulator itself checks every fragment read for bank conflicts and every LDS access for cross-wave races. */
#include "hk.h"

#include <math.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static hk_context *cpu, *emu[2];
static const char *const emu_arch[2] = {"gfx942", "gfx950"};
static uint64_t rng = 0x9E3779B97F4A7C15ull;

static double uniform(double lo, double hi)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return lo + (hi - lo) * (double)(rng >> 11) / 9007199254740992.0;
}

static uint16_t f32_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7FFF + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}
static float load_el(hk_dtype t, const void *p, int64_t i)
{
    if (t == HK_DTYPE_F32)
        return ((const float *)p)[i];
    uint16_t b = ((const uint16_t *)p)[i];
    if (t == HK_DTYPE_BF16) {
        uint32_t u = (uint32_t)b << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    _Float16 h;
    memcpy(&h, &b, 2);
    return (float)h;
}
static void store_el(hk_dtype t, void *p, int64_t i, float v)
{
    if (t == HK_DTYPE_F32)
        ((float *)p)[i] = v;
    else if (t == HK_DTYPE_BF16)
        ((uint16_t *)p)[i] = f32_bf16(v);
    else {
        _Float16 h = (_Float16)v;
        memcpy((uint16_t *)p + i, &h, 2);
    }
}

/* Every buffer of a test, freed by its teardown (also after a failed check). */
static struct {
    hk_context *ctx;
    void *ptr;
} allocs[256];
static int nallocs;

static void *buffer(hk_context *c, size_t bytes)
{
    void *p = NULL;
    assert_true(nallocs < (int)(sizeof allocs / sizeof allocs[0]));
    assert_int_equal(hk_malloc(c, &p, bytes ? bytes : 1), HK_OK);
    allocs[nallocs].ctx = c;
    allocs[nallocs++].ptr = p;
    memset(p, 0xFF, bytes); /* NaN in every float format: unwritten outputs show */
    return p;
}

static int free_buffers(void **state)
{
    (void)state;
    for (int i = 0; i < nallocs; ++i)
        hk_free(allocs[i].ctx, allocs[i].ptr);
    nallocs = 0;
    return 0;
}
static void *random_buffer(hk_context *c, hk_dtype t, int64_t n, double lo, double hi)
{
    void *p = buffer(c, (size_t)n * hk_dtype_size(t));
    for (int64_t i = 0; i < n; ++i)
        store_el(t, p, i, (float)uniform(lo, hi));
    return p;
}
/* Random multiples of 1/q in [-1, 1]. */
static void *random_quantized(hk_dtype t, int64_t n, int q)
{
    void *p = buffer(cpu, (size_t)n * hk_dtype_size(t));
    for (int64_t i = 0; i < n; ++i)
        store_el(t, p, i, (float)floor(uniform(-q, q + 1)) / (float)q);
    return p;
}
static void *clone(hk_context *c, const void *src, size_t bytes)
{
    void *p = buffer(c, bytes);
    memcpy(p, src, bytes);
    return p;
}

/* Elementwise closeness in the storage type: fp32 rounding differences (summation order) may move a value by
 * about one unit of the output type, relative to the value or, where terms of the output's size cancel, to the
 * output's RMS. NaN on one side only fails. */
static void expect_close(const char *what, const char *arch, hk_dtype t, const void *got, const void *want, int64_t n,
                         double rtol)
{
    const double unit = t == HK_DTYPE_BF16 ? 1.0 / 128 : t == HK_DTYPE_F16 ? 1.0 / 1024 : 1e-5;
    double sum2 = 0;
    int64_t finite = 0;
    for (int64_t i = 0; i < n; ++i) {
        const double w = load_el(t, want, i);
        if (isfinite(w))
            sum2 += w * w, ++finite;
    }
    const double rms = finite ? sqrt(sum2 / (double)finite) : 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const double g = load_el(t, got, i), w = load_el(t, want, i);
        if (isnan(g) && isnan(w))
            continue;
        if (!(fabs(g - w) <= (unit + rtol) * (fabs(w) + rms)))
            fail_msg("%s on %s: element %lld is %.9g, cpu %.9g", what, arch, (long long)i, g, w);
    }
}
/* Same zero pattern (the dropout mask): bit-identical decisions. */
static void expect_same_zeros(const char *what, const char *arch, hk_dtype t, const void *got, const void *want, int64_t n)
{
    int64_t zeros = 0;
    for (int64_t i = 0; i < n; ++i) {
        const bool gz = load_el(t, got, i) == 0.0f, wz = load_el(t, want, i) == 0.0f;
        if (gz != wz)
            fail_msg("%s on %s: dropout decision differs at element %lld", what, arch, (long long)i);
        zeros += wz;
    }
    assert_true(zeros > 0);
}

/* ---------------------------------------------------------------- rotary */
typedef struct rot_case {
    hk_dtype t;
    int64_t b, s, h, d, r, pad;
    hk_rotary_style style;
    int inverse, ids, in_place;
} rot_case;

static const rot_case rot_cases[] = {
    {HK_DTYPE_BF16, 2, 5, 3, 64, 64, 0, HK_ROTARY_HALF, 0, 0, 0},        /* 16-byte path */
    {HK_DTYPE_F16, 1, 7, 2, 40, 24, 8, HK_ROTARY_INTERLEAVED, 0, 1, 0},  /* padded, partial, ids */
    {HK_DTYPE_F32, 2, 3, 5, 18, 10, 3, HK_ROTARY_HALF, 1, 1, 0},         /* element-wise, inverse */
    {HK_DTYPE_BF16, 3, 4, 2, 34, 30, 2, HK_ROTARY_INTERLEAVED, 1, 0, 1}, /* odd, in place */
    {HK_DTYPE_F32, 1, 9, 4, 64, 32, 0, HK_ROTARY_HALF, 0, 0, 1},         /* 16-byte, in place, copy skipped */
};

static void run_rotary(const rot_case *k, int e)
{
    const int64_t hs = k->d + k->pad, ss = k->h * hs, bs = k->s * ss, n = k->b * bs, P = 16;
    const size_t bytes = (size_t)n * hk_dtype_size(k->t);
    void *x = random_buffer(cpu, k->t, n, -2, 2);
    int32_t *ids = buffer(cpu, (size_t)(k->b * k->s) * 4);
    for (int64_t i = 0; i < k->b * k->s; ++i)
        ids[i] = (int32_t)(i * 5 % 21) - 2; /* some below 0, some >= P: clamped on the GPU and the CPU */
    /* The same x and angles with fp32 tables, then (bf16, f16) with tables in the activation dtype. */
    const hk_dtype tables[2] = {HK_DTYPE_F32, k->t};
    for (int t = 0; t < (k->t == HK_DTYPE_F32 ? 1 : 2); ++t) {
        const hk_dtype tt = tables[t];
        const size_t table_bytes = (size_t)(P * k->r / 2) * hk_dtype_size(tt);
        void *cs = buffer(cpu, table_bytes), *sn = buffer(cpu, table_bytes);
        for (int64_t i = 0; i < P * k->r / 2; ++i) {
            store_el(tt, cs, i, (float)cos((double)i * 0.37));
            store_el(tt, sn, i, (float)sin((double)i * 0.37));
        }
        void *out_cpu = k->in_place ? clone(cpu, x, bytes) : buffer(cpu, bytes);
        void *out_emu = k->in_place ? clone(emu[e], x, bytes) : buffer(emu[e], bytes);
        hk_rotary_args a = HK_ARGS_INIT(hk_rotary_args);
        a.dtype = k->t;
        a.batch = k->b, a.seqlen = k->s, a.heads = k->h, a.head_dim = k->d, a.rotary_dim = k->r;
        a.x_stride[0] = a.out_stride[0] = bs, a.x_stride[1] = a.out_stride[1] = ss;
        a.x_stride[2] = a.out_stride[2] = hs;
        a.cos = cs, a.sin = sn, a.table_type = tt, a.table_positions = P, a.position_offset = 3;
        a.position_ids = k->ids ? ids : NULL;
        a.style = k->style, a.inverse = k->inverse;
        a.x = k->in_place ? out_cpu : x, a.out = out_cpu;
        if (hk_rotary(cpu, &a) != HK_OK)
            fail_msg("rotary on cpu: %s", hk_last_error());
        a.x = k->in_place ? out_emu : x, a.out = out_emu;
        if (hk_rotary(emu[e], &a) != HK_OK)
            fail_msg("rotary on %s with %s tables: %s", emu_arch[e], hk_dtype_name(tt), hk_last_error());
        /* Padding: rotary touches only logical elements, so compare the whole span (both keep 0xFF or x there). */
        expect_close("rotary", emu_arch[e], k->t, out_emu, out_cpu, n, 0);
    }
}

static void test_rotary(void **state)
{
    (void)state;
    for (int e = 0; e < 2; ++e)
        for (size_t i = 0; i < sizeof rot_cases / sizeof rot_cases[0]; ++i)
            run_rotary(&rot_cases[i], e);
}

/* ---------------------------------------------------------------- fused LayerNorm forward */
typedef struct ln_case {
    hk_dtype t, param;
    hk_norm_type norm;
    int64_t rows, cols, pad;
    int residual, residual_out, beta;
    float p;
} ln_case;

static const ln_case ln_cases[] = {
    {HK_DTYPE_BF16, HK_DTYPE_F32, HK_NORM_LAYER, 37, 1000, 0, 1, 1, 1, 0.1f},    /* 1 wave per row */
    {HK_DTYPE_F16, HK_DTYPE_F16, HK_NORM_RMS, 5, 77, 3, 1, 1, 0, 0.3f},          /* element-wise, odd */
    {HK_DTYPE_F32, HK_DTYPE_F32, HK_NORM_LAYER, 3, 3000, 4, 0, 0, 1, 0.0f},      /* 4 waves per row */
    {HK_DTYPE_BF16, HK_DTYPE_BF16, HK_NORM_LAYER, 2, 20000, 8, 1, 1, 1, 0.5f},   /* 16 waves per row */
    {HK_DTYPE_BF16, HK_DTYPE_F32, HK_NORM_RMS, 7, 256, 0, 0, 1, 0, 0.4f},        /* mask via residual_out */
    {HK_DTYPE_F32, HK_DTYPE_F32, HK_NORM_LAYER, 9, 6001, 1, 1, 1, 1, 0.2f},      /* element-wise, wide */
};

static void run_ln(const ln_case *k, int e)
{
    const int64_t ld = k->cols + k->pad, n = k->rows * ld;
    const size_t bytes = (size_t)n * hk_dtype_size(k->t);
    void *x = random_buffer(cpu, k->t, n, -3, 3), *res = random_buffer(cpu, k->t, n, -1, 1);
    void *gamma = random_buffer(cpu, k->param, k->cols, 0.5, 1.5), *beta = random_buffer(cpu, k->param, k->cols, -1, 1);
    hk_context *ctx[2] = {cpu, emu[e]};
    void *y[2], *ro[2];
    float *mean[2], *rstd[2];
    for (int i = 0; i < 2; ++i) {
        y[i] = buffer(ctx[i], bytes);
        ro[i] = buffer(ctx[i], bytes);
        mean[i] = buffer(ctx[i], (size_t)k->rows * 4);
        rstd[i] = buffer(ctx[i], (size_t)k->rows * 4);
        hk_ln_fused_args a = HK_ARGS_INIT(hk_ln_fused_args);
        a.norm = k->norm, a.dtype = k->t, a.param_type = k->param, a.rows = k->rows, a.cols = k->cols;
        a.x = x, a.x_stride = ld;
        a.residual = k->residual ? res : NULL, a.residual_stride = ld;
        a.gamma = gamma, a.beta = k->beta ? beta : NULL;
        a.y = y[i], a.y_stride = ld;
        a.residual_out = k->residual_out ? ro[i] : NULL, a.residual_out_stride = ld;
        a.mean = k->norm == HK_NORM_LAYER ? mean[i] : NULL, a.rstd = rstd[i];
        a.dropout_p = k->p, a.seed = 0x1234567890ull, a.offset = 77;
        hk_status st = hk_ln_fused(ctx[i], &a);
        if (st != HK_OK)
            fail_msg("ln_fused on %s: %s", i ? emu_arch[e] : "cpu", hk_last_error());
    }
    expect_close("ln_fused y", emu_arch[e], k->t, y[1], y[0], n, 1e-5);
    if (k->residual_out)
        expect_close("ln_fused residual_out", emu_arch[e], k->t, ro[1], ro[0], n, 0);
    if (k->residual_out && !k->residual && k->p > 0)
        expect_same_zeros("ln_fused dropout", emu_arch[e], k->t, ro[1], ro[0], n);
    if (k->norm == HK_NORM_LAYER)
        expect_close("ln_fused mean", emu_arch[e], HK_DTYPE_F32, mean[1], mean[0], k->rows, 1e-5);
    expect_close("ln_fused rstd", emu_arch[e], HK_DTYPE_F32, rstd[1], rstd[0], k->rows, 1e-5);
}

static void test_ln_fwd(void **state)
{
    (void)state;
    for (int e = 0; e < 2; ++e)
        for (size_t i = 0; i < sizeof ln_cases / sizeof ln_cases[0]; ++i)
            run_ln(&ln_cases[i], e);
}

/* ---------------------------------------------------------------- backward */
static const ln_case bwd_cases[] = {
    {HK_DTYPE_BF16, HK_DTYPE_F32, HK_NORM_LAYER, 37, 1000, 0, 1, 1, 1, 0.1f},  /* dz_extra, dresidual, dbeta */
    {HK_DTYPE_F32, HK_DTYPE_F32, HK_NORM_RMS, 300, 130, 2, 0, 0, 0, 0.0f},     /* element-wise, > 256 rows */
    {HK_DTYPE_F16, HK_DTYPE_F16, HK_NORM_LAYER, 5, 4096, 8, 0, 1, 0, 0.25f},   /* 2 waves per row, mask via dx */
    {HK_DTYPE_BF16, HK_DTYPE_BF16, HK_NORM_LAYER, 3, 16000, 0, 1, 0, 1, 0.0f}, /* 8 waves per row */
};

static void run_ln_bwd(const ln_case *k, int e)
{
    const int64_t ld = k->cols + k->pad, n = k->rows * ld;
    const size_t bytes = (size_t)n * hk_dtype_size(k->t);
    void *dy = random_buffer(cpu, k->t, n, -1, 1), *z = random_buffer(cpu, k->t, n, -2, 2);
    void *extra = random_buffer(cpu, k->t, n, -0.5, 0.5), *gamma = random_buffer(cpu, k->param, k->cols, 0.5, 1.5);
    float *mean = random_buffer(cpu, HK_DTYPE_F32, k->rows, -0.2, 0.2);
    float *rstd = random_buffer(cpu, HK_DTYPE_F32, k->rows, 0.5, 2);
    hk_context *ctx[2] = {cpu, emu[e]};
    void *dx[2], *dres[2];
    float *dg[2], *db[2];
    for (int i = 0; i < 2; ++i) {
        dx[i] = buffer(ctx[i], bytes);
        dres[i] = buffer(ctx[i], bytes);
        dg[i] = buffer(ctx[i], (size_t)k->cols * 4);
        db[i] = buffer(ctx[i], (size_t)k->cols * 4);
        hk_ln_fused_bwd_args a = HK_ARGS_INIT(hk_ln_fused_bwd_args);
        a.norm = k->norm, a.dtype = k->t, a.param_type = k->param, a.rows = k->rows, a.cols = k->cols;
        a.dy = dy, a.dy_stride = ld, a.z = z, a.z_stride = ld;
        a.dz_extra = k->residual ? extra : NULL, a.dz_extra_stride = ld;
        a.gamma = gamma, a.mean = k->norm == HK_NORM_LAYER ? mean : NULL, a.rstd = rstd;
        a.dx = dx[i], a.dx_stride = ld;
        a.dresidual = k->residual_out ? dres[i] : NULL, a.dresidual_stride = ld;
        a.dgamma = dg[i], a.dbeta = k->beta && k->norm == HK_NORM_LAYER ? db[i] : NULL;
        a.dropout_p = k->p, a.seed = 99, a.offset = 5;
        size_t ws = 0;
        assert_int_equal(hk_ln_fused_bwd_workspace_size(ctx[i], &a, &ws), HK_OK);
        a.workspace = ws ? buffer(ctx[i], ws) : NULL, a.workspace_size = ws;
        hk_status st = hk_ln_fused_bwd(ctx[i], &a);
        if (st != HK_OK)
            fail_msg("ln_fused_bwd on %s: %s", i ? emu_arch[e] : "cpu", hk_last_error());
    }
    expect_close("ln_fused_bwd dx", emu_arch[e], k->t, dx[1], dx[0], n, 1e-4);
    if (k->p > 0)
        expect_same_zeros("ln_fused_bwd dropout", emu_arch[e], k->t, dx[1], dx[0], n);
    if (k->residual_out)
        expect_close("ln_fused_bwd dresidual", emu_arch[e], k->t, dres[1], dres[0], n, 1e-4);
    expect_close("ln_fused_bwd dgamma", emu_arch[e], HK_DTYPE_F32, dg[1], dg[0], k->cols, 1e-4);
    if (k->beta && k->norm == HK_NORM_LAYER)
        expect_close("ln_fused_bwd dbeta", emu_arch[e], HK_DTYPE_F32, db[1], db[0], k->cols, 1e-4);
}

static void test_ln_bwd(void **state)
{
    (void)state;
    for (int e = 0; e < 2; ++e)
        for (size_t i = 0; i < sizeof bwd_cases / sizeof bwd_cases[0]; ++i)
            run_ln_bwd(&bwd_cases[i], e);
}

/* ---------------------------------------------------------------- GEMM
 * Operands are random multiples of 1/64 in [-1, 1] (bf16) or of 1/8 in [-2, 2] (fp8): every product and partial
 * sum is exact in fp32, so the emulated kernels (any summation order) and the CPU reference agree to the output's
 * rounding; a dropped or doubled product shows in the f32 cases. */
enum { C_NONE, C_SEPARATE, C_ALIAS };

typedef struct gemm_case {
    const char *name;
    int64_t m, n, k;
    int ta, tb, fp8;
    hk_dtype d;
    int64_t pad_a, pad_b, pad_d; /* leading dimension = smallest allowed + pad */
    float alpha, beta;
    int c_mode;
    float scale_a, scale_b;
} gemm_case;

#define BF HK_DTYPE_BF16
#define F16 HK_DTYPE_F16
#define F32 HK_DTYPE_F32

static const gemm_case gemm_cases[] = {
    /* 8-wave ping-pong, 256 x 256 tiles: every transpose, ragged M, N, K */
    {"pp_square_nt", 256, 256, 192, 0, 1, 0, BF, 0, 0, 0, 1, 0, C_NONE, 1, 1},
    {"pp_square_nn", 256, 256, 192, 0, 0, 0, BF, 0, 0, 0, 1, 0, C_NONE, 1, 1},
    {"pp_square_tn", 256, 256, 192, 1, 0, 0, F32, 0, 0, 0, 1, 0, C_NONE, 1, 1},
    {"pp_square_tt", 256, 256, 192, 1, 1, 0, BF, 0, 0, 0, 1, 0, C_NONE, 1, 1},
    {"pp_ragged_nt", 300, 264, 200, 0, 1, 0, F32, 8, 16, 4, 1, 0, C_NONE, 1, 1},
    {"pp_ragged_nn_beta", 264, 300, 136, 0, 0, 0, BF, 0, 8, 0, 2.0f, -1.0f, C_SEPARATE, 1, 1},
    /* 4-wave, 128 x 128 tiles: skinny and small */
    {"skinny_m1_nt", 1, 300, 256, 0, 1, 0, BF, 0, 0, 0, 1, 0, C_NONE, 1, 1},
    {"skinny_m16_nn", 16, 272, 160, 0, 0, 0, F32, 0, 0, 0, 1, 0, C_NONE, 1, 1},
    {"skinny_m100_nt", 100, 200, 136, 0, 1, 0, BF, 0, 0, 0, 1, 0, C_NONE, 1, 1},
    {"skinny_n1_tn", 136, 1, 64, 1, 0, 0, F32, 0, 0, 0, 1, 0, C_NONE, 1, 1},
    {"small_tn", 136, 120, 64, 1, 0, 0, BF, 0, 0, 0, 1, 0, C_NONE, 1, 1},
    {"small_tt_f32", 120, 136, 72, 1, 1, 0, F32, 0, 0, 0, 1, 0, C_NONE, 1, 1},
    {"small_tn", 136, 120, 64, 1, 0, 0, BF, 0, 0, 0, 1, 0, C_NONE, 1, 1},
    {"small_tt_f32", 120, 136, 72, 1, 1, 0, F32, 0, 0, 0, 1, 0, C_NONE, 1, 1},
    /* unaligned operands (element-wise loads): odd K, odd M with A transposed, padded lda */
    {"u_ragged_tn", 129, 257, 300, 1, 0, 0, BF, 0, 0, 0, 1, 0, C_NONE, 1, 1},
    {"u_ragged_tt_f32", 77, 45, 99, 1, 1, 0, F32, 3, 1, 5, 1, 0, C_NONE, 1, 1},
    {"u_lda_pad", 64, 64, 64, 0, 1, 0, BF, 3, 0, 0, 1, 0, C_NONE, 1, 1},
    /* alpha / beta, output types */
    {"beta_alias_f32", 136, 120, 96, 0, 1, 0, F32, 0, 0, 4, -0.5f, 1.5f, C_ALIAS, 1, 1},
    {"beta_alias_bf16_pp", 256, 272, 64, 0, 0, 0, BF, 0, 0, 0, 0.75f, 0.5f, C_ALIAS, 1, 1},
    {"f16_out", 64, 80, 64, 0, 1, 0, F16, 0, 0, 0, 1, 0, C_NONE, 1, 1},
    {"k0_beta", 50, 40, 0, 0, 1, 0, BF, 0, 0, 0, 1, 2.0f, C_SEPARATE, 1, 1},
    /* fp8 (e4m3fnuz on gfx942, OCP e4m3 on gfx950) with per-tensor scales */
    {"fp8_pp_nt", 256, 256, 256, 0, 1, 1, BF, 0, 0, 0, 1, 0, C_NONE, 0.5f, 4.0f},
    {"fp8_pp_nn_f32", 264, 256, 128, 0, 0, 1, F32, 0, 0, 0, 1, 0, C_NONE, 0.25f, 2.0f},
    {"fp8_pp_tt", 256, 264, 144, 1, 1, 1, BF, 0, 0, 0, 1, 0, C_NONE, 2.0f, 0.125f},
    {"fp8_nn_f32", 100, 160, 256, 0, 0, 1, F32, 0, 0, 0, 1, 0, C_NONE, 0.25f, 2.0f},
    {"fp8_nt", 48, 128, 192, 0, 1, 1, BF, 0, 0, 0, 1, 0, C_NONE, 3.0f, 0.5f},
    {"fp8_u_ragged_beta", 130, 70, 333, 0, 1, 1, BF, 0, 0, 0, 1, 0.5f, C_ALIAS, 1.5f, 1.0f},
    {"fp8_u_tn_f32", 33, 65, 48, 1, 0, 1, F32, 0, 0, 0, 1, 0, C_NONE, 1, 1},
};

/* The arch's e4m3 code of v (a multiple of 1/8 with |v| <= 2, exact in both formats). */
static uint8_t fp8_code(int gfx950, double v)
{
    for (int b = 0; b < 256; ++b) {
        const int sgn = b >> 7, E = (b >> 3) & 15, m = b & 7, bias = gfx950 ? 7 : 8;
        if (!gfx950 && b == 0x80)
            continue;
        const double mag = E == 0 ? ldexp(m, 1 - bias - 3) : ldexp(8 + m, E - bias - 3);
        if ((sgn ? -mag : mag) == v && !(v == 0 && sgn))
            return (uint8_t)b;
    }
    fail_msg("no fp8 code for %g", v);
    return 0;
}

static void *gemm_operand(int fp8, int gfx950, int64_t n)
{
    if (!fp8)
        return random_quantized(BF, n, 64);
    uint8_t code[33];
    for (int v = -16; v <= 16; ++v)
        code[v + 16] = fp8_code(gfx950, v / 8.0);
    uint8_t *p = buffer(cpu, (size_t)n);
    for (int64_t i = 0; i < n; ++i)
        p[i] = code[(int)floor(uniform(0, 33))];
    return p;
}

/* One case on both emulated archs. bf16 operands are shared (one CPU reference); fp8 ones are drawn per arch, in
 * its format. */
static void run_gemm(const gemm_case *g)
{
    const int64_t a_rows = g->ta ? g->k : g->m, a_cols = g->ta ? g->m : g->k;
    const int64_t b_rows = g->tb ? g->n : g->k, b_cols = g->tb ? g->k : g->n;
    const int64_t lda = a_cols + g->pad_a, ldb = b_cols + g->pad_b, ldd = g->n + g->pad_d;
    const size_t d_bytes = (size_t)(g->m * ldd) * hk_dtype_size(g->d);
    void *c = g->c_mode == C_NONE ? NULL : random_quantized(g->d, g->m * ldd, 64);
    void *a = NULL, *b = NULL, *want = NULL;
    for (int e = 0; e < 2; ++e) {
        const hk_dtype in = !g->fp8 ? BF : e ? HK_DTYPE_FP8_E4M3 : HK_DTYPE_FP8_E4M3FNUZ;
        if (e == 0 || g->fp8) {
            a = gemm_operand(g->fp8, e, a_rows * lda);
            b = gemm_operand(g->fp8, e, b_rows * ldb);
            want = NULL;
        }
        hk_context *ctx[2] = {cpu, emu[e]};
        for (int i = want ? 1 : 0; i < 2; ++i) {
            void *d = g->c_mode == C_ALIAS ? clone(ctx[i], c, d_bytes) : buffer(ctx[i], d_bytes);
            hk_gemm_args args = HK_ARGS_INIT(hk_gemm_args);
            args.m = g->m, args.n = g->n, args.k = g->k;
            args.a_type = args.b_type = in, args.d_type = g->d;
            args.trans_a = g->ta, args.trans_b = g->tb;
            args.a = a, args.lda = lda, args.b = b, args.ldb = ldb;
            args.c = g->c_mode == C_ALIAS ? d : c, args.ldc = ldd;
            args.d = d, args.ldd = ldd;
            args.alpha = g->alpha, args.beta = g->beta;
            args.scale_a = g->fp8 ? g->scale_a : 0, args.scale_b = g->fp8 ? g->scale_b : 0;
            if (hk_gemm(ctx[i], &args) != HK_OK)
                fail_msg("gemm %s on %s: %s", g->name, i ? emu_arch[e] : "cpu", hk_last_error());
            if (i == 0)
                want = d;
            else {
                char what[96];
                snprintf(what, sizeof what, "gemm %s", g->name);
                expect_close(what, emu_arch[e], g->d, d, want, g->m * ldd, 0);
            }
        }
    }
}

static void test_gemm(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof gemm_cases / sizeof gemm_cases[0]; ++i) {
        run_gemm(&gemm_cases[i]);
        free_buffers(NULL);
    }
}

/* The ragged shape at full depth: 257 x 129 x 4095 (odd K: the element-wise loads), A row-major with B transposed
 * and not. */
static void test_gemm_ragged_deep(void **state)
{
    (void)state;
    static const gemm_case deep[] = {
        {"ragged_deep_nt", 257, 129, 4095, 0, 1, 0, F32, 0, 0, 0, 1, 0, C_NONE, 1, 1},
        {"ragged_deep_nn", 257, 129, 4095, 0, 0, 0, BF, 0, 0, 0, 1, 0, C_NONE, 1, 1},
    };
    for (size_t i = 0; i < sizeof deep / sizeof deep[0]; ++i) {
        run_gemm(&deep[i]);
        free_buffers(NULL);
    }
}

int main(void)
{
    hk_context_options o = HK_ARGS_INIT(hk_context_options);
    o.backend = HK_BACKEND_CPU;
    if (hk_context_create(&o, &cpu) != HK_OK)
        return 1;
    for (int e = 0; e < 2; ++e) {
        o.backend = HK_BACKEND_EMULATOR;
        o.arch = emu_arch[e];
        if (hk_context_create(&o, &emu[e]) != HK_OK) {
            fprintf(stderr, "emulator %s: %s\n", emu_arch[e], hk_last_error());
            return 1;
        }
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_rotary, free_buffers),
        cmocka_unit_test_teardown(test_ln_fwd, free_buffers),
        cmocka_unit_test_teardown(test_ln_bwd, free_buffers),
        cmocka_unit_test_teardown(test_gemm, free_buffers),
        cmocka_unit_test_teardown(test_gemm_ragged_deep, free_buffers),
    };
    const int n = (int)(sizeof tests / sizeof tests[0]);
    int failed = cmocka_run_group_tests_name("amd-emulated-ops", tests, NULL, NULL);
    for (int e = 0; e < 2; ++e)
        hk_context_destroy(emu[e]);
    hk_context_destroy(cpu);
    printf("%d passed, %d failed\n", n - failed, failed);
    return failed ? 1 : 0;
}
