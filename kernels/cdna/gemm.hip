/* GEMM for CDNA (gfx942, gfx950, and the wave emulator): D = alpha op(A) op(B) + beta C, bf16, f16, f32 (fp32
 * MFMA, not xf32) or fp8 in (the arch's e4m3), fp32 accumulation, bf16 / f16 / f32 out, any M, N, K and all four
 * transpose combinations.
 *
 * A block computes one BM x BN macro tile, walking K in steps of BK. Both operands go through LDS as K-contiguous
 * tiles (lds_tile), double-buffered: while the waves multiply step k out of one buffer, the block stores step k + 1
 * (loaded from global memory one step earlier and held in registers) into the other, and issues the global loads
 * of step k + 2. Each wave owns a TM x TN piece of the tile: per K slice KS it reads its A and B fragments (one
 * 16-byte ds_read per lane and fragment run) and issues the MFMAs of its TM x TN x KS product.
 *
 * Two schedules of that loop:
 * - ping-pong (8 waves, 256 x 256): the waves form two groups of four, one per SIMD each, offset by one barrier, so
 *   that on every SIMD one wave runs its MFMA phase (raised priority) while the other runs its memory phase
 *   (fragment reads, LDS stores, global loads); a barrier separates the phases. Per barrier interval a group either
 *   reads/writes LDS or multiplies; both groups finished reading the buffer a group writes before the preceding
 *   barrier, and read what it wrote only after the following one (the emulator checks every access for races).
 * - interleaved (4 waves, 128 x 128): one barrier per K step, each wave mixes its loads and MFMAs as the compiler
 *   schedules them; for problems too small to fill the GPU with 256 x 256 tiles, and (element-wise loads) for
 *   operands that are not in whole 16-byte vectors.
 * Blocks map to tiles XCD-aware (consecutive tiles on one chiplet, whose L2 they share) and grouped (group_m tile
 * rows swept along N together). The accumulators hold D transposed (mma_abt), so the epilogue writes each lane's
 * 4 consecutive columns as one vector. */
#include "tiles/common/tiles.hpp"
#include "tiles/cdna3/gemm_tiles.hpp"
#include "cdna/params.h"

