/* Hopper (sm_90a) GEMM: D = alpha * op(A) op(B) + beta * C, row-major, fp32 accumulation.
 *
 * A CTA computes output tiles of BM x BN (launch shapes in gemm.h). Warpgroup 0 is the producer: one thread
 * streams A and B k-blocks into a STAGES-deep ring of shared-memory tiles with TMA, each stage guarded by a
 * "full" mbarrier (TMA bytes landed) and an "empty" mbarrier (every consumer of the stage done reading). The
 * other warpgroups are consumers: each owns 64 rows of the tile as a 64 x BN fp32 accumulator and issues
 * wgmma straight from shared memory, keeping one k-block of mma in flight; a warpgroup whose rows all lie
 * past m skips its mma. e4m3 accumulates in the tensor cores' reduced fp8-path precision over all of K (fast
 * accumulation), or with params.promote over 128 elements of K at a time, each sum added to the fp32
 * accumulator. TMA zero-fills out-of-bounds boxes, so ragged M/N/K need no special main loop. The epilogue
 * stages each warpgroup's accumulator through shared memory into TMA stores (clipped to m x n by the hardware)
 * when D's layout allows, else it stores straight from registers with masks.
 *
 * Work per CTA: units of work are a part of K of a tile (params.split parts per tile, 1 without split).
 * Persistent shapes walk units in an L2-friendly grouped tile order, the last two rounds' tiles in params.finale
 * parts of K where the host asks (the finale: parts meet in the workspace); the others take one unit. In clusters of
 * two with params.split = 2 the two CTAs each take half of K and add their partial accumulators through
 * distributed shared memory before one epilogue per column slice; the pooled shape with split > 1 (one unit per
 * CTA) parks partial tiles in the caller's workspace, and a second kernel, gemm_pooled_sum, adds them and writes
 * D (as cuBLASLt's split-K does). Swapped shapes compute D^T = B^T A^T (the host passes the operands and m/n
 * exchanged) and write D transposed: persistent ones through transposed staging and TMA stores, the one-tile
 * skinny ones from registers.
 *
 * Programmatic dependent launch: the host launches these kernels so that they may start before the previous
 * kernel of the stream has finished; barrier init and tensor-map prefetch run first, then every thread waits
 * for that kernel (grid_dependency_wait) before touching A, B, C or D, and each CTA lets the next kernel start
 * once its last load is issued (grid_dependents_launch). Launched plainly, both are no-ops. */
#include "hopper/gemm.h"
#include "tiles/common/tiles.hpp"
#include "tiles/hopper/barrier.cuh"
#include "tiles/hopper/memory.cuh"
#include "tiles/hopper/mma.cuh"
#include "tiles/hopper/tma.cuh"

namespace hk::hopper {

using gemm_params = hk_gemm_params;

/* A launch shape of gemm.h, and the shared-memory layout it implies (A and B stages of 128-byte rows). */
template <int BM, int BN, int STAGES, int CLUSTER, bool PERSIST, bool SWAP, bool POOL = false, bool ACC32 = false>
struct gemm_shape {
    static constexpr int bm = BM, bn = BN, stages = STAGES, cluster = CLUSTER;
    static constexpr bool persist = PERSIST, swap = SWAP, pool = POOL, acc32 = ACC32;
    static constexpr bool reg_store = HK_GEMM_REG_STORE(PERSIST, SWAP);
    static constexpr int consumers = BM / 64, threads = HK_GEMM_THREADS(BM);
    /* setmaxnreg budgets out of 64 Ki registers (0: keep the launch's): two consumers 232 beside a producer of 40;
     * three 128 wide (M192N128, two accumulators each for fp32 accumulation) 160 beside 32; M192N96's three fit the
     * launch's 128 */
    static constexpr int consumer_regs = consumers == 2 ? 232 : consumers == 3 && BN == 128 ? 160 : 0;
    static constexpr int producer_regs = consumers == 2 ? 40 : consumers == 3 && BN == 128 ? 32 : 0;
    static_assert(!consumer_regs || 128 * producer_regs + 128 * consumers * consumer_regs <= 65536, "64 Ki registers");
    static constexpr uint32_t a_bytes = BM * 128, b_bytes = BN * 128, stage_bytes = a_bytes + b_bytes;
    static constexpr int epi_bufs = HK_GEMM_EPI_BUFS(PERSIST, SWAP);
    static constexpr uint32_t epi_bytes = epi_bufs * 64 * 128; /* per consumer */
    static constexpr uint32_t smem_bytes = HK_GEMM_SHARED_BYTES(BM, BN, STAGES, PERSIST, SWAP);
    static_assert(STAGES * stage_bytes + consumers * epi_bytes + 1024 == smem_bytes, "gemm.h disagrees");
    static_assert(smem_bytes <= HK_GEMM_SMEM_LIMIT, "shared memory");
    static_assert(CLUSTER == 1 || (!PERSIST && CLUSTER == 2), "split K pairs the CTAs of a cluster");
    static_assert(!POOL || (CLUSTER == 1 && !PERSIST && !SWAP), "pooled: one unit per CTA, D not transposed");
};
#define HK_GEMM_SHAPE_TYPE(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool)                                \
    using gemm_shape_##id = gemm_shape<bm, bn, stages, cluster, persist, swap, pool, lay == 5>;
HK_GEMM_SHAPES(HK_GEMM_SHAPE_TYPE)
#undef HK_GEMM_SHAPE_TYPE

/* n / d and n % d for n >= 0 through rcp, d's float reciprocal: the quotient is within one of the truth for n < 2^22
 * (float's 24 bits, three roundings) and corrected once; a plain division above. */
__host__ __device__ __forceinline__ int gemm_quot(int n, int d, float rcp, int &rem)
{
    if (n >= 1 << 22) {
        rem = n % d;
        return n / d;
    }
    int q = (int)((float)n * rcp);
    rem = n - q * d;
    if (rem < 0) --q, rem += d;
    else if (rem >= d) ++q, rem -= d;
    return q;
}

/* Tile t of the persistent walk: groups of group_m tile rows, column-major inside a group, so the CTAs running at
 * once share A rows and B columns in L2. The divisors and their reciprocals come with the parameters
 * (hk_gemm_set_walk): as run-time signed divisions, the walk cost ~130 instructions per unit on every consumer warp,
 * between a tile's epilogue and the next one's first k-block. (Host too: the
 * harness's trace names CTAs' tiles.) */
__host__ __device__ __forceinline__ void gemm_tile(int t, int tiles_m, const gemm_params &p, int &tm, int &tn)
{
    int r, row;
    const int first = gemm_quot(t, p.walk_group, p.walk_rcp[0], r) * p.group_m;
    tn = tiles_m - first < p.group_m ? gemm_quot(r, p.walk_last_rows, p.walk_rcp[2], row)
                                     : gemm_quot(r, p.group_m, p.walk_rcp[1], row);
    tm = first + row;
}

/* The first column of tile column tn. The last one starts at params.col_last (hk_gemm_col_last): at n - bn where
 * n is ragged, so that its B boxes end at the operand's edge. */
__device__ __forceinline__ int gemm_col0(int tn, int bn, const gemm_params &p)
{
    return tn * bn < p.col_last ? tn * bn : p.col_last;
}

/* Element (row, col) of the kernel's m x n result: its address in D (or C) of pitch ld. Swapped shapes
 * compute D^T, so their rows are D's columns. */
template <bool SWAP> __device__ __forceinline__ int64_t gemm_at(int row, int col, int64_t ld)
{
    return SWAP ? col * ld + row : row * ld + col;
}

/* D = A B (alpha 1, beta 0: the usual call), where the scale is exactly the identity. */
__device__ __forceinline__ bool gemm_plain_scale(const gemm_params &p) { return p.alpha == 1.f && p.beta == 0.f; }

/* alpha * (x, y) + beta * C at the kernel's (row, col) and (row, col + 1); C is read inside m x n only. */
template <class TO, bool SWAP>
__device__ __forceinline__ void gemm_scale_pair(const gemm_params &p, int row, int col, float &x, float &y)
{
    if (gemm_plain_scale(p))
        return;
    x *= p.alpha;
    y *= p.alpha;
    if (p.beta != 0.f && row < p.m && col < p.n) {
        const TO *c = static_cast<const TO *>(p.c);
        x += p.beta * load_as_float(c + gemm_at<SWAP>(row, col, p.ldc));
        if (col + 1 < p.n) y += p.beta * load_as_float(c + gemm_at<SWAP>(row, col + 1, p.ldc));
    }
}

/* D's elements (row, col) and (row, col + 1) of the kernel's result (inside m x n), the second only inside n:
 * alpha * (x, y) + beta * C, as one 2-element store where D allows (never when swapped: the pair then spans two rows
 * of D). */
template <class TO, bool SWAP>
__device__ __forceinline__ void gemm_store_pair(const gemm_params &p, int row, int col, float x, float y)
{
    TO *d = static_cast<TO *>(p.d);
    const bool pair = col + 1 < p.n;
    gemm_scale_pair<TO, SWAP>(p, row, col, x, y);
    TO *dp = d + gemm_at<SWAP>(row, col, p.ldd);
    if (!SWAP && pair && p.vec2) {
        store_from_float2(dp, x, y);
    } else {
        store_from_float(dp, x);
        if (pair) store_from_float(d + gemm_at<SWAP>(row, col + 1, p.ldd), y);
    }
}

/* Registers r, r + 1 of a warpgroup's accumulator at (row0, col0), scaled (gemm_scale_pair) where they lie. */
template <class TO, bool SWAP, int BN>
__device__ __forceinline__ void gemm_scaled_regs(const accum_64xN<BN> &acc, const gemm_params &p, int r, int row0, int col0,
                                                 float &x, float &y)
{
    x = acc.v[r];
    y = acc.v[r + 1];
    gemm_scale_pair<TO, SWAP>(p, row0 + accum_64xN<BN>::row(r, lane(), warp() % 4), col0 + accum_64xN<BN>::col(r, lane()),
                              x, y);
}

/* Registers [r, r + 8) the same, packed for stmatrix_x4 (word q: registers r + 2q, r + 2q + 1; 16-bit TO). Where
 * D = A B the conversions alone, decided once for the eight registers: the scale's work sat on the tile boundary,
 * where the tensor cores wait. */
template <class TO, bool SWAP, int BN>
__device__ __forceinline__ void gemm_scaled_words(const accum_64xN<BN> &acc, const gemm_params &p, int r, int row0, int col0,
                                                  uint32_t (&w)[4])
{
    if (gemm_plain_scale(p)) {
#pragma unroll
        for (int q = 0; q < 4; ++q) w[q] = pack_pair<TO>(acc.v[r + 2 * q], acc.v[r + 2 * q + 1]);
        return;
    }
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        float x, y;
        gemm_scaled_regs<TO, SWAP>(acc, p, r + 2 * q, row0, col0, x, y);
        w[q] = pack_pair<TO>(x, y);
    }
}

