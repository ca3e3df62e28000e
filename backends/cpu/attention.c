/* CPU attention in fp32, the oracle for the GPU kernels. A query row is handled whole: its scores against every
 * key it sees go to an fp32 row, then an exact softmax (max, exp, sum) and P V. The backward recomputes P from
 * the forward's LSE; dQ belongs to (batch, query head, row block) tasks and dK/dV to (batch, kv head, key block)
 * tasks, so no two threads write one element and the results never depend on scheduling. */
#include "cpu.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { ATTN_BLOCK = 64 }; /* query rows (forward, dQ) or keys (dK/dV) per task */

/* The shape fields the forward and backward args share, plus what varlen derives from cu_seqlens. */
typedef struct attn_dims {
    hk_dtype dtype;
    int64_t batch, seqlen_q, seqlen_k, heads_q, heads_kv, head_dim;
    int64_t group;        /* query heads per kv head */
    const int32_t *cu_q, *cu_k;
    int64_t max_q, max_k; /* longest sequences (seqlen_q / seqlen_k unless varlen) */
    int64_t total_q;      /* varlen: packed query tokens; lse is [heads_q, total_q] */
    float scale;
    int causal;
} attn_dims;

static int64_t attn_seq_len(const int32_t *cu, int64_t b, int64_t fixed)
{
    if (!cu)
        return fixed;
    int64_t len = (int64_t)cu[b + 1] - cu[b];
    return len > 0 ? len : 0;
}

static void attn_dims_init(attn_dims *g, hk_dtype dtype, int64_t batch, int64_t seqlen_q, int64_t seqlen_k,
                           int64_t heads_q, int64_t heads_kv, int64_t head_dim, float scale, int causal,
                           const int32_t *cu_q, const int32_t *cu_k)
{
    *g = (attn_dims){.dtype = dtype, .batch = batch, .seqlen_q = seqlen_q, .seqlen_k = seqlen_k,
                     .heads_q = heads_q, .heads_kv = heads_kv, .head_dim = head_dim,
                     .group = heads_kv > 0 ? heads_q / heads_kv : 0, .cu_q = cu_q, .cu_k = cu_k,
                     .max_q = cu_q ? 0 : seqlen_q, .max_k = cu_k ? 0 : seqlen_k,
                     .total_q = cu_q ? cu_q[batch] : batch * seqlen_q, .scale = scale, .causal = causal};
    /* Size scratch by the real sequences, not by the caller's maxima. */
    for (int64_t b = 0; b < batch; b++) {
        int64_t nq = attn_seq_len(cu_q, b, seqlen_q), nk = attn_seq_len(cu_k, b, seqlen_k);
        g->max_q = nq > g->max_q ? nq : g->max_q;
        g->max_k = nk > g->max_k ? nk : g->max_k;
    }
}

/* Element offset of token t of sequence b, head h (varlen tokens are packed, the batch stride unused). */
static int64_t attn_token(const int64_t stride[3], const int32_t *cu, int64_t b, int64_t t, int64_t h)
{
    return (cu ? ((int64_t)cu[b] + t) * stride[1] : b * stride[0] + t * stride[1]) + h * stride[2];
}

static int64_t attn_lse_index(const attn_dims *g, int64_t b, int64_t h, int64_t i)
{
    return g->cu_q ? h * g->total_q + g->cu_q[b] + i : (b * g->heads_q + h) * g->seqlen_q + i;
}

/* Keys [0, result) visible to query row i (bottom-right aligned causal mask). */
static int64_t attn_visible(const attn_dims *g, int64_t i, int64_t nq, int64_t nk)
{
    if (!g->causal)
        return nk;
    int64_t v = i + nk - nq + 1;
    return v < 0 ? 0 : v > nk ? nk : v;
}

static void attn_load(hk_dtype dtype, const void *base, int64_t offset, int64_t n, float *dst)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = hk_load_scalar(dtype, base, offset + i);
}

static void attn_store(hk_dtype dtype, void *base, int64_t offset, int64_t n, const float *src)
{
    for (int64_t i = 0; i < n; i++)
        hk_store_scalar(dtype, base, offset + i, src[i]);
}

/* Eight independent partial sums, so the compiler can vectorise without reassociating. */
static float attn_dot(const float *x, const float *y, int64_t n)
{
    float lane[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; l++)
            lane[l] += x[i + l] * y[i + l];
    float s = ((lane[0] + lane[4]) + (lane[1] + lane[5])) + ((lane[2] + lane[6]) + (lane[3] + lane[7]));
    for (; i < n; i++)
        s += x[i] * y[i];
    return s;
}

static void attn_axpy(float a, const float *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] += a * x[i];
}

