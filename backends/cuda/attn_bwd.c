/* CUDA attention backward (sm_90a): kernels/hopper/attn_bwd.cu. A preprocessing kernel (delta = rowsum(dO * O),
 * the fp32 dQ accumulator zeroed), then the tiled TMA + wgmma kernel per key block with dQ accumulated in fp32 in
 * the workspace (atomics, or deterministic: in key-block order) and a conversion kernel, where TMA can describe
 * Q, K, V and dO and head_dim, head_dim_v <= 128; else the row kernels, which take any view and head_dim up to
 * 256. Both cover every feature of the CPU reference for bf16 and f16: causal, window, softcap, head_dim_v,
 * GQA/MQA (dK, dV summed over the group's query heads), varlen. */
#include "ops.h"

#include "attn.h"

/* The tiled instances, smallest first: a call takes the first whose padded dims hold its head_dim and head_dim_v
 * (the padding features are zero-filled by TMA and never stored). */
static const struct {
    int d, dv;
} hk_attn_bwd_instances[] = {{64, 64}, {128, 128}};
enum {
    HK_ATTN_BWD_INSTANCES = sizeof hk_attn_bwd_instances / sizeof hk_attn_bwd_instances[0],
    /* per dtype: the tiled instances, then these */
    HK_ATTN_BWD_PRE = HK_ATTN_BWD_INSTANCES,
    HK_ATTN_BWD_DQ,
    HK_ATTN_BWD_DQ_ROWS,
    HK_ATTN_BWD_DKV_ROWS,
    HK_ATTN_BWD_PER_TYPE
};

static size_t hk_attn_bwd_kernel_index(int t, size_t kernel) { return (size_t)t * HK_ATTN_BWD_PER_TYPE + kernel; }

static bool hk_attn_bwd_kernel_name(size_t index, char *buf, size_t size)
{
    static const char *const rest[] = {"pre", "dq", "dq_rows", "dkv_rows"};
    const size_t k = index % HK_ATTN_BWD_PER_TYPE;
    if (index >= 2 * HK_ATTN_BWD_PER_TYPE)
        return false;
    const char *type = index < HK_ATTN_BWD_PER_TYPE ? "bf16" : "f16";
    if (k < HK_ATTN_BWD_INSTANCES)
        hk_format(buf, size, "hk_attn_bwd_%s_d%d_%d", type, hk_attn_bwd_instances[k].d, hk_attn_bwd_instances[k].dv);
    else
        hk_format(buf, size, "hk_attn_bwd_%s_%s", type, rest[k - HK_ATTN_BWD_INSTANCES]);
    return true;
}
static const hk_kernel_set hk_attn_bwd_kernel_set = {HK_KERNELS_CUDA_ATTN_BWD, 2 * HK_ATTN_BWD_PER_TYPE,
                                                     hk_attn_bwd_kernel_name};

/* The tiled instance for these dims, or HK_ATTN_BWD_INSTANCES when none holds them. */
static size_t hk_attn_bwd_instance(const hk_attn_bwd_args *a)
{
    size_t inst = 0;
    while (inst < HK_ATTN_BWD_INSTANCES &&
           (hk_attn_bwd_instances[inst].d < a->head_dim || hk_attn_bwd_instances[inst].dv < a->head_dim_v))
        ++inst;
    return inst;
}

/* The workspace, in 256-byte aligned parts: the fp32 dQ accumulator (tiled instances only), delta, and the
 * deterministic mode's counters. Sized by the maxima (a varlen call's real totals are only on the device): at most
 * batch x seqlen_q query rows per head. */
typedef struct hk_attn_bwd_layout {
    size_t acc, delta, sems, total; /* byte offsets, and the size */
    int64_t rows, acc_dim, sem_count;
} hk_attn_bwd_layout;

static size_t hk_round256(size_t n) { return (n + 255) / 256 * 256; }

