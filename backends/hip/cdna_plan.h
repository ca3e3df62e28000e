/* Launch planning for the CDNA kernels (kernels/cdna), shared by the HIP backend (real GPUs) and the wave
 * emulator, so both run the same kernel with the same grid and parameters for a call. */
#ifndef HK_CDNA_PLAN_H
#define HK_CDNA_PLAN_H

#include "internal.h"
#include "cdna/params.h"

typedef struct hk_cdna_launch {
    const hk_kernel_set *kernels; /* the family's kernels: hk_cdna_*_kernels */
    size_t kernel;                /* the one to launch, by index in the set */
    unsigned grid[3], block[3];
    union {
        hk_rotary_params rotary;
        hk_ln_fwd_params ln_fwd;
        hk_ln_bwd_params ln_bwd;
        hk_ln_reduce_params reduce;
        hk_gemm_params gemm;
        hk_attn_fwd_params attn;
    } params;
} hk_cdna_launch;

/* The CDNA kernel families as kernel sets, so that a HIP context resolves each kernel once (cdna_plan.c says how
 * an index names a kernel). */
extern HK_INTERNAL const hk_kernel_set hk_cdna_rotary_kernels, hk_cdna_ln_kernels, hk_cdna_gemm_kernels,
    hk_cdna_attn_kernels;

/* Run one planned launch: hk_gpu_launch_indexed for HIP, the emulator for the emulator. */
typedef hk_status (*hk_cdna_exec)(hk_context *ctx, const hk_cdna_launch *launch, void *stream);

/* Each plan fills up to max launches and returns how many (0: nothing to do), or -1 with why written for an
 * unsupported problem. */
HK_INTERNAL int hk_cdna_plan_rotary(const hk_rotary_args *a, hk_cdna_launch *out, char *why, size_t why_size);
HK_INTERNAL int hk_cdna_plan_ln(const hk_ln_fused_args *a, hk_cdna_launch *out, char *why, size_t why_size);
HK_INTERNAL int hk_cdna_plan_ln_bwd(const hk_ln_fused_bwd_args *a, hk_cdna_launch out[2], char *why, size_t why_size);
/* The LayerNorm backward's workspace, as hk_variant.workspace (args: hk_ln_fused_bwd_args). */
HK_INTERNAL size_t hk_cdna_ln_bwd_workspace(const hk_context *ctx, const void *args);
/* GEMM with the 8-wave 256 x 256 ping-pong kernels (HK_CDNA_GEMM_PINGPONG) or the 4-wave 128 x 128 ones. */
enum { HK_CDNA_GEMM_INTERLEAVED = 0, HK_CDNA_GEMM_PINGPONG = 1 };
HK_INTERNAL int hk_cdna_plan_gemm(const hk_context *ctx, const hk_gemm_args *a, int schedule, hk_cdna_launch *out,
                                  char *why, size_t why_size);

/* Attention forward (kernels/cdna/attn_fwd.hip): one launch, or 0 for an empty problem. */
HK_INTERNAL int hk_cdna_plan_attn_fwd(const hk_attn_fwd_args *a, hk_cdna_launch *out, char *why, size_t why_size);

/* supports()/run() bodies for the variants of both backends; `schedule` selects the GEMM kernels (other ops: 0). */
HK_INTERNAL hk_status hk_cdna_supports(const hk_context *ctx, hk_op op, int schedule, const void *args, char *why,
                                       size_t why_size);
HK_INTERNAL hk_status hk_cdna_run(hk_context *ctx, hk_op op, int schedule, const void *args, hk_cdna_exec exec);

/* The CDNA variants, the one table of both backends (backends/hip/variants.c on GPUs, backends/emulator/variants.c
 * under the wave emulator, each naming them "<backend>.<name>"), in preference order within each op:
 * X(var, op, schedule, name, description, workspace). GEMM: the ping-pong kernels first (large problems), then the
 * 4-wave ones (everything else). */
#define HK_CDNA_GEMM_COVERS                                                                                       \
    "bf16, f16 and f32 in (both archs), fp8 in (e4m3fnuz on gfx942, OCP e4m3 on gfx950, per-tensor scales); bf16/f16/f32 out; "  \
    "all transposes; alpha/beta, C aliasing D; any M, N, K"
#define HK_CDNA_VARIANTS(X)                                                                                      \
    X(rotary, HK_OP_ROTARY, 0, "rotary",                                                                         \
      "one thread per 16-byte unit of rotated pairs (element-wise when unaligned); HALF/INTERLEAVED, "           \
      "partial rotary_dim, position ids (clamped), in place; fp32 or activation-dtype tables", NULL)             \
    X(ln, HK_OP_LN_FUSED, 0, "ln_fused",                                                                         \
      "row in registers over 1-16 waves, 16-byte buffer loads, fp32 statistics, Philox dropout (packed keep "    \
      "mask out); cols <= 65536 bf16/f16, 32768 f32 (8192 unaligned)", NULL)                                     \
    X(ln_bwd, HK_OP_LN_FUSED_BWD, 0, "ln_fused_bwd",                                                             \
      "row in registers, dgamma/dbeta from per-slot partials summed in slot order (deterministic), a given "     \
      "dropout mask read instead of Philox; cols <= 16384 bf16/f16, 8192 f32 (2048 unaligned)",                 \
      hk_cdna_ln_bwd_workspace)                                                                                  \
    X(gemm_pp, HK_OP_GEMM, HK_CDNA_GEMM_PINGPONG, "gemm.pingpong256",                                            \
      "8 waves, 256x256 macro tile in two ping-pong groups (MFMA vs memory phases), double-buffered LDS, "       \
      "XCD-aware tile order; " HK_CDNA_GEMM_COVERS "; needs M, N >= 256, enough tiles for half the CUs and "     \
      "16-byte aligned operands", NULL)                                                                          \
    X(gemm_il, HK_OP_GEMM, HK_CDNA_GEMM_INTERLEAVED, "gemm.interleaved128",                                      \
      "4 waves, 128x128 macro tile, loads and MFMA interleaved, double-buffered LDS; " HK_CDNA_GEMM_COVERS       \
      "; unaligned operands element by element", NULL)                                                           \
    X(attn, HK_OP_ATTN_FWD, 0, "attn_fwd",                                                                       \
      "bf16/f16, head_dim and head_dim_v <= 256, causal, window, softcap, GQA, varlen, any strides; 8 waves in "   \
      "ping-pong (4 for D > 128 or unaligned views), K and V^T through LDS, online base-2 softmax", NULL)

/* One backend's supports()/run() of a table entry, as hk_variant wants them, running launches through exec. */
#define HK_CDNA_VARIANT_BODIES(var, OP, SCHED, exec)                                                             \
    static hk_status var##_supports(const hk_context *ctx, const void *args, char *why, size_t why_size)      \
    {                                                                                                          \
        return hk_cdna_supports(ctx, OP, SCHED, args, why, why_size);                                          \
    }                                                                                                          \
    static hk_status var##_run(hk_context *ctx, const void *args) { return hk_cdna_run(ctx, OP, SCHED, args, exec); }

#endif
