/* Kernel parameters and launch shapes of kernels/hopper/gemm.cu, shared by the host glue (C11,
 * backends/cuda/gemm.c) and the device code (nvcc). Fixed-width fields only, so that both compilers lay
 * the struct out the same way. Every kernel takes (map_a, map_b, map_d, map_t, params), the tensor maps
 * passed by value (__grid_constant__): map_t stores D's columns past a tile's last whole 128-byte chunk (T
 * shapes: D's rows past the tile's last whole 64). */
#ifndef HK_HOPPER_GEMM_H
#define HK_HOPPER_GEMM_H

#include <stdbool.h>
#include <stdint.h>

#define HK_GEMM_BOX_K 128  /* bytes of K per k-block (64 bf16 or 128 e4m3): one 128-byte swizzle row */
#define HK_GEMM_EPI_ROWS 64 /* D store box: 64 rows x 128 bytes */
/* Tile rows per L2 group of the persistent walk: with 132 SMs a round runs 11 whole columns of a group. The walk sets
 * how many bytes come from DRAM, which under the power cap costs clock; against 8, the large shapes run 0.6-1.3%
 * faster there (bench/NOTES.md, thirty-second session; the DRAM bytes of 12 itself were not counted). */
#define HK_GEMM_GROUP_M 12
/* The walk's group for a call: HK_GEMM_GROUP_M, but groups of 4 tile rows for tn (A and B both MN-major) where the
 * tiles fill one round, which sets only which block runs which tile: +2-3% at tn 1152^3 (P96) and 1536^3 (M192N96),
 * level at 1216^3 (P128), with the harness's order shuffled (bench/NOTES.md, thirty-third session). Other layouts
 * split there (nt 1088^3 +3.5%, nt 1216^3 -3.1%) and keep 12. */
static inline int32_t hk_gemm_walk_group(int trans_a, int trans_b, int64_t tiles, int64_t sms)
{
    return trans_a && !trans_b && tiles <= sms ? 4 : HK_GEMM_GROUP_M;
}

/* Launch shapes, one kernel family each (name suffix). Columns: id, suffix, tile rows (64 per consumer
 * warpgroup), tile columns, ring stages, cluster size, persistent, swapped operands, layouts built (0: all
 * that the operand order allows, 1: K-major B only (trans_b = 1), 2: nn only, 3: K-major B, and tn, 4: e4m3 nt
 * only, 5: e4m3 nt with fp32 accumulation only), K split through the caller's workspace (pooled).
 * An N-contiguous B comes in boxes of HK_GEMM_MN_BOX columns: 64 (128-byte swizzle), or 32 (64-byte swizzle) for
 * the 96-wide tiles, which serve tn that way (nn has the swapped T shapes). Other widths off the 64 grid are built
 * for K-major B only: whole 64-column boxes for a partial one cost 8-23% (bench/NOTES.md, "P320, M192N96").
 *  P256  persistent, one CTA per SM walks 128 x 256 tiles in L2-friendly groups;
 *  P320  the same 320 wide (two wgmma per k-step, 256 + 64 columns): one round where 256 needs two;
 *  P208 ... P96  the same with narrower tiles, for tile counts that fill the last wave of wider tiles badly
 *        (the host picks the width by a wave-fill model);
 *  M192N96  persistent 192 x 96 tiles, three consumer warpgroups (tn: 128 tiles at 1536^3, one round);
 *  M192N128  persistent 192 x 128 tiles in three consumer warpgroups, e4m3 with fp32 accumulation only: while one
 *        consumer adds a k-block's sum, two can keep the tensor cores busy (P192's two consumers: 0.89-0.91x of
 *        cuBLAS's default mode, this shape 0.92-0.99x; bench/NOTES.md);
 *  PF128  P128 for e4m3 with fp32 accumulation only, with lazy stores (a tile's pieces staged before the next unit's
 *        k-loop and stored one per k-block of it): +0.7-2.5% over P128 where the lazy stores cost the other modes of
 *        P128 1-5% (bench/NOTES.md, twenty-seventh and twenty-ninth sessions);
 *  SK64  one 64 x 64 tile per CTA (one consumer warpgroup), clusters of 2; with params.split = 2 both CTAs of a
 *        cluster share a tile, each taking half of K, and add their partial tiles through distributed shared
 *        memory (no workspace), each storing half of its columns. For long K over at most half a wave of
 *        tiles (it replaced a 128 x 128 form, SK2, that served such shapes with a quarter of the CTAs:
 *        bench/NOTES.md, ninth session);
 *  SK128  SK64's cluster split on 128 x 64 tiles (two consumer warpgroups): where m fills whole 128-row tiles it
 *        runs as many CTAs as M64N64 with half the k-blocks each and a quarter fewer bytes per flop; long K only;
 *  M64, M64N64  one 64 x 128 or 64 x 64 tile per CTA, one consumer warpgroup, no cluster (a cluster launch
 *        cost ~10% at these sizes): small problems, more CTAs than 128-row tiles; M64N64's 12 stages keep more
 *        bytes in flight, which its long-K rows (latency-bound, not L2-bound) gain 4-7% from (eleventh session);
 *  PK64  M64N64 with K in params.split parts, one per CTA, parked in the caller's workspace (pooled) and added
 *        by a second kernel: long K over tiles too few for SK64's halves to fill the SMs. Kernels of their own:
 *        the pooled code in the unsplit shapes cost 5-8% on small problems (bench/NOTES.md, tenth session);
 *  PK128 the same on 128 x 128 tiles (two consumer warpgroups): fewer bytes per flop where 64 x 64 tiles fill the
 *        SMs without a split but run at their load floor;
 *  PK96, PK64N96  the same on 128 x 96 and 64 x 96 tiles (cuBLAS's split-K tile), K-major B: their tile counts
 *        fill the SMs with parts where 64- and 128-wide tiles leave SMs idle (n a multiple of 96 above all);
 *  PK192, PK256  the same on 128 x 192 and 128 x 256 tiles, K-major B: for bf16 K of 256 k-blocks or more over
 *        12-22 such tiles, where their fewer L2 -> SM bytes per flop outweighed the larger partial tiles to add
 *        while a tile's parts ran side by side; with tile-major parts PK128 ties or beats them, so the route takes
 *        them only where n is off the 128-column grid (or PK128's parts do not fit the workspace);
 *  SWn   skinny M (m <= 64, row-major A): D^T = op(B)^T A^T, so the problem's N fills 64-row tiles and M is
 *        the tile width; one consumer warpgroup, deep ring (the shape streams B at memory speed), K split
 *        over the cluster as in SK64, D written transposed from registers;
 *  T208 ... T96  nn as D^T = B^T A^T in persistent tiles: the kernel's B is then A^T, K-major, so the widths
 *        off the 64-column grid serve nn too (over M); D is staged transposed and stored by TMA.
 * Grid: persistent: min(tiles, SMs); others: cluster * ceil(tiles * split / cluster). Tiles count in the
 * kernel's own (swapped) m x n. */
