/* Attention forward on sm_90a, FlashAttention-3's design on the Hopper tile layer.
 *
 * A CTA owns BM = 128 query rows of one (sequence, query head). Warpgroup 0 produces: one thread loads the Q tile
 * once and streams the K and V blocks of the rows' key range through two rings of shared-memory slots (TMA, 128-byte
 * swizzle, completion on mbarriers). Warpgroups 1 and 2 consume, 64 rows each: S = Q K^T by wgmma from shared
 * memory, the online softmax on the fp32 fragment in registers (exp2 with the scale folded into one FMA), then
 * O += P V with P rounded to 16 bits and fed to wgmma as its register A operand. Key blocks that no row of the tile
 * sees are never loaded; element masks run only on blocks that straddle an edge (the window's sides, the causal
 * diagonal, the sequence's end). Rows that see no key end with O = 0 and LSE = -inf.
 *
 * hk_attn_fwd_<t>_rows is the general path for views TMA cannot describe (unaligned bases, strides that are not
 * multiples of 16 bytes): one warp per query row, scalar loads, the same masks and softmax. */
#include "attn.cuh"
#include "tiles/hopper/accum.cuh"
#include "tiles/hopper/memory.cuh"
#include "tiles/hopper/mma_rs.cuh"
#include "tiles/hopper/pipeline.cuh"
#include "tiles/hopper/tma.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace hk::hopper {

