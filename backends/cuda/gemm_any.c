/* CUDA GEMM on sm_90a for the calls cuda.gemm.wgmma cannot take (kernels/hopper/gemm_any.cu): A and B rows at any
 * alignment their element size allows (no TMA descriptors), any layout, fp32 operands (SIMT fp32, never TF32), fp8
 * in every layout; one CTA per 128 x 128 tile of D, no workspace. */
#include "ops.h"

#include <string.h>

#include "hopper/gemm_any.h"

/* Operand types in kernel-name order, then the output types; -1: none. */
static const char *const hk_gemm_any_ins[5] = {"bf16", "f16", "f32", "e4m3", "e4m3fnuz"};
static const char *const hk_gemm_any_outs[3] = {"bf16", "f32", "f16"};

static int hk_gemm_any_in(hk_dtype t)
{
    switch (t) {
    case HK_DTYPE_BF16: return 0;
    case HK_DTYPE_F16: return 1;
    case HK_DTYPE_F32: return 2;
    case HK_DTYPE_FP8_E4M3: return 3;
    case HK_DTYPE_FP8_E4M3FNUZ: return 4;
    default: return -1;
    }
}

static int hk_gemm_any_out(hk_dtype t)
{
    return t == HK_DTYPE_BF16 ? 0 : t == HK_DTYPE_F32 ? 1 : t == HK_DTYPE_F16 ? 2 : -1;
}

/* Kernel in * 3 + out (fp8 operands have no f16 output: hk.h), then the repacks of 1- and 2-byte elements. */
enum { HK_GEMM_ANY_REPACK = 15 };
static bool hk_gemm_any_kernel_name(size_t index, char *buf, size_t size)
{
    if (index >= HK_GEMM_ANY_REPACK) {
        if (index > HK_GEMM_ANY_REPACK + 1)
            return false;
        hk_format(buf, size, "hk_gemm_sm90_repack_%d", (int)(index - HK_GEMM_ANY_REPACK + 1));
        return true;
    }
    const size_t in = index / 3, out = index % 3;
    if (in >= 5 || (in >= 3 && out == 2))
        return false;
    hk_format(buf, size, "hk_gemm_sm90_any_%s_%s", hk_gemm_any_ins[in], hk_gemm_any_outs[out]);
    return true;
}
static const hk_kernel_set hk_gemm_any_kernels = {HK_KERNELS_CUDA_GEMM_ANY, HK_GEMM_ANY_REPACK + 2,
                                                   hk_gemm_any_kernel_name};

hk_status hk_cuda_gemm_repack(hk_context *ctx, const void *src, int64_t ld, int64_t rows, int64_t cols, size_t esize,
                              void *dst, int64_t ld_dst, void *stream)
{
    const int64_t vecs = rows * (ld_dst / (16 / (int64_t)esize));
    const int64_t most = (ctx->multiprocessors > 0 ? ctx->multiprocessors : 1) * 16;
    int64_t blocks = (vecs + HK_GEMM_ANY_THREADS - 1) / HK_GEMM_ANY_THREADS;
    blocks = blocks < most ? blocks : most; /* a grid-stride loop over the rest */
    const unsigned grid[3] = {(unsigned)blocks, 1, 1}, block[3] = {HK_GEMM_ANY_THREADS, 1, 1};
    void *params[] = {&src, &ld, &dst, &ld_dst, &rows, &cols};
    return hk_gpu_launch_indexed(ctx, &hk_gemm_any_kernels, HK_GEMM_ANY_REPACK + (esize == 2), false, grid, block, 0,
                                 stream, params);
}

/* Bytes with which the TMA kernels take the call instead (the operands copied to aligned rows first). */
static size_t hk_cuda_gemm_any_workspace(const hk_context *ctx, const void *args)
{
    return hk_cuda_gemm_packed_workspace(ctx, args);
}

static int64_t hk_gemm_any_tiles(const hk_gemm_args *a)
{
    return ((a->m + HK_GEMM_ANY_TILE - 1) / HK_GEMM_ANY_TILE) * ((a->n + HK_GEMM_ANY_TILE - 1) / HK_GEMM_ANY_TILE);
}

static hk_status hk_cuda_gemm_any_supports(const hk_context *ctx, const void *args, char *why, size_t why_size)
{
    const hk_gemm_args *a = args;
    const hk_status st = hk_cuda_unverified(ctx, "cuda.gemm.any", why, why_size);
    if (st != HK_OK)
        return st;
    if (hk_gemm_any_in(a->a_type) < 0 || hk_gemm_any_out(a->d_type) < 0) {
        hk_format(why, why_size, "%s -> %s; covered: bf16, f16, f32, e4m3, e4m3fnuz -> bf16, f32 (and f16 from 16-bit "
                  "and f32 operands)", hk_dtype_name(a->a_type), hk_dtype_name(a->d_type));
        return HK_ERR_UNSUPPORTED;
    }
    if (a->m > INT32_MAX || a->n > INT32_MAX || a->k > INT32_MAX || hk_gemm_any_tiles(a) > INT32_MAX) {
        hk_format(why, why_size, "m, n, k must each be < 2^31 and the 128 x 128 tiles of D fewer than 2^31 on sm_90a");
        return HK_ERR_UNSUPPORTED;
    }
    return HK_OK;
}

static hk_status hk_cuda_gemm_any_run(hk_context *ctx, const void *args)
{
    const hk_gemm_args *a = args;
    if (a->m == 0 || a->n == 0)
        return HK_OK;
    const size_t eo = hk_dtype_size(a->d_type);
    hk_gemm_params p;
    memset(&p, 0, sizeof p);
    p.m = (int32_t)a->m;
    p.n = (int32_t)a->n;
    p.k = (int32_t)a->k;
    p.d = a->d;
    p.c = a->c;
    p.ldd = a->ldd;
    p.ldc = a->ldc;
    p.alpha = a->alpha * a->scale_a * a->scale_b;
    p.beta = a->beta;
    p.vec2 = a->ldd % 2 == 0 && ((uintptr_t)a->d % (2 * eo)) == 0 &&
             (!a->c || (a->ldc % 2 == 0 && (uintptr_t)a->c % (2 * eo) == 0));
    const void *pa = a->a, *pb = a->b;
    int64_t lda = a->lda, ldb = a->ldb;
    int layout = (a->trans_a ? 1 : 0) | (a->trans_b ? 2 : 0);
    const size_t kernel = (size_t)(hk_gemm_any_in(a->a_type) * 3 + hk_gemm_any_out(a->d_type));
    const unsigned grid[3] = {(unsigned)hk_gemm_any_tiles(a), 1, 1}, block[3] = {HK_GEMM_ANY_THREADS, 1, 1};
    void *params[] = {&p, &pa, &pb, &lda, &ldb, &layout};
    return hk_gpu_launch_indexed(ctx, &hk_gemm_any_kernels, kernel, false, grid, block, 0, a->stream, params);
}

HK_INTERNAL const hk_variant hk_cuda_gemm_any = {
    .op = HK_OP_GEMM,
    .name = "cuda.gemm.any",
    .description = "any alignment and layout: 128 x 128 tiles, mma.sync for bf16/f16/fp8 (fp8 widened to f16), "
                   "SIMT fp32",
    .backend = HK_BACKEND_CUDA,
    .archs = "sm_90a",
    .supports = hk_cuda_gemm_any_supports,
    .run = hk_cuda_gemm_any_run,
    .workspace = hk_cuda_gemm_any_workspace,
    .workspace_optional = true,
};
