/* CPU dropout + residual + LayerNorm/RMSNorm, forward and backward: one row at a time in fp32, rows spread
 * over threads. The forward normalises the fp32 z (before it is rounded to the activation dtype for
 * residual_out), as a GPU kernel that keeps z in registers does. */
#include "cpu.h"

#include "common/philox.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The backward accumulates dgamma/dbeta per block of rows and sums the blocks in index order. The blocks
 * depend only on the problem shape, never on the thread count, so results are bit-reproducible. */
#define HK_LN_BWD_MAX_BLOCKS 128
#define HK_LN_BWD_MIN_ROWS_PER_BLOCK 16
#define HK_LN_BWD_MAX_PARTIAL_FLOATS ((int64_t)1 << 24) /* 64 MiB per partial array */

typedef struct hk_cpu_dropout {
    uint64_t seed, offset;
    uint32_t threshold;
    float scale;
    const uint32_t *mask_in; /* the backward's given mask, read instead of Philox */
    uint32_t *mask_out;      /* the forward's mask to write */
    int64_t words;           /* mask words per row */
} hk_cpu_dropout;

static hk_cpu_dropout hk_cpu_dropout_init(float p, uint64_t seed, uint64_t offset, int64_t cols)
{
    hk_cpu_dropout d = {seed, offset, hk_dropout_threshold(p), 1.0f / (1.0f - p), NULL, NULL, HK_DROPOUT_MASK_WORDS(cols)};
    return d;
}

/* Scale the kept elements of row r of v (n columns) and zero the dropped ones: the given mask's bits decide,
 * else one Philox block per group of four consecutive logical indices r * n + c; the decisions also land in
 * the mask to write. Callers skip this when p == 0 and there is no mask. */
static void hk_apply_dropout(float *v, int64_t n, int64_t r, const hk_cpu_dropout *d)
{
    const uint32_t *in = d->mask_in ? d->mask_in + r * d->words : NULL;
    uint32_t *out = d->mask_out ? d->mask_out + r * d->words : NULL;
    if (out)
        memset(out, 0, (size_t)d->words * sizeof *out);
    const uint64_t first = (uint64_t)r * (uint64_t)n;
    hk_philox_out w = {{0}};
    for (int64_t c = 0; c < n; ++c) {
        const uint64_t i = first + (uint64_t)c;
        if (!in && (c == 0 || (i & 3) == 0))
            w = hk_dropout_words(d->seed, d->offset, i >> 2);
        const bool keep = in ? hk_dropout_mask_kept(in, c) : w.w[i & 3] >= d->threshold;
        if (out && keep)
            out[c >> 5] |= 1u << (c & 31);
        v[c] = keep ? v[c] * d->scale : 0.0f;
    }
}

/* Row reductions in eight interleaved fp32 lanes: a fixed order (deterministic), vectorisable, and with
 * less rounding error than one serial chain. */
