/* Attention backward on sm_90a, FlashAttention-3's design on the Hopper tile layer.
 *
 * hk_attn_bwd_<t>_pre: delta = rowsum(dO * O) per row (fp32), and the fp32 dQ accumulator and the deterministic
 * mode's counters zeroed.
 *
 * hk_attn_bwd_<t>_d<D>_<DV>: a CTA owns BN = 128 keys of one (sequence, kv head). Warpgroup 0 produces: one thread
 * loads K and V once and streams (Q, dO) blocks of BM = 64 rows, of every query head of the group and every
 * block that sees the keys, through a ring of slots (TMA, 128-byte swizzle). Warpgroups 1 and 2 consume 64 keys
 * each and keep dK and dV in registers over all of those blocks. Per block, transposed so that the keys are the
 * accumulator's rows: S^T = K Q^T and dP^T = V dO^T (wgmma from shared memory), P^T = 2^(s e - LSE log2 e) with the
 * masks, dS^T = P^T (dP^T - delta) (times the cap's slope, and the softmax scale), then dV += P^T dO and
 * dK += dS^T Q with P^T and dS^T as wgmma's register operand. dS^T also goes to shared memory, where both
 * warpgroups read it as dS for dQ = dS K (each warpgroup half of the features). dQ lands in an fp32 accumulator
 * in the workspace: with fp32 vector atomics, or, deterministic, added in key-block order (each (query block,
 * half) has a counter of the key blocks already added; block n waits for its rank, adds with plain loads and
 * stores, and counts itself). The grid runs key blocks outermost, so block n - 1 of a sequence always started
 * before block n: the waits cannot deadlock.
 *
 * hk_attn_bwd_<t>_dq: the fp32 accumulator converted to dQ.
 *
 * hk_attn_bwd_<t>_dq_rows, hk_attn_bwd_<t>_dkv_rows: the general path (views TMA cannot describe, head_dim or
 * head_dim_v over 128): one warp per query row for dQ and one per key row for dK and dV, the same masks and
 * formulas; each output element is written by one warp, so these are deterministic and need no accumulator. */
#include "attn.cuh"
#include "tiles/hopper/accum.cuh"
#include "tiles/hopper/memory.cuh"
#include "tiles/hopper/mma_rs.cuh"
#include "tiles/hopper/pipeline.cuh"
#include "tiles/hopper/tma.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace hk::hopper {

constexpr float kLog2e = 1.4426950408889634f;

/* Element offset of LSE row `row` (the layout attn_seq::lse_index numbers) in a tensor with these strides. */
__device__ __forceinline__ int64_t attn_row_offset(const hk_attn_bwd_params &p, int64_t row, const int64_t (&s)[3])
{
    if (p.f.cu_seqlens_q) {
        const int64_t total = p.rows / p.f.heads_q;
        return row % total * s[1] + row / total * s[2];
    }
    const int64_t i = row % p.f.seqlen_q, bh = row / p.f.seqlen_q;
    return bh / p.f.heads_q * s[0] + i * s[1] + bh % p.f.heads_q * s[2];
}

/* LSE row of query i of head h. */
__device__ __forceinline__ int64_t attn_row(const hk_attn_bwd_params &p, const attn_seq &sq, int h, int i)
{
    return p.f.cu_seqlens_q ? (int64_t)h * (p.rows / p.f.heads_q) + sq.row_q + i
                            : ((int64_t)sq.b * p.f.heads_q + h) * p.f.seqlen_q + i;
}

/* The exponent bias of a row: LSE in base 2; a row that saw nothing (LSE = -inf) gets +inf, so its P is 0. */
__device__ __forceinline__ float attn_bias(float lse) { return lse == -INFINITY ? INFINITY : lse * kLog2e; }

/* P and dS for one score s (Q K^T, unscaled): P = 2^(t e - bias) on the mapped score t, dS = P (dP - delta) times
 * the map's derivative: the scale, and with a cap its slope 1 - tanh^2. */
__device__ __forceinline__ void attn_p_ds(const hk_attn_bwd_params &p, float s, float dp, float bias, float delta,
                                          float &pe, float &ds)
{
    float slope = p.ds_scale;
    if (p.f.softcap > 0.f) {
        const float th = hk::tanh_fast(s * p.f.score_scale);
        s = p.f.softcap * th;
        slope *= 1.f - th * th;
    } else if (p.f.score_scale != 1.f) {
        s *= p.f.score_scale;
    }
    pe = hk::exp2_fast(fmaf(s, p.f.exp2_scale, -bias));
    ds = pe * (dp - delta) * slope;
}

