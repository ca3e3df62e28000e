/* How fast TMA fills one SM's shared memory when nothing else runs: the GEMM k-loop's loads (A and B boxes of 128-byte
 * rows, 128B swizzle, one mbarrier ring) without the mma, one CTA per SM, every CTA on the tile a GEMM of m x n x k
 * would give it. Prints bytes per cycle per SM and the aggregate rate, so a GEMM shape's k-block time can be read
 * against its load floor (git history of bench/NOTES.md, eleventh session, call 13).
 * INGRESS_POOL=1: the loads of a pooled split (tile orders, clusters); INGRESS_MMA=1: the pooled k-loop with and
 * without its mma; INGRESS_FORMS=1: that k-loop's mma issued in other forms (pool_mma's FORM). Each row also gives
 * the clock it ran at (INGRESS_WARM=N: N launches first; INGRESS_RANDOM=1: random operands instead of 0x3c3c).
 *   nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -I../kernels tma_ingress.cu -lcuda -o tma_ingress */
#include "tiles/hopper/barrier.cuh"
#include "tiles/hopper/memory.cuh"
#include "tiles/hopper/mma.cuh"
#include "tiles/hopper/tma.cuh"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace hk::hopper;
using hk::global_timer;
using hk::sm_cycles;

#define CK(x)                                                                                                     \
    do {                                                                                                          \
        cudaError_t e_ = (x);                                                                                     \
        if (e_ != cudaSuccess) {                                                                                  \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                                              \
            exit(1);                                                                                              \
        }                                                                                                         \
    } while (0)

constexpr int max_stages = 16;

/* A CTA's SM cycles and global-timer nanoseconds since (c0, g0): out[cta], out[ctas + cta]. Their ratio is the clock
 * the run got, which short runs from an idle GPU hold far below a GEMM's (INGRESS_WARM below). */
__device__ __forceinline__ void stamp(unsigned long long *out, unsigned long long c0, unsigned long long g0)
{
    out[blockIdx.x] = sm_cycles() - c0;
    out[gridDim.x + blockIdx.x] = global_timer() - g0;
}

/* One producer thread streams k-blocks of an A box (a_rows x 128 B) and a B box (b_rows x 128 B) into `stages` ring
 * slots; one consumer warp waits for each and hands it back, reading nothing. MODE 0: every CTA loads its own boxes;
 * in clusters of 2 whose CTAs share B (tiles_m even), MODE 1: each loads half of B's rows and multicasts it to both
 * (map_b's box is b_rows / 2), MODE 2: each loads all of B on every other k-block and multicasts it; MODE 3 / 4: own
 * boxes with an L2 evict_last / evict_first hint; MODE 8: each box as two of half the K width (64-byte rows, 64-byte
 * swizzle); MODE 9: each box as two of half the rows; MODE 10: B's box issued before A's; MODE 11: A and B issued
 * by two producer threads in different warps (a full barrier of two arrivals). */
