/* Internal interfaces shared by the host core (src/) and the backends (backends/). Never installed. */
#ifndef HK_INTERNAL_H
#define HK_INTERNAL_H

#include "hk.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HK_INTERNAL __attribute__((visibility("hidden")))
#define HK_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* ---------------------------------------------------------------- errors (src/error.c) */

/* Record a message for hk_last_error() and return `status`. */
HK_INTERNAL hk_status hk_fail(hk_status status, const char *fmt, ...) HK_PRINTF(2, 3);
HK_INTERNAL void hk_clear_error(void);
/* snprintf that never overflows and tolerates buf == NULL. */
HK_INTERNAL void hk_format(char *buf, size_t size, const char *fmt, ...) HK_PRINTF(3, 4);

/* ---------------------------------------------------------------- GPU driver interface
 * One table over the CUDA driver API and the HIP runtime, filled by dlsym, so every other piece of
 * host logic (module cache, launches, memory helpers) is shared by both GPU families.
 * Every function sets hk_last_error() with the runtime's own message when it fails. */
typedef enum hk_gpu_attr {
    HK_GPU_ATTR_MULTIPROCESSORS = 0, /* SMs or CUs */
    HK_GPU_ATTR_XCDS = 1              /* AMD chiplets; 1 elsewhere */
} hk_gpu_attr;

typedef struct hk_gpu_api {
    const char *name; /* "cuda" or "hip" */
    /* Load the runtime and open device `index`; fills arch ("sm_90a", "gfx942") and name. */
    hk_status (*open)(int index, void **dev, char *arch, size_t arch_size, char *name, size_t name_size);
    void (*close)(void *dev);
    /* Make the device current on the calling thread (cuCtxSetCurrent / hipSetDevice). */
    hk_status (*bind)(void *dev);
    hk_status (*module_load)(void *dev, const void *image, size_t bytes, void **module);
    void (*module_unload)(void *dev, void *module);
    hk_status (*function)(void *dev, void *module, const char *kernel, void **fn);
    /* Raise a kernel's dynamic shared-memory limit (needed above 48 KiB on CUDA). */
    hk_status (*set_shared_limit)(void *dev, void *fn, unsigned bytes);
    hk_status (*launch)(void *dev, void *fn, const unsigned grid[3], const unsigned block[3], unsigned shared_bytes,
                        void *stream, void **params);
    /* As launch, but the kernel may start before the previous kernel of the stream has finished (CUDA
     * programmatic dependent launch); it must wait for that kernel itself before touching memory it may
     * have written. NULL where the runtime has none: hk_gpu_launch_indexed then uses launch. */
    hk_status (*launch_dependent)(void *dev, void *fn, const unsigned grid[3], const unsigned block[3],
                                  unsigned shared_bytes, void *stream, void **params);
    hk_status (*alloc)(void *dev, void **ptr, size_t bytes);
    hk_status (*release)(void *dev, void *ptr);
    hk_status (*copy)(void *dev, void *dst, const void *src, size_t bytes, hk_copy_kind kind);
    hk_status (*fill)(void *dev, void *ptr, int value, size_t bytes);
    /* Zero `words` 32-bit words at ptr in stream order (a kernel's counters before its launch); NULL where no kernel
     * of the family needs it. */
    hk_status (*zero_async)(void *dev, void *ptr, size_t words, void *stream);
    hk_status (*sync)(void *dev, void *stream);
    hk_status (*event_create)(void *dev, void **event);
    hk_status (*event_record)(void *dev, void *event, void *stream);
    hk_status (*event_elapsed)(void *dev, void *start, void *end, float *ms);
    void (*event_destroy)(void *dev, void *event);
    int64_t (*attribute)(void *dev, hk_gpu_attr attr);
} hk_gpu_api;

/* The two implementations (backends/cuda, backends/hip). probe() loads the runtime only and
 * says why it failed; it is cheap after the first call. */
HK_INTERNAL const hk_gpu_api *hk_cuda_api(void);
HK_INTERNAL const hk_gpu_api *hk_hip_api(void);
HK_INTERNAL hk_status hk_cuda_probe(char *why, size_t why_size);
HK_INTERNAL hk_status hk_hip_probe(char *why, size_t why_size);
/* Telemetry of HIP device `device_index` through rocm-smi (backends/hip/smi.c); fields it cannot read are -1. */
HK_INTERNAL hk_status hk_hip_telemetry(int device_index, hk_device_telemetry *out);

/* ---------------------------------------------------------------- embedded code objects (generated) */
typedef struct hk_code_blob {
    const char *arch;    /* "gfx942", "gfx950", "sm_90a" */
    const char *name;    /* source family, e.g. "rotary" */
    const char *kernels; /* comma-separated kernel symbol names */
    const unsigned char *data;
    size_t bytes;
} hk_code_blob;