/* One warp per row: delta, and the row's share of the zeroed accumulator and counters. */
template <class T> __device__ __forceinline__ void attn_bwd_pre(const hk_attn_bwd_params &p)
{
    const int64_t row = (int64_t)blockIdx.x * HK_ATTN_BWD_ROWS_WARPS + hk::warp();
    const int ln = hk::lane();
    if (p.dq_sem) {
        const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
        if (t < p.sems)
            p.dq_sem[t] = 0;
    }
    if (row >= p.rows)
        return;
    const T *o = static_cast<const T *>(p.f.o) + attn_row_offset(p, row, p.f.o_stride);
    const T *d_o = static_cast<const T *>(p.d_o) + attn_row_offset(p, row, p.do_stride);
    float d = 0.f;
    for (int c = ln; c < p.f.head_dim_v; c += 32)
        d = fmaf(load_as_float(o + c), load_as_float(d_o + c), d);
    d = hk::warp_sum(d);
    if (ln == 0)
        p.delta[row] = d;
    if (p.dq_acc)
        for (int c = ln; c < p.acc_dim; c += 32)
            p.dq_acc[row * p.acc_dim + c] = 0.f;
}

/* One warp per row: the accumulator's features as dQ. */
template <class T> __device__ __forceinline__ void attn_bwd_dq_convert(const hk_attn_bwd_params &p)
{
    const int64_t row = (int64_t)blockIdx.x * HK_ATTN_BWD_ROWS_WARPS + hk::warp();
    if (row >= p.rows)
        return;
    T *dq = static_cast<T *>(p.dq) + attn_row_offset(p, row, p.dq_stride);
    for (int c = hk::lane(); c < p.f.head_dim; c += 32)
        store_from_float(dq + c, p.dq_acc[row * p.acc_dim + c]);
}

