/* CUDA dropout + residual + LayerNorm/RMSNorm, forward and backward: chooses the register-resident kernel
 * whose row capacity first covers cols (16-byte vectors; needs aligned rows), else the any-shape kernel.
 * The backward's dgamma/dbeta go through the caller's workspace: one partial row per persistent block,
 * then a fixed-order reduction. */
#include "ops.h"

#include <stdlib.h>

#include "hopper/ln_fused.h"

typedef struct hk_ln_config {
    int tpr, nv;
    int min_blocks, stages; /* the backward's resident blocks per SM and staged rows (0: prefetch form) */
    const char *kernel;
} hk_ln_config;

#define HK_FWD_ENTRY_bf16(TPR, NV) {TPR, NV, 0, 0, "hk_ln_fwd_bf16_t" #TPR "_n" #NV},
#define HK_FWD_ENTRY_f16(TPR, NV) {TPR, NV, 0, 0, "hk_ln_fwd_f16_t" #TPR "_n" #NV},
#define HK_FWD_ENTRY_f32(TPR, NV) {TPR, NV, 0, 0, "hk_ln_fwd_f32_t" #TPR "_n" #NV},
#define HK_BWD_ENTRY_bf16(TPR, NV, MINB, STAGES) {TPR, NV, MINB, STAGES, "hk_ln_bwd_bf16_t" #TPR "_n" #NV},
#define HK_BWD_ENTRY_f16(TPR, NV, MINB, STAGES) {TPR, NV, MINB, STAGES, "hk_ln_bwd_f16_t" #TPR "_n" #NV},
#define HK_BWD_ENTRY_f32(TPR, NV, MINB, STAGES) {TPR, NV, MINB, STAGES, "hk_ln_bwd_f32_t" #TPR "_n" #NV},

static const hk_ln_config hk_ln_fwd_bf16[] = {HK_LN_FWD_CONFIGS_2BYTE(HK_FWD_ENTRY_bf16)};
static const hk_ln_config hk_ln_fwd_f16[] = {HK_LN_FWD_CONFIGS_2BYTE(HK_FWD_ENTRY_f16)};
static const hk_ln_config hk_ln_fwd_f32[] = {HK_LN_FWD_CONFIGS_4BYTE(HK_FWD_ENTRY_f32)};
static const hk_ln_config hk_ln_bwd_bf16[] = {HK_LN_BWD_CONFIGS_2BYTE(HK_BWD_ENTRY_bf16)};
static const hk_ln_config hk_ln_bwd_f16[] = {HK_LN_BWD_CONFIGS_2BYTE(HK_BWD_ENTRY_f16)};
static const hk_ln_config hk_ln_bwd_f32[] = {HK_LN_BWD_CONFIGS_4BYTE(HK_BWD_ENTRY_f32)};

#define HK_COUNT(a) (sizeof(a) / sizeof((a)[0]))

typedef struct hk_ln_table {
    const hk_ln_config *fwd, *bwd;
    size_t fwd_count, bwd_count;
    const char *fwd_any, *bwd_any;
} hk_ln_table;

static const hk_ln_table hk_ln_tables[3] = {
    {hk_ln_fwd_bf16, hk_ln_bwd_bf16, HK_COUNT(hk_ln_fwd_bf16), HK_COUNT(hk_ln_bwd_bf16), "hk_ln_fwd_bf16_any",
     "hk_ln_bwd_bf16_any"},
    {hk_ln_fwd_f16, hk_ln_bwd_f16, HK_COUNT(hk_ln_fwd_f16), HK_COUNT(hk_ln_bwd_f16), "hk_ln_fwd_f16_any",
     "hk_ln_bwd_f16_any"},
    {hk_ln_fwd_f32, hk_ln_bwd_f32, HK_COUNT(hk_ln_fwd_f32), HK_COUNT(hk_ln_bwd_f32), "hk_ln_fwd_f32_any",
     "hk_ln_bwd_f32_any"},
};

/* The LayerNorm kernels as one kernel set: per table in order its forward configs, its backward configs, its two
 * any-shape kernels; then hk_ln_bwd_reduce. */
