// Rotary position embedding for Hopper: a pure streaming kernel. One thread owns one chunk of V rotation pairs
// (16 bytes of each operand) for HK_ROTARY_HEADS_PER_THREAD heads of one token: it issues every load of its
// heads before the first use (many 16-byte loads in flight), loads the chunk's cos/sin once for all its
// heads, and computes in fp32. x and out stream through with evict-first hints; the tables (fp32, or the
// 16-bit activation type: half the bytes, one 16-byte load per chunk) stay in L1/L2.
// Whole-head HALF rotations with narrow heads take a lane-mapped kernel instead (rotary_rows below).
#include "hopper/rotary.h"
#include "tiles/common/tiles.hpp"
#include "tiles/hopper/memory.cuh"

namespace {

using namespace hk;

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

// The loaded operands of one unit: chunk c of H heads of one token.
template <typename T, int V, int H> struct rot_unit {
    vec<T, V> a[H], b[H];
};

struct rot_place {
    int c, h0;
    int64_t b, t;
};

// I: the index type of the split, uint32_t when every unit index fits (three 32-bit divisions, not 64-bit ones).
template <int H, typename I> HK_DEV rot_place locate(const hk_rotary_params &p, I u)
{
    const I per_head = (I)(p.chunks + p.copy_chunks), groups = (I)p.head_groups, seqlen = (I)p.seqlen;
    const I rest = u / per_head, token = rest / groups, b = token / seqlen;
    return {(int)(u - rest * per_head), (int)(rest - token * groups) * H, (int64_t)b, (int64_t)(token - b * seqlen)};
}

// V = elements per vector access (16 bytes, or 1 on the scalar path). HALF pairs (i, i + half) with i in
// [cV, cV + V); INTERLEAVED pairs (2i, 2i + 1): the chunk is 2V contiguous features, two vectors. Chunks
// c >= chunks are features past rotary_dim, copied (only when out is not x): one vector, in a.
template <int V, bool Interleaved> HK_DEV int first_of(const hk_rotary_params &p, int c)
{
    return c >= p.chunks ? p.rotary_dim + (c - p.chunks) * V : Interleaved ? 2 * c * V : c * V;
}
template <int V, bool Interleaved> HK_DEV int second_of(const hk_rotary_params &p, int c)
{
    return Interleaved ? 2 * c * V + V : c * V + p.half;
}

// Rotates one chunk: a and b hold its two vectors (HALF: features cV.. and half + cV..; INTERLEAVED: the 2V
// contiguous features), cs/sn the chunk's V frequencies; fp32 math.
template <bool Interleaved, typename T, int V>
HK_DEV void rotate(vec<T, V> &a, vec<T, V> &b, const float (&cs)[V], const float (&sn)[V], float sign)
{
    float f[2 * V], fa[V], fb[V];
    unpack(a, fa);
    unpack(b, fb);
#pragma unroll
    for (int i = 0; i < V; ++i) {
        f[i] = fa[i];
        f[V + i] = fb[i];
    }
    float r[2 * V];
#pragma unroll
    for (int i = 0; i < V; ++i) { // pair i of the chunk uses frequency cV + i
        const int i1 = Interleaved ? 2 * i : i, i2 = Interleaved ? 2 * i + 1 : V + i;
        const float s = sign * sn[i];
        r[i1] = f[i1] * cs[i] - f[i2] * s;
        r[i2] = f[i2] * cs[i] + f[i1] * s;
    }
#pragma unroll
    for (int i = 0; i < V; ++i) {
        fa[i] = r[i];
        fb[i] = r[V + i];
    }
    a = pack<T>(fa);
    b = pack<T>(fb);
}

// cos and sin of chunk c of token t of batch b, from tables of Tab (float or the activation type). The vector
// path's offsets are multiples of V elements (half % V == 0), so 16-byte aligned for either table type.
template <typename Tab, int V>
HK_DEV void load_angles(const hk_rotary_params &p, int64_t b, int64_t t, int c, float (&cs)[V], float (&sn)[V])
{
    const int64_t row = table_row(p, b, t) * p.half + (int64_t)c * V;
    load_floats(static_cast<const Tab *>(p.cos) + row, cs, cache_constant{});
    load_floats(static_cast<const Tab *>(p.sin) + row, sn, cache_constant{});
}

template <typename T, int V, bool Interleaved, int H>
HK_DEV void rot_load(const hk_rotary_params &p, const rot_place &w, rot_unit<T, V, H> &d)
{
    const T *x = static_cast<const T *>(p.x) + w.b * p.x_stride[0] + w.t * p.x_stride[1];
    const int e1 = first_of<V, Interleaved>(p, w.c), e2 = second_of<V, Interleaved>(p, w.c);
    const bool rotate = w.c < p.chunks;
#pragma unroll
    for (int j = 0; j < H; ++j) {
        if (w.h0 + j < p.heads) {
            d.a[j] = load_vec<V>(x + (w.h0 + j) * p.x_stride[2] + e1, cache_stream{});
            if (rotate)
                d.b[j] = load_vec<V>(x + (w.h0 + j) * p.x_stride[2] + e2, cache_stream{});
        }
    }
}

// cs, sn: the chunk's angles (unused for pass-through chunks).
template <typename T, int V, bool Interleaved, int H>
HK_DEV void rot_store(const hk_rotary_params &p, const rot_place &w, const rot_unit<T, V, H> &d, const float (&cs)[V],
                      const float (&sn)[V])
{
    T *out = static_cast<T *>(p.out) + w.b * p.out_stride[0] + w.t * p.out_stride[1];
    const int e1 = first_of<V, Interleaved>(p, w.c), e2 = second_of<V, Interleaved>(p, w.c);
    if (w.c >= p.chunks) {
#pragma unroll
        for (int j = 0; j < H; ++j)
            if (w.h0 + j < p.heads)
                store_vec(out + (w.h0 + j) * p.out_stride[2] + e1, d.a[j], cache_stream{});
        return;
    }
#pragma unroll
    for (int j = 0; j < H; ++j) {
        if (w.h0 + j >= p.heads)
            continue;
        vec<T, V> a = d.a[j], b = d.b[j];
        rotate<Interleaved>(a, b, cs, sn, p.sign);
        store_vec(out + (w.h0 + j) * p.out_stride[2] + e1, a, cache_stream{});
        store_vec(out + (w.h0 + j) * p.out_stride[2] + e2, b, cache_stream{});
    }
}

// One unit per thread: the unit is located once (32-bit divisions where the grid allows), its cos/sin loads
// (L2 hits) go out first, then every load of its heads, all before the first use.
template <typename T, typename Tab, int V, bool Interleaved> HK_DEV void rotary(const hk_rotary_params &p)
{
    constexpr int H = HK_ROTARY_HEADS_PER_THREAD;
    const int64_t u = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= p.units)
        return;
    const rot_place w = p.units <= (int64_t)UINT32_MAX ? locate<H>(p, (uint32_t)u) : locate<H>(p, u);
    float cs[V], sn[V];
    if (w.c < p.chunks)
        load_angles<Tab>(p, w.b, w.t, w.c, cs, sn);
    rot_unit<T, V, H> d;
    rot_load<T, V, Interleaved>(p, w, d);
    rot_store<T, V, Interleaved>(p, w, d, cs, sn);
}

