/* Version, names, backend selection (HK_BACKEND override, quiet failure of absent GPU backends, fallback to
 * the CPU), variant and code-object listings, memory and events on every context. */
#include "harness.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---------------------------------------------------------------- capturing fds 1 and 2 */

typedef struct capture { int saved_out, saved_err, rd, wr; } capture;

static void capture_begin(capture *cap)
{
    int fds[2];
    fflush(stdout);
    fflush(stderr);
    if (pipe(fds) != 0)
        abort();
    /* non-blocking both ways: a chatty library must not deadlock the test, and reading an empty pipe returns */
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    fcntl(fds[1], F_SETFL, O_NONBLOCK);
    cap->rd = fds[0];
    cap->wr = fds[1];
    cap->saved_out = dup(1);
    cap->saved_err = dup(2);
    dup2(cap->wr, 1);
    dup2(cap->wr, 2);
}

/* Restores fds 1 and 2; returns what was written meanwhile (NUL-terminated, truncated to size). */
static void capture_end(capture *cap, char *buf, size_t size)
{
    fflush(stdout);
    fflush(stderr);
    dup2(cap->saved_out, 1);
    dup2(cap->saved_err, 2);
    close(cap->saved_out);
    close(cap->saved_err);
    close(cap->wr);
    ssize_t n = read(cap->rd, buf, size - 1);
    buf[n > 0 ? n : 0] = '\0';
    close(cap->rd);
}

/* What the first-ever probes and creations of this process did, recorded before anything else touched the GPU
 * runtimes (th_open_contexts creates an AUTO context). */
typedef struct first_contact {
    hk_backend backend;
    hk_status probe, create;
    char why[512], error[1024];
    hk_backend created_backend;
} first_contact;

static first_contact contact[2]; /* HIP, CUDA */
static hk_status auto_status;
static hk_backend auto_backend;
static char first_output[4096];

static void record_first_contact(void)
{
    static const hk_backend gpus[2] = {HK_BACKEND_HIP, HK_BACKEND_CUDA};
    capture cap;
    unsetenv("HK_BACKEND"); /* defaults only */
    capture_begin(&cap);
    for (int i = 0; i < 2; ++i) {
        first_contact *fc = &contact[i];
        fc->backend = gpus[i];
        fc->probe = hk_probe(gpus[i], fc->why, sizeof fc->why);
        hk_context_options o = HK_ARGS_INIT(hk_context_options);
        o.backend = gpus[i];
        hk_context *ctx = NULL;
        fc->create = hk_context_create(&o, &ctx);
        snprintf(fc->error, sizeof fc->error, "%s", hk_last_error());
        fc->created_backend = ctx ? hk_context_backend(ctx) : HK_BACKEND_AUTO;
        if (fc->create != HK_OK && ctx)
            fc->create = HK_ERR_INTERNAL; /* a failed create must leave *ctx NULL */
        hk_context_destroy(ctx);
    }
    hk_context *ctx = NULL;
    auto_status = hk_context_create(NULL, &ctx);
    auto_backend = ctx ? hk_context_backend(ctx) : HK_BACKEND_AUTO;
    hk_context_destroy(ctx);
    capture_end(&cap, first_output, sizeof first_output);
}

static void test_quiet_gpu_backends(const th_ctx *c, const void *param)
{
    (void)c;
    (void)param;
    if (first_output[0])
        fail_msg("probing/creating GPU contexts printed:\n%s", first_output);
    for (int i = 0; i < 2; ++i) {
        const first_contact *fc = &contact[i];
        const char *name = hk_backend_name(fc->backend);
        printf("%s: probe %s (%s), create %s (%s)\n", name, hk_status_string(fc->probe), fc->why,
               hk_status_string(fc->create), fc->error);
        if (fc->probe == HK_OK) {
            /* a usable device: the explicit context must come up on that backend */
            assert_int_equal(fc->create, HK_OK);
            assert_int_equal(fc->created_backend, fc->backend);
            continue;
        }
        assert_int_equal(fc->probe, HK_ERR_NO_DEVICE);
        assert_true(fc->why[0] != '\0');
        if (fc->create != HK_ERR_NO_DEVICE)
            fail_msg("%s context on a machine without one: %s (%s), want HK_ERR_NO_DEVICE", name,
                     hk_status_string(fc->create), fc->error);
        /* the message says which backend and why */
        if (!strcasestr(fc->error, name) || strlen(fc->error) < strlen(name) + 10)
            fail_msg("%s context failure message \"%s\" does not say why", name, fc->error);
    }
}