HK_INTERNAL size_t hk_code_blob_count(void);
HK_INTERNAL const hk_code_blob *hk_code_blob_at(size_t index);

/* ---------------------------------------------------------------- context */
#define HK_MAX_LOADED_MODULES 64
#define HK_MAX_KERNEL_NAME 96

/* ---------------------------------------------------------------- handles (src/handle.c)
 * The hk_context * and hk_event * values callers hold are registry handles, not addresses: hk_handle_get turns a
 * live one into its object and answers NULL for a destroyed, foreign or wrong-kind one. */
typedef enum hk_handle_kind { HK_HANDLE_CONTEXT = 1, HK_HANDLE_EVENT = 2 } hk_handle_kind;

/* Register object; owner is the handle whose destruction also closes this one (0: none). */
HK_INTERNAL hk_status hk_handle_open(hk_handle_kind kind, void *object, uintptr_t owner, uintptr_t *handle);
HK_INTERNAL void *hk_handle_get(uintptr_t handle, hk_handle_kind kind);
/* Unregister; returns the object, or NULL when the handle was not live (so two closes never free twice). */
HK_INTERNAL void *hk_handle_close(uintptr_t handle, hk_handle_kind kind);
/* Unregister every handle owned by `owner`, calling release(object) on each, under the registry's lock. */
HK_INTERNAL void hk_handle_close_owned(uintptr_t owner, void (*release)(void *object));

/* Overrides of the CUDA backend's launch choices for benchmarking (docs/perf/tuning.md), read from the environment
 * once, when the context is created (hk_cuda_read_tuning), so that no call reads the environment. Zero: none. */
typedef struct hk_tuning {
    bool gemm_forced;    /* HK_CUDA_TUNE_GEMM=<shape>[:<split>] names a launch shape (backends/cuda/gemm_plan.h), */
    int gemm_shape;      /* its index */
    int32_t gemm_split;  /* and its split (1 when not given) */
    int ln_stages;       /* HK_CUDA_TUNE_LN_STAGES: rows staged by the LayerNorm backward's staged form */
    bool plain_launch;   /* HK_CUDA_PDL=0: launch_dependent kernels launched plainly */
    bool attn_bwd_rows;  /* HK_CUDA_TUNE_ATTN_BWD=rows: the attention backward's row kernels for every call */
    bool unverified;     /* HK_CUDA_UNVERIFIED=1: offer the sm_90a kernels not yet run on a GPU (hk_cuda_unverified) */
} hk_tuning;
HK_INTERNAL void hk_cuda_read_tuning(hk_tuning *tune);

/* Kernel sets: the kernels a variant launches, numbered 0 .. count - 1, each resolved once per context (at its
 * first launch, under the context's lock) into the context's table for the set, which later launches index. */
enum {
    HK_KERNELS_CUDA_GEMM,
    HK_KERNELS_CUDA_GEMM_ANY,
    HK_KERNELS_CUDA_ROTARY,
    HK_KERNELS_CUDA_LN,
    HK_KERNELS_CUDA_ATTN,
    HK_KERNELS_CUDA_ATTN_BWD,
    HK_KERNELS_CDNA_GEMM,
    HK_KERNELS_CDNA_ROTARY,
    HK_KERNELS_CDNA_LN,
    HK_KERNELS_CDNA_ATTN,
    HK_KERNEL_SETS
};
typedef struct hk_kernel_set {
    int id; /* HK_KERNELS_*: the context's table for the set */
    size_t count;
    /* The symbol of kernel `index` (< count) in buf; false where no such kernel is built. */
    bool (*name)(size_t index, char *buf, size_t size);
} hk_kernel_set;
typedef struct hk_kernel_slot {
    void *fn;              /* NULL until resolved */
    /* dynamic shared memory the kernel is allowed so far; 0 at first, not the runtime's default 48 KiB: that budget
     * also covers the kernel's static shared memory, so a launch under 48 KiB of dynamic memory can need the raise */
    unsigned shared_limit;
} hk_kernel_slot;

struct hk_context {
    uintptr_t handle; /* what the caller holds */
    hk_backend backend;
    int device_index;
    char arch[32];
    char device_name[256];
    const hk_gpu_api *gpu; /* NULL on CPU and emulator contexts */
    void *dev;             /* the gpu api's device state */
    int64_t multiprocessors, xcds;
    pthread_mutex_t lock; /* guards the caches and the allocation table below */
    void *modules[HK_MAX_LOADED_MODULES]; /* by code blob index */
    /* hk_malloc's live allocations (an open-addressing set; src/memory.c), so hk_free refuses anything else and
     * the context's destruction releases what the caller left */
    struct { void **ptr; size_t capacity, used; } allocations;
    hk_kernel_slot *kernels[HK_KERNEL_SETS]; /* by set, count slots each, allocated at the set's first launch */
    hk_tuning tuning;
};

