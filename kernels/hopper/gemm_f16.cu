/* Hopper (sm_90a) GEMM with f16 operands: gemm.cu's kernels (the same body, with the f16 wgmma) in the shapes
 * HK_GEMM_F16_BUILT names (gemm.h), every layout, to bf16/f32/f16. A cubin of its own, so that it builds beside
 * gemm.cu's rather than after it. Kernel names: hk_gemm_sm90_f16_<layout>_<out><shape suffix>. */
#define HK_GEMM_F16_FAMILY
#include "hopper/gemm.cu"

#define HK_GEMM_F16_OUT3(layout, A_MN, B_MN, S, suffix)                                                                \
    HK_GEMM_KERNEL(hk_gemm_sm90_f16_##layout##_bf16##suffix, __half, __nv_bfloat16, A_MN, B_MN, S, )                  \
    HK_GEMM_KERNEL(hk_gemm_sm90_f16_##layout##_f32##suffix, __half, float, A_MN, B_MN, S, )                           \
    HK_GEMM_KERNEL(hk_gemm_sm90_f16_##layout##_f16##suffix, __half, __half, A_MN, B_MN, S, )
/* (trans_a, trans_b) -> the kernel's operand layouts A_MN = trans_a, B_MN = !trans_b, as gemm.cu's HK_GEMM_PLAIN */
#define HK_GEMM_F16_SHAPE(id, suffix)                                                                                  \
    static_assert(HK_GEMM_F16_BUILT(HK_GEMM_##id) && hk::hopper::gemm_shape_##id::cluster == 1 &&                     \
                      !hk::hopper::gemm_shape_##id::swap, "gemm.h names the f16 shapes; plain layouts, no cluster");  \
    HK_GEMM_F16_OUT3(nn, false, true, hk::hopper::gemm_shape_##id, suffix)                                             \
    HK_GEMM_F16_OUT3(nt, false, false, hk::hopper::gemm_shape_##id, suffix)                                            \
    HK_GEMM_F16_OUT3(tn, true, true, hk::hopper::gemm_shape_##id, suffix)                                              \
    HK_GEMM_F16_OUT3(tt, true, false, hk::hopper::gemm_shape_##id, suffix)
HK_GEMM_F16_SHAPE(P256, )
HK_GEMM_F16_SHAPE(P128, _n128)
HK_GEMM_F16_SHAPE(M64N64, _m64n64)
