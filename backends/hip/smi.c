/* Device telemetry of HIP contexts through rocm-smi. librocm_smi64 is dlopened on first use (the host's ROCm
 * under /opt/rocm first), never linked; the few types and enum values used are declared here, checked against
 * rocm_smi.h of ROCm 5.2 and 6.x (the enums only grew at their ends). */
#include "hip_internal.h"

#include <dlfcn.h>
#include <string.h>

typedef int rsmi_status_t; /* RSMI_STATUS_SUCCESS == 0 */

enum {
    HK_RSMI_STATUS_INIT_ERROR = 8,
    HK_RSMI_CLK_TYPE_SYS = 0,
    HK_RSMI_CLK_TYPE_MEM = 4,
    HK_RSMI_TEMP_CURRENT = 0,
    HK_RSMI_TEMP_TYPE_EDGE = 0,
    HK_RSMI_TEMP_TYPE_JUNCTION = 1,
    HK_RSMI_MEM_TYPE_VRAM = 0,
    HK_RSMI_MAX_NUM_FREQUENCIES = 32,
};

typedef struct hk_rsmi_frequencies { /* rsmi_frequencies_t */
    uint32_t num_supported;
    uint32_t current;
    uint64_t frequency[HK_RSMI_MAX_NUM_FREQUENCIES];
} hk_rsmi_frequencies;

#define HK_RSMI_FUNCTIONS(X)                                                                                  \
    X(rsmi_init, (uint64_t))                                                                                  \
    X(rsmi_num_monitor_devices, (uint32_t *))                                                                 \
    X(rsmi_dev_gpu_clk_freq_get, (uint32_t, int, hk_rsmi_frequencies *))                                      \
    X(rsmi_dev_power_ave_get, (uint32_t, uint32_t, uint64_t *))                                               \
    X(rsmi_dev_temp_metric_get, (uint32_t, uint32_t, int, int64_t *))                                         \
    X(rsmi_dev_memory_total_get, (uint32_t, int, uint64_t *))                                                 \
    X(rsmi_dev_memory_usage_get, (uint32_t, int, uint64_t *))

static struct {
    void *handle;
    const char *path;
#define HK_RSMI_FIELD(name, args) rsmi_status_t(*name) args;
    HK_RSMI_FUNCTIONS(HK_RSMI_FIELD)
#undef HK_RSMI_FIELD
    /* ROCm >= 6: MI300-class parts report socket power here and not as an average. Optional. */
    rsmi_status_t (*socket_power)(uint32_t, uint64_t *);
} smi;

static hk_status smi_status = HK_ERR_UNSUPPORTED;
static char smi_why[256];
static uint32_t smi_devices;
static pthread_once_t smi_once = PTHREAD_ONCE_INIT;

static const char *const smi_paths[] = {"/opt/rocm/lib/librocm_smi64.so", "librocm_smi64.so", "librocm_smi64.so.7",
                                        "librocm_smi64.so.6", "librocm_smi64.so.5", "librocm_smi64.so.1"};

static void load_smi(void)
{
    for (size_t i = 0; i < sizeof smi_paths / sizeof smi_paths[0] && !smi.handle; ++i) {
        smi.handle = dlopen(smi_paths[i], RTLD_NOW | RTLD_LOCAL);
        smi.path = smi_paths[i];
    }
    if (!smi.handle) {
        hk_format(smi_why, sizeof smi_why, "librocm_smi64.so not found (rocm-smi not installed)");
        return;
    }
#define HK_RSMI_LOAD(name, args)                                                                              \
    if (!(*(void **)&smi.name = dlsym(smi.handle, #name))) {                                                  \
        hk_format(smi_why, sizeof smi_why, "%s lacks %s", smi.path, #name);                                   \
        return;                                                                                               \
    }
    HK_RSMI_FUNCTIONS(HK_RSMI_LOAD)
#undef HK_RSMI_LOAD
    *(void **)&smi.socket_power = dlsym(smi.handle, "rsmi_dev_current_socket_power_get");

    /* Without a GPU rsmi_init prints "Failed to open drm root directory" and an exception note to stderr. */
    int saved = hk_hip_quiet_begin();
    rsmi_status_t init = smi.rsmi_init(0);
    rsmi_status_t count = init == 0 ? smi.rsmi_num_monitor_devices(&smi_devices) : 0;
    hk_hip_quiet_end(saved);
    if (init != 0) {
        hk_format(smi_why, sizeof smi_why, "rsmi_init returned %d (%s)", init,
                  init == HK_RSMI_STATUS_INIT_ERROR ? "no AMD GPU" : "initialisation failed");
        return;
    }
    if (count != 0) {
        hk_format(smi_why, sizeof smi_why, "rsmi_num_monitor_devices returned %d", count);
        return;
    }
    smi_status = HK_OK;
}

/* Current clock of one domain in MHz, or -1. */
static double clock_mhz(uint32_t dev, int type)
{
    hk_rsmi_frequencies f;
    memset(&f, 0, sizeof f);
    if (smi.rsmi_dev_gpu_clk_freq_get(dev, type, &f) != 0 || f.current >= f.num_supported ||
        f.current >= HK_RSMI_MAX_NUM_FREQUENCIES)
        return -1;
    return (double)f.frequency[f.current] * 1e-6;
}

hk_status hk_hip_telemetry(int device_index, hk_device_telemetry *out)
{
    pthread_once(&smi_once, load_smi);
    if (smi_status != HK_OK)
        return hk_fail(smi_status, "rocm-smi: %s", smi_why);
    /* rocm-smi numbers the GPUs it monitors as the HIP runtime does when no *_VISIBLE_DEVICES mask is set. */
    if (device_index < 0 || (uint32_t)device_index >= smi_devices)
        return hk_fail(HK_ERR_UNSUPPORTED, "rocm-smi: monitors %u devices; no device %d", smi_devices, device_index);
    const uint32_t dev = (uint32_t)device_index;
    uint64_t u = 0, used = 0;
    int64_t milli = 0;

    out->core_clock_mhz = clock_mhz(dev, HK_RSMI_CLK_TYPE_SYS);
    out->memory_clock_mhz = clock_mhz(dev, HK_RSMI_CLK_TYPE_MEM);
    out->power_w = smi.rsmi_dev_power_ave_get(dev, 0, &u) == 0 || (smi.socket_power && smi.socket_power(dev, &u) == 0)
                       ? (double)u * 1e-6
                       : -1;
    /* MI300-class parts have no edge sensor; junction (hotspot) is what throttles, so it comes first. */
    out->temperature_c =
        smi.rsmi_dev_temp_metric_get(dev, HK_RSMI_TEMP_TYPE_JUNCTION, HK_RSMI_TEMP_CURRENT, &milli) == 0 ||
                smi.rsmi_dev_temp_metric_get(dev, HK_RSMI_TEMP_TYPE_EDGE, HK_RSMI_TEMP_CURRENT, &milli) == 0
            ? (double)milli * 1e-3
            : -1;
    out->memory_total_bytes =
        smi.rsmi_dev_memory_total_get(dev, HK_RSMI_MEM_TYPE_VRAM, &u) == 0 ? (double)u : -1;
    out->memory_used_bytes =
        smi.rsmi_dev_memory_usage_get(dev, HK_RSMI_MEM_TYPE_VRAM, &used) == 0 ? (double)used : -1;
    return HK_OK;
}
