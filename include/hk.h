/*
 * libhk: fused AI kernels behind a stable C ABI.
 *
 * ABI rules
 * - Every handle is opaque. Every argument struct starts with `size_t struct_size`; initialise it with
 *   HK_ARGS_INIT(type), which sets struct_size and zeroes the rest. The library reads only the first
 *   struct_size bytes, so fields appended in later versions take their defaults for older callers. A struct_size
 *   over 4096 bytes is refused; bytes past the struct this library knows must be zero (else HK_ERR_UNSUPPORTED).
 * - A handle (hk_context *, hk_event *) that was destroyed, or never returned by the library, is refused with
 *   HK_ERR_INVALID_ARGUMENT (never dereferenced), whatever was created since. Destroying a context also destroys
 *   its events and frees the memory still allocated with hk_malloc on it.
 * - A zero field means its documented default. Strides are in elements; an all-zero stride triple means
 *   "contiguous". Sizes are int64_t and must be >= 0 (>= 1 where stated). A tensor spans at most 2^48 bytes (from
 *   its first element to the end of its last), what device address spaces hold.
 * - Aliasing: an output shares no byte with another tensor of the call (inputs, other outputs, the workspace),
 *   except the in-place forms each op names (an output that is exactly one input: same pointer, same layout).
 *   Partial overlaps are refused. Tensors may interleave (Q, K and V packed in one buffer, each with its own
 *   start and the buffer's strides): their elements, not their address ranges, must be disjoint. Inputs may
 *   overlap each other freely.
 * - Pointers passed to ops live on the context's device (host memory for the CPU and emulator backends).
 *   `stream` is a hipStream_t / CUstream on GPU backends, NULL for the default stream, ignored on the CPU.
 * - Functions return hk_status; on failure hk_last_error() (thread-local) says which argument broke which rule.
 * - The library never prints and never aborts. GPU contexts allocate no host or device memory on an op's hot path:
 *   a kernel's code object is loaded, and its family's handle table allocated, at the first call that launches it.
 *   The CPU and emulator backends, references and fallbacks rather than fast paths, allocate host scratch (fp32
 *   copies, packed panels, row buffers) and start worker threads (HK_NUM_THREADS, default the online cores, less
 *   the calling one) in each call, and free and join them all before the call returns (no idle threads, nothing
 *   kept between calls). On every backend, libhk allocates nothing for a call that validation rejects.
 */
#ifndef HK_H
#define HK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define HK_API
#else
#define HK_API __attribute__((visibility("default")))
#endif

#define HK_VERSION_MAJOR 1
#define HK_VERSION_MINOR 3
#define HK_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH */
#define HK_VERSION (HK_VERSION_MAJOR * 10000 + HK_VERSION_MINOR * 100 + HK_VERSION_PATCH)

#ifdef __cplusplus
#define HK_ARGS_INIT(type) { sizeof(type) }
#else
#define HK_ARGS_INIT(type) { .struct_size = sizeof(type) }
#endif

/* ---------------------------------------------------------------- status, version */

typedef enum hk_status {
    HK_OK = 0,
    HK_ERR_INVALID_ARGUMENT = 1, /* the caller broke a documented rule */
    HK_ERR_UNSUPPORTED = 2,      /* valid, but no kernel of this context covers it */
    HK_ERR_NO_DEVICE = 3,        /* the requested backend or device is not present */
    HK_ERR_OUT_OF_MEMORY = 4,
    HK_ERR_RUNTIME = 5,          /* the vendor runtime or driver reported an error */
    HK_ERR_INTERNAL = 6
} hk_status;

HK_API int hk_version(void);                 /* HK_VERSION of the loaded library */
HK_API const char *hk_version_string(void);  /* "1.1.0" */
HK_API const char *hk_status_string(hk_status status);
/* Message of the last failing call on this thread ("" when none); valid until the thread's next hk_ call. */
HK_API const char *hk_last_error(void);

/* ---------------------------------------------------------------- types */

typedef enum hk_dtype {
    HK_DTYPE_NONE = 0,
    HK_DTYPE_F32 = 1,
    HK_DTYPE_F16 = 2,
    HK_DTYPE_BF16 = 3,
    HK_DTYPE_FP8_E4M3 = 4,      /* OCP e4m3fn: bias 7, max 448, NaN 0x7F/0xFF */
    HK_DTYPE_FP8_E4M3FNUZ = 5   /* bias 8, max 240, NaN 0x80 only */
} hk_dtype;

