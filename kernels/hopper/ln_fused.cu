// Dropout + residual + LayerNorm/RMSNorm for Hopper, forward and backward: streaming kernels that read each
// input once and write each output once.
//
// Register-resident kernels (cols up to TPR * NV * V): a segment of TPR threads owns a row, each thread NV
// vectors of V = 16 / sizeof(T) elements; every load of the row is issued before the first use; statistics
// are fp32, two-pass (mean, then the centred variance) over the registers. Any-shape kernels (odd cols,
// unaligned rows, very wide rows) re-read the row from memory, one block per row.
//
// The backward runs a persistent grid: each block keeps dgamma/dbeta for its columns in registers over
// all its rows and writes one partial row per block; hk_ln_bwd_reduce sums the partials in block order, so
// the result does not depend on scheduling (deterministic).
//
// The dropout mask is kernels/common/philox.h, element index r * cols + c, bit-identical to the CPU; the forward
// can also store it packed (hk.h's dropout_mask) for the backward to read instead of drawing it again.
#include "tiles/common/tiles.hpp" /* first: philox.h takes the arch's wide multiply from it */
#include "common/philox.h"
#include "hopper/ln_fused.h"
#include "tiles/hopper/memory.cuh"
#include "tiles/hopper/reduce.cuh"

namespace {

using namespace hk;

// ---------------------------------------------------------------- shared pieces

// Apply the dropout mask to N consecutive elements starting at logical index i0; returns the keep bits (bit j:
// element i0 + j kept). With N a multiple of 4 and i0 too, one Philox block serves four elements.
template <int N>
HK_DEV uint32_t dropout(float (&v)[N], uint64_t i0, uint64_t seed, uint64_t offset, uint32_t threshold, float scale)
{
    uint32_t bits = 0;
    if constexpr (N % 4 == 0) {
#pragma unroll
        for (int g = 0; g < N / 4; ++g) {
            const hk_philox_out w = hk_dropout_words(seed, offset, (i0 >> 2) + g);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const bool keep = w.w[j] >= threshold;
                bits |= (uint32_t)keep << (4 * g + j);
                v[4 * g + j] = keep ? v[4 * g + j] * scale : 0.0f;
            }
        }
    } else {
#pragma unroll
        for (int j = 0; j < N; ++j) {
            const bool keep = hk_dropout_keep(seed, offset, i0 + j, threshold);
            bits |= (uint32_t)keep << j;
            v[j] = keep ? v[j] * scale : 0.0f;
        }
    }
    return bits;
}

// The same from given keep bits (bit j: element j kept): the backward with the forward's mask.
template <int N> HK_DEV void dropout(float (&v)[N], uint32_t bits, float scale)
{
#pragma unroll
    for (int j = 0; j < N; ++j)
        v[j] = (bits >> j) & 1u ? v[j] * scale : 0.0f;
}

// V parameters (gamma or beta) from column col: fp32 or the activation type T.
template <typename T, int V> HK_DEV void load_params(const void *p, int64_t col, bool f32, float (&out)[V])
{
    if (f32)
        load_floats(static_cast<const float *>(p) + col, out, cache_constant{});
    else
        unpack(load_vec<V>(static_cast<const T *>(p) + col, cache_constant{}), out);
}

template <typename T> HK_DEV float load_param(const void *p, int64_t col, bool f32)
{
    if (!f32)
        return to_float(static_cast<const T *>(p)[col]);
    float v[1];
    load_floats(static_cast<const float *>(p) + col, v, cache_constant{});
    return v[0];
}

HK_DEV float inv_sqrt(float x) { return 1.0f / sqrtf(x); } // IEEE, as the CPU reference

// ---------------------------------------------------------------- forward, register-resident

// Columns of the NV vectors of thread s of a row segment: vector k at (k * TPR + s) * V, so each vector load
// of the segment is contiguous across its threads.
template <int TPR, int V, int NV> HK_DEV void segment_columns(int s, int64_t (&col)[NV])
{
#pragma unroll
    for (int k = 0; k < NV; ++k)
        col[k] = (int64_t)(k * TPR + s) * V;
}

// in[k]: vector k of this thread's segment lies in the matrix; returns whether the row does.
template <int NV> HK_DEV bool row_mask(int64_t rows, int64_t cols, int64_t row, const int64_t (&col)[NV], bool (&in)[NV])
{
    const bool active = row < rows;
#pragma unroll
    for (int k = 0; k < NV; ++k)
        in[k] = active && col[k] < cols;
    return active;
}

// The raw inputs of one row segment.
template <typename T, int NV> struct fwd_row {
    vec<T, 16 / sizeof(T)> x[NV], r[NV];
};

