/* Hopper (sm_90a) GEMM: D = alpha * op(A) op(B) + beta * C, row-major, fp32 accumulation.
 *
 * CTAs work on output tiles of 128 x 256 (128 x 128 for split K). Warpgroup 0 is the producer: one thread streams A and B k-blocks
 * into a STAGES-deep ring of shared-memory tiles with TMA, each stage guarded by a "full" mbarrier (TMA
 * bytes landed) and an "empty" mbarrier (every consumer of the stage done reading). Warpgroups 1 and 2 are
 * consumers: each owns 64 rows of the tile as a 64 x 256 fp32 accumulator and issues wgmma straight from
 * shared memory, keeping one k-block of mma in flight; a warpgroup whose rows all lie past m skips its mma.
 * setmaxnreg moves registers from the producer to the consumers. TMA zero-fills out-of-bounds boxes, so
 * ragged M/N/K need no special main loop. The epilogue stages each warpgroup's accumulator through shared
 * memory into TMA stores (clipped to m x n by the hardware) when D's layout allows, else it stores straight
 * from registers with masks.
 *
 * Three launch shapes (gemm.h): persistent CTAs walking tiles in an L2-friendly grouped order; the same
 * with clusters of two vertically adjacent tiles sharing each B k-block through TMA multicast; and, for
 * problems with fewer tiles than SMs, 128 x 128 tiles in clusters of two whose CTAs can split K and add
 * their partial accumulators through distributed shared memory before one epilogue per column slice. */
#include "hopper/gemm.h"
#include "tiles/hopper/barrier.cuh"
#include "tiles/hopper/mma.cuh"
#include "tiles/hopper/tma.cuh"

#include <cuda_fp16.h>