struct hk_event {
    hk_context *ctx;
    void *handle;   /* GPU event */
    double host_ms; /* CPU contexts: wall clock at record */
    bool recorded;
};

/* Release what hk_malloc handed out and the context's events' GPU state (hk_context_destroy). */
HK_INTERNAL void hk_memory_release_all(hk_context *ctx);
HK_INTERNAL void hk_events_release_all(hk_context *ctx);

/* Launch kernel `index` of `set` with cuLaunchKernel-style parameters after binding the device to this thread; the
 * kernel is looked up by name only at its first launch on the context. dependent: through the api's
 * launch_dependent where it has one, only for kernels that wait for the previous kernel of the stream
 * (griddepcontrol.wait) before their first access of global memory. */
HK_INTERNAL hk_status hk_gpu_launch_indexed(hk_context *ctx, const hk_kernel_set *set, size_t index, bool dependent,
                                            const unsigned grid[3], const unsigned block[3], unsigned shared_bytes,
                                            void *stream, void **params);

/* ---------------------------------------------------------------- kernel variants and dispatch
 * Each backend contributes variants; for a call the registry tries, in order, those whose backend matches the
 * context and whose arch list names the context's arch, and runs the first whose supports() says yes.
 * Args handed to supports()/run() are already validated and normalised by src/validate.c: the full current
 * struct (zero past the caller's struct_size), every stride explicit, every zero-means-default field resolved
 * (softmax_scale, rotary_dim, epsilon, param_type, table_type, scale_a/scale_b, head_dim_v).
 * Attention masks come in one form: causal is 0 or 1; window is 1 only where a bound may cut a row and the mask
 * is not just the causal one (a window (-inf, 0] becomes causal = 1), else 0 with window_left = window_right =
 * -1. Each bound is -1 (unbounded) or in [0, seqlen_k) for window_left and [0, seqlen_q) for window_right, so
 * i + off - window_left and i + off + window_right stay within int64; a window with causal has window_right 0.
 * softcap is 0 (none) or positive and finite. */
typedef struct hk_variant {
    hk_op op;
    const char *name;
    const char *description;
    hk_backend backend;
    const char *archs; /* space-separated arch names, NULL for every arch of the backend */
    /* HK_OK, or HK_ERR_UNSUPPORTED with a reason written to why (e.g. "head_dim 96; supported: 64, 128"). */
    hk_status (*supports)(const hk_context *ctx, const void *args, char *why, size_t why_size);
    hk_status (*run)(hk_context *ctx, const void *args);
    /* Device workspace bytes for ops that take one (attn_bwd, ln_fused_bwd); NULL means none. */
    size_t (*workspace)(const hk_context *ctx, const void *args);
    /* The workspace only speeds the op up (gemm): the variant runs with less, or none. */
    bool workspace_optional;
} hk_variant;

/* NULL-terminated lists, one per backend directory. */
extern HK_INTERNAL const hk_variant *const hk_cpu_variants[];
extern HK_INTERNAL const hk_variant *const hk_cuda_variants[];
extern HK_INTERNAL const hk_variant *const hk_hip_variants[];      /* HIP backend, real GPUs */
extern HK_INTERNAL const hk_variant *const hk_emulator_variants[]; /* same AMD kernels, wave emulator */

/* The index-th variant usable by ctx (its backend and arch), in preference order; NULL past the end. */
HK_INTERNAL const hk_variant *hk_context_variant_at(const hk_context *ctx, size_t index);
/* Choose the variant for (ctx, op, args); on failure sets the error and returns NULL. */
HK_INTERNAL const hk_variant *hk_select_variant(const hk_context *ctx, hk_op op, const void *args, hk_status *status);

/* ---------------------------------------------------------------- argument validation (src/validate.c)
 * Each checks a caller's args against every rule of hk.h and writes the normalised full struct to *out. */
#define HK_MAX_STRUCT_SIZE 4096 /* hk.h: the largest struct_size accepted, far past any struct it declares */
/* The live context behind a caller's handle, or HK_ERR_INVALID_ARGUMENT naming op when there is none. */
HK_INTERNAL hk_status hk_check_context(const hk_context *handle, const char *op, hk_context **ctx);
/* Copy a caller's struct (its struct_size bytes, at least min, at most HK_MAX_STRUCT_SIZE) into a zeroed full one of
 * `size` bytes; non-zero bytes past `size` are fields of a newer header: HK_ERR_UNSUPPORTED. name: "args", "opts". */