template <int MODE>
__device__ __forceinline__ void ingress_body(const CUtensorMap *map_a, const CUtensorMap *map_b, int a_rows, int b_rows,
                                             int stages, int tiles_m, int kblocks, unsigned long long *cycles)
{
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = swizzle_aligned(smem_raw);
    __shared__ barrier full[max_stages], empty[max_stages];
    const uint32_t stage_bytes = (a_rows + b_rows) * 128, rank = MODE == 1 || MODE == 2 ? cluster_ctarank() : 0;
    if (threadIdx.x == 0) {
        for (int s = 0; s < stages; ++s) {
            full[s].init(MODE == 11 ? 2 : 1);
            empty[s].init(MODE == 1 || MODE == 2 ? 2 : 1); /* both CTAs' consumers when they write each other's stages */
        }
        fence_barrier_init();
    }
    if constexpr (MODE == 1 || MODE == 2)
        cluster_sync();
    else
        __syncthreads();
    const int tm = blockIdx.x % tiles_m, tn = blockIdx.x / tiles_m;
    const unsigned long long t0 = sm_cycles(), g0 = global_timer();
    if (MODE == 11 && threadIdx.x == 64) { /* the second producer: B */
        int s = 0;
        uint32_t phase = 0;
        for (int kb = 0; kb < kblocks; ++kb) {
            empty[s].wait(phase ^ 1);
            full[s].arrive_expect_tx(b_rows * 128);
            tma_load_2d(smem + s * stage_bytes + a_rows * 128, map_b, full[s], kb * 64, tn * b_rows);
            if (++s == stages) { s = 0; phase ^= 1; }
        }
    } else if (threadIdx.x == 0) {
        int s = 0;
        uint32_t phase = 0;
        for (int kb = 0; kb < kblocks; ++kb) {
            empty[s].wait(phase ^ 1);
            full[s].arrive_expect_tx(MODE == 11 ? a_rows * 128 : stage_bytes);
            uint8_t *sa = smem + s * stage_bytes, *sb = sa + a_rows * 128;
            if constexpr (MODE == 3 || MODE == 4) {
                const uint64_t hint = MODE == 3 ? l2_hint_evict_last : l2_hint_evict_first;
                tma_load_2d_hint(sa, map_a, full[s], kb * 64, tm * a_rows, hint);
                tma_load_2d_hint(sb, map_b, full[s], kb * 64, tn * b_rows, hint);
            } else if constexpr (MODE == 8) {
                for (int h = 0; h < 2; ++h) {
                    tma_load_2d(sa + h * a_rows * 64, map_a, full[s], kb * 64 + 32 * h, tm * a_rows);
                    tma_load_2d(sb + h * b_rows * 64, map_b, full[s], kb * 64 + 32 * h, tn * b_rows);
                }
            } else if constexpr (MODE == 9) {
                for (int h = 0; h < 2; ++h) {
                    tma_load_2d(sa + h * a_rows * 64, map_a, full[s], kb * 64, tm * a_rows + h * (a_rows / 2));
                    tma_load_2d(sb + h * b_rows * 64, map_b, full[s], kb * 64, tn * b_rows + h * (b_rows / 2));
                }
            } else if constexpr (MODE == 10) {
                tma_load_2d(sb, map_b, full[s], kb * 64, tn * b_rows);
                tma_load_2d(sa, map_a, full[s], kb * 64, tm * a_rows);
            } else {
                tma_load_2d(sa, map_a, full[s], kb * 64, tm * a_rows);
            }
            if constexpr (MODE == 0 || (MODE >= 5 && MODE <= 7))
                tma_load_2d(sb, map_b, full[s], kb * 64, tn * b_rows);
            else if constexpr (MODE == 1)
                tma_load_2d_multicast(sb + rank * (b_rows / 2) * 128, map_b, full[s], kb * 64, tn * b_rows + rank * (b_rows / 2), 0x3);
            else if constexpr (MODE == 2) {
                if (kb % 2 == (int)rank) tma_load_2d_multicast(sb, map_b, full[s], kb * 64, tn * b_rows, 0x3);
            }
            if (++s == stages) { s = 0; phase ^= 1; }
        }
    } else if (threadIdx.x >= 32 && threadIdx.x < 64) {
        int s = 0;
        uint32_t phase = 0;
        for (int kb = 0; kb < kblocks; ++kb) {
            full[s].wait(phase);
            if (threadIdx.x == 32) {
                if constexpr (MODE == 1 || MODE == 2) {
                    barrier_arrive_remote(empty[s], 0);
                    barrier_arrive_remote(empty[s], 1);
                } else {
                    empty[s].arrive();
                }
            }
            if (++s == stages) { s = 0; phase ^= 1; }
        }
        if (threadIdx.x == 32) stamp(cycles, t0, g0);
    }
    if constexpr (MODE == 1 || MODE == 2) cluster_sync(); /* the peer may still multicast into or arrive on this CTA */
}
__global__ void __launch_bounds__(128, 1) ingress(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                                                  int a_rows, int b_rows, int stages, int tiles_m, int kblocks,
                                                  unsigned long long *cycles)
{
    ingress_body<0>(&map_a, &map_b, a_rows, b_rows, stages, tiles_m, kblocks, cycles);
}
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 1)
    ingress_half(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, int a_rows, int b_rows,
                 int stages, int tiles_m, int kblocks, unsigned long long *cycles)
{
    ingress_body<1>(&map_a, &map_b, a_rows, b_rows, stages, tiles_m, kblocks, cycles);
}
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 1)
    ingress_alternate(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, int a_rows,
                      int b_rows, int stages, int tiles_m, int kblocks, unsigned long long *cycles)
{
    ingress_body<2>(&map_a, &map_b, a_rows, b_rows, stages, tiles_m, kblocks, cycles);
}
template <int MODE>
__global__ void __launch_bounds__(128, 1) ingress_mode(const __grid_constant__ CUtensorMap map_a,
                                                       const __grid_constant__ CUtensorMap map_b, int a_rows, int b_rows,
                                                       int stages, int tiles_m, int kblocks, unsigned long long *cycles)
{
    ingress_body<MODE>(&map_a, &map_b, a_rows, b_rows, stages, tiles_m, kblocks, cycles);
}

