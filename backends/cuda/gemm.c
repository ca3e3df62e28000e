/* CUDA GEMM on sm_90a (kernels/hopper/gemm.cu): builds the TMA tensor maps of A, B and D on the host, picks
 * the launch shape by problem size and launches (clusters come from the kernels' __cluster_dims__). TMA's
 * rules (16-byte aligned bases and row pitches) are what supports() checks; ragged m/n/k are handled by the
 * maps' zero fill and clipping. */
#include "ops.h"

#include "hopper/gemm.h"
#include "tensormap.h"

#include <stdlib.h>
#include <string.h>

/* Launch shapes of gemm.h, indexed by HK_GEMM_<id>. */
typedef struct hk_gemm_shape {
    const char *name, *suffix;
    int bm, bn, cluster, persist, swap, lay, pool;
    unsigned smem;
} hk_gemm_shape;
#define HK_GEMM_SHAPE_INFO(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool)                              \
    {#id, #suffix, bm, bn, cluster, persist, swap, lay, pool, HK_GEMM_SHARED_BYTES(bm, bn, stages, persist, swap)},
static const hk_gemm_shape hk_gemm_shapes[HK_GEMM_NSHAPES] = {HK_GEMM_SHAPES(HK_GEMM_SHAPE_INFO)};
#undef HK_GEMM_SHAPE_INFO

static const char *hk_gemm_out_name(hk_dtype t)
{
    return t == HK_DTYPE_BF16 ? "bf16" : t == HK_DTYPE_F32 ? "f32" : t == HK_DTYPE_F16 ? "f16" : NULL;
}

/* e4m3 without fp8_fast_accum: the tensor cores sum one k-block, the kernel adds the k-blocks in fp32 (params.promote). */
static int hk_gemm_promote(const hk_gemm_args *a) { return a->a_type == HK_DTYPE_FP8_E4M3 && !a->fp8_fast_accum; }

/* Built kernels (gemm.cu) for the call: bf16 to bf16/f32/f16, e4m3 to bf16/f32, in the layouts and accumulation
 * modes gemm.h's hk_gemm_layout_built names. */
static bool hk_gemm_built(const hk_gemm_args *a, int shape)
{
    const hk_gemm_shape *s = &hk_gemm_shapes[shape];
    const bool fp8 = a->a_type == HK_DTYPE_FP8_E4M3;
    return hk_gemm_out_name(a->d_type) && !(fp8 && a->d_type == HK_DTYPE_F16) &&
           hk_gemm_layout_built(s->lay, s->swap, fp8, a->trans_a, a->trans_b, hk_gemm_promote(a));
}

/* HK_CUDA_TUNE_GEMM = <shape>[:<split>] (a gemm.h shape id in lower case, e.g. p144, sk64:2, sw16:1, pk64:8)
 * forces the launch shape and K split (bench/gemm_bench.py --sweep), on persistent shapes the finale's parts (p256:3);
 * a shape not built for the problem's types is ignored, a split the shape cannot take (or, pooled, the workspace
 * cannot hold) is 1. */
static int hk_gemm_forced_shape(int32_t *split)
{
    const char *tune = getenv("HK_CUDA_TUNE_GEMM");
    if (!tune)
        return -1;
    for (int i = 0; i < HK_GEMM_NSHAPES; ++i) {
        const char *name = hk_gemm_shapes[i].name;
        size_t len = strlen(name), j = 0;
        while (j < len && tune[j] && (tune[j] | 0x20) == (name[j] | 0x20))
            ++j;
        if (j == len && (tune[j] == 0 || tune[j] == ':')) {
            *split = tune[j] == ':' ? atoi(tune + j + 1) : 1;
            return i;
        }
    }
    return -1;
}

static hk_status hk_cuda_gemm_supports(const hk_context *ctx, const void *args, char *why, size_t why_size)
{
    (void)ctx;
    const hk_gemm_args *a = args;
    const bool fp8 = a->a_type == HK_DTYPE_FP8_E4M3;
    if (a->a_type != HK_DTYPE_BF16 && !fp8) {
        hk_format(why, why_size, "a_type %s; covered on sm_90a: bf16, fp8_e4m3", hk_dtype_name(a->a_type));
        return HK_ERR_UNSUPPORTED;
    }
    if (!hk_gemm_built(a, HK_GEMM_P256)) {
        hk_format(why, why_size, "%s x %s -> %s with trans_a %d, trans_b %d is not covered on sm_90a (fp8: trans_a 0, "
                  "trans_b 1, d bf16 or f32 only)", hk_dtype_name(a->a_type), hk_dtype_name(a->b_type),
                  hk_dtype_name(a->d_type), a->trans_a, a->trans_b);
        return HK_ERR_UNSUPPORTED;
    }
    if (a->m > INT32_MAX || a->n > INT32_MAX || a->k > INT32_MAX) {
        hk_format(why, why_size, "m, n, k must each be < 2^31 on sm_90a");
        return HK_ERR_UNSUPPORTED;
    }
    if (a->m > 0 && a->n > 0 && a->k > 0) {
        const size_t es = hk_dtype_size(a->a_type);
        if (!hk_gemm_tma_rows_ok(a->a, a->lda, (int64_t)es) || !hk_gemm_tma_rows_ok(a->b, a->ldb, (int64_t)es)) {
            hk_format(why, why_size, "gemm on sm_90a needs a and b 16-byte aligned with lda, ldb multiples of %d elements "
                      "(lda %lld, ldb %lld)", (int)(16 / es), (long long)a->lda, (long long)a->ldb);
            return HK_ERR_UNSUPPORTED;
        }
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

static bool hk_gemm_pooled(const hk_gemm_shape *sh) { return sh->pool != 0; }

/* CTAs of a launch of `tiles` tiles in `split` parts each. */
static int64_t hk_gemm_ctas(const hk_gemm_shape *sh, int64_t tiles, int32_t split, int64_t sms)
{
    const int64_t units = tiles * split; /* a unit: one part of K of one tile */
    return sh->persist ? (units < sms ? units : sms) : sh->cluster * hk_gemm_cdiv(units, sh->cluster);
}

/* The finale's parts of K (gemm.h) for a launch of `sh`: gemm.h's rule, or HK_CUDA_TUNE_GEMM's split (2 or 3) where
 * it forces this persistent shape and the tiles have a finale; 0 for none. */
static int32_t hk_gemm_plan_finale(const hk_gemm_args *a, const hk_gemm_shape *sh, int64_t tiles, int64_t ctas)
{
    if (!sh->persist || a->k <= 0 || !hk_gemm_finale_tiles(tiles, ctas))
        return 0;
    int32_t forced = 1;
    if (hk_gemm_forced_shape(&forced) == (int)(sh - hk_gemm_shapes) && (forced == 2 || forced == 3))
        return forced;
    return hk_gemm_finale_parts(tiles, ctas, hk_gemm_cdiv(a->k * (int64_t)hk_dtype_size(a->a_type), HK_GEMM_BOX_K));
}

/* Workspace bytes of a launch: the pooled split's slots, or the finale's counters and slots; 0 for none. */
static size_t hk_gemm_plan_bytes(const hk_gemm_args *a, int shape, int32_t split, int64_t sms)
{
    const hk_gemm_shape *sh = &hk_gemm_shapes[shape];
    const int64_t km = sh->swap ? a->n : a->m, kn = sh->swap ? a->m : a->n;
    const int64_t tiles = hk_gemm_cdiv(km, sh->bm) * hk_gemm_cdiv(kn, sh->bn), ctas = hk_gemm_ctas(sh, tiles, split, sms);
    if (hk_gemm_pooled(sh))
        return (size_t)hk_gemm_pooled_bytes(tiles, split, sh->bm, sh->bn);
    const int32_t parts = hk_gemm_plan_finale(a, sh, tiles, ctas);
    return parts ? (size_t)hk_gemm_finale_bytes(hk_gemm_finale_tiles(tiles, ctas), parts, sh->bm, sh->bn) : 0;
}

/* The launch shape and K split of a call with `workspace` bytes of workspace: the route's, or HK_CUDA_TUNE_GEMM's
 * where the kernel is built and the split fits the shape (pooled: the workspace holds the parts). */
static int hk_gemm_plan(const hk_context *ctx, const hk_gemm_args *a, int64_t workspace, int32_t *split)
{
    const int promote = hk_gemm_promote(a);
    const int64_t sms = ctx->multiprocessors > 0 ? ctx->multiprocessors : 1;
    int shape = hk_gemm_forced_shape(split);
    if (shape >= 0 && hk_gemm_built(a, shape) &&
        (!promote || HK_GEMM_PROMOTE_FITS(hk_gemm_shapes[shape].bm, hk_gemm_shapes[shape].bn))) {
        const hk_gemm_shape *sh = &hk_gemm_shapes[shape];
        const bool pooled = hk_gemm_pooled(sh);
        const int32_t most = sh->cluster == 2 ? 2 : pooled ? HK_GEMM_POOLED_MAX : 1;
        if (*split < 1 || *split > most || (pooled && (int64_t)hk_gemm_plan_bytes(a, shape, *split, sms) > workspace))
            *split = 1;
        return shape;
    }
    return hk_gemm_route(a->m, a->n, a->k, a->trans_a, a->trans_b, HK_GEMM_BOX_K / (int64_t)hk_dtype_size(a->a_type),
                         promote, sms, workspace, split);
}

/* Workspace that lets this call take its fastest route (hk_gemm_workspace_size): the route given room enough. */
static size_t hk_cuda_gemm_workspace(const hk_context *ctx, const void *args)
{
    const hk_gemm_args *a = args;
    if (a->m == 0 || a->n == 0 || a->k == 0)
        return 0;
    int32_t split = 1;
    const int shape = hk_gemm_plan(ctx, a, INT64_MAX, &split);
    return hk_gemm_plan_bytes(a, shape, split, ctx->multiprocessors > 0 ? ctx->multiprocessors : 1);
}

static hk_status hk_cuda_gemm_run(hk_context *ctx, const void *args)
{
    const hk_gemm_args *a = args;
    if (a->m == 0 || a->n == 0)
        return HK_OK;
    const bool fp8 = a->a_type == HK_DTYPE_FP8_E4M3;
    const size_t ei = hk_dtype_size(a->a_type), eo = hk_dtype_size(a->d_type);
    const int in_type = fp8 ? HK_CU_TMAP_UINT8 : HK_CU_TMAP_BFLOAT16;
    const uint32_t box_k = HK_GEMM_BOX_K / (uint32_t)ei;
    const int64_t sms = ctx->multiprocessors > 0 ? ctx->multiprocessors : 1;

    const int promote = hk_gemm_promote(a);
    int32_t split = 1;
    int shape = hk_gemm_plan(ctx, a, a->workspace ? (int64_t)a->workspace_size : 0, &split);
    const hk_gemm_shape *sh = &hk_gemm_shapes[shape];

    /* swapped: the kernel's A is op(B)^T (N x K) and its B is A^T (K-major), its m x n is the caller's n x m */
    const int64_t km = sh->swap ? a->n : a->m, kn = sh->swap ? a->m : a->n;
    const int64_t tiles_m = hk_gemm_cdiv(km, sh->bm), tiles_n = hk_gemm_cdiv(kn, sh->bn);
    hk_cu_tensor_map map_a, map_b, map_d, map_t;
    hk_status st;
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
    /* a pooled split's parts write only the workspace; the sum kernel writes D from registers: no D maps */
    const bool pooled = split > 1 && hk_gemm_pooled(sh);
    hk_gemm_params p = {
        .m = (int32_t)km,
        .n = (int32_t)kn,
        .k = (int32_t)a->k,
        .group_m = hk_gemm_walk_group(a->trans_a, a->trans_b, tiles_m * tiles_n, sms),
        .tma_store = !pooled && hk_gemm_tma_store_ok(sh->persist, sh->swap, a->d, a->ldd, a->n, (int64_t)eo),
        .split = split,
        .promote = promote,
        .d = a->d,
        .c = a->c,
        .ldd = a->ldd,
        .ldc = a->ldc,
        .alpha = a->alpha * a->scale_a * a->scale_b,
        .beta = a->beta,
        .workspace = pooled ? a->workspace : NULL,
    };
    hk_gemm_set_walk(&p, (int32_t)tiles_m, (int32_t)tiles_n);
    /* the kernel's B is N-contiguous for trans_b 0 unless swapped (then it is A^T, K-major) */
    p.col_last = hk_gemm_col_last(kn, sh->bn, !sh->swap && !a->trans_b, (int64_t)ei,
                                  hk_gemm_overlap(a->c, a->ldc, a->d, a->ldd, a->m, a->n, (int64_t)eo));
    p.vec2 = !sh->swap && a->ldd % 2 == 0 && a->n % 2 == 0 && ((uintptr_t)a->d % (2 * eo)) == 0 &&
             (!a->c || (a->ldc % 2 == 0 && (uintptr_t)a->c % (2 * eo) == 0));
    if (p.tma_store) {
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
    const int64_t tiles = tiles_m * tiles_n, ctas = hk_gemm_ctas(sh, tiles, split, sms);
    /* the finale where the workspace holds it, its counters zeroed in stream order before the launch */
    const int32_t parts = hk_gemm_plan_finale(a, sh, tiles, ctas);
    const int64_t finale_tiles = hk_gemm_finale_tiles(tiles, ctas);
    if (parts && a->workspace &&
        hk_gemm_finale_bytes(finale_tiles, parts, sh->bm, sh->bn) <= (int64_t)a->workspace_size) {
        p.finale = parts;
        p.workspace = a->workspace;
        const size_t counters = (size_t)HK_GEMM_FINALE_COUNTER_BYTES(finale_tiles, sh->bm) / 4;
        if ((st = ctx->gpu->bind(ctx->dev)) || (st = ctx->gpu->zero_async(ctx->dev, a->workspace, counters, a->stream)))
            return st;
    }
    char kernel[64];
    hk_format(kernel, sizeof kernel, "hk_gemm_sm90_%s_%c%c_%s%s", fp8 ? "e4m3" : "bf16", a->trans_a ? 't' : 'n',
              a->trans_b ? 't' : 'n', hk_gemm_out_name(a->d_type), sh->suffix);
    const unsigned grid[3] = {(unsigned)ctas, 1, 1}, block[3] = {HK_GEMM_THREADS(sh->bm), 1, 1};
    void *params[] = {&map_a, &map_b, &map_d, &map_t, &p};
    /* every GEMM kernel waits for the previous kernel before touching memory (gemm.cu), so its setup may overlap it */
    if ((st = hk_gpu_launch_dependent(ctx, kernel, grid, block, sh->smem, a->stream, params)) || !pooled)
        return st;
    /* the parts are parked: the sum kernel (which waits for them the same way) adds them and writes D */
    hk_format(kernel, sizeof kernel, "hk_gemm_sm90_pooled_sum_%s%s", hk_gemm_out_name(a->d_type), sh->suffix);
    const int64_t sum_ctas = HK_GEMM_POOLED_SUM_CTAS(tiles, sh->bm, sh->bn);
    const unsigned sum_grid[3] = {(unsigned)sum_ctas, 1, 1}, sum_block[3] = {128, 1, 1};
    void *sum_params[] = {&p};
    return hk_gpu_launch_dependent(ctx, kernel, sum_grid, sum_block, hk_gemm_pooled_sum_shared(sh->bm, sum_ctas, sms),
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
                   "D^T = B^T A^T in 64-row tiles: bf16 (all trans_a/trans_b) -> bf16/f32/f16, fp8 e4m3 (trans_a 0, trans_b 1) -> "
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