/* Write one warpgroup's 64 x BN accumulator at (row0, col0) from registers, masked to m x n; only
 * registers [r0, r1) (a column slice: 4 registers per 8 columns). */
template <class TO, bool SWAP, int BN>
__device__ __forceinline__ void gemm_epilogue(accum_64xN<BN> &acc, const gemm_params &p, int row0, int col0, int r0, int r1)
{
    using acc_t = accum_64xN<BN>;
    const int ln = lane(), wp = warp() % 4;
#pragma unroll
    for (int r = 0; r < acc_t::regs; r += 2) {
        const int row = row0 + acc_t::row(r, ln, wp), col = col0 + acc_t::col(r, ln);
        if (r < r0 || r >= r1 || row >= p.m || col >= p.n) continue;
        gemm_store_pair<TO, SWAP>(p, row, col, acc.v[r], acc.v[r + 1]);
    }
}

/* The staging protocol of both TMA epilogues: the warpgroup's result leaves in pieces of at most 64 rows x 128
 * bytes through its Bufs buffers of 8 KiB in turn. Every thread writes its part of piece j with fill(buf, j), then
 * one thread stores the box with store(buf, j); a buffer is refilled only once its previous store has read
 * it, so writing one piece overlaps the store of the one before. Pieces with skip(j) are not written. */
template <int Pieces, int Bufs, class Skip, class Fill, class Store>
__device__ __forceinline__ void gemm_staged_stores(uint8_t *stage, int slab, Skip skip, Fill fill, Store store)
{
    const bool leader = thread() % 128 == 0;
    if (leader) tma_store_wait_read<0>(); /* the previous tile's stores have left the buffers */
    named_barrier_sync(1 + slab, 128);
    int issued = 0;
#pragma unroll
    for (int j = 0; j < Pieces; ++j) {
        if (skip(j)) continue;
        uint8_t *buf = stage + (issued % Bufs) * (64 * 128);
        if (issued >= Bufs) {
            if (leader) tma_store_wait_read<Bufs - 1>();
            named_barrier_sync(1 + slab, 128);
        }
        fill(buf, j);
        fence_proxy_async();
        named_barrier_sync(1 + slab, 128);
        if (leader) {
            store(buf, j);
            tma_store_commit();
        }
        ++issued;
    }
}

/* The pieces of a warpgroup's 64 x BN tile of D for the TMA epilogue: column chunks of 128 bytes, then the columns
 * past the last whole chunk (the tail: BN = 96, 144, 168, 208). */
template <class TO, int BN> struct gemm_pieces {
    static constexpr int cols = 128 / sizeof(TO), chunks = BN / cols, regs = cols / 2, tail = BN - chunks * cols;
    static constexpr int count = chunks + (tail ? 1 : 0);
};

/* Piece j of a warpgroup's tile at (row0, col0), staged at buf: column chunk j through map_d, the tail through map_t. */
template <class TO, int BN>
__device__ __forceinline__ void gemm_store_piece(const CUtensorMap *map_d, const CUtensorMap *map_t, const uint8_t *buf,
                                                 int j, int row0, int col0)
{
    using pc = gemm_pieces<TO, BN>;
    tma_store_2d(j == pc::chunks ? map_t : map_d, buf, col0 + j * pc::cols, row0);
}

