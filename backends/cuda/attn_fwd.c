/* CUDA attention forward (sm_90a): the tiled TMA + wgmma kernel of kernels/hopper/attn_fwd.cu when TMA can
 * describe Q, K and V (16-byte aligned bases and strides), else the row kernel, which takes any view. Both cover
 * every feature of the CPU reference for bf16 and f16 up to 256 features: causal, window, softcap, head_dim_v,
 * GQA/MQA, varlen, LSE. */
#include "ops.h"

#include "common/attn_params.h"
#include "tensormap.h"

#include <math.h>

/* The tiled instances, smallest first: a call takes the first whose padded dims hold its head_dim and head_dim_v
 * (the padding features are zero-filled by TMA and never stored). */
static const struct {
    int d, dv;
} hk_attn_instances[] = {{64, 64}, {128, 128}, {192, 128}, {256, 256}};
enum { HK_ATTN_INSTANCES = sizeof hk_attn_instances / sizeof hk_attn_instances[0] };

/* Kernel index per dtype t (0 bf16, 1 f16): the tiled instances, then the row kernel. */
static size_t hk_attn_kernel_index(int t, size_t instance) { return (size_t)t * (HK_ATTN_INSTANCES + 1) + instance; }

static bool hk_attn_kernel_name(size_t index, char *buf, size_t size)
{
    const size_t per_type = HK_ATTN_INSTANCES + 1, inst = index % per_type;
    if (index >= 2 * per_type)
        return false;
    const char *type = index < per_type ? "bf16" : "f16";
    if (inst == HK_ATTN_INSTANCES)
        hk_format(buf, size, "hk_attn_fwd_%s_rows", type);
    else
        hk_format(buf, size, "hk_attn_fwd_%s_d%d_%d", type, hk_attn_instances[inst].d, hk_attn_instances[inst].dv);
    return true;
}
static const hk_kernel_set hk_attn_kernel_set = {HK_KERNELS_CUDA_ATTN, 2 * (HK_ATTN_INSTANCES + 1),
                                                 hk_attn_kernel_name};

static hk_status hk_cuda_attn_fwd_supports(const hk_context *ctx, const void *args, char *why, size_t why_size)
{
    const hk_attn_fwd_args *a = args;
    if (a->dtype != HK_DTYPE_BF16 && a->dtype != HK_DTYPE_F16) {
        hk_format(why, why_size, "dtype %s; supported: bf16, f16 (f32 attention runs on the CPU backend)",
                  hk_dtype_name(a->dtype));
        return HK_ERR_UNSUPPORTED;
    }
    if (a->head_dim > 256 || a->head_dim_v > 256) {
        hk_format(why, why_size, "head_dim %lld / head_dim_v %lld; supported: up to 256 each", (long long)a->head_dim,
                  (long long)a->head_dim_v);
        return HK_ERR_UNSUPPORTED;
    }
    /* One linear grid of query tiles (or row groups) x heads x batch; int32 row arithmetic in the kernels. */
    const int64_t groups = (a->seqlen_q + HK_ATTN_FWD_ROWS_WARPS - 1) / HK_ATTN_FWD_ROWS_WARPS;
    if (a->seqlen_q > (1 << 30) || a->seqlen_k > (1 << 30) || groups * a->heads_q * a->batch > INT32_MAX) {
        hk_format(why, why_size,
                  "seqlen_q %lld, seqlen_k %lld (at most 2^30 each) and %lld x %lld x %lld blocks (at most 2^31 - 1)",
                  (long long)a->seqlen_q, (long long)a->seqlen_k, (long long)groups, (long long)a->heads_q,
                  (long long)a->batch);
        return HK_ERR_UNSUPPORTED;
    }
    return HK_OK;
}

