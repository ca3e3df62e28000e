/* One Llama-style attention block through hk.h alone:
 *   h, z1 = RMSNorm(x + residual)          hk_ln_fused (residual in, residual_out)
 *   qkv   = h Wqkv^T                        hk_gemm (nn.Linear layout)
 *   q, k  = rotary(q), rotary(k)            hk_rotary, in place on strided views of qkv
 *   o     = attention(q, k, v)              hk_attn_fwd, causal GQA, q/k/v read through their strides
 *   a     = o Wo^T                          hk_gemm
 *   y, z2 = RMSNorm(a + z1)                 hk_ln_fused
 * It runs in bf16 on the backend hk_context_create picks (HK_BACKEND overrides), checks y and z2 against the same
 * block in fp32 on the CPU backend, and prints tokens/s. Exit status 0: agreed; 1: disagreed or failed; 77: this
 * backend has no kernel for one of the ops (the library's message says which).
 * Usage: llama_block [batch seqlen model_dim heads kv_heads head_dim iterations] */
#include <hk.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct shape {
    int64_t batch, seqlen, dim, heads, kv_heads, head_dim;
} shape;

/* Device buffers of one block in one dtype; sizes in elements. */
typedef struct block {
    hk_context *ctx;
    hk_dtype dtype;
    size_t elem;
    void *x, *residual, *norm1, *norm2, *wqkv, *wo, *cos, *sin; /* inputs (norm weights fp32) */
    void *h, *z1, *qkv, *o, *attn, *y, *z2;                    /* intermediates and outputs */
} block;

static int64_t qkv_width(const shape *s) { return (s->heads + 2 * s->kv_heads) * s->head_dim; }

static hk_status block_run(block *b, const shape *s)
{
    int64_t tokens = s->batch * s->seqlen, width = qkv_width(s), hd = s->head_dim;
    hk_status st;
    hk_ln_fused_args n1 = HK_ARGS_INIT(hk_ln_fused_args);
    n1.norm = HK_NORM_RMS; n1.dtype = b->dtype; n1.param_type = HK_DTYPE_F32;
    n1.rows = tokens; n1.cols = s->dim;
    n1.x = b->x; n1.residual = b->residual; n1.gamma = b->norm1; n1.y = b->h; n1.residual_out = b->z1;
    if ((st = hk_ln_fused(b->ctx, &n1)) != HK_OK)
        return st;

    hk_gemm_args g = HK_ARGS_INIT(hk_gemm_args);
    g.m = tokens; g.n = width; g.k = s->dim;
    g.a_type = g.b_type = g.d_type = b->dtype; g.trans_b = 1;
    g.a = b->h; g.lda = s->dim; g.b = b->wqkv; g.ldb = s->dim; g.d = b->qkv; g.ldd = width; g.alpha = 1.0f;
    if ((st = hk_gemm(b->ctx, &g)) != HK_OK)
        return st;

    /* q, k and v are views of qkv's rows: [batch, seqlen, heads, head_dim] with a token stride of width */
    int64_t stride[3] = {s->seqlen * width, width, hd};
    char *q = b->qkv, *k = q + s->heads * hd * b->elem, *v = k + s->kv_heads * hd * b->elem;
    for (int t = 0; t < 2; ++t) {
        hk_rotary_args r = HK_ARGS_INIT(hk_rotary_args);
        r.dtype = b->dtype; r.batch = s->batch; r.seqlen = s->seqlen; r.heads = t ? s->kv_heads : s->heads;
        r.head_dim = hd; r.x = r.out = t ? k : q;
        memcpy(r.x_stride, stride, sizeof stride); memcpy(r.out_stride, stride, sizeof stride);
        r.cos = b->cos; r.sin = b->sin; r.table_positions = s->seqlen; r.table_type = HK_DTYPE_F32;
        if ((st = hk_rotary(b->ctx, &r)) != HK_OK)
            return st;
    }

    hk_attn_fwd_args a = HK_ARGS_INIT(hk_attn_fwd_args);
    a.dtype = b->dtype; a.batch = s->batch; a.seqlen_q = a.seqlen_k = s->seqlen;
    a.heads_q = s->heads; a.heads_kv = s->kv_heads; a.head_dim = hd; a.causal = 1;
    a.q = q; a.k = k; a.v = v; a.o = b->o;
    memcpy(a.q_stride, stride, sizeof stride); memcpy(a.k_stride, stride, sizeof stride);
    memcpy(a.v_stride, stride, sizeof stride);
    if ((st = hk_attn_fwd(b->ctx, &a)) != HK_OK)
        return st;

    g.n = s->dim; g.k = s->heads * hd;
    g.a = b->o; g.lda = g.k; g.b = b->wo; g.ldb = g.k; g.d = b->attn; g.ldd = s->dim;
    if ((st = hk_gemm(b->ctx, &g)) != HK_OK)
        return st;

    hk_ln_fused_args n2 = n1;
    n2.x = b->attn; n2.residual = b->z1; n2.gamma = b->norm2; n2.y = b->y; n2.residual_out = b->z2;
    return hk_ln_fused(b->ctx, &n2);
}