namespace hk::hopper {

using gemm_params = hk_gemm_params;

constexpr int gemm_threads = HK_GEMM_THREADS;
constexpr int gemm_bm = HK_GEMM_BM;

/* Epilogue staging: per consumer warpgroup two 64-row x 128-byte swizzled buffers, ping-ponged while
 * TMA stores drain them. */
constexpr uint32_t gemm_epi_bytes = 2 * 2 * 64 * 128;

enum class gemm_mode { persist, mcast, splitk };

/* Tile width, ring depth and cluster size of a launch shape (gemm.h). */
template <gemm_mode M> struct gemm_shape {
    static constexpr int bn = M == gemm_mode::splitk ? HK_GEMM_BN_SK : HK_GEMM_BN;
    static constexpr int stages = M == gemm_mode::splitk ? HK_GEMM_STAGES_SK : HK_GEMM_STAGES;
    static constexpr int cluster = M == gemm_mode::mcast ? 2 : M == gemm_mode::splitk ? HK_GEMM_CLUSTER_SK : 1;
};

template <class T, int BN, int STAGES> struct gemm_cfg {
    static constexpr int bk = 128 / sizeof(T); /* one 128-byte swizzle row of K */
    static constexpr uint32_t a_bytes = gemm_bm * 128, b_bytes = BN * 128;
    static constexpr uint32_t stage_bytes = a_bytes + b_bytes;
    static constexpr uint32_t smem_bytes = STAGES * stage_bytes + gemm_epi_bytes + 1024; /* + alignment slack */
    static_assert(smem_bytes == HK_GEMM_SHARED_BYTES, "gemm.h disagrees");
};

/* Tile t of the persistent walk: groups of group_m tile rows, column-major inside a group, so the
 * CTAs running at once share A rows and B columns in L2. */
__device__ __forceinline__ void gemm_tile(int t, int tiles_m, int tiles_n, int group_m, int &tm, int &tn)
{
    const int group = group_m * tiles_n;
    const int first = (t / group) * group_m;
    const int rows = min(tiles_m - first, group_m);
    const int r = t % group;
    tm = first + r % rows;
    tn = r / rows;
}

template <class TO> __device__ __forceinline__ void store1(TO *p, float x);
template <> __device__ __forceinline__ void store1(float *p, float x) { *p = x; }
template <> __device__ __forceinline__ void store1(__nv_bfloat16 *p, float x) { *p = __float2bfloat16_rn(x); }
template <> __device__ __forceinline__ void store1(__half *p, float x) { *p = __float2half_rn(x); }
template <class TO> __device__ __forceinline__ void store2(TO *p, float x, float y);
template <> __device__ __forceinline__ void store2(float *p, float x, float y) { *reinterpret_cast<float2 *>(p) = make_float2(x, y); }
template <> __device__ __forceinline__ void store2(__nv_bfloat16 *p, float x, float y)
{
    *reinterpret_cast<__nv_bfloat162 *>(p) = __floats2bfloat162_rn(x, y);
}
template <> __device__ __forceinline__ void store2(__half *p, float x, float y)
{
    *reinterpret_cast<__half2 *>(p) = __floats2half2_rn(x, y);
}
__device__ __forceinline__ float load1(const float *p) { return *p; }
__device__ __forceinline__ float load1(const __nv_bfloat16 *p) { return __bfloat162float(*p); }
__device__ __forceinline__ float load1(const __half *p) { return __half2float(*p); }

/* Write one warpgroup's 64 x BN accumulator at (row0, col0), masked to m x n; only registers [r0, r1)
 * (a column slice: 4 registers per 8 columns). */
template <class TO, int BN>
__device__ __forceinline__ void gemm_epilogue(accum_64xN<BN> &acc, const gemm_params &p, int row0, int col0, int r0, int r1)
{
    using acc_t = accum_64xN<BN>;
    const int lane = threadIdx.x % 32, warp = (threadIdx.x / 32) % 4;
    TO *d = static_cast<TO *>(p.d);
    const TO *c = static_cast<const TO *>(p.c);
    const bool use_c = p.beta != 0.f;
#pragma unroll
    for (int r = 0; r < acc_t::regs; r += 2) {
        const int row = row0 + acc_t::row(r, lane, warp), col = col0 + acc_t::col(r, lane);
        if (r < r0 || r >= r1 || row >= p.m || col >= p.n) continue;
        float x = p.alpha * acc.v[r], y = p.alpha * acc.v[r + 1];
        TO *dp = d + row * p.ldd + col;
        const bool pair = col + 1 < p.n;
        if (use_c) {
            const TO *cp = c + row * p.ldc + col;
            x += p.beta * load1(cp);
            if (pair) y += p.beta * load1(cp + 1);
        }
        if (pair && p.vec2) {
            store2(dp, x, y);
        } else {
            store1(dp, x);
            if (pair) store1(dp + 1, y);
        }
    }
}

/* Same result through shared memory and TMA stores: per 128-byte-wide column chunk, every thread writes
 * its pairs into a swizzled staging buffer (conflict-free), then one thread stores the box; TMA clips
 * it to m x n. Buffers alternate so writing one chunk overlaps the store of the one before. Registers
 * [r0, r1) only, whole chunks. */
template <class TO, int BN>
__device__ __forceinline__ void gemm_epilogue_tma(accum_64xN<BN> &acc, const gemm_params &p, const CUtensorMap *map_d,
                                                  uint8_t *stage, int half, int row0, int col0, int r0, int r1)
{
    using acc_t = accum_64xN<BN>;
    constexpr int cols = 128 / sizeof(TO), chunks = BN / cols, regs = cols / 2;
    const int lane = threadIdx.x % 32, warp = (threadIdx.x / 32) % 4;
    const bool leader = threadIdx.x % 128 == 0;
    const TO *c = static_cast<const TO *>(p.c);
    const bool use_c = p.beta != 0.f;
    if (leader) tma_store_wait_read<0>(); /* the previous tile's stores have left the buffers */
    named_barrier_sync(1 + half, 128);
    int issued = 0;
#pragma unroll
    for (int j = 0; j < chunks; ++j) {
        if (j * regs < r0 || j * regs >= r1) continue;
        uint8_t *buf = stage + (issued % 2) * (64 * 128);
        if (issued >= 2) {
            if (leader) tma_store_wait_read<1>();
            named_barrier_sync(1 + half, 128);
        }
#pragma unroll
        for (int i = 0; i < regs; i += 2) {
            const int r = j * regs + i;
            const int lr = acc_t::row(r, lane, warp), lc = acc_t::col(r, lane) - j * cols;
            float x = p.alpha * acc.v[r], y = p.alpha * acc.v[r + 1];
            if (use_c) {
                const int row = row0 + lr, col = col0 + j * cols + lc;
                if (row < p.m && col < p.n) {
                    const TO *cp = c + row * p.ldc + col;
                    x += p.beta * load1(cp);
                    if (col + 1 < p.n) y += p.beta * load1(cp + 1);
                }
            }
            const uint32_t byte = lc * sizeof(TO);
            TO *dst = reinterpret_cast<TO *>(buf + lr * 128 + (((byte >> 4) ^ (lr & 7)) << 4) + (byte & 15));
            store2(dst, x, y);
        }
        fence_proxy_async();
        named_barrier_sync(1 + half, 128);
        if (leader) {
            tma_store_2d(map_d, buf, col0 + j * cols, row0);
            tma_store_commit();
        }
        ++issued;
    }
}

/* T: input element (bf16 or e4m3); TO: output; A_MN / B_MN: operand stored M-/N-contiguous
 * (hk's trans_a != 0 / trans_b == 0); MODE: launch shape (gemm.h). */
template <class T, class TO, bool A_MN, bool B_MN, gemm_mode MODE>
__device__ __forceinline__ void gemm_body(const CUtensorMap *map_a, const CUtensorMap *map_b, const CUtensorMap *map_d,
                                          const gemm_params &p)
{
    using shape = gemm_shape<MODE>;
    constexpr int gemm_bn = shape::bn, gemm_stages = shape::stages, cluster = shape::cluster;
    using cfg = gemm_cfg<T, gemm_bn, gemm_stages>;
    using acc_t = accum_64xN<gemm_bn>;
    constexpr int bk = cfg::bk, kinst = wgmma_k<T>, ksteps = bk / kinst;
    constexpr bool mcast = MODE == gemm_mode::mcast, splitk = MODE == gemm_mode::splitk;
    static_assert(!(A_MN || B_MN) || sizeof(T) == 2, "wgmma transposes 16-bit operands only");
    static_assert(gemm_bn % HK_GEMM_BOX_B_ROWS == 0 && (!mcast || gemm_bn == 2 * HK_GEMM_BOX_B_ROWS), "B boxes");

    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = reinterpret_cast<uint8_t *>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
    __shared__ barrier full[gemm_stages], empty[gemm_stages];

    const int wg = warpgroup_index();
    if (threadIdx.x == 0) {
        for (int s = 0; s < gemm_stages; ++s) {
            full[s].init(1);
            empty[s].init(mcast ? 16 : 8); /* lane 0 of each consumer warp (of both CTAs when they share B) */
        }
        fence_barrier_init();
    }
    if constexpr (cluster > 1)
        cluster_sync(); /* peers' barriers exist before any multicast or remote arrival names them */
    else
        __syncthreads();

    const uint32_t rank = cluster > 1 ? cluster_ctarank() : 0;
    const int tiles_m = (p.m + gemm_bm - 1) / gemm_bm, tiles_n = (p.n + gemm_bn - 1) / gemm_bn;
    const int kblocks = (p.k + bk - 1) / bk;
    /* This CTA's work: items first, first + step, ... below count; each a tile (mcast: a vertical pair of
     * tiles, this CTA's half by rank) over k-blocks [kb0, kb1). */
    int first, step, count, split = 1, part = 0;
    if constexpr (mcast) {
        count = (tiles_m + 1) / 2 * tiles_n;
        first = blockIdx.x / 2;
        step = gridDim.x / 2;
    } else if constexpr (splitk) {
        split = p.split;
        part = rank % split;
        count = tiles_m * tiles_n;
        first = blockIdx.x / cluster * (cluster / split) + rank / split;
        step = count;
    } else {
        count = tiles_m * tiles_n;
        first = blockIdx.x;
        step = gridDim.x;
    }
    const int kb0 = part * kblocks / split, kb1 = (part + 1) * kblocks / split;
    auto tile_of = [&](int t, int &tm, int &tn) {
        if constexpr (mcast) {
            gemm_tile(t, (tiles_m + 1) / 2, tiles_n, max(p.group_m / 2, 1), tm, tn);
            tm = 2 * tm + rank;
        } else {
            gemm_tile(t, tiles_m, tiles_n, p.group_m, tm, tn);
        }
    };

    if (wg == 0) { /* producer */
        warpgroup_reg_dealloc<40>();
        if (threadIdx.x == 0) {
            tma_prefetch_map(map_a);
            tma_prefetch_map(map_b);
            if (p.tma_store) tma_prefetch_map(map_d);
            int s = 0;
            uint32_t phase = 0;
            for (int t = first; t < count; t += step) {
                int tm, tn;
                tile_of(t, tm, tn);
                const bool a_live = tm * gemm_bm < p.m; /* a pair's second tile can lie wholly past m */
                for (int kb = kb0; kb < kb1; ++kb) {
                    empty[s].wait(phase ^ 1);
                    full[s].arrive_expect_tx(a_live ? cfg::stage_bytes : cfg::b_bytes);
                    uint8_t *sa = smem + s * cfg::stage_bytes, *sb = sa + cfg::a_bytes;
                    if (a_live) {
                        if constexpr (A_MN) {
                            for (int i = 0; i < gemm_bm / 64; ++i)
                                tma_load_2d(sa + i * 8192, map_a, full[s], tm * gemm_bm + 64 * i, kb * bk);
                        } else {
                            tma_load_2d(sa, map_a, full[s], kb * bk, tm * gemm_bm);
                        }
                    }
                    /* B: boxes of 64 N columns (MN-major) or of 128 N rows (K-major); with multicast each CTA
                     * of the pair loads its half for both */
                    constexpr int boxes = B_MN ? gemm_bn / 64 : gemm_bn / HK_GEMM_BOX_B_ROWS, box_bytes = cfg::b_bytes / boxes;
                    constexpr int mine = mcast ? boxes / 2 : boxes;
                    for (int i = 0; i < mine; ++i) {
                        const int box = (mcast ? rank * mine : 0) + i;
                        const int x = B_MN ? tn * gemm_bn + 64 * box : kb * bk;
                        const int y = B_MN ? kb * bk : tn * gemm_bn + HK_GEMM_BOX_B_ROWS * box;
                        if constexpr (mcast)
                            tma_load_2d_multicast(sb + box * box_bytes, map_b, full[s], x, y, 0x3);
                        else
                            tma_load_2d(sb + box * box_bytes, map_b, full[s], x, y);
                    }
                    if (++s == gemm_stages) { s = 0; phase ^= 1; }
                }
            }
        }
        __syncwarp();
        /* match the consumers' cluster barriers: peers still multicast into and arrive on this CTA, or
         * read its partial sums, until then */
        if constexpr (mcast) cluster_sync();
        if constexpr (splitk) {
            if (split > 1) {
                cluster_sync();
                cluster_sync();
            }
        }
        return;
    }

    /* consumers: warpgroup 1 takes tile rows 0-63, warpgroup 2 rows 64-127 */
    warpgroup_reg_alloc<232>();
    const int half = wg - 1;
    uint8_t *epi = smem + gemm_stages * cfg::stage_bytes + half * (gemm_epi_bytes / 2);
    const bool arriver = threadIdx.x % 32 == 0;
    auto release = [&](int st) {
        if (!arriver) return;
        if constexpr (mcast) {
            barrier_arrive_remote(empty[st], 0);
            barrier_arrive_remote(empty[st], 1);
        } else {
            empty[st].arrive();
        }
    };
    acc_t acc;
    int s = 0;
    uint32_t phase = 0;
    int tm = 0, tn = 0;
    bool live = false;
    for (int t = first; t < count; t += step) {
        tile_of(t, tm, tn);
        live = tm * gemm_bm + half * 64 < p.m;
        if (!live) { /* rows past m: pass the stages through */
            for (int kb = kb0; kb < kb1; ++kb) {
                full[s].wait(phase);
                release(s);
                if (++s == gemm_stages) { s = 0; phase ^= 1; }
            }
            continue;
        }
        acc.zero();
        int prev = -1;
        for (int kb = kb0; kb < kb1; ++kb) {
            full[s].wait(phase);
            const uint8_t *sa = smem + s * cfg::stage_bytes, *sb = sa + cfg::a_bytes;
            /* K-major: 64 rows x 128 B per half; MN-major: one 64-wide chunk (64 K rows x 128 B) per half */
            const uint64_t da = A_MN ? smem_desc_sw128(sa + half * 8192, 8192, 1024) : smem_desc_sw128(sa + half * 8192, 16, 1024);
            const uint64_t db = B_MN ? smem_desc_sw128(sb, 8192, 1024) : smem_desc_sw128(sb, 16, 1024);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < ksteps; ++kk) {
                const uint32_t oa = A_MN ? kk * kinst * 128 : kk * 32, ob = B_MN ? kk * kinst * 128 : kk * 32;
                wgmma<T, A_MN, B_MN>(acc, desc_advance(da, oa), desc_advance(db, ob));
            }
            wgmma_commit();
            wgmma_wait<1>(); /* the previous k-block's mma is done: release its stage */
            if (prev >= 0) release(prev);
            prev = s;
            if (++s == gemm_stages) { s = 0; phase ^= 1; }
        }
        wgmma_wait<0>();
        reg_fence(acc.v);
        if (prev >= 0) release(prev);
        if constexpr (!splitk) {
            if (p.tma_store)
                gemm_epilogue_tma<TO, gemm_bn>(acc, p, map_d, epi, half, tm * gemm_bm + half * 64, tn * gemm_bn, 0, acc_t::regs);
            else
                gemm_epilogue<TO, gemm_bn>(acc, p, tm * gemm_bm + half * 64, tn * gemm_bn, 0, acc_t::regs);
        }
    }
    if constexpr (splitk) {
        /* the split CTAs of a tile each finish one column slice (1/split of the registers, a multiple of
         * 32): every CTA parks the other slices in its (now idle) stage buffers, in fragment order, and adds
         * the peers' copies of its own slice in rank order, so the sum does not depend on timing */
        constexpr int regs = acc_t::regs;
        int r0 = 0, r1 = regs;
        if (split > 1) {
            r0 = part * (regs / split);
            r1 = r0 + regs / split;
            float4 *park = reinterpret_cast<float4 *>(smem);
            const int ct = threadIdx.x - 128;
            named_barrier_sync(3, 256); /* both consumer warpgroups' mma have stopped reading the stages */
            if (live) {
#pragma unroll
                for (int i = 0; i < regs; i += 4)
                    if (i < r0 || i >= r1) park[(i / 4) * 256 + ct] = make_float4(acc.v[i], acc.v[i + 1], acc.v[i + 2], acc.v[i + 3]);
            }
            cluster_sync();
            if (live) {
                /* 8 loads in flight per batch: one DSMEM round trip per batch, not per load */
                constexpr int batch = 8;
                for (int q = 0; q < split; ++q) {
                    if (q == part) continue;
                    const uint32_t peer = cluster_map(park, rank - part + q) + ct * 16;
#pragma unroll
                    for (int i0 = 0; i0 < regs; i0 += 4 * batch) {
                        if (i0 + 4 * batch <= r0 || i0 >= r1) continue;
                        float4 v[batch];
#pragma unroll
                        for (int b = 0; b < batch; ++b) v[b] = ld_cluster_f4(peer + (i0 / 4 + b) * 256 * 16);
#pragma unroll
                        for (int b = 0; b < batch; ++b) {
                            acc.v[i0 + 4 * b] += v[b].x;
                            acc.v[i0 + 4 * b + 1] += v[b].y;
                            acc.v[i0 + 4 * b + 2] += v[b].z;
                            acc.v[i0 + 4 * b + 3] += v[b].w;
                        }
                    }
                }
            }
            cluster_sync(); /* peers have read this CTA's slices */
        }
        if (live) {
            if (p.tma_store)
                gemm_epilogue_tma<TO, gemm_bn>(acc, p, map_d, epi, half, tm * gemm_bm + half * 64, tn * gemm_bn, r0, r1);
            else
                gemm_epilogue<TO, gemm_bn>(acc, p, tm * gemm_bm + half * 64, tn * gemm_bn, r0, r1);
        }
    }
    if (p.tma_store && threadIdx.x % 128 == 0) tma_store_wait_all();
    if constexpr (mcast) cluster_sync(); /* the peer may still arrive on this CTA's empty barriers */
}

} // namespace hk::hopper

