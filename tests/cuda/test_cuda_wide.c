/* CUDA-specific coverage of the kernel choices the generic op tests do not reach: every register-resident
 * LayerNorm configuration (cols 2048 .. 32768), the any-shape kernels past them and on unaligned rows, the
 * backward's partial-sum paths and its run-to-run determinism, and rotary head groups, scalar fallback, clamped
 * positions and tables in the activation dtype. The CUDA context's results are compared with the CPU backend's on
 * identical inputs. The cases target CUDA kernels: a HIP context (the GPU context of an AMD machine) skips them, and
 * with no GPU none is registered. */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BF HK_DTYPE_BF16
#define F16 HK_DTYPE_F16
#define F32 HK_DTYPE_F32

static th_ctx cpu_ctx; /* the reference; lives for the whole run */

/* Inputs of the CPU and the CUDA run: the same raw bytes, uploaded to each context. */
typedef struct pair {
    void *cpu, *gpu;
} pair;

static pair upload(const th_ctx *c, const th_tensor *x, const double *v)
{
    pair p = {NULL, NULL};
    if (v) {
        p.cpu = th_dev_tensor(&cpu_ctx, x, v);
        p.gpu = th_dev_tensor(c, x, v);
    }
    return p;
}

static pair outputs(const th_ctx *c, size_t bytes)
{
    pair p = {th_dev(&cpu_ctx, bytes), th_dev(c, bytes)};
    return p;
}

static int64_t elements(const th_tensor *x) { return x->dim[0] * x->dim[1] * x->dim[2] * x->dim[3]; }

/* Decode a pair of output tensors and compare the CUDA one with the CPU one. */
static void compare(const th_ctx *c, const char *what, const th_tensor *x, pair p, th_tol tol)
{
    bool gap_cpu = true, gap_gpu = true;
    double *ref = th_fetch_tensor(&cpu_ctx, x, p.cpu, &gap_cpu, what);
    double *out = th_fetch_tensor(c, x, p.gpu, &gap_gpu, what);
    th_expect(gap_gpu, what);
    th_expect(th_check(what, out, ref, elements(x), tol), what);
}

static void random_values(th_rng *rng, hk_dtype t, double *v, int64_t n, double lo, double hi)
{
    for (int64_t i = 0; i < n; ++i) {
        double mag = th_uniform(rng, lo, hi);
        v[i] = orc_round(t, th_next(rng) & 1 ? mag : -mag);
    }
}

/* The harness's GPU context is HIP on an AMD machine: these cases are for CUDA's kernels only. */
static void cuda_only(const th_ctx *c)
{
    if (hk_context_backend(c->ctx) != HK_BACKEND_CUDA)
        th_skip(c, "cases of the CUDA kernels' choices");
}

/* ---------------------------------------------------------------- LayerNorm / RMSNorm forward */

typedef struct ln_case {
    const char *name;
    hk_dtype dt, param;
    int rms;
    int64_t rows, cols, pad; /* pad: extra elements per row (odd pads force the any-shape kernel) */
    float p;
} ln_case;

static const ln_case fwd_cases[] = {
    {"fwd_ln_2048", BF, F32, 0, 64, 2048, 0, 0.1f},
    {"fwd_ln_4096_param_bf16", BF, BF, 0, 64, 4096, 0, 0.1f},
    {"fwd_rms_8192", BF, F32, 1, 48, 8192, 0, 0.2f},
    {"fwd_ln_12288_f16", F16, F16, 0, 16, 12288, 0, 0.1f},
    {"fwd_ln_16384", BF, F32, 0, 16, 16384, 0, 0.0f},
    {"fwd_ln_32768", BF, F32, 0, 8, 32768, 0, 0.1f},
    {"fwd_ln_32776_any", BF, F32, 0, 4, 32776, 0, 0.1f},
    {"fwd_ln_4104_padded_rows", BF, F32, 0, 33, 4104, 8, 0.1f},
    {"fwd_rms_4096_odd_pad_any", BF, BF, 1, 17, 4096, 3, 0.1f},
    {"fwd_ln_f32_16384", F32, F32, 0, 8, 16384, 0, 0.1f},
    {"fwd_ln_f32_20000_any", F32, F32, 0, 4, 20000, 0, 0.3f},
    {"fwd_ln_1000_rows_of_1024", BF, F32, 0, 1000, 1024, 0, 0.1f},
};

