/* rocm-smi telemetry (backends/hip/smi.c) against the real librocm_smi64 of this machine, on whichever path the
 * machine takes, decided at run time by whether a GPU is bound to the amdgpu kernel driver (what rocm-smi
 * monitors). Without one, telemetry must fail fast with HK_ERR_UNSUPPORTED, name what rocm-smi answered, leave the
 * readings untouched and print nothing, even though rsmi_init itself writes to stderr there. With one and rocm-smi
 * installed, it must return readings of device 0: VRAM always, every other field in a physical range or -1 (hk.h:
 * unreadable). Either way the second call answers from the first's initialisation. */
#include "internal.h"

#include <dirent.h>
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

/* Runs hk_hip_telemetry(device) with fds 1 and 2 on a pipe; returns its status, what it wrote, and the time taken. */
static hk_status quiet_call(int device, hk_device_telemetry *t, char *output, size_t size, double *seconds)
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
    hk_status st = hk_hip_telemetry(device, t);
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

/* A DRM card whose device is driven by amdgpu: the devices rocm-smi enumerates (connector entries such as
 * card0-DP-1 share their card's device). */
static bool amdgpu_present(void)
{
    DIR *dir = opendir("/sys/class/drm");
    if (!dir)
        return false;
    bool found = false;
    for (struct dirent *e; !found && (e = readdir(dir));) {
        if (strncmp(e->d_name, "card", 4) != 0 || strchr(e->d_name, '-'))
            continue;
        char path[512], target[512];
        snprintf(path, sizeof path, "/sys/class/drm/%s/device/driver", e->d_name);
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        const char *base = strrchr(target, '/');
        found = strcmp(base ? base + 1 : target, "amdgpu") == 0;
    }
    closedir(dir);
    return found;
}

/* A reading that is -1 (unreadable) or within [lo, hi]; present counts the readable ones. */
static void check_reading(const char *what, double v, double lo, double hi, int *present)
{
    if (v == -1) {
        printf("%s: unreadable\n", what);
        return;
    }
    if (!(v >= lo && v <= hi))
        fail_msg("%s %g outside [%g, %g]", what, v, lo, hi);
    ++*present;
}

static void check_readings(const hk_device_telemetry *t)
{
    printf("sclk %.0f MHz, mclk %.0f MHz, %.1f W, %.1f C, VRAM %.0f / %.0f bytes\n", t->core_clock_mhz,
           t->memory_clock_mhz, t->power_w, t->temperature_c, t->memory_used_bytes, t->memory_total_bytes);
    /* amdgpu reports VRAM for every device it drives (APUs: their carve-out); sensors may be absent (virtual
     * functions expose no clocks or hwmon), and ROCm releases differ in which power and temperature they read */
    if (!(t->memory_total_bytes > 0 && t->memory_total_bytes <= 0x1p41))
        fail_msg("VRAM total %g bytes; want a reading in (0, 2 TiB]", t->memory_total_bytes);
    if (!(t->memory_used_bytes >= 0 && t->memory_used_bytes <= t->memory_total_bytes))
        fail_msg("VRAM used %g bytes; want a reading in [0, total %g]", t->memory_used_bytes, t->memory_total_bytes);
    int present = 0;
    check_reading("core clock (MHz)", t->core_clock_mhz, 1, 10000, &present);
    check_reading("memory clock (MHz)", t->memory_clock_mhz, 1, 20000, &present);
    check_reading("power (W)", t->power_w, 0, 3000, &present);
    check_reading("temperature (C)", t->temperature_c, 1, 150, &present);
    printf("%d of 4 sensor readings present\n", present);
}

static void test_telemetry(void **state)
{
    (void)state;
    const bool gpu = amdgpu_present();
    /* the loader's own search; smi.c also tries /opt/rocm and versioned names */
    const bool have_smi = dlopen("librocm_smi64.so", RTLD_NOW | RTLD_LOCAL) != NULL; /* kept: smi.c reloads it */
    printf("amdgpu device: %s; librocm_smi64.so loadable: %s\n", gpu ? "yes" : "no", have_smi ? "yes" : "no");

    for (int call = 0; call < 2; ++call) { /* the first loads and initialises; the second answers from cache */
        hk_device_telemetry t = {sizeof t, -1, -1, -1, -1, -1, -1};
        char output[1024];
        double seconds = 0;
        hk_status st = quiet_call(0, &t, output, sizeof output, &seconds);
        const char *msg = hk_last_error();
        printf("call %d: %s in %.3f s: %s\n", call, hk_status_string(st), seconds, st == HK_OK ? "" : msg);
        if (output[0])
            fail_msg("hk_hip_telemetry printed:\n%s", output);
        /* failing is fast everywhere; reading many devices' sysfs for the first time may take longer */
        const double limit = st == HK_OK && call == 0 ? 10.0 : 2.0;
        if (seconds > limit)
            fail_msg("hk_hip_telemetry took %.3f s; at most %.0f s on this path", seconds, limit);
        if (st == HK_OK) {
            if (!gpu)
                fail_msg("hk_hip_telemetry read a device with no amdgpu device present");
            check_readings(&t);
            continue;
        }
        assert_int_equal(st, HK_ERR_UNSUPPORTED);
        assert_non_null(strstr(msg, "rocm-smi: "));
        assert_true(t.core_clock_mhz == -1 && t.memory_clock_mhz == -1 && t.power_w == -1 && t.temperature_c == -1 &&
                    t.memory_total_bytes == -1 && t.memory_used_bytes == -1); /* untouched */
        if (gpu && have_smi)
            fail_msg("rocm-smi is installed and an amdgpu device is present, yet: %s", msg);
        /* the message names rocm-smi's own answer: rsmi_init's status, or that it monitors no device */
        if (have_smi && !strstr(msg, "rsmi_init returned ") && !strstr(msg, "monitors 0 devices"))
            fail_msg("no amdgpu device: \"%s\" does not name rocm-smi's answer", msg);
        if (!have_smi && !strstr(msg, "not found") && !strstr(msg, "rsmi_init returned ") &&
            !strstr(msg, "monitors 0 devices"))
            fail_msg("\"%s\" names neither a missing rocm-smi nor its answer", msg);
    }

    /* a device past those monitored: refused with the count, the readings untouched */
    hk_device_telemetry t = {sizeof t, -1, -1, -1, -1, -1, -1};
    char output[1024];
    double seconds = 0;
    assert_int_equal(quiet_call(1 << 20, &t, output, sizeof output, &seconds), HK_ERR_UNSUPPORTED);
    assert_true(t.core_clock_mhz == -1 && t.memory_total_bytes == -1 && output[0] == '\0');
    assert_non_null(strstr(hk_last_error(), "rocm-smi: "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_telemetry)};
    return cmocka_run_group_tests_name("amd-rocm-smi", tests, NULL, NULL);
}
