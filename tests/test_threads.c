/* Thread safety: several threads share one context and get correct results; hk_last_error() is per thread;
 * contexts can be created and destroyed concurrently. */
#include "harness.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS = 8, ITERS = 3 };

typedef struct worker {
    const th_ctx *c;
    int id;
    uint64_t seed;
    bool ok;
    char why[256];
    char unsupported[256]; /* an op this (non-CPU) context does not cover */
} worker;

static void worker_fail(worker *w, const char *what, hk_status st)
{
    if (st == HK_ERR_UNSUPPORTED && w->c->kind != TH_CPU) {
        snprintf(w->unsupported, sizeof w->unsupported, "%s: %s", what, hk_last_error());
        return;
    }
    if (w->ok)
        snprintf(w->why, sizeof w->why, "thread %d: %s: %s (%s)", w->id, what, hk_status_string(st), hk_last_error());
    w->ok = false;
}

/* Device buffer holding logical values encoded as t. */
static void *upload(worker *w, hk_dtype t, const double *v, int64_t n)
{
    size_t bytes = (size_t)n * orc_dtype_size(t);
    unsigned char *h = malloc(bytes);
    void *d = NULL;
    for (int64_t i = 0; i < n; ++i)
        orc_encode(t, h, i, v[i]);
    hk_status st = hk_malloc(w->c->ctx, &d, bytes);
    if (st == HK_OK)
        st = hk_memcpy(w->c->ctx, d, h, bytes, HK_COPY_HOST_TO_DEVICE);
    if (st != HK_OK)
        worker_fail(w, "upload", st);
    free(h);
    return d;
}

static void download(worker *w, hk_dtype t, const void *d, double *v, int64_t n)
{
    size_t bytes = (size_t)n * orc_dtype_size(t);
    unsigned char *h = malloc(bytes);
    hk_status st = hk_memcpy(w->c->ctx, h, d, bytes, HK_COPY_DEVICE_TO_HOST);
    if (st != HK_OK)
        worker_fail(w, "download", st);
    for (int64_t i = 0; i < n; ++i)
        v[i] = st == HK_OK ? orc_decode(t, h, i) : 0;
    free(h);
}

static void one_gemm(worker *w, th_rng *rng, int it)
{
    int64_t m = 17 + 3 * w->id + it, n = 31 + it, k = 40 + w->id;
    double *a = malloc(sizeof(double) * (size_t)(m * k)), *b = malloc(sizeof(double) * (size_t)(k * n));
    double *d = malloc(sizeof(double) * (size_t)(m * n)), *ref = malloc(sizeof(double) * (size_t)(m * n));
    th_fill_normal(rng, HK_DTYPE_BF16, a, m * k, 1.0);
    th_fill_normal(rng, HK_DTYPE_BF16, b, k * n, 1.0);
    hk_gemm_args g = HK_ARGS_INIT(hk_gemm_args);
    g.m = m;
    g.n = n;
    g.k = k;
    g.a_type = g.b_type = HK_DTYPE_BF16;
    g.d_type = HK_DTYPE_F32;
    g.a = upload(w, HK_DTYPE_BF16, a, m * k);
    g.lda = k;
    g.b = upload(w, HK_DTYPE_BF16, b, k * n);
    g.ldb = n;
    void *dd = NULL;
    hk_malloc(w->c->ctx, &dd, sizeof(float) * (size_t)(m * n));
    hk_memset(w->c->ctx, dd, 0xFF, sizeof(float) * (size_t)(m * n));
    g.d = dd;
    g.ldd = n;
    g.alpha = 1;
    hk_status st = hk_gemm(w->c->ctx, &g);
    if (st != HK_OK) {
        worker_fail(w, "hk_gemm", st);
    } else {
        download(w, HK_DTYPE_F32, dd, d, m * n);
        orc_gemm(m, n, k, 1.0, a, b, 0.0, NULL, ref);
        if (!th_check("threaded gemm D", d, ref, m * n, th_tol_for(HK_DTYPE_F32, w->c)))
            worker_fail(w, "gemm result", HK_OK);
    }
    hk_free(w->c->ctx, (void *)g.a);
    hk_free(w->c->ctx, (void *)g.b);
    hk_free(w->c->ctx, dd);
    free(a);
    free(b);
    free(d);
    free(ref);
}