#define HK_GEMM_SHAPES(X)                                                                                       \
    X(P320, _n320, 128, 320, 3, 1, 1, 0, 0, 0)                                                                  \
    X(P256, , 128, 256, 4, 1, 1, 0, 0, 0)                                                                       \
    X(P208, _n208, 128, 208, 4, 1, 1, 0, 1, 0)                                                                  \
    X(P192, _n192, 128, 192, 4, 1, 1, 0, 0, 0)                                                                  \
    X(P168, _n168, 128, 168, 4, 1, 1, 0, 1, 0)                                                                  \
    X(P144, _n144, 128, 144, 4, 1, 1, 0, 1, 0)                                                                  \
    X(P128, _n128, 128, 128, 6, 1, 1, 0, 0, 0)                                                                  \
    X(P96, _n96, 128, 96, 6, 1, 1, 0, 3, 0)                                                                     \
    X(M192N96, _m192n96, 192, 96, 4, 1, 1, 0, 3, 0)                                                             \
    X(M192N128, _m192n128, 192, 128, 4, 1, 1, 0, 4, 0)                                                          \
    X(PF128, _pf128, 128, 128, 6, 1, 1, 0, 5, 0)                                                                \
    X(SK64, _sk64, 64, 64, 8, 2, 0, 0, 0, 0)                                                                    \
    X(SK128, _sk128, 128, 64, 8, 2, 0, 0, 1, 0)                                                                 \
    X(M64, _m64, 64, 128, 8, 1, 0, 0, 0, 0)                                                                     \
    X(M64N64, _m64n64, 64, 64, 12, 1, 0, 0, 0, 0)                                                               \
    X(PK64, _pk64, 64, 64, 8, 1, 0, 0, 0, 1)                                                                    \
    X(PK128, _pk128, 128, 128, 6, 1, 0, 0, 0, 1)                                                                \
    X(PK96, _pk96, 128, 96, 6, 1, 0, 0, 1, 1)                                                                   \
    X(PK192, _pk192, 128, 192, 4, 1, 0, 0, 1, 1)                                                                \
    X(PK256, _pk256, 128, 256, 4, 1, 0, 0, 1, 1)                                                                \
    X(PK64N96, _pk64n96, 64, 96, 10, 1, 0, 0, 1, 1)                                                             \
    X(SW16, _sw16, 64, 16, 16, 2, 0, 1, 0, 0)                                                                   \
    X(SW32, _sw32, 64, 32, 14, 2, 0, 1, 0, 0)                                                                   \
    X(SW64, _sw64, 64, 64, 12, 2, 0, 1, 0, 0)                                                                   \
    X(T208, _t208, 128, 208, 4, 1, 1, 1, 2, 0)                                                                  \
    X(T168, _t168, 128, 168, 4, 1, 1, 1, 2, 0)                                                                  \
    X(T144, _t144, 128, 144, 4, 1, 1, 1, 2, 0)                                                                  \
    X(T96, _t96, 128, 96, 6, 1, 1, 1, 2, 0)