static void run_fwd(const th_ctx *c, const void *param)
{
    cuda_only(c);
    const ln_case *l = param;
    th_rng rng = th_rng_for_case();
    const int64_t R = l->rows, C = l->cols, ld = C + l->pad, n = R * C;
    double *x = th_host(sizeof(double) * (size_t)n), *res = th_host(sizeof(double) * (size_t)n);
    double *gamma = th_host(sizeof(double) * (size_t)C), *beta = th_host(sizeof(double) * (size_t)C);
    random_values(&rng, l->dt, x, n, 0.5, 1.5); /* |x| >= 0.5: a dropped element is never near a kept one */
    th_fill_normal(&rng, l->dt, res, n, 1.0);
    for (int64_t i = 0; i < C; ++i) {
        gamma[i] = orc_round(l->param, th_uniform(&rng, 0.5, 1.5));
        beta[i] = orc_round(l->param, th_uniform(&rng, -0.5, 0.5));
    }
    th_tensor act = th_matrix(l->dt, R, C, ld), par = th_matrix(l->param, 1, C, C), stat = th_matrix(F32, 1, R, R);
    pair px = upload(c, &act, x), pr = upload(c, &act, res), pg = upload(c, &par, gamma);
    pair pb = upload(c, &par, l->rms ? NULL : beta);
    pair py = outputs(c, th_bytes(&act)), pz = outputs(c, th_bytes(&act));
    pair pm = outputs(c, th_bytes(&stat)), ps = outputs(c, th_bytes(&stat));

    for (int side = 0; side < 2; ++side) {
        const th_ctx *ctx = side ? c : &cpu_ctx;
        hk_ln_fused_args a = HK_ARGS_INIT(hk_ln_fused_args);
        a.norm = l->rms ? HK_NORM_RMS : HK_NORM_LAYER;
        a.dtype = l->dt;
        a.param_type = l->param;
        a.rows = R;
        a.cols = C;
        a.x = side ? px.gpu : px.cpu;
        a.residual = side ? pr.gpu : pr.cpu;
        a.gamma = side ? pg.gpu : pg.cpu;
        a.beta = l->rms ? NULL : side ? pb.gpu : pb.cpu;
        a.y = side ? py.gpu : py.cpu;
        a.residual_out = side ? pz.gpu : pz.cpu;
        a.mean = side ? pm.gpu : pm.cpu;
        a.rstd = side ? ps.gpu : ps.cpu;
        a.x_stride = a.residual_stride = a.y_stride = a.residual_out_stride = ld;
        a.dropout_p = l->p;
        a.seed = 0x9E3779B97F4A7C15ull;
        a.offset = 77;
        th_op_status(ctx, hk_ln_fused(ctx->ctx, &a), "hk_ln_fused");
    }
    hk_synchronize(c->ctx, NULL);
    th_tol tol = th_tol_for(l->dt, c), tol32 = th_tol_for(F32, c);
    compare(c, "residual_out", &act, pz, tol);
    compare(c, "y", &act, py, tol);
    compare(c, "rstd", &stat, ps, tol32);
    if (!l->rms)
        compare(c, "mean", &stat, pm, tol32);
}

/* ---------------------------------------------------------------- backward */

typedef struct bwd_case {
    const char *name;
    hk_dtype dt;
    int rms;
    int64_t rows, cols, pad;
    float p;
    int dz_extra, dresidual, dgamma, dbeta;
} bwd_case;

static const bwd_case bwd_cases[] = {
    {"bwd_ln_2048", BF, 0, 64, 2048, 0, 0.1f, 1, 1, 1, 1},
    {"bwd_ln_4096", BF, 0, 64, 4096, 0, 0.1f, 0, 1, 1, 1},
    {"bwd_rms_8192", BF, 1, 32, 8192, 0, 0.2f, 1, 1, 1, 0},
    {"bwd_ln_16384_f16", F16, 0, 16, 16384, 0, 0.1f, 0, 0, 1, 1},
    {"bwd_ln_16392_any", BF, 0, 8, 16392, 0, 0.1f, 1, 1, 1, 1},
    {"bwd_ln_f32_8192", F32, 0, 16, 8192, 0, 0.1f, 0, 1, 1, 1},
    {"bwd_ln_f32_16384", F32, 0, 8, 16384, 0, 0.0f, 0, 1, 1, 1},
    {"bwd_ln_1000_rows_of_1024", BF, 0, 1000, 1024, 0, 0.1f, 0, 1, 1, 1},
    {"bwd_ln_3000_rows_of_256_dbeta_only", BF, 0, 3000, 256, 0, 0.1f, 0, 1, 0, 1},
    {"bwd_ln_odd_pad_any", BF, 0, 40, 2048, 5, 0.1f, 1, 1, 1, 1},
    {"bwd_ln_no_dgamma_dbeta", BF, 0, 64, 1024, 0, 0.1f, 0, 1, 0, 0},
};

