/* hk.h's allocation rule on the CPU backend, through a malloc-counting shim: this program defines malloc and its
 * relatives, so libhk's calls (and its worker threads') land here and are counted before glibc serves them.
 * A warm op call on the CPU or the emulator may allocate, but frees every block before it returns (nothing outlives
 * the call), and a call that validation rejects allocates nothing. Built without sanitizers only: ASan and UBSan replace malloc
 * themselves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "hk.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static long allocs, frees; /* atomically, from any thread */
static int counting;

static void *counted(void *p)
{
    if (p && __atomic_load_n(&counting, __ATOMIC_RELAXED))
        __atomic_fetch_add(&allocs, 1, __ATOMIC_RELAXED);
    return p;
}
/* Default visibility: the project builds with hidden symbols, and the shim must be what libhk's calls resolve to. */
#define SHIM __attribute__((visibility("default")))
SHIM void *malloc(size_t n) { return counted(__libc_malloc(n)); }
SHIM void *calloc(size_t n, size_t size) { return counted(__libc_calloc(n, size)); }
SHIM void *aligned_alloc(size_t align, size_t n) { return counted(__libc_memalign(align, n)); }
SHIM void *memalign(size_t align, size_t n) { return counted(__libc_memalign(align, n)); }
SHIM int posix_memalign(void **out, size_t align, size_t n)
{
    *out = counted(__libc_memalign(align, n));
    return *out ? 0 : 12; /* ENOMEM */
}
SHIM void *realloc(void *p, size_t n)
{
    if (!p)
        return malloc(n);
    return __libc_realloc(p, n); /* a block moved, not a new one */
}
SHIM void free(void *p)
{
    if (p && __atomic_load_n(&counting, __ATOMIC_RELAXED))
        __atomic_fetch_add(&frees, 1, __ATOMIC_RELAXED);
    __libc_free(p);
}

static void count_start(void)
{
    __atomic_store_n(&allocs, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&frees, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&counting, 1, __ATOMIC_SEQ_CST);
}
static void count_stop(void) { __atomic_store_n(&counting, 0, __ATOMIC_SEQ_CST); }

static hk_context *cpu, *emu; /* emu: the wave emulator as gfx942 */

/* Bits of a small random float in [-1, 1) of dtype t, never zero. */
static uint64_t rng = 0x2545F4914F6CDD1Dull;
static void fill(void *p, hk_dtype t, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        float f = (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
        if (f == 0.0f)
            f = 0.5f;
        if (t == HK_DTYPE_F32) {
            ((float *)p)[i] = f;
        } else { /* bf16: the high half */
            uint32_t u;
            memcpy(&u, &f, 4);
            ((uint16_t *)p)[i] = (uint16_t)(u >> 16);
        }
    }
}

static void *buffer(hk_context *ctx, hk_dtype t, size_t n)
{
    void *p = NULL;
    assert_int_equal(hk_malloc(ctx, &p, n * hk_dtype_size(t)), HK_OK);
    fill(p, t, n);
    return p;
}