HK_API size_t hk_dtype_size(hk_dtype dtype); /* 0 for an unknown dtype */
HK_API const char *hk_dtype_name(hk_dtype dtype);

typedef enum hk_backend {
    HK_BACKEND_AUTO = 0,   /* HK_BACKEND env var if set, else HIP, then CUDA, then CPU */
    HK_BACKEND_CPU = 1,
    HK_BACKEND_HIP = 2,
    HK_BACKEND_CUDA = 3,
    HK_BACKEND_EMULATOR = 4 /* AMD kernel sources run on the CPU by the wave emulator (tests, host memory) */
} hk_backend;

HK_API const char *hk_backend_name(hk_backend backend);

typedef enum hk_op {
    HK_OP_GEMM = 0,
    HK_OP_ATTN_FWD = 1,
    HK_OP_ATTN_BWD = 2,
    HK_OP_ROTARY = 3,
    HK_OP_LN_FUSED = 4,
    HK_OP_LN_FUSED_BWD = 5,
    HK_OP_COUNT_ = 6
} hk_op;

HK_API const char *hk_op_name(hk_op op);

/* ---------------------------------------------------------------- context */

typedef struct hk_context hk_context;

typedef struct hk_context_options {
    size_t struct_size;
    hk_backend backend;   /* AUTO by default */
    int device_index;     /* GPU ordinal of the backend's runtime */
    const char *arch;     /* EMULATOR only: "gfx942" or "gfx950" (default "gfx942") */
} hk_context_options;

/* opts may be NULL for all defaults. A context is thread-safe; several may coexist (one per GPU). */
HK_API hk_status hk_context_create(const hk_context_options *opts, hk_context **ctx);
/* NULL, or a handle already destroyed, is a no-op; the caller stops using its streams first. Its events and its
 * hk_malloc memory go with it. */
HK_API void hk_context_destroy(hk_context *ctx);

HK_API hk_backend hk_context_backend(const hk_context *ctx);
HK_API const char *hk_context_arch(const hk_context *ctx);        /* "gfx942", "gfx950", "sm_90a", "cpu", ... */
HK_API const char *hk_context_device_name(const hk_context *ctx);

typedef struct hk_variant_info {
    size_t struct_size;
    hk_op op;
    const char *name;        /* e.g. "cuda.gemm.wgmma" */
    const char *description; /* what it covers */
} hk_variant_info;

/* The index-th kernel variant usable by this context (in order of preference within an op).
 * Returns HK_ERR_INVALID_ARGUMENT past the last one. */
HK_API hk_status hk_context_variant(const hk_context *ctx, size_t index, hk_variant_info *info);

/* Try to bring up a backend without creating a context; on failure `why` says what was missing.
 * Used by hk-info. `why` may be NULL. */
HK_API hk_status hk_probe(hk_backend backend, char *why, size_t why_size);

/* Live device readings for hk-info and hk-bench. HIP contexts read them through rocm-smi (dlopened
 * librocm_smi64) when it is present; a field that cannot be read is -1. Other contexts, and HIP hosts without
 * rocm-smi, return HK_ERR_UNSUPPORTED with the reason. Never prints. */
typedef struct hk_device_telemetry {
    size_t struct_size;
    double core_clock_mhz, memory_clock_mhz;
    double power_w, temperature_c;
    double memory_total_bytes, memory_used_bytes;
} hk_device_telemetry;

HK_API hk_status hk_context_telemetry(const hk_context *ctx, hk_device_telemetry *telemetry);

/* Embedded device code objects: the index-th object's arch ("gfx942", "sm_90a"), its kernel names (a
 * comma-separated list) and its size. Returns HK_ERR_INVALID_ARGUMENT past the last one. */
HK_API hk_status hk_code_object(size_t index, const char **arch, const char **kernels, size_t *bytes);

/* ---------------------------------------------------------------- memory and streams */

typedef enum hk_copy_kind {
    HK_COPY_HOST_TO_DEVICE = 0,
    HK_COPY_DEVICE_TO_HOST = 1,
    HK_COPY_DEVICE_TO_DEVICE = 2
} hk_copy_kind;

