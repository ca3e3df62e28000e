/* hk-bench: runs every op at realistic sizes on the best backend here (small sizes on the CPU), checks a
 * sample of each output against float64 math on the host, and prints time and TFLOP/s or GB/s.
 * Timing: warm-up calls, then the timed calls enqueued back to back, each between its own pair of events and read
 * only after the last, so the GPU never waits on the host between them; the median is reported. On a GPU the calls
 * rotate over copies of the op's inputs (>= 512 MiB in all, more than any L2 or Infinity Cache) so that none reads
 * what an earlier call left in cache, and a first row measures device-to-device copy bandwidth: the ceiling that
 * the memory-bound rows are also given as a share of.
 * Peers (cuBLAS, cuDNN, torch.compile) are timed side by side by bench/peers.py, not here. */
#include "telemetry.h"

#include <hk.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct bench {
    hk_context *ctx;
    bool gpu, json, first_row;
    int warmup, repeats;
    size_t rotation_bytes; /* the input sets of an op hold at least this much */
    const char *only;      /* comma-separated op names to run (the copy ceiling always runs); NULL: all */
    double copy_gbps; /* the measured copy rate, ceiling of the memory-bound rows; 0 when not measured */
    uint64_t rng;
} bench;

/* ---------------------------------------------------------------- host data */

static float uniform(bench *b) /* [-1, 1) from a 64-bit LCG */
{
    b->rng = b->rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((b->rng >> 40) * (1.0 / 8388608.0)) - 1.0f;
}

static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

static double from_bf16(uint16_t v)
{
    uint32_t u = (uint32_t)v << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* e4m3 codecs: OCP e4m3fn (bias 7) or, with fnuz, e4m3fnuz (bias 8); round to nearest even, |f| < 240. */
static uint8_t to_e4m3(float f, bool fnuz)
{
    int bias = fnuz ? 8 : 7;
    uint8_t sign = f < 0 ? 0x80 : 0;
    float a = fabsf(f);
    int e;
    frexpf(a, &e);
    e = e - 1 < 1 - bias ? 1 - bias : e - 1;
    float q = nearbyintf(ldexpf(a, 3 - e));
    if (q >= 16.0f) {
        q = 8.0f;
        ++e;
    }
    if (q == 0.0f)
        return fnuz ? 0 : sign; /* fnuz has no negative zero */
    return (uint8_t)(sign | (q < 8.0f ? (int)q : ((e + bias) << 3 | ((int)q - 8))));
}

static double from_e4m3(uint8_t v, bool fnuz)
{
    int bias = fnuz ? 8 : 7, e = (v >> 3) & 15, m = v & 7;
    double mag = e == 0 ? ldexp(m, -bias - 2) : ldexp(8 + m, e - bias - 3);
    return v & 0x80 ? -mag : mag;
}

typedef struct buffer {
    void *host, *dev;
    size_t bytes;
} buffer;

static bool fail(const char *what)
{
    fprintf(stderr, "hk-bench: %s: %s\n", what, hk_last_error());
    return false;
}

/* A device buffer filled with random bf16 (or fp8, or fp32) values scaled by `scale`; host copy kept. */
static bool make_buffer(bench *b, buffer *buf, size_t count, hk_dtype t, float scale)
{
    buf->bytes = count * hk_dtype_size(t);
    buf->host = malloc(buf->bytes ? buf->bytes : 1);
    if (!buf->host)
        return false;
    for (size_t i = 0; i < count; ++i) {
        float v = uniform(b) * scale;
        if (t == HK_DTYPE_BF16)
            ((uint16_t *)buf->host)[i] = to_bf16(v);
        else if (t == HK_DTYPE_FP8_E4M3 || t == HK_DTYPE_FP8_E4M3FNUZ)
            ((uint8_t *)buf->host)[i] = to_e4m3(v, t == HK_DTYPE_FP8_E4M3FNUZ);
        else
            ((float *)buf->host)[i] = v;
    }
    if (hk_malloc(b->ctx, &buf->dev, buf->bytes) != HK_OK)
        return fail("malloc");
    if (hk_memcpy(b->ctx, buf->dev, buf->host, buf->bytes, HK_COPY_HOST_TO_DEVICE) != HK_OK)
        return fail("memcpy");
    return true;
}

/* A device output poisoned with NaN bytes, with a host buffer to read it back into. */
static bool make_output(bench *b, buffer *buf, size_t bytes)
{
    buf->bytes = bytes;
    buf->host = malloc(bytes ? bytes : 1);
    if (!buf->host || hk_malloc(b->ctx, &buf->dev, bytes) != HK_OK)
        return fail("malloc");
    return hk_memset(b->ctx, buf->dev, 0xFF, bytes) == HK_OK;
}

static bool read_back(bench *b, buffer *buf)
{
    return hk_memcpy(b->ctx, buf->host, buf->dev, buf->bytes, HK_COPY_DEVICE_TO_HOST) == HK_OK || fail("read back");
}

static void release(bench *b, buffer *bufs, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        hk_free(b->ctx, bufs[i].dev);
        free(bufs[i].host);
    }
}

/* ---------------------------------------------------------------- input sets */

enum { MAX_SETS = 16, MAX_INPUTS = 6 };

/* The sets of inputs an op's calls rotate over. Set 0 is the op's own inputs; on a GPU, device copies of them follow
 * until the sets hold >= 512 MiB (--rotate-mib; at most 16 sets), more than the H200's 50 MB L2 or the MI300X's
 * 256 MB Infinity Cache, so that no call finds its inputs left in cache by the calls before it. The copies hold the
 * same values, so the output check against set 0's host data holds whichever set wrote the output. Outputs are not
 * copied. */
