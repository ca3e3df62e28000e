/* hk_attn_fwd_args (validated and normalised, internal.h) -> the kernel parameters every arch shares
 * (kernels/common/attn_params.h): the window and causal edges become one key range per query row, the scale and
 * softcap the two constants of the base-2 softmax. */
#include "internal.h"

#include "common/attn_params.h"

#include <string.h>

void hk_attn_fwd_resolve(const hk_attn_fwd_args *a, hk_attn_fwd_params *p)
{
    memset(p, 0, sizeof *p);
    p->q = a->q;
    p->k = a->k;
    p->v = a->v;
    p->o = a->o;
    p->lse = a->lse;
    p->cu_seqlens_q = a->cu_seqlens_q;
    p->cu_seqlens_k = a->cu_seqlens_k;
    memcpy(p->q_stride, a->q_stride, sizeof p->q_stride);
    memcpy(p->k_stride, a->k_stride, sizeof p->k_stride);
    memcpy(p->v_stride, a->v_stride, sizeof p->v_stride);
    memcpy(p->o_stride, a->o_stride, sizeof p->o_stride);
    p->batch = (int32_t)a->batch;
    p->seqlen_q = (int32_t)a->seqlen_q;
    p->seqlen_k = (int32_t)a->seqlen_k;
    p->heads_q = (int32_t)a->heads_q;
    p->heads_kv = (int32_t)a->heads_kv;
    p->group = (int32_t)(a->heads_kv > 0 ? a->heads_q / a->heads_kv : 1);
    p->head_dim = (int32_t)a->head_dim;
    p->head_dim_v = (int32_t)a->head_dim_v;
    /* Normalised bounds lie below seqlen_k (left) and seqlen_q (right), so row + offset sums stay in range. */
    p->has_left = a->window && a->window_left >= 0;
    p->has_right = a->causal || (a->window && a->window_right >= 0);
    p->left = p->has_left ? a->window_left : 0;
    p->right = a->causal ? 0 : p->has_right ? a->window_right : 0;
    const float scale = a->softmax_scale, log2e = 1.4426950408889634f;
    const bool fold = a->softcap == 0.0f && scale > 0.0f;
    p->softcap = a->softcap;
    p->score_scale = a->softcap > 0.0f ? scale / a->softcap : fold ? 1.0f : scale;
    p->exp2_scale = fold ? scale * log2e : log2e;
}
