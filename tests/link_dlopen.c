/* dlopen the built libhk.so by path (argv[1]), resolve the entry points by name and version, and run a
 * small GEMM on the CPU. Links nothing of libhk: hk.h only provides the types. */
#include "hk.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define LOAD(var, name)                                                                                                \
    do {                                                                                                               \
        *(void **)&var = dlsym(lib, name);                                                                             \
        if (!var) {                                                                                                    \
            fprintf(stderr, "dlsym(%s): %s\n", name, dlerror());                                                       \
            return 1;                                                                                                  \
        }                                                                                                              \
    } while (0)

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s /path/to/libhk.so\n", argv[0]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen(%s): %s\n", argv[1], dlerror());
        return 1;
    }
    int (*version)(void);
    hk_status (*create)(const hk_context_options *, hk_context **);
    void (*destroy)(hk_context *);
    hk_status (*gemm)(hk_context *, const hk_gemm_args *);
    const char *(*last_error)(void);
    LOAD(version, "hk_version");
    LOAD(create, "hk_context_create");
    LOAD(destroy, "hk_context_destroy");
    LOAD(gemm, "hk_gemm");
    LOAD(last_error, "hk_last_error");
    /* the symbols carry the ABI version node */
    if (!dlvsym(lib, "hk_gemm", "HK_1.0") || !dlvsym(lib, "hk_version", "HK_1.0")) {
        fprintf(stderr, "hk_gemm / hk_version are not versioned HK_1.0\n");
        return 1;
    }
    if (dlsym(lib, "hk_fail") || dlsym(lib, "hk_select_variant") || dlsym(lib, "hk_parallel_for")) {
        fprintf(stderr, "internal symbols are visible\n");
        return 1;
    }
    if (version() != HK_VERSION) {
        fprintf(stderr, "hk_version() = %d, header says %d\n", version(), HK_VERSION);
        return 1;
    }

    hk_context_options opts = HK_ARGS_INIT(hk_context_options);
    opts.backend = HK_BACKEND_CPU;
    hk_context *ctx = NULL;
    if (create(&opts, &ctx) != HK_OK) {
        fprintf(stderr, "hk_context_create: %s\n", last_error());
        return 1;
    }
    enum { M = 3, N = 5, K = 4 };
    float a[M * K], b[N * K], d[M * N];
    for (int i = 0; i < M * K; ++i)
        a[i] = (float)(i % 7) - 3.0f;
    for (int i = 0; i < N * K; ++i)
        b[i] = (float)(i % 5) * 0.5f;
    hk_gemm_args g = HK_ARGS_INIT(hk_gemm_args);
    g.m = M;
    g.n = N;
    g.k = K;
    g.a_type = g.b_type = g.d_type = HK_DTYPE_F32;
    g.trans_b = 1; /* b is N x K */
    g.a = a;
    g.lda = K;
    g.b = b;
    g.ldb = K;
    g.d = d;
    g.ldd = N;
    g.alpha = 1;
    int bad = 0;
    if (gemm(ctx, &g) != HK_OK) {
        fprintf(stderr, "hk_gemm: %s\n", last_error());
        bad = 1;
    }
    for (int i = 0; i < M && !bad; ++i)
        for (int j = 0; j < N; ++j) {
            float want = 0;
            for (int k = 0; k < K; ++k)
                want += a[i * K + k] * b[j * K + k];
            if (fabsf(d[i * N + j] - want) > 1e-5f * (1 + fabsf(want))) {
                fprintf(stderr, "D[%d][%d] = %g, want %g\n", i, j, d[i * N + j], want);
                bad = 1;
            }
        }
    destroy(ctx);
    dlclose(lib);
    printf("%s\n", bad ? "0 passed, 1 failed" : "1 passed, 0 failed");
    return bad;
}