template <class T, int D, int DV> struct attn_tile {
    static constexpr int BM = HK_ATTN_FWD_BM, BN = HK_ATTN_FWD_BN(D), S = HK_ATTN_FWD_STAGES;
    static constexpr int q_bytes = BM * D * 2, k_bytes = BN * D * 2, v_bytes = BN * DV * 2;
    static_assert(D % 64 == 0 && DV % 64 == 0 && DV <= 256, "64-feature chunks, one wgmma of at most 256 columns");
    static_assert(HK_ATTN_FWD_SMEM(D, DV) >= 1024 + q_bytes + S * (k_bytes + v_bytes) + 256, "host and device agree");

    /* Shared memory: Q (D / 64 chunks of BM rows x 128 bytes), then each ring slot's K (D / 64 chunks of BN rows)
     * and V (DV / 64 chunks of BN rows), then the barriers. */
    struct layout {
        uint8_t *q, *slots;
        barrier *q_full;
        ring<S> *kr, *vr;
        __device__ __forceinline__ explicit layout(uint8_t *raw)
        {
            q = swizzle_aligned(raw);
            slots = q + q_bytes;
            q_full = reinterpret_cast<barrier *>(slots + S * (k_bytes + v_bytes));
            kr = reinterpret_cast<ring<S> *>(q_full + 1);
            vr = kr + 1;
        }
        /* Slot addresses computed, not indexed from an array: a run-time index into one would live in local memory. */
        __device__ __forceinline__ uint8_t *k(int slot) const { return slots + slot * (k_bytes + v_bytes); }
        __device__ __forceinline__ uint8_t *v(int slot) const { return k(slot) + k_bytes; }
    };

    /* Warpgroup 0, one thread: Q once, then K and V of blocks n_hi - 1 down to n_lo. */
    static __device__ __forceinline__ void produce(const layout &sm, const CUtensorMap *mq, const CUtensorMap *mk,
                                                   const CUtensorMap *mv, const hk_attn_fwd_params &p,
                                                   const attn_seq &sq, int m0, int n_lo, int n_hi)
    {
        const int hkv = sq.h / p.group, bq = sq.varlen ? 0 : sq.b;
        sm.q_full->arrive_expect_tx(q_bytes);
#pragma unroll
        for (int c = 0; c < D / 64; ++c)
            tma_load_4d(sm.q + c * BM * 128, mq, *sm.q_full, c * 64, sq.row_q + m0, sq.h, bq);
        ring_pos<S> pos;
        for (int n = n_hi - 1; n >= n_lo; --n, pos.advance()) {
            const int row = sq.row_k + n * BN;
            barrier &kb = sm.kr->produce(pos, k_bytes);
#pragma unroll
            for (int c = 0; c < D / 64; ++c)
                tma_load_4d(sm.k(pos.index) + c * BN * 128, mk, kb, c * 64, row, hkv, bq);
            barrier &vb = sm.vr->produce(pos, v_bytes);
#pragma unroll
            for (int c = 0; c < DV / 64; ++c)
                tma_load_4d(sm.v(pos.index) + c * BN * 128, mv, vb, c * 64, row, hkv, bq);
        }
    }

    /* A consumer warpgroup: rows [m0 + 64 wg, + 64) of the tile. */
    static __device__ __forceinline__ void consume(const layout &sm, const hk_attn_fwd_params &p, const attn_seq &sq,
                                                   int m0, int wg, int n_lo, int n_hi)
    {
        accum_64xN<DV> o;
        o.zero();
        float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f}, bias[2] = {0.f, 0.f};
        const int row0 = m0 + 64 * wg;
        /* The tile's last real row bounds the left edge, its first the right one. */
        const int last = min(m0 + BM, sq.len_q) - 1;
        const bool is_lane0 = hk::lane() == 0;
        if (n_hi > n_lo)
            sm.q_full->wait(0);
        ring_pos<S> pos;
        for (int n = n_hi - 1; n >= n_lo; --n, pos.advance()) {
            const int n0 = n * BN;
            accum_64xN<BN> s;
            sm.kr->consume(pos);
#pragma unroll
            for (int c = 0; c < D / 64; ++c)
                wgmma_kblock<T, false, false, 128>(s, sm.q + c * BM * 128 + wg * 64 * 128,
                                                   sm.k(pos.index) + c * BN * 128, c == 0);
            wgmma_wait<0>();
            reg_fence(s.v);
            if (is_lane0)
                sm.kr->release(pos);

            if (p.softcap > 0.f || p.score_scale != 1.f)
#pragma unroll
                for (int r = 0; r < accum_64xN<BN>::regs; ++r)
                    s.v[r] = attn_score(p, s.v[r]);
            const bool edge = n0 + BN > sq.len_k || (p.has_right && n0 + BN - 1 > sq.key_hi(p, m0) - 1) ||
                              (p.has_left && n0 < sq.key_lo(p, last));
            if (edge) {
                int lo[2], hi[2];
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int i = row0 + frag_row<BN>(2 * h);
                    lo[h] = sq.key_lo(p, i) - n0;
                    hi[h] = sq.key_hi(p, i) - n0;
                }
#pragma unroll
                for (int r = 0; r < accum_64xN<BN>::regs; ++r) {
                    const int c = frag_col<BN>(r), h = row_half(r);
                    if (c < lo[h] || c >= hi[h])
                        s.v[r] = -INFINITY;
                }
            }

            /* Online softmax: the new row maximum, the old sums and O rescaled to it, P = 2^(s e - max e). */
            float mn[2] = {m[0], m[1]}, corr[2];
            row_max(s, mn);
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float b = mn[h] == -INFINITY ? 0.f : mn[h] * p.exp2_scale;
                corr[h] = hk::exp2_fast(m[h] * p.exp2_scale - b);
                bias[h] = b;
                m[h] = mn[h];
                l[h] *= corr[h];
            }
            row_exp2(s, p.exp2_scale, bias);
            row_sum_partial(s, l);
            row_scale(o, corr);
            uint32_t a[BN / 4];
            as_a_fragment<T>(s, a);

            sm.vr->consume(pos);
            wgmma_rs_block<T, BN>(o, a, sm.v(pos.index), BN * 128);
            wgmma_wait<0>();
            reg_fence(o.v);
            reg_fence(a);
            if (is_lane0)
                sm.vr->release(pos);
        }
        epilogue(o, l, bias, p, sq, row0);
    }

    /* O = acc / rowsum (0 where the row saw nothing) stored as T pairs; LSE = ln(sum 2^(s e)) by the quad's lane 0. */
    static __device__ __forceinline__ void epilogue(accum_64xN<DV> &o, float (&l)[2], const float (&bias)[2],
                                                    const hk_attn_fwd_params &p, const attn_seq &sq, int row0)
    {
        float inv[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            l[h] = quad_sum(l[h]);
            inv[h] = l[h] > 0.f ? 1.f / l[h] : 0.f;
        }
        row_scale(o, inv);
        T *out = static_cast<T *>(p.o);
#pragma unroll
        for (int r = 0; r < accum_64xN<DV>::regs; r += 2) {
            const int i = row0 + frag_row<DV>(r), c = frag_col<DV>(r);
            if (i >= sq.len_q || c >= p.head_dim_v)
                continue;
            T *dst = out + sq.offset(p.o_stride, sq.row_q, i, sq.h) + c;
            if (c + 1 < p.head_dim_v)
                store_from_float2(dst, o.v[r], o.v[r + 1]);
            else
                store_from_float(dst, o.v[r]);
        }
        if (p.lse && (hk::lane() & 3) == 0)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int i = row0 + frag_row<DV>(2 * h);
                if (i < sq.len_q)
                    p.lse[sq.lse_index(p, i)] = l[h] > 0.f ? (bias[h] + __log2f(l[h])) * kLn2 : -INFINITY;
            }
    }

    static __device__ __forceinline__ void run(const CUtensorMap *mq, const CUtensorMap *mk, const CUtensorMap *mv,
                                               const hk_attn_fwd_params &p)
    {
        extern __shared__ uint8_t smem_raw[];
        /* One linear grid, query tiles outermost and heaviest first: with a causal mask the last tiles of every
         * (sequence, head) see the most keys, and they all start before any lighter one. */
        const int heads_batches = p.heads_q * p.batch, rest = (int)blockIdx.x % heads_batches;
        const int m_block = p.m_blocks - 1 - (int)blockIdx.x / heads_batches;
        const attn_seq sq(p, rest / p.heads_q, rest % p.heads_q);
        const int m0 = m_block * BM;
        if (m0 >= sq.len_q)
            return;
        const int last = min(m0 + BM, sq.len_q) - 1;
        const int key_lo = sq.key_lo(p, m0), key_hi = sq.key_hi(p, last);
        const int n_lo = key_lo / BN, n_hi = key_hi > key_lo ? (key_hi + BN - 1) / BN : n_lo;
        const layout sm(smem_raw);
        if (threadIdx.x == 0) {
            sm.q_full->init(1);
            sm.kr->init(8); /* lane 0 of each consumer warp */
            sm.vr->init(8);
            fence_barrier_init();
        }
        cta_sync();
        const int wg = warpgroup_index();
        if (take_role<40, 232>(wg)) {
            if (threadIdx.x == 0 && n_hi > n_lo) {
                tma_prefetch_map(mq);
                tma_prefetch_map(mk);
                tma_prefetch_map(mv);
                produce(sm, mq, mk, mv, p, sq, m0, n_lo, n_hi);
            }
        } else {
            consume(sm, p, sq, m0, wg - 1, n_lo, n_hi);
        }
    }
};

