/* Launch planning for the CDNA kernels: which compiled kernel, grid and parameters serve a call. The kernel
 * names and LayerNorm configurations mirror kernels/cdna/rotary.hip and ln_fused.hip. */
#include "cdna_plan.h"

#include <string.h>

/* ---------------------------------------------------------------- kernel sets
 * Each family's kernels as one kernel set (hk_gpu_launch_indexed): a plan picks an index, and a context formats a
 * kernel's name only at its first launch there. */
static const char *const type_names[3] = {"bf16", "f16", "f32"};

/* The kernel-name index of an activation dtype (type_names), or -1 with `why` filled. */
static int type_index(hk_dtype t, char *why, size_t why_size)
{
    const int i = t == HK_DTYPE_BF16 ? 0 : t == HK_DTYPE_F16 ? 1 : t == HK_DTYPE_F32 ? 2 : -1;
    if (i < 0)
        hk_format(why, why_size, "dtype %s; supported: bf16, f16, f32", hk_dtype_name(t));
    return i;
}

/* hk_rotary_<type>_<v|s>[_t16] at (type * 2 + t16) * 2 + scalar; fp32 activations have no 16-bit tables. */
enum { ROTARY_KERNELS = 12 };
static size_t rotary_index(int type, bool t16, bool scalar) { return (size_t)((type * 2 + t16) * 2 + scalar); }
static bool rotary_kernel_name(size_t index, char *buf, size_t size)
{
    const size_t type = index / 4, t16 = index / 2 % 2, scalar = index % 2;
    if (index >= ROTARY_KERNELS || (type == 2 && t16))
        return false;
    hk_format(buf, size, "hk_rotary_%s_%s%s", type_names[type], scalar ? "s" : "v", t16 ? "_t16" : "");
    return true;
}
const hk_kernel_set hk_cdna_rotary_kernels = {HK_KERNELS_CDNA_ROTARY, ROTARY_KERNELS, rotary_kernel_name};

/* hk_ln_<dir>_<type>_<v|s>_w<WPR>n<NV> at ((dir * 3 + type) * 2 + scalar) * LN_CONFIGS + config (dir: fwd, bwd,
 * bwd_mask; config: the row of the direction's table below), then hk_ln_bwd_reduce. */
enum { LN_CONFIGS = 4, LN_REDUCE = 3 * 3 * 2 * LN_CONFIGS, LN_KERNELS = LN_REDUCE + 1 };
static const char *const ln_dirs[3] = {"fwd", "bwd", "bwd_mask"};
/* (waves per row, vectors per thread) compiled for each direction, smallest first (ln_fused.hip). */
static const int fwd_configs[LN_CONFIGS][2] = {{1, 2}, {1, 8}, {4, 8}, {16, 8}};
static const int bwd_configs[LN_CONFIGS][2] = {{1, 2}, {2, 4}, {4, 4}, {8, 4}};
static bool ln_kernel_name(size_t index, char *buf, size_t size)
{
    if (index >= LN_KERNELS)
        return false;
    if (index == LN_REDUCE) {
        hk_format(buf, size, "hk_ln_bwd_reduce");
        return true;
    }
    const size_t config = index % LN_CONFIGS, scalar = index / LN_CONFIGS % 2, type = index / (2 * LN_CONFIGS) % 3;
    const size_t dir = index / (6 * LN_CONFIGS);
    const int(*configs)[2] = dir == 0 ? fwd_configs : bwd_configs;
    hk_format(buf, size, "hk_ln_%s_%s_%s_w%dn%d", ln_dirs[dir], type_names[type], scalar ? "s" : "v",
              configs[config][0], configs[config][1]);
    return true;
}
const hk_kernel_set hk_cdna_ln_kernels = {HK_KERNELS_CDNA_LN, LN_KERNELS, ln_kernel_name};