template <class T, int D, int DV> struct attn_bwd_tile {
    static constexpr int BM = HK_ATTN_BWD_BM, BN = HK_ATTN_BWD_BN, S = HK_ATTN_BWD_STAGES, DQ = D / 2;
    static constexpr int q_bytes = BM * D * 2, do_bytes = BM * DV * 2, k_bytes = BN * D * 2, v_bytes = BN * DV * 2;
    static constexpr int ds_bytes = BN * BM * 2, slot_bytes = q_bytes + do_bytes;
    static_assert(D % 64 == 0 && DV % 64 == 0 && D <= 128 && DV <= 128, "64-feature chunks; dK, dV in registers");
    static_assert(HK_ATTN_BWD_SMEM(D, DV) >= 1024 + k_bytes + v_bytes + S * slot_bytes + 2 * ds_bytes +
                                                 4 * 2 * 2 * BM + 256, "host and device agree");

    /* Shared memory: K (D / 64 chunks of BN rows x 128 bytes) and V likewise, the ring's slots (Q, then dO, in
     * chunks of BM rows), two dS^T tiles (BN key rows x BM queries), each consumer's LSE bias and delta per query
     * row, the barriers. */
    struct layout {
        uint8_t *k, *v, *slots, *ds;
        float *rowvals;
        barrier *kv_full;
        ring<S> *qr;
        __device__ __forceinline__ explicit layout(uint8_t *raw)
        {
            k = swizzle_aligned(raw);
            v = k + k_bytes;
            slots = v + v_bytes;
            ds = slots + S * slot_bytes;
            rowvals = reinterpret_cast<float *>(ds + 2 * ds_bytes);
            kv_full = reinterpret_cast<barrier *>(rowvals + 2 * 2 * BM);
            qr = reinterpret_cast<ring<S> *>(kv_full + 1);
        }
        __device__ __forceinline__ uint8_t *q(int slot) const { return slots + slot * slot_bytes; }
        __device__ __forceinline__ uint8_t *d_o(int slot) const { return q(slot) + q_bytes; }
        __device__ __forceinline__ uint8_t *ds_tile(int it) const { return ds + (it & 1) * ds_bytes; }
    };

    /* Does query block m see key block n (the forward's key range of the block, in blocks of BN)? The producer,
     * the consumers and the counters' ranks all take this one answer; *rank: n's place among the key blocks m
     * sees. */
    static __device__ __forceinline__ bool sees(const hk_attn_fwd_params &p, const attn_seq &sq, int m, int n,
                                                int *rank)
    {
        const int m0 = m * BM, last = min(m0 + BM, sq.len_q) - 1;
        const int lo = sq.key_lo(p, m0), hi = sq.key_hi(p, last);
        const int n_lo = lo / BN, n_hi = hi > lo ? (hi + BN - 1) / BN : n_lo;
        *rank = n - n_lo;
        return n >= n_lo && n < n_hi;
    }

    /* Warpgroup 0, one thread: K and V, then (Q, dO) of every (head, block) that sees key block n, in order. */
    static __device__ __forceinline__ void produce(const layout &sm, const CUtensorMap *mq, const CUtensorMap *mk,
                                                   const CUtensorMap *mv, const CUtensorMap *mdo,
                                                   const hk_attn_bwd_params &p, const attn_seq &sq, int hkv, int n)
    {
        const int bq = sq.varlen ? 0 : sq.b, m_blocks = (sq.len_q + BM - 1) / BM;
        sm.kv_full->arrive_expect_tx(k_bytes + v_bytes);
#pragma unroll
        for (int c = 0; c < D / 64; ++c)
            tma_load_4d(sm.k + c * BN * 128, mk, *sm.kv_full, c * 64, sq.row_k + n * BN, hkv, bq);
#pragma unroll
        for (int c = 0; c < DV / 64; ++c)
            tma_load_4d(sm.v + c * BN * 128, mv, *sm.kv_full, c * 64, sq.row_k + n * BN, hkv, bq);
        ring_pos<S> pos;
        int rank;
        for (int h = hkv * p.f.group; h < (hkv + 1) * p.f.group; ++h)
            for (int m = 0; m < m_blocks; ++m) {
                if (!sees(p.f, sq, m, n, &rank))
                    continue;
                barrier &b = sm.qr->produce(pos, slot_bytes);
#pragma unroll
                for (int c = 0; c < D / 64; ++c)
                    tma_load_4d(sm.q(pos.index) + c * BM * 128, mq, b, c * 64, sq.row_q + m * BM, h, bq);
#pragma unroll
                for (int c = 0; c < DV / 64; ++c)
                    tma_load_4d(sm.d_o(pos.index) + c * BM * 128, mdo, b, c * 64, sq.row_q + m * BM, h, bq);
                pos.advance();
            }
    }

    /* Add this warpgroup's half of the block's dQ into the fp32 accumulator: atomically, or after the key blocks
     * before this one (deterministic: counter `sem` at `rank`, then plain loads and stores, then counted). */
    static __device__ __forceinline__ void add_dq(const accum_64xN<DQ> &dq, const hk_attn_bwd_params &p,
                                                  const attn_seq &sq, int h, int m, int wg, int rank)
    {
        const int m0 = m * BM;
        uint32_t *sem = p.dq_sem ? p.dq_sem + ((((int64_t)sq.b * p.f.heads_q + h) * p.f.m_blocks + m) * 2 + wg)
                                 : nullptr;
        const uint32_t bar = 2 + wg, t = threadIdx.x % 128;
        if (sem) {
            if (t == 0)
                counter_wait(sem, (uint32_t)rank);
            named_barrier_sync(bar, 128);
        }
#pragma unroll
        for (int r = 0; r < accum_64xN<DQ>::regs; r += 2) {
            const int i = m0 + frag_row<DQ>(r);
            if (i >= sq.len_q)
                continue;
            float *dst = p.dq_acc + attn_row(p, sq, h, i) * p.acc_dim + wg * DQ + frag_col<DQ>(r);
            if (sem) {
                vec<float, 2> v = load_vec<2>(dst, cache_global{});
                v.v[0] += dq.v[r];
                v.v[1] += dq.v[r + 1];
                store_vec(dst, v, cache_global{});
            } else {
                red_add_f32x2(dst, dq.v[r], dq.v[r + 1]);
            }
        }
        if (sem) {
            named_barrier_sync(bar, 128);
            if (t == 0)
                counter_add(sem, 1);
        }
    }

    /* A consumer warpgroup: keys [n0 + 64 wg, + 64). */
    static __device__ __forceinline__ void consume(const layout &sm, const hk_attn_bwd_params &p, const attn_seq &sq,
                                                   int hkv, int n, int wg)
    {
        accum_64xN<D> dk;
        accum_64xN<DV> dv;
        dk.zero();
        dv.zero();
        const int n0 = n * BN, k0 = n0 + 64 * wg, m_blocks = (sq.len_q + BM - 1) / BM;
        const uint32_t t = threadIdx.x % 128;
        const bool is_lane0 = hk::lane() == 0;
        float *bias_s = sm.rowvals + wg * 2 * BM, *delta_s = bias_s + BM;
        const hk_attn_fwd_params &f = p.f;
        ring_pos<S> pos;
        /* Query i sees key j iff d_lo <= j - i <= d_hi (and both are in their sequence); |j - i| < 2^30, so the
         * bounds clamp to int32 without changing the answer. */
        const int d_lo = f.has_left ? (int)max((int64_t)INT32_MIN, (int64_t)sq.diag - f.left) : INT32_MIN;
        const int d_hi = f.has_right ? (int)min((int64_t)INT32_MAX, (int64_t)sq.diag + f.right) : INT32_MAX;
        int it = 0, rank;
        sm.kv_full->wait(0);
        for (int h = hkv * f.group; h < (hkv + 1) * f.group; ++h)
            for (int m = 0; m < m_blocks; ++m) {
                if (!sees(f, sq, m, n, &rank))
                    continue;
                const int m0 = m * BM;
                /* This warpgroup's copy of the block's LSE bias and delta (the last reads of the previous copy
                 * came before the previous block's barrier 1, which every thread passed). */
                {
                    const int i = m0 + (int)t % BM;
                    const bool real = i < sq.len_q;
                    const int64_t row = real ? attn_row(p, sq, h, i) : 0;
                    if (t < BM)
                        bias_s[t] = real ? attn_bias(f.lse[row]) : INFINITY;
                    else
                        delta_s[t - BM] = real ? p.delta[row] : 0.f;
                }
                named_barrier_sync(2 + wg, 128);
                sm.qr->consume(pos);
                const uint8_t *q = sm.q(pos.index), *d_o = sm.d_o(pos.index);

                accum_64xN<BM> s, dp;
#pragma unroll
                for (int c = 0; c < D / 64; ++c)
                    wgmma_kblock<T, false, false, 128>(s, sm.k + c * BN * 128 + wg * 64 * 128, q + c * BM * 128,
                                                       c == 0);
#pragma unroll
                for (int c = 0; c < DV / 64; ++c)
                    wgmma_kblock<T, false, false, 128>(dp, sm.v + c * BN * 128 + wg * 64 * 128, d_o + c * BM * 128,
                                                       c == 0);
                wgmma_wait<0>();
                reg_fence(s.v);
                reg_fence(dp.v);

                /* Element masks only where the block pair straddles an edge (the sequences' ends, the window's
                 * sides, the causal diagonal); j - i is the key's offset from the query. */
                const bool edge = m0 + BM > sq.len_q || k0 + 64 > sq.len_k || k0 - (m0 + BM - 1) < d_lo ||
                                  k0 + 63 - m0 > d_hi;
                /* Pairs of adjacent queries: P^T and dS^T packed to 16 bits as they are formed (the fp32 scores
                 * die pair by pair). */
                uint32_t pa[BM / 4], dsa[BM / 4];
#pragma unroll
                for (int r = 0; r < accum_64xN<BM>::regs; r += 2) {
                    float pe[2], ds[2];
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        const int c = frag_col<BM>(r + e);
                        attn_p_ds(p, s.v[r + e], dp.v[r + e], bias_s[c], delta_s[c], pe[e], ds[e]);
                        if (edge) {
                            const int j = k0 + frag_row<BM>(r), i = m0 + c;
                            const bool seen = i < sq.len_q && j < sq.len_k && j - i >= d_lo && j - i <= d_hi;
                            pe[e] = seen ? pe[e] : 0.f;
                            ds[e] = seen ? ds[e] : 0.f;
                        }
                    }
                    pa[r / 2] = hk::pack_pair<T>(pe[0], pe[1]);
                    dsa[r / 2] = hk::pack_pair<T>(ds[0], ds[1]);
                }
                /* dS^T for dQ: row = key (of the CTA's BN), 128 bytes of queries, swizzled as TMA would. */
                uint8_t *ds_tile = sm.ds_tile(it);
                const int st_row = 64 * wg + accum_64xN<BM>::stmatrix_row(hk::lane(), hk::warp() & 3);
#pragma unroll
                for (int r = 0; r < accum_64xN<BM>::regs; r += 8) {
                    const uint32_t w[4] = {dsa[r / 2], dsa[r / 2 + 1], dsa[r / 2 + 2], dsa[r / 2 + 3]};
                    stmatrix_x4(ds_tile + sw128_offset(st_row, 2 * accum_64xN<BM>::stmatrix_col(r, hk::lane())), w);
                }
                fence_proxy_async();

                wgmma_rs_block<T, BM>(dv, pa, d_o, BM * 128);
                wgmma_rs_block<T, BM>(dk, dsa, q, BM * 128);
                named_barrier_sync(1, 256); /* both halves of dS^T stored */
                /* The fragments' registers are free once these complete; dQ's accumulator takes them. */
                wgmma_wait<0>();
                reg_fence(dv.v);
                reg_fence(dk.v);
                reg_fence(pa);
                reg_fence(dsa);
                accum_64xN<DQ> dq;
#pragma unroll
                for (int kb = 0; kb < BN / 64; ++kb)
                    wgmma_kblock<T, true, true, 128>(dq, ds_tile + kb * 64 * 128,
                                                     sm.k + wg * DQ / 64 * BN * 128 + wg * DQ % 64 * 2 + kb * 64 * 128,
                                                     kb == 0);
                wgmma_wait<0>();
                reg_fence(dq.v);
                if (is_lane0)
                    sm.qr->release(pos);
                pos.advance();
                ++it;
                add_dq(dq, p, sq, h, m, wg, rank);
            }
        store_rows(dk, p.dk, p.dk_stride, p.f.head_dim, sq, hkv, k0);
        store_rows(dv, p.dv, p.dv_stride, p.f.head_dim_v, sq, hkv, k0);
    }

    /* Rows k0 + frag_row of an accumulator as T pairs (features < dim, keys < len_k). */
    template <int N>
    static __device__ __forceinline__ void store_rows(const accum_64xN<N> &acc, void *base, const int64_t (&st)[3],
                                                      int dim, const attn_seq &sq, int hkv, int k0)
    {
#pragma unroll
        for (int r = 0; r < accum_64xN<N>::regs; r += 2) {
            const int j = k0 + frag_row<N>(r), c = frag_col<N>(r);
            if (j >= sq.len_k || c >= dim)
                continue;
            T *dst = static_cast<T *>(base) + sq.offset(st, sq.row_k, j, hkv) + c;
            if (c + 1 < dim)
                store_from_float2(dst, acc.v[r], acc.v[r + 1]);
            else
                store_from_float(dst, acc.v[r]);
        }
    }

    static __device__ __forceinline__ void run(const CUtensorMap *mq, const CUtensorMap *mk, const CUtensorMap *mv,
                                               const CUtensorMap *mdo, const hk_attn_bwd_params &p)
    {
        extern __shared__ uint8_t smem_raw[];
        const int heads_batches = p.f.heads_kv * p.f.batch, rest = (int)blockIdx.x % heads_batches;
        const int n = (int)blockIdx.x / heads_batches, b = rest / p.f.heads_kv, hkv = rest % p.f.heads_kv;
        const attn_seq sq(p.f, b, hkv * p.f.group);
        if (n * BN >= sq.len_k)
            return;
        const layout sm(smem_raw);
        if (threadIdx.x == 0) {
            sm.kv_full->init(1);
            sm.qr->init(8); /* lane 0 of each consumer warp */
            fence_barrier_init();
        }
        cta_sync();
        const int wg = warpgroup_index();
        if (take_role<24, 240>(wg)) {
            if (threadIdx.x == 0) {
                tma_prefetch_map(mq);
                tma_prefetch_map(mk);
                tma_prefetch_map(mv);
                tma_prefetch_map(mdo);
                produce(sm, mq, mk, mv, mdo, p, sq, hkv, n);
            }
        } else {
            consume(sm, p, sq, hkv, n, wg - 1);
        }
    }
};