/* Registers [r, r + 8) of a warpgroup's accumulator, packed as w (gemm_scaled_words), into the staging buffer of
 * their piece (16-bit TO: a column chunk of 64 rows x 128 bytes, 128-byte swizzle), one stmatrix_x4. */
template <class TO, int BN>
__device__ __forceinline__ void gemm_stmatrix_piece(uint8_t *buf, int r, const uint32_t (&w)[4])
{
    using acc_t = accum_64xN<BN>;
    using pc = gemm_pieces<TO, BN>;
    const int ln = lane(), col = acc_t::stmatrix_col(r, ln) - r / pc::regs * pc::cols;
    stmatrix_x4(buf + sw128_offset(acc_t::stmatrix_row(ln, warp() % 4), col * 2), w);
}

/* A warpgroup's 64 x BN result for 16-bit D, scaled and packed as stmatrix_x4 takes it (words 4g .. 4g + 3 from
 * registers 8g .. 8g + 7): the lazy epilogue's pieces, held in registers until they are staged (gemm_body). */
template <class TO, int BN> struct gemm_packed {
    uint32_t w[accum_64xN<BN>::regs / 2];
};
template <class TO, int BN>
__device__ __forceinline__ void gemm_pack(const accum_64xN<BN> &acc, const gemm_params &p, int row0, int col0,
                                          gemm_packed<TO, BN> &out)
{
#pragma unroll
    for (int r = 0; r < accum_64xN<BN>::regs; r += 8) {
        uint32_t w[4];
        gemm_scaled_words<TO, false>(acc, p, r, row0, col0, w);
#pragma unroll
        for (int q = 0; q < 4; ++q) out.w[r / 2 + q] = w[q];
    }
}
/* Stage packed pieces First .. First + Count - 1 in the lazy epilogue's buffers, piece j in buffer j - First (column
 * chunks only: BN a multiple of 64), once the stores of the pieces there before have read them. */
template <class TO, int BN, int First, int Count>
__device__ __forceinline__ void gemm_stage_packed(const gemm_packed<TO, BN> &in, uint8_t *stage, int slab)
{
    using pc = gemm_pieces<TO, BN>;
    static_assert(sizeof(TO) == 2 && pc::tail == 0 && First + Count <= pc::count, "16-bit column chunks");
    if (thread() % 128 == 0) tma_store_wait_read<0>();
    named_barrier_sync(1 + slab, 128);
#pragma unroll
    for (int r = First * pc::regs; r < (First + Count) * pc::regs; r += 8) {
        const uint32_t w[4] = {in.w[r / 2], in.w[r / 2 + 1], in.w[r / 2 + 2], in.w[r / 2 + 3]};
        gemm_stmatrix_piece<TO, BN>(stage + (r / pc::regs - First) * (64 * 128), r, w);
    }
    fence_proxy_async();
    named_barrier_sync(1 + slab, 128);
}

/* Same result as gemm_epilogue through TMA stores, a piece per 128-byte-wide column chunk, staged swizzled
 * (conflict-free); TMA clips each box to m x n (exactly, because the host picks TMA stores only when n fills
 * whole 16-byte groups). Registers [r0, r1) only. The tail is one more box of exactly its width through map_t,
 * unswizzled (rows of tail * sizeof(TO) bytes), since a whole-chunk box would overwrite the next tile (from
 * registers they cost 5-10%). */
template <class TO, int BN, int Bufs>
__device__ __forceinline__ void gemm_epilogue_tma(accum_64xN<BN> &acc, const gemm_params &p, const CUtensorMap *map_d,
                                                  const CUtensorMap *map_t, uint8_t *stage, int slab, int row0, int col0,
                                                  int r0, int r1)
{
    using acc_t = accum_64xN<BN>;
    using pc = gemm_pieces<TO, BN>;
    constexpr int cols = pc::cols, chunks = pc::chunks, regs = pc::regs, tail = pc::tail;
    const int ln = lane(), wp = warp() % 4;
    auto fill = [&](uint8_t *buf, int j) {
        const bool last = j == chunks; /* the tail box */
        if constexpr (sizeof(TO) == 2) {
            if (!last) { /* 16 columns per stmatrix: a quarter of the shared stores of pairs */
#pragma unroll
                for (int i = 0; i < regs; i += 8) {
                    const int r = j * regs + i;
                    uint32_t w[4];
                    gemm_scaled_words<TO, false>(acc, p, r, row0, col0, w);
                    gemm_stmatrix_piece<TO, BN>(buf, r, w);
                }
                return;
            }
        }
#pragma unroll
        for (int i = 0; i < (last ? tail / 2 : regs); i += 2) {
            const int r = j * regs + i;
            const int lr = acc_t::row(r, ln, wp), lc = acc_t::col(r, ln) - j * cols;
            float x, y;
            gemm_scaled_regs<TO, false>(acc, p, r, row0, col0, x, y);
            const uint32_t off = last ? lr * (tail * sizeof(TO)) + lc * sizeof(TO) : sw128_offset(lr, lc * sizeof(TO));
            store_from_float2(reinterpret_cast<TO *>(buf + off), x, y);
        }
    };
    gemm_staged_stores<pc::count, Bufs>(
        stage, slab, [&](int j) { return j * regs < r0 || j * regs >= r1; }, fill,
        [&](uint8_t *buf, int j) { gemm_store_piece<TO, BN>(map_d, map_t, buf, j, row0, col0); });
}

/* The swapped shapes' TMA epilogue: the warpgroup's 64 x BN block of D^T is D's BN rows x 64 columns from
 * (col0, row0). Each piece (64 of D's rows, 128 bytes of its columns) is staged transposed, conflict-free in the
 * swizzled buffer: 16-bit outputs 16 x 16 per stmatrix (transposing), else a register pair (two of D's rows)
 * becomes two 4-byte stores. D rows past the tile's last whole 64 go through map_t, whose box has just that many
 * rows. */
template <class TO, int BN, int Bufs>
__device__ __forceinline__ void gemm_epilogue_tma_t(accum_64xN<BN> &acc, const gemm_params &p, const CUtensorMap *map_d,
                                                    const CUtensorMap *map_t, uint8_t *stage, int slab, int row0, int col0)
{
    using acc_t = accum_64xN<BN>;
    constexpr int span = 128 / sizeof(TO), halves = 64 / span, pieces = (BN + 63) / 64 * halves;
    const int ln = lane(), wp = warp() % 4;
    gemm_staged_stores<pieces, Bufs>(
        stage, slab, [](int) { return false; },
        [&](uint8_t *buf, int j) {
            const int chunk = j / halves, half = j % halves; /* D rows 64 chunk.., D columns span half.. */
            /* registers 32 chunk.. hold D rows 64 chunk..; 16-bit outputs: one half, 16 of D's rows per stmatrix where
             * the chunk's registers come in whole eights, pairs after */
            int paired = 0;
            if constexpr (sizeof(TO) == 2) {
                const int first = 32 * chunk, count = acc_t::regs - first < 32 ? acc_t::regs - first : 32;
                paired = first + count / 8 * 8;
#pragma unroll
                for (int r = first; r < paired; r += 8) {
                    uint32_t w[4];
                    gemm_scaled_words<TO, true>(acc, p, r, row0, col0, w);
                    const int lc = acc_t::stmatrix_trans_col(r, ln) - chunk * 64;
                    stmatrix_x4_trans(buf + sw128_offset(lc, acc_t::stmatrix_trans_row(ln, wp) * 2), w);
                }
            }
#pragma unroll
            for (int r = 0; r < acc_t::regs; r += 2) {
                const int lr = acc_t::row(r, ln, wp), lc = acc_t::col(r, ln) - chunk * 64;
                if (r / 32 != chunk || lr / span != half || r < paired) continue; /* a warp's 16 D^T rows: one half */
                float x = acc.v[r], y = acc.v[r + 1];
                gemm_scale_pair<TO, true>(p, row0 + lr, col0 + chunk * 64 + lc, x, y);
                const int byte = (lr - half * span) * (int)sizeof(TO);
                store_from_float(reinterpret_cast<TO *>(buf + sw128_offset(lc, byte)), x);
                store_from_float(reinterpret_cast<TO *>(buf + sw128_offset(lc + 1, byte)), y);
            }
        },
        [&](uint8_t *buf, int j) {
            const int chunk = j / halves;
            tma_store_2d(chunk * 64 + 64 <= BN ? map_d : map_t, buf, row0 + j % halves * span, col0 + chunk * 64);
        });
}

