/* Every public entry point rejects bad input with a status and an hk_last_error() that names the argument.
 * Each test starts from a valid call (checked to succeed on the CPU), then breaks one rule at a time. */
#include "harness.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Does msg contain `word` delimited by non-identifier characters? ("m" must not match inside "gemm"). */
static bool names_word(const char *msg, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(msg, word); p; p = strstr(p + 1, word)) {
        bool left = p == msg || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z') ||
                                  (p[-1] >= '0' && p[-1] <= '9'));
        char r = p[n];
        bool right = !(r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'));
        if (left && right)
            return true;
    }
    return false;
}

/* Checks are not fatal, so that one run lists every rule a build gets wrong; each test ends with finish(). */
static int failures;

static void report(int line, const char *expr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void report(int line, const char *expr, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    th_log("line %d: %s: %s", line, expr, what);
    failures++;
}

/* want: the exact status, or -1 for "any failure". */
static void check_failure(hk_status st, int want, const char *word, const char *expr, int line)
{
    const char *msg = hk_last_error();
    if (st == HK_OK)
        report(line, expr, "returned HK_OK; expected a failure naming '%s'", word ? word : "the argument");
    else if (want >= 0 && (int)st != want)
        report(line, expr, "returned %s (%s); expected %s", hk_status_string(st), msg,
               hk_status_string((hk_status)want));
    else if (!msg || !*msg)
        report(line, expr, "failed with an empty hk_last_error()");
    else if (word && !names_word(msg, word))
        report(line, expr, "message \"%s\" does not name '%s'", msg, word);
}

static void start(void) { failures = 0; }
static void finish(void) { th_expect(failures == 0, "argument validation"); }

#define EXPECT_INVALID(call, word) check_failure((call), HK_ERR_INVALID_ARGUMENT, (word), #call, __LINE__)
#define EXPECT_FAIL(call, word) check_failure((call), -1, (word), #call, __LINE__)
#define EXPECT_UNSUPPORTED(call, word) check_failure((call), HK_ERR_UNSUPPORTED, (word), #call, __LINE__)
/* The valid baseline must pass, or every later check is meaningless: fatal. */
#define EXPECT_OK(call)                                                                                                \
    do {                                                                                                               \
        hk_status st_ = (call);                                                                                        \
        if (st_ != HK_OK)                                                                                              \
            fail_msg("line %d: %s returned %s: %s", __LINE__, #call, hk_status_string(st_), hk_last_error());         \
    } while (0)

#define BIG (INT64_C(1) << 40)
#define ODD(p) ((void *)((char *)(p) + 1))  /* misaligned for any element wider than a byte */
#define HALF(p) ((void *)((char *)(p) + 2)) /* misaligned for 4-byte elements */

/* ---------------------------------------------------------------- GEMM */

static hk_gemm_args gemm_base(const th_ctx *c)
{
    hk_gemm_args g = HK_ARGS_INIT(hk_gemm_args);
    g.m = g.n = g.k = 16;
    g.a_type = g.b_type = g.d_type = HK_DTYPE_BF16;
    g.trans_b = 1;
    g.a = th_dev(c, 4096);
    g.b = th_dev(c, 4096);
    g.d = th_dev(c, 4096);
    g.lda = g.ldb = g.ldd = 16;
    /* inputs must be finite for the baseline call */
    void *zeros = th_host(4096);
    th_upload(c, (void *)g.a, zeros, 4096);
    th_upload(c, (void *)g.b, zeros, 4096);
    g.alpha = 1;
    return g;
}

static void test_gemm(const th_ctx *c, const void *param)
{
    start();
    (void)param;
    hk_context *ctx = c->ctx;
    const hk_gemm_args base = gemm_base(c);
    hk_gemm_args g;
    EXPECT_OK(hk_gemm(ctx, &base));

    EXPECT_INVALID(hk_gemm(NULL, &base), "ctx");
    EXPECT_INVALID(hk_gemm(ctx, NULL), "args");
    g = base, g.struct_size = 0;
    EXPECT_INVALID(hk_gemm(ctx, &g), "struct_size");
    g = base, g.struct_size = sizeof(size_t);
    EXPECT_INVALID(hk_gemm(ctx, &g), "struct_size");
    g = base, g.struct_size = offsetof(hk_gemm_args, d);
    EXPECT_INVALID(hk_gemm(ctx, &g), "struct_size");
    g = base, g.m = -1;
    EXPECT_INVALID(hk_gemm(ctx, &g), "m");
    g = base, g.n = -7;
    EXPECT_INVALID(hk_gemm(ctx, &g), "n");
    g = base, g.k = INT64_MIN;
    EXPECT_INVALID(hk_gemm(ctx, &g), "k");
    /* m * k and its byte count overflow int64 / size_t */
    g = base, g.m = BIG, g.k = BIG, g.lda = BIG;
    EXPECT_INVALID(hk_gemm(ctx, &g), "a");
    g = base, g.m = INT64_C(1) << 62;
    EXPECT_INVALID(hk_gemm(ctx, &g), "a");
    g = base, g.n = INT64_MAX, g.ldd = INT64_MAX, g.ldb = 16;
    EXPECT_INVALID(hk_gemm(ctx, &g), NULL);
    /* leading dimensions */
    g = base, g.lda = 15;
    EXPECT_INVALID(hk_gemm(ctx, &g), "lda");
    g = base, g.trans_a = 1, g.m = 8, g.lda = 7;
    EXPECT_INVALID(hk_gemm(ctx, &g), "lda");
    g = base, g.lda = -16;
    EXPECT_INVALID(hk_gemm(ctx, &g), "lda");
    g = base, g.ldb = 15;
    EXPECT_INVALID(hk_gemm(ctx, &g), "ldb");
    g = base, g.trans_b = 0, g.n = 12, g.k = 4, g.ldb = 11, g.ldd = 12;
    EXPECT_INVALID(hk_gemm(ctx, &g), "ldb");
    g = base, g.ldd = 8;
    EXPECT_INVALID(hk_gemm(ctx, &g), "ldd");
    g = base, g.beta = 1, g.c = th_dev(c, 4096), g.ldc = 15;
    EXPECT_INVALID(hk_gemm(ctx, &g), "ldc");
    /* pointers */
    g = base, g.a = NULL;
    EXPECT_INVALID(hk_gemm(ctx, &g), "a");
    g = base, g.b = NULL;
    EXPECT_INVALID(hk_gemm(ctx, &g), "b");
    g = base, g.d = NULL;
    EXPECT_INVALID(hk_gemm(ctx, &g), "d");
    g = base, g.a = ODD(base.a);
    EXPECT_INVALID(hk_gemm(ctx, &g), "a");
    g = base, g.b = ODD(base.b);
    EXPECT_INVALID(hk_gemm(ctx, &g), "b");
    g = base, g.d_type = HK_DTYPE_F32, g.d = HALF(base.d);
    EXPECT_INVALID(hk_gemm(ctx, &g), "d");
    g = base, g.beta = 0.5f, g.c = ODD(th_dev(c, 4096)), g.ldc = 16;
    EXPECT_INVALID(hk_gemm(ctx, &g), "c");
    /* the optional workspace: a size needs a pointer, 16-byte aligned; a small one is no error (no split) */
    g = base, g.workspace_size = 256;
    EXPECT_INVALID(hk_gemm(ctx, &g), "workspace");
    g = base, g.workspace = ODD(th_dev(c, 4096)), g.workspace_size = 256;
    EXPECT_INVALID(hk_gemm(ctx, &g), "workspace");
    g = base, g.workspace = th_dev(c, 256), g.workspace_size = 256;
    EXPECT_OK(hk_gemm(ctx, &g));
    size_t ws = 1;
    EXPECT_OK(hk_gemm_workspace_size(ctx, &base, &ws));
    if (ws != 0)
        fail_msg("a 16x16x16 gemm wants %zu bytes of workspace", ws);
    EXPECT_INVALID(hk_gemm_workspace_size(NULL, &base, &ws), "ctx");
    EXPECT_INVALID(hk_gemm_workspace_size(ctx, NULL, &ws), "args");
    EXPECT_INVALID(hk_gemm_workspace_size(ctx, &base, NULL), "bytes");
    g = base, g.m = -1;
    EXPECT_INVALID(hk_gemm_workspace_size(ctx, &g, &ws), "m");
    /* beta != 0 needs C; C may alias D only exactly */
    g = base, g.beta = 1;
    EXPECT_INVALID(hk_gemm(ctx, &g), "c");
    g = base, g.beta = 1, g.c = base.d, g.ldc = 32;
    EXPECT_INVALID(hk_gemm(ctx, &g), "ldc");
    /* dtypes */
    g = base, g.a_type = (hk_dtype)99;
    EXPECT_INVALID(hk_gemm(ctx, &g), "a_type");
    g = base, g.b_type = (hk_dtype)-1;
    EXPECT_INVALID(hk_gemm(ctx, &g), "b_type");
    g = base, g.d_type = (hk_dtype)99;
    EXPECT_INVALID(hk_gemm(ctx, &g), "d_type");
    g = base, g.b_type = HK_DTYPE_F16;
    EXPECT_FAIL(hk_gemm(ctx, &g), "b_type");
    g = base, g.d_type = HK_DTYPE_FP8_E4M3;
    EXPECT_FAIL(hk_gemm(ctx, &g), "d_type");
    g = base, g.a_type = g.b_type = HK_DTYPE_FP8_E4M3, g.d_type = HK_DTYPE_F16; /* hk.h: fp8 gives bf16 or f32 */
    EXPECT_FAIL(hk_gemm(ctx, &g), "d_type");
    g = base, g.a_type = HK_DTYPE_FP8_E4M3, g.b_type = HK_DTYPE_FP8_E4M3FNUZ;
    EXPECT_FAIL(hk_gemm(ctx, &g), NULL);
    /* scales */
    g = base, g.a_type = g.b_type = HK_DTYPE_FP8_E4M3, g.scale_a = INFINITY;
    EXPECT_INVALID(hk_gemm(ctx, &g), "scale_a");
    g = base, g.a_type = g.b_type = HK_DTYPE_FP8_E4M3FNUZ, g.scale_b = NAN;
    EXPECT_INVALID(hk_gemm(ctx, &g), "scale_b");
    g = base, g.scale_a = 3.0f; /* libhk rejects scales on non-fp8 operands rather than ignoring them */
    EXPECT_INVALID(hk_gemm(ctx, &g), "scale_a");
    finish();
}

/* A caller compiled against a newer header passes a longer struct: zero tail bytes are fine, a set one is not. */
static void test_struct_size_newer(const th_ctx *c, const void *param)
{
    start();
    (void)param;
    struct {
        hk_gemm_args args;
        uint64_t newer_fields[4];
    } big;
    memset(&big, 0, sizeof big);
    big.args = gemm_base(c);
    big.args.struct_size = sizeof big;
    EXPECT_OK(hk_gemm(c->ctx, &big.args));
    big.newer_fields[2] = 1;
    EXPECT_FAIL(hk_gemm(c->ctx, &big.args), "args");
    finish();
}

/* ---------------------------------------------------------------- attention */

enum { AB = 2, AS = 8, AHQ = 4, AHKV = 2, AD = 16 };

static hk_attn_fwd_args attn_base(const th_ctx *c)
{
    hk_attn_fwd_args a = HK_ARGS_INIT(hk_attn_fwd_args);
    size_t q = AB * AS * AHQ * AD * 2, kv = AB * AS * AHKV * AD * 2;
    a.dtype = HK_DTYPE_BF16;
    a.batch = AB;
    a.seqlen_q = a.seqlen_k = AS;
    a.heads_q = AHQ;
    a.heads_kv = AHKV;
    a.head_dim = AD;
    void *zeros = th_host(q);
    a.q = th_dev(c, q);
    a.k = th_dev(c, kv);
    a.v = th_dev(c, kv);
    th_upload(c, (void *)a.q, zeros, q);
    th_upload(c, (void *)a.k, zeros, kv);
    th_upload(c, (void *)a.v, zeros, kv);
    a.o = th_dev(c, q);
    a.lse = th_dev(c, AB * AHQ * AS * sizeof(float));
    return a;
}

static void test_attn_fwd(const th_ctx *c, const void *param)
{
    start();
    (void)param;
    hk_context *ctx = c->ctx;
    const hk_attn_fwd_args base = attn_base(c);
    hk_attn_fwd_args a;
    EXPECT_OK(hk_attn_fwd(ctx, &base));

    EXPECT_INVALID(hk_attn_fwd(NULL, &base), "ctx");
    EXPECT_INVALID(hk_attn_fwd(ctx, NULL), "args");
    a = base, a.struct_size = 0;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "struct_size");
    a = base, a.struct_size = offsetof(hk_attn_fwd_args, lse);
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "struct_size");
    a = base, a.batch = -1;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "batch");
    a = base, a.seqlen_q = -3;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "seqlen_q");
    a = base, a.seqlen_k = -1;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "seqlen_k");
    a = base, a.heads_q = 0;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "heads_q");
    a = base, a.heads_kv = 0;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "heads_kv");
    a = base, a.head_dim = 0;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "head_dim");
    a = base, a.head_dim = -64;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "head_dim");
    a = base, a.heads_q = 6, a.heads_kv = 4;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "heads_q");
    a = base, a.heads_q = 2, a.heads_kv = 4;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "heads_q");
    a = base, a.dtype = (hk_dtype)99;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "dtype");
    a = base, a.dtype = HK_DTYPE_NONE;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "dtype");
    a = base, a.dtype = HK_DTYPE_FP8_E4M3;
    EXPECT_FAIL(hk_attn_fwd(ctx, &a), "dtype");
    /* sizes whose contiguous strides overflow int64 */
    a = base, a.seqlen_q = a.seqlen_k = BIG, a.heads_q = a.heads_kv = INT64_C(1) << 20, a.head_dim = 1024;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "q");
    a = base, a.batch = INT64_MAX;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "q");
    /* pointers */
    a = base, a.q = NULL;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "q");
    a = base, a.k = NULL;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "k");
    a = base, a.v = NULL;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "v");
    a = base, a.o = NULL;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "o");
    a = base, a.q = ODD(base.q);
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "q");
    a = base, a.o = ODD(base.o);
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "o");
    a = base, a.lse = HALF(base.lse);
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "lse");
    /* strides: overlapping heads / rows, negative */
    int64_t sb = AS * AHQ * AD, ss = AHQ * AD;
    a = base, a.q_stride[0] = sb, a.q_stride[1] = ss, a.q_stride[2] = AD - 1;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "q");
    a = base, a.o_stride[0] = sb, a.o_stride[1] = AD, a.o_stride[2] = AD;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "o");
    a = base, a.o_stride[0] = ss, a.o_stride[1] = ss, a.o_stride[2] = AD;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "o");
    a = base, a.k_stride[0] = AS * AHKV * AD, a.k_stride[1] = -AHKV * AD, a.k_stride[2] = AD;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "k_stride");
    a = base, a.v_stride[0] = -1, a.v_stride[1] = AHKV * AD, a.v_stride[2] = AD;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "v_stride");
    /* varlen offsets come in pairs and are int32 */
    int32_t *cu = th_dev(c, 64);
    a = base, a.cu_seqlens_q = cu;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "cu_seqlens_k");
    a = base, a.cu_seqlens_k = cu;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "cu_seqlens_q");
    a = base, a.cu_seqlens_q = HALF(cu), a.cu_seqlens_k = cu + 8;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "cu_seqlens_q");
    a = base, a.softmax_scale = NAN;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "softmax_scale");
    a = base, a.softmax_scale = INFINITY;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "softmax_scale");
    /* 1.3 fields: a 1.2 caller's smaller struct still works; softcap finite and >= 0; head_dim_v >= 0 and V/O
     * checked with it; any window bound is valid (negative: unbounded) */
    a = base, a.struct_size = offsetof(hk_attn_fwd_args, window);
    EXPECT_OK(hk_attn_fwd(ctx, &a));
    a = base, a.softcap = -1.0f;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "softcap");
    a = base, a.softcap = NAN;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "softcap");
    a = base, a.softcap = INFINITY;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "softcap");
    a = base, a.softcap = 30.0f, a.causal = 1, a.window = 1, a.window_left = INT64_MIN, a.window_right = INT64_MAX;
    EXPECT_OK(hk_attn_fwd(ctx, &a));
    a = base, a.window = -1, a.window_left = 3, a.window_right = 0;
    EXPECT_OK(hk_attn_fwd(ctx, &a));
    a = base, a.head_dim_v = -1;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "head_dim_v");
    a = base, a.head_dim_v = AD / 2;
    EXPECT_OK(hk_attn_fwd(ctx, &a));
    a = base, a.head_dim_v = INT64_C(1) << 60;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "v");
    /* rows of 2 * AD features overlap at a head stride of AD: V and O are checked with head_dim_v, Q and K not */
    a = base, a.head_dim_v = 2 * AD, a.v_stride[0] = AS * AHKV * AD, a.v_stride[1] = AHKV * AD, a.v_stride[2] = AD;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "v");
    a = base, a.head_dim_v = 2 * AD, a.v_stride[0] = AS * AHKV * 2 * AD, a.v_stride[1] = AHKV * 2 * AD,
    a.v_stride[2] = 2 * AD, a.o_stride[0] = sb, a.o_stride[1] = ss, a.o_stride[2] = AD;
    EXPECT_INVALID(hk_attn_fwd(ctx, &a), "o");
    a = base, a.head_dim_v = AD / 2, a.v_stride[0] = AS * AHKV * AD / 2, a.v_stride[1] = AHKV * AD / 2,
    a.v_stride[2] = AD / 2;
    EXPECT_OK(hk_attn_fwd(ctx, &a));
    finish();
}