// HALF rotation of whole heads (rotary_dim = head_dim, 2 * chunks lanes per head dividing 32) with the lanes
// along the features: a warp's load covers 32 consecutive 16-byte chunks (32 / (2 * chunks) heads), and a lane
// takes its pair partner's chunk (the head's other half) from the partner lane with shuffles. Small blocks of
// HK_ROTARY_ROW_VECTORS loads per thread over one token's row at high occupancy: the grid is (row blocks x
// seqlen, 1, batch), so a block finds its token with one uniform division and its heads with shifts.
template <typename T, typename Tab, int V> HK_DEV void rotary_rows(const hk_rotary_params &p)
{
    constexpr int R = HK_ROTARY_ROW_VECTORS, W = 16 / 4; // 32-bit words per vector
    const uint32_t bx = (uint32_t)block_x(), t = bx / (uint32_t)p.row_blocks, block_in_row = bx - t * (uint32_t)p.row_blocks;
    const int64_t b = (uint32_t)block_z();
    const int lanes_per_head = 2 * p.chunks, ln = lane();
    const int c = ln & (lanes_per_head - 1);
    const bool first = c < p.chunks;
    const int partner = ln ^ p.chunks;
    float cs[V], sn[V];
    load_angles<Tab>(p, b, t, first ? c : c - p.chunks, cs, sn);
#pragma unroll
    for (int i = 0; i < V; ++i)
        sn[i] = first ? -p.sign * sn[i] : p.sign * sn[i];
    const T *x = static_cast<const T *>(p.x) + b * p.x_stride[0] + t * p.x_stride[1] + c * V;
    T *out = static_cast<T *>(p.out) + b * p.out_stride[0] + t * p.out_stride[1] + c * V;
    const int shift = lowest_set_bit(lanes_per_head); // log2: a power of two
    const int h0 = (int)((block_in_row * R * HK_ROTARY_ROW_BLOCK + thread()) >> shift);
    constexpr int step_lanes = HK_ROTARY_ROW_BLOCK; // heads between a thread's loads: block width / lanes per head
    vec<T, V> a[R];
#pragma unroll
    for (int j = 0; j < R; ++j) {
        const int h = h0 + ((j * step_lanes) >> shift);
        a[j] = h < p.heads ? load_vec<V>(x + h * p.x_stride[2], cache_stream{}) : vec<T, V>{};
    }
#pragma unroll
    for (int j = 0; j < R; ++j) {
        vec<T, V> o = a[j];
        uint32_t *w = reinterpret_cast<uint32_t *>(&o);
#pragma unroll
        for (int k = 0; k < W; ++k)
            w[k] = shfl_lane(w[k], partner);
        float fa[V], fo[V];
        unpack(a[j], fa);
        unpack(o, fo);
#pragma unroll
        for (int i = 0; i < V; ++i)
            fa[i] = fa[i] * cs[i] + fo[i] * sn[i];
        const int h = h0 + ((j * step_lanes) >> shift);
        if (h < p.heads)
            store_vec(out + h * p.out_stride[2], pack<T>(fa), cache_stream{});
    }
}

} // namespace

