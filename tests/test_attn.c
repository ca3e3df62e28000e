/* hk_attn_fwd / hk_attn_bwd against the float64 oracle on every available context. */
#include "harness.h"

#include <math.h>
#include <string.h>

#define BF HK_DTYPE_BF16
#define F16 HK_DTYPE_F16
#define F32 HK_DTYPE_F32
#define MAX_SEQS 4

/* One case; fields left out are 0: contiguous, no mask, default scale, head_dim_v = d, LSE written. */
typedef struct attn_case {
    const char *name;
    unsigned kinds;
    hk_dtype dt;
    int64_t batch, sq, sk, hq, hkv, d;
    int64_t dv; /* head_dim_v as passed (0: d) */
    int causal;
    int window; /* passed as is with left and right (negative: unbounded side) */
    int64_t left, right;
    float softcap;
    float scale; /* 0: default 1/sqrt(d) */
    int64_t pad; /* padding elements between heads, rows and batches (0: contiguous, all-zero strides) */
    int varlen;
    int32_t lens_q[MAX_SEQS], lens_k[MAX_SEQS]; /* varlen: per-sequence lengths */
    int packed;  /* Q, K, V (bwd: dQ, dK, dV too) are views of one [batch, seq, hq + 2 hkv, d] tensor */
    int no_lse;
    int deterministic; /* bwd: DET_RUNS runs must give the same bytes */
    int rows;          /* bwd: on a context with HK_CUDA_TUNE_ATTN_BWD=rows (the CUDA row kernels; no-op elsewhere) */
} attn_case;

enum { DET_RUNS = 10 };