/* The shapes as indices, HK_GEMM_<id>, in table order. */
#define HK_GEMM_SHAPE_ID(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool) HK_GEMM_##id,
enum { HK_GEMM_SHAPES(HK_GEMM_SHAPE_ID) HK_GEMM_NSHAPES };
#undef HK_GEMM_SHAPE_ID

/* Launch shape by problem size (bench/NOTES.md, runs 5-11, has the timings behind it); used by the host glue
 * and the harness alike. Skinny M (row-major A): swapped operands, the problem's N in 64-row tiles and M as
 * the tile width, K split over the cluster while that still fits one wave. 64 x 64 tiles while they fit one
 * wave (most CTAs pulling operands, least L2 -> SM traffic per CTA), with K split in halves over a cluster
 * (SK64) for long K over at most half a wave; else 64 x 128 for short K over one wave (also for long K while
 * they fill half the SMs). Otherwise persistent 128-row tiles of the width whose waves cost least: rounds of
 * tiles (ceil(tiles / SMs)) x width x the width's cost, so a width that fills the last wave better wins when
 * its narrower tile pays for itself (widths off the 64-column grid for K-major B, trans_b = 1, and for nn
 * through the swapped T shapes, whose tiles run over N x M). box_k: elements of K per k-block; promote: e4m3
 * with fp32 accumulation, whose widths have costs of their own (M192N128 and PF128 cheapest, bench/NOTES.md
 * ninth and twenty-ninth sessions); workspace_bytes: the caller's workspace, for a pooled K split (below); *split:
 * CTAs sharing a tile's K. */
static inline int64_t hk_gemm_cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* e4m3 with fp32 accumulation (params.promote) holds a second accumulator per consumer, the k-block's product:
 * two consumers of tiles up to 192 wide (setmaxnreg 232), or M192N128's three of 128 (setmaxnreg 160; M192N96's
 * three run without setmaxnreg, 128 registers each). Where three accumulators fit (tiles up to 128 wide on one
 * or two consumers), the next k-block's product is in flight while one is added (gemm.cu). */
#define HK_GEMM_PROMOTE_FITS(bm, bn) (((bm) <= 128 && (bn) <= 192) || ((bm) == 192 && (bn) == 128))

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

/* K split through the workspace (pooled shapes): parts of a tile on separate CTAs, one each, park their fp32
 * partial tiles there; a second kernel (hk_gemm_sm90_pooled_sum_<out><shape suffix>, HK_GEMM_POOLED_SUM_CTAS of 128
 * threads) adds them and writes D. */
#define HK_GEMM_POOLED_MAX 16
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
/* The finale of a persistent walk: where the tiles fill two rounds or more but the last one only in part, the last two
 * rounds' tiles (the finale tiles) are split into `parts` parts of K, run part-major: every part 0 first, then every
 * part 1, ..., each CTA taking every grid-th of them, so that CTAs running at once read the same k-blocks (stream-K's
 * ranges, which start at a different k-block on every CTA, ran 30-35% slower: bench/NOTES.md, twenty-second session).
 * Each part parks its partial tile in the workspace and counts itself in the tile's counter; the last to count adds
 * the parts in part order and writes D (gemm.cu gemm_finale_meet). Workspace: a counter per finale tile and consumer
 * warpgroup (zeroed before each launch), then a slot of bm x bn floats per part. */