// Kernel names: hk_rotary_<dtype>_<half|inter>_<v|s|rows>[_t16]: v = 16-byte vectors, s = scalar (any
// alignment), rows = the HALF kernel for whole heads; _t16: cos/sin in the 16-bit activation type, else fp32.
#define HK_ROTARY_KERNELS(T, NAME, V, Tab, TAB)                                                                   \
    HK_KERNEL(hk_rotary_##NAME##_half_v##TAB, hk_rotary_params, HK_ROTARY_BLOCK) { rotary<T, Tab, V, false>(p); } \
    HK_KERNEL(hk_rotary_##NAME##_inter_v##TAB, hk_rotary_params, HK_ROTARY_BLOCK) { rotary<T, Tab, V, true>(p); } \
    HK_KERNEL(hk_rotary_##NAME##_half_s##TAB, hk_rotary_params, HK_ROTARY_BLOCK) { rotary<T, Tab, 1, false>(p); } \
    HK_KERNEL(hk_rotary_##NAME##_inter_s##TAB, hk_rotary_params, HK_ROTARY_BLOCK) { rotary<T, Tab, 1, true>(p); } \
    HK_KERNEL(hk_rotary_##NAME##_half_rows##TAB, hk_rotary_params, HK_ROTARY_ROW_BLOCK) { rotary_rows<T, Tab, V>(p); }

HK_ROTARY_KERNELS(bf16, bf16, 8, float, )
HK_ROTARY_KERNELS(f16, f16, 8, float, )
HK_ROTARY_KERNELS(float, f32, 4, float, )
HK_ROTARY_KERNELS(bf16, bf16, 8, bf16, _t16)
HK_ROTARY_KERNELS(f16, f16, 8, f16, _t16)
