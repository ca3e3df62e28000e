/* Hopper (sm_90a) GEMM for the calls the TMA kernels (gemm.cu) cannot take: operands at any alignment the element
 * size allows, every layout, fp32 operands. D = alpha * op(A) op(B) + beta * C, row-major, fp32 accumulation.
 *
 * TMA needs 16-byte aligned bases and row pitches; these kernels read A and B element by element instead (each
 * warp's loads still cover consecutive addresses of the operand's contiguous dimension, whichever it is), mask
 * the ragged edges to zero and stage the tiles in shared memory in the layout their inner loop wants:
 * - 16-bit and fp8 operands: mma.sync m16n8k16 (tiles/hopper/mma_sync.cuh) from rows of K pairs, one 32-bit word
 *   per pair; fp8 is widened to f16 on the way, which holds every e4m3 and e4m3fnuz value exactly, so the tensor
 *   cores' products are exact and the sums fp32, as the fp32 accumulation hk.h promises.
 * - fp32 operands: a register-tiled SIMT GEMM (8 x 8 outputs per thread, fmaf), so fp32 stays fp32: the tensor
 *   cores would round the operands to TF32.
 * Both stream K in tiles through two shared-memory buffers (any_k_loop). Where the caller gives a workspace, unaligned
 * 16-bit and fp8 operands go to the TMA kernels instead, copied to aligned rows by gemm_repack (below). */
#include "hopper/gemm_any.h"
#include "tiles/common/tiles.hpp"
#include "tiles/hopper/memory.cuh"
#include "tiles/hopper/mma_sync.cuh"