static hk_attn_bwd_args attn_bwd_base(const th_ctx *c)
{
    hk_attn_fwd_args f = attn_base(c);
    hk_attn_bwd_args b = HK_ARGS_INIT(hk_attn_bwd_args);
    size_t q = AB * AS * AHQ * AD * 2, kv = AB * AS * AHKV * AD * 2;
    b.dtype = f.dtype;
    b.batch = f.batch;
    b.seqlen_q = f.seqlen_q;
    b.seqlen_k = f.seqlen_k;
    b.heads_q = f.heads_q;
    b.heads_kv = f.heads_kv;
    b.head_dim = f.head_dim;
    b.q = f.q;
    b.k = f.k;
    b.v = f.v;
    b.o = f.q; /* any finite data */
    b.d_o = f.q;
    float *lse = th_host(AB * AHQ * AS * sizeof(float));
    th_upload(c, f.lse, lse, AB * AHQ * AS * sizeof(float));
    b.lse = f.lse;
    b.dq = th_dev(c, q);
    b.dk = th_dev(c, kv);
    b.dv = th_dev(c, kv);
    return b;
}

static void test_attn_bwd(const th_ctx *c, const void *param)
{
    start();
    (void)param;
    hk_context *ctx = c->ctx;
    hk_attn_bwd_args base = attn_bwd_base(c), a;
    size_t ws = 0;
    EXPECT_OK(hk_attn_bwd_workspace_size(ctx, &base, &ws));
    if (ws) {
        base.workspace = th_dev(c, ws);
        base.workspace_size = ws;
    }
    EXPECT_OK(hk_attn_bwd(ctx, &base));

    EXPECT_INVALID(hk_attn_bwd(NULL, &base), "ctx");
    EXPECT_INVALID(hk_attn_bwd(ctx, NULL), "args");
    EXPECT_INVALID(hk_attn_bwd_workspace_size(NULL, &base, &ws), "ctx");
    EXPECT_INVALID(hk_attn_bwd_workspace_size(ctx, NULL, &ws), "args");
    EXPECT_INVALID(hk_attn_bwd_workspace_size(ctx, &base, NULL), "bytes");
    a = base, a.struct_size = 0;
    EXPECT_INVALID(hk_attn_bwd(ctx, &a), "struct_size");
    a = base, a.struct_size = 8;
    EXPECT_INVALID(hk_attn_bwd_workspace_size(ctx, &a, &ws), "struct_size");
    a = base, a.heads_q = 3;
    EXPECT_INVALID(hk_attn_bwd(ctx, &a), "heads_q");
    a = base, a.seqlen_k = -1;
    EXPECT_INVALID(hk_attn_bwd(ctx, &a), "seqlen_k");
    a = base, a.dtype = (hk_dtype)99;
    EXPECT_INVALID(hk_attn_bwd(ctx, &a), "dtype");
    a = base, a.lse = NULL;
    EXPECT_INVALID(hk_attn_bwd(ctx, &a), "lse");
    a = base, a.lse = HALF(base.lse);
    EXPECT_INVALID(hk_attn_bwd(ctx, &a), "lse");
    a = base, a.d_o = NULL;
    EXPECT_INVALID(hk_attn_bwd(ctx, &a), "d_o");
    a = base, a.o = NULL;
    EXPECT_INVALID(hk_attn_bwd(ctx, &a), "o");
    a = base, a.dq = NULL;
    EXPECT_INVALID(hk_attn_bwd(ctx, &a), "dq");
    a = base, a.dk = NULL;
    EXPECT_INVALID(hk_attn_bwd(ctx, &a), "dk");
    a = base, a.dv = ODD(base.dv);
    EXPECT_INVALID(hk_attn_bwd(ctx, &a), "dv");
    a = base, a.dk_stride[0] = AS * AHKV * AD, a.dk_stride[1] = AHKV * AD, a.dk_stride[2] = 8;
    EXPECT_INVALID(hk_attn_bwd(ctx, &a), "dk");
    a = base, a.dq_stride[0] = -1, a.dq_stride[1] = AHQ * AD, a.dq_stride[2] = AD;
    EXPECT_INVALID(hk_attn_bwd(ctx, &a), "dq_stride");
    a = base, a.do_stride[0] = AS * AHQ * AD, a.do_stride[1] = AD, a.do_stride[2] = AD;
    EXPECT_INVALID(hk_attn_bwd(ctx, &a), "d_o");
    /* 1.3 fields */
    a = base, a.struct_size = offsetof(hk_attn_bwd_args, window);
    EXPECT_OK(hk_attn_bwd(ctx, &a));
    a = base, a.softcap = -2.0f;
    EXPECT_INVALID(hk_attn_bwd(ctx, &a), "softcap");
    a = base, a.softcap = NAN;
    EXPECT_INVALID(hk_attn_bwd_workspace_size(ctx, &a, &ws), "softcap");
    a = base, a.head_dim_v = -3;
    EXPECT_INVALID(hk_attn_bwd(ctx, &a), "head_dim_v");
    a = base, a.softcap = 5.0f, a.window = 1, a.window_left = 2, a.window_right = -1, a.head_dim_v = AD / 2;
    EXPECT_OK(hk_attn_bwd(ctx, &a));
    /* dO, O, V and dV rows have head_dim_v features: 2 * AD overlaps at a head stride of AD */
    int64_t qs[3] = {AS * AHQ * AD, AHQ * AD, AD}, kvs[3] = {AS * AHKV * AD, AHKV * AD, AD};
    int64_t wide_q[3] = {AS * AHQ * 2 * AD, AHQ * 2 * AD, 2 * AD};
    int64_t wide_kv[3] = {AS * AHKV * 2 * AD, AHKV * 2 * AD, 2 * AD};
    const char *names[4] = {"o", "d_o", "v", "dv"};
    for (int t = 0; t < 4; ++t) {
        a = base, a.head_dim_v = 2 * AD;
        memcpy(a.o_stride, t == 0 ? qs : wide_q, sizeof qs);
        memcpy(a.do_stride, t == 1 ? qs : wide_q, sizeof qs);
        memcpy(a.v_stride, t == 2 ? kvs : wide_kv, sizeof kvs);
        memcpy(a.dv_stride, t == 3 ? kvs : wide_kv, sizeof kvs);
        EXPECT_INVALID(hk_attn_bwd(ctx, &a), names[t]);
    }
    /* dQ and dK keep head_dim */
    a = base, a.head_dim_v = AD / 2, a.dk_stride[0] = AS * AHKV * AD / 2, a.dk_stride[1] = AHKV * AD / 2,
    a.dk_stride[2] = AD / 2;
    EXPECT_INVALID(hk_attn_bwd(ctx, &a), "dk");
    if (ws) {
        a = base, a.workspace_size = ws - 1;
        EXPECT_INVALID(hk_attn_bwd(ctx, &a), "workspace");
        a = base, a.workspace = NULL;
        EXPECT_INVALID(hk_attn_bwd(ctx, &a), "workspace");
    }
    finish();
}

