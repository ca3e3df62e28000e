/* rocm-smi telemetry (backends/hip/smi.c) against the real librocm_smi64 of this machine: on a host without an
 * AMD GPU it must fail fast with HK_ERR_UNSUPPORTED, name rsmi_init's status, and print nothing even though
 * rsmi_init itself writes to stderr there. On an AMD host it reads the device instead. */
#include "internal.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Runs hk_hip_telemetry(0) with fds 1 and 2 on a pipe; returns its status, what it wrote, and the time taken. */
static hk_status quiet_call(hk_device_telemetry *t, char *output, size_t size, double *seconds)
{
    int fds[2];
    fflush(stdout);
    fflush(stderr);
    assert_int_equal(pipe(fds), 0);
    fcntl(fds[0], F_SETFL, O_NONBLOCK); /* a chatty library must not block on a full pipe */
    fcntl(fds[1], F_SETFL, O_NONBLOCK);
    int saved_out = dup(1), saved_err = dup(2);
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    double t0 = now_s();
    hk_status st = hk_hip_telemetry(0, t);
    *seconds = now_s() - t0;
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    close(fds[1]);
    ssize_t n = read(fds[0], output, size - 1);
    output[n > 0 ? n : 0] = '\0';
    close(fds[0]);
    return st;
}

static void test_telemetry_quiet(void **state)
{
    (void)state;
    /* what this machine is: a loadable rocm-smi and no AMD kernel driver means rsmi_init must fail */
    const bool have_smi = dlopen("librocm_smi64.so", RTLD_NOW | RTLD_LOCAL) != NULL; /* kept: smi.c reloads it */
    const bool no_gpu = access("/dev/kfd", F_OK) != 0;

    for (int call = 0; call < 2; ++call) { /* the first loads and initialises; the second answers from cache */
        hk_device_telemetry t = {sizeof t, -1, -1, -1, -1, -1, -1};
        char output[1024];
        double seconds = 0;
        hk_status st = quiet_call(&t, output, sizeof output, &seconds);
        const char *msg = hk_last_error();
        printf("call %d: %s in %.3f s: %s\n", call, hk_status_string(st), seconds, st == HK_OK ? "" : msg);
        if (output[0])
            fail_msg("hk_hip_telemetry printed:\n%s", output);
        if (seconds > 2.0)
            fail_msg("hk_hip_telemetry took %.3f s", seconds);
        if (st == HK_OK) {
            printf("sclk %.0f MHz, mclk %.0f MHz, %.1f W, %.1f C, VRAM %.0f / %.0f bytes\n", t.core_clock_mhz,
                   t.memory_clock_mhz, t.power_w, t.temperature_c, t.memory_used_bytes, t.memory_total_bytes);
            assert_false(no_gpu);
            continue;
        }
        assert_int_equal(st, HK_ERR_UNSUPPORTED);
        assert_non_null(strstr(msg, "rocm-smi: "));
        if (have_smi && no_gpu)
            assert_non_null(strstr(msg, "rsmi_init returned 8 (no AMD GPU)"));
        assert_true(t.core_clock_mhz == -1 && t.power_w == -1 && t.memory_total_bytes == -1); /* untouched */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_telemetry_quiet)};
    return cmocka_run_group_tests_name("amd-rocm-smi", tests, NULL, NULL);
}
