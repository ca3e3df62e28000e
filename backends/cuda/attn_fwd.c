/* CUDA attention forward (sm_90a): the tiled TMA + wgmma kernel of kernels/hopper/attn_fwd.cu when TMA can
 * describe Q, K and V (16-byte aligned bases and strides), else the row kernel, which takes any view. Both cover
 * every feature of the CPU reference for bf16 and f16 up to 256 features: causal, window, softcap, head_dim_v,
 * GQA/MQA, varlen, LSE. */
#include "ops.h"

#include "attn.h"

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
    (void)ctx;
    const hk_attn_fwd_args *a = args;
    return hk_cuda_attn_supports(a->dtype, a->head_dim, a->head_dim_v, a->seqlen_q, a->seqlen_k, a->seqlen_q,
                                 a->heads_q, a->batch, HK_ATTN_FWD_ROWS_WARPS, why, why_size);
}

static hk_status hk_cuda_attn_fwd_run(hk_context *ctx, const void *args)
{
    const hk_attn_fwd_args *a = args;
    if (a->batch == 0 || a->seqlen_q == 0)
        return HK_OK;
    const bool varlen = a->cu_seqlens_q != NULL;
    const int64_t dv = a->head_dim_v;
    hk_attn_fwd_params p;
    hk_attn_fwd_resolve(a, &p);
    const int type = a->dtype == HK_DTYPE_BF16 ? 0 : 1;

    /* Varlen views end at the last sequence's end, which only the device knows: TMA must not read past it. */
    int64_t tokens_q, tokens_k;
    hk_status st = hk_cuda_attn_tokens(ctx, a, &tokens_q, &tokens_k);
    if (st != HK_OK)
        return st;
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