template <typename T, int NV>
HK_DEV void fwd_load(const hk_ln_fwd_params &p, int64_t row, const int64_t (&col)[NV], fwd_row<T, NV> &d)
{
    constexpr int V = 16 / sizeof(T);
    if (row >= p.rows)
        return;
    const T *x = static_cast<const T *>(p.x) + row * p.x_stride;
    const T *res = static_cast<const T *>(p.residual) + row * p.residual_stride;
#pragma unroll
    for (int k = 0; k < NV; ++k)
        if (col[k] < p.cols)
            d.x[k] = load_vec<V>(x + col[k], cache_stream{});
    if (p.residual)
#pragma unroll
        for (int k = 0; k < NV; ++k)
            if (col[k] < p.cols)
                d.r[k] = load_vec<V>(res + col[k], cache_stream{});
}

template <typename T, int TPR, int NV>
HK_DEV void fwd_row_out(const hk_ln_fwd_params &p, int64_t row, const int64_t (&col)[NV], const fwd_row<T, NV> &d,
                        float *scratch)
{
    constexpr int V = 16 / sizeof(T);
    bool in[NV];
    const bool active = row_mask(p.rows, p.cols, row, col, in);

    float z[NV][V];
    uint32_t kept[NV]; // keep bits of each vector, for the mask
#pragma unroll
    for (int k = 0; k < NV; ++k) {
        kept[k] = 0;
        if (!in[k]) {
#pragma unroll
            for (int i = 0; i < V; ++i)
                z[k][i] = 0.0f;
            continue;
        }
        unpack(d.x[k], z[k]);
        if (p.dropout)
            kept[k] = dropout(z[k], (uint64_t)(row * p.cols + col[k]), p.seed, p.offset, p.dropout_threshold,
                              p.dropout_scale);
        if (p.residual) {
            float r[V];
            unpack(d.r[k], r);
#pragma unroll
            for (int i = 0; i < V; ++i)
                z[k][i] += r[i];
        }
    }

    float mean = 0.0f;
    if (!p.rms) {
        float sum = 0.0f;
#pragma unroll
        for (int k = 0; k < NV; ++k)
#pragma unroll
            for (int i = 0; i < V; ++i)
                sum += z[k][i];
        mean = segment_sum<TPR>(sum, scratch) / (float)p.cols;
    }
    float sq = 0.0f;
#pragma unroll
    for (int k = 0; k < NV; ++k)
        if (in[k])
#pragma unroll
            for (int i = 0; i < V; ++i)
                sq += (z[k][i] - mean) * (z[k][i] - mean);
    const float rstd = inv_sqrt(segment_sum<TPR>(sq, scratch) / (float)p.cols + p.epsilon);

    if (p.residual_out) {
        T *ro = static_cast<T *>(p.residual_out) + row * p.residual_out_stride;
#pragma unroll
        for (int k = 0; k < NV; ++k)
            if (in[k])
                store_vec(ro + col[k], pack<T>(z[k]), cache_stream{});
    }
    T *y = static_cast<T *>(p.y) + row * p.y_stride;
#pragma unroll
    for (int k = 0; k < NV; ++k) {
        if (!in[k])
            continue;
        float g[V], o[V];
        load_params<T>(p.gamma, col[k], p.param_f32, g);
#pragma unroll
        for (int i = 0; i < V; ++i)
            o[i] = (z[k][i] - mean) * rstd * g[i];
        if (p.beta) {
            float b[V];
            load_params<T>(p.beta, col[k], p.param_f32, b);
#pragma unroll
            for (int i = 0; i < V; ++i)
                o[i] += b[i];
        }
        store_vec(y + col[k], pack<T>(o), cache_stream{});
    }
    if (col[0] == 0 && active) { // the segment's first thread
        if (p.mean && !p.rms)
            p.mean[row] = mean;
        if (p.rstd)
            p.rstd[row] = rstd;
    }
    if (p.dropout_mask) {
        // 32 / V consecutive lanes hold a word's columns (a segment spans whole warps); its first lane stores it
        constexpr int kLanes = 32 / V;
#pragma unroll
        for (int k = 0; k < NV; ++k) {
            const uint32_t word = pack_lane_bits<V>(kept[k]);
            if (in[k] && (col[k] / V) % kLanes == 0)
                p.dropout_mask[row * p.mask_words + col[k] / 32] = word;
        }
    }
}