typedef struct input_sets {
    int count;
    void *dev[MAX_SETS][MAX_INPUTS]; /* input i of set s */
    buffer copies[(MAX_SETS - 1) * MAX_INPUTS];
    size_t made; /* copies allocated so far, what release() frees */
} input_sets;

/* Fills a zeroed *in from the op's n (<= MAX_INPUTS) input buffers; false on failure (message printed). */
static bool make_sets(bench *b, input_sets *in, const buffer *const *inputs, size_t n)
{
    size_t bytes = 0, count = 1;
    for (size_t i = 0; i < n; ++i)
        bytes += inputs[i]->bytes;
    if (b->gpu && bytes > 0) /* ceil(rotation_bytes / bytes) */
        count = b->rotation_bytes / bytes + (b->rotation_bytes % bytes != 0);
    in->count = count < MAX_SETS ? (int)count : MAX_SETS;
    for (size_t i = 0; i < n; ++i)
        in->dev[0][i] = inputs[i]->dev;
    for (int s = 1; s < in->count; ++s) {
        for (size_t i = 0; i < n; ++i) {
            buffer *copy = &in->copies[in->made++];
            *copy = (buffer){.bytes = inputs[i]->bytes};
            if (hk_malloc(b->ctx, &copy->dev, copy->bytes) != HK_OK)
                return fail("malloc");
            if (hk_memcpy(b->ctx, copy->dev, inputs[i]->dev, copy->bytes, HK_COPY_DEVICE_TO_DEVICE) != HK_OK)
                return fail("memcpy");
            in->dev[s][i] = copy->dev;
        }
    }
    return true;
}

/* ---------------------------------------------------------------- timing and report */

typedef hk_status (*op_fn)(hk_context *, const void *);

enum { MAX_REPEATS = 64 };

static int cmp_float(const void *x, const void *y)
{
    float a = *(const float *)x, c = *(const float *)y;
    return (a > c) - (a < c);
}

/* Median milliseconds of b->repeats calls after b->warmup calls; call i reads the args struct at args + (i % sets) *
 * stride. The timed calls are enqueued back to back, each between its own pair of events, and their times read only
 * after the last one, so that no call waits on an idle GPU for the host to launch it. Negative on failure (message
 * in *error). */
static float time_op(bench *b, op_fn fn, const void *args, size_t stride, int sets, const char **error)
{
    hk_event *events[2 * MAX_REPEATS] = {0}; /* timed call i runs between events[2 i] and events[2 i + 1] */
    float times[MAX_REPEATS], median = -1.0f;
    const int repeats = b->repeats;
    const char *set = args;
    *error = NULL;
    if (repeats < 1 || repeats > MAX_REPEATS) {
        *error = "repeats must be 1 to 64";
        return median;
    }
    for (int i = 0; i < 2 * repeats; ++i)
        if (hk_event_create(b->ctx, &events[i]) != HK_OK)
            goto failed;
    for (int i = 0; i < b->warmup; ++i)
        if (fn(b->ctx, set + (size_t)(i % sets) * stride) != HK_OK)
            goto failed;
    for (int i = 0; i < repeats; ++i)
        if (hk_event_record(events[2 * i], NULL) != HK_OK || fn(b->ctx, set + (size_t)(i % sets) * stride) != HK_OK ||
            hk_event_record(events[2 * i + 1], NULL) != HK_OK)
            goto failed;
    for (int i = 0; i < repeats; ++i)
        if (hk_event_elapsed_ms(events[2 * i], events[2 * i + 1], &times[i]) != HK_OK)
            goto failed;
    qsort(times, (size_t)repeats, sizeof times[0], cmp_float);
    median = times[repeats / 2];
    goto done;
failed:
    *error = hk_last_error();
done:
    for (int i = 0; i < 2 * repeats; ++i)
        hk_event_destroy(events[i]);
    return median;
}

/* One row. err is the sample's largest relative error, NAN on a row that checks nothing (the copy). A memory-bound
 * row (flops == 0) also gives its rate as a share of the measured copy rate, where there is one. */
static void report(bench *b, const char *op, const char *shape, float ms, double flops, double bytes, double err,
                   const char *error)
{
    double gbps = error ? 0.0 : bytes / ms * 1e-6;
    double pct = !error && flops == 0 && b->copy_gbps > 0 ? 100.0 * gbps / b->copy_gbps : -1.0;
    if (b->json) {
        printf("%s\n  {\"op\": \"%s\", \"shape\": \"%s\", \"arch\": \"%s\"", b->first_row ? "" : ",", op, shape,
               hk_context_arch(b->ctx));
        if (error) {
            printf(", \"error\": \"%s\"}", error);
        } else {
            printf(", \"ms\": %.4f, \"tflops\": %.2f, \"gbps\": %.1f", ms, flops > 0 ? flops / ms * 1e-9 : 0.0, gbps);
            if (!isnan(err))
                printf(", \"max_rel_err\": %.3g", err);
            if (pct >= 0)
                printf(", \"pct_of_copy\": %.1f", pct);
            printf("}");
        }
        b->first_row = false;
        return;
    }
    if (error) {
        printf("%-13s %-40s %s\n", op, shape, error);
        return;
    }
    char rate[32], share[16] = "";
    if (flops > 0)
        snprintf(rate, sizeof rate, "%8.2f TFLOP/s", flops / ms * 1e-9);
    else
        snprintf(rate, sizeof rate, "%8.1f GB/s", gbps);
    if (pct >= 0)
        snprintf(share, sizeof share, "   %6.1f%%", pct);
    else if (b->gpu) /* keep the "of copy" column */
        snprintf(share, sizeof share, "%10s", "");
    printf("%-13s %-40s %10.3f %16s", op, shape, ms, rate);
    if (isnan(err))
        printf("\n");
    else
        printf("%s   %-9.2e %s\n", share, err, err <= 2e-2 ? "ok" : "MISMATCH");
}

