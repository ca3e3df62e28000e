/* CPU attention in fp32, the oracle for the GPU kernels. A query row is handled whole: its scores against every
 * key it sees (causal and window edges cut one contiguous key range per row) go to an fp32 row, capped by
 * softcap * tanh(s / softcap) when softcap is set, then an exact softmax (max, exp, sum) and P V. The backward
 * recomputes P from the forward's LSE; dQ belongs to (batch, query head, row block) tasks and dK/dV to
 * (batch, kv head, key block) tasks, so no two threads write one element and the results never depend on
 * scheduling. */
#include "cpu.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { ATTN_BLOCK = 64 }; /* query rows (forward, dQ) or keys (dK/dV) per task */

/* The shape fields the forward and backward args share, plus what varlen derives from cu_seqlens. */
typedef struct attn_dims {
    hk_dtype dtype;
    int64_t batch, seqlen_q, seqlen_k, heads_q, heads_kv, head_dim, head_dim_v;
    int64_t group;        /* query heads per kv head */
    const int32_t *cu_q, *cu_k;
    int64_t max_q, max_k; /* longest sequences (seqlen_q / seqlen_k unless varlen) */
    int64_t total_q;      /* varlen: packed query tokens; lse is [heads_q, total_q] */
    float scale;
    int causal;
    int64_t left, right; /* normalised window bounds (internal.h), -1 unbounded; causal is right = 0 */
    float softcap;       /* 0: none */
} attn_dims;

/* The mask and score fields the forward and backward args share. */
typedef struct attn_mask {
    int causal;
    int64_t left, right;
    float softcap;
} attn_mask;

static int64_t attn_seq_len(const int32_t *cu, int64_t b, int64_t fixed)
{
    if (!cu)
        return fixed;
    int64_t len = (int64_t)cu[b + 1] - cu[b];
    return len > 0 ? len : 0;
}

