/* CUDA rotary embedding: picks the 16-byte-vector kernel when the shape and the pointers allow it, else the
 * scalar one (any alignment, any even rotary_dim); both cover every feature of the CPU reference. Whole heads
 * rotated HALF-style with narrow enough heads take the lane-mapped vector kernel. */
#include "ops.h"

#include "hopper/rotary.h"

/* Kernel groups: bf16 and f16 each with fp32 tables and with tables in their own type (_t16), f32 (fp32 tables). */
enum { HK_ROTARY_SETS = 5 };

/* [set][style: HALF, INTERLEAVED][path: vector, scalar] */
static const char *const hk_rotary_kernels[HK_ROTARY_SETS][2][2] = {
    {{"hk_rotary_bf16_half_v", "hk_rotary_bf16_half_s"}, {"hk_rotary_bf16_inter_v", "hk_rotary_bf16_inter_s"}},
    {{"hk_rotary_bf16_half_v_t16", "hk_rotary_bf16_half_s_t16"},
     {"hk_rotary_bf16_inter_v_t16", "hk_rotary_bf16_inter_s_t16"}},
    {{"hk_rotary_f16_half_v", "hk_rotary_f16_half_s"}, {"hk_rotary_f16_inter_v", "hk_rotary_f16_inter_s"}},
    {{"hk_rotary_f16_half_v_t16", "hk_rotary_f16_half_s_t16"},
     {"hk_rotary_f16_inter_v_t16", "hk_rotary_f16_inter_s_t16"}},
    {{"hk_rotary_f32_half_v", "hk_rotary_f32_half_s"}, {"hk_rotary_f32_inter_v", "hk_rotary_f32_inter_s"}},
};

static const char *const hk_rotary_row_kernels[HK_ROTARY_SETS] = {
    "hk_rotary_bf16_half_rows", "hk_rotary_bf16_half_rows_t16", "hk_rotary_f16_half_rows",
    "hk_rotary_f16_half_rows_t16", "hk_rotary_f32_half_rows"};

/* The rotary kernels as one kernel set: index (set * 2 + style) * 2 + path, then the lane-mapped kernels by set. */
static bool hk_rotary_kernel_name(size_t index, char *buf, size_t size)
{
    if (index >= HK_ROTARY_SETS * 5)
        return false;
    hk_format(buf, size, "%s", index >= HK_ROTARY_SETS * 4 ? hk_rotary_row_kernels[index - HK_ROTARY_SETS * 4]
                                                           : hk_rotary_kernels[index / 4][index / 2 % 2][index % 2]);
    return true;
}
static const hk_kernel_set hk_rotary_kernel_set = {HK_KERNELS_CUDA_ROTARY, HK_ROTARY_SETS * 5, hk_rotary_kernel_name};

/* The kernel group of a call, -1 for an unsupported dtype. table_type is validated: F32 or dtype. */
static int hk_rotary_set(hk_dtype dtype, hk_dtype table_type)
{
    const int t16 = table_type != HK_DTYPE_F32;
    return dtype == HK_DTYPE_BF16 ? t16 : dtype == HK_DTYPE_F16 ? 2 + t16 : dtype == HK_DTYPE_F32 ? 4 : -1;
}

static hk_status hk_cuda_rotary_supports(const hk_context *ctx, const void *args, char *why, size_t why_size)
{
    (void)ctx;
    const hk_rotary_args *a = args;
    if (hk_rotary_set(a->dtype, a->table_type) < 0) {
        hk_format(why, why_size, "dtype %s; supported: bf16, f16, f32", hk_dtype_name(a->dtype));
        return HK_ERR_UNSUPPORTED;
    }
    return HK_OK;
}

static bool hk_strides_multiple(const int64_t s[3], int64_t v) { return s[0] % v == 0 && s[1] % v == 0 && s[2] % v == 0; }

