/* libhk tile interface: the vocabulary every device kernel is written in, implemented once per arch folder.
 *
 * A kernel includes only this header. It selects the arch implementation:
 *   HK_EMU                -> tiles/emu/arch.hpp    (host C++17: the wave emulator, HK_EMU_ARCH = 942 or 950)
 *   __gfx942__/__gfx950__ -> tiles/cdna3|cdna4/arch.hpp (clang HIP device pass, no ROCm headers)
 *   __CUDACC__            -> tiles/hopper/arch.hpp (nvcc, sm_90a)
 *
 * What each arch.hpp must provide, in namespace hk unless it is a macro:
 *   Macros   HK_UNROLL (here), HK_DEV                 qualifier of device functions (inline)
 *            HK_KERNEL(name, P, N)  header of an extern "C" kernel taking `const P p` by value, at most N
 *                                   threads per block (1-D blocks); the body follows in braces
 *            HK_LDS(T, name, n)     shared memory / LDS array of n T, only at kernel body top level
 *            __host__ __device__    (defined as the compiler's attributes when no vendor header is used)
 *   Geometry kWarpLanes (64 AMD, 32 NVIDIA); thread(), lane(), warp() [= wave], num_warps(),
 *            block_x(), block_y(), block_z(); block_sync() (barrier + shared-memory fence)
 *   Numbers  to_float(bf16|f16|float), from_float<bf16|f16|float>(float) (the primary template is the arch's),
 *            round to nearest even; fp8 is the arch's native e4m3 (fnuz on gfx942, OCP on gfx950);
 *            exp2_fast, rcp_fast, rsqrt_fast (hardware approximations, ~1 ulp, denormals may flush), tanh_fast;
 *            AMD also log2_fast
 *   Wave     warp_sum/warp_max(float): every lane gets the whole-wave result, in a fixed order;
 *            shfl_xor(float, mask): the value of lane ^ mask
 *            warp_ballot(bool): bit l = lane l's predicate, kWarpLanes bits (uint32_t NVIDIA, uint64_t AMD)
 *            pack_lane_bits<Bits>(uint32_t field): lane l holds a Bits-wide field (Bits divides 32); every lane
 *            of each aligned group of 32 / Bits lanes gets the group's fields in lane order (lowest bits first);
 *            the whole wave must be converged
 *   Memory   buf<T>: a range-checked view of n elements (make_buf(ptr, n)); load_vec<N>(buf, i) and
 *            store_vec(buf, i, v) move N elements (N * sizeof(T) <= 16, i % N == 0); elements at or past n read
 *            as zero and are not written (a vector is all in range or all out: n % N == 0 is the caller's job)
 *   Matrix   MMA atoms (struct with A, B, C fragment layouts and static mma(c, a, b)); each layout L has
 *            kRows, kCols, kElems (per lane) and row(lane, e), col(lane, e). See "matrix vocabulary" below.
 * Everything else here is generic and written once.
 */
#ifndef HK_TILES_COMMON_HPP
#define HK_TILES_COMMON_HPP

#include <stdint.h>

/* Fully unroll a loop with a compile-time trip count (register arrays must never be indexed dynamically: that
 * puts them in scratch memory). */
#if defined(__clang__)
#define HK_UNROLL _Pragma("unroll")
#else /* host builds (the emulator): speed is secondary, and GCC 12 rejects its unroll pragma in templates */
#define HK_UNROLL
#endif

namespace hk {

/* 16-bit storage types, bit-compatible with the host's uint16_t buffers. */
struct bf16 { uint16_t bits; };
struct f16 { uint16_t bits; };
struct fp8 { uint8_t bits; }; /* the arch's native e4m3 encoding */

/* Register vector of N elements, aligned for one N * sizeof(T)-byte access. */
template <typename T, int N> struct alignas(sizeof(T) * N) vec {
    T v[N];
};
/* Elements per 16-byte access. */
template <typename T> constexpr int kVec16 = 16 / (int)sizeof(T);

} // namespace hk

#if defined(HK_EMU)
#include "../emu/arch.hpp"
#elif defined(__gfx950__)
#include "../cdna4/arch.hpp"
#elif defined(__gfx942__)
#include "../cdna3/arch.hpp"
#elif defined(__CUDACC__)
#include "../hopper/arch.hpp"
#else
#error "tiles.hpp: no arch implementation for this compiler pass"
#endif

