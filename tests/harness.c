/* Shared machinery of the libhk cmocka tests (see harness.h). */
#include "harness.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- contexts */

#define TH_MAX_CONTEXTS 4
static th_ctx th_contexts[TH_MAX_CONTEXTS];
static size_t th_ncontexts;

static bool th_context_wanted(const char *label)
{
    const char *want = getenv("HK_TEST_CONTEXTS");
    if (!want || !*want)
        return true;
    size_t n = strlen(label);
    for (const char *p = want; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, label, n) == 0)
            return true;
        p += len + (end ? 1 : 0);
    }
    return false;
}

static void th_add_context(hk_context *ctx, th_kind kind, const char *label)
{
    if (!th_context_wanted(label)) {
        hk_context_destroy(ctx);
        return;
    }
    th_ctx *c = &th_contexts[th_ncontexts++];
    c->ctx = ctx;
    c->kind = kind;
    snprintf(c->label, sizeof c->label, "%s", label);
}

void th_open_contexts(void)
{
    hk_context *ctx = NULL;
    hk_context_options opts = HK_ARGS_INIT(hk_context_options);
    opts.backend = HK_BACKEND_CPU;
    hk_status st = hk_context_create(&opts, &ctx);
    if (st != HK_OK) {
        fprintf(stderr, "cannot create the CPU context: %s: %s\n", hk_status_string(st), hk_last_error());
        exit(1);
    }
    th_add_context(ctx, TH_CPU, "cpu");

    static const char *const emu_archs[] = {"gfx942", "gfx950"};
    for (size_t i = 0; i < 2; ++i) {
        hk_context_options eo = HK_ARGS_INIT(hk_context_options);
        eo.backend = HK_BACKEND_EMULATOR;
        eo.arch = emu_archs[i];
        char label[64];
        snprintf(label, sizeof label, "emulator/%s", emu_archs[i]);
        if (hk_context_create(&eo, &ctx) == HK_OK)
            th_add_context(ctx, TH_EMU, label);
        else
            printf("no %s context: %s\n", label, hk_last_error());
    }

    if (hk_context_create(NULL, &ctx) == HK_OK) {
        if (hk_context_backend(ctx) == HK_BACKEND_CPU) {
            hk_context_destroy(ctx);
        } else {
            char label[64];
            snprintf(label, sizeof label, "%s/%s", hk_backend_name(hk_context_backend(ctx)), hk_context_arch(ctx));
            th_add_context(ctx, TH_GPU, label);
        }
    }
    for (size_t i = 0; i < th_ncontexts; ++i)
        printf("context %zu: %s (%s)\n", i, th_contexts[i].label, hk_context_device_name(th_contexts[i].ctx));
}

/* The running test's context of th_context_with_env, destroyed at its teardown once its memory is freed. */
static th_ctx th_env_context;

const th_ctx *th_context_with_env(const th_ctx *c, const char *name, const char *value)
{
    if (th_env_context.ctx)
        fail_msg("th_context_with_env: one context per test");
    hk_context_options o = HK_ARGS_INIT(hk_context_options);
    o.backend = hk_context_backend(c->ctx);
    o.arch = o.backend == HK_BACKEND_EMULATOR ? hk_context_arch(c->ctx) : NULL;
    setenv(name, value, 1);
    hk_status st = hk_context_create(&o, &th_env_context.ctx);
    unsetenv(name);
    if (st != HK_OK)
        fail_msg("context like %s with %s=%s: %s: %s", c->label, name, value, hk_status_string(st), hk_last_error());
    th_env_context.kind = c->kind;
    snprintf(th_env_context.label, sizeof th_env_context.label, "%s", c->label);
    return &th_env_context;
}

/* ---------------------------------------------------------------- memory arena */

typedef struct th_alloc { const th_ctx *c; void *p; } th_alloc;
static th_alloc *th_allocs;
static size_t th_nallocs, th_cap_allocs;

static void th_track(const th_ctx *c, void *p)
{
    if (th_nallocs == th_cap_allocs) {
        th_cap_allocs = th_cap_allocs ? 2 * th_cap_allocs : 64;
        th_allocs = realloc(th_allocs, th_cap_allocs * sizeof *th_allocs);
        assert_non_null(th_allocs);
    }
    th_allocs[th_nallocs].c = c;
    th_allocs[th_nallocs].p = p;
    th_nallocs++;
}

