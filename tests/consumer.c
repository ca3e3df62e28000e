/* An outside consumer of the installed libhk, built with `pkg-config --cflags --libs hk`: a GEMM and an
 * attention forward on the CPU, checked against plain loops. */
#include <hk.h>

#include <math.h>
#include <stdio.h>

static int check(const char *what, hk_status st)
{
    if (st != HK_OK)
        fprintf(stderr, "%s: %s: %s\n", what, hk_status_string(st), hk_last_error());
    return st != HK_OK;
}

int main(void)
{
    hk_context_options opts = HK_ARGS_INIT(hk_context_options);
    opts.backend = HK_BACKEND_CPU;
    hk_context *ctx = NULL;
    if (check("hk_context_create", hk_context_create(&opts, &ctx)))
        return 1;
    int bad = 0;

    /* D = A B + 0.5 C with C aliasing D */
    enum { M = 4, N = 6, K = 5 };
    float a[M * K], b[K * N], d[M * N], want[M * N];
    for (int i = 0; i < M * K; ++i)
        a[i] = sinf((float)i);
    for (int i = 0; i < K * N; ++i)
        b[i] = cosf((float)i);
    for (int i = 0; i < M * N; ++i)
        d[i] = (float)i;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float s = 0;
            for (int k = 0; k < K; ++k)
                s += a[i * K + k] * b[k * N + j];
            want[i * N + j] = s + 0.5f * d[i * N + j];
        }
    hk_gemm_args g = HK_ARGS_INIT(hk_gemm_args);
    g.m = M;
    g.n = N;
    g.k = K;
    g.a_type = g.b_type = g.d_type = HK_DTYPE_F32;
    g.a = a;
    g.lda = K;
    g.b = b;
    g.ldb = N;
    g.c = d;
    g.ldc = N;
    g.d = d;
    g.ldd = N;
    g.alpha = 1;
    g.beta = 0.5f;
    bad |= check("hk_gemm", hk_gemm(ctx, &g));
    for (int i = 0; i < M * N && !bad; ++i)
        if (fabsf(d[i] - want[i]) > 1e-5f * (1 + fabsf(want[i]))) {
            fprintf(stderr, "gemm D[%d] = %g, want %g\n", i, d[i], want[i]);
            bad = 1;
        }

    /* causal attention, one head, seqlen 3, head_dim 2 */
    enum { S = 3, D = 2 };
    float q[S * D] = {0.1f, 0.2f, -0.3f, 0.4f, 0.5f, -0.6f}, k[S * D] = {0.7f, -0.1f, 0.2f, 0.3f, -0.4f, 0.9f};
    float v[S * D] = {1, 2, 3, 4, 5, 6}, o[S * D], lse[S];
    hk_attn_fwd_args at = HK_ARGS_INIT(hk_attn_fwd_args);
    at.dtype = HK_DTYPE_F32;
    at.batch = 1;
    at.seqlen_q = at.seqlen_k = S;
    at.heads_q = at.heads_kv = 1;
    at.head_dim = D;
    at.q = q;
    at.k = k;
    at.v = v;
    at.o = o;
    at.lse = lse;
    at.causal = 1;
    bad |= check("hk_attn_fwd", hk_attn_fwd(ctx, &at));
    for (int i = 0; i < S && !bad; ++i) {
        double s[S], mx = -1e300, sum = 0;
        for (int j = 0; j <= i; ++j) {
            s[j] = (q[i * D] * k[j * D] + q[i * D + 1] * k[j * D + 1]) / sqrt((double)D);
            mx = s[j] > mx ? s[j] : mx;
        }
        for (int j = 0; j <= i; ++j)
            sum += exp(s[j] - mx);
        for (int c = 0; c < D; ++c) {
            double acc = 0;
            for (int j = 0; j <= i; ++j)
                acc += exp(s[j] - mx) / sum * v[j * D + c];
            if (fabs(o[i * D + c] - acc) > 1e-5 * (1 + fabs(acc))) {
                fprintf(stderr, "attention O[%d][%d] = %g, want %g\n", i, c, o[i * D + c], acc);
                bad = 1;
            }
        }
        if (fabs(lse[i] - (mx + log(sum))) > 1e-5) {
            fprintf(stderr, "attention LSE[%d] = %g, want %g\n", i, lse[i], mx + log(sum));
            bad = 1;
        }
    }
    hk_context_destroy(ctx);
    printf("libhk %s consumer: %s\n", hk_version_string(), bad ? "failed" : "passed");
    return bad;
}