/* Relative error of a sampled value against its float64 reference, with an absolute floor. */
static double rel_err(double got, double ref, double floor)
{
    if (isnan(got))
        return INFINITY;
    return fabs(got - ref) / fmax(fabs(ref), floor);
}

/* ---------------------------------------------------------------- options */

/* A whole decimal number in [1, max]. */
static bool parse_count(const char *text, long max, long *value)
{
    char *end;
    *value = strtol(text, &end, 10);
    return end != text && *end == '\0' && *value >= 1 && *value <= max;
}

/* Whether --only names op (or is absent). */
static bool wanted(const bench *b, const char *op)
{
    if (!b->only)
        return true;
    const size_t n = strlen(op);
    for (const char *p = b->only; *p;) {
        const char *comma = strchr(p, ',');
        const size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, op, n) == 0)
            return true;
        p += len + (comma != NULL);
    }
    return false;
}

/* ---------------------------------------------------------------- ops */

typedef struct copy_args {
    void *dst;
    const void *src;
    size_t bytes;
} copy_args;

static hk_status copy_op(hk_context *ctx, const void *args)
{
    const copy_args *c = args;
    return hk_memcpy(ctx, c->dst, c->src, c->bytes, HK_COPY_DEVICE_TO_DEVICE);
}

/* The memory-bound rows' ceiling: device-to-device copy bandwidth, counting the bytes read and written. */
static void bench_copy(bench *b)
{
    /* hk_memcpy blocks, so every timed copy also holds the host's launch gap; the difference between a 2 GiB and a
     * 512 MiB copy cancels that fixed time, so the ceiling is the device's alone */
    const size_t big = (size_t)2 << 30, small = big / 4;
    const double bytes = 2.0 * (double)(big - small);
    void *src = NULL, *dst = NULL;
    const char *error = NULL;
    float ms = -1.0f;
    if (hk_malloc(b->ctx, &src, big) != HK_OK || hk_malloc(b->ctx, &dst, big) != HK_OK) {
        error = hk_last_error();
    } else {
        const copy_args c_big = {dst, src, big}, c_small = {dst, src, small};
        const float t_big = time_op(b, copy_op, &c_big, 0, 1, &error);
        const float t_small = error ? -1.0f : time_op(b, copy_op, &c_small, 0, 1, &error);
        ms = t_big - t_small;
        if (!error && !(ms > 0.0f))
            error = "a 2 GiB copy timed no slower than a 512 MiB one";
    }
    report(b, "copy", "2 GiB minus 512 MiB, device-to-device", ms, 0, bytes, NAN, error);
    if (!error)
        b->copy_gbps = bytes / ms * 1e-6;
    hk_free(b->ctx, src);
    hk_free(b->ctx, dst);
}

/* fp8: fast accumulation (peer: cuBLASLt FAST_ACCUM) or fp32 accumulation (cuBLASLt's default) */
static void bench_gemm(bench *b, int64_t m, int64_t n, int64_t k, hk_dtype in_type, bool fast)
{
    if (!wanted(b, "gemm"))
        return;
    char shape[64];
    snprintf(shape, sizeof shape, "%lldx%lldx%lld %s NT%s", (long long)m, (long long)n, (long long)k, hk_dtype_name(in_type),
             in_type == HK_DTYPE_BF16 ? "" : fast ? " fast" : " fp32 acc");
    buffer buf[3] = {0};
    input_sets in = {0};
    bool fp8 = in_type == HK_DTYPE_FP8_E4M3 || in_type == HK_DTYPE_FP8_E4M3FNUZ;
    bool fnuz = in_type == HK_DTYPE_FP8_E4M3FNUZ;
    float range = fp8 ? 4.0f : 1.0f;
    if (!make_buffer(b, &buf[0], (size_t)(m * k), in_type, range) || !make_buffer(b, &buf[1], (size_t)(n * k), in_type, range) ||
        !make_output(b, &buf[2], (size_t)(m * n) * 2) || !make_sets(b, &in, (const buffer *[]){&buf[0], &buf[1]}, 2))
        goto done;
    hk_gemm_args a = HK_ARGS_INIT(hk_gemm_args);
    a.m = m, a.n = n, a.k = k;
    a.a_type = a.b_type = in_type;
    a.d_type = HK_DTYPE_BF16;
    a.trans_b = 1; /* nn.Linear layout: B is n x k */
    a.a = buf[0].dev, a.lda = k;
    a.b = buf[1].dev, a.ldb = k;
    a.d = buf[2].dev, a.ldd = n;
    a.alpha = 1.0f;
    if (fp8)
        a.scale_a = 0.5f, a.scale_b = 0.25f, a.fp8_fast_accum = fast;
    /* the workspace the call can use (long K over few tiles: K split over more CTAs) */
    if (hk_gemm_workspace_size(b->ctx, &a, &a.workspace_size) != HK_OK ||
        (a.workspace_size && hk_malloc(b->ctx, &a.workspace, a.workspace_size) != HK_OK))
        a.workspace_size = 0, a.workspace = NULL;
    hk_gemm_args per_set[MAX_SETS];
    for (int s = 0; s < in.count; ++s) {
        per_set[s] = a;
        per_set[s].a = in.dev[s][0], per_set[s].b = in.dev[s][1];
    }
    const char *error;
    float ms = time_op(b, (op_fn)hk_gemm, per_set, sizeof per_set[0], in.count, &error);
    double err = 0;
    if (!error && read_back(b, &buf[2])) {
        for (int s = 0; s < 64; ++s) {
            int64_t i = (int64_t)((uniform(b) + 1) * 0.5 * m), j = (int64_t)((uniform(b) + 1) * 0.5 * n);
            double ref = 0, mag = 0;
            for (int64_t kk = 0; kk < k; ++kk) {
                double x = fp8 ? from_e4m3(((uint8_t *)buf[0].host)[i * k + kk], fnuz)
                               : from_bf16(((uint16_t *)buf[0].host)[i * k + kk]);
                double y = fp8 ? from_e4m3(((uint8_t *)buf[1].host)[j * k + kk], fnuz)
                               : from_bf16(((uint16_t *)buf[1].host)[j * k + kk]);
                ref += x * y;
                mag += fabs(x * y);
            }
            if (fp8)
                ref *= 0.125, mag *= 0.125;
            err = fmax(err, rel_err(from_bf16(((uint16_t *)buf[2].host)[i * n + j]), ref, mag / sqrt((double)k)));
        }
    }
    report(b, "gemm", shape, ms, 2.0 * m * n * k, 0, err, error);
    hk_free(b->ctx, a.workspace);
done:
    release(b, in.copies, in.made);
    release(b, buf, 3);
}