static void th_free_all(void)
{
    for (size_t i = th_nallocs; i-- > 0;) {
        if (th_allocs[i].c)
            hk_free(th_allocs[i].c->ctx, th_allocs[i].p);
        else
            free(th_allocs[i].p);
    }
    th_nallocs = 0;
    free(th_allocs);
    th_allocs = NULL;
    th_cap_allocs = 0;
}

void *th_host(size_t bytes)
{
    void *p = calloc(1, bytes ? bytes : 1);
    assert_non_null(p);
    th_track(NULL, p);
    return p;
}

void *th_dev(const th_ctx *c, size_t bytes)
{
    void *p = NULL;
    bytes = bytes ? bytes : 1;
    hk_status st = hk_malloc(c->ctx, &p, bytes);
    if (st != HK_OK)
        fail_msg("hk_malloc(%zu) on %s: %s: %s", bytes, c->label, hk_status_string(st), hk_last_error());
    th_track(c, p);
    st = hk_memset(c->ctx, p, 0xFF, bytes);
    if (st != HK_OK)
        fail_msg("hk_memset on %s: %s", c->label, hk_last_error());
    return p;
}

void th_upload(const th_ctx *c, void *dev, const void *host, size_t bytes)
{
    hk_status st = hk_memcpy(c->ctx, dev, host, bytes, HK_COPY_HOST_TO_DEVICE);
    if (st != HK_OK)
        fail_msg("hk_memcpy H2D on %s: %s", c->label, hk_last_error());
}

void th_download(const th_ctx *c, void *host, const void *dev, size_t bytes)
{
    hk_status st = hk_memcpy(c->ctx, host, dev, bytes, HK_COPY_DEVICE_TO_HOST);
    if (st != HK_OK)
        fail_msg("hk_memcpy D2H on %s: %s", c->label, hk_last_error());
}

/* ---------------------------------------------------------------- registration and running */

typedef struct th_entry {
    char *name; /* "<name> on <label>" */
    char *base; /* "<name>" */
    th_case_fn fn;
    const void *param;
    const th_ctx *c;
    uint64_t seed;
} th_entry;

static th_entry *th_entries;
static size_t th_nentries, th_cap_entries;
static const th_entry *th_current;
static size_t th_passed, th_skipped;
static uint64_t th_base_seed;
static const char *th_group; /* th_run's */

/* Every case name given to th_add, whichever contexts run it (the coverage lists' names are checked against them). */
static const char **th_names;
static size_t th_nnames, th_cap_names;

void th_add(const char *name, th_case_fn fn, const void *param, unsigned kinds)
{
    if (th_nnames == th_cap_names) {
        th_cap_names = th_cap_names ? 2 * th_cap_names : 64;
        th_names = realloc(th_names, th_cap_names * sizeof *th_names);
        if (!th_names)
            abort();
    }
    th_names[th_nnames++] = name;
    for (size_t i = 0; i < th_ncontexts; ++i) {
        const th_ctx *c = &th_contexts[i];
        if (!(kinds & (unsigned)c->kind))
            continue;
        if (th_nentries == th_cap_entries) {
            th_cap_entries = th_cap_entries ? 2 * th_cap_entries : 64;
            th_entries = realloc(th_entries, th_cap_entries * sizeof *th_entries);
            if (!th_entries)
                abort();
        }
        th_entry *e = &th_entries[th_nentries++];
        size_t n = strlen(name) + strlen(c->label) + 8;
        e->name = malloc(n);
        e->base = strdup(name);
        if (!e->name || !e->base)
            abort();
        snprintf(e->name, n, "%s on %s", name, c->label);
        e->fn = fn;
        e->param = param;
        e->c = c;
    }
}

static const char *th_case_name(void) { return th_current ? th_current->name : "?"; }
uint64_t th_case_seed(void) { return th_current ? th_current->seed : 0; }

static uint64_t th_splitmix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static int th_setup(void **state)
{
    th_free_all();
    th_current = *state;
    return 0;
}

