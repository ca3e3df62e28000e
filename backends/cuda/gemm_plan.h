/* Launch plans of the sm_90a GEMM (kernels/hopper/gemm.cu), as backends/hip/cdna_plan.c plans the CDNA launches: the
 * launch shape by problem size (the route), the K split, the persistent walk's finale, the grid and the kernel
 * parameters of a call. Pure functions of the call's arguments, the device's SM count and the context's tuning
 * overrides, so hk_gemm_workspace_size and hk_gemm agree and tests/cuda/test_gemm_route.c checks them on the host.
 * backends/cuda/gemm.c builds the tensor maps and launches the plan. */
#ifndef HK_CUDA_GEMM_PLAN_H
#define HK_CUDA_GEMM_PLAN_H

#include "internal.h"

#include "hopper/gemm.h"

/* Tile rows per L2 group of the persistent walk: with 132 SMs a round runs 11 whole columns of a group. The walk sets
 * how many bytes come from DRAM, which under the power cap costs clock; against 8, the large shapes run 0.6-1.3%
 * faster there. */
#define HK_GEMM_GROUP_M 12
/* The walk's group for a call: HK_GEMM_GROUP_M, but groups of 4 tile rows for tn (A and B both MN-major) where the
 * tiles fill one round, which sets only which block runs which tile: +2-3% at tn 1152^3 (P96) and 1536^3 (M192N96),
 * level at 1216^3 (P128), with the harness's order shuffled. Other layouts
 * split there (nt 1088^3 +3.5%, nt 1216^3 -3.1%) and keep 12. */
static inline int32_t hk_gemm_walk_group(int trans_a, int trans_b, int64_t tiles, int64_t sms)
{
    return trans_a && !trans_b && tiles <= sms ? 4 : HK_GEMM_GROUP_M;
}

static inline int64_t hk_gemm_cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* A shape's kernels serve the layout (gemm.cu builds them so): e4m3 only nt; swapped shapes only row-major A (trans_a
 * 0); lay 1 only K-major B (trans_b 1), lay 3 that or tn; lay 2 only nn in bf16; lay 4 only e4m3; lay 5 only e4m3 with
 * fp32 accumulation (promote; its kernels promote whatever params.promote says). */
static inline bool hk_gemm_layout_built(int lay, int swap, bool fp8, int trans_a, int trans_b, int promote)
{
    if (fp8 && (trans_a || !trans_b))
        return false;
    if (lay == 4)
        return fp8;
    if (lay == 5)
        return fp8 && promote;
    if (lay == 2)
        return !fp8 && !trans_a && !trans_b;
    return (!swap || !trans_a) && (lay != 1 || trans_b) && (lay != 3 || trans_b || trans_a);
}

static inline int64_t hk_gemm_pooled_bytes(int64_t tiles, int64_t split, int64_t bm, int64_t bn)
{
    return split > 1 ? tiles * split * bm * bn * 4 : 0;
}
/* Parts of K per tile where `tiles` tiles share the SMs, one part per CTA, at most HK_GEMM_POOLED_MAX. */
static inline int64_t hk_gemm_pooled_parts(int64_t tiles, int64_t sms)
{
    return sms / tiles < HK_GEMM_POOLED_MAX ? sms / tiles : HK_GEMM_POOLED_MAX;
}
/* PK64's parts: as many as the SMs hold, each at least 8 k-blocks where there are more than 2. */
static inline int64_t hk_gemm_pk64_parts(int64_t tiles64x64, int64_t kblocks, int64_t sms)
{
    int64_t parts = hk_gemm_pooled_parts(tiles64x64, sms);
    while (parts > 2 && kblocks < 8 * parts)
        --parts;
    return parts;
}
/* Parts of K per finale tile: 2 or 3, the fewer of those whose rounds of parts take least, where they save a quarter
 * of a tile's time or more against the two rounds of whole tiles, with parts of 64 k-blocks or more (bf16 16384^3 +0.6 to +2.7%, 8192x8192x28672 +1.0 to +1.6%, 8192x28672x8192 +0.2 to +0.9%, e4m3
 * 16384^3 +0.4 to +0.6%, with fp32 accumulation -0.6 to +0.4%; parts of 21-43 k-blocks, e4m3 8192^3 and bf16 8192^3,
 * lost up to 2%, and 4 parts lost to 2 or 3); 0: no finale. */
