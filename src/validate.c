/* Argument validation: every rule hk.h states is checked here, once, for all backends; the normalised
 * struct (defaults resolved, strides explicit) is what the variants receive. */
#include "internal.h"

#include <math.h>
#include <string.h>

hk_status hk_check_context(const hk_context *handle, const char *op, hk_context **ctx)
{
    if (!handle)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", op);
    *ctx = hk_handle_get((uintptr_t)handle, HK_HANDLE_CONTEXT);
    if (!*ctx)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: ctx is not a live hk_context (destroyed or not created by hk_context_create)", op);
    return HK_OK;
}

/* struct_size may be as small as min, the size an older header declared, whose caller leaves the fields appended
 * since then at zero (their defaults). Fields of a newer header that this library does not know must be zero, so a
 * newer caller never silently loses a request. The upper bound keeps a wild struct_size from sending the zero
 * check through memory past the caller's struct. */
hk_status hk_copy_struct(const char *op, const char *name, const void *in, void *out, size_t min, size_t size)
{
    if (!in)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: %s is NULL", op, name);
    size_t given = *(const size_t *)in;
    if (given < min)
        return hk_fail(HK_ERR_INVALID_ARGUMENT,
                       "%s: %s->struct_size %zu is smaller than this struct (at least %zu bytes); initialise with "
                       "HK_ARGS_INIT",
                       op, name, given, min);
    if (given > HK_MAX_STRUCT_SIZE)
        return hk_fail(HK_ERR_INVALID_ARGUMENT,
                       "%s: %s->struct_size %zu is larger than any struct of hk.h (at most %d bytes); initialise with "
                       "HK_ARGS_INIT",
                       op, name, given, HK_MAX_STRUCT_SIZE);
    for (size_t i = size; i < given; ++i)
        if (((const unsigned char *)in)[i] != 0)
            return hk_fail(HK_ERR_UNSUPPORTED, "%s: %s set fields newer than libhk %s understands (byte %zu)", op, name,
                           HK_VERSION_TEXT, i);
    size_t known = given < size ? given : size;
    memcpy(out, in, known);
    memset((char *)out + known, 0, size - known);
    *(size_t *)out = size;
    return HK_OK;
}

static hk_status copy_args(const char *op, const void *in, void *out, size_t min, size_t size)
{
    return hk_copy_struct(op, "args", in, out, min, size);
}

static bool is_float_type(hk_dtype t) { return t == HK_DTYPE_F32 || t == HK_DTYPE_F16 || t == HK_DTYPE_BF16; }
static bool is_fp8(hk_dtype t) { return t == HK_DTYPE_FP8_E4M3 || t == HK_DTYPE_FP8_E4M3FNUZ; }

static hk_status check_float_dtype(const char *op, const char *name, hk_dtype t)
{
    if (is_float_type(t))
        return HK_OK;
    return hk_fail(hk_dtype_size(t) ? HK_ERR_UNSUPPORTED : HK_ERR_INVALID_ARGUMENT, "%s: %s %s (%d); supported: bf16, f16, f32",
                   op, name, hk_dtype_name(t), (int)t);
}

/* The type of a parameter vector or table beside activations of dtype: NONE means F32; F32 or dtype itself. */
static hk_status check_param_type(const char *op, const char *name, hk_dtype *t, hk_dtype dtype)
{
    if (*t == HK_DTYPE_NONE)
        *t = HK_DTYPE_F32;
    if (*t == HK_DTYPE_F32 || *t == dtype)
        return HK_OK;
    return hk_fail(hk_dtype_size(*t) ? HK_ERR_UNSUPPORTED : HK_ERR_INVALID_ARGUMENT,
                   "%s: %s %s (%d); supported: f32 or the activation dtype %s", op, name, hk_dtype_name(*t), (int)*t,
                   hk_dtype_name(dtype));
}

static hk_status check_size(const char *op, const char *name, int64_t v, int64_t min)
{
    if (v < min)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: %s %lld must be >= %lld", op, name, (long long)v, (long long)min);
    return HK_OK;
}

static hk_status check_pointer(const char *op, const char *name, const void *p, size_t align, bool needed)
{
    if (!needed)
        return HK_OK;
    if (!p)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: %s is NULL", op, name);
    if (align > 1 && (uintptr_t)p % align != 0)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: %s (%p) is not aligned to its element size %zu", op, name, p, align);
    return HK_OK;
}

/* The hk.h field that holds stride d of a layout (hk_check_layout): the scalar `field` (first < 0: "lda",
 * "x_stride"), or element first + d of the array `field` ("q_stride[1]"). */
static const char *stride_field(char *buf, size_t size, const char *field, int first, int d)
{
    if (first < 0 || !field)
        return field ? field : "its stride";
    hk_format(buf, size, "%s[%d]", field, first + d);
    return buf;
}

