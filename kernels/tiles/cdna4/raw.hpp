/* hk::raw for gfx950 (CDNA4): the gfx9 wrappers of cdna3/raw.hpp plus the gfx950-only builtins. */
#ifndef HK_TILES_CDNA4_RAW_HPP
#define HK_TILES_CDNA4_RAW_HPP

#include "../cdna3/raw.hpp"

namespace hk {
namespace raw {

typedef __bf16 v8bf16 __attribute__((ext_vector_type(8)));
typedef _Float16 v8f16 __attribute__((ext_vector_type(8)));
typedef int v8i32 __attribute__((ext_vector_type(8)));

HK_DEV void mfma_16x16x32_bf16(float (&c)[4], const uint16_t (&a)[8], const uint16_t (&b)[8])
{
    v4f32 r = __builtin_amdgcn_mfma_f32_16x16x32_bf16(__builtin_bit_cast(v8bf16, a), __builtin_bit_cast(v8bf16, b),
                                                      __builtin_bit_cast(v4f32, c), 0, 0, 0);
    __builtin_memcpy(c, &r, sizeof c);
}
HK_DEV void mfma_32x32x16_bf16(float (&c)[16], const uint16_t (&a)[8], const uint16_t (&b)[8])
{
    v16f32 r = __builtin_amdgcn_mfma_f32_32x32x16_bf16(__builtin_bit_cast(v8bf16, a), __builtin_bit_cast(v8bf16, b),
                                                       __builtin_bit_cast(v16f32, c), 0, 0, 0);
    __builtin_memcpy(c, &r, sizeof c);
}

HK_DEV void mfma_16x16x32_f16(float (&c)[4], const uint16_t (&a)[8], const uint16_t (&b)[8])
{
    v4f32 r = __builtin_amdgcn_mfma_f32_16x16x32_f16(__builtin_bit_cast(v8f16, a), __builtin_bit_cast(v8f16, b),
                                                     __builtin_bit_cast(v4f32, c), 0, 0, 0);
    __builtin_memcpy(c, &r, sizeof c);
}
HK_DEV void mfma_32x32x16_f16(float (&c)[16], const uint16_t (&a)[8], const uint16_t (&b)[8])
{
    v16f32 r = __builtin_amdgcn_mfma_f32_32x32x16_f16(__builtin_bit_cast(v8f16, a), __builtin_bit_cast(v8f16, b),
                                                      __builtin_bit_cast(v16f32, c), 0, 0, 0);
    __builtin_memcpy(c, &r, sizeof c);
}

/* OCP e4m3 x e4m3 (format code 0) with zero scales and opsel 0, which LLVM folds to the unscaled
 * v_mfma_f32_*_f8f6f4 (docs/amd/mfma.md; tests/amd checks the opcode). 32 bytes of A and B per lane. */
HK_DEV void mfma_16x16x128_fp8(float (&c)[4], const uint8_t (&a)[32], const uint8_t (&b)[32])
{
    v4f32 r = __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(__builtin_bit_cast(v8i32, a), __builtin_bit_cast(v8i32, b),
                                                               __builtin_bit_cast(v4f32, c), 0, 0, 0, 0, 0, 0);
    __builtin_memcpy(c, &r, sizeof c);
}
HK_DEV void mfma_32x32x64_fp8(float (&c)[16], const uint8_t (&a)[32], const uint8_t (&b)[32])
{
    v16f32 r = __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(__builtin_bit_cast(v8i32, a), __builtin_bit_cast(v8i32, b),
                                                               __builtin_bit_cast(v16f32, c), 0, 0, 0, 0, 0, 0);
    __builtin_memcpy(c, &r, sizeof c);
}

/* x'[l] = l < 32 ? x[l] : y[l - 32], y'[l] = l < 32 ? x[l + 32] : y[l] (docs/amd/cross-lane.md). */
HK_DEV void permlane32_swap(uint32_t &x, uint32_t &y)
{
    auto r = __builtin_amdgcn_permlane32_swap(x, y, false, false);
    x = r[0];
    y = r[1];
}

} // namespace raw
} // namespace hk

#endif
