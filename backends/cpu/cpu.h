/* CPU reference backend: correct for every valid argument set, fp32 accumulation, threaded with
 * hk_parallel_for. It is the oracle the GPU kernels are checked against and the fallback with no GPU. */
#ifndef HK_BACKEND_CPU_H
#define HK_BACKEND_CPU_H

#include "internal.h"

extern HK_INTERNAL const hk_variant hk_cpu_gemm;
extern HK_INTERNAL const hk_variant hk_cpu_attn_fwd;
extern HK_INTERNAL const hk_variant hk_cpu_attn_bwd;
extern HK_INTERNAL const hk_variant hk_cpu_rotary;
extern HK_INTERNAL const hk_variant hk_cpu_ln_fused;
extern HK_INTERNAL const hk_variant hk_cpu_ln_fused_bwd;

/* Every validated argument set is covered by the reference ops. */
HK_INTERNAL hk_status hk_cpu_supports_all(const hk_context *ctx, const void *args, char *why, size_t why_size);

#endif
