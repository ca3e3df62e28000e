/* Hostile-caller regressions: input that once corrupted memory, reached freed memory or aborted in glibc now gets
 * HK_ERR_INVALID_ARGUMENT (or HK_ERR_UNSUPPORTED) and a message naming the argument. Every check of a call that
 * used to crash runs in a forked child, so one defect cannot hide the others: a signal in the child is reported as
 * that check's failure and the run goes on. */
#include "harness.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;

static void start(void) { failures = 0; }
static void finish(void) { th_expect(failures == 0, "hostile-caller checks"); }

/* 0: the status is `want` (-1: any failure) and the message names `word`; otherwise a line saying what differs. */
static int verdict(hk_status st, int want, const char *word, char *why, size_t why_size)
{
    const char *msg = hk_last_error();
    if (want == HK_OK) {
        if (st == HK_OK)
            return 0;
        snprintf(why, why_size, "returned %s (%s); expected HK_OK", hk_status_string(st), msg);
        return 1;
    }
    if (st == HK_OK)
        snprintf(why, why_size, "returned HK_OK; expected a failure naming '%s'", word);
    else if (want > 0 && (int)st != want)
        snprintf(why, why_size, "returned %s (%s); expected %s", hk_status_string(st), msg,
                 hk_status_string((hk_status)want));
    else if (!*msg)
        snprintf(why, why_size, "failed with an empty hk_last_error()");
    else if (word && !strstr(msg, word))
        snprintf(why, why_size, "message \"%s\" does not name '%s'", msg, word);
    else
        return 0;
    return 1;
}

/* The child writes its verdict to a pipe; a child that dies by a signal never writes one. */
static void child_report(pid_t pid, int fd, const char *expr, int line)
{
    char why[640] = "";
    ssize_t n = read(fd, why, sizeof why - 1);
    close(fd);
    int ws = 0;
    waitpid(pid, &ws, 0);
    if (WIFSIGNALED(ws)) {
        th_log("line %d: %s: killed by signal %d (%s)", line, expr, WTERMSIG(ws), strsignal(WTERMSIG(ws)));
        failures++;
    } else if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
        th_log("line %d: %s: %s", line, expr, n > 0 ? why : "the child exited abnormally");
        failures++;
    }
}

/* cmocka's handlers turn a signal into a test failure and run on; in a child that would run the rest of the suite
 * twice, so the child dies by the signal instead and the parent reports it. */
static void child_defaults(void)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; ++i)
        signal(sigs[i], SIG_DFL);
}

