/* Host helpers of the CUDA attention forward and backward (attn.h). */
#include "attn.h"

hk_status hk_cuda_attn_supports(hk_dtype dtype, int64_t head_dim, int64_t head_dim_v, int64_t seqlen_q,
                                int64_t seqlen_k, int64_t grid_rows, int64_t heads_q, int64_t batch,
                                int64_t rows_per_block, char *why, size_t why_size)
{
    if (dtype != HK_DTYPE_BF16 && dtype != HK_DTYPE_F16) {
        hk_format(why, why_size, "dtype %s; supported: bf16, f16 (f32 attention runs on the CPU backend)",
                  hk_dtype_name(dtype));
        return HK_ERR_UNSUPPORTED;
    }
    if (head_dim > 256 || head_dim_v > 256) {
        hk_format(why, why_size, "head_dim %lld / head_dim_v %lld; supported: up to 256 each", (long long)head_dim,
                  (long long)head_dim_v);
        return HK_ERR_UNSUPPORTED;
    }
    /* One linear grid of tiles (or row groups) x heads x batch; int32 row arithmetic in the kernels. */
    const int64_t groups = (grid_rows + rows_per_block - 1) / rows_per_block;
    if (seqlen_q > (1 << 30) || seqlen_k > (1 << 30) || groups * heads_q * batch > INT32_MAX) {
        hk_format(why, why_size,
                  "seqlen_q %lld, seqlen_k %lld (at most 2^30 each) and %lld x %lld x %lld blocks (at most 2^31 - 1)",
                  (long long)seqlen_q, (long long)seqlen_k, (long long)groups, (long long)heads_q, (long long)batch);
        return HK_ERR_UNSUPPORTED;
    }
    return HK_OK;
}

hk_status hk_cuda_attn_tokens(hk_context *ctx, const hk_attn_fwd_args *a, int64_t *tokens_q, int64_t *tokens_k)
{
    *tokens_q = a->seqlen_q;
    *tokens_k = a->seqlen_k;
    if (!a->cu_seqlens_q)
        return HK_OK;
    int32_t last[2];
    hk_status st = ctx->gpu->copy(ctx->dev, &last[0], a->cu_seqlens_q + a->batch, 4, HK_COPY_DEVICE_TO_HOST);
    if (st == HK_OK)
        st = ctx->gpu->copy(ctx->dev, &last[1], a->cu_seqlens_k + a->batch, 4, HK_COPY_DEVICE_TO_HOST);
    if (st != HK_OK)
        return st;
    *tokens_q = last[0];
    *tokens_k = last[1];
    return HK_OK;
}

bool hk_attn_tma_view(const void *p, const int64_t s[3], bool varlen)
{
    for (int i = varlen ? 1 : 0; i < 3; ++i)
        if (s[i] <= 0 || (s[i] * 2) % 16 != 0)
            return false;
    return hk_aligned16(p);
}

hk_status hk_attn_map(hk_cu_tensor_map *map, int type, const void *p, const int64_t s[3], int64_t dim,
                      int64_t tokens, int64_t heads, int64_t batch, uint32_t rows)
{
    const uint64_t dims[4] = {(uint64_t)dim, (uint64_t)tokens, (uint64_t)heads, (uint64_t)batch};
    const uint64_t strides[3] = {(uint64_t)s[1] * 2, (uint64_t)s[2] * 2,
                                 (uint64_t)(batch > 1 ? s[0] : s[1]) * 2}; /* a batch of one: any valid stride */
    const uint32_t box[4] = {64, rows, 1, 1};
    return hk_cuda_tensor_map_nd(map, type, p, 4, dims, strides, box);
}