/* CM x CN clusters of bm x bn tiles, K in `parts` parts (a pooled split's CTAs, one part each; cuBLAS's split-K
 * kernels run 1 x 2 to 4 x 2 clusters): the cluster's CTAs (rm, rn) take one part of tiles (gm * CM + rm, gn * CN + rn);
 * a tile row's CN CTAs each load 1 / CN of A's rows and multicast it along the row, a tile column's CM CTAs 1 / CM of
 * B's rows along the column. A stage of a CTA is written by its row- and column-mates, so its consumer frees it on all
 * of their empty barriers (CM + CN - 1 arrivals each). Clusters are a launch attribute: 1 x 1 launches without one.
 * part_major: a tile's parts on consecutive clusters (the pooled GEMM's order), else a part's tiles. */
template <int CM, int CN>
__global__ void __launch_bounds__(128, 1)
    ingress_pool(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, int bm, int bn,
                 int stages, int tiles_m, int tiles_n, int parts, int part_major, int kblocks, unsigned long long *cycles)
{
    constexpr bool clustered = CM * CN > 1;
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = swizzle_aligned(smem_raw);
    __shared__ barrier full[max_stages], empty[max_stages];
    const uint32_t stage_bytes = (bm + bn) * 128, a_slice = bm / CN, b_slice = bn / CM;
    const uint32_t rank = clustered ? cluster_ctarank() : 0, rm = rank % CM, rn = rank / CM;
    const int cluster = blockIdx.x / (CM * CN), groups_m = tiles_m / CM, groups = groups_m * (tiles_n / CN);
    const int part = part_major ? cluster % parts : cluster / groups, group = part_major ? cluster / parts : cluster % groups;
    const int tm = group % groups_m * CM + rm, tn = group / groups_m * CN + rn;
    const int kb0 = part * kblocks / parts, kb1 = (part + 1) * kblocks / parts;
    uint16_t row_mask = 0, col_mask = 0;
    for (int j = 0; j < CN; ++j) row_mask |= 1u << (rm + CM * j);
    for (int i = 0; i < CM; ++i) col_mask |= 1u << (i + CM * rn);
    if (threadIdx.x == 0) {
        for (int s = 0; s < stages; ++s) {
            full[s].init(1);
            empty[s].init(CM + CN - 1);
        }
        fence_barrier_init();
    }
    if constexpr (clustered)
        cluster_sync();
    else
        __syncthreads();
    const unsigned long long t0 = sm_cycles(), g0 = global_timer();
    if (threadIdx.x == 0) {
        int s = 0;
        uint32_t phase = 0;
        for (int kb = kb0; kb < kb1; ++kb) {
            empty[s].wait(phase ^ 1);
            full[s].arrive_expect_tx(stage_bytes);
            uint8_t *sa = smem + s * stage_bytes, *sb = sa + bm * 128;
            if constexpr (CN == 1)
                tma_load_2d(sa, &map_a, full[s], kb * 64, tm * bm);
            else
                tma_load_2d_multicast(sa + rn * a_slice * 128, &map_a, full[s], kb * 64, tm * bm + rn * a_slice, row_mask);
            if constexpr (CM == 1)
                tma_load_2d(sb, &map_b, full[s], kb * 64, tn * bn);
            else
                tma_load_2d_multicast(sb + rm * b_slice * 128, &map_b, full[s], kb * 64, tn * bn + rm * b_slice, col_mask);
            if (++s == stages) { s = 0; phase ^= 1; }
        }
    } else if (threadIdx.x >= 32 && threadIdx.x < 64) {
        const uint32_t lane = threadIdx.x - 32, mates = row_mask | col_mask;
        int s = 0;
        uint32_t phase = 0;
        for (int kb = kb0; kb < kb1; ++kb) {
            full[s].wait(phase);
            if (lane == rank)
                empty[s].arrive();
            else if (lane < CM * CN && (mates >> lane & 1))
                barrier_arrive_remote(empty[s], lane);
            if (++s == stages) { s = 0; phase ^= 1; }
        }
        if (lane == 0) stamp(cycles, t0, g0);
    }
    if constexpr (clustered)
        cluster_sync(); /* peers may still multicast into or arrive on this CTA */
}