namespace {

using namespace hk;

/* Per arch and input type: the MFMA atom, the K step (one LDS row: 64 bytes on gfx942, 128 on gfx950) and the K
 * slice read per fragment load (KS). */
template <typename T> struct gemm_arch;
#if HK_GFX >= 950
template <> struct gemm_arch<bf16> {
    using atom = mma_bf16_16x16x32;
    static constexpr int BK = 64, KS = 32;
};
template <> struct gemm_arch<fp8> {
    using atom = mma_fp8_32x32x64;
    static constexpr int BK = 128, KS = 64;
};
template <> struct gemm_arch<f16> {
    using atom = mma_f16_16x16x32;
    static constexpr int BK = 64, KS = 32;
};
template <> struct gemm_arch<float> {
    using atom = mma_group<mma_f32_16x16x4, 4>;
    static constexpr int BK = 32, KS = 16;
};
#else
template <> struct gemm_arch<bf16> {
    using atom = mma_pair<mma_bf16_16x16x16>;
    static constexpr int BK = 32, KS = 32;
};
template <> struct gemm_arch<fp8> {
    using atom = mma_pair<mma_fp8_16x16x32>;
    static constexpr int BK = 64, KS = 64;
};
template <> struct gemm_arch<f16> {
    using atom = mma_pair<mma_f16_16x16x16>;
    static constexpr int BK = 32, KS = 32;
};
template <> struct gemm_arch<float> {
    using atom = mma_group<mma_f32_16x16x4, 4>;
    static constexpr int BK = 16, KS = 16;
};
#endif

/* The macro tile of this block. The GPU deals blocks to its XCDs round robin (block b on XCD b % xcds): renumber
 * so that each XCD gets a contiguous range of tiles, then order tiles in groups of group_m tile rows. */
HK_DEV void block_tile(const hk_gemm_params &p, int &tm, int &tn)
{
    const int tiles = p.tiles_m * p.tiles_n, b = block_x(), x = b % p.xcds;
    const int id = x * (tiles / p.xcds) + (x < tiles % p.xcds ? x : tiles % p.xcds) + b / p.xcds;
    const int per_group = p.group_m * p.tiles_n, first = id / per_group * p.group_m;
    const int rows = p.tiles_m - first < p.group_m ? p.tiles_m - first : p.group_m;
    tm = first + id % per_group % rows;
    tn = id % per_group / rows;
}

template <typename TO, typename L, int R, int C>
HK_DEV void epilogue(const hk_gemm_params &p, const rt<float, R, C, L> &acc, int m0, int n0, int BM, int BN, int wm,
                     int wn)
{
    const int rows = p.m - m0, cols = p.n - n0;
    const out_view<TO> d = out_view<TO>::make(static_cast<TO *>(p.d) + m0 * p.ldd + n0, p.ldd, rows, cols, BM, BN,
                                              p.vec_d);
    out_view<TO> c = d;
    if (p.beta != 0.0f)
        c = out_view<TO>::make(static_cast<const TO *>(p.c) + m0 * p.ldc + n0, p.ldc, rows, cols, BM, BN, p.vec_c);
    const int l = lane();
    HK_UNROLL
    for (int j = 0; j < acc.kTR; ++j)
        HK_UNROLL
        for (int i = 0; i < acc.kTC; ++i)
            HK_UNROLL
            for (int e = 0; e < L::kElems; e += L::kRowRun) {
                const int m = wm + i * L::kCols + L::col(l, e), n = wn + j * L::kRows + L::row(l, e);
                float v[4];
                HK_UNROLL
                for (int q = 0; q < 4; ++q)
                    v[q] = p.alpha * acc.d[j][i][e + q];
                if (p.beta != 0.0f) {
                    float old[4];
                    c.load4(m, n, old);
                    HK_UNROLL
                    for (int q = 0; q < 4; ++q)
                        v[q] += p.beta * old[q];
                }
                d.store4(m, n, v);
            }
}

template <typename T, int BM, int BN, int WAVES_M, int WAVES_N, bool PingPong, bool Aligned, bool TA, bool TB>
HK_DEV void gemm(const hk_gemm_params &p)
{
    using arch = gemm_arch<T>;
    using Atom = typename arch::atom;
    constexpr int BK = arch::BK, KS = arch::KS, kThreads = 64 * WAVES_M * WAVES_N;
    constexpr int TM = BM / WAVES_M, TN = BN / WAVES_N;
    static_assert(!PingPong || WAVES_M * WAVES_N == 8, "ping-pong pairs the waves of two groups of four");
    static_assert(TM % lds_tile<T, BM, BK>::kRowPeriod == 0 && TN % lds_tile<T, BN, BK>::kRowPeriod == 0,
                  "wave tiles start on a swizzle period");
    HK_LDS(T, lds, 2 * (BM + BN) * BK);

    int tm, tn;
    block_tile(p, tm, tn);
    const int m0 = tm * BM, n0 = tn * BN;
    const T *a = static_cast<const T *>(p.a), *b = static_cast<const T *>(p.b);
    stage<T, BM, BK, !TA, Aligned, kThreads> sa{{TA ? a + m0 : a + m0 * p.lda, p.m - m0, p.k, (int32_t)p.lda}, {}};
    stage<T, BN, BK, TB, Aligned, kThreads> sb{{TB ? b + n0 * p.ldb : b + n0, p.n - n0, p.k, (int32_t)p.ldb}, {}};
    auto as = [&](int s) { return lds_tile<T, BM, BK>{lds + s * BM * BK}; };
    auto bs = [&](int s) { return lds_tile<T, BN, BK>{lds + 2 * BM * BK + s * BN * BK}; };

    const int w = warp(), wm = w / WAVES_N * TM, wn = w % WAVES_N * TN;
    const bool late = PingPong && w >= 4; /* the ping-pong group that starts one phase behind */
    rt<T, TM, KS, typename Atom::A> af;
    rt<T, TN, KS, typename Atom::A> bf;
    rt<float, TN, TM, typename Atom::C> acc;
    zero(acc);

    const int nk = (p.k + BK - 1) / BK;
    if (nk > 0) {
        sa.load(0), sb.load(0);
        sa.store(as(0)), sb.store(bs(0));
    }
    if (nk > 1)
        sa.load(1), sb.load(1);
    raw::lds_barrier();
    if (late)
        raw::lds_barrier();
    auto phase = [] {
        if constexpr (PingPong) {
            raw::sched_fence();
            raw::lds_barrier();
            raw::sched_fence();
        }
    };

#if defined(__clang__)
#pragma clang loop unroll(disable)
#endif
    for (int k = 0; k < nk; ++k) {
        const int cur = k & 1;
        HK_UNROLL
        for (int h = 0; h < BK / KS; ++h) {
            if (h == 0 && k + 1 < nk)
                sa.store(as(cur ^ 1)), sb.store(bs(cur ^ 1));
            load(af, as(cur), wm, h * KS);
            load(bf, bs(cur), wn, h * KS);
            if (h == 0 && k + 2 < nk)
                sa.load(k + 2), sb.load(k + 2);
            phase();
            raw::set_prio<1>();
            mma_abt<Atom>(acc, af, bf);
            raw::set_prio<0>();
            phase();
        }
        if constexpr (!PingPong)
            raw::lds_barrier();
    }
    if (PingPong && !late)
        raw::lds_barrier();

    switch (p.d_type) {
    case HK_GEMM_OUT_BF16: epilogue<bf16>(p, acc, m0, n0, BM, BN, wm, wn); break;
    case HK_GEMM_OUT_F16: epilogue<f16>(p, acc, m0, n0, BM, BN, wm, wn); break;
    default: epilogue<float>(p, acc, m0, n0, BM, BN, wm, wn); break;
    }
}

} // namespace