/* A strided tensor of `rank` dims (sizes[], strides[] in elements) over rows of `inner` contiguous elements:
 * strides must be non-negative and the dims must not overlap (sorted by stride, each stride covers the extent
 * of everything inside it). The extent in bytes must fit size_t. Messages name the strides as field and first
 * say (stride_field). */
static hk_status check_layout(const char *op, const char *name, const char *field, int first, int rank,
                              const int64_t *sizes, const int64_t *strides, int64_t inner, size_t elem)
{
    int order[4];
    int n = 0;
    char buf[64];
    for (int d = 0; d < rank; ++d) {
        if (strides[d] < 0)
            return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: %s %lld is negative", op,
                           stride_field(buf, sizeof buf, field, first, d), (long long)strides[d]);
        if (sizes[d] > 1) {
            int i = n++;
            while (i > 0 && strides[order[i - 1]] > strides[d]) {
                order[i] = order[i - 1];
                --i;
            }
            order[i] = d;
        }
    }
    int64_t extent = inner; /* elements spanned so far */
    for (int i = 0; i < n; ++i) {
        int d = order[i];
        if (strides[d] < extent)
            return hk_fail(HK_ERR_INVALID_ARGUMENT,
                           "%s: %s %lld is smaller than the %lld elements of %s it steps over (dims must not alias)",
                           op, stride_field(buf, sizeof buf, field, first, d), (long long)strides[d],
                           (long long)extent, name);
        int64_t span;
        if (__builtin_mul_overflow(strides[d], sizes[d] - 1, &span) || __builtin_add_overflow(span, extent, &extent))
            return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: %s spans more elements than int64 holds", op, name);
    }
    if ((uint64_t)extent > HK_MAX_TENSOR_BYTES / elem)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: %s spans %lld elements of %zu bytes, more than the 2^48 bytes a device addresses",
                       op, name, (long long)extent, elem);
    return HK_OK;
}

hk_status hk_check_layout(const char *op, const char *name, const char *field, int first, int rank,
                          const int64_t *sizes, const int64_t *strides, int64_t inner, size_t elem)
{
    return check_layout(op, name, field, first, rank, sizes, strides, inner, elem);
}

/* A rows x cols matrix with leading dimension ld (NULL when absent or empty), as an aliasing span. */
static hk_span matrix_span(const char *name, const void *p, int64_t rows, int64_t cols, int64_t ld, hk_dtype t)
{
    return (hk_span){name, p, hk_dtype_size(t), 1, {rows, 0, 0}, {ld, 0, 0}, cols, NULL, NULL, 0};
}

/* n contiguous elements of elem bytes. */
static hk_span vector_span(const char *name, const void *p, int64_t n, size_t elem)
{
    return (hk_span){name, p, elem, 0, {0, 0, 0}, {0, 0, 0}, p ? n : 0, NULL, NULL, 0};
}

/* Contiguous strides {outer, middle, inner} for [.., middle, inner] rows of `row` elements, overflow-checked. */
static hk_status contiguous_strides(const char *op, const char *name, int64_t stride[3], int64_t seqlen, int64_t heads,
                                    int64_t row, bool batched)
{
    int64_t token, sequence = 0;
    if (__builtin_mul_overflow(heads, row, &token) || (batched && __builtin_mul_overflow(seqlen, token, &sequence)))
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: %s spans more elements than int64 holds", op, name);
    stride[0] = sequence;
    stride[1] = token;
    stride[2] = row;
    return HK_OK;
}

/* ---------------------------------------------------------------- GEMM */

/* A rows x cols row-major matrix with leading dimension ld (its field ld_name); cols_name says which extent its rows
 * hold ("k", "m (trans_a)"). */
static hk_status check_matrix(const char *op, const char *name, const char *ld_name, const char *cols_name,
                              const void *p, int64_t rows, int64_t cols, int64_t ld, hk_dtype t)
{
    bool empty = rows == 0 || cols == 0;
    if (!empty && ld < cols)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: %s %lld is smaller than the row length of %s, %s = %lld", op,
                       ld_name, (long long)ld, name, cols_name, (long long)cols);
    if (ld < 0)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: %s %lld is negative", op, ld_name, (long long)ld);
    hk_status st = check_pointer(op, name, p, hk_dtype_size(t), !empty);
    if (st != HK_OK || empty)
        return st;
    int64_t sizes[1] = {rows}, strides[1] = {ld};
    return check_layout(op, name, ld_name, -1, 1, sizes, strides, cols, hk_dtype_size(t));
}