static int th_teardown(void **state)
{
    (void)state;
    th_free_all();
    if (th_env_context.ctx) {
        hk_context_destroy(th_env_context.ctx);
        th_env_context.ctx = NULL;
    }
    return 0;
}

static void th_wrapper(void **state)
{
    const th_entry *e = *state;
    e->fn(e->c, e->param);
    th_passed++;
}

static bool th_registered(const char *name)
{
    for (size_t i = 0; i < th_nnames; ++i)
        if (strcmp(th_names[i], name) == 0)
            return true;
    return false;
}

int th_run(const char *group)
{
    const char *env = getenv("HK_TEST_SEED");
    th_base_seed = env && *env ? strtoull(env, NULL, 0) : ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid();
    th_group = group;
    const char *stale = th_coverage_stale(group, th_registered);
    free(th_names);
    th_names = NULL;
    th_nnames = th_cap_names = 0;
    if (stale) /* fails the run (below) */
        fprintf(stderr, "%s: tests/coverage.c names case %s, which this suite does not have\n", group, stale);
    printf("%s: %zu tests, HK_TEST_SEED=0x%" PRIx64 "\n", group, th_nentries, th_base_seed);
    fflush(stdout);

    struct CMUnitTest *tests = calloc(th_nentries ? th_nentries : 1, sizeof *tests);
    if (!tests)
        abort();
    for (size_t i = 0; i < th_nentries; ++i) {
        th_entries[i].seed = th_splitmix(th_base_seed + i);
        tests[i].name = th_entries[i].name;
        tests[i].test_func = th_wrapper;
        tests[i].setup_func = th_setup;
        tests[i].teardown_func = th_teardown;
        tests[i].initial_state = &th_entries[i];
    }
    int failed = _cmocka_run_group_tests(group, tests, th_nentries, NULL, NULL);
    size_t nfailed = th_nentries - th_passed - th_skipped;
    fflush(stdout);
    fprintf(stderr, "%s: %zu passed, %zu failed, %zu skipped (HK_TEST_SEED=0x%" PRIx64 ")\n", group, th_passed,
            nfailed, th_skipped, th_base_seed);
    printf("%zu passed, %zu failed, %zu skipped\n", th_passed, nfailed, th_skipped);

    th_free_all();
    free(tests);
    for (size_t i = 0; i < th_nentries; ++i) {
        free(th_entries[i].name);
        free(th_entries[i].base);
    }
    free(th_entries);
    th_entries = NULL;
    th_nentries = th_cap_entries = 0;
    for (size_t i = 0; i < th_ncontexts; ++i)
        hk_context_destroy(th_contexts[i].ctx);
    th_ncontexts = 0;
    return failed || nfailed || stale ? 1 : 0;
}

void th_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[%s] ", th_case_name());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void th_op_status(const th_ctx *c, hk_status st, const char *op)
{
    if (st == HK_OK)
        return;
    const char *arch = hk_context_arch(c->ctx), *name = th_current ? th_current->base : "?";
    /* sm_90a kernels that have not yet run on a GPU refuse until HK_CUDA_UNVERIFIED=1 (backends/cuda/tuning.c): that
     * refusal is the documented gate, not a lost case; with the variable set, the coverage lists hold for them. */
    if (st == HK_ERR_UNSUPPORTED && strstr(hk_last_error(), "HK_CUDA_UNVERIFIED=1"))
        th_skip(c, hk_last_error());
    if (st == HK_ERR_UNSUPPORTED && c->kind != TH_CPU && !th_must_cover(arch, th_group ? th_group : "", name))
        th_skip(c, hk_last_error());
    if (st == HK_ERR_UNSUPPORTED && c->kind != TH_CPU)
        fail_msg("%s on %s returned %s, but tests/coverage.c lists %s/%s as covered on %s: %s", op, c->label,
                 hk_status_string(st), th_group, name, arch, hk_last_error());
    fail_msg("%s on %s returned %s: %s (HK_TEST_SEED=0x%" PRIx64 ")", op, c->label, hk_status_string(st),
             hk_last_error(), th_base_seed);
}

void th_skip(const th_ctx *c, const char *reason)
{
    fprintf(stderr, "SKIP %s on %s: %s\n", th_current ? th_current->base : "?", c->label, reason);
    th_skipped++;
    skip();
}

