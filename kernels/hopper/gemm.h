/* Launch shapes of kernels/hopper/gemm.cu and the constants its kernels and their launch plan
 * (backends/cuda/gemm_plan.c) share. Every kernel takes (map_a, map_b, map_d, map_t, params), the tensor maps
 * passed by value (__grid_constant__): map_t stores D's columns past a tile's last whole 128-byte chunk (T
 * shapes: D's rows past the tile's last whole 64); params is kernels/common/gemm_params.h's. */
#ifndef HK_HOPPER_GEMM_H
#define HK_HOPPER_GEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "common/gemm_params.h"

#define HK_GEMM_BOX_K 128  /* bytes of K per k-block (64 bf16 or 128 e4m3): one 128-byte swizzle row */
#define HK_GEMM_EPI_ROWS 64 /* D store box: 64 rows x 128 bytes */

/* Launch shapes, one kernel family each (name suffix). Columns: id, suffix, tile rows (64 per consumer
 * warpgroup), tile columns, ring stages, cluster size, persistent, swapped operands, layouts built (0: all
 * that the operand order allows, 1: K-major B only (trans_b = 1), 2: nn only, 3: K-major B, and tn, 4: e4m3 nt
 * only, 5: e4m3 nt with fp32 accumulation only), K split through the caller's workspace (pooled).
 * An N-contiguous B comes in boxes of HK_GEMM_MN_BOX columns: 64 (128-byte swizzle), or 32 (64-byte swizzle) for
 * the 96-wide tiles, which serve tn that way (nn has the swapped T shapes). Other widths off the 64 grid are built
 * for K-major B only: whole 64-column boxes for a partial one cost 8-23%.
 *  P256  persistent, one CTA per SM walks 128 x 256 tiles in L2-friendly groups;
 *  P320  the same 320 wide (two wgmma per k-step, 256 + 64 columns): one round where 256 needs two;
 *  P208 ... P96  the same with narrower tiles, for tile counts that fill the last wave of wider tiles badly
 *        (the host picks the width by a wave-fill model);
 *  M192N96  persistent 192 x 96 tiles, three consumer warpgroups (tn: 128 tiles at 1536^3, one round);
 *  M192N128  persistent 192 x 128 tiles in three consumer warpgroups, e4m3 with fp32 accumulation only: while one
 *        consumer adds a k-block's sum, two can keep the tensor cores busy (P192's two consumers: 0.89-0.91x of
 *        cuBLAS's default mode, this shape 0.92-0.99x);
 *  PF128  P128 for e4m3 with fp32 accumulation only, with lazy stores (a tile's pieces staged before the next unit's
 *        k-loop and stored one per k-block of it): +0.7-2.5% over P128 where the lazy stores cost the other modes of
 *        P128 1-5%;
 *  SK64  one 64 x 64 tile per CTA (one consumer warpgroup), clusters of 2; with params.split = 2 both CTAs of a
 *        cluster share a tile, each taking half of K, and add their partial tiles through distributed shared
 *        memory (no workspace), each storing half of its columns. For long K over at most half a wave of
 *        tiles (it replaced a 128 x 128 form, SK2, that served such shapes with a quarter of the CTAs);
 *  SK128  SK64's cluster split on 128 x 64 tiles (two consumer warpgroups): where m fills whole 128-row tiles it
 *        runs as many CTAs as M64N64 with half the k-blocks each and a quarter fewer bytes per flop; long K only;
 *  M64, M64N64  one 64 x 128 or 64 x 64 tile per CTA, one consumer warpgroup, no cluster (a cluster launch
 *        cost ~10% at these sizes): small problems, more CTAs than 128-row tiles; M64N64's 12 stages keep more
 *        bytes in flight, which its long-K rows (latency-bound, not L2-bound) gain 4-7% from;
 *  PK64  M64N64 with K in params.split parts, one per CTA, parked in the caller's workspace (pooled) and added
 *        by a second kernel: long K over tiles too few for SK64's halves to fill the SMs. Kernels of their own:
 *        the pooled code in the unsplit shapes cost 5-8% on small problems;
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

/* f16 operands (gemm_f16.cu: the bf16 kernels with the f16 wgmma) come in the shapes the route takes most, in every
 * layout and to every output type: P256, P128 (persistent tiles by width) and M64N64 (one wave of small tiles); the
 * launch plan maps the route's other shapes to the nearest of these (backends/cuda/gemm_plan.c), which keeps the
 * cubin build short. */
#define HK_GEMM_F16_BUILT(shape) ((shape) == HK_GEMM_P256 || (shape) == HK_GEMM_P128 || (shape) == HK_GEMM_M64N64)

/* e4m3 with fp32 accumulation (params.promote) holds a second accumulator per consumer, the k-block's product:
 * two consumers of tiles up to 192 wide (setmaxnreg 232), or M192N128's three of 128 (setmaxnreg 160; M192N96's
 * three run without setmaxnreg, 128 registers each). Where three accumulators fit (tiles up to 128 wide on one
 * or two consumers), the next k-block's product is in flight while one is added (gemm.cu). */
#define HK_GEMM_PROMOTE_FITS(bm, bn) (((bm) <= 128 && (bn) <= 192) || ((bm) == 192 && (bn) == 128))

/* K split through the workspace (pooled shapes): parts of a tile on separate CTAs, one each, park their fp32
 * partial tiles there; a second kernel (hk_gemm_sm90_pooled_sum_<out><shape suffix>, HK_GEMM_POOLED_SUM_CTAS of 128
 * threads) adds them and writes D. */
#define HK_GEMM_POOLED_MAX 16
/* The finale of a persistent walk: where the tiles fill two rounds or more but the last one only in part, the last two
 * rounds' tiles (the finale tiles) are split into `parts` parts of K, run part-major: every part 0 first, then every
 * part 1, ..., each CTA taking every grid-th of them, so that CTAs running at once read the same k-blocks (stream-K's
 * ranges, which start at a different k-block on every CTA, ran 30-35% slower).
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
#define HK_GEMM_FINALE_COUNTER_BYTES(finale_tiles, bm) (((int64_t)(finale_tiles) * ((bm) / 64) * 4 + 255) / 256 * 256)
/* one CTA per 8-column strip of each 64 rows of a tile */
#define HK_GEMM_POOLED_SUM_CTAS(tiles, bm, bn) ((tiles) * ((bm) / 64) * ((bn) / 8))

/* Threads: a producer warpgroup and one consumer warpgroup per 64 tile rows. */
#define HK_GEMM_THREADS(bm) (128 + 2 * (bm))
/* Ring stages of A (bm rows) and B (bn rows), 128 bytes each; per consumer warpgroup HK_GEMM_EPI_BUFS buffers of
 * 8 KiB (64 rows x 128 bytes) staging the TMA stores of D (none for reg_store shapes, the one-tile swapped ones, which
 * store from registers); 1 KiB alignment slack. */
#define HK_GEMM_REG_STORE(persist, swap) ((swap) && !(persist))
#define HK_GEMM_SMEM_LIMIT 232448 /* dynamic shared memory per CTA on sm_90 (227 KiB) */
/* Two store buffers per consumer. P256 had the ring's leftover for five, so that a tile's four pieces were staged at
 * once for its lazy stores (one per k-block of the next unit, gemm.cu); a fourth ring stage in their place gains more
 * (its loads land in time where three stages left the k-loop waiting), and the
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

#endif