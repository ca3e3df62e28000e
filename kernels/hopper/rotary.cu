// Rotary position embedding for Hopper: a pure streaming kernel. One thread owns one chunk of V rotation pairs
// (16 bytes of each operand) for HK_ROTARY_HEADS_PER_THREAD heads of one token: it issues every load of its
// heads before the first use (many 16-byte loads in flight), loads the chunk's cos/sin once for all its
// heads, and computes in fp32. x and out stream through with evict-first hints; the tables stay in L1/L2.
#include "hopper/rotary.h"
#include "tiles/common/tiles.hpp"
#include "tiles/hopper/memory.cuh"

namespace {

using namespace hk;

constexpr int kHeads = HK_ROTARY_HEADS_PER_THREAD;

// Clamped table row of token t of batch b (positions that index past the table never read out of bounds).
HK_DEV int64_t table_row(const hk_rotary_params &p, int64_t b, int64_t t)
{
    const int64_t last = p.table_positions - 1;
    int64_t pos;
    if (p.position_ids)
        pos = p.position_ids[b * p.seqlen + t];
    else
        pos = p.position_offset > last ? last : p.position_offset + t;
    return pos < 0 ? 0 : pos > last ? last : pos;
}

// V = elements per vector access (16 bytes, or 1 on the scalar path). HALF pairs (i, i + half) with i in
// [cV, cV + V); INTERLEAVED pairs (2i, 2i + 1): the chunk is 2V contiguous features, two vectors.
template <typename T, int V, bool Interleaved> HK_DEV void rotary(const hk_rotary_params &p)
{
    const int64_t u = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= p.units)
        return;
    const int per_head = p.chunks + p.copy_chunks;
    const int c = (int)(u % per_head);
    const int64_t rest = u / per_head;
    const int h0 = (int)(rest % p.head_groups) * kHeads;
    const int64_t token = rest / p.head_groups;
    const int64_t t = token % p.seqlen, b = token / p.seqlen;
    const T *x = static_cast<const T *>(p.x) + b * p.x_stride[0] + t * p.x_stride[1];
    T *out = static_cast<T *>(p.out) + b * p.out_stride[0] + t * p.out_stride[1];

    if (c >= p.chunks) { // features past rotary_dim pass through (only when out is not x)
        const int e = p.rotary_dim + (c - p.chunks) * V;
        vec<T, V> v[kHeads];
#pragma unroll
        for (int j = 0; j < kHeads; ++j)
            if (h0 + j < p.heads)
                v[j] = load_vec<V>(x + (h0 + j) * p.x_stride[2] + e, cache_stream{});
#pragma unroll
        for (int j = 0; j < kHeads; ++j)
            if (h0 + j < p.heads)
                store_vec(out + (h0 + j) * p.out_stride[2] + e, v[j], cache_stream{});
        return;
    }

    // First and second operand of each pair: HALF reads [cV, cV+V) and [half+cV, ...); INTERLEAVED reads
    // the 2V features from 2cV as two vectors and pairs neighbours.
    const int e1 = Interleaved ? 2 * c * V : c * V;
    const int e2 = Interleaved ? e1 + V : e1 + p.half;
    vec<T, V> a[kHeads], bv[kHeads];
#pragma unroll
    for (int j = 0; j < kHeads; ++j) {
        if (h0 + j < p.heads) {
            a[j] = load_vec<V>(x + (h0 + j) * p.x_stride[2] + e1, cache_stream{});
            bv[j] = load_vec<V>(x + (h0 + j) * p.x_stride[2] + e2, cache_stream{});
        }
    }
    float cs[V], sn[V];
    const int64_t row = table_row(p, b, t) * p.half + (int64_t)c * V;
    load_floats(p.cos + row, cs, cache_constant{});
    load_floats(p.sin + row, sn, cache_constant{});
#pragma unroll
    for (int i = 0; i < V; ++i)
        sn[i] *= p.sign;

#pragma unroll
    for (int j = 0; j < kHeads; ++j) {
        if (h0 + j >= p.heads)
            continue;
        float fa[V], fb[V];
        unpack(a[j], fa);
        unpack(bv[j], fb);
        float f[2 * V]; // features in order: HALF a then b; INTERLEAVED the 2V contiguous ones
#pragma unroll
        for (int i = 0; i < V; ++i) {
            f[i] = fa[i];
            f[V + i] = fb[i];
        }
        float r[2 * V];
#pragma unroll
        for (int i = 0; i < V; ++i) {
            // pair i of the chunk uses frequency cV + i
            const int i1 = Interleaved ? 2 * i : i, i2 = Interleaved ? 2 * i + 1 : V + i;
            r[i1] = f[i1] * cs[i] - f[i2] * sn[i];
            r[i2] = f[i2] * cs[i] + f[i1] * sn[i];
        }
        float ra[V], rb[V];
#pragma unroll
        for (int i = 0; i < V; ++i) {
            ra[i] = r[i];
            rb[i] = r[V + i];
        }
        store_vec(out + (h0 + j) * p.out_stride[2] + e1, pack<T>(ra), cache_stream{});
        store_vec(out + (h0 + j) * p.out_stride[2] + e2, pack<T>(rb), cache_stream{});
    }
}

} // namespace

// Kernel names: hk_rotary_<dtype>_<half|inter>_<v|s>: v = 16-byte vectors, s = scalar (any alignment).
#define HK_ROTARY_KERNEL(T, NAME, V, SUFFIX)                                                                   \
    HK_KERNEL(hk_rotary_##NAME##_half_##SUFFIX, hk_rotary_params, HK_ROTARY_BLOCK) { rotary<T, V, false>(p); } \
    HK_KERNEL(hk_rotary_##NAME##_inter_##SUFFIX, hk_rotary_params, HK_ROTARY_BLOCK) { rotary<T, V, true>(p); }

HK_ROTARY_KERNEL(bf16, bf16, 8, v)
HK_ROTARY_KERNEL(f16, f16, 8, v)
HK_ROTARY_KERNEL(float, f32, 4, v)
HK_ROTARY_KERNEL(bf16, bf16, 1, s)
HK_ROTARY_KERNEL(f16, f16, 1, s)
HK_ROTARY_KERNEL(float, f32, 1, s)