/* The row kernel: warp w of the x-th group of blocks (one block per (sequence, head)) handles query row
 * HK_ATTN_FWD_ROWS_WARPS x + w; lane l holds features
 * l + 32 t of q and of the output. */
template <class T> __device__ __forceinline__ void attn_rows(const hk_attn_fwd_params &p)
{
    constexpr int F = 256 / 32;
    const int heads_batches = p.heads_q * p.batch, rest = (int)blockIdx.x % heads_batches;
    const attn_seq sq(p, rest / p.heads_q, rest % p.heads_q);
    const int i = (int)blockIdx.x / heads_batches * HK_ATTN_FWD_ROWS_WARPS + hk::warp(), ln = hk::lane();
    if (i >= sq.len_q)
        return;
    const T *q = static_cast<const T *>(p.q) + sq.offset(p.q_stride, sq.row_q, i, sq.h);
    float qf[F], acc[F];
#pragma unroll
    for (int t = 0; t < F; ++t) {
        const int f = ln + 32 * t;
        qf[t] = f < p.head_dim ? load_as_float(q + f) : 0.f;
        acc[t] = 0.f;
    }
    const int hkv = sq.h / p.group, lo = sq.key_lo(p, i), hi = sq.key_hi(p, i);
    float m = -INFINITY, l = 0.f;
    for (int j = lo; j < hi; ++j) {
        const T *k = static_cast<const T *>(p.k) + sq.offset(p.k_stride, sq.row_k, j, hkv);
        const T *v = static_cast<const T *>(p.v) + sq.offset(p.v_stride, sq.row_k, j, hkv);
        float d = 0.f;
#pragma unroll
        for (int t = 0; t < F; ++t)
            if (ln + 32 * t < p.head_dim)
                d = fmaf(qf[t], load_as_float(k + ln + 32 * t), d);
        const float s = attn_score(p, hk::warp_sum(d)), mn = fmaxf(m, s);
        const float corr = hk::exp2_fast((m - mn) * p.exp2_scale), e = hk::exp2_fast((s - mn) * p.exp2_scale);
        l = l * corr + e;
#pragma unroll
        for (int t = 0; t < F; ++t)
            acc[t] = acc[t] * corr + (ln + 32 * t < p.head_dim_v ? e * load_as_float(v + ln + 32 * t) : 0.f);
        m = mn;
    }
    const float inv = l > 0.f ? 1.f / l : 0.f;
    T *o = static_cast<T *>(p.o) + sq.offset(p.o_stride, sq.row_q, i, sq.h);
#pragma unroll
    for (int t = 0; t < F; ++t)
        if (ln + 32 * t < p.head_dim_v)
            store_from_float(o + ln + 32 * t, acc[t] * inv);
    if (p.lse && ln == 0)
        p.lse[sq.lse_index(p, i)] = l > 0.f ? (m * p.exp2_scale + __log2f(l)) * kLn2 : -INFINITY;
}

} // namespace hk::hopper