static void attn_dims_init(attn_dims *g, hk_dtype dtype, int64_t batch, int64_t seqlen_q, int64_t seqlen_k,
                           int64_t heads_q, int64_t heads_kv, int64_t head_dim, int64_t head_dim_v, float scale,
                           attn_mask mask, const int32_t *cu_q, const int32_t *cu_k)
{
    *g = (attn_dims){.dtype = dtype, .batch = batch, .seqlen_q = seqlen_q, .seqlen_k = seqlen_k,
                     .heads_q = heads_q, .heads_kv = heads_kv, .head_dim = head_dim, .head_dim_v = head_dim_v,
                     .group = heads_kv > 0 ? heads_q / heads_kv : 0, .cu_q = cu_q, .cu_k = cu_k,
                     .max_q = cu_q ? 0 : seqlen_q, .max_k = cu_k ? 0 : seqlen_k,
                     .total_q = cu_q ? cu_q[batch] : batch * seqlen_q, .scale = scale, .causal = mask.causal,
                     .left = mask.left, .right = mask.causal ? 0 : mask.right, .softcap = mask.softcap};
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

/* Keys [*lo, *hi) visible to query row i of a sequence of nq queries and nk keys: the causal and window edges
 * are offsets from the key the row is aligned with (bottom-right), so the visible keys are one range. */
static void attn_keys(const attn_dims *g, int64_t i, int64_t nq, int64_t nk, int64_t *lo, int64_t *hi)
{
    int64_t diag = i + nk - nq;
    int64_t l = g->left >= 0 && diag - g->left > 0 ? diag - g->left : 0;
    int64_t h = g->right >= 0 && diag + g->right + 1 < nk ? diag + g->right + 1 : nk;
    *lo = l < nk ? l : nk;
    *hi = h > *lo ? h : *lo;
}

/* The score the softmax sees for a scaled score s. */
static float attn_cap(const attn_dims *g, float s)
{
    return g->softcap > 0.0f ? g->softcap * tanhf(s / g->softcap) : s;
}

/* d cap(s) / d s, from the capped score c = softcap * tanh(s / softcap): 1 - tanh^2. */
static float attn_cap_slope(const attn_dims *g, float c)
{
    if (g->softcap <= 0.0f)
        return 1.0f;
    float t = c / g->softcap;
    return 1.0f - t * t;
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
    int64_t d = g->head_dim, dv = g->head_dim_v;
    float *kf = attn_scratch(g->max_k * (d + dv + 1) + d + dv, &job->oom);
    if (!kf)
        return;
    float *vf = kf + g->max_k * d, *s = vf + g->max_k * dv, *q = s + g->max_k, *o = q + d;
    for (int64_t t = begin; t < end; t++) {
        int64_t b = t / (g->heads_q * job->blocks), h = t / job->blocks % g->heads_q, kvh = h / g->group;
        int64_t nq = attn_seq_len(g->cu_q, b, g->seqlen_q), nk = attn_seq_len(g->cu_k, b, g->seqlen_k);
        int64_t i0 = t % job->blocks * ATTN_BLOCK, i1 = i0 + ATTN_BLOCK < nq ? i0 + ATTN_BLOCK : nq;
        if (i0 >= i1)
            continue;
        /* Both edges move right with the row: the block's keys run from its first row's start to its last's end;
         * kf and vf hold them from k0 on. */
        int64_t k0, k1, unused;
        attn_keys(g, i0, nq, nk, &k0, &unused);
        attn_keys(g, i1 - 1, nq, nk, &unused, &k1);
        for (int64_t j = k0; j < k1; j++) {
            attn_load(g->dtype, a->k, attn_token(a->k_stride, g->cu_k, b, j, kvh), d, kf + (j - k0) * d);
            attn_load(g->dtype, a->v, attn_token(a->v_stride, g->cu_k, b, j, kvh), dv, vf + (j - k0) * dv);
        }
        for (int64_t i = i0; i < i1; i++) {
            int64_t lo, hi;
            attn_keys(g, i, nq, nk, &lo, &hi);
            float lse = -INFINITY;
            memset(o, 0, (size_t)dv * sizeof(float));
            if (hi > lo) {
                attn_load(g->dtype, a->q, attn_token(a->q_stride, g->cu_q, b, i, h), d, q);
                float mx = -INFINITY;
                for (int64_t j = lo; j < hi; j++) {
                    float sj = attn_cap(g, g->scale * attn_dot(q, kf + (j - k0) * d, d));
                    s[j - lo] = sj;
                    mx = sj > mx ? sj : mx;
                }
                float sum = 0.0f;
                for (int64_t j = lo; j < hi; j++) {
                    float p = expf(s[j - lo] - mx);
                    sum += p;
                    attn_axpy(p, vf + (j - k0) * dv, o, dv);
                }
                for (int64_t c = 0; c < dv; c++)
                    o[c] /= sum;
                lse = mx + logf(sum);
            }
            attn_store(g->dtype, a->o, attn_token(a->o_stride, g->cu_q, b, i, h), dv, o);
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
    attn_mask mask = {a->causal, a->window_left, a->window_right, a->softcap};
    attn_dims_init(&job.g, a->dtype, a->batch, a->seqlen_q, a->seqlen_k, a->heads_q, a->heads_kv, a->head_dim,
                   a->head_dim_v, a->softmax_scale, mask, a->cu_seqlens_q, a->cu_seqlens_k);
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
    .description = "reference attention forward: any head_dim and head_dim_v, GQA, causal, window, softcap, varlen; "
                   "BF16/F16/F32, fp32 math",
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

/* dS by the scaled raw score for key row kj: P (dP - di) through the cap's slope. *p gets P. */
static float attn_ds(const attn_dims *g, const float *q, const float *dout, const float *kj, const float *vj,
                     float lse, float di, float *p)
{
    float c = attn_cap(g, g->scale * attn_dot(q, kj, g->head_dim));
    *p = expf(c - lse);
    return *p * (attn_dot(dout, vj, g->head_dim_v) - di) * attn_cap_slope(g, c);
}

/* dQ pass, task t: rows [blk * ATTN_BLOCK, +ATTN_BLOCK) of query head h of sequence b; also fills di. */
static void attn_bwd_dq(int64_t begin, int64_t end, void *user)
{
    attn_bwd_job *job = user;
    const hk_attn_bwd_args *a = job->a;
    const attn_dims *g = &job->g;
    int64_t d = g->head_dim, dv = g->head_dim_v;
    float *kf = attn_scratch(g->max_k * (d + dv) + 2 * d + 2 * dv, &job->oom);
    if (!kf)
        return;
    float *vf = kf + g->max_k * d, *q = vf + g->max_k * dv, *dq = q + d, *dout = dq + d, *o = dout + dv;
    for (int64_t t = begin; t < end; t++) {
        int64_t b = t / (g->heads_q * job->blocks), h = t / job->blocks % g->heads_q, kvh = h / g->group;
        int64_t nq = attn_seq_len(g->cu_q, b, g->seqlen_q), nk = attn_seq_len(g->cu_k, b, g->seqlen_k);
        int64_t i0 = t % job->blocks * ATTN_BLOCK, i1 = i0 + ATTN_BLOCK < nq ? i0 + ATTN_BLOCK : nq;
        if (i0 >= i1)
            continue;
        int64_t k0, k1, unused; /* the block's keys, as in the forward */
        attn_keys(g, i0, nq, nk, &k0, &unused);
        attn_keys(g, i1 - 1, nq, nk, &unused, &k1);
        for (int64_t j = k0; j < k1; j++) {
            attn_load(g->dtype, a->k, attn_token(a->k_stride, g->cu_k, b, j, kvh), d, kf + (j - k0) * d);
            attn_load(g->dtype, a->v, attn_token(a->v_stride, g->cu_k, b, j, kvh), dv, vf + (j - k0) * dv);
        }
        for (int64_t i = i0; i < i1; i++) {
            int64_t row = attn_lse_index(g, b, h, i);
            attn_load(g->dtype, a->d_o, attn_token(a->do_stride, g->cu_q, b, i, h), dv, dout);
            attn_load(g->dtype, a->o, attn_token(a->o_stride, g->cu_q, b, i, h), dv, o);
            float di = attn_dot(dout, o, dv);
            job->di[row] = di;
            float lse = a->lse[row];
            int64_t lo, hi;
            attn_keys(g, i, nq, nk, &lo, &hi);
            if (lse == -INFINITY) /* the row saw nothing: P = 0 */
                hi = lo;
            memset(dq, 0, (size_t)d * sizeof(float));
            if (hi > lo)
                attn_load(g->dtype, a->q, attn_token(a->q_stride, g->cu_q, b, i, h), d, q);
            for (int64_t j = lo; j < hi; j++) {
                float p, ds = attn_ds(g, q, dout, kf + (j - k0) * d, vf + (j - k0) * dv, lse, di, &p);
                attn_axpy(g->scale * ds, kf + (j - k0) * d, dq, d);
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
    int64_t d = g->head_dim, dv = g->head_dim_v;
    float *kf = attn_scratch(2 * ATTN_BLOCK * (d + dv) + d + dv, &job->oom);
    if (!kf)
        return;
    float *dk = kf + ATTN_BLOCK * d, *vf = dk + ATTN_BLOCK * d, *dvacc = vf + ATTN_BLOCK * dv;
    float *q = dvacc + ATTN_BLOCK * dv, *dout = q + d;
    for (int64_t t = begin; t < end; t++) {
        int64_t b = t / (g->heads_kv * job->blocks), kvh = t / job->blocks % g->heads_kv;
        int64_t nq = attn_seq_len(g->cu_q, b, g->seqlen_q), nk = attn_seq_len(g->cu_k, b, g->seqlen_k);
        int64_t j0 = t % job->blocks * ATTN_BLOCK, j1 = j0 + ATTN_BLOCK < nk ? j0 + ATTN_BLOCK : nk;
        if (j0 >= j1)
            continue;
        for (int64_t j = j0; j < j1; j++) {
            attn_load(g->dtype, a->k, attn_token(a->k_stride, g->cu_k, b, j, kvh), d, kf + (j - j0) * d);
            attn_load(g->dtype, a->v, attn_token(a->v_stride, g->cu_k, b, j, kvh), dv, vf + (j - j0) * dv);
        }
        memset(dk, 0, (size_t)(ATTN_BLOCK * d) * sizeof(float));
        memset(dvacc, 0, (size_t)(ATTN_BLOCK * dv) * sizeof(float));
        for (int64_t h = kvh * g->group; h < (kvh + 1) * g->group; h++)
            for (int64_t i = 0; i < nq; i++) {
                int64_t row = attn_lse_index(g, b, h, i), lo, hi;
                float lse = a->lse[row];
                attn_keys(g, i, nq, nk, &lo, &hi);
                lo = lo > j0 ? lo : j0;
                hi = hi < j1 ? hi : j1;
                if (hi <= lo || lse == -INFINITY)
                    continue;
                attn_load(g->dtype, a->q, attn_token(a->q_stride, g->cu_q, b, i, h), d, q);
                attn_load(g->dtype, a->d_o, attn_token(a->do_stride, g->cu_q, b, i, h), dv, dout);
                float di = job->di[row];
                for (int64_t j = lo; j < hi; j++) {
                    float p, ds = attn_ds(g, q, dout, kf + (j - j0) * d, vf + (j - j0) * dv, lse, di, &p);
                    attn_axpy(p, dout, dvacc + (j - j0) * dv, dv);
                    attn_axpy(g->scale * ds, q, dk + (j - j0) * d, d);
                }
            }
        for (int64_t j = j0; j < j1; j++) {
            attn_store(g->dtype, a->dk, attn_token(a->dk_stride, g->cu_k, b, j, kvh), d, dk + (j - j0) * d);
            attn_store(g->dtype, a->dv, attn_token(a->dv_stride, g->cu_k, b, j, kvh), dv, dvacc + (j - j0) * dv);
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
    attn_mask mask = {a->causal, a->window_left, a->window_right, a->softcap};
    attn_dims_init(&job.g, a->dtype, a->batch, a->seqlen_q, a->seqlen_k, a->heads_q, a->heads_kv, a->head_dim,
                   a->head_dim_v, a->softmax_scale, mask, a->cu_seqlens_q, a->cu_seqlens_k);
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
    .description = "reference attention backward: any head_dim and head_dim_v, GQA, causal, window, softcap, varlen; "
                   "deterministic, fp32 math",
    .backend = HK_BACKEND_CPU,
    .archs = NULL,
    .supports = hk_cpu_supports_all,
    .run = attn_bwd_run,
    .workspace = attn_bwd_workspace,
};