/* Adds the peer CTA's partial accumulator to this CTA's column slice [r0, r1) of a split-K tile. Every CTA
 * parks the slices it does not finish in its (now idle) stage buffers, in fragment order, and reads its own
 * slice from the peer, in a fixed order, so the sum does not depend on timing. All consumer threads call it. */
template <int BN, int THREADS>
__device__ __forceinline__ void gemm_splitk_reduce(accum_64xN<BN> &acc, uint8_t *park_smem, bool live, uint32_t peer, int r0,
                                                   int r1)
{
    constexpr int regs = accum_64xN<BN>::regs, batch = regs / 8 < 8 ? regs / 8 : 8; /* float4 loads per round trip */
    constexpr uint32_t bar = 1 + THREADS / 128; /* past the epilogue's barriers, one per consumer warpgroup */
    float4 *park = reinterpret_cast<float4 *>(park_smem);
    const int ct = thread() - 128;
    named_barrier_sync(bar, THREADS); /* every consumer's mma has stopped reading the stages */
    if (live) {
#pragma unroll
        for (int i = 0; i < regs; i += 4)
            if (i < r0 || i >= r1) park[(i / 4) * THREADS + ct] = make_float4(acc.v[i], acc.v[i + 1], acc.v[i + 2], acc.v[i + 3]);
    }
    cluster_sync();
    if (live) {
        const uint32_t src = cluster_map(park, peer) + ct * 16;
#pragma unroll
        for (int i0 = 0; i0 < regs; i0 += 4 * batch) {
            if (i0 < r0 || i0 >= r1) continue;
            float4 v[batch];
#pragma unroll
            for (int b = 0; b < batch; ++b) v[b] = ld_cluster_f4(src + (i0 / 4 + b) * THREADS * 16);
#pragma unroll
            for (int b = 0; b < batch; ++b) {
                acc.v[i0 + 4 * b] += v[b].x;
                acc.v[i0 + 4 * b + 1] += v[b].y;
                acc.v[i0 + 4 * b + 2] += v[b].z;
                acc.v[i0 + 4 * b + 3] += v[b].w;
            }
        }
    }
    cluster_sync(); /* the peer has read this CTA's slices */
}

/* A partial tile parked at `slot` (THREADS x regs floats, as the consumers that hold it lay it out: each thread's
 * float4s THREADS apart, so every store is coalesced), past L1 for whoever adds it; and the adding of one. */
template <int BN, int THREADS> __device__ __forceinline__ void gemm_park(const accum_64xN<BN> &acc, float *slot)
{
    float *at = slot + (thread() - 128) * 4;
#pragma unroll
    for (int i = 0; i < accum_64xN<BN>::regs / 4; ++i)
        store_vec(at + i * THREADS * 4, vec<float, 4>{{acc.v[4 * i], acc.v[4 * i + 1], acc.v[4 * i + 2], acc.v[4 * i + 3]}},
                  cache_global());
}
template <int BN, int THREADS> __device__ __forceinline__ void gemm_unpark_add(accum_64xN<BN> &acc, const float *slot)
{
    const float *at = slot + (thread() - 128) * 4;
#pragma unroll
    for (int i = 0; i < accum_64xN<BN>::regs / 4; ++i) {
        const vec<float, 4> v = load_vec<4>(at + i * THREADS * 4, cache_global());
        for (int j = 0; j < 4; ++j) acc.v[4 * i + j] += v.v[j];
    }
}

/* A tile's K split through the workspace (pooled): each part parks its partial accumulator in its slot of the
 * tile for the sum kernel. */
template <int BN, int THREADS>
__device__ __forceinline__ void gemm_pooled_park(const accum_64xN<BN> &acc, const gemm_params &p, int tile, int part)
{
    gemm_park<BN, THREADS>(acc, static_cast<float *>(p.workspace) +
                                    ((int64_t)tile * p.split + part) * (THREADS * accum_64xN<BN>::regs));
}

/* The finale (gemm.h hk_gemm_finale_parts): each part of finale tile t parks its partial tile in its slot, then each
 * consumer warpgroup counts itself in its counter of the tile once all of its threads have stored. The warpgroup
 * that counts last adds all the parts' slots in part order (so the sum does not depend on which part that is) and
 * goes on to the epilogue (true); the others are done (false). No part waits for another, so no CTA waits for one
 * that is not resident. */
template <int BN, int CONSUMERS>
__device__ __forceinline__ bool gemm_finale_meet(accum_64xN<BN> &acc, const gemm_params &p, int64_t finale_tiles, int t,
                                                 int part, int slab, uint32_t *last)
{
    constexpr int threads = 128 * CONSUMERS;
    constexpr int64_t slot_floats = threads * accum_64xN<BN>::regs;
    float *slots = reinterpret_cast<float *>(static_cast<uint8_t *>(p.workspace) +
                                             HK_GEMM_FINALE_COUNTER_BYTES(finale_tiles, 64 * CONSUMERS)) +
                   (int64_t)t * p.finale * slot_floats;
    gemm_park<BN, threads>(acc, slots + part * slot_floats);
    named_barrier_sync(1 + slab, 128);
    if (thread() % 128 == 0)
        last[slab] = counter_add(static_cast<uint32_t *>(p.workspace) + (int64_t)t * CONSUMERS + slab, 1) ==
                     (uint32_t)p.finale - 1;
    named_barrier_sync(1 + slab, 128);
    if (!last[slab]) return false;
    /* every part from its slot, this one's too: the same sum whichever part adds, and no second accumulator */
    acc.zero();
#pragma unroll 1
    for (int q = 0; q < p.finale; ++q) gemm_unpark_add<BN, threads>(acc, slots + q * slot_floats);
    return true;
}