static const attn_case fwd_cases[] = {
    {"basic_d64", TH_ALL, BF, .batch = 2, .sq = 64, .sk = 64, .hq = 4, .hkv = 4, .d = 64},
    {"causal_d128", TH_ALL, BF, .batch = 1, .sq = 128, .sk = 128, .hq = 2, .hkv = 2, .d = 128, .causal = 1},
    {"causal_q_lt_k", TH_ALL, BF, .batch = 2, .sq = 37, .sk = 100, .hq = 2, .hkv = 2, .d = 64, .causal = 1},
    {"causal_q_gt_k", TH_ALL, BF, .batch = 2, .sq = 100, .sk = 37, .hq = 2, .hkv = 2, .d = 64, .causal = 1},
    {"noncausal_q_ne_k", TH_ALL, BF, .batch = 1, .sq = 48, .sk = 80, .hq = 2, .hkv = 2, .d = 64},
    {"gqa1_causal", TH_ALL, BF, .batch = 1, .sq = 64, .sk = 64, .hq = 4, .hkv = 4, .d = 64, .causal = 1},
    {"gqa4_causal", TH_ALL, BF, .batch = 1, .sq = 64, .sk = 64, .hq = 8, .hkv = 2, .d = 64, .causal = 1},
    {"gqa8", TH_ALL, BF, .batch = 1, .sq = 64, .sk = 64, .hq = 8, .hkv = 1, .d = 128},
    {"mqa16_decode", TH_ALL, BF, .batch = 2, .sq = 3, .sk = 300, .hq = 16, .hkv = 1, .d = 128, .causal = 1},
    {"strided_pad8", TH_ALL, BF, .batch = 2, .sq = 64, .sk = 64, .hq = 3, .hkv = 3, .d = 64, .pad = 8},
    {"strided_gqa4_causal", TH_ALL, BF, .batch = 2, .sq = 48, .sk = 64, .hq = 4, .hkv = 1, .d = 64, .causal = 1,
     .pad = 16},
    {"varlen", TH_ALL, BF, .batch = 3, .sq = 64, .sk = 50, .hq = 2, .hkv = 2, .d = 64, .varlen = 1,
     .lens_q = {5, 64, 1}, .lens_k = {7, 50, 33}},
    {"varlen_causal", TH_ALL, BF, .batch = 3, .sq = 64, .sk = 50, .hq = 2, .hkv = 2, .d = 64, .causal = 1,
     .varlen = 1, .lens_q = {5, 64, 1}, .lens_k = {7, 50, 33}},
    {"varlen_gqa4_strided", TH_ALL, BF, .batch = 2, .sq = 40, .sk = 70, .hq = 4, .hkv = 1, .d = 64, .causal = 1,
     .pad = 8, .varlen = 1, .lens_q = {40, 17}, .lens_k = {70, 9}},
    {"varlen_empty_sequences", TH_ALL, BF, .batch = 3, .sq = 4, .sk = 6, .hq = 2, .hkv = 2, .d = 64, .varlen = 1,
     .lens_q = {3, 0, 4}, .lens_k = {0, 5, 6}},
    {"explicit_scale_no_lse", TH_ALL, BF, .batch = 1, .sq = 64, .sk = 64, .hq = 2, .hkv = 2, .d = 64, .causal = 1,
     .scale = 0.3f, .no_lse = 1},
    {"f16", TH_ALL, F16, .batch = 1, .sq = 64, .sk = 64, .hq = 2, .hkv = 2, .d = 64, .causal = 1},
    {"f32", TH_ALL, F32, .batch = 1, .sq = 33, .sk = 47, .hq = 2, .hkv = 1, .d = 64, .causal = 1},
    {"n1_causal", TH_ALL, BF, .batch = 1, .sq = 1, .sk = 1, .hq = 1, .hkv = 1, .d = 64, .causal = 1},
    {"n7_causal", TH_ALL, BF, .batch = 2, .sq = 7, .sk = 7, .hq = 2, .hkv = 2, .d = 64, .causal = 1},
    {"n127", TH_ALL, BF, .batch = 1, .sq = 127, .sk = 127, .hq = 2, .hkv = 2, .d = 64},
    {"n128_causal_f16", TH_ALL, F16, .batch = 1, .sq = 128, .sk = 128, .hq = 2, .hkv = 1, .d = 128, .causal = 1},
    {"n129_causal_gqa4", TH_ALL, BF, .batch = 1, .sq = 129, .sk = 129, .hq = 4, .hkv = 1, .d = 64, .causal = 1},
    {"odd_7x127", TH_ALL, BF, .batch = 1, .sq = 7, .sk = 127, .hq = 2, .hkv = 2, .d = 64, .causal = 1},
    {"odd_127x7_causal", TH_ALL, BF, .batch = 1, .sq = 127, .sk = 7, .hq = 1, .hkv = 1, .d = 128, .causal = 1},
    {"head_dim_40", TH_ALL, BF, .batch = 1, .sq = 16, .sk = 24, .hq = 2, .hkv = 2, .d = 40, .causal = 1},
    {"head_dim_7_f32", TH_ALL, F32, .batch = 2, .sq = 9, .sk = 13, .hq = 2, .hkv = 2, .d = 7},
    {"head_dim_256_causal", TH_ALL, BF, .batch = 1, .sq = 128, .sk = 128, .hq = 2, .hkv = 1, .d = 256, .causal = 1},
    {"head_dim_192_v128", TH_ALL, BF, .batch = 2, .sq = 100, .sk = 140, .hq = 4, .hkv = 2, .d = 192, .dv = 128,
     .causal = 1},
    {"head_dim_192_v128_f16_strided", TH_ALL, F16, .batch = 1, .sq = 64, .sk = 64, .hq = 2, .hkv = 2, .d = 192,
     .dv = 128, .pad = 8},
    {"head_dim_64_v96_f32", TH_ALL, F32, .batch = 1, .sq = 20, .sk = 30, .hq = 2, .hkv = 1, .d = 64, .dv = 96},
    /* sliding windows */
    {"window_left_only", TH_ALL, BF, .batch = 1, .sq = 129, .sk = 129, .hq = 2, .hkv = 2, .d = 64, .window = 1,
     .left = 32, .right = -1},
    {"window_both_q_lt_k", TH_ALL, BF, .batch = 2, .sq = 100, .sk = 150, .hq = 2, .hkv = 1, .d = 64, .window = 1,
     .left = 20, .right = 10},
    {"window_causal", TH_ALL, BF, .batch = 1, .sq = 128, .sk = 128, .hq = 4, .hkv = 2, .d = 128, .causal = 1,
     .window = 1, .left = 40, .right = 7},
    {"window_q_gt_k_empty_rows", TH_ALL, BF, .batch = 1, .sq = 150, .sk = 60, .hq = 2, .hkv = 2, .d = 64,
     .window = 1, .left = 10, .right = 0},
    {"window_diagonal_f16", TH_ALL, F16, .batch = 1, .sq = 70, .sk = 64, .hq = 2, .hkv = 2, .d = 64, .window = 1},
    {"window_edges", TH_ALL, BF, .batch = 1, .sq = 40, .sk = 50, .hq = 1, .hkv = 1, .d = 64, .window = 1,
     .left = 48, .right = 38}, /* the last row loses key 0, the first loses key 49 */
    {"window_right_edge_only", TH_ALL, BF, .batch = 1, .sq = 64, .sk = 80, .hq = 2, .hkv = 2, .d = 64, .window = 1,
     .left = -1, .right = 0}, /* the causal mask, spelt as a window */
    {"window_unbounded", TH_ALL, BF, .batch = 1, .sq = 64, .sk = 48, .hq = 2, .hkv = 2, .d = 64, .window = 1,
     .left = INT64_MAX, .right = -7},
    {"window_decode_gqa8", TH_ALL, BF, .batch = 2, .sq = 1, .sk = 700, .hq = 8, .hkv = 1, .d = 128, .causal = 1,
     .window = 1, .left = 127},
    /* softcap */
    {"softcap", TH_ALL, BF, .batch = 1, .sq = 96, .sk = 96, .hq = 2, .hkv = 2, .d = 64, .softcap = 2.0f},
    {"softcap_causal_gqa4", TH_ALL, BF, .batch = 1, .sq = 128, .sk = 128, .hq = 4, .hkv = 1, .d = 128, .causal = 1,
     .softcap = 20.0f, .scale = 1.0f},
    {"softcap_window_f16", TH_ALL, F16, .batch = 2, .sq = 80, .sk = 90, .hq = 2, .hkv = 2, .d = 64, .window = 1,
     .left = 16, .right = 16, .softcap = 3.0f},
    {"softcap_causal_window_d192_v128", TH_ALL, BF, .batch = 1, .sq = 64, .sk = 96, .hq = 2, .hkv = 1, .d = 192,
     .dv = 128, .causal = 1, .window = 1, .left = 24, .softcap = 5.0f},
    /* varlen with the new fields: empty and one-token sequences */
    {"varlen_window_softcap", TH_ALL, BF, .batch = 4, .sq = 64, .sk = 80, .hq = 4, .hkv = 2, .d = 64, .window = 1,
     .left = 12, .right = 3, .softcap = 4.0f, .varlen = 1, .lens_q = {1, 0, 37, 64}, .lens_k = {1, 9, 0, 80}},
    {"varlen_one_token_causal_v32", TH_ALL, BF, .batch = 4, .sq = 1, .sk = 5, .hq = 2, .hkv = 1, .d = 64,
     .dv = 32, .causal = 1, .varlen = 1, .lens_q = {1, 1, 1, 0}, .lens_k = {1, 5, 0, 1}},
    /* packed QKV: [batch, seq, 3, heads, d] as three strided views */
    {"packed_qkv_causal", TH_ALL, BF, .batch = 2, .sq = 64, .sk = 64, .hq = 4, .hkv = 4, .d = 64, .causal = 1,
     .packed = 1},
    {"packed_qkv_gqa4_window_pad", TH_ALL, BF, .batch = 2, .sq = 50, .sk = 50, .hq = 8, .hkv = 2, .d = 64,
     .window = 1, .left = 9, .right = 4, .pad = 8, .packed = 1},
    {"packed_qkv_varlen_f16", TH_ALL, F16, .batch = 3, .sq = 40, .sk = 40, .hq = 2, .hkv = 2, .d = 128,
     .causal = 1, .varlen = 1, .lens_q = {40, 0, 13}, .lens_k = {40, 0, 13}, .packed = 1},
    /* long sequences */
    {"long_1000_causal_gqa", TH_ALL, BF, .batch = 1, .sq = 1000, .sk = 1000, .hq = 4, .hkv = 2, .d = 64,
     .causal = 1},
    {"long_1000x127_d128", TH_ALL, BF, .batch = 1, .sq = 1000, .sk = 127, .hq = 2, .hkv = 2, .d = 128},
    {"long_4097_causal", TH_ALL, BF, .batch = 1, .sq = 4097, .sk = 4097, .hq = 1, .hkv = 1, .d = 64,
     .causal = 1},
    {"long_4097_window_softcap", TH_ALL, BF, .batch = 1, .sq = 4097, .sk = 4097, .hq = 1, .hkv = 1, .d = 64,
     .window = 1, .left = 1000, .right = 100, .softcap = 10.0f},
    {"long_1000x4097_f16", TH_ALL, F16, .batch = 1, .sq = 1000, .sk = 4097, .hq = 1, .hkv = 1, .d = 64},
    {"strided_odd_pad", TH_ALL, BF, .batch = 2, .sq = 31, .sk = 45, .hq = 3, .hkv = 3, .d = 64, .causal = 1,
     .pad = 3},
};

