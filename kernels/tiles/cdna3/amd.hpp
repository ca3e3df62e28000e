/* The AMD CDNA arch layer of tiles/common/tiles.hpp, written over hk::raw only (no builtins here), so the same
 * text serves gfx942, gfx950 (HK_GFX = 942 / 950) and the wave emulator (whose hk::raw is tiles/emu/raw.hpp). */
#ifndef HK_TILES_CDNA3_AMD_HPP
#define HK_TILES_CDNA3_AMD_HPP

#if !defined(HK_GFX)
#error "define HK_GFX (942 or 950) before including amd.hpp"
#endif

namespace hk {

/* ---------------------------------------------------------------- geometry: 1-D blocks of 64-lane waves */
constexpr int kWarpLanes = 64;
HK_DEV int thread() { return raw::thread_id(); }
HK_DEV int lane() { return raw::thread_id() & 63; }
HK_DEV int warp() { return raw::uniform(raw::thread_id() >> 6); }
HK_DEV int num_warps() { return (raw::block_dim() + 63) >> 6; }
HK_DEV int block_x() { return raw::block_id(0); }
HK_DEV int block_y() { return raw::block_id(1); }
HK_DEV int block_z() { return raw::block_id(2); }
HK_DEV void block_sync() { raw::barrier(); }

/* ---------------------------------------------------------------- numbers */
HK_DEV float to_float(float x) { return x; }
HK_DEV float to_float(bf16 x) { return __builtin_bit_cast(float, (uint32_t)x.bits << 16); }
HK_DEV float to_float(f16 x) { return raw::f16_to_f32(x.bits); }
template <typename T> HK_DEV T from_float(float x);
template <> HK_DEV float from_float<float>(float x) { return x; }
template <> HK_DEV bf16 from_float<bf16>(float x) { return {raw::f32_to_bf16(x)}; }
template <> HK_DEV f16 from_float<f16>(float x) { return {raw::f32_to_f16(x)}; }

HK_DEV float exp2_fast(float x) { return raw::exp2(x); }
HK_DEV float rcp_fast(float x) { return raw::rcp(x); }
HK_DEV float rsqrt_fast(float x) { return raw::rsq(x); }
HK_DEV float log2_fast(float x) { return raw::log2(x); }
/* tanh(x) = 1 - 2 / (e^2x + 1) on the hardware exp2 and rcp: exact limits (+-1 once e^2x overflows or flushes),
 * an absolute error of a few 1e-7 near 0 (where the subtraction cancels), which is what softcap needs. */
HK_DEV float tanh_fast(float x) { return 1.0f - 2.0f * raw::rcp(raw::exp2(x * 2.8853900817779268f) + 1.0f); }

/* ---------------------------------------------------------------- wave reductions
 * Butterfly in DPP/swizzle steps: xor 1, xor 2 (quad_perm), xor 4 (row_half_mirror), xor 8 (row_mirror), xor 16
 * (ds_swizzle), then lanes 0 and 32. Every lane adds the same two partials in each step, so all lanes end with
 * bit-identical results. Needs the whole wave active (kernels keep idle lanes alive, contributing 0 / -inf). */
template <typename Op> HK_DEV float wave_reduce(float v, Op op)
{
    auto f = [](int i) { return __builtin_bit_cast(float, i); };
    auto u = [](float x) { return __builtin_bit_cast(int, x); };
    v = op(v, f(raw::dpp<0xB1>(0, u(v))));  /* quad_perm [1,0,3,2] */
    v = op(v, f(raw::dpp<0x4E>(0, u(v))));  /* quad_perm [2,3,0,1] */
    v = op(v, f(raw::dpp<0x141>(0, u(v)))); /* row_half_mirror */
    v = op(v, f(raw::dpp<0x140>(0, u(v)))); /* row_mirror */
    v = op(v, f(raw::swizzle<0x401F>(u(v)))); /* and 0x1f, xor 16 */
    return op(f(raw::readlane(u(v), 0)), f(raw::readlane(u(v), 32)));
}
HK_DEV float warp_sum(float v)
{
    return wave_reduce(v, [](float a, float b) { return a + b; });
}
HK_DEV float warp_max(float v)
{
    return wave_reduce(v, [](float a, float b) { return a > b ? a : b; });
}
HK_DEV float shfl_xor(float v, int mask)
{
    return __builtin_bit_cast(float, raw::bpermute((lane() ^ mask) << 2, __builtin_bit_cast(int, v)));
}
HK_DEV uint64_t warp_ballot(bool pred) { return raw::ballot(pred); }
/* Every lane of an aligned group of 32 / Bits lanes gets the group's fields in lane order. One bit per lane: the
 * ballot's half holding the group. Wider fields: shifted into place and OR-ed over the group by the first
 * log2(32 / Bits) steps of wave_reduce (once quads agree, each mirror pairs a lane with the group's other half). */
template <int Bits> HK_DEV uint32_t pack_lane_bits(uint32_t field)
{
    static_assert(Bits >= 1 && Bits <= 32 && 32 % Bits == 0, "pack_lane_bits: Bits divides 32");
    constexpr int G = 32 / Bits;
    if constexpr (Bits == 1) {
        return (uint32_t)(warp_ballot(field & 1) >> (lane() & 32));
    } else {
        int w = (int)(field << (lane() % G * Bits));
        if constexpr (G > 1)
            w |= raw::dpp<0xB1>(0, w); /* quad_perm [1,0,3,2] */
        if constexpr (G > 2)
            w |= raw::dpp<0x4E>(0, w); /* quad_perm [2,3,0,1] */
        if constexpr (G > 4)
            w |= raw::dpp<0x141>(0, w); /* row_half_mirror */
        if constexpr (G > 8)
            w |= raw::dpp<0x140>(0, w); /* row_mirror */
        if constexpr (G > 16)
            w |= raw::swizzle<0x401F>(w); /* xor 16 */
        return (uint32_t)w;
    }
}

/* ---------------------------------------------------------------- range-checked buffers
 * One buffer resource per view; num_records is 32-bit, so a view spans < 4 GiB (kernels make one per row). */
template <typename T> struct buf {
    raw::rsrc r;
};
template <typename T> HK_DEV buf<T> make_buf(const T *p, uint32_t n) { return {raw::make_rsrc(p, n * (uint32_t)sizeof(T))}; }

template <int N, typename T> HK_DEV vec<T, N> load_vec(const buf<T> &b, uint32_t i)
{
    return __builtin_bit_cast(vec<T, N>, raw::buffer_load<N * sizeof(T)>(b.r, i * (uint32_t)sizeof(T)));
}
template <int N, typename T> HK_DEV void store_vec(const buf<T> &b, uint32_t i, const vec<T, N> &v)
{
    raw::buffer_store<N * sizeof(T)>(b.r, i * (uint32_t)sizeof(T), __builtin_bit_cast(raw::bytes_t<N * sizeof(T)>, v));
}

/* ---------------------------------------------------------------- LDS geometry (docs/amd/lds.md)
 * Bytes per workgroup, and the bank line: banks x 4 bytes, the span one conflict-free access phase covers. */
constexpr int kLdsBytes = HK_GFX >= 950 ? 160 * 1024 : 64 * 1024;
constexpr int kBankLineBytes = HK_GFX >= 950 ? 256 : 128;

/* ---------------------------------------------------------------- MFMA fragment layouts (docs/amd/mfma.md)
 * ab<M, KL>: an operand fragment with KL items per lane. As A it is M x (KL * 64 / M): item e of lane l is
 * A[l % M][KL * (l / M) + e]. As B (the mirror, K x N) it is B[KL * (l / N) + e][l % N].
 * kColRun / kRowRun: items e .. e + run - 1 (e a multiple of the run) sit in consecutive columns / rows, which is
 * what vector loads and stores of a fragment rely on. */
template <int M, int KL> struct layout_a {
    static constexpr int kRows = M, kCols = KL * (64 / M), kElems = KL, kColLaneMask = 0;
    static constexpr int kColRun = KL, kRowRun = 1;
    HK_DEV static int row(int l, int) { return l % M; }
    HK_DEV static int col(int l, int e) { return KL * (l / M) + e; }
};
template <int N, int KL> struct layout_b {
    static constexpr int kRows = KL * (64 / N), kCols = N, kElems = KL, kColLaneMask = 0;
    static constexpr int kColRun = 1, kRowRun = KL;
    HK_DEV static int row(int l, int e) { return KL * (l / N) + e; }
    HK_DEV static int col(int l, int) { return l % N; }
};
/* gfx950 fp8 (f8f6f4) operands: byte e of lane l holds k = (KB * 4) * (e / 16) + 16 * (l / M) + e % 16, with
 * KB = 64 / M lane groups: 16x16x128 -> 64 * (e / 16) + 16 * (l / 16) + e % 16; 32x32x64 -> 32 * (e / 16) + ... */
template <int M> struct layout_a_f8f6f4 {
    static constexpr int kRows = M, kCols = 32 * (64 / M), kElems = 32, kColLaneMask = 0;
    static constexpr int kColRun = 16, kRowRun = 1;
    HK_DEV static int row(int l, int) { return l % M; }
    HK_DEV static int col(int l, int e) { return 16 * (64 / M) * (e / 16) + 16 * (l / M) + e % 16; }
};
template <int N> struct layout_b_f8f6f4 {
    static constexpr int kRows = 32 * (64 / N), kCols = N, kElems = 32, kColLaneMask = 0;
    static constexpr int kColRun = 1, kRowRun = 16;
    HK_DEV static int row(int l, int e) { return 16 * (64 / N) * (e / 16) + 16 * (l / N) + e % 16; }
    HK_DEV static int col(int l, int) { return l % N; }
};
/* Accumulator M x N, M_I = 64 / N lane groups: item r of lane l is D[4 * M_I * (r / 4) + 4 * (l / N) + r % 4][l % N]. */
template <int M, int N> struct layout_c {
    static constexpr int kRows = M, kCols = N, kElems = M * N / 64, kColLaneMask = N - 1;
    static constexpr int kColRun = 1, kRowRun = 4;
    HK_DEV static int row(int l, int r) { return 4 * (64 / N) * (r / 4) + 4 * (l / N) + r % 4; }
    HK_DEV static int col(int l, int) { return l % N; }
};

/* MMA atoms: one MFMA instruction each, with the layouts of its operands (tiles.hpp mma()). The 16-bit forms
 * (bf16, f16) share one shape: atom16<T, M, KL, fn> calls raw fn on the bits of T. */
template <typename T, int M, int KL, void (*Fn)(float (&)[M * M / 64], const uint16_t (&)[KL], const uint16_t (&)[KL])>
struct atom16 {
    using A = layout_a<M, KL>;
    using B = layout_b<M, KL>;
    using C = layout_c<M, M>;
    HK_DEV static void mma(float (&c)[M * M / 64], const T (&a)[KL], const T (&b)[KL])
    {
        Fn(c, reinterpret_cast<const uint16_t(&)[KL]>(a), reinterpret_cast<const uint16_t(&)[KL]>(b));
    }
};
using mma_bf16_16x16x16 = atom16<bf16, 16, 4, raw::mfma_16x16x16_bf16>;
using mma_bf16_32x32x8 = atom16<bf16, 32, 4, raw::mfma_32x32x8_bf16>;
using mma_f16_16x16x16 = atom16<f16, 16, 4, raw::mfma_16x16x16_f16>;
using mma_f16_32x32x8 = atom16<f16, 32, 4, raw::mfma_32x32x8_f16>;
/* fp32: one item of A and B per lane (fp32 products, not the xf32 form) */
struct mma_f32_16x16x4 {
    using A = layout_a<16, 1>;
    using B = layout_b<16, 1>;
    using C = layout_c<16, 16>;
    HK_DEV static void mma(float (&c)[4], const float (&a)[1], const float (&b)[1]) { raw::mfma_16x16x4_f32(c, a, b); }
};
#if HK_GFX >= 950
using mma_bf16_16x16x32 = atom16<bf16, 16, 8, raw::mfma_16x16x32_bf16>;
using mma_bf16_32x32x16 = atom16<bf16, 32, 8, raw::mfma_32x32x16_bf16>;
using mma_f16_16x16x32 = atom16<f16, 16, 8, raw::mfma_16x16x32_f16>;
using mma_f16_32x32x16 = atom16<f16, 32, 8, raw::mfma_32x32x16_f16>;
struct mma_fp8_16x16x128 {
    using A = layout_a_f8f6f4<16>;
    using B = layout_b_f8f6f4<16>;
    using C = layout_c<16, 16>;
    HK_DEV static void mma(float (&c)[4], const fp8 (&a)[32], const fp8 (&b)[32])
    {
        raw::mfma_16x16x128_fp8(c, reinterpret_cast<const uint8_t(&)[32]>(a), reinterpret_cast<const uint8_t(&)[32]>(b));
    }
};
struct mma_fp8_32x32x64 {
    using A = layout_a_f8f6f4<32>;
    using B = layout_b_f8f6f4<32>;
    using C = layout_c<32, 32>;
    HK_DEV static void mma(float (&c)[16], const fp8 (&a)[32], const fp8 (&b)[32])
    {
        raw::mfma_32x32x64_fp8(c, reinterpret_cast<const uint8_t(&)[32]>(a), reinterpret_cast<const uint8_t(&)[32]>(b));
    }
};
/* The densest forms are the defaults. */
using mma_bf16 = mma_bf16_16x16x32;
using mma_bf16_32 = mma_bf16_32x32x16;
using mma_f16 = mma_f16_16x16x32;
using mma_f16_32 = mma_f16_32x32x16;
using mma_fp8 = mma_fp8_16x16x128;
using mma_fp8_32 = mma_fp8_32x32x64;
#else
struct mma_fp8_16x16x32 {
    using A = layout_a<16, 8>;
    using B = layout_b<16, 8>;
    using C = layout_c<16, 16>;
    HK_DEV static void mma(float (&c)[4], const fp8 (&a)[8], const fp8 (&b)[8])
    {
        raw::mfma_16x16x32_fp8(c, reinterpret_cast<const uint8_t(&)[8]>(a), reinterpret_cast<const uint8_t(&)[8]>(b));
    }
};
struct mma_fp8_32x32x16 {
    using A = layout_a<32, 8>;
    using B = layout_b<32, 8>;
    using C = layout_c<32, 32>;
    HK_DEV static void mma(float (&c)[16], const fp8 (&a)[8], const fp8 (&b)[8])
    {
        raw::mfma_32x32x16_fp8(c, reinterpret_cast<const uint8_t(&)[8]>(a), reinterpret_cast<const uint8_t(&)[8]>(b));
    }
};
using mma_bf16 = mma_bf16_16x16x16;
using mma_bf16_32 = mma_bf16_32x32x8;
using mma_f16 = mma_f16_16x16x16;
using mma_f16_32 = mma_f16_32x32x8;
using mma_fp8 = mma_fp8_16x16x32;
using mma_fp8_32 = mma_fp8_32x32x16;
#endif

/* G atoms over one lane vector of G KL items, atom g taking items [g KL, (g + 1) KL): as one atom it is M x N x GK
 * with the layouts of G KL items per lane (lane l holds k = G KL (l / M) + e). It sums the same products as a single
 * GK-deep instruction would, grouped per atom (docs/amd/mfma.md: a k relabelling applied to A and B alike is exact
 * up to rounding order). gfx942 pairs its 16-bit and fp8 atoms, and both archs group four fp32 atoms, so that a
 * fragment is one 16-byte LDS read, as with the gfx950 double-depth MFMAs. */
template <typename Atom, int G> struct mma_group {
    static constexpr int M = Atom::A::kRows, N = Atom::B::kCols, KL = Atom::A::kElems;
    using A = layout_a<M, G * KL>;
    using B = layout_b<N, G * KL>;
    using C = typename Atom::C;
    template <typename T> HK_DEV static void mma(float (&c)[C::kElems], const T (&a)[G * KL], const T (&b)[G * KL])
    {
        typedef const T part[KL];
        HK_UNROLL
        for (int g = 0; g < G; ++g)
            Atom::mma(c, reinterpret_cast<part &>(a[g * KL]), reinterpret_cast<part &>(b[g * KL]));
    }
};
template <typename Atom> using mma_pair = mma_group<Atom, 2>;

} // namespace hk

#endif
