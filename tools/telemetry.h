/* One-line rendering of hk_device_telemetry, shared by hk-info and hk-bench. */
#ifndef HK_TOOLS_TELEMETRY_H
#define HK_TOOLS_TELEMETRY_H

#include <hk.h>

#include <stdio.h>

/* "sclk 2100 MHz, mclk 1300 MHz, 412.0 W, 51.0 C, VRAM 3.1 / 192.0 GiB used"; a field the device did not
 * report (-1) shows as "?". Returns 0 (buf untouched) when the context has no telemetry. */
static int format_telemetry(const hk_context *ctx, hk_device_telemetry *t, char *buf, size_t size)
{
    *t = (hk_device_telemetry)HK_ARGS_INIT(hk_device_telemetry);
    if (hk_context_telemetry(ctx, t) != HK_OK)
        return 0;
    char f[6][24];
    const double v[6] = {t->core_clock_mhz, t->memory_clock_mhz, t->power_w, t->temperature_c,
                         t->memory_used_bytes / 1073741824.0, t->memory_total_bytes / 1073741824.0};
    const char *const fmt[6] = {"%.0f", "%.0f", "%.1f", "%.1f", "%.1f", "%.1f"};
    for (int i = 0; i < 6; ++i) {
        if (v[i] < 0)
            snprintf(f[i], sizeof f[i], "?");
        else
            snprintf(f[i], sizeof f[i], fmt[i], v[i]);
    }
    snprintf(buf, size, "sclk %s MHz, mclk %s MHz, %s W, %s C, VRAM %s / %s GiB used", f[0], f[1], f[2], f[3], f[4],
             f[5]);
    return 1;
}

#endif /* HK_TOOLS_TELEMETRY_H */