namespace hk::hopper {

using gemm_params = hk_gemm_params;
constexpr int any_tile = HK_GEMM_ANY_TILE, any_threads = HK_GEMM_ANY_THREADS;
static_assert(any_tile == 128 && any_threads == 256, "the loaders' and the warps' maps below");

/* fp8 operands by encoding: their storage byte */
struct e4m3_byte { uint8_t v; };
struct e4m3fnuz_byte { uint8_t v; };

/* An fp8 byte as fp32, exactly: sign, 4 exponent bits of bias Bias (7: OCP e4m3, 8: e4m3fnuz), 3 mantissa bits.
 * NaN: S.1111.111 in OCP e4m3; 0x80 alone in e4m3fnuz (no negative zero). Neither has infinities. */
template <int Bias, bool Fnuz> __device__ __forceinline__ float fp8_value(uint32_t x)
{
    if (Fnuz ? x == 0x80u : (x & 0x7Fu) == 0x7Fu) return __int_as_float(0x7fc00000);
    const uint32_t e = (x >> 3) & 15u, mant = x & 7u;
    const float mag = e == 0 ? (float)mant * (1.f / (float)(1 << (Bias + 2)))   /* subnormal: mant 2^(1 - Bias - 3) */
                             : __uint_as_float((e + 127u - Bias) << 23 | mant << 20);
    return x & 0x80u ? -mag : mag;
}

/* Operand element type T: the 16-bit type the tensor cores read (mma_t; fp32 has none) and element i of an operand
 * in that type's bits. */
template <class T> struct any_in;
template <> struct any_in<__nv_bfloat16> {
    using mma_t = __nv_bfloat16;
    static __device__ __forceinline__ uint32_t bits(const void *x, int64_t i)
    {
        return load_readonly(static_cast<const uint16_t *>(x) + i);
    }
};
template <> struct any_in<__half> {
    using mma_t = __half;
    static __device__ __forceinline__ uint32_t bits(const void *x, int64_t i)
    {
        return load_readonly(static_cast<const uint16_t *>(x) + i);
    }
};
template <> struct any_in<e4m3_byte> {
    using mma_t = __half;
    static __device__ __forceinline__ uint32_t bits(const void *x, int64_t i)
    {
        return __half_as_ushort(__float2half_rn(fp8_value<7, false>(load_readonly(static_cast<const uint8_t *>(x) + i))));
    }
};
template <> struct any_in<e4m3fnuz_byte> {
    using mma_t = __half;
    static __device__ __forceinline__ uint32_t bits(const void *x, int64_t i)
    {
        return __half_as_ushort(__float2half_rn(fp8_value<8, true>(load_readonly(static_cast<const uint8_t *>(x) + i))));
    }
};

/* Tile (tm, tn) of CTA `bid`: HK_GEMM_ANY_GROUP tile rows at a time, column-major inside the group. */
__device__ __forceinline__ void any_tile_of(int bid, const gemm_params &p, int &tm, int &tn)
{
    const int tiles_m = (p.m + any_tile - 1) / any_tile, tiles_n = (p.n + any_tile - 1) / any_tile;
    const int per_group = HK_GEMM_ANY_GROUP * tiles_n, group = bid / per_group, first = group * HK_GEMM_ANY_GROUP;
    const int rows = tiles_m - first < HK_GEMM_ANY_GROUP ? tiles_m - first : HK_GEMM_ANY_GROUP;
    const int r = bid - group * per_group;
    tm = first + r % rows;
    tn = r / rows;
}

/* D's elements (row, col) and (row, col + 1) (inside m; the second only inside n): alpha * (x, y) + beta * C, C read
 * only where beta != 0 (it may alias D: each element is read before the same thread writes it). */
template <class TO>
__device__ __forceinline__ void any_store_pair(const gemm_params &p, int row, int col, float x, float y)
{
    const bool pair = col + 1 < p.n;
    x *= p.alpha;
    y *= p.alpha;
    if (p.beta != 0.f) {
        const TO *c = static_cast<const TO *>(p.c) + (int64_t)row * p.ldc + col;
        x += p.beta * load_as_float(c);
        if (pair) y += p.beta * load_as_float(c + 1);
    }
    TO *d = static_cast<TO *>(p.d) + (int64_t)row * p.ldd + col;
    if (pair && p.vec2) {
        store_from_float2(d, x, y);
    } else {
        store_from_float(d, x);
        if (pair) store_from_float(d + 1, y);
    }
}

/* Element (r, kk) of an operand tile, rows of A (M) or of B^T (N), from storage whose contiguous dimension is K
 * (k_major) or the rows. */
__device__ __forceinline__ int64_t any_at(bool k_major, int64_t ld, int row, int kk)
{
    return k_major ? (int64_t)row * ld + kk : (int64_t)kk * ld + row;
}

/* The K loop both kernels share: fetch(kt) issues K tile kt's global loads into registers, stage(buf) stores them
 * into shared buffer buf, multiply(buf) runs the tile in buf. The next tile's loads are in flight while the current
 * one multiplies, and a buffer is restaged only after the barrier that ends the multiply before (one per tile). */
template <class Fetch, class Stage, class Multiply>
__device__ __forceinline__ void any_k_loop(int ktiles, Fetch fetch, Stage stage, Multiply multiply)
{
    if (ktiles > 0) {
        fetch(0);
        stage(0);
    }
    block_sync();
    for (int kt = 0; kt < ktiles; ++kt) {
        const bool more = kt + 1 < ktiles;
        if (more) fetch(kt + 1);
        multiply(kt & 1);
        if (more) stage((kt + 1) & 1);
        block_sync();
    }
}

/* 16-bit and fp8 operands: 128 x 128 tiles by 8 warps of 64 x 32 (2 x 4), K in tiles of 32 (16 pairs), each tile
 * row 16 words + 4 of padding, so that the eight rows a fragment load touches fall on distinct banks. */
template <class T, class TO>
__device__ __forceinline__ void gemm_any_mma(const gemm_params &p, const void *a, const void *b, int64_t lda,
                                             int64_t ldb, int layout)
{
    using in = any_in<T>;
    constexpr int bk = 32, pairs = bk / 2, pitch = pairs + 4, per_thread = any_tile * pairs / any_threads;
    __shared__ __align__(16) uint32_t sa[2][any_tile * pitch], sb[2][any_tile * pitch];
    int tm, tn;
    any_tile_of(block_x(), p, tm, tn);
    const int row0 = tm * any_tile, col0 = tn * any_tile, t = thread();
    const bool a_kmajor = !(layout & 1), b_kmajor = (layout & 2) != 0;
    /* this thread's pairs of an operand tile: K-major storage, pair t % 16 of rows t / 16 + 16 i (a warp reads two
     * rows of 32 consecutive elements); else row t % 128 of pairs t / 128 + 2 i (128 consecutive rows) */
    auto place = [&](bool kmajor, int i, int &r, int &kp) {
        r = kmajor ? t / pairs + (any_threads / pairs) * i : t % any_tile;
        kp = kmajor ? t % pairs : t / any_tile + (any_threads / any_tile) * i;
    };
    auto load = [&](const void *x, int64_t ld, bool kmajor, int rows, int r0, int k0, uint32_t (&w)[per_thread]) {
#pragma unroll
        for (int i = 0; i < per_thread; ++i) {
            int r, kp;
            place(kmajor, i, r, kp);
            const int row = r0 + r, kk = k0 + 2 * kp;
            uint32_t lo = 0, hi = 0;
            if (row < rows) {
                if (kk < p.k) lo = in::bits(x, any_at(kmajor, ld, row, kk));
                if (kk + 1 < p.k) hi = in::bits(x, any_at(kmajor, ld, row, kk + 1));
            }
            w[i] = lo | hi << 16;
        }
    };
    auto stage = [&](uint32_t *s, bool kmajor, const uint32_t (&w)[per_thread]) {
#pragma unroll
        for (int i = 0; i < per_thread; ++i) {
            int r, kp;
            place(kmajor, i, r, kp);
            s[r * pitch + kp] = w[i];
        }
    };
    const int wp = warp(), wm = wp / 4, wn = wp % 4, g = lane() / 4, q = lane() % 4;
    float acc[4][4][4] = {};
    uint32_t wa[per_thread], wb[per_thread];
    auto fetch = [&](int kt) {
        load(a, lda, a_kmajor, p.m, row0, kt * bk, wa);
        load(b, ldb, b_kmajor, p.n, col0, kt * bk, wb);
    };
    auto stage_both = [&](int buf) {
        stage(sa[buf], a_kmajor, wa);
        stage(sb[buf], b_kmajor, wb);
    };
    auto multiply = [&](int buf) {
        const uint32_t *ta = sa[buf], *tb = sb[buf];
#pragma unroll
        for (int ks = 0; ks < bk / 16; ++ks) {
            const int kw = ks * 8 + q;
            uint32_t fa[4][4], fb[4][2];
#pragma unroll
            for (int mt = 0; mt < 4; ++mt) {
                const int r = wm * 64 + mt * 16 + g;
                fa[mt][0] = ta[r * pitch + kw];
                fa[mt][1] = ta[(r + 8) * pitch + kw];
                fa[mt][2] = ta[r * pitch + kw + 4];
                fa[mt][3] = ta[(r + 8) * pitch + kw + 4];
            }
#pragma unroll
            for (int nt = 0; nt < 4; ++nt) {
                const int c = wn * 32 + nt * 8 + g;
                fb[nt][0] = tb[c * pitch + kw];
                fb[nt][1] = tb[c * pitch + kw + 4];
            }
#pragma unroll
            for (int mt = 0; mt < 4; ++mt)
#pragma unroll
                for (int nt = 0; nt < 4; ++nt) mma_m16n8k16<typename in::mma_t>(acc[mt][nt], fa[mt], fb[nt]);
        }
    };
    any_k_loop((p.k + bk - 1) / bk, fetch, stage_both, multiply);
#pragma unroll
    for (int mt = 0; mt < 4; ++mt)
#pragma unroll
        for (int nt = 0; nt < 4; ++nt)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = row0 + wm * 64 + mt * 16 + g + 8 * h, col = col0 + wn * 32 + nt * 8 + 2 * q;
                if (row < p.m && col < p.n) any_store_pair<TO>(p, row, col, acc[mt][nt][2 * h], acc[mt][nt][2 * h + 1]);
            }
}

