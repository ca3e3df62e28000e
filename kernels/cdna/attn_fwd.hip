/* Attention forward for CDNA (gfx942, gfx950 and the wave emulator): O = softmax(mask(cap(scale Q K^T))) V per query
 * head, and its LSE, for bf16 and f16 at runtime shapes with every mask of hk.h (causal bottom-right, sliding window),
 * softcap, head_dim_v != head_dim, GQA/MQA, varlen and any strides.
 *
 * A block of 4 waves takes BM = 4 QW query rows of one (sequence, head). Each wave keeps its QW rows of Q in
 * registers (staged through LDS once) and walks the KV blocks of BN keys that some row of the block can see. K and
 * V^T go through LDS, double-buffered where the arch's LDS holds two stages: while the waves compute on one stage,
 * the next KV block (loaded from global memory during the previous one and held in registers) is stored into the
 * other. Products are kept transposed, the query in the lane: S^T = K Q^T (mma_abt), so each lane holds whole query
 * columns and the softmax statistics are per-lane scalars; O^T += V^T P^T, where the S^T accumulator fragments,
 * rounded to the input type, already are the P^T operand (the V^T tile interleaves 4-key quads to match:
 * k_quads_interleaved). The softmax runs in base 2 with the scale folded into exp2_scale (attn_params.h): x = t
 * exp2_scale, p = 2^(x - m), and O and l are rescaled by 2^(m_old - m) when the running maximum m grows.
 * Masks: only the KV blocks that some row of the block sees are visited; element masks are applied only on blocks
 * that cut some row. Rows past the sequence and features past head_dim / head_dim_v read zeros through the
 * range-checked buffer views and are never written.
 */
#include "tiles/common/tiles.hpp"
#include "tiles/cdna3/gemm_tiles.hpp"
#include "common/attn_params.h"