static void test_auto_fallback(const th_ctx *c, const void *param)
{
    (void)c;
    (void)param;
    assert_int_equal(auto_status, HK_OK);
    hk_backend want = contact[0].probe == HK_OK ? HK_BACKEND_HIP
                      : contact[1].probe == HK_OK ? HK_BACKEND_CUDA
                                                  : HK_BACKEND_CPU;
    if (auto_backend != want)
        fail_msg("AUTO chose %s, expected %s", hk_backend_name(auto_backend), hk_backend_name(want));
}

static void test_env_override(const th_ctx *c, const void *param)
{
    (void)c;
    (void)param;
    hk_context *ctx = NULL;
    setenv("HK_BACKEND", "cpu", 1);
    hk_status st = hk_context_create(NULL, &ctx);
    assert_int_equal(st, HK_OK);
    assert_int_equal(hk_context_backend(ctx), HK_BACKEND_CPU);
    assert_string_equal(hk_context_arch(ctx), "cpu");
    hk_context_destroy(ctx);

    setenv("HK_BACKEND", "emulator", 1);
    hk_context_options o = HK_ARGS_INIT(hk_context_options);
    o.arch = "gfx950";
    st = hk_context_create(&o, &ctx);
    assert_int_equal(st, HK_OK);
    assert_int_equal(hk_context_backend(ctx), HK_BACKEND_EMULATOR);
    assert_string_equal(hk_context_arch(ctx), "gfx950");
    hk_context_destroy(ctx);

    /* the variable only steers AUTO: an explicit backend wins */
    setenv("HK_BACKEND", "hip", 1);
    o.backend = HK_BACKEND_CPU;
    o.arch = NULL;
    st = hk_context_create(&o, &ctx);
    assert_int_equal(st, HK_OK);
    assert_int_equal(hk_context_backend(ctx), HK_BACKEND_CPU);
    hk_context_destroy(ctx);

    setenv("HK_BACKEND", "no-such-backend", 1);
    ctx = (hk_context *)1;
    st = hk_context_create(NULL, &ctx);
    unsetenv("HK_BACKEND");
    assert_int_equal(st, HK_ERR_INVALID_ARGUMENT);
    assert_null(ctx);
    if (!strstr(hk_last_error(), "HK_BACKEND"))
        fail_msg("message \"%s\" does not name HK_BACKEND", hk_last_error());
}

static void test_version_and_names(const th_ctx *c, const void *param)
{
    (void)c;
    (void)param;
    assert_int_equal(hk_version(), HK_VERSION);
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", HK_VERSION_MAJOR, HK_VERSION_MINOR, HK_VERSION_PATCH);
    assert_string_equal(hk_version_string(), want);

    const char *seen[7];
    for (int s = HK_OK; s <= HK_ERR_INTERNAL; ++s) {
        const char *str = hk_status_string((hk_status)s);
        assert_non_null(str);
        assert_true(str[0] != '\0');
        for (int t = 0; t < s; ++t)
            if (strcmp(seen[t], str) == 0)
                fail_msg("statuses %d and %d share the string \"%s\"", t, s, str);
        seen[s] = str;
    }
    assert_non_null(hk_status_string((hk_status)99));
    assert_true(hk_status_string((hk_status)99)[0] != '\0');
    assert_non_null(hk_status_string((hk_status)-1));

    assert_int_equal(hk_dtype_size(HK_DTYPE_F32), 4);
    assert_int_equal(hk_dtype_size(HK_DTYPE_F16), 2);
    assert_int_equal(hk_dtype_size(HK_DTYPE_BF16), 2);
    assert_int_equal(hk_dtype_size(HK_DTYPE_FP8_E4M3), 1);
    assert_int_equal(hk_dtype_size(HK_DTYPE_FP8_E4M3FNUZ), 1);
    assert_int_equal(hk_dtype_size(HK_DTYPE_NONE), 0);
    assert_int_equal(hk_dtype_size((hk_dtype)99), 0);
    assert_int_equal(hk_dtype_size((hk_dtype)-3), 0);
    for (int t = -1; t <= 6; ++t)
        assert_true(hk_dtype_name((hk_dtype)t) && hk_dtype_name((hk_dtype)t)[0]);
    assert_true(strcmp(hk_dtype_name(HK_DTYPE_FP8_E4M3), hk_dtype_name(HK_DTYPE_FP8_E4M3FNUZ)) != 0);
    for (int b = -1; b <= 5; ++b)
        assert_true(hk_backend_name((hk_backend)b) && hk_backend_name((hk_backend)b)[0]);
    assert_string_equal(hk_backend_name(HK_BACKEND_CPU), "cpu");
    for (int o = -1; o <= HK_OP_COUNT_; ++o)
        assert_true(hk_op_name((hk_op)o) && hk_op_name((hk_op)o)[0]);
    for (int o = 0; o < HK_OP_COUNT_; ++o)
        for (int p = 0; p < o; ++p)
            assert_true(strcmp(hk_op_name((hk_op)o), hk_op_name((hk_op)p)) != 0);
}