/* One query row of attention in float64 (bf16 inputs, contiguous [B, N, H, D], Nq == Nk): the output row, and
 * with d_o given, the dQ row (dQ_i = scale * sum_j P_ij (dO_i.V_j - dO_i.O_i) K_j). */
static void attn_row(const uint16_t *q, const uint16_t *k, const uint16_t *v, const uint16_t *d_o, int64_t n,
                     int64_t hq, int64_t hkv, int64_t d, int64_t bi, int64_t h, int64_t i, bool causal, double *out,
                     double *dq)
{
    int64_t kvh = h / (hq / hkv), keys = causal ? i + 1 : n;
    double mx = -INFINITY, sum = 0, scale = 1.0 / sqrt((double)d);
    double *p = malloc(sizeof(double) * (size_t)keys);
#define AT(t, tok, head) ((t) + ((bi * n + (tok)) * (t == q || t == d_o ? hq : hkv) + (head)) * d)
    for (int64_t j = 0; j < keys; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < d; ++c)
            dot += from_bf16(AT(q, i, h)[c]) * from_bf16(AT(k, j, kvh)[c]);
        p[j] = dot * scale;
        mx = fmax(mx, p[j]);
    }
    for (int64_t j = 0; j < keys; ++j)
        sum += (p[j] = exp(p[j] - mx));
    for (int64_t c = 0; c < d; ++c)
        out[c] = 0;
    for (int64_t j = 0; j < keys; ++j)
        for (int64_t c = 0; c < d; ++c)
            out[c] += p[j] / sum * from_bf16(AT(v, j, kvh)[c]);
    if (d_o) {
        double di = 0;
        for (int64_t c = 0; c < d; ++c)
            di += from_bf16(AT(d_o, i, h)[c]) * out[c], dq[c] = 0;
        for (int64_t j = 0; j < keys; ++j) {
            double dp = 0;
            for (int64_t c = 0; c < d; ++c)
                dp += from_bf16(AT(d_o, i, h)[c]) * from_bf16(AT(v, j, kvh)[c]);
            for (int64_t c = 0; c < d; ++c)
                dq[c] += scale * p[j] / sum * (dp - di) * from_bf16(AT(k, j, kvh)[c]);
        }
    }
#undef AT
    free(p);
}