#ifdef __CUDACC__
#define HK_GEMM_HOST_DEVICE __host__ __device__ /* the kernels walk the finale the host plans */
#else
#define HK_GEMM_HOST_DEVICE
#endif
static inline HK_GEMM_HOST_DEVICE int64_t hk_gemm_finale_tiles(int64_t tiles, int64_t ctas)
{
    return tiles >= 2 * ctas && tiles % ctas != 0 ? tiles - (tiles / ctas - 1) * ctas : 0;
}
/* Parts of K per finale tile: 2 or 3, the fewer of those whose rounds of parts take least, where they save a quarter
 * of a tile's time or more against the two rounds of whole tiles, with parts of 64 k-blocks or more (twenty-second
 * session, two calls: bf16 16384^3 +0.6 to +2.7%, 8192x8192x28672 +1.0 to +1.6%, 8192x28672x8192 +0.2 to +0.9%, e4m3
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
#define HK_GEMM_FINALE_COUNTER_BYTES(finale_tiles, bm) (((int64_t)(finale_tiles) * ((bm) / 64) * 4 + 255) / 256 * 256)
static inline int64_t hk_gemm_finale_bytes(int64_t finale_tiles, int64_t parts, int64_t bm, int64_t bn)
{
    return HK_GEMM_FINALE_COUNTER_BYTES(finale_tiles, bm) + finale_tiles * parts * bm * bn * 4;
}
/* one CTA per 8-column strip of each 64 rows of a tile */
#define HK_GEMM_POOLED_SUM_CTAS(tiles, bm, bn) ((tiles) * ((bm) / 64) * ((bn) / 8))
/* Unused dynamic shared memory that the sum kernel is launched with where each part's CTA holds a whole SM (128-row
 * pooled tiles) and the sum CTAs are at most 4 per SM: then at most ceil(ctas / sms) share an SM. They launch while the
 * parts' CTAs exit, and without a cap (registers allow 9 per SM) they pile onto the SMs freed first and add the parts
 * with a part of the GPU's load bandwidth: +7-9% at 384-512 sum CTAs; at 960-1024 (8 per SM) within 1%; with 64-row
 * tiles, whose parts leave room on their SMs for sum CTAs, -7% to +6% (bench/NOTES.md, seventeenth session). The
 * launch prefers the largest shared-memory carveout (backends/cuda/driver.c), 228 KiB per SM on sm_90, 1 KiB of it
 * reserved per CTA; the 8 KiB margin absorbs the allocation granularity. 0: no cap. */
#define HK_GEMM_SM_SHARED 233472
static inline uint32_t hk_gemm_pooled_sum_shared(int64_t bm, int64_t ctas, int64_t sms)
{
    const int64_t per_sm = hk_gemm_cdiv(ctas, sms);
    return bm == 128 && per_sm <= 4 ? (uint32_t)(HK_GEMM_SM_SHARED / per_sm - 1024 - 8192) : 0;
}