#define EXPECT_IN_CHILD(call, want, word)                                                                              \
    do {                                                                                                               \
        int fds_[2];                                                                                                   \
        assert_int_equal(pipe(fds_), 0);                                                                               \
        fflush(NULL);                                                                                                  \
        pid_t pid_ = fork();                                                                                           \
        assert_true(pid_ >= 0);                                                                                        \
        if (pid_ == 0) {                                                                                               \
            close(fds_[0]);                                                                                            \
            child_defaults();                                                                                          \
            char why_[640] = "";                                                                                       \
            int bad_ = verdict((call), (want), (word), why_, sizeof why_);                                             \
            if (bad_ && write(fds_[1], why_, strlen(why_)) < 0)                                                        \
                bad_ = 2;                                                                                              \
            _exit(bad_);                                                                                               \
        }                                                                                                              \
        close(fds_[1]);                                                                                                \
        child_report(pid_, fds_[0], #call, __LINE__);                                                                  \
    } while (0)

#define EXPECT_INVALID(call, word) EXPECT_IN_CHILD(call, HK_ERR_INVALID_ARGUMENT, word)
#define EXPECT_UNSUPPORTED(call, word) EXPECT_IN_CHILD(call, HK_ERR_UNSUPPORTED, word)
#define EXPECT_OK(call) EXPECT_IN_CHILD(call, HK_OK, NULL)

/* Context memory holding n random values of t (finite, never all zero). */
static void *random_tensor(const th_ctx *c, th_rng *r, hk_dtype t, int64_t n)
{
    double *v = th_host((size_t)n * sizeof(double));
    th_fill_normal(r, t, v, n, 1.0);
    size_t es = hk_dtype_size(t);
    unsigned char *h = th_host((size_t)n * es);
    for (int64_t i = 0; i < n; ++i)
        orc_encode(t, h, i, v[i]);
    void *d = th_dev(c, (size_t)n * es);
    th_upload(c, d, h, (size_t)n * es);
    return d;
}

static int32_t *offsets(const th_ctx *c, const int32_t *v, size_t n)
{
    int32_t *d = th_dev(c, n * sizeof *v);
    th_upload(c, d, v, n * sizeof *v);
    return d;
}

/* ---------------------------------------------------------------- variable-length attention metadata */

enum { VB = 2, VHQ = 2, VHKV = 1, VD = 8, VTOK = 8, VMAX = 5 };

static hk_attn_fwd_args varlen_fwd(const th_ctx *c, th_rng *r)
{
    static const int32_t cu_q[VB + 1] = {0, 3, VTOK}, cu_k[VB + 1] = {0, 5, VTOK};
    hk_attn_fwd_args a = HK_ARGS_INIT(hk_attn_fwd_args);
    a.dtype = HK_DTYPE_F32;
    a.batch = VB;
    a.seqlen_q = a.seqlen_k = VMAX;
    a.heads_q = VHQ;
    a.heads_kv = VHKV;
    a.head_dim = VD;
    a.q = random_tensor(c, r, a.dtype, VTOK * VHQ * VD);
    a.k = random_tensor(c, r, a.dtype, VTOK * VHKV * VD);
    a.v = random_tensor(c, r, a.dtype, VTOK * VHKV * VD);
    a.o = th_dev(c, VTOK * VHQ * VD * sizeof(float));
    a.lse = th_dev(c, VHQ * VTOK * sizeof(float));
    a.cu_seqlens_q = offsets(c, cu_q, VB + 1);
    a.cu_seqlens_k = offsets(c, cu_k, VB + 1);
    return a;
}

static hk_attn_bwd_args varlen_bwd(const th_ctx *c, th_rng *r, const hk_attn_fwd_args *f)
{
    hk_attn_bwd_args b = HK_ARGS_INIT(hk_attn_bwd_args);
    b.dtype = f->dtype;
    b.batch = f->batch;
    b.seqlen_q = f->seqlen_q;
    b.seqlen_k = f->seqlen_k;
    b.heads_q = f->heads_q;
    b.heads_kv = f->heads_kv;
    b.head_dim = f->head_dim;
    b.q = f->q, b.k = f->k, b.v = f->v, b.o = f->o, b.lse = f->lse;
    b.d_o = random_tensor(c, r, f->dtype, VTOK * VHQ * VD);
    b.dq = th_dev(c, VTOK * VHQ * VD * sizeof(float));
    b.dk = th_dev(c, VTOK * VHKV * VD * sizeof(float));
    b.dv = th_dev(c, VTOK * VHKV * VD * sizeof(float));
    b.cu_seqlens_q = f->cu_seqlens_q;
    b.cu_seqlens_k = f->cu_seqlens_k;
    return b;
}

static void test_varlen_metadata(const th_ctx *c, const void *param)
{
    (void)param;
    start();
    th_rng r = th_rng_for_case();
    hk_context *ctx = c->ctx;
    const hk_attn_fwd_args base = varlen_fwd(c, &r);
    assert_int_equal(hk_attn_fwd(ctx, &base), HK_OK);
    const hk_attn_bwd_args bbase = varlen_bwd(c, &r, &base);
    assert_int_equal(hk_attn_bwd(ctx, &bbase), HK_OK);

    static const int32_t decreasing[VB + 1] = {0, 6, 4}, negative[VB + 1] = {-2, 3, VTOK},
                         too_long[VB + 1] = {0, 1, VTOK}, first_long[VB + 1] = {0, VTOK, VTOK};
    const int32_t *dec = offsets(c, decreasing, VB + 1), *neg = offsets(c, negative, VB + 1),
                  *lng = offsets(c, too_long, VB + 1), *flng = offsets(c, first_long, VB + 1);
    hk_attn_fwd_args a;
    hk_attn_bwd_args b;
    a = base, a.cu_seqlens_q = dec;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "cu_seqlens_q");
    a = base, a.cu_seqlens_k = dec;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "cu_seqlens_k");
    a = base, a.cu_seqlens_q = neg;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "cu_seqlens_q");
    a = base, a.cu_seqlens_q = lng; /* a sequence of 7 > seqlen_q 5 */
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "seqlen_q");
    a = base, a.cu_seqlens_k = flng;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "seqlen_k");
    /* maxima of 0 used to skip the NULL and layout checks while the offsets still made the kernel read */
    a = base, a.seqlen_q = a.seqlen_k = 0, a.q = NULL;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "seqlen_q");
    a = base, a.seqlen_q = a.seqlen_k = 0;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "seqlen");

    b = bbase, b.cu_seqlens_q = dec;
    EXPECT_INVALID(hk_attn_bwd(ctx, &b), "cu_seqlens_q");
    b = bbase, b.cu_seqlens_q = neg;
    EXPECT_INVALID(hk_attn_bwd(ctx, &b), "cu_seqlens_q");
    b = bbase, b.cu_seqlens_k = flng;
    EXPECT_INVALID(hk_attn_bwd(ctx, &b), "seqlen_k");
    b = bbase, b.seqlen_q = b.seqlen_k = 0, b.q = NULL;
    EXPECT_INVALID(hk_attn_bwd(ctx, &b), "seqlen_q");
    /* a packed token dimension that the strides cannot hold: the rows of token 7 overlap token 0's heads */
    a = base, a.q_stride[0] = 0, a.q_stride[1] = VD, a.q_stride[2] = VD;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "q");
    /* an empty batch of offsets is fine whatever the pointers */
    a = base, a.batch = 0, a.q = NULL, a.o = NULL;
    EXPECT_OK(hk_attn_fwd(ctx, &a));
    finish();
}

