/* Standalone check-and-time harness for the Hopper GEMM kernels (not part of libhk): includes
 * kernels/hopper/gemm.cu, builds tensor maps like backends/cuda/gemm.c, checks against an fp32 naive
 * GPU reference (all layouts, ragged shapes, alpha/beta, C aliasing D, padded ldd, fp8) and times
 * against cuBLAS / cuBLASLt in the same process.
 * Build: nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -I../kernels gemm_harness.cu
 *        -lcublas -lcublasLt -lcuda -o gemm_harness
 * With -DHK_GEMM_TRACE the kernels record per-CTA global-timer stamps (gemm.cu) and HK_BENCH_TRACE=1 prints them
 * for each one-unit configuration of a timed row: when the CTAs start, end their k-loop and exit. HK_BENCH_CLOCK=1
 * reads the SM clock beside every contender of a timed row (clock_during); HK_BENCH_OFFSET=0,1048576 times each row
 * once per offset of A and B into their allocations; HK_BENCH_GROUPS=8,16 times the persistent default with those
 * walk groups (tile rows per group) before the library's; HK_BENCH_EDGE=1 the default with its last tile column at
 * (tiles_n - 1) * bn (past the edge where n is ragged) before the library's (gemm.h hk_gemm_col_last). */
#include "hopper/gemm.cu"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace hk::hopper;

#define CK(x)                                                                                                   \
    do {                                                                                                        \
        cudaError_t e_ = (x);                                                                                   \
        if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } \
    } while (0)