/* ---------------------------------------------------------------- rotary */

enum { RB = 1, RS = 8, RH = 2, RD = 16, RT = 8 };

static hk_rotary_args rotary_base(const th_ctx *c)
{
    hk_rotary_args r = HK_ARGS_INIT(hk_rotary_args);
    size_t bytes = RB * RS * RH * RD * 2, table = RT * RD / 2 * sizeof(float);
    r.dtype = HK_DTYPE_BF16;
    r.batch = RB;
    r.seqlen = RS;
    r.heads = RH;
    r.head_dim = RD;
    void *zeros = th_host(bytes + table);
    r.x = th_dev(c, bytes);
    th_upload(c, (void *)r.x, zeros, bytes);
    r.out = th_dev(c, bytes);
    float *cs = th_dev(c, table), *sn = th_dev(c, table);
    th_upload(c, cs, zeros, table);
    th_upload(c, sn, zeros, table);
    r.cos = cs;
    r.sin = sn;
    r.table_positions = RT;
    return r;
}

static void test_rotary(const th_ctx *c, const void *param)
{
    start();
    (void)param;
    hk_context *ctx = c->ctx;
    const hk_rotary_args base = rotary_base(c);
    hk_rotary_args r;
    EXPECT_OK(hk_rotary(ctx, &base));

    EXPECT_INVALID(hk_rotary(NULL, &base), "ctx");
    EXPECT_INVALID(hk_rotary(ctx, NULL), "args");
    r = base, r.struct_size = 0;
    EXPECT_INVALID(hk_rotary(ctx, &r), "struct_size");
    r = base, r.struct_size = offsetof(hk_rotary_args, cos);
    EXPECT_INVALID(hk_rotary(ctx, &r), "struct_size");
    r = base, r.rotary_dim = 3;
    EXPECT_INVALID(hk_rotary(ctx, &r), "rotary_dim");
    r = base, r.rotary_dim = RD + 2;
    EXPECT_INVALID(hk_rotary(ctx, &r), "rotary_dim");
    r = base, r.rotary_dim = -2;
    EXPECT_INVALID(hk_rotary(ctx, &r), "rotary_dim");
    r = base, r.head_dim = 0;
    EXPECT_INVALID(hk_rotary(ctx, &r), "head_dim");
    r = base, r.seqlen = -1;
    EXPECT_INVALID(hk_rotary(ctx, &r), "seqlen");
    r = base, r.batch = -1;
    EXPECT_INVALID(hk_rotary(ctx, &r), "batch");
    r = base, r.heads = -1;
    EXPECT_INVALID(hk_rotary(ctx, &r), "heads");
    r = base, r.seqlen = BIG, r.heads = BIG;
    EXPECT_INVALID(hk_rotary(ctx, &r), "x");
    r = base, r.style = (hk_rotary_style)5;
    EXPECT_INVALID(hk_rotary(ctx, &r), "style");
    r = base, r.dtype = (hk_dtype)99;
    EXPECT_INVALID(hk_rotary(ctx, &r), "dtype");
    r = base, r.dtype = HK_DTYPE_FP8_E4M3FNUZ;
    EXPECT_FAIL(hk_rotary(ctx, &r), "dtype");
    r = base, r.x = NULL;
    EXPECT_INVALID(hk_rotary(ctx, &r), "x");
    r = base, r.out = NULL;
    EXPECT_INVALID(hk_rotary(ctx, &r), "out");
    r = base, r.cos = NULL;
    EXPECT_INVALID(hk_rotary(ctx, &r), "cos");
    r = base, r.sin = NULL;
    EXPECT_INVALID(hk_rotary(ctx, &r), "sin");
    r = base, r.x = ODD(base.x);
    EXPECT_INVALID(hk_rotary(ctx, &r), "x");
    r = base, r.cos = HALF(base.cos);
    EXPECT_INVALID(hk_rotary(ctx, &r), "cos");
    r = base, r.sin = HALF(base.sin);
    EXPECT_INVALID(hk_rotary(ctx, &r), "sin");
    /* tables: F32 or the activation dtype, aligned to their own element size */
    r = base, r.table_type = HK_DTYPE_F32;
    EXPECT_OK(hk_rotary(ctx, &r));
    r = base, r.table_type = HK_DTYPE_BF16, r.cos = HALF(base.cos), r.sin = HALF(base.sin);
    EXPECT_OK(hk_rotary(ctx, &r));
    r = base, r.table_type = HK_DTYPE_BF16, r.cos = ODD(base.cos);
    EXPECT_INVALID(hk_rotary(ctx, &r), "cos");
    r = base, r.table_type = HK_DTYPE_BF16, r.sin = ODD(base.sin);
    EXPECT_INVALID(hk_rotary(ctx, &r), "sin");
    r = base, r.table_type = (hk_dtype)99;
    EXPECT_INVALID(hk_rotary(ctx, &r), "table_type");
    r = base, r.table_type = HK_DTYPE_F16;
    EXPECT_UNSUPPORTED(hk_rotary(ctx, &r), "table_type");
    r = base, r.table_type = HK_DTYPE_FP8_E4M3;
    EXPECT_UNSUPPORTED(hk_rotary(ctx, &r), "table_type");
    r = base, r.dtype = HK_DTYPE_F16, r.table_type = HK_DTYPE_BF16;
    EXPECT_UNSUPPORTED(hk_rotary(ctx, &r), "table_type");
    int32_t *ids = th_dev(c, RB * RS * sizeof(int32_t) + 8);
    r = base, r.position_ids = HALF(ids);
    EXPECT_INVALID(hk_rotary(ctx, &r), "position_ids");
    r = base, r.table_positions = 0;
    EXPECT_INVALID(hk_rotary(ctx, &r), "table_positions");
    r = base, r.table_positions = -5;
    EXPECT_INVALID(hk_rotary(ctx, &r), "table_positions");
    r = base, r.position_offset = 1;
    EXPECT_INVALID(hk_rotary(ctx, &r), "position_offset");
    r = base, r.position_offset = -1;
    EXPECT_INVALID(hk_rotary(ctx, &r), "position_offset");
    r = base, r.x_stride[0] = RS * RH * RD, r.x_stride[1] = RH * RD, r.x_stride[2] = RD / 2;
    EXPECT_INVALID(hk_rotary(ctx, &r), "x");
    r = base, r.out_stride[0] = RS * RH * RD, r.out_stride[1] = RD, r.out_stride[2] = RD;
    EXPECT_INVALID(hk_rotary(ctx, &r), "out");
    r = base, r.out_stride[0] = RS * RH * RD, r.out_stride[1] = RH * RD, r.out_stride[2] = -RD;
    EXPECT_INVALID(hk_rotary(ctx, &r), "out_stride");
    r = base, r.out = (void *)base.x, r.out_stride[0] = RS * RH * (RD + 8), r.out_stride[1] = RH * (RD + 8),
    r.out_stride[2] = RD + 8;
    EXPECT_INVALID(hk_rotary(ctx, &r), "out_stride");
    finish();
}