static float *attn_scratch(int64_t floats, atomic_int *oom)
{
    float *p = malloc((size_t)(floats > 0 ? floats : 1) * sizeof(float));
    if (!p)
        atomic_store(oom, 1);
    return p;
}

/* ---------------------------------------------------------------- forward */

typedef struct attn_fwd_job {
    const hk_attn_fwd_args *a;
    attn_dims g;
    int64_t blocks; /* row blocks per (batch, query head) */
    atomic_int oom;
} attn_fwd_job;

/* Task t: rows [blk * ATTN_BLOCK, +ATTN_BLOCK) of query head h of sequence b. */
static void attn_fwd_rows(int64_t begin, int64_t end, void *user)
{
    attn_fwd_job *job = user;
    const hk_attn_fwd_args *a = job->a;
    const attn_dims *g = &job->g;
    int64_t d = g->head_dim;
    float *kf = attn_scratch(2 * g->max_k * d + g->max_k + 2 * d, &job->oom);
    if (!kf)
        return;
    float *vf = kf + g->max_k * d, *s = vf + g->max_k * d, *q = s + g->max_k, *o = q + d;
    for (int64_t t = begin; t < end; t++) {
        int64_t b = t / (g->heads_q * job->blocks), h = t / job->blocks % g->heads_q, kvh = h / g->group;
        int64_t nq = attn_seq_len(g->cu_q, b, g->seqlen_q), nk = attn_seq_len(g->cu_k, b, g->seqlen_k);
        int64_t i0 = t % job->blocks * ATTN_BLOCK, i1 = i0 + ATTN_BLOCK < nq ? i0 + ATTN_BLOCK : nq;
        if (i0 >= i1)
            continue;
        int64_t keys = attn_visible(g, i1 - 1, nq, nk); /* the last row sees the most */
        for (int64_t j = 0; j < keys; j++) {
            attn_load(g->dtype, a->k, attn_token(a->k_stride, g->cu_k, b, j, kvh), d, kf + j * d);
            attn_load(g->dtype, a->v, attn_token(a->v_stride, g->cu_k, b, j, kvh), d, vf + j * d);
        }
        for (int64_t i = i0; i < i1; i++) {
            int64_t vis = attn_visible(g, i, nq, nk);
            float lse = -INFINITY;
            memset(o, 0, (size_t)d * sizeof(float));
            if (vis > 0) {
                attn_load(g->dtype, a->q, attn_token(a->q_stride, g->cu_q, b, i, h), d, q);
                float mx = -INFINITY;
                for (int64_t j = 0; j < vis; j++) {
                    s[j] = g->scale * attn_dot(q, kf + j * d, d);
                    mx = s[j] > mx ? s[j] : mx;
                }
                float sum = 0.0f;
                for (int64_t j = 0; j < vis; j++) {
                    s[j] = expf(s[j] - mx);
                    sum += s[j];
                    attn_axpy(s[j], vf + j * d, o, d);
                }
                for (int64_t c = 0; c < d; c++)
                    o[c] /= sum;
                lse = mx + logf(sum);
            }
            attn_store(g->dtype, a->o, attn_token(a->o_stride, g->cu_q, b, i, h), d, o);
            if (a->lse)
                a->lse[attn_lse_index(g, b, h, i)] = lse;
        }
    }
    free(kf);
}

static hk_status attn_fwd_run(hk_context *ctx, const void *args)
{
    (void)ctx;
    const hk_attn_fwd_args *a = args;
    if (a->batch == 0 || a->heads_q == 0 || a->head_dim == 0)
        return HK_OK;
    attn_fwd_job job = {.a = a};
    attn_dims_init(&job.g, a->dtype, a->batch, a->seqlen_q, a->seqlen_k, a->heads_q, a->heads_kv, a->head_dim,
                   a->softmax_scale, a->causal, a->cu_seqlens_q, a->cu_seqlens_k);
    atomic_init(&job.oom, 0);
    job.blocks = (job.g.max_q + ATTN_BLOCK - 1) / ATTN_BLOCK;
    hk_parallel_for(a->batch * a->heads_q * job.blocks, 1, attn_fwd_rows, &job);
    if (atomic_load(&job.oom))
        return hk_fail(HK_ERR_OUT_OF_MEMORY, "cpu.attn_fwd: cannot allocate fp32 scratch for %lld keys",
                       (long long)job.g.max_k);
    return HK_OK;
}

HK_INTERNAL const hk_variant hk_cpu_attn_fwd = {
    .op = HK_OP_ATTN_FWD,
    .name = "cpu.attn_fwd",
    .description = "reference attention forward: any head_dim, GQA, causal, varlen; BF16/F16/F32, fp32 math",
    .backend = HK_BACKEND_CPU,
    .archs = NULL,
    .supports = hk_cpu_supports_all,
    .run = attn_fwd_run,
    .workspace = NULL,
};