/* The pooled split's k-loop with its mma (tile-major CTAs, no clusters): a producer warpgroup streams BM x BN tiles'
 * k-blocks as ingress_pool does, two consumer warpgroups run the GEMM's wgmma on each stage (both operands from shared
 * memory) and free it one k-block later, as gemm.cu does. MMA_ONLY: the producer fills the ring once and the consumers
 * cycle over its resident stages: the mma's own rate, with no TMA writes into shared memory beside it. Cycles per CTA
 * from its first landed k-block to its last mma's end.
 * FORM, how the consumers issue a k-block (INGRESS_FORMS, git history of bench/NOTES.md, thirty-first session): 0 as gemm.cu
 * (wgmma_kblock: a fence, 4 instructions, a commit; then wait for the k-block before); 1 one fence before the loop,
 * none per k-block (ptxas adds some: C7519); 2 as 0, waiting for the k-block two before; 4 BM = 256, each consumer
 * 128 rows as two m64nBN chains over one B (cuBLAS's coopA tiles; MMA_ONLY only: ptxas serializes it beside the
 * loads); 5 each consumer's 64 x BN as two m64n(BN / 2) chains over one A; 6 consumer 0 alone (MMA_ONLY only).
 * (Two k-blocks per commit group: ptxas serializes them, C7514.) */
template <int BM, int BN, bool MMA_ONLY, int FORM = 0>
__global__ void __launch_bounds__(384, 1)
    pool_mma(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, int stages, int tiles_m,
             int tiles, int parts, int kblocks, unsigned long long *cycles)
{
    static_assert(BM == (FORM == 4 ? 256 : 128), "two consumers of 64 rows, or of 128 in FORM 4");
    static_assert((FORM != 4 && FORM != 6) || MMA_ONLY, "serialized beside the loads / an idle consumer holds the ring");
    constexpr uint32_t a_bytes = BM * 128, stage_bytes = (BM + BN) * 128;
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = swizzle_aligned(smem_raw);
    __shared__ barrier full[max_stages], empty[max_stages];
    const int part = blockIdx.x / tiles, tile = blockIdx.x % tiles, tm = tile % tiles_m, tn = tile / tiles_m;
    const int kb0 = part * kblocks / parts, kb1 = (part + 1) * kblocks / parts;
    if (threadIdx.x == 0) {
        for (int s = 0; s < stages; ++s) {
            full[s].init(1);
            empty[s].init(8); /* lane 0 of each consumer warp */
        }
        fence_barrier_init();
    }
    __syncthreads();
    const int wg = warpgroup_index();
    if (wg == 0) {
        warpgroup_reg_dealloc<40>();
        if (threadIdx.x == 0) {
            int s = 0;
            uint32_t phase = 0;
            for (int kb = kb0; kb < (MMA_ONLY ? kb0 + stages : kb1); ++kb) {
                empty[s].wait(phase ^ 1);
                full[s].arrive_expect_tx(stage_bytes);
                uint8_t *sa = smem + s * stage_bytes;
                tma_load_2d(sa, &map_a, full[s], kb * 64, tm * BM);
                tma_load_2d(sa + a_bytes, &map_b, full[s], kb * 64, tn * BN);
                if (++s == stages) { s = 0; phase ^= 1; }
            }
        }
        return;
    }
    warpgroup_reg_alloc<232>();
    const int slab = wg - 1;
    if (FORM == 6 && slab == 1) return;
    using bf16 = __nv_bfloat16;
    constexpr int chains = FORM == 4 || FORM == 5 ? 2 : 1, CN = FORM == 5 ? BN / 2 : BN;
    accum_64xN<CN> acc[chains];
#pragma unroll
    for (int c = 0; c < chains; ++c) acc[c].zero();
    if constexpr (FORM == 1) wgmma_fence();
    int s = 0, prev = -1, prev2 = -1;
    uint32_t phase = 0;
    unsigned long long t0 = 0, g0 = 0;
    if constexpr (MMA_ONLY) {
        for (int i = 0; i < stages; ++i) full[i].wait(0);
        t0 = sm_cycles();
        g0 = global_timer();
    }
    auto free_stage = [&](int st) {
        if (!MMA_ONLY && st >= 0 && threadIdx.x % 32 == 0) empty[st].arrive();
    };
    for (int kb = kb0; kb < kb1; ++kb) {
        if constexpr (!MMA_ONLY) {
            full[s].wait(phase);
            if (kb == kb0) {
                t0 = sm_cycles();
                g0 = global_timer();
            }
        }
        const uint8_t *sa = smem + s * stage_bytes, *sb = sa + a_bytes;
        if constexpr (FORM == 0 || FORM == 2 || FORM == 6) {
            wgmma_kblock<bf16, false, false, 128>(acc[0], sa + slab * 8192, sb);
        } else {
            const uint64_t db = smem_desc<128>(sb, 16, 1024);
            auto da = [&](int rows64) { return smem_desc<128>(sa + rows64 * 8192, 16, 1024); }; /* 64 rows of A */
            if constexpr (FORM != 1) wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < 4; ++kk) {
                if constexpr (FORM == 4) {
#pragma unroll
                    for (int c = 0; c < 2; ++c)
                        wgmma<bf16, false, false>(acc[c], desc_advance(da(2 * slab + c), kk * 32),
                                                  desc_advance(db, kk * 32), 1);
                } else if constexpr (FORM == 5) {
#pragma unroll
                    for (int c = 0; c < 2; ++c) /* B's rows c * CN .. */
                        wgmma<bf16, false, false>(acc[c], desc_advance(da(slab), kk * 32),
                                                  desc_advance(db, c * CN * 128 + kk * 32), 1);
                } else {
                    wgmma<bf16, false, false>(acc[0], desc_advance(da(slab), kk * 32), desc_advance(db, kk * 32), 1);
                }
            }
            wgmma_commit();
        }
        if constexpr (FORM == 2) {
            wgmma_wait<2>();
            free_stage(prev2);
            prev2 = prev;
        } else {
            wgmma_wait<1>();
            free_stage(prev);
        }
        prev = s;
        if (++s == stages) { s = 0; phase ^= 1; }
    }
    wgmma_wait<0>();
    if (threadIdx.x == 128) stamp(cycles, t0, g0);
    float sum = 0.f; /* the accumulator read, or ptxas drops the wgmma whose results die (31 cycles per k-block) */