/* A caller built against libhk 1.0 passes the rotary struct without table_type (1.1): accepted, with fp32 tables
 * whatever lies past its struct_size; a struct_size below that is still rejected. */
static void test_rotary_struct_1_0(const th_ctx *c, const void *param)
{
    start();
    (void)param;
    th_rng rng = th_rng_for_case();
    const int64_t n = RB * RS * RH * RD, table = RT * RD / 2;
    const size_t bytes = (size_t)n * 2;
    hk_rotary_args r = rotary_base(c);
    double *x = th_host(sizeof(double) * (size_t)n), *cs = th_host(sizeof(double) * (size_t)table),
           *sn = th_host(sizeof(double) * (size_t)table);
    th_fill_normal(&rng, HK_DTYPE_BF16, x, n, 1.0);
    for (int64_t i = 0; i < table; ++i) {
        cs[i] = th_uniform(&rng, -1, 1);
        sn[i] = th_uniform(&rng, -1, 1);
    }
    th_tensor xt = th_matrix(HK_DTYPE_BF16, 1, n, n), tt = th_matrix(HK_DTYPE_F32, 1, table, table);
    r.x = th_dev_tensor(c, &xt, x);
    r.cos = th_dev_tensor(c, &tt, cs);
    r.sin = th_dev_tensor(c, &tt, sn);
    r.table_type = HK_DTYPE_F32;
    EXPECT_OK(hk_rotary(c->ctx, &r));
    void *want = th_host(bytes), *got = th_host(bytes);
    th_download(c, want, r.out, bytes);

    hk_rotary_args old = r;
    old.struct_size = offsetof(hk_rotary_args, table_type);
    old.table_type = HK_DTYPE_BF16; /* past struct_size: never read (read, it would change the result) */
    old.out = th_dev(c, bytes);
    EXPECT_OK(hk_rotary(c->ctx, &old));
    th_download(c, got, old.out, bytes);
    if (memcmp(want, got, bytes) != 0)
        report(__LINE__, "hk_rotary(ctx, &old)", "a 1.0-sized struct does not give the F32-table result");
    r.table_type = HK_DTYPE_BF16;
    EXPECT_OK(hk_rotary(c->ctx, &r));
    th_download(c, got, r.out, bytes);
    if (memcmp(want, got, bytes) == 0)
        report(__LINE__, "hk_rotary(ctx, &r)", "bf16 tables gave the F32-table result: the check above proves nothing");

    old.struct_size = offsetof(hk_rotary_args, table_type) - 1;
    EXPECT_INVALID(hk_rotary(c->ctx, &old), "struct_size");
    old.struct_size = offsetof(hk_rotary_args, stream);
    EXPECT_INVALID(hk_rotary(c->ctx, &old), "struct_size");
    finish();
}

