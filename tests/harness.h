/* Shared machinery of the libhk cmocka tests: the contexts to run on, case registration (one cmocka test per
 * case and context), device buffers, random inputs, strided layouts and tolerance checks. */
#ifndef HK_TEST_HARNESS_H
#define HK_TEST_HARNESS_H

#include "hk.h"
#include "oracle.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

/* ---------------------------------------------------------------- contexts */
typedef enum th_kind { TH_CPU = 1, TH_EMU = 2, TH_GPU = 4 } th_kind;
#define TH_ALL (TH_CPU | TH_EMU | TH_GPU)
#define TH_NOT_EMU (TH_CPU | TH_GPU) /* shapes too big for the wave emulator */

typedef struct th_ctx {
    hk_context *ctx;
    th_kind kind;
    char label[64]; /* "cpu", "emulator/gfx942", "cuda/sm_90a" */
} th_ctx;

/* CPU always; EMULATOR gfx942/gfx950 when they can be created; AUTO when it is not the CPU.
 * HK_TEST_CONTEXTS=cpu,emulator/gfx950 restricts a run to the listed labels. */
void th_open_contexts(void);

/* A fresh context like c's (backend and arch) created with the environment variable name = value, for the library's
 * tuning overrides, which a context reads once at its creation (docs/perf/tuning.md). Destroyed after the test. */
const th_ctx *th_context_with_env(const th_ctx *c, const char *name, const char *value);

/* ---------------------------------------------------------------- registration and running */
typedef void (*th_case_fn)(const th_ctx *c, const void *param);

/* Register `fn(param)` as one cmocka test per context whose kind is in `kinds`, named "<name> on <label>". */
void th_add(const char *name, th_case_fn fn, const void *param, unsigned kinds);
/* Run everything registered; prints "N passed, N failed, N skipped" and returns the process exit code. */
int th_run(const char *group);

/* Seed of the running case's random inputs (derived from HK_TEST_SEED, printed by th_run). */
uint64_t th_case_seed(void);

/* Check an op's status: HK_ERR_UNSUPPORTED on a non-CPU context fails the test where tests/coverage.c lists the case
 * for the context's arch, else prints "SKIP <case> on <arch>: <reason>" and skips it; anything else but HK_OK fails
 * it. */
void th_op_status(const th_ctx *c, hk_status st, const char *op);
/* Whether tests/coverage.c lists case `name` of suite `group` as one that `arch` must accept. */
bool th_must_cover(const char *arch, const char *group, const char *name);
/* A pattern of the group's coverage entries that names one case (no glob characters) and names no case for which
 * registered() is true: a renamed or removed case that the lists still mention; NULL when there is none. */
const char *th_coverage_stale(const char *group, bool (*registered)(const char *name));
/* Print "SKIP <case> on <arch>: <reason>", count the test as skipped and leave it. */
void th_skip(const th_ctx *c, const char *reason);
/* Fail the running test (after a check function reported details) unless ok. */
void th_expect(bool ok, const char *what);

/* ---------------------------------------------------------------- memory (freed after each test) */
void *th_host(size_t bytes);                        /* zeroed */
void *th_dev(const th_ctx *c, size_t bytes);        /* context memory filled with 0xFF (NaN) */
void th_upload(const th_ctx *c, void *dev, const void *host, size_t bytes);
void th_download(const th_ctx *c, void *host, const void *dev, size_t bytes);

/* ---------------------------------------------------------------- random inputs */
typedef struct th_rng { uint64_t s; } th_rng;
th_rng th_rng_for_case(void); /* seeded from the case seed */
uint64_t th_next(th_rng *r);
double th_uniform(th_rng *r, double lo, double hi);
double th_normal(th_rng *r);
/* n values ~ N(0, sigma^2), already rounded to dtype t (so the oracle sees exactly what the library reads). */
void th_fill_normal(th_rng *r, hk_dtype t, double *v, int64_t n, double sigma);

/* ---------------------------------------------------------------- strided tensors
 * Up to 4 logical dims (unused leading dims have extent 1); the last dim is contiguous; strides in elements. */
typedef struct th_tensor {
    hk_dtype t;
    int64_t dim[4];
    int64_t stride[3]; /* of dims 0..2 */
} th_tensor;

th_tensor th_tensor4(hk_dtype t, int64_t d0, int64_t d1, int64_t d2, int64_t d3, int64_t s0, int64_t s1, int64_t s2);
th_tensor th_matrix(hk_dtype t, int64_t rows, int64_t cols, int64_t ld);
int64_t th_numel(const th_tensor *x);
size_t th_bytes(const th_tensor *x); /* bytes spanned (at least one element) */

/* A fresh device buffer holding x: the padding gets the dtype's NaN pattern (a kernel that reads it produces
 * NaN), the logical elements the encoded values. */
void *th_dev_tensor(const th_ctx *c, const th_tensor *x, const double *logical);
/* Download a device tensor and decode its logical elements into a fresh host array. Padding between the
 * elements must still hold the 0xFF poison; if not, this reports it and clears *gap_ok. */
double *th_fetch_tensor(const th_ctx *c, const th_tensor *x, const void *dev, bool *gap_ok, const char *what);

/* ---------------------------------------------------------------- comparison
 * Passes iff every element is finite where ref is (equal where ref is infinite),
 * rms(out - ref) / m <= norm, and |out - ref| <= atol * m + rtol * |ref| for every element, where m = max(rms(ref),
 * floor): floor is the magnitude under which errors count absolutely (0, th_tol_for's: none). */
typedef struct th_tol { double norm, atol, rtol, floor; } th_tol;

/* Tolerance for a result stored as dtype t on context c (F32: 1e-5 on the CPU, 1e-4 elsewhere). */
th_tol th_tol_for(hk_dtype t, const th_ctx *c);
bool th_check(const char *what, const double *out, const double *ref, int64_t n, th_tol tol);
/* Exact equality of decoded values (NaN never equal). */
bool th_check_exact(const char *what, const double *out, const double *ref, int64_t n);

/* Print to stderr with the case name as prefix. */
void th_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