static size_t hk_ln_table_kernels(const hk_ln_table *t) { return t->fwd_count + t->bwd_count + 2; }
static size_t hk_ln_table_base(const hk_ln_table *t)
{
    size_t base = 0;
    for (const hk_ln_table *u = hk_ln_tables; u < t; ++u)
        base += hk_ln_table_kernels(u);
    return base;
}
static size_t hk_ln_fwd_index(const hk_ln_table *t, const hk_ln_config *cfg)
{
    return hk_ln_table_base(t) + (cfg ? (size_t)(cfg - t->fwd) : t->fwd_count + t->bwd_count);
}
static size_t hk_ln_bwd_index(const hk_ln_table *t, const hk_ln_config *cfg)
{
    return hk_ln_table_base(t) + (cfg ? t->fwd_count + (size_t)(cfg - t->bwd) : t->fwd_count + t->bwd_count + 1);
}

static bool hk_ln_kernel_name(size_t index, char *buf, size_t size)
{
    for (const hk_ln_table *t = hk_ln_tables; t < hk_ln_tables + 3; index -= hk_ln_table_kernels(t), ++t) {
        if (index >= hk_ln_table_kernels(t))
            continue;
        const char *name = index < t->fwd_count                    ? t->fwd[index].kernel
                           : index < t->fwd_count + t->bwd_count   ? t->bwd[index - t->fwd_count].kernel
                           : index == t->fwd_count + t->bwd_count ? t->fwd_any
                                                                  : t->bwd_any;
        hk_format(buf, size, "%s", name);
        return true;
    }
    if (index != 0)
        return false;
    hk_format(buf, size, "hk_ln_bwd_reduce");
    return true;
}

static const hk_kernel_set hk_ln_kernels = {
    HK_KERNELS_CUDA_LN,
    HK_COUNT(hk_ln_fwd_bf16) + HK_COUNT(hk_ln_bwd_bf16) + HK_COUNT(hk_ln_fwd_f16) + HK_COUNT(hk_ln_bwd_f16) +
        HK_COUNT(hk_ln_fwd_f32) + HK_COUNT(hk_ln_bwd_f32) + 3 * 2 + 1,
    hk_ln_kernel_name,
};
#define HK_LN_REDUCE_INDEX (hk_ln_kernels.count - 1)

/* Blocks per SM of the any-shape kernels' grid-strided loops. */
#define HK_LN_ANY_BLOCKS_PER_SM 8

static const hk_ln_table *hk_ln_table_of(hk_dtype dtype)
{
    return dtype == HK_DTYPE_BF16 ? &hk_ln_tables[0] : dtype == HK_DTYPE_F16 ? &hk_ln_tables[1]
                                                     : dtype == HK_DTYPE_F32 ? &hk_ln_tables[2] : NULL;
}

static unsigned hk_ln_block(int tpr) { return tpr > HK_LN_MIN_BLOCK ? (unsigned)tpr : HK_LN_MIN_BLOCK; }

/* The dropout fields of both kernels' parameters, from either op's arguments (same field names). */
#define HK_LN_DROPOUT_FIELDS(a)                                                                                \
    .seed = (a)->seed, .offset = (a)->offset, .dropout_scale = 1.0f / (1.0f - (a)->dropout_p),                  \
    .dropout_threshold = hk_dropout_threshold((a)->dropout_p), .dropout = (a)->dropout_p > 0.0f || (a)->dropout_mask, \
    .dropout_mask = (a)->dropout_mask, .mask_words = HK_DROPOUT_MASK_WORDS((a)->cols)

/* Columns a config's rows hold: TPR threads x NV vectors of v elements. */
static int64_t hk_ln_capacity(const hk_ln_config *c, int64_t v) { return (int64_t)c->tpr * c->nv * v; }

/* The first config whose rows hold cols, or NULL. Of two with the same capacity, the second (more threads, fewer
 * vectors each) serves only rows that fill it exactly: for 2-byte rows of 4097-8192 columns, 256 x 4 beats
 * 512 x 2 at D5120-D7680 by 5-10 points of copy (512 x 2 leaves some threads a vector short) and trails it at
 * D8192. */