// Segments of TPR threads take rows, a block per group of rows. (Persistent blocks that load the next row
// before normalising the current one ran 15-45% slower on the H200)
template <typename T, int TPR, int NV> HK_DEV void ln_fwd(const hk_ln_fwd_params &p)
{
    constexpr int V = 16 / sizeof(T);
    constexpr int kBlock = TPR > HK_LN_MIN_BLOCK ? TPR : HK_LN_MIN_BLOCK;
    constexpr int kRows = kBlock / TPR;
    __shared__ float scratch[kBlock / kWarpLanes];
    const int s = (int)threadIdx.x % TPR;
    int64_t col[NV];
    segment_columns<TPR, V>(s, col);
    const int64_t row = (int64_t)blockIdx.x * kRows + threadIdx.x / TPR;
    fwd_row<T, NV> d;
    fwd_load<T>(p, row, col, d);
    fwd_row_out<T, TPR>(p, row, col, d, scratch);
}

// ---------------------------------------------------------------- forward, any shape

// z of element (row, c); *keep: whether dropout kept it.
template <typename T> HK_DEV float fwd_z(const hk_ln_fwd_params &p, int64_t row, int64_t c, bool *keep = nullptr)
{
    float v = to_float(static_cast<const T *>(p.x)[row * p.x_stride + c]);
    const bool kept = !p.dropout || hk_dropout_keep(p.seed, p.offset, (uint64_t)(row * p.cols + c), p.dropout_threshold);
    if (p.dropout)
        v = kept ? v * p.dropout_scale : 0.0f;
    if (keep)
        *keep = kept;
    if (p.residual)
        v += to_float(static_cast<const T *>(p.residual)[row * p.residual_stride + c]);
    return v;
}

// One block per row (grid-strided); z is recomputed in each of three passes rather than stored, and every
// output element is written by the thread that last reads its inputs, so outputs may alias inputs.
template <typename T> HK_DEV void ln_fwd_any(const hk_ln_fwd_params &p)
{
    __shared__ float scratch[kWarpLanes];
    for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
        float mean = 0.0f;
        if (!p.rms) {
            float sum = 0.0f;
            for (int64_t c = threadIdx.x; c < p.cols; c += blockDim.x)
                sum += fwd_z<T>(p, row, c);
            mean = block_sum(sum, scratch) / (float)p.cols;
        }
        float sq = 0.0f;
        for (int64_t c = threadIdx.x; c < p.cols; c += blockDim.x) {
            const float d = fwd_z<T>(p, row, c) - mean;
            sq += d * d;
        }
        const float rstd = inv_sqrt(block_sum(sq, scratch) / (float)p.cols + p.epsilon);
        // whole warps step together (the mask words come from a ballot); lanes past cols only vote
        for (int64_t c0 = 0; c0 < p.cols; c0 += blockDim.x) {
            const int64_t c = c0 + threadIdx.x;
            bool keep = false;
            if (c < p.cols) {
                const float z = fwd_z<T>(p, row, c, &keep);
                float o = (z - mean) * rstd * load_param<T>(p.gamma, c, p.param_f32);
                if (p.beta)
                    o += load_param<T>(p.beta, c, p.param_f32);
                if (p.residual_out)
                    static_cast<T *>(p.residual_out)[row * p.residual_out_stride + c] = from_float<T>(z);
                static_cast<T *>(p.y)[row * p.y_stride + c] = from_float<T>(o);
            }
            if (p.dropout_mask) {
                const uint32_t word = warp_ballot(keep);
                if (lane() == 0 && c < p.cols)
                    p.dropout_mask[row * p.mask_words + c / 32] = word;
            }
        }
        if (threadIdx.x == 0) {
            if (p.mean && !p.rms)
                p.mean[row] = mean;
            if (p.rstd)
                p.rstd[row] = rstd;
        }
    }
}

// ---------------------------------------------------------------- backward, register-resident

// What a backward call loads besides dy and z, as compile-time flags: each combination is its own instantiation
// of the row loop, so a row held in registers holds only what that call loads (a dz_extra vector kept for every
// row whether used or not cost D1024 a spilled register).
template <bool Extra, bool Mask> struct bwd_inputs {
    static constexpr bool extra = Extra; // dz_extra
    static constexpr bool mask = Mask;   // the stored dropout mask (else Philox, or no dropout)
};

// Runs body(bwd_inputs<...>{}) with the flags of p.
template <typename F> HK_DEV void with_bwd_inputs(const hk_ln_bwd_params &p, F &&body)
{
    if (p.dz_extra) {
        if (p.dropout_mask)
            body(bwd_inputs<true, true>{});
        else
            body(bwd_inputs<true, false>{});
    } else {
        if (p.dropout_mask)
            body(bwd_inputs<false, true>{});
        else
            body(bwd_inputs<false, false>{});
    }
}