/* hk_gemm_<bf16|fp8|f16|f32>_<op(A)><op(B)>_<pp256|i128|i128_u> at ((in * 2 + trans_a) * 2 + trans_b) * 3 + kind. */
enum { GEMM_KINDS = 3, GEMM_KERNELS = 4 * 2 * 2 * GEMM_KINDS };
static const char *const gemm_kinds[GEMM_KINDS] = {"pp256", "i128", "i128_u"};
static const char *const gemm_inputs[4] = {"bf16", "fp8", "f16", "f32"};
static bool gemm_kernel_name(size_t index, char *buf, size_t size)
{
    if (index >= GEMM_KERNELS)
        return false;
    const size_t kind = index % GEMM_KINDS, tb = index / GEMM_KINDS % 2, ta = index / (2 * GEMM_KINDS) % 2;
    hk_format(buf, size, "hk_gemm_%s_%c%c_%s", gemm_inputs[index / (4 * GEMM_KINDS)], ta ? 't' : 'n',
              tb ? 't' : 'n', gemm_kinds[kind]);
    return true;
}
const hk_kernel_set hk_cdna_gemm_kernels = {HK_KERNELS_CDNA_GEMM, GEMM_KERNELS, gemm_kernel_name};

/* hk_attn_fwd_<bf16|f16>_d<D>_<DV>[_u] at (type * ATTN_DIMS + dims) * 2 + unaligned: one kernel per padded (D, DV)
 * of attn_dims, smallest first. */
static const int attn_dims[][2] = {{64, 64}, {128, 128}, {192, 128}, {256, 256}};
enum { ATTN_DIMS = sizeof attn_dims / sizeof attn_dims[0], ATTN_KERNELS = 2 * ATTN_DIMS * 2 };
static bool attn_kernel_name(size_t index, char *buf, size_t size)
{
    if (index >= ATTN_KERNELS)
        return false;
    const size_t dims = index / 2 % ATTN_DIMS;
    hk_format(buf, size, "hk_attn_fwd_%s_d%d_%d%s", type_names[index / (2 * ATTN_DIMS)], attn_dims[dims][0],
              attn_dims[dims][1], index % 2 ? "_u" : "");
    return true;
}
const hk_kernel_set hk_cdna_attn_kernels = {HK_KERNELS_CDNA_ATTN, ATTN_KERNELS, attn_kernel_name};

/* ---------------------------------------------------------------- rotary */

