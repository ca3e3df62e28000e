/* CUDA backend (NVIDIA sm_90a): the variants of backends/cuda, and helpers their host glue shares. */
#ifndef HK_BACKEND_CUDA_OPS_H
#define HK_BACKEND_CUDA_OPS_H

#include "internal.h"

/* HK_OK where the context offers the sm_90a kernels that are built and checked on the host but have not yet run on a
 * GPU (HK_CUDA_UNVERIFIED=1, read with the tuning); else HK_ERR_UNSUPPORTED with `why` naming `what`: until a GPU
 * has run them, a refusal is safer than an unchecked answer. */
HK_INTERNAL hk_status hk_cuda_unverified(const hk_context *ctx, const char *what, char *why, size_t why_size);

extern HK_INTERNAL const hk_variant hk_cuda_rotary;
extern HK_INTERNAL const hk_variant hk_cuda_ln_fused;
extern HK_INTERNAL const hk_variant hk_cuda_ln_fused_bwd;
extern HK_INTERNAL const hk_variant hk_cuda_gemm;
extern HK_INTERNAL const hk_variant hk_cuda_gemm_any;

/* Workspace with which cuda.gemm.wgmma takes a call whose A or B rows TMA cannot read (copied to aligned rows
 * first): what hk_gemm_workspace_size answers for the calls cuda.gemm.any would take otherwise; 0 where the TMA
 * kernels take the call in place or not at all. */
HK_INTERNAL size_t hk_cuda_gemm_packed_workspace(const hk_context *ctx, const hk_gemm_args *a);
/* Copies rows x cols elements of esize (1 or 2) bytes, ld apart, to dst (16-byte aligned), ld_dst apart (16-byte
 * multiples), zero past cols, in stream order (kernels/hopper/gemm_any.cu gemm_repack). */
HK_INTERNAL hk_status hk_cuda_gemm_repack(hk_context *ctx, const void *src, int64_t ld, int64_t rows, int64_t cols,
                                          size_t esize, void *dst, int64_t ld_dst, void *stream);
extern HK_INTERNAL const hk_variant hk_cuda_attn_fwd;
extern HK_INTERNAL const hk_variant hk_cuda_attn_bwd;

#endif