/* hk_gemm_<in: bf16, f16, f32, fp8>_<op(A) op(B): n plain, t transposed>_<schedule>[_u: unaligned operands]; the
 * host picks one (backends/hip/cdna_plan.c). */
#define HK_GEMM_KERNEL(T, name, ta, tb, BM, BN, WM, WN, PP, AL, threads)                                        \
    HK_KERNEL(name, hk_gemm_params, threads) { gemm<T, BM, BN, WM, WN, PP, AL, ta, tb>(p); }
#define HK_GEMM_LAYOUTS(T, tn, sched, BM, BN, WM, WN, PP, AL, threads)                                          \
    HK_GEMM_KERNEL(T, hk_gemm_##tn##_nn_##sched, false, false, BM, BN, WM, WN, PP, AL, threads)                \
    HK_GEMM_KERNEL(T, hk_gemm_##tn##_nt_##sched, false, true, BM, BN, WM, WN, PP, AL, threads)                 \
    HK_GEMM_KERNEL(T, hk_gemm_##tn##_tn_##sched, true, false, BM, BN, WM, WN, PP, AL, threads)                 \
    HK_GEMM_KERNEL(T, hk_gemm_##tn##_tt_##sched, true, true, BM, BN, WM, WN, PP, AL, threads)
#define HK_GEMM_TYPE(T, tn)                                                                                     \
    HK_GEMM_LAYOUTS(T, tn, pp256, 256, 256, 2, 4, true, true, 512)                                              \
    HK_GEMM_LAYOUTS(T, tn, i128, 128, 128, 2, 2, false, true, 256)                                              \
    HK_GEMM_LAYOUTS(T, tn, i128_u, 128, 128, 2, 2, false, false, 256)

HK_GEMM_TYPE(hk::bf16, bf16)
HK_GEMM_TYPE(hk::f16, f16)
HK_GEMM_TYPE(float, f32)
HK_GEMM_TYPE(hk::fp8, fp8)