static const hk_ln_config *hk_ln_pick(const hk_ln_config *list, size_t count, int64_t cols, int64_t v)
{
    for (size_t i = 0; i < count; ++i) {
        if (hk_ln_capacity(&list[i], v) < cols)
            continue;
        const bool filled_twin = i + 1 < count && hk_ln_capacity(&list[i + 1], v) == cols;
        return filled_twin ? &list[i + 1] : &list[i];
    }
    return NULL;
}

static hk_status hk_cuda_ln_supports(const hk_context *ctx, const void *args, char *why, size_t why_size)
{
    (void)ctx;
    /* Both ops' structs start with norm, dtype, param_type in the same order. */
    const hk_ln_fused_args *a = args;
    if (!hk_ln_table_of(a->dtype)) {
        hk_format(why, why_size, "dtype %s; supported: bf16, f16, f32", hk_dtype_name(a->dtype));
        return HK_ERR_UNSUPPORTED;
    }
    if (a->param_type != HK_DTYPE_F32 && a->param_type != a->dtype) {
        hk_format(why, why_size, "param_type %s; supported: f32 or the activation dtype", hk_dtype_name(a->param_type));
        return HK_ERR_UNSUPPORTED;
    }
    return HK_OK;
}

/* ---------------------------------------------------------------- forward */

static hk_status hk_cuda_ln_fused_run(hk_context *ctx, const void *args)
{
    const hk_ln_fused_args *a = args;
    if (a->rows == 0 || a->cols == 0)
        return HK_OK;
    const hk_ln_table *t = hk_ln_table_of(a->dtype);
    const int64_t v = 16 / (int64_t)hk_dtype_size(a->dtype);
    const bool vector = a->cols % v == 0 && hk_rows_aligned16(a->x, a->x_stride, v) &&
                        hk_rows_aligned16(a->residual, a->residual_stride, v) && hk_rows_aligned16(a->y, a->y_stride, v) &&
                        hk_rows_aligned16(a->residual_out, a->residual_out_stride, v) && hk_aligned16(a->gamma) &&
                        hk_aligned16(a->beta);
    const hk_ln_config *cfg = vector ? hk_ln_pick(t->fwd, t->fwd_count, a->cols, v) : NULL;

    hk_ln_fwd_params p = {
        .x = a->x,
        .residual = a->residual,
        .gamma = a->gamma,
        .beta = a->norm == HK_NORM_LAYER ? a->beta : NULL,
        .y = a->y,
        .residual_out = a->residual_out,
        .mean = a->mean,
        .rstd = a->rstd,
        .x_stride = a->x_stride,
        .residual_stride = a->residual_stride,
        .y_stride = a->y_stride,
        .residual_out_stride = a->residual_out_stride,
        .rows = a->rows,
        .cols = a->cols,
        HK_LN_DROPOUT_FIELDS(a),
        .epsilon = a->epsilon,
        .rms = a->norm == HK_NORM_RMS,
        .param_f32 = a->param_type == HK_DTYPE_F32,
    };
    unsigned grid[3] = {1, 1, 1}, block[3] = {HK_LN_ANY_BLOCK, 1, 1};
    int64_t blocks;
    if (cfg) {
        block[0] = hk_ln_block(cfg->tpr);
        const int64_t rows_per_block = block[0] / cfg->tpr;
        blocks = (a->rows + rows_per_block - 1) / rows_per_block;
    } else {
        blocks = a->rows < ctx->multiprocessors * HK_LN_ANY_BLOCKS_PER_SM ? a->rows
                                                                          : ctx->multiprocessors * HK_LN_ANY_BLOCKS_PER_SM;
    }
    if (blocks > INT32_MAX)
        return hk_fail(HK_ERR_UNSUPPORTED, "cuda.ln_fused: %lld rows exceed the grid limit", (long long)a->rows);
    grid[0] = (unsigned)blocks;
    void *params[] = {&p};
    return hk_gpu_launch_indexed(ctx, &hk_ln_kernels, hk_ln_fwd_index(t, cfg), false, grid, block, 0, a->stream, params);
}

