/* Row maps and reductions over mma.cuh's accum_64xN fragment: thread l of warp w holds two rows of the 64,
 * 16 w + l / 4 (row half 0: registers r with (r / 2) % 2 == 0) and the same + 8 (row half 1), each spread over
 * the 4 threads of its quad (l / 4 equal). What softmax-style epilogues need: per-row max and sum over the quad,
 * exp2 with the scale folded into one FMA, and scaling each row by a per-row factor. Row vectors are float[2],
 * indexed by row half. */
#pragma once

#include "mma.cuh"
#include "arch.hpp"

namespace hk::hopper {

/* The row half register r belongs to. */
__device__ __forceinline__ constexpr int row_half(int r) { return (r >> 1) & 1; }

/* The fragment's row (0..63) and column (0..N-1) of register r for this thread. */
template <int N> __device__ __forceinline__ int frag_row(int r)
{
    return accum_64xN<N>::row(r, hk::lane(), hk::warp() & 3);
}
template <int N> __device__ __forceinline__ int frag_col(int r) { return accum_64xN<N>::col(r, hk::lane()); }

/* Sum a per-thread row value over the quad (every thread of it ends with the result). */
__device__ __forceinline__ float quad_sum(float v)
{
    v += hk::shfl_xor(v, 1);
    return v + hk::shfl_xor(v, 2);
}

/* m[h] = max(m[h], max over row half h of acc) (the row's whole maximum: quad-reduced). */
template <int N> __device__ __forceinline__ void row_max(const accum_64xN<N> &acc, float (&m)[2])
{
    float t[2] = {m[0], m[1]};
#pragma unroll
    for (int r = 0; r < accum_64xN<N>::regs; ++r)
        t[row_half(r)] = fmaxf(t[row_half(r)], acc.v[r]);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        t[h] = fmaxf(t[h], hk::shfl_xor(t[h], 1));
        m[h] = fmaxf(t[h], hk::shfl_xor(t[h], 2));
    }
}

/* This thread's share of each row's sum (add over the quad with quad_sum once, at the end). */
template <int N> __device__ __forceinline__ void row_sum_partial(const accum_64xN<N> &acc, float (&s)[2])
{
#pragma unroll
    for (int r = 0; r < accum_64xN<N>::regs; ++r)
        s[row_half(r)] += acc.v[r];
}

/* acc = 2^(acc * scale - bias[h]) for each row half h: one FMA and one MUFU.EX2 per element (-inf gives 0). */
template <int N> __device__ __forceinline__ void row_exp2(accum_64xN<N> &acc, float scale, const float (&bias)[2])
{
#pragma unroll
    for (int r = 0; r < accum_64xN<N>::regs; ++r)
        acc.v[r] = hk::exp2_fast(fmaf(acc.v[r], scale, -bias[row_half(r)]));
}

/* acc *= f[h] on each row half h. */
template <int N> __device__ __forceinline__ void row_scale(accum_64xN<N> &acc, const float (&f)[2])
{
#pragma unroll
    for (int r = 0; r < accum_64xN<N>::regs; ++r)
        acc.v[r] *= f[row_half(r)];
}

} // namespace hk::hopper
