/* hk_ln_fused / hk_ln_fused_bwd against the float64 oracle on every available context; the dropout mask is
 * checked bit for bit against the oracle's own Philox stream. */
#include "harness.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#define BF HK_DTYPE_BF16
#define F16 HK_DTYPE_F16
#define F32 HK_DTYPE_F32

typedef struct ln_case {
    const char *name;
    unsigned kinds;
    hk_dtype dt, param; /* param NONE: F32 by default */
    int rms;
    int64_t rows, cols;
    int residual, beta, residual_out, stats; /* optional tensors present */
    float p;
    uint64_t seed, offset;
    float eps; /* 0: default 1e-5 */
    int64_t pad; /* padding elements after each row (0: default strides) */
    int dz_extra, dresidual; /* bwd only */
    int mask; /* fwd: also write dropout_mask; bwd: 1 pass the Philox mask as dropout_mask, 2 pass a random one */
} ln_case;

#define SEED1 0x0123456789ABCDEFull
#define OFF1 0x0000000500000007ull

static const ln_case fwd_cases[] = {
    {"ln_p0", TH_ALL, BF, F32, 0, 64, 128, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"ln_p0_default_param_type", TH_ALL, BF, HK_DTYPE_NONE, 0, 16, 256, 0, 1, 1, 1, 0, 0, 0, 1e-3f, 0, 0, 0, 0},
    {"ln_p0_param_bf16", TH_ALL, BF, BF, 0, 32, 128, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"rms_p0", TH_ALL, BF, F32, 1, 64, 256, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"rms_p0_residual_param_bf16", TH_ALL, BF, BF, 1, 16, 128, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"ln_dropout_0.1_residual", TH_ALL, BF, F32, 0, 32, 256, 1, 1, 1, 1, 0.1f, SEED1, OFF1, 0, 0, 0, 0, 0},
    {"ln_dropout_0.5_no_residual", TH_ALL, BF, F32, 0, 16, 128, 0, 1, 1, 1, 0.5f, 42, 0, 0, 0, 0, 0, 0},
    {"rms_dropout_0.5", TH_ALL, BF, F32, 1, 32, 128, 1, 0, 1, 1, 0.5f, 7, 3, 0, 0, 0, 0, 0},
    {"rms_dropout_0.9_no_residual", TH_ALL, BF, BF, 1, 8, 256, 0, 0, 1, 1, 0.9f, 0xFFFFFFFF00000001ull, 1ull << 40, 0, 0, 0, 0, 0},
    {"ln_dropout_y_only", TH_ALL, BF, F32, 0, 8, 128, 1, 1, 0, 0, 0.2f, 99, 100, 0, 0, 0, 0, 0},
    {"ln_f16_dropout", TH_ALL, F16, F16, 0, 16, 128, 1, 1, 1, 1, 0.25f, 5, 6, 0, 0, 0, 0, 0},
    {"ln_f32", TH_ALL, F32, F32, 0, 16, 128, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"rms_f32_dropout", TH_ALL, F32, F32, 1, 16, 96, 1, 0, 1, 1, 0.3f, 1234, 5678, 0, 0, 0, 0, 0},
    {"ln_strided", TH_ALL, BF, F32, 0, 16, 128, 1, 1, 1, 1, 0.1f, 11, 12, 0, 8, 0, 0, 0},
    {"ln_1x1", TH_ALL, BF, F32, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"rms_1x1_dropout", TH_ALL, F32, F32, 1, 1, 1, 0, 0, 1, 1, 0.5f, 3, 0, 0, 0, 0, 0, 0},
    {"ln_7x127_dropout", TH_ALL, BF, F32, 0, 7, 127, 1, 1, 1, 1, 0.15f, 77, 1, 0, 0, 0, 0, 0},
    {"rms_odd_strides", TH_NOT_EMU, BF, F32, 1, 33, 127, 1, 0, 1, 1, 0.1f, 8, 9, 0, 3, 0, 0, 0},
    {"ln_1000x1000_dropout", TH_NOT_EMU, BF, BF, 0, 1000, 1000, 1, 1, 1, 1, 0.1f, SEED1, OFF1, 0, 0, 0, 0, 0},
    {"rms_1000x1000", TH_NOT_EMU, BF, F32, 1, 1000, 1000, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
    /* the mask written beside the output: bits equal the Philox decisions, bits past cols are 0 */
    {"ln_dropout_mask_out", TH_ALL, BF, F32, 0, 32, 256, 1, 1, 1, 1, 0.1f, SEED1, OFF1, 0, 0, 0, 0, 1},
    {"rms_dropout_mask_out_7x127_f32", TH_ALL, F32, F32, 1, 7, 127, 0, 0, 0, 1, 0.3f, 5, 9, 0, 0, 0, 0, 1},
    {"ln_p0_mask_out_all_kept", TH_ALL, F16, F16, 0, 5, 40, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1},
    {"ln_dropout_mask_out_1000x1000", TH_NOT_EMU, BF, BF, 0, 1000, 1000, 1, 1, 1, 1, 0.1f, 3, 4, 0, 8, 0, 0, 1},
};

static const ln_case bwd_cases[] = {
    {"ln_bwd_p0", TH_ALL, BF, F32, 0, 64, 128, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0},
    {"ln_bwd_p0_no_dbeta_dz_extra", TH_ALL, BF, F32, 0, 32, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0},
    {"rms_bwd_p0", TH_ALL, BF, F32, 1, 64, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0},
    {"ln_bwd_dropout_0.1", TH_ALL, BF, F32, 0, 32, 256, 0, 1, 0, 0, 0.1f, SEED1, OFF1, 0, 0, 1, 1, 0},
    {"rms_bwd_dropout_0.5_no_dresidual", TH_ALL, BF, F32, 1, 32, 128, 0, 0, 0, 0, 0.5f, 7, 3, 0, 0, 1, 0, 0},
    {"ln_bwd_param_bf16", TH_ALL, BF, BF, 0, 16, 128, 0, 1, 0, 0, 0.25f, 1, 2, 0, 0, 0, 1, 0},
    {"ln_bwd_f16", TH_ALL, F16, F16, 0, 16, 128, 0, 1, 0, 0, 0.1f, 3, 4, 0, 0, 1, 1, 0},
    {"ln_bwd_f32", TH_ALL, F32, F32, 0, 16, 96, 0, 1, 0, 0, 0.2f, 5, 6, 0, 0, 1, 1, 0},
    {"rms_bwd_f32", TH_ALL, F32, F32, 1, 16, 96, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0},
    {"ln_bwd_strided", TH_ALL, BF, F32, 0, 16, 128, 0, 1, 0, 0, 0.1f, 13, 14, 0, 8, 1, 1, 0},
    {"ln_bwd_1x7", TH_ALL, BF, F32, 0, 1, 7, 0, 1, 0, 0, 0.5f, 21, 22, 0, 0, 1, 1, 0},
    {"rms_bwd_7x127_odd_strides", TH_NOT_EMU, BF, F32, 1, 7, 127, 0, 0, 0, 0, 0.3f, 31, 32, 0, 3, 1, 1, 0},
    {"ln_bwd_1000x1000", TH_NOT_EMU, BF, F32, 0, 1000, 1000, 0, 1, 0, 0, 0.1f, SEED1, OFF1, 0, 0, 1, 1, 0},
    /* the forward's mask given: the Philox one (same result), then one unrelated to seed/offset */
    {"ln_bwd_given_philox_mask", TH_ALL, BF, F32, 0, 32, 256, 0, 1, 0, 0, 0.1f, SEED1, OFF1, 0, 0, 1, 1, 1},
    {"ln_bwd_given_random_mask", TH_ALL, BF, F32, 0, 16, 128, 0, 1, 0, 0, 0.3f, 1, 2, 0, 0, 1, 1, 2},
    {"rms_bwd_given_random_mask_f32_7x127", TH_ALL, F32, F32, 1, 7, 127, 0, 0, 0, 0, 0.5f, 3, 4, 0, 0, 0, 1, 2},
    {"ln_bwd_given_random_mask_f16_p0", TH_ALL, F16, F16, 0, 9, 64, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 2},
    {"ln_bwd_given_random_mask_1000x2048", TH_NOT_EMU, BF, F32, 0, 1000, 2048, 0, 1, 0, 0, 0.1f, 5, 6, 0, 0, 0, 1, 2},
    {"ln_bwd_given_random_mask_300x4096_dz_extra", TH_NOT_EMU, BF, F32, 0, 300, 4096, 0, 1, 0, 0, 0.1f, 5, 6, 0, 0, 1, 1, 2},
    {"ln_bwd_given_random_mask_100x8192", TH_NOT_EMU, BF, BF, 0, 100, 8192, 0, 1, 0, 0, 0.25f, 7, 8, 0, 8, 1, 1, 2},
    /* rows past 8192 columns (Hopper: the staged kernels that form xhat again in pass 2), more rows than blocks */
    {"ln_bwd_given_random_mask_300x12288_dz_extra", TH_NOT_EMU, BF, F32, 0, 300, 12288, 0, 1, 0, 0, 0.1f, 9, 10, 0, 0, 1, 1, 2},
    {"rms_bwd_given_random_mask_300x16384_f16", TH_NOT_EMU, F16, F16, 1, 300, 16384, 0, 0, 0, 0, 0.1f, 11, 12, 0, 8, 0, 1, 2},
    {"ln_bwd_given_random_mask_f32_300x12000_dz_extra", TH_NOT_EMU, F32, F32, 0, 300, 12000, 0, 1, 0, 0, 0.1f, 13, 14, 0, 0, 1, 1, 2},
    {"ln_bwd_given_random_mask_300x7000_f16", TH_NOT_EMU, F16, F16, 0, 300, 7000, 0, 1, 0, 0, 0.1f, 17, 18, 0, 0, 0, 1, 2},
    {"ln_bwd_f32_300x1024_philox", TH_NOT_EMU, F32, F32, 0, 300, 1024, 0, 1, 0, 0, 0.1f, 15, 16, 0, 0, 0, 1, 0},
};

static hk_dtype param_dtype(const ln_case *l) { return l->param == HK_DTYPE_NONE ? F32 : l->param; }

/* Row stride for tensor number `which` (different padding per tensor), and the value passed to the library. */
static int64_t row_stride(const ln_case *l, int which, int64_t *arg)
{
    if (l->pad == 0) {
        *arg = 0;
        return l->cols;
    }
    *arg = l->cols + l->pad * which;
    return *arg;
}

/* Upload a [1, cols] parameter vector of dtype t. */
static void *param_vec(const th_ctx *c, hk_dtype t, const double *v, int64_t cols)
{
    th_tensor pt = th_matrix(t, 1, cols, cols);
    return th_dev_tensor(c, &pt, v);
}

static bool check_f32_vec(const th_ctx *c, const char *what, const float *dev, const double *ref, int64_t n,
                          th_tol tol)
{
    float *h = th_host(sizeof(float) * (size_t)n);
    double *d = th_host(sizeof(double) * (size_t)n);
    th_download(c, h, dev, sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; ++i)
        d[i] = h[i];
    return th_check(what, d, ref, n, tol);
}

/* Inputs for dropout cases keep |x| >= 0.5 so that a kept element is always distinguishable from a dropped one. */
static void fill_x(th_rng *rng, hk_dtype t, double *x, int64_t n)
{
    for (int64_t i = 0; i < n; ++i) {
        double mag = th_uniform(rng, 0.5, 1.5);
        x[i] = orc_round(t, th_next(rng) & 1 ? mag : -mag);
    }
}

/* The packed mask of keep[rows * cols] (bit c % 32 of word r * words + c / 32). */
static uint32_t *pack_mask(const uint8_t *keep, int64_t rows, int64_t cols)
{
    int64_t words = HK_DROPOUT_MASK_WORDS(cols);
    uint32_t *m = th_host(sizeof(uint32_t) * (size_t)(rows * words > 0 ? rows * words : 1));
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < cols; ++j)
            if (keep[r * cols + j])
                m[r * words + j / 32] |= 1u << (j % 32);
    return m;
}

