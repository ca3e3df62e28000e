/* The sm_90a GEMM's launch plans (gemm_plan.h). */
#include "gemm_plan.h"

#include <stdio.h>
#include <string.h>

#define HK_GEMM_SHAPE_INFO(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool)                              \
    {#id, #suffix, bm, bn, cluster, persist, swap, lay, pool, HK_GEMM_SHARED_BYTES(bm, bn, stages, persist, swap)},
const hk_gemm_shape hk_gemm_shapes[HK_GEMM_NSHAPES] = {HK_GEMM_SHAPES(HK_GEMM_SHAPE_INFO)};
#undef HK_GEMM_SHAPE_INFO

int hk_gemm_shape_named(const char *name, size_t len)
{
    for (int i = 0; i < HK_GEMM_NSHAPES; ++i) {
        const char *id = hk_gemm_shapes[i].name;
        size_t j = 0;
        while (j < len && id[j] && (name[j] | 0x20) == (id[j] | 0x20))
            ++j;
        if (j == len && id[j] == 0)
            return i;
    }
    return -1;
}

/* Launch shape by problem size; used by the host glue
 * and the harness alike. Skinny M (row-major A): swapped operands, the problem's N in 64-row tiles and M as
 * the tile width, K split over the cluster while that still fits one wave. 64 x 64 tiles while they fit one
 * wave (most CTAs pulling operands, least L2 -> SM traffic per CTA), with K split in halves over a cluster
 * (SK64) for long K over at most half a wave; else 64 x 128 for short K over one wave (also for long K while
 * they fill half the SMs). Otherwise persistent 128-row tiles of the width whose waves cost least: rounds of
 * tiles (ceil(tiles / SMs)) x width x the width's cost, so a width that fills the last wave better wins when
 * its narrower tile pays for itself (widths off the 64-column grid for K-major B, trans_b = 1, and for nn
 * through the swapped T shapes, whose tiles run over N x M). box_k: elements of K per k-block; promote: e4m3
 * with fp32 accumulation, whose widths have costs of their own (M192N128 and PF128 cheapest); workspace_bytes: the caller's workspace, for a pooled K split (below); *split:
 * CTAs sharing a tile's K. */

int hk_gemm_route(int64_t m, int64_t n, int64_t k, int trans_a, int trans_b, int64_t box_k, int promote, int64_t sms,
                  int64_t workspace_bytes, int32_t *split)
{
#define HK_GEMM_SHAPE_BN(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool) bn,
#define HK_GEMM_SHAPE_BM(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool) bm,
#define HK_GEMM_SHAPE_LAY(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool) lay,
#define HK_GEMM_SHAPE_SWAP(id, suffix, bm, bn, stages, cluster, persist, swap, lay, pool) swap,
    static const int16_t bn_of[] = {HK_GEMM_SHAPES(HK_GEMM_SHAPE_BN)}, bm_of[] = {HK_GEMM_SHAPES(HK_GEMM_SHAPE_BM)};
    static const int16_t lay_of[] = {HK_GEMM_SHAPES(HK_GEMM_SHAPE_LAY)};
    static const int16_t swap_of[] = {HK_GEMM_SHAPES(HK_GEMM_SHAPE_SWAP)};
    /* Persistent tiles and their time per tile element relative to 128 x 256 (per mille, fitted to multi-wave
     * shapes on the H200, every column stored by TMA): narrower tiles read more shared-memory bytes per flop.
     * One-round shapes read higher costs
     * (their fixed time does not shrink with the width), but the order of the widths that fit one round stays the
     * same there. Second column: e4m3 with fp32 accumulation, where tiles of up to 128 columns
     * keep a second k-block in flight and wider ones cannot; 0: not for that mode. P96 there: against P128 / P144 +0-34% on 14 rows it would take, against M192N128 -3% to +10% on 4. There PF128
     * (P128 with the lazy stores) replaces P128: +0.7-2.5% over P128 on multi-round
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
        /* 96-wide pooled tiles, K-major B only. PK96 where m fills whole 128-row
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
         * (nt +5-17% over PK128 at 512x1024x16384 / 32768 and 1024x512x16384, nt and tt +4-13% over
         * PK96 at 512x768x16384 and 640x768x16384; at 2-3 tile rows, at 16 parts and PK256 in tt they lost). Since the
         * pooled CTAs run tile-major, PK128 ties or beats both on every such row with n in whole 128-column tiles
         * (512x768x16384 +10%, 640x768x16384 nt / tt +2% / +3%, 512x1024x16384 +1-3%), so
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
        /* fp8 there (SK64's halves before: +3-19%) takes parts of 21 k-blocks or more, and where
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
         * over 2+ x 6+ tiles (bf16: 128x960x16384 s6, 256x576x16384 s5, +23-36% over PK64; fp8:
         * 128x1152x16384 s5, 128x960x16384 s6, 256x576x16384 s5 and the like, +14-27%), where n
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
         * tile row (given the workspace), K of 128 k-blocks or more: where they beat M64N64, and
         * where 64 x 64 tiles fill at most half the SMs (few) and would take two parts (PK64 in bf16, SK64 in fp8)
         * and 96-column tiles do not fit n (from 256 k-blocks: 512x512x16384 0.62 -> 0.83; since
         * the pooled CTAs run tile-major also from 128: 384x512x8192 +12-15% in nt / tt / nn,
         * 512x512x8192 +2-5%, 512x512x12288 +9-10%, 1536x128x8192 +16%; fp8 from K = 16384:
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
             * two in bf16 (-1% to +14%; fp8 lost up to 6%) */
            const bool pooled = (parts64 > 2 || (parts64 == 2 && !fp8)) &&
                                hk_gemm_pooled_bytes(tiles64x64, parts64, 64, 64) <= workspace_bytes;
            *split = pooled ? (int32_t)parts64 : 2;
            best = pooled ? HK_GEMM_PK64 : HK_GEMM_SK64;
        } else if (trans_b && kblocks >= 64 && whole_rows && (promote || tiles_m <= (fp8 ? 3 : 1))) {
            /* SK128 where it beat M64N64: K of 64 k-blocks or more, m in whole 128-row tiles, with
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
             * 4096 x 1024 x 4096 */
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

/* ---------------------------------------------------------------- the kernel set */

/* Operand and output types in kernel-name order: the index's in and out fields. */
static const char *const hk_gemm_ins[3] = {"bf16", "e4m3", "f16"};
static const char *const hk_gemm_outs[3] = {"bf16", "f32", "f16"};
#define HK_GEMM_MAIN_KERNELS (3 * 2 * 2 * 3 * HK_GEMM_NSHAPES) /* in type, trans_a, trans_b, out, shape */
enum { HK_GEMM_IN_BF16, HK_GEMM_IN_E4M3, HK_GEMM_IN_F16 };

static int hk_gemm_in_index(hk_dtype t)
{
    return t == HK_DTYPE_BF16 ? HK_GEMM_IN_BF16
           : t == HK_DTYPE_FP8_E4M3 ? HK_GEMM_IN_E4M3
           : t == HK_DTYPE_F16      ? HK_GEMM_IN_F16
                                    : -1;
}
static int hk_gemm_out_index(hk_dtype t) { return t == HK_DTYPE_BF16 ? 0 : t == HK_DTYPE_F32 ? 1 : t == HK_DTYPE_F16 ? 2 : -1; }

/* e4m3 without fp8_fast_accum: the tensor cores sum one k-block, the kernel adds the k-blocks in fp32 (params.promote). */
static int hk_gemm_promote(const hk_gemm_args *a) { return a->a_type == HK_DTYPE_FP8_E4M3 && !a->fp8_fast_accum; }

/* Built kernels (gemm.cu): bf16 to bf16/f32/f16, e4m3 to bf16/f32, in the layouts and accumulation modes
 * hk_gemm_layout_built names; f16 (gemm_f16.cu) to bf16/f32/f16 in every layout of the HK_GEMM_F16_BUILT shapes. */
static bool hk_gemm_built_for(int in, int trans_a, int trans_b, int out, int promote, int shape)
{
    const hk_gemm_shape *s = &hk_gemm_shapes[shape];
    if (in < 0 || out < 0)
        return false;
    if (in == HK_GEMM_IN_F16)
        return HK_GEMM_F16_BUILT(shape);
    const bool fp8 = in == HK_GEMM_IN_E4M3;
    return !(fp8 && out == 2) && hk_gemm_layout_built(s->lay, s->swap, fp8, trans_a, trans_b, promote);
}

bool hk_gemm_plan_built(const hk_gemm_args *a, int shape)
{
    return hk_gemm_built_for(hk_gemm_in_index(a->a_type), a->trans_a, a->trans_b, hk_gemm_out_index(a->d_type),
                             hk_gemm_promote(a), shape);
}

static bool hk_gemm_kernel_name(size_t index, char *buf, size_t size)
{
    if (index >= HK_GEMM_MAIN_KERNELS) { /* pooled sums: out x shape */
        const size_t i = index - HK_GEMM_MAIN_KERNELS, shape = i % HK_GEMM_NSHAPES;
        if (!hk_gemm_shapes[shape].pool)
            return false;
        snprintf(buf, size, "hk_gemm_sm90_pooled_sum_%s%s", hk_gemm_outs[i / HK_GEMM_NSHAPES], hk_gemm_shapes[shape].suffix);
        return true;
    }
    const int shape = (int)(index % HK_GEMM_NSHAPES), out = (int)(index / HK_GEMM_NSHAPES % 3);
    const int tb = (int)(index / (3 * HK_GEMM_NSHAPES) % 2), ta = (int)(index / (6 * HK_GEMM_NSHAPES) % 2);
    const int in = (int)(index / (12 * HK_GEMM_NSHAPES));
    /* a shape built for the layout serves both accumulation modes where it holds fp32 accumulation */
    if (!hk_gemm_built_for(in, ta, tb, out, 0, shape) && !hk_gemm_built_for(in, ta, tb, out, 1, shape))
        return false;
    snprintf(buf, size, "hk_gemm_sm90_%s_%c%c_%s%s", hk_gemm_ins[in], ta ? 't' : 'n', tb ? 't' : 'n', hk_gemm_outs[out],
             hk_gemm_shapes[shape].suffix);
    return true;
}

const hk_kernel_set hk_gemm_kernels = {HK_KERNELS_CUDA_GEMM, HK_GEMM_MAIN_KERNELS + 3 * HK_GEMM_NSHAPES,
                                       hk_gemm_kernel_name};

/* ---------------------------------------------------------------- plans */

/* CTAs of a launch of `tiles` tiles in `split` parts each. */
static int64_t hk_gemm_ctas(const hk_gemm_shape *sh, int64_t tiles, int32_t split, int64_t sms)
{
    const int64_t units = tiles * split; /* a unit: one part of K of one tile */
    return sh->persist ? (units < sms ? units : sms) : sh->cluster * hk_gemm_cdiv(units, sh->cluster);
}

/* The finale's parts of K (gemm.h) for a launch of `sh`: the rule's, or the forced split (2 or 3) where the tuning
 * forces this persistent shape and the tiles have a finale; 0 for none. */
static int32_t hk_gemm_plan_finale(const hk_gemm_args *a, const hk_tuning *tune, int shape, int64_t tiles, int64_t ctas)
{
    const hk_gemm_shape *sh = &hk_gemm_shapes[shape];
    if (!sh->persist || a->k <= 0 || !hk_gemm_finale_tiles(tiles, ctas))
        return 0;
    if (tune->gemm_forced && tune->gemm_shape == shape && (tune->gemm_split == 2 || tune->gemm_split == 3))
        return tune->gemm_split;
    return hk_gemm_finale_parts(tiles, ctas, hk_gemm_cdiv(a->k * (int64_t)hk_dtype_size(a->a_type), HK_GEMM_BOX_K));
}

/* Workspace bytes of a launch: the pooled split's slots, or the finale's counters and slots; 0 for none. */
static size_t hk_gemm_plan_bytes(const hk_gemm_args *a, const hk_tuning *tune, int shape, int32_t split, int64_t sms)
{
    const hk_gemm_shape *sh = &hk_gemm_shapes[shape];
    const int64_t km = sh->swap ? a->n : a->m, kn = sh->swap ? a->m : a->n;
    const int64_t tiles = hk_gemm_cdiv(km, sh->bm) * hk_gemm_cdiv(kn, sh->bn), ctas = hk_gemm_ctas(sh, tiles, split, sms);
    if (sh->pool)
        return (size_t)hk_gemm_pooled_bytes(tiles, split, sh->bm, sh->bn);
    const int32_t parts = hk_gemm_plan_finale(a, tune, shape, tiles, ctas);
    return parts ? (size_t)hk_gemm_finale_bytes(hk_gemm_finale_tiles(tiles, ctas), parts, sh->bm, sh->bn) : 0;
}

/* The launch shape and K split of a call with `workspace` bytes of workspace: the route's, or the forced shape's
 * where its kernel is built (and holds fp32 accumulation where asked); a forced split the shape cannot take (or,
 * pooled, the workspace cannot hold) is 1. */
static int hk_gemm_plan_shape(const hk_gemm_args *a, int64_t sms, const hk_tuning *tune, int64_t workspace, int32_t *split)
{
    const int promote = hk_gemm_promote(a);
    if (tune->gemm_forced && hk_gemm_plan_built(a, tune->gemm_shape) &&
        (!promote || HK_GEMM_PROMOTE_FITS(hk_gemm_shapes[tune->gemm_shape].bm, hk_gemm_shapes[tune->gemm_shape].bn))) {
        const int shape = tune->gemm_shape;
        const hk_gemm_shape *sh = &hk_gemm_shapes[shape];
        const int32_t most = sh->cluster == 2 ? 2 : sh->pool ? HK_GEMM_POOLED_MAX : 1;
        *split = tune->gemm_split;
        if (*split < 1 || *split > most || (sh->pool && (int64_t)hk_gemm_plan_bytes(a, tune, shape, *split, sms) > workspace))
            *split = 1;
        return shape;
    }
    const int shape = hk_gemm_route(a->m, a->n, a->k, a->trans_a, a->trans_b,
                                    HK_GEMM_BOX_K / (int64_t)hk_dtype_size(a->a_type), promote, sms, workspace, split);
    if (a->a_type != HK_DTYPE_F16 || HK_GEMM_F16_BUILT(shape))
        return shape;
    /* f16 where the route picks a shape not built for it: persistent tiles of the nearest width, else one wave of
     * 64 x 64 tiles, K unsplit */
    const hk_gemm_shape *sh = &hk_gemm_shapes[shape];
    *split = 1;
    return sh->persist ? (sh->bn >= 256 ? HK_GEMM_P256 : HK_GEMM_P128) : HK_GEMM_M64N64;
}

size_t hk_gemm_plan_workspace(const hk_gemm_args *a, int64_t sms, const hk_tuning *tune)
{
    if (a->m == 0 || a->n == 0 || a->k == 0)
        return 0;
    int32_t split = 1;
    const int shape = hk_gemm_plan_shape(a, sms, tune, INT64_MAX, &split);
    return hk_gemm_plan_bytes(a, tune, shape, split, sms);
}

void hk_gemm_plan_call(const hk_gemm_args *a, int64_t sms, const hk_tuning *tune, hk_gemm_plan *plan)
{
    const size_t ei = hk_dtype_size(a->a_type), eo = hk_dtype_size(a->d_type);
    memset(plan, 0, sizeof *plan);
    plan->split = 1;
    plan->shape = hk_gemm_plan_shape(a, sms, tune, a->workspace ? (int64_t)a->workspace_size : 0, &plan->split);
    const hk_gemm_shape *sh = &hk_gemm_shapes[plan->shape];
    /* swapped: the kernel's A is op(B)^T (N x K) and its B is A^T (K-major), its m x n is the caller's n x m */
    const int64_t km = sh->swap ? a->n : a->m, kn = sh->swap ? a->m : a->n;
    plan->tiles_m = hk_gemm_cdiv(km, sh->bm);
    plan->tiles_n = hk_gemm_cdiv(kn, sh->bn);
    /* a pooled split's parts write only the workspace; the sum kernel writes D from registers: no D maps */
    plan->pooled = plan->split > 1 && sh->pool;
    hk_gemm_params *p = &plan->params;
    p->m = (int32_t)km;
    p->n = (int32_t)kn;
    p->k = (int32_t)a->k;
    p->group_m = hk_gemm_walk_group(a->trans_a, a->trans_b, plan->tiles_m * plan->tiles_n, sms);
    p->tma_store = !plan->pooled && hk_gemm_tma_store_ok(sh->persist, sh->swap, a->d, a->ldd, a->n, (int64_t)eo);
    p->split = plan->split;
    p->promote = hk_gemm_promote(a);
    p->d = a->d;
    p->c = a->c;
    p->ldd = a->ldd;
    p->ldc = a->ldc;
    p->alpha = a->alpha * a->scale_a * a->scale_b;
    p->beta = a->beta;
    p->workspace = plan->pooled ? a->workspace : NULL;
    hk_gemm_set_walk(p, (int32_t)plan->tiles_m, (int32_t)plan->tiles_n);
    /* the kernel's B is N-contiguous for trans_b 0 unless swapped (then it is A^T, K-major) */
    p->col_last = hk_gemm_col_last(kn, sh->bn, !sh->swap && !a->trans_b, (int64_t)ei,
                                   hk_gemm_overlap(a->c, a->ldc, a->d, a->ldd, a->m, a->n, (int64_t)eo));
    p->vec2 = !sh->swap && a->ldd % 2 == 0 && a->n % 2 == 0 && ((uintptr_t)a->d % (2 * eo)) == 0 &&
              (!a->c || (a->ldc % 2 == 0 && (uintptr_t)a->c % (2 * eo) == 0));

    const int64_t tiles = plan->tiles_m * plan->tiles_n, ctas = hk_gemm_ctas(sh, tiles, plan->split, sms);
    /* the finale where the workspace holds it, its counters zeroed in stream order before the launch */
    const int32_t parts = hk_gemm_plan_finale(a, tune, plan->shape, tiles, ctas);
    const int64_t finale_tiles = hk_gemm_finale_tiles(tiles, ctas);
    if (parts && a->workspace && hk_gemm_finale_bytes(finale_tiles, parts, sh->bm, sh->bn) <= (int64_t)a->workspace_size) {
        p->finale = parts;
        p->workspace = a->workspace;
        plan->zero_words = (size_t)HK_GEMM_FINALE_COUNTER_BYTES(finale_tiles, sh->bm) / 4;
    }
    const int out = hk_gemm_out_index(a->d_type);
    const int layout = (hk_gemm_in_index(a->a_type) * 2 + (a->trans_a ? 1 : 0)) * 2 + (a->trans_b ? 1 : 0);
    plan->kernel = (size_t)(layout * 3 + out) * HK_GEMM_NSHAPES + (size_t)plan->shape;
    plan->grid = (unsigned)ctas;
    plan->block = HK_GEMM_THREADS(sh->bm);
    plan->shared = sh->smem;
    if (plan->pooled) {
        const int64_t sum_ctas = HK_GEMM_POOLED_SUM_CTAS(tiles, sh->bm, sh->bn);
        plan->sum_kernel = HK_GEMM_MAIN_KERNELS + (size_t)out * HK_GEMM_NSHAPES + (size_t)plan->shape;
        plan->sum_grid = (unsigned)sum_ctas;
        plan->sum_shared = hk_gemm_pooled_sum_shared(sh->bm, sum_ctas, sms);
    }
}