HK_INTERNAL const hk_variant hk_cuda_ln_fused = {
    .op = HK_OP_LN_FUSED,
    .name = "cuda.ln_fused",
    .description = "dropout + residual + LayerNorm/RMSNorm forward, bf16/f16/f32, rows held in registers up to "
                   "32768 (2-byte) / 16384 (f32) aligned cols, any shape otherwise; Philox mask as the CPU",
    .backend = HK_BACKEND_CUDA,
    .archs = "sm_90a",
    .supports = hk_cuda_ln_supports,
    .run = hk_cuda_ln_fused_run,
    .workspace = NULL,
};

/* ---------------------------------------------------------------- backward */

typedef struct hk_ln_bwd_plan {
    size_t kernel; /* in hk_ln_kernels */
    unsigned grid, block;
    int stages;           /* staged form: rows staged per segment */
    unsigned shared;      /* and their dynamic shared memory */
    bool dgamma, dbeta; /* partial arrays in the workspace, in this order */
} hk_ln_bwd_plan;

/* Shared memory a block may stage rows in, with min_blocks of them resident per SM beside their static
 * shared memory (at most ~8 KiB: the dgamma/dbeta segment sums). */
#define HK_LN_BWD_STAGE_BUDGET(min_blocks) (200u * 1024u / (unsigned)(min_blocks) - 8448u)

/* The plan depends only on the shape, the pointers' alignment and the device, so workspace() and run()
 * agree, and the partial sums (hence dgamma/dbeta) are the same on every call. */
static hk_ln_bwd_plan hk_ln_bwd_plan_of(const hk_context *ctx, const hk_ln_fused_bwd_args *a)
{
    const hk_ln_table *t = hk_ln_table_of(a->dtype);
    const int64_t v = 16 / (int64_t)hk_dtype_size(a->dtype);
    const bool vector = a->cols % v == 0 && hk_rows_aligned16(a->dy, a->dy_stride, v) &&
                        hk_rows_aligned16(a->z, a->z_stride, v) && hk_rows_aligned16(a->dz_extra, a->dz_extra_stride, v) &&
                        hk_rows_aligned16(a->dx, a->dx_stride, v) &&
                        hk_rows_aligned16(a->dresidual, a->dresidual_stride, v) && hk_aligned16(a->gamma);
    const hk_ln_config *cfg = vector ? hk_ln_pick(t->bwd, t->bwd_count, a->cols, v) : NULL;
    hk_ln_bwd_plan plan = {.kernel = hk_ln_bwd_index(t, cfg), .block = HK_LN_ANY_BLOCK};
    int64_t groups = a->rows, blocks = ctx->multiprocessors * HK_LN_ANY_BLOCKS_PER_SM;
    if (cfg) {
        plan.block = hk_ln_block(cfg->tpr);
        if (cfg->stages > 0) {
            const unsigned stage = HK_LN_BWD_STAGE_BYTES(plan.block, (unsigned)cfg->nv, a->dz_extra ? 3u : 2u);
            const unsigned forced = (unsigned)ctx->tuning.ln_stages, wanted = forced ? forced : (unsigned)cfg->stages;
            unsigned stages = HK_LN_BWD_STAGE_BUDGET(cfg->min_blocks) / stage;
            stages = stages < 1 ? 1 : stages > wanted ? wanted : stages;
            plan.stages = (int)stages;
            plan.shared = stages * stage;
        }
        const int64_t rows_per_block = plan.block / cfg->tpr;
        groups = (a->rows + rows_per_block - 1) / rows_per_block;
        blocks = ctx->multiprocessors * cfg->min_blocks;
    }
    plan.grid = (unsigned)(groups < blocks ? groups : blocks);
    plan.dgamma = a->dgamma != NULL;
    plan.dbeta = a->dbeta != NULL && a->norm == HK_NORM_LAYER;
    return plan;
}

static size_t hk_cuda_ln_fused_bwd_workspace(const hk_context *ctx, const void *args)
{
    const hk_ln_fused_bwd_args *a = args;
    if (a->rows == 0 || a->cols == 0)
        return 0;
    const hk_ln_bwd_plan plan = hk_ln_bwd_plan_of(ctx, a);
    return (size_t)plan.grid * (size_t)a->cols * sizeof(float) * (size_t)(plan.dgamma + plan.dbeta);
}