static void run_fwd(const th_ctx *c, const void *param)
{
    const ln_case *l = param;
    th_rng rng = th_rng_for_case();
    int64_t R = l->rows, C = l->cols, n = R * C;
    hk_dtype pt = param_dtype(l);
    double *x = th_host(sizeof(double) * (size_t)n), *res = th_host(sizeof(double) * (size_t)n);
    double *gamma = th_host(sizeof(double) * (size_t)C), *beta = th_host(sizeof(double) * (size_t)C);
    fill_x(&rng, l->dt, x, n);
    th_fill_normal(&rng, l->dt, res, n, 1.0);
    for (int64_t i = 0; i < C; ++i) {
        gamma[i] = orc_round(pt, th_uniform(&rng, 0.5, 1.5));
        beta[i] = orc_round(pt, th_normal(&rng) * 0.5);
    }

    hk_ln_fused_args args = HK_ARGS_INIT(hk_ln_fused_args);
    args.norm = l->rms ? HK_NORM_RMS : HK_NORM_LAYER;
    args.dtype = l->dt;
    args.param_type = l->param;
    args.rows = R;
    args.cols = C;
    th_tensor xt = th_matrix(l->dt, R, C, row_stride(l, 1, &args.x_stride));
    th_tensor rt = th_matrix(l->dt, R, C, row_stride(l, 2, &args.residual_stride));
    th_tensor yt = th_matrix(l->dt, R, C, row_stride(l, 3, &args.y_stride));
    th_tensor zt = th_matrix(l->dt, R, C, row_stride(l, 4, &args.residual_out_stride));
    args.x = th_dev_tensor(c, &xt, x);
    if (l->residual)
        args.residual = th_dev_tensor(c, &rt, res);
    else
        args.residual_stride = 0;
    args.gamma = param_vec(c, pt, gamma, C);
    if (l->beta)
        args.beta = param_vec(c, pt, beta, C);
    args.y = th_dev(c, th_bytes(&yt));
    if (l->residual_out)
        args.residual_out = th_dev(c, th_bytes(&zt));
    else
        args.residual_out_stride = 0;
    if (l->stats) {
        if (!l->rms)
            args.mean = th_dev(c, sizeof(float) * (size_t)R);
        args.rstd = th_dev(c, sizeof(float) * (size_t)R);
    }
    args.epsilon = l->eps;
    args.dropout_p = l->p;
    args.seed = l->seed;
    args.offset = l->offset;
    size_t mask_bytes = sizeof(uint32_t) * (size_t)(R * HK_DROPOUT_MASK_WORDS(C));
    if (l->mask)
        args.dropout_mask = th_dev(c, mask_bytes); /* poisoned: every word must be written */

    th_op_status(c, hk_ln_fused(c->ctx, &args), "hk_ln_fused");

    orc_ln o = {l->rms, R, C, l->eps != 0 ? (double)l->eps : (double)1e-5f, l->p, l->seed, l->offset, NULL};
    double *z = th_host(sizeof(double) * (size_t)n), *y = th_host(sizeof(double) * (size_t)n);
    double *mean = th_host(sizeof(double) * (size_t)R), *rstd = th_host(sizeof(double) * (size_t)R);
    uint8_t *keep = th_host((size_t)n);
    orc_ln_fwd(&o, x, l->residual ? res : NULL, gamma, l->beta ? beta : NULL, z, y, mean, rstd, keep);

    bool ok = true;
    th_tol tol = th_tol_for(l->dt, c);
    double *yl = th_fetch_tensor(c, &yt, args.y, &ok, "y");
    ok &= th_check("y", yl, y, n, tol);
    if (l->residual_out) {
        double *zl = th_fetch_tensor(c, &zt, args.residual_out, &ok, "residual_out");
        ok &= th_check("residual_out", zl, z, n, tol);
        /* dropped elements are exactly the residual (or 0); kept ones differ from it by |x| / (1 - p) >= 0.5 */
        int64_t wrong = 0, kept = 0;
        for (int64_t i = 0; i < n; ++i) {
            double base = l->residual ? res[i] : 0.0;
            int lib_keep = !(zl[i] == base);
            kept += keep[i];
            if (lib_keep != keep[i] && wrong++ < 5)
                th_log("mask[%" PRId64 "] (row %" PRId64 ", col %" PRId64 "): library %s, oracle %s", i, i / C, i % C,
                       lib_keep ? "kept" : "dropped", keep[i] ? "kept" : "dropped");
        }
        if (wrong) {
            th_log("dropout mask: %" PRId64 " of %" PRId64 " elements differ from the Philox mask", wrong, n);
            ok = false;
        }
        if (l->p > 0 && n >= 1000 && (kept == n || kept == 0)) {
            th_log("dropout mask of p=%g kept %" PRId64 " of %" PRId64, (double)l->p, kept, n);
            ok = false;
        }
    }
    if (l->stats) {
        if (!l->rms)
            ok &= check_f32_vec(c, "mean", args.mean, mean, R, tol);
        ok &= check_f32_vec(c, "rstd", args.rstd, rstd, R, tol);
    }
    if (l->mask) {
        uint32_t *want = pack_mask(keep, R, C), *got = th_host(mask_bytes);
        th_download(c, got, args.dropout_mask, mask_bytes);
        int64_t bad = 0;
        for (int64_t w = 0; w < R * HK_DROPOUT_MASK_WORDS(C); ++w)
            if (got[w] != want[w] && bad++ < 5)
                th_log("dropout_mask word %" PRId64 " (row %" PRId64 "): 0x%08x, want 0x%08x", w,
                       w / HK_DROPOUT_MASK_WORDS(C), got[w], want[w]);
        if (bad) {
            th_log("dropout_mask: %" PRId64 " words differ", bad);
            ok = false;
        }
    }
    th_expect(ok, "hk_ln_fused result");
}