/* Device memory of the context (host memory, 256-byte aligned, on CPU/emulator contexts). */
HK_API hk_status hk_malloc(hk_context *ctx, void **ptr, size_t bytes);
/* ptr: NULL, or exactly what hk_malloc on this context returned and not yet freed; anything else is refused. */
HK_API hk_status hk_free(hk_context *ctx, void *ptr);
/* Blocking copy; ordered after all work on the default stream. */
HK_API hk_status hk_memcpy(hk_context *ctx, void *dst, const void *src, size_t bytes, hk_copy_kind kind);
HK_API hk_status hk_memset(hk_context *ctx, void *ptr, int value, size_t bytes);
HK_API hk_status hk_synchronize(hk_context *ctx, void *stream); /* wait for the stream (NULL: default) */

typedef struct hk_event hk_event;
HK_API hk_status hk_event_create(hk_context *ctx, hk_event **event);
HK_API hk_status hk_event_record(hk_event *event, void *stream);
/* Milliseconds between two recorded events of one context; waits for `end`. An event never recorded is refused. */
HK_API hk_status hk_event_elapsed_ms(hk_event *start, hk_event *end, float *ms);
HK_API void hk_event_destroy(hk_event *event);

/* ---------------------------------------------------------------- GEMM
 * D[m, n] = alpha * scale_a * scale_b * sum_k op(A)[m, k] * op(B)[k, n] + beta * C[m, n]
 * Row-major storage. op(A) is m x k: trans_a == 0 reads A[m][k] at a[m * lda + k] (lda >= k),
 * trans_a != 0 reads a[k * lda + m] (lda >= m). op(B) is k x n: trans_b == 0 reads b[k * ldb + n]
 * (ldb >= n), trans_b != 0 reads b[n * ldb + k] (ldb >= k). "A row-major x B transposed" (the
 * nn.Linear layout) is trans_b = 1. D and C are m x n with ldd, ldc >= n; C has D's dtype and may
 * alias D exactly (same pointer and ld): the one in-place form. D and the workspace overlap nothing else.
 * Accumulation is fp32.
 * dtypes: a_type == b_type in {BF16, F16, F32} with d_type in {BF16, F16, F32}; or a_type == b_type in
 * {FP8_E4M3, FP8_E4M3FNUZ} with d_type BF16 (or F32). scale_a/scale_b apply to fp8 only (0 means 1.0; with
 * non-fp8 operands they must be 0 or 1).
 * fp8_fast_accum (fp8 only): non-zero lets the tensor cores accumulate all of K at their reduced fp8 precision
 * (cuBLASLt's FAST_ACCUM; relative error on sm_90a about 1e-3 at k = 2048-4096, growing with k: 3e-3 at 16384).
 * Zero: fp32 accumulation; on sm_90a the tensor cores sum each 128 elements of K and the kernel adds those sums
 * in fp32, as cuBLASLt's default mode does (relative error about 1.3e-4 whatever k, against ~1e-6 on the CPU
 * reference), at lower speed.
 * C may be NULL only when beta == 0; then C is not read (NaNs in C do not propagate).
 * workspace (optional, 16-byte aligned device memory, as cuBLASLt's): where the output has few tiles and K is
 * long, the sm_90a kernels split K over more CTAs and add the parts in it; where many tiles leave the last round of
 * CTAs part empty and K is long, the last two rounds' tiles are split into parts of K that meet in it.
 * hk_gemm_workspace_size() says how much this call can use (0: none); with less, or NULL, hk_gemm runs without
 * splitting. Per arch: CUDA (sm_90a) contexts ask for bytes wherever their route splits K (long K over few tiles
 * among them), and where A or B rows are not on 16 bytes (pointer or leading dimension): those are copied to aligned
 * rows in it first, for the TMA kernels (without it another kernel reads them in place); CPU, emulator and HIP
 * (gfx942, gfx950) contexts never split K and always answer 0. Its contents need no initialising, and results do not
 * depend on them (the parts are added in a fixed order). GEMMs that may run at the same time (other streams) need
 * separate workspaces. */
