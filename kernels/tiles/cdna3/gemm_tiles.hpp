/* AMD GEMM building blocks over the tile vocabulary (tiles/common/tiles.hpp, cdna3/amd.hpp): the same text for
 * gfx942, gfx950 and the wave emulator. Include after tiles.hpp.
 *
 *   lds_tile<T, R, C>        an operand tile in LDS: R rows (of M or N) x C elements of K, K contiguous, swizzled
 *   operand<T>               one operand of the product as seen from a macro tile (range-checked buffer views)
 *   stage<T, R, BK, KMajor, Aligned, Threads>   this thread's share of the next K step of an operand, held in
 *                            registers between its global load and its LDS store (transposed when K is strided)
 *   load(rt, lds_tile, r0, c0)   fragments from LDS, one 16-byte read per lane and run (bank-conflict free)
 *   mma_abt<Atom>(dt, a, b)  dt += (a b^T)^T per fragment
 *   out_view<TO>             D or C of a macro tile with 4-element vector accesses
 */
#ifndef HK_TILES_CDNA3_GEMM_TILES_HPP
#define HK_TILES_CDNA3_GEMM_TILES_HPP

namespace hk {

/* An offset no buffer view of the GEMM reaches (views stay below 2^31 bytes): loads read 0, stores are dropped. */
constexpr uint32_t kOutOfRange = 0x80000000u;

/* ---------------------------------------------------------------- LDS operand tile
 * Row r's 16-byte chunk c is stored at chunk c ^ s(r), where s(r) is the index of r's bank line (kBankLineBytes) mod
 * the chunks of a row: rows sharing a bank line keep their chunk order and successive lines rotate. With 64-byte
 * rows on gfx942 and 128-byte rows on gfx950 the 16-byte fragment reads of 16- and 32-row fragments are then free
 * of bank conflicts (the emulator checks every read against the lane phases of docs/amd/lds.md); the
 * K-contiguous 16-byte stores are too (8 consecutive lanes write 128 contiguous bytes). */
template <typename T, int R, int C> struct lds_tile {
    static constexpr int kRows = R, kCols = C, kChunk = 16 / (int)sizeof(T), kChunks = C / kChunk;
    static constexpr int kRowBytes = C * (int)sizeof(T);
    static_assert(C % kChunk == 0 && (kChunks & (kChunks - 1)) == 0, "lds_tile: a row is a power of two of chunks");
    static_assert(kBankLineBytes % kRowBytes == 0, "lds_tile: rows must divide the bank line");
    /* Rows after which the swizzle repeats: index(r + kRowPeriod, c) == index(r, c) + kRowPeriod * C. */
    static constexpr int kRowPeriod = kChunks * (kBankLineBytes / kRowBytes);
    T *data;
    HK_DEV static int index(int r, int c)
    {
        const int s = r / (kBankLineBytes / kRowBytes) % kChunks;
        return r * C + ((c / kChunk) ^ s) * kChunk + c % kChunk;
    }
};

/* ---------------------------------------------------------------- operands
 * Operand X (A, or B^T) of a macro tile: rows r of X (M or N) from the tile origin, k along K. K-major: X[r][k] at
 * ptr[r * ld + k] (A, or B with trans_b); otherwise at ptr[k * ld + r]. rows: rows left from the origin, k: K. */
template <typename T> struct operand {
    const T *ptr;
    int32_t rows, k, ld;
};

/* This thread's share of one K step (BK) of an R-row operand tile, in registers from its global load to its LDS
 * store. Global reads go through a buffer view rebuilt per step whose size ends right after the step's last element
 * in range, so rows past the edge read zeros; elements past the edge inside a row (k past K when K-major, rows past
 * the edge when K is strided) are masked explicitly.
 * Aligned (16-byte aligned pointer, ld and the extent along the vector a multiple of the vector): whole vectors,
 * each in range or out. Otherwise element by element (any shape and alignment, more instructions).
 * K-major: vectors of 16 bytes along K, stored to LDS unchanged. K strided: blocks of VK (8 bytes of K) x VR (up to
 * 16 bytes of rows) read as VK row vectors and transposed in registers into VR 8-byte LDS stores, at the K column
 * KMap gives. */
/* Where a K-strided stage puts K column c (a multiple of 4) of its LDS tile: unchanged for the GEMM. */
struct k_identity {
    HK_DEV static int at(int c) { return c; }
};
/* Attention's V^T: within each 32-column group the 4-column quads q = 0..7 go to quad 2 (q % 4) + q / 4, so that the
 * 16-byte fragment read of lane group g (columns 8g .. 8g + 7) holds columns 4g .. 4g + 3 and 16 + 4g .. 16 + 4g + 3:
 * the keys that lane group holds in the two 16-key S^T accumulator fragments which form one P operand. */
struct k_quads_interleaved {
    HK_DEV static int at(int c)
    {
        const int q = c % 32 / 4;
        return c - c % 32 + 4 * (2 * (q % 4) + q / 4);
    }
};

template <typename T, int R, int BK, bool KMajor, bool Aligned, int Threads, typename KMap = k_identity> struct stage {
    static constexpr int kBytes = R * BK * (int)sizeof(T) / Threads; /* per thread */
    static constexpr int VK = KMajor ? 16 / (int)sizeof(T) : 8 / (int)sizeof(T);
    static constexpr int VR = KMajor ? 1 : (kBytes / 8 < 16 / (int)sizeof(T) ? kBytes / 8 : 16 / (int)sizeof(T));
    static constexpr int W = KMajor ? VK : VR;            /* elements per global vector */
    static constexpr int kVecs = kBytes / ((int)sizeof(T) * W); /* global vectors per thread */
    static_assert(R * BK * (int)sizeof(T) % Threads == 0 && kVecs >= 1 && (KMajor || kVecs % VK == 0),
                  "stage: the tile must split evenly into this thread's vectors");
    using vec_t = vec<T, W>;

    operand<T> x;
    vec_t v[kVecs];

    /* Position of this thread's vector i: K-major (row, k) of its first element; else the (row, k) corner of block
     * i / VK, whose vector i % VK is row k + i % VK. */
    HK_DEV static void place(int i, int &r, int &c)
    {
        if constexpr (KMajor) {
            const int u = thread() + i * Threads;
            r = u / (BK / VK);
            c = u % (BK / VK) * VK;
        } else {
            const int u = thread() + i / VK * Threads;
            r = u % (R / VR) * VR;
            c = u / (R / VR) * VK;
        }
    }

    HK_DEV void load(int step)
    {
        constexpr int S = (int)sizeof(T);
        const int k0 = step * BK, kleft = x.k - k0, klim = kleft < BK ? kleft : BK, rlim = x.rows < R ? x.rows : R;
        const T *base = KMajor ? x.ptr + k0 : x.ptr + (int64_t)k0 * x.ld;
        const uint32_t bytes = KMajor ? (uint32_t)(((rlim - 1) * x.ld + klim) * S) : (uint32_t)(((klim - 1) * x.ld + rlim) * S);
        const raw::rsrc rs = raw::make_rsrc(base, bytes);
        HK_UNROLL
        for (int i = 0; i < kVecs; ++i) {
            int r, c;
            place(i, r, c);
            if constexpr (!KMajor)
                c += i % VK;
            /* Along the vector: k (K-major) or rows; its extent from the vector's first element. */
            const int first = KMajor ? c : r, extent = KMajor ? klim : rlim;
            const uint32_t off = (uint32_t)((KMajor ? r * x.ld + c : c * x.ld + r) * S);
            if constexpr (Aligned) {
                v[i] = __builtin_bit_cast(vec_t, raw::buffer_load<W * S>(rs, first < extent ? off : kOutOfRange));
            } else {
                HK_UNROLL
                for (int e = 0; e < W; ++e)
                    v[i].v[e] = __builtin_bit_cast(T, raw::buffer_load<S>(rs, first + e < extent ? off + e * S : kOutOfRange));
            }
        }
    }

    HK_DEV void store(const lds_tile<T, R, BK> &s) const
    {
        if constexpr (KMajor) {
            HK_UNROLL
            for (int i = 0; i < kVecs; ++i) {
                int r, c;
                place(i, r, c);
                raw::lds_write<16>(s.data + s.index(r, c), __builtin_bit_cast(raw::bytes_t<16>, v[i]));
            }
        } else {
            HK_UNROLL
            for (int b = 0; b < kVecs / VK; ++b) {
                int r, c;
                place(b * VK, r, c);
                raw::bytes_t<8> t[VR];
                transpose(t, &v[b * VK]);
                HK_UNROLL
                for (int j = 0; j < VR; ++j)
                    raw::lds_write<8>(s.data + s.index(r + j, KMap::at(c)), t[j]);
            }
        }
    }

    /* out[j] = the 8 bytes in[0].v[j] .. in[VK - 1].v[j]: fp32 elements are whole dwords; in byte permutes, 16-bit
     * elements pair two rows per dword (one v_perm each); bytes go through 4 x 4 transposes of two v_perm stages. */
    HK_DEV static void transpose(raw::bytes_t<8> (&out)[VR], const vec_t *in)
    {
        constexpr int D = VR * (int)sizeof(T) / 4; /* dwords per input row */
        static_assert(VR * sizeof(T) % 4 == 0, "transpose: whole dwords of rows");
        uint32_t w[VK][D];
        HK_UNROLL
        for (int i = 0; i < VK; ++i)
            __builtin_memcpy(w[i], &in[i], sizeof w[i]);
        if constexpr (sizeof(T) == 4) { /* a row's element j of each of the two rows */
            HK_UNROLL
            for (int j = 0; j < VR; ++j)
                out[j].w[0] = w[0][j], out[j].w[1] = w[1][j];
        } else if constexpr (sizeof(T) == 2) {
            HK_UNROLL
            for (int j = 0; j < VR; ++j)
                HK_UNROLL
                for (int d = 0; d < 2; ++d)
                    out[j].w[d] = raw::perm(w[2 * d + 1][j / 2], w[2 * d][j / 2], j % 2 ? 0x07060302u : 0x05040100u);
        } else {
            static_assert(sizeof(T) == 1 && VK == 8, "transpose: 8 rows of bytes");
            HK_UNROLL
            for (int q = 0; q < D; ++q)     /* columns 4q .. 4q + 3 */
                HK_UNROLL
                for (int d = 0; d < 2; ++d) { /* rows 4d .. 4d + 3 */
                    const uint32_t *a = &w[4 * d][q], *b = &w[4 * d + 1][q], *c = &w[4 * d + 2][q], *e = &w[4 * d + 3][q];
                    const uint32_t ab_lo = raw::perm(*b, *a, 0x05010400u), ab_hi = raw::perm(*b, *a, 0x07030602u);
                    const uint32_t ce_lo = raw::perm(*e, *c, 0x05010400u), ce_hi = raw::perm(*e, *c, 0x07030602u);
                    out[4 * q + 0].w[d] = raw::perm(ce_lo, ab_lo, 0x05040100u);
                    out[4 * q + 1].w[d] = raw::perm(ce_lo, ab_lo, 0x07060302u);
                    out[4 * q + 2].w[d] = raw::perm(ce_hi, ab_hi, 0x05040100u);
                    out[4 * q + 3].w[d] = raw::perm(ce_hi, ab_hi, 0x07060302u);
                }
        }
    }
};

/* ---------------------------------------------------------------- fragments and MFMA */

/* Per-wave register tile of A-type fragments (contiguous 16-byte runs along K) from an LDS tile at (r0, c0). r0 and
 * the fragment height are multiples of the swizzle period, so a lane computes one LDS offset per run and steps
 * through the fragment rows by constants (the ds_read immediate offsets). */
template <typename T, int R, int C, typename L, int SR, int SC>
HK_DEV void load(rt<T, R, C, L> &t, const lds_tile<T, SR, SC> &s, int r0, int c0)
{
    using S = lds_tile<T, SR, SC>;
    constexpr int kRun = L::kColRun;
    static_assert(kRun * sizeof(T) == 16, "fragment loads read 16 contiguous bytes per lane and run");
    static_assert(L::kRows % S::kRowPeriod == 0, "fragment height must be a multiple of the swizzle period");
    const int l = lane();
    HK_UNROLL
    for (int e = 0; e < L::kElems; e += kRun)
        HK_UNROLL
        for (int j = 0; j < t.kTC; ++j) {
            const T *p = s.data + r0 * SC + S::index(L::row(l, e), c0 + j * L::kCols + L::col(l, e));
            HK_UNROLL
            for (int i = 0; i < t.kTR; ++i) {
                const vec<T, kRun> v = __builtin_bit_cast(vec<T, kRun>, raw::lds_read<16>(p + i * L::kRows * SC));
                HK_UNROLL
                for (int q = 0; q < kRun; ++q)
                    t.d[i][j][e + q] = v.v[q];
            }
        }
}

/* dt[j][i] += sum_k a[i][k] b[j][k] per fragment: the product A B^T accumulated transposed, b as the instruction's
 * A operand and a as its B operand (B mirrors A in every atom, so an A-layout fragment of a is a B fragment of
 * a^T). The accumulator fragments then hold, per lane, runs of kRowRun consecutive columns of A B^T. */
template <typename Atom, typename T, int M, int N, int K>
HK_DEV void mma_abt(rt<float, N, M, typename Atom::C> &dt, const rt<T, M, K, typename Atom::A> &a,
                    const rt<T, N, K, typename Atom::A> &b)
{
    static_assert(Atom::A::kRows == Atom::B::kCols, "mma_abt: square atoms only (B mirrors A)");
    HK_UNROLL
    for (int k = 0; k < a.kTC; ++k)
        HK_UNROLL
        for (int j = 0; j < dt.kTR; ++j)
            HK_UNROLL
            for (int i = 0; i < dt.kTC; ++i)
                Atom::mma(dt.d[j][i], b.d[j][k], a.d[i][k]);
}

/* ---------------------------------------------------------------- output
 * D (or C) of a macro tile: rows and cols left from the tile origin, vector accesses of 4 elements along a row
 * when vec (aligned pointer, ld a multiple of 4) and the 4 elements are inside; rows past the edge are out of the
 * view's range, columns past it are masked. */
template <typename TO> struct out_view {
    raw::rsrc r;
    int32_t rows, cols, ld;
    bool vec_ok;

    HK_DEV static out_view make(const void *ptr, int64_t ld, int32_t rows, int32_t cols, int R, int C, bool vec)
    {
        const int rl = rows < R ? rows : R, cl = cols < C ? cols : C;
        return {raw::make_rsrc(ptr, (uint32_t)(((int64_t)(rl - 1) * ld + cl) * (int64_t)sizeof(TO))), rows, cols,
                (int32_t)ld, vec};
    }
    HK_DEV uint32_t offset(int r, int c) const { return (uint32_t)((r * ld + c) * (int)sizeof(TO)); }

    HK_DEV void load4(int r, int c, float (&f)[4]) const
    {
        if (vec_ok && c + 4 <= cols) {
            to_float(f, __builtin_bit_cast(vec<TO, 4>, raw::buffer_load<4 * sizeof(TO)>(this->r, offset(r, c))));
        } else {
            HK_UNROLL
            for (int e = 0; e < 4; ++e)
                f[e] = to_float(__builtin_bit_cast(TO, raw::buffer_load<sizeof(TO)>(
                                    this->r, c + e < cols ? offset(r, c + e) : kOutOfRange)));
        }
    }
    HK_DEV void store4(int r, int c, const float (&f)[4]) const
    {
        const vec<TO, 4> v = from_float<TO>(f);
        if (vec_ok && c + 4 <= cols) {
            raw::buffer_store<4 * sizeof(TO)>(this->r, offset(r, c), __builtin_bit_cast(raw::bytes_t<4 * sizeof(TO)>, v));
        } else {
            HK_UNROLL
            for (int e = 0; e < 4; ++e)
                raw::buffer_store<sizeof(TO)>(this->r, c + e < cols ? offset(r, c + e) : kOutOfRange,
                                              __builtin_bit_cast(raw::bytes_t<sizeof(TO)>, v.v[e]));
        }
    }
};

} // namespace hk

#endif