#pragma unroll
    for (int c = 0; c < chains; ++c)
#pragma unroll
        for (int i = 0; i < CN / 2; ++i) sum += acc[c].v[i];
    if (sum == -1.f) cycles[blockIdx.x] = 0;
}

static CUtensorMap map_rows(const void *p, int rows, int k, int box_rows,
                            CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B, int box_k = 64)
{
    CUtensorMap m;
    cuuint64_t dims[2] = {(cuuint64_t)k, (cuuint64_t)rows}, strides[1] = {(cuuint64_t)k * 2};
    cuuint32_t box[2] = {(cuuint32_t)box_k, (cuuint32_t)box_rows}, es[2] = {1, 1};
    if (cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void *>(p), dims, strides, box, es,
                               CU_TENSOR_MAP_INTERLEAVE_NONE, box_k == 64 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B, promotion,
                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
        fprintf(stderr, "cuTensorMapEncodeTiled failed\n");
        exit(1);
    }
    return m;
}

/* The shortest of 8 launches by event time (ms); INGRESS_WARM=N: N launches before them, so that the clock settles
 * where back-to-back work holds it (as in the GEMM harness's graphs) instead of where an idle GPU starts. */
template <class Launch> static float best_event_ms(Launch launch)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    const char *warm = getenv("INGRESS_WARM");
    for (int w = warm ? atoi(warm) : 0; w > 0; --w) launch();
    float best = 1e30f;
    for (int rep = 0; rep < 8; ++rep) {
        CK(cudaEventRecord(e0));
        launch();
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (ms < best) best = ms;
    }
    CK(cudaGetLastError());
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    return best;
}

/* INGRESS_RANDOM=1: operands of random bits (15 of 16: no infinity or NaN), to tell whether the loads' rate depends
 * on what they carry (the GEMM's operands are random, 0x3c3c everywhere is not). */
__global__ void fill_random(uint16_t *p, size_t n, uint32_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t h = (uint32_t)i * 0x9e3779b9u ^ seed;
        h ^= h >> 16;
        h *= 0x85ebca6bu;
        h ^= h >> 13;
        p[i] = (uint16_t)(h & 0xbfff);
    }
}

/* A run's operands (m x k and n x k bf16, every element 0x3c3c unless INGRESS_RANDOM), stamp's cycles and nanoseconds per CTA, and their
 * mean, slowest and clock (the CTAs' cycles over their nanoseconds) read back. */