static void test_context_info(const th_ctx *c, const void *param)
{
    (void)param;
    const char *arch = hk_context_arch(c->ctx), *name = hk_context_device_name(c->ctx);
    assert_true(arch && arch[0] && name && name[0]);
    if (c->kind == TH_CPU) {
        assert_int_equal(hk_context_backend(c->ctx), HK_BACKEND_CPU);
        assert_string_equal(arch, "cpu");
    } else if (c->kind == TH_EMU) {
        assert_int_equal(hk_context_backend(c->ctx), HK_BACKEND_EMULATOR);
        assert_true(strcmp(arch, "gfx942") == 0 || strcmp(arch, "gfx950") == 0);
    }
    /* variants: the CPU covers every op; every listed variant has a name and a description */
    int per_op[HK_OP_COUNT_] = {0};
    size_t i = 0;
    for (;; ++i) {
        hk_variant_info info = HK_ARGS_INIT(hk_variant_info);
        hk_status st = hk_context_variant(c->ctx, i, &info);
        if (st == HK_ERR_INVALID_ARGUMENT)
            break;
        assert_int_equal(st, HK_OK);
        assert_true((unsigned)info.op < HK_OP_COUNT_);
        assert_true(info.name && info.name[0] && info.description);
        per_op[info.op]++;
        assert_true(i < 10000);
    }
    printf("%s: %zu variants\n", c->label, i);
    if (c->kind == TH_CPU)
        for (int o = 0; o < HK_OP_COUNT_; ++o)
            if (per_op[o] == 0)
                fail_msg("the CPU context has no %s variant", hk_op_name((hk_op)o));
}

static void test_code_objects(const th_ctx *c, const void *param)
{
    (void)c;
    (void)param;
    size_t i = 0;
    for (;; ++i) {
        const char *arch = NULL, *kernels = NULL;
        size_t bytes = 0;
        hk_status st = hk_code_object(i, &arch, &kernels, &bytes);
        if (st == HK_ERR_INVALID_ARGUMENT)
            break;
        assert_int_equal(st, HK_OK);
        assert_true(arch && arch[0] && kernels && bytes > 0);
        printf("code object %zu: %s, %zu bytes, kernels %.60s\n", i, arch, bytes, kernels);
        assert_true(i < 10000);
        assert_int_equal(hk_code_object(i, NULL, NULL, NULL), HK_OK); /* outputs are optional */
    }
}

/* Telemetry: HIP contexts read it through rocm-smi (or say why not); every other context has no source. Either
 * way nothing is printed and the fields are numbers or -1, never stale. */
static void test_telemetry(const th_ctx *c, const void *param)
{
    (void)param;
    hk_device_telemetry t = HK_ARGS_INIT(hk_device_telemetry);
    t.power_w = 12345;
    capture cap;
    char output[512];
    capture_begin(&cap);
    hk_status st = hk_context_telemetry(c->ctx, &t);
    capture_end(&cap, output, sizeof output);
    if (output[0])
        fail_msg("hk_context_telemetry printed:\n%s", output);
    assert_int_equal(t.struct_size, sizeof t);
    if (hk_context_backend(c->ctx) == HK_BACKEND_HIP && st == HK_OK) {
        printf("%s: sclk %.0f MHz, mclk %.0f MHz, %.1f W, %.1f C, VRAM %.0f / %.0f bytes\n", c->label,
               t.core_clock_mhz, t.memory_clock_mhz, t.power_w, t.temperature_c, t.memory_used_bytes,
               t.memory_total_bytes);
        assert_true(t.memory_total_bytes == -1 || t.memory_total_bytes > 0);
        return;
    }
    assert_int_equal(st, HK_ERR_UNSUPPORTED);
    const char *msg = hk_last_error();
    printf("%s: %s\n", c->label, msg);
    if (hk_context_backend(c->ctx) == HK_BACKEND_HIP)
        assert_non_null(strstr(msg, "rocm-smi"));
    else
        assert_non_null(strstr(msg, hk_backend_name(hk_context_backend(c->ctx))));
    const double f[6] = {t.core_clock_mhz, t.memory_clock_mhz, t.power_w, t.temperature_c, t.memory_total_bytes,
                         t.memory_used_bytes};
    for (int i = 0; i < 6; ++i)
        assert_true(f[i] == -1);
}