static const attn_case bwd_cases[] = {
    {"bwd_basic_d64", TH_ALL, BF, .batch = 2, .sq = 64, .sk = 64, .hq = 2, .hkv = 2, .d = 64},
    {"bwd_causal_d128", TH_ALL, BF, .batch = 1, .sq = 64, .sk = 64, .hq = 2, .hkv = 2, .d = 128, .causal = 1},
    {"bwd_causal_q_lt_k", TH_ALL, BF, .batch = 1, .sq = 37, .sk = 100, .hq = 2, .hkv = 2, .d = 64, .causal = 1},
    {"bwd_causal_q_gt_k", TH_ALL, BF, .batch = 1, .sq = 100, .sk = 37, .hq = 2, .hkv = 2, .d = 64, .causal = 1},
    {"bwd_gqa4_deterministic", TH_ALL, BF, .batch = 1, .sq = 64, .sk = 64, .hq = 8, .hkv = 2, .d = 64,
     .causal = 1, .deterministic = 1},
    {"bwd_gqa8", TH_ALL, BF, .batch = 1, .sq = 64, .sk = 48, .hq = 8, .hkv = 1, .d = 64},
    {"bwd_mqa16_decode", TH_ALL, BF, .batch = 2, .sq = 2, .sk = 200, .hq = 16, .hkv = 1, .d = 64, .causal = 1},
    {"bwd_strided_pad8", TH_ALL, BF, .batch = 2, .sq = 48, .sk = 64, .hq = 2, .hkv = 2, .d = 64, .causal = 1,
     .scale = 0.2f, .pad = 8},
    {"bwd_varlen_causal", TH_ALL, BF, .batch = 3, .sq = 64, .sk = 50, .hq = 2, .hkv = 1, .d = 64, .causal = 1,
     .varlen = 1, .lens_q = {5, 64, 1}, .lens_k = {7, 50, 33}},
    {"bwd_f16", TH_ALL, F16, .batch = 1, .sq = 64, .sk = 64, .hq = 2, .hkv = 2, .d = 64, .causal = 1},
    {"bwd_f32_odd", TH_ALL, F32, .batch = 2, .sq = 13, .sk = 21, .hq = 4, .hkv = 2, .d = 24, .causal = 1,
     .deterministic = 1},
    {"bwd_n1", TH_ALL, BF, .batch = 1, .sq = 1, .sk = 1, .hq = 1, .hkv = 1, .d = 64},
    {"bwd_n7_causal", TH_ALL, BF, .batch = 2, .sq = 7, .sk = 7, .hq = 2, .hkv = 1, .d = 64, .causal = 1},
    {"bwd_n128_causal_f16", TH_ALL, F16, .batch = 1, .sq = 128, .sk = 128, .hq = 2, .hkv = 2, .d = 128,
     .causal = 1},
    {"bwd_n129", TH_ALL, BF, .batch = 1, .sq = 129, .sk = 129, .hq = 2, .hkv = 2, .d = 64},
    {"bwd_head_dim_256", TH_ALL, BF, .batch = 1, .sq = 64, .sk = 64, .hq = 2, .hkv = 1, .d = 256, .causal = 1},
    {"bwd_head_dim_192_v128", TH_ALL, BF, .batch = 1, .sq = 64, .sk = 80, .hq = 4, .hkv = 2, .d = 192, .dv = 128,
     .causal = 1},
    {"bwd_head_dim_192_v128_strided_deterministic", TH_ALL, BF, .batch = 2, .sq = 40, .sk = 40, .hq = 2,
     .hkv = 1, .d = 192, .dv = 128, .pad = 8, .deterministic = 1},
    /* sliding windows */
    {"bwd_window_left_only", TH_ALL, BF, .batch = 1, .sq = 129, .sk = 129, .hq = 2, .hkv = 2, .d = 64,
     .window = 1, .left = 32, .right = -1},
    {"bwd_window_both_q_lt_k", TH_ALL, BF, .batch = 1, .sq = 100, .sk = 150, .hq = 2, .hkv = 1, .d = 64,
     .window = 1, .left = 20, .right = 10},
    {"bwd_window_causal_deterministic", TH_ALL, BF, .batch = 1, .sq = 128, .sk = 128, .hq = 4, .hkv = 2,
     .d = 128, .causal = 1, .window = 1, .left = 40, .deterministic = 1},
    {"bwd_window_q_gt_k_empty_rows", TH_ALL, BF, .batch = 1, .sq = 150, .sk = 60, .hq = 2, .hkv = 2, .d = 64,
     .window = 1, .left = 10, .right = 0},
    /* softcap */
    {"bwd_softcap", TH_ALL, BF, .batch = 1, .sq = 96, .sk = 96, .hq = 2, .hkv = 2, .d = 64, .softcap = 2.0f},
    {"bwd_softcap_causal_gqa4", TH_ALL, BF, .batch = 1, .sq = 128, .sk = 128, .hq = 4, .hkv = 1, .d = 128,
     .causal = 1, .softcap = 20.0f, .scale = 1.0f},
    {"bwd_softcap_window_f16", TH_ALL, F16, .batch = 2, .sq = 80, .sk = 90, .hq = 2, .hkv = 2, .d = 64,
     .window = 1, .left = 16, .right = 16, .softcap = 3.0f},
    {"bwd_softcap_f32", TH_ALL, F32, .batch = 1, .sq = 30, .sk = 41, .hq = 2, .hkv = 1, .d = 32, .causal = 1,
     .softcap = 1.5f, .scale = 0.5f},
    /* varlen and packed */
    {"bwd_varlen_window_softcap", TH_ALL, BF, .batch = 4, .sq = 64, .sk = 80, .hq = 4, .hkv = 2, .d = 64,
     .window = 1, .left = 12, .right = 3, .softcap = 4.0f, .varlen = 1, .lens_q = {1, 0, 37, 64},
     .lens_k = {1, 9, 0, 80}},
    {"bwd_packed_qkv_causal", TH_ALL, BF, .batch = 2, .sq = 64, .sk = 64, .hq = 2, .hkv = 2, .d = 64,
     .causal = 1, .packed = 1},
    {"bwd_packed_qkv_gqa4_varlen_window", TH_ALL, BF, .batch = 2, .sq = 50, .sk = 50, .hq = 4, .hkv = 1, .d = 64,
     .window = 1, .left = 9, .right = 4, .varlen = 1, .lens_q = {50, 21}, .lens_k = {50, 21}, .packed = 1},
    /* long sequences */
    {"bwd_odd_127x200", TH_NOT_EMU, BF, .batch = 1, .sq = 127, .sk = 200, .hq = 4, .hkv = 2, .d = 64, .causal = 1,
     .deterministic = 1},
    {"bwd_long_1000_d128", TH_NOT_EMU, BF, .batch = 1, .sq = 1000, .sk = 1000, .hq = 2, .hkv = 1, .d = 128,
     .causal = 1},
    {"bwd_long_4097_causal", TH_NOT_EMU, BF, .batch = 1, .sq = 4097, .sk = 4097, .hq = 1, .hkv = 1, .d = 64,
     .causal = 1},
    {"bwd_long_4097_window_softcap", TH_NOT_EMU, BF, .batch = 1, .sq = 4097, .sk = 4097, .hq = 1, .hkv = 1,
     .d = 64, .window = 1, .left = 500, .right = 50, .softcap = 10.0f},
    {"bwd_strided_odd_pad", TH_NOT_EMU, BF, .batch = 2, .sq = 21, .sk = 33, .hq = 2, .hkv = 1, .d = 64, .pad = 5},
    /* the CUDA row kernels on calls the tiled kernel would take */
    {"bwd_rows_causal_gqa4", TH_ALL, BF, .batch = 2, .sq = 70, .sk = 90, .hq = 8, .hkv = 2, .d = 64, .causal = 1,
     .rows = 1},
    {"bwd_rows_varlen_window_softcap_f16", TH_ALL, F16, .batch = 3, .sq = 64, .sk = 80, .hq = 2, .hkv = 1,
     .d = 128, .window = 1, .left = 20, .right = 5, .softcap = 4.0f, .varlen = 1, .lens_q = {1, 64, 30},
     .lens_k = {9, 80, 0}, .rows = 1},
    {"bwd_rows_deterministic_d96", TH_ALL, BF, .batch = 1, .sq = 100, .sk = 100, .hq = 2, .hkv = 2, .d = 96,
     .deterministic = 1, .rows = 1},
};