typedef struct hk_gemm_args {
    size_t struct_size;
    int64_t m, n, k;
    hk_dtype a_type, b_type, d_type;
    int trans_a, trans_b;
    const void *a; int64_t lda;
    const void *b; int64_t ldb;
    const void *c; int64_t ldc;
    void *d; int64_t ldd;
    float alpha, beta;
    float scale_a, scale_b;
    int fp8_fast_accum;
    void *stream;
    void *workspace; size_t workspace_size; /* since 1.2 */
} hk_gemm_args;

HK_API hk_status hk_gemm(hk_context *ctx, const hk_gemm_args *args);
HK_API hk_status hk_gemm_workspace_size(hk_context *ctx, const hk_gemm_args *args, size_t *bytes);

/* ---------------------------------------------------------------- attention
 * Q, O: [batch, seqlen_q, heads_q, head_dim]; K, V: [batch, seqlen_k, heads_kv, head_dim]. Strides are
 * {batch, seq, head} in elements, the last dimension contiguous; all-zero means contiguous. heads_q must be a
 * multiple of heads_kv (query head h reads kv head h / (heads_q / heads_kv)).
 * causal: query i may see key j iff j <= i + seqlen_k - seqlen_q (bottom-right aligned, as FlashAttention 2.1+);
 * a query row that sees no key outputs zeros and LSE = -inf.
 * softmax_scale: 0 means 1 / sqrt(head_dim).
 * lse (optional, fp32): [batch, heads_q, seqlen_q] contiguous, natural log of the row's sum of exp(scale*s).
 * Variable length: when cu_seqlens_q is set (cu_seqlens_k too), batch is the number of sequences,
 * cu_seqlens_* hold batch + 1 int32 offsets (device memory) into a packed token dimension, the batch stride
 * is ignored, seqlen_q / seqlen_k are the maxima, and lse is [heads_q, total_q]. Offsets must start >= 0 and never
 * decrease, and no sequence may be longer than its maximum; total_q / total_k are cu_seqlens_*[batch].
 * The call checks them before it launches anything: on a GPU context it waits for `stream` (so offsets written by
 * work queued on it are ready), copies them to the host and checks them there, which blocks the calling
 * thread until the stream's earlier work is done. Workspace queries do not read them.
 * Aliasing: no in-place form; O and LSE (dQ, dK, dV and the workspace in the backward) overlap nothing else.
 * Since 1.3 (each zero keeps the 1.2 behaviour):
 * - window != 0: a sliding window (FlashAttention's window_size). With off = seqlen_k - seqlen_q of the row's
 *   sequence, query i sees key j iff i + off - window_left <= j <= i + off + window_right; a negative
 *   window_left or window_right leaves that side unbounded (any values are valid). With causal the right edge
 *   is the causal one (window_right is then min(window_right, 0), a negative one counting as 0). A row whose
 *   window holds no key outputs zeros and LSE = -inf, as with causal.
 * - softcap > 0: the scaled scores s go through softcap * tanh(s / softcap) before the softmax (Gemma 2);
 *   lse is taken over the capped scores, and the backward's dS passes through the cap's derivative
 *   1 - tanh^2(s / softcap). Must be finite and >= 0.
 * - head_dim_v > 0: V and O (and dV, dO in the backward) have head_dim_v features instead of head_dim
 *   (DeepSeek's 192 / 128); Q and K keep head_dim. The default softmax_scale stays 1 / sqrt(head_dim).
 *   Must be >= 0. */
typedef struct hk_attn_fwd_args {
    size_t struct_size;
    hk_dtype dtype; /* BF16 or F16 (F32 on the CPU) */
    int64_t batch, seqlen_q, seqlen_k, heads_q, heads_kv, head_dim;
    const void *q; int64_t q_stride[3];
    const void *k; int64_t k_stride[3];
    const void *v; int64_t v_stride[3];
    void *o; int64_t o_stride[3];
    float *lse;
    float softmax_scale;
    int causal;
    const int32_t *cu_seqlens_q, *cu_seqlens_k;
    void *stream;
    int window; int64_t window_left, window_right; /* since 1.3 */
    float softcap;                                 /* since 1.3 */
    int64_t head_dim_v;                            /* since 1.3 */
} hk_attn_fwd_args;

HK_API hk_status hk_attn_fwd(hk_context *ctx, const hk_attn_fwd_args *args);

