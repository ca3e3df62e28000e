/* CUDA GEMM on sm_90a (kernels/hopper/gemm.cu, gemm_f16.cu): takes the call's launch plan (gemm_plan.c), builds the
 * TMA tensor maps of A, B and D on the host and launches (clusters come from the kernels' __cluster_dims__). TMA's
 * rules (16-byte aligned bases and row pitches) are what supports() checks: an operand that breaks them is copied
 * to aligned rows in the caller's workspace first where it holds them (else cuda.gemm.any takes the call); ragged
 * m/n/k are handled by the maps' zero fill and clipping. */
#include "ops.h"

#include <string.h>

#include "gemm_plan.h"
#include "tensormap.h"

/* Operands TMA cannot read in place, copied to rows of a 16-byte multiple at the workspace's start (A's copy, then
 * B's, each rounded to 256 bytes); the call's own workspace follows them. */
typedef struct hk_gemm_packing {
    bool a, b;
    int64_t lda, ldb;        /* the copies' leading dimensions */
    size_t a_bytes, b_bytes; /* 0 where the operand is read in place */
} hk_gemm_packing;

/* Rows and the contiguous extent of the stored A (B with b set). */
static void hk_gemm_stored(const hk_gemm_args *a, bool b, int64_t *rows, int64_t *cols)
{
    const int trans = b ? a->trans_b : a->trans_a;
    const int64_t mn = b ? a->n : a->m;
    *rows = (trans != b) ? a->k : mn; /* A: k rows when transposed; B: k rows when not */
    *cols = (trans != b) ? mn : a->k;
}

static size_t hk_gemm_pack_plan(const hk_gemm_args *a, hk_gemm_packing *pk)
{
    memset(pk, 0, sizeof *pk);
    pk->lda = a->lda;
    pk->ldb = a->ldb;
    if (a->m == 0 || a->n == 0 || a->k == 0)
        return 0;
    const int64_t es = (int64_t)hk_dtype_size(a->a_type), per = 16 / es;
    for (int o = 0; o < 2; ++o) {
        if (hk_gemm_tma_rows_ok(o ? a->b : a->a, o ? a->ldb : a->lda, es))
            continue;
        int64_t rows, cols;
        hk_gemm_stored(a, o, &rows, &cols);
        const int64_t ld = (cols + per - 1) / per * per;
        const size_t bytes = (size_t)((rows * ld * es + 255) / 256 * 256);
        if (o) {
            pk->b = true, pk->ldb = ld, pk->b_bytes = bytes;
        } else {
            pk->a = true, pk->lda = ld, pk->a_bytes = bytes;
        }
    }
    return pk->a_bytes + pk->b_bytes;
}

/* The types, layouts and sizes the TMA kernels are built for, whatever the operands' alignment. */
static hk_status hk_cuda_gemm_covers(const hk_gemm_args *a, char *why, size_t why_size)
{
    const bool fp8 = a->a_type == HK_DTYPE_FP8_E4M3;
    if (a->a_type != HK_DTYPE_BF16 && a->a_type != HK_DTYPE_F16 && !fp8) {
        hk_format(why, why_size, "a_type %s; covered on sm_90a: bf16, f16, fp8_e4m3", hk_dtype_name(a->a_type));
        return HK_ERR_UNSUPPORTED;
    }
    if (!hk_gemm_plan_built(a, HK_GEMM_P256)) {
        hk_format(why, why_size, "%s x %s -> %s with trans_a %d, trans_b %d is not covered on sm_90a (fp8: trans_a 0, "
                  "trans_b 1, d bf16 or f32 only)", hk_dtype_name(a->a_type), hk_dtype_name(a->b_type),
                  hk_dtype_name(a->d_type), a->trans_a, a->trans_b);
        return HK_ERR_UNSUPPORTED;
    }
    if (a->m > INT32_MAX || a->n > INT32_MAX || a->k > INT32_MAX) {
        hk_format(why, why_size, "m, n, k must each be < 2^31 on sm_90a");
        return HK_ERR_UNSUPPORTED;
    }
    return HK_OK;
}

static hk_status hk_cuda_gemm_supports(const hk_context *ctx, const void *args, char *why, size_t why_size)
{
    const hk_gemm_args *a = args;
    hk_status st = hk_cuda_gemm_covers(a, why, why_size);
    if (st != HK_OK)
        return st;
    if (a->a_type == HK_DTYPE_F16 && (st = hk_cuda_unverified(ctx, "f16 operands", why, why_size)) != HK_OK)
        return st;
    hk_gemm_packing pk;
    const size_t need = hk_gemm_pack_plan(a, &pk);
    if (need && (st = hk_cuda_unverified(ctx, "operands copied to aligned rows", why, why_size)) != HK_OK)
        return st;
    if (need > a->workspace_size) {
        const size_t es = hk_dtype_size(a->a_type);
        hk_format(why, why_size, "gemm on sm_90a needs a and b 16-byte aligned with lda, ldb multiples of %d elements "
                  "(lda %lld, ldb %lld), or a workspace of %zu bytes to copy them to such rows "
                  "(hk_gemm_workspace_size)", (int)(16 / es), (long long)a->lda, (long long)a->ldb, need);
        return HK_ERR_UNSUPPORTED;
    }
    return HK_OK;
}