/* Everything the two directions share: sequences, layouts and the oracle's inputs. */
typedef struct attn_problem {
    int64_t cu_q[MAX_SEQS + 1], cu_k[MAX_SEQS + 1];
    int32_t cu32_q[MAX_SEQS + 1], cu32_k[MAX_SEQS + 1];
    int64_t total_q, total_k, dv;
    orc_attn orc;
    double *q, *k, *v;
} attn_problem;

/* Layout of a [batch, seq, heads, row] tensor (varlen: [1, total, heads, row]) with `pad` extra elements after
 * each head, token and batch. */
static th_tensor layout(const attn_case *a, const attn_problem *p, int is_q, int64_t heads, int64_t row, int64_t pad,
                        int64_t stride[3])
{
    int64_t seq = a->varlen ? (is_q ? p->total_q : p->total_k) : (is_q ? a->sq : a->sk);
    int64_t nb = a->varlen ? 1 : a->batch;
    int64_t sh = row + pad, ss = heads * sh + pad, sb = seq * ss + pad;
    if (pad == 0 && !a->varlen) {
        stride[0] = stride[1] = stride[2] = 0; /* contiguous by default */
    } else {
        stride[0] = sb;
        stride[1] = ss;
        stride[2] = sh;
    }
    return th_tensor4(a->dt, nb, seq, heads, row, sb, ss, sh);
}