/* ---------------------------------------------------------------- LayerNorm / RMSNorm */

enum { LR = 4, LC = 32 };

static hk_ln_fused_args ln_base(const th_ctx *c)
{
    hk_ln_fused_args l = HK_ARGS_INIT(hk_ln_fused_args);
    size_t bytes = LR * LC * 2;
    l.norm = HK_NORM_LAYER;
    l.dtype = HK_DTYPE_BF16;
    l.rows = LR;
    l.cols = LC;
    void *zeros = th_host(bytes);
    l.x = th_dev(c, bytes);
    th_upload(c, (void *)l.x, zeros, bytes);
    float *g = th_dev(c, LC * sizeof(float)), *b = th_dev(c, LC * sizeof(float));
    th_upload(c, g, zeros, LC * sizeof(float));
    th_upload(c, b, zeros, LC * sizeof(float));
    l.gamma = g;
    l.beta = b;
    l.y = th_dev(c, bytes);
    l.mean = th_dev(c, LR * sizeof(float));
    l.rstd = th_dev(c, LR * sizeof(float));
    return l;
}

static void test_ln_fused(const th_ctx *c, const void *param)
{
    start();
    (void)param;
    hk_context *ctx = c->ctx;
    const hk_ln_fused_args base = ln_base(c);
    hk_ln_fused_args l;
    EXPECT_OK(hk_ln_fused(ctx, &base));

    EXPECT_INVALID(hk_ln_fused(NULL, &base), "ctx");
    EXPECT_INVALID(hk_ln_fused(ctx, NULL), "args");
    l = base, l.struct_size = 0;
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "struct_size");
    l = base, l.struct_size = offsetof(hk_ln_fused_args, gamma);
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "struct_size");
    l = base, l.norm = (hk_norm_type)7;
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "norm");
    l = base, l.dtype = (hk_dtype)99;
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "dtype");
    l = base, l.param_type = (hk_dtype)99;
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "param_type");
    l = base, l.param_type = HK_DTYPE_F16;
    EXPECT_FAIL(hk_ln_fused(ctx, &l), "param_type");
    l = base, l.rows = -1;
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "rows");
    l = base, l.cols = -32;
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "cols");
    l = base, l.rows = BIG, l.cols = INT64_C(1) << 30;
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "x");
    l = base, l.dropout_p = -0.1f;
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "dropout_p");
    l = base, l.dropout_p = 1.0f;
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "dropout_p");
    l = base, l.dropout_p = NAN;
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "dropout_p");
    l = base, l.epsilon = -1e-5f;
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "epsilon");
    l = base, l.norm = HK_NORM_RMS, l.mean = NULL;
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "beta");
    l = base, l.x = NULL;
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "x");
    l = base, l.y = NULL;
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "y");
    l = base, l.gamma = NULL;
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "gamma");
    l = base, l.x = ODD(base.x);
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "x");
    l = base, l.residual = ODD(base.y);
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "residual");
    l = base, l.gamma = HALF(base.gamma);
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "gamma");
    l = base, l.mean = HALF(base.mean);
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "mean");
    l = base, l.rstd = HALF(base.rstd);
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "rstd");
    l = base, l.x_stride = LC - 1;
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "x_stride");
    l = base, l.y_stride = -LC;
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "y_stride");
    l = base, l.residual = base.x, l.residual_stride = 3;
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "residual_stride");
    l = base, l.dropout_mask = (uint32_t *)HALF(base.mean);
    EXPECT_INVALID(hk_ln_fused(ctx, &l), "dropout_mask");
    l = base, l.dropout_mask = th_dev(c, LR * HK_DROPOUT_MASK_WORDS(LC) * sizeof(uint32_t));
    EXPECT_OK(hk_ln_fused(ctx, &l));
    finish();
}