void th_expect(bool ok, const char *what)
{
    if (!ok)
        fail_msg("%s: %s failed (rerun with HK_TEST_SEED=0x%" PRIx64 ")", th_case_name(), what, th_base_seed);
}

/* ---------------------------------------------------------------- random inputs */

th_rng th_rng_for_case(void)
{
    th_rng r = {th_case_seed() ^ 0x5DEECE66Dull};
    return r;
}

uint64_t th_next(th_rng *r)
{
    r->s += 0x9E3779B97F4A7C15ull;
    uint64_t x = r->s;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

double th_uniform(th_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(th_next(r) >> 11) * 0x1p-53);
}

double th_normal(th_rng *r)
{
    double u1 = ((double)(th_next(r) >> 11) + 1.0) * 0x1p-53, u2 = (double)(th_next(r) >> 11) * 0x1p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void th_fill_normal(th_rng *r, hk_dtype t, double *v, int64_t n, double sigma)
{
    for (int64_t i = 0; i < n; ++i)
        v[i] = orc_round(t, sigma * th_normal(r));
}

/* ---------------------------------------------------------------- strided tensors */

th_tensor th_tensor4(hk_dtype t, int64_t d0, int64_t d1, int64_t d2, int64_t d3, int64_t s0, int64_t s1, int64_t s2)
{
    th_tensor x = {t, {d0, d1, d2, d3}, {s0, s1, s2}};
    return x;
}

th_tensor th_matrix(hk_dtype t, int64_t rows, int64_t cols, int64_t ld)
{
    return th_tensor4(t, 1, 1, rows, cols, 0, 0, ld);
}

int64_t th_numel(const th_tensor *x)
{
    return x->dim[0] * x->dim[1] * x->dim[2] * x->dim[3];
}

static int64_t th_span(const th_tensor *x)
{
    if (th_numel(x) == 0)
        return 1;
    int64_t last = x->dim[3];
    for (int i = 0; i < 3; ++i)
        last += (x->dim[i] - 1) * x->stride[i];
    return last;
}

size_t th_bytes(const th_tensor *x)
{
    return (size_t)th_span(x) * orc_dtype_size(x->t);
}

/* Offset of the idx-th logical element (row-major over dim). */
static int64_t th_offset(const th_tensor *x, int64_t idx)
{
    int64_t i3 = idx % x->dim[3];
    idx /= x->dim[3];
    int64_t i2 = idx % x->dim[2];
    idx /= x->dim[2];
    int64_t i1 = idx % x->dim[1];
    int64_t i0 = idx / x->dim[1];
    return i0 * x->stride[0] + i1 * x->stride[1] + i2 * x->stride[2] + i3;
}

static void th_store(const th_tensor *x, void *raw, const double *logical)
{
    memset(raw, orc_nan_byte(x->t), th_bytes(x));
    for (int64_t i = 0, n = th_numel(x); i < n; ++i)
        orc_encode(x->t, raw, th_offset(x, i), logical[i]);
}

static void th_load(const th_tensor *x, const void *raw, double *logical)
{
    for (int64_t i = 0, n = th_numel(x); i < n; ++i)
        logical[i] = orc_decode(x->t, raw, th_offset(x, i));
}

/* Bytes of raw outside the logical elements that no longer hold the 0xFF poison. */
static int64_t th_gap_damage(const th_tensor *x, const void *raw)
{
    int64_t span = th_span(x), damaged = 0;
    size_t es = orc_dtype_size(x->t);
    unsigned char *used = calloc((size_t)span, 1);
    assert_non_null(used);
    for (int64_t i = 0, n = th_numel(x); i < n; ++i)
        used[th_offset(x, i)] = 1;
    for (int64_t e = 0; e < span; ++e) {
        if (used[e])
            continue;
        for (size_t b = 0; b < es; ++b)
            damaged += ((const unsigned char *)raw)[(size_t)e * es + b] != 0xFF;
    }
    free(used);
    return damaged;
}

void *th_dev_tensor(const th_ctx *c, const th_tensor *x, const double *logical)
{
    size_t bytes = th_bytes(x);
    void *host = th_host(bytes);
    th_store(x, host, logical);
    void *dev = th_dev(c, bytes);
    th_upload(c, dev, host, bytes);
    return dev;
}

double *th_fetch_tensor(const th_ctx *c, const th_tensor *x, const void *dev, bool *gap_ok, const char *what)
{
    size_t bytes = th_bytes(x);
    void *host = th_host(bytes);
    th_download(c, host, dev, bytes);
    double *out = th_host(sizeof(double) * (size_t)(th_numel(x) ? th_numel(x) : 1));
    th_load(x, host, out);
    int64_t damage = th_gap_damage(x, host);
    if (damage) {
        th_log("%s: %" PRId64 " bytes of padding between elements were overwritten", what, damage);
        *gap_ok = false;
    }
    return out;
}

/* ---------------------------------------------------------------- comparison */

th_tol th_tol_for(hk_dtype t, const th_ctx *c)
{
    th_tol tol = {.floor = 0};
    switch (t) {
    case HK_DTYPE_F32:
        tol.norm = c->kind == TH_CPU ? 1e-5 : 1e-4;
        tol.atol = 5 * tol.norm;
        tol.rtol = tol.norm;
        break;
    case HK_DTYPE_F16:
        tol.norm = 2e-3;
        tol.atol = 4e-3;
        tol.rtol = 0x1p-8;
        break;
    default: /* bf16 */
        tol.norm = 1e-2;
        tol.atol = 2e-2;
        tol.rtol = 0x1p-6;
        break;
    }
    return tol;
}

bool th_check(const char *what, const double *out, const double *ref, int64_t n, th_tol tol)
{
    double err2 = 0, ref2 = 0, max_err = 0;
    int64_t finite = 0, bad = 0, worst = -1;
    for (int64_t i = 0; i < n; ++i)
        if (isfinite(ref[i])) {
            ref2 += ref[i] * ref[i];
            finite++;
        }
    const double rms = finite ? sqrt(ref2 / (double)finite) : 0.0, scale = fmax(rms, tol.floor);
    double worst_ratio = 0;
    for (int64_t i = 0; i < n; ++i) {
        bool ok;
        double diff = 0, allowed = 0;
        if (!isfinite(ref[i])) {
            ok = out[i] == ref[i];
        } else if (!isfinite(out[i])) {
            ok = false;
        } else {
            diff = fabs(out[i] - ref[i]);
            allowed = tol.atol * scale + tol.rtol * fabs(ref[i]);
            err2 += diff * diff;
            ok = diff <= allowed;
            if (allowed > 0 && diff / allowed > worst_ratio)
                worst_ratio = diff / allowed;
            if (diff > max_err) {
                max_err = diff;
                worst = i;
            }
        }
        if (!ok && bad++ < 5)
            th_log("%s[%" PRId64 "]: got %.9g, want %.9g (|diff| %.3g > allowed %.3g)", what, i, out[i], ref[i],
                   diff, allowed);
    }
    double rel = sqrt(err2 / (double)(finite ? finite : 1)) / (scale > 0 ? scale : 1e-300);
    if (scale == 0 && err2 == 0)
        rel = 0;
    bool ok = bad == 0 && rel <= tol.norm;
    if (getenv("HK_TEST_VERBOSE")) /* margins, for judging tolerances */
        th_log("%s: rel. error %.3g of %.3g allowed; worst element at %.2f of its bound", what, rel, tol.norm,
               worst_ratio);
    if (!ok)
        th_log("%s: %" PRId64 " of %" PRId64 " elements out of tolerance, rel. error %.3g (limit %.3g), max abs error "
               "%.3g at %" PRId64 ", rms(ref) %.3g",
               what, bad, n, rel, tol.norm, max_err, worst, rms);
    return ok;
}

bool th_check_exact(const char *what, const double *out, const double *ref, int64_t n)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i)
        if (!(out[i] == ref[i]) && bad++ < 5)
            th_log("%s[%" PRId64 "]: got %.9g, want exactly %.9g", what, i, out[i], ref[i]);
    if (bad)
        th_log("%s: %" PRId64 " of %" PRId64 " elements differ", what, bad, n);
    return bad == 0;
}