static void bench_attn(bench *b, int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t n, int64_t d, bool causal,
                       bool backward)
{
    if (!wanted(b, backward ? "attn_bwd" : "attn_fwd"))
        return;
    char shape[64];
    snprintf(shape, sizeof shape, "B%lld Hq%lld Hkv%lld N%lld D%lld%s", (long long)batch, (long long)heads_q,
             (long long)heads_kv, (long long)n, (long long)d, causal ? " causal" : "");
    size_t q_count = (size_t)(batch * n * heads_q * d), kv_count = (size_t)(batch * n * heads_kv * d);
    buffer buf[10] = {0};
    input_sets in = {0};
    hk_attn_fwd_args f = HK_ARGS_INIT(hk_attn_fwd_args);
    f.dtype = HK_DTYPE_BF16;
    f.batch = batch, f.seqlen_q = f.seqlen_k = n, f.heads_q = heads_q, f.heads_kv = heads_kv, f.head_dim = d;
    f.causal = causal;
    if (!make_buffer(b, &buf[0], q_count, HK_DTYPE_BF16, 1) || !make_buffer(b, &buf[1], kv_count, HK_DTYPE_BF16, 1) ||
        !make_buffer(b, &buf[2], kv_count, HK_DTYPE_BF16, 1) || !make_output(b, &buf[3], q_count * 2) ||
        !make_output(b, &buf[4], (size_t)(batch * heads_q * n) * 4))
        goto done;
    f.q = buf[0].dev, f.k = buf[1].dev, f.v = buf[2].dev, f.o = buf[3].dev, f.lse = buf[4].dev;
    double flops = 4.0 * batch * heads_q * n * n * d * (causal ? 0.5 : 1.0);
    const char *error;
    if (!backward) {
        if (!make_sets(b, &in, (const buffer *[]){&buf[0], &buf[1], &buf[2]}, 3))
            goto done;
        hk_attn_fwd_args per_set[MAX_SETS];
        for (int s = 0; s < in.count; ++s) {
            per_set[s] = f;
            per_set[s].q = in.dev[s][0], per_set[s].k = in.dev[s][1], per_set[s].v = in.dev[s][2];
        }
        float ms = time_op(b, (op_fn)hk_attn_fwd, per_set, sizeof per_set[0], in.count, &error);
        double err = 0, ref[512];
        if (!error && d <= 512 && read_back(b, &buf[3])) {
            for (int s = 0; s < 8; ++s) {
                int64_t bi = (int64_t)((uniform(b) + 1) * 0.5 * batch), h = (int64_t)((uniform(b) + 1) * 0.5 * heads_q);
                int64_t i = (int64_t)((uniform(b) + 1) * 0.5 * n);
                attn_row(buf[0].host, buf[1].host, buf[2].host, NULL, n, heads_q, heads_kv, d, bi, h, i, causal, ref, NULL);
                for (int64_t c = 0; c < d; ++c)
                    err = fmax(err, rel_err(from_bf16(((uint16_t *)buf[3].host)[((bi * n + i) * heads_q + h) * d + c]),
                                            ref[c], 0.05));
            }
        }
        report(b, "attn_fwd", shape, ms, flops, 0, err, error);
        goto done;
    }
    /* Backward: the forward once for O and LSE, then the timed backward; sampled dQ rows are checked. */
    if (hk_attn_fwd(b->ctx, &f) != HK_OK) {
        report(b, "attn_bwd", shape, 0, 0, 0, 0, hk_last_error());
        goto done;
    }
    hk_attn_bwd_args g = HK_ARGS_INIT(hk_attn_bwd_args);
    g.dtype = f.dtype;
    g.batch = batch, g.seqlen_q = g.seqlen_k = n, g.heads_q = heads_q, g.heads_kv = heads_kv, g.head_dim = d;
    g.causal = causal;
    g.q = f.q, g.k = f.k, g.v = f.v, g.o = f.o, g.lse = f.lse;
    /* inputs: Q, K, V, the forward's O and LSE, and dO */
    if (!make_buffer(b, &buf[5], q_count, HK_DTYPE_BF16, 1) || !make_output(b, &buf[6], q_count * 2) ||
        !make_output(b, &buf[7], kv_count * 2) || !make_output(b, &buf[8], kv_count * 2) ||
        !make_sets(b, &in, (const buffer *[]){&buf[0], &buf[1], &buf[2], &buf[3], &buf[4], &buf[5]}, 6))
        goto done;
    g.d_o = buf[5].dev, g.dq = buf[6].dev, g.dk = buf[7].dev, g.dv = buf[8].dev;
    size_t ws = 0;
    if (hk_attn_bwd_workspace_size(b->ctx, &g, &ws) != HK_OK) {
        report(b, "attn_bwd", shape, 0, 0, 0, 0, hk_last_error());
        goto done;
    }
    if (ws && hk_malloc(b->ctx, &buf[9].dev, ws) != HK_OK)
        goto done;
    g.workspace = buf[9].dev, g.workspace_size = ws;
    hk_attn_bwd_args per_set[MAX_SETS];
    for (int s = 0; s < in.count; ++s) {
        per_set[s] = g;
        per_set[s].q = in.dev[s][0], per_set[s].k = in.dev[s][1], per_set[s].v = in.dev[s][2];
        per_set[s].o = in.dev[s][3], per_set[s].lse = in.dev[s][4], per_set[s].d_o = in.dev[s][5];
    }
    float ms = time_op(b, (op_fn)hk_attn_bwd, per_set, sizeof per_set[0], in.count, &error);
    double err = 0, out[512], ref[512];
    if (!error && d <= 512 && read_back(b, &buf[6])) {
        for (int s = 0; s < 4; ++s) {
            int64_t bi = (int64_t)((uniform(b) + 1) * 0.5 * batch), h = (int64_t)((uniform(b) + 1) * 0.5 * heads_q);
            int64_t i = (int64_t)((uniform(b) + 1) * 0.5 * n);
            attn_row(buf[0].host, buf[1].host, buf[2].host, buf[5].host, n, heads_q, heads_kv, d, bi, h, i, causal, out,
                     ref);
            double norm = 0;
            for (int64_t c = 0; c < d; ++c)
                norm = fmax(norm, fabs(ref[c]));
            for (int64_t c = 0; c < d; ++c)
                err = fmax(err, rel_err(from_bf16(((uint16_t *)buf[6].host)[((bi * n + i) * heads_q + h) * d + c]), ref[c],
                                        fmax(norm, 1e-3)));
        }
    }
    report(b, "attn_bwd", shape, ms, 2.5 * flops, 0, err, error);
done:
    release(b, in.copies, in.made);
    release(b, buf, 10);
}

/* Element i of a host copy of F32 or BF16 values. */
static double table_value(const buffer *buf, hk_dtype t, int64_t i)
{
    return t == HK_DTYPE_BF16 ? from_bf16(((const uint16_t *)buf->host)[i]) : ((const float *)buf->host)[i];
}