static hk_attn_bwd_layout hk_attn_bwd_plan(const hk_attn_bwd_args *a)
{
    hk_attn_bwd_layout l = {.rows = a->heads_q * a->batch * a->seqlen_q};
    const size_t inst = hk_attn_bwd_instance(a);
    if (inst < HK_ATTN_BWD_INSTANCES) {
        l.acc_dim = hk_attn_bwd_instances[inst].d;
        if (a->deterministic)
            l.sem_count = a->batch * a->heads_q * ((a->seqlen_q + HK_ATTN_BWD_BM - 1) / HK_ATTN_BWD_BM) * 2;
    }
    l.delta = hk_round256((size_t)(l.rows * l.acc_dim) * sizeof(float));
    l.sems = l.delta + hk_round256((size_t)l.rows * sizeof(float));
    l.total = l.sems + hk_round256((size_t)l.sem_count * sizeof(uint32_t));
    return l;
}

static size_t hk_cuda_attn_bwd_workspace(const hk_context *ctx, const void *args)
{
    (void)ctx;
    return hk_attn_bwd_plan(args).total;
}

static hk_status hk_cuda_attn_bwd_supports(const hk_context *ctx, const void *args, char *why, size_t why_size)
{
    const hk_attn_bwd_args *a = args;
    const hk_status st = hk_cuda_unverified(ctx, "cuda.attn_bwd", why, why_size);
    if (st != HK_OK)
        return st;
    const int64_t longest = a->seqlen_q > a->seqlen_k ? a->seqlen_q : a->seqlen_k;
    return hk_cuda_attn_supports(a->dtype, a->head_dim, a->head_dim_v, a->seqlen_q, a->seqlen_k, longest, a->heads_q,
                                 a->batch, HK_ATTN_BWD_ROWS_WARPS, why, why_size);
}

/* The forward call this backward belongs to (the fields they share). */
static hk_attn_fwd_args hk_attn_bwd_forward(const hk_attn_bwd_args *a)
{
    hk_attn_fwd_args f = {
        .struct_size = sizeof f,
        .dtype = a->dtype,
        .batch = a->batch,
        .seqlen_q = a->seqlen_q,
        .seqlen_k = a->seqlen_k,
        .heads_q = a->heads_q,
        .heads_kv = a->heads_kv,
        .head_dim = a->head_dim,
        .q = a->q,
        .k = a->k,
        .v = a->v,
        .o = (void *)a->o,
        .lse = (float *)a->lse,
        .softmax_scale = a->softmax_scale,
        .causal = a->causal,
        .cu_seqlens_q = a->cu_seqlens_q,
        .cu_seqlens_k = a->cu_seqlens_k,
        .stream = a->stream,
        .window = a->window,
        .window_left = a->window_left,
        .window_right = a->window_right,
        .softcap = a->softcap,
        .head_dim_v = a->head_dim_v,
    };
    for (int i = 0; i < 3; ++i) {
        f.q_stride[i] = a->q_stride[i];
        f.k_stride[i] = a->k_stride[i];
        f.v_stride[i] = a->v_stride[i];
        f.o_stride[i] = a->o_stride[i];
    }
    return f;
}

/* Can the tiled kernel store dK and dV as pairs (4-byte aligned bases and even strides)? */
static bool hk_attn_pairs(const void *p, const int64_t s[3], bool varlen)
{
    return ((uintptr_t)p & 3) == 0 && s[1] % 2 == 0 && s[2] % 2 == 0 && (varlen || s[0] % 2 == 0);
}

