#include "cpu.h"

HK_INTERNAL const hk_variant *const hk_cpu_variants[] = {
    &hk_cpu_gemm, &hk_cpu_attn_fwd, &hk_cpu_attn_bwd, &hk_cpu_rotary, &hk_cpu_ln_fused, &hk_cpu_ln_fused_bwd, NULL,
};