static void run_bwd(const th_ctx *c, const void *param)
{
    cuda_only(c);
    const bwd_case *l = param;
    th_rng rng = th_rng_for_case();
    const int64_t R = l->rows, C = l->cols, ld = C + l->pad, n = R * C;
    double *dy = th_host(sizeof(double) * (size_t)n), *z = th_host(sizeof(double) * (size_t)n);
    double *ex = th_host(sizeof(double) * (size_t)n), *gamma = th_host(sizeof(double) * (size_t)C);
    double *mean = th_host(sizeof(double) * (size_t)R), *rstd = th_host(sizeof(double) * (size_t)R);
    th_fill_normal(&rng, l->dt, dy, n, 1.0);
    th_fill_normal(&rng, l->dt, z, n, 1.0);
    th_fill_normal(&rng, l->dt, ex, n, 1.0);
    for (int64_t i = 0; i < C; ++i)
        gamma[i] = orc_round(F32, th_uniform(&rng, 0.5, 1.5));
    for (int64_t r = 0; r < R; ++r) { /* the statistics the forward would have produced for z */
        double s = 0, q = 0;
        for (int64_t i = 0; i < C; ++i)
            s += z[r * C + i];
        mean[r] = l->rms ? 0 : s / (double)C;
        for (int64_t i = 0; i < C; ++i)
            q += (z[r * C + i] - mean[r]) * (z[r * C + i] - mean[r]);
        rstd[r] = orc_round(F32, 1.0 / sqrt(q / (double)C + 1e-5));
        mean[r] = orc_round(F32, mean[r]);
    }
    th_tensor act = th_matrix(l->dt, R, C, ld), par = th_matrix(F32, 1, C, C), stat = th_matrix(F32, 1, R, R);
    pair pdy = upload(c, &act, dy), pz = upload(c, &act, z), pex = upload(c, &act, ex), pg = upload(c, &par, gamma);
    pair pm = upload(c, &stat, mean), ps = upload(c, &stat, rstd);
    pair pdx = outputs(c, th_bytes(&act)), pdr = outputs(c, th_bytes(&act));
    pair pdg = outputs(c, th_bytes(&par)), pdb = outputs(c, th_bytes(&par));
    float *first_dgamma = th_host(sizeof(float) * (size_t)C), *again = th_host(sizeof(float) * (size_t)C);

    for (int run = 0; run < 3; ++run) { /* CPU, CUDA, CUDA again (determinism) */
        const int side = run > 0;
        const th_ctx *ctx = side ? c : &cpu_ctx;
        hk_ln_fused_bwd_args a = HK_ARGS_INIT(hk_ln_fused_bwd_args);
        a.norm = l->rms ? HK_NORM_RMS : HK_NORM_LAYER;
        a.dtype = l->dt;
        a.param_type = F32;
        a.rows = R;
        a.cols = C;
        a.dy = side ? pdy.gpu : pdy.cpu;
        a.z = side ? pz.gpu : pz.cpu;
        a.dz_extra = l->dz_extra ? (side ? pex.gpu : pex.cpu) : NULL;
        a.gamma = side ? pg.gpu : pg.cpu;
        a.mean = side ? pm.gpu : pm.cpu;
        a.rstd = side ? ps.gpu : ps.cpu;
        a.dx = side ? pdx.gpu : pdx.cpu;
        a.dresidual = l->dresidual ? (side ? pdr.gpu : pdr.cpu) : NULL;
        a.dgamma = l->dgamma ? (side ? pdg.gpu : pdg.cpu) : NULL;
        a.dbeta = l->dbeta ? (side ? pdb.gpu : pdb.cpu) : NULL;
        a.dy_stride = a.z_stride = a.dz_extra_stride = a.dx_stride = a.dresidual_stride = ld;
        a.dropout_p = l->p;
        a.seed = 5;
        a.offset = 6;
        size_t ws = 0;
        th_op_status(ctx, hk_ln_fused_bwd_workspace_size(ctx->ctx, &a, &ws), "workspace_size");
        a.workspace = ws ? th_dev(ctx, ws) : NULL;
        a.workspace_size = ws;
        th_op_status(ctx, hk_ln_fused_bwd(ctx->ctx, &a), "hk_ln_fused_bwd");
        if (run == 1 && l->dgamma)
            th_download(c, first_dgamma, pdg.gpu, sizeof(float) * (size_t)C);
    }
    th_tol tol = th_tol_for(l->dt, c), tol32 = th_tol_for(F32, c);
    compare(c, "dx", &act, pdx, tol);
    if (l->dresidual)
        compare(c, "dresidual", &act, pdr, tol);
    if (l->dgamma) {
        compare(c, "dgamma", &par, pdg, tol32);
        th_download(c, again, pdg.gpu, sizeof(float) * (size_t)C);
        th_expect(memcmp(first_dgamma, again, sizeof(float) * (size_t)C) == 0, "dgamma identical across runs");
    }
    if (l->dbeta && !l->rms)
        compare(c, "dbeta", &par, pdb, tol32);
}