/* fp32 operands: 128 x 128 tiles, each thread 8 x 8 outputs (rows 4 ty.. and 64 + 4 ty.., columns 4 tx.. and
 * 64 + 4 tx.., tx = thread % 16, ty = thread / 16), K in tiles of 16 staged K-major (a row of 128 + 4 floats per k:
 * 16-byte aligned float4 reads, the stores' banks spread). */
template <class T, class TO>
__device__ __forceinline__ void gemm_any_simt(const gemm_params &p, const void *a, const void *b, int64_t lda,
                                              int64_t ldb, int layout)
{
    static_assert(std::is_same_v<T, float>, "fp32 operands");
    constexpr int bk = 16, pitch = any_tile + 4, per_thread = any_tile * bk / any_threads;
    __shared__ __align__(16) float sa[2][bk * pitch], sb[2][bk * pitch];
    int tm, tn;
    any_tile_of(block_x(), p, tm, tn);
    const int row0 = tm * any_tile, col0 = tn * any_tile, t = thread();
    const bool a_kmajor = !(layout & 1), b_kmajor = (layout & 2) != 0;
    /* K-major storage: k t % 16 of rows t / 16 + 16 i; else row t % 128 of k t / 128 + 2 i */
    auto place = [&](bool kmajor, int i, int &r, int &kk) {
        r = kmajor ? t / bk + (any_threads / bk) * i : t % any_tile;
        kk = kmajor ? t % bk : t / any_tile + (any_threads / any_tile) * i;
    };
    auto load = [&](const float *x, int64_t ld, bool kmajor, int rows, int r0, int k0, float (&v)[per_thread]) {
#pragma unroll
        for (int i = 0; i < per_thread; ++i) {
            int r, kk;
            place(kmajor, i, r, kk);
            const int row = r0 + r, kg = k0 + kk;
            v[i] = row < rows && kg < p.k ? load_readonly(x + any_at(kmajor, ld, row, kg)) : 0.f;
        }
    };
    auto stage = [&](float *s, bool kmajor, const float (&v)[per_thread]) {
#pragma unroll
        for (int i = 0; i < per_thread; ++i) {
            int r, kk;
            place(kmajor, i, r, kk);
            s[kk * pitch + r] = v[i];
        }
    };
    const float *fa = static_cast<const float *>(a), *fb = static_cast<const float *>(b);
    const int tx = t % 16, ty = t / 16;
    float acc[8][8] = {};
    float va[per_thread], vb[per_thread];
    auto fetch = [&](int kt) {
        load(fa, lda, a_kmajor, p.m, row0, kt * bk, va);
        load(fb, ldb, b_kmajor, p.n, col0, kt * bk, vb);
    };
    auto stage_both = [&](int buf) {
        stage(sa[buf], a_kmajor, va);
        stage(sb[buf], b_kmajor, vb);
    };
    auto multiply = [&](int buf) {
        const float *ta = sa[buf], *tb = sb[buf];
#pragma unroll
        for (int kk = 0; kk < bk; ++kk) {
            const float4 a0 = *reinterpret_cast<const float4 *>(ta + kk * pitch + 4 * ty);
            const float4 a1 = *reinterpret_cast<const float4 *>(ta + kk * pitch + 64 + 4 * ty);
            const float4 b0 = *reinterpret_cast<const float4 *>(tb + kk * pitch + 4 * tx);
            const float4 b1 = *reinterpret_cast<const float4 *>(tb + kk * pitch + 64 + 4 * tx);
            const float ar[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float br[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(ar[i], br[j], acc[i][j]);
        }
    };
    any_k_loop((p.k + bk - 1) / bk, fetch, stage_both, multiply);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = row0 + (i < 4 ? 4 * ty + i : 64 + 4 * ty + i - 4);
#pragma unroll
        for (int j = 0; j < 8; j += 2) {
            const int col = col0 + (j < 4 ? 4 * tx + j : 64 + 4 * tx + j - 4);
            if (row < p.m && col < p.n) any_store_pair<TO>(p, row, col, acc[i][j], acc[i][j + 1]);
        }
    }
}

/* Rows x cols elements of ES bytes at src (ld_src apart) to dst, rows ld_dst apart (a multiple of 16 bytes, dst
 * 16-byte aligned), so that the TMA kernels can read them; the columns past cols up to ld_dst are written as zero.
 * A thread gathers 16 bytes of a row element by element and stores them as one vector. */
template <int ES>
__device__ __forceinline__ void gemm_repack(const void *src, int64_t ld_src, void *dst, int64_t ld_dst, int64_t rows,
                                            int64_t cols)
{
    using elem = std::conditional_t<ES == 1, uint8_t, uint16_t>;
    constexpr int per = 16 / ES;
    const elem *s = static_cast<const elem *>(src);
    const int64_t vecs = ld_dst / per, total = rows * vecs, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; v < total; v += stride) {
        const int64_t r = v / vecs, c0 = (v - r * vecs) * per;
        elem e[per];
#pragma unroll
        for (int i = 0; i < per; ++i) e[i] = c0 + i < cols ? load_readonly(s + r * ld_src + c0 + i) : elem(0);
        uint4 w;
        memcpy(&w, e, 16);
        *reinterpret_cast<uint4 *>(static_cast<elem *>(dst) + r * ld_dst + c0) = w;
    }
}

} // namespace hk::hopper