/* A packed QKV tensor [batch, seq, hq + 2 hkv, d] (pad elements after each token and batch): its layout, and the
 * strides of the q, k and v views, which start hq * d and (hq + hkv) * d elements in. */
static th_tensor packed_layout(const attn_case *a, const attn_problem *p, int64_t stride[3])
{
    int64_t heads = a->hq + 2 * a->hkv, seq = a->varlen ? p->total_q : a->sq, nb = a->varlen ? 1 : a->batch;
    int64_t ss = heads * a->d + a->pad, sb = seq * ss + a->pad;
    stride[0] = sb;
    stride[1] = ss;
    stride[2] = a->d;
    return th_tensor4(a->dt, nb, seq, heads, a->d, sb, ss, a->d);
}

/* Interleave (split != 0: separate) the logical q, k, v ([tokens][heads][d] each) and the packed tensor. */
static void packed_copy(const attn_case *a, int64_t tokens, double *packed, double *q, double *k, double *v,
                        int split)
{
    int64_t d = a->d, row = (a->hq + 2 * a->hkv) * d;
    for (int64_t t = 0; t < tokens; ++t) {
        double *part[3] = {q + t * a->hq * d, k + t * a->hkv * d, v + t * a->hkv * d};
        int64_t at[3] = {0, a->hq * d, (a->hq + a->hkv) * d}, n[3] = {a->hq * d, a->hkv * d, a->hkv * d};
        for (int x = 0; x < 3; ++x)
            for (int64_t i = 0; i < n[x]; ++i) {
                double *dst = split ? &part[x][i] : &packed[t * row + at[x] + i];
                *dst = split ? packed[t * row + at[x] + i] : part[x][i];
            }
    }
}

static void *offset_by(const void *base, const attn_case *a, int64_t elements)
{
    return (char *)base + elements * (int64_t)orc_dtype_size(a->dt);
}

static void setup_problem(const attn_case *a, attn_problem *p, th_rng *rng)
{
    p->cu_q[0] = p->cu_k[0] = 0;
    for (int64_t s = 0; s < a->batch; ++s) {
        p->cu_q[s + 1] = p->cu_q[s] + (a->varlen ? a->lens_q[s] : a->sq);
        p->cu_k[s + 1] = p->cu_k[s] + (a->varlen ? a->lens_k[s] : a->sk);
    }
    for (int64_t s = 0; s <= a->batch; ++s) {
        p->cu32_q[s] = (int32_t)p->cu_q[s];
        p->cu32_k[s] = (int32_t)p->cu_k[s];
    }
    p->total_q = p->cu_q[a->batch];
    p->total_k = p->cu_k[a->batch];
    p->dv = a->dv ? a->dv : a->d;
    /* the packed view needs one token axis and one row length for Q, K and V */
    assert_true(!a->packed || (p->total_q == p->total_k && p->dv == a->d));
    p->orc = (orc_attn){.batch = a->batch, .heads_q = a->hq, .heads_kv = a->hkv, .head_dim = a->d, .cu_q = p->cu_q,
                        .cu_k = p->cu_k, .scale = a->scale != 0 ? (double)a->scale : 1.0 / sqrt((double)a->d),
                        .causal = a->causal, .window = a->window, .window_left = a->left, .window_right = a->right,
                        .softcap = a->softcap, .head_dim_v = a->dv};
    int64_t nq = p->total_q * a->hq * a->d, nk = p->total_k * a->hkv * a->d, nv = p->total_k * a->hkv * p->dv;
    p->q = th_host(sizeof(double) * (size_t)(nq ? nq : 1));
    p->k = th_host(sizeof(double) * (size_t)(nk ? nk : 1));
    p->v = th_host(sizeof(double) * (size_t)(nv ? nv : 1));
    th_fill_normal(rng, a->dt, p->q, nq, 1.5);
    th_fill_normal(rng, a->dt, p->k, nk, 1.0);
    th_fill_normal(rng, a->dt, p->v, nv, 1.0);
}