/* table_type: F32 or BF16 cos/sin tables [n, d / 2] */
static void bench_rotary(bench *b, int64_t batch, int64_t n, int64_t heads, int64_t d, hk_dtype table_type)
{
    if (!wanted(b, "rotary"))
        return;
    char shape[64];
    snprintf(shape, sizeof shape, "B%lld N%lld H%lld D%lld bf16 half%s", (long long)batch, (long long)n, (long long)heads,
             (long long)d, table_type == HK_DTYPE_BF16 ? " bf16 tables" : "");
    size_t count = (size_t)(batch * n * heads * d);
    buffer buf[4] = {0};
    input_sets in = {0};
    if (!make_buffer(b, &buf[0], count, HK_DTYPE_BF16, 1) || !make_output(b, &buf[1], count * 2) ||
        !make_buffer(b, &buf[2], (size_t)(n * d / 2), table_type, 1) ||
        !make_buffer(b, &buf[3], (size_t)(n * d / 2), table_type, 1) ||
        !make_sets(b, &in, (const buffer *[]){&buf[0], &buf[2], &buf[3]}, 3))
        goto done;
    hk_rotary_args a = HK_ARGS_INIT(hk_rotary_args);
    a.dtype = HK_DTYPE_BF16;
    a.batch = batch, a.seqlen = n, a.heads = heads, a.head_dim = d;
    a.x = buf[0].dev, a.out = buf[1].dev, a.cos = buf[2].dev, a.sin = buf[3].dev, a.table_positions = n;
    a.table_type = table_type;
    hk_rotary_args per_set[MAX_SETS];
    for (int s = 0; s < in.count; ++s) {
        per_set[s] = a;
        per_set[s].x = in.dev[s][0], per_set[s].cos = in.dev[s][1], per_set[s].sin = in.dev[s][2];
    }
    const char *error;
    float ms = time_op(b, (op_fn)hk_rotary, per_set, sizeof per_set[0], in.count, &error);
    double err = 0;
    if (!error && read_back(b, &buf[1])) {
        const uint16_t *x = buf[0].host, *y = buf[1].host;
        for (int s = 0; s < 4096; ++s) {
            size_t e = (size_t)((uniform(b) + 1) * 0.5 * (double)count);
            int64_t c = (int64_t)(e % (size_t)d), t = (int64_t)(e / (size_t)(d * heads) % (size_t)n), half = d / 2;
            int64_t f = c % half;
            double x1 = from_bf16(x[e - (size_t)c + (size_t)f]), x2 = from_bf16(x[e - (size_t)c + (size_t)(f + half)]);
            double cc = table_value(&buf[2], table_type, t * half + f), ss = table_value(&buf[3], table_type, t * half + f);
            double ref = c < half ? x1 * cc - x2 * ss : x2 * cc + x1 * ss;
            err = fmax(err, rel_err(from_bf16(y[e]), ref, 0.05));
        }
    }
    report(b, "rotary", shape, ms, 0, 2.0 * (double)count * 2, err, error);
done:
    release(b, in.copies, in.made);
    release(b, buf, 4);
}

/* Training-style LayerNorm: the forward writes the dropout mask, the backward reads it (philox: the backward
 * draws the mask again from the Philox stream instead, and no mask is stored). */