/* The map of one operand: `mn` rows or columns (M or N) by k, for tiles `rows` long in M or N: M/N-contiguous
 * (boxes of HK_GEMM_MN_BOX M/N x one k-block) or K-contiguous (one k-block x the tile's rows, in halves past
 * 256). */
static hk_status hk_gemm_operand_map(hk_cu_tensor_map *map, int type, const void *p, int64_t ld, size_t esize, int64_t mn,
                                     int64_t k, bool mn_contiguous, uint32_t box_k, uint32_t rows)
{
    return mn_contiguous
               ? hk_cuda_tensor_map_2d(map, type, p, mn, k, ld * esize, HK_GEMM_MN_BOX(rows), box_k, true)
               : hk_cuda_tensor_map_2d(map, type, p, k, mn, ld * esize, box_k, HK_GEMM_KMAJOR_BOX_ROWS(rows), true);
}

/* Workspace that lets this call take its fastest route (hk_gemm_workspace_size): the copies of operands TMA cannot
 * read in place, then the route given room enough. */
static size_t hk_cuda_gemm_workspace(const hk_context *ctx, const void *args)
{
    hk_gemm_packing pk;
    return hk_gemm_pack_plan(args, &pk) +
           hk_gemm_plan_workspace(args, ctx->multiprocessors > 0 ? ctx->multiprocessors : 1, &ctx->tuning);
}

size_t hk_cuda_gemm_packed_workspace(const hk_context *ctx, const hk_gemm_args *a)
{
    char why[8];
    hk_gemm_packing pk;
    const bool packs = hk_cuda_gemm_covers(a, why, sizeof why) == HK_OK &&
                       hk_cuda_unverified(ctx, "", why, sizeof why) == HK_OK && hk_gemm_pack_plan(a, &pk) > 0;
    return packs ? hk_cuda_gemm_workspace(ctx, a) : 0;
}