/* Backward of hk_attn_fwd: from dO, Q, K, V, O and the forward's LSE produce dQ, dK, dV (same layouts and
 * strides rules as their forward counterparts; dK/dV sum over the query heads that share a kv head).
 * window, softcap and head_dim_v (since 1.3) mean what they mean in the forward and must match its call.
 * workspace: hk_attn_bwd_workspace_size() bytes of 16-byte aligned device memory (may be NULL when that is 0);
 * its contents need no initialising. The size depends on deterministic (sm_90a: an fp32 dQ accumulator and, when
 * deterministic, the counters that order the additions into it; CPU contexts: 0).
 * deterministic: non-zero forbids run-to-run variation (no floating-point atomics). */
typedef struct hk_attn_bwd_args {
    size_t struct_size;
    hk_dtype dtype;
    int64_t batch, seqlen_q, seqlen_k, heads_q, heads_kv, head_dim;
    const void *q; int64_t q_stride[3];
    const void *k; int64_t k_stride[3];
    const void *v; int64_t v_stride[3];
    const void *o; int64_t o_stride[3];
    const void *d_o; int64_t do_stride[3];
    const float *lse;
    void *dq; int64_t dq_stride[3];
    void *dk; int64_t dk_stride[3];
    void *dv; int64_t dv_stride[3];
    float softmax_scale;
    int causal;
    int deterministic;
    const int32_t *cu_seqlens_q, *cu_seqlens_k;
    void *workspace; size_t workspace_size;
    void *stream;
    int window; int64_t window_left, window_right; /* since 1.3 */
    float softcap;                                 /* since 1.3 */
    int64_t head_dim_v;                            /* since 1.3 */
} hk_attn_bwd_args;

HK_API hk_status hk_attn_bwd_workspace_size(hk_context *ctx, const hk_attn_bwd_args *args, size_t *bytes);
HK_API hk_status hk_attn_bwd(hk_context *ctx, const hk_attn_bwd_args *args);

/* ---------------------------------------------------------------- rotary embedding
 * x, out: [batch, seqlen, heads, head_dim], strides {batch, seq, head} (last dim contiguous); out == x with
 * out_stride == x_stride is in place, the one in-place form (out overlaps nothing else). The first rotary_dim (even, <= head_dim; 0 means head_dim) features are rotated, the rest copied.
 * cos, sin: [table_positions, rotary_dim / 2] contiguous, of table_type: F32 or the activation dtype (NONE means
 * F32), on every backend. Tables in the activation dtype halve the table bytes; the math stays fp32. Token t of
 * batch b uses position position_ids[b * seqlen + t] when position_ids is set, else position_offset + t; every
 * position must be < table_positions (out-of-range positions on GPUs are clamped, never read out of bounds).
 * HALF (GPT-NeoX): pairs (i, i + rotary_dim/2); INTERLEAVED (GPT-J): pairs (2i, 2i + 1). With frequency i:
 *   y1 = x1 cos - x2 sin, y2 = x2 cos + x1 sin; inverse != 0 rotates by -theta (the backward). */
typedef enum hk_rotary_style { HK_ROTARY_HALF = 0, HK_ROTARY_INTERLEAVED = 1 } hk_rotary_style;

typedef struct hk_rotary_args {
    size_t struct_size;
    hk_dtype dtype; /* BF16, F16 or F32 */
    int64_t batch, seqlen, heads, head_dim, rotary_dim;
    const void *x; int64_t x_stride[3];
    void *out; int64_t out_stride[3];
    const void *cos, *sin; int64_t table_positions;
    int64_t position_offset;
    const int32_t *position_ids;
    hk_rotary_style style;
    int inverse;
    void *stream;
    hk_dtype table_type; /* since 1.1: the element type of cos and sin (see above) */
} hk_rotary_args;

HK_API hk_status hk_rotary(hk_context *ctx, const hk_rotary_args *args);