/* The pooled split's second kernel, launched right after the parts' kernel (which it waits for): adds each tile's
 * parked parts in part order, so D does not depend on timing, and writes D. A CTA of 128 threads (the frame of
 * one consumer warpgroup that parked them) takes one float4 of every fragment of that warpgroup, an 8-column strip
 * of its 64 rows: tiles x BM / 64 x BN / 8 CTAs, so that a pooled split's few tiles spread their slot reads over
 * the SMs. */
template <class TO, class S>
__device__ __forceinline__ void gemm_pooled_sum(const gemm_params &p)
{
    static_assert(S::pool, "the parts were parked by a pooled shape");
    using acc_t = accum_64xN<S::bn>;
    constexpr int threads = 128 * S::consumers, slot_floats = threads * acc_t::regs, strips = acc_t::regs / 4;
    static_assert(strips * S::consumers == HK_GEMM_POOLED_SUM_CTAS(1, S::bm, S::bn), "the host launches one CTA per strip");
    const int tile = block_x() / (strips * S::consumers), slab = block_x() / strips % S::consumers,
              strip = block_x() % strips;
    int tm, tn;
    gemm_tile(tile, (p.m + S::bm - 1) / S::bm, p, tm, tn);
    const int row0 = tm * S::bm + slab * 64, col0 = gemm_col0(tn, S::bn, p);
    if (row0 >= p.m) return; /* its warpgroup had no rows and parked nothing */
    grid_dependency_wait();
    grid_dependents_launch();
    const float *slot = static_cast<const float *>(p.workspace) + (int64_t)tile * p.split * slot_floats +
                        (strip * threads + slab * 128 + thread()) * 4;
    /* the thread's four registers of the strip, with no accumulator array: few registers, many CTAs per SM */
    constexpr int batch = 8; /* parts whose loads are in flight together */
    vec<float, 4> sum{{0.f, 0.f, 0.f, 0.f}};
    for (int s0 = 0; s0 < p.split; s0 += batch) {
        vec<float, 4> part[batch];
#pragma unroll
        for (int s = 0; s < batch; ++s)
            if (s0 + s < p.split) part[s] = load_vec<4>(slot + (s0 + s) * slot_floats, cache_stream());
#pragma unroll
        for (int s = 0; s < batch; ++s)
            if (s0 + s < p.split)
                for (int j = 0; j < 4; ++j) sum.v[j] += part[s].v[j];
    }
    const int ln = lane(), wp = warp() % 4;
#pragma unroll
    for (int j = 0; j < 4; j += 2) {
        const int r = 4 * strip + j, row = row0 + acc_t::row(r, ln, wp), col = col0 + acc_t::col(r, ln);
        if (row < p.m && col < p.n) gemm_store_pair<TO, false>(p, row, col, sum.v[j], sum.v[j + 1]);
    }
}

/* T: input element (bf16, f16 or e4m3); TO: output; A_MN / B_MN: the kernel's A / B stored M-/N-contiguous;
 * S: launch shape (gemm.h). */
