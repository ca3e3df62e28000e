/* Rotary embedding for CDNA (and the wave emulator). One thread per unit: V rotated pairs, or V copied features
 * past rotary_dim, of one (token, head); consecutive threads take consecutive units, so 16-byte accesses of a
 * wave are contiguous. V = 16 / sizeof(T) when every pointer, stride and split is 16-byte aligned (the host
 * checks), else 1. fp32 math as the CPU reference: y1 = x1 c - x2 s, y2 = x2 c + x1 s. */
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

template <typename T, int V> HK_DEV void rotary(const hk_rotary_params &p)
{
    const int per_head = p.rot_units + p.copy_units, per_token = p.heads * per_head;
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
            float x1[V], x2[V];
            load_run<V>(x1, x + f);
            load_run<V>(x2, x + f + half);
            HK_UNROLL
            for (int j = 0; j < V; ++j) {
                const float c = p.cos[row + f + j], s = p.sign * p.sin[row + f + j];
                const float y1 = x1[j] * c - x2[j] * s, y2 = x2[j] * c + x1[j] * s;
                x1[j] = y1;
                x2[j] = y2;
            }
            store_run<V>(out + f, x1);
            store_run<V>(out + f + half, x2);
        } else { /* pairs (2i, 2i + 1): a unit holds P pairs in 2P contiguous features */
            constexpr int P = V > 1 ? V / 2 : 1;
            const int i0 = u * P;
            float v[2 * P];
            load_run<V>(v, x + 2 * i0);
            HK_UNROLL
            for (int j = 0; j < P; ++j) {
                const float c = p.cos[row + i0 + j], s = p.sign * p.sin[row + i0 + j];
                const float x1 = v[2 * j], x2 = v[2 * j + 1];
                v[2 * j] = x1 * c - x2 * s;
                v[2 * j + 1] = x2 * c + x1 * s;
            }
            store_run<V>(out + 2 * i0, v);
        }
    }
}

} // namespace

#define HK_ROTARY_KERNEL(name, T, V) \
    HK_KERNEL(name, hk_rotary_params, 256) { rotary<T, V>(p); }

HK_ROTARY_KERNEL(hk_rotary_bf16_v, hk::bf16, 8)
HK_ROTARY_KERNEL(hk_rotary_bf16_s, hk::bf16, 1)
HK_ROTARY_KERNEL(hk_rotary_f16_v, hk::f16, 8)
HK_ROTARY_KERNEL(hk_rotary_f16_s, hk::f16, 1)
HK_ROTARY_KERNEL(hk_rotary_f32_v, float, 4)
HK_ROTARY_KERNEL(hk_rotary_f32_s, float, 1)