/* ---------------------------------------------------------------- dropout + residual + norm
 * For each row r and column c (rows x cols, row strides in elements, columns contiguous):
 *   z = dropout(x) + residual          (residual optional; residual_out = z, optional)
 *   y = (z - mean) * rstd * gamma + beta   LayerNorm (beta optional)
 *   y = z * rstd * gamma                   RMSNorm (mean not computed; beta must be NULL)
 * Statistics are fp32; mean/rstd (optional) are fp32 [rows]. epsilon 0 means 1e-5.
 * No in-place form, here or in the backward: each output overlaps no input, other output or workspace.
 * gamma/beta have param_type (F32, or the activation dtype; NONE means F32).
 * Dropout keeps an element with probability 1 - dropout_p and scales it by 1 / (1 - dropout_p), 0 <= p < 1;
 * a dropped element is exactly 0 (even where x is inf or NaN). Statistics are taken over z in fp32 before z is
 * rounded to the activation dtype for residual_out.
 * Mask: element i = r * cols + c draws Philox4x32-10 with key {seed lo, seed hi} and counter
 * {(i/4) lo, (i/4) hi, offset lo, offset hi}; it is kept iff output word i % 4 >= hk_dropout_threshold(p).
 * Each (seed, offset) pair gives an independent mask: advance offset once per call.
 * dropout_mask (optional, 4-byte aligned, HK_DROPOUT_MASK_WORDS(cols) uint32 words per row, rows packed): the
 * forward also writes the mask there, bit c % 32 of word r * HK_DROPOUT_MASK_WORDS(cols) + c / 32 set iff
 * element (r, c) is kept (bits past cols are 0); the backward can then read it instead of drawing Philox again,
 * which is most of its arithmetic (1 bit per element: 1/16 of a bf16 tensor's bytes). */
#define HK_DROPOUT_MASK_WORDS(cols) (((cols) + 31) / 32)

typedef enum hk_norm_type { HK_NORM_LAYER = 0, HK_NORM_RMS = 1 } hk_norm_type;

typedef struct hk_ln_fused_args {
    size_t struct_size;
    hk_norm_type norm;
    hk_dtype dtype;        /* x, residual, y, residual_out: BF16, F16 or F32 */
    hk_dtype param_type;
    int64_t rows, cols;
    const void *x; int64_t x_stride;
    const void *residual; int64_t residual_stride;
    const void *gamma, *beta;
    void *y; int64_t y_stride;
    void *residual_out; int64_t residual_out_stride;
    float *mean, *rstd;
    float epsilon;
    float dropout_p;
    uint64_t seed, offset;
    void *stream;
    uint32_t *dropout_mask; /* optional out: the keep mask (see above); written whenever set, all ones for p = 0 */
} hk_ln_fused_args;

HK_API hk_status hk_ln_fused(hk_context *ctx, const hk_ln_fused_args *args);

/* Backward. Inputs: dy, z (= residual_out of the forward), gamma, the forward's mean (LayerNorm) and rstd,
 * and optionally dz_extra (a gradient reaching z from elsewhere, e.g. the residual stream).
 * Outputs: dresidual = dz (optional), dx = dz * mask / (1 - p), dgamma and dbeta (fp32 [cols]; dbeta only
 * for LayerNorm with beta; overwritten, not accumulated; an empty problem, rows == 0 included, writes nothing).
 * workspace: hk_ln_fused_bwd_workspace_size() bytes of device memory.
 * dropout_mask (optional): the forward's mask; when set, it decides which elements are kept and seed and offset
 * are not used (dropout_p still gives the scale). */
typedef struct hk_ln_fused_bwd_args {
    size_t struct_size;
    hk_norm_type norm;
    hk_dtype dtype;
    hk_dtype param_type;
    int64_t rows, cols;
    const void *dy; int64_t dy_stride;
    const void *z; int64_t z_stride;
    const void *dz_extra; int64_t dz_extra_stride;
    const void *gamma;
    const float *mean, *rstd;
    void *dx; int64_t dx_stride;
    void *dresidual; int64_t dresidual_stride;
    float *dgamma, *dbeta;
    float dropout_p;
    uint64_t seed, offset;
    void *workspace; size_t workspace_size;
    void *stream;
    const uint32_t *dropout_mask;
} hk_ln_fused_bwd_args;

HK_API hk_status hk_ln_fused_bwd_workspace_size(hk_context *ctx, const hk_ln_fused_bwd_args *args, size_t *bytes);
HK_API hk_status hk_ln_fused_bwd(hk_context *ctx, const hk_ln_fused_bwd_args *args);

/* The keep threshold the mask compares against: min(floor(p * 2^32), 2^32 - 1) as uint32. */
HK_API uint32_t hk_dropout_threshold(float dropout_p);

#ifdef __cplusplus
}
#endif
#endif /* HK_H */
