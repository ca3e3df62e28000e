/* CUDA GEMM on sm_90a (kernels/hopper/gemm.cu): builds the TMA tensor maps of A, B and D on the host, picks
 * the launch shape by problem size and launches (clusters come from the kernels' __cluster_dims__). TMA's
 * rules (16-byte aligned bases and row pitches) are what supports() checks; ragged m/n/k are handled by the
 * maps' zero fill and clipping. */
#include "ops.h"

#include "hopper/gemm.h"
#include "tensormap.h"

#include <stdlib.h>
#include <string.h>

/* [a_type: bf16, e4m3][trans_a][trans_b][d_type: bf16, f32, f16][launch shape: persistent, _mc2, _sk2];
 * NULL: not built */
#define HK_GEMM_K3(name) {name, name "_mc2", name "_sk2"}
static const char *const hk_gemm_kernels[2][2][2][3][3] = {
    {{{HK_GEMM_K3("hk_gemm_sm90_bf16_nn_bf16"), HK_GEMM_K3("hk_gemm_sm90_bf16_nn_f32"), HK_GEMM_K3("hk_gemm_sm90_bf16_nn_f16")},
      {HK_GEMM_K3("hk_gemm_sm90_bf16_nt_bf16"), HK_GEMM_K3("hk_gemm_sm90_bf16_nt_f32"), HK_GEMM_K3("hk_gemm_sm90_bf16_nt_f16")}},
     {{HK_GEMM_K3("hk_gemm_sm90_bf16_tn_bf16"), HK_GEMM_K3("hk_gemm_sm90_bf16_tn_f32"), HK_GEMM_K3("hk_gemm_sm90_bf16_tn_f16")},
      {HK_GEMM_K3("hk_gemm_sm90_bf16_tt_bf16"), HK_GEMM_K3("hk_gemm_sm90_bf16_tt_f32"), HK_GEMM_K3("hk_gemm_sm90_bf16_tt_f16")}}},
    {{{{NULL}, {NULL}, {NULL}}, {HK_GEMM_K3("hk_gemm_sm90_e4m3_nt_bf16"), HK_GEMM_K3("hk_gemm_sm90_e4m3_nt_f32"), {NULL}}},
     {{{NULL}, {NULL}, {NULL}}, {{NULL}, {NULL}, {NULL}}}},
};
#undef HK_GEMM_K3

enum { HK_GEMM_PERSIST, HK_GEMM_MC2, HK_GEMM_SK2 };

static int hk_gemm_out_index(hk_dtype t)
{
    return t == HK_DTYPE_BF16 ? 0 : t == HK_DTYPE_F32 ? 1 : t == HK_DTYPE_F16 ? 2 : -1;
}

/* Launch shape by problem size (bench/NOTES.md has the timings behind it). While 128 x 256 tiles would
 * leave more than half the SMs idle: 128 x 128 tiles, K split over both CTAs of a cluster when that still
 * fits one wave and leaves each >= 4 k-blocks (_sk2). Otherwise persistent 128 x 256 tiles. */
static int hk_gemm_launch_shape(int64_t m, int64_t n, int64_t k, uint32_t box_k, int64_t sms, int32_t *split)
{
    const int64_t tiles_m = (m + HK_GEMM_BM - 1) / HK_GEMM_BM;
    const int64_t kblocks = (k + box_k - 1) / box_k;
    *split = 1;
    if (2 * tiles_m * ((n + HK_GEMM_BN - 1) / HK_GEMM_BN) <= sms) {
        const int64_t tiles = tiles_m * ((n + HK_GEMM_BN_SK - 1) / HK_GEMM_BN_SK);
        if (2 * tiles <= sms && kblocks >= 8)
            *split = 2;
        return HK_GEMM_SK2;
    }
    return HK_GEMM_PERSIST;
}

static bool hk_gemm_tma_ok(const void *p, int64_t ld, size_t esize)
{
    return hk_aligned16(p) && ((uint64_t)ld * esize) % 16 == 0 && (uint64_t)ld * esize < (1ull << 40);
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
    if (fp8 && !a->fp8_fast_accum) {
        hk_format(why, why_size, "fp8 with fp32 accumulation is not implemented on sm_90a (the kernel accumulates in "
                  "the tensor cores' fp8 precision): set fp8_fast_accum");
        return HK_ERR_UNSUPPORTED;
    }
    const int out = hk_gemm_out_index(a->d_type);
    if (out < 0 || !hk_gemm_kernels[fp8][a->trans_a][a->trans_b][out][HK_GEMM_PERSIST]) {
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
        if (!hk_gemm_tma_ok(a->a, a->lda, es) || !hk_gemm_tma_ok(a->b, a->ldb, es)) {
            hk_format(why, why_size, "gemm on sm_90a needs a and b 16-byte aligned with lda, ldb multiples of %d elements "
                      "(lda %lld, ldb %lld)", (int)(16 / es), (long long)a->lda, (long long)a->ldb);
            return HK_ERR_UNSUPPORTED;
        }
    }
    return HK_OK;
}