/* RMSNorm with dropout and no residual: residual_out is exactly 0 where dropped. */
static void one_norm(worker *w, th_rng *rng, int it)
{
    int64_t R = 8, C = 64 + w->id, n = R * C;
    double *x = malloc(sizeof(double) * (size_t)n), *z = malloc(sizeof(double) * (size_t)n);
    double *y = malloc(sizeof(double) * (size_t)n), *zr = malloc(sizeof(double) * (size_t)n);
    double *yr = malloc(sizeof(double) * (size_t)n), g[128], mean[8], rstd[8];
    uint8_t *keep = malloc((size_t)n);
    for (int64_t i = 0; i < n; ++i)
        x[i] = orc_round(HK_DTYPE_F32, (th_next(rng) & 1 ? 1 : -1) * th_uniform(rng, 0.5, 1.5));
    for (int64_t i = 0; i < C; ++i)
        g[i] = orc_round(HK_DTYPE_F32, th_uniform(rng, 0.5, 1.5));
    hk_ln_fused_args l = HK_ARGS_INIT(hk_ln_fused_args);
    l.norm = HK_NORM_RMS;
    l.dtype = HK_DTYPE_F32;
    l.rows = R;
    l.cols = C;
    l.x = upload(w, HK_DTYPE_F32, x, n);
    l.gamma = upload(w, HK_DTYPE_F32, g, C);
    void *yd = NULL, *zd = NULL;
    hk_malloc(w->c->ctx, &yd, sizeof(float) * (size_t)n);
    hk_malloc(w->c->ctx, &zd, sizeof(float) * (size_t)n);
    l.y = yd;
    l.residual_out = zd;
    l.dropout_p = 0.3f;
    l.seed = (uint64_t)w->id;
    l.offset = (uint64_t)it;
    hk_status st = hk_ln_fused(w->c->ctx, &l);
    if (st != HK_OK) {
        worker_fail(w, "hk_ln_fused", st);
    } else {
        orc_ln o = {1, R, C, 1e-5f, 0.3f, l.seed, l.offset, NULL};
        orc_ln_fwd(&o, x, NULL, g, NULL, zr, yr, mean, rstd, keep);
        download(w, HK_DTYPE_F32, yd, y, n);
        download(w, HK_DTYPE_F32, zd, z, n);
        th_tol tol = th_tol_for(HK_DTYPE_F32, w->c);
        if (!th_check("threaded norm y", y, yr, n, tol) || !th_check("threaded norm z", z, zr, n, tol))
            worker_fail(w, "norm result", HK_OK);
        for (int64_t i = 0; i < n; ++i)
            if ((z[i] != 0) != keep[i]) {
                worker_fail(w, "dropout mask", HK_OK);
                break;
            }
    }
    hk_free(w->c->ctx, (void *)l.x);
    hk_free(w->c->ctx, (void *)l.gamma);
    hk_free(w->c->ctx, yd);
    hk_free(w->c->ctx, zd);
    free(x);
    free(z);
    free(y);
    free(zr);
    free(yr);
    free(keep);
}

static void *op_worker(void *p)
{
    worker *w = p;
    th_rng rng = {w->seed};
    for (int it = 0; it < ITERS && w->ok; ++it) {
        one_gemm(w, &rng, it);
        one_norm(w, &rng, it);
    }
    return NULL;
}

static void run_workers(void *(*fn)(void *), worker *ws, const th_ctx *c)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; ++i) {
        ws[i].c = c;
        ws[i].id = i;
        ws[i].seed = th_case_seed() + 977 * (uint64_t)i;
        ws[i].ok = true;
        ws[i].why[0] = '\0';
        ws[i].unsupported[0] = '\0';
        assert_int_equal(pthread_create(&t[i], NULL, fn, &ws[i]), 0);
    }
    for (int i = 0; i < THREADS; ++i)
        pthread_join(t[i], NULL);
    bool ok = true;
    for (int i = 0; i < THREADS; ++i)
        if (!ws[i].ok) {
            th_log("%s", ws[i].why);
            ok = false;
        }
    th_expect(ok, "concurrent use of one context");
    for (int i = 0; i < THREADS; ++i)
        if (ws[i].unsupported[0])
            th_skip(c, ws[i].unsupported);
}

static void test_shared_context(const th_ctx *c, const void *param)
{
    (void)param;
    worker ws[THREADS];
    run_workers(op_worker, ws, c);
}

/* Each thread's failures leave their own message, whatever the other threads do meanwhile. */
static void *error_worker(void *p)
{
    worker *w = p;
    if (hk_last_error()[0] != '\0') {
        snprintf(w->why, sizeof w->why, "thread %d starts with hk_last_error() \"%s\"", w->id, hk_last_error());
        w->ok = false;
        return NULL;
    }
    for (int i = 0; i < 2000 && w->ok; ++i) {
        const char *word;
        hk_status st;
        if (w->id % 2) {
            st = hk_gemm(w->c->ctx, NULL);
            word = "args";
        } else {
            st = hk_malloc(w->c->ctx, NULL, 16);
            word = "ptr";
        }
        if (st != HK_ERR_INVALID_ARGUMENT || !strstr(hk_last_error(), word)) {
            snprintf(w->why, sizeof w->why, "thread %d: message \"%s\" after its own failure naming '%s'", w->id,
                     hk_last_error(), word);
            w->ok = false;
        }
    }
    return NULL;
}

static void test_thread_local_errors(const th_ctx *c, const void *param)
{
    (void)param;
    worker ws[THREADS];
    run_workers(error_worker, ws, c);
}

static void *lifecycle_worker(void *p)
{
    worker *w = p;
    for (int i = 0; i < 50 && w->ok; ++i) {
        hk_context_options o = HK_ARGS_INIT(hk_context_options);
        o.backend = i % 2 ? HK_BACKEND_CPU : HK_BACKEND_EMULATOR;
        o.arch = w->id % 2 ? "gfx942" : "gfx950";
        hk_context *ctx = NULL;
        hk_status st = hk_context_create(&o, &ctx);
        void *buf = NULL;
        if (st == HK_OK)
            st = hk_malloc(ctx, &buf, 4096);
        if (st == HK_OK)
            st = hk_memset(ctx, buf, i, 4096);
        if (st == HK_OK)
            st = hk_free(ctx, buf);
        if (st != HK_OK)
            worker_fail(w, "context lifecycle", st);
        hk_context_destroy(ctx);
    }
    return NULL;
}

static void test_concurrent_contexts(const th_ctx *c, const void *param)
{
    (void)param;
    worker ws[THREADS];
    run_workers(lifecycle_worker, ws, c);
}

int main(void)
{
    th_open_contexts();
    th_add("shared_context_ops", test_shared_context, NULL, TH_NOT_EMU);
    th_add("thread_local_errors", test_thread_local_errors, NULL, TH_CPU);
    th_add("concurrent_context_lifecycle", test_concurrent_contexts, NULL, TH_CPU);
    return th_run("threads");
}