// The raw inputs of one row segment, loaded one row ahead (see ln_bwd_prefetch).
template <typename T, int NV> struct bwd_row {
    vec<T, 16 / sizeof(T)> dy[NV], z[NV], ex[NV];
    uint32_t mask[NV]; // the given dropout mask's word holding each vector's bits
    float mean, rstd;
};

template <typename T, int NV, typename In>
HK_DEV void bwd_load(const hk_ln_bwd_params &p, int64_t row, const int64_t (&col)[NV], bwd_row<T, NV> &d)
{
    constexpr int V = 16 / sizeof(T);
    if (row >= p.rows)
        return;
    const T *dy = static_cast<const T *>(p.dy) + row * p.dy_stride;
    const T *z = static_cast<const T *>(p.z) + row * p.z_stride;
    const T *ex = static_cast<const T *>(p.dz_extra) + row * p.dz_extra_stride;
#pragma unroll
    for (int k = 0; k < NV; ++k) {
        if (col[k] < p.cols) {
            d.dy[k] = load_vec<V>(dy + col[k], cache_stream{});
            d.z[k] = load_vec<V>(z + col[k], cache_stream{});
        }
    }
    if constexpr (In::extra)
#pragma unroll
        for (int k = 0; k < NV; ++k)
            if (col[k] < p.cols)
                d.ex[k] = load_vec<V>(ex + col[k], cache_stream{});
    if constexpr (In::mask)
#pragma unroll
        for (int k = 0; k < NV; ++k)
            if (col[k] < p.cols)
                d.mask[k] = p.dropout_mask[row * p.mask_words + col[k] / 32];
    d.mean = p.rms ? 0.0f : p.mean[row];
    d.rstd = p.rstd[row];
}

// One partial dgamma/dbeta row per block. Segments of a block add theirs in segment order through shared memory.
template <typename T, int TPR, int NV>
HK_DEV void bwd_parts(const hk_ln_bwd_params &p, const int64_t (&col)[NV], const float (&dg)[NV][16 / sizeof(T)],
                      const float (&db)[NV][16 / sizeof(T)])
{
    constexpr int V = 16 / sizeof(T);
    constexpr int kBlock = TPR > HK_LN_MIN_BLOCK ? TPR : HK_LN_MIN_BLOCK;
    constexpr int kRows = kBlock / TPR;
    constexpr int kCap = TPR * NV * V;
    const int s = (int)threadIdx.x % TPR, seg = (int)threadIdx.x / TPR;
    float *parts[2] = {p.dgamma_part, p.dbeta_part};
    if constexpr (kRows == 1) {
#pragma unroll
        for (int which = 0; which < 2; ++which) {
            if (!parts[which])
                continue;
            float *out = parts[which] + (int64_t)blockIdx.x * p.cols;
#pragma unroll
            for (int k = 0; k < NV; ++k) {
                if (col[k] >= p.cols)
                    continue;
                const float(&src)[V] = which ? db[k] : dg[k];
#pragma unroll
                for (int i = 0; i < V; ++i) // scalar: the workspace need only be float-aligned
                    out[col[k] + i] = src[i];
            }
        }
    } else {
        __shared__ float acc[2][kCap];
#pragma unroll
        for (int which = 0; which < 2; ++which) {
            if (!parts[which])
                continue;
            for (int r = 0; r < kRows; ++r) {
                if (seg == r)
#pragma unroll
                    for (int k = 0; k < NV; ++k)
#pragma unroll
                        for (int i = 0; i < V; ++i) {
                            const int c = (k * TPR + s) * V + i;
                            const float v = which ? db[k][i] : dg[k][i];
                            acc[which][c] = r == 0 ? v : acc[which][c] + v;
                        }
                block_sync();
            }
            float *out = parts[which] + (int64_t)blockIdx.x * p.cols;
            for (int c = (int)threadIdx.x; c < kCap && c < p.cols; c += kBlock)
                out[c] = acc[which][c];
        }
    }
}

// One row segment of the backward from its raw vectors (dy(k), z(k), ex(k): vector k of the segment): pass 1
// keeps xhat and dy * gamma in fp32 and sums them over the row, pass 2 costs two FMAs per element before the
// mask (no recomputation); dgamma/dbeta accumulate in the thread's registers. Recompute: pass 2 forms xhat and
// dy * gamma again from the vectors instead of holding them over the row's reduction, for segments whose held
// values would fill a thread's register budget (the staged form re-reads them from shared memory).
template <typename T, int TPR, int NV, typename In, bool Recompute = false, typename DY, typename Z, typename EX,
          typename M>