static hk_ln_fused_bwd_args ln_bwd_base(const th_ctx *c)
{
    hk_ln_fused_args f = ln_base(c);
    hk_ln_fused_bwd_args b = HK_ARGS_INIT(hk_ln_fused_bwd_args);
    b.norm = HK_NORM_LAYER;
    b.dtype = HK_DTYPE_BF16;
    b.rows = LR;
    b.cols = LC;
    b.dy = f.x;
    b.z = f.x;
    b.gamma = f.gamma;
    float *zeros = th_host(LR * sizeof(float));
    th_upload(c, f.mean, zeros, LR * sizeof(float));
    th_upload(c, f.rstd, zeros, LR * sizeof(float));
    b.mean = f.mean;
    b.rstd = f.rstd;
    b.dx = th_dev(c, LR * LC * 2);
    b.dgamma = th_dev(c, LC * sizeof(float));
    b.dbeta = th_dev(c, LC * sizeof(float));
    return b;
}

static void test_ln_fused_bwd(const th_ctx *c, const void *param)
{
    start();
    (void)param;
    hk_context *ctx = c->ctx;
    hk_ln_fused_bwd_args base = ln_bwd_base(c), l;
    size_t ws = 0;
    EXPECT_OK(hk_ln_fused_bwd_workspace_size(ctx, &base, &ws));
    if (ws) {
        base.workspace = th_dev(c, ws);
        base.workspace_size = ws;
    }
    EXPECT_OK(hk_ln_fused_bwd(ctx, &base));

    EXPECT_INVALID(hk_ln_fused_bwd(NULL, &base), "ctx");
    EXPECT_INVALID(hk_ln_fused_bwd(ctx, NULL), "args");
    EXPECT_INVALID(hk_ln_fused_bwd_workspace_size(NULL, &base, &ws), "ctx");
    EXPECT_INVALID(hk_ln_fused_bwd_workspace_size(ctx, NULL, &ws), "args");
    EXPECT_INVALID(hk_ln_fused_bwd_workspace_size(ctx, &base, NULL), "bytes");
    l = base, l.struct_size = 0;
    EXPECT_INVALID(hk_ln_fused_bwd(ctx, &l), "struct_size");
    l = base, l.norm = (hk_norm_type)-1;
    EXPECT_INVALID(hk_ln_fused_bwd(ctx, &l), "norm");
    l = base, l.dropout_mask = (const uint32_t *)HALF(base.dgamma);
    EXPECT_INVALID(hk_ln_fused_bwd(ctx, &l), "dropout_mask");
    l = base, l.dtype = (hk_dtype)99;
    EXPECT_INVALID(hk_ln_fused_bwd(ctx, &l), "dtype");
    l = base, l.rows = -2;
    EXPECT_INVALID(hk_ln_fused_bwd(ctx, &l), "rows");
    l = base, l.dropout_p = 1.5f;
    EXPECT_INVALID(hk_ln_fused_bwd(ctx, &l), "dropout_p");
    l = base, l.dropout_p = -1e-7f;
    EXPECT_INVALID(hk_ln_fused_bwd(ctx, &l), "dropout_p");
    l = base, l.norm = HK_NORM_RMS;
    EXPECT_INVALID(hk_ln_fused_bwd(ctx, &l), "dbeta");
    l = base, l.dy = NULL;
    EXPECT_INVALID(hk_ln_fused_bwd(ctx, &l), "dy");
    l = base, l.z = NULL;
    EXPECT_INVALID(hk_ln_fused_bwd(ctx, &l), "z");
    l = base, l.dx = NULL;
    EXPECT_INVALID(hk_ln_fused_bwd(ctx, &l), "dx");
    l = base, l.gamma = NULL;
    EXPECT_INVALID(hk_ln_fused_bwd(ctx, &l), "gamma");
    l = base, l.mean = NULL;
    EXPECT_INVALID(hk_ln_fused_bwd(ctx, &l), "mean");
    l = base, l.rstd = NULL;
    EXPECT_INVALID(hk_ln_fused_bwd(ctx, &l), "rstd");
    l = base, l.dx = ODD(base.dx);
    EXPECT_INVALID(hk_ln_fused_bwd(ctx, &l), "dx");
    l = base, l.dgamma = HALF(base.dgamma);
    EXPECT_INVALID(hk_ln_fused_bwd(ctx, &l), "dgamma");
    l = base, l.dy_stride = LC / 2;
    EXPECT_INVALID(hk_ln_fused_bwd(ctx, &l), "dy_stride");
    l = base, l.dresidual = base.dx, l.dresidual_stride = -1;
    EXPECT_INVALID(hk_ln_fused_bwd(ctx, &l), "dresidual_stride");
    if (ws) {
        l = base, l.workspace_size = ws - 1;
        EXPECT_INVALID(hk_ln_fused_bwd(ctx, &l), "workspace");
    }
    finish();
}

/* ---------------------------------------------------------------- context, memory, events */

