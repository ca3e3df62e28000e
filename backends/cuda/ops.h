/* CUDA backend (NVIDIA sm_90a): the variants of backends/cuda, and helpers their host glue shares. */
#ifndef HK_BACKEND_CUDA_OPS_H
#define HK_BACKEND_CUDA_OPS_H

#include "internal.h"

extern HK_INTERNAL const hk_variant hk_cuda_rotary;
extern HK_INTERNAL const hk_variant hk_cuda_ln_fused;
extern HK_INTERNAL const hk_variant hk_cuda_ln_fused_bwd;
extern HK_INTERNAL const hk_variant hk_cuda_gemm;
extern HK_INTERNAL const hk_variant hk_cuda_attn_fwd;
extern HK_INTERNAL const hk_variant hk_cuda_attn_bwd;

#endif