static hk_status hk_cuda_attn_bwd_run(hk_context *ctx, const void *args)
{
    const hk_attn_bwd_args *a = args;
    if (a->batch == 0 || a->heads_q == 0)
        return HK_OK;
    if (a->workspace && !hk_aligned16(a->workspace))
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "attn_bwd: workspace %p is not 16-byte aligned", a->workspace);
    const bool varlen = a->cu_seqlens_q != NULL;
    const hk_attn_fwd_args fa = hk_attn_bwd_forward(a);
    int64_t tokens_q, tokens_k;
    hk_status st = hk_cuda_attn_tokens(ctx, &fa, &tokens_q, &tokens_k);
    if (st != HK_OK)
        return st;
    const hk_attn_bwd_layout l = hk_attn_bwd_plan(a);
    const size_t inst = hk_attn_bwd_instance(a);
    const bool tiled = !ctx->tuning.attn_bwd_rows && inst < HK_ATTN_BWD_INSTANCES && tokens_q > 0 &&
                       tokens_k > 0 && a->workspace && hk_attn_tma_view(a->q, a->q_stride, varlen) &&
                       hk_attn_tma_view(a->k, a->k_stride, varlen) &&
                       hk_attn_tma_view(a->v, a->v_stride, varlen) && hk_attn_tma_view(a->d_o, a->do_stride, varlen) &&
                       hk_attn_pairs(a->dk, a->dk_stride, varlen) && hk_attn_pairs(a->dv, a->dv_stride, varlen);
    uint8_t *ws = a->workspace; /* NULL only when the plan needs no bytes: no rows */
    hk_attn_bwd_params p = {
        .d_o = a->d_o,
        .dq = a->dq,
        .dk = a->dk,
        .dv = a->dv,
        .delta = ws ? (float *)(ws + l.delta) : NULL,
        .dq_acc = tiled ? (float *)(ws + l.acc) : NULL,
        .dq_sem = tiled && a->deterministic ? (uint32_t *)(ws + l.sems) : NULL,
        .rows = varlen ? a->heads_q * tokens_q : l.rows,
        .acc_dim = (int32_t)l.acc_dim,
        .sems = tiled && a->deterministic ? (int32_t)l.sem_count : 0,
        .ds_scale = a->softmax_scale,
        .n_blocks = (int32_t)((a->seqlen_k + HK_ATTN_BWD_BN - 1) / HK_ATTN_BWD_BN),
    };
    hk_attn_fwd_resolve(&fa, &p.f);
    p.f.m_blocks = (int32_t)((a->seqlen_q + HK_ATTN_BWD_BM - 1) / HK_ATTN_BWD_BM);
    for (int i = 0; i < 3; ++i) {
        p.do_stride[i] = a->do_stride[i];
        p.dq_stride[i] = a->dq_stride[i];
        p.dk_stride[i] = a->dk_stride[i];
        p.dv_stride[i] = a->dv_stride[i];
    }
    const int type = a->dtype == HK_DTYPE_BF16 ? 0 : 1;
    const unsigned rows_block[3] = {32 * HK_ATTN_BWD_ROWS_WARPS, 1, 1};
    void *params[] = {&p};

    /* Rows in groups of a block's warps; the counters, one per thread, may outnumber the rows (empty sequences). */
    int64_t pre_blocks = (p.rows + HK_ATTN_BWD_ROWS_WARPS - 1) / HK_ATTN_BWD_ROWS_WARPS;
    const int64_t sem_blocks = (p.sems + 32 * HK_ATTN_BWD_ROWS_WARPS - 1) / (32 * HK_ATTN_BWD_ROWS_WARPS);
    pre_blocks = pre_blocks > sem_blocks ? pre_blocks : sem_blocks;
    const unsigned pre_grid[3] = {(unsigned)pre_blocks, 1, 1};
    if ((st = hk_gpu_launch_indexed(ctx, &hk_attn_bwd_kernel_set, hk_attn_bwd_kernel_index(type, HK_ATTN_BWD_PRE),
                                    false, pre_grid, rows_block, 0, a->stream, params)) != HK_OK)
        return st;

    if (!tiled) {
        const int64_t groups_q = (a->seqlen_q + HK_ATTN_BWD_ROWS_WARPS - 1) / HK_ATTN_BWD_ROWS_WARPS;
        const int64_t groups_k = (a->seqlen_k + HK_ATTN_BWD_ROWS_WARPS - 1) / HK_ATTN_BWD_ROWS_WARPS;
        const unsigned dq_grid[3] = {(unsigned)(groups_q * a->heads_q * a->batch), 1, 1};
        const unsigned dkv_grid[3] = {(unsigned)(groups_k * a->heads_kv * a->batch), 1, 1};
        if ((st = hk_gpu_launch_indexed(ctx, &hk_attn_bwd_kernel_set,
                                        hk_attn_bwd_kernel_index(type, HK_ATTN_BWD_DQ_ROWS), false, dq_grid,
                                        rows_block, 0, a->stream, params)) != HK_OK)
            return st;
        return hk_gpu_launch_indexed(ctx, &hk_attn_bwd_kernel_set, hk_attn_bwd_kernel_index(type, HK_ATTN_BWD_DKV_ROWS),
                                     false, dkv_grid, rows_block, 0, a->stream, params);
    }

    const int d = hk_attn_bwd_instances[inst].d, ddv = hk_attn_bwd_instances[inst].dv;
    const int tmap = a->dtype == HK_DTYPE_BF16 ? HK_CU_TMAP_BFLOAT16 : HK_CU_TMAP_FLOAT16;
    const int64_t batches = varlen ? 1 : a->batch, dv = a->head_dim_v;
    hk_cu_tensor_map mq, mk, mv, mdo;
    if ((st = hk_attn_map(&mq, tmap, a->q, a->q_stride, a->head_dim, tokens_q, a->heads_q, batches, HK_ATTN_BWD_BM)) ||
        (st = hk_attn_map(&mk, tmap, a->k, a->k_stride, a->head_dim, tokens_k, a->heads_kv, batches, HK_ATTN_BWD_BN)) ||
        (st = hk_attn_map(&mv, tmap, a->v, a->v_stride, dv, tokens_k, a->heads_kv, batches, HK_ATTN_BWD_BN)) ||
        (st = hk_attn_map(&mdo, tmap, a->d_o, a->do_stride, dv, tokens_q, a->heads_q, batches, HK_ATTN_BWD_BM)))
        return st;
    /* Key blocks outermost: the deterministic mode's waits point only at lower blocks, which started earlier. */
    const unsigned grid[3] = {(unsigned)(p.n_blocks * a->heads_kv * a->batch), 1, 1},
                   block[3] = {HK_ATTN_BWD_THREADS, 1, 1};
    void *tiled_params[] = {&mq, &mk, &mv, &mdo, &p};
    if ((st = hk_gpu_launch_indexed(ctx, &hk_attn_bwd_kernel_set, hk_attn_bwd_kernel_index(type, inst), false, grid,
                                    block, HK_ATTN_BWD_SMEM(d, ddv), a->stream, tiled_params)) != HK_OK)
        return st;
    const unsigned dq_grid[3] = {(unsigned)((p.rows + HK_ATTN_BWD_ROWS_WARPS - 1) / HK_ATTN_BWD_ROWS_WARPS), 1, 1};
    return hk_gpu_launch_indexed(ctx, &hk_attn_bwd_kernel_set, hk_attn_bwd_kernel_index(type, HK_ATTN_BWD_DQ), false,
                                 dq_grid, rows_block, 0, a->stream, params);
}

HK_INTERNAL const hk_variant hk_cuda_attn_bwd = {
    .op = HK_OP_ATTN_BWD,
    .name = "cuda.attn_bwd",
    .description = "bf16/f16 attention backward, head_dim <= 256: TMA + wgmma tiles up to 128 features (else row "
                   "kernels), causal, window, softcap, GQA, varlen; fp32 dQ atomics or deterministic",
    .backend = HK_BACKEND_CUDA,
    .archs = "sm_90a",
    .supports = hk_cuda_attn_bwd_supports,
    .run = hk_cuda_attn_bwd_run,
    .workspace = hk_cuda_attn_bwd_workspace,
};