/* The first of a_type, b_type, d_type that names no hk_dtype, or NULL. */
static const char *unknown_dtype(const hk_gemm_args *a, hk_dtype *t)
{
    const hk_dtype types[3] = {a->a_type, a->b_type, a->d_type};
    static const char *const names[3] = {"a_type", "b_type", "d_type"};
    for (int i = 0; i < 3; ++i)
        if (!hk_dtype_size(types[i])) {
            *t = types[i];
            return names[i];
        }
    return NULL;
}

hk_status hk_validate_gemm(const hk_gemm_args *in, hk_gemm_args *a)
{
    const char *op = "gemm";
    hk_status st = copy_args(op, in, a, offsetof(hk_gemm_args, workspace), sizeof *a); /* 1.1 callers: no workspace */
    if (st != HK_OK)
        return st;
    if ((st = check_size(op, "m", a->m, 0)) || (st = check_size(op, "n", a->n, 0)) || (st = check_size(op, "k", a->k, 0)))
        return st;
    hk_dtype bad;
    const char *unknown = unknown_dtype(a, &bad);
    if (unknown)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "gemm: %s %d is not a hk_dtype", unknown, (int)bad);
    if (a->a_type != a->b_type)
        return hk_fail(HK_ERR_UNSUPPORTED, "gemm: a_type %s and b_type %s differ; mixed operand types are not supported",
                       hk_dtype_name(a->a_type), hk_dtype_name(a->b_type));
    if (!is_float_type(a->d_type))
        return hk_fail(HK_ERR_UNSUPPORTED, "gemm: d_type %s; supported: bf16, f16, f32", hk_dtype_name(a->d_type));
    if (is_fp8(a->a_type)) {
        if (a->d_type == HK_DTYPE_F16)
            return hk_fail(HK_ERR_UNSUPPORTED, "gemm: d_type f16 with fp8 operands; supported: bf16, f32");
        if (a->scale_a == 0.0f)
            a->scale_a = 1.0f;
        if (a->scale_b == 0.0f)
            a->scale_b = 1.0f;
        if (!isfinite(a->scale_a) || !isfinite(a->scale_b))
            return hk_fail(HK_ERR_INVALID_ARGUMENT, "gemm: %s %g must be finite (0 means 1)",
                           isfinite(a->scale_a) ? "scale_b" : "scale_a", isfinite(a->scale_a) ? a->scale_b : a->scale_a);
    } else if ((a->scale_a != 0.0f && a->scale_a != 1.0f) || (a->scale_b != 0.0f && a->scale_b != 1.0f)) {
        const bool sa = a->scale_a != 0.0f && a->scale_a != 1.0f;
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "gemm: %s %g applies to fp8 operands only (a_type %s; else 0 or 1)",
                       sa ? "scale_a" : "scale_b", sa ? a->scale_a : a->scale_b, hk_dtype_name(a->a_type));
    } else {
        a->scale_a = a->scale_b = 1.0f;
        a->fp8_fast_accum = 0;
    }
    a->fp8_fast_accum = a->fp8_fast_accum != 0;
    int64_t a_rows = a->trans_a ? a->k : a->m, a_cols = a->trans_a ? a->m : a->k;
    int64_t b_rows = a->trans_b ? a->n : a->k, b_cols = a->trans_b ? a->k : a->n;
    bool has_product = a->m > 0 && a->n > 0 && a->k > 0;
    if (has_product) {
        if ((st = check_matrix(op, "a", "lda", a->trans_a ? "m (trans_a)" : "k", a->a, a_rows, a_cols, a->lda,
                               a->a_type)) ||
            (st = check_matrix(op, "b", "ldb", a->trans_b ? "k (trans_b)" : "n", a->b, b_rows, b_cols, a->ldb,
                               a->b_type)))
            return st;
    }
    if ((st = check_matrix(op, "d", "ldd", "n", a->d, a->m, a->n, a->ldd, a->d_type)))
        return st;
    if (a->beta != 0.0f) {
        if (!a->c && a->m > 0 && a->n > 0)
            return hk_fail(HK_ERR_INVALID_ARGUMENT, "gemm: c is NULL but beta is %g (C may be NULL only when beta == 0)",
                           a->beta);
        if ((st = check_matrix(op, "c", "ldc", "n", a->c, a->m, a->n, a->ldc, a->d_type)))
            return st;
        if (a->c == a->d && a->ldc != a->ldd)
            return hk_fail(HK_ERR_INVALID_ARGUMENT, "gemm: c aliases d with ldc %lld != ldd %lld", (long long)a->ldc,
                           (long long)a->ldd);
    } else {
        a->c = NULL;
        a->ldc = 0;
    }
    if (a->workspace_size > 0 && !a->workspace)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "gemm: workspace is NULL but workspace_size is %zu", a->workspace_size);
    if (a->workspace && !hk_aligned16(a->workspace))
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "gemm: workspace %p is not 16-byte aligned", a->workspace);
    if (!a->workspace_size)
        a->workspace = NULL;
    a->trans_a = a->trans_a != 0;
    a->trans_b = a->trans_b != 0;
    if (!has_product)
        a_rows = b_rows = 0; /* A and B are not read */
    hk_span reads[3] = {matrix_span("a", a->a, a_rows, a_cols, a->lda, a->a_type),
                     matrix_span("b", a->b, b_rows, b_cols, a->ldb, a->b_type),
                     matrix_span("c", a->c, a->m, a->n, a->ldc, a->d_type)};
    hk_span writes[2] = {matrix_span("d", a->d, a->m, a->n, a->ldd, a->d_type),
                      vector_span("workspace", a->workspace, (int64_t)a->workspace_size, 1)};
    writes[0].in_place_of = "c";
    return hk_check_overlaps(op, writes, 2, reads, 3, "c == d with ldc == ldd");
}