/* Run call twice (warm: the library's first-use work is done), then once more counted. */
#define WARM_CALL_FREES_ALL(call)                                                                                \
    do {                                                                                                         \
        for (int i_ = 0; i_ < 2; ++i_)                                                                           \
            assert_int_equal((call), HK_OK);                                                                     \
        count_start();                                                                                           \
        hk_status st_ = (call);                                                                                  \
        count_stop();                                                                                            \
        if (st_ != HK_OK)                                                                                        \
            fail_msg("%s: %s", #call, hk_last_error());                                                          \
        if (allocs != frees)                                                                                     \
            fail_msg("%s: %ld blocks allocated, %ld freed: one outlived the call", #call, allocs, frees);          \
        print_message("%s: %ld blocks allocated and freed\n", #call, allocs);                                    \
    } while (0)

/* GEMM and LayerNorm on ctx, attention where asked (the emulator has no attention kernel). */
static void ops_free_what_they_allocate(hk_context *ctx, bool attention)
{
    enum { M = 96, N = 80, K = 72, R = 64, C = 200 };
    hk_gemm_args g = HK_ARGS_INIT(hk_gemm_args);
    g.m = M, g.n = N, g.k = K;
    g.a_type = g.b_type = g.d_type = HK_DTYPE_BF16;
    g.trans_b = 1;
    g.a = buffer(ctx, HK_DTYPE_BF16, M * K), g.lda = K;
    g.b = buffer(ctx, HK_DTYPE_BF16, N * K), g.ldb = K;
    g.d = buffer(ctx, HK_DTYPE_BF16, M * N), g.ldd = N;
    g.alpha = 1.0f;
    WARM_CALL_FREES_ALL(hk_gemm(ctx, &g));

    hk_ln_fused_args l = HK_ARGS_INIT(hk_ln_fused_args);
    l.norm = HK_NORM_LAYER, l.dtype = HK_DTYPE_BF16, l.param_type = HK_DTYPE_BF16;
    l.rows = R, l.cols = C;
    l.x = buffer(ctx, HK_DTYPE_BF16, R * C), l.residual = buffer(ctx, HK_DTYPE_BF16, R * C);
    l.gamma = buffer(ctx, HK_DTYPE_BF16, C), l.beta = buffer(ctx, HK_DTYPE_BF16, C);
    l.y = buffer(ctx, HK_DTYPE_BF16, R * C), l.residual_out = buffer(ctx, HK_DTYPE_BF16, R * C);
    l.mean = buffer(ctx, HK_DTYPE_F32, R), l.rstd = buffer(ctx, HK_DTYPE_F32, R);
    l.epsilon = 1e-5f, l.dropout_p = 0.25f, l.seed = 7;
    WARM_CALL_FREES_ALL(hk_ln_fused(ctx, &l));
    if (!attention)
        return;

    hk_attn_fwd_args a = HK_ARGS_INIT(hk_attn_fwd_args);
    a.dtype = HK_DTYPE_BF16;
    a.batch = 2, a.seqlen_q = a.seqlen_k = 33, a.heads_q = 4, a.heads_kv = 2, a.head_dim = 64;
    a.q = buffer(ctx, HK_DTYPE_BF16, 2 * 33 * 4 * 64), a.o = buffer(ctx, HK_DTYPE_BF16, 2 * 33 * 4 * 64);
    a.k = buffer(ctx, HK_DTYPE_BF16, 2 * 33 * 2 * 64), a.v = buffer(ctx, HK_DTYPE_BF16, 2 * 33 * 2 * 64);
    a.causal = 1;
    WARM_CALL_FREES_ALL(hk_attn_fwd(ctx, &a));
}

static void test_cpu_ops_free_what_they_allocate(void **state)
{
    (void)state;
    ops_free_what_they_allocate(cpu, true);
}

static void test_emulated_ops_free_what_they_allocate(void **state)
{
    (void)state;
    ops_free_what_they_allocate(emu, false);
}

static void test_rejected_calls_allocate_nothing(void **state)
{
    (void)state;
    hk_gemm_args g = HK_ARGS_INIT(hk_gemm_args);
    g.m = g.n = g.k = 16;
    g.a_type = g.b_type = g.d_type = HK_DTYPE_BF16;
    g.a = buffer(cpu, HK_DTYPE_BF16, 256), g.b = buffer(cpu, HK_DTYPE_BF16, 256), g.d = buffer(cpu, HK_DTYPE_BF16, 256);
    g.lda = 15, g.ldb = g.ldd = 16; /* lda < k */
    count_start();
    hk_status st = hk_gemm(cpu, &g);
    count_stop();
    assert_int_equal(st, HK_ERR_INVALID_ARGUMENT);
    if (allocs != 0)
        fail_msg("a rejected hk_gemm allocated %ld blocks (%s)", allocs, hk_last_error());
}

int main(void)
{
    hk_context_options o = HK_ARGS_INIT(hk_context_options);
    o.backend = HK_BACKEND_CPU;
    if (hk_context_create(&o, &cpu) != HK_OK)
        return 1;
    o.backend = HK_BACKEND_EMULATOR;
    o.arch = "gfx942";
    if (hk_context_create(&o, &emu) != HK_OK)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_ops_free_what_they_allocate),
        cmocka_unit_test(test_emulated_ops_free_what_they_allocate),
        cmocka_unit_test(test_rejected_calls_allocate_nothing),
    };
    const int failed = cmocka_run_group_tests(tests, NULL, NULL);
    hk_context_destroy(emu);
    hk_context_destroy(cpu);
    return failed;
}