/* ---------------------------------------------------------------- backward */

typedef struct attn_bwd_job {
    const hk_attn_bwd_args *a;
    attn_dims g;
    int64_t blocks; /* row blocks (dQ pass) or key blocks (dK/dV pass) per (batch, head) */
    float *di;      /* rowsum(dO * O), indexed like lse; written by the dQ pass */
    atomic_int oom;
} attn_bwd_job;

/* dQ pass, task t: rows [blk * ATTN_BLOCK, +ATTN_BLOCK) of query head h of sequence b; also fills di. */
static void attn_bwd_dq(int64_t begin, int64_t end, void *user)
{
    attn_bwd_job *job = user;
    const hk_attn_bwd_args *a = job->a;
    const attn_dims *g = &job->g;
    int64_t d = g->head_dim;
    float *kf = attn_scratch(2 * g->max_k * d + 4 * d, &job->oom);
    if (!kf)
        return;
    float *vf = kf + g->max_k * d, *q = vf + g->max_k * d, *dout = q + d, *o = dout + d, *dq = o + d;
    for (int64_t t = begin; t < end; t++) {
        int64_t b = t / (g->heads_q * job->blocks), h = t / job->blocks % g->heads_q, kvh = h / g->group;
        int64_t nq = attn_seq_len(g->cu_q, b, g->seqlen_q), nk = attn_seq_len(g->cu_k, b, g->seqlen_k);
        int64_t i0 = t % job->blocks * ATTN_BLOCK, i1 = i0 + ATTN_BLOCK < nq ? i0 + ATTN_BLOCK : nq;
        if (i0 >= i1)
            continue;
        int64_t keys = attn_visible(g, i1 - 1, nq, nk);
        for (int64_t j = 0; j < keys; j++) {
            attn_load(g->dtype, a->k, attn_token(a->k_stride, g->cu_k, b, j, kvh), d, kf + j * d);
            attn_load(g->dtype, a->v, attn_token(a->v_stride, g->cu_k, b, j, kvh), d, vf + j * d);
        }
        for (int64_t i = i0; i < i1; i++) {
            int64_t row = attn_lse_index(g, b, h, i);
            attn_load(g->dtype, a->d_o, attn_token(a->do_stride, g->cu_q, b, i, h), d, dout);
            attn_load(g->dtype, a->o, attn_token(a->o_stride, g->cu_q, b, i, h), d, o);
            float di = attn_dot(dout, o, d);
            job->di[row] = di;
            float lse = a->lse[row];
            int64_t vis = lse == -INFINITY ? 0 : attn_visible(g, i, nq, nk); /* -inf: the row saw nothing, P = 0 */
            memset(dq, 0, (size_t)d * sizeof(float));
            if (vis > 0)
                attn_load(g->dtype, a->q, attn_token(a->q_stride, g->cu_q, b, i, h), d, q);
            for (int64_t j = 0; j < vis; j++) {
                float p = expf(g->scale * attn_dot(q, kf + j * d, d) - lse);
                float ds = p * (attn_dot(dout, vf + j * d, d) - di);
                attn_axpy(g->scale * ds, kf + j * d, dq, d);
            }
            attn_store(g->dtype, a->dq, attn_token(a->dq_stride, g->cu_q, b, i, h), d, dq);
        }
    }
    free(kf);
}

/* dK/dV pass, task t: keys [blk * ATTN_BLOCK, +ATTN_BLOCK) of kv head kvh of sequence b, summed over the
 * query heads of its group in a fixed order. */