/* Index of the library's LSE entry for oracle row (token t, head h). */
static int64_t lse_index(const attn_case *a, const attn_problem *p, int64_t t, int64_t h)
{
    if (a->varlen)
        return h * p->total_q + t;
    int64_t b = t / a->sq, i = t % a->sq;
    return (b * a->hq + h) * a->sq + i;
}

/* The device Q, K, V of a case: three tensors, or three views of one packed tensor. */
static void upload_qkv(const th_ctx *c, const attn_case *a, const attn_problem *p, const void **q, int64_t qs[3],
                       const void **k, int64_t ks[3], const void **v, int64_t vs[3])
{
    if (a->packed) {
        int64_t stride[3];
        th_tensor pt = packed_layout(a, p, stride);
        double *logical = th_host(sizeof(double) * (size_t)th_numel(&pt));
        packed_copy(a, p->total_q, logical, p->q, p->k, p->v, 0);
        *q = th_dev_tensor(c, &pt, logical);
        *k = offset_by(*q, a, a->hq * a->d);
        *v = offset_by(*q, a, (a->hq + a->hkv) * a->d);
        memcpy(qs, stride, sizeof stride);
        memcpy(ks, stride, sizeof stride);
        memcpy(vs, stride, sizeof stride);
        return;
    }
    th_tensor qt = layout(a, p, 1, a->hq, a->d, a->pad, qs);
    th_tensor kt = layout(a, p, 0, a->hkv, a->d, 2 * a->pad, ks);
    th_tensor vt = layout(a, p, 0, a->hkv, p->dv, 3 * a->pad, vs);
    *q = th_dev_tensor(c, &qt, p->q);
    *k = th_dev_tensor(c, &kt, p->k);
    *v = th_dev_tensor(c, &vt, p->v);
}

static const int32_t *upload_offsets(const th_ctx *c, const attn_case *a, const int32_t *cu)
{
    if (!a->varlen)
        return NULL;
    int32_t *dev = th_dev(c, sizeof(int32_t) * (size_t)(a->batch + 1));
    th_upload(c, dev, cu, sizeof(int32_t) * (size_t)(a->batch + 1));
    return dev;
}

static void run_fwd(const th_ctx *c, const void *param)
{
    const attn_case *a = param;
    th_rng rng = th_rng_for_case();
    attn_problem p;
    setup_problem(a, &p, &rng);

    hk_attn_fwd_args args = HK_ARGS_INIT(hk_attn_fwd_args);
    args.dtype = a->dt;
    args.batch = a->batch;
    args.seqlen_q = a->sq;
    args.seqlen_k = a->sk;
    args.heads_q = a->hq;
    args.heads_kv = a->hkv;
    args.head_dim = a->d;
    args.head_dim_v = a->dv;
    args.window = a->window;
    args.window_left = a->left;
    args.window_right = a->right;
    args.softcap = a->softcap;
    upload_qkv(c, a, &p, &args.q, args.q_stride, &args.k, args.k_stride, &args.v, args.v_stride);
    th_tensor ot = layout(a, &p, 1, a->hq, p.dv, a->pad ? a->pad + 8 : 0, args.o_stride);
    args.o = th_dev(c, th_bytes(&ot));
    int64_t nlse = p.total_q * a->hq;
    if (!a->no_lse)
        args.lse = th_dev(c, sizeof(float) * (size_t)(nlse ? nlse : 1));
    args.softmax_scale = a->scale;
    args.causal = a->causal;
    args.cu_seqlens_q = upload_offsets(c, a, p.cu32_q);
    args.cu_seqlens_k = upload_offsets(c, a, p.cu32_k);

    th_op_status(c, hk_attn_fwd(c->ctx, &args), "hk_attn_fwd");

    int64_t no = p.total_q * a->hq * p.dv;
    double *o_ref = th_host(sizeof(double) * (size_t)(no ? no : 1));
    double *lse_ref = th_host(sizeof(double) * (size_t)(nlse ? nlse : 1));
    orc_attn_fwd(&p.orc, p.q, p.k, p.v, o_ref, lse_ref);

    bool ok = true;
    double *o = th_fetch_tensor(c, &ot, args.o, &ok, "O");
    ok &= th_check("O", o, o_ref, no, th_tol_for(a->dt, c));
    if (!a->no_lse) {
        float *lse = th_host(sizeof(float) * (size_t)(nlse ? nlse : 1));
        double *got = th_host(sizeof(double) * (size_t)(nlse ? nlse : 1));
        th_download(c, lse, args.lse, sizeof(float) * (size_t)nlse);
        for (int64_t t = 0; t < p.total_q; ++t)
            for (int64_t h = 0; h < a->hq; ++h)
                got[t * a->hq + h] = lse[lse_index(a, &p, t, h)];
        /* the LSE acts through exp(LSE): its absolute error is the softmax normaliser's relative error, so an LSE near
         * 0 is judged absolutely (tiny_1x1 with HK_TEST_SEED=0x6b10773802441: LSE 0.0042, |error| 4.5e-8, the fp32
         * rounding of its one 64-term dot product, failed a relative bound of 1e-5) */
        th_tol lse_tol = th_tol_for(F32, c);
        lse_tol.floor = 1;
        ok &= th_check("LSE", got, lse_ref, nlse, lse_tol);
    }
    th_expect(ok, "hk_attn_fwd result");
}