/* attn_bwd takes a workspace like ln_fused_bwd: a size without a pointer is a broken rule. */
static void test_attn_bwd_workspace(const th_ctx *c, const void *param)
{
    (void)param;
    start();
    th_rng r = th_rng_for_case();
    const hk_attn_fwd_args f = varlen_fwd(c, &r);
    assert_int_equal(hk_attn_fwd(c->ctx, &f), HK_OK);
    hk_attn_bwd_args b = varlen_bwd(c, &r, &f);
    b.workspace_size = 64;
    EXPECT_INVALID(hk_attn_bwd(c->ctx, &b), "workspace");
    size_t bytes = 0;
    EXPECT_INVALID(hk_attn_bwd_workspace_size(c->ctx, &b, &bytes), "workspace");
    finish();
}

/* ---------------------------------------------------------------- handles */

static hk_context *cpu_context(void)
{
    hk_context_options o = HK_ARGS_INIT(hk_context_options);
    o.backend = HK_BACKEND_CPU;
    hk_context *ctx = NULL;
    assert_int_equal(hk_context_create(&o, &ctx), HK_OK);
    return ctx;
}

static hk_gemm_args small_gemm(const th_ctx *c, th_rng *r)
{
    hk_gemm_args g = HK_ARGS_INIT(hk_gemm_args);
    g.m = g.n = g.k = 8;
    g.a_type = g.b_type = g.d_type = HK_DTYPE_F32;
    g.a = random_tensor(c, r, HK_DTYPE_F32, 64);
    g.b = random_tensor(c, r, HK_DTYPE_F32, 64);
    g.d = th_dev(c, 64 * sizeof(float));
    g.lda = g.ldb = g.ldd = 8;
    g.alpha = 1.0f;
    return g;
}