int hk_cdna_plan_rotary(const hk_rotary_args *a, hk_cdna_launch *out, char *why, size_t why_size)
{
    const int type = type_index(a->dtype, why, why_size);
    if (type < 0)
        return -1;
    const int64_t tokens = a->batch * a->seqlen, half = a->rotary_dim / 2;
    if (tokens == 0 || a->heads == 0 || a->head_dim == 0)
        return 0;
    const int V = 16 / (int)hk_dtype_size(a->dtype);
    const bool interleaved = a->style == HK_ROTARY_INTERLEAVED;
    /* A unit's table entries start at an element offset that is a multiple of its V (HALF) or V / 2 (INTERLEAVED)
     * entries, by these conditions, so with 16-byte aligned tables its table vectors (at most 16 bytes) are aligned
     * for fp32 and 16-bit tables alike. */
    bool vec = hk_aligned16(a->x) && hk_aligned16(a->out) && hk_aligned16(a->cos) && hk_aligned16(a->sin) &&
               a->head_dim % V == 0 && (interleaved ? a->rotary_dim % V == 0 : half % V == 0);
    for (int i = 0; i < 3; ++i)
        vec = vec && a->x_stride[i] % V == 0 && a->out_stride[i] % V == 0;
    const int v = vec ? V : 1, pairs = vec && interleaved ? V / 2 : 1;
    const bool in_place = a->x == a->out && memcmp(a->x_stride, a->out_stride, sizeof a->x_stride) == 0;
    const int64_t rot_units = interleaved ? half / pairs : half / v;
    const int64_t copy_units = in_place ? 0 : (a->head_dim - a->rotary_dim) / v;
    const int64_t per_token = a->heads * (rot_units + copy_units);
    if (per_token == 0)
        return 0;
    if (tokens > INT32_MAX || per_token > INT32_MAX / 256 || a->head_dim > INT32_MAX) {
        hk_format(why, why_size, "batch x seqlen = %lld tokens (at most %d) or heads x units of head_dim = %lld units "
                  "per token (at most %d) exceed the kernel's 32-bit indexing", (long long)tokens, INT32_MAX,
                  (long long)per_token, INT32_MAX / 256);
        return -1;
    }
    const int64_t tpb = per_token >= 256 ? 1 : 256 / per_token;
    hk_cdna_launch *L = out;
    memset(L, 0, sizeof *L);
    /* table_type is validated: F32, or the activation dtype (the _t16 kernels) */
    L->kernels = &hk_cdna_rotary_kernels;
    L->kernel = rotary_index(type, a->table_type != HK_DTYPE_F32, !vec);
    L->grid[0] = (unsigned)((tokens + tpb - 1) / tpb);
    L->grid[1] = L->grid[2] = 1;
    L->block[0] = 256;
    L->block[1] = L->block[2] = 1;
    hk_rotary_params *p = &L->params.rotary;
    p->x = a->x;
    p->out = a->out;
    p->cos = a->cos;
    p->sin = a->sin;
    p->position_ids = a->position_ids;
    memcpy(p->x_stride, a->x_stride, sizeof p->x_stride);
    memcpy(p->out_stride, a->out_stride, sizeof p->out_stride);
    p->position_offset = a->position_offset;
    p->table_positions = a->table_positions;
    p->tokens = (int32_t)tokens;
    p->seqlen = a->seqlen;
    p->heads = a->heads;
    p->rotary_dim = (int32_t)a->rotary_dim;
    p->rot_units = (int32_t)rot_units;
    p->copy_units = (int32_t)copy_units;
    p->tokens_per_block = (int32_t)tpb;
    p->interleaved = interleaved;
    p->sign = a->inverse ? -1.0f : 1.0f;
    return 1;
}

/* ---------------------------------------------------------------- LayerNorm / RMSNorm */

/* Pick a configuration covering cols and fill the launch shape (dir: ln_dirs); false with why when none does. */
static bool ln_shape(int dir, int type, bool vec, int V, int64_t cols, hk_cdna_launch *L, int *rows_per_block,
                     char *why, size_t why_size)
{
    const int v = vec ? V : 1;
    const int(*configs)[2] = dir == 0 ? fwd_configs : bwd_configs;
    for (int i = 0; i < LN_CONFIGS; ++i) {
        const int wpr = configs[i][0], nv = configs[i][1];
        if ((int64_t)64 * wpr * nv * v < cols)
            continue;
        const int rpb = wpr >= 4 ? 1 : 4 / wpr;
        L->kernels = &hk_cdna_ln_kernels;
        L->kernel = (size_t)(((dir * 3 + type) * 2 + !vec) * LN_CONFIGS + i);
        L->block[0] = (unsigned)(64 * wpr * rpb);
        L->block[1] = L->block[2] = 1;
        L->grid[1] = L->grid[2] = 1;
        *rows_per_block = rpb;
        return true;
    }
    const int64_t most = (int64_t)64 * configs[LN_CONFIGS - 1][0] * configs[LN_CONFIGS - 1][1] * v;
    hk_format(why, why_size, "cols %lld; at most %lld%s", (long long)cols, (long long)most,
              vec ? "" : " without 16-byte aligned rows (cols, strides and pointers multiples of 16 bytes)");
    return false;
}