static inline int hk_gemm_route(int64_t m, int64_t n, int64_t k, int trans_a, int trans_b, int64_t box_k, int promote,
                                int64_t sms, int64_t workspace_bytes, int32_t *split)
{
#define HK_GEMM_SHAPE_BN(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool) bn,
#define HK_GEMM_SHAPE_BM(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool) bm,
#define HK_GEMM_SHAPE_LAY(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool) lay,
#define HK_GEMM_SHAPE_SWAP(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool) swap,
    static const int16_t bn_of[] = {HK_GEMM_SHAPES(HK_GEMM_SHAPE_BN)}, bm_of[] = {HK_GEMM_SHAPES(HK_GEMM_SHAPE_BM)};
    static const int16_t lay_of[] = {HK_GEMM_SHAPES(HK_GEMM_SHAPE_LAY)};
    static const int16_t swap_of[] = {HK_GEMM_SHAPES(HK_GEMM_SHAPE_SWAP)};
    /* Persistent tiles and their time per tile element relative to 128 x 256 (per mille, fitted to multi-wave
     * shapes on the H200 in runs 8-11, every column stored by TMA; P320 and M192N96 in the sixth session's calls,
     * bench/NOTES.md): narrower tiles read more shared-memory bytes per flop. One-round shapes read higher costs
     * (their fixed time does not shrink with the width), but the order of the widths that fit one round stays the
     * same there. Second column: e4m3 with fp32 accumulation (ninth session), where tiles of up to 128 columns
     * keep a second k-block in flight and wider ones cannot; 0: not for that mode. P96 there since the twentieth
     * session: against P128 / P144 +0-34% on 14 rows it would take, against M192N128 -3% to +10% on 4. There PF128
     * (P128 with the lazy stores) replaces P128 since the twenty-ninth session: +0.7-2.5% over P128 on multi-round
     * rows, and as fast per element as M192N128 (16384^3 +1.3%, 8192 x 4096 x 4096 +2.6%, 8192^3 level). */
    static const int16_t widths[][3] = {{HK_GEMM_P256, 1000, 0}, {HK_GEMM_P320, 1000, 0}, {HK_GEMM_P208, 1030, 0},
                                        {HK_GEMM_P192, 1030, 1060}, {HK_GEMM_P168, 1070, 1130},
                                        {HK_GEMM_P144, 1070, 1130}, {HK_GEMM_P128, 1050, 0},
                                        {HK_GEMM_P96, 1135, 1200}, {HK_GEMM_M192N96, 1300, 0},
                                        {HK_GEMM_M192N128, 0, 940}, {HK_GEMM_PF128, 0, 940},
                                        {HK_GEMM_T208, 1030, 0}, {HK_GEMM_T168, 1070, 0},
                                        {HK_GEMM_T144, 1070, 0}, {HK_GEMM_T96, 1135, 0}};
    const bool fp8 = box_k == HK_GEMM_BOX_K; /* one byte per element */
    const int64_t kblocks = hk_gemm_cdiv(k, box_k), tiles64 = hk_gemm_cdiv(m, 64) * hk_gemm_cdiv(n, 128);
    const int64_t tiles64x64 = hk_gemm_cdiv(m, 64) * hk_gemm_cdiv(n, 64);
    const int64_t tiles_m = hk_gemm_cdiv(m, 128), tiles128 = tiles_m * hk_gemm_cdiv(n, 128);
    int best = HK_GEMM_P256;
    int64_t best_cost = INT64_MAX;
    *split = 1;
    if (!trans_a && m <= 64 && m < n) {
        if (2 * hk_gemm_cdiv(n, 64) <= sms && kblocks >= 8)
            *split = 2;
        best = m <= 16 ? HK_GEMM_SW16 : m <= 32 ? HK_GEMM_SW32 : HK_GEMM_SW64;
    } else if (tiles64x64 <= sms) {
        /* 96-wide pooled tiles, K-major B only (bench/NOTES.md, thirteenth session). PK96 where m fills whole 128-row
         * tiles and the SMs hold at least 3 parts of 24 k-blocks: with n in whole 96-column tiles and K of 64
         * k-blocks or more, or where 64 x 64 tiles would split K in two (few) parts of 128 k-blocks or more (bf16;
         * fp8: 64) and n leaves at most 5% of the last 96-column tiles idle (bf16: PK64's two parts read 0.62-0.82
         * there; fp8: SK64's 0.66-0.94). */
        const int64_t rows64 = hk_gemm_cdiv(m, 64), cols96 = hk_gemm_cdiv(n, 96);
        const int64_t tiles96 = tiles_m * cols96, tiles64n96 = rows64 * cols96;
        const bool whole_rows = 2 * tiles_m == rows64, whole_cols96 = n % 96 == 0, few = 2 * tiles64x64 <= sms;
        const int64_t parts128 = hk_gemm_pooled_parts(tiles128, sms);
        const bool pk128_fits = parts128 >= 4 && hk_gemm_pooled_bytes(tiles128, parts128, 128, 128) <= workspace_bytes;
        /* bf16 K of 256 k-blocks or more over 4 tile rows or more: PK192 where n fills two or more whole 192-column
         * tiles and the SMs hold 6-8 parts, else PK256 the same with 256 columns and 8-11 parts, row-major A only
         * (fifteenth session: nt +5-17% over PK128 at 512x1024x16384 / 32768 and 1024x512x16384, nt and tt +4-13% over
         * PK96 at 512x768x16384 and 640x768x16384; at 2-3 tile rows, at 16 parts and PK256 in tt they lost). Since the
         * pooled CTAs run tile-major, PK128 ties or beats both on every such row with n in whole 128-column tiles
         * (eighteenth session: 512x768x16384 +10%, 640x768x16384 nt / tt +2% / +3%, 512x1024x16384 +1-3%), so
         * those rows take PK128. */
        if (!fp8 && trans_b && kblocks >= 256 && whole_rows && tiles_m >= 4) {
            /* shape, fewest and most parts, M-contiguous A (tt) taken */
            static const int16_t wide[][4] = {{HK_GEMM_PK192, 6, 8, 1}, {HK_GEMM_PK256, 8, 11, 0}};
            for (unsigned i = 0; i < sizeof wide / sizeof wide[0]; ++i) {
                const int64_t bn = bn_of[wide[i][0]], tiles = tiles_m * (n / bn);
                if (n % bn != 0 || n < 2 * bn || (trans_a && !wide[i][3])) /* as measured: two tile columns or more */
                    continue;
                const int64_t parts = hk_gemm_pooled_parts(tiles, sms);
                if (parts < wide[i][1] || parts > wide[i][2])
                    continue;
                if (n % 128 == 0 && pk128_fits) {
                    *split = (int32_t)parts128;
                    return HK_GEMM_PK128;
                }
                if (hk_gemm_pooled_bytes(tiles, parts, 128, bn) <= workspace_bytes) {
                    *split = (int32_t)parts;
                    return wide[i][0];
                }
            }
        }
        const int64_t parts64 = hk_gemm_pk64_parts(tiles64x64, kblocks, sms);
        const int64_t parts96 = hk_gemm_pooled_parts(tiles96, sms), parts64n96 = hk_gemm_pooled_parts(tiles64n96, sms);
        const bool long_halves = few && kblocks >= (fp8 ? 128 : 256) && parts64 <= 2 && 20 * 96 * cols96 <= 21 * n;
        /* fp8 there (SK64's halves before: +3-19%, fourteenth session) takes parts of 21 k-blocks or more, and where
         * the SMs hold more parts than that, as many of 24 as K holds (at 128 k-blocks 5 of the 8 beat 6 by 12%) */
        const bool fp8_halves = fp8 && long_halves && !whole_cols96;
        const int64_t pk96_parts = fp8_halves && kblocks < 21 * parts96 ? kblocks / 24 : parts96;
        if (trans_b && ((whole_cols96 && kblocks >= 64) || long_halves) && whole_rows && pk96_parts >= 3 &&
            (fp8_halves || kblocks >= 24 * pk96_parts) && /* fp8_halves' parts fit K by construction */
            hk_gemm_pooled_bytes(tiles96, pk96_parts, 128, 96) <= workspace_bytes) {
            *split = (int32_t)pk96_parts;
            return HK_GEMM_PK96;
        }
        /* PK64N96 in 2-4 parts of 16 k-blocks or more (with 8 parts it lost to PK64), 5-6 with K of 16384 or more
         * over 2+ x 6+ tiles (bf16, eighteenth session: 128x960x16384 s6, 256x576x16384 s5, +23-36% over PK64; fp8,
         * nineteenth: 128x1152x16384 s5, 128x960x16384 s6, 256x576x16384 s5 and the like, +14-27%), where n
         * fills whole 96-column tiles or its CTAs outnumber 64 x 64 tiles' (with PK64's parts where those fill at most
         * half the SMs) by a quarter; with K of 64 k-blocks or more where 64 x 64 tiles fill at most half the SMs
         * (few), else of 32-64 k-blocks in bf16 (fp8 lost) or of 64 with whole 96-column tiles (past 64 the 128-row
         * pooled tiles won). */
        const int64_t busy64 = few ? tiles64x64 * parts64 : tiles64x64;
        const bool fills = 4 * tiles64n96 * parts64n96 >= 5 * busy64;
        const bool pays = few ? kblocks >= 64 && (whole_cols96 || fills)
                              : kblocks <= 64 && ((whole_cols96 && kblocks == 64) || (!fp8 && kblocks >= 32 && fills));
        const bool more_parts = k >= 16384 && rows64 >= 2 && cols96 >= 6; /* as measured, bf16 and fp8 */
        if (trans_b && pays && parts64n96 >= 2 && parts64n96 <= (more_parts ? 6 : 4) && kblocks >= 16 * parts64n96 &&
            hk_gemm_pooled_bytes(tiles64n96, parts64n96, 64, 96) <= workspace_bytes) {
            *split = (int32_t)parts64n96;
            return HK_GEMM_PK64N96;
        }
        /* PK128 with as many parts as the SMs hold, at least 4, with m and n in whole 128-wide tiles on more than one
         * tile row (given the workspace), K of 128 k-blocks or more: where they beat M64N64 (twelfth session), and
         * where 64 x 64 tiles fill at most half the SMs (few) and would take two parts (PK64 in bf16, SK64 in fp8)
         * and 96-column tiles do not fit n (fourteenth session, from 256 k-blocks: 512x512x16384 0.62 -> 0.83; since
         * the pooled CTAs run tile-major also from 128, nineteenth session: 384x512x8192 +12-15% in nt / tt / nn,
         * 512x512x8192 +2-5%, 512x512x12288 +9-10%, 1536x128x8192 +16%; fp8 from K = 16384, twentieth session:
         * +12-71% over SK64 on 12 rows, fast and fp32 accumulation). */
        const bool whole_cols128 = 2 * hk_gemm_cdiv(n, 128) == hk_gemm_cdiv(n, 64);
        const bool pk128 = pk128_fits && whole_rows && whole_cols128 && tiles_m > 1 && kblocks >= 128 &&
                           (!few || parts64 <= 2);
        if (pk128) {
            *split = (int32_t)parts128;
            best = HK_GEMM_PK128;
        } else if (few && kblocks >= 32) {
            /* K split in two over a cluster (SK64), or through the workspace in PK64's parts where there are more than
             * two (since the sum kernel needs few registers they beat SK64 on every such row measured, by 11-91%), or
             * two in bf16 (-1% to +14%; fp8 lost up to 6%: bench/NOTES.md, twelfth session) */
            const bool pooled = (parts64 > 2 || (parts64 == 2 && !fp8)) &&
                                hk_gemm_pooled_bytes(tiles64x64, parts64, 64, 64) <= workspace_bytes;
            *split = pooled ? (int32_t)parts64 : 2;
            best = pooled ? HK_GEMM_PK64 : HK_GEMM_SK64;
        } else if (trans_b && kblocks >= 64 && whole_rows && (promote || tiles_m <= (fp8 ? 3 : 1))) {
            /* SK128 where it beat M64N64 (twelfth session): K of 64 k-blocks or more, m in whole 128-row tiles, with
             * fp32 accumulation at every m measured (up to 640), with fast accumulation up to 3 tile rows, in bf16 at
             * one (with 2-5 it lost 3-18%) */
            *split = 2;
            best = HK_GEMM_SK128;
        } else {
            best = HK_GEMM_M64N64;
        }
    } else if (tiles64 <= sms && (2 * tiles64 > sms || kblocks < 32)) {
        best = HK_GEMM_M64;
    } else {
        for (unsigned i = 0; i < sizeof widths / sizeof widths[0]; ++i) {
            const int id = widths[i][0];
            const int64_t bm = bm_of[id], bn = bn_of[id], per_mille = widths[i][promote ? 2 : 1];
            if (per_mille == 0 || !hk_gemm_layout_built(lay_of[id], swap_of[id], fp8, trans_a, trans_b, promote))
                continue;
            /* tiles in the kernel's own (swapped) m x n */
            const int64_t tiles = swap_of[id] ? hk_gemm_cdiv(n, bm) * hk_gemm_cdiv(m, bn)
                                              : hk_gemm_cdiv(m, bm) * hk_gemm_cdiv(n, bn);
            /* tn's P96 (B in 32-column boxes) costs 1/8 more, and in one round it beats P128 only while 128-wide
             * tiles leave a third of the SMs idle (1152^3: 0.93 against 0.85; 1216^3: 0.86 against 0.91) */
            const int p96_tn = id == HK_GEMM_P96 && !trans_b;
            if (p96_tn && tiles128 <= sms && 3 * tiles128 >= 2 * sms)
                continue;
            int64_t cost = hk_gemm_cdiv(tiles, sms) * (bm / 64) * bn * per_mille;
            /* one round of 128 x 256 tiles costs 1/8 more: P128 in two rounds beat it by 2-6% in every layout (bf16
             * 2048^2 x 2048-4096, 1792 x 2304 x 2048, 1792^3; e4m3 2048^2 x 1024-4096), level at e4m3 2048^2 x 8192 and
             * 4096 x 1024 x 4096 (twenty-fourth session) */
            if (p96_tn || (id == HK_GEMM_P256 && tiles <= sms))
                cost += cost / 8;
            if (cost < best_cost) {
                best_cost = cost;
                best = id;
            }
        }
    }
    return best;
#undef HK_GEMM_SHAPE_BN
#undef HK_GEMM_SHAPE_BM
#undef HK_GEMM_SHAPE_LAY
#undef HK_GEMM_SHAPE_SWAP
}

