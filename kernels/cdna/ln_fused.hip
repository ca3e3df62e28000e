/* Fused dropout + residual + LayerNorm/RMSNorm for CDNA (and the wave emulator), forward and backward.
 *
 * A row is owned by WPR waves (1..16); thread t of the row holds NV vectors of V elements, the k-th at column
 * (k * WPR * 64 + t) * V, in registers (fp32) from load to store: each element is read once and written once.
 * Blocks hold 4 / WPR rows (one when WPR >= 4). Row accesses go through range-checked buffer views, so the tail of
 * a row (and a whole idle row past `rows`) reads zeros and writes nothing without branches; with V > 1 the host
 * guarantees cols % V == 0 and 16-byte aligned rows. Statistics are fp32, reduced in a fixed order (wave
 * butterfly, then the row's waves in index order): run-to-run identical.
 * Dropout: Philox per element, index r * cols + c (common/philox.h); with p.dropout_mask the forward also stores the
 * packed keep bits (hk.h's dropout_mask) and the backward reads them instead of drawing Philox.
 * Backward: a fixed number of row slots (p.slots) each walk rows slot, slot + slots, ... accumulating dgamma/dbeta
 * in registers, written as partials and summed in slot order by hk_ln_bwd_reduce: deterministic, no atomics.
 * rows and cols fit 32 bits (the plan checks), so the kernels index with their low words. */
#include "tiles/common/tiles.hpp"
#include "common/ln_params.h"
#include "common/philox.h"