/* The fields both directions' parameters p fill alike from their arguments a (same field names). */
#define LN_COMMON(p, a)                                                                                        \
    do {                                                                                                       \
        (p)->rows = (a)->rows;                                                                                 \
        (p)->cols = (a)->cols;                                                                                 \
        (p)->mask_words = HK_DROPOUT_MASK_WORDS((a)->cols);                                                    \
        (p)->seed = (a)->seed;                                                                                 \
        (p)->offset = (a)->offset;                                                                             \
        (p)->dropout_scale = 1.0f / (1.0f - (a)->dropout_p);                                                   \
        (p)->dropout_threshold = hk_dropout_threshold((a)->dropout_p);                                         \
        (p)->dropout = (a)->dropout_p > 0.0f || (a)->dropout_mask;                                             \
        (p)->rms = (a)->norm == HK_NORM_RMS;                                                                   \
        (p)->param_f32 = (a)->param_type == HK_DTYPE_F32;                                                      \
    } while (0)

/* What both directions check first: 1 to plan (*type set), 0 for an empty problem, -1 unsupported (why). */
static int ln_prologue(hk_dtype dtype, int64_t rows, int64_t cols, int *type, char *why, size_t why_size)
{
    if ((*type = type_index(dtype, why, why_size)) < 0)
        return -1;
    if (rows == 0 || cols == 0)
        return 0;
    if (rows > INT32_MAX) {
        hk_format(why, why_size, "rows %lld; at most %d", (long long)rows, INT32_MAX);
        return -1;
    }
    return 1;
}

int hk_cdna_plan_ln(const hk_ln_fused_args *a, hk_cdna_launch *out, char *why, size_t why_size)
{
    int type;
    const int go = ln_prologue(a->dtype, a->rows, a->cols, &type, why, why_size);
    if (go <= 0)
        return go;
    const int V = 16 / (int)hk_dtype_size(a->dtype);
    bool vec = a->cols % V == 0 && hk_rows_aligned16(a->x, a->x_stride, V) &&
               hk_rows_aligned16(a->y, a->y_stride, V) && hk_aligned16(a->gamma) && hk_aligned16(a->beta) &&
               hk_rows_aligned16(a->residual, a->residual_stride, V) &&
               hk_rows_aligned16(a->residual_out, a->residual_out_stride, V);
    hk_cdna_launch *L = out;
    memset(L, 0, sizeof *L);
    int rpb;
    if (!ln_shape(0, type, vec, V, a->cols, L, &rpb, why, why_size))
        return -1;
    L->grid[0] = (unsigned)((a->rows + rpb - 1) / rpb);
    hk_ln_fwd_params *p = &L->params.ln_fwd;
    p->x = a->x;
    p->residual = a->residual;
    p->gamma = a->gamma;
    p->beta = a->beta;
    p->y = a->y;
    p->residual_out = a->residual_out;
    p->mean = a->mean;
    p->rstd = a->rstd;
    p->dropout_mask = a->dropout_mask;
    p->x_stride = a->x_stride;
    p->residual_stride = a->residual_stride;
    p->y_stride = a->y_stride;
    p->residual_out_stride = a->residual_out_stride;
    p->epsilon = a->epsilon;
    LN_COMMON(p, a);
    return 1;
}

/* Row slots of the backward: fixed by the shape (never the device), so results are reproducible anywhere. */
static int64_t ln_bwd_slots(const hk_ln_fused_bwd_args *a) { return a->rows < 256 ? a->rows : 256; }

size_t hk_cdna_ln_bwd_workspace(const hk_context *ctx, const void *args)
{
    (void)ctx;
    const hk_ln_fused_bwd_args *a = args;
    return (size_t)(2 * ln_bwd_slots(a) * a->cols) * sizeof(float);
}