/* ---------------------------------------------------------------- attention */

typedef struct attn_shape {
    int64_t batch, seqlen_q, seqlen_k, heads_q, heads_kv, head_dim;
    bool varlen;
} attn_shape;

static hk_status check_attn_shape(const char *op, hk_dtype dtype, const attn_shape *s, float *scale,
                                  const int32_t *cu_q, const int32_t *cu_k)
{
    hk_status st = check_float_dtype(op, "dtype", dtype);
    if (st || (st = check_size(op, "batch", s->batch, 0)) || (st = check_size(op, "seqlen_q", s->seqlen_q, 0)) ||
        (st = check_size(op, "seqlen_k", s->seqlen_k, 0)) || (st = check_size(op, "heads_q", s->heads_q, 1)) ||
        (st = check_size(op, "heads_kv", s->heads_kv, 1)) || (st = check_size(op, "head_dim", s->head_dim, 1)))
        return st;
    if (s->heads_q % s->heads_kv != 0)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: heads_q %lld is not a multiple of heads_kv %lld", op,
                       (long long)s->heads_q, (long long)s->heads_kv);
    if (!cu_q != !cu_k)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: cu_seqlens_q and cu_seqlens_k must be given together (got %s only)", op,
                       cu_q ? "cu_seqlens_q" : "cu_seqlens_k");
    if ((st = check_pointer(op, "cu_seqlens_q", cu_q, sizeof(int32_t), cu_q != NULL)) ||
        (st = check_pointer(op, "cu_seqlens_k", cu_k, sizeof(int32_t), cu_k != NULL)))
        return st;
    if (*scale == 0.0f)
        *scale = 1.0f / sqrtf((float)s->head_dim);
    if (!isfinite(*scale))
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: softmax_scale %g is not finite", op, *scale);
    return HK_OK;
}

/* The 1.3 fields: softcap finite and >= 0, head_dim_v resolved (0: head_dim), and the window in its normalised
 * form (internal.h). The bounds are per-sequence offsets, so any int64 is valid; comparisons against the maxima
 * keep every later sum within int64. */
static hk_status check_attn_extras(const char *op, const attn_shape *s, int *causal, int *window, int64_t *left,
                                   int64_t *right, float softcap, int64_t *head_dim_v)
{
    if (!isfinite(softcap) || softcap < 0.0f)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: softcap %g must be finite and >= 0 (0: no cap)", op, softcap);
    hk_status st = check_size(op, "head_dim_v", *head_dim_v, 0);
    if (st)
        return st;
    if (*head_dim_v == 0)
        *head_dim_v = s->head_dim;
    /* A side is unbounded when negative, or wide enough that no row of any sequence is cut by it: the last query
     * sits at seqlen_k - 1 on the key axis, the first at seqlen_k - seqlen_q, so a left bound >= seqlen_k or a right
     * bound >= seqlen_q reaches past every edge. */
    if (!*window || *left < 0 || *left >= s->seqlen_k)
        *left = -1;
    if (!*window || *right < 0 || *right >= s->seqlen_q)
        *right = -1;
    *causal = *causal != 0;
    if (*window && *causal)
        *right = 0; /* the causal edge */
    /* A window whose only edge is the causal one is the causal mask; one that cuts nothing is no window. */
    if (*window && *left < 0 && *right == 0)
        *causal = 1;
    *window = *left >= 0 || (*right >= 0 && !*causal);
    if (!*window)
        *left = *right = -1;
    return HK_OK;
}

/* Resolve a {batch, seq, head} stride triple (zeros: contiguous) over rows of `row` features and check the
 * tensor's layout. */