namespace hk {

/* ---------------------------------------------------------------- 16-byte register vectors */

/* Plain aligned global/LDS accesses (p must be aligned to the vector size). */
template <int N, typename T> HK_DEV vec<T, N> load_vec(const T *p) { return *reinterpret_cast<const vec<T, N> *>(p); }
template <int N, typename T> HK_DEV void store_vec(T *p, const vec<T, N> &v) { *reinterpret_cast<vec<T, N> *>(p) = v; }

template <typename T, int N> HK_DEV void to_float(float (&out)[N], const vec<T, N> &v)
{
    for (int i = 0; i < N; ++i)
        out[i] = to_float(v.v[i]);
}
template <typename T, int N> HK_DEV vec<T, N> from_float(const float (&in)[N])
{
    vec<T, N> r;
    for (int i = 0; i < N; ++i)
        r.v[i] = from_float<T>(in[i]);
    return r;
}

/* Sum over the block; scratch holds num_warps() floats of shared memory. Every thread gets the result, summed in
 * warp order, so it is identical on every thread and every run. Ends with a barrier: scratch is reusable. */
HK_DEV float block_sum(float v, float *scratch)
{
    v = warp_sum(v);
    if (lane() == 0)
        scratch[warp()] = v;
    block_sync();
    float s = 0.0f;
    for (int w = 0; w < num_warps(); ++w)
        s += scratch[w];
    block_sync();
    return s;
}

/* ---------------------------------------------------------------- matrix vocabulary
 * gl<T>   a global row-major matrix view: ptr, rows, cols, row stride (elements).
 * st<T, R, C>   an R x C tile in shared memory/LDS, row-major with 16-byte chunks XOR-swizzled (st::index).
 * rt<T, R, C, L>   a per-wave register tile made of (R / L::kRows) x (C / L::kCols) fragments of layout L; lane l
 *         holds element e of fragment (i, j) at row i * L::kRows + L::row(l, e), column j * L::kCols + L::col(l, e).
 * mma(d, a, b)  d += a * b with a: rt<T, M, K, Atom::A>, b: rt<T, K, N, Atom::B>, d: rt<float, M, N, Atom::C>.
 * Loads/stores are per wave (rt) or per block (st <-> gl), with out-of-range elements reading zero and not written.
 */
template <typename T> struct gl {
    T *ptr;
    int64_t rows, cols, stride;
};

template <typename T, int R, int C> struct st {
    static constexpr int kRows = R, kCols = C;
    static constexpr int kChunk = kVec16<T>;          /* elements per 16-byte chunk */
    static constexpr int kChunks = C / kChunk;         /* chunks per row */
    static constexpr int kSwz = kChunks < 8 ? kChunks : 8;
    static_assert(C % kChunk == 0 && (kSwz & (kSwz - 1)) == 0, "st: a row must hold a power-of-two of 16-byte chunks");
    T *data; /* R * C elements of shared memory (HK_LDS) */
    /* Chunk c of row r is stored at chunk c ^ (r % kSwz): 8 consecutive rows read at one column hit 8 distinct
     * 16-byte bank groups. */
    HK_DEV static int index(int r, int c)
    {
        int chunk = (c / kChunk) ^ (r % kSwz);
        return r * C + chunk * kChunk + c % kChunk;
    }
};

template <typename T, int R, int C, typename L> struct rt {
    using layout = L;
    static constexpr int kTR = R / L::kRows, kTC = C / L::kCols, kElems = L::kElems;
    static_assert(R % L::kRows == 0 && C % L::kCols == 0, "rt: size must be a multiple of the fragment");
    T d[kTR][kTC][L::kElems];
};

/* Block-cooperative gl -> st of the R x C tile at (r0, c0), zero past the matrix edge. Vectorised when the view
 * allows 16-byte accesses (cols, stride and ptr aligned), else element-wise. */
template <typename T, int R, int C> HK_DEV void load(st<T, R, C> &s, const gl<T> &g, int64_t r0, int64_t c0)
{
    constexpr int V = kVec16<T>;
    const int nthreads = num_warps() * kWarpLanes;
    bool vec_ok = g.cols % V == 0 && g.stride % V == 0 && c0 % V == 0 && ((uintptr_t)g.ptr % 16) == 0;
    if (vec_ok) {
        for (int i = thread(); i < R * C / V; i += nthreads) {
            int r = i / (C / V), c = (i % (C / V)) * V;
            vec<T, V> v = {};
            if (r0 + r < g.rows && c0 + c < g.cols)
                v = load_vec<V>(g.ptr + (r0 + r) * g.stride + c0 + c);
            store_vec(s.data + s.index(r, c), v);
        }
    } else {
        for (int i = thread(); i < R * C; i += nthreads) {
            int r = i / C, c = i % C;
            T v = T{};
            if (r0 + r < g.rows && c0 + c < g.cols)
                v = g.ptr[(r0 + r) * g.stride + c0 + c];
            s.data[s.index(r, c)] = v;
        }
    }
}

/* Per-wave register tile loads/stores, element by element through the fragment layout (the GEMM will add
 * vectorised specialisations per layout). */
template <typename T, int R, int C, typename L, typename S> HK_DEV void load(rt<T, R, C, L> &t, const S &s)
{
    for (int i = 0; i < t.kTR; ++i)
        for (int j = 0; j < t.kTC; ++j)
            for (int e = 0; e < L::kElems; ++e)
                t.d[i][j][e] = s.data[s.index(i * L::kRows + L::row(lane(), e), j * L::kCols + L::col(lane(), e))];
}

template <typename T, int R, int C, typename L>
HK_DEV void load(rt<T, R, C, L> &t, const gl<T> &g, int64_t r0, int64_t c0)
{
    for (int i = 0; i < t.kTR; ++i)
        for (int j = 0; j < t.kTC; ++j)
            for (int e = 0; e < L::kElems; ++e) {
                int64_t r = r0 + i * L::kRows + L::row(lane(), e), c = c0 + j * L::kCols + L::col(lane(), e);
                t.d[i][j][e] = r < g.rows && c < g.cols ? g.ptr[r * g.stride + c] : T{};
            }
}

template <typename T, typename U, int R, int C, typename L>
HK_DEV void store(const gl<T> &g, const rt<U, R, C, L> &t, int64_t r0, int64_t c0)
{
    for (int i = 0; i < t.kTR; ++i)
        for (int j = 0; j < t.kTC; ++j)
            for (int e = 0; e < L::kElems; ++e) {
                int64_t r = r0 + i * L::kRows + L::row(lane(), e), c = c0 + j * L::kCols + L::col(lane(), e);
                if (r < g.rows && c < g.cols)
                    g.ptr[r * g.stride + c] = from_float<T>(to_float(t.d[i][j][e]));
            }
}

template <typename Atom, typename T, int M, int N, int K>
HK_DEV void mma(rt<float, M, N, typename Atom::C> &d, const rt<T, M, K, typename Atom::A> &a,
                const rt<T, K, N, typename Atom::B> &b)
{
    for (int i = 0; i < d.kTR; ++i)
        for (int j = 0; j < d.kTC; ++j)
            for (int k = 0; k < a.kTC; ++k)
                Atom::mma(d.d[i][j], a.d[i][k], b.d[k][j]);
}

template <typename T, int R, int C, typename L> HK_DEV void zero(rt<T, R, C, L> &t)
{
    for (int i = 0; i < t.kTR; ++i)
        for (int j = 0; j < t.kTC; ++j)
            for (int e = 0; e < L::kElems; ++e)
                t.d[i][j][e] = T{};
}

/* Row reductions of an accumulator tile: out[i][e] is the reduction over all C columns of row
 * i * L::kRows + L::row(lane, e), identical on every lane that holds that row. Lanes sharing a row differ in the
 * bits of L::kColLaneMask (the layout's "column lanes"), which are folded with shfl_xor. */
template <bool Max, int R, int C, typename L> HK_DEV void row_reduce(float (&out)[R / L::kRows][L::kElems],
                                                                   const rt<float, R, C, L> &t)
{
    for (int i = 0; i < t.kTR; ++i)
        for (int e = 0; e < L::kElems; ++e) {
            float v = t.d[i][0][e];
            for (int j = 1; j < t.kTC; ++j)
                v = Max ? (v > t.d[i][j][e] ? v : t.d[i][j][e]) : v + t.d[i][j][e];
            for (int m = 1; m < kWarpLanes; m <<= 1)
                if (L::kColLaneMask & m) {
                    float o = shfl_xor(v, m);
                    v = Max ? (v > o ? v : o) : v + o;
                }
            out[i][e] = v;
        }
}
template <int R, int C, typename L> HK_DEV void row_max(float (&out)[R / L::kRows][L::kElems], const rt<float, R, C, L> &t)
{
    row_reduce<true>(out, t);
}
template <int R, int C, typename L> HK_DEV void row_sum(float (&out)[R / L::kRows][L::kElems], const rt<float, R, C, L> &t)
{
    row_reduce<false>(out, t);
}

/* Column reductions of an accumulator tile (the row statistics of a product kept transposed, as attention's S^T):
 * out[j] is the reduction over all R rows of column j * L::kCols + L::col(lane, e), identical on every lane that
 * holds that column. Lanes sharing a column differ in the bits outside L::kColLaneMask, folded with shfl_xor. */
template <bool Max, int R, int C, typename L> HK_DEV void col_reduce(float (&out)[C / L::kCols], const rt<float, R, C, L> &t)
{
    for (int j = 0; j < t.kTC; ++j) {
        float v = t.d[0][j][0];
        for (int i = 0; i < t.kTR; ++i)
            for (int e = i == 0 ? 1 : 0; e < L::kElems; ++e)
                v = Max ? (v > t.d[i][j][e] ? v : t.d[i][j][e]) : v + t.d[i][j][e];
        for (int m = 1; m < kWarpLanes; m <<= 1)
            if (!(L::kColLaneMask & m)) {
                float o = shfl_xor(v, m);
                v = Max ? (v > o ? v : o) : v + o;
            }
        out[j] = v;
    }
}
template <int R, int C, typename L> HK_DEV void col_max(float (&out)[C / L::kCols], const rt<float, R, C, L> &t)
{
    col_reduce<true>(out, t);
}
template <int R, int C, typename L> HK_DEV void col_sum(float (&out)[C / L::kCols], const rt<float, R, C, L> &t)
{
    col_reduce<false>(out, t);
}
/* t[., j] *= v[j]: a column vector (one value per column fragment, as col_reduce gives) scaling its columns. */
template <int R, int C, typename L> HK_DEV void mul_cols(rt<float, R, C, L> &t, const float (&v)[C / L::kCols])
{
    for (int i = 0; i < t.kTR; ++i)
        for (int j = 0; j < t.kTC; ++j)
            for (int e = 0; e < L::kElems; ++e)
                t.d[i][j][e] *= v[j];
}

} // namespace hk

#endif
