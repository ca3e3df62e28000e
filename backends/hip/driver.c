/* HIP runtime glue behind hk_gpu_api. libamdhip64 is dlopened on first use (the host's ROCm under /opt/rocm
 * first), never linked, so the library loads and falls back elsewhere on machines without ROCm. The few HIP
 * types and constants used are declared here; the attribute values are those of ROCm 5.x and 6.x alike. */
#include "hip_internal.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int hipError_t; /* hipSuccess == 0 */
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef struct ihipStream_t *hipStream_t;
typedef struct ihipEvent_t *hipEvent_t;

enum {
    HK_HIP_ATTR_MULTIPROCESSOR_COUNT = 63,
    HK_HIP_MEMCPY_H2D = 1,
    HK_HIP_MEMCPY_D2H = 2,
    HK_HIP_MEMCPY_D2D = 3,
    HK_HIP_PROPS_BYTES = 8192, /* larger than hipDeviceProp_t of ROCm 5 (792) and 6 (R0600) */
};

#define HK_HIP_FUNCTIONS(X)                                                                                   \
    X(hipInit, hipError_t, (unsigned))                                                                        \
    X(hipRuntimeGetVersion, hipError_t, (int *))                                                              \
    X(hipGetErrorName, const char *, (hipError_t))                                                            \
    X(hipGetErrorString, const char *, (hipError_t))                                                          \
    X(hipGetDeviceCount, hipError_t, (int *))                                                                 \
    X(hipSetDevice, hipError_t, (int))                                                                        \
    X(hipDeviceGetAttribute, hipError_t, (int *, int, int))                                                   \
    X(hipModuleLoadData, hipError_t, (hipModule_t *, const void *))                                           \
    X(hipModuleUnload, hipError_t, (hipModule_t))                                                             \
    X(hipModuleGetFunction, hipError_t, (hipFunction_t *, hipModule_t, const char *))                         \
    X(hipModuleLaunchKernel, hipError_t,                                                                      \
      (hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, hipStream_t,      \
       void **, void **))                                                                                     \
    X(hipMalloc, hipError_t, (void **, size_t))                                                               \
    X(hipFree, hipError_t, (void *))                                                                          \
    X(hipMemcpy, hipError_t, (void *, const void *, size_t, int))                                             \
    X(hipMemset, hipError_t, (void *, int, size_t))                                                           \
    X(hipStreamSynchronize, hipError_t, (hipStream_t))                                                        \
    X(hipEventCreate, hipError_t, (hipEvent_t *))                                                             \
    X(hipEventRecord, hipError_t, (hipEvent_t, hipStream_t))                                                  \
    X(hipEventSynchronize, hipError_t, (hipEvent_t))                                                          \
    X(hipEventElapsedTime, hipError_t, (float *, hipEvent_t, hipEvent_t))                                     \
    X(hipEventDestroy, hipError_t, (hipEvent_t))

typedef struct hk_hip_lib {
    void *handle;
    const char *path;
#define HK_HIP_FIELD(name, ret, args) ret(*name) args;
    HK_HIP_FUNCTIONS(HK_HIP_FIELD)
#undef HK_HIP_FIELD
    /* ROCm 6 renamed the properties entry point when hipDeviceProp_t changed layout; either may be present. */
    hipError_t (*get_props)(void *props, int device);
} hk_hip_lib;

static hk_hip_lib lib;
static hk_status load_status = HK_ERR_NO_DEVICE;
static char load_why[256];
static int device_count;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static const char *const lib_paths[] = {"/opt/rocm/lib/libamdhip64.so", "libamdhip64.so", "libamdhip64.so.6",
                                        "libamdhip64.so.5"};

/* hipInit of some runtimes prints to stderr when there is no GPU: load_runtime runs it quietly (once, under
 * pthread_once). */
int hk_hip_quiet_begin(void)
{
    int saved = dup(2);
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (saved >= 0 && null >= 0)
        dup2(null, 2);
    if (null >= 0)
        close(null);
    return saved;
}

void hk_hip_quiet_end(int saved)
{
    if (saved >= 0) {
        dup2(saved, 2);
        close(saved);
    }
}