namespace {

using namespace hk;

/* Sum over the WPR waves owning this thread's row; scratch: 16 floats of LDS per value. */
template <int WPR> HK_DEV float row_sum(float v, float *scratch)
{
    v = warp_sum(v);
    if constexpr (WPR == 1) {
        return v;
    } else {
        if (lane() == 0)
            scratch[warp()] = v;
        block_sync();
        const int base = warp() / WPR * WPR;
        float s = 0.0f;
        HK_UNROLL
        for (int w = 0; w < WPR; ++w)
            s += scratch[base + w];
        block_sync();
        return s;
    }
}

/* V elements of a T (or fp32) view at column c, as fp32, in 16-byte pieces. */
template <int V, typename T> HK_DEV void load_f(float (&f)[V], const buf<T> &b, uint32_t c)
{
    constexpr int C = V < kVec16<T> ? V : kVec16<T>;
    HK_UNROLL
    for (int i = 0; i < V; i += C) {
        vec<T, C> v = load_vec<C>(b, c + i);
        HK_UNROLL
        for (int j = 0; j < C; ++j)
            f[i + j] = to_float(v.v[j]);
    }
}
template <int V, typename T> HK_DEV void store_f(const buf<T> &b, uint32_t c, const float (&f)[V])
{
    vec<T, V> v;
    HK_UNROLL
    for (int j = 0; j < V; ++j)
        v.v[j] = from_float<T>(f[j]);
    store_vec(b, c, v);
}
/* gamma/beta are fp32 or the activation type. */
template <int V, typename T, typename P>
HK_DEV void load_param(float (&f)[V], const P &p, const void *ptr, uint32_t c)
{
    if (p.param_f32)
        load_f(f, make_buf(static_cast<const float *>(ptr), (uint32_t)p.cols), c);
    else
        load_f(f, make_buf(static_cast<const T *>(ptr), (uint32_t)p.cols), c);
}

/* Scale the elements of v whose keep bit (bit j: element j) is set and zero the others. */
template <int V> HK_DEV void apply_keep(float (&v)[V], uint32_t keep, float scale)
{
    HK_UNROLL
    for (int j = 0; j < V; ++j)
        v[j] = keep >> j & 1 ? v[j] * scale : 0.0f;
}

/* Dropout of elements first .. first + V - 1 by Philox (kept: * dropout_scale); returns their keep bits. */
template <int V, typename P> HK_DEV uint32_t dropout(float (&v)[V], const P &p, uint64_t first)
{
    uint64_t group = first >> 2;
    hk_philox_out w = hk_dropout_words(p.seed, p.offset, group);
    uint32_t keep = 0;
    HK_UNROLL
    for (int j = 0; j < V; ++j) {
        const uint64_t i = first + j;
        if (i >> 2 != group) {
            group = i >> 2;
            w = hk_dropout_words(p.seed, p.offset, group);
        }
        /* Selects, not w.w[i & 3]: a dynamically indexed array would live in memory. */
        const uint32_t word = (i & 2) ? ((i & 1) ? w.w[3] : w.w[2]) : ((i & 1) ? w.w[1] : w.w[0]);
        keep |= (uint32_t)(word >= p.dropout_threshold) << j;
    }
    apply_keep(v, keep, p.dropout_scale);
    return keep;
}

/* Row r's words of the packed keep mask; empty for an idle row. */
template <typename P> HK_DEV buf<uint32_t> mask_row(const P &p, int64_t r, bool valid)
{
    const uint32_t words = ((uint32_t)p.cols + 31) / 32;
    return make_buf(p.dropout_mask + (valid ? r * words : 0), valid ? words : 0);
}
/* Store the keep bits of this thread's V elements at column c. A wave holds 64 V consecutive columns starting at a
 * multiple of 64 V, so each mask word's columns sit in an aligned group of 32 / V lanes: pack_lane_bits assembles
 * the word and the group's first lane stores it. Wave-uniform control flow only. */
template <int V> HK_DEV void store_keep(const buf<uint32_t> &m, uint32_t c, uint32_t keep)
{
    const uint32_t word = pack_lane_bits<V>(keep);
    if (lane() % (32 / V) == 0)
        store_vec(m, c / 32, vec<uint32_t, 1>{{word}});
}
/* The keep bits of the V elements at column c (c % V == 0 and V divides 32: one word). */
template <int V> HK_DEV uint32_t load_keep(const buf<uint32_t> &m, uint32_t c)
{
    return load_vec<1>(m, c / 32).v[0] >> (c % 32) & ((1u << V) - 1);
}

template <typename T, int V, int WPR, int NV> struct ln_shape {
    static constexpr int kThreadsPerRow = WPR * 64;
    static constexpr int kRowsPerBlock = WPR >= 4 ? 1 : 4 / WPR;
    static constexpr int kThreads = kThreadsPerRow * kRowsPerBlock;
    HK_DEV static int slot() { return block_x() * kRowsPerBlock + warp() / WPR; }
    HK_DEV static int row_thread() { return warp() % WPR * 64 + lane(); }
    HK_DEV static uint32_t col(int k) { return (uint32_t)((k * kThreadsPerRow + row_thread()) * V); }
};

template <typename T, int V, int WPR, int NV> HK_DEV void ln_fwd(const hk_ln_fwd_params &p)
{
    using S = ln_shape<T, V, WPR, NV>;
    HK_LDS(float, scratch, 16);
    const int r = S::slot();
    const int32_t cols = (int32_t)p.cols;
    const bool valid = r < (int32_t)p.rows;
    const uint32_t n = valid ? (uint32_t)cols : 0; /* an idle row's views are empty */
    const buf<T> x = make_buf(static_cast<const T *>(p.x) + (valid ? r * p.x_stride : 0), n);

    float z[NV][V];
    float sum = 0.0f;
    HK_UNROLL
    for (int k = 0; k < NV; ++k) {
        load_f(z[k], x, S::col(k));
        uint32_t keep = (1u << V) - 1; /* p == 0: all kept */
        if (p.dropout_threshold)
            keep = dropout(z[k], p, (uint64_t)r * (uint64_t)cols + S::col(k));
        if (p.dropout_mask) /* the zero tail is not kept (a vector is all in range or all out) */
            store_keep<V>(mask_row(p, r, valid), S::col(k), S::col(k) < n ? keep : 0);
        if (p.residual) {
            float res[V];
            load_f(res, make_buf(static_cast<const T *>(p.residual) + (valid ? r * p.residual_stride : 0), n), S::col(k));
            HK_UNROLL
            for (int j = 0; j < V; ++j)
                z[k][j] += res[j];
        }
        if (p.residual_out)
            store_f(make_buf(static_cast<T *>(p.residual_out) + (valid ? r * p.residual_out_stride : 0), n), S::col(k), z[k]);
        HK_UNROLL
        for (int j = 0; j < V; ++j)
            sum += z[k][j];
    }
    const float inv_n = 1.0f / (float)cols;
    const float mean = p.rms ? 0.0f : row_sum<WPR>(sum, scratch) * inv_n;
    float sq = 0.0f;
    HK_UNROLL
    for (int k = 0; k < NV; ++k)
        HK_UNROLL
        for (int j = 0; j < V; ++j) {
            const float d = S::col(k) + j < n ? z[k][j] - mean : 0.0f; /* the zero tail is not centred */
            sq += d * d;
        }
    const float rstd = rsqrt_fast(row_sum<WPR>(sq, scratch) * inv_n + p.epsilon);

    const buf<T> y = make_buf(static_cast<T *>(p.y) + (valid ? r * p.y_stride : 0), n);
    HK_UNROLL
    for (int k = 0; k < NV; ++k) {
        float g[V], b[V];
        load_param<V, T>(g, p, p.gamma, S::col(k));
        if (p.beta)
            load_param<V, T>(b, p, p.beta, S::col(k));
        HK_UNROLL
        for (int j = 0; j < V; ++j) {
            z[k][j] = (z[k][j] - mean) * rstd * g[j];
            if (p.beta)
                z[k][j] += b[j];
        }
        store_f(y, S::col(k), z[k]);
    }
    if (valid && S::row_thread() == 0) {
        if (p.mean && !p.rms)
            p.mean[r] = mean;
        if (p.rstd)
            p.rstd[r] = rstd;
    }
}

/* Backward. Given: p.dropout_mask holds the keep mask (the hk_ln_bwd_mask_* kernels), read instead of
 * drawing Philox; a kernel of its own because the loop's SGPRs have no room for both. */
template <typename T, int V, int WPR, int NV, bool Given = false> HK_DEV void ln_bwd(const hk_ln_bwd_params &p)
{
    using S = ln_shape<T, V, WPR, NV>;
    HK_LDS(float, scratch, 16);
    const int slot = S::slot();
    float dg[NV][V] = {}, db[NV][V] = {};
    const int32_t rows = (int32_t)p.rows, cols = (int32_t)p.cols;
    const float inv_n = 1.0f / (float)cols;

    /* Every slot of the block runs the same number of iterations: the row reductions hold barriers. */
    for (int64_t base = 0; base < rows; base += p.slots) {
        const int64_t r = base + slot;
        const bool valid = slot < p.slots && r < rows;
        const uint32_t n = valid ? (uint32_t)cols : 0;
        const float mean = valid && !p.rms ? p.mean[r] : 0.0f, rstd = valid ? p.rstd[r] : 0.0f;
        uint32_t keep[NV]; /* the mask first, so that its view is not live beside the row's others (SGPRs) */
        if constexpr (Given) {
            const buf<uint32_t> m = mask_row(p, r, valid);
            HK_UNROLL
            for (int k = 0; k < NV; ++k)
                keep[k] = load_keep<V>(m, S::col(k));
        }
        const buf<T> dyb = make_buf(static_cast<const T *>(p.dy) + (valid ? r * p.dy_stride : 0), n);
        const buf<T> zb = make_buf(static_cast<const T *>(p.z) + (valid ? r * p.z_stride : 0), n);
        float xhat[NV][V], g[NV][V];
        float sg = 0.0f, sgx = 0.0f;
        HK_UNROLL
        for (int k = 0; k < NV; ++k) {
            float dy[V], gamma[V]; /* gamma is re-read per row (a cache hit) to save registers */
            load_f(dy, dyb, S::col(k));
            load_param<V, T>(gamma, p, p.gamma, S::col(k));
            load_f(xhat[k], zb, S::col(k));
            HK_UNROLL
            for (int j = 0; j < V; ++j) {
                xhat[k][j] = (xhat[k][j] - mean) * rstd; /* zero-padded columns have dy = 0: no contribution */
                g[k][j] = dy[j] * gamma[j];
                dg[k][j] += dy[j] * xhat[k][j];
                db[k][j] += dy[j];
                sg += g[k][j];
                sgx += g[k][j] * xhat[k][j];
            }
        }
        const float mg = p.rms ? 0.0f : row_sum<WPR>(sg, scratch) * inv_n;
        const float mgx = row_sum<WPR>(sgx, scratch) * inv_n;
        const buf<T> dx = make_buf(static_cast<T *>(p.dx) + (valid ? r * p.dx_stride : 0), n);
        HK_UNROLL
        for (int k = 0; k < NV; ++k) {
            HK_UNROLL
            for (int j = 0; j < V; ++j)
                g[k][j] = rstd * (g[k][j] - mg - xhat[k][j] * mgx);
            if (p.dz_extra) {
                float extra[V];
                load_f(extra, make_buf(static_cast<const T *>(p.dz_extra) + (valid ? r * p.dz_extra_stride : 0), n), S::col(k));
                HK_UNROLL
                for (int j = 0; j < V; ++j)
                    g[k][j] += extra[j];
            }
            if (p.dresidual)
                store_f(make_buf(static_cast<T *>(p.dresidual) + (valid ? r * p.dresidual_stride : 0), n), S::col(k), g[k]);
            if constexpr (Given)
                apply_keep(g[k], keep[k], p.dropout_scale);
            else if (p.dropout_threshold)
                dropout(g[k], p, (uint64_t)r * (uint64_t)cols + S::col(k));
            store_f(dx, S::col(k), g[k]);
        }
    }
    if (slot < p.slots) {
        const buf<float> pg = make_buf(p.dgamma_part + (int64_t)slot * cols, (uint32_t)cols);
        /* dbeta_part follows dgamma_part: one pointer fewer for the loop above, whose SGPRs are full */
        const buf<float> pb = make_buf(p.dgamma_part + ((int64_t)p.slots + slot) * cols, (uint32_t)cols);
        HK_UNROLL
        for (int k = 0; k < NV; ++k)
            HK_UNROLL
            for (int j = 0; j < V; ++j) {
                store_vec(pg, S::col(k) + j, vec<float, 1>{{dg[k][j]}});
                store_vec(pb, S::col(k) + j, vec<float, 1>{{db[k][j]}});
            }
    }
}
template <typename T, int V, int WPR, int NV> HK_DEV void ln_bwd_mask(const hk_ln_bwd_params &p)
{
    ln_bwd<T, V, WPR, NV, true>(p);
}

} // namespace

