/* What the CUDA attention forward and backward share: the limits of their kernels, the kernels' parameters
 * resolved from the forward's arguments (the backward's are mapped onto them), the varlen token totals, and the
 * TMA views of Q, K, V (and dO). */
#ifndef HK_BACKEND_CUDA_ATTN_H
#define HK_BACKEND_CUDA_ATTN_H

#include "internal.h"

#include "common/attn_params.h"
#include "tensormap.h"

/* HK_OK, or HK_ERR_UNSUPPORTED with why: dtype bf16/f16, head_dim and head_dim_v <= 256, the int32 row arithmetic
 * and the linear grids' limits (grid_rows rows per (sequence, head) in groups of rows_per_block, x heads x batch). */
HK_INTERNAL hk_status hk_cuda_attn_supports(hk_dtype dtype, int64_t head_dim, int64_t head_dim_v, int64_t seqlen_q,
                                            int64_t seqlen_k, int64_t grid_rows, int64_t heads_q, int64_t batch,
                                            int64_t rows_per_block, char *why, size_t why_size);

/* Tokens of Q and K: seqlen_q / seqlen_k, or when varlen the last offsets, copied from the device (the varlen check
 * has already bound the device and waited for the stream). */
HK_INTERNAL hk_status hk_cuda_attn_tokens(hk_context *ctx, const hk_attn_fwd_args *a, int64_t *tokens_q,
                                          int64_t *tokens_k);

/* Can TMA read this view (base and every stride a multiple of 16 bytes, no zero stride)? */
HK_INTERNAL bool hk_attn_tma_view(const void *p, const int64_t s[3], bool varlen);

/* [feature, token, head, batch] view of a 16-bit tensor for boxes of 64 features x `rows` tokens. */
HK_INTERNAL hk_status hk_attn_map(hk_cu_tensor_map *map, int type, const void *p, const int64_t s[3], int64_t dim,
                                  int64_t tokens, int64_t heads, int64_t batch, uint32_t rows);

#endif