template <class T, class TO, bool A_MN, bool B_MN, class S>
__device__ __forceinline__ void gemm_body(const CUtensorMap *map_a, const CUtensorMap *map_b, const CUtensorMap *map_d,
                                          const CUtensorMap *map_t, const gemm_params &p)
{
    constexpr int bm = S::bm, bn = S::bn, stages = S::stages, bk = 128 / sizeof(T);
    using acc_t = accum_64xN<bn>;
    static_assert(!(A_MN || B_MN) || sizeof(T) == 2, "wgmma transposes 16-bit operands only");
    /* an MN-major B comes in boxes of b_cols columns (the swizzle spans their row), a K-major operand in boxes of
     * at most 256 rows; either way the boxes tile the stage exactly */
    constexpr int b_cols = HK_GEMM_MN_BOX(bn), b_swizzle = B_MN ? b_cols * (int)sizeof(T) : 128;
    constexpr int b_boxes = B_MN ? bn / b_cols : bn / HK_GEMM_KMAJOR_BOX_ROWS(bn);
    constexpr uint32_t b_box_bytes = S::b_bytes / b_boxes;
    static_assert(b_boxes * b_box_bytes == S::b_bytes && bm <= 256, "boxes tile the stage");

    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = swizzle_aligned(smem_raw);
    __shared__ barrier full[stages], empty[stages];
    __shared__ uint32_t finale_last[S::consumers]; /* per consumer: its finale part counted last (gemm_finale_meet) */

    const int wg = warpgroup_index();
    if (thread() == 0) {
        for (int s = 0; s < stages; ++s) {
            full[s].init(1);
            empty[s].init(4 * S::consumers); /* lane 0 of each consumer warp */
        }
        fence_barrier_init();
        /* the maps are kernel parameters, not data an earlier kernel writes: fetched before the dependency wait */
        tma_prefetch_map(map_a);
        tma_prefetch_map(map_b);
        if (p.tma_store) tma_prefetch_map(map_d);
        if (p.tma_store && HK_GEMM_TAIL(bn, S::swap, (int)sizeof(TO)) != 0) tma_prefetch_map(map_t);
    }
    if constexpr (S::cluster > 1)
        cluster_sync(); /* both CTAs run, barriers initialised, before either touches the other's memory */
    else
        cta_sync();
    /* Launched with programmatic stream serialization (backends/cuda/gemm.c), the CTAs may start while the
     * previous kernel of the stream still runs: the setup above overlaps it, and every thread waits here for
     * its completion before the first access of A, B, C or D (TMA loads, C reads, D stores). */
    grid_dependency_wait();

    const int tiles_m = (p.m + bm - 1) / bm, tiles_n = (p.n + bn - 1) / bn, count = tiles_m * tiles_n;
    const int kblocks = (p.k + bk - 1) / bk;
    /* Work units: unit u is a part of K (k-blocks [kb0, kb1)) of a tile. The persistent shapes walk units
     * grid-strided; the others take one each, the block's index. In clusters, part u % split of tile u / split, so
     * that a cluster's two CTAs share a tile when split is 2; they meet in distributed shared memory. Pooled, part
     * u / count of tile u % count: the CTAs launched together then stream the same k-blocks of A and B, which
     * halves the time of their loads against a tile's parts side by side;
     * they meet in the workspace. */
    const int split = S::cluster == 2 || S::pool ? p.split : 1, units = count * split;
    const int first = block_x(), step = S::persist ? grid_dim_x() : units;
    const bool pooled = S::pool && split > 1;
    /* the finale (gemm.h hk_gemm_finale_parts): the last two rounds' tiles in p.finale parts of K, part-major */
    const int parts = S::persist ? p.finale : 0;
    const int finale_tiles = parts ? (int)hk_gemm_finale_tiles(count, step) : 0, whole = units - finale_tiles;
    auto unit_of = [&](int u, int &tile, int &tm, int &tn, int &part, int &kb0, int &kb1) {
        if (split == 1) { /* no divisions on the unsplit path: they delay the first load of small problems */
            gemm_tile(tile = u, tiles_m, p, tm, tn);
            part = kb0 = 0;
            kb1 = kblocks;
            return;
        }
        tile = S::pool ? u % count : u / split;
        part = S::pool ? u / count : u % split;
        gemm_tile(tile, tiles_m, p, tm, tn);
        kb0 = part * kblocks / split;
        kb1 = (part + 1) * kblocks / split;
    };
    /* This CTA's i-th unit, false past its last: whole units, then (finale) parts of the last rounds' tiles */
    auto unit_at = [&](int i, int &tile, int &tm, int &tn, int &part, int &kb0, int &kb1) {
        const int u = first + i * step;
        if (u < whole) {
            unit_of(u, tile, tm, tn, part, kb0, kb1);
            return true;
        }
        if constexpr (S::persist) {
            if (u - whole < finale_tiles * parts) {
                part = (u - whole) / finale_tiles;
                gemm_tile(tile = u - part * finale_tiles, tiles_m, p, tm, tn);
                kb0 = part * kblocks / parts;
                kb1 = (part + 1) * kblocks / parts;
                return true;
            }
        }
        return false;
    };

    if (wg == 0) { /* producer */
        if constexpr (S::producer_regs > 0) warpgroup_reg_dealloc<S::producer_regs>();
        if (thread() == 0) {
            int s = 0;
            uint32_t phase = 0;
            int tile, tm, tn, part, kb0, kb1;
            for (int i = 0; unit_at(i, tile, tm, tn, part, kb0, kb1); ++i) {
                const int col0 = gemm_col0(tn, bn, p);
                for (int kb = kb0; kb < kb1; ++kb) {
                    empty[s].wait(phase ^ 1);
                    full[s].arrive_expect_tx(S::stage_bytes);
                    uint8_t *sa = smem + s * S::stage_bytes, *sb = sa + S::a_bytes;
                    /* MN-major A comes in 64-wide boxes of bk K rows, MN-major B in b_cols-wide ones, K-major
                     * operands in boxes of rows */
                    if constexpr (A_MN) {
                        for (int i = 0; i < bm / 64; ++i) tma_load_2d(sa + i * 8192, map_a, full[s], tm * bm + 64 * i, kb * bk);
                    } else {
                        tma_load_2d(sa, map_a, full[s], kb * bk, tm * bm);
                    }
                    for (int i = 0; i < b_boxes; ++i) {
                        if constexpr (B_MN)
                            tma_load_2d(sb + i * b_box_bytes, map_b, full[s], col0 + b_cols * i, kb * bk);
                        else
                            tma_load_2d(sb + i * b_box_bytes, map_b, full[s], kb * bk, col0 + i * (b_box_bytes / 128));
                    }
                    if (++s == stages) { s = 0; phase ^= 1; }
                }
            }
            /* This CTA's last load is issued: the next kernel's CTAs may launch (once all CTAs got here or
             * exited) and run their setup on the SMs this grid leaves idle or frees, while the loads in flight,
             * the last k-blocks' mma and the epilogue finish (a few us, more than that setup takes). Not at
             * kernel start: that gains a GEMM dependent nothing more, and a dependent small enough to share
             * the SM would sit beside this CTA for its whole k-loop. */
            grid_dependents_launch();
        }
        warp_sync();
        if constexpr (S::cluster == 2) {
            if (split > 1) { /* match the consumers' cluster barriers of the reduction */
                cluster_sync();
                cluster_sync();
            }
        }
        return;
    }

    /* consumers: warpgroup 1 + i takes tile rows 64 i .. 64 i + 63 */
    constexpr bool can_promote = sizeof(T) == 1 && HK_GEMM_PROMOTE_FITS(bm, bn);
    /* a second k-block sum in flight while one is added, where three accumulators leave registers to spare */
    constexpr int consumer_budget = S::consumer_regs ? S::consumer_regs : 65536 / S::threads;
    constexpr bool promote_in_flight = can_promote && 3 * acc_t::regs + 40 <= consumer_budget;
    const bool promote = can_promote && (S::acc32 || p.promote);
    if constexpr (S::consumer_regs > 0) warpgroup_reg_alloc<S::consumer_regs>();
    const int slab = wg - 1;
    uint8_t *epi = smem + stages * S::stage_bytes + slab * S::epi_bytes;
    const bool arriver = lane() == 0;
    auto release = [&](int st) {
        if (arriver) empty[st].arrive();
    };
    /* Lazy stores (P256 and PF128, 16-bit D): between the k-loops the consumers only scale and pack the result into
     * registers (held), and the tensor cores do not wait for the shared stores and their barriers; the pieces leave
     * one per k-block of the next unit, so the CTAs' stores do not all meet their next tiles' loads at every round's
     * end. They are staged a buffer's worth at a time: the first batch while that unit's first k-block multiplies
     * (PF128: before its k-loop, since its two k-block products take those registers), P256's second once the
     * first has been read. Other widths do without: on P96, P128 and P192 they cost 1-5%. */
    using pieces = gemm_pieces<TO, bn>;
    constexpr int batch = pieces::count < S::epi_bufs ? pieces::count : S::epi_bufs;
    constexpr bool lazy = (S::acc32 || (S::persist && !S::swap && bn == 256)) && sizeof(TO) == 2 && pieces::tail == 0 &&
                          pieces::count <= 2 * batch;
    int lazy_left = 0, lazy_row0 = 0, lazy_col0 = 0;
    gemm_packed<TO, bn> held; /* the tile at (lazy_row0, lazy_col0) */
    bool holding = false;
    auto store_next = [&]() {
        if constexpr (lazy) {
            if (lazy_left > 0) {
                const int j = pieces::count - lazy_left;
                if (thread() % 128 == 0) {
                    gemm_store_piece<TO, bn>(map_d, map_t, epi + j % batch * (64 * 128), j, lazy_row0, lazy_col0);
                    tma_store_commit();
                }
                --lazy_left;
            }
        }
    };
    /* P256's second batch, once the first has left; called before each store_next (inside it, CUDA 13's cicc
     * crashes) */
    auto stage_rest = [&]() {
        if constexpr (lazy && pieces::count > batch) {
            if (lazy_left == pieces::count - batch) gemm_stage_packed<TO, bn, batch, pieces::count - batch>(held, epi, slab);
        }
    };
    auto store_all = [&]() {
        while (lazy_left > 0) {
            stage_rest();
            store_next();
        }
    };
    auto stage_held = [&]() {
        if constexpr (lazy) {
            if (holding) {
                holding = false;
                gemm_stage_packed<TO, bn, 0, batch>(held, epi, slab);
                lazy_left = pieces::count;
            }
        }
    };
    acc_t acc;
    int s = 0;
    uint32_t phase = 0;
    int tile = 0, tm = 0, tn = 0, part = 0;
    bool live = false;
    int kb0, kb1;
    /* The next unit is located while this one's first k-block multiplies: between the epilogue and the next k-loop its
     * divisions (all consumer warps at once) held the tensor cores idle ~1300 cycles per tile (H200 trace).
     * Persistent shapes with accumulators of up to 128 registers and, for fp8,
     * two consumers: with three (setmaxnreg 160) the fp32-accumulated path lost 1% (with run-time divisions 10%:
     * the located unit took the uniform registers of its wgmma descriptors), and P320's 160 accumulator registers
     * leave none to carry it (ptxas then waits on the wgmma). Those kernels compile to the plain loop below, and a
     * unit whose k-loop did not locate the next one leaves it to the loop's head. */
    constexpr bool locate_early = S::persist && acc_t::regs <= 128 && (sizeof(T) == 2 || S::consumers == 2);
    static_assert(!lazy || locate_early || S::acc32, "the held pieces are staged where the next unit is located or, "
                                                     "with fp32 accumulation, before its k-loop");
    int next_tile = 0, next_tm = 0, next_tn = 0, next_part = 0, next_kb0 = 0, next_kb1 = 0;
    bool located = false, more = false;
    auto unit_next = [&](int i) {
        if constexpr (locate_early) {
            if (located) {
                located = false;
                tile = next_tile, tm = next_tm, tn = next_tn, part = next_part, kb0 = next_kb0, kb1 = next_kb1;
                return more;
            }
        }
        return unit_at(i, tile, tm, tn, part, kb0, kb1);
    };
    for (int i = 0; locate_early ? unit_next(i) : unit_at(i, tile, tm, tn, part, kb0, kb1); ++i) {
        live = tm * bm + slab * 64 < p.m;
        if (!live) { /* rows past m: pass the stages through */
            stage_held();
            for (int kb = kb0; kb < kb1; ++kb) {
                full[s].wait(phase);
                release(s);
                stage_rest();
                store_next();
                if (++s == stages) { s = 0; phase ^= 1; }
            }
            continue;
        }
        acc.zero();
        int prev = -1;
        if (promote) {
            /* fp32 accumulation of fp8: the tensor cores sum one k-block (4 instructions, 128 elements of K) at
             * their own precision, the consumer adds it in fp32 once it is done */
            auto issue = [&](acc_t &prod) { /* prod = the next k-block's product; returns its stage */
                full[s].wait(phase);
                const uint8_t *sa = smem + s * S::stage_bytes;
                wgmma_kblock<T, A_MN, B_MN, b_swizzle>(prod, sa + slab * 8192, sa + S::a_bytes, true);
                stage_rest();
                store_next();
                const int used = s;
                if (++s == stages) { s = 0; phase ^= 1; }
                return used;
            };
            auto retire = [&](acc_t &prod, int st) { /* after the wait that covers prod's k-block */
                reg_fence(prod.v);
                release(st);
                acc.add(prod);
            };
            stage_held(); /* before the k-loop: no registers to hold it beside the products (PF128) */
            if constexpr (promote_in_flight) {
                /* two k-block sums alternate: the tensor cores fill one while the consumer adds the other */
                acc_t pa, pb;
                if (kb0 < kb1) {
                    int st_a = issue(pa), st_b, kb = kb0 + 1;
                    for (; kb + 1 < kb1; kb += 2) {
                        st_b = issue(pb);
                        wgmma_wait<1>();
                        retire(pa, st_a);
                        st_a = issue(pa);
                        wgmma_wait<1>();
                        retire(pb, st_b);
                    }
                    if (kb < kb1) {
                        st_b = issue(pb);
                        wgmma_wait<1>();
                        retire(pa, st_a);
                        wgmma_wait<0>();
                        retire(pb, st_b);
                    } else {
                        wgmma_wait<0>();
                        retire(pa, st_a);
                    }
                }
            } else {
                for (int kb = kb0; kb < kb1; ++kb) {
                    acc_t prod;
                    const int st = issue(prod);
                    wgmma_wait<0>();
                    retire(prod, st);
                }
            }
        } else {
            for (int kb = kb0; kb < kb1; ++kb) {
                full[s].wait(phase);
                const uint8_t *sa = smem + s * S::stage_bytes;
                wgmma_kblock<T, A_MN, B_MN, b_swizzle>(acc, sa + slab * 8192, sa + S::a_bytes);
                if constexpr (locate_early) {
                    if (!located) { /* this unit's first k-block */
                        more = unit_at(i + 1, next_tile, next_tm, next_tn, next_part, next_kb0, next_kb1);
                        located = true;
                        stage_held();
                    }
                }
                stage_rest();
                wgmma_wait<1>(); /* the previous k-block's mma is done: release its stage */
                if (prev >= 0) release(prev);
                store_next();
                prev = s;
                if (++s == stages) { s = 0; phase ^= 1; }
            }
            wgmma_wait<0>();
            reg_fence(acc.v);
            if (prev >= 0) release(prev);
        }
        if constexpr (S::pool) {
            if (pooled) {
                gemm_pooled_park<bn, 128 * S::consumers>(acc, p, tile, part);
                continue; /* gemm_pooled_sum finishes the tile */
            }
        }
        if constexpr (S::persist) {
            if (tile >= whole && !gemm_finale_meet<bn, S::consumers>(acc, p, finale_tiles, tile - whole, part, slab, finale_last))
                continue; /* a part counted later finishes the tile */
            const int row0 = tm * bm + slab * 64, col0 = gemm_col0(tn, bn, p);
            if (!p.tma_store)
                gemm_epilogue<TO, S::swap, bn>(acc, p, row0, col0, 0, acc_t::regs);
            else if constexpr (S::swap)
                gemm_epilogue_tma_t<TO, bn, S::epi_bufs>(acc, p, map_d, map_t, epi, slab, row0, col0);
            else if constexpr (lazy) {
                stage_held(); /* a unit without k-blocks */
                store_all();  /* K of fewer k-blocks than pieces: the tile before leaves before its corner changes */
                lazy_row0 = row0;
                lazy_col0 = col0;
                gemm_pack<TO, bn>(acc, p, lazy_row0, lazy_col0, held);
                holding = true;
            } else {
                gemm_epilogue_tma<TO, bn, S::epi_bufs>(acc, p, map_d, map_t, epi, slab, row0, col0, 0, acc_t::regs);
            }
        }
    }
    stage_held();
    store_all();
    if constexpr (!S::persist) {
        /* split K in a cluster: the two CTAs of the tile each finish one half of its columns */
        int r0 = 0, r1 = acc_t::regs;
        if constexpr (S::cluster == 2) {
            if (split > 1) {
                r0 = part * (acc_t::regs / 2);
                r1 = r0 + acc_t::regs / 2;
                gemm_splitk_reduce<bn, 128 * S::consumers>(acc, smem, live, cluster_ctarank() ^ 1, r0, r1);
            }
        }
        /* TMA stores move 128-byte column chunks: a slice narrower than one (SK64, 2-byte D) stores from
         * registers */
        constexpr int chunk_regs = 64 / (int)sizeof(TO);
        const int row0 = tm * bm + slab * 64, col0 = gemm_col0(tn, bn, p);
        if (live && !pooled) {
            if constexpr (S::swap)
                gemm_epilogue<TO, true, bn>(acc, p, row0, col0, r0, r1);
            else if (p.tma_store && (r1 - r0) % chunk_regs == 0)
                gemm_epilogue_tma<TO, bn, S::epi_bufs>(acc, p, map_d, map_t, epi, slab, row0, col0, r0, r1);
            else
                gemm_epilogue<TO, false, bn>(acc, p, row0, col0, r0, r1);
        }
    }
    /* the staging buffers outlive the stores' reads; the grid's completion covers their writes (PDL dependents and
     * the stream see D whole), so the CTA need not wait for those */
    if (p.tma_store && thread() % 128 == 0) tma_store_wait_read<0>();
}

} // namespace hk::hopper