static void attn_bwd_dkv(int64_t begin, int64_t end, void *user)
{
    attn_bwd_job *job = user;
    const hk_attn_bwd_args *a = job->a;
    const attn_dims *g = &job->g;
    int64_t d = g->head_dim;
    float *kf = attn_scratch(4 * ATTN_BLOCK * d + 2 * d, &job->oom);
    if (!kf)
        return;
    float *vf = kf + ATTN_BLOCK * d, *dk = vf + ATTN_BLOCK * d, *dv = dk + ATTN_BLOCK * d;
    float *q = dv + ATTN_BLOCK * d, *dout = q + d;
    for (int64_t t = begin; t < end; t++) {
        int64_t b = t / (g->heads_kv * job->blocks), kvh = t / job->blocks % g->heads_kv;
        int64_t nq = attn_seq_len(g->cu_q, b, g->seqlen_q), nk = attn_seq_len(g->cu_k, b, g->seqlen_k);
        int64_t j0 = t % job->blocks * ATTN_BLOCK, j1 = j0 + ATTN_BLOCK < nk ? j0 + ATTN_BLOCK : nk;
        if (j0 >= j1)
            continue;
        for (int64_t j = j0; j < j1; j++) {
            attn_load(g->dtype, a->k, attn_token(a->k_stride, g->cu_k, b, j, kvh), d, kf + (j - j0) * d);
            attn_load(g->dtype, a->v, attn_token(a->v_stride, g->cu_k, b, j, kvh), d, vf + (j - j0) * d);
        }
        memset(dk, 0, (size_t)(2 * ATTN_BLOCK * d) * sizeof(float)); /* dk and dv */
        /* Rows before this one see only keys before j0. */
        int64_t first = g->causal && j0 - (nk - nq) > 0 ? j0 - (nk - nq) : 0;
        for (int64_t h = kvh * g->group; h < (kvh + 1) * g->group; h++)
            for (int64_t i = first; i < nq; i++) {
                int64_t row = attn_lse_index(g, b, h, i);
                float lse = a->lse[row];
                int64_t vis = lse == -INFINITY ? 0 : attn_visible(g, i, nq, nk);
                int64_t jend = vis < j1 ? vis : j1;
                if (jend <= j0)
                    continue;
                attn_load(g->dtype, a->q, attn_token(a->q_stride, g->cu_q, b, i, h), d, q);
                attn_load(g->dtype, a->d_o, attn_token(a->do_stride, g->cu_q, b, i, h), d, dout);
                float di = job->di[row];
                for (int64_t j = j0; j < jend; j++) {
                    const float *kj = kf + (j - j0) * d, *vj = vf + (j - j0) * d;
                    float p = expf(g->scale * attn_dot(q, kj, d) - lse);
                    float ds = p * (attn_dot(dout, vj, d) - di);
                    attn_axpy(p, dout, dv + (j - j0) * d, d);
                    attn_axpy(g->scale * ds, q, dk + (j - j0) * d, d);
                }
            }
        for (int64_t j = j0; j < j1; j++) {
            attn_store(g->dtype, a->dk, attn_token(a->dk_stride, g->cu_k, b, j, kvh), d, dk + (j - j0) * d);
            attn_store(g->dtype, a->dv, attn_token(a->dv_stride, g->cu_k, b, j, kvh), d, dv + (j - j0) * d);
        }
    }
    free(kf);
}

static hk_status attn_bwd_run(hk_context *ctx, const void *args)
{
    (void)ctx;
    const hk_attn_bwd_args *a = args;
    if (a->batch == 0 || a->heads_q == 0 || a->head_dim == 0)
        return HK_OK;
    attn_bwd_job job = {.a = a};
    attn_dims_init(&job.g, a->dtype, a->batch, a->seqlen_q, a->seqlen_k, a->heads_q, a->heads_kv, a->head_dim,
                   a->softmax_scale, a->causal, a->cu_seqlens_q, a->cu_seqlens_k);
    atomic_init(&job.oom, 0);
    int64_t rows = job.g.heads_q * job.g.total_q;
    job.di = malloc((size_t)(rows > 0 ? rows : 1) * sizeof(float));
    if (!job.di)
        return hk_fail(HK_ERR_OUT_OF_MEMORY, "cpu.attn_bwd: cannot allocate %lld floats of row scratch",
                       (long long)rows);
    job.blocks = (job.g.max_q + ATTN_BLOCK - 1) / ATTN_BLOCK;
    hk_parallel_for(a->batch * a->heads_q * job.blocks, 1, attn_bwd_dq, &job);
    if (!atomic_load(&job.oom)) {
        job.blocks = (job.g.max_k + ATTN_BLOCK - 1) / ATTN_BLOCK;
        hk_parallel_for(a->batch * a->heads_kv * job.blocks, 1, attn_bwd_dkv, &job);
    }
    free(job.di);
    if (atomic_load(&job.oom))
        return hk_fail(HK_ERR_OUT_OF_MEMORY, "cpu.attn_bwd: cannot allocate fp32 scratch for %lld keys",
                       (long long)job.g.max_k);
    return HK_OK;
}

/* The CPU keeps its scratch to itself (malloc/free inside the call). */
static size_t attn_bwd_workspace(const hk_context *ctx, const void *args)
{
    (void)ctx, (void)args;
    return 0;
}

HK_INTERNAL const hk_variant hk_cpu_attn_bwd = {
    .op = HK_OP_ATTN_BWD,
    .name = "cpu.attn_bwd",
    .description = "reference attention backward: any head_dim, GQA, causal, varlen; deterministic, fp32 math",
    .backend = HK_BACKEND_CPU,
    .archs = NULL,
    .supports = hk_cpu_supports_all,
    .run = attn_bwd_run,
    .workspace = attn_bwd_workspace,
};