static void test_context_api(const th_ctx *c, const void *param)
{
    start();
    (void)param;
    hk_context *out = (hk_context *)1;
    hk_context_options o = HK_ARGS_INIT(hk_context_options);
    EXPECT_INVALID(hk_context_create(NULL, NULL), "ctx");
    EXPECT_INVALID(hk_context_create(&o, NULL), "ctx");
    o.struct_size = 0;
    EXPECT_INVALID(hk_context_create(&o, &out), "struct_size");
    assert_null(out);
    o = (hk_context_options)HK_ARGS_INIT(hk_context_options);
    o.backend = (hk_backend)99;
    EXPECT_INVALID(hk_context_create(&o, &out), "backend");
    o.backend = (hk_backend)-1;
    EXPECT_INVALID(hk_context_create(&o, &out), "backend");
    o.backend = HK_BACKEND_EMULATOR;
    o.arch = "gfx900";
    EXPECT_INVALID(hk_context_create(&o, &out), "arch");
    o.arch = NULL;
    o.backend = HK_BACKEND_CPU;
    o.device_index = -1;
    EXPECT_INVALID(hk_context_create(&o, &out), "device_index");
    hk_context_destroy(NULL); /* a no-op */

    hk_variant_info info = HK_ARGS_INIT(hk_variant_info);
    EXPECT_INVALID(hk_context_variant(NULL, 0, &info), "ctx");
    EXPECT_INVALID(hk_context_variant(c->ctx, 0, NULL), "info");
    info.struct_size = 0;
    EXPECT_INVALID(hk_context_variant(c->ctx, 0, &info), "struct_size");
    info.struct_size = sizeof info;
    EXPECT_INVALID(hk_context_variant(c->ctx, 100000, &info), "index");

    hk_device_telemetry tel = HK_ARGS_INIT(hk_device_telemetry);
    EXPECT_INVALID(hk_context_telemetry(NULL, &tel), "ctx");
    EXPECT_INVALID(hk_context_telemetry(c->ctx, NULL), "telemetry");
    tel.struct_size = 0;
    EXPECT_INVALID(hk_context_telemetry(c->ctx, &tel), "struct_size");
    tel.struct_size = sizeof tel - 1;
    EXPECT_INVALID(hk_context_telemetry(c->ctx, &tel), "struct_size");
    tel.struct_size = sizeof tel;
    check_failure(hk_context_telemetry(c->ctx, &tel), HK_ERR_UNSUPPORTED, "telemetry", "hk_context_telemetry(cpu)",
                  __LINE__);

    char why[128] = "unchanged";
    EXPECT_INVALID(hk_probe((hk_backend)99, why, sizeof why), "backend");
    assert_true(why[0] != '\0' && strcmp(why, "unchanged") != 0);
    EXPECT_INVALID(hk_code_object((size_t)1 << 40, NULL, NULL, NULL), "index");

    assert_string_equal(hk_context_arch(NULL), "");
    assert_string_equal(hk_context_device_name(NULL), "");
    finish();
}

static void test_memory_api(const th_ctx *c, const void *param)
{
    start();
    (void)param;
    hk_context *ctx = c->ctx;
    void *p = NULL;
    char host[16];
    EXPECT_INVALID(hk_malloc(NULL, &p, 16), "ctx");
    EXPECT_INVALID(hk_malloc(ctx, NULL, 16), "ptr");
    EXPECT_OK(hk_malloc(ctx, &p, 16));
    EXPECT_INVALID(hk_free(NULL, p), "ctx");
    EXPECT_INVALID(hk_memcpy(NULL, p, host, 16, HK_COPY_HOST_TO_DEVICE), "ctx");
    EXPECT_INVALID(hk_memcpy(ctx, NULL, host, 16, HK_COPY_HOST_TO_DEVICE), "dst");
    EXPECT_INVALID(hk_memcpy(ctx, p, NULL, 16, HK_COPY_HOST_TO_DEVICE), "src");
    EXPECT_INVALID(hk_memcpy(ctx, p, host, 16, (hk_copy_kind)99), "kind");
    EXPECT_INVALID(hk_memset(NULL, p, 0, 16), "ctx");
    EXPECT_INVALID(hk_memset(ctx, NULL, 0, 16), "ptr");
    EXPECT_INVALID(hk_synchronize(NULL, NULL), "ctx");
    EXPECT_OK(hk_free(ctx, p));
    EXPECT_OK(hk_free(ctx, NULL));

    hk_event *e = NULL;
    float ms = 0;
    EXPECT_INVALID(hk_event_create(NULL, &e), "ctx");
    EXPECT_INVALID(hk_event_create(ctx, NULL), "event");
    EXPECT_OK(hk_event_create(ctx, &e));
    EXPECT_INVALID(hk_event_record(NULL, NULL), "event");
    EXPECT_OK(hk_event_record(e, NULL));
    EXPECT_INVALID(hk_event_elapsed_ms(NULL, e, &ms), "start");
    EXPECT_INVALID(hk_event_elapsed_ms(e, NULL, &ms), "end");
    EXPECT_INVALID(hk_event_elapsed_ms(e, e, NULL), "ms");
    hk_event_destroy(e);
    hk_event_destroy(NULL);
    finish();
}

/* ---------------------------------------------------------------- message text
 * Each family of messages names hk.h's field and states the rule: the failing call's hk_last_error() must contain
 * `text` verbatim. */
static void check_text(hk_status st, hk_status want, const char *text, const char *expr, int line)
{
    const char *msg = hk_last_error();
    if (st != want)
        report(line, expr, "returned %s (%s); expected %s", hk_status_string(st), msg, hk_status_string(want));
    else if (!msg || !strstr(msg, text))
        report(line, expr, "message \"%s\" does not say \"%s\"", msg ? msg : "", text);
}
#define EXPECT_TEXT(call, want, text) check_text((call), (want), (text), #call, __LINE__)

/* Strides by their hk.h fields: the scalar leading dimensions and row strides, the index into {batch, seq, head}
 * arrays (the varlen layouts skip the batch stride, so their first is [1]). */
