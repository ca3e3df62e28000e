/* Kernel parameters of the attention forward, shared by the host glue (C11) and the device code of every arch,
 * passed by value. Fixed-width fields only, so that every compiler lays the struct out the same way. The host
 * resolves hk_attn_fwd_args into it: window and causal become one key range per query row, softcap and the scale
 * become the two constants the softmax uses. */
#ifndef HK_COMMON_ATTN_PARAMS_H
#define HK_COMMON_ATTN_PARAMS_H

#include <stdint.h>

/* Tiled kernel geometry, one instance per (D, DV) = padded (head_dim, head_dim_v): query tiles of BM rows (a
 * producer warpgroup and two consumer warpgroups of 64 rows each), K/V blocks of BN(D) rows through a ring of
 * STAGES slots, and the dynamic shared memory that takes (Q, the K and V slots, 1 KiB of alignment slack for the
 * 128-byte swizzle, the barriers). */
#define HK_ATTN_FWD_BM 128
#define HK_ATTN_FWD_THREADS 384
#define HK_ATTN_FWD_STAGES 2
#define HK_ATTN_FWD_BN(D) ((D) > 192 ? 64 : 128)
#define HK_ATTN_FWD_SMEM(D, DV) \
    (1024 + 2 * (HK_ATTN_FWD_BM * (D) + HK_ATTN_FWD_STAGES * HK_ATTN_FWD_BN(D) * ((D) + (DV))) + 256)
/* The row kernel (any strides and alignment): one warp per query row. */
#define HK_ATTN_FWD_ROWS_WARPS 4

/* CDNA geometry (kernels/cdna/attn_fwd.hip), per padded (D, DV) and alignment: blocks of 8 waves in ping-pong (the
 * aligned kernels up to D = 128) or 4, each wave QW query rows, so a block covers WAVES QW query rows. */
#define HK_CDNA_ATTN_WAVES(D, ALIGNED) ((ALIGNED) && (D) <= 128 ? 8 : 4)
#define HK_CDNA_ATTN_QW(D) ((D) > 128 ? 16 : 32)
#define HK_CDNA_ATTN_BM(D, ALIGNED) (HK_CDNA_ATTN_WAVES(D, ALIGNED) * HK_CDNA_ATTN_QW(D))

/* Query row i (of its sequence) sees key j iff j < seqlen_k and, where bounded,
 *   i + diag - left <= j (has_left)   and   j <= i + diag + right (has_right),   diag = seqlen_k - seqlen_q
 * of that sequence. Causal is has_right with right = 0. */
typedef struct hk_attn_fwd_params {
    const void *q, *k, *v;
    void *o;
    float *lse;                               /* NULL: not written */
    const int32_t *cu_seqlens_q, *cu_seqlens_k; /* NULL: fixed lengths */
    int64_t q_stride[3], k_stride[3], v_stride[3], o_stride[3]; /* batch, seq, head; elements */
    int32_t batch, seqlen_q, seqlen_k;        /* varlen: the maxima */
    int32_t heads_q, heads_kv, group;         /* group = heads_q / heads_kv */
    int32_t head_dim, head_dim_v;
    int32_t has_left, has_right;
    int64_t left, right;
    /* The softmax runs on t = softcap * tanh(s * score_scale) when softcap > 0, else on t = s * score_scale
     * (score_scale 1 skips the multiply), as 2^(t * exp2_scale - max): with no cap and a positive scale, the
     * scale folds into exp2_scale (log2(e) * scale) and score_scale is 1; otherwise exp2_scale is log2(e). */
    float score_scale, softcap, exp2_scale;
    int32_t m_blocks;  /* query tiles per (sequence, head) */
} hk_attn_fwd_params;

#endif
