/* Hopper reductions beyond tiles.hpp's warp_sum/block_sum: sums over aligned lane groups and over segments of
 * a block (several rows per block). Every thread of a group or segment ends with the same value, summed in the
 * same order on every call (deterministic). */
#ifndef HK_TILES_HOPPER_REDUCE_CUH
#define HK_TILES_HOPPER_REDUCE_CUH

#include "../common/tiles.hpp"

namespace hk {

/* Sum over aligned groups of Width lanes (a power of two <= 32); the whole warp must be converged. */
template <int Width> HK_DEV float group_sum(float v)
{
#pragma unroll
    for (int o = Width / 2; o > 0; o /= 2)
        v += shfl_xor(v, o);
    return v;
}

/* Sums over consecutive segments of Threads threads (a power of two), N values at once. Segments wider than a
 * warp go through scratch (N floats per warp of the block, shared memory), and then every thread of the block
 * must call it; it ends with a barrier, so scratch is reusable. */
template <int Threads, int N> HK_DEV void segment_sum(float (&v)[N], float *scratch)
{
#pragma unroll
    for (int i = 0; i < N; ++i)
        v[i] = group_sum<(Threads < kWarpLanes ? Threads : kWarpLanes)>(v[i]);
    if constexpr (Threads > kWarpLanes) {
        constexpr int kWarps = Threads / kWarpLanes;
        const int warps = num_warps();
        if (lane() == 0)
#pragma unroll
            for (int i = 0; i < N; ++i)
                scratch[i * warps + warp()] = v[i];
        block_sync();
        const int first = warp() / kWarps * kWarps;
#pragma unroll
        for (int i = 0; i < N; ++i) {
            float s = scratch[i * warps + first];
#pragma unroll
            for (int w = 1; w < kWarps; ++w)
                s += scratch[i * warps + first + w];
            v[i] = s;
        }
        block_sync();
    }
}

template <int Threads> HK_DEV float segment_sum(float v, float *scratch)
{
    float a[1] = {v};
    segment_sum<Threads>(a, scratch);
    return a[0];
}

} // namespace hk

#endif