namespace {

using namespace hk;

/* Per arch the MFMA atom per input type: 16 x 16 x 32, one 16-byte LDS read per lane and fragment (two 16x16x16
 * instructions on gfx942). */
template <typename T> struct attn_atom;
#if HK_GFX >= 950
template <> struct attn_atom<bf16> { using type = mma_bf16_16x16x32; };
template <> struct attn_atom<f16> { using type = mma_f16_16x16x32; };
#else
template <> struct attn_atom<bf16> { using type = mma_pair<mma_bf16_16x16x16>; };
template <> struct attn_atom<f16> { using type = mma_pair<mma_f16_16x16x16>; };
#endif
/* LDS tiles have 128-byte rows (BK elements) on both archs: the 16-row fragment reads stay free of bank conflicts
 * (lds_tile's swizzle; the emulator checks every read), and a D-deep tile takes D / BK steps, each with a buffer
 * view of its own whose scalar registers the loop keeps live (64-byte rows run gfx942 out of SGPRs at D = 256).
 * KV blocks are BN = BK keys. */
constexpr int kBK = 64, kBN = 64, kKS = 32, kThreads = HK_CDNA_ATTN_THREADS;
/* Two stages of K and V^T where the arch's LDS holds them, else one. */
template <int D, int DV> constexpr int kStages = 2 * kBN * (D + DV) * 2 <= kLdsBytes ? 2 : 1;

template <typename T, int D, int DV, bool Aligned> HK_DEV void attn_fwd(const hk_attn_fwd_params &p)
{
    using Atom = typename attn_atom<T>::type;
    using A = typename Atom::A;
    using C = typename Atom::C;
    constexpr int QW = HK_CDNA_ATTN_QW(D), BM = HK_CDNA_ATTN_BM(D), BN = kBN, BK = kBK, KS = kKS, NQ = QW / 16;
    constexpr int S = kStages<D, DV>, kStage = BN * (D + DV); /* elements of a stage: K, then V^T */
    static_assert(A::kElems == 8 && C::kRows == 16 && C::kElems == 4 && A::kCols == KS, "16 x 16 x 32 atoms");
    static_assert(D % BK == 0 && DV % BK == 0 && BN % BK == 0 && BK % KS == 0 && BM * D <= S * kStage, "tiles");
    HK_LDS(T, lds, S * kStage);
    auto ktile = [&](int s, int i) { return lds_tile<T, BN, BK>{lds + s * kStage + i * BN * BK}; };
    auto vtile = [&](int s, int i) { return lds_tile<T, DV, BK>{lds + s * kStage + BN * D + i * DV * BK}; };

    /* This block's query tile: query tiles are outermost in the grid, the last (under a causal mask the ones that see
     * the most keys) first. */
    const int bh = p.heads_q * p.batch, id = block_x();
    const int mt = p.m_blocks - 1 - id / bh, h = id % bh % p.heads_q, b = id % bh / p.heads_q, kvh = h / p.group;
    const bool varlen = p.cu_seqlens_q != nullptr;
    const int tq = varlen ? p.cu_seqlens_q[b] : 0, tk = varlen ? p.cu_seqlens_k[b] : 0;
    const int nq = varlen ? p.cu_seqlens_q[b + 1] - tq : p.seqlen_q, nk = varlen ? p.cu_seqlens_k[b + 1] - tk : p.seqlen_k;
    const int q0 = mt * BM;
    if (q0 >= nq)
        return;
    const T *q = static_cast<const T *>(p.q) + (varlen ? tq * p.q_stride[1] : b * p.q_stride[0]) + h * p.q_stride[2];
    const T *k = static_cast<const T *>(p.k) + (varlen ? tk * p.k_stride[1] : b * p.k_stride[0]) + kvh * p.k_stride[2];
    const T *v = static_cast<const T *>(p.v) + (varlen ? tk * p.v_stride[1] : b * p.v_stride[0]) + kvh * p.v_stride[2];
    T *o = static_cast<T *>(p.o) + (varlen ? tq * p.o_stride[1] : b * p.o_stride[0]) + h * p.o_stride[2];
    const int32_t qs = (int32_t)p.q_stride[1], ks = (int32_t)p.k_stride[1], vs = (int32_t)p.v_stride[1];

    /* The keys some row of the tile sees: [lo, hi), visited as KV blocks kb0 .. kb1 - 1. */
    const int diag = nk - nq, left = (int)p.left, right = (int)p.right;
    const int qlast = (q0 + BM < nq ? q0 + BM : nq) - 1;
    const int lo = p.has_left && q0 + diag - left > 0 ? q0 + diag - left : 0;
    const int hi = p.has_right && qlast + diag + right + 1 < nk ? qlast + diag + right + 1 : nk;
    const int kb0 = lo / BN, kb1 = hi > lo ? (hi + BN - 1) / BN : kb0;

    /* A stage reads step s of its operand, or holds zeros where the step lies past the operand's extent. */
    auto fill = [](auto &st, int step, bool in_range) {
        if (in_range)
            st.load(step);
        else
            for (auto &x : st.v)
                x = {};
    };

    /* Q: global -> LDS (aliasing the KV stages) -> this wave's fragments. */
    const int w = warp(), qw0 = q0 + w * QW;
    const bool active = qw0 < nq; /* waves past the sequence still stage K and V for the others */
    rt<T, QW, KS, A> qf[D / KS];
    {
        stage<T, BM, BK, true, Aligned, kThreads> sq[D / BK];
        HK_UNROLL
        for (int s = 0; s < D / BK; ++s) {
            sq[s].x = {q + (int64_t)q0 * qs, nq - q0, p.head_dim, qs};
            fill(sq[s], s, s * BK < p.head_dim);
            sq[s].store(lds_tile<T, BM, BK>{lds + s * BM * BK});
        }
        raw::lds_barrier();
        HK_UNROLL
        for (int s = 0; s < D / KS; ++s)
            load(qf[s], lds_tile<T, BM, BK>{lds + s * KS / BK * BM * BK}, w * QW, s * KS % BK);
        raw::lds_barrier();
    }

    stage<T, BN, BK, true, Aligned, kThreads> sk[D / BK];
    stage<T, DV, BK, false, Aligned, kThreads, k_quads_interleaved> sv[BN / BK];
    auto fetch = [&](int kb) {
        const int kv0 = kb * BN;
        HK_UNROLL
        for (int s = 0; s < D / BK; ++s) {
            sk[s].x = {k + (int64_t)kv0 * ks, nk - kv0, p.head_dim, ks};
            fill(sk[s], s, s * BK < p.head_dim);
        }
        HK_UNROLL
        for (int c = 0; c < BN / BK; ++c) {
            sv[c].x = {v + (int64_t)kv0 * vs, p.head_dim_v, nk - kv0, vs};
            fill(sv[c], c, kv0 + c * BK < nk);
        }
    };
    auto put = [&](int st) {
        HK_UNROLL
        for (int s = 0; s < D / BK; ++s)
            sk[s].store(ktile(st, s));
        HK_UNROLL
        for (int c = 0; c < BN / BK; ++c)
            sv[c].store(vtile(st, c));
    };

    const float neg_inf = -__builtin_inff();
    float m[NQ], l[NQ]; /* running maximum (base 2, scaled) and sum of the wave's query columns */
    HK_UNROLL
    for (int i = 0; i < NQ; ++i)
        m[i] = neg_inf, l[i] = 0.0f;
    rt<float, DV, QW, C> acc; /* O^T */
    zero(acc);
    const int la = lane();

    /* One KV block from stage st: S^T, masks, online softmax, O^T += V^T P^T. */
    auto block = [&](int st, int kb) {
        const int kv0 = kb * BN;
        rt<float, BN, QW, C> s;
        zero(s);
        HK_UNROLL
        for (int d = 0; d < D / KS; ++d) {
            rt<T, BN, KS, A> kf;
            load(kf, ktile(st, d * KS / BK), 0, d * KS % BK);
            mma_abt<Atom>(s, qf[d], kf);
        }
        const bool full = kv0 + BN <= nk && (!p.has_left || kv0 >= qlast + diag - left) &&
                          (!p.has_right || kv0 + BN - 1 <= q0 + diag + right);
        HK_UNROLL
        for (int j = 0; j < s.kTR; ++j)
            HK_UNROLL
            for (int i = 0; i < NQ; ++i)
                HK_UNROLL
                for (int e = 0; e < C::kElems; ++e) {
                    float x = s.d[j][i][e] * p.score_scale;
                    if (p.softcap > 0.0f)
                        x = p.softcap * tanh_fast(x);
                    x *= p.exp2_scale;
                    if (!full) {
                        const int key = kv0 + j * 16 + C::row(la, e), qi = qw0 + i * 16 + C::col(la, e);
                        const bool seen = key < nk && (!p.has_left || key >= qi + diag - left) &&
                                          (!p.has_right || key <= qi + diag + right);
                        x = seen ? x : neg_inf;
                    }
                    s.d[j][i][e] = x;
                }
        float mx[NQ], base[NQ], alpha[NQ], sum[NQ];
        col_max(mx, s);
        HK_UNROLL
        for (int i = 0; i < NQ; ++i) {
            const float mn = mx[i] > m[i] ? mx[i] : m[i];
            base[i] = mn == neg_inf ? 0.0f : mn; /* a column that has seen no key yet keeps p = 0, never NaN */
            alpha[i] = exp2_fast(m[i] - base[i]);
            m[i] = mn;
        }
        HK_UNROLL
        for (int j = 0; j < s.kTR; ++j)
            HK_UNROLL
            for (int i = 0; i < NQ; ++i)
                HK_UNROLL
                for (int e = 0; e < C::kElems; ++e)
                    s.d[j][i][e] = exp2_fast(s.d[j][i][e] - base[i]);
        col_sum(sum, s);
        HK_UNROLL
        for (int i = 0; i < NQ; ++i)
            l[i] = l[i] * alpha[i] + sum[i];
        mul_cols(acc, alpha);
        HK_UNROLL
        for (int c = 0; c < BN / KS; ++c) {
            /* P^T operand of keys 32c .. 32c + 31: item e of a lane is item e % 4 of S^T fragment 2c + e / 4. */
            rt<T, QW, KS, A> pf;
            HK_UNROLL
            for (int i = 0; i < NQ; ++i)
                HK_UNROLL
                for (int e = 0; e < A::kElems; ++e)
                    pf.d[i][0][e] = from_float<T>(s.d[2 * c + e / 4][i][e % 4]);
            rt<T, DV, KS, A> vf;
            load(vf, vtile(st, c * KS / BK), 0, c * KS % BK);
            mma_abt<Atom>(acc, pf, vf);
        }
    };

    const int n = kb1 - kb0;
    if (n > 0) {
        fetch(kb0);
        put(0);
        if (n > 1)
            fetch(kb0 + 1);
    }
    raw::lds_barrier();
#if defined(__clang__)
#pragma clang loop unroll(disable)
#endif
    for (int i = 0; i < n; ++i) {
        const int cur = S == 2 ? i & 1 : 0;
        if (S == 2 && i + 1 < n) { /* the other stage was last read before the previous barrier */
            put(cur ^ 1);
            if (i + 2 < n)
                fetch(kb0 + i + 2);
        }
        if (active)
            block(cur, kb0 + i);
        if (S == 1) {
            raw::lds_barrier();
            if (i + 1 < n) {
                put(0);
                if (i + 2 < n)
                    fetch(kb0 + i + 2);
            }
        }
        raw::lds_barrier();
    }
    if (!active)
        return;

    /* O = O^T / l (zeros where a row saw no key) as vectors of 4 features; LSE = ln(2^m l). */
    float inv[NQ];
    HK_UNROLL
    for (int i = 0; i < NQ; ++i)
        inv[i] = l[i] > 0.0f ? rcp_fast(l[i]) : 0.0f;
    mul_cols(acc, inv);
    const int rows = nq - qw0;
    const out_view<T> ov = out_view<T>::make(o + (int64_t)qw0 * p.o_stride[1], p.o_stride[1], rows, p.head_dim_v, QW,
                                             DV, Aligned);
    HK_UNROLL
    for (int j = 0; j < acc.kTR; ++j)
        HK_UNROLL
        for (int i = 0; i < NQ; ++i) {
            const int r = i * 16 + C::col(la, 0), c = j * 16 + C::row(la, 0);
            if (r < rows && c < p.head_dim_v)
                ov.store4(r, c, acc.d[j][i]);
        }
    if (p.lse && la < 16) {
        float *lse = p.lse + (varlen ? (int64_t)h * p.cu_seqlens_q[p.batch] + tq
                                     : ((int64_t)b * p.heads_q + h) * p.seqlen_q) + qw0;
        HK_UNROLL
        for (int i = 0; i < NQ; ++i)
            if (i * 16 + la < rows)
                lse[i * 16 + la] = l[i] > 0.0f ? (m[i] + log2_fast(l[i])) * 0.6931471805599453f : neg_inf;
    }
}

} // namespace