HK_INTERNAL hk_status hk_copy_struct(const char *op, const char *name, const void *in, void *out, size_t min, size_t size);
HK_INTERNAL hk_status hk_validate_gemm(const hk_gemm_args *in, hk_gemm_args *out);
HK_INTERNAL hk_status hk_validate_attn_fwd(const hk_attn_fwd_args *in, hk_attn_fwd_args *out);
HK_INTERNAL hk_status hk_validate_attn_bwd(const hk_attn_bwd_args *in, hk_attn_bwd_args *out);
HK_INTERNAL hk_status hk_validate_rotary(const hk_rotary_args *in, hk_rotary_args *out);
HK_INTERNAL hk_status hk_validate_ln_fused(const hk_ln_fused_args *in, hk_ln_fused_args *out);
HK_INTERNAL hk_status hk_validate_ln_fused_bwd(const hk_ln_fused_bwd_args *in, hk_ln_fused_bwd_args *out);

/* ---------------------------------------------------------------- extents and aliasing (src/overlap.c, src/varlen.c) */
/* The most bytes one tensor may span: what x86-64 and GPU virtual address spaces (48-49 bits) can hold, so no
 * byte count or scratch size derived from a valid extent overflows 64 bits. */
#define HK_MAX_TENSOR_BYTES (UINT64_C(1) << 48)

/* A strided tensor of `rank` (<= 3) dims over rows of `inner` contiguous elements; p NULL or a zero size: absent. */
typedef struct hk_span {
    const char *name;
    const void *p;
    size_t elem;
    int rank;
    int64_t size[3], stride[3];
    int64_t inner;
    const char *in_place_of; /* outputs: the input this may be exactly (same pointer and layout); NULL for none */
    const char *field;       /* hk_check_layout's messages: the hk.h field of stride[0], element `first` of it */
    int first;
} hk_span;

/* Every output against every other tensor of the call; `in_place` lists the op's in-place forms for the message. */
HK_INTERNAL hk_status hk_check_overlaps(const char *op, const hk_span *out, size_t n_out, const hk_span *in,
                                        size_t n_in, const char *in_place);
/* The layout rule of validate.c (non-negative strides, dims that do not alias, at most HK_MAX_TENSOR_BYTES). Messages
 * name stride d as the hk.h field `field` (first < 0: a scalar such as "lda") or field[first + d] ("q_stride[1]"). */
HK_INTERNAL hk_status hk_check_layout(const char *op, const char *name, const char *field, int first, int rank,
                                      const int64_t *sizes, const int64_t *strides, int64_t inner, size_t elem);
/* Attention checks that need the context: the varlen offsets (read from device memory), the layouts over the
 * packed token count they give, and aliasing. */
HK_INTERNAL hk_status hk_check_attn_fwd(hk_context *ctx, const hk_attn_fwd_args *a);
HK_INTERNAL hk_status hk_check_attn_bwd(hk_context *ctx, const hk_attn_bwd_args *a);

/* The kernel parameters of an attention forward (kernels/common/attn_params.h) from its normalised args. */
struct hk_attn_fwd_params;
HK_INTERNAL void hk_attn_fwd_resolve(const hk_attn_fwd_args *a, struct hk_attn_fwd_params *p);

/* ---------------------------------------------------------------- vector access rules shared by the GPU backends */
/* Can a 16-byte vector access start at p? (NULL, an absent optional tensor, imposes nothing.) */
static inline bool hk_aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }
/* Do all rows at p, `stride` elements apart, start 16-byte aligned for vectors of v elements? NULL: absent. */
static inline bool hk_rows_aligned16(const void *p, int64_t stride, int64_t v)
{
    return !p || (hk_aligned16(p) && stride % v == 0);
}

/* ---------------------------------------------------------------- CPU helpers (src/parallel.c, src/dtype.c) */
/* Run body(begin, end, user) over [0, count) split across worker threads (HK_NUM_THREADS or the CPU count).
 * Blocks until done. Falls back to the calling thread when threads cannot be created. */
HK_INTERNAL void hk_parallel_for(int64_t count, int64_t grain, void (*body)(int64_t begin, int64_t end, void *user),
                                 void *user);

/* Scalar conversions (round to nearest even; fp8 saturates to the finite maximum, NaN stays NaN). */
HK_INTERNAL float hk_load_scalar(hk_dtype dtype, const void *base, int64_t index);
HK_INTERNAL void hk_store_scalar(hk_dtype dtype, void *base, int64_t index, float value);
HK_INTERNAL float hk_bf16_to_f32(uint16_t v);
HK_INTERNAL uint16_t hk_f32_to_bf16(float f);
HK_INTERNAL float hk_f16_to_f32(uint16_t v);
HK_INTERNAL uint16_t hk_f32_to_f16(float f);
HK_INTERNAL float hk_fp8_to_f32(hk_dtype dtype, uint8_t v);
HK_INTERNAL uint8_t hk_f32_to_fp8(hk_dtype dtype, float f);

#endif /* HK_INTERNAL_H */