/* ---------------------------------------------------------------- host side */

static uint64_t rng_state;

static double gaussian(void)
{
    double u[2];
    for (int i = 0; i < 2; ++i) { /* xorshift64*, 53 bits into (0, 1) */
        rng_state ^= rng_state >> 12; rng_state ^= rng_state << 25; rng_state ^= rng_state >> 27;
        u[i] = ((rng_state * 2685821657736338717ull >> 11) + 0.5) / 9007199254740992.0;
    }
    return sqrt(-2.0 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

static float from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* n values of N(0, scale^2), rounded to bf16 so that both runs see the same inputs. */
static float *random_values(size_t n, double scale)
{
    float *v = malloc(n * sizeof *v);
    for (size_t i = 0; v && i < n; ++i)
        v[i] = from_bf16(to_bf16((float)(gaussian() * scale)));
    return v;
}

/* Upload host fp32 values as dtype (bf16 or f32) into new device memory. */
static void *upload(hk_context *ctx, const float *v, size_t n, hk_dtype dtype)
{
    size_t elem = hk_dtype_size(dtype);
    void *host = malloc(n * elem), *dev = NULL;
    if (!host)
        return NULL;
    for (size_t i = 0; i < n; ++i) {
        if (dtype == HK_DTYPE_BF16)
            ((uint16_t *)host)[i] = to_bf16(v[i]);
        else
            ((float *)host)[i] = v[i];
    }
    if (hk_malloc(ctx, &dev, n * elem) != HK_OK || hk_memcpy(ctx, dev, host, n * elem, HK_COPY_HOST_TO_DEVICE) != HK_OK)
        dev = NULL;
    free(host);
    return dev;
}

/* Download n elements of dtype as fp32. */
static float *download(hk_context *ctx, const void *dev, size_t n, hk_dtype dtype)
{
    size_t elem = hk_dtype_size(dtype);
    void *host = malloc(n * elem);
    float *v = malloc(n * sizeof *v);
    if (host && v && hk_memcpy(ctx, host, dev, n * elem, HK_COPY_DEVICE_TO_HOST) == HK_OK) {
        for (size_t i = 0; i < n; ++i)
            v[i] = dtype == HK_DTYPE_BF16 ? from_bf16(((uint16_t *)host)[i]) : ((float *)host)[i];
    } else {
        free(v);
        v = NULL;
    }
    free(host);
    return v;
}

enum { IN_X, IN_RES, IN_N1, IN_N2, IN_WQKV, IN_WO, IN_COS, IN_SIN, IN_COUNT };

/* Allocate b's buffers on its context, upload the inputs and poison every output with 0xFF bytes (NaN). */
static int block_init(block *b, hk_context *ctx, hk_dtype dtype, const shape *s, float *const in[IN_COUNT])
{
    int64_t tokens = s->batch * s->seqlen, d = s->dim, w = qkv_width(s), hq = s->heads * s->head_dim;
    size_t n_in[IN_COUNT] = {tokens * d, tokens * d, d, d, w * d, d * hq, s->seqlen * s->head_dim / 2,
                             s->seqlen * s->head_dim / 2};
    memset(b, 0, sizeof *b);
    b->ctx = ctx; b->dtype = dtype; b->elem = hk_dtype_size(dtype);
    void **inputs[IN_COUNT] = {&b->x, &b->residual, &b->norm1, &b->norm2, &b->wqkv, &b->wo, &b->cos, &b->sin};
    for (int i = 0; i < IN_COUNT; ++i) {
        bool fp32 = i == IN_N1 || i == IN_N2 || i == IN_COS || i == IN_SIN;
        if (!(*inputs[i] = upload(ctx, in[i], n_in[i], fp32 ? HK_DTYPE_F32 : dtype)))
            return 0;
    }
    void **outs[] = {&b->h, &b->z1, &b->qkv, &b->o, &b->attn, &b->y, &b->z2};
    size_t n_out[] = {tokens * d, tokens * d, tokens * w, tokens * hq, tokens * d, tokens * d, tokens * d};
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; ++i)
        if (hk_malloc(ctx, outs[i], n_out[i] * b->elem) != HK_OK || hk_memset(ctx, *outs[i], 0xFF, n_out[i] * b->elem))
            return 0;
    return 1;
}

static void block_free(block *b)
{
    void *all[] = {b->x, b->residual, b->norm1, b->norm2, b->wqkv, b->wo, b->cos, b->sin,
                   b->h, b->z1, b->qkv, b->o, b->attn, b->y, b->z2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
        if (all[i])
            hk_free(b->ctx, all[i]);
}

/* max |got - ref| / max |ref| over n values; any non-finite value in got gives +inf. */
static double rel_error(const float *got, const float *ref, size_t n)
{
    double diff = 0, scale = 0;
    for (size_t i = 0; i < n; ++i) {
        if (!isfinite(got[i]))
            return INFINITY;
        diff = fmax(diff, fabs((double)got[i] - ref[i]));
        scale = fmax(scale, fabs((double)ref[i]));
    }
    return scale > 0 ? diff / scale : INFINITY;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv)
{
    int64_t p[7] = {2, 64, 256, 4, 2, 64, 3}; /* batch seqlen dim heads kv_heads head_dim iterations */
    for (int i = 1; i < argc && i <= 7; ++i)
        p[i - 1] = atoll(argv[i]);
    shape s = {p[0], p[1], p[2], p[3], p[4], p[5]};
    int iterations = (int)p[6];
    if (s.batch < 1 || s.seqlen < 1 || s.dim < 1 || s.heads < 1 || s.kv_heads < 1 || s.head_dim < 2 ||
        s.head_dim % 2 || s.heads % s.kv_heads || iterations < 1) {
        fprintf(stderr, "usage: %s [batch seqlen model_dim heads kv_heads head_dim iterations] (positive; heads a "
                        "multiple of kv_heads, head_dim even)\n", argv[0]);
        return 1;
    }
    rng_state = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull | 1;
    printf("llama_block: seed %llu\n", (unsigned long long)rng_state);

    int64_t tokens = s.batch * s.seqlen, d = s.dim, hq = s.heads * s.head_dim, half = s.head_dim / 2;
    float *in[IN_COUNT] = {random_values(tokens * d, 1.0), random_values(tokens * d, 1.0),
                           random_values(d, 0.2), random_values(d, 0.2),
                           random_values(qkv_width(&s) * d, 1.0 / sqrt((double)d)),
                           random_values(d * hq, 1.0 / sqrt((double)hq)),
                           malloc(s.seqlen * half * sizeof(float)), malloc(s.seqlen * half * sizeof(float))};
    for (int i = 0; i < IN_COUNT; ++i)
        if (!in[i])
            return 1;
    for (int i = 0; i < d; ++i) { /* RMSNorm weights near 1 */
        in[IN_N1][i] += 1.0f;
        in[IN_N2][i] += 1.0f;
    }
    for (int64_t t = 0; t < s.seqlen; ++t)
        for (int64_t f = 0; f < half; ++f) {
            double angle = t * pow(10000.0, -(double)f / half);
            in[IN_COS][t * half + f] = (float)cos(angle);
            in[IN_SIN][t * half + f] = (float)sin(angle);
        }

    hk_context *dev = NULL, *cpu = NULL;
    hk_context_options cpu_opts = HK_ARGS_INIT(hk_context_options);
    cpu_opts.backend = HK_BACKEND_CPU;
    if (hk_context_create(NULL, &dev) != HK_OK || hk_context_create(&cpu_opts, &cpu) != HK_OK) {
        fprintf(stderr, "llama_block: hk_context_create: %s\n", hk_last_error());
        return 1;
    }
    printf("llama_block: %s (%s, %s): batch %lld x seqlen %lld, dim %lld, %lld heads on %lld kv heads of %lld\n",
           hk_backend_name(hk_context_backend(dev)), hk_context_arch(dev), hk_context_device_name(dev),
           (long long)s.batch, (long long)s.seqlen, (long long)d, (long long)s.heads, (long long)s.kv_heads,
           (long long)s.head_dim);

    int rc = 1;
    block run = {0}, ref = {0};
    if (!block_init(&run, dev, HK_DTYPE_BF16, &s, in) || !block_init(&ref, cpu, HK_DTYPE_F32, &s, in)) {
        fprintf(stderr, "llama_block: setting up buffers: %s\n", hk_last_error());
        goto out;
    }
    hk_status st = block_run(&ref, &s);
    if (st != HK_OK) {
        fprintf(stderr, "llama_block: the fp32 CPU reference: %s\n", hk_last_error());
        goto out;
    }
    double t0 = 0;
    for (int it = 0; it <= iterations && st == HK_OK; ++it) { /* the first run is a warm-up */
        if (it == 1 && (st = hk_synchronize(dev, NULL)) == HK_OK)
            t0 = now_s();
        if (st == HK_OK)
            st = block_run(&run, &s);
    }
    if (st == HK_OK)
        st = hk_synchronize(dev, NULL);
    if (st != HK_OK) {
        printf("llama_block: %s\n", hk_last_error());
        rc = st == HK_ERR_UNSUPPORTED ? 77 : 1;
        goto out;
    }
    double seconds = (now_s() - t0) / iterations;

    float *got[2] = {download(dev, run.y, tokens * d, run.dtype), download(dev, run.z2, tokens * d, run.dtype)};
    float *want[2] = {download(cpu, ref.y, tokens * d, ref.dtype), download(cpu, ref.z2, tokens * d, ref.dtype)};
    if (got[0] && got[1] && want[0] && want[1]) {
        double ey = rel_error(got[0], want[0], tokens * d), ez = rel_error(got[1], want[1], tokens * d);
        rc = ey < 3e-2 && ez < 3e-2 ? 0 : 1;
        printf("llama_block: bf16 against the fp32 CPU reference: y %.3g, residual %.3g (max error / max value; "
               "limit 3e-2): %s\n", ey, ez, rc ? "FAIL" : "ok");
        printf("llama_block: %.3f ms per block, %.0f tokens/s\n", seconds * 1e3, tokens / seconds);
    }
    for (int i = 0; i < 2; ++i) {
        free(got[i]);
        free(want[i]);
    }
out:
    block_free(&run);
    block_free(&ref);
    hk_context_destroy(dev);
    hk_context_destroy(cpu);
    for (int i = 0; i < IN_COUNT; ++i)
        free(in[i]);
    return rc;
}