static inline int32_t hk_gemm_finale_parts(int64_t tiles, int64_t ctas, int64_t kblocks)
{
    const int64_t finale = hk_gemm_finale_tiles(tiles, ctas);
    int32_t best = 0;
    int64_t best_time = 2 * 12; /* two rounds of whole tiles, in twelfths of a tile's time */
    for (int32_t parts = 2; finale > 0 && parts <= 3 && kblocks >= 64 * parts; ++parts) {
        const int64_t time = hk_gemm_cdiv(finale * parts, ctas) * 12 / parts;
        if (time < best_time) {
            best_time = time;
            best = parts;
        }
    }
    return best_time <= 2 * 12 - 3 ? best : 0;
}
static inline int64_t hk_gemm_finale_bytes(int64_t finale_tiles, int64_t parts, int64_t bm, int64_t bn)
{
    return HK_GEMM_FINALE_COUNTER_BYTES(finale_tiles, bm) + finale_tiles * parts * bm * bn * 4;
}
/* Unused dynamic shared memory that the sum kernel is launched with where each part's CTA holds a whole SM (128-row
 * pooled tiles) and the sum CTAs are at most 4 per SM: then at most ceil(ctas / sms) share an SM. They launch while the
 * parts' CTAs exit, and without a cap (registers allow 9 per SM) they pile onto the SMs freed first and add the parts
 * with a part of the GPU's load bandwidth: +7-9% at 384-512 sum CTAs; at 960-1024 (8 per SM) within 1%; with 64-row
 * tiles, whose parts leave room on their SMs for sum CTAs, -7% to +6%. The
 * launch prefers the largest shared-memory carveout (backends/cuda/driver.c), 228 KiB per SM on sm_90, 1 KiB of it
 * reserved per CTA; the 8 KiB margin absorbs the allocation granularity. 0: no cap. */
#define HK_GEMM_SM_SHARED 233472
static inline uint32_t hk_gemm_pooled_sum_shared(int64_t bm, int64_t ctas, int64_t sms)
{
    const int64_t per_sm = hk_gemm_cdiv(ctas, sms);
    return bm == 128 && per_sm <= 4 ? (uint32_t)(HK_GEMM_SM_SHARED / per_sm - 1024 - 8192) : 0;
}

/* TMA can address rows at p, ld elements of esize bytes apart: 16-byte aligned base and pitch, pitch < 2^40. */
static inline int hk_gemm_tma_rows_ok(const void *p, int64_t ld, int64_t esize)
{
    return ((uintptr_t)p & 15u) == 0 && (ld * esize) % 16 == 0 && (uint64_t)(ld * esize) < (1ull << 40);
}

/* D leaves through TMA stores (params.tma_store): the shape stages D, its rows are TMA-addressable, and n is a
 * whole number of 16-byte groups (the H200 clips a store box's inner dimension only to 16 bytes, so a ragged n
 * would overwrite a padded ldd's padding). */
static inline int hk_gemm_tma_store_ok(int persist, int swap, const void *d, int64_t ldd, int64_t n, int64_t esize)
{
    return !HK_GEMM_REG_STORE(persist, swap) && hk_gemm_tma_rows_ok(d, ldd, esize) && (n * esize) % 16 == 0;
}

/* The kernels walk tiles in groups of group_m tile rows (gemm.cu gemm_tile). Its divisors' reciprocals are
 * computed here once (float, correctly rounded), so that a kernel divides by a multiply and one correction. */
static inline void hk_gemm_set_walk(hk_gemm_params *p, int32_t tiles_m, int32_t tiles_n)
{
    p->walk_group = p->group_m * tiles_n;
    p->walk_last_rows = tiles_m % p->group_m ? tiles_m % p->group_m : p->group_m;
    p->walk_rcp[0] = 1.0f / (float)p->walk_group;
    p->walk_rcp[1] = 1.0f / (float)p->group_m;
    p->walk_rcp[2] = 1.0f / (float)p->walk_last_rows;
}