/* ---------------------------------------------------------------- rotary */

typedef struct rot_case {
    const char *name;
    hk_dtype dt;
    int64_t batch, seqlen, heads, d, rotary_dim;
    int interleaved, inverse, in_place, pos_ids;
    int64_t shift; /* elements x and out start past an aligned allocation (1: scalar path) */
    hk_dtype table; /* table_type: NONE (F32) or dt */
} rot_case;

static const rot_case rot_cases[] = {
    {"rot_heads_5_d256", BF, 2, 64, 5, 256, 256, 0, 0, 0, 0, 0, 0},
    {"rot_heads_1", BF, 2, 100, 1, 128, 128, 1, 0, 0, 0, 0, 0},
    {"rot_partial_tail_copy", BF, 2, 50, 6, 128, 64, 0, 1, 0, 1, 0, 0},
    {"rot_interleaved_partial_in_place", F16, 1, 64, 7, 64, 48, 1, 0, 1, 0, 0, 0},
    {"rot_misaligned_scalar", BF, 2, 33, 3, 128, 96, 0, 0, 0, 1, 1, 0},
    {"rot_misaligned_interleaved_in_place", F32, 1, 40, 4, 64, 64, 1, 1, 1, 0, 1, 0},
    {"rot_f32_half_position_ids_clamped", F32, 2, 64, 4, 64, 64, 0, 0, 0, 1, 0, 0},
    /* more than one block of chunks (832 scalar units per head) or of head groups (258 groups of 4 heads) */
    {"rot_chunk_tiles_scalar_tail_copy", BF, 2, 3, 2, 1024, 384, 0, 0, 0, 1, 1, 0},
    {"rot_head_group_tiles_1030_heads", BF, 2, 5, 1030, 64, 64, 1, 0, 0, 0, 0, 0},
    /* tables in the activation dtype: lane-mapped, chunk vector and scalar kernels, clamped ids */
    {"rot_heads_5_d256_table_bf16", BF, 2, 64, 5, 256, 256, 0, 0, 0, 1, 0, BF},
    {"rot_partial_tail_copy_table_f16", F16, 2, 50, 6, 128, 64, 0, 1, 0, 1, 0, F16},
    {"rot_interleaved_partial_in_place_table_bf16", BF, 1, 64, 7, 64, 48, 1, 0, 1, 0, 0, BF},
    {"rot_misaligned_scalar_table_f16", F16, 2, 33, 3, 128, 96, 0, 0, 0, 1, 1, F16},
    {"rot_head_group_tiles_1030_heads_table_bf16", BF, 2, 5, 1030, 64, 64, 1, 0, 0, 0, 0, BF},
};

