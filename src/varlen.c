/* Attention's checks that need the context. With variable lengths, the offsets decide where the kernels read and
 * write, so they are read and checked before anything launches: on GPU contexts the call waits for the caller's
 * stream (the offsets may be written by work queued on it) and copies them to the host in blocks of
 * OFFSET_BLOCK; on host-memory contexts they are read in place. Then every tensor's layout is checked over the
 * packed token count, and the outputs against every other tensor for aliasing. */
#include "internal.h"

#include <string.h>

enum { OFFSET_BLOCK = 256 }; /* offsets per copy: a stack buffer, no allocation */

typedef struct offsets_view {
    const char *name, *max_name; /* "cu_seqlens_q", "seqlen_q" */
    const int32_t *cu;
    int64_t max; /* the longest sequence the caller stated */
    int64_t tokens; /* out: cu[batch] */
} offsets_view;

/* Read cu[0..batch] in blocks and check: cu[0] >= 0, non-decreasing, each length <= max. */
static hk_status check_offsets(hk_context *ctx, const char *op, int64_t batch, offsets_view *v)
{
    int32_t block[OFFSET_BLOCK];
    int64_t prev = 0;
    for (int64_t first = 0; first <= batch; first += OFFSET_BLOCK) {
        int64_t n = batch + 1 - first < OFFSET_BLOCK ? batch + 1 - first : OFFSET_BLOCK;
        const int32_t *src = v->cu + first;
        if (ctx->gpu) {
            hk_status st = ctx->gpu->copy(ctx->dev, block, src, (size_t)n * sizeof(int32_t), HK_COPY_DEVICE_TO_HOST);
            if (st != HK_OK)
                return st; /* copy() said why */
            src = block;
        }
        for (int64_t i = 0; i < n; ++i) {
            int64_t b = first + i, at = src[i];
            if (b == 0 && at < 0)
                return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: %s[0] = %lld is negative", op, v->name, (long long)at);
            if (b > 0 && at < prev)
                return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: %s decreases at [%lld] (%lld after %lld)", op, v->name,
                               (long long)b, (long long)at, (long long)prev);
            if (b > 0 && at - prev > v->max)
                return hk_fail(HK_ERR_INVALID_ARGUMENT,
                               "%s: sequence %lld has %lld tokens by %s, more than %s %lld (the stated maximum)", op,
                               (long long)b - 1, (long long)(at - prev), v->name, v->max_name, (long long)v->max);
            prev = at;
        }
    }
    v->tokens = prev;
    return HK_OK;
}

/* A call's {batch, seq, head} tensors: [batch, seqlen, heads] dense batches, or [tokens, heads] packed. */
typedef struct attn_layout {
    bool varlen;
    int64_t batch;
    int64_t sq, sk; /* query and key rows per batch entry: the maxima, or the packed token counts */
    int64_t dv;     /* features of V and O */
    size_t elem;
} attn_layout;

static hk_span attn_span(const attn_layout *l, const char *name, const char *field, const void *p,
                         const int64_t stride[3], int64_t seq, int64_t heads, int64_t row, size_t elem)
{
    if (l->varlen) /* the batch stride is ignored */
        return (hk_span){name, p, elem, 2, {seq, heads, 0}, {stride[1], stride[2], 0}, row, NULL, field, 1};
    return (hk_span){name, p, elem, 3, {l->batch, seq, heads}, {stride[0], stride[1], stride[2]}, row, NULL, field, 0};
}

/* NULL and layout of a tensor the call reads or writes (validate.c checked them over one sequence of the maxima
 * only when varlen). */
static hk_status check_span(const char *op, const hk_span *s, bool needed)
{
    bool empty = s->inner == 0;
    for (int d = 0; d < s->rank; ++d)
        empty = empty || s->size[d] == 0;
    if (empty || (!s->p && !needed))
        return HK_OK;
    if (!s->p)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: %s is NULL", op, s->name);
    return hk_check_layout(op, s->name, s->field, s->first, s->rank, s->size, s->stride, s->inner, s->elem);
}

/* lse: fp32 [batch, heads_q, seqlen_q], or [heads_q, total_q] with varlen. */
static hk_span lse_span(const attn_layout *l, const char *name, const void *p, int64_t heads_q, int64_t seq_q)
{
    int64_t rows = l->varlen ? heads_q : l->batch * heads_q;
    return (hk_span){name, p, sizeof(float), 1, {rows, 0, 0}, {seq_q, 0, 0}, seq_q, NULL, name, -1}; /* contiguous */
}

static hk_span offsets_span(const char *name, const int32_t *cu, int64_t batch)
{
    return (hk_span){name, cu, sizeof(int32_t), 0, {0, 0, 0}, {0, 0, 0}, cu ? batch + 1 : 0, NULL, NULL, 0};
}

/* The packed token counts (varlen) or the maxima, after checking the offsets. */
static hk_status attn_tokens(hk_context *ctx, const char *op, int64_t batch, const int32_t *cu_q, const int32_t *cu_k,
                             int64_t *seq_q, int64_t *seq_k, void *stream)
{
    if (!cu_q || batch == 0)
        return HK_OK;
    offsets_view q = {"cu_seqlens_q", "seqlen_q", cu_q, *seq_q, 0}, k = {"cu_seqlens_k", "seqlen_k", cu_k, *seq_k, 0};
    hk_status st;
    if (ctx->gpu && ((st = ctx->gpu->bind(ctx->dev)) != HK_OK || (st = ctx->gpu->sync(ctx->dev, stream)) != HK_OK))
        return st;
    if ((st = check_offsets(ctx, op, batch, &q)) != HK_OK ||
        (st = check_offsets(ctx, op, batch, &k)) != HK_OK)
        return st;
    *seq_q = q.tokens;
    *seq_k = k.tokens;
    return HK_OK;
}