static void load_runtime(void)
{
    for (size_t i = 0; i < sizeof lib_paths / sizeof lib_paths[0] && !lib.handle; ++i) {
        lib.handle = dlopen(lib_paths[i], RTLD_NOW | RTLD_LOCAL);
        lib.path = lib_paths[i];
    }
    if (!lib.handle) {
        hk_format(load_why, sizeof load_why, "libamdhip64.so not found (ROCm runtime not installed)");
        return;
    }
#define HK_HIP_LOAD(name, ret, args)                                                                          \
    if (!(*(void **)&lib.name = dlsym(lib.handle, #name))) {                                                  \
        hk_format(load_why, sizeof load_why, "%s lacks %s", lib.path, #name);                                 \
        return;                                                                                               \
    }
    HK_HIP_FUNCTIONS(HK_HIP_LOAD)
#undef HK_HIP_LOAD
    *(void **)&lib.get_props = dlsym(lib.handle, "hipGetDevicePropertiesR0600");
    if (!lib.get_props)
        *(void **)&lib.get_props = dlsym(lib.handle, "hipGetDeviceProperties");

    int version = 0;
    lib.hipRuntimeGetVersion(&version);
    char runtime[64];
    hk_format(runtime, sizeof runtime, "HIP runtime %d.%d.%d", version / 10000000, version / 100000 % 100,
              version % 100000);
    int saved = hk_hip_quiet_begin();
    hipError_t init = lib.hipInit(0);
    hipError_t count = init == 0 ? lib.hipGetDeviceCount(&device_count) : 0;
    hk_hip_quiet_end(saved);
    if (init != 0) {
        hk_format(load_why, sizeof load_why, "%s loaded (%s) but hipInit returned %d (%s)", lib.path, runtime, init,
                  init == 100 || init == 101 ? "no AMD GPU" : lib.hipGetErrorName(init));
        return;
    }
    if (count != 0 || device_count < 1) {
        hk_format(load_why, sizeof load_why, "%s loaded (%s) but hipGetDeviceCount returned %d with %d devices (no AMD GPU)",
                  lib.path, runtime, count, device_count);
        return;
    }
    hk_format(load_why, sizeof load_why, "%s (%s), %d device%s", lib.path, runtime, device_count,
              device_count == 1 ? "" : "s");
    load_status = HK_OK;
}

hk_status hk_hip_probe(char *why, size_t why_size)
{
    pthread_once(&load_once, load_runtime);
    hk_format(why, why_size, "%s", load_why);
    return load_status;
}

/* Translate a HIP error into hk_last_error(). */
static hk_status check(hipError_t e, const char *what)
{
    if (e == 0)
        return HK_OK;
    return hk_fail(HK_ERR_RUNTIME, "hip: %s failed: %s (%s, %d)", what, lib.hipGetErrorString(e), lib.hipGetErrorName(e), e);
}

typedef struct hk_hip_dev {
    int index;
} hk_hip_dev;

/* gcnArchName moved between the ROCm 5 and 6 property layouts: find "gfx<id>" past the leading name[256]
 * (present in both) instead of trusting one offset, and drop the ":sramecc+:xnack-" features. */
static void arch_from_props(const unsigned char *props, char *arch, size_t arch_size)
{
    for (size_t i = 256; i + 6 < HK_HIP_PROPS_BYTES; ++i) {
        if (memcmp(props + i, "gfx", 3) != 0 || (i > 0 && props[i - 1] != 0))
            continue;
        size_t n = 3;
        while (i + n < HK_HIP_PROPS_BYTES && ((props[i + n] >= '0' && props[i + n] <= '9') ||
                                              (props[i + n] >= 'a' && props[i + n] <= 'f')))
            ++n;
        if (n >= 6) {
            hk_format(arch, arch_size, "%.*s", (int)n, (const char *)props + i);
            return;
        }
    }
    hk_format(arch, arch_size, "unknown-amd");
}

static hk_status hip_open(int index, void **dev, char *arch, size_t arch_size, char *name, size_t name_size)
{
    char why[256];
    hk_status st = hk_hip_probe(why, sizeof why);
    if (st != HK_OK)
        return hk_fail(st, "hip: %s", why);
    if (index < 0 || index >= device_count)
        return hk_fail(HK_ERR_NO_DEVICE, "hip: device_index %d, but the runtime sees %d device%s", index, device_count,
                       device_count == 1 ? "" : "s");
    if ((st = check(lib.hipSetDevice(index), "hipSetDevice")) != HK_OK)
        return st;
    unsigned char *props = calloc(1, HK_HIP_PROPS_BYTES);
    if (!props)
        return hk_fail(HK_ERR_OUT_OF_MEMORY, "hip: no memory for the device properties");
    if (lib.get_props && lib.get_props(props, index) == 0) {
        hk_format(name, name_size, "%.255s", (const char *)props);
        arch_from_props(props, arch, arch_size);
    } else {
        hk_format(name, name_size, "AMD GPU %d", index);
        hk_format(arch, arch_size, "unknown-amd");
    }
    free(props);
    hk_hip_dev *d = calloc(1, sizeof *d);
    if (!d)
        return hk_fail(HK_ERR_OUT_OF_MEMORY, "hip: no memory for the device state");
    d->index = index;
    *dev = d;
    return HK_OK;
}

static void hip_close(void *dev) { free(dev); }

static hk_status hip_bind(void *dev) { return check(lib.hipSetDevice(((hk_hip_dev *)dev)->index), "hipSetDevice"); }

static hk_status hip_module_load(void *dev, const void *image, size_t bytes, void **module)
{
    (void)dev;
    (void)bytes;
    return check(lib.hipModuleLoadData((hipModule_t *)module, image), "hipModuleLoadData");
}

static void hip_module_unload(void *dev, void *module)
{
    (void)dev;
    lib.hipModuleUnload(module);
}

static hk_status hip_function(void *dev, void *module, const char *kernel, void **fn)
{
    (void)dev;
    hipError_t e = lib.hipModuleGetFunction((hipFunction_t *)fn, module, kernel);
    if (e != 0)
        return hk_fail(HK_ERR_RUNTIME, "hip: kernel %s not found in its code object: %s", kernel, lib.hipGetErrorString(e));
    return HK_OK;
}

/* AMD needs no opt-in for large LDS: a kernel may use the whole per-workgroup LDS (64 KiB / 160 KiB). */
static hk_status hip_set_shared_limit(void *dev, void *fn, unsigned bytes)
{
    (void)dev;
    (void)fn;
    (void)bytes;
    return HK_OK;
}

static hk_status hip_launch(void *dev, void *fn, const unsigned grid[3], const unsigned block[3], unsigned shared_bytes,
                            void *stream, void **params)
{
    (void)dev;
    return check(lib.hipModuleLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_bytes,
                                           stream, params, NULL),
                 "hipModuleLaunchKernel");
}

static hk_status hip_alloc(void *dev, void **ptr, size_t bytes)
{
    (void)dev;
    hipError_t e = lib.hipMalloc(ptr, bytes);
    if (e == 2 /* hipErrorOutOfMemory */)
        return hk_fail(HK_ERR_OUT_OF_MEMORY, "hip: hipMalloc of %zu bytes: %s", bytes, lib.hipGetErrorString(e));
    return check(e, "hipMalloc");
}

static hk_status hip_release(void *dev, void *ptr)
{
    (void)dev;
    return check(lib.hipFree(ptr), "hipFree");
}

static hk_status hip_copy(void *dev, void *dst, const void *src, size_t bytes, hk_copy_kind kind)
{
    (void)dev;
    int k = kind == HK_COPY_HOST_TO_DEVICE ? HK_HIP_MEMCPY_H2D
            : kind == HK_COPY_DEVICE_TO_HOST ? HK_HIP_MEMCPY_D2H : HK_HIP_MEMCPY_D2D;
    return check(lib.hipMemcpy(dst, src, bytes, k), "hipMemcpy");
}

static hk_status hip_fill(void *dev, void *ptr, int value, size_t bytes)
{
    (void)dev;
    return check(lib.hipMemset(ptr, value, bytes), "hipMemset");
}

static hk_status hip_sync(void *dev, void *stream)
{
    (void)dev;
    return check(lib.hipStreamSynchronize(stream), "hipStreamSynchronize");
}

static hk_status hip_event_create(void *dev, void **event)
{
    (void)dev;
    return check(lib.hipEventCreate((hipEvent_t *)event), "hipEventCreate");
}

static hk_status hip_event_record(void *dev, void *event, void *stream)
{
    (void)dev;
    return check(lib.hipEventRecord(event, stream), "hipEventRecord");
}

static hk_status hip_event_elapsed(void *dev, void *start, void *end, float *ms)
{
    (void)dev;
    hk_status st = check(lib.hipEventSynchronize(end), "hipEventSynchronize");
    return st != HK_OK ? st : check(lib.hipEventElapsedTime(ms, start, end), "hipEventElapsedTime");
}

static void hip_event_destroy(void *dev, void *event)
{
    (void)dev;
    lib.hipEventDestroy(event);
}

static int64_t hip_attribute(void *dev, hk_gpu_attr attr)
{
    const int index = ((hk_hip_dev *)dev)->index;
    int v = 0;
    switch (attr) {
    case HK_GPU_ATTR_MULTIPROCESSORS: lib.hipDeviceGetAttribute(&v, HK_HIP_ATTR_MULTIPROCESSOR_COUNT, index); break;
    case HK_GPU_ATTR_XCDS: {
        /* No runtime attribute before ROCm 6.x: MI300-class parts have 38 CUs per XCD, MI350-class 32. */
        int cus = 0;
        lib.hipDeviceGetAttribute(&cus, HK_HIP_ATTR_MULTIPROCESSOR_COUNT, index);
        v = cus % 38 == 0 && cus >= 228 ? cus / 38 : cus % 32 == 0 && cus >= 256 ? cus / 32 : 1;
        break;
    }
    }
    return v;
}

static const hk_gpu_api hip_api = {
    .name = "hip",
    .open = hip_open,
    .close = hip_close,
    .bind = hip_bind,
    .module_load = hip_module_load,
    .module_unload = hip_module_unload,
    .function = hip_function,
    .set_shared_limit = hip_set_shared_limit,
    .launch = hip_launch,
    .alloc = hip_alloc,
    .release = hip_release,
    .copy = hip_copy,
    .fill = hip_fill,
    .sync = hip_sync,
    .event_create = hip_event_create,
    .event_record = hip_event_record,
    .event_elapsed = hip_event_elapsed,
    .event_destroy = hip_event_destroy,
    .attribute = hip_attribute,
};

const hk_gpu_api *hk_hip_api(void) { return &hip_api; }