static hk_status hk_cuda_rotary_run(hk_context *ctx, const void *args)
{
    const hk_rotary_args *a = args;
    const int64_t tokens = a->batch * a->seqlen;
    if (tokens == 0 || a->heads == 0 || a->head_dim == 0)
        return HK_OK;
    const int64_t v = 16 / (int64_t)hk_dtype_size(a->dtype);
    const int64_t half = a->rotary_dim / 2;
    const int set = hk_rotary_set(a->dtype, a->table_type);
    /* In place (same pointer and strides) the features past rotary_dim already hold their values. */
    const bool in_place = a->out == a->x && a->out_stride[0] == a->x_stride[0] &&
                          a->out_stride[1] == a->x_stride[1] && a->out_stride[2] == a->x_stride[2];
    const bool copy_tail = !in_place && a->rotary_dim < a->head_dim;
    const bool vector = half % v == 0 && (!copy_tail || (a->head_dim - a->rotary_dim) % v == 0) &&
                        hk_aligned16(a->x) && hk_aligned16(a->out) && hk_aligned16(a->cos) &&
                        hk_aligned16(a->sin) && hk_strides_multiple(a->x_stride, v) &&
                        hk_strides_multiple(a->out_stride, v);
    const int64_t width = vector ? v : 1;

    hk_rotary_params p = {
        .x = a->x,
        .out = a->out,
        .cos = a->cos,
        .sin = a->sin,
        .position_ids = a->position_ids,
        .x_stride = {a->x_stride[0], a->x_stride[1], a->x_stride[2]},
        .out_stride = {a->out_stride[0], a->out_stride[1], a->out_stride[2]},
        .seqlen = a->seqlen,
        .heads = a->heads,
        .table_positions = a->table_positions,
        .position_offset = a->position_offset,
        .half = (int32_t)half,
        .rotary_dim = (int32_t)a->rotary_dim,
        .chunks = (int32_t)(half / width),
        .copy_chunks = copy_tail ? (int32_t)((a->head_dim - a->rotary_dim) / width) : 0,
        .head_groups = (int32_t)((a->heads + HK_ROTARY_HEADS_PER_THREAD - 1) / HK_ROTARY_HEADS_PER_THREAD),
        .sign = a->inverse ? -1.0f : 1.0f,
    };
    if (p.chunks + p.copy_chunks == 0)
        return HK_OK; /* rotary_dim == 0 in place: nothing changes */
    /* Whole heads rotated HALF-style, a head's 16-byte chunks dividing a warp: the lane-mapped kernel, whose
     * warp loads are contiguous (3-4 points of copy bandwidth over the chunk kernel on the H200), while its grid (row blocks x seqlen, 1, batch) fits. */
    const int64_t lanes_per_head = 2 * p.chunks;
    const int64_t row_vectors = HK_ROTARY_ROW_BLOCK * HK_ROTARY_ROW_VECTORS;
    const int64_t row_blocks = (a->heads * lanes_per_head + row_vectors - 1) / row_vectors;
    if (vector && a->style == HK_ROTARY_HALF && p.copy_chunks == 0 && a->rotary_dim == a->head_dim &&
        lanes_per_head <= 32 && 32 % lanes_per_head == 0 && row_blocks * a->seqlen <= INT32_MAX &&
        a->batch <= 65535) {
        p.row_blocks = (int32_t)row_blocks;
        const unsigned grid[3] = {(unsigned)(row_blocks * a->seqlen), 1, (unsigned)a->batch},
                       block[3] = {HK_ROTARY_ROW_BLOCK, 1, 1};
        void *params[] = {&p};
        return hk_gpu_launch_indexed(ctx, &hk_rotary_kernel_set, (size_t)(HK_ROTARY_SETS * 4 + set), false, grid, block, 0,
                                     a->stream, params);
    }
    p.units = tokens * p.head_groups * (p.chunks + p.copy_chunks);
    const size_t kernel = ((size_t)set * 2 + (a->style == HK_ROTARY_INTERLEAVED)) * 2 + (vector ? 0 : 1);
    const int64_t blocks = (p.units + HK_ROTARY_BLOCK - 1) / HK_ROTARY_BLOCK;
    if (blocks > INT32_MAX)
        return hk_fail(HK_ERR_UNSUPPORTED, "cuda.rotary: %lld thread blocks exceed the grid limit", (long long)blocks);
    const unsigned grid[3] = {(unsigned)blocks, 1, 1}, block[3] = {HK_ROTARY_BLOCK, 1, 1};
    void *params[] = {&p};
    return hk_gpu_launch_indexed(ctx, &hk_rotary_kernel_set, kernel, false, grid, block, 0, a->stream, params);
}

HK_INTERNAL const hk_variant hk_cuda_rotary = {
    .op = HK_OP_ROTARY,
    .name = "cuda.rotary",
    .description = "streaming rotary embedding, bf16/f16/f32 with fp32 or activation-dtype tables: 16-byte vectors "
                   "when aligned (else scalar), HALF and INTERLEAVED, partial rotary_dim, position ids, in place, "
                   "inverse",
    .backend = HK_BACKEND_CUDA,
    .archs = "sm_90a",
    .supports = hk_cuda_rotary_supports,
    .run = hk_cuda_rotary_run,
    .workspace = NULL,
};