HK_KERNEL(hk_ln_bwd_reduce, hk_ln_reduce_params, 256)
{
    const int32_t cols = (int32_t)p.cols, parts = (int32_t)p.parts;
    const int64_t c = (int64_t)block_x() * 256 + thread();
    if (c >= cols)
        return;
    float g = 0.0f, b = 0.0f;
    for (int s = 0; s < parts; ++s) {
        g += p.dgamma_part[(int64_t)s * cols + c];
        b += p.dbeta_part[(int64_t)s * cols + c];
    }
    if (p.dgamma)
        p.dgamma[c] = g;
    if (p.dbeta)
        p.dbeta[c] = b;
}

/* name: hk_ln_{fwd,bwd,bwd_mask}_<type>_<v|s>_w<WPR>n<NV> taking P; the host (backends/hip/cdna_plan.c) picks one. */
#define HK_LN_KERNEL(dir, P, tname, T, vname, V, WPR, NV)                                                      \
    HK_KERNEL(hk_ln_##dir##_##tname##_##vname##_w##WPR##n##NV, P, (ln_shape<T, V, WPR, NV>::kThreads))         \
    {                                                                                                          \
        ln_##dir<T, V, WPR, NV>(p);                                                                            \
    }
#define HK_LN_CONFIGS(dir, P, tname, T, vname, V, A, B, C, D, E, F, G, H)                                       \
    HK_LN_KERNEL(dir, P, tname, T, vname, V, A, B)                                                            \
    HK_LN_KERNEL(dir, P, tname, T, vname, V, C, D)                                                            \
    HK_LN_KERNEL(dir, P, tname, T, vname, V, E, F)                                                            \
    HK_LN_KERNEL(dir, P, tname, T, vname, V, G, H)
/* (WPR, NV) pairs; keep in sync with the tables in cdna_plan.c. The backward holds dgamma/dbeta too: fewer
 * elements per thread. */
#define HK_LN_TYPE(tname, T, VV)                                                                                \
    HK_LN_CONFIGS(fwd, hk_ln_fwd_params, tname, T, v, VV, 1, 2, 1, 8, 4, 8, 16, 8)                             \
    HK_LN_CONFIGS(fwd, hk_ln_fwd_params, tname, T, s, 1, 1, 2, 1, 8, 4, 8, 16, 8)                              \
    HK_LN_CONFIGS(bwd, hk_ln_bwd_params, tname, T, v, VV, 1, 2, 2, 4, 4, 4, 8, 4)                              \
    HK_LN_CONFIGS(bwd, hk_ln_bwd_params, tname, T, s, 1, 1, 2, 2, 4, 4, 4, 8, 4)                               \
    HK_LN_CONFIGS(bwd_mask, hk_ln_bwd_params, tname, T, v, VV, 1, 2, 2, 4, 4, 4, 8, 4)                         \
    HK_LN_CONFIGS(bwd_mask, hk_ln_bwd_params, tname, T, s, 1, 1, 2, 2, 4, 4, 4, 8, 4)

HK_LN_TYPE(bf16, hk::bf16, 8)
HK_LN_TYPE(f16, hk::f16, 8)
HK_LN_TYPE(f32, float, 4)