/* The first column of the last of a walk's tile columns bn wide. Where n is ragged and at least bn, n - bn: that
 * column's B boxes then end at the operand's edge, where one running past it made the column's k-loops ~10% slower and
 * set the time of one-round shapes. It recomputes the last columns of its
 * neighbour, the same values bit for bit (the same k order), and writes them again. Kept at (tiles_n - 1) * bn where
 * that second write would read the first one's D as its C (beta != 0 with C overlapping D), and where B is
 * N-contiguous (b_mn, elements of esize bytes) and n - bn not on 16 bytes: those boxes keep to 16-byte starts (the one
 * start 8 bytes past that ran stopped the H200 with an illegal instruction). */
static inline int32_t hk_gemm_col_last(int64_t n, int64_t bn, int b_mn, int64_t esize, int c_overlaps_d)
{
    const int aligned = !b_mn || (n - bn) * esize % 16 == 0;
    return (int32_t)(!c_overlaps_d && n > bn && aligned ? n - bn : (n - 1) / bn * bn);
}

/* Whether C (read where not NULL: the library clears it when beta is 0) shares memory with D, both m x n (m, n > 0)
 * of esize-byte elements. */
static inline int hk_gemm_overlap(const void *c, int64_t ldc, const void *d, int64_t ldd, int64_t m, int64_t n, int64_t esize)
{
    if (!c)
        return 0;
    const uintptr_t c0 = (uintptr_t)c, d0 = (uintptr_t)d;
    const uintptr_t c1 = c0 + (uintptr_t)(((m - 1) * ldc + n) * esize), d1 = d0 + (uintptr_t)(((m - 1) * ldd + n) * esize);
    return c0 < d1 && d0 < c1;
}

/* Launch shapes of gemm.h, indexed by HK_GEMM_<id>. */
typedef struct hk_gemm_shape {
    const char *name, *suffix;
    int bm, bn, cluster, persist, swap, lay, pool;
    unsigned smem;
} hk_gemm_shape;
extern HK_INTERNAL const hk_gemm_shape hk_gemm_shapes[HK_GEMM_NSHAPES];

/* The shape whose id (gemm.h, any case) is the len characters at name; -1 for none. */
HK_INTERNAL int hk_gemm_shape_named(const char *name, size_t len);

/* Launch shape by problem size; box_k: elements of K per k-block; promote: e4m3 with fp32 accumulation;
 * workspace_bytes: the caller's workspace, for a pooled K split; *split: CTAs sharing a tile's K. */
HK_INTERNAL int hk_gemm_route(int64_t m, int64_t n, int64_t k, int trans_a, int trans_b, int64_t box_k, int promote,
                              int64_t sms, int64_t workspace_bytes, int32_t *split);

/* The kernels of the GEMM family as one kernel set (hk_gpu_launch_indexed): main kernels
 * hk_gemm_sm90_<in>_<layout>_<out><suffix> first, then the pooled sums hk_gemm_sm90_pooled_sum_<out><suffix>. */
extern HK_INTERNAL const hk_kernel_set hk_gemm_kernels;

/* One call's launches. */
typedef struct hk_gemm_plan {
    int shape; /* HK_GEMM_<id> */
    int32_t split;
    bool pooled;              /* K in parts parked in the workspace; the sum kernel adds them and writes D */
    int64_t tiles_m, tiles_n; /* in the kernel's own (swapped) m x n */
    size_t kernel;            /* in hk_gemm_kernels */
    unsigned grid, block, shared;
    size_t zero_words; /* the finale's counters: 32-bit words at the workspace's start zeroed before the launch */
    size_t sum_kernel; /* pooled: the sum kernel, its grid and its dynamic shared memory */
    unsigned sum_grid, sum_shared;
    hk_gemm_params params;
} hk_gemm_plan;

/* The plan of a validated call with m, n > 0 on `sms` SMs (a->workspace and a->workspace_size are what it may use). */
HK_INTERNAL void hk_gemm_plan_call(const hk_gemm_args *a, int64_t sms, const hk_tuning *tune, hk_gemm_plan *plan);
/* Workspace bytes that let a call take its fastest plan (hk_gemm_workspace_size). */
HK_INTERNAL size_t hk_gemm_plan_workspace(const hk_gemm_args *a, int64_t sms, const hk_tuning *tune);
/* Whether gemm.cu builds kernels for the call's types and layout on `shape`. */
HK_INTERNAL bool hk_gemm_plan_built(const hk_gemm_args *a, int shape);

#endif
