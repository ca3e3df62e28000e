/* Rotary embedding for CDNA (and the wave emulator). One thread per unit: V rotated pairs, or V copied features
 * past rotary_dim, of one (token, head); consecutive threads take consecutive units, so 16-byte accesses of a
 * wave are contiguous. V = 16 / sizeof(T) when every pointer, stride and split is 16-byte aligned (the host
 * checks), else 1. The cos/sin tables are fp32 or, in the _t16 kernels, the 16-bit activation type (half the
 * table bytes). fp32 math as the CPU reference: y1 = x1 c - x2 s, y2 = x2 c + x1 s. */
#include "tiles/common/tiles.hpp"
#include "cdna/params.h"

namespace {

using namespace hk;

/* The table row of a token: clamped into [0, table_positions) so a bad id never reads out of bounds. */
HK_DEV int64_t rotary_position(const hk_rotary_params &p, int64_t b, int64_t t)
{
    int64_t last = p.table_positions - 1, pos;
    if (p.position_ids)
        pos = p.position_ids[b * p.seqlen + t];
    else
        pos = p.position_offset > last ? last : p.position_offset + t;
    return pos < 0 ? 0 : pos > last ? last : pos;
}

/* n contiguous elements as fp32, in vectors of V. */
template <int V, int N, typename T> HK_DEV void load_run(float (&f)[N], const T *src)
{
    HK_UNROLL
    for (int i = 0; i < N; i += V) {
        vec<T, V> v = load_vec<V>(src + i);
        HK_UNROLL
        for (int j = 0; j < V; ++j)
            f[i + j] = to_float(v.v[j]);
    }
}
template <int V, int N, typename T> HK_DEV void store_run(T *dst, const float (&f)[N])
{
    HK_UNROLL
    for (int i = 0; i < N; i += V) {
        vec<T, V> v;
        HK_UNROLL
        for (int j = 0; j < V; ++j)
            v.v[j] = from_float<T>(f[i + j]);
        store_vec(dst + i, v);
    }
}

/* cos and sign * sin of the N table entries from element off, as fp32, in vectors of up to 16 bytes. On the vector
 * path the host passes 16-byte aligned tables and off is a multiple of N (half % V == 0 for HALF, rotary_dim % V
 * == 0 for INTERLEAVED's N = V / 2), so every vector is aligned for fp32 and 16-bit tables alike. */
template <typename Tab, int N>
HK_DEV void load_angles(float (&c)[N], float (&s)[N], const hk_rotary_params &p, int64_t off)
{
    constexpr int W = N < kVec16<Tab> ? N : kVec16<Tab>;
    load_run<W>(c, static_cast<const Tab *>(p.cos) + off);
    load_run<W>(s, static_cast<const Tab *>(p.sin) + off);
    HK_UNROLL
    for (int j = 0; j < N; ++j)
        s[j] *= p.sign;
}

template <typename T, typename Tab, int V> HK_DEV void rotary(const hk_rotary_params &p)
{
    const int per_head = p.rot_units + p.copy_units, per_token = (int)p.heads * per_head;
    const int half = p.rotary_dim / 2;
    const int64_t tok0 = (int64_t)block_x() * p.tokens_per_block;
    const int work = p.tokens_per_block * per_token, nthreads = num_warps() * kWarpLanes;
    for (int i = thread(); i < work; i += nthreads) {
        const int64_t tok = tok0 + i / per_token;
        if (tok >= p.tokens)
            break;
        const int h = i % per_token / per_head, u = i % per_head;
        const int64_t b = tok / p.seqlen, t = tok % p.seqlen;
        const T *x = static_cast<const T *>(p.x) + b * p.x_stride[0] + t * p.x_stride[1] + h * p.x_stride[2];
        T *out = static_cast<T *>(p.out) + b * p.out_stride[0] + t * p.out_stride[1] + h * p.out_stride[2];
        if (u >= p.rot_units) { /* pass-through features */
            const int f = p.rotary_dim + (u - p.rot_units) * V;
            store_vec(out + f, load_vec<V>(x + f));
            continue;
        }
        const int64_t row = rotary_position(p, b, t) * half;
        if (!p.interleaved) { /* pairs (f + j, f + j + half) */
            const int f = u * V;
            float x1[V], x2[V], c[V], s[V];
            load_angles<Tab>(c, s, p, row + f);
            load_run<V>(x1, x + f);
            load_run<V>(x2, x + f + half);
            HK_UNROLL
            for (int j = 0; j < V; ++j) {
                const float y1 = x1[j] * c[j] - x2[j] * s[j], y2 = x2[j] * c[j] + x1[j] * s[j];
                x1[j] = y1;
                x2[j] = y2;
            }
            store_run<V>(out + f, x1);
            store_run<V>(out + f + half, x2);
        } else { /* pairs (2i, 2i + 1): a unit holds P pairs in 2P contiguous features */
            constexpr int P = V > 1 ? V / 2 : 1;
            const int i0 = u * P;
            float v[2 * P], c[P], s[P];
            load_angles<Tab>(c, s, p, row + i0);
            load_run<V>(v, x + 2 * i0);
            HK_UNROLL
            for (int j = 0; j < P; ++j) {
                const float x1 = v[2 * j], x2 = v[2 * j + 1];
                v[2 * j] = x1 * c[j] - x2 * s[j];
                v[2 * j + 1] = x2 * c[j] + x1 * s[j];
            }
            store_run<V>(out + 2 * i0, v);
        }
    }
}

} // namespace

/* Kernel names: hk_rotary_<dtype>_<v|s>[_t16]: v = 16-byte vectors, s = element-wise; _t16: cos/sin in the 16-bit
 * activation type, else fp32. */
#define HK_ROTARY_KERNEL(name, T, Tab, V) \
    HK_KERNEL(name, hk_rotary_params, 256) { rotary<T, Tab, V>(p); }

HK_ROTARY_KERNEL(hk_rotary_bf16_v, hk::bf16, float, 8)
HK_ROTARY_KERNEL(hk_rotary_bf16_s, hk::bf16, float, 1)
HK_ROTARY_KERNEL(hk_rotary_f16_v, hk::f16, float, 8)
HK_ROTARY_KERNEL(hk_rotary_f16_s, hk::f16, float, 1)
HK_ROTARY_KERNEL(hk_rotary_f32_v, float, float, 4)
HK_ROTARY_KERNEL(hk_rotary_f32_s, float, float, 1)
HK_ROTARY_KERNEL(hk_rotary_bf16_v_t16, hk::bf16, hk::bf16, 8)
HK_ROTARY_KERNEL(hk_rotary_bf16_s_t16, hk::bf16, hk::bf16, 1)
HK_ROTARY_KERNEL(hk_rotary_f16_v_t16, hk::f16, hk::f16, 8)
HK_ROTARY_KERNEL(hk_rotary_f16_s_t16, hk::f16, hk::f16, 1)
