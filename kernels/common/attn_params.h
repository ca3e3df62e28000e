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

/* CDNA geometry (kernels/cdna/attn_fwd.hip), per padded (D, DV): blocks of 4 waves (256 threads), each wave QW query
 * rows, so a block covers 4 QW query rows. */
#define HK_CDNA_ATTN_THREADS 256
#define HK_CDNA_ATTN_QW(D) ((D) > 128 ? 16 : 32)
#define HK_CDNA_ATTN_BM(D) (4 * HK_CDNA_ATTN_QW(D))

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

/* The backward (kernels/hopper/attn_bwd.cu). The tiled kernel's CTA owns BN keys of one (sequence, kv head): a
 * producer warpgroup and two consumer warpgroups of 64 keys each, walking the query blocks of BM rows (of every
 * query head of the group) that see them through a ring of STAGES (Q, dO) slots. Shared memory: K and V, the
 * ring, two dS^T buffers, the rows' LSE and delta per consumer warpgroup, 1 KiB of alignment slack, barriers. */
#define HK_ATTN_BWD_BM 64
#define HK_ATTN_BWD_BN 128
#define HK_ATTN_BWD_THREADS 384
#define HK_ATTN_BWD_STAGES 2
#define HK_ATTN_BWD_SMEM(D, DV)                                                                                    \
    (1024 + 2 * (HK_ATTN_BWD_BN * ((D) + (DV)) + HK_ATTN_BWD_STAGES * HK_ATTN_BWD_BM * ((D) + (DV)) +              \
                 2 * HK_ATTN_BWD_BN * HK_ATTN_BWD_BM) +                                                            \
     4 * 2 * 2 * HK_ATTN_BWD_BM + 256)
/* The row kernels (any view, any head_dim up to 256): one warp per query row (dQ) or key row (dK, dV). */
#define HK_ATTN_BWD_ROWS_WARPS 4

/* Backward parameters: the forward's (the same resolved masks and score constants; o is read) plus the gradients.
 * Rows are indexed like the LSE: [batch, heads_q, seqlen_q], or [heads_q, total_q] when varlen. */
typedef struct hk_attn_bwd_params {
    hk_attn_fwd_params f;
    const void *d_o;
    void *dq, *dk, *dv;
    int64_t do_stride[3], dq_stride[3], dk_stride[3], dv_stride[3];
    float *delta;      /* per row: rowsum(dO * O) */
    float *dq_acc;     /* fp32 dQ, acc_dim features per row (the tiled kernel's path; NULL on the row kernels') */
    uint32_t *dq_sem;  /* deterministic: per (sequence, query head, query block, consumer warpgroup), the number of
                        * key blocks whose dQ has been added (NULL: fp32 atomics instead) */
    int64_t rows;      /* rows of the LSE (heads_q * total_q when varlen) */
    int32_t acc_dim;
    int32_t sems;
    float ds_scale;    /* softmax_scale: d(scaled score) / d(Q K^T) */
    int32_t n_blocks;  /* key blocks of the tiled kernel per (sequence, kv head) */
} hk_attn_bwd_params;

#endif