/* dQ of query row i (warp), lane l holding features l + 32 t of q, dO and dq. */
template <class T> __device__ __forceinline__ void attn_bwd_dq_rows(const hk_attn_bwd_params &p)
{
    constexpr int F = 256 / 32;
    const hk_attn_fwd_params &f = p.f;
    const int heads_batches = f.heads_q * f.batch, rest = (int)blockIdx.x % heads_batches;
    const attn_seq sq(f, rest / f.heads_q, rest % f.heads_q);
    const int i = (int)blockIdx.x / heads_batches * HK_ATTN_BWD_ROWS_WARPS + hk::warp(), ln = hk::lane();
    if (i >= sq.len_q)
        return;
    const int64_t row = sq.lse_index(f, i);
    const T *q = static_cast<const T *>(f.q) + sq.offset(f.q_stride, sq.row_q, i, sq.h);
    const T *d_o = static_cast<const T *>(p.d_o) + sq.offset(p.do_stride, sq.row_q, i, sq.h);
    float qf[F], dof[F], acc[F];
#pragma unroll
    for (int t = 0; t < F; ++t) {
        const int c = ln + 32 * t;
        qf[t] = c < f.head_dim ? load_as_float(q + c) : 0.f;
        dof[t] = c < f.head_dim_v ? load_as_float(d_o + c) : 0.f;
        acc[t] = 0.f;
    }
    const int hkv = sq.h / f.group, lo = sq.key_lo(f, i), hi = sq.key_hi(f, i);
    const float bias = attn_bias(f.lse[row]), delta = p.delta[row];
    for (int j = lo; j < hi && bias != INFINITY; ++j) {
        const T *k = static_cast<const T *>(f.k) + sq.offset(f.k_stride, sq.row_k, j, hkv);
        const T *v = static_cast<const T *>(f.v) + sq.offset(f.v_stride, sq.row_k, j, hkv);
        float s = 0.f, dp = 0.f;
#pragma unroll
        for (int t = 0; t < F; ++t) {
            const int c = ln + 32 * t;
            if (c < f.head_dim)
                s = fmaf(qf[t], load_as_float(k + c), s);
            if (c < f.head_dim_v)
                dp = fmaf(dof[t], load_as_float(v + c), dp);
        }
        float pe, ds;
        attn_p_ds(p, hk::warp_sum(s), hk::warp_sum(dp), bias, delta, pe, ds);
#pragma unroll
        for (int t = 0; t < F; ++t)
            if (ln + 32 * t < f.head_dim)
                acc[t] = fmaf(ds, load_as_float(k + ln + 32 * t), acc[t]);
    }
    T *dq = static_cast<T *>(p.dq) + sq.offset(p.dq_stride, sq.row_q, i, sq.h);
#pragma unroll
    for (int t = 0; t < F; ++t)
        if (ln + 32 * t < f.head_dim)
            store_from_float(dq + ln + 32 * t, acc[t]);
}