static void test_dead_handles(const th_ctx *c, const void *param)
{
    (void)param;
    start();
    th_rng r = th_rng_for_case();
    const hk_gemm_args g = small_gemm(c, &r); /* host memory: any CPU context can run it */
    hk_context *dead = cpu_context();
    assert_int_equal(hk_gemm(dead, &g), HK_OK);
    hk_context_destroy(dead);
    EXPECT_INVALID(hk_gemm(dead, &g), "ctx");
    EXPECT_INVALID(hk_synchronize(dead, NULL), "ctx");
    void *p = NULL;
    EXPECT_INVALID(hk_malloc(dead, &p, 64), "ctx");
    size_t bytes;
    EXPECT_INVALID(hk_gemm_workspace_size(dead, &g, &bytes), "ctx");
    EXPECT_OK((hk_context_destroy(dead), HK_OK)); /* a second destroy is a no-op, not a glibc abort */
    assert_int_equal(hk_context_backend(dead), HK_BACKEND_AUTO);
    assert_string_equal(hk_context_arch(dead), "");

    /* The next contexts may reuse the freed memory; the stale handle must not drive them. */
    hk_context *live[8];
    for (int i = 0; i < 8; ++i)
        live[i] = cpu_context();
    EXPECT_INVALID(hk_gemm(dead, &g), "ctx");
    EXPECT_INVALID(hk_synchronize(dead, NULL), "ctx");
    for (int i = 0; i < 8; ++i) {
        assert_ptr_not_equal(live[i], dead);
        assert_int_equal(hk_gemm(live[i], &g), HK_OK);
    }

    /* Events die with their context. */
    hk_event *e0 = NULL, *e1 = NULL;
    assert_int_equal(hk_event_create(live[0], &e0), HK_OK);
    assert_int_equal(hk_event_create(live[0], &e1), HK_OK);
    float ms = 0;
    EXPECT_INVALID(hk_event_elapsed_ms(e0, e1, &ms), "recorded"); /* never recorded */
    assert_int_equal(hk_event_record(e0, NULL), HK_OK);
    EXPECT_INVALID(hk_event_elapsed_ms(e0, e1, &ms), "end");
    assert_int_equal(hk_event_record(e1, NULL), HK_OK);
    EXPECT_OK(hk_event_elapsed_ms(e0, e1, &ms));
    hk_event *other = NULL;
    assert_int_equal(hk_event_create(live[1], &other), HK_OK);
    assert_int_equal(hk_event_record(other, NULL), HK_OK);
    EXPECT_INVALID(hk_event_elapsed_ms(e0, other, &ms), "context");
    hk_event_destroy(other);
    EXPECT_INVALID(hk_event_record(other, NULL), "event"); /* destroyed */
    hk_context_destroy(live[0]);
    EXPECT_INVALID(hk_event_record(e0, NULL), "event");
    EXPECT_INVALID(hk_event_elapsed_ms(e0, e1, &ms), "start");
    EXPECT_OK((hk_event_destroy(e0), hk_event_destroy(e1), HK_OK));
    hk_event_destroy(e0); /* already gone with its context: a no-op */
    hk_event_destroy(e1);
    for (int i = 1; i < 8; ++i)
        hk_context_destroy(live[i]);

    /* Memory: only what hk_malloc returned, once. */
    hk_context *ctx = c->ctx;
    assert_int_equal(hk_malloc(ctx, &p, 256), HK_OK);
    EXPECT_INVALID(hk_free(ctx, (char *)p + 1), "ptr");
    uint64_t stack[4];
    EXPECT_INVALID(hk_free(ctx, stack), "ptr");
    assert_int_equal(hk_free(ctx, p), HK_OK);
    EXPECT_INVALID(hk_free(ctx, p), "ptr"); /* a double free */
    /* what one context allocated, another does not free */
    hk_context *owner = cpu_context();
    assert_int_equal(hk_malloc(owner, &p, 64), HK_OK);
    EXPECT_INVALID(hk_free(ctx, p), "ptr");
    hk_context_destroy(owner); /* frees p with it: LeakSanitizer checks */

    uint64_t junk[64];
    memset(junk, 0xA5, sizeof junk);
    EXPECT_INVALID(hk_event_record((hk_event *)junk, NULL), "event");
    EXPECT_INVALID(hk_gemm((hk_context *)junk, &g), "ctx");
    finish();
}

/* ---------------------------------------------------------------- sizes */

