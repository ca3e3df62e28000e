/* What the Hopper attention kernels share (attn_fwd.cu, attn_bwd.cu): a tile's or row's place in its sequence
 * (varlen offsets, the visible key range of a row, element offsets, the LSE's index) and the score map before the
 * softmax. */
#pragma once

#include "common/attn_params.h"
#include "tiles/common/tiles.hpp"

namespace hk::hopper {

constexpr float kLn2 = 0.6931471805599453f;

/* One query tile's place: its sequence (offsets into the packed token dimension when varlen), and the rows. */
struct attn_seq {
    int b, h, len_q, len_k, row_q, row_k, diag; /* row_q/row_k: the sequence's first token in Q/K (varlen) */
    bool varlen;
    __device__ __forceinline__ attn_seq(const hk_attn_fwd_params &p, int b_, int h_)
        : b(b_), h(h_), varlen(p.cu_seqlens_q != nullptr)
    {
        if (p.cu_seqlens_q) {
            row_q = p.cu_seqlens_q[b];
            row_k = p.cu_seqlens_k[b];
            len_q = p.cu_seqlens_q[b + 1] - row_q;
            len_k = p.cu_seqlens_k[b + 1] - row_k;
        } else {
            row_q = row_k = 0;
            len_q = p.seqlen_q;
            len_k = p.seqlen_k;
        }
        diag = len_k - len_q;
    }
    /* The first key row i may see (clamped to 0) and one past the last (clamped to len_k). */
    __device__ __forceinline__ int key_lo(const hk_attn_fwd_params &p, int i) const
    {
        return p.has_left ? (int)max((int64_t)0, (int64_t)i + diag - p.left) : 0;
    }
    __device__ __forceinline__ int key_hi(const hk_attn_fwd_params &p, int i) const
    {
        return p.has_right ? (int)min((int64_t)len_k, max((int64_t)0, (int64_t)i + diag + p.right + 1)) : len_k;
    }
    /* Element offset of (token i, feature 0) of a tensor with {batch, seq, head} strides. */
    __device__ __forceinline__ int64_t offset(const int64_t (&s)[3], int first_row, int i, int head) const
    {
        return (varlen ? 0 : (int64_t)b * s[0]) + (int64_t)(first_row + i) * s[1] + (int64_t)head * s[2];
    }
    /* The LSE's index of row i: [batch, heads_q, seqlen_q], or [heads_q, total_q] when varlen. */
    __device__ __forceinline__ int64_t lse_index(const hk_attn_fwd_params &p, int i) const
    {
        return p.cu_seqlens_q ? (int64_t)h * p.cu_seqlens_q[p.batch] + row_q + i
                              : ((int64_t)b * p.heads_q + h) * p.seqlen_q + i;
    }
};

/* The score map before the softmax: the cap, or the scale when it cannot fold into exp2 (see attn_params.h). */
__device__ __forceinline__ float attn_score(const hk_attn_fwd_params &p, float s)
{
    if (p.softcap > 0.f)
        return p.softcap * hk::tanh_fast(s * p.score_scale);
    return p.score_scale != 1.f ? s * p.score_scale : s;
}

} // namespace hk::hopper
