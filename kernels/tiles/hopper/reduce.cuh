/* Hopper reductions beyond tiles.hpp's warp_sum/block_sum: sums over aligned lane groups and over segments of
 * a block (several rows per block). Every thread of a group or segment ends with the same value, summed in the
 * same order on every call (deterministic). */
#ifndef HK_TILES_HOPPER_REDUCE_CUH
#define HK_TILES_HOPPER_REDUCE_CUH

#include "../common/tiles.hpp"
#include "barrier.cuh"

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

/* Two warp sums in 6 exchanges instead of 10: after the first one the lower half of the warp carries a's partial
 * sums and the upper half b's. The additions are warp_sum's, so the sums are bit-identical to it. Returns a's sum
 * on lanes 0-15, b's on lanes 16-31. */
HK_DEV float warp_sum_halves(float a, float b)
{
    const bool upper = lane() & 16;
    float v = upper ? b : a;
    v += shfl_xor(upper ? a : b, 16);
#pragma unroll
    for (int o = 8; o > 0; o /= 2)
        v += shfl_xor(v, o);
    return v;
}

/* segment_sum of two values for loops that reduce once per iteration (a row per segment). Segments wider than
 * a warp wait only for their own warps (hardware barrier 1 + segment index, so at most 15 segments per block)
 * and alternate between two halves of scratch (4 floats per warp of the block, 16-byte aligned; `half` starts
 * at 0 and flips per call): one barrier per call, because a warp rewrites a half only after passing the next
 * call's barrier, which every warp of its segment reaches after reading that half. Sums as segment_sum. */
template <int Threads> HK_DEV void segment_sum2(float (&v)[2], float *scratch, int &half)
{
    static_assert(Threads >= kWarpLanes, "segments of whole warps");
    const float s = warp_sum_halves(v[0], v[1]);
    const bool upper = lane() & 16;
    if constexpr (Threads == kWarpLanes) {
        const float o = shfl_xor(s, 16);
        v[0] = upper ? o : s;
        v[1] = upper ? s : o;
    } else {
        constexpr int kWarps = Threads / kWarpLanes;
        const int warps = num_warps(), seg = warp() / kWarps;
        float *buf = scratch + half * 2 * warps;
        half ^= 1;
        if (lane() % 16 == 0)
            buf[upper * warps + warp()] = s;
        hopper::named_barrier_sync(1 + seg, Threads);
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const float *w = buf + i * warps + seg * kWarps;
            float t = -0.0f; // t + -0 == t exactly: the sum starts at the first partial, as segment_sum's
            if constexpr (kWarps % 4 == 0) {
#pragma unroll
                for (int j = 0; j < kWarps / 4; ++j) {
                    const float4 q = reinterpret_cast<const float4 *>(w)[j];
                    t += q.x;
                    t += q.y;
                    t += q.z;
                    t += q.w;
                }
            } else {
#pragma unroll
                for (int j = 0; j < kWarps; ++j)
                    t += w[j];
            }
            v[i] = t;
        }
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