static void test_memory(const th_ctx *c, const void *param)
{
    (void)param;
    hk_context *ctx = c->ctx;
    enum { N = 1000 };
    unsigned char host[N], back[N];
    void *a = NULL, *b = NULL, *z = (void *)1;
    assert_int_equal(hk_malloc(ctx, &a, N), HK_OK);
    assert_int_equal(hk_malloc(ctx, &b, N), HK_OK);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(hk_malloc(ctx, &z, 0), HK_OK);
    assert_int_equal(hk_free(ctx, z), HK_OK);
    if (c->kind != TH_GPU)
        assert_int_equal((uintptr_t)a % 256, 0);
    for (int i = 0; i < N; ++i)
        host[i] = (unsigned char)(i * 7 + 3);
    assert_int_equal(hk_memcpy(ctx, a, host, N, HK_COPY_HOST_TO_DEVICE), HK_OK);
    assert_int_equal(hk_memset(ctx, b, 0x5A, N), HK_OK);
    assert_int_equal(hk_memcpy(ctx, back, b, N, HK_COPY_DEVICE_TO_HOST), HK_OK);
    for (int i = 0; i < N; ++i)
        assert_int_equal(back[i], 0x5A);
    assert_int_equal(hk_memcpy(ctx, (char *)b + 10, (char *)a + 20, N - 20, HK_COPY_DEVICE_TO_DEVICE), HK_OK);
    assert_int_equal(hk_memcpy(ctx, back, b, N, HK_COPY_DEVICE_TO_HOST), HK_OK);
    for (int i = 0; i < N; ++i)
        assert_int_equal(back[i], i < 10 || i >= N - 10 ? 0x5A : host[i + 10]);
    assert_int_equal(hk_memcpy(ctx, a, host, 0, HK_COPY_HOST_TO_DEVICE), HK_OK);
    assert_int_equal(hk_synchronize(ctx, NULL), HK_OK);

    hk_event *e0 = NULL, *e1 = NULL;
    float ms = -1;
    assert_int_equal(hk_event_create(ctx, &e0), HK_OK);
    assert_int_equal(hk_event_create(ctx, &e1), HK_OK);
    assert_int_equal(hk_event_record(e0, NULL), HK_OK);
    assert_int_equal(hk_memset(ctx, a, 0, N), HK_OK);
    assert_int_equal(hk_event_record(e1, NULL), HK_OK);
    assert_int_equal(hk_event_elapsed_ms(e0, e1, &ms), HK_OK);
    assert_true(ms >= 0 && ms < 60000);
    hk_event_destroy(e0);
    hk_event_destroy(e1);
    assert_int_equal(hk_free(ctx, a), HK_OK);
    assert_int_equal(hk_free(ctx, b), HK_OK);
}

int main(void)
{
    record_first_contact();
    th_open_contexts();
    th_add("gpu_backends_fail_quietly", test_quiet_gpu_backends, NULL, TH_CPU);
    th_add("auto_fallback", test_auto_fallback, NULL, TH_CPU);
    th_add("hk_backend_env_override", test_env_override, NULL, TH_CPU);
    th_add("version_and_names", test_version_and_names, NULL, TH_CPU);
    th_add("code_objects", test_code_objects, NULL, TH_CPU);
    th_add("context_info_and_variants", test_context_info, NULL, TH_ALL);
    th_add("telemetry", test_telemetry, NULL, TH_ALL);
    th_add("memory_and_events", test_memory, NULL, TH_ALL);
    return th_run("context");
}
