/* hk::raw for the wave emulator: the names of tiles/cdna3|cdna4/raw.hpp, implemented on the host from the
 * documented semantics (docs/amd/, one file per section below). Per-lane operations run inline
 * on the lane's fiber; cross-lane ones are wave collectives (tiles/emu/emu.h). The MFMA operand/result layouts
 * are written here in the ISA's forward direction ((row, k) -> (lane, item)), independently of the inverse
 * maps in cdna3/amd.hpp, so the primitive tests cross-check the two. */
#ifndef HK_TILES_EMU_RAW_HPP
#define HK_TILES_EMU_RAW_HPP

#include "../cdna3/bytes.hpp"
#include "emu.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <type_traits>

#define __host__
#define __device__
#define HK_DEV inline
#define HK_EMU_CAT2(a, b) a##b
#define HK_EMU_CAT(a, b) HK_EMU_CAT2(a, b)
/* The emulated kernel: a static entry taking a pointer to its parameters, registered under its name and arch
 * at load time (hk_emu_register), so the executor finds it by the same name the GPU module exports. */
#define HK_KERNEL(name, P, N)                                                                                  \
    static void HK_EMU_CAT(name, _body)(const P p);                                                           \
    static void HK_EMU_CAT(name, _entry)(const void *a) { HK_EMU_CAT(name, _body)(*static_cast<const P *>(a)); } \
    static hk_emu_kernel HK_EMU_CAT(name, _reg) = {#name, HK_GFX, N, HK_EMU_CAT(name, _entry), nullptr};       \
    [[maybe_unused]] static const int HK_EMU_CAT(name, _registered) = hk_emu_register(&HK_EMU_CAT(name, _reg));                 \
    static void HK_EMU_CAT(name, _body)(const P p)
#define HK_LDS(T, name, n) T *const name = static_cast<T *>(hk_emu_lds(sizeof(T) * (n), alignof(T)))

namespace hk {
namespace raw {

/* ---------------------------------------------------------------- geometry */
inline int thread_id() { return hk_emu_self()->tid; }
inline int block_dim() { return hk_emu_self()->block_dim; }
inline int block_id(int dim) { return (int)hk_emu_self()->block[dim]; }
/* readfirstlane of a value the kernel already keeps wave-uniform. */
inline int uniform(int v) { return v; }
inline void barrier() { hk_emu_barrier(); }
inline void lds_barrier() { hk_emu_barrier(); }
/* Scheduling hints of the GPU: no effect on what a kernel computes. */
inline void sched_fence() {}
template <int P> inline void set_prio() {}
inline int lane_id() { return hk_emu_self()->tid & 63; }

/* v_perm_b32 with the byte selectors 0-7 (byte i of the result is byte sel[i] of {hi:lo}) and 0x0C (zero); the
 * GPU's other selector codes are not emulated. */
inline uint32_t perm(uint32_t hi, uint32_t lo, uint32_t sel)
{
    const uint64_t x = (uint64_t)hi << 32 | lo;
    uint32_t r = 0;
    for (int i = 0; i < 4; ++i) {
        const uint32_t s = sel >> (8 * i) & 0xFF;
        if (s > 7 && s != 0x0C)
            hk_emu_fault("v_perm_b32 selector not emulated");
        r |= (s == 0x0C ? 0u : (uint32_t)(x >> (8 * s) & 0xFF)) << (8 * i);
    }
    return r;
}

/* ------------------------------------------------ conversions and transcendentals (docs/amd/numbers.md) */
inline uint16_t f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((u >> 16) | 0x40);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
inline uint16_t f32_to_f16(float f)
{
    _Float16 h = (_Float16)f;
    uint16_t r;
    memcpy(&r, &h, 2);
    return r;
}
inline float f16_to_f32(uint16_t b)
{
    _Float16 h;
    memcpy(&h, &b, 2);
    return (float)h;
}
/* Hardware transcendentals flush denormals on input and output; the value is the correctly rounded one
 * (the GPU is within 1 ulp of it). */
inline float flush(float x) { return fabsf(x) < 1.17549435e-38f ? copysignf(0.0f, x) : x; }
inline float exp2(float x) { return flush((float)::exp2((double)flush(x))); }
inline float rcp(float x) { return flush((float)(1.0 / (double)flush(x))); }
inline float rsq(float x) { return flush((float)(1.0 / ::sqrt((double)flush(x)))); }
/* v_log_f32: log2, denormal inputs flushed (log2(0) = -inf, negative inputs NaN). */
inline float log2(float x) { return (float)::log2((double)flush(x)); }

/* ---------------------------------------------------------------- cross-lane (docs/amd/cross-lane.md) */
struct lane_io {
    int a, b, out;
};
inline bool all_lanes(uint64_t exec) { return exec == ~0ull; }

/* DPP source lane of lane l for ctrl, or -1 when the source is invalid (GFX9 encodings). */
inline int dpp_source(int ctrl, int l)
{
    if (ctrl <= 0xFF)
        return (l & ~3) | ((ctrl >> (2 * (l & 3))) & 3);
    if (ctrl >= 0x101 && ctrl <= 0x10F)
        return l % 16 + (ctrl - 0x100) < 16 ? l + (ctrl - 0x100) : -1;
    if (ctrl >= 0x111 && ctrl <= 0x11F)
        return l % 16 >= ctrl - 0x110 ? l - (ctrl - 0x110) : -1;
    if (ctrl >= 0x121 && ctrl <= 0x12F)
        return (l & ~15) | ((l - (ctrl - 0x120)) & 15);
    switch (ctrl) {
    case 0x130: return l < 63 ? l + 1 : -1; /* wave_shl:1 */
    case 0x134: return (l + 1) & 63;        /* wave_rol:1 */
    case 0x138: return l > 0 ? l - 1 : -1;  /* wave_shr:1 */
    case 0x13C: return (l - 1) & 63;        /* wave_ror:1 */
    case 0x140: return (l & ~15) | (15 - l % 16);
    case 0x141: return (l & ~7) | (7 - l % 8);
    case 0x142: return l >= 16 ? (l & 0x30) - 1 : -1;
    case 0x143: return l >= 32 ? 31 : -1;
    default: return -2; /* not a GFX9 control */
    }
}

template <int Ctrl, int RowMask, int BankMask, bool BoundCtrl> void dpp_op(void *const io[64], uint64_t exec, const void *)
{
    int src[64], old[64];
    for (int l = 0; l < 64; ++l)
        if (io[l]) {
            src[l] = static_cast<lane_io *>(io[l])->b;
            old[l] = static_cast<lane_io *>(io[l])->a;
        }
    for (int l = 0; l < 64; ++l) {
        if (!io[l])
            continue;
        int s = dpp_source(Ctrl, l), r;
        if (s == -2)
            return hk_emu_fault("DPP control not valid on GFX9");
        if (!(RowMask >> (l / 16) & 1) || !(BankMask >> ((l % 16) / 4) & 1))
            r = old[l];
        else if (s < 0)
            r = BoundCtrl ? 0 : old[l];
        else if (!(exec >> s & 1))
            return hk_emu_fault("DPP read from an EXEC-disabled lane (undefined on hardware)");
        else
            r = src[s];
        static_cast<lane_io *>(io[l])->out = r;
    }
}
template <int Ctrl, int RowMask = 0xf, int BankMask = 0xf, bool BoundCtrl = true> inline int dpp(int old, int src)
{
    lane_io io = {old, src, 0};
    hk_emu_collective(dpp_op<Ctrl, RowMask, BankMask, BoundCtrl>, &io, nullptr, 0);
    return io.out;
}

template <int Pattern> void swizzle_op(void *const io[64], uint64_t exec, const void *)
{
    static_assert(Pattern < 0xC000, "ds_swizzle rotate/FFT modes are not emulated");
    int v[64];
    for (int l = 0; l < 64; ++l)
        if (io[l])
            v[l] = static_cast<lane_io *>(io[l])->a;
    for (int l = 0; l < 64; ++l) {
        if (!io[l])
            continue;
        int s;
        if (Pattern & 0x8000)
            s = (l & ~3) | ((Pattern >> (2 * (l & 3))) & 3);
        else
            s = ((((l & 31) & (Pattern & 31)) | ((Pattern >> 5) & 31)) ^ ((Pattern >> 10) & 31)) | (l & 32);
        static_cast<lane_io *>(io[l])->out = exec >> s & 1 ? v[s] : 0;
    }
}
template <int Pattern> inline int swizzle(int v)
{
    lane_io io = {v, 0, 0};
    hk_emu_collective(swizzle_op<Pattern>, &io, nullptr, 0);
    return io.out;
}

inline void bpermute_op(void *const io[64], uint64_t exec, const void *)
{
    int v[64];
    for (int l = 0; l < 64; ++l)
        if (io[l])
            v[l] = static_cast<lane_io *>(io[l])->b;
    for (int l = 0; l < 64; ++l)
        if (io[l]) {
            int s = (int)(((unsigned)static_cast<lane_io *>(io[l])->a / 4) % 64);
            static_cast<lane_io *>(io[l])->out = exec >> s & 1 ? v[s] : 0;
        }
}
inline int bpermute(int byte_addr, int v)
{
    lane_io io = {byte_addr, v, 0};
    hk_emu_collective(bpermute_op, &io, nullptr, 0);
    return io.out;
}

inline void readlane_op(void *const io[64], uint64_t exec, const void *imm)
{
    int s;
    memcpy(&s, imm, sizeof s);
    s &= 63;
    if (!(exec >> s & 1))
        return hk_emu_fault("readlane of an exited lane (its register value is unknown)");
    int v = static_cast<lane_io *>(io[s])->a;
    for (int l = 0; l < 64; ++l)
        if (io[l])
            static_cast<lane_io *>(io[l])->out = v;
}
/* The lane index is an SGPR operand: it must be wave-uniform (checked). */
inline int readlane(int v, int lane)
{
    lane_io io = {v, 0, 0};
    hk_emu_collective(readlane_op, &io, &lane, sizeof lane);
    return io.out;
}

struct ballot_io {
    int pred;
    uint64_t out;
};
inline void ballot_op(void *const io[64], uint64_t exec, const void *)
{
    uint64_t m = 0;
    for (int l = 0; l < 64; ++l)
        if (exec >> l & 1 && static_cast<ballot_io *>(io[l])->pred)
            m |= 1ull << l;
    for (int l = 0; l < 64; ++l)
        if (io[l])
            static_cast<ballot_io *>(io[l])->out = m;
}
/* v_cmp into an SGPR pair: exited lanes contribute 0. */
inline uint64_t ballot(bool pred)
{
    ballot_io io = {pred, 0};
    hk_emu_collective(ballot_op, &io, nullptr, 0);
    return io.out;
}

inline void permlane32_swap_op(void *const io[64], uint64_t exec, const void *)
{
    if (!all_lanes(exec))
        return hk_emu_fault("permlane32_swap with EXEC-disabled lanes (not emulated)");
    int x[64], y[64];
    for (int l = 0; l < 64; ++l) {
        x[l] = static_cast<lane_io *>(io[l])->a;
        y[l] = static_cast<lane_io *>(io[l])->b;
    }
    for (int l = 0; l < 64; ++l) {
        static_cast<lane_io *>(io[l])->a = l < 32 ? x[l] : y[l - 32];
        static_cast<lane_io *>(io[l])->b = l < 32 ? x[l + 32] : y[l];
    }
}
inline void permlane32_swap(uint32_t &x, uint32_t &y)
{
    lane_io io = {(int)x, (int)y, 0};
    hk_emu_collective(permlane32_swap_op, &io, nullptr, 0);
    x = (uint32_t)io.a;
    y = (uint32_t)io.b;
}

/* ---------------------------------------------------------------- buffer accesses (docs/amd/buffer.md)
 * Each dword is range-checked on its own (soffset is always 0); an access that is only partly in range is a
 * fault, because the hardware's answer for it is not pinned down. */
struct rsrc {
    const unsigned char *base;
    uint32_t bytes;
};
inline rsrc make_rsrc(const void *base, uint32_t bytes) { return {static_cast<const unsigned char *>(base), bytes}; }

/* Number of in-range units (dwords, or the whole 16-bit item) of an access; faults on a partial one. */
template <int Bytes> inline bool buffer_in_range(rsrc r, uint32_t off)
{
    constexpr int unit = Bytes < 4 ? Bytes : 4;
    int in = 0;
    for (int u = 0; u < Bytes / unit; ++u)
        in += (uint64_t)off + (uint64_t)(u + 1) * unit <= r.bytes;
    if (in != 0 && in != Bytes / unit)
        hk_emu_fault("buffer access partly out of range (hardware behaviour not pinned down)");
    return in != 0;
}
template <int Bytes> inline bytes_t<Bytes> buffer_load(rsrc r, uint32_t off)
{
    bytes_t<Bytes> v;
    if (buffer_in_range<Bytes>(r, off))
        memcpy(&v, r.base + off, Bytes);
    else
        memset(&v, 0, Bytes);
    return v;
}
template <int Bytes> inline void buffer_store(rsrc r, uint32_t off, bytes_t<Bytes> v)
{
    if (buffer_in_range<Bytes>(r, off))
        memcpy(const_cast<unsigned char *>(r.base) + off, &v, Bytes);
}

/* ---------------------------------------------------------------- explicit LDS accesses (docs/amd/lds.md)
 * Checked beyond what they compute (executor.c): every access lies in the workgroup's LDS allocations; two waves
 * touching one dword in the same barrier interval, one of them writing, is a fault (a race on hardware, whatever
 * order the emulator happened to run them in); a 16-byte read must be free of bank conflicts over the arch's
 * ds_read_b128 lane phases, which the fragment loads feeding MFMA promise. Reads are wave collectives (the
 * conflict check needs every lane's address, and they then see exactly the writes made before them in program
 * order, as on the GPU); writes are per lane. */
struct lds_read_io {
    const void *p;
    int wave;
    bytes_t<16> v;
};

/* ds_read_b128 lane phase of lane l (docs/amd/lds.md). gfx942: 8 groups of 8 lanes, {0-3,20-23},
 * {4-7,16-19}, {8-11,28-31}, {12-15,24-27} and the same + 32; gfx950: 4 groups of 16, each the union of the
 * gfx942 groups {0, 3} or {1, 2} of its half. */
inline int lds_b128_phase(int gfx, int l)
{
    static const unsigned char quad[8] = {0, 1, 2, 3, 1, 0, 3, 2}; /* by (l % 32) / 4 */
    const int g = quad[(l % 32) / 4];
    return gfx >= 950 ? 2 * (l / 32) + (g == 1 || g == 2) : 4 * (l / 32) + g;
}

inline void lds_read_op(void *const io[64], uint64_t exec, const void *)
{
    const int gfx = hk_emu_self()->gfx, banks = gfx >= 950 ? 64 : 32;
    int64_t owner[8][64]; /* per phase and bank: the dword read there, -1 if none */
    memset(owner, 0xFF, sizeof owner);
    for (int l = 0; l < 64; ++l) {
        if (!(exec >> l & 1))
            continue;
        lds_read_io *x = static_cast<lds_read_io *>(io[l]);
        if (hk_emu_lds_access(x->p, 16, 0, x->wave) != 0)
            return;
        const int64_t dword = (int64_t)(hk_emu_lds_offset(x->p) / 4);
        int64_t *o = owner[lds_b128_phase(gfx, l)];
        for (int i = 0; i < 4; ++i) {
            int64_t &slot = o[(dword + i) % banks];
            if (slot >= 0 && slot != dword + i)
                return hk_emu_fault("LDS bank conflict in a 16-byte fragment read");
            slot = dword + i;
        }
    }
    for (int l = 0; l < 64; ++l)
        if (exec >> l & 1) {
            lds_read_io *x = static_cast<lds_read_io *>(io[l]);
            memcpy(&x->v, x->p, 16);
        }
}
template <int Bytes> inline bytes_t<Bytes> lds_read(const void *p)
{
    static_assert(Bytes == 16, "lds_read: 16-byte reads only (the fragment loads)");
    if ((uintptr_t)p % 16)
        hk_emu_fault("misaligned 16-byte LDS read");
    lds_read_io io = {p, hk_emu_self()->tid / 64, {}};
    hk_emu_collective(lds_read_op, &io, nullptr, 0);
    return io.v;
}
template <int Bytes> inline void lds_write(void *p, bytes_t<Bytes> v)
{
    static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "lds_write: 4, 8 or 16 bytes");
    if ((uintptr_t)p % Bytes)
        hk_emu_fault("misaligned LDS write");
    if (hk_emu_lds_access(p, Bytes, 1, hk_emu_self()->tid / 64) == 0)
        memcpy(p, &v, Bytes);
}

/* ---------------------------------------------------------------- MFMA (docs/amd/mfma.md)
 * Operand placement, forward form: A[i][k] sits in item k % KL of lane i + M * (k / KL) (B mirrors with the
 * column); the gfx950 f8f6f4 forms split k into 16-wide runs: item 16 * (k / S) + k % 16 of lane group
 * (k % S) / 16, S = 16 * 64 / M. Result: D[i][j] is item (i % 4) + 4 * (i / (4 * MI)) of lane
 * j + N * ((i / 4) % MI), MI = 64 / N.
 * Numerics: products exact, summed in double over groups of G logical k (8 for bf16 and f16, 16 for fp8, 4 for
 * fp32, in increasing k), each group added to the fp32 accumulator with one rounding (docs/amd/mfma.md: the CDNA3
 * model truncates inside a group; exact for the integer-valued test data, within a few ulps otherwise). */
inline double bf16_value(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
inline double fp8_value(uint8_t b, int gfx)
{
    int s = b >> 7, E = (b >> 3) & 15, m = b & 7;
    double sign = s ? -1.0 : 1.0;
    if (gfx < 950) { /* e4m3fnuz */
        if (b == 0x80)
            return NAN;
        return E == 0 ? sign * m * ldexp(1.0, -10) : sign * (8 + m) * ldexp(1.0, E - 11);
    }
    if (E == 15 && m == 7) /* OCP e4m3fn */
        return NAN;
    return E == 0 ? sign * m * ldexp(1.0, -9) : sign * (8 + m) * ldexp(1.0, E - 10);
}

template <int M, int N, int KL, typename T, bool F8F6F4> struct mfma_io {
    T a[KL], b[KL];
    float c[M * N / 64];
};

/* F16: 16-bit operands are IEEE half (else bf16). */
template <int M, int N, int K, int KL, typename T, bool F8F6F4, int G, bool F16>
void mfma_op(void *const io[64], uint64_t exec, const void *)
{
    using IO = mfma_io<M, N, KL, T, F8F6F4>;
    if (!all_lanes(exec))
        return hk_emu_fault("MFMA with EXEC-disabled lanes (it reads every lane's registers)");
    const int gfx = hk_emu_self()->gfx;
    auto place = [](int row, int k, int rows, int &l, int &e) {
        if (F8F6F4) {
            const int S = 16 * 64 / rows;
            l = row + rows * ((k % S) / 16);
            e = 16 * (k / S) + k % 16;
        } else {
            l = row + rows * (k / KL);
            e = k % KL;
        }
    };
    static_assert(K * M == KL * 64 && K * N == KL * 64, "MFMA shape");
    auto value = [gfx](T x) -> double {
        if constexpr (std::is_same_v<T, float>)
            return x;
        else if constexpr (sizeof(T) == 1)
            return fp8_value((uint8_t)x, gfx);
        else
            return F16 ? (double)f16_to_f32((uint16_t)x) : bf16_value((uint16_t)x);
    };
    /* The operands by logical (row, k), decoded once: A[i][k] and B^T[j][k]. */
    double a[M][K], b[N][K];
    for (int i = 0; i < M; ++i)
        for (int k = 0; k < K; ++k) {
            int l, e;
            place(i, k, M, l, e);
            const T x = static_cast<IO *>(io[l])->a[e];
            a[i][k] = value(x);
        }
    for (int j = 0; j < N; ++j)
        for (int k = 0; k < K; ++k) {
            int l, e;
            place(j, k, N, l, e);
            const T x = static_cast<IO *>(io[l])->b[e];
            b[j][k] = value(x);
        }
    constexpr int MI = 64 / N;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            /* C[i][j] and D[i][j] share their slot, so updating in place reads no other result. */
            IO *d = static_cast<IO *>(io[j + N * ((i / 4) % MI)]);
            float &acc = d->c[i % 4 + 4 * (i / (4 * MI))];
            for (int k0 = 0; k0 < K; k0 += G) {
                double sum = 0.0;
                for (int k = k0; k < k0 + G; ++k)
                    sum += a[i][k] * b[j][k];
                acc = (float)((double)acc + sum);
            }
        }
}
template <int M, int N, int K, int KL, typename T, bool F8F6F4, int G, int C, bool F16 = false>
inline void mfma(float (&c)[C], const T (&a)[KL], const T (&b)[KL])
{
    mfma_io<M, N, KL, T, F8F6F4> io;
    memcpy(io.a, a, sizeof io.a);
    memcpy(io.b, b, sizeof io.b);
    memcpy(io.c, c, sizeof io.c);
    hk_emu_collective(mfma_op<M, N, K, KL, T, F8F6F4, G, F16>, &io, nullptr, 0);
    memcpy(c, io.c, sizeof io.c);
}

inline void mfma_16x16x16_bf16(float (&c)[4], const uint16_t (&a)[4], const uint16_t (&b)[4])
{
    mfma<16, 16, 16, 4, uint16_t, false, 8>(c, a, b);
}
inline void mfma_32x32x8_bf16(float (&c)[16], const uint16_t (&a)[4], const uint16_t (&b)[4])
{
    mfma<32, 32, 8, 4, uint16_t, false, 8>(c, a, b);
}
inline void mfma_16x16x16_f16(float (&c)[4], const uint16_t (&a)[4], const uint16_t (&b)[4])
{
    mfma<16, 16, 16, 4, uint16_t, false, 8, 4, true>(c, a, b);
}
inline void mfma_32x32x8_f16(float (&c)[16], const uint16_t (&a)[4], const uint16_t (&b)[4])
{
    mfma<32, 32, 8, 4, uint16_t, false, 8, 16, true>(c, a, b);
}
inline void mfma_16x16x4_f32(float (&c)[4], const float (&a)[1], const float (&b)[1])
{
    mfma<16, 16, 4, 1, float, false, 4>(c, a, b);
}
#if HK_GFX >= 950
inline void mfma_16x16x32_f16(float (&c)[4], const uint16_t (&a)[8], const uint16_t (&b)[8])
{
    mfma<16, 16, 32, 8, uint16_t, false, 8, 4, true>(c, a, b);
}
inline void mfma_32x32x16_f16(float (&c)[16], const uint16_t (&a)[8], const uint16_t (&b)[8])
{
    mfma<32, 32, 16, 8, uint16_t, false, 8, 16, true>(c, a, b);
}
inline void mfma_16x16x32_bf16(float (&c)[4], const uint16_t (&a)[8], const uint16_t (&b)[8])
{
    mfma<16, 16, 32, 8, uint16_t, false, 8>(c, a, b);
}
inline void mfma_32x32x16_bf16(float (&c)[16], const uint16_t (&a)[8], const uint16_t (&b)[8])
{
    mfma<32, 32, 16, 8, uint16_t, false, 8>(c, a, b);
}
inline void mfma_16x16x128_fp8(float (&c)[4], const uint8_t (&a)[32], const uint8_t (&b)[32])
{
    mfma<16, 16, 128, 32, uint8_t, true, 16>(c, a, b);
}
inline void mfma_32x32x64_fp8(float (&c)[16], const uint8_t (&a)[32], const uint8_t (&b)[32])
{
    mfma<32, 32, 64, 32, uint8_t, true, 16>(c, a, b);
}
#else
inline void mfma_16x16x32_fp8(float (&c)[4], const uint8_t (&a)[8], const uint8_t (&b)[8])
{
    mfma<16, 16, 32, 8, uint8_t, false, 16>(c, a, b);
}
inline void mfma_32x32x16_fp8(float (&c)[16], const uint8_t (&a)[8], const uint8_t (&b)[8])
{
    mfma<32, 32, 16, 8, uint8_t, false, 16>(c, a, b);
}
#endif

} // namespace raw
} // namespace hk

#endif