static void test_message_strides(const th_ctx *c, const void *param)
{
    start();
    (void)param;
    hk_context *ctx = c->ctx;
    const hk_gemm_args gb = gemm_base(c);
    hk_gemm_args g;
    g = gb, g.lda = 15;
    EXPECT_TEXT(hk_gemm(ctx, &g), HK_ERR_INVALID_ARGUMENT, "gemm: lda 15 is smaller than the row length of a, k = 16");
    g = gb, g.trans_a = 1, g.m = 8, g.lda = 7;
    EXPECT_TEXT(hk_gemm(ctx, &g), HK_ERR_INVALID_ARGUMENT, "lda 7 is smaller than the row length of a, m (trans_a) = 8");
    g = gb, g.trans_b = 0, g.n = 12, g.k = 4, g.ldb = 11, g.ldd = 12;
    EXPECT_TEXT(hk_gemm(ctx, &g), HK_ERR_INVALID_ARGUMENT, "ldb 11 is smaller than the row length of b, n = 12");

    /* rotary: a head stride inside the head's features */
    hk_rotary_args r = rotary_base(c);
    r.x_stride[0] = RS * RH * RD, r.x_stride[1] = RH * RD, r.x_stride[2] = RD / 2;
    EXPECT_TEXT(hk_rotary(ctx, &r), HK_ERR_INVALID_ARGUMENT,
                "rotary: x_stride[2] 8 is smaller than the 16 elements of x it steps over");
    r = rotary_base(c);
    r.out_stride[0] = RS * RH * RD, r.out_stride[1] = -RH * RD, r.out_stride[2] = RD;
    EXPECT_TEXT(hk_rotary(ctx, &r), HK_ERR_INVALID_ARGUMENT, "rotary: out_stride[1] -32 is negative");

    /* attention, fixed length: d_o's strides are do_stride */
    hk_attn_fwd_args a = attn_base(c);
    a.q_stride[0] = AS * AHQ * AD, a.q_stride[1] = AHQ * AD, a.q_stride[2] = AD - 1;
    EXPECT_TEXT(hk_attn_fwd(ctx, &a), HK_ERR_INVALID_ARGUMENT, "attn_fwd: q_stride[2] 15 is smaller than");
    hk_attn_bwd_args ab = attn_bwd_base(c);
    ab.do_stride[0] = AS * AHQ * AD, ab.do_stride[1] = -1, ab.do_stride[2] = AD;
    EXPECT_TEXT(hk_attn_bwd(ctx, &ab), HK_ERR_INVALID_ARGUMENT, "attn_bwd: do_stride[1] -1 is negative");

    /* varlen: two sequences of 2 tokens; heads 16 elements apart hold one sequence of 2 tokens of 8 (what the call
     * checks first, over one sequence of the maxima) but not the 4 packed tokens (checked once the offsets are read) */
    enum { VH = 2, VD = 8 };
    int32_t *cu = th_dev(c, 3 * sizeof(int32_t));
    const int32_t offsets[3] = {0, 2, 4};
    th_upload(c, cu, offsets, sizeof offsets);
    hk_attn_fwd_args v = HK_ARGS_INIT(hk_attn_fwd_args);
    v.dtype = HK_DTYPE_BF16;
    v.batch = 2, v.seqlen_q = v.seqlen_k = 2, v.heads_q = v.heads_kv = VH, v.head_dim = VD;
    v.cu_seqlens_q = v.cu_seqlens_k = cu;
    const size_t bytes = 4 * VH * VD * 2;
    void *zeros = th_host(bytes);
    v.q = th_dev(c, bytes), v.k = th_dev(c, bytes), v.v = th_dev(c, bytes), v.o = th_dev(c, bytes);
    th_upload(c, (void *)v.q, zeros, bytes);
    th_upload(c, (void *)v.k, zeros, bytes);
    th_upload(c, (void *)v.v, zeros, bytes);
    EXPECT_OK(hk_attn_fwd(ctx, &v));
    v.q_stride[1] = VD, v.q_stride[2] = 2 * VD;
    EXPECT_TEXT(hk_attn_fwd(ctx, &v), HK_ERR_INVALID_ARGUMENT,
                "attn_fwd: q_stride[2] 16 is smaller than the 32 elements of q it steps over");
    finish();
}

/* GEMM types and scales: the one field that breaks the rule, not all of them. */
static void test_message_gemm_fields(const th_ctx *c, const void *param)
{
    start();
    (void)param;
    hk_context *ctx = c->ctx;
    const hk_gemm_args gb = gemm_base(c);
    hk_gemm_args g;
    g = gb, g.b_type = (hk_dtype)99;
    EXPECT_TEXT(hk_gemm(ctx, &g), HK_ERR_INVALID_ARGUMENT, "gemm: b_type 99 is not a hk_dtype");
    g = gb, g.d_type = (hk_dtype)77;
    EXPECT_TEXT(hk_gemm(ctx, &g), HK_ERR_INVALID_ARGUMENT, "gemm: d_type 77 is not a hk_dtype");
    g = gb, g.a_type = g.b_type = HK_DTYPE_FP8_E4M3, g.scale_b = INFINITY;
    EXPECT_TEXT(hk_gemm(ctx, &g), HK_ERR_INVALID_ARGUMENT, "gemm: scale_b inf must be finite");
    g = gb, g.a_type = g.b_type = HK_DTYPE_FP8_E4M3, g.scale_a = NAN;
    EXPECT_TEXT(hk_gemm(ctx, &g), HK_ERR_INVALID_ARGUMENT, "gemm: scale_a nan must be finite");
    g = gb, g.scale_b = 2;
    EXPECT_TEXT(hk_gemm(ctx, &g), HK_ERR_INVALID_ARGUMENT, "gemm: scale_b 2 applies to fp8 operands only");
    finish();
}

/* Context and memory entry points: the argument by its parameter name in hk.h. */
static void test_message_context_memory(const th_ctx *c, const void *param)
{
    start();
    (void)param;
    void *p = NULL;
    EXPECT_TEXT(hk_malloc(c->ctx, &p, SIZE_MAX), HK_ERR_OUT_OF_MEMORY, "malloc: bytes");
    hk_device_telemetry t = HK_ARGS_INIT(hk_device_telemetry);
    EXPECT_TEXT(hk_context_telemetry(c->ctx, &t), HK_ERR_UNSUPPORTED,
                "context_telemetry: ctx is a cpu context; telemetry has a source on hip only");
    finish();
}

/* A workspace the chosen variant needs more of: workspace_size, the size and who needs it. The emulator's LayerNorm
 * backward keeps its partial sums there. */
static void test_message_workspace(const th_ctx *c, const void *param)
{
    start();
    (void)param;
    hk_ln_fused_bwd_args b = ln_bwd_base(c);
    size_t need = 0;
    EXPECT_OK(hk_ln_fused_bwd_workspace_size(c->ctx, &b, &need));
    if (need < 8)
        fail_msg("%s: the LayerNorm backward asks for %zu bytes of workspace; this test wants a variant that needs some",
                 c->label, need);
    b.workspace = th_dev(c, need);
    b.workspace_size = need - 4;
    char text[160];
    snprintf(text, sizeof text, "ln_fused_bwd: workspace_size %zu is smaller than the %zu bytes", need - 4, need);
    EXPECT_TEXT(hk_ln_fused_bwd(c->ctx, &b), HK_ERR_INVALID_ARGUMENT, text);
    b.workspace_size = need;
    EXPECT_OK(hk_ln_fused_bwd(c->ctx, &b));
    finish();
}

/* A destroyed-and-recreated or never-created context pointer is refused, not dereferenced blindly. */
static void test_foreign_context(const th_ctx *c, const void *param)
{
    start();
    (void)c;
    (void)param;
    uint64_t junk[64] = {0};
    hk_gemm_args g = HK_ARGS_INIT(hk_gemm_args);
    EXPECT_INVALID(hk_gemm((hk_context *)junk, &g), "ctx");
    EXPECT_INVALID(hk_synchronize((hk_context *)junk, NULL), "ctx");
    finish();
}

int main(void)
{
    th_open_contexts();
    th_add("gemm_validation", test_gemm, NULL, TH_CPU);
    th_add("struct_size_newer_caller", test_struct_size_newer, NULL, TH_CPU);
    th_add("attn_fwd_validation", test_attn_fwd, NULL, TH_CPU);
    th_add("attn_bwd_validation", test_attn_bwd, NULL, TH_CPU);
    th_add("rotary_validation", test_rotary, NULL, TH_CPU);
    th_add("rotary_struct_size_1_0", test_rotary_struct_1_0, NULL, TH_CPU);
    th_add("ln_fused_validation", test_ln_fused, NULL, TH_CPU);
    th_add("ln_fused_bwd_validation", test_ln_fused_bwd, NULL, TH_CPU);
    th_add("context_validation", test_context_api, NULL, TH_CPU);
    /* memory entry points validate the same way on every backend */
    th_add("memory_validation", test_memory_api, NULL, TH_ALL);
    th_add("foreign_context", test_foreign_context, NULL, TH_CPU);
    th_add("message_strides", test_message_strides, NULL, TH_CPU);
    th_add("message_gemm_fields", test_message_gemm_fields, NULL, TH_CPU);
    th_add("message_workspace", test_message_workspace, NULL, TH_EMU);
    th_add("message_context_memory", test_message_context_memory, NULL, TH_CPU);
    return th_run("validation");
}