/* Threads: a producer warpgroup and one consumer warpgroup per 64 tile rows. */
#define HK_GEMM_THREADS(bm) (128 + 2 * (bm))
/* Ring stages of A (bm rows) and B (bn rows), 128 bytes each; per consumer warpgroup HK_GEMM_EPI_BUFS buffers of
 * 8 KiB (64 rows x 128 bytes) staging the TMA stores of D (none for reg_store shapes, the one-tile swapped ones, which
 * store from registers); 1 KiB alignment slack. */
#define HK_GEMM_REG_STORE(persist, swap) ((swap) && !(persist))
#define HK_GEMM_SMEM_LIMIT 232448 /* dynamic shared memory per CTA on sm_90 (227 KiB) */
/* Two store buffers per consumer. P256 had the ring's leftover for five, so that a tile's four pieces were staged at
 * once for its lazy stores (one per k-block of the next unit, gemm.cu); a fourth ring stage in their place gains more
 * (its loads land in time where three stages left the k-loop waiting: bench/NOTES.md, thirty-first session), and the
 * lazy stores now stage two pieces at a time. */
#define HK_GEMM_EPI_BUFS(persist, swap) (HK_GEMM_REG_STORE(persist, swap) ? 0 : 2)
#define HK_GEMM_SHARED_BYTES(bm, bn, stages, persist, swap)                                                           \
    ((stages) * ((bm) + (bn)) * 128 + (bm) / 64 * HK_GEMM_EPI_BUFS(persist, swap) * 8192 + 1024)