static hk_status attn_tensor(const char *op, const char *name, const char *field, const void *p, int64_t stride[3],
                             const attn_shape *s, int64_t seqlen, int64_t heads, int64_t row, hk_dtype dtype,
                             bool needed)
{
    size_t elem = hk_dtype_size(dtype);
    hk_status st;
    if (stride[0] == 0 && stride[1] == 0 && stride[2] == 0 &&
        (st = contiguous_strides(op, name, stride, seqlen, heads, row, !s->varlen)))
        return st;
    bool empty = s->batch == 0 || seqlen == 0;
    st = check_pointer(op, name, p, elem, needed && !empty);
    if (st != HK_OK || !p || empty)
        return st;
    int64_t sizes[3] = {s->varlen ? 1 : s->batch, seqlen, heads};
    return check_layout(op, name, field, 0, 3, sizes, stride, row, elem);
}

hk_status hk_validate_attn_fwd(const hk_attn_fwd_args *in, hk_attn_fwd_args *a)
{
    const char *op = "attn_fwd";
    /* libhk 1.2's struct ended before window */
    hk_status st = copy_args(op, in, a, offsetof(hk_attn_fwd_args, window), sizeof *a);
    if (st != HK_OK)
        return st;
    attn_shape s = {a->batch, a->seqlen_q, a->seqlen_k, a->heads_q, a->heads_kv, a->head_dim, a->cu_seqlens_q != NULL};
    if ((st = check_attn_shape(op, a->dtype, &s, &a->softmax_scale, a->cu_seqlens_q, a->cu_seqlens_k)) ||
        (st = check_attn_extras(op, &s, &a->causal, &a->window, &a->window_left, &a->window_right, a->softcap,
                                &a->head_dim_v)) ||
        (st = attn_tensor(op, "q", "q_stride", a->q, a->q_stride, &s, s.seqlen_q, s.heads_q, s.head_dim, a->dtype, true)) ||
        (st = attn_tensor(op, "k", "k_stride", a->k, a->k_stride, &s, s.seqlen_k, s.heads_kv, s.head_dim, a->dtype, true)) ||
        (st = attn_tensor(op, "v", "v_stride", a->v, a->v_stride, &s, s.seqlen_k, s.heads_kv, a->head_dim_v, a->dtype, true)) ||
        (st = attn_tensor(op, "o", "o_stride", a->o, a->o_stride, &s, s.seqlen_q, s.heads_q, a->head_dim_v, a->dtype, true)) ||
        (st = check_pointer(op, "lse", a->lse, sizeof(float), a->lse != NULL)))
        return st;
    return HK_OK;
}

hk_status hk_validate_attn_bwd(const hk_attn_bwd_args *in, hk_attn_bwd_args *a)
{
    const char *op = "attn_bwd";
    /* libhk 1.2's struct ended before window */
    hk_status st = copy_args(op, in, a, offsetof(hk_attn_bwd_args, window), sizeof *a);
    if (st != HK_OK)
        return st;
    attn_shape s = {a->batch, a->seqlen_q, a->seqlen_k, a->heads_q, a->heads_kv, a->head_dim, a->cu_seqlens_q != NULL};
    bool rows = s.batch > 0 && s.seqlen_q > 0;
    if ((st = check_attn_shape(op, a->dtype, &s, &a->softmax_scale, a->cu_seqlens_q, a->cu_seqlens_k)) ||
        (st = check_attn_extras(op, &s, &a->causal, &a->window, &a->window_left, &a->window_right, a->softcap,
                                &a->head_dim_v)) ||
        (st = attn_tensor(op, "q", "q_stride", a->q, a->q_stride, &s, s.seqlen_q, s.heads_q, s.head_dim, a->dtype, true)) ||
        (st = attn_tensor(op, "k", "k_stride", a->k, a->k_stride, &s, s.seqlen_k, s.heads_kv, s.head_dim, a->dtype, true)) ||
        (st = attn_tensor(op, "v", "v_stride", a->v, a->v_stride, &s, s.seqlen_k, s.heads_kv, a->head_dim_v, a->dtype, true)) ||
        (st = attn_tensor(op, "o", "o_stride", a->o, a->o_stride, &s, s.seqlen_q, s.heads_q, a->head_dim_v, a->dtype, true)) ||
        (st = attn_tensor(op, "d_o", "do_stride", a->d_o, a->do_stride, &s, s.seqlen_q, s.heads_q, a->head_dim_v, a->dtype, true)) ||
        (st = attn_tensor(op, "dq", "dq_stride", a->dq, a->dq_stride, &s, s.seqlen_q, s.heads_q, s.head_dim, a->dtype, true)) ||
        (st = attn_tensor(op, "dk", "dk_stride", a->dk, a->dk_stride, &s, s.seqlen_k, s.heads_kv, s.head_dim, a->dtype, true)) ||
        (st = attn_tensor(op, "dv", "dv_stride", a->dv, a->dv_stride, &s, s.seqlen_k, s.heads_kv, a->head_dim_v, a->dtype, true)) ||
        (st = check_pointer(op, "lse", a->lse, sizeof(float), rows)))
        return st;
    a->deterministic = a->deterministic != 0;
    if (a->workspace_size > 0 && !a->workspace)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "attn_bwd: workspace is NULL but workspace_size is %zu", a->workspace_size);
    return HK_OK;
}