static hk_status hk_cuda_gemm_run(hk_context *ctx, const void *args)
{
    const hk_gemm_args *a = args;
    if (a->m == 0 || a->n == 0)
        return HK_OK;
    hk_gemm_packing pk;
    const size_t packed_bytes = hk_gemm_pack_plan(a, &pk);
    hk_gemm_args packed;
    hk_status st;
    if (packed_bytes) { /* supports() saw room for the copies: the call runs on them, the rest of the workspace after */
        packed = *a;
        uint8_t *ws = a->workspace;
        const size_t es = hk_dtype_size(a->a_type);
        for (int o = 0; o < 2; ++o) {
            if (!(o ? pk.b : pk.a))
                continue;
            int64_t rows, cols;
            hk_gemm_stored(a, o, &rows, &cols);
            if ((st = hk_cuda_gemm_repack(ctx, o ? a->b : a->a, o ? a->ldb : a->lda, rows, cols, es, ws,
                                          o ? pk.ldb : pk.lda, a->stream)))
                return st;
            if (o)
                packed.b = ws, packed.ldb = pk.ldb;
            else
                packed.a = ws, packed.lda = pk.lda;
            ws += o ? pk.b_bytes : pk.a_bytes;
        }
        packed.workspace_size = a->workspace_size - packed_bytes;
        packed.workspace = packed.workspace_size ? ws : NULL;
        a = &packed;
    }
    const bool fp8 = a->a_type == HK_DTYPE_FP8_E4M3;
    const size_t ei = hk_dtype_size(a->a_type), eo = hk_dtype_size(a->d_type);
    const int in_type = fp8 ? HK_CU_TMAP_UINT8 : a->a_type == HK_DTYPE_F16 ? HK_CU_TMAP_FLOAT16 : HK_CU_TMAP_BFLOAT16;
    const uint32_t box_k = HK_GEMM_BOX_K / (uint32_t)ei;
    hk_gemm_plan plan;
    hk_gemm_plan_call(a, ctx->multiprocessors > 0 ? ctx->multiprocessors : 1, &ctx->tuning, &plan);
    const hk_gemm_shape *sh = &hk_gemm_shapes[plan.shape];

    hk_cu_tensor_map map_a, map_b, map_d, map_t;
    if (a->k == 0) {
        /* no k-block is loaded, so any well-formed map will do: one over d's first row */
        const void *base = (const void *)((uintptr_t)a->d & ~(uintptr_t)15);
        if ((st = hk_cuda_tensor_map_2d(&map_a, HK_CU_TMAP_UINT8, base, 128, 1, 128, 128, 1, true)))
            return st;
        map_b = map_a;
    } else if (sh->swap) {
        if ((st = hk_gemm_operand_map(&map_a, in_type, a->b, a->ldb, ei, a->n, a->k, !a->trans_b, box_k, (uint32_t)sh->bm)) ||
            (st = hk_gemm_operand_map(&map_b, in_type, a->a, a->lda, ei, a->m, a->k, false, box_k, (uint32_t)sh->bn)))
            return st;
    } else {
        if ((st = hk_gemm_operand_map(&map_a, in_type, a->a, a->lda, ei, a->m, a->k, a->trans_a, box_k, (uint32_t)sh->bm)) ||
            (st = hk_gemm_operand_map(&map_b, in_type, a->b, a->ldb, ei, a->n, a->k, !a->trans_b, box_k, (uint32_t)sh->bn)))
            return st;
    }
    hk_gemm_params *p = &plan.params;
    if (p->tma_store) {
        const int out_type = a->d_type == HK_DTYPE_BF16 ? HK_CU_TMAP_BFLOAT16
                             : a->d_type == HK_DTYPE_F32 ? HK_CU_TMAP_FLOAT32 : HK_CU_TMAP_FLOAT16;
        const uint32_t chunk = 128 / (uint32_t)eo, tail = (uint32_t)HK_GEMM_TAIL(sh->bn, sh->swap, (int)eo);
        if ((st = hk_cuda_tensor_map_2d(&map_d, out_type, a->d, a->n, a->m, a->ldd * eo, chunk, HK_GEMM_EPI_ROWS, true)))
            return st;
        map_t = map_d;
        if (tail && (st = hk_cuda_tensor_map_2d(&map_t, out_type, a->d, a->n, a->m, a->ldd * eo, sh->swap ? chunk : tail,
                                                sh->swap ? tail : HK_GEMM_EPI_ROWS, sh->swap)))
            return st;
    } else {
        map_d = map_t = map_a; /* unused */
    }
    if (plan.zero_words &&
        ((st = ctx->gpu->bind(ctx->dev)) || (st = ctx->gpu->zero_async(ctx->dev, a->workspace, plan.zero_words, a->stream))))
        return st;
    const unsigned grid[3] = {plan.grid, 1, 1}, block[3] = {plan.block, 1, 1};
    void *params[] = {&map_a, &map_b, &map_d, &map_t, p};
    /* every GEMM kernel waits for the previous kernel before touching memory (gemm.cu), so its setup may overlap it */
    if ((st = hk_gpu_launch_indexed(ctx, &hk_gemm_kernels, plan.kernel, true, grid, block, plan.shared, a->stream,
                                    params)) ||
        !plan.pooled)
        return st;
    /* the parts are parked: the sum kernel (which waits for them the same way) adds them and writes D */
    const unsigned sum_grid[3] = {plan.sum_grid, 1, 1}, sum_block[3] = {128, 1, 1};
    void *sum_params[] = {p};
    return hk_gpu_launch_indexed(ctx, &hk_gemm_kernels, plan.sum_kernel, true, sum_grid, sum_block, plan.sum_shared,
                                 a->stream, sum_params);
}

HK_INTERNAL const hk_variant hk_cuda_gemm = {
    .op = HK_OP_GEMM,
    .name = "cuda.gemm.wgmma",
    .description = "TMA + wgmma GEMM, mbarrier pipelines: persistent 128-row tiles 320 to 96 wide or 192 x 96 "
                   "tiles by wave fill (nn also as D^T = B^T A^T, for widths off the 64-column grid); 64x64 "
                   "or 64x128 tiles, 64x64 or 128x64 with K split over a 2-CTA cluster (DSMEM reduction) for long K, "
                   "when tiles are few, or 64x64, 64x96, 128x96, 128x128, 128x192 or 128x256 in up to 16 parts "
                   "parked in the caller's workspace and added by a second kernel; with a workspace, long K over two or more "
                   "rounds of persistent tiles whose last round is part empty: the last two rounds' tiles in 2-3 parts of "
                   "K, the last part to finish adding them; skinny M (<= 64, row-major A) as "
                   "D^T = B^T A^T in 64-row tiles: bf16 (all trans_a/trans_b) -> bf16/f32/f16, f16 likewise on the "
                   "persistent 128 x 256 and 128 x 128 and the 64 x 64 tiles, fp8 e4m3 (trans_a 0, trans_b 1) -> "
                   "bf16/f32 (without fp8_fast_accum: k-blocks of 128 summed in fp32, in 192 x 128 tiles of three "
                   "consumer warpgroups or tiles up to 192 wide, the next k-block in flight on tiles up to 128 "
                   "wide, 128 x 128 ones storing a tile during the next); a, b 16-byte aligned rows",
    .backend = HK_BACKEND_CUDA,
    .archs = "sm_90a",
    .supports = hk_cuda_gemm_supports,
    .run = hk_cuda_gemm_run,
    .workspace = hk_cuda_gemm_workspace,
    .workspace_optional = true,
};
