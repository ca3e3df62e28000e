/* Warp-level tensor-core MMA (mma.sync, the pre-Hopper instruction that sm_90a still runs): operands in registers,
 * loaded by the kernel from wherever it staged them, so nothing about their layout or alignment in global memory
 * matters. Slower than wgmma (mma.cuh), which reads shared memory in the layouts TMA writes. */
#ifndef HK_TILES_HOPPER_MMA_SYNC_CUH
#define HK_TILES_HOPPER_MMA_SYNC_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <type_traits>

namespace hk::hopper {

/* d += a (16 x 16, row-major) * b (16 x 8, column-major), fp32 accumulation; T: __nv_bfloat16 or __half.
 * With g = lane / 4, q = lane % 4, each 32-bit register holds two elements adjacent in K:
 *   a[0]: row g, k 2q..2q+1; a[1]: row g + 8, k 2q..; a[2]: row g, k 2q + 8..; a[3]: row g + 8, k 2q + 8..
 *   b[0]: column g, k 2q..2q+1; b[1]: column g, k 2q + 8..
 *   d[0], d[1]: row g, columns 2q, 2q + 1; d[2], d[3]: row g + 8, the same columns. */
template <class T>
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])
{
    static_assert(std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __half>, "16-bit inputs");
    if constexpr (std::is_same_v<T, __nv_bfloat16>)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

} // namespace hk::hopper

#endif