/* Columns per TMA box of a tile `cols` wide of an M/N-contiguous operand: 64 (rows of 128 bytes, 128-byte
 * swizzle), or 32 (64 bytes, 64-byte swizzle) where the width is 32 past a multiple of 64. */
#define HK_GEMM_MN_BOX(cols) ((cols) % 64 ? 32 : 64)
/* A K-major operand tile of `rows` rows comes in one TMA box, or two of half the rows past the 256 a box allows. */
#define HK_GEMM_KMAJOR_BOX_ROWS(rows) ((rows) <= 256 ? (rows) : (rows) / 2)
/* The tail that map_t stores, 0 for none: the tile's columns past its last whole 128-byte chunk (a box of that
 * width x HK_GEMM_EPI_ROWS rows); swapped shapes: D's rows past the tile's last whole 64 (that many rows x 128
 * bytes). */
#define HK_GEMM_TAIL(bn, swap, esize) ((swap) ? (bn) % HK_GEMM_EPI_ROWS : (bn) % (128 / (esize)))

/* TMA can address rows at p, ld elements of esize bytes apart: 16-byte aligned base and pitch, pitch < 2^40. */
static inline int hk_gemm_tma_rows_ok(const void *p, int64_t ld, int64_t esize)
{
    return ((uintptr_t)p & 15u) == 0 && (ld * esize) % 16 == 0 && (uint64_t)(ld * esize) < (1ull << 40);
}