/* hk_attn_fwd_<bf16|f16>_d<D>_<DV>[_u: any alignment, element-wise loads and stores]; the host picks one
 * (backends/hip/cdna_plan.c): the smallest (D, DV) holding head_dim and head_dim_v. */
#define HK_ATTN_KERNEL(T, tn, D, DV, AL, suffix)                                                                \
    HK_KERNEL(hk_attn_fwd_##tn##_d##D##_##DV##suffix, hk_attn_fwd_params, HK_CDNA_ATTN_THREADS)                \
    {                                                                                                          \
        attn_fwd<T, D, DV, AL>(p);                                                                             \
    }
#define HK_ATTN_DIMS(T, tn, D, DV)                                                                              \
    HK_ATTN_KERNEL(T, tn, D, DV, true, )                                                                       \
    HK_ATTN_KERNEL(T, tn, D, DV, false, _u)
#define HK_ATTN_TYPE(T, tn)                                                                                     \
    HK_ATTN_DIMS(T, tn, 64, 64)                                                                                \
    HK_ATTN_DIMS(T, tn, 128, 128)                                                                              \
    HK_ATTN_DIMS(T, tn, 192, 128)                                                                              \
    HK_ATTN_DIMS(T, tn, 256, 256)

HK_ATTN_TYPE(hk::bf16, bf16)
HK_ATTN_TYPE(hk::f16, f16)