static void test_extent_overflow(const th_ctx *c, const void *param)
{
    (void)param;
    start();
    th_rng r = th_rng_for_case();
    hk_context *ctx = c->ctx;
    hk_gemm_args g = small_gemm(c, &r);
    size_t bytes = 0;
    /* 1 x (2^56 + 1) bf16: 2^57 bytes fits size_t but no device's address space; the CPU scratch size wrapped */
    g.m = g.n = 1;
    g.k = (INT64_C(1) << 56) + 1;
    g.a_type = g.b_type = HK_DTYPE_BF16;
    g.lda = g.k;
    g.ldb = 1;
    g.ldd = 1;
    EXPECT_INVALID(hk_gemm_workspace_size(ctx, &g, &bytes), "a");
    EXPECT_INVALID(hk_gemm(ctx, &g), "a");
    g = small_gemm(c, &r);
    g.m = 1, g.n = INT64_C(1) << 50, g.ldd = g.n, g.k = 0;
    EXPECT_INVALID(hk_gemm(ctx, &g), "d");

    hk_ln_fused_args l = HK_ARGS_INIT(hk_ln_fused_args);
    l.dtype = HK_DTYPE_F32;
    l.rows = INT64_C(1) << 30;
    l.cols = INT64_C(1) << 20;
    l.y = th_dev(c, 64);
    l.x = l.gamma = l.y;
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "x");
    finish();
}

/* struct_size beyond any struct this or a later header declares is refused before anything past the caller's
 * struct is read. */
static void test_struct_size_bound(const th_ctx *c, const void *param)
{
    (void)param;
    start();
    hk_context *ctx = c->ctx;
    size_t bytes = 0;
    hk_gemm_args g = HK_ARGS_INIT(hk_gemm_args);
    g.struct_size = SIZE_MAX;
    EXPECT_INVALID(hk_gemm(ctx, &g), "struct_size");
    EXPECT_INVALID(hk_gemm_workspace_size(ctx, &g, &bytes), "struct_size");
    hk_attn_fwd_args af = HK_ARGS_INIT(hk_attn_fwd_args);
    af.struct_size = SIZE_MAX / 2;
    EXPECT_INVALID(hk_attn_fwd(ctx, &af), "struct_size");
    hk_attn_bwd_args ab = HK_ARGS_INIT(hk_attn_bwd_args);
    ab.struct_size = SIZE_MAX;
    EXPECT_INVALID(hk_attn_bwd(ctx, &ab), "struct_size");
    EXPECT_INVALID(hk_attn_bwd_workspace_size(ctx, &ab, &bytes), "struct_size");
    hk_rotary_args ro = HK_ARGS_INIT(hk_rotary_args);
    ro.struct_size = SIZE_MAX;
    EXPECT_INVALID(hk_rotary(ctx, &ro), "struct_size");
    hk_ln_fused_args lf = HK_ARGS_INIT(hk_ln_fused_args);
    lf.struct_size = SIZE_MAX;
    EXPECT_INVALID(hk_ln_fused(ctx, &lf), "struct_size");
    hk_ln_fused_bwd_args lb = HK_ARGS_INIT(hk_ln_fused_bwd_args);
    lb.struct_size = SIZE_MAX;
    EXPECT_INVALID(hk_ln_fused_bwd(ctx, &lb), "struct_size");
    EXPECT_INVALID(hk_ln_fused_bwd_workspace_size(ctx, &lb, &bytes), "struct_size");

    /* context options follow the argument structs' rules */
    hk_context *out = NULL;
    hk_context_options o = HK_ARGS_INIT(hk_context_options);
    o.backend = HK_BACKEND_CPU;
    o.struct_size = SIZE_MAX;
    EXPECT_INVALID(hk_context_create(&o, &out), "struct_size");
    struct {
        hk_context_options o;
        uint64_t newer[2];
    } big;
    memset(&big, 0, sizeof big);
    big.o.struct_size = sizeof big;
    big.o.backend = HK_BACKEND_CPU;
    EXPECT_IN_CHILD((hk_context_create(&big.o, &out) == HK_OK ? (hk_context_destroy(out), HK_OK) : HK_ERR_INTERNAL),
                    HK_OK, NULL);
    big.newer[1] = 7;
    EXPECT_UNSUPPORTED(hk_context_create(&big.o, &out), "opts");
    finish();
}