/* D leaves through TMA stores (params.tma_store): the shape stages D, its rows are TMA-addressable, and n is a
 * whole number of 16-byte groups (the H200 clips a store box's inner dimension only to 16 bytes, so a ragged n
 * would overwrite a padded ldd's padding: bench/NOTES.md GEMM run 12). */
static inline int hk_gemm_tma_store_ok(int persist, int swap, const void *d, int64_t ldd, int64_t n, int64_t esize)
{
    return !HK_GEMM_REG_STORE(persist, swap) && hk_gemm_tma_rows_ok(d, ldd, esize) && (n * esize) % 16 == 0;
}

typedef struct hk_gemm_params {
    int32_t m, n, k;   /* the kernel's problem: with swapped operands m and n are the caller's n and m */
    int32_t group_m;   /* tile rows per L2 group */
    int32_t tma_store; /* D meets TMA rules (16-byte aligned base and row pitch): store through map_d (and the
                        * tile columns past the last whole 128-byte chunk through map_t), else from registers */
    int32_t vec2;      /* else: D (and C) allow 2-element stores (even ld, even n, aligned pointers) */
    int32_t split;     /* CTAs per tile splitting K: in clusters of 2, 1 or 2 (the halves meet in distributed shared
                        * memory); pooled shapes 1 to HK_GEMM_POOLED_MAX (the parts meet in the workspace); others 1 */
    int32_t promote;   /* e4m3 on HK_GEMM_PROMOTE_FITS shapes: each k-block's product (tensor-core fp8 accumulation)
                        * is added to the fp32 accumulator by the consumer; 0: the tensor cores accumulate all of K */
    void *d;
    const void *c;     /* read only when beta != 0; may alias d */
    int64_t ldd, ldc;
    float alpha;       /* alpha * scale_a * scale_b */
    float beta;
    void *workspace;   /* pooled split: a slot of bm x bn floats per part per tile; the finale's counters and slots */
    int32_t finale;    /* persistent shapes: parts of K per tile of the walk's last two rounds (0: no finale) */
    int32_t walk_group;     /* the tile walk's divisors (hk_gemm_set_walk): group_m x tiles_n tiles per group, */
    int32_t walk_last_rows; /* the last group's tile rows, */
    float walk_rcp[3];      /* and the reciprocals of walk_group, group_m and walk_last_rows */
    int32_t col_last;       /* the first column of the last tile column (hk_gemm_col_last) */
} hk_gemm_params;

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
 * set the time of one-round shapes (bench/NOTES.md, thirty-fourth session). It recomputes the last columns of its
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

#endif