HK_DEV void bwd_segment(const hk_ln_bwd_params &p, int64_t row, const int64_t (&col)[NV], float mean, float rstd_row,
                        DY dy, Z z, EX ex, M mask_word, float (&dg)[NV][16 / sizeof(T)],
                        float (&db)[NV][16 / sizeof(T)], float *scratch, int &half)
{
    constexpr int V = 16 / sizeof(T);
    bool in[NV];
    const bool active = row_mask(p.rows, p.cols, row, col, in);
    // xhat = z * rstd - mean * rstd: one FMA
    const float rstd = active ? rstd_row : 0.0f, shift = active && !p.rms ? -mean * rstd_row : 0.0f;

    constexpr int KH = Recompute ? 1 : NV; // vectors whose xhat and dy * gamma are held over the reduction
    float xh[KH][V], gg[KH][V];
    float sums[2] = {0.0f, 0.0f}; // sum(dy * gamma * xhat), sum(dy * gamma)
    // xhat and dy * gamma of vector k into slot h; in pass 1 (accumulate) also its dgamma, dbeta and row sums
    auto form = [&](int k, int h, bool accumulate) {
        float d[V], zf[V], gam[V];
        unpack(dy(k), d);
        unpack(z(k), zf);
        load_params<T>(p.gamma, col[k], p.param_f32, gam);
#pragma unroll
        for (int i = 0; i < V; ++i) {
            xh[h][i] = fmaf(zf[i], rstd, shift);
            gg[h][i] = d[i] * gam[i];
            if (accumulate) {
                dg[k][i] = fmaf(d[i], xh[h][i], dg[k][i]);
                db[k][i] += d[i];
                sums[0] = fmaf(gg[h][i], xh[h][i], sums[0]);
                sums[1] += gg[h][i];
            }
        }
    };
#pragma unroll
    for (int k = 0; k < NV; ++k) {
        const int h = Recompute ? 0 : k;
        if (!in[k]) {
#pragma unroll
            for (int i = 0; i < V; ++i)
                xh[h][i] = gg[h][i] = 0.0f;
            continue;
        }
        form(k, h, true);
    }
    segment_sum2<TPR>(sums, scratch, half);
    // dz = rstd * (gg - mean(gg) - xhat * mean(gg * xhat)) = gg * rstd + b + xhat * a
    const float inv_cols = 1.0f / (float)p.cols;
    const float a = -rstd * (sums[0] * inv_cols), b = p.rms ? 0.0f : -rstd * (sums[1] * inv_cols);

    T *dx = static_cast<T *>(p.dx) + row * p.dx_stride;
    T *dres = static_cast<T *>(p.dresidual) + row * p.dresidual_stride;
#pragma unroll
    for (int k = 0; k < NV; ++k) {
        if (!in[k])
            continue;
        const int h = Recompute ? 0 : k;
        if constexpr (Recompute)
            form(k, h, false);
        float dz[V];
#pragma unroll
        for (int i = 0; i < V; ++i)
            dz[i] = fmaf(xh[h][i], a, fmaf(gg[h][i], rstd, b));
        if constexpr (In::extra) {
            float e[V];
            unpack(ex(k), e);
#pragma unroll
            for (int i = 0; i < V; ++i)
                dz[i] += e[i];
        }
        if (p.dresidual)
            store_vec(dres + col[k], pack<T>(dz), cache_stream{});
        if constexpr (In::mask)
            dropout(dz, mask_word(k) >> (col[k] & 31), p.dropout_scale);
        else if (p.dropout)
            dropout(dz, (uint64_t)(row * p.cols + col[k]), p.seed, p.offset, p.dropout_threshold, p.dropout_scale);
        store_vec(dx + col[k], pack<T>(dz), cache_stream{});
    }
}

// Both persistent forms below stride each block over groups of kRows rows (one row per segment) and keep the
// next rows' loads in flight while a row is reduced; they differ in where those rows wait.