/* ---------------------------------------------------------------- rotary */

hk_status hk_validate_rotary(const hk_rotary_args *in, hk_rotary_args *a)
{
    const char *op = "rotary";
    /* libhk 1.0's struct ended before table_type */
    hk_status st = copy_args(op, in, a, offsetof(hk_rotary_args, table_type), sizeof *a);
    if (st != HK_OK)
        return st;
    if ((st = check_float_dtype(op, "dtype", a->dtype)) ||
        (st = check_param_type(op, "table_type", &a->table_type, a->dtype)) ||
        (st = check_size(op, "batch", a->batch, 0)) || (st = check_size(op, "seqlen", a->seqlen, 0)) ||
        (st = check_size(op, "heads", a->heads, 0)) || (st = check_size(op, "head_dim", a->head_dim, 1)) ||
        (st = check_size(op, "rotary_dim", a->rotary_dim, 0)) ||
        (st = check_size(op, "position_offset", a->position_offset, 0)))
        return st;
    if (a->rotary_dim == 0)
        a->rotary_dim = a->head_dim;
    if (a->rotary_dim % 2 != 0 || a->rotary_dim > a->head_dim)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "rotary: rotary_dim %lld must be even and <= head_dim %lld",
                       (long long)a->rotary_dim, (long long)a->head_dim);
    if (a->style != HK_ROTARY_HALF && a->style != HK_ROTARY_INTERLEAVED)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "rotary: style %d is not HALF (0) or INTERLEAVED (1)", (int)a->style);
    a->inverse = a->inverse != 0;
    bool empty = a->batch == 0 || a->seqlen == 0 || a->heads == 0;
    size_t elem = hk_dtype_size(a->dtype), table_elem = hk_dtype_size(a->table_type);
    int64_t sizes[3] = {a->batch, a->seqlen, a->heads};
    int64_t *strides[2] = {a->x_stride, a->out_stride};
    for (int t = 0; t < 2; ++t) {
        int64_t *s = strides[t];
        if (s[0] == 0 && s[1] == 0 && s[2] == 0 &&
            (st = contiguous_strides(op, t ? "out" : "x", s, a->seqlen, a->heads, a->head_dim, true)))
            return st;
        if (!empty && (st = check_layout(op, t ? "out" : "x", t ? "out_stride" : "x_stride", 0, 3, sizes, s, a->head_dim,
                                         elem)))
            return st;
    }
    if ((st = check_pointer(op, "x", a->x, elem, !empty)) || (st = check_pointer(op, "out", a->out, elem, !empty)) ||
        (st = check_pointer(op, "cos", a->cos, table_elem, !empty)) ||
        (st = check_pointer(op, "sin", a->sin, table_elem, !empty)) ||
        (st = check_pointer(op, "position_ids", a->position_ids, sizeof(int32_t), a->position_ids != NULL)))
        return st;
    if (empty)
        return HK_OK;
    if (a->out == a->x && memcmp(a->x_stride, a->out_stride, sizeof a->x_stride) != 0)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "rotary: in place (out == x) needs out_stride equal to x_stride");
    if (a->table_positions < 1)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "rotary: table_positions %lld must be >= 1", (long long)a->table_positions);
    if (!a->position_ids && a->position_offset > a->table_positions - a->seqlen)
        return hk_fail(HK_ERR_INVALID_ARGUMENT,
                       "rotary: positions up to position_offset %lld + seqlen %lld exceed table_positions %lld",
                       (long long)a->position_offset, (long long)a->seqlen, (long long)a->table_positions);
    int64_t table;
    if (__builtin_mul_overflow(a->table_positions, a->rotary_dim / 2, &table) ||
        (uint64_t)table > HK_MAX_TENSOR_BYTES / table_elem)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "rotary: the cos/sin tables of table_positions %lld span more than 2^48 bytes",
                       (long long)a->table_positions);
    hk_span reads[4] = {{"x", a->x, elem, 3, {a->batch, a->seqlen, a->heads}, {a->x_stride[0], a->x_stride[1], a->x_stride[2]},
                      a->head_dim, NULL, NULL, 0},
                     vector_span("cos", a->cos, table, table_elem), vector_span("sin", a->sin, table, table_elem),
                     vector_span("position_ids", a->position_ids, a->batch * a->seqlen, sizeof(int32_t))};
    hk_span writes = {"out", a->out, elem, 3, {a->batch, a->seqlen, a->heads},
                   {a->out_stride[0], a->out_stride[1], a->out_stride[2]}, a->head_dim, "x", NULL, 0};
    return hk_check_overlaps(op, &writes, 1, reads, 4, "out == x with out_stride == x_stride");
}