/* Kernel names: hk_gemm_sm90_<in>_<layout>_<out>[_mc2|_sk2]; the layout letters are hk's trans_a, trans_b
 * ("nt": A row-major x B transposed, the nn.Linear layout); the suffix is the launch shape (gemm.h). */
#define HK_GEMM_KERNEL(name, T, TO, A_MN, B_MN, MODE, ATTR)                                                       \
    extern "C" __global__ void ATTR __launch_bounds__(hk::hopper::gemm_threads, 1)                                 \
        name(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,                \
             const __grid_constant__ CUtensorMap map_d, const hk::hopper::gemm_params p)                          \
    {                                                                                                             \
        hk::hopper::gemm_body<T, TO, A_MN, B_MN, hk::hopper::gemm_mode::MODE>(&map_a, &map_b, &map_d, p);         \
    }
#define HK_GEMM_KERNELS(name, T, TO, A_MN, B_MN)                                                                  \
    HK_GEMM_KERNEL(name, T, TO, A_MN, B_MN, persist, )                                                            \
    HK_GEMM_KERNEL(name##_mc2, T, TO, A_MN, B_MN, mcast, __cluster_dims__(2, 1, 1))                               \
    HK_GEMM_KERNEL(name##_sk2, T, TO, A_MN, B_MN, splitk, __cluster_dims__(HK_GEMM_CLUSTER_SK, 1, 1))

HK_GEMM_KERNELS(hk_gemm_sm90_bf16_nt_bf16, __nv_bfloat16, __nv_bfloat16, false, false)
HK_GEMM_KERNELS(hk_gemm_sm90_bf16_nt_f32, __nv_bfloat16, float, false, false)
HK_GEMM_KERNELS(hk_gemm_sm90_bf16_nn_bf16, __nv_bfloat16, __nv_bfloat16, false, true)
HK_GEMM_KERNELS(hk_gemm_sm90_bf16_nn_f32, __nv_bfloat16, float, false, true)
HK_GEMM_KERNELS(hk_gemm_sm90_bf16_tt_bf16, __nv_bfloat16, __nv_bfloat16, true, false)
HK_GEMM_KERNELS(hk_gemm_sm90_bf16_tt_f32, __nv_bfloat16, float, true, false)
HK_GEMM_KERNELS(hk_gemm_sm90_bf16_tn_bf16, __nv_bfloat16, __nv_bfloat16, true, true)
HK_GEMM_KERNELS(hk_gemm_sm90_bf16_tn_f32, __nv_bfloat16, float, true, true)
HK_GEMM_KERNELS(hk_gemm_sm90_bf16_nt_f16, __nv_bfloat16, __half, false, false)
HK_GEMM_KERNELS(hk_gemm_sm90_bf16_nn_f16, __nv_bfloat16, __half, false, true)
HK_GEMM_KERNELS(hk_gemm_sm90_bf16_tt_f16, __nv_bfloat16, __half, true, false)
HK_GEMM_KERNELS(hk_gemm_sm90_bf16_tn_f16, __nv_bfloat16, __half, true, true)
HK_GEMM_KERNELS(hk_gemm_sm90_e4m3_nt_bf16, __nv_fp8_e4m3, __nv_bfloat16, false, false)
HK_GEMM_KERNELS(hk_gemm_sm90_e4m3_nt_f32, __nv_fp8_e4m3, float, false, false)