static float hk_row_sum(const float *v, int64_t n)
{
    float lane[8] = {0};
    int64_t c = 0;
    for (; c + 8 <= n; c += 8)
        for (int l = 0; l < 8; ++l)
            lane[l] += v[c + l];
    for (; c < n; ++c)
        lane[c & 7] += v[c];
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

static float hk_row_dot(const float *u, const float *v, int64_t n)
{
    float lane[8] = {0};
    int64_t c = 0;
    for (; c + 8 <= n; c += 8)
        for (int l = 0; l < 8; ++l)
            lane[l] += u[c + l] * v[c + l];
    for (; c < n; ++c)
        lane[c & 7] += u[c] * v[c];
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

/* gamma (and beta) as fp32: used in place when already F32, else converted once per call into *owned. */
static hk_status hk_load_params(hk_dtype type, const void *gamma, const void *beta, int64_t cols,
                                const float **gamma_f, const float **beta_f, float **owned)
{
    *owned = NULL;
    if (type == HK_DTYPE_F32) {
        *gamma_f = gamma;
        *beta_f = beta;
        return HK_OK;
    }
    size_t bytes = (size_t)cols * (beta ? 2 : 1) * sizeof(float);
    float *buf = malloc(bytes);
    if (!buf)
        return hk_fail(HK_ERR_OUT_OF_MEMORY, "cpu.ln_fused: cannot allocate %zu bytes for fp32 gamma/beta", bytes);
    for (int64_t c = 0; c < cols; ++c)
        buf[c] = hk_load_scalar(type, gamma, c);
    if (beta)
        for (int64_t c = 0; c < cols; ++c)
            buf[cols + c] = hk_load_scalar(type, beta, c);
    *gamma_f = buf;
    *beta_f = beta ? buf + cols : NULL;
    *owned = buf;
    return HK_OK;
}

/* ---------------------------------------------------------------- forward */

typedef struct hk_ln_fwd_job {
    const hk_ln_fused_args *a;
    const float *gamma, *beta;
    hk_cpu_dropout drop;
    atomic_int out_of_memory;
} hk_ln_fwd_job;

static void hk_ln_fwd_rows(int64_t begin, int64_t end, void *user)
{
    hk_ln_fwd_job *job = user;
    const hk_ln_fused_args *a = job->a;
    const int64_t n = a->cols;
    const hk_dtype t = a->dtype;
    float *z = malloc((size_t)n * sizeof *z);
    if (!z) {
        atomic_store(&job->out_of_memory, 1);
        return;
    }
    for (int64_t r = begin; r < end; ++r) {
        for (int64_t c = 0; c < n; ++c)
            z[c] = hk_load_scalar(t, a->x, r * a->x_stride + c);
        if (a->dropout_p > 0.0f || a->dropout_mask)
            hk_apply_dropout(z, n, r, &job->drop);
        if (a->residual)
            for (int64_t c = 0; c < n; ++c)
                z[c] += hk_load_scalar(t, a->residual, r * a->residual_stride + c);
        if (a->residual_out)
            for (int64_t c = 0; c < n; ++c)
                hk_store_scalar(t, a->residual_out, r * a->residual_out_stride + c, z[c]);

        /* Two passes: centre z in place, then the biased variance of the centred values. */
        float mean = 0.0f;
        if (a->norm == HK_NORM_LAYER) {
            mean = hk_row_sum(z, n) / (float)n;
            for (int64_t c = 0; c < n; ++c)
                z[c] -= mean;
        }
        float rstd = 1.0f / sqrtf(hk_row_dot(z, z, n) / (float)n + a->epsilon);
        for (int64_t c = 0; c < n; ++c) {
            float y = z[c] * rstd * job->gamma[c];
            if (job->beta)
                y += job->beta[c];
            hk_store_scalar(t, a->y, r * a->y_stride + c, y);
        }
        if (a->mean && a->norm == HK_NORM_LAYER)
            a->mean[r] = mean;
        if (a->rstd)
            a->rstd[r] = rstd;
    }
    free(z);
}

static hk_status hk_cpu_ln_fused_run(hk_context *ctx, const void *args)
{
    (void)ctx;
    const hk_ln_fused_args *a = args;
    if (a->rows == 0 || a->cols == 0)
        return HK_OK;
    hk_ln_fwd_job job = {.a = a, .drop = hk_cpu_dropout_init(a->dropout_p, a->seed, a->offset, a->cols)};
    job.drop.mask_out = a->dropout_mask;
    atomic_init(&job.out_of_memory, 0);
    float *owned;
    hk_status st = hk_load_params(a->param_type, a->gamma, a->beta, a->cols, &job.gamma, &job.beta, &owned);
    if (st != HK_OK)
        return st;
    hk_parallel_for(a->rows, 16384 / a->cols + 1, hk_ln_fwd_rows, &job);
    free(owned);
    if (atomic_load(&job.out_of_memory))
        return hk_fail(HK_ERR_OUT_OF_MEMORY, "cpu.ln_fused: cannot allocate a row buffer of %lld floats",
                       (long long)a->cols);
    return HK_OK;
}

HK_INTERNAL const hk_variant hk_cpu_ln_fused = {
    .op = HK_OP_LN_FUSED,
    .name = "cpu.ln_fused",
    .description = "reference dropout + residual + LayerNorm/RMSNorm forward, any cols, fp32 statistics",
    .backend = HK_BACKEND_CPU,
    .archs = NULL,
    .supports = hk_cpu_supports_all,
    .run = hk_cpu_ln_fused_run,
    .workspace = NULL,
};

/* ---------------------------------------------------------------- backward */

typedef struct hk_ln_bwd_job {
    const hk_ln_fused_bwd_args *a;
    const float *gamma;
    hk_cpu_dropout drop;
    int64_t blocks, rows_per_block;
    float *dgamma_part, *dbeta_part; /* [blocks][cols], NULL when not requested */
    atomic_int out_of_memory;
} hk_ln_bwd_job;

static void hk_ln_bwd_blocks(int64_t begin, int64_t end, void *user)
{
    hk_ln_bwd_job *job = user;
    const hk_ln_fused_bwd_args *a = job->a;
    const int64_t n = a->cols;
    const hk_dtype t = a->dtype;
    const int layer = a->norm == HK_NORM_LAYER;
    float *xhat = malloc(2 * (size_t)n * sizeof *xhat);
    if (!xhat) {
        atomic_store(&job->out_of_memory, 1);
        return;
    }
    float *g = xhat + n; /* dy * gamma, then dz */

    for (int64_t blk = begin; blk < end; ++blk) {
        float *pg = job->dgamma_part ? job->dgamma_part + blk * n : NULL;
        float *pb = job->dbeta_part ? job->dbeta_part + blk * n : NULL;
        if (pg)
            memset(pg, 0, (size_t)n * sizeof *pg);
        if (pb)
            memset(pb, 0, (size_t)n * sizeof *pb);
        int64_t r_end = (blk + 1) * job->rows_per_block;
        if (r_end > a->rows)
            r_end = a->rows;
        for (int64_t r = blk * job->rows_per_block; r < r_end; ++r) {
            const float mean = layer ? a->mean[r] : 0.0f, rstd = a->rstd[r];
            for (int64_t c = 0; c < n; ++c) {
                float dy = hk_load_scalar(t, a->dy, r * a->dy_stride + c);
                xhat[c] = (hk_load_scalar(t, a->z, r * a->z_stride + c) - mean) * rstd;
                g[c] = dy * job->gamma[c];
                if (pg)
                    pg[c] += dy * xhat[c];
                if (pb)
                    pb[c] += dy;
            }
            /* dz = rstd * (g - mean(g) - xhat * mean(g * xhat)); RMSNorm has no mean(g) term. */
            const float mg = layer ? hk_row_sum(g, n) / (float)n : 0.0f;
            const float mgx = hk_row_dot(g, xhat, n) / (float)n;
            for (int64_t c = 0; c < n; ++c) {
                g[c] = rstd * (g[c] - mg - xhat[c] * mgx);
                if (a->dz_extra)
                    g[c] += hk_load_scalar(t, a->dz_extra, r * a->dz_extra_stride + c);
            }
            if (a->dresidual)
                for (int64_t c = 0; c < n; ++c)
                    hk_store_scalar(t, a->dresidual, r * a->dresidual_stride + c, g[c]);
            if (a->dropout_p > 0.0f || a->dropout_mask)
                hk_apply_dropout(g, n, r, &job->drop);
            for (int64_t c = 0; c < n; ++c)
                hk_store_scalar(t, a->dx, r * a->dx_stride + c, g[c]);
        }
    }
    free(xhat);
}

/* dgamma/dbeta of columns [begin, end): the block partials summed in block order. */
static void hk_ln_bwd_reduce(int64_t begin, int64_t end, void *user)
{
    hk_ln_bwd_job *job = user;
    const int64_t n = job->a->cols;
    for (int64_t c = begin; c < end; ++c) {
        float sg = 0.0f, sb = 0.0f;
        for (int64_t blk = 0; blk < job->blocks; ++blk) {
            if (job->dgamma_part)
                sg += job->dgamma_part[blk * n + c];
            if (job->dbeta_part)
                sb += job->dbeta_part[blk * n + c];
        }
        if (job->dgamma_part)
            job->a->dgamma[c] = sg;
        if (job->dbeta_part)
            job->a->dbeta[c] = sb;
    }
}

static hk_status hk_cpu_ln_fused_bwd_run(hk_context *ctx, const void *args)
{
    (void)ctx;
    const hk_ln_fused_bwd_args *a = args;
    if (a->rows == 0 || a->cols == 0)
        return HK_OK;
    hk_ln_bwd_job job = {.a = a, .drop = hk_cpu_dropout_init(a->dropout_p, a->seed, a->offset, a->cols)};
    job.drop.mask_in = a->dropout_mask;
    atomic_init(&job.out_of_memory, 0);

    int64_t blocks = (a->rows + HK_LN_BWD_MIN_ROWS_PER_BLOCK - 1) / HK_LN_BWD_MIN_ROWS_PER_BLOCK;
    int64_t max_blocks = HK_LN_BWD_MAX_PARTIAL_FLOATS / a->cols;
    if (blocks > HK_LN_BWD_MAX_BLOCKS)
        blocks = HK_LN_BWD_MAX_BLOCKS;
    if (blocks > max_blocks)
        blocks = max_blocks > 0 ? max_blocks : 1;
    job.rows_per_block = (a->rows + blocks - 1) / blocks;
    job.blocks = (a->rows + job.rows_per_block - 1) / job.rows_per_block;

    size_t part_floats = (size_t)job.blocks * (size_t)a->cols;
    size_t arrays = (a->dgamma ? 1u : 0u) + (a->dbeta ? 1u : 0u); /* validation rejects dbeta for RMSNorm */
    float *parts = NULL;
    if (arrays) {
        size_t bytes = part_floats * arrays * sizeof(float);
        parts = malloc(bytes);
        if (!parts)
            return hk_fail(HK_ERR_OUT_OF_MEMORY, "cpu.ln_fused_bwd: cannot allocate %zu bytes of partial sums",
                           bytes);
        job.dgamma_part = a->dgamma ? parts : NULL;
        job.dbeta_part = a->dbeta ? parts + (a->dgamma ? part_floats : 0) : NULL;
    }
    const float *beta_unused;
    float *owned;
    hk_status st = hk_load_params(a->param_type, a->gamma, NULL, a->cols, &job.gamma, &beta_unused, &owned);
    if (st != HK_OK) {
        free(parts);
        return st;
    }

    hk_parallel_for(job.blocks, 1, hk_ln_bwd_blocks, &job);
    if (!atomic_load(&job.out_of_memory) && parts)
        hk_parallel_for(a->cols, 256, hk_ln_bwd_reduce, &job);
    free(owned);
    free(parts);
    if (atomic_load(&job.out_of_memory))
        return hk_fail(HK_ERR_OUT_OF_MEMORY, "cpu.ln_fused_bwd: cannot allocate row buffers of %lld floats",
                       (long long)(2 * a->cols));
    return HK_OK;
}

HK_INTERNAL const hk_variant hk_cpu_ln_fused_bwd = {
    .op = HK_OP_LN_FUSED_BWD,
    .name = "cpu.ln_fused_bwd",
    .description = "reference LayerNorm/RMSNorm + dropout backward; deterministic dgamma/dbeta (fixed-order sums)",
    .backend = HK_BACKEND_CPU,
    .archs = NULL,
    .supports = hk_cpu_supports_all,
    .run = hk_cpu_ln_fused_bwd_run,
    .workspace = NULL,
};