int hk_cdna_plan_ln_bwd(const hk_ln_fused_bwd_args *a, hk_cdna_launch out[2], char *why, size_t why_size)
{
    int type;
    const int go = ln_prologue(a->dtype, a->rows, a->cols, &type, why, why_size);
    if (go <= 0)
        return go;
    const int V = 16 / (int)hk_dtype_size(a->dtype);
    bool vec = a->cols % V == 0 && hk_rows_aligned16(a->dy, a->dy_stride, V) &&
               hk_rows_aligned16(a->z, a->z_stride, V) && hk_rows_aligned16(a->dx, a->dx_stride, V) &&
               hk_aligned16(a->gamma) && hk_rows_aligned16(a->dz_extra, a->dz_extra_stride, V) &&
               hk_rows_aligned16(a->dresidual, a->dresidual_stride, V);
    hk_cdna_launch *L = &out[0];
    memset(out, 0, 2 * sizeof *out);
    int rpb;
    /* A given dropout mask has kernels of its own (hk_ln_bwd_mask_*), which never draw Philox. */
    if (!ln_shape(a->dropout_mask ? 2 : 1, type, vec, V, a->cols, L, &rpb, why, why_size))
        return -1;
    const int64_t slots = ln_bwd_slots(a);
    L->grid[0] = (unsigned)((slots + rpb - 1) / rpb);
    hk_ln_bwd_params *p = &L->params.ln_bwd;
    float *const dgamma_part = a->workspace, *const dbeta_part = dgamma_part + slots * a->cols;
    p->dy = a->dy;
    p->z = a->z;
    p->gamma = a->gamma;
    p->dz_extra = a->dz_extra;
    p->dx = a->dx;
    p->dresidual = a->dresidual;
    p->mean = a->mean;
    p->rstd = a->rstd;
    p->dgamma_part = dgamma_part;
    p->dbeta_part = dbeta_part;
    p->dropout_mask = a->dropout_mask;
    p->dy_stride = a->dy_stride;
    p->z_stride = a->z_stride;
    p->dx_stride = a->dx_stride;
    p->dresidual_stride = a->dresidual_stride;
    p->dz_extra_stride = a->dz_extra_stride;
    p->slots = (int32_t)slots;
    LN_COMMON(p, a);

    hk_cdna_launch *R = &out[1];
    R->kernels = &hk_cdna_ln_kernels;
    R->kernel = LN_REDUCE;
    R->grid[0] = (unsigned)((a->cols + 255) / 256);
    R->grid[1] = R->grid[2] = 1;
    R->block[0] = 256;
    R->block[1] = R->block[2] = 1;
    R->params.reduce.dgamma_part = dgamma_part;
    R->params.reduce.dbeta_part = dbeta_part;
    R->params.reduce.dgamma = a->dgamma;
    R->params.reduce.dbeta = a->dbeta;
    R->params.reduce.parts = slots;
    R->params.reduce.cols = a->cols;
    return 2;
}

/* ---------------------------------------------------------------- GEMM
 * Mirrors kernels/cdna/gemm.hip: per arch and input type the K step BK (64-byte LDS rows on gfx942, 128-byte on
 * gfx950), kernels hk_gemm_<in>_<nn|nt|tn|tt>_<pp256|i128|i128_u>. */
enum { GEMM_GROUP_M = 8 };

/* Span in bytes of one buffer view of the kernel: R x C elements with leading dimension ld. */
static int64_t view_bytes(int64_t rows, int64_t cols, int64_t ld, int64_t size) { return ((rows - 1) * ld + cols) * size; }

/* Aligned operand: whole 16-byte vectors along its contiguous dimension, each in range or out. */
static bool gemm_aligned(const void *p, int64_t ld, int64_t contiguous_extent, int64_t size)
{
    const int64_t v = 16 / size;
    return hk_aligned16(p) && ld % v == 0 && contiguous_extent % v == 0;
}