/* The gradient tensors of a backward case: separate, or one packed dQKV tensor. */
typedef struct attn_grads {
    th_tensor dq, dk, dv, packed;
    void *buf[3]; /* device dQ, dK, dV (views into buf[0] when packed) */
} attn_grads;

static void alloc_grads(const th_ctx *c, const attn_case *a, const attn_problem *p, attn_grads *g,
                        hk_attn_bwd_args *args)
{
    if (a->packed) {
        g->packed = packed_layout(a, p, args->dq_stride);
        memcpy(args->dk_stride, args->dq_stride, sizeof args->dq_stride);
        memcpy(args->dv_stride, args->dq_stride, sizeof args->dq_stride);
        g->buf[0] = th_dev(c, th_bytes(&g->packed));
        g->buf[1] = offset_by(g->buf[0], a, a->hq * a->d);
        g->buf[2] = offset_by(g->buf[0], a, (a->hq + a->hkv) * a->d);
    } else {
        int64_t pad = a->pad;
        g->dq = layout(a, p, 1, a->hq, a->d, pad ? pad + 24 : 0, args->dq_stride);
        g->dk = layout(a, p, 0, a->hkv, a->d, pad ? pad + 32 : 0, args->dk_stride);
        g->dv = layout(a, p, 0, a->hkv, p->dv, pad ? pad + 40 : 0, args->dv_stride);
        g->buf[0] = th_dev(c, th_bytes(&g->dq));
        g->buf[1] = th_dev(c, th_bytes(&g->dk));
        g->buf[2] = th_dev(c, th_bytes(&g->dv));
    }
    args->dq = g->buf[0];
    args->dk = g->buf[1];
    args->dv = g->buf[2];
}

/* Download and decode the gradients into logical [tokens][heads][row] arrays. */
static void fetch_grads(const th_ctx *c, const attn_case *a, const attn_problem *p, const attn_grads *g, double **dq,
                        double **dk, double **dv, bool *ok)
{
    if (!a->packed) {
        *dq = th_fetch_tensor(c, &g->dq, g->buf[0], ok, "dQ");
        *dk = th_fetch_tensor(c, &g->dk, g->buf[1], ok, "dK");
        *dv = th_fetch_tensor(c, &g->dv, g->buf[2], ok, "dV");
        return;
    }
    double *packed = th_fetch_tensor(c, &g->packed, g->buf[0], ok, "dQKV");
    *dq = th_host(sizeof(double) * (size_t)(p->total_q * a->hq * a->d + 1));
    *dk = th_host(sizeof(double) * (size_t)(p->total_k * a->hkv * a->d + 1));
    *dv = th_host(sizeof(double) * (size_t)(p->total_k * a->hkv * a->d + 1));
    packed_copy(a, p->total_q, packed, *dq, *dk, *dv, 1);
}

/* The raw bytes of the gradient buffers, back to back. */
static size_t grads_bytes(const attn_case *a, const attn_grads *g)
{
    return a->packed ? th_bytes(&g->packed) : th_bytes(&g->dq) + th_bytes(&g->dk) + th_bytes(&g->dv);
}

static void download_grads(const th_ctx *c, const attn_case *a, const attn_grads *g, unsigned char *dst)
{
    if (a->packed) {
        th_download(c, dst, g->buf[0], th_bytes(&g->packed));
        return;
    }
    const th_tensor *t[3] = {&g->dq, &g->dk, &g->dv};
    for (int i = 0; i < 3; ++i) {
        th_download(c, dst, g->buf[i], th_bytes(t[i]));
        dst += th_bytes(t[i]);
    }
}