/* ---------------------------------------------------------------- dropout + residual + norm */

static hk_status check_rows(const char *op, const char *name, const void *p, int64_t *stride, int64_t rows, int64_t cols,
                            hk_dtype t, bool needed)
{
    if (*stride == 0)
        *stride = cols;
    bool empty = rows == 0 || cols == 0;
    if (!p && !needed)
        return HK_OK;
    if (*stride < cols && rows > 1)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: %s_stride %lld is smaller than cols %lld", op, name, (long long)*stride,
                       (long long)cols);
    hk_status st = check_pointer(op, name, p, hk_dtype_size(t), !empty);
    if (st != HK_OK || empty)
        return st;
    int64_t sizes[1] = {rows};
    char field[32];
    hk_format(field, sizeof field, "%s_stride", name);
    return check_layout(op, name, field, -1, 1, sizes, stride, cols, hk_dtype_size(t));
}

static hk_status check_norm_common(const char *op, hk_norm_type norm, hk_dtype dtype, hk_dtype *param_type, int64_t rows,
                                   int64_t cols, float dropout_p)
{
    hk_status st;
    if (norm != HK_NORM_LAYER && norm != HK_NORM_RMS)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: norm %d is not LAYER (0) or RMS (1)", op, (int)norm);
    if ((st = check_float_dtype(op, "dtype", dtype)) || (st = check_size(op, "rows", rows, 0)) ||
        (st = check_size(op, "cols", cols, 0)) || (st = check_param_type(op, "param_type", param_type, dtype)))
        return st;
    if (!(dropout_p >= 0.0f && dropout_p < 1.0f))
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: dropout_p %g must be in [0, 1)", op, dropout_p);
    return HK_OK;
}

/* The optional packed keep mask: HK_DROPOUT_MASK_WORDS(cols) uint32 words per row. */
static hk_status check_dropout_mask(const char *op, const uint32_t *mask, int64_t rows, int64_t cols)
{
    int64_t words;
    if (mask && __builtin_mul_overflow(rows, (int64_t)HK_DROPOUT_MASK_WORDS(cols), &words))
        return hk_fail(HK_ERR_INVALID_ARGUMENT,
                       "%s: dropout_mask of rows %lld x HK_DROPOUT_MASK_WORDS(cols %lld) words overflows int64", op,
                       (long long)rows, (long long)cols);
    return check_pointer(op, "dropout_mask", mask, sizeof(uint32_t), mask != NULL);
}

hk_status hk_validate_ln_fused(const hk_ln_fused_args *in, hk_ln_fused_args *a)
{
    const char *op = "ln_fused";
    hk_status st = copy_args(op, in, a, sizeof *a, sizeof *a);
    if (st != HK_OK)
        return st;
    if ((st = check_norm_common(op, a->norm, a->dtype, &a->param_type, a->rows, a->cols, a->dropout_p)))
        return st;
    if (a->epsilon == 0.0f)
        a->epsilon = 1e-5f;
    if (!(a->epsilon > 0.0f) || !isfinite(a->epsilon))
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "ln_fused: epsilon %g must be positive and finite", a->epsilon);
    if (a->norm == HK_NORM_RMS && a->beta)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "ln_fused: beta must be NULL for RMSNorm");
    bool rows = a->rows > 0 && a->cols > 0;
    size_t param = hk_dtype_size(a->param_type);
    if ((st = check_rows(op, "x", a->x, &a->x_stride, a->rows, a->cols, a->dtype, true)) ||
        (st = check_rows(op, "residual", a->residual, &a->residual_stride, a->rows, a->cols, a->dtype, false)) ||
        (st = check_rows(op, "y", a->y, &a->y_stride, a->rows, a->cols, a->dtype, true)) ||
        (st = check_rows(op, "residual_out", a->residual_out, &a->residual_out_stride, a->rows, a->cols, a->dtype, false)) ||
        (st = check_pointer(op, "gamma", a->gamma, param, rows)) ||
        (st = check_pointer(op, "beta", a->beta, param, a->beta != NULL)) ||
        (st = check_pointer(op, "mean", a->mean, sizeof(float), a->mean != NULL)) ||
        (st = check_pointer(op, "rstd", a->rstd, sizeof(float), a->rstd != NULL)) ||
        (st = check_dropout_mask(op, a->dropout_mask, a->rows, a->cols)))
        return st;
    int64_t r = rows ? a->rows : 0, words = rows ? a->rows * HK_DROPOUT_MASK_WORDS(a->cols) : 0;
    hk_span reads[4] = {matrix_span("x", a->x, r, a->cols, a->x_stride, a->dtype),
                     matrix_span("residual", a->residual, r, a->cols, a->residual_stride, a->dtype),
                     vector_span("gamma", a->gamma, rows ? a->cols : 0, param), vector_span("beta", a->beta, rows ? a->cols : 0, param)};
    hk_span writes[5] = {matrix_span("y", a->y, r, a->cols, a->y_stride, a->dtype),
                      matrix_span("residual_out", a->residual_out, r, a->cols, a->residual_out_stride, a->dtype),
                      vector_span("mean", a->mean, r, sizeof(float)), vector_span("rstd", a->rstd, r, sizeof(float)),
                      vector_span("dropout_mask", a->dropout_mask, words, sizeof(uint32_t))};
    return hk_check_overlaps(op, writes, 5, reads, 4, "none");
}

