/* hk_gemm against the float64 oracle on every available context. */
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { C_NULL, C_SEPARATE, C_ALIAS, C_NAN };

typedef struct gemm_case {
    const char *name;
    unsigned kinds;
    int64_t m, n, k;
    hk_dtype ab, d;
    int ta, tb;
    int64_t pad_a, pad_b, pad_c, pad_d; /* ld = smallest allowed + pad */
    float alpha, beta;
    int c_mode;
    float scale_a, scale_b;
    int fast; /* fp8_fast_accum: the tolerance of the tensor cores' reduced-precision fp8 accumulation */
} gemm_case;

#define BF HK_DTYPE_BF16
#define F16 HK_DTYPE_F16
#define F32 HK_DTYPE_F32
#define FN HK_DTYPE_FP8_E4M3
#define FNUZ HK_DTYPE_FP8_E4M3FNUZ

static const gemm_case cases[] = {
    /* transpose combinations, emulator-sized */
    {"nn_64x48x80", TH_ALL, 64, 48, 80, BF, BF, 0, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_64x48x80", TH_ALL, 64, 48, 80, BF, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"tn_64x48x80", TH_ALL, 64, 48, 80, BF, BF, 1, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"tt_64x48x80", TH_ALL, 64, 48, 80, BF, BF, 1, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    /* transpose combinations with ragged edges */
    {"nn_127x129x200", TH_NOT_EMU, 127, 129, 200, BF, BF, 0, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_127x129x200", TH_NOT_EMU, 127, 129, 200, BF, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"tn_127x129x200", TH_NOT_EMU, 127, 129, 200, BF, BF, 1, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"tt_127x129x200", TH_NOT_EMU, 127, 129, 200, BF, BF, 1, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    /* odd sizes */
    {"nt_1x1x1", TH_ALL, 1, 1, 1, BF, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_7x7x7", TH_ALL, 7, 7, 7, BF, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nn_7x13x127", TH_ALL, 7, 13, 127, BF, F32, 0, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_1000x128x1000", TH_NOT_EMU, 1000, 128, 1000, BF, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_1x1000x1000", TH_NOT_EMU, 1, 1000, 1000, BF, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"tn_1000x1x127", TH_NOT_EMU, 1000, 1, 127, BF, F32, 1, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    /* leading dimensions larger than the row (aligned and odd padding) */
    {"nt_ld_pad8", TH_ALL, 64, 64, 64, BF, BF, 0, 1, 8, 16, 0, 24, 1, 0, C_NULL, 0, 0, 0},
    {"tn_ld_pad8", TH_ALL, 64, 32, 96, BF, F32, 1, 0, 8, 8, 0, 8, 1, 0, C_NULL, 0, 0, 0},
    {"nn_ld_pad_odd", TH_NOT_EMU, 33, 65, 17, BF, BF, 0, 0, 3, 5, 0, 7, 1, 0, C_NULL, 0, 0, 0},
    {"tt_ld_pad_odd_f32", TH_ALL, 31, 9, 45, F32, F32, 1, 1, 1, 3, 0, 2, 1, 0, C_NULL, 0, 0, 0},
    /* alpha / beta */
    {"nt_alpha_beta_alias", TH_ALL, 64, 64, 64, BF, BF, 0, 1, 0, 0, 0, 0, 0.5f, -1.5f, C_ALIAS, 0, 0, 0},
    {"nn_alpha_beta_alias_f32_pad", TH_ALL, 48, 40, 32, BF, F32, 0, 0, 0, 0, 4, 4, -2.0f, 0.25f, C_ALIAS, 0, 0, 0},
    {"tn_beta_separate_c", TH_NOT_EMU, 37, 53, 71, BF, BF, 1, 0, 2, 6, 10, 3, 1.25f, 0.75f, C_SEPARATE, 0, 0, 0},
    {"nt_beta0_c_nan", TH_ALL, 32, 32, 64, BF, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NAN, 0, 0, 0},
    {"nt_alpha0_beta1", TH_NOT_EMU, 16, 24, 8, BF, F32, 0, 1, 0, 0, 0, 0, 0, 1, C_SEPARATE, 0, 0, 0},
    /* output and operand types */
    {"nt_bf16_to_f16", TH_ALL, 64, 32, 64, BF, F16, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_bf16_to_f32", TH_ALL, 64, 32, 64, BF, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_f16_to_f16", TH_ALL, 64, 32, 64, F16, F16, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nn_f16_to_bf16_odd", TH_NOT_EMU, 19, 23, 29, F16, BF, 0, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_f32_to_f32", TH_ALL, 32, 32, 32, F32, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"tt_f32_to_bf16_beta", TH_ALL, 50, 60, 70, F32, BF, 1, 1, 0, 0, 0, 0, 1, 1, C_ALIAS, 0, 0, 0},
    /* f16 operands in every layout to every output type (sm_90a: the TMA kernels where A and B rows are on 16
     * bytes); the emulator runs one output type per layout */
    {"nn_f16_to_bf16_72x80x96_beta", TH_ALL, 72, 80, 96, F16, BF, 0, 0, 0, 0, 0, 0, 1.5f, 0.5f, C_SEPARATE, 0, 0, 0},
    {"nn_f16_to_f32_72x80x96", TH_NOT_EMU, 72, 80, 96, F16, F32, 0, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nn_f16_to_f16_72x80x96", TH_NOT_EMU, 72, 80, 96, F16, F16, 0, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_f16_to_bf16_72x80x96", TH_NOT_EMU, 72, 80, 96, F16, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_f16_to_f32_72x80x96", TH_ALL, 72, 80, 96, F16, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_f16_to_f16_72x80x96_beta", TH_NOT_EMU, 72, 80, 96, F16, F16, 0, 1, 0, 0, 0, 0, 1.5f, 0.5f, C_SEPARATE, 0, 0, 0},
    {"tn_f16_to_bf16_72x80x96", TH_NOT_EMU, 72, 80, 96, F16, BF, 1, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"tn_f16_to_f32_72x80x96_beta", TH_NOT_EMU, 72, 80, 96, F16, F32, 1, 0, 0, 0, 0, 0, 1.5f, 0.5f, C_SEPARATE, 0, 0, 0},
    {"tn_f16_to_f16_72x80x96", TH_ALL, 72, 80, 96, F16, F16, 1, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"tt_f16_to_bf16_72x80x96_beta", TH_ALL, 72, 80, 96, F16, BF, 1, 1, 0, 0, 0, 0, 1.5f, 0.5f, C_SEPARATE, 0, 0, 0},
    {"tt_f16_to_f32_72x80x96", TH_NOT_EMU, 72, 80, 96, F16, F32, 1, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"tt_f16_to_f16_72x80x96", TH_NOT_EMU, 72, 80, 96, F16, F16, 1, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_f16_to_f16_1000x1500x1000", TH_GPU, 1000, 1500, 1000, F16, F16, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nn_f16_to_f32_1100x1000x600", TH_GPU, 1100, 1000, 600, F16, F32, 0, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"tt_f16_to_bf16_1500x1200x400_beta", TH_GPU, 1500, 1200, 400, F16, BF, 1, 1, 0, 0, 0, 0, 1, -0.5f, C_SEPARATE, 0, 0, 0},
    {"tn_f16_to_f16_2000x1000x520_alias", TH_GPU, 2000, 1000, 520, F16, F16, 1, 0, 0, 0, 0, 0, 0.5f, 0.5f, C_ALIAS, 0, 0, 0},
    /* fp32 operands in every layout: fp32 products and sums (a TF32 path misses the f32 bound) */
    {"nn_f32_to_f32_60x70x80", TH_ALL, 60, 70, 80, F32, F32, 0, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_f32_to_f32_60x70x80_beta_alias", TH_ALL, 60, 70, 80, F32, F32, 0, 1, 0, 0, 0, 0, -0.5f, 2, C_ALIAS, 0, 0, 0},
    {"tn_f32_to_bf16_60x70x80", TH_ALL, 60, 70, 80, F32, BF, 1, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"tt_f32_to_f16_60x70x80", TH_ALL, 60, 70, 80, F32, F16, 1, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_f32_to_f32_520x600x1000", TH_GPU, 520, 600, 1000, F32, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    /* any alignment: leading dimensions off the 16-byte grid, tiny and degenerate shapes (k = 1, m or n = 1); the
     * issue's large shapes on GPU contexts only (the CPU reference takes any layout alike, and under the sanitizers
     * it would take minutes over them) */
    {"nn_1x1x1", TH_ALL, 1, 1, 1, BF, BF, 0, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_2x3x5", TH_ALL, 2, 3, 5, BF, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"tt_2x3x5_f16_to_f32", TH_ALL, 2, 3, 5, F16, F32, 1, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nn_70x50x1_k1", TH_ALL, 70, 50, 1, BF, BF, 0, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"tn_f32_to_f32_70x50x1_k1", TH_ALL, 70, 50, 1, F32, F32, 1, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nn_1x300x77_m1", TH_ALL, 1, 300, 77, BF, F32, 0, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"tt_f16_to_f16_300x1x77_n1", TH_NOT_EMU, 300, 1, 77, F16, F16, 1, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nn_333x1000x777", TH_GPU, 333, 1000, 777, BF, BF, 0, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"tn_1000x333x777", TH_GPU, 1000, 333, 777, BF, BF, 1, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nn_f16_to_f16_333x1000x777", TH_GPU, 333, 1000, 777, F16, F16, 0, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_129x257x8191", TH_GPU, 129, 257, 8191, BF, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nn_4097x4095x33", TH_GPU, 4097, 4095, 33, BF, BF, 0, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nn_511x1023x2047_f32_alpha_beta", TH_GPU, 511, 1023, 2047, BF, F32, 0, 0, 0, 0, 0, 0, 0.75f, -0.5f, C_SEPARATE, 0, 0, 0},
    {"tt_333x1000x777_e4m3fn_to_f32", TH_GPU, 333, 1000, 777, FN, F32, 1, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.5f, 2.0f, 0},
    {"tn_e4m3fnuz_100x70x90_beta", TH_NOT_EMU, 100, 70, 90, FNUZ, BF, 1, 0, 0, 0, 0, 0, 1, 0.5f, C_SEPARATE, 1, 1, 0},
    /* fp8 with scales, both formats */
    {"nt_e4m3fn_scaled_to_bf16", TH_ALL, 64, 64, 128, FN, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.5f, 4.0f, 0},
    {"nt_e4m3fn_scaled_to_f32", TH_ALL, 64, 32, 64, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.125f, 3.0f, 0},
    {"nt_e4m3fn_default_scales", TH_ALL, 32, 32, 64, FN, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_e4m3fnuz_scaled_to_bf16", TH_ALL, 64, 64, 128, FNUZ, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.5f, 4.0f, 0},
    {"nt_e4m3fnuz_scaled_to_f32", TH_ALL, 64, 32, 64, FNUZ, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 2.0f, 0.25f, 0},
    /* long k with fp32 output: exposes accumulators narrower than the fp32 that hk.h promises */
    {"nt_bf16_k2048_to_f32", TH_ALL, 128, 128, 2048, BF, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_e4m3fn_k2048_to_f32", TH_ALL, 128, 128, 2048, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 1.0f, 1.0f, 0},
    {"nt_e4m3fnuz_k2048_to_f32", TH_ALL, 128, 128, 2048, FNUZ, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 1.0f, 1.0f, 0},
    /* the same with fp8_fast_accum, checked against the looser bound hk.h documents for it */
    {"nt_e4m3fn_k2048_fast_to_f32", TH_NOT_EMU, 128, 128, 2048, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 1.0f, 1.0f, 1},
    {"nt_e4m3fn_scaled_fast_to_bf16", TH_ALL, 64, 64, 128, FN, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.5f, 4.0f, 1},
    {"nn_e4m3fn_odd_beta", TH_NOT_EMU, 17, 31, 45, FN, BF, 0, 0, 0, 0, 0, 0, 0.5f, 0.5f, C_ALIAS, 1.5f, 1.0f, 0},
    {"tt_e4m3fnuz_odd", TH_NOT_EMU, 45, 17, 31, FNUZ, F32, 1, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.75f, 1.0f, 0},
    /* skinny M (sm_90a: swapped operands for row-major A, K split on the cluster; trans_a 1 takes 128-row tiles) */
    {"nt_skinny_16x1000x1040", TH_NOT_EMU, 16, 1000, 1040, BF, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nn_skinny_5x300x520_f32_beta", TH_NOT_EMU, 5, 300, 520, BF, F32, 0, 0, 8, 0, 3, 1, 0.5f, -1.0f, C_SEPARATE, 0, 0, 0},
    {"nt_skinny_33x700x264_f16_alias", TH_NOT_EMU, 33, 700, 264, BF, F16, 0, 1, 0, 8, 0, 8, 1.5f, 0.5f, C_ALIAS, 0, 0, 0},
    {"nt_skinny_64x130x96", TH_NOT_EMU, 64, 130, 96, BF, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"tn_skinny_16x400x200", TH_NOT_EMU, 16, 400, 200, BF, BF, 1, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_e4m3fn_skinny_fast_20x500x1024_to_f32", TH_NOT_EMU, 20, 500, 1024, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.5f, 2.0f, 1},
    /* sm_90a shapes by wave fill: 64x64 tiles, persistent 128 x 96/128/144/168/208/320 tiles (columns past the
     * last 64-wide chunk through a narrower TMA store box; widths off the 64 grid for K-major B; 96 also
     * for tn, its B in 32-column boxes under the 64-byte swizzle), 192 x 96 tiles in three warpgroups */
    {"nt_640x640x96_tiles64", TH_NOT_EMU, 640, 640, 96, BF, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_1152x1144x64_w96", TH_NOT_EMU, 1152, 1144, 64, BF, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_2176x2170x40_w320_f16_alias", TH_NOT_EMU, 2176, 2170, 40, BF, F16, 0, 1, 0, 0, 0, 6, 1.5f, 0.5f, C_ALIAS, 0, 0, 0},
    {"nt_1280x1280x64_w128_alias", TH_NOT_EMU, 1280, 1280, 64, BF, BF, 0, 1, 0, 0, 0, 0, 0.5f, 0.5f, C_ALIAS, 0, 0, 0},
    {"nt_1536x1536x72_w144_f32", TH_NOT_EMU, 1536, 1536, 72, BF, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nn_1536x1536x40_w192", TH_NOT_EMU, 1536, 1536, 40, BF, BF, 0, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"tt_1792x1790x40_w208", TH_NOT_EMU, 1792, 1790, 40, BF, BF, 1, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"tt_2304x2296x24_w168_f32_beta", TH_NOT_EMU, 2304, 2296, 24, BF, F32, 1, 1, 0, 0, 0, 0, 1, -1, C_SEPARATE, 0, 0, 0},
    {"tn_2168x2152x40_w320_beta", TH_NOT_EMU, 2168, 2152, 40, BF, BF, 1, 0, 0, 0, 0, 0, 0.5f, 2, C_SEPARATE, 0, 0, 0},
    {"tn_1528x1496x72_m192n96_f32_alias", TH_NOT_EMU, 1528, 1496, 72, BF, F32, 1, 0, 0, 8, 0, 0, 1.5f, 0.5f, C_ALIAS, 0, 0, 0},
    {"tn_1536x1536x40_m192n96_pad_d", TH_NOT_EMU, 1536, 1536, 40, BF, BF, 1, 0, 0, 0, 0, 6, 1, 0, C_NULL, 0, 0, 0},
    {"tn_1104x1144x40_w96_f16_beta", TH_NOT_EMU, 1104, 1144, 40, BF, F16, 1, 0, 8, 0, 0, 0, 1, 0.5f, C_SEPARATE, 0, 0, 0},
    /* nn as D^T = B^T A^T in persistent tiles over N x M (sm_90a T shapes): D staged transposed for TMA stores,
     * D rows past the tile's last 64 through the narrower box; register stores when n leaves 16-byte groups */
    {"nn_1530x1536x72_t144_pad_alias", TH_NOT_EMU, 1530, 1536, 72, BF, BF, 0, 0, 0, 0, 0, 8, 1.5f, 0.5f, C_ALIAS, 0, 0, 0},
    {"nn_2170x2176x40_w320_f32", TH_NOT_EMU, 2170, 2176, 40, BF, F32, 0, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nn_1792x1784x40_t208_f16_beta", TH_NOT_EMU, 1792, 1784, 40, BF, F16, 0, 0, 8, 8, 0, 0, 0.5f, -1, C_SEPARATE, 0, 0, 0},
    {"nn_1100x1150x600_t96_reg_pad", TH_NOT_EMU, 1100, 1150, 600, BF, BF, 0, 0, 0, 0, 2, 6, 1, 1, C_SEPARATE, 0, 0, 0},
    /* ragged rows in padded storage: D's ragged n must not spill into its padding (TMA store boxes clip n only
     * to 16 bytes); ragged k with NaN in A's and B's padding must not reach the sums (TMA load boxes) */
    {"nt_300x250x64_pad_d", TH_NOT_EMU, 300, 250, 64, BF, BF, 0, 1, 0, 0, 0, 6, 1, 0, C_NULL, 0, 0, 0},
    {"nt_2176x2170x40_w320_pad_d", TH_NOT_EMU, 2176, 2170, 40, BF, BF, 0, 1, 0, 0, 0, 6, 1, 0, C_NULL, 0, 0, 0},
    {"nt_200x136x36_pad_k", TH_NOT_EMU, 200, 136, 36, BF, BF, 0, 1, 4, 4, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"tt_136x200x1004_pad_k_f32", TH_NOT_EMU, 136, 200, 1004, BF, F32, 1, 1, 0, 4, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_e4m3fn_64x48x40_pad_k_fast", TH_NOT_EMU, 64, 48, 40, FN, BF, 0, 1, 8, 8, 0, 0, 1, 0, C_NULL, 1.0f, 1.0f, 1},
    {"nt_e4m3fn_1536x1530x128_w144_fast", TH_NOT_EMU, 1536, 1530, 128, FN, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.5f, 2.0f, 1},
    /* fp8 with fp32 accumulation on the sm_90a routes (k-blocks summed in fp32): persistent tiles, ragged, long k;
     * skinny with K split over the cluster; 64 x 64 tiles with K split; 64 x 128 tiles; C aliasing D */
    {"nt_e4m3fn_1000x1500x2000_to_f32", TH_GPU, 1000, 1500, 2000, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.5f, 2.0f, 0},
    {"nt_e4m3fn_1000x1530x784_alias", TH_GPU, 1000, 1530, 784, FN, BF, 0, 1, 0, 0, 0, 6, 0.5f, 0.5f, C_ALIAS, 1, 1, 0},
    {"nt_e4m3fn_skinny_20x500x1024_to_f32", TH_GPU, 20, 500, 1024, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.5f, 2.0f, 0},
    {"nt_e4m3fn_200x1024x4096_split_to_f32", TH_GPU, 200, 1024, 4096, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 1, 1, 0},
    {"nt_e4m3fn_1536x1920x512_m192n128_to_f32", TH_GPU, 1536, 1920, 512, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.5f, 2.0f, 0},
    {"nt_e4m3fn_640x1408x1040_m64_beta", TH_GPU, 640, 1408, 1040, FN, BF, 0, 1, 0, 0, 8, 0, 1, -1, C_SEPARATE, 1, 1, 0},
    /* one and three k-blocks (the in-flight pair's tails) on 64 x 128 tiles; 64 x 64 tiles over long k */
    {"nt_e4m3fn_600x1000x112_m64_to_f32", TH_GPU, 600, 1000, 112, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.5f, 2.0f, 0},
    {"nt_e4m3fn_600x1000x304_m64_to_f32", TH_GPU, 600, 1000, 304, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.5f, 2.0f, 0},
    {"nt_e4m3fn_128x2176x1040_m64n64_to_f32", TH_GPU, 128, 2176, 1040, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 1, 1, 0},
    {"nt_bf16_128x2176x2048_m64n64_beta", TH_GPU, 128, 2176, 2048, BF, BF, 0, 1, 0, 0, 0, 0, 1, 0.5f, C_ALIAS, 0, 0, 0},
    /* long k over few 64 x 64 tiles: K in halves over clusters of 2 (sm_90a SK64), half a tile's columns per CTA,
     * from registers for 2-byte D (narrower than a TMA store chunk), by TMA for f32 */
    {"nt_bf16_130x1000x4104_sk64_f16_beta", TH_GPU, 130, 1000, 4104, BF, F16, 0, 1, 0, 0, 0, 0, 1, -0.5f, C_SEPARATE, 0, 0, 0},
    {"tn_bf16_256x520x2048_sk64_f32", TH_GPU, 256, 520, 2048, BF, F32, 1, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
    {"nt_e4m3fn_128x640x8208_sk64_alias", TH_GPU, 128, 640, 8208, FN, BF, 0, 1, 0, 0, 0, 0, 0.5f, 0.5f, C_ALIAS, 1, 1, 0},
    /* one wave of 128 x 64 tiles over long k, K halved over clusters of 2 (sm_90a SK128): bf16 on one tile row, fp8
     * with fp32 accumulation on two */
    {"nt_bf16_128x2200x4096_sk128_alias", TH_GPU, 128, 2200, 4096, BF, BF, 0, 1, 0, 0, 0, 0, 1, 0.5f, C_ALIAS, 0, 0, 0},
    {"nt_e4m3fn_256x1100x8192_sk128", TH_GPU, 256, 1100, 8192, FN, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.5f, 2.0f, 0},
};

/* Pointers off 16 bytes (any element-aligned address is valid): A, B and a D apart from C start `off` elements
 * into their buffers; with `workspace`, the workspace hk_gemm_workspace_size asks for (sm_90a: A and B copied to
 * aligned rows there, their leading dimensions here being on 16 bytes). */
typedef struct offset_case {
    gemm_case g;
    int64_t off;
    int workspace;
} offset_case;

static const offset_case offset_cases[] = {
    {{"nt_100x70x90_odd_pointers", TH_ALL, 100, 70, 90, BF, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0}, 1, 0},
    {{"tn_f16_to_f32_100x70x90_odd_pointers_beta", TH_ALL, 100, 70, 90, F16, F32, 1, 0, 2, 0, 0, 0, 1, 1, C_SEPARATE, 0, 0, 0}, 3, 0},
    {{"nn_f32_to_f32_100x70x90_odd_pointers", TH_ALL, 100, 70, 90, F32, F32, 0, 0, 0, 1, 0, 0, 1, 0, C_NULL, 0, 0, 0}, 1, 0},
    {{"nt_e4m3fn_100x70x96_odd_pointers", TH_ALL, 100, 70, 96, FN, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 1, 1, 0}, 5, 0},
    {{"nt_f16_to_f16_100x72x96_odd_pointers_workspace", TH_ALL, 100, 72, 96, F16, F16, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0,
      0}, 1, 1},
};

/* Stores logical op(X) (rows x cols) as the matrix the library reads: transposed storage when trans. */
static const void *upload_operand(const th_ctx *c, hk_dtype t, const double *op, int64_t rows, int64_t cols, int trans,
                                  int64_t ld, int64_t off)
{
    double *stored = th_host(sizeof(double) * (size_t)(rows * cols > 0 ? rows * cols : 1));
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
            if (trans)
                stored[j * rows + i] = op[i * cols + j];
            else
                stored[i * cols + j] = op[i * cols + j];
        }
    const int64_t srows = trans ? cols : rows, scols = trans ? rows : cols;
    if (off == 0) {
        th_tensor x = th_matrix(t, srows, scols, ld);
        return th_dev_tensor(c, &x, stored);
    }
    /* off elements into a buffer of whole rows of ld, the padding NaN as th_dev_tensor leaves it */
    const int64_t total = off + srows * ld;
    double *flat = th_host(sizeof(double) * (size_t)total);
    for (int64_t i = 0; i < total; ++i)
        flat[i] = NAN;
    for (int64_t i = 0; i < srows; ++i)
        for (int64_t j = 0; j < scols; ++j)
            flat[off + i * ld + j] = stored[i * scols + j];
    th_tensor x = th_matrix(t, 1, total, total);
    return (const unsigned char *)th_dev_tensor(c, &x, flat) + off * (int64_t)hk_dtype_size(t);
}

static int is_fp8(hk_dtype t) { return t == FN || t == FNUZ; }

/* hk.h: only the sm_90a GEMM splits K through a workspace; CPU, emulator and HIP contexts always ask for none. */
static bool splits_k(const th_ctx *c) { return hk_context_backend(c->ctx) == HK_BACKEND_CUDA; }

/* One case; with a workspace: hk_gemm_workspace_size()'s (what hk.h documents for the context: bytes from a CUDA
 * context, none from any other), and a second call on the workspace as the first left it must give the same D, bit
 * for bit. */
static void run_gemm(const th_ctx *c, const gemm_case *g, int workspace, int64_t off)
{
    th_rng rng = th_rng_for_case();
    int64_t m = g->m, n = g->n, k = g->k;
    int64_t lda = (g->ta ? m : k) + g->pad_a, ldb = (g->tb ? k : n) + g->pad_b;
    int64_t ldd = n + g->pad_d, ldc = g->c_mode == C_ALIAS ? ldd : n + g->pad_c;

    double *a = th_host(sizeof(double) * (size_t)(m * k)), *b = th_host(sizeof(double) * (size_t)(k * n));
    double *cv = th_host(sizeof(double) * (size_t)(m * n)), *ref = th_host(sizeof(double) * (size_t)(m * n));
    th_fill_normal(&rng, g->ab, a, m * k, 1.0);
    th_fill_normal(&rng, g->ab, b, k * n, 1.0);
    th_fill_normal(&rng, g->d, cv, m * n, 2.0);

    hk_gemm_args args = HK_ARGS_INIT(hk_gemm_args);
    args.m = m;
    args.n = n;
    args.k = k;
    args.a_type = args.b_type = g->ab;
    args.d_type = g->d;
    args.trans_a = g->ta;
    args.trans_b = g->tb;
    args.a = upload_operand(c, g->ab, a, m, k, g->ta, lda, off);
    args.lda = lda;
    args.b = upload_operand(c, g->ab, b, k, n, g->tb, ldb, off);
    args.ldb = ldb;
    args.alpha = g->alpha;
    args.beta = g->beta;
    args.scale_a = g->scale_a;
    args.scale_b = g->scale_b;
    args.fp8_fast_accum = g->fast;

    th_tensor dt = th_matrix(g->d, m, n, ldd);
    th_tensor ct = th_matrix(g->d, m, n, ldc);
    if (g->c_mode == C_ALIAS) {
        args.d = th_dev_tensor(c, &dt, cv);
        args.c = args.d;
    } else {
        args.d = (unsigned char *)th_dev(c, th_bytes(&dt) + (size_t)off * hk_dtype_size(g->d)) +
                 off * (int64_t)hk_dtype_size(g->d);
        if (g->c_mode == C_SEPARATE)
            args.c = th_dev_tensor(c, &ct, cv);
        else if (g->c_mode == C_NAN)
            args.c = th_dev(c, th_bytes(&ct)); /* all NaN: must not be read with beta == 0 */
    }
    args.ldc = args.c ? ldc : 0;
    args.ldd = ldd;

    size_t ws_bytes = 0;
    if (workspace) {
        th_op_status(c, hk_gemm_workspace_size(c->ctx, &args, &ws_bytes), "hk_gemm_workspace_size");
        if (splits_k(c))
            th_expect(ws_bytes > 0, "a CUDA context wants a workspace for long k over few tiles");
        else
            th_expect(ws_bytes == 0, "a context whose GEMM never splits K asks for no workspace");
        args.workspace = ws_bytes ? th_dev(c, ws_bytes) : NULL; /* 0xFF: stale slots must not leak into D */
        args.workspace_size = ws_bytes;
    }
    th_op_status(c, hk_gemm(c->ctx, &args), "hk_gemm");

    double alpha = g->alpha;
    if (is_fp8(g->ab))
        alpha *= (g->scale_a != 0 ? g->scale_a : 1.0) * (g->scale_b != 0 ? g->scale_b : 1.0);
    orc_gemm(m, n, k, alpha, a, b, g->beta, g->c_mode == C_SEPARATE || g->c_mode == C_ALIAS ? cv : NULL, ref);

    bool ok = true;
    double *out = th_fetch_tensor(c, &dt, args.d, &ok, "D");
    th_tol tol = th_tol_for(g->d, c);
    if (g->fast) { /* hk.h: relative error about 1e-3 at k = 4096; entries grow like sqrt(k) */
        tol.norm = tol.rtol = fmax(tol.norm, 4e-3);
        tol.atol = fmax(tol.atol, 4e-3 * sqrt((double)k));
    } else if (is_fp8(g->ab) && hk_context_backend(c->ctx) == HK_BACKEND_CUDA) {
        /* hk.h: k-blocks summed in fp32, each at the tensor cores' precision: relative error about 1.3e-4 on
         * sm_90a whatever k (cuBLASLt's default mode measures the same), largest element errors ~7e-4 sqrt(k).
         * The CDNA kernels (HIP, emulator) accumulate every product in fp32 and answer to the output's bound. */
        tol.norm = tol.rtol = fmax(tol.norm, 3e-4);
        tol.atol = fmax(tol.atol, 1.5e-3 * sqrt((double)k));
    }
    ok &= th_check("D", out, ref, m * n, tol);
    th_expect(ok, "hk_gemm result");
    if (workspace && g->c_mode != C_ALIAS) {
        const size_t bytes = th_bytes(&dt);
        unsigned char *first = th_host(bytes), *second = th_host(bytes);
        th_download(c, first, args.d, bytes);
        th_op_status(c, hk_memset(c->ctx, args.d, 0xFF, bytes), "hk_memset");
        th_op_status(c, hk_gemm(c->ctx, &args), "hk_gemm (again)");
        th_download(c, second, args.d, bytes);
        th_expect(memcmp(first, second, bytes) == 0, "the second call's D equals the first's");
    }
}

static void run_case(const th_ctx *c, const void *param) { run_gemm(c, param, 0, 0); }

static void run_offset(const th_ctx *c, const void *param)
{
    const offset_case *o = param;
    run_gemm(c, &o->g, o->workspace, o->off);
}

/* Launch shapes forced through HK_CUDA_TUNE_GEMM (read by a context at its creation; other backends ignore it; NULL:
 * the route's), for the ones no case above routes to, and cases with a workspace. */
typedef struct forced_case {
    gemm_case g;
    const char *tune;
    int workspace;
} forced_case;

static const forced_case forced_cases[] = {
    /* fp8 with fp32 accumulation on the widest tiles that hold two accumulators, and on 96 (a narrower store box) */
    {{"nt_e4m3fn_1100x1000x1040_p192_to_f32", TH_GPU, 1100, 1000, 1040, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 1, 1, 0},
     "p192", 0},
    {{"nt_e4m3fn_1100x1000x1040_p168_alias", TH_GPU, 1100, 1000, 1040, FN, BF, 0, 1, 0, 0, 0, 8, 1, 1, C_ALIAS, 1, 1, 0},
     "p168", 0},
    {{"nt_e4m3fn_1100x1000x1040_p96_to_f32", TH_GPU, 1100, 1000, 1040, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 1, 1, 0},
     "p96", 0},
    {{"nt_e4m3fn_1100x1000x1040_p128_to_f32", TH_GPU, 1100, 1000, 1040, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 1, 1, 0},
     "p128", 0},
    {{"nt_e4m3fn_1100x1000x1040_m192n128_to_f32", TH_GPU, 1100, 1000, 1040, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 1, 1, 0},
     "m192n128", 0},
    /* PF128 (fp32 accumulation only; 16-bit D through the lazy stores): 216 tiles over the SMs, so most CTAs hold a
     * tile while they start the next; ragged m, n and k, C aliasing a padded D; f32 D stores at once */
    {{"nt_e4m3fn_1100x3000x1040_pf128_alias", TH_GPU, 1100, 3000, 1040, FN, BF, 0, 1, 0, 0, 0, 8, 0.5f, 1, C_ALIAS, 1, 1, 0},
     "pf128", 0},
    {{"nt_e4m3fn_1100x1000x1040_pf128_to_f32", TH_GPU, 1100, 1000, 1040, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 1, 1, 0},
     "pf128", 0},
    /* a shape too wide for two accumulators is not taken (its fast accumulation would miss the f32 bound): the
     * route's choice runs instead */
    {{"nt_e4m3fn_1100x1000x2064_p256_falls_back_to_f32", TH_GPU, 1100, 1000, 2064, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 1, 1, 0},
     "p256", 0},
    /* SK128 forced: tiles whose second 64 rows lie past m, ragged n and k, beta, both K-major-B layouts, fp32
     * accumulation */
    {{"nt_bf16_300x520x1000_sk128_f16_beta", TH_GPU, 300, 520, 1000, BF, F16, 0, 1, 0, 0, 2, 0, 1, 0.5f, C_SEPARATE, 0, 0, 0},
     "sk128:2", 0},
    {{"tt_bf16_200x136x2056_sk128_f32", TH_GPU, 200, 136, 2056, BF, F32, 1, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0}, "sk128:2", 0},
    {{"nt_e4m3fn_260x400x2048_sk128_to_f32", TH_GPU, 260, 400, 2048, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 1, 1, 0},
     "sk128:2", 0},
    /* K split through the workspace (sm_90a PK64) forced: uneven parts, every layout and output, beta, up to 12
     * parts, fp32 accumulation. The emulator runs the smaller of these as HIP contexts do: no workspace wanted
     * (hk.h), K unsplit, and the second call's D the first's */
    {{"nt_bf16_130x300x1000_pk64_split8_beta", TH_GPU | TH_EMU, 130, 300, 1000, BF, BF, 0, 1, 0, 0, 2, 0, 1, 1,
      C_SEPARATE, 0, 0, 0}, "pk64:8", 1},
    {{"tt_bf16_304x200x2056_pk64_split5_f16", TH_GPU, 304, 200, 2056, BF, F16, 1, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
     "pk64:5", 1},
    {{"nn_bf16_100x256x3080_pk64_split12_f32", TH_GPU | TH_EMU, 100, 256, 3080, BF, F32, 0, 0, 0, 0, 0, 0, 1, 0, C_NULL,
      0, 0, 0}, "pk64:12", 1},
    {{"nt_e4m3fn_200x400x2048_pk64_split4_to_f32", TH_GPU | TH_EMU, 200, 400, 2048, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0,
      C_NULL, 1, 1, 0}, "pk64:4", 1},
    /* the same on 128 x 128 tiles (sm_90a PK128): both warpgroups' parts, the second's rows past m in some tiles */
    {{"nt_bf16_200x300x2000_pk128_split6_beta", TH_GPU, 200, 300, 2000, BF, BF, 0, 1, 0, 0, 2, 0, 1, -1, C_SEPARATE, 0, 0, 0},
     "pk128:6", 1},
    {{"tn_bf16_136x264x3080_pk128_split16_f32", TH_GPU | TH_EMU, 136, 264, 3080, BF, F32, 1, 0, 0, 0, 0, 0, 1, 0, C_NULL,
      0, 0, 0}, "pk128:16", 1},
    {{"nt_e4m3fn_300x200x4096_pk128_split4_to_f32", TH_GPU, 300, 200, 4096, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 1, 1, 0},
     "pk128:4", 1},
    /* and on 128 x 96 and 64 x 96 tiles (sm_90a PK96, PK64N96): ragged n and m, rows past m, fp32 accumulation */
    {{"tt_bf16_200x300x2000_pk96_split5_f16_beta", TH_GPU, 200, 300, 2000, BF, F16, 1, 1, 0, 0, 2, 0, 1, 0.5f, C_SEPARATE, 0, 0,
      0}, "pk96:5", 1},
    {{"nt_e4m3fn_100x250x4096_pk64n96_split3_to_f32", TH_GPU, 100, 250, 4096, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 1, 1, 0},
     "pk64n96:3", 1},
    /* and on 128 x 192 and 128 x 256 tiles (sm_90a PK192, PK256): ragged m, n and k, rows past m, fp32 accumulation
     * where it fits (192 wide), fast accumulation on 256 */
    {{"tt_bf16_304x400x3000_pk192_split6_f16_beta", TH_GPU, 304, 400, 3000, BF, F16, 1, 1, 0, 0, 2, 0, 1, 0.5f, C_SEPARATE,
      0, 0, 0}, "pk192:6", 1},
    {{"nt_bf16_264x520x2056_pk256_split5_f32", TH_GPU, 264, 520, 2056, BF, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
     "pk256:5", 1},
    {{"nt_e4m3fn_200x400x4096_pk192_split4_to_f32", TH_GPU, 200, 400, 4096, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 1, 1, 0},
     "pk192:4", 1},
    {{"nt_e4m3fn_260x300x4096_pk256_split3_fast", TH_GPU, 260, 300, 4096, FN, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.5f, 2.0f,
      1}, "pk256:3", 1},
    /* more parts than the SMs hold at once: the parts' kernel runs in waves */
    {{"nt_bf16_520x600x2000_pk64_split3_waves", TH_GPU, 520, 600, 2000, BF, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
     "pk64:3", 1},
    /* long k over few tiles with a workspace: K split over more CTAs, the parts added there (sm_90a pooled) */
    {{"nt_bf16_128x512x16384_workspace", TH_NOT_EMU, 128, 512, 16384, BF, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0}, NULL, 1},
    {{"tn_bf16_200x200x8200_workspace_f32_beta", TH_NOT_EMU, 200, 200, 8200, BF, F32, 1, 0, 0, 0, 4, 0, 1, 0.5f, C_SEPARATE,
     0, 0, 0}, NULL, 1},
    {{"nt_e4m3fn_256x256x16384_workspace_to_f32", TH_NOT_EMU, 256, 256, 16384, FN, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.5f,
     2.0f, 0}, NULL, 1},
    {{"nt_bf16_256x1280x8192_workspace_pk128_f32_beta", TH_GPU, 256, 1280, 8192, BF, F32, 0, 1, 0, 0, 0, 0, 1, 0.5f,
     C_SEPARATE, 0, 0, 0}, NULL, 1},
    {{"nt_bf16_256x1152x8192_workspace_pk96", TH_GPU, 256, 1152, 8192, BF, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0}, NULL, 1},
    {{"nt_bf16_256x736x16384_workspace_pk96_ragged_n", TH_GPU, 256, 736, 16384, BF, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0,
      0}, NULL, 1},
    {{"nt_bf16_192x1000x8192_workspace_pk64n96_ragged_n", TH_GPU, 192, 1000, 8192, BF, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0,
      0}, NULL, 1},
    {{"nt_bf16_128x2200x2048_workspace_pk64n96_wave_f32", TH_GPU, 128, 2200, 2048, BF, F32, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0,
      0, 0}, NULL, 1},
    {{"nt_e4m3fn_128x1536x8192_workspace_pk64n96", TH_GPU, 128, 1536, 8192, FN, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.5f, 2.0f,
     0}, NULL, 1},
    {{"tt_bf16_384x512x16384_workspace_pk128_f32", TH_GPU, 384, 512, 16384, BF, F32, 1, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
     NULL, 1},
    /* routed: PK128 from 128 k-blocks over few tiles (nn here), fp8 PK64N96 in 5 parts */
    {{"nn_bf16_384x512x8192_workspace_pk128_beta", TH_GPU, 384, 512, 8192, BF, BF, 0, 0, 0, 0, 0, 0, 1, 0.5f, C_SEPARATE, 0, 0,
      0}, NULL, 1},
    {{"nt_e4m3fn_128x1152x16384_workspace_pk64n96", TH_GPU, 128, 1152, 16384, FN, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.5f,
      2.0f, 0}, NULL, 1},
    /* routed: fp8 PK128 over few tiles from K = 16384 (ragged m), P96 with fp32
     * accumulation (ragged m, n and k: 360 rows, 2992 columns, 1008 of K) */
    {{"nt_e4m3fn_208x896x16384_workspace_pk128_ragged_m", TH_GPU, 208, 896, 16384, FN, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.5f,
      2.0f, 0}, NULL, 1},
    {{"nt_e4m3fn_360x2992x1008_p96_ragged", TH_GPU, 360, 2992, 1008, FN, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.5f, 2.0f, 0},
     NULL, 0},
    {{"nt_e4m3fn_256x736x16384_workspace_pk96_ragged_n", TH_GPU, 256, 736, 16384, FN, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.5f,
     2.0f, 0}, NULL, 1},
    /* the finale: the last two rounds' tiles in parts of K through the workspace, forced at
     * short K (the route takes it from 64 k-blocks per part); ragged k, f32 out with beta, fp8 with fp32 accumulation,
     * nn's swapped tiles with C aliasing D */
    {{"nt_bf16_1152x3168x520_workspace_finale2_p96_f32_beta", TH_GPU, 1152, 3168, 520, BF, F32, 0, 1, 0, 0, 0, 0, 1, 0.5f,
      C_SEPARATE, 0, 0, 0}, "p96:2", 1},
    {{"nt_e4m3fn_1792x2560x1008_workspace_finale3_p128", TH_GPU, 1792, 2560, 1008, FN, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.5f,
      2.0f, 0}, "p128:3", 1},
    {{"nt_e4m3fn_1792x2560x1008_workspace_finale3_pf128", TH_GPU, 1792, 2560, 1008, FN, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL,
      0.5f, 2.0f, 0}, "pf128:3", 1},
    {{"nn_bf16_1728x2048x264_workspace_finale3_t96_alias", TH_GPU, 1728, 2048, 264, BF, BF, 0, 0, 0, 0, 0, 0, 1, 0.5f, C_ALIAS,
      0, 0, 0}, "t96:3", 1},
    /* A or B rows off 16 bytes with the workspace hk_gemm_workspace_size asks for: sm_90a copies them to aligned rows
     * there and runs the TMA kernels (A, B, both; 16-bit and fp8) */
    {{"nn_bf16_333x1000x777_workspace_repack_a", TH_GPU, 333, 1000, 777, BF, BF, 0, 0, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0, 0},
     NULL, 1},
    {{"tn_f16_to_f16_1000x333x777_workspace_repack_b_beta", TH_GPU, 1000, 333, 777, F16, F16, 1, 0, 0, 0, 0, 0, 1, 0.5f,
      C_SEPARATE, 0, 0, 0}, NULL, 1},
    {{"tt_bf16_129x257x8191_workspace_repack_both_f32", TH_GPU, 129, 257, 8191, BF, F32, 1, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0, 0,
      0}, NULL, 1},
    {{"nt_e4m3fn_130x250x777_workspace_repack", TH_NOT_EMU, 130, 250, 777, FN, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 0.5f, 2.0f,
      0}, NULL, 1},
    {{"nt_e4m3fn_130x250x8192_workspace_fast", TH_NOT_EMU, 130, 250, 8192, FN, BF, 0, 1, 0, 0, 0, 0, 1, 0, C_NULL, 1, 1, 1}, NULL, 1},
};

static void run_forced(const th_ctx *c, const void *param)
{
    const forced_case *f = param;
    run_gemm(f->tune ? th_context_with_env(c, "HK_CUDA_TUNE_GEMM", f->tune) : c, &f->g, f->workspace, 0);
}

/* Empty problems return HK_OK and leave D alone; k == 0 gives D = beta * C. */
static void run_empty(const th_ctx *c, const void *param)
{
    (void)param;
    th_rng rng = th_rng_for_case();
    hk_gemm_args args = HK_ARGS_INIT(hk_gemm_args);
    args.a_type = args.b_type = args.d_type = BF;
    args.trans_b = 1;
    unsigned char *host = th_host(64 * 64 * 2);
    args.a = th_dev(c, 64 * 64 * 2);
    args.b = th_dev(c, 64 * 64 * 2);
    args.d = th_dev(c, 64 * 64 * 2);
    args.alpha = 1;

    static const int64_t shapes[][3] = {{0, 8, 8}, {8, 0, 8}, {0, 0, 0}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        args.m = shapes[s][0];
        args.n = shapes[s][1];
        args.k = shapes[s][2];
        args.lda = args.ldb = 8;
        args.ldd = 8;
        th_op_status(c, hk_gemm(c->ctx, &args), "hk_gemm (empty)");
        th_download(c, host, args.d, 64 * 64 * 2);
        for (size_t i = 0; i < 64 * 64 * 2; ++i)
            if (host[i] != 0xFF)
                fail_msg("empty gemm %ldx%ldx%ld wrote D byte %zu", (long)args.m, (long)args.n, (long)args.k, i);
    }

    /* k == 0: the sum is empty, D = beta * C */
    int64_t m = 5, n = 9;
    double *cv = th_host(sizeof(double) * (size_t)(m * n)), *ref = th_host(sizeof(double) * (size_t)(m * n));
    th_fill_normal(&rng, BF, cv, m * n, 1.0);
    th_tensor ct = th_matrix(BF, m, n, n), dt = th_matrix(BF, m, n, n + 3);
    args.m = m;
    args.n = n;
    args.k = 0;
    args.lda = 1;
    args.ldb = 1;
    args.c = th_dev_tensor(c, &ct, cv);
    args.ldc = n;
    args.d = th_dev(c, th_bytes(&dt));
    args.ldd = n + 3;
    args.beta = 0.5f;
    th_op_status(c, hk_gemm(c->ctx, &args), "hk_gemm (k = 0)");
    orc_gemm(m, n, 0, 1.0, NULL, NULL, 0.5, cv, ref);
    bool ok = true;
    double *out = th_fetch_tensor(c, &dt, args.d, &ok, "D");
    ok &= th_check("D (k = 0)", out, ref, m * n, th_tol_for(BF, c));
    th_expect(ok, "k = 0 gemm");
}

int main(void)
{
    th_open_contexts();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        th_add(cases[i].name, run_case, &cases[i], cases[i].kinds);
    for (size_t i = 0; i < sizeof offset_cases / sizeof offset_cases[0]; ++i)
        th_add(offset_cases[i].g.name, run_offset, &offset_cases[i], offset_cases[i].g.kinds);
    for (size_t i = 0; i < sizeof forced_cases / sizeof forced_cases[0]; ++i)
        th_add(forced_cases[i].g.name, run_forced, &forced_cases[i], forced_cases[i].g.kinds);
    th_add("empty_and_k0", run_empty, NULL, TH_ALL);
    return th_run("gemm");
}