/* ---------------------------------------------------------------- messages */

static void test_messages(const th_ctx *c, const void *param)
{
    (void)c;
    (void)param;
    start();
    static const hk_backend gpus[] = {HK_BACKEND_HIP, HK_BACKEND_CUDA};
    for (size_t i = 0; i < 2; ++i) {
        char why[256] = "";
        hk_status st = hk_probe(gpus[i], why, sizeof why);
        if (st == HK_OK)
            continue; /* the runtime is here */
        if (!*hk_last_error() || !strstr(hk_last_error(), hk_backend_name(gpus[i]))) {
            th_log("hk_probe(%s) failed with hk_last_error() \"%s\" (why: \"%s\")", hk_backend_name(gpus[i]),
                   hk_last_error(), why);
            failures++;
        }
    }
    finish();
}

/* ---------------------------------------------------------------- aliasing (hk.h states the in-place forms) */

static void test_aliasing(const th_ctx *c, const void *param)
{
    (void)param;
    start();
    th_rng r = th_rng_for_case();
    hk_context *ctx = c->ctx;
    const hk_gemm_args gb = small_gemm(c, &r);
    hk_gemm_args g;
    g = gb, g.d = (void *)g.a;
    EXPECT_INVALID(hk_gemm(ctx, &g), "overlaps");
    g = gb, g.d = (float *)g.b + 3; /* partial */
    EXPECT_INVALID(hk_gemm(ctx, &g), "overlaps");
    g = gb, g.beta = 1.0f, g.c = random_tensor(c, &r, HK_DTYPE_F32, 64), g.ldc = 8;
    void *cd = (void *)g.c;
    g.d = cd; /* C == D with ldc == ldd: supported */
    EXPECT_OK(hk_gemm(ctx, &g));
    g.c = (float *)cd + 1; /* partial C / D overlap */
    EXPECT_INVALID(hk_gemm(ctx, &g), "overlaps");
    g = gb, g.workspace = (void *)g.a, g.workspace_size = 256;
    EXPECT_INVALID(hk_gemm(ctx, &g), "workspace");

    /* rotary: out == x with x's strides is in place; anything else overlapping x is refused */
    hk_rotary_args ro = HK_ARGS_INIT(hk_rotary_args);
    ro.dtype = HK_DTYPE_F32;
    ro.batch = 1, ro.seqlen = 4, ro.heads = 2, ro.head_dim = 8;
    ro.x = random_tensor(c, &r, HK_DTYPE_F32, 64);
    ro.cos = random_tensor(c, &r, HK_DTYPE_F32, 16);
    ro.sin = random_tensor(c, &r, HK_DTYPE_F32, 16);
    ro.table_positions = 4;
    hk_rotary_args rr = ro;
    rr.out = (void *)ro.x;
    EXPECT_OK(hk_rotary(ctx, &rr));
    rr.out = (float *)ro.x + 8;
    EXPECT_INVALID(hk_rotary(ctx, &rr), "overlaps");
    rr.out = (void *)ro.cos;
    EXPECT_INVALID(hk_rotary(ctx, &rr), "overlaps");

    /* attention: O = Q refused; Q, K, V interleaved in one packed buffer (inputs) and dQ, dK, dV interleaved
     * in another (outputs, disjoint elements) are fine */
    enum { T = 4, H = 2, D = 8 };
    hk_attn_fwd_args a = HK_ARGS_INIT(hk_attn_fwd_args);
    a.dtype = HK_DTYPE_F32;
    a.batch = 1, a.seqlen_q = a.seqlen_k = T, a.heads_q = a.heads_kv = H, a.head_dim = D;
    float *qkv = random_tensor(c, &r, HK_DTYPE_F32, T * 3 * H * D);
    a.q = qkv, a.k = qkv + H * D, a.v = qkv + 2 * H * D;
    for (int i = 0; i < 3; ++i) {
        int64_t s[3] = {T * 3 * H * D, 3 * H * D, D};
        memcpy(i == 0 ? a.q_stride : i == 1 ? a.k_stride : a.v_stride, s, sizeof s);
    }
    a.o = th_dev(c, T * H * D * sizeof(float));
    a.lse = th_dev(c, H * T * sizeof(float));
    EXPECT_OK(hk_attn_fwd(ctx, &a));
    assert_int_equal(hk_attn_fwd(ctx, &a), HK_OK);
    hk_attn_fwd_args ao = a;
    ao.o = (void *)a.q, memcpy(ao.o_stride, a.q_stride, sizeof a.q_stride);
    EXPECT_INVALID(hk_attn_fwd(ctx, &ao), "overlaps");
    ao = a, ao.lse = (float *)a.o + 3;
    EXPECT_INVALID(hk_attn_fwd(ctx, &ao), "overlaps");

    hk_attn_bwd_args b = HK_ARGS_INIT(hk_attn_bwd_args);
    b.dtype = a.dtype, b.batch = 1, b.seqlen_q = b.seqlen_k = T, b.heads_q = b.heads_kv = H, b.head_dim = D;
    b.q = a.q, b.k = a.k, b.v = a.v, b.o = a.o, b.lse = a.lse;
    memcpy(b.q_stride, a.q_stride, sizeof b.q_stride);
    memcpy(b.k_stride, a.k_stride, sizeof b.k_stride);
    memcpy(b.v_stride, a.v_stride, sizeof b.v_stride);
    b.d_o = random_tensor(c, &r, HK_DTYPE_F32, T * H * D);
    float *dqkv = th_dev(c, T * 3 * H * D * sizeof(float));
    b.dq = dqkv, b.dk = dqkv + H * D, b.dv = dqkv + 2 * H * D;
    memcpy(b.dq_stride, a.q_stride, sizeof b.dq_stride);
    memcpy(b.dk_stride, a.q_stride, sizeof b.dk_stride);
    memcpy(b.dv_stride, a.q_stride, sizeof b.dv_stride);
    EXPECT_OK(hk_attn_bwd(ctx, &b));
    hk_attn_bwd_args bo = b;
    bo.dk = (void *)b.dq; /* dK over dQ */
    EXPECT_INVALID(hk_attn_bwd(ctx, &bo), "overlaps");
    bo = b, bo.dq = (void *)b.d_o, memset(bo.dq_stride, 0, sizeof bo.dq_stride);
    EXPECT_INVALID(hk_attn_bwd(ctx, &bo), "overlaps");

    /* norms: no in-place form */
    hk_ln_fused_args l = HK_ARGS_INIT(hk_ln_fused_args);
    l.dtype = HK_DTYPE_F32;
    l.rows = 4, l.cols = 16;
    l.x = random_tensor(c, &r, HK_DTYPE_F32, 64);
    l.gamma = random_tensor(c, &r, HK_DTYPE_F32, 16);
    l.y = th_dev(c, 64 * sizeof(float));
    EXPECT_OK(hk_ln_fused(ctx, &l));
    hk_ln_fused_args lo = l;
    lo.y = (void *)l.x;
    EXPECT_INVALID(hk_ln_fused(ctx, &lo), "overlaps");
    lo = l, lo.rstd = (float *)l.y + 60;
    EXPECT_INVALID(hk_ln_fused(ctx, &lo), "overlaps");
    finish();
}

int main(void)
{
    th_open_contexts();
    th_add("varlen_metadata", test_varlen_metadata, NULL, TH_CPU);
    th_add("attn_bwd_workspace", test_attn_bwd_workspace, NULL, TH_CPU);
    th_add("dead_handles", test_dead_handles, NULL, TH_CPU);
    th_add("extent_overflow", test_extent_overflow, NULL, TH_CPU);
    th_add("struct_size_bound", test_struct_size_bound, NULL, TH_CPU);
    th_add("messages", test_messages, NULL, TH_CPU);
    th_add("aliasing", test_aliasing, NULL, TH_CPU);
    return th_run("reliability");
}