#define HK_GEMM_REPACK(es)                                                                                             \
    extern "C" __global__ void __launch_bounds__(HK_GEMM_ANY_THREADS)                                                  \
        hk_gemm_sm90_repack_##es(const void *src, int64_t ld_src, void *dst, int64_t ld_dst, int64_t rows,             \
                                 int64_t cols)                                                                         \
    {                                                                                                                  \
        hk::hopper::gemm_repack<es>(src, ld_src, dst, ld_dst, rows, cols);                                             \
    }
HK_GEMM_REPACK(1)
HK_GEMM_REPACK(2)

#define HK_GEMM_ANY_KERNEL(in, out, body, T, TO)                                                                       \
    extern "C" __global__ void __launch_bounds__(HK_GEMM_ANY_THREADS)                                                  \
        hk_gemm_sm90_any_##in##_##out(const hk::hopper::gemm_params p, const void *a, const void *b, int64_t lda,      \
                                      int64_t ldb, int layout)                                                         \
    {                                                                                                                  \
        hk::hopper::body<T, TO>(p, a, b, lda, ldb, layout);                                                            \
    }
#define HK_GEMM_ANY_MMA_OUT3(in, T)                                                                                    \
    HK_GEMM_ANY_KERNEL(in, bf16, gemm_any_mma, T, __nv_bfloat16)                                                       \
    HK_GEMM_ANY_KERNEL(in, f32, gemm_any_mma, T, float)                                                                \
    HK_GEMM_ANY_KERNEL(in, f16, gemm_any_mma, T, __half)
HK_GEMM_ANY_MMA_OUT3(bf16, __nv_bfloat16)
HK_GEMM_ANY_MMA_OUT3(f16, __half)
/* fp8: D in bf16 or f32 (hk.h) */
HK_GEMM_ANY_KERNEL(e4m3, bf16, gemm_any_mma, hk::hopper::e4m3_byte, __nv_bfloat16)
HK_GEMM_ANY_KERNEL(e4m3, f32, gemm_any_mma, hk::hopper::e4m3_byte, float)
HK_GEMM_ANY_KERNEL(e4m3fnuz, bf16, gemm_any_mma, hk::hopper::e4m3fnuz_byte, __nv_bfloat16)
HK_GEMM_ANY_KERNEL(e4m3fnuz, f32, gemm_any_mma, hk::hopper::e4m3fnuz_byte, float)
HK_GEMM_ANY_KERNEL(f32, bf16, gemm_any_simt, float, __nv_bfloat16)
HK_GEMM_ANY_KERNEL(f32, f32, gemm_any_simt, float, float)
HK_GEMM_ANY_KERNEL(f32, f16, gemm_any_simt, float, __half)