// Prefetch form: the next group's row waits in registers. Best where a thread holds few vectors of a row
// (narrow rows, 3 blocks per SM).
template <typename T, int TPR, int NV, typename In> HK_DEV void ln_bwd_prefetch(const hk_ln_bwd_params &p)
{
    constexpr int V = 16 / sizeof(T);
    constexpr int kBlock = TPR > HK_LN_MIN_BLOCK ? TPR : HK_LN_MIN_BLOCK;
    constexpr int kRows = kBlock / TPR;
    HK_LDS(float, scratch, 4 * kBlock / kWarpLanes);
    const int s = (int)threadIdx.x % TPR, seg = (int)threadIdx.x / TPR;
    int64_t col[NV];
    segment_columns<TPR, V>(s, col);
    float dg[NV][V] = {}, db[NV][V] = {};
    int half = 0;

    const int64_t groups = (p.rows + kRows - 1) / kRows, step = gridDim.x;
    using row_vec = vec<T, V>; // accessors hand out references: a copy of a 16-bit vector costs moves
    auto load = [&](int64_t g, bwd_row<T, NV> &d) {
        if (g < groups)
            bwd_load<T, NV, In>(p, g * kRows + seg, col, d);
    };
    auto reduce = [&](int64_t g, const bwd_row<T, NV> &d) {
        bwd_segment<T, TPR, NV, In>(
            p, g * kRows + seg, col, d.mean, d.rstd, [&](int k) -> const row_vec & { return d.dy[k]; },
            [&](int k) -> const row_vec & { return d.z[k]; }, [&](int k) -> const row_vec & { return d.ex[k]; },
            [&](int k) { return d.mask[k]; }, dg, db, scratch, half);
    };
    // Two row buffers in turn (unrolled by two): the next row loads into one while the other is reduced, and
    // no register copies pass between them.
    bwd_row<T, NV> even, odd;
    load(blockIdx.x, even);
    for (int64_t g = blockIdx.x; g < groups; g += 2 * step) {
        load(g + step, odd);
        reduce(g, even);
        if (g + step >= groups)
            break;
        load(g + 2 * step, even);
        reduce(g + step, odd);
    }
    bwd_parts<T, TPR, NV>(p, col, dg, db);
}

// Staged form: each thread copies its own vectors of the rows ahead into dynamic shared memory with cp.async
// (p.stages - 1 rows in flight, no registers held for them, no barrier: a thread reads back only what it
// copied). Best for wide rows, whose register-held next row would cost occupancy.
template <typename T, int TPR, int NV, int MINB, typename In> HK_DEV void ln_bwd_staged(const hk_ln_bwd_params &p)
{
    constexpr int V = 16 / sizeof(T);
    constexpr int kBlock = TPR > HK_LN_MIN_BLOCK ? TPR : HK_LN_MIN_BLOCK;
    constexpr int kRows = kBlock / TPR;
    using row_vec = vec<T, V>;
    HK_LDS(float, scratch, 4 * kBlock / kWarpLanes);
    // [stage][load: dy, z, dz_extra][k][thread] vectors, [stage][mean, rstd][thread] floats, then
    // [stage][k][thread] mask words
    extern __shared__ uint4 stage[];
    const int s = (int)threadIdx.x % TPR, seg = (int)threadIdx.x / TPR, tid = (int)threadIdx.x;
    constexpr int loads = In::extra ? 3 : 2;
    // xhat, dy * gamma, dgamma and dbeta held per element would fill the registers of MINB blocks per SM
    constexpr bool kRecompute = 4 * NV * V >= 65536 / (kBlock * MINB);
    const int stages = p.stages;
    float *stats = reinterpret_cast<float *>(stage + stages * loads * NV * kBlock);
    uint32_t *masks = reinterpret_cast<uint32_t *>(stats + stages * 2 * kBlock);
    int64_t col[NV];
    segment_columns<TPR, V>(s, col);
    float dg[NV][V] = {}, db[NV][V] = {};
    int half = 0;

    const int64_t groups = (p.rows + kRows - 1) / kRows;
    // Copies group g's row of this segment into stage st; one commit group per call, empty past the end.
    auto issue = [&](int64_t g, int st) {
        const int64_t row = g * kRows + seg;
        if (g < groups && row < p.rows) {
            const T *src[3] = {static_cast<const T *>(p.dy) + row * p.dy_stride,
                               static_cast<const T *>(p.z) + row * p.z_stride,
                               static_cast<const T *>(p.dz_extra) + row * p.dz_extra_stride};
            for (int l = 0; l < loads; ++l)
#pragma unroll
                for (int k = 0; k < NV; ++k)
                    if (col[k] < p.cols)
                        copy_async16(stage + ((st * loads + l) * NV + k) * kBlock + tid, src[l] + col[k]);
            copy_async4(stats + (2 * st) * kBlock + tid, p.rms ? p.rstd + row : p.mean + row);
            copy_async4(stats + (2 * st + 1) * kBlock + tid, p.rstd + row);
            if constexpr (In::mask)
#pragma unroll
                for (int k = 0; k < NV; ++k)
                    if (col[k] < p.cols)
                        copy_async4(masks + (st * NV + k) * kBlock + tid, p.dropout_mask + row * p.mask_words + col[k] / 32);
        }
        copy_async_commit();
    };
    for (int j = 0; j + 1 < stages; ++j)
        issue((int64_t)blockIdx.x + (int64_t)j * gridDim.x, j);
    int st = 0;
    for (int64_t g = blockIdx.x; g < groups; g += gridDim.x) {
        issue(g + (int64_t)(stages - 1) * gridDim.x, st == 0 ? stages - 1 : st - 1); // the stage freed last round
        copy_async_wait(stages - 1);
        const uint4 *in = stage + (st * loads * NV) * kBlock + tid;
        auto staged = [&](int l) {
            return [=](int k) -> const row_vec & { return *reinterpret_cast<const row_vec *>(in + (l * NV + k) * kBlock); };
        };
        bwd_segment<T, TPR, NV, In, kRecompute>(p, g * kRows + seg, col, stats[(2 * st) * kBlock + tid],
                                stats[(2 * st + 1) * kBlock + tid], staged(0), staged(1), staged(2),
                                [&](int k) { return masks[(st * NV + k) * kBlock + tid]; }, dg, db, scratch, half);
        st = st + 1 == stages ? 0 : st + 1;
    }
    bwd_parts<T, TPR, NV>(p, col, dg, db);
}