static hk_status attn_begin(hk_context *ctx, const char *op, attn_layout *l, hk_dtype dtype, int64_t batch,
                            int64_t seqlen_q, int64_t seqlen_k, int64_t head_dim, int64_t head_dim_v,
                            const int32_t *cu_q, const int32_t *cu_k, void *stream)
{
    *l = (attn_layout){cu_q != NULL, batch, seqlen_q, seqlen_k, head_dim_v > 0 ? head_dim_v : head_dim, hk_dtype_size(dtype)};
    return attn_tokens(ctx, op, batch, cu_q, cu_k, &l->sq, &l->sk, stream);
}

static hk_status check_all(const char *op, const hk_span *s, size_t n, bool needed)
{
    hk_status st = HK_OK;
    for (size_t i = 0; i < n && st == HK_OK; ++i)
        st = check_span(op, &s[i], needed);
    return st;
}

static const char *const attn_in_place = "none; Q, K, V and dQ, dK, dV may interleave in packed buffers";

hk_status hk_check_attn_fwd(hk_context *ctx, const hk_attn_fwd_args *a)
{
    const char *op = "attn_fwd";
    attn_layout l;
    hk_status st = attn_begin(ctx, op, &l, a->dtype, a->batch, a->seqlen_q, a->seqlen_k, a->head_dim, a->head_dim_v,
                              a->cu_seqlens_q, a->cu_seqlens_k, a->stream);
    if (st != HK_OK || a->batch == 0)
        return st;
    int64_t sq = l.sq, sk = l.sk, dv = l.dv;
    size_t elem = l.elem;
    hk_span in[5] = {attn_span(&l, "q", "q_stride", a->q, a->q_stride, sq, a->heads_q, a->head_dim, elem),
                     attn_span(&l, "k", "k_stride", a->k, a->k_stride, sk, a->heads_kv, a->head_dim, elem),
                     attn_span(&l, "v", "v_stride", a->v, a->v_stride, sk, a->heads_kv, dv, elem),
                     offsets_span("cu_seqlens_q", a->cu_seqlens_q, a->batch),
                     offsets_span("cu_seqlens_k", a->cu_seqlens_k, a->batch)};
    hk_span out[2] = {attn_span(&l, "o", "o_stride", a->o, a->o_stride, sq, a->heads_q, dv, elem),
                      lse_span(&l, "lse", a->lse, a->heads_q, sq)};
    if ((st = check_all(op, in, 3, true)) || (st = check_span(op, &out[0], true)) || (st = check_span(op, &out[1], false)))
        return st;
    return hk_check_overlaps(op, out, 2, in, 5, attn_in_place);
}

hk_status hk_check_attn_bwd(hk_context *ctx, const hk_attn_bwd_args *a)
{
    const char *op = "attn_bwd";
    attn_layout l;
    hk_status st = attn_begin(ctx, op, &l, a->dtype, a->batch, a->seqlen_q, a->seqlen_k, a->head_dim, a->head_dim_v,
                              a->cu_seqlens_q, a->cu_seqlens_k, a->stream);
    if (st != HK_OK || a->batch == 0)
        return st;
    int64_t sq = l.sq, sk = l.sk, dv = l.dv;
    size_t elem = l.elem;
    hk_span in[8] = {attn_span(&l, "q", "q_stride", a->q, a->q_stride, sq, a->heads_q, a->head_dim, elem),
                     attn_span(&l, "k", "k_stride", a->k, a->k_stride, sk, a->heads_kv, a->head_dim, elem),
                     attn_span(&l, "v", "v_stride", a->v, a->v_stride, sk, a->heads_kv, dv, elem),
                     attn_span(&l, "o", "o_stride", a->o, a->o_stride, sq, a->heads_q, dv, elem),
                     attn_span(&l, "d_o", "do_stride", a->d_o, a->do_stride, sq, a->heads_q, dv, elem),
                     lse_span(&l, "lse", a->lse, a->heads_q, sq),
                     offsets_span("cu_seqlens_q", a->cu_seqlens_q, a->batch),
                     offsets_span("cu_seqlens_k", a->cu_seqlens_k, a->batch)};
    hk_span out[4] = {attn_span(&l, "dq", "dq_stride", a->dq, a->dq_stride, sq, a->heads_q, a->head_dim, elem),
                      attn_span(&l, "dk", "dk_stride", a->dk, a->dk_stride, sk, a->heads_kv, a->head_dim, elem),
                      attn_span(&l, "dv", "dv_stride", a->dv, a->dv_stride, sk, a->heads_kv, dv, elem),
                      {"workspace", a->workspace, 1, 0, {0, 0, 0}, {0, 0, 0}, (int64_t)a->workspace_size, NULL, NULL, 0}};
    if ((st = check_all(op, in, 6, true)) || (st = check_all(op, out, 3, true)))
        return st;
    return hk_check_overlaps(op, out, 4, in, 8, attn_in_place);
}
