/* Hopper (sm_90a) GEMM: D = alpha * op(A) op(B) + beta * C, row-major, fp32 accumulation.
 *
 * One persistent CTA per SM walks output tiles of 128 x 256 in an L2-friendly grouped order. Warpgroup 0
 * is the producer: one thread streams A and B k-blocks into a STAGES-deep ring of shared-memory tiles
 * with TMA, each stage guarded by a "full" mbarrier (TMA bytes landed) and an "empty" mbarrier (both
 * consumers done reading). Warpgroups 1 and 2 are consumers: each owns 64 rows of the tile as a 64 x 256
 * fp32 accumulator and issues wgmma straight from shared memory, keeping one k-block of mma in flight.
 * setmaxnreg moves registers from the producer to the consumers. TMA zero-fills out-of-bounds boxes,
 * so ragged M/N/K need no special main loop. The epilogue stages each warpgroup's accumulator through
 * shared memory into TMA stores (clipped to m x n by the hardware) when D's layout allows, else it
 * stores straight from registers with masks. */
#include "hopper/gemm.h"
#include "tiles/hopper/barrier.cuh"
#include "tiles/hopper/mma.cuh"
#include "tiles/hopper/tma.cuh"

#include <cuda_fp16.h>

namespace hk::hopper {

using gemm_params = hk_gemm_params;

constexpr int gemm_threads = HK_GEMM_THREADS;
constexpr int gemm_bm = HK_GEMM_BM, gemm_bn = HK_GEMM_BN, gemm_stages = HK_GEMM_STAGES;

/* Epilogue staging: per consumer warpgroup two 64-row x 128-byte swizzled buffers, ping-ponged while
 * TMA stores drain them. */
constexpr uint32_t gemm_epi_bytes = 2 * 2 * 64 * 128;

template <class T> struct gemm_cfg {
    static constexpr int bk = 128 / sizeof(T); /* one 128-byte swizzle row of K */
    static constexpr uint32_t a_bytes = gemm_bm * 128, b_bytes = gemm_bn * 128;
    static constexpr uint32_t stage_bytes = a_bytes + b_bytes;
    static constexpr uint32_t smem_bytes = gemm_stages * stage_bytes + gemm_epi_bytes + 1024; /* + alignment slack */
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

/* Write one warpgroup's 64 x 256 accumulator at (row0, col0), masked to m x n. */
template <class TO>
__device__ __forceinline__ void gemm_epilogue(accum_64xN<gemm_bn> &acc, const gemm_params &p, int row0, int col0)
{
    using acc_t = accum_64xN<gemm_bn>;
    const int lane = threadIdx.x % 32, warp = (threadIdx.x / 32) % 4;
    TO *d = static_cast<TO *>(p.d);
    const TO *c = static_cast<const TO *>(p.c);
    const bool use_c = p.beta != 0.f;
#pragma unroll
    for (int r = 0; r < acc_t::regs; r += 2) {
        const int row = row0 + acc_t::row(r, lane, warp), col = col0 + acc_t::col(r, lane);
        if (row >= p.m || col >= p.n) continue;
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
 * it to m x n. Buffers alternate so writing chunk j overlaps the store of chunk j - 1. */
template <class TO>
__device__ __forceinline__ void gemm_epilogue_tma(accum_64xN<gemm_bn> &acc, const gemm_params &p, const CUtensorMap *map_d,
                                                  uint8_t *stage, int half, int row0, int col0)
{
    using acc_t = accum_64xN<gemm_bn>;
    constexpr int cols = 128 / sizeof(TO), chunks = gemm_bn / cols, regs = cols / 2;
    const int lane = threadIdx.x % 32, warp = (threadIdx.x / 32) % 4;
    const bool leader = threadIdx.x % 128 == 0;
    const TO *c = static_cast<const TO *>(p.c);
    const bool use_c = p.beta != 0.f;
    if (leader) tma_store_wait_read<0>(); /* the previous tile's stores have left the buffers */
    named_barrier_sync(1 + half, 128);
#pragma unroll
    for (int j = 0; j < chunks; ++j) {
        uint8_t *buf = stage + (j % 2) * (64 * 128);
        if (j >= 2) {
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
    }
}

/* T: input element (bf16 or e4m3); TO: output; A_MN / B_MN: operand stored M-/N-contiguous
 * (hk's trans_a != 0 / trans_b == 0). */
template <class T, class TO, bool A_MN, bool B_MN>
__device__ __forceinline__ void gemm_body(const CUtensorMap *map_a, const CUtensorMap *map_b, const CUtensorMap *map_d,
                                          const gemm_params &p)
{
    using cfg = gemm_cfg<T>;
    constexpr int bk = cfg::bk, kinst = wgmma_k<T>, ksteps = bk / kinst;
    static_assert(!(A_MN || B_MN) || sizeof(T) == 2, "wgmma transposes 16-bit operands only");

    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = reinterpret_cast<uint8_t *>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
    __shared__ barrier full[gemm_stages], empty[gemm_stages];

    const int wg = warpgroup_index();
    if (threadIdx.x == 0) {
        for (int s = 0; s < gemm_stages; ++s) {
            full[s].init(1);
            empty[s].init(8); /* lane 0 of each consumer warp */
        }
        fence_barrier_init();
    }
    __syncthreads();

    const int tiles_m = (p.m + gemm_bm - 1) / gemm_bm, tiles_n = (p.n + gemm_bn - 1) / gemm_bn;
    const int tiles = tiles_m * tiles_n, kblocks = (p.k + bk - 1) / bk;

    if (wg == 0) { /* producer */
        warpgroup_reg_dealloc<40>();
        if (threadIdx.x != 0) return;
        tma_prefetch_map(map_a);
        tma_prefetch_map(map_b);
        if (p.tma_store) tma_prefetch_map(map_d);
        int s = 0;
        uint32_t phase = 0;
        for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
            int tm, tn;
            gemm_tile(t, tiles_m, tiles_n, p.group_m, tm, tn);
            for (int kb = 0; kb < kblocks; ++kb) {
                empty[s].wait(phase ^ 1);
                full[s].arrive_expect_tx(cfg::stage_bytes);
                uint8_t *sa = smem + s * cfg::stage_bytes, *sb = sa + cfg::a_bytes;
                if constexpr (A_MN) {
                    for (int i = 0; i < gemm_bm / 64; ++i) tma_load_2d(sa + i * 8192, map_a, full[s], tm * gemm_bm + 64 * i, kb * bk);
                } else {
                    tma_load_2d(sa, map_a, full[s], kb * bk, tm * gemm_bm);
                }
                if constexpr (B_MN) {
                    for (int i = 0; i < gemm_bn / 64; ++i) tma_load_2d(sb + i * 8192, map_b, full[s], tn * gemm_bn + 64 * i, kb * bk);
                } else {
                    tma_load_2d(sb, map_b, full[s], kb * bk, tn * gemm_bn);
                }
                if (++s == gemm_stages) { s = 0; phase ^= 1; }
            }
        }
        return;
    }

    /* consumers: warpgroup 1 takes tile rows 0-63, warpgroup 2 rows 64-127 */
    warpgroup_reg_alloc<232>();
    const int half = wg - 1;
    uint8_t *epi = smem + gemm_stages * cfg::stage_bytes + half * (gemm_epi_bytes / 2);
    const bool arriver = threadIdx.x % 32 == 0;
    accum_64xN<gemm_bn> acc;
    int s = 0;
    uint32_t phase = 0;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        int tm, tn;
        gemm_tile(t, tiles_m, tiles_n, p.group_m, tm, tn);
        acc.zero();
        int prev = -1;
        for (int kb = 0; kb < kblocks; ++kb) {
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
            if (prev >= 0 && arriver) empty[prev].arrive();
            prev = s;
            if (++s == gemm_stages) { s = 0; phase ^= 1; }
        }
        wgmma_wait<0>();
        reg_fence(acc.v);
        if (prev >= 0 && arriver) empty[prev].arrive();
        if (p.tma_store)
            gemm_epilogue_tma<TO>(acc, p, map_d, epi, half, tm * gemm_bm + half * 64, tn * gemm_bn);
        else
            gemm_epilogue<TO>(acc, p, tm * gemm_bm + half * 64, tn * gemm_bn);
    }
    if (p.tma_store && threadIdx.x % 128 == 0) tma_store_wait_all();
}

} // namespace hk::hopper

/* Kernel names: hk_gemm_sm90_<in>_<layout>_<out>; the layout letters are hk's trans_a, trans_b ("nt":
 * A row-major x B transposed, the nn.Linear layout). */
#define HK_GEMM_KERNEL(name, T, TO, A_MN, B_MN)                                                                   \
    extern "C" __global__ void __launch_bounds__(hk::hopper::gemm_threads, 1)                                      \
        name(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,                \
             const __grid_constant__ CUtensorMap map_d, const hk::hopper::gemm_params p)                          \
    {                                                                                                             \
        hk::hopper::gemm_body<T, TO, A_MN, B_MN>(&map_a, &map_b, &map_d, p);                                      \
    }

HK_GEMM_KERNEL(hk_gemm_sm90_bf16_nt_bf16, __nv_bfloat16, __nv_bfloat16, false, false)
HK_GEMM_KERNEL(hk_gemm_sm90_bf16_nt_f32, __nv_bfloat16, float, false, false)
HK_GEMM_KERNEL(hk_gemm_sm90_bf16_nn_bf16, __nv_bfloat16, __nv_bfloat16, false, true)
HK_GEMM_KERNEL(hk_gemm_sm90_bf16_nn_f32, __nv_bfloat16, float, false, true)
HK_GEMM_KERNEL(hk_gemm_sm90_bf16_tt_bf16, __nv_bfloat16, __nv_bfloat16, true, false)
HK_GEMM_KERNEL(hk_gemm_sm90_bf16_tt_f32, __nv_bfloat16, float, true, false)
HK_GEMM_KERNEL(hk_gemm_sm90_bf16_tn_bf16, __nv_bfloat16, __nv_bfloat16, true, true)
HK_GEMM_KERNEL(hk_gemm_sm90_bf16_tn_f32, __nv_bfloat16, float, true, true)
HK_GEMM_KERNEL(hk_gemm_sm90_bf16_nt_f16, __nv_bfloat16, __half, false, false)
HK_GEMM_KERNEL(hk_gemm_sm90_bf16_nn_f16, __nv_bfloat16, __half, false, true)
HK_GEMM_KERNEL(hk_gemm_sm90_bf16_tt_f16, __nv_bfloat16, __half, true, false)
HK_GEMM_KERNEL(hk_gemm_sm90_bf16_tn_f16, __nv_bfloat16, __half, true, true)
HK_GEMM_KERNEL(hk_gemm_sm90_e4m3_nt_bf16, __nv_fp8_e4m3, __nv_bfloat16, false, false)
HK_GEMM_KERNEL(hk_gemm_sm90_e4m3_nt_f32, __nv_fp8_e4m3, float, false, false)