/* dK and dV of key row j (warp) of a kv head, summed over the group's query heads and the rows that see j (in a
 * fixed order): i sees j iff i + diag - left <= j (has_left) and j <= i + diag + right (has_right). */
template <class T> __device__ __forceinline__ void attn_bwd_dkv_rows(const hk_attn_bwd_params &p)
{
    constexpr int F = 256 / 32;
    const hk_attn_fwd_params &f = p.f;
    const int heads_batches = f.heads_kv * f.batch, rest = (int)blockIdx.x % heads_batches;
    const int hkv = rest % f.heads_kv;
    const attn_seq sq(f, rest / f.heads_kv, hkv * f.group);
    const int j = (int)blockIdx.x / heads_batches * HK_ATTN_BWD_ROWS_WARPS + hk::warp(), ln = hk::lane();
    if (j >= sq.len_k)
        return;
    const T *k = static_cast<const T *>(f.k) + sq.offset(f.k_stride, sq.row_k, j, hkv);
    const T *v = static_cast<const T *>(f.v) + sq.offset(f.v_stride, sq.row_k, j, hkv);
    float kf[F], vf[F], dk[F], dv[F];
#pragma unroll
    for (int t = 0; t < F; ++t) {
        const int c = ln + 32 * t;
        kf[t] = c < f.head_dim ? load_as_float(k + c) : 0.f;
        vf[t] = c < f.head_dim_v ? load_as_float(v + c) : 0.f;
        dk[t] = dv[t] = 0.f;
    }
    const int64_t rel = (int64_t)j - sq.diag;
    const int lo = f.has_right ? (int)max((int64_t)0, rel - f.right) : 0;
    const int hi = f.has_left ? (int)min((int64_t)sq.len_q, max((int64_t)0, rel + f.left + 1)) : sq.len_q;
    for (int h = hkv * f.group; h < (hkv + 1) * f.group; ++h)
        for (int i = lo; i < hi; ++i) {
            const int64_t row = attn_row(p, sq, h, i);
            const float bias = attn_bias(f.lse[row]);
            if (bias == INFINITY)
                continue;
            const T *q = static_cast<const T *>(f.q) + sq.offset(f.q_stride, sq.row_q, i, h);
            const T *d_o = static_cast<const T *>(p.d_o) + sq.offset(p.do_stride, sq.row_q, i, h);
            float qf[F], dof[F], s = 0.f, dp = 0.f;
#pragma unroll
            for (int t = 0; t < F; ++t) {
                const int c = ln + 32 * t;
                qf[t] = c < f.head_dim ? load_as_float(q + c) : 0.f;
                dof[t] = c < f.head_dim_v ? load_as_float(d_o + c) : 0.f;
                s = fmaf(qf[t], kf[t], s);
                dp = fmaf(dof[t], vf[t], dp);
            }
            float pe, ds;
            attn_p_ds(p, hk::warp_sum(s), hk::warp_sum(dp), bias, p.delta[row], pe, ds);
#pragma unroll
            for (int t = 0; t < F; ++t) {
                dk[t] = fmaf(ds, qf[t], dk[t]);
                dv[t] = fmaf(pe, dof[t], dv[t]);
            }
        }
    T *dkp = static_cast<T *>(p.dk) + sq.offset(p.dk_stride, sq.row_k, j, hkv);
    T *dvp = static_cast<T *>(p.dv) + sq.offset(p.dv_stride, sq.row_k, j, hkv);
#pragma unroll
    for (int t = 0; t < F; ++t) {
        const int c = ln + 32 * t;
        if (c < f.head_dim)
            store_from_float(dkp + c, dk[t]);
        if (c < f.head_dim_v)
            store_from_float(dvp + c, dv[t]);
    }
}

} // namespace hk::hopper

