/* hk_attn_bwd and hk_attn_bwd_workspace_size on arguments decoded from the input (fuzz.h, fuzz_attn.h). */
#include "fuzz_attn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    hk_context *ctx = fz_context();
    bool wild = fz_bool(&f);
    struct {
        hk_attn_bwd_args a;
        uint64_t newer[2];
    } box;
    memset(&box, 0, sizeof box);
    hk_attn_bwd_args *a = &box.a;
    fz_attn s;
    fz_attn_shape(&f, wild, &s);
    a->dtype = s.dtype;
    a->batch = s.batch, a->seqlen_q = s.seqlen_q, a->seqlen_k = s.seqlen_k;
    a->heads_q = s.heads_q, a->heads_kv = s.heads_kv, a->head_dim = s.head_dim;
    a->softmax_scale = fz_bool(&f) ? 0.0f : fz_float(&f);
    a->causal = (int)fz_range(&f, -1, 1);
    a->deterministic = (int)fz_range(&f, -1, 1);
    static const size_t ws[] = {0, 0, 16, 4096};
    a->workspace_size = ws[fz_bits(&f, 1) % 4];
    size_t given = fz_struct_size(&f, sizeof *a);
    if (given == sizeof *a + 8 && fz_bool(&f))
        box.newer[0] = 1; /* a newer caller's field this library does not know */
    fz_truncate(a, sizeof *a, given);
    fz_tensor t[10] = {
        fz_attn_tensor(&f, wild, &s, &a->q, a->q_stride, true, s.heads_q, true),
        fz_attn_tensor(&f, wild, &s, &a->k, a->k_stride, false, s.heads_kv, true),
        fz_attn_tensor(&f, wild, &s, &a->v, a->v_stride, false, s.heads_kv, true),
        fz_attn_tensor(&f, wild, &s, &a->o, a->o_stride, true, s.heads_q, true),
        fz_attn_tensor(&f, wild, &s, &a->d_o, a->do_stride, true, s.heads_q, true),
        fz_attn_lse(&s, (const void **)&a->lse, false),
        fz_attn_tensor(&f, wild, &s, (const void **)&a->dq, a->dq_stride, true, s.heads_q, true),
        fz_attn_tensor(&f, wild, &s, (const void **)&a->dk, a->dk_stride, false, s.heads_kv, true),
        fz_attn_tensor(&f, wild, &s, (const void **)&a->dv, a->dv_stride, false, s.heads_kv, true),
        {(const void **)&a->workspace, 0, {0}, {0}, (int64_t)a->workspace_size, 1, false, 0},
    };
    bool must_fail = s.must_fail;
    fz_pool pool = {0};
    if (fz_place(&pool, &f, wild, t, 10, &must_fail) && (!wild || must_fail)) {
        fz_attn_offsets(&pool, &f, &s, &a->cu_seqlens_q, &a->cu_seqlens_k);
        fz_truncate(a, sizeof *a, given);
        a->struct_size = given;
        size_t bytes = 0;
        /* the query reads no offsets: only the shape rules bind it */
        fz_expect(hk_attn_bwd_workspace_size(ctx, a, &bytes), s.must_fail && !s.varlen, "attn_bwd_workspace_size");
        fz_expect(hk_attn_bwd(ctx, a), must_fail, "attn_bwd");
    }
    fz_release(&pool);
    return 0;
}