#define HK_ATTN_FWD_TILED(t, T, D, DV)                                                                             \
    extern "C" __global__ void __launch_bounds__(HK_ATTN_FWD_THREADS, 1)                                           \
        hk_attn_fwd_##t##_d##D##_##DV(const __grid_constant__ CUtensorMap mq, const __grid_constant__ CUtensorMap mk, \
                                      const __grid_constant__ CUtensorMap mv,                                      \
                                      const __grid_constant__ hk_attn_fwd_params p)                                \
    {                                                                                                              \
        hk::hopper::attn_tile<T, D, DV>::run(&mq, &mk, &mv, p);                                                    \
    }
#define HK_ATTN_FWD_ROWS(t, T)                                                                                     \
    extern "C" __global__ void __launch_bounds__(32 * HK_ATTN_FWD_ROWS_WARPS)                                      \
        hk_attn_fwd_##t##_rows(const __grid_constant__ hk_attn_fwd_params p)                                       \
    {                                                                                                              \
        hk::hopper::attn_rows<T>(p);                                                                               \
    }
#define HK_ATTN_FWD_TYPE(t, T)                                                                                     \
    HK_ATTN_FWD_TILED(t, T, 64, 64)                                                                                \
    HK_ATTN_FWD_TILED(t, T, 128, 128)                                                                              \
    HK_ATTN_FWD_TILED(t, T, 192, 128)                                                                              \
    HK_ATTN_FWD_TILED(t, T, 256, 256)                                                                              \
    HK_ATTN_FWD_ROWS(t, T)

HK_ATTN_FWD_TYPE(bf16, __nv_bfloat16)
HK_ATTN_FWD_TYPE(f16, __half)
