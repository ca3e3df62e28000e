/* The sm_90a GEMM for any operand alignment (kernels/hopper/gemm_any.cu) and its host glue (backends/cuda/gemm_any.c).
 * Every kernel takes (params, a, b, lda, ldb, layout): params is kernels/common/gemm_params.h's (m, n, k, d, c, ldd,
 * ldc, alpha, beta and vec2 read), layout is trans_a | trans_b << 1 of the caller's problem. One CTA of
 * HK_GEMM_ANY_THREADS threads computes one HK_GEMM_ANY_TILE x HK_GEMM_ANY_TILE tile of D; the grid is one CTA per
 * tile, tiles grouped HK_GEMM_ANY_GROUP tile rows at a time along N (the CTAs running at once share A rows in L2).
 * Kernel names: hk_gemm_sm90_any_<in>_<out>, in: bf16, f16, f32, e4m3, e4m3fnuz; out: bf16, f32, f16; and
 * hk_gemm_sm90_repack_<element bytes> (src, ld_src, dst, ld_dst, rows, cols), the copy to aligned rows. */
#ifndef HK_HOPPER_GEMM_ANY_H
#define HK_HOPPER_GEMM_ANY_H

#include "common/gemm_params.h"

#define HK_GEMM_ANY_TILE 128
#define HK_GEMM_ANY_THREADS 256
#define HK_GEMM_ANY_GROUP 8

#endif