int hk_cdna_plan_gemm(const hk_context *ctx, const hk_gemm_args *a, int schedule, hk_cdna_launch *out, char *why,
                      size_t why_size)
{
    const bool gfx950 = strcmp(ctx->arch, "gfx950") == 0;
    const hk_dtype fp8 = gfx950 ? HK_DTYPE_FP8_E4M3 : HK_DTYPE_FP8_E4M3FNUZ;
    const int in = a->a_type == HK_DTYPE_BF16 ? 0 : a->a_type == fp8 ? 1 : a->a_type == HK_DTYPE_F16 ? 2
                   : a->a_type == HK_DTYPE_F32 ? 3 : -1;
    if (in < 0) {
        hk_format(why, why_size, "a_type %s; supported on %s: bf16, f16, f32, %s", hk_dtype_name(a->a_type), ctx->arch,
                  hk_dtype_name(fp8));
        return -1;
    }
    int out_type;
    switch (a->d_type) {
    case HK_DTYPE_BF16: out_type = HK_GEMM_OUT_BF16; break;
    case HK_DTYPE_F16: out_type = HK_GEMM_OUT_F16; break;
    case HK_DTYPE_F32: out_type = HK_GEMM_OUT_F32; break;
    default: hk_format(why, why_size, "d_type %s; supported: bf16, f16, f32", hk_dtype_name(a->d_type)); return -1;
    }
    const bool pp = schedule == HK_CDNA_GEMM_PINGPONG;
    const int64_t T = pp ? 256 : 128, S = (int64_t)hk_dtype_size(a->a_type), SD = (int64_t)hk_dtype_size(a->d_type);
    const int64_t BK = (gfx950 ? 128 : 64) / S;
    if (a->m > INT32_MAX || a->n > INT32_MAX || a->k > INT32_MAX) {
        hk_format(why, why_size, "m, n, k %lld, %lld, %lld; each at most %d", (long long)a->m, (long long)a->n,
                  (long long)a->k, INT32_MAX);
        return -1;
    }
    const int64_t tiles_m = (a->m + T - 1) / T, tiles_n = (a->n + T - 1) / T;
    if (tiles_m * tiles_n > INT32_MAX / 512) {
        hk_format(why, why_size, "m %lld, n %lld make %lld x %lld tiles of %lld; at most %d tiles", (long long)a->m,
                  (long long)a->n, (long long)tiles_m, (long long)tiles_n, (long long)T, INT32_MAX / 512);
        return -1;
    }
    /* Every buffer view of the kernel (a K step of an operand tile, an output tile) must stay below 2 GiB. */
    const int64_t limit = INT32_MAX / 2;
    const int64_t span_a = a->trans_a ? view_bytes(BK, T, a->lda, S) : view_bytes(T, BK, a->lda, S);
    const int64_t span_b = a->trans_b ? view_bytes(T, BK, a->ldb, S) : view_bytes(BK, T, a->ldb, S);
    const int64_t span_d = view_bytes(T, T, a->ldd > a->ldc ? a->ldd : a->ldc, SD);
    if (span_a > limit || span_b > limit || span_d > limit) {
        hk_format(why, why_size, "leading dimensions lda %lld, ldb %lld, ldd %lld, ldc %lld make a %lld-row tile span "
                  "over 1 GiB", (long long)a->lda, (long long)a->ldb, (long long)a->ldd, (long long)a->ldc, (long long)T);
        return -1;
    }
    const bool aligned = a->k == 0 || (gemm_aligned(a->a, a->lda, a->trans_a ? a->m : a->k, S) &&
                                       gemm_aligned(a->b, a->ldb, a->trans_b ? a->k : a->n, S));
    if (pp) {
        const int64_t cus = ctx->multiprocessors > 0 ? ctx->multiprocessors : 1;
        if (a->m < T || a->n < T || 2 * tiles_m * tiles_n < cus) {
            hk_format(why, why_size, "m %lld, n %lld: below 256 or fewer than half as many 256 x 256 tiles as the %lld "
                      "CUs; the 4-wave 128 x 128 kernels serve it", (long long)a->m, (long long)a->n, (long long)cus);
            return -1;
        }
        if (!aligned) {
            hk_format(why, why_size, "operands not in whole 16-byte vectors (pointers 16-byte aligned, lda/ldb and the "
                      "contiguous extents multiples of %lld elements); the 4-wave kernels serve it", (long long)(16 / S));
            return -1;
        }
    }
    if (a->m == 0 || a->n == 0)
        return 0;
    hk_cdna_launch *L = out;
    memset(L, 0, sizeof *L);
    L->kernels = &hk_cdna_gemm_kernels;
    L->kernel = (size_t)(((in * 2 + !!a->trans_a) * 2 + !!a->trans_b) * GEMM_KINDS + (pp ? 0 : aligned ? 1 : 2));
    L->grid[0] = (unsigned)(tiles_m * tiles_n);
    L->grid[1] = L->grid[2] = 1;
    L->block[0] = pp ? 512 : 256;
    L->block[1] = L->block[2] = 1;
    hk_gemm_params *p = &L->params.gemm;
    /* With k == 0 no operand is read (and A, B may be NULL): point them at D so that no address arithmetic of the
     * kernel starts from NULL. */
    p->a = a->k ? a->a : a->d;
    p->b = a->k ? a->b : a->d;
    p->lda = a->k ? a->lda : 0;
    p->ldb = a->k ? a->ldb : 0;
    p->c = a->c;
    p->d = a->d;
    p->ldc = a->ldc;
    p->ldd = a->ldd;
    p->m = (int32_t)a->m;
    p->n = (int32_t)a->n;
    p->k = (int32_t)a->k;
    p->tiles_m = (int32_t)tiles_m;
    p->tiles_n = (int32_t)tiles_n;
    p->group_m = GEMM_GROUP_M;
    p->xcds = ctx->xcds > 1 ? (int)ctx->xcds : 1;
    p->d_type = out_type;
    p->vec_c = a->c && hk_aligned16(a->c) && a->ldc % 4 == 0;
    p->vec_d = hk_aligned16(a->d) && a->ldd % 4 == 0;
    p->alpha = a->alpha * a->scale_a * a->scale_b;
    p->beta = a->beta;
    return 1;
}