struct ingress_run {
    void *a = nullptr, *b = nullptr;
    unsigned long long *cyc = nullptr;
    int ctas;
    ingress_run(int m, int n, int k, int ctas_) : ctas(ctas_)
    {
        CK(cudaMalloc(&a, (size_t)m * k * 2));
        CK(cudaMalloc(&b, (size_t)n * k * 2));
        if (getenv("INGRESS_RANDOM")) {
            fill_random<<<1024, 256>>>((uint16_t *)a, (size_t)m * k, 1);
            fill_random<<<1024, 256>>>((uint16_t *)b, (size_t)n * k, 2);
            CK(cudaDeviceSynchronize());
        } else {
            CK(cudaMemset(a, 0x3c, (size_t)m * k * 2));
            CK(cudaMemset(b, 0x3c, (size_t)n * k * 2));
        }
        CK(cudaMalloc(&cyc, 2 * ctas * sizeof(unsigned long long)));
    }
    ingress_run(const ingress_run &) = delete;
    ingress_run &operator=(const ingress_run &) = delete;
    ~ingress_run()
    {
        cudaFree(a);
        cudaFree(b);
        cudaFree(cyc);
    }
    void cycles(double &mean, double &worst, double &ghz) const
    {
        std::vector<unsigned long long> h(2 * ctas);
        CK(cudaMemcpy(h.data(), cyc, 2 * ctas * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
        unsigned long long sum = 0, most = 0, ns = 0;
        for (int i = 0; i < ctas; ++i) {
            sum += h[i];
            most = h[i] > most ? h[i] : most;
            ns += h[ctas + i];
        }
        mean = (double)sum / ctas;
        ghz = ns ? (double)sum / ns : 0;
        worst = (double)most;
    }
};

template <int CM, int CN>
static void run_pool(int m, int n, int k, int bm, int bn, int parts, int stages, int part_major)
{
    const int tiles_m = m / bm, tiles_n = n / bn, ctas = tiles_m * tiles_n * parts, kblocks = k / 64;
    const ingress_run run(m, n, k, ctas);
    const CUtensorMap ma = map_rows(run.a, m, k, bm / CN), mb = map_rows(run.b, n, k, bn / CM);
    const int smem = stages * (bm + bn) * 128 + 1024;
    auto kernel = ingress_pool<CM, CN>;
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    if (CM * CN > 1) CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchAttribute attr = {};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = CM * CN;
    attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(ctas);
    cfg.blockDim = dim3(128);
    cfg.dynamicSmemBytes = smem;
    cfg.attrs = &attr;
    cfg.numAttrs = CM * CN > 1 ? 1 : 0;
    int active = 0;
    if (CM * CN > 1) CK(cudaOccupancyMaxActiveClusters(&active, kernel, &cfg));
    const float best = best_event_ms([&] {
        CK(cudaLaunchKernelEx(&cfg, kernel, ma, mb, bm, bn, stages, tiles_m, tiles_n, parts, part_major, kblocks, run.cyc));
    });
    double mean, worst, ghz;
    run.cycles(mean, worst, ghz);
    const double per_part = (double)kblocks / parts, bytes = (double)ctas * per_part * (bm + bn) * 128;
    printf("%5dx%5dx%5d tile %3dx%3d parts %2d %-10s stages %2d cluster %dx%d (A over %d, B over %d) ctas %4d (%3d "
           "clusters resident): %6.1f cycles per %2d KB k-block (slowest CTA %6.1f) at %.2f GHz, %5.2f TB/s into shared "
           "memory, event time %5.1f us\n",
           m, n, k, bm, bn, parts, part_major ? "part-major" : "tile-major", stages, CM, CN, CN, CM, ctas, active,
           mean / per_part, (bm + bn) / 8, worst / per_part, ghz, bytes / (mean / ghz) / 1e3, best * 1e3);
}

/* pool_mma on m x n x k in `parts` parts: cycles per k-block from the first one's landing, mean and slowest CTA (the
 * wait for the first is the pipeline fill, not the loop's rate). */
template <int BN, bool MMA_ONLY, int FORM = 0, int BM = FORM == 4 ? 256 : 128>
static void run_pool_mma(int m, int n, int k, int parts, int stages)
{
    const int tiles_m = m / BM, tiles = tiles_m * (n / BN), ctas = tiles * parts, kblocks = k / 64;
    const ingress_run run(m, n, k, ctas);
    const CUtensorMap ma = map_rows(run.a, m, k, BM), mb = map_rows(run.b, n, k, BN);
    const int smem = stages * (BM + BN) * 128 + 1024;
    auto kernel = pool_mma<BM, BN, MMA_ONLY, FORM>;
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    const float best = best_event_ms(
        [&] { kernel<<<ctas, 384, smem>>>(ma, mb, stages, tiles_m, tiles, parts, kblocks, run.cyc); });
    double mean, worst, ghz;
    run.cycles(mean, worst, ghz);
    const double steps = (double)kblocks / parts;
    printf("%5dx%5dx%5d tile %dx%3d form %d parts %2d stages %2d %-24s ctas %4d: %6.1f cycles per k-block "
           "(slowest CTA %6.1f) at %.2f GHz, event time %5.1f us\n",
           m, n, k, BM, BN, FORM, parts, stages, MMA_ONLY ? "mma on resident stages" : "mma beside the loads", ctas,
           mean / steps, worst / steps, ghz, best * 1e3);
}

int main()
{
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    if (getenv("INGRESS_MMA")) { /* is PK128's k-loop bound by shared-memory bytes (git history of bench/NOTES.md, nineteenth session)? */
        for (int rep = 0; rep < 2; ++rep) {
            run_pool<1, 1>(512, 512, 16384, 128, 128, 8, 6, 0);
            run_pool_mma<128, true>(512, 512, 16384, 8, 6);
            run_pool_mma<128, false>(512, 512, 16384, 8, 6);
            run_pool<1, 1>(384, 512, 16384, 128, 128, 11, 6, 0);
            run_pool_mma<128, false>(384, 512, 16384, 11, 6);
            run_pool<1, 1>(512, 1024, 16384, 128, 256, 8, 4, 0);
            run_pool_mma<256, true>(512, 1024, 16384, 8, 4);
            run_pool_mma<256, false>(512, 1024, 16384, 8, 4);
        }
        return 0;
    }
    if (getenv("INGRESS_FORMS")) { /* where P256's k-loop loses 2-4% to the mma's rate (thirty-first session) */
        for (int rep = 0; rep < 2; ++rep) {
            run_pool_mma<256, true, 0>(512, 1024, 65536, 8, 4);
            run_pool_mma<256, true, 1>(512, 1024, 65536, 8, 4);
            run_pool_mma<256, true, 2>(512, 1024, 65536, 8, 4);
            run_pool_mma<128, true, 4>(512, 1024, 65536, 8, 4);
            run_pool_mma<256, true, 5>(512, 1024, 65536, 8, 4);
            run_pool_mma<256, true, 6>(512, 1024, 65536, 8, 4);
            run_pool_mma<256, false, 0>(512, 1024, 65536, 8, 3);
            run_pool_mma<256, false, 1>(512, 1024, 65536, 8, 3);
            run_pool_mma<256, false, 0>(512, 1024, 65536, 8, 4);
            run_pool_mma<256, false, 1>(512, 1024, 65536, 8, 4);
            run_pool_mma<256, false, 2>(512, 1024, 65536, 8, 4);
        }
        return 0;
    }
    if (getenv("INGRESS_POOL")) { /* the pooled split's loads: 128 x 128 tiles in parts, clusters sharing A or B */
        for (int rep = 0; rep < 2; ++rep) {
            run_pool<1, 1>(512, 512, 16384, 128, 128, 8, 6, 1);
            run_pool<1, 1>(512, 512, 16384, 128, 128, 8, 6, 0);
            run_pool<1, 2>(512, 512, 16384, 128, 128, 8, 6, 1);
            run_pool<2, 1>(512, 512, 16384, 128, 128, 8, 6, 1);
            run_pool<2, 2>(512, 512, 16384, 128, 128, 8, 6, 1);
            run_pool<1, 2>(512, 512, 16384, 128, 128, 8, 6, 0);
            run_pool<1, 1>(512, 512, 16384, 128, 64, 4, 8, 0);
            run_pool<1, 2>(512, 512, 16384, 128, 64, 4, 8, 0);
            run_pool<1, 2>(512, 512, 16384, 128, 64, 4, 8, 1);
            run_pool<1, 1>(384, 512, 16384, 128, 128, 11, 6, 1);
            run_pool<1, 2>(384, 512, 16384, 128, 128, 11, 6, 1);
            run_pool<1, 1>(640, 768, 8192, 128, 128, 4, 6, 1);
            run_pool<1, 2>(640, 768, 8192, 128, 128, 4, 6, 1);
            run_pool<1, 1>(512, 1024, 16384, 128, 256, 8, 4, 1);
            run_pool<2, 1>(512, 1024, 16384, 128, 256, 8, 4, 1);
            run_pool<1, 1>(640, 768, 8192, 64, 64, 1, 12, 1);
            run_pool<2, 4>(640, 768, 8192, 64, 64, 1, 12, 1);
        }
        return 0;
    }
    /* m x n x k of a GEMM, its tile (a_rows x b_rows), ring stages, mode (ingress_body's; 5 / 6 / 7: as 0 with L2
     * promotion none / 64B / 128B instead of 256B): CTAs = tiles */
    struct row { int m, n, k, a_rows, b_rows, stages, mode; } rows[] = {
        {256, 2112, 8192, 64, 64, 12, 11}, {256, 2112, 8192, 64, 64, 8, 11}, {512, 4224, 8192, 128, 128, 6, 11},
        {256, 2112, 8192, 64, 64, 12, 0}, {256, 2112, 8192, 64, 64, 12, 3}, {256, 2112, 8192, 64, 64, 12, 4},
        {256, 2112, 8192, 64, 64, 12, 8}, {256, 2112, 8192, 64, 64, 12, 9}, {256, 2112, 8192, 64, 64, 12, 10},
        {256, 2112, 8192, 64, 64, 12, 5}, {256, 2112, 8192, 64, 64, 12, 6}, {256, 2112, 8192, 64, 64, 12, 7},
        {512, 1024, 8192, 64, 64, 12, 0}, {512, 1024, 8192, 64, 64, 12, 5},
        {256, 2112, 8192, 64, 64, 12, 0}, {256, 2112, 8192, 64, 64, 12, 1}, {256, 2112, 8192, 64, 64, 12, 2},
        {256, 2112, 8192, 64, 64, 8, 0},  {256, 2112, 8192, 64, 64, 8, 1},  {256, 2112, 8192, 64, 64, 8, 2},
        {256, 2112, 8192, 64, 64, 4, 0},  {256, 1024, 8192, 64, 64, 12, 0}, {128, 4096, 4096, 64, 64, 12, 0},
        {128, 4096, 4096, 64, 64, 12, 1}, {128, 4096, 4096, 64, 64, 12, 2}, {256, 2112, 8192, 64, 128, 8, 0},
        {256, 4096, 8192, 64, 128, 8, 0}, {256, 4096, 8192, 64, 128, 8, 2}, {512, 4224, 8192, 128, 128, 6, 0},
        {1024, 4096, 8192, 128, 256, 4, 0}};
    for (const row &r : rows) {
        const int tiles_m = r.m / r.a_rows, tiles = tiles_m * (r.n / r.b_rows), kblocks = r.k / 64;
        const ingress_run run(r.m, r.n, r.k, tiles);
        const CUtensorMapL2promotion promo = r.mode == 5 ? CU_TENSOR_MAP_L2_PROMOTION_NONE : r.mode == 6 ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B
                                             : r.mode == 7 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B : CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
        const int box_k = r.mode == 8 ? 32 : 64, a_box = r.mode == 9 ? r.a_rows / 2 : r.a_rows;
        const CUtensorMap ma = map_rows(run.a, r.m, r.k, a_box, promo, box_k),
                          mb = map_rows(run.b, r.n, r.k, r.mode == 1 || r.mode == 9 ? r.b_rows / 2 : r.b_rows, promo, box_k);
        const int smem = r.stages * (r.a_rows + r.b_rows) * 128 + 1024;
        auto kernel = r.mode == 1 ? ingress_half : r.mode == 2 ? ingress_alternate : r.mode == 3 ? ingress_mode<3>
                      : r.mode == 4 ? ingress_mode<4> : r.mode == 8 ? ingress_mode<8> : r.mode == 9 ? ingress_mode<9>
                      : r.mode == 10 ? ingress_mode<10> : r.mode == 11 ? ingress_mode<11> : ingress;
        CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        const float best = best_event_ms(
            [&] { kernel<<<tiles, 128, smem>>>(ma, mb, r.a_rows, r.b_rows, r.stages, tiles_m, kblocks, run.cyc); });
        double cycles, worst, ghz;
        run.cycles(cycles, worst, ghz);
        const double per_cta = (double)(r.a_rows + r.b_rows) * 128 * kblocks;
        static const char *modes[] = {"own B", "B halves multicast", "B alternate multicast", "L2 evict_last hint",
                                      "L2 evict_first hint", "no L2 promotion", "L2 promotion 64B", "L2 promotion 128B",
                                      "half-K boxes (64B swizzle)", "half-row boxes", "B issued before A",
                                      "A and B by two producers"};
        printf("%5dx%5dx%5d tile %3dx%3d stages %2d %-22s ctas %4d (of %d SMs): %6.1f cycles per k-block (%5.1f KB), "
               "%5.1f B/cycle per CTA at %.2f GHz, %5.2f TB/s into shared memory (event time %.1f us)\n",
               r.m, r.n, r.k, r.a_rows, r.b_rows, r.stages, modes[r.mode], tiles, sms, cycles / kblocks,
               per_cta / kblocks / 1024, per_cta / cycles, ghz, per_cta * tiles / (best * 1e-3) / 1e12, best * 1e3);
    }
    return 0;
}