#define HK_ATTN_BWD_TILED(t, T, D, DV)                                                                             \
    extern "C" __global__ void __launch_bounds__(HK_ATTN_BWD_THREADS, 1)                                           \
        hk_attn_bwd_##t##_d##D##_##DV(const __grid_constant__ CUtensorMap mq, const __grid_constant__ CUtensorMap mk, \
                                      const __grid_constant__ CUtensorMap mv,                                      \
                                      const __grid_constant__ CUtensorMap mdo,                                     \
                                      const __grid_constant__ hk_attn_bwd_params p)                                \
    {                                                                                                              \
        hk::hopper::attn_bwd_tile<T, D, DV>::run(&mq, &mk, &mv, &mdo, p);                                          \
    }
#define HK_ATTN_BWD_ROWS(t, T, name, fn)                                                                           \
    extern "C" __global__ void __launch_bounds__(32 * HK_ATTN_BWD_ROWS_WARPS)                                      \
        hk_attn_bwd_##t##_##name(const __grid_constant__ hk_attn_bwd_params p)                                     \
    {                                                                                                              \
        hk::hopper::fn<T>(p);                                                                                      \
    }
#define HK_ATTN_BWD_TYPE(t, T)                                                                                     \
    HK_ATTN_BWD_TILED(t, T, 64, 64)                                                                                \
    HK_ATTN_BWD_TILED(t, T, 128, 128)                                                                              \
    HK_ATTN_BWD_ROWS(t, T, pre, attn_bwd_pre)                                                                      \
    HK_ATTN_BWD_ROWS(t, T, dq, attn_bwd_dq_convert)                                                                \
    HK_ATTN_BWD_ROWS(t, T, dq_rows, attn_bwd_dq_rows)                                                              \
    HK_ATTN_BWD_ROWS(t, T, dkv_rows, attn_bwd_dkv_rows)

HK_ATTN_BWD_TYPE(bf16, __nv_bfloat16)
HK_ATTN_BWD_TYPE(f16, __half)