/* ---------------------------------------------------------------- attention forward
 * Mirrors kernels/cdna/attn_fwd.hip: HK_CDNA_ATTN_BM(D, aligned) query rows per block. */

/* Whole 16-byte vectors everywhere: base, seq and head strides (and the batch stride unless varlen). */
static bool attn_aligned(const void *p, const int64_t s[3], bool varlen)
{
    return hk_aligned16(p) && s[1] % 8 == 0 && s[2] % 8 == 0 && (varlen || s[0] % 8 == 0);
}

int hk_cdna_plan_attn_fwd(const hk_attn_fwd_args *a, hk_cdna_launch *out, char *why, size_t why_size)
{
    if (a->dtype != HK_DTYPE_BF16 && a->dtype != HK_DTYPE_F16) {
        hk_format(why, why_size, "dtype %s; supported: bf16, f16 (f32 attention runs on the CPU backend)",
                  hk_dtype_name(a->dtype));
        return -1;
    }
    size_t inst = 0;
    while (inst < ATTN_DIMS &&
           (attn_dims[inst][0] < a->head_dim || attn_dims[inst][1] < a->head_dim_v))
        ++inst;
    if (inst == ATTN_DIMS) {
        hk_format(why, why_size, "head_dim %lld / head_dim_v %lld; supported: up to 64/64, 128/128, 192/128, 256/256",
                  (long long)a->head_dim, (long long)a->head_dim_v);
        return -1;
    }
    const bool varlen = a->cu_seqlens_q != NULL;
    const bool aligned = a->head_dim % 8 == 0 && a->head_dim_v % 8 == 0 && attn_aligned(a->q, a->q_stride, varlen) &&
                         attn_aligned(a->k, a->k_stride, varlen) && attn_aligned(a->v, a->v_stride, varlen) &&
                         attn_aligned(a->o, a->o_stride, varlen);
    const int d = attn_dims[inst][0], bm = HK_CDNA_ATTN_BM(d, aligned);
    /* int32 row arithmetic, and every tile's buffer view (up to 256 rows of one tensor) below 2^31 bytes. */
    const int64_t limit = (int64_t)1 << 21, m_blocks = (a->seqlen_q + bm - 1) / bm;
    if (a->seqlen_q >= ((int64_t)1 << 29) || a->seqlen_k >= ((int64_t)1 << 29) ||
        m_blocks * a->heads_q * a->batch > INT32_MAX) {
        hk_format(why, why_size, "seqlen_q %lld, seqlen_k %lld (below 2^29 each) and %lld x %lld x %lld blocks "
                  "(at most 2^31 - 1)", (long long)a->seqlen_q, (long long)a->seqlen_k, (long long)m_blocks,
                  (long long)a->heads_q, (long long)a->batch);
        return -1;
    }
    if (a->q_stride[1] >= limit || a->k_stride[1] >= limit || a->v_stride[1] >= limit || a->o_stride[1] >= limit) {
        hk_format(why, why_size, "sequence strides q %lld, k %lld, v %lld, o %lld; each below 2^21 elements",
                  (long long)a->q_stride[1], (long long)a->k_stride[1], (long long)a->v_stride[1],
                  (long long)a->o_stride[1]);
        return -1;
    }
    if (a->batch == 0 || a->seqlen_q == 0)
        return 0;
    hk_cdna_launch *L = out;
    memset(L, 0, sizeof *L);
    L->kernels = &hk_cdna_attn_kernels;
    L->kernel = ((a->dtype == HK_DTYPE_BF16 ? 0 : 1) * ATTN_DIMS + inst) * 2 + !aligned;
    L->grid[0] = (unsigned)(m_blocks * a->heads_q * a->batch);
    L->grid[1] = L->grid[2] = 1;
    L->block[0] = (unsigned)(64 * HK_CDNA_ATTN_WAVES(d, aligned));
    L->block[1] = L->block[2] = 1;
    hk_attn_fwd_resolve(a, &L->params.attn);
    L->params.attn.m_blocks = (int32_t)m_blocks;
    return 1;
}