static hk_status hk_cuda_gemm_run(hk_context *ctx, const void *args)
{
    const hk_gemm_args *a = args;
    if (a->m == 0 || a->n == 0)
        return HK_OK;
    const bool fp8 = a->a_type == HK_DTYPE_FP8_E4M3;
    const int out = hk_gemm_out_index(a->d_type);
    const size_t ei = hk_dtype_size(a->a_type), eo = hk_dtype_size(a->d_type);
    const int in_type = fp8 ? HK_CU_TMAP_UINT8 : HK_CU_TMAP_BFLOAT16;
    const uint32_t box_k = HK_GEMM_BOX_K / (uint32_t)ei;

    hk_cu_tensor_map map_a, map_b, map_d;
    hk_status st;
    if (a->k == 0) {
        /* no k-block is loaded, so any well-formed map will do: one over d's first row */
        const void *base = (const void *)((uintptr_t)a->d & ~(uintptr_t)15);
        if ((st = hk_cuda_tensor_map_2d(&map_a, HK_CU_TMAP_UINT8, base, 128, 1, 128, 128, 1)))
            return st;
        map_b = map_a;
    } else {
        st = a->trans_a ? hk_cuda_tensor_map_2d(&map_a, in_type, a->a, a->m, a->k, a->lda * ei, HK_GEMM_BOX_MN, box_k)
                        : hk_cuda_tensor_map_2d(&map_a, in_type, a->a, a->k, a->m, a->lda * ei, box_k, HK_GEMM_BM);
        if (st)
            return st;
        st = a->trans_b ? hk_cuda_tensor_map_2d(&map_b, in_type, a->b, a->k, a->n, a->ldb * ei, box_k, HK_GEMM_BOX_B_ROWS)
                        : hk_cuda_tensor_map_2d(&map_b, in_type, a->b, a->n, a->k, a->ldb * ei, HK_GEMM_BOX_MN, box_k);
        if (st)
            return st;
    }
    hk_gemm_params p = {
        .m = (int32_t)a->m,
        .n = (int32_t)a->n,
        .k = (int32_t)a->k,
        .group_m = HK_GEMM_GROUP_M,
        .tma_store = hk_gemm_tma_ok(a->d, a->ldd, eo),
        .d = a->d,
        .c = a->c,
        .ldd = a->ldd,
        .ldc = a->ldc,
        .alpha = a->alpha * a->scale_a * a->scale_b,
        .beta = a->beta,
    };
    p.vec2 = a->ldd % 2 == 0 && a->n % 2 == 0 && ((uintptr_t)a->d % (2 * eo)) == 0 &&
             (!a->c || (a->ldc % 2 == 0 && (uintptr_t)a->c % (2 * eo) == 0));
    if (p.tma_store) {
        const int out_type = out == 0 ? HK_CU_TMAP_BFLOAT16 : out == 1 ? HK_CU_TMAP_FLOAT32 : HK_CU_TMAP_FLOAT16;
        if ((st = hk_cuda_tensor_map_2d(&map_d, out_type, a->d, a->n, a->m, a->ldd * eo, 128 / (uint32_t)eo,
                                        HK_GEMM_EPI_ROWS)))
            return st;
    } else {
        map_d = map_a; /* unused */
    }
    const int64_t sms = ctx->multiprocessors > 0 ? ctx->multiprocessors : 1;
    int mode = hk_gemm_launch_shape(a->m, a->n, a->k, box_k, sms, &p.split);
    /* HK_CUDA_TUNE_GEMM = p1 | mc2 | sk1 | sk2 overrides the launch shape (bench/gemm_bench.py --sweep) */
    const char *tune = getenv("HK_CUDA_TUNE_GEMM");
    if (tune && (!strcmp(tune, "p1") || !strcmp(tune, "mc2") || !strcmp(tune, "sk1") || !strcmp(tune, "sk2"))) {
        mode = tune[0] == 'p' ? HK_GEMM_PERSIST : tune[0] == 'm' ? HK_GEMM_MC2 : HK_GEMM_SK2;
        p.split = tune[0] == 's' ? tune[2] - '0' : 1;
    }
    const int64_t bn = mode == HK_GEMM_SK2 ? HK_GEMM_BN_SK : HK_GEMM_BN;
    const int64_t tiles_m = (a->m + HK_GEMM_BM - 1) / HK_GEMM_BM, tiles_n = (a->n + bn - 1) / bn;
    const int64_t tiles = tiles_m * tiles_n, pairs = (tiles_m + 1) / 2 * tiles_n;
    int64_t ctas;
    if (mode == HK_GEMM_MC2)
        ctas = 2 * (pairs < sms / 2 ? pairs : sms / 2);
    else if (mode == HK_GEMM_SK2)
        ctas = HK_GEMM_CLUSTER_SK * ((tiles * p.split + HK_GEMM_CLUSTER_SK - 1) / HK_GEMM_CLUSTER_SK);
    else
        ctas = tiles < sms ? tiles : sms;
    const unsigned grid[3] = {(unsigned)ctas, 1, 1}, block[3] = {HK_GEMM_THREADS, 1, 1};
    void *params[] = {&map_a, &map_b, &map_d, &p};
    return hk_gpu_launch(ctx, hk_gemm_kernels[fp8][a->trans_a][a->trans_b][out][mode], grid, block, HK_GEMM_SHARED_BYTES,
                         a->stream, params);
}

HK_INTERNAL const hk_variant hk_cuda_gemm = {
    .op = HK_OP_GEMM,
    .name = "cuda.gemm.wgmma",
    .description = "TMA + wgmma GEMM, mbarrier pipelines: persistent 128x256 tiles (B multicast across 2-CTA clusters "
                   "only when forced by HK_CUDA_TUNE_GEMM=mc2), or 128x128 tiles with K split over a 2-CTA cluster (DSMEM reduction) when tiles "
                   "are few: bf16 (all trans_a/trans_b) -> bf16/f32/f16, fp8 e4m3 (trans_a 0, trans_b 1) -> bf16/f32; "
                   "a, b 16-byte aligned rows",
    .backend = HK_BACKEND_CUDA,
    .archs = "sm_90a",
    .supports = hk_cuda_gemm_supports,
    .run = hk_cuda_gemm_run,
    .workspace = NULL,
};