static void run_bwd(const th_ctx *context, const void *param)
{
    const attn_case *a = param;
    const th_ctx *c = a->rows ? th_context_with_env(context, "HK_CUDA_TUNE_ATTN_BWD", "rows") : context;
    th_rng rng = th_rng_for_case();
    attn_problem p;
    setup_problem(a, &p, &rng);
    int64_t nq = p.total_q * a->hq * a->d, nk = p.total_k * a->hkv * a->d, nlse = p.total_q * a->hq;
    int64_t no = p.total_q * a->hq * p.dv, nv = p.total_k * a->hkv * p.dv;
    double *o_ref = th_host(sizeof(double) * (size_t)(no ? no : 1));
    double *lse_ref = th_host(sizeof(double) * (size_t)(nlse ? nlse : 1));
    double *d_o = th_host(sizeof(double) * (size_t)(no ? no : 1));
    orc_attn_fwd(&p.orc, p.q, p.k, p.v, o_ref, lse_ref);
    th_fill_normal(&rng, a->dt, d_o, no, 1.0);

    hk_attn_bwd_args args = HK_ARGS_INIT(hk_attn_bwd_args);
    args.dtype = a->dt;
    args.batch = a->batch;
    args.seqlen_q = a->sq;
    args.seqlen_k = a->sk;
    args.heads_q = a->hq;
    args.heads_kv = a->hkv;
    args.head_dim = a->d;
    args.head_dim_v = a->dv;
    args.window = a->window;
    args.window_left = a->left;
    args.window_right = a->right;
    args.softcap = a->softcap;
    int64_t pad = a->pad;
    upload_qkv(c, a, &p, &args.q, args.q_stride, &args.k, args.k_stride, &args.v, args.v_stride);
    th_tensor ot = layout(a, &p, 1, a->hq, p.dv, pad ? pad + 8 : 0, args.o_stride);
    th_tensor dot = layout(a, &p, 1, a->hq, p.dv, pad ? pad + 16 : 0, args.do_stride);
    args.o = th_dev_tensor(c, &ot, o_ref); /* the forward's output as the caller would store it */
    args.d_o = th_dev_tensor(c, &dot, d_o);
    float *lse = th_host(sizeof(float) * (size_t)(nlse ? nlse : 1));
    for (int64_t t = 0; t < p.total_q; ++t)
        for (int64_t h = 0; h < a->hq; ++h)
            lse[lse_index(a, &p, t, h)] = (float)lse_ref[t * a->hq + h];
    args.lse = th_dev(c, sizeof(float) * (size_t)(nlse ? nlse : 1));
    th_upload(c, (void *)args.lse, lse, sizeof(float) * (size_t)nlse);
    attn_grads g;
    alloc_grads(c, a, &p, &g, &args);
    args.softmax_scale = a->scale;
    args.causal = a->causal;
    args.deterministic = a->deterministic;
    args.cu_seqlens_q = upload_offsets(c, a, p.cu32_q);
    args.cu_seqlens_k = upload_offsets(c, a, p.cu32_k);
    size_t ws = 0;
    th_op_status(c, hk_attn_bwd_workspace_size(c->ctx, &args, &ws), "hk_attn_bwd_workspace_size");
    if (ws) {
        args.workspace = th_dev(c, ws);
        args.workspace_size = ws;
    }

    th_op_status(c, hk_attn_bwd(c->ctx, &args), "hk_attn_bwd");

    double *dq_ref = th_host(sizeof(double) * (size_t)(nq ? nq : 1));
    double *dk_ref = th_host(sizeof(double) * (size_t)(nk ? nk : 1));
    double *dv_ref = th_host(sizeof(double) * (size_t)(nv ? nv : 1));
    /* the library sees O rounded to the dtype: the oracle uses that same O for rowsum(dO * O) */
    double *o_stored = th_host(sizeof(double) * (size_t)(no ? no : 1));
    for (int64_t i = 0; i < no; ++i)
        o_stored[i] = orc_round(a->dt, o_ref[i]);
    orc_attn_bwd(&p.orc, p.q, p.k, p.v, o_stored, d_o, dq_ref, dk_ref, dv_ref);

    bool ok = true;
    th_tol tol = th_tol_for(a->dt, c);
    double *dq, *dk, *dv;
    fetch_grads(c, a, &p, &g, &dq, &dk, &dv, &ok);
    ok &= th_check("dQ", dq, dq_ref, nq, tol);
    ok &= th_check("dK", dk, dk_ref, nk, tol);
    ok &= th_check("dV", dv, dv_ref, nv, tol);

    if (a->deterministic) {
        /* every further run, into fresh poisoned buffers, must give the first run's bytes */
        size_t bytes = grads_bytes(a, &g);
        unsigned char *first = th_host(bytes), *again = th_host(bytes);
        download_grads(c, a, &g, first);
        for (int run = 1; run < DET_RUNS && ok; ++run) {
            alloc_grads(c, a, &p, &g, &args);
            th_op_status(c, hk_attn_bwd(c->ctx, &args), "hk_attn_bwd (repeat)");
            download_grads(c, a, &g, again);
            if (memcmp(first, again, bytes) != 0) {
                th_log("dQ, dK, dV of run %d differ from the first deterministic run's", run + 1);
                ok = false;
            }
        }
    }
    th_expect(ok, "hk_attn_bwd result");
}

int main(void)
{
    th_open_contexts();
    for (size_t i = 0; i < sizeof fwd_cases / sizeof fwd_cases[0]; ++i)
        th_add(fwd_cases[i].name, run_fwd, &fwd_cases[i], fwd_cases[i].kinds);
    for (size_t i = 0; i < sizeof bwd_cases / sizeof bwd_cases[0]; ++i)
        th_add(bwd_cases[i].name, run_bwd, &bwd_cases[i], bwd_cases[i].kinds);
    return th_run("attention");
}