/* ---------------------------------------------------------------- variant bodies */

static int plan(const hk_context *ctx, hk_op op, int schedule, const void *args, hk_cdna_launch out[2], char *why,
                size_t why_size)
{
    switch (op) {
    case HK_OP_GEMM: return hk_cdna_plan_gemm(ctx, args, schedule, out, why, why_size);
    case HK_OP_ROTARY: return hk_cdna_plan_rotary(args, out, why, why_size);
    case HK_OP_LN_FUSED: return hk_cdna_plan_ln(args, out, why, why_size);
    case HK_OP_LN_FUSED_BWD: return hk_cdna_plan_ln_bwd(args, out, why, why_size);
    case HK_OP_ATTN_FWD: return hk_cdna_plan_attn_fwd(args, out, why, why_size);
    default: hk_format(why, why_size, "no CDNA kernel for %s", hk_op_name(op)); return -1;
    }
}

static void *stream_of(hk_op op, const void *args)
{
    switch (op) {
    case HK_OP_ROTARY: return ((const hk_rotary_args *)args)->stream;
    case HK_OP_LN_FUSED: return ((const hk_ln_fused_args *)args)->stream;
    case HK_OP_LN_FUSED_BWD: return ((const hk_ln_fused_bwd_args *)args)->stream;
    case HK_OP_GEMM: return ((const hk_gemm_args *)args)->stream;
    case HK_OP_ATTN_FWD: return ((const hk_attn_fwd_args *)args)->stream;
    default: return NULL;
    }
}

hk_status hk_cdna_supports(const hk_context *ctx, hk_op op, int schedule, const void *args, char *why, size_t why_size)
{
    hk_cdna_launch l[2];
    return plan(ctx, op, schedule, args, l, why, why_size) < 0 ? HK_ERR_UNSUPPORTED : HK_OK;
}

hk_status hk_cdna_run(hk_context *ctx, hk_op op, int schedule, const void *args, hk_cdna_exec exec)
{
    hk_cdna_launch l[2];
    char why[256] = "";
    int n = plan(ctx, op, schedule, args, l, why, sizeof why);
    if (n < 0)
        return hk_fail(HK_ERR_UNSUPPORTED, "%s: %s", hk_op_name(op), why);
    for (int i = 0; i < n; ++i) {
        hk_status st = exec(ctx, &l[i], stream_of(op, args));
        if (st != HK_OK)
            return st;
    }
    return HK_OK;
}