hk_status hk_validate_ln_fused_bwd(const hk_ln_fused_bwd_args *in, hk_ln_fused_bwd_args *a)
{
    const char *op = "ln_fused_bwd";
    hk_status st = copy_args(op, in, a, sizeof *a, sizeof *a);
    if (st != HK_OK)
        return st;
    if ((st = check_norm_common(op, a->norm, a->dtype, &a->param_type, a->rows, a->cols, a->dropout_p)))
        return st;
    if (a->norm == HK_NORM_RMS && a->dbeta)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "ln_fused_bwd: dbeta must be NULL for RMSNorm");
    bool rows = a->rows > 0 && a->cols > 0;
    if ((st = check_rows(op, "dy", a->dy, &a->dy_stride, a->rows, a->cols, a->dtype, true)) ||
        (st = check_rows(op, "z", a->z, &a->z_stride, a->rows, a->cols, a->dtype, true)) ||
        (st = check_rows(op, "dz_extra", a->dz_extra, &a->dz_extra_stride, a->rows, a->cols, a->dtype, false)) ||
        (st = check_rows(op, "dx", a->dx, &a->dx_stride, a->rows, a->cols, a->dtype, true)) ||
        (st = check_rows(op, "dresidual", a->dresidual, &a->dresidual_stride, a->rows, a->cols, a->dtype, false)) ||
        (st = check_pointer(op, "gamma", a->gamma, hk_dtype_size(a->param_type), rows)) ||
        (st = check_pointer(op, "mean", a->mean, sizeof(float), rows && a->norm == HK_NORM_LAYER)) ||
        (st = check_pointer(op, "rstd", a->rstd, sizeof(float), rows)) ||
        (st = check_pointer(op, "dgamma", a->dgamma, sizeof(float), a->dgamma != NULL)) ||
        (st = check_pointer(op, "dbeta", a->dbeta, sizeof(float), a->dbeta != NULL)) ||
        (st = check_dropout_mask(op, a->dropout_mask, a->rows, a->cols)))
        return st;
    if (a->workspace_size > 0 && !a->workspace)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "ln_fused_bwd: workspace is NULL but workspace_size is %zu", a->workspace_size);
    int64_t r = rows ? a->rows : 0, c = rows ? a->cols : 0, words = rows ? a->rows * HK_DROPOUT_MASK_WORDS(a->cols) : 0;
    size_t param = hk_dtype_size(a->param_type);
    hk_span reads[7] = {matrix_span("dy", a->dy, r, a->cols, a->dy_stride, a->dtype),
                     matrix_span("z", a->z, r, a->cols, a->z_stride, a->dtype),
                     matrix_span("dz_extra", a->dz_extra, r, a->cols, a->dz_extra_stride, a->dtype),
                     vector_span("gamma", a->gamma, c, param), vector_span("mean", a->mean, r, sizeof(float)),
                     vector_span("rstd", a->rstd, r, sizeof(float)),
                     vector_span("dropout_mask", a->dropout_mask, words, sizeof(uint32_t))};
    hk_span writes[5] = {matrix_span("dx", a->dx, r, a->cols, a->dx_stride, a->dtype),
                      matrix_span("dresidual", a->dresidual, r, a->cols, a->dresidual_stride, a->dtype),
                      vector_span("dgamma", a->dgamma, c, sizeof(float)),
                      vector_span("dbeta", a->dbeta, c, sizeof(float)),
                      vector_span("workspace", a->workspace, (int64_t)a->workspace_size, 1)};
    return hk_check_overlaps(op, writes, 5, reads, 7, "none");
}