// ---------------------------------------------------------------- backward, any shape

// A block per row (persistent): pass 1 reduces, pass 2 writes; the block's partial dgamma/dbeta row lives in
// the workspace, each column owned by one thread for the whole kernel.
template <typename T> HK_DEV void ln_bwd_any(const hk_ln_bwd_params &p)
{
    __shared__ float scratch[kWarpLanes];
    float *pg = p.dgamma_part ? p.dgamma_part + (int64_t)blockIdx.x * p.cols : nullptr;
    float *pb = p.dbeta_part ? p.dbeta_part + (int64_t)blockIdx.x * p.cols : nullptr;
    for (int64_t c = threadIdx.x; c < p.cols; c += blockDim.x) {
        if (pg)
            pg[c] = 0.0f;
        if (pb)
            pb[c] = 0.0f;
    }
    const T *dy = static_cast<const T *>(p.dy), *z = static_cast<const T *>(p.z);
    for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
        const float mean = p.rms ? 0.0f : p.mean[row], rstd = p.rstd[row];
        float sgx = 0.0f, sg = 0.0f;
        for (int64_t c = threadIdx.x; c < p.cols; c += blockDim.x) {
            const float xhat = (to_float(z[row * p.z_stride + c]) - mean) * rstd;
            const float gg = to_float(dy[row * p.dy_stride + c]) * load_param<T>(p.gamma, c, p.param_f32);
            sgx += gg * xhat;
            sg += gg;
        }
        const float mgx = block_sum(sgx, scratch) / (float)p.cols;
        const float mg = p.rms ? 0.0f : block_sum(sg, scratch) / (float)p.cols;
        for (int64_t c = threadIdx.x; c < p.cols; c += blockDim.x) {
            const float d = to_float(dy[row * p.dy_stride + c]);
            const float xhat = (to_float(z[row * p.z_stride + c]) - mean) * rstd;
            float dz = rstd * (d * load_param<T>(p.gamma, c, p.param_f32) - mg - xhat * mgx);
            if (p.dz_extra)
                dz += to_float(static_cast<const T *>(p.dz_extra)[row * p.dz_extra_stride + c]);
            if (p.dresidual)
                static_cast<T *>(p.dresidual)[row * p.dresidual_stride + c] = from_float<T>(dz);
            if (p.dropout) {
                const bool keep = p.dropout_mask ? hk_dropout_mask_kept(p.dropout_mask + row * p.mask_words, c)
                                                 : hk_dropout_keep(p.seed, p.offset, (uint64_t)(row * p.cols + c),
                                                                   p.dropout_threshold);
                dz = keep ? dz * p.dropout_scale : 0.0f;
            }
            static_cast<T *>(p.dx)[row * p.dx_stride + c] = from_float<T>(dz);
            if (pg)
                pg[c] += d * xhat;
            if (pb)
                pb[c] += d;
        }
    }
}

} // namespace

// ---------------------------------------------------------------- kernels

// The forward is one-shot: HK_LN_FWD_THREADS_PER_SM resident threads (a 64-register cap, 4 blocks of 256) keep
// more rows in flight than the compiler's free choice (66-80 registers, 3 blocks).
#define HK_LN_FWD_THREADS_PER_SM 1024
#define HK_LN_BLOCK(TPR) (TPR > HK_LN_MIN_BLOCK ? TPR : HK_LN_MIN_BLOCK)
#define HK_LN_FWD(T, NAME, TPR, NV)                                                                            \
    extern "C" __global__ void __launch_bounds__(HK_LN_BLOCK(TPR), HK_LN_FWD_THREADS_PER_SM / HK_LN_BLOCK(TPR)) \
        hk_ln_fwd_##NAME##_t##TPR##_n##NV(const hk_ln_fwd_params p)                                            \
    {                                                                                                          \
        ln_fwd<T, TPR, NV>(p);                                                                                 \
    }
