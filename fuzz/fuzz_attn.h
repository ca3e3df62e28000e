/* The attention shape, variable-length offsets and tensor layouts both attention targets decode (fuzz.h). */
#ifndef HK_FUZZ_ATTN_H
#define HK_FUZZ_ATTN_H

#include "fuzz.h"

enum { FZ_MAX_BATCH = 4 };

typedef struct fz_attn {
    hk_dtype dtype;
    int64_t batch, seqlen_q, seqlen_k, heads_q, heads_kv, head_dim;
    bool varlen, offsets_valid;
    int32_t cu_q[FZ_MAX_BATCH + 1], cu_k[FZ_MAX_BATCH + 1];
    int64_t tokens_q, tokens_k; /* packed token counts (varlen with valid offsets) */
    bool must_fail;
} fz_attn;

/* Offsets: lengths within the maximum (valid), or raw words of the input; `valid` says which they turned out. */
static inline int64_t fz_offsets(fz *f, int32_t *cu, int64_t batch, int64_t max, bool raw, bool *valid)
{
    cu[0] = raw ? (int32_t)fz_bits(f, 4) : 0;
    for (int64_t b = 0; b < batch; ++b)
        cu[b + 1] = raw ? (int32_t)fz_bits(f, 4) : cu[b] + (int32_t)fz_range(f, 0, max);
    bool ok = cu[0] >= 0;
    for (int64_t b = 0; b < batch; ++b)
        ok = ok && cu[b + 1] >= cu[b] && (int64_t)cu[b + 1] - cu[b] <= max;
    *valid = *valid && ok;
    return ok ? cu[batch] : 0;
}

static inline void fz_attn_shape(fz *f, bool wild, fz_attn *s)
{
    memset(s, 0, sizeof *s);
    s->dtype = fz_dtype(f);
    s->varlen = fz_bits(f, 1) % 3 == 0;
    s->batch = s->varlen ? fz_range(f, 0, FZ_MAX_BATCH) : fz_size(f, wild, 3);
    s->seqlen_q = fz_size(f, wild, 9);
    s->seqlen_k = fz_size(f, wild, 9);
    s->heads_kv = fz_bool(f) && wild ? fz_size(f, true, 0) : fz_range(f, 1, 3);
    s->heads_q = fz_bits(f, 1) % 8 == 0 ? fz_range(f, 0, 7) : fz_times(s->heads_kv, fz_range(f, 1, 3));
    s->head_dim = fz_size(f, wild, 24);
    s->must_fail = s->batch < 0 || s->seqlen_q < 0 || s->seqlen_k < 0 || s->heads_q < 1 || s->heads_kv < 1 ||
                   s->head_dim < 1;
    if (s->varlen && s->seqlen_q >= 0 && s->seqlen_k >= 0) {
        bool raw = fz_bits(f, 1) % 4 == 0;
        s->offsets_valid = true;
        s->tokens_q = fz_offsets(f, s->cu_q, s->batch, s->seqlen_q > 64 ? 64 : s->seqlen_q, raw, &s->offsets_valid);
        s->tokens_k = fz_offsets(f, s->cu_k, s->batch, s->seqlen_k > 64 ? 64 : s->seqlen_k, raw, &s->offsets_valid);
        /* lengths capped at 64 stay within any larger maximum, so only raw offsets can be invalid */
        if (s->batch > 0 && !s->offsets_valid)
            s->must_fail = true;
        if (s->batch == 0)
            s->tokens_q = s->tokens_k = 0; /* no sequence: the offsets are not read */
    }
}

/* A [batch, seq, heads, row] tensor (or [tokens, heads, row] with varlen) and its pointer field. */
static inline fz_tensor fz_attn_tensor(fz *f, bool wild, const fz_attn *s, const void **field, int64_t stride[3],
                                       bool q_side, int64_t heads, bool needed)
{
    int64_t eff[3];
    int64_t seq = q_side ? s->seqlen_q : s->seqlen_k, tokens = q_side ? s->tokens_q : s->tokens_k;
    fz_strides3(f, wild, stride, eff, seq, heads, s->head_dim, !s->varlen);
    size_t elem = hk_dtype_size(s->dtype);
    bool rows = s->batch > 0 && seq > 0;
    if (s->varlen)
        return (fz_tensor){field, 2, {tokens, heads}, {eff[1], eff[2]}, s->head_dim, elem, needed && tokens > 0, 0};
    return (fz_tensor){field, 3, {s->batch, seq, heads}, {eff[0], eff[1], eff[2]}, s->head_dim, elem, needed && rows, 0};
}

/* lse: fp32 [batch, heads_q, seqlen_q], or [heads_q, total_q] with varlen. */
static inline fz_tensor fz_attn_lse(const fz_attn *s, const void **field, bool needed)
{
    int64_t rows = s->varlen ? s->heads_q : fz_times(s->batch, s->heads_q), row = s->varlen ? s->tokens_q : s->seqlen_q;
    return (fz_tensor){field, 1, {rows}, {row}, row, sizeof(float), needed, 0};
}

/* The offsets as int32 arrays of the context (host memory on the CPU), or NULL, or only one of the two. */
static inline void fz_attn_offsets(fz_pool *pool, fz *f, const fz_attn *s, const int32_t **cu_q, const int32_t **cu_k)
{
    *cu_q = *cu_k = NULL;
    if (!s->varlen)
        return;
    size_t bytes = (size_t)(s->batch + 1) * sizeof(int32_t);
    int32_t *q = fz_buffer(pool, f, (int64_t)bytes, 0), *k = fz_buffer(pool, f, (int64_t)bytes, 0);
    if (q)
        memcpy(q, s->cu_q, bytes);
    if (k)
        memcpy(k, s->cu_k, bytes);
    *cu_q = q;
    *cu_k = fz_bits(f, 1) % 16 == 0 ? NULL : k;
}

#endif