static void run_bwd(const th_ctx *c, const void *param)
{
    const ln_case *l = param;
    th_rng rng = th_rng_for_case();
    int64_t R = l->rows, C = l->cols, n = R * C;
    hk_dtype pt = param_dtype(l);
    double *z = th_host(sizeof(double) * (size_t)n), *dy = th_host(sizeof(double) * (size_t)n);
    double *extra = th_host(sizeof(double) * (size_t)n), *gamma = th_host(sizeof(double) * (size_t)C);
    double *mean = th_host(sizeof(double) * (size_t)R), *rstd = th_host(sizeof(double) * (size_t)R);
    float *meanf = th_host(sizeof(float) * (size_t)R), *rstdf = th_host(sizeof(float) * (size_t)R);
    th_fill_normal(&rng, l->dt, z, n, 1.5);
    th_fill_normal(&rng, l->dt, dy, n, 1.0);
    th_fill_normal(&rng, l->dt, extra, n, 0.5);
    for (int64_t i = 0; i < C; ++i)
        gamma[i] = orc_round(pt, th_uniform(&rng, 0.5, 1.5));
    double eps = 1e-5;
    for (int64_t r = 0; r < R; ++r) {
        double s = 0, q = 0;
        for (int64_t j = 0; j < C; ++j)
            s += z[r * C + j];
        double mu = l->rms ? 0 : s / (double)C;
        for (int64_t j = 0; j < C; ++j)
            q += (z[r * C + j] - mu) * (z[r * C + j] - mu);
        /* the statistics reach the backward as fp32, as the forward stores them */
        meanf[r] = (float)mu;
        rstdf[r] = (float)(1.0 / sqrt(q / (double)C + eps));
        mean[r] = meanf[r];
        rstd[r] = rstdf[r];
    }

    hk_ln_fused_bwd_args args = HK_ARGS_INIT(hk_ln_fused_bwd_args);
    args.norm = l->rms ? HK_NORM_RMS : HK_NORM_LAYER;
    args.dtype = l->dt;
    args.param_type = l->param;
    args.rows = R;
    args.cols = C;
    th_tensor dyt = th_matrix(l->dt, R, C, row_stride(l, 1, &args.dy_stride));
    th_tensor zt = th_matrix(l->dt, R, C, row_stride(l, 2, &args.z_stride));
    th_tensor et = th_matrix(l->dt, R, C, row_stride(l, 3, &args.dz_extra_stride));
    th_tensor dxt = th_matrix(l->dt, R, C, row_stride(l, 4, &args.dx_stride));
    th_tensor drt = th_matrix(l->dt, R, C, row_stride(l, 5, &args.dresidual_stride));
    args.dy = th_dev_tensor(c, &dyt, dy);
    args.z = th_dev_tensor(c, &zt, z);
    if (l->dz_extra)
        args.dz_extra = th_dev_tensor(c, &et, extra);
    else
        args.dz_extra_stride = 0;
    args.gamma = param_vec(c, pt, gamma, C);
    if (!l->rms) {
        float *dm = th_dev(c, sizeof(float) * (size_t)R);
        th_upload(c, dm, meanf, sizeof(float) * (size_t)R);
        args.mean = dm;
    }
    float *dr = th_dev(c, sizeof(float) * (size_t)R);
    th_upload(c, dr, rstdf, sizeof(float) * (size_t)R);
    args.rstd = dr;
    args.dx = th_dev(c, th_bytes(&dxt));
    if (l->dresidual)
        args.dresidual = th_dev(c, th_bytes(&drt));
    else
        args.dresidual_stride = 0;
    args.dgamma = th_dev(c, sizeof(float) * (size_t)C);
    if (l->beta)
        args.dbeta = th_dev(c, sizeof(float) * (size_t)C);
    args.dropout_p = l->p;
    args.seed = l->seed;
    args.offset = l->offset;
    /* the keep mask the backward must apply: the (seed, offset) stream's, or a random one passed in */
    uint8_t *keep = th_host((size_t)(n > 0 ? n : 1));
    if (l->mask == 2)
        for (int64_t i = 0; i < n; ++i)
            keep[i] = th_uniform(&rng, 0, 1) >= 0.4;
    else
        orc_dropout_mask(l->seed, l->offset, l->p, n, keep);
    if (l->mask) {
        size_t mask_bytes = sizeof(uint32_t) * (size_t)(R * HK_DROPOUT_MASK_WORDS(C));
        uint32_t *dm = th_dev(c, mask_bytes);
        th_upload(c, dm, pack_mask(keep, R, C), mask_bytes);
        args.dropout_mask = dm;
    }
    size_t ws = 0;
    th_op_status(c, hk_ln_fused_bwd_workspace_size(c->ctx, &args, &ws), "hk_ln_fused_bwd_workspace_size");
    if (ws) {
        args.workspace = th_dev(c, ws);
        args.workspace_size = ws;
    }

    th_op_status(c, hk_ln_fused_bwd(c->ctx, &args), "hk_ln_fused_bwd");

    orc_ln o = {l->rms, R, C, eps, l->p, l->seed, l->offset, keep};
    double *dz = th_host(sizeof(double) * (size_t)n), *dx = th_host(sizeof(double) * (size_t)n);
    double *dgamma = th_host(sizeof(double) * (size_t)C), *dbeta = th_host(sizeof(double) * (size_t)C);
    orc_ln_bwd(&o, dy, z, gamma, mean, rstd, l->dz_extra ? extra : NULL, dz, dx, dgamma, dbeta);

    bool ok = true;
    th_tol tol = th_tol_for(l->dt, c);
    double *dxl = th_fetch_tensor(c, &dxt, args.dx, &ok, "dx");
    ok &= th_check("dx", dxl, dx, n, tol);
    /* dx is exactly zero where the forward dropped the element */
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i)
        if (!keep[i] && dxl[i] != 0 && wrong++ < 5)
            th_log("dx[%" PRId64 "] = %g where the mask dropped the element", i, dxl[i]);
    if (wrong) {
        th_log("dx: %" PRId64 " dropped elements are not zero", wrong);
        ok = false;
    }
    if (l->dresidual) {
        double *drl = th_fetch_tensor(c, &drt, args.dresidual, &ok, "dresidual");
        ok &= th_check("dresidual", drl, dz, n, tol);
    }
    th_tol ftol = th_tol_for(F32, c);
    ok &= check_f32_vec(c, "dgamma", args.dgamma, dgamma, C, ftol);
    if (l->beta)
        ok &= check_f32_vec(c, "dbeta", args.dbeta, dbeta, C, ftol);
    th_expect(ok, "hk_ln_fused_bwd result");
}

int main(void)
{
    th_open_contexts();
    for (size_t i = 0; i < sizeof fwd_cases / sizeof fwd_cases[0]; ++i)
        th_add(fwd_cases[i].name, run_fwd, &fwd_cases[i], fwd_cases[i].kinds);
    for (size_t i = 0; i < sizeof bwd_cases / sizeof bwd_cases[0]; ++i)
        th_add(bwd_cases[i].name, run_bwd, &bwd_cases[i], bwd_cases[i].kinds);
    return th_run("ln_fused");
}