static hk_status hk_cuda_ln_fused_bwd_run(hk_context *ctx, const void *args)
{
    const hk_ln_fused_bwd_args *a = args;
    if (a->rows == 0 || a->cols == 0)
        return HK_OK;
    const hk_ln_bwd_plan plan = hk_ln_bwd_plan_of(ctx, a);
    /* src/dispatch.c has checked the workspace's size against hk_cuda_ln_fused_bwd_workspace() */
    if (((uintptr_t)a->workspace & (sizeof(float) - 1)) != 0)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "ln_fused_bwd: workspace %p is not 4-byte aligned", a->workspace);
    float *dgamma_part = plan.dgamma ? a->workspace : NULL;
    float *dbeta_part = plan.dbeta ? (float *)a->workspace + (plan.dgamma ? (size_t)plan.grid * a->cols : 0) : NULL;

    hk_ln_bwd_params p = {
        .dy = a->dy,
        .z = a->z,
        .dz_extra = a->dz_extra,
        .gamma = a->gamma,
        .mean = a->mean,
        .rstd = a->rstd,
        .dx = a->dx,
        .dresidual = a->dresidual,
        .dgamma_part = dgamma_part,
        .dbeta_part = dbeta_part,
        .dy_stride = a->dy_stride,
        .z_stride = a->z_stride,
        .dz_extra_stride = a->dz_extra_stride,
        .dx_stride = a->dx_stride,
        .dresidual_stride = a->dresidual_stride,
        .rows = a->rows,
        .cols = a->cols,
        HK_LN_DROPOUT_FIELDS(a),
        .rms = a->norm == HK_NORM_RMS,
        .param_f32 = a->param_type == HK_DTYPE_F32,
        .stages = plan.stages,
    };
    const unsigned grid[3] = {plan.grid, 1, 1}, block[3] = {plan.block, 1, 1};
    void *params[] = {&p};
    hk_status st = hk_gpu_launch_indexed(ctx, &hk_ln_kernels, plan.kernel, false, grid, block, plan.shared, a->stream,
                                         params);
    if (st != HK_OK || !(plan.dgamma || plan.dbeta))
        return st;

    hk_ln_reduce_params r = {
        .dgamma_part = dgamma_part,
        .dbeta_part = dbeta_part,
        .dgamma = a->dgamma,
        .dbeta = plan.dbeta ? a->dbeta : NULL,
        .parts = plan.grid,
        .cols = a->cols,
    };
    const int64_t col_blocks = (a->cols + HK_LN_REDUCE_COLS - 1) / HK_LN_REDUCE_COLS;
    if (col_blocks > INT32_MAX)
        return hk_fail(HK_ERR_UNSUPPORTED, "cuda.ln_fused_bwd: %lld cols exceed the grid limit", (long long)a->cols);
    const unsigned rgrid[3] = {(unsigned)col_blocks, 1, 1},
                   rblock[3] = {HK_LN_REDUCE_COLS * HK_LN_REDUCE_SLICES, 1, 1};
    void *rparams[] = {&r};
    return hk_gpu_launch_indexed(ctx, &hk_ln_kernels, HK_LN_REDUCE_INDEX, false, rgrid, rblock, 0, a->stream, rparams);
}

HK_INTERNAL const hk_variant hk_cuda_ln_fused_bwd = {
    .op = HK_OP_LN_FUSED_BWD,
    .name = "cuda.ln_fused_bwd",
    .description = "LayerNorm/RMSNorm + dropout backward, bf16/f16/f32, persistent blocks with register-held "
                   "dgamma/dbeta partials summed in a fixed order through the workspace (deterministic)",
    .backend = HK_BACKEND_CUDA,
    .archs = "sm_90a",
    .supports = hk_cuda_ln_supports,
    .run = hk_cuda_ln_fused_bwd_run,
    .workspace = hk_cuda_ln_fused_bwd_workspace,
};
