#include "ops.h"

/* In order of preference within each op. */
HK_INTERNAL const hk_variant *const hk_cuda_variants[] = {
    &hk_cuda_rotary,
    &hk_cuda_ln_fused,
    &hk_cuda_ln_fused_bwd,
    &hk_cuda_gemm,
    &hk_cuda_gemm_any, /* what the TMA kernels cannot take */
    &hk_cuda_attn_fwd,
    &hk_cuda_attn_bwd,
    NULL,
};