// The backward's persistent grid is sized for MINB resident blocks per SM, so its kernels also promise the
// compiler that occupancy (a register cap), which HK_KERNEL cannot say. STAGES 0: the prefetch form, else staged.
#define HK_LN_BWD(T, NAME, TPR, NV, MINB, STAGES)                                                              \
    extern "C" __global__ void __launch_bounds__(HK_LN_BLOCK(TPR), MINB)                                      \
        hk_ln_bwd_##NAME##_t##TPR##_n##NV(const hk_ln_bwd_params p)                                            \
    {                                                                                                          \
        static_assert(STAGES <= HK_LN_BWD_MAX_STAGES, "copy_async_wait waits on at most 3 newer groups");      \
        with_bwd_inputs(p, [&](auto in) {                                                                      \
            if constexpr (STAGES == 0)                                                                         \
                ln_bwd_prefetch<T, TPR, NV, decltype(in)>(p);                                                  \
            else                                                                                               \
                ln_bwd_staged<T, TPR, NV, MINB, decltype(in)>(p);                                              \
        });                                                                                                    \
    }
#define HK_LN_ANY(T, NAME)                                                                                     \
    HK_KERNEL(hk_ln_fwd_##NAME##_any, hk_ln_fwd_params, HK_LN_ANY_BLOCK) { ln_fwd_any<T>(p); }                 \
    HK_KERNEL(hk_ln_bwd_##NAME##_any, hk_ln_bwd_params, HK_LN_ANY_BLOCK) { ln_bwd_any<T>(p); }

#define HK_FWD_BF16(TPR, NV) HK_LN_FWD(bf16, bf16, TPR, NV)
#define HK_FWD_F16(TPR, NV) HK_LN_FWD(f16, f16, TPR, NV)
#define HK_FWD_F32(TPR, NV) HK_LN_FWD(float, f32, TPR, NV)
#define HK_BWD_BF16(TPR, NV, MINB, STAGES) HK_LN_BWD(bf16, bf16, TPR, NV, MINB, STAGES)
#define HK_BWD_F16(TPR, NV, MINB, STAGES) HK_LN_BWD(f16, f16, TPR, NV, MINB, STAGES)
#define HK_BWD_F32(TPR, NV, MINB, STAGES) HK_LN_BWD(float, f32, TPR, NV, MINB, STAGES)
HK_LN_FWD_CONFIGS_2BYTE(HK_FWD_BF16)
HK_LN_FWD_CONFIGS_2BYTE(HK_FWD_F16)
HK_LN_FWD_CONFIGS_4BYTE(HK_FWD_F32)
HK_LN_BWD_CONFIGS_2BYTE(HK_BWD_BF16)
HK_LN_BWD_CONFIGS_2BYTE(HK_BWD_F16)
HK_LN_BWD_CONFIGS_4BYTE(HK_BWD_F32)
HK_LN_ANY(bf16, bf16)
HK_LN_ANY(f16, f16)
HK_LN_ANY(float, f32)

// dgamma/dbeta: a block sums HK_LN_REDUCE_COLS columns over all partial rows, HK_LN_REDUCE_SLICES interleaved
// slices of them per column, then the slices in order: a fixed summation order for a given grid.
HK_KERNEL(hk_ln_bwd_reduce, hk_ln_reduce_params, HK_LN_REDUCE_COLS *HK_LN_REDUCE_SLICES)
{
    __shared__ float slice[HK_LN_REDUCE_SLICES][HK_LN_REDUCE_COLS + 1];
    const int x = (int)threadIdx.x % HK_LN_REDUCE_COLS, y = (int)threadIdx.x / HK_LN_REDUCE_COLS;
    const int64_t c = (int64_t)blockIdx.x * HK_LN_REDUCE_COLS + x;
    const float *src[2] = {p.dgamma_part, p.dbeta_part};
    float *dst[2] = {p.dgamma, p.dbeta};
#pragma unroll
    for (int which = 0; which < 2; ++which) {
        if (!src[which])
            continue;
        float acc = 0.0f;
        if (c < p.cols) {
#pragma unroll 8
            for (int64_t b = y; b < p.parts; b += HK_LN_REDUCE_SLICES)
                acc += src[which][b * p.cols + c];
        }
        slice[y][x] = acc;
        block_sync();
        if (y == 0 && c < p.cols) {
            float s = slice[0][x];
#pragma unroll
            for (int j = 1; j < HK_LN_REDUCE_SLICES; ++j)
                s += slice[j][x];
            dst[which][c] = s;
        }
        block_sync();
    }
}