static void run_rot(const th_ctx *c, const void *param)
{
    cuda_only(c);
    const rot_case *r = param;
    th_rng rng = th_rng_for_case();
    const int64_t tokens = r->batch * r->seqlen, n = tokens * r->heads * r->d, half = r->rotary_dim / 2;
    const int64_t table = r->seqlen; /* position ids up to 2x past it (and -1) exercise the clamp */
    double *x = th_host(sizeof(double) * (size_t)(n + r->shift));
    th_fill_normal(&rng, r->dt, x + r->shift, n, 1.0);
    const hk_dtype tt = r->table ? r->table : F32;
    double *cs = th_host(sizeof(double) * (size_t)(table * half));
    double *sn = th_host(sizeof(double) * (size_t)(table * half));
    for (int64_t i = 0; i < table * half; ++i) {
        cs[i] = th_uniform(&rng, -1, 1);
        sn[i] = th_uniform(&rng, -1, 1);
    }
    int32_t *ids = th_host(sizeof(int32_t) * (size_t)tokens);
    for (int64_t i = 0; i < tokens; ++i)
        ids[i] = (int32_t)(th_next(&rng) % (uint64_t)(2 * table)) - (int32_t)(i % 3 == 0);
    th_tensor flat = th_matrix(r->dt, 1, n + r->shift, n + r->shift);
    pair px = upload(c, &flat, x), po = r->in_place ? px : outputs(c, th_bytes(&flat));
    th_tensor tab = th_matrix(tt, 1, table * half, table * half), idt = th_matrix(F32, 1, tokens, tokens);
    pair pc = upload(c, &tab, cs), ps = upload(c, &tab, sn);
    pair pi = {th_dev(&cpu_ctx, th_bytes(&idt)), th_dev(c, th_bytes(&idt))};
    for (int side = 0; side < 2; ++side)
        th_upload(side ? c : &cpu_ctx, side ? pi.gpu : pi.cpu, ids, th_bytes(&idt));
    const size_t esize = orc_dtype_size(r->dt);
    for (int side = 0; side < 2; ++side) {
        const th_ctx *ctx = side ? c : &cpu_ctx;
        hk_rotary_args a = HK_ARGS_INIT(hk_rotary_args);
        a.dtype = r->dt;
        a.batch = r->batch;
        a.seqlen = r->seqlen;
        a.heads = r->heads;
        a.head_dim = r->d;
        a.rotary_dim = r->rotary_dim;
        a.table_type = r->table;
        a.x = (const char *)(side ? px.gpu : px.cpu) + r->shift * esize;
        a.out = (char *)(side ? po.gpu : po.cpu) + r->shift * esize;
        a.cos = side ? pc.gpu : pc.cpu;
        a.sin = side ? ps.gpu : ps.cpu;
        a.table_positions = table;
        a.position_offset = 0;
        a.position_ids = r->pos_ids ? (side ? pi.gpu : pi.cpu) : NULL;
        a.style = r->interleaved ? HK_ROTARY_INTERLEAVED : HK_ROTARY_HALF;
        a.inverse = r->inverse;
        th_op_status(ctx, hk_rotary(ctx->ctx, &a), "hk_rotary");
    }
    hk_synchronize(c->ctx, NULL);
    th_tensor view = th_matrix(r->dt, 1, n, n); /* past the shift */
    pair out = {(char *)po.cpu + r->shift * esize, (char *)po.gpu + r->shift * esize};
    compare(c, "out", &view, out, th_tol_for(r->dt, c));
}

int main(void)
{
    hk_context_options o = HK_ARGS_INIT(hk_context_options);
    o.backend = HK_BACKEND_CPU;
    if (hk_context_create(&o, &cpu_ctx.ctx) != HK_OK) {
        fprintf(stderr, "cannot create the CPU context: %s\n", hk_last_error());
        return 1;
    }
    cpu_ctx.kind = TH_CPU;
    snprintf(cpu_ctx.label, sizeof cpu_ctx.label, "cpu");
    hk_context *gpu = NULL;
    if (hk_context_create(NULL, &gpu) != HK_OK || hk_context_backend(gpu) != HK_BACKEND_CUDA) {
        printf("no CUDA device: every case skipped\n");
        hk_context_destroy(gpu);
        hk_context_destroy(cpu_ctx.ctx);
        return 77; /* meson's exit code for a skipped test */
    }
    hk_context_destroy(gpu);
    th_open_contexts();
    for (size_t i = 0; i < sizeof fwd_cases / sizeof fwd_cases[0]; ++i)
        th_add(fwd_cases[i].name, run_fwd, &fwd_cases[i], TH_GPU);
    for (size_t i = 0; i < sizeof bwd_cases / sizeof bwd_cases[0]; ++i)
        th_add(bwd_cases[i].name, run_bwd, &bwd_cases[i], TH_GPU);
    for (size_t i = 0; i < sizeof rot_cases / sizeof rot_cases[0]; ++i)
        th_add(rot_cases[i].name, run_rot, &rot_cases[i], TH_GPU);
    int rc = th_run("cuda_wide");
    hk_context_destroy(cpu_ctx.ctx);
    return rc;
}
