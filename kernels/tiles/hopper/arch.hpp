/* Hopper (sm_90a, nvcc) arch layer of tiles/common/tiles.hpp: geometry, numbers, warp reductions and
 * range-checked buffers in CUDA terms. Hopper-only extras live beside it: memory.cuh (cache-hinted 16-byte
 * streaming, paired conversions), reduce.cuh (segment sums); the matrix part is mma.cuh, tma.cuh, barrier.cuh. */
#ifndef HK_TILES_HOPPER_ARCH_HPP
#define HK_TILES_HOPPER_ARCH_HPP

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#define HK_DEV __device__ __forceinline__
#define HK_KERNEL(name, P, N) extern "C" __global__ void __launch_bounds__(N) name(const P p)
#define HK_LDS(T, name, n) __shared__ __align__(16) T name[n]

namespace hk {

/* ---------------------------------------------------------------- geometry: 1-D blocks of 32-lane warps */
constexpr int kWarpLanes = 32;
HK_DEV int thread() { return (int)threadIdx.x; }
HK_DEV int lane() { return (int)(threadIdx.x & 31u); }
HK_DEV int warp() { return (int)(threadIdx.x >> 5); }
HK_DEV int num_warps() { return (int)((blockDim.x + 31u) >> 5); }
HK_DEV int block_x() { return (int)blockIdx.x; }
HK_DEV int block_y() { return (int)blockIdx.y; }
HK_DEV int block_z() { return (int)blockIdx.z; }
HK_DEV int grid_dim_x() { return (int)gridDim.x; }
HK_DEV void block_sync() { __syncthreads(); }

/* ---------------------------------------------------------------- numbers (round to nearest even) */
HK_DEV float to_float(float x) { return x; }
HK_DEV float to_float(bf16 x) { return __uint_as_float((uint32_t)x.bits << 16); } /* bf16 is fp32's top half */
HK_DEV float to_float(f16 x) { return __half2float(__ushort_as_half(x.bits)); }
template <typename T> HK_DEV T from_float(float x);
template <> HK_DEV float from_float<float>(float x) { return x; }
template <> HK_DEV bf16 from_float<bf16>(float x) { return {__bfloat16_as_ushort(__float2bfloat16_rn(x))}; }
template <> HK_DEV f16 from_float<f16>(float x) { return {__half_as_ushort(__float2half_rn(x))}; }

/* 32 x 32 -> 64-bit multiply as one IMAD.WIDE.U32: written in C, nvcc keeps Philox's rounds in 64-bit
 * registers (mul.lo.s64, xor.b64), several instructions per multiply. kernels/common/philox.h uses it. */
HK_DEV uint32_t mul_wide_u32(uint32_t a, uint32_t b, uint32_t *hi)
{
    uint32_t lo, h;
    asm("{\n\t.reg .b64 t;\n\tmul.wide.u32 t, %2, %3;\n\tmov.b64 {%0, %1}, t;\n\t}" : "=r"(lo), "=r"(h) : "r"(a), "r"(b));
    *hi = h;
    return lo;
}
#define HK_TILES_MUL_WIDE_U32(a, b, hi) hk::mul_wide_u32(a, b, hi)

/* MUFU approximations. */
HK_DEV float exp2_fast(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
HK_DEV float rcp_fast(float x)
{
    float y;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
HK_DEV float rsqrt_fast(float x)
{
    float y;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
/* One MUFU op (sm_75+), for the attention softcap: its error (~2^-11 relative) is under bf16/f16 rounding. */
HK_DEV float tanh_fast(float x)
{
    float y;
    asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

/* ---------------------------------------------------------------- warp reductions
 * Butterfly over xor 16, 8, 4, 2, 1: every lane adds the same two partials at each step, so all lanes end with
 * bit-identical results. Needs the whole warp converged. */
HK_DEV float shfl_xor(float v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
/* Index of the lowest set bit of a nonzero v (log2 of a power of two). */
HK_DEV int lowest_set_bit(uint32_t v) { return __ffs(v) - 1; }
/* The value of lane src (any lane of the converged warp). */
HK_DEV uint32_t shfl_lane(uint32_t v, int src) { return __shfl_sync(0xffffffffu, v, src); }
HK_DEV float warp_sum(float v)
{
#pragma unroll
    for (int m = 16; m > 0; m >>= 1)
        v += shfl_xor(v, m);
    return v;
}
HK_DEV float warp_max(float v)
{
#pragma unroll
    for (int m = 16; m > 0; m >>= 1)
        v = fmaxf(v, shfl_xor(v, m));
    return v;
}

/* One bit per lane of the converged warp (bit l: lane l's predicate). */
HK_DEV uint32_t warp_ballot(bool pred) { return __ballot_sync(0xffffffffu, pred); }

/* Bits of consecutive lanes packed into 32-bit words: lane l holds a Bits-wide field (Bits divides 32); every lane
 * of each aligned group of 32 / Bits lanes gets the group's fields in lane order (lowest bits first): a ballot
 * for single bits, else each field shifted into place and OR-ed over the group in log2(32 / Bits) exchanges.
 * The whole warp must be converged. */
template <int Bits> HK_DEV uint32_t pack_lane_bits(uint32_t field)
{
    static_assert(Bits >= 1 && Bits <= 32 && 32 % Bits == 0, "pack_lane_bits: Bits divides 32");
    constexpr int G = 32 / Bits;
    if constexpr (Bits == 1) {
        return warp_ballot(field & 1);
    } else {
        uint32_t word = field << (lane() % G * Bits);
#pragma unroll
        for (int m = 1; m < G; m *= 2)
            word |= __shfl_xor_sync(0xffffffffu, word, m);
        return word;
    }
}

/* ---------------------------------------------------------------- range-checked buffers
 * The AMD buffer resources check the range in hardware; here a compare guards each access. */
template <typename T> struct buf {
    const T *p;
    uint32_t n;
};
template <typename T> HK_DEV buf<T> make_buf(const T *p, uint32_t n) { return {p, n}; }

template <int N, typename T> HK_DEV vec<T, N> load_vec(const buf<T> &b, uint32_t i)
{
    return i < b.n ? *reinterpret_cast<const vec<T, N> *>(b.p + i) : vec<T, N>{};
}
template <int N, typename T> HK_DEV void store_vec(const buf<T> &b, uint32_t i, const vec<T, N> &v)
{
    if (i < b.n)
        *reinterpret_cast<vec<T, N> *>(const_cast<T *>(b.p) + i) = v;
}

} // namespace hk

#endif