/* Kernel names: hk_gemm_sm90_<in>_<layout>_<out><shape suffix>; the layout letters are hk's trans_a, trans_b
 * ("nt": A row-major x B transposed, the nn.Linear layout) of the caller's problem. A swapped shape runs the
 * kernel's A = op(B)^T (M-contiguous when hk's trans_b = 0) and B = A^T (K-major: hk's trans_a = 0 only). */
#define HK_GEMM_KERNEL(name, T, TO, A_MN, B_MN, S, ATTR)                                                          \
    extern "C" __global__ void ATTR __launch_bounds__(S::threads, 1)                                              \
        name(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,                \
             const __grid_constant__ CUtensorMap map_d, const __grid_constant__ CUtensorMap map_t,                   \
             const hk::hopper::gemm_params p)                                                                     \
    {                                                                                                             \
        hk::hopper::gemm_body<T, TO, A_MN, B_MN, S>(&map_a, &map_b, &map_d, &map_t, p);                           \
    }
/* One caller layout (letters as in the names) for every output type: bf16 in -> bf16/f32/f16, e4m3 -> bf16/f32. */
#define HK_GEMM_OUT3(layout, A_MN, B_MN, S, suffix, attr)                                                       \
    HK_GEMM_KERNEL(hk_gemm_sm90_bf16_##layout##_bf16##suffix, __nv_bfloat16, __nv_bfloat16, A_MN, B_MN, S, attr) \
    HK_GEMM_KERNEL(hk_gemm_sm90_bf16_##layout##_f32##suffix, __nv_bfloat16, float, A_MN, B_MN, S, attr)          \
    HK_GEMM_KERNEL(hk_gemm_sm90_bf16_##layout##_f16##suffix, __nv_bfloat16, __half, A_MN, B_MN, S, attr)
#define HK_GEMM_FP8(S, suffix, attr)                                                                             \
    HK_GEMM_KERNEL(hk_gemm_sm90_e4m3_nt_bf16##suffix, __nv_fp8_e4m3, __nv_bfloat16, false, false, S, attr)       \
    HK_GEMM_KERNEL(hk_gemm_sm90_e4m3_nt_f32##suffix, __nv_fp8_e4m3, float, false, false, S, attr)
/* (trans_a, trans_b) -> kernel operand layouts: A_MN = trans_a, B_MN = !trans_b; swapped: A_MN = !trans_b,
 * B_MN = trans_a (trans_a = 0 only) */
#define HK_GEMM_PLAIN(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool)                                     \
    HK_GEMM_OUT3(nn, false, true, hk::hopper::gemm_shape_##id, suffix, HK_GEMM_ATTR_##cluster)                   \
    HK_GEMM_OUT3(tn, true, true, hk::hopper::gemm_shape_##id, suffix, HK_GEMM_ATTR_##cluster)                    \
    HK_GEMM_KMAJOR_B(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool)
/* the layouts with K-major B (trans_b 1) only */
#define HK_GEMM_KMAJOR_B(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool)                                  \
    HK_GEMM_OUT3(nt, false, false, hk::hopper::gemm_shape_##id, suffix, HK_GEMM_ATTR_##cluster)                  \
    HK_GEMM_OUT3(tt, true, false, hk::hopper::gemm_shape_##id, suffix, HK_GEMM_ATTR_##cluster)                   \
    HK_GEMM_FP8(hk::hopper::gemm_shape_##id, suffix, HK_GEMM_ATTR_##cluster)
#define HK_GEMM_SWAPPED(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool)                                   \
    HK_GEMM_OUT3(nn, true, false, hk::hopper::gemm_shape_##id, suffix, HK_GEMM_ATTR_##cluster)                   \
    HK_GEMM_OUT3(nt, false, false, hk::hopper::gemm_shape_##id, suffix, HK_GEMM_ATTR_##cluster)                  \
    HK_GEMM_FP8(hk::hopper::gemm_shape_##id, suffix, HK_GEMM_ATTR_##cluster)
/* K-major B, and tn (its N-contiguous B in 32-column boxes under the 64-byte swizzle) */
#define HK_GEMM_KMAJOR_B_TN(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool)                               \
    HK_GEMM_KMAJOR_B(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool)                                      \
    HK_GEMM_OUT3(tn, true, true, hk::hopper::gemm_shape_##id, suffix, HK_GEMM_ATTR_##cluster)
/* the swapped nn-only shapes */
#define HK_GEMM_SWAPPED_NN(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool)                                \
    HK_GEMM_OUT3(nn, true, false, hk::hopper::gemm_shape_##id, suffix, HK_GEMM_ATTR_##cluster)
#define HK_GEMM_ATTR_1
#define HK_GEMM_ATTR_2 __cluster_dims__(2, 1, 1)
#define HK_GEMM_FAMILY(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool)                                    \
    HK_GEMM_FAMILY_##swap##lay(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool)
#define HK_GEMM_FAMILY_00 HK_GEMM_PLAIN
#define HK_GEMM_FAMILY_01 HK_GEMM_KMAJOR_B
#define HK_GEMM_FAMILY_03 HK_GEMM_KMAJOR_B_TN
#define HK_GEMM_FAMILY_10 HK_GEMM_SWAPPED
#define HK_GEMM_FAMILY_12 HK_GEMM_SWAPPED_NN
#define HK_GEMM_FAMILY_04(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool)                                 \
    HK_GEMM_FP8(hk::hopper::gemm_shape_##id, suffix, HK_GEMM_ATTR_##cluster)
#define HK_GEMM_FAMILY_05 HK_GEMM_FAMILY_04
#ifndef HK_GEMM_F16_FAMILY /* gemm_f16.cu: the same body and kernel macros, its own kernels */
HK_GEMM_SHAPES(HK_GEMM_FAMILY)
#endif
/* The pooled shapes' sums, one kernel per output type: hk_gemm_sm90_pooled_sum_<out><shape suffix> */
#define HK_GEMM_POOLED_SUM(out, TO, S, suffix)                                                                         \
    extern "C" __global__ void __launch_bounds__(128)                                                                  \
        hk_gemm_sm90_pooled_sum_##out##suffix(const __grid_constant__ hk::hopper::gemm_params p)                       \
    {                                                                                                                  \
        hk::hopper::gemm_pooled_sum<TO, S>(p);                                                                         \
    }
#define HK_GEMM_POOLED_SUMS_0(id, suffix)
#define HK_GEMM_POOLED_SUMS_1(id, suffix)                                                                              \
    HK_GEMM_POOLED_SUM(bf16, __nv_bfloat16, hk::hopper::gemm_shape_##id, suffix)                                     \
    HK_GEMM_POOLED_SUM(f32, float, hk::hopper::gemm_shape_##id, suffix)                                              \
    HK_GEMM_POOLED_SUM(f16, __half, hk::hopper::gemm_shape_##id, suffix)
#define HK_GEMM_POOLED_SUMS(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool)                              \
    HK_GEMM_POOLED_SUMS_##pool(id, suffix)
#ifndef HK_GEMM_F16_FAMILY
HK_GEMM_SHAPES(HK_GEMM_POOLED_SUMS)
#endif
