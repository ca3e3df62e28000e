/* hk_attn_fwd on arguments decoded from the input (fuzz.h, fuzz_attn.h). */
#include "fuzz_attn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    hk_context *ctx = fz_context();
    bool wild = fz_bool(&f);
    struct {
        hk_attn_fwd_args a;
        uint64_t newer[2];
    } box;
    memset(&box, 0, sizeof box);
    hk_attn_fwd_args *a = &box.a;
    fz_attn s;
    fz_attn_shape(&f, wild, &s);
    a->dtype = s.dtype;
    a->batch = s.batch, a->seqlen_q = s.seqlen_q, a->seqlen_k = s.seqlen_k;
    a->heads_q = s.heads_q, a->heads_kv = s.heads_kv, a->head_dim = s.head_dim;
    a->softmax_scale = fz_bool(&f) ? 0.0f : fz_float(&f);
    a->causal = (int)fz_range(&f, -1, 1);
    bool lse = fz_bool(&f);
    size_t given = fz_struct_size(&f, sizeof *a);
    if (given == sizeof *a + 8 && fz_bool(&f))
        box.newer[0] = 1; /* a newer caller's field this library does not know */
    fz_truncate(a, sizeof *a, given);
    fz_tensor t[5] = {
        fz_attn_tensor(&f, wild, &s, &a->q, a->q_stride, true, s.heads_q, true),
        fz_attn_tensor(&f, wild, &s, &a->k, a->k_stride, false, s.heads_kv, true),
        fz_attn_tensor(&f, wild, &s, &a->v, a->v_stride, false, s.heads_kv, true),
        fz_attn_tensor(&f, wild, &s, (const void **)&a->o, a->o_stride, true, s.heads_q, true),
        fz_attn_lse(&s, (const void **)&a->lse, false),
    };
    if (!lse)
        t[4].inner = 0;
    bool must_fail = s.must_fail;
    fz_pool pool = {0};
    if (fz_place(&pool, &f, wild, t, 5, &must_fail) && (!wild || must_fail)) {
        fz_attn_offsets(&pool, &f, &s, &a->cu_seqlens_q, &a->cu_seqlens_k);
        fz_truncate(a, sizeof *a, given);
        a->struct_size = given;
        fz_expect(hk_attn_fwd(ctx, a), must_fail, "attn_fwd");
    }
    fz_release(&pool);
    return 0;
}