/* Can TMA read this view (base and every stride a multiple of 16 bytes, no zero stride)? */
static bool hk_attn_tma_view(const void *p, const int64_t s[3], bool varlen)
{
    for (int i = varlen ? 1 : 0; i < 3; ++i)
        if (s[i] <= 0 || (s[i] * 2) % 16 != 0)
            return false;
    return hk_aligned16(p);
}

/* [feature, token, head, batch] view of Q, K or V for boxes of 64 features x `rows` tokens. */
static hk_status hk_attn_map(hk_cu_tensor_map *map, int type, const void *p, const int64_t s[3], int64_t dim,
                             int64_t tokens, int64_t heads, int64_t batch, uint32_t rows)
{
    const uint64_t dims[4] = {(uint64_t)dim, (uint64_t)tokens, (uint64_t)heads, (uint64_t)batch};
    const uint64_t strides[3] = {(uint64_t)s[1] * 2, (uint64_t)s[2] * 2,
                                 (uint64_t)(batch > 1 ? s[0] : s[1]) * 2}; /* a batch of one: any valid stride */
    const uint32_t box[4] = {64, rows, 1, 1};
    return hk_cuda_tensor_map_nd(map, type, p, 4, dims, strides, box);
}

static hk_status hk_cuda_attn_fwd_run(hk_context *ctx, const void *args)
{
    const hk_attn_fwd_args *a = args;
    if (a->batch == 0 || a->seqlen_q == 0)
        return HK_OK;
    const bool varlen = a->cu_seqlens_q != NULL;
    const int64_t dv = a->head_dim_v;
    /* Window sides past every sequence's length change nothing; clamping keeps the kernels' sums in range. */
    const int64_t reach = a->seqlen_q + a->seqlen_k + 1;
    const bool has_left = a->window && a->window_left >= 0;
    const bool has_right = a->causal || (a->window && a->window_right >= 0);
    const float scale = a->softmax_scale, log2e = 1.4426950408889634f;
    hk_attn_fwd_params p = {
        .q = a->q,
        .k = a->k,
        .v = a->v,
        .o = a->o,
        .lse = a->lse,
        .cu_seqlens_q = a->cu_seqlens_q,
        .cu_seqlens_k = a->cu_seqlens_k,
        .q_stride = {a->q_stride[0], a->q_stride[1], a->q_stride[2]},
        .k_stride = {a->k_stride[0], a->k_stride[1], a->k_stride[2]},
        .v_stride = {a->v_stride[0], a->v_stride[1], a->v_stride[2]},
        .o_stride = {a->o_stride[0], a->o_stride[1], a->o_stride[2]},
        .batch = (int32_t)a->batch,
        .seqlen_q = (int32_t)a->seqlen_q,
        .seqlen_k = (int32_t)a->seqlen_k,
        .heads_q = (int32_t)a->heads_q,
        .heads_kv = (int32_t)a->heads_kv,
        .group = (int32_t)(a->heads_q / a->heads_kv),
        .head_dim = (int32_t)a->head_dim,
        .head_dim_v = (int32_t)dv,
        .has_left = has_left,
        .has_right = has_right,
        .left = has_left ? (a->window_left < reach ? a->window_left : reach) : 0,
        .right = a->causal ? 0 : has_right ? (a->window_right < reach ? a->window_right : reach) : 0,
        .score_scale = a->softcap > 0 ? scale / a->softcap : scale > 0 ? 1.0f : scale,
        .softcap = a->softcap > 0 ? a->softcap : 0.0f,
        .exp2_scale = a->softcap > 0 || scale < 0 ? log2e : scale * log2e,
    };
    const int type = a->dtype == HK_DTYPE_BF16 ? 0 : 1;

    /* Varlen views end at the last sequence's end, which only the device knows: TMA must not read past it. The
     * varlen check (src/varlen.c) has already bound the device and waited for the stream before this call. */
    int64_t tokens_q = a->seqlen_q, tokens_k = a->seqlen_k;
    if (varlen) {
        int32_t last[2];
        hk_status st = ctx->gpu->copy(ctx->dev, &last[0], a->cu_seqlens_q + a->batch, 4, HK_COPY_DEVICE_TO_HOST);
        if (st == HK_OK)
            st = ctx->gpu->copy(ctx->dev, &last[1], a->cu_seqlens_k + a->batch, 4, HK_COPY_DEVICE_TO_HOST);
        if (st != HK_OK)
            return st;
        tokens_q = last[0];
        tokens_k = last[1];
    }

    const bool tiled = tokens_q > 0 && tokens_k > 0 && hk_attn_tma_view(a->q, a->q_stride, varlen) &&
                       hk_attn_tma_view(a->k, a->k_stride, varlen) && hk_attn_tma_view(a->v, a->v_stride, varlen) &&
                       ((uintptr_t)a->o & 3) == 0 && a->o_stride[1] % 2 == 0 && a->o_stride[2] % 2 == 0 &&
                       (varlen || a->o_stride[0] % 2 == 0);
    size_t inst = 0;
    while (hk_attn_instances[inst].d < a->head_dim || hk_attn_instances[inst].dv < dv)
        ++inst;
    if (!tiled) {
        const unsigned grid[3] = {(unsigned)((a->seqlen_q + HK_ATTN_FWD_ROWS_WARPS - 1) / HK_ATTN_FWD_ROWS_WARPS *
                                             a->heads_q * a->batch),
                                  1, 1},
                       block[3] = {32 * HK_ATTN_FWD_ROWS_WARPS, 1, 1};
        void *params[] = {&p};
        return hk_gpu_launch_indexed(ctx, &hk_attn_kernel_set, hk_attn_kernel_index(type, HK_ATTN_INSTANCES), false,
                                     grid, block, 0, a->stream, params);
    }

    const int d = hk_attn_instances[inst].d, ddv = hk_attn_instances[inst].dv, bn = HK_ATTN_FWD_BN(d);
    const int tmap = a->dtype == HK_DTYPE_BF16 ? HK_CU_TMAP_BFLOAT16 : HK_CU_TMAP_FLOAT16;
    const int64_t batches = varlen ? 1 : a->batch;
    hk_cu_tensor_map mq, mk, mv;
    hk_status st;
    if ((st = hk_attn_map(&mq, tmap, a->q, a->q_stride, a->head_dim, tokens_q, a->heads_q, batches, HK_ATTN_FWD_BM)) ||
        (st = hk_attn_map(&mk, tmap, a->k, a->k_stride, a->head_dim, tokens_k, a->heads_kv, batches, bn)) ||
        (st = hk_attn_map(&mv, tmap, a->v, a->v_stride, dv, tokens_k, a->heads_kv, batches, bn)))
        return st;
    p.m_blocks = (int32_t)((a->seqlen_q + HK_ATTN_FWD_BM - 1) / HK_ATTN_FWD_BM);
    const unsigned grid[3] = {(unsigned)(p.m_blocks * a->heads_q * a->batch), 1, 1},
                   block[3] = {HK_ATTN_FWD_THREADS, 1, 1};
    void *params[] = {&mq, &mk, &mv, &p};
    return hk_gpu_launch_indexed(ctx, &hk_attn_kernel_set, hk_attn_kernel_index(type, inst), false, grid, block,
                                 HK_ATTN_FWD_SMEM(d, ddv), a->stream, params);
}

HK_INTERNAL const hk_variant hk_cuda_attn_fwd = {
    .op = HK_OP_ATTN_FWD,
    .name = "cuda.attn_fwd",
    .description = "bf16/f16 attention, head_dim <= 256: TMA + wgmma tiles (else a row kernel), causal, window, "
                   "softcap, GQA, varlen",
    .backend = HK_BACKEND_CUDA,
    .archs = "sm_90a",
    .supports = hk_cuda_attn_fwd_supports,
    .run = hk_cuda_attn_fwd_run,
    .workspace = NULL,
};