static void bench_ln(bench *b, int64_t rows, int64_t cols, bool backward, bool philox)
{
    if (!wanted(b, backward ? "ln_fused_bwd" : "ln_fused"))
        return;
    char shape[64];
    snprintf(shape, sizeof shape, "T%lld D%lld bf16 p0.1 LayerNorm%s", (long long)rows, (long long)cols,
             philox ? " Philox" : "");
    size_t count = (size_t)(rows * cols);
    const size_t mask_bytes = philox ? 0 : (size_t)rows * HK_DROPOUT_MASK_WORDS(cols) * 4;
    buffer buf[13] = {0};
    input_sets in = {0};
    const float p = 0.1f;
    if (!make_buffer(b, &buf[0], count, HK_DTYPE_BF16, 1) || !make_buffer(b, &buf[1], count, HK_DTYPE_BF16, 1) ||
        !make_buffer(b, &buf[2], (size_t)cols, HK_DTYPE_F32, 1) || !make_buffer(b, &buf[3], (size_t)cols, HK_DTYPE_F32, 1) ||
        !make_output(b, &buf[4], count * 2) || !make_output(b, &buf[5], count * 2) ||
        !make_output(b, &buf[6], (size_t)rows * 4) || !make_output(b, &buf[7], (size_t)rows * 4) ||
        (mask_bytes && !make_output(b, &buf[12], mask_bytes)))
        goto done;
    hk_ln_fused_args a = HK_ARGS_INIT(hk_ln_fused_args);
    a.norm = HK_NORM_LAYER;
    a.dtype = HK_DTYPE_BF16;
    a.rows = rows, a.cols = cols;
    a.x = buf[0].dev, a.residual = buf[1].dev, a.gamma = buf[2].dev, a.beta = buf[3].dev;
    a.y = buf[4].dev, a.residual_out = buf[5].dev, a.mean = buf[6].dev, a.rstd = buf[7].dev;
    a.dropout_p = p, a.seed = 1234, a.offset = 0;
    a.dropout_mask = mask_bytes ? buf[12].dev : NULL;
    const char *error;
    if (!backward) {
        if (!make_sets(b, &in, (const buffer *[]){&buf[0], &buf[1], &buf[2], &buf[3]}, 4))
            goto done;
        hk_ln_fused_args per_set[MAX_SETS];
        for (int s = 0; s < in.count; ++s) {
            per_set[s] = a;
            per_set[s].x = in.dev[s][0], per_set[s].residual = in.dev[s][1];
            per_set[s].gamma = in.dev[s][2], per_set[s].beta = in.dev[s][3];
        }
        float ms = time_op(b, (op_fn)hk_ln_fused, per_set, sizeof per_set[0], in.count, &error);
        double err = 0;
        if (!error && read_back(b, &buf[4]) && read_back(b, &buf[5])) {
            /* Rows are checked from the library's own residual_out (z), which fixes the dropout mask. */
            for (int s = 0; s < 8; ++s) {
                int64_t r = (int64_t)((uniform(b) + 1) * 0.5 * rows);
                const uint16_t *z = (const uint16_t *)buf[5].host + r * cols, *y = (const uint16_t *)buf[4].host + r * cols;
                double mean = 0, var = 0;
                for (int64_t c = 0; c < cols; ++c)
                    mean += from_bf16(z[c]);
                mean /= (double)cols;
                for (int64_t c = 0; c < cols; ++c)
                    var += (from_bf16(z[c]) - mean) * (from_bf16(z[c]) - mean);
                double rstd = 1.0 / sqrt(var / (double)cols + 1e-5);
                for (int64_t c = 0; c < cols; ++c) {
                    double ref = (from_bf16(z[c]) - mean) * rstd * ((float *)buf[2].host)[c] + ((float *)buf[3].host)[c];
                    err = fmax(err, rel_err(from_bf16(y[c]), ref, 1.0));
                }
            }
        }
        /* x and residual read, y and residual_out written, plus the row statistics and the mask */
        report(b, "ln_fused", shape, ms, 0, 4.0 * (double)count * 2 + 8.0 * (double)rows + (double)mask_bytes, err,
               error);
        goto done;
    }
    if (hk_ln_fused(b->ctx, &a) != HK_OK) {
        report(b, "ln_fused_bwd", shape, 0, 0, 0, 0, hk_last_error());
        goto done;
    }
    hk_ln_fused_bwd_args g = HK_ARGS_INIT(hk_ln_fused_bwd_args);
    g.norm = HK_NORM_LAYER;
    g.dtype = HK_DTYPE_BF16;
    g.rows = rows, g.cols = cols;
    g.z = a.residual_out, g.gamma = a.gamma, g.mean = a.mean, g.rstd = a.rstd;
    g.dropout_p = p, g.seed = a.seed, g.offset = a.offset;
    g.dropout_mask = a.dropout_mask;
    /* inputs: dy, and the forward's z, mean, rstd (buf[5] to buf[7]) and mask (buf[12]) with gamma */
    if (!make_buffer(b, &buf[8], count, HK_DTYPE_BF16, 1) || !make_output(b, &buf[9], count * 2) ||
        !make_output(b, &buf[10], count * 2) || !make_output(b, &buf[11], (size_t)cols * 8) ||
        !make_sets(b, &in, (const buffer *[]){&buf[8], &buf[5], &buf[2], &buf[6], &buf[7], &buf[12]}, mask_bytes ? 6 : 5))
        goto done;
    g.dy = buf[8].dev, g.dx = buf[9].dev, g.dresidual = buf[10].dev;
    g.dgamma = buf[11].dev, g.dbeta = (float *)buf[11].dev + cols;
    size_t ws = 0;
    void *workspace = NULL;
    if (hk_ln_fused_bwd_workspace_size(b->ctx, &g, &ws) != HK_OK) {
        report(b, "ln_fused_bwd", shape, 0, 0, 0, 0, hk_last_error());
        goto done;
    }
    if (ws && hk_malloc(b->ctx, &workspace, ws) != HK_OK)
        goto done;
    g.workspace = workspace, g.workspace_size = ws;
    hk_ln_fused_bwd_args per_set[MAX_SETS];
    for (int s = 0; s < in.count; ++s) {
        per_set[s] = g;
        per_set[s].dy = in.dev[s][0], per_set[s].z = in.dev[s][1], per_set[s].gamma = in.dev[s][2];
        per_set[s].mean = in.dev[s][3], per_set[s].rstd = in.dev[s][4];
        if (mask_bytes)
            per_set[s].dropout_mask = in.dev[s][5];
    }
    float ms = time_op(b, (op_fn)hk_ln_fused_bwd, per_set, sizeof per_set[0], in.count, &error);
    double err = 0;
    if (!error && read_back(b, &buf[9]) && read_back(b, &buf[10])) {
        /* dx must equal dresidual where kept (scaled by 1/(1-p)) and be exactly 0 where dropped. */
        const uint16_t *dx = buf[9].host, *dz = buf[10].host;
        for (size_t i = 0; i < count; i += 97) {
            double got = from_bf16(dx[i]), z = from_bf16(dz[i]);
            err = fmax(err, got == 0 ? 0 : rel_err(got, z / (1.0 - p), 0.05));
        }
    }
    hk_free(b->ctx, workspace);
    /* dy and z read, dx and dresidual written, the mask read; gamma and statistics are negligible */
    report(b, "ln_fused_bwd", shape, ms, 0, 4.0 * (double)count * 2 + (double)mask_bytes, err, error);
done:
    release(b, in.copies, in.made);
    release(b, buf, 13);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    bench b = {.first_row = true, .rng = 0x9E3779B97F4A7C15ull, .rotation_bytes = (size_t)512 << 20};
    hk_context_options opts = HK_ARGS_INIT(hk_context_options);
    int repeats = 0;
    for (int i = 1; i < argc; ++i) {
        long value = 0;
        if (strcmp(argv[i], "--json") == 0) {
            b.json = true;
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            b.only = argv[++i];
        } else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc && parse_count(argv[++i], MAX_REPEATS, &value)) {
            repeats = (int)value;
        } else if (strcmp(argv[i], "--rotate-mib") == 0 && i + 1 < argc && parse_count(argv[++i], 1L << 20, &value)) {
            b.rotation_bytes = (size_t)value << 20;
        } else if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
            const char *name = argv[++i];
            hk_backend all[] = {HK_BACKEND_AUTO, HK_BACKEND_CPU, HK_BACKEND_HIP, HK_BACKEND_CUDA, HK_BACKEND_EMULATOR};
            opts.backend = (hk_backend)-1;
            for (size_t j = 0; j < sizeof all / sizeof all[0]; ++j)
                if (strcmp(name, hk_backend_name(all[j])) == 0)
                    opts.backend = all[j];
        } else {
            printf("usage: hk-bench [--json] [--backend auto|cpu|hip|cuda|emulator] [--only OP[,OP...]]\n"
                   "                [--repeats N] [--rotate-mib N]\n"
                   "Times every op on the chosen backend (default: the best one here) and checks a sample of each\n"
                   "output against float64 math. Small sizes on the CPU, realistic ones on a GPU.\n"
                   "Each op runs warm-up calls, then timed calls enqueued back to back, each between its own pair\n"
                   "of events; the median is reported. On a GPU the calls rotate over copies of the op's inputs\n"
                   "(>= 512 MiB in all, more than the last-level cache), and a first row measures device-to-device\n"
                   "copy bandwidth (a 2 GiB copy's time minus a 512 MiB one's): the memory-bound rows also give their\n"
                   "rate as a share of it.\n"
                   "  --only OP,...    only these ops (gemm, attn_fwd, attn_bwd, rotary, ln_fused, ln_fused_bwd)\n"
                   "  --repeats N      timed calls per row, 1 to 64 (default 31 on a GPU, 3 on the CPU)\n"
                   "  --rotate-mib N   the input sets of an op hold at least N MiB (default 512)\n");
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    if (hk_context_create(&opts, &b.ctx) != HK_OK) {
        fprintf(stderr, "hk-bench: %s\n", hk_last_error());
        return 1;
    }
    hk_backend backend = hk_context_backend(b.ctx);
    b.gpu = backend == HK_BACKEND_HIP || backend == HK_BACKEND_CUDA;
    /* the arch's native e4m3: gfx942 has only the fnuz variant */
    hk_dtype fp8 = strcmp(hk_context_arch(b.ctx), "gfx942") == 0 ? HK_DTYPE_FP8_E4M3FNUZ : HK_DTYPE_FP8_E4M3;
    b.warmup = b.gpu ? 5 : 1;
    b.repeats = repeats ? repeats : b.gpu ? 31 : 3;
    /* device state at the start (clocks, power, temperature): explains a slow run on a throttled GPU */
    hk_device_telemetry t;
    char tele[256];
    const bool have_tele = format_telemetry(b.ctx, &t, tele, sizeof tele);
    if (b.json) {
        printf("{\"version\": \"%s\", \"backend\": \"%s\", \"arch\": \"%s\", \"device\": \"%s\", ",
               hk_version_string(), hk_backend_name(backend), hk_context_arch(b.ctx), hk_context_device_name(b.ctx));
        if (have_tele)
            printf("\"telemetry\": {\"core_clock_mhz\": %.0f, \"memory_clock_mhz\": %.0f, \"power_w\": %.1f, "
                   "\"temperature_c\": %.1f, \"memory_total_bytes\": %.0f, \"memory_used_bytes\": %.0f}, ",
                   t.core_clock_mhz, t.memory_clock_mhz, t.power_w, t.temperature_c, t.memory_total_bytes,
                   t.memory_used_bytes);
        printf("\"results\": [");
    } else {
        char rotation[64] = "";
        if (b.gpu)
            snprintf(rotation, sizeof rotation, ", inputs rotated over >= %zu MiB", b.rotation_bytes >> 20);
        printf("libhk %s on %s (%s, %s backend); median of %d back-to-back runs%s%s%s\n\n"
               "%-13s %-40s %10s %16s%s   %-9s\n",
               hk_version_string(), hk_context_device_name(b.ctx), hk_context_arch(b.ctx), hk_backend_name(backend),
               b.repeats, rotation, have_tele ? "; " : "", have_tele ? tele : "", "op", "shape", "ms", "rate",
               b.gpu ? "   of copy" : "", "max err");
    }
    if (b.gpu) {
        bench_copy(&b);
        bench_gemm(&b, 4096, 4096, 4096, HK_DTYPE_BF16, false);
        bench_gemm(&b, 8192, 8192, 8192, HK_DTYPE_BF16, false);
        bench_gemm(&b, 8192, 8192, 8192, fp8, true);
        bench_gemm(&b, 8192, 8192, 8192, fp8, false);
        bench_gemm(&b, 256, 256, 16384, HK_DTYPE_BF16, false);
        bench_attn(&b, 16, 16, 16, 4096, 128, false, false);
        bench_attn(&b, 16, 16, 16, 4096, 128, true, false);
        bench_attn(&b, 16, 16, 16, 4096, 128, false, true);
        bench_rotary(&b, 16, 4096, 16, 128, HK_DTYPE_F32);
        bench_rotary(&b, 4, 8192, 32, 128, HK_DTYPE_F32);
        bench_rotary(&b, 16, 4096, 16, 128, HK_DTYPE_BF16);
        bench_rotary(&b, 4, 8192, 32, 128, HK_DTYPE_BF16);
        bench_ln(&b, 65536, 1024, false, false);
        bench_ln(&b, 65536, 4096, false, false);
        bench_ln(&b, 32768, 8192, false, false);
        bench_ln(&b, 65536, 1024, true, false);
        bench_ln(&b, 65536, 4096, true, false);
        bench_ln(&b, 32768, 8192, true, false);
        bench_ln(&b, 65536, 1024, true, true);
        bench_ln(&b, 65536, 4096, true, true);
        bench_ln(&b, 32768, 8192, true, true);
    } else {
        bench_gemm(&b, 512, 512, 512, HK_DTYPE_BF16, false);
        bench_gemm(&b, 256, 256, 256, fp8, false);
        bench_attn(&b, 1, 4, 4, 512, 64, false, false);
        bench_attn(&b, 1, 8, 2, 512, 64, true, false);
        bench_attn(&b, 1, 4, 4, 256, 64, true, true);
        bench_rotary(&b, 2, 512, 8, 128, HK_DTYPE_F32);
        bench_rotary(&b, 2, 512, 8, 128, HK_DTYPE_BF16);
        bench_ln(&b, 4096, 1024, false, false);
        bench_ln(&b, 4096, 1024, true, false);
    }
    printf(b.json ? "\n]}\n" : "\n");
    hk_context_destroy(b.ctx);
    return 0;
}