#define CKB(x)                                                                                                  \
    do {                                                                                                        \
        int s_ = (int)(x);                                                                                      \
        if (s_ != 0) { fprintf(stderr, "%s:%d %s: status %d\n", __FILE__, __LINE__, #x, s_); exit(1); }         \
    } while (0)

enum dt { BF16, F32, E4M3, F16 };
static size_t dsize(dt t) { return t == F32 ? 4 : t == E4M3 ? 1 : 2; }
static const char *dname(dt t) { return t == BF16 ? "bf16" : t == F32 ? "f32" : t == F16 ? "f16" : "e4m3"; }

typedef void (*kern_t)(CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap, gemm_params);
/* Every launch shape of gemm.h (plus harness-only experiments, nt bf16 -> bf16 only, when any): kernels per
 * [layout nn, nt, tn, tt][out bf16, f32, f16] and e4m3 nt [bf16, f32]; nullptr where not built. */
struct shape_info {
    const char *name;
    int bm, bn, cluster, persist, swap, pool;
    unsigned smem;
    kern_t bf16[4][3], e4m3[2];
    void (*sum[3])(gemm_params); /* pooled shapes: the sum kernel per output */
};
#define HK_KB(pre, suffix) {pre##bf16##suffix, pre##f32##suffix, pre##f16##suffix}
#define HK_SHAPE_00(id, suffix)                                                                                    \
    {HK_KB(hk_gemm_sm90_bf16_nn_, suffix), HK_KB(hk_gemm_sm90_bf16_nt_, suffix), HK_KB(hk_gemm_sm90_bf16_tn_, suffix), \
     HK_KB(hk_gemm_sm90_bf16_tt_, suffix)}
#define HK_SHAPE_01(id, suffix) {{}, HK_KB(hk_gemm_sm90_bf16_nt_, suffix), {}, HK_KB(hk_gemm_sm90_bf16_tt_, suffix)}
#define HK_SHAPE_03(id, suffix)                                                                                    \
    {{}, HK_KB(hk_gemm_sm90_bf16_nt_, suffix), HK_KB(hk_gemm_sm90_bf16_tn_, suffix), HK_KB(hk_gemm_sm90_bf16_tt_, suffix)}
#define HK_SHAPE_10(id, suffix) {HK_KB(hk_gemm_sm90_bf16_nn_, suffix), HK_KB(hk_gemm_sm90_bf16_nt_, suffix), {}, {}}
#define HK_SHAPE_12(id, suffix) {HK_KB(hk_gemm_sm90_bf16_nn_, suffix), {}, {}, {}}
#define HK_SHAPE_04(id, suffix) {{}, {}, {}, {}}
#define HK_SHAPE_05 HK_SHAPE_04
#define HK_FP8_SHAPE(suffix) {hk_gemm_sm90_e4m3_nt_bf16##suffix, hk_gemm_sm90_e4m3_nt_f32##suffix}
#define HK_FP8_00 HK_FP8_SHAPE
#define HK_FP8_01 HK_FP8_SHAPE
#define HK_FP8_03 HK_FP8_SHAPE
#define HK_FP8_10 HK_FP8_SHAPE
#define HK_FP8_12(suffix) {}
#define HK_FP8_04 HK_FP8_SHAPE
#define HK_FP8_05 HK_FP8_SHAPE
#define HK_SUM_0(suffix) {}
#define HK_SUM_1(suffix) {hk_gemm_sm90_pooled_sum_bf16##suffix, hk_gemm_sm90_pooled_sum_f32##suffix, hk_gemm_sm90_pooled_sum_f16##suffix}
#define HK_SHAPE(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool)                                          \
    {#id, bm, bn, cluster, persist, swap, pool, HK_GEMM_SHARED_BYTES(bm, bn, stages, persist, swap),                     \
     HK_SHAPE_##swap##lay(id, suffix), HK_FP8_##swap##lay(suffix), HK_SUM_##pool(suffix)},
/* experiments: X(id, bm, bn, stages, cluster, swap, pool), one tile per CTA, bf16 nt -> bf16 and e4m3 nt -> bf16
 * (pooled ones with a bf16 sum kernel); none at present (git history of bench/NOTES.md lists those measured and dropped) */
#define HK_EXPERIMENTS(X)
#define HK_EXP_SUM_KERNEL_0(id)
#define HK_EXP_SUM_KERNEL_1(id) HK_GEMM_POOLED_SUM(bf16, __nv_bfloat16, xshape_##id, _x##id)
#define HK_EXP_SUM_0(id) {}
#define HK_EXP_SUM_1(id) {hk_gemm_sm90_pooled_sum_bf16_x##id, nullptr, nullptr}
#define HK_EXP_KERNEL(id, bm, bn, stages, cluster, swap, pool)                                                    \
    using xshape_##id = hk::hopper::gemm_shape<bm, bn, stages, cluster, false, swap, pool>;                       \
    HK_GEMM_KERNEL(hk_gemm_x_##id, __nv_bfloat16, __nv_bfloat16, false, false, xshape_##id, HK_GEMM_ATTR_##cluster) \
    HK_GEMM_KERNEL(hk_gemm_x8_##id, __nv_fp8_e4m3, __nv_bfloat16, false, false, xshape_##id, HK_GEMM_ATTR_##cluster) \
    HK_EXP_SUM_KERNEL_##pool(id)
HK_EXPERIMENTS(HK_EXP_KERNEL)
#define HK_EXP(id, bm, bn, stages, cluster, swap, pool)                                                           \
    {#id, bm, bn, cluster, 0, swap, pool, HK_GEMM_SHARED_BYTES(bm, bn, stages, 0, swap),                          \
     {{}, {hk_gemm_x_##id, nullptr, nullptr}, {}, {}}, {hk_gemm_x8_##id, nullptr}, HK_EXP_SUM_##pool(id)},
static const shape_info all_shapes[] = {HK_GEMM_SHAPES(HK_SHAPE) HK_EXPERIMENTS(HK_EXP)};
#define HK_ID(id, ...) id,
enum shape_id { HK_GEMM_SHAPES(HK_ID) HK_EXPERIMENTS(HK_ID) NSHAPES };

static kern_t pick(dt in, bool ta, bool tb, dt out, int shape)
{
    const shape_info &s = all_shapes[shape];
    const int o = out == BF16 ? 0 : out == F32 ? 1 : 2;
    if (in == E4M3) return ta || !tb || o == 2 ? nullptr : s.e4m3[o];
    return s.bf16[ta * 2 + tb][o];
}

/* One hk configuration: launch shape, k-split (non-persistent shapes), walk group rows (0: gemm.h's),
 * epilogue (direct: 0 TMA stores, 1 registers), launch (pdl: 1 programmatic dependent launch as
 * backends/cuda/gemm.c, 0 plain, -1 the process default: HK_GEMM_PDL=0 plain, else PDL), e4m3 accumulation
 * (promote: 1 k-blocks summed in fp32, the library's default; 0 the tensor cores' fast accumulation), the finale
 * of persistent shapes (-1 gemm.h's rule, the library's choice; 0 or 1 none; 2 or 3 that many parts forced), the last
 * tile column (edge: 0 gemm.h's hk_gemm_col_last, 1 at (tiles_n - 1) * bn). */
struct cfg_t { int shape, split, group_m, direct, pdl = -1, promote = 0, nosum = 0, finale = 0, edge = 0; };
/* HK_GEMM_PDL, read once in main: 0 plain launches, 1 (default) PDL, ab timings both ways (checks with PDL) */
static bool pdl_default = true, pdl_ab = false;
static bool cfg_pdl(const cfg_t &c) { return c.pdl < 0 ? pdl_default : c.pdl != 0; }
/* `name` is an item of the comma-separated list `list`. */
static bool in_list(const char *list, const std::string &name)
{
    return strstr((std::string(",") + list + ",").c_str(), ("," + name + ",").c_str()) != nullptr;
}
/* The items of a comma-separated list. */
static std::vector<std::string> list_items(const char *list)
{
    std::vector<std::string> items;
    for (const char *item = list; *item;) {
        const char *end = strchr(item, ',');
        items.emplace_back(item, end ? end - item : strlen(item));
        item = end ? end + 1 : item + items.back().size();
    }
    return items;
}
static bool pooled_fits(const shape_info &s) { return s.pool != 0; }
static std::string cfg_name(const cfg_t &c)
{
    const shape_info &s = all_shapes[c.shape];
    std::string r = s.name;
    if (s.cluster == 2 || c.split > 1) r += " s" + std::to_string(c.split);
    return r + (c.direct ? " reg" : "") + (cfg_pdl(c) ? " pdl" : "") + (c.promote ? " acc32" : "") +
           (c.nosum ? " nosum" : "") + (c.finale > 0 ? " f" + std::to_string(c.finale) : "") +
           (c.group_m ? " g" + std::to_string(c.group_m) : "") + (c.edge ? " edge" : "");
}

static int num_sms;
/* The workspace of hk's pooled K splits (as a caller of hk_gemm passes one) */
static void *hk_ws;
static const size_t hk_ws_bytes = 128 << 20;
/* The library's choice (gemm.h hk_gemm_route, the same function backends/cuda/gemm.c calls) given hk_ws. */
static cfg_t default_cfg(int64_t m, int64_t n, int64_t k, bool ta, dt in, bool tb = true, bool promote = false)
{
    int32_t split = 1;
    const int shape = hk_gemm_route(m, n, k, ta, tb, HK_GEMM_BOX_K / dsize(in), promote, num_sms, hk_ws_bytes, &split);
    return cfg_t{shape, split, 0, 0, -1, promote, 0, -1}; /* the finale where gemm.h's rule takes it */
}
/* Configuration c runs the problem: its kernel is built, and fp32 accumulation fits its registers. */
static bool runs(const cfg_t &c, dt in, bool ta, bool tb, dt out)
{
    return pick(in, ta, tb, out, c.shape) && (!c.promote || HK_GEMM_PROMOTE_FITS(all_shapes[c.shape].bm, all_shapes[c.shape].bn));
}

/* The K split configuration c runs with (run_hk): the cluster halves or the pooled parts; other shapes take none. */
static int run_split(const shape_info &s, const cfg_t &c) { return s.cluster == 2 || pooled_fits(s) ? c.split : 1; }

/* As the library's driver (backends/cuda/driver.c): raise kernel k's dynamic shared memory limit to `bytes` where it is
 * lower, preferring the largest carveout past 16 KiB. */
static void allow_shared(const void *k, unsigned bytes)
{
    static std::vector<std::pair<const void *, unsigned>> limits;
    auto it = std::find_if(limits.begin(), limits.end(), [k](const auto &l) { return l.first == k; });
    if (it != limits.end() && it->second >= bytes) return;
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    if (bytes > 16384) CK(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
    if (it != limits.end())
        it->second = bytes;
    else
        limits.push_back({k, bytes});
}

/* A pooled split (c.split > 1 on a shape without cluster) parks its parts in hk_ws. */
static bool fits(const cfg_t &c, int m, int n)
{
    const shape_info &s = all_shapes[c.shape];
    if (c.split <= 1 || !pooled_fits(s)) return true;
    const int64_t tiles = (int64_t)((m + s.bm - 1) / s.bm) * ((n + s.bn - 1) / s.bn);
    return (size_t)hk_gemm_pooled_bytes(tiles, c.split, s.bm, s.bn) <= hk_ws_bytes;
}

static CUtensorMap make_map(const void *base, dt t, uint64_t inner, uint64_t outer, uint64_t ld, uint32_t bi, uint32_t bo,
                            bool swizzled = true)
{
    CUtensorMap m;
    cuuint64_t dims[2] = {inner, outer}, strides[1] = {ld * dsize(t)};
    cuuint32_t box[2] = {bi, bo}, es[2] = {1, 1};
    const CUtensorMapDataType ty = t == BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : t == F32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                 : t == F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_UINT8;
    /* as backends/cuda/tensormap.c: swizzled over the box's 128- or 64-byte rows, or not at all (D tails) */
    const CUtensorMapSwizzle sw = !swizzled ? CU_TENSOR_MAP_SWIZZLE_NONE
                                  : bi * dsize(t) == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;
    CUresult r = cuTensorMapEncodeTiled(&m, ty, 2, const_cast<void *>(base), dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                        sw, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) { fprintf(stderr, "cuTensorMapEncodeTiled failed %d\n", (int)r); exit(1); }
    return m;
}
/* An operand's map as the library builds it (hk_gemm_operand_map) */
static CUtensorMap operand_map(const void *p, dt t, int64_t ld, int64_t mn, int64_t k, bool mn_contiguous, uint32_t rows)
{
    const uint32_t bk = 128 / dsize(t);
    return mn_contiguous ? make_map(p, t, mn, k, ld, HK_GEMM_MN_BOX(rows), bk) : make_map(p, t, k, mn, ld, bk, HK_GEMM_KMAJOR_BOX_ROWS(rows));
}

struct problem {
    int m, n, k;
    dt in, out;
    bool ta, tb;
    const void *a, *b;
    int64_t lda, ldb;
    const void *c;
    int64_t ldc;
    void *d;
    int64_t ldd;
    float alpha, beta;
};

/* The walk group configuration c runs problem q's `tiles` with: its own, or (0) the library's (gemm.h
 * hk_gemm_walk_group) */
static int cfg_group(const cfg_t &c, const problem &q, int64_t tiles)
{
    return c.group_m ? c.group_m : hk_gemm_walk_group(q.ta, q.tb, tiles, num_sms);
}

/* One kernel of configuration c: plainly, or as the library launches (cfg pdl), so that it may start while the
 * stream's previous kernel runs (gemm.cu waits); an error (also inside a capture) shows in the caller's
 * cudaGetLastError or the capture's end. */
template <class... P, class... A>
static void launch(const cfg_t &c, void (*k)(P...), int grid, int block, unsigned smem, cudaStream_t st, const A &...args)
{
    if (!cfg_pdl(c)) {
        k<<<grid, block, smem, st>>>(args...);
        return;
    }
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3(grid);
    lc.blockDim = dim3(block);
    lc.dynamicSmemBytes = smem;
    lc.stream = st;
    lc.attrs = attr;
    lc.numAttrs = 1;
    const cudaError_t e = cudaLaunchKernelEx(&lc, k, args...);
    if (e != cudaSuccess) fprintf(stderr, "cudaLaunchKernelEx %s: %s\n", cfg_name(c).c_str(), cudaGetErrorString(e));
}

/* Launches configuration c the way backends/cuda/gemm.c does; false when its kernel is not built. */
static bool run_hk(const problem &q, const cfg_t &c, cudaStream_t st = 0)
{
    const shape_info &sh = all_shapes[c.shape];
    kern_t k = pick(q.in, q.ta, q.tb, q.out, c.shape);
    if (!k) return false;
    const int km = sh.swap ? q.n : q.m, kn = sh.swap ? q.m : q.n;
    const int tiles_m = (int)hk_gemm_cdiv(km, sh.bm), tiles_n = (int)hk_gemm_cdiv(kn, sh.bn);
    CUtensorMap ma, mb;
    if (q.k == 0) { /* no k-block is loaded: any valid map will do */
        ma = mb = make_map((const void *)((uintptr_t)q.d & ~uintptr_t(15)), E4M3, 128, 1, 128, 128, 1);
    } else if (sh.swap) {
        ma = operand_map(q.b, q.in, q.ldb, q.n, q.k, !q.tb, sh.bm);
        mb = operand_map(q.a, q.in, q.lda, q.m, q.k, false, sh.bn);
    } else {
        ma = operand_map(q.a, q.in, q.lda, q.m, q.k, q.ta, sh.bm);
        mb = operand_map(q.b, q.in, q.ldb, q.n, q.k, !q.tb, sh.bn);
    }
    gemm_params p;
    memset(&p, 0, sizeof p);
    p.m = km; p.n = kn; p.k = q.k;
    p.group_m = cfg_group(c, q, (int64_t)tiles_m * tiles_n);
    hk_gemm_set_walk(&p, tiles_m, tiles_n);
    const size_t eo = dsize(q.out);
    p.col_last = c.edge ? (tiles_n - 1) * sh.bn
                        : hk_gemm_col_last(kn, sh.bn, !sh.swap && !q.tb, dsize(q.in),
                                           hk_gemm_overlap(q.beta != 0 ? q.c : nullptr, q.ldc, q.d, q.ldd, q.m, q.n, eo));
    p.split = run_split(sh, c);
    const bool pooled = p.split > 1 && pooled_fits(sh); /* as the library: the sum kernel writes D from registers */
    p.tma_store = !c.direct && !pooled && hk_gemm_tma_store_ok(sh.persist, sh.swap, q.d, q.ldd, q.n, (int64_t)eo);
    CUtensorMap md = p.tma_store ? make_map(q.d, q.out, q.n, q.m, q.ldd, 128 / eo, 64) : ma;
    const uint32_t chunk = 128 / eo, tail = HK_GEMM_TAIL(sh.bn, sh.swap, (int)eo);
    CUtensorMap mt = p.tma_store && tail ? make_map(q.d, q.out, q.n, q.m, q.ldd, sh.swap ? chunk : tail, sh.swap ? tail : 64, sh.swap) : md;
    p.vec2 = !sh.swap && q.ldd % 2 == 0 && q.n % 2 == 0 && (q.beta == 0 || q.ldc % 2 == 0);
    p.d = q.d; p.c = q.c; p.ldd = q.ldd; p.ldc = q.ldc; p.alpha = q.alpha; p.beta = q.beta;
    if (pooled) {
        const size_t need = hk_gemm_pooled_bytes(((km + sh.bm - 1) / sh.bm) * ((kn + sh.bn - 1) / sh.bn), p.split, sh.bm, sh.bn);
        if (need > hk_ws_bytes) { fprintf(stderr, "%s: workspace of %zu bytes needed\n", cfg_name(c).c_str(), need); exit(1); }
        p.workspace = hk_ws;
    }
    p.promote = c.promote && q.in == E4M3;
    allow_shared((const void *)k, sh.smem);
    const int tiles = tiles_m * tiles_n;
    const int units = tiles * p.split;
    const int grid = sh.persist ? std::min(units, num_sms) : sh.cluster * ((units + sh.cluster - 1) / sh.cluster);
    if (c.finale && sh.persist && q.k > 0) { /* the finale: gemm.h's rule (-1) or forced parts (2, 3) */
        const int64_t finale_tiles = hk_gemm_finale_tiles(tiles, grid),
                      kblocks = hk_gemm_cdiv((int64_t)q.k * dsize(q.in), HK_GEMM_BOX_K);
        p.finale = c.finale < 0 ? hk_gemm_finale_parts(tiles, grid, kblocks) : finale_tiles && c.finale > 1 ? c.finale : 0;
        if (p.finale && (size_t)hk_gemm_finale_bytes(finale_tiles, p.finale, sh.bm, sh.bn) > hk_ws_bytes)
            p.finale = 0; /* as the library: no room, no finale */
        if (p.finale) { /* counters zeroed before the launch, as the library does */
            p.workspace = hk_ws;
            CK(cudaMemsetAsync(hk_ws, 0, HK_GEMM_FINALE_COUNTER_BYTES(finale_tiles, sh.bm), st));
        }
    }
    launch(c, k, grid, HK_GEMM_THREADS(sh.bm), sh.smem, st, ma, mb, md, mt, p);
    if (pooled && !c.nosum) { /* the sum kernel adds the parked parts and writes D */
        /* as the library: unused shared memory caps the sum CTAs per SM (gemm.h); HK_BENCH_SUM_CAP=0: no cap */
        static const bool no_cap = getenv("HK_BENCH_SUM_CAP") && !strcmp(getenv("HK_BENCH_SUM_CAP"), "0");
        const int sums = HK_GEMM_POOLED_SUM_CTAS(tiles, sh.bm, sh.bn);
        const unsigned sum_smem = no_cap ? 0 : hk_gemm_pooled_sum_shared(sh.bm, sums, num_sms);
        auto sum_k = sh.sum[q.out == BF16 ? 0 : q.out == F32 ? 1 : 2];
        if (sum_smem) allow_shared((const void *)sum_k, sum_smem);
        launch(c, sum_k, sums, 128, sum_smem, st, p);
    }
    return true;
}

/* ---- reference and helpers */
__device__ float ld_el(const void *p, int64_t i, int t)
{
    if (t == BF16) return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    if (t == F32) return ((const float *)p)[i];
    if (t == F16) return __half2float(((const __half *)p)[i]);
    return float(((const __nv_fp8_e4m3 *)p)[i]);
}
__global__ void ref_kernel(problem q, float *out, const float *c0, float scale)
{
    int n = blockIdx.x * blockDim.x + threadIdx.x, m = blockIdx.y;
    if (n >= q.n) return;
    float s = 0.f;
    for (int k = 0; k < q.k; ++k) {
        float a = ld_el(q.a, q.ta ? (int64_t)k * q.lda + m : (int64_t)m * q.lda + k, q.in);
        float b = ld_el(q.b, q.tb ? (int64_t)n * q.ldb + k : (int64_t)k * q.ldb + n, q.in);
        s += a * b;
    }
    float r = q.alpha * scale * s;
    if (q.beta != 0.f) r += q.beta * c0[(int64_t)m * q.n + n];
    out[(int64_t)m * q.n + n] = r;
}
__global__ void fill_kernel(void *p, int64_t n, int t, uint32_t seed, float range)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        uint32_t h = (uint32_t)i * 2654435761u ^ seed;
        h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
        float v = ((h & 0xFFFFFF) / 16777215.f * 2.f - 1.f) * range;
        if (t == BF16) ((__nv_bfloat16 *)p)[i] = __float2bfloat16(v);
        else if (t == F32) ((float *)p)[i] = v;
        else if (t == F16) ((__half *)p)[i] = __float2half(v);
        else ((__nv_fp8_e4m3 *)p)[i] = __nv_fp8_e4m3(v);
    }
}
__global__ void gather_kernel(const void *d, int t, int m, int n, int64_t ld, float *out)
{
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= (int64_t)m * n) return;
    out[i] = ld_el(d, (i / n) * ld + i % n, t);
}
static void fill(void *p, int64_t n, dt t, uint32_t seed, float range = 1.f)
{
    fill_kernel<<<1024, 256>>>(p, n, (int)t, seed, range);
    CK(cudaGetLastError());
}

static int failures;
static uint32_t seed_ctr = 12345;

/* One checked case. c_mode: 0 beta=0 C NULL; 1 beta != 0 with C aliasing D; 2 beta != 0 with separate C. */
static cfg_t cur; /* the configuration check() runs */
static void check(int m, int n, int k, dt in, dt out, bool ta, bool tb, int c_mode, int pad, float scale = 1.f)
{
    if (!runs(cur, in, ta, tb, out) || !fits(cur, m, n)) return; /* not built: the library routes it elsewhere */
    const size_t ei = dsize(in), eo = dsize(out);
    const int align = 16 / (int)ei;
    auto up = [&](int64_t x) { return (x + align - 1) / align * align; };
    problem q;
    q.m = m; q.n = n; q.k = k; q.in = in; q.out = out; q.ta = ta; q.tb = tb;
    q.lda = up(ta ? m : k) + (pad ? align : 0);
    q.ldb = up(tb ? k : n) + (pad ? align : 0);
    q.ldd = n + pad;
    q.ldc = c_mode == 2 ? n + 3 : q.ldd;
    const int64_t arows = ta ? k : m, brows = tb ? n : k;
    void *a, *b, *d, *c = nullptr;
    CK(cudaMalloc(&a, std::max<int64_t>(1, arows * q.lda * ei)));
    CK(cudaMalloc(&b, std::max<int64_t>(1, brows * q.ldb * ei)));
    CK(cudaMalloc(&d, (int64_t)m * q.ldd * eo));
    fill(a, arows * q.lda, in, seed_ctr++, in == E4M3 ? 2.f : 1.f);
    fill(b, brows * q.ldb, in, seed_ctr++, in == E4M3 ? 2.f : 1.f);
    CK(cudaMemset(d, 0xFF, (int64_t)m * q.ldd * eo)); /* NaN poison (also padding) */
    q.alpha = 0.75f * scale; q.beta = c_mode ? 0.5f : 0.f;
    float *c0;
    CK(cudaMalloc(&c0, sizeof(float) * std::max<int64_t>(1, (int64_t)m * n)));
    if (c_mode == 1) {
        fill(d, (int64_t)m * q.ldd, out, seed_ctr++);
        c = d;
    } else if (c_mode == 2) {
        CK(cudaMalloc(&c, (int64_t)m * q.ldc * eo));
        fill(c, (int64_t)m * q.ldc, out, seed_ctr++);
    }
    if (c) gather_kernel<<<(int)(((int64_t)m * n + 255) / 256), 256>>>(c, out, m, n, q.ldc, c0);
    q.a = a; q.b = b; q.c = c; q.d = d;
    /* restore padding poison after C fill so untouched padding stays detectable */
    if (c_mode == 1 && pad) {
        for (int r = 0; r < m; ++r) CK(cudaMemset((char *)d + ((int64_t)r * q.ldd + n) * eo, 0xFF, pad * eo));
    }
    float *ref, *got;
    CK(cudaMalloc(&ref, sizeof(float) * std::max<int64_t>(1, (int64_t)m * n)));
    CK(cudaMalloc(&got, sizeof(float) * std::max<int64_t>(1, (int64_t)m * n)));
    problem qr = q;
    qr.alpha = 0.75f;
    ref_kernel<<<dim3((n + 127) / 128, m), 128>>>(qr, ref, c0, scale);
    CK(cudaGetLastError());
    run_hk(q, cur);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    gather_kernel<<<(int)(((int64_t)m * n + 255) / 256), 256>>>(d, out, m, n, q.ldd, got);
    CK(cudaDeviceSynchronize());
    std::vector<float> hr((size_t)m * n), hg((size_t)m * n), hg2;
    CK(cudaMemcpy(hr.data(), ref, sizeof(float) * m * n, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hg.data(), got, sizeof(float) * m * n, cudaMemcpyDeviceToHost));
    bool same = true; /* a second run on re-poisoned D gives the same bits (no race, fixed summation order) */
    if (c_mode != 1) {
        CK(cudaMemset(d, 0xFF, (int64_t)m * q.ldd * eo));
        run_hk(q, cur);
        CK(cudaGetLastError());
        gather_kernel<<<(int)(((int64_t)m * n + 255) / 256), 256>>>(d, out, m, n, q.ldd, got);
        CK(cudaDeviceSynchronize());
        hg2.resize(hg.size());
        CK(cudaMemcpy(hg2.data(), got, sizeof(float) * m * n, cudaMemcpyDeviceToHost));
        same = memcmp(hg.data(), hg2.data(), sizeof(float) * hg.size()) == 0;
    }
    double num = 0, den = 0;
    long nan = 0;
    for (size_t i = 0; i < hr.size(); ++i) {
        if (std::isnan(hg[i])) { ++nan; continue; }
        num += (hg[i] - hr[i]) * (double)(hg[i] - hr[i]);
        den += hr[i] * (double)hr[i];
    }
    long pad_bad = 0;
    if (pad) {
        std::vector<unsigned char> raw((size_t)m * q.ldd * eo);
        CK(cudaMemcpy(raw.data(), d, raw.size(), cudaMemcpyDeviceToHost));
        for (int r = 0; r < m; ++r)
            for (size_t j = (size_t)n * eo; j < (size_t)q.ldd * eo; ++j) pad_bad += raw[(size_t)r * q.ldd * eo + j] != 0xFF;
    }
    const double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
    /* fp8 wgmma accumulates with the tensor core's own (reduced) precision: ~1e-3 at k = 4096; summed in fp32
     * per k-block (promote) ~1.3e-4 whatever k */
    const double tol = out == BF16 ? 1e-2 : out == F16 ? 2e-3 : in != E4M3 ? 1e-4 : cur.promote ? 3e-4 : 3e-3;
    const bool ok = nan == 0 && pad_bad == 0 && rel < tol && same;
    if (!ok) ++failures;
    printf("check %-9s %-4s %s%s->%-4s m=%5d n=%5d k=%5d c=%d pad=%d %s: rel=%.2e nan=%ld pad_bad=%ld%s %s\n",
           cfg_name(cur).c_str(), dname(in), ta ? "t" : "n", tb ? "t" : "n", dname(out), m, n, k, c_mode, pad,
           !cur.direct && hk_gemm_tma_store_ok(all_shapes[cur.shape].persist, all_shapes[cur.shape].swap, q.d, q.ldd, n,
                                               (int64_t)eo) ? "tma" : "reg", rel, nan, pad_bad,
           same ? "" : " RERUN-DIFFERS", ok ? "ok" : "FAIL");
    cudaFree(a); cudaFree(b); cudaFree(d); cudaFree(c0); cudaFree(ref); cudaFree(got);
    if (c_mode == 2) cudaFree(c);
}

/* ---- timing */
static cudaStream_t bench_stream;
typedef std::function<void(cudaStream_t)> call_t;
static size_t operand_offset; /* bytes; HK_BENCH_OFFSET (a list: each timed row once per offset) */

/* HK_BENCH_CLOCK: the SM clock while a contender runs, read by one thread of a CTA on an SM the contender leaves
 * free (or shares): SM cycles against global-timer ns, a sample per ~500 ns. Both libraries' kernels are read
 * the same way, so a difference in clock (current drawn per flop) is told apart from one in cycles. Caveats
 * (git history of bench/NOTES.md, twenty-first session): the probe's idle SM runs 5-8% faster than SMs busy with mma; a kernel
 * on every SM leaves it no room or loses an SM to it; bursts of the large shapes reach the power cap, a lower
 * clock than their timed rows ran at. */
constexpr int probe_samples = 4096;
__global__ void __launch_bounds__(32) clock_probe(unsigned long long *out)
{
    if (threadIdx.x) return;
    unsigned long long last = 0;
    for (int i = 0; i < probe_samples; ++i) {
        unsigned long long ns;
        do ns = hk::global_timer(); while (ns < last + 500);
        out[2 * i] = last = ns;
        out[2 * i + 1] = hk::sm_cycles();
    }
}
__global__ void stamp_end(unsigned long long *out) { *out = hk::global_timer(); }

/* Launches `unit` back to back for about 6 ms and the probe beside it from the sixth of them on (~2 ms of samples);
 * prints MHz over 20-us windows inside the burst: median, 10th and 90th percentile. */
static void clock_during(const char *what, double unit_ms, const std::function<void()> &unit)
{
    static cudaStream_t side;
    static unsigned long long *buf;
    if (!side) {
        CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
        CK(cudaMalloc(&buf, probe_samples * 16 + 8));
    }
    const int units = std::max(2, (int)(6.0 / std::max(unit_ms, 1e-3)));
    for (int i = 0; i < units; ++i) {
        unit();
        if (i == units / 6) clock_probe<<<1, 32, 0, side>>>(buf);
    }
    stamp_end<<<1, 1, 0, bench_stream>>>(buf + 2 * probe_samples); /* the burst's end: later windows are idle */
    CK(cudaDeviceSynchronize());
    std::vector<unsigned long long> t(2 * probe_samples + 1);
    CK(cudaMemcpy(t.data(), buf, t.size() * 8, cudaMemcpyDeviceToHost));
    const unsigned long long end = t[2 * probe_samples];
    std::vector<double> mhz;
    for (int i = 0, j = 0; i < probe_samples; i = j) {
        while (j < probe_samples && t[2 * j] < t[2 * i] + 20000) ++j;
        if (j == probe_samples || t[2 * j] > end) break;
        mhz.push_back(1e3 * (double)(t[2 * j + 1] - t[2 * i + 1]) / (double)(t[2 * j] - t[2 * i]));
    }
    std::sort(mhz.begin(), mhz.end());
    if (mhz.empty()) {
        printf("clock %-44s no window inside the burst (the probe found no room)\n", what);
        return;
    }
    printf("clock %-44s %5.0f MHz (p10 %5.0f, p90 %5.0f; %zu windows of 20 us, %d units of %.3f ms)\n", what,
           mhz[mhz.size() / 2], mhz[mhz.size() / 10], mhz[mhz.size() * 9 / 10], mhz.size(), units, unit_ms);
    fflush(stdout);
}

/* Medians of fs[i] timed in alternation (so clock/power drift hits every contender alike). calls > 0: each
 * timed unit is a CUDA graph of `calls` back-to-back calls (host launch overhead out of the numbers, for
 * short kernels), result per call; a contender that cannot be captured gets NaN. */
static std::vector<double> median_ms_multi(std::vector<call_t> fs, int reps, int calls,
                                           const std::vector<std::string> &names)
{
    cudaStream_t st = bench_stream;
    const size_t nf = fs.size();
    std::vector<cudaGraphExec_t> ex(nf, nullptr);
    for (auto &f : fs) f(st); /* first calls (attributes, heuristics) outside any capture */
    CK(cudaStreamSynchronize(st));
    if (calls > 0) {
        for (size_t j = 0; j < nf; ++j) {
            cudaGraph_t g = nullptr;
            bool ok = cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
            if (ok) for (int c = 0; c < calls; ++c) fs[j](st);
            ok = cudaStreamEndCapture(st, &g) == cudaSuccess && ok;
            ok = ok && cudaGraphInstantiate(&ex[j], g, 0) == cudaSuccess;
            if (g) cudaGraphDestroy(g);
            if (!ok) { ex[j] = nullptr; cudaGetLastError(); printf("note: contender %zu could not be captured\n", j); }
        }
    }
    auto unit = [&](size_t j) {
        if (calls == 0) fs[j](st);
        else if (ex[j]) CK(cudaGraphLaunch(ex[j], st));
    };
    std::vector<cudaEvent_t> ev(2 * reps * nf);
    for (auto &e : ev) CK(cudaEventCreate(&e));
    for (size_t j = 0; j < nf; ++j) for (int i = 0; i < 3; ++i) unit(j);
    CK(cudaStreamSynchronize(st));
    /* Each repeat times the contenders in a new order (a fixed pseudo-random shuffle), so that none always follows
     * the same one (in the experiment scripts' fixed order the contender right after torch read up to 1.3% low:
     * git history of bench/NOTES.md, thirty-third session) */
    std::vector<size_t> order(nf);
    for (size_t j = 0; j < nf; ++j) order[j] = j;
    uint32_t lcg = 12345;
    for (int i = 0; i < reps; ++i) {
        for (size_t jj = nf - 1; jj > 0; --jj) {
            lcg = lcg * 1664525u + 1013904223u;
            std::swap(order[jj], order[(lcg >> 8) % (jj + 1)]);
        }
        for (size_t j : order) {
            CK(cudaEventRecord(ev[2 * (i * nf + j)], st));
            unit(j);
            CK(cudaEventRecord(ev[2 * (i * nf + j) + 1], st));
        }
    }
    CK(cudaStreamSynchronize(st));
    std::vector<double> out;
    for (size_t j = 0; j < nf; ++j) {
        std::vector<float> ms(reps);
        for (int i = 0; i < reps; ++i) CK(cudaEventElapsedTime(&ms[i], ev[2 * (i * nf + j)], ev[2 * (i * nf + j) + 1]));
        std::sort(ms.begin(), ms.end());
        out.push_back(calls > 0 && !ex[j] ? NAN : ms[reps / 2] / std::max(calls, 1));
    }
    if (getenv("HK_BENCH_CLOCK"))
        for (size_t j = 0; j < nf; ++j)
            if (!std::isnan(out[j])) clock_during(names[j].c_str(), out[j] * std::max(calls, 1), [&] { unit(j); });
    for (auto &e : ev) cudaEventDestroy(e);
    for (auto &e : ex) if (e) cudaGraphExecDestroy(e);
    return out;
}
/* Programmatic dependent launch against real dependencies: `steps` GEMMs in one stream, each reading the
 * previous one's D as its A (read after write) and writing the buffer the previous one read (write after
 * read), D = sqrt(3 / k) A op(B) so values stay O(1); the library's shape for (m, n, k). Run plain, with PDL,
 * and with PDL captured into a graph: all three must give the same bits (the kernels are deterministic), so a
 * wait placed after any global access would show. D doubles as the next A: n == k, and m == n too when
 * trans_a. */
static void chain_check(int m, int n, int k, bool ta, bool tb, int steps, const cfg_t *forced = nullptr)
{
    if (n != k || (ta && m != n)) { printf("chain %dx%dx%d: not chainable\n", m, n, k); ++failures; return; }
    const cfg_t c = forced ? *forced : default_cfg(m, n, k, ta, BF16, tb);
    const size_t xe = (size_t)m * k;
    void *x[2], *w;
    CK(cudaMalloc(&x[0], xe * 2));
    CK(cudaMalloc(&x[1], xe * 2));
    CK(cudaMalloc(&w, (size_t)n * k * 2));
    fill(w, (int64_t)n * k, BF16, seed_ctr++);
    const uint32_t xseed = seed_ctr++;
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    std::vector<uint16_t> out[3];
    bool captured = true;
    for (int mode = 0; mode < 3; ++mode) { /* plain, PDL, PDL in a graph */
        fill(x[0], (int64_t)xe, BF16, xseed);
        CK(cudaMemset(x[1], 0xFF, xe * 2));
        CK(cudaDeviceSynchronize());
        cfg_t cm = c;
        cm.pdl = mode != 0;
        auto chain = [&] {
            for (int i = 0; i < steps; ++i) {
                problem q{m, n, k, BF16, BF16, ta, tb, x[i % 2], w, ta ? m : k, tb ? k : n, nullptr, n, x[(i + 1) % 2], n,
                          std::sqrt(3.f / k), 0.f};
                run_hk(q, cm, st);
            }
        };
        if (mode < 2) {
            chain();
        } else {
            cudaGraph_t g = nullptr;
            cudaGraphExec_t ex = nullptr;
            CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
            chain();
            const cudaError_t e1 = cudaStreamEndCapture(st, &g);
            const cudaError_t e2 = e1 == cudaSuccess ? cudaGraphInstantiate(&ex, g, 0) : e1;
            if (e2 != cudaSuccess) {
                printf("chain capture failed: %s\n", cudaGetErrorString(e2));
                cudaGetLastError();
                captured = false;
            } else {
                CK(cudaGraphLaunch(ex, st));
            }
            if (ex) cudaGraphExecDestroy(ex);
            if (g) cudaGraphDestroy(g);
        }
        CK(cudaGetLastError());
        CK(cudaStreamSynchronize(st));
        out[mode].resize(xe);
        CK(cudaMemcpy(out[mode].data(), x[steps % 2], xe * 2, cudaMemcpyDeviceToHost));
    }
    long nan = 0;
    double sq = 0;
    for (uint16_t h : out[0]) {
        uint32_t u = (uint32_t)h << 16;
        float v;
        memcpy(&v, &u, 4);
        if (std::isnan(v)) ++nan;
        else sq += (double)v * v;
    }
    const double rms = std::sqrt(sq / xe);
    const bool same_pdl = out[1] == out[0], same_graph = captured && out[2] == out[0];
    const bool ok = nan == 0 && rms > 0.05 && rms < 20 && same_pdl && same_graph;
    if (!ok) ++failures;
    printf("chain %-9s %s%s m=%5d n=%5d k=%5d x%d: rms=%.3f nan=%ld pdl %s graph %s %s\n", cfg_name(c).c_str(),
           ta ? "t" : "n", tb ? "t" : "n", m, n, k, steps, rms, nan, same_pdl ? "same" : "DIFFERS",
           !captured ? "NOT-CAPTURED" : same_graph ? "same" : "DIFFERS", ok ? "ok" : "FAIL");
    CK(cudaStreamDestroy(st));
    cudaFree(x[0]); cudaFree(x[1]); cudaFree(w);
}

static cublasLtHandle_t lt;
static void *lt_ws;
static const size_t lt_ws_bytes = 64 << 20;

/* Row-major D[m,n] = A[m,k] B[n,k]^T as column-major D^T = B^T(op T) x A: cuBLAS's "TN". e4m3 in the
 * accumulation mode of the hk configs it runs against (fast: CUBLASLT_MATMUL_DESC_FAST_ACCUM). */
static bool lt_plan(int m, int n, int k, dt in, bool fast, cublasLtMatmulDesc_t &op, cublasLtMatrixLayout_t L[3],
                    cublasLtMatmulAlgo_t &algo)
{
    cudaDataType_t ti = in == E4M3 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
    CKB(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t tA = CUBLAS_OP_T, tB = CUBLAS_OP_N;
    CKB(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &tA, sizeof(tA)));
    CKB(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tB, sizeof(tB)));
    const int8_t fast_accum = in == E4M3 && fast;
    CKB(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accum, sizeof(fast_accum)));
    CKB(cublasLtMatrixLayoutCreate(&L[0], ti, k, n, k));
    CKB(cublasLtMatrixLayoutCreate(&L[1], ti, k, m, k));
    CKB(cublasLtMatrixLayoutCreate(&L[2], CUDA_R_16BF, n, m, n));
    cublasLtMatmulPreference_t pref;
    CKB(cublasLtMatmulPreferenceCreate(&pref));
    CKB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &lt_ws_bytes, sizeof(lt_ws_bytes)));
    cublasLtMatmulHeuristicResult_t res;
    int got = 0;
    cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(lt, op, L[0], L[1], L[2], L[2], pref, 1, &res, &got);
    cublasLtMatmulPreferenceDestroy(pref);
    if (s != CUBLAS_STATUS_SUCCESS || got == 0) return false;
    algo = res.algo;
    return true;
}

static bool profiling;
struct row { std::string what; int m, n, k; double tf, ratio; };
static std::vector<row> rows;

#ifdef HK_GEMM_TRACE
/* HK_BENCH_TRACE for a persistent configuration of several units per CTA (the last of ~3 ms of calls back to back):
 * per CTA, by its count of units, the first k-block's landing after its start (the ramp), the mean unit from that
 * landing to its last k-loop's end, the last unit's cycles per k-block, and its exit after that end (the last
 * epilogue and stores); and the call's span. */
static void trace_rounds(const problem &q, const cfg_t &c, int m, int n, int k, dt in, double call_ms)
{
    const shape_info &sh = all_shapes[c.shape];
    const int tiles = (int)(hk_gemm_cdiv(m, sh.bm) * hk_gemm_cdiv(n, sh.bn)), ctas = std::min(tiles, num_sms);
    const int warm = std::isnan(call_ms) ? 3 : std::max(3, (int)(3.0 / call_ms));
    for (int i = 0; i < warm; ++i) run_hk(q, c, bench_stream);
    CK(cudaStreamSynchronize(bench_stream));
    constexpr int cols = sizeof hk::hopper::gemm_trace[0] / sizeof hk::hopper::gemm_trace[0][0];
    std::vector<unsigned long long> t((size_t)ctas * cols);
    CK(cudaMemcpyFromSymbol(t.data(), hk::hopper::gemm_trace, t.size() * 8));
    auto at = [&](int i, int what) { return (double)t[(size_t)cols * i + what]; };
    double t0 = 1e300, t1 = 0;
    for (int i = 0; i < ctas; ++i) t0 = std::min(t0, at(i, 0)), t1 = std::max(t1, at(i, 2));
    const double kblocks = (double)hk_gemm_cdiv(k, HK_GEMM_BOX_K / dsize(in));
    printf("trace %dx%dx%d %s, %d CTAs over %d tiles: span %.2f us (first start to last exit)\n", m, n, k,
           cfg_name(c).c_str(), ctas, tiles, (t1 - t0) / 1e3);
    for (int units = tiles / ctas + 1; units >= std::max(1, tiles / ctas); --units) {
        std::vector<int> who;
        for (int i = 0; i < ctas; ++i)
            if ((tiles - i + ctas - 1) / ctas == units) who.push_back(i); /* units u = i + j * ctas < tiles */
        if (who.empty()) continue;
        auto stats = [&](const char *what, auto f, const char *unit) {
            std::vector<double> v;
            for (int i : who) v.push_back(f(i));
            std::sort(v.begin(), v.end());
            printf("  %d units (%zu CTAs) %-24s min %9.2f  med %9.2f  max %9.2f %s\n", units, who.size(), what, v[0],
                   v[v.size() / 2], v.back(), unit);
        };
        stats("start", [&](int i) { return (at(i, 0) - t0) / 1e3; }, "us");
        stats("ramp (first landing)", [&](int i) { return (at(i, 7) - at(i, 0)) / 1e3; }, "us");
        stats("mean unit", [&](int i) { return (at(i, 1) - at(i, 7)) / 1e3 / units; }, "us");
        stats("last k-loop end", [&](int i) { return (at(i, 1) - t0) / 1e3; }, "us");
        stats("last unit cycles/k-block", [&](int i) { return (at(i, 6) - at(i, 5)) / kblocks; }, "cycles");
        stats("last unit clock", [&](int i) { return (at(i, 6) - at(i, 5)) / (at(i, 1) - at(i, 4)); }, "GHz");
        stats("tail (exit - k-loop end)", [&](int i) { return (at(i, 2) - at(i, 1)) / 1e3; }, "us");
    }
}
#endif

/* Times the hk configs and the cuBLAS contenders in alternation; ratio is against the fastest cuBLAS path
 * of the same run. Every hk config's output is then compared with cuBLAS's. e4m3: promote picks the
 * accumulation mode of every contender (fp32 sums of k-blocks, or fast). */
static void bench(int m, int n, int k, dt in, bool ta, bool tb, cublasHandle_t blas, int reps, std::vector<cfg_t> cfgs,
                  int calls = 0, bool promote = false)
{
    const size_t ei = dsize(in);
    void *a, *b, *d, *d2;
    void *a_base, *b_base; /* HK_BENCH_OFFSET: the operands start that many bytes into their allocations */
    CK(cudaMalloc(&a_base, (size_t)m * k * ei + operand_offset));
    CK(cudaMalloc(&b_base, (size_t)n * k * ei + operand_offset));
    a = (char *)a_base + operand_offset;
    b = (char *)b_base + operand_offset;
    CK(cudaMalloc(&d, (size_t)m * n * 2));
    CK(cudaMalloc(&d2, (size_t)m * n * 2));
    fill(a, (int64_t)m * k, in, seed_ctr++, in == E4M3 ? 2.f : 1.f);
    fill(b, (int64_t)n * k, in, seed_ctr++, in == E4M3 ? 2.f : 1.f);
    CK(cudaDeviceSynchronize()); /* bench_stream does not wait for the legacy stream */
    problem q{m, n, k, in, BF16, ta, tb, a, b, ta ? m : k, tb ? k : n, nullptr, n, d, n, 1.f, 0.f};
    const double flop = 2.0 * m * n * (double)k;
    std::vector<call_t> fs;
    std::vector<std::string> names;
    char lay[24];
    snprintf(lay, sizeof lay, "%s %s%s", in != E4M3 ? "bf16" : promote ? "e4m3/acc32" : "e4m3/fast", ta ? "t" : "n",
             tb ? "t" : "n");
    std::vector<cfg_t> built;
    std::vector<size_t> timed_as; /* built[i]'s index in fs (and in the timings) */
    for (auto c0 : cfgs) { /* HK_GEMM_PDL=ab: every config twice, plain then PDL, timed in alternation */
        c0.promote = in == E4M3 && promote;
        if (c0.split == 0) { /* NAME:0 in HK_BENCH_SHAPES: a pooled shape in as many parts as the SMs hold, others 1;
                              * with more tiles than SMs that is no part (a grid of no CTAs, which the launch
                              * refuses): skipped */
            const shape_info &sh = all_shapes[c0.shape];
            const int64_t tiles = hk_gemm_cdiv(m, sh.bm) * hk_gemm_cdiv(n, sh.bn);
            c0.split = pooled_fits(sh) ? (int)hk_gemm_pooled_parts(tiles, num_sms) : 1;
            if (c0.split == 0) continue;
        }
        if (!runs(c0, in, ta, tb, BF16) || !fits(c0, m, n)) continue;
        for (int v = 0; v < (pdl_ab ? 2 : 1); ++v) {
            cfg_t c = c0;
            if (pdl_ab) c.pdl = v;
            built.push_back(c);
            timed_as.push_back(fs.size());
            fs.push_back([&q, c](cudaStream_t st) { run_hk(q, c, st); });
            names.push_back(std::string("hk ") + lay + " " + cfg_name(c));
            if (getenv("HK_BENCH_NOSUM") && c.split > 1 && pooled_fits(all_shapes[c.shape])) {
                /* HK_BENCH_NOSUM: the parts' kernel alone as well (its D is not written: timing only) */
                cfg_t parts = c;
                parts.nosum = 1;
                fs.push_back([&q, parts](cudaStream_t st) { run_hk(q, parts, st); });
                names.push_back(std::string("hk ") + lay + " " + cfg_name(parts));
            }
        }
    }
    cfgs = built;
    const size_t nhk = fs.size();
    float one = 1.f, zero = 0.f;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t L[3];
    cublasLtMatmulAlgo_t algo;
    if (!ta && tb && lt_plan(m, n, k, in, !promote, op, L, algo)) {
        fs.push_back([&](cudaStream_t st) { CKB(cublasLtMatmul(lt, op, &one, b, L[0], a, L[1], &zero, d2, L[2], d2, L[2], &algo, lt_ws, lt_ws_bytes, st)); });
        names.push_back(std::string("cublasLt ") + lay);
    }
    if (in == BF16) { /* row-major D = op(A) op(B) as column-major D^T = op(B)^T op(A)^T, every layout */
        fs.push_back([&](cudaStream_t) { /* on bench_stream (cublasSetStream) */
            CKB(cublasGemmEx(blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &one, b, CUDA_R_16BF,
                             q.ldb, a, CUDA_R_16BF, q.lda, &zero, d2, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        });
        names.push_back(std::string("cublasGemmEx ") + lay);
    }
    if (profiling) { /* one call of each contender inside the profiled range (lab/gemm_device_run.sh, ncu) */
        for (auto &f : fs) f(bench_stream);
        CK(cudaStreamSynchronize(bench_stream));
        CK(cudaProfilerStart());
        for (size_t j = 0; j < fs.size(); ++j) {
            printf("profile %dx%dx%d %s\n", m, n, k, names[j].c_str());
            fs[j](bench_stream);
            CK(cudaStreamSynchronize(bench_stream));
        }
        CK(cudaProfilerStop());
        cudaFree(a_base); cudaFree(b_base); cudaFree(d); cudaFree(d2);
        return;
    }
    std::vector<double> ms = median_ms_multi(fs, reps, calls, names);
    CK(cudaGetLastError());
    double best_ref = 0;
    for (size_t j = nhk; j < ms.size(); ++j) if (!std::isnan(ms[j])) best_ref = std::max(best_ref, flop / ms[j] / 1e9);
    for (size_t j = 0; j < ms.size(); ++j) {
        const double tf = flop / ms[j] / 1e9;
        rows.push_back({names[j] + (calls ? " [graph]" : ""), m, n, k, tf, best_ref > 0 ? tf / best_ref : 0});
        /* also as measured, so that a run cut short by a time limit still reports its rows */
        printf("row %-30s %6d %6d %6d %8.1f %7.3f\n", rows.back().what.c_str(), m, n, k, tf, rows.back().ratio);
    }
    fflush(stdout);
    if (fs.size() > nhk) { /* each hk config's output against the last cuBLAS call's, sampled */
        std::vector<uint16_t> h1((size_t)m * n), h2((size_t)m * n);
        CK(cudaMemcpy(h2.data(), d2, h2.size() * 2, cudaMemcpyDeviceToHost));
        for (auto c : cfgs) {
            CK(cudaMemset(d, 0xFF, (size_t)m * n * 2));
            CK(cudaDeviceSynchronize());
            run_hk(q, c, bench_stream);
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(h1.data(), d, h1.size() * 2, cudaMemcpyDeviceToHost));
            double num = 0, den = 0;
            const size_t stride = h1.size() > (1u << 24) ? 7 : 1;
            for (size_t i = 0; i < h1.size(); i += stride) {
                float x, y;
                uint32_t u1 = (uint32_t)h1[i] << 16, u2 = (uint32_t)h2[i] << 16;
                memcpy(&x, &u1, 4); memcpy(&y, &u2, 4);
                num += (x - y) * (double)(x - y); den += y * (double)y;
            }
            const double rel = std::sqrt(num / den);
            const bool ok = rel < 1e-2; /* NaN fails too */
            if (!ok) ++failures;
            printf("check vs cuBLAS %dx%dx%d %s %s: rel=%.2e %s\n", m, n, k, lay, cfg_name(c).c_str(), rel, ok ? "ok" : "FAIL");
        }
    }
#ifdef HK_GEMM_TRACE
    if (getenv("HK_BENCH_TRACE")) /* each one-unit config's CTAs, in the last of ~3 ms of calls back to back (a few
                                    * calls after the checks' idle time ran on a clock still ramping up) */
        for (size_t ci = 0; ci < cfgs.size(); ++ci) {
            const cfg_t &c = cfgs[ci];
            const shape_info &sh = all_shapes[c.shape];
            if (sh.persist && hk_gemm_cdiv(m, sh.bm) * hk_gemm_cdiv(n, sh.bn) > num_sms) {
                trace_rounds(q, c, m, n, k, in, ms[timed_as[ci]]);
                continue;
            }
            /* CTA i runs a part of tile i % tiles (pooled) or i / split (gemm.cu's units; run_hk's split) */
            const int split = std::max(run_split(sh, c), 1);
            const int tiles = (int)(hk_gemm_cdiv(m, sh.bm) * hk_gemm_cdiv(n, sh.bn)), ctas = tiles * split;
            const bool pooled = split > 1 && pooled_fits(sh);
            auto tile_of = [&](int i) { return pooled ? i % tiles : i / split; };
            if (ctas > 8192) continue;
            const double call_ms = ms[timed_as[ci]];
            const int warm = std::isnan(call_ms) ? 3 : std::max(3, (int)(3.0 / call_ms));
            for (int i = 0; i < warm; ++i) run_hk(q, c, bench_stream);
            CK(cudaStreamSynchronize(bench_stream));
            constexpr int cols = sizeof hk::hopper::gemm_trace[0] / sizeof hk::hopper::gemm_trace[0][0];
            std::vector<unsigned long long> t((size_t)ctas * cols);
            auto at = [&](int i, int what) { return t[(size_t)cols * i + what]; }; /* gemm.cu's columns */
            CK(cudaMemcpyFromSymbol(t.data(), hk::hopper::gemm_trace, t.size() * 8));
            const int sums = pooled ? (int)HK_GEMM_POOLED_SUM_CTAS(tiles, sh.bm, sh.bn) : 0;
            std::vector<unsigned long long> st((size_t)std::min(sums, 16384) * 2);
            if (sums) CK(cudaMemcpyFromSymbol(st.data(), hk::hopper::gemm_sum_trace, st.size() * 8));
            unsigned long long t0 = ~0ull;
            std::vector<unsigned long long> first_end(tiles, ~0ull), last_end(tiles, 0); /* of the tile's k-loops */
            for (int i = 0; i < ctas; ++i) {
                t0 = std::min(t0, at(i, 0));
                first_end[tile_of(i)] = std::min(first_end[tile_of(i)], at(i, 1));
                last_end[tile_of(i)] = std::max(last_end[tile_of(i)], at(i, 1));
            }
            auto stats = [&](const char *what, auto f, const char *unit = "us") {
                std::vector<double> v;
                for (int i = 0; i < ctas; ++i) v.push_back(f(i));
                std::sort(v.begin(), v.end());
                printf("  %-22s min %7.2f  med %7.2f  max %7.2f %s\n", what, v[0], v[v.size() / 2], v.back(), unit);
            };
            printf("trace %dx%dx%d %s, %d CTAs:\n", m, n, k, cfg_name(c).c_str(), ctas);
            stats("start", [&](int i) { return (at(i, 0) - t0) / 1e3; });
            stats("k-loop end", [&](int i) { return (at(i, 1) - t0) / 1e3; });
            stats("exit", [&](int i) { return (at(i, 2) - t0) / 1e3; });
            stats("first k-block", [&](int i) { return (at(i, 4) - t0) / 1e3; });
            stats("k-loop", [&](int i) { return (at(i, 1) - at(i, 0)) / 1e3; });
            /* from the first k-block's landing to the last one's end, consumer 0's SM cycles: its clock and, pooled
             * (parts of equal k-blocks, give or take one), the cycles per k-block */
            const double steps = pooled ? (double)hk_gemm_cdiv(k, HK_GEMM_BOX_K / dsize(in)) / split : 0;
            stats("k-loop clock", [&](int i) { return (double)(at(i, 6) - at(i, 5)) / (at(i, 1) - at(i, 4)); }, "GHz");
            if (steps > 0) stats("k-block", [&](int i) { return (at(i, 6) - at(i, 5)) / steps; }, "cycles");
            if (pooled) { /* by part (its range of K): a part slow on every tile points at its operands' path */
                printf("  k-loop by part (med / max us):");
                for (int part = 0; part < split; ++part) {
                    std::vector<double> v;
                    for (int i = part * tiles; i < (part + 1) * tiles; ++i) v.push_back((at(i, 1) - at(i, 0)) / 1e3);
                    std::sort(v.begin(), v.end());
                    printf(" %.2f/%.2f", v[v.size() / 2], v.back());
                }
                printf("\n");
            }
            stats("tile's k-loop skew", [&](int i) { return (last_end[tile_of(i)] - first_end[tile_of(i)]) / 1e3; });
            stats("exit - tile's k-loop",
                  [&](int i) { return ((double)at(i, 2) - (double)last_end[tile_of(i)]) / 1e3; });
            if (sums) { /* the sum kernel's CTAs (those of warpgroups with rows: the others return first) */
                unsigned long long last_exit = 0, s1 = 0;
                std::vector<double> starts;
                for (int i = 0; i < ctas; ++i) last_exit = std::max(last_exit, at(i, 2));
                for (size_t i = 0; i < st.size() / 2; ++i) {
                    if (st[2 * i] < t0 || st[2 * i + 1] < st[2 * i]) continue; /* not run in this call */
                    s1 = std::max(s1, st[2 * i + 1]);
                    starts.push_back((st[2 * i] - t0) / 1e3);
                }
                std::sort(starts.begin(), starts.end());
                if (!starts.empty())
                    printf("  sum: last parts exit %.2f, sum CTAs start %.2f-%.2f (med %.2f), last sum end %.2f us (%zu CTAs)\n",
                           (last_exit - t0) / 1e3, starts[0], starts.back(), starts[starts.size() / 2], (s1 - t0) / 1e3,
                           starts.size());
            }
            std::vector<int> per_sm(256, 0);
            for (int i = 0; i < ctas; ++i) ++per_sm[at(i, 3) % 256];
            const int used = (int)std::count_if(per_sm.begin(), per_sm.end(), [](int x) { return x > 0; });
            printf("  SMs used %d of %d\n", used, num_sms);
            /* which SMs and tiles the slowest and fastest k-loops ran on (SM:us:tile row,column), to tell a slow SM
             * from a slow tile or operand block */
            std::vector<int> order(ctas);
            for (int i = 0; i < ctas; ++i) order[i] = i;
            auto kloop = [&](int i) { return at(i, 1) - at(i, 0); };
            std::sort(order.begin(), order.end(), [&](int x, int y) { return kloop(x) > kloop(y); });
            const int tiles_m = (int)hk_gemm_cdiv(sh.swap ? n : m, sh.bm); /* the kernel's m: swapped, the caller's n */
            const int tiles_n = (int)hk_gemm_cdiv(sh.swap ? m : n, sh.bn);
            gemm_params walk{};
            walk.group_m = cfg_group(c, q, (int64_t)tiles_m * tiles_n);
            hk_gemm_set_walk(&walk, tiles_m, tiles_n);
            for (int end = 0; end < 2; ++end) {
                printf("  %s k-loops:", end ? "fastest" : "slowest");
                for (int j = 0; j < std::min(ctas, 8); ++j) {
                    const int i = order[end ? ctas - 1 - j : j];
                    int tm, tn;
                    gemm_tile(tile_of(i), tiles_m, walk, tm, tn);
                    printf(" %llu:%.2f:%d,%d", at(i, 3), kloop(i) / 1e3, tm, tn);
                }
                printf("\n");
            }
        }
#endif
    cudaFree(a_base); cudaFree(b_base); cudaFree(d); cudaFree(d2);
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "all";
    CK(cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, 0));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("device %s, %d SMs\n", prop.name, num_sms);
    const char *pdl_env = getenv("HK_GEMM_PDL");
    pdl_default = !(pdl_env && !strcmp(pdl_env, "0"));
    pdl_ab = pdl_env && !strcmp(pdl_env, "ab");
    if (!strcmp(what, "probe")) return 0;
    CK(cudaMalloc(&hk_ws, hk_ws_bytes));
    CK(cudaMemset(hk_ws, 0xA5, hk_ws_bytes)); /* stale slots: every part's slot is written before the sum reads it */
    profiling = !strcmp(what, "profile");
    const bool quick = !strcmp(what, "quick"), bench_only = !strcmp(what, "bench") || profiling;

    /* clusters of shape sh's bf16 nt kernel resident at once: of its own __cluster_dims__ (size 0), or launched in
     * clusters of `size` CTAs */
    auto active_clusters = [](int sh, int size) {
        kern_t k = pick(BF16, false, true, BF16, sh);
        allow_shared((const void *)k, all_shapes[sh].smem);
        cudaLaunchAttribute attr;
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = size;
        attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
        cudaLaunchConfig_t lc = {};
        lc.gridDim = dim3(size ? size * 16 : 2 * (num_sms / 2));
        lc.blockDim = dim3(HK_GEMM_THREADS(all_shapes[sh].bm));
        lc.dynamicSmemBytes = all_shapes[sh].smem;
        if (size) {
            CK(cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
            lc.attrs = &attr;
            lc.numAttrs = 1;
        }
        int clusters = 0;
        if (cudaOccupancyMaxActiveClusters(&clusters, k, &lc) != cudaSuccess) { cudaGetLastError(); clusters = -1; }
        return clusters;
    };
    for (int sh = 0; sh < NSHAPES; ++sh)
        if (all_shapes[sh].cluster > 1)
            printf("max active clusters of %s (%u B shared): %d\n", all_shapes[sh].name, all_shapes[sh].smem,
                   active_clusters(sh, 0));
    /* clusters of 2-16 CTAs of one SM each (what a pooled split could run in clusters of its parts: git history of bench/NOTES.md,
     * sixteenth session) */
    for (int size = 2; size <= 16; ++size)
        printf("max active clusters of %d PK128 CTAs: %d\n", size, active_clusters(PK128, size));
    /* correctness: every launch shape (and k-split), layout and output, ragged, alpha/beta, aliasing, padding,
     * k = 0, skinny m, k shorter than the split, multi-tile persistent walks; each case where its kernel is built */
    std::vector<cfg_t> modes;
    const char *only = getenv("HK_CHECK_SHAPES"); /* e.g. "P144,M64N64": check only these shapes' kernels */
    for (int sh = 0; sh < NSHAPES; ++sh) {
        if (only && !in_list(only, all_shapes[sh].name))
            continue;
        modes.push_back({sh, 1, 0, 0});
        if (all_shapes[sh].persist) /* the finale in 2 and 3 parts */
            for (int parts : {2, 3}) modes.push_back({sh, 1, 0, 0, -1, 0, 0, parts});
        if (all_shapes[sh].cluster == 2) modes.push_back({sh, 2, 0, 0});
        if (pooled_fits(all_shapes[sh])) { /* K in uneven thirds through the workspace; more parts than k-blocks */
            modes.push_back({sh, 3, 0, 0});
            modes.push_back({sh, HK_GEMM_POOLED_MAX, 0, 0});
        }
    }
    if (!bench_only) {
        const int shapes[][3] = {{128, 256, 64}, {1000, 1500, 776}, {257, 263, 520}, {77, 1030, 4104}, {3, 5, 8},
                                 {16, 1000, 4104}, {384, 700, 264}, {130, 600, 8}, {1, 777, 520}, {33, 2000, 1000},
                                 {64, 1500, 776}, {200, 1288, 136}, {136, 654, 200}, {260, 616, 72}};
        for (int direct = 0; direct < 2; ++direct)
            for (cfg_t md : modes) {
                md.direct = direct;
                /* the register epilogue: once per kind of work split (one-tile swapped shapes always use it) */
                if (direct && (HK_GEMM_REG_STORE(all_shapes[md.shape].persist, all_shapes[md.shape].swap) ||
                               md.split == 2 || md.split == HK_GEMM_POOLED_MAX || md.shape == P208 || md.shape == P192 || md.shape == P168 ||
                               md.shape == P128 || md.shape == P96 || md.shape == M64N64 || md.shape == T208 ||
                               md.shape == T144 || md.shape == T96))
                    continue;
                cur = md;
                if (md.finale) { /* shapes of two rounds or more: every layout and output, ragged, K of 2 k-blocks; fp8 */
                    if (direct) continue;
                    for (int l = 0; l < 4; ++l)
                        for (dt out : {BF16, F32}) {
                            check(4096, 4096, 256, BF16, out, l & 2, l & 1, (l + (out == F32)) % 3, 0);
                            check(3968, 2304, 520, BF16, out, l & 2, l & 1, (l + 1) % 3, (l % 2) * 8);
                            check(4000, 4500, 70, BF16, out, l & 2, l & 1, 0, 0);
                        }
                    for (int promote = 0; promote < 2; ++promote) {
                        cur.promote = promote;
                        for (dt out : {BF16, F32}) check(4096, 4200, 1000, E4M3, out, false, true, 1, 0, 0.37f);
                    }
                    continue;
                }
                for (auto &s : shapes)
                    for (int l = 0; l < 4; ++l)
                        for (dt out : {BF16, F32}) check(s[0], s[1], s[2], BF16, out, l & 2, l & 1, (l + (out == F32)) % 3, (l % 2) * 8);
                check(48, 333, 200, BF16, F16, false, true, 1, 8);
                check(200, 96, 136, BF16, F16, true, false, 2, 0);
                check(300, 500, 0, BF16, BF16, false, true, 1, 0);
                check(1000, 1000, 1000, BF16, BF16, false, true, 2, 0);
                for (int promote = 0; promote < 2; ++promote) { /* fast, then fp32 accumulation where it fits */
                    cur.promote = promote;
                    for (dt out : {BF16, F32}) {
                        check(1000, 1500, 784, E4M3, out, false, true, 0, 0, 0.37f);
                        check(257, 263, 528, E4M3, out, false, true, 1, 16, 2.5f);
                        check(20, 700, 1024, E4M3, out, false, true, 2, 0, 1.5f);
                    }
                    if (!direct) check(2048, 2048, 4096, E4M3, promote ? F32 : BF16, false, true, 2, 0, 1.f);
                }
                cur.promote = 0;
                if (direct) continue;
                check(2048, 2048, 2048, BF16, BF16, false, true, 0, 0);
                check(1024, 1536, 3072, BF16, F32, true, false, 2, 4);
                check(64, 8192, 2048, BF16, BF16, false, false, 2, 0);
                if (all_shapes[md.shape].persist) { /* several tiles per CTA: pipeline phases carry across tiles */
                    check(4096, 4096, 256, BF16, BF16, false, true, 0, 0);
                    check(3968, 2304, 520, BF16, F32, true, false, 2, 0);
                }
            }
        /* the library's own choice on the shapes timed below, ragged variants of them too, per layout */
        for (auto s : std::vector<std::array<int, 3>>{{16, 8192, 1024}, {13, 4096, 2056}, {60, 2000, 8192}, {128, 3000, 1000},
                                                       {3072, 3072, 512}, {3000, 3100, 256}, {512, 512, 512}, {1024, 1000, 1040},
                                                       {640, 1088, 300}, {200, 130, 4000}, {1536, 1536, 1536}, {1500, 1530, 700},
                                                       {1280, 1280, 1280}, {2560, 2560, 256}, {256, 8192, 1024}, {640, 640, 640},
                                                       {1792, 1792, 1792}, {2304, 2304, 520}, {1700, 1750, 300}, {1152, 1100, 600},
                                                       {2176, 2176, 136}}) {
            for (int l = 0; l < 4; ++l) {
                const bool ta = l & 2, tb = l & 1;
                cur = default_cfg(s[0], s[1], s[2], ta, BF16, tb);
                check(s[0], s[1], s[2], BF16, l == 1 ? BF16 : F32, ta, tb, l % 3, (l == 2) * 8);
            }
            for (int promote = 0; promote < 2; ++promote) {
                cur = default_cfg(s[0], s[1], s[2], false, E4M3, true, promote);
                check(s[0], s[1], s[2], E4M3, promote ? F32 : BF16, false, true, 1, 0);
            }
        }
    }
    if (!bench_only) { /* PDL against real read-after-write and write-after-read dependencies, each route kind */
        for (int l = 0; l < 4; ++l) chain_check(1536, 1536, 1536, l & 2, l & 1, 20); /* P192 tn/tt.., P144 nt, T144 nn */
        chain_check(2176, 2176, 2176, true, false, 20);                                 /* tn P192, two rounds */
        chain_check(512, 512, 512, false, true, 20);                                    /* M64N64 */
        chain_check(1024, 1024, 1024, false, true, 20);                                 /* M64 */
        chain_check(128, 2048, 2048, false, true, 20);                                  /* SK64, K split over a cluster */
        chain_check(16, 4096, 4096, false, true, 20);                                   /* SW16, split 2 */
        chain_check(48, 2048, 2048, false, false, 20);                                  /* SW64 nn */
        const cfg_t pk64{PK64, 8, 0, 0}; /* K split through the workspace, reused call after call (forced: the route
                                          * takes it for long k only, which a chain's n = k cannot have over few tiles) */
        chain_check(64, 512, 512, false, true, 20, &pk64);
    }
    if (quick) { printf("%d failures\n", failures); return failures != 0; }

    cublasHandle_t blas;
    CKB(cublasCreate(&blas));
    CKB(cublasLtCreate(&lt));
    CK(cudaMalloc(&lt_ws, lt_ws_bytes));
    CK(cudaStreamCreateWithFlags(&bench_stream, cudaStreamNonBlocking));
    CKB(cublasSetStream(blas, bench_stream));
    CKB(cublasSetWorkspace(blas, lt_ws, lt_ws_bytes)); /* never allocates inside a graph capture */
    auto def = [](int m, int n, int k, dt in = BF16, bool ta = false, bool tb = true, bool promote = false) {
        return default_cfg(m, n, k, ta, in, tb, promote);
    };
    const cfg_t p256{P256, 1, 0, 0}, p208{P208, 1, 0, 0}, p192{P192, 1, 0, 0}, p168{P168, 1, 0, 0};
    const cfg_t p144{P144, 1, 0, 0}, p128{P128, 1, 0, 0}, p96{P96, 1, 0, 0}, m64{M64, 1, 0, 0};
    const cfg_t t208{T208, 1, 0, 0}, t168{T168, 1, 0, 0}, t144{T144, 1, 0, 0}, t96{T96, 1, 0, 0};
    const cfg_t p320{P320, 1, 0, 0}, m192n96{M192N96, 1, 0, 0};
    if (profiling) { /* the default shape against the cuBLAS kernels, one call each under ncu */
        for (int s : {512, 1536}) bench(s, s, s, BF16, false, true, blas, 1, {def(s, s, s)}, 0);
        return 0;
    }
    /* Each row: the old default first, candidates between, the new default last; GPU time only (graphs of
     * `calls` calls) below 5120^3. Small shapes first (the card is coolest). HK_BENCH_ROWS (e.g.
     * "1152x1152x1152nt,2176x2176x2176nt") times only those rows. */
    const char *rows_only = getenv("HK_BENCH_ROWS");
    auto row = [&](int m, int n, int k, std::vector<cfg_t> cfgs, int calls, dt in = BF16, bool ta = false, bool tb = true,
                   bool promote = false) {
        char key[64];
        snprintf(key, sizeof key, "%dx%dx%d%s%s%s", m, n, k, in != E4M3 ? "" : promote ? "e4m3acc32" : "e4m3fast",
                 ta ? "t" : "n", tb ? "t" : "n");
        if (rows_only && !in_list(rows_only, key)) return;
        if (getenv("HK_BENCH_DEFAULT_ONLY")) cfgs.clear(); /* the library's choice alone */
        if (const char *only = getenv("HK_BENCH_SHAPES")) { /* e.g. "P192,P256,M64N64:8": these shapes (where built;
                                                              * cluster shapes with K split and not; NAME:S with a
                                                              * split of S, NAME:0 pooled in as many parts as the
                                                              * SMs hold), then the default */
            cfgs.clear();
            for (const std::string &it : list_items(only)) {
                const size_t colon = it.find(':');
                for (int sh = 0; sh < NSHAPES; ++sh) {
                    if (it.substr(0, colon) != all_shapes[sh].name) continue;
                    if (colon != std::string::npos)
                        cfgs.push_back(cfg_t{sh, atoi(it.c_str() + colon + 1), 0, 0});
                    else
                        for (int split = 1; split <= all_shapes[sh].cluster; ++split) cfgs.push_back(cfg_t{sh, split, 0, 0});
                }
            }
        }
        const cfg_t library = def(m, n, k, in, ta, tb, promote);
        if (const char *fin = getenv("HK_BENCH_FINALE")) /* e.g. "1,2,3": the default without the finale (1) or with
                                                         * that many parts forced */
            if (all_shapes[library.shape].persist)
                for (const std::string &it : list_items(fin)) {
                    cfgs.push_back(library);
                    cfgs.back().finale = atoi(it.c_str()) > 1 ? atoi(it.c_str()) : 1; /* 1: none */
                }
        if (getenv("HK_BENCH_EDGE") && atoi(getenv("HK_BENCH_EDGE"))) { /* the last tile column past the edge first */
            cfgs.push_back(library);
            cfgs.back().edge = 1;
        }
        if (const char *groups = getenv("HK_BENCH_GROUPS")) /* e.g. "8,16": the default with other walk groups first */
            if (all_shapes[library.shape].persist)
                for (const std::string &it : list_items(groups)) {
                    cfgs.push_back(library);
                    cfgs.back().group_m = atoi(it.c_str());
                }
        cfgs.push_back(library);
        const char *offsets = getenv("HK_BENCH_OFFSET"); /* e.g. 0,4096,1048576: where the operands start */
        for (const std::string &it : list_items(offsets && *offsets ? offsets : "0")) {
            char *end;
            operand_offset = strtoull(it.c_str(), &end, 10) / 16 * 16; /* TMA: 16-byte aligned */
            if (end == it.c_str()) break; /* not a number */
            if (offsets) printf("offset %zu\n", operand_offset);
            bench(m, n, k, in, ta, tb, blas, 15, cfgs, calls, promote);
        }
    };
    /* calls per graph of the rows below: 20 or 10 under m n k = 2^37, single calls above */
    auto calls_for = [](int m, int n, int k) {
        const double mnk = (double)m * n * k;
        return mnk >= 0x1p37 ? 0 : mnk >= 0x1p33 ? 10 : 20;
    };
    /* e4m3 rows in both accumulation modes, each against cuBLAS in the same mode */
    auto row8 = [&](int m, int n, int k, std::vector<cfg_t> cfgs) {
        for (bool promote : {false, true}) row(m, n, k, cfgs, calls_for(m, n, k), E4M3, false, true, promote);
    };
    row(512, 512, 512, {m64}, 20);
    row(640, 640, 640, {m64}, 20);
    row(768, 768, 768, {m64}, 20);
    row(1024, 1024, 1024, {m64}, 20);
    row(1088, 1088, 1088, {p128, p96}, 20);
    row(1152, 1152, 1152, {p128, p96}, 20);
    row(1216, 1216, 1216, {p128, p96}, 20);
    row(1280, 1280, 1280, {p128, p96}, 20);
    row(1408, 1408, 1408, {p128, p96}, 20);
    row(1536, 1536, 1536, {p144}, 20);
    row(1664, 1664, 1664, {p192, p168}, 20);
    row(1792, 1792, 1792, {p208}, 20);
    row(2048, 2048, 2048, {p256}, 20);
    row(2176, 2176, 2176, {p168, p192, p96}, 10);
    row(2304, 2304, 2304, {p168, p192}, 10);
    row(2560, 2560, 2560, {p208, p144}, 10);
    row(3072, 3072, 3072, {p192}, 10);
    row(3328, 3328, 3328, {p168}, 10);
    row(3584, 3584, 3584, {p256}, 10);
    row(3712, 3712, 3712, {p208}, 10);
    row(4096, 4096, 4096, {p256}, 10);
    row(4096, 1024, 4096, {p256}, 10);
    row(1024, 4096, 4096, {p256}, 10);
    row(2048, 8192, 2048, {p256}, 10);
    row(8192, 2048, 2048, {p256}, 10);
    row(256, 8192, 8192, {}, 20);
    row(128, 8192, 8192, {}, 20);
    for (auto s : {std::array<int, 3>{256, 2112, 8192}, {512, 1024, 8192}, {384, 1408, 4096}, {128, 2176, 2048},
                   {256, 2048, 8192}, {128, 1024, 8192}, {512, 2048, 4096}, {128, 2048, 4096}, {256, 1024, 4096},
                   {192, 1024, 8192}, {128, 512, 16384}, {256, 256, 16384}, {200, 1024, 4096}, {128, 2048, 8192},
                   {512, 512, 8192}}) { /* long K over few output tiles */
        row(s[0], s[1], s[2], {}, calls_for(s[0], s[1], s[2]));
        row8(s[0], s[1], s[2], {});
    }
    row(16, 8192, 8192, {}, 20);
    if (const char *extra = getenv("HK_BENCH_EXTRA")) /* e.g. "128x1024x2048,256x256x4096tt": more rows, nt in all
                                                       * modes, or bf16 in the layout named */
        for (const std::string &it : list_items(extra)) {
            int m, n, k;
            char lay[3] = "nt";
            if (sscanf(it.c_str(), "%dx%dx%d%2[nt]", &m, &n, &k, lay) >= 3 && strlen(lay) == 2) {
                row(m, n, k, {}, calls_for(m, n, k), BF16, lay[0] == 't', lay[1] == 't');
                if (!strcmp(lay, "nt")) row8(m, n, k, {});
            }
        }
    for (int l = 0; l < 4; ++l) {
        if (l == 1) continue; /* nt above */
        /* nn: the plain widths the route took before the T shapes first, the T shapes after (not built for tn/tt) */
        row(512, 512, 512, {m64}, 20, BF16, l & 2, l & 1);
        row(1152, 1152, 1152, {p128, t96, t144}, 20, BF16, l & 2, l & 1);
        row(1216, 1216, 1216, {p128, t96}, 20, BF16, l & 2, l & 1);
        row(1536, 1536, 1536, {p192, t168, t144, m192n96}, 20, BF16, l & 2, l & 1);
        row(1792, 1792, 1792, {p256, t208}, 20, BF16, l & 2, l & 1);
        row(2176, 2176, 2176, {p192, t168, t96, p320}, 10, BF16, l & 2, l & 1);
        row(2304, 2304, 2304, {p192, t168}, 10, BF16, l & 2, l & 1);
        row(2560, 2560, 2560, {p256, m192n96}, 10, BF16, l & 2, l & 1);
        row(3328, 3328, 3328, {p256, p96}, 10, BF16, l & 2, l & 1);
        row(3712, 3712, 3712, {p192, t208}, 10, BF16, l & 2, l & 1);
        row(4096, 4096, 4096, {p256}, 10, BF16, l & 2, l & 1);
        row(5120, 5120, 5120, {p144, p128}, 0, BF16, l & 2, l & 1);
    }
    for (int s : {512, 1024, 1152, 1216, 1536, 1792, 2048, 2176, 2304, 3072, 4096}) row8(s, s, s, {});
    for (int m : {16, 128, 512, 2048, 8192}) /* token counts x Llama-3-8B projections (q/o, gate/up, down) */
        for (auto nk : {std::array<int, 2>{4096, 4096}, {14336, 4096}, {4096, 14336}}) {
            row(m, nk[0], nk[1], {}, calls_for(m, nk[0], nk[1]));
            row8(m, nk[0], nk[1], {});
        }
    row(4096, 14336, 4096, {p256, p320}, 0);
    row(5120, 5120, 5120, {p256, p144, p320}, 0);
    row(8192, 8192, 8192, {p256, p320}, 0);
    row(8192, 28672, 8192, {p256, p320}, 0);
    row(8192, 8192, 28672, {p256, p320}, 0);
    row8(8192, 8192, 8192, {p256});

    printf("\n%-30s %6s %6s %6s %8s %7s\n", "contender", "m", "n", "k", "TFLOP/s", "vs best cuBLAS");
    for (auto &r : rows) printf("%-30s %6d %6d %6d %8.1f %7.3f\n", r.what.c_str(), r.m, r.n, r.k, r.tf, r.ratio);
    printf("%d failures\n", failures);
    return failures != 0;
}
