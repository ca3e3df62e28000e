/* CUDA driver API glue behind hk_gpu_api. libcuda.so.1 is dlopened on first use and never linked, so the
 * library loads (and falls back to the CPU) on machines without an NVIDIA driver; there is no libcudart.
 * The few driver types and constants used are declared here so that no CUDA header is needed to build. */
#include "internal.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult; /* CUDA_SUCCESS == 0 */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

enum {
    HK_CU_ERROR_STUB_LIBRARY = 34,
    HK_CU_ATTR_MULTIPROCESSOR_COUNT = 16,
    HK_CU_ATTR_CC_MAJOR = 75,
    HK_CU_ATTR_CC_MINOR = 76,
    HK_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED = 8,
    HK_CU_FUNC_ATTR_PREFERRED_SHARED_CARVEOUT = 9,
    HK_CU_EVENT_DEFAULT = 0,
    HK_CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6,
};

/* cuLaunchKernelEx's configuration (cuda.h: CUlaunchAttribute is a 4-byte id, padding to 8, then a 64-byte
 * union whose members include pointers; CUlaunchConfig as below). Only the int value is used. */
typedef struct hk_cu_launch_attribute {
    int id;
    char pad_[4];
    union {
        char bytes[64];
        void *align_;
        int programmatic_stream_serialization_allowed;
    } value;
} hk_cu_launch_attribute;
typedef struct hk_cu_launch_config {
    unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes;
    CUstream stream;
    hk_cu_launch_attribute *attrs;
    unsigned num_attrs;
} hk_cu_launch_config;
/* cuda.h 13.0's layout on 64-bit hosts (the only ones with sm_90 drivers) */
_Static_assert(sizeof(hk_cu_launch_attribute) == 72 && offsetof(hk_cu_launch_attribute, value) == 8,
               "CUlaunchAttribute: id at 0, value at 8, 72 bytes");
_Static_assert(sizeof(void *) != 8 || (offsetof(hk_cu_launch_config, stream) == 32 &&
                                       offsetof(hk_cu_launch_config, attrs) == 40 &&
                                       offsetof(hk_cu_launch_config, num_attrs) == 48 &&
                                       sizeof(hk_cu_launch_config) == 56),
               "CUlaunchConfig: stream at 32, attrs at 40, numAttrs at 48, 56 bytes");

/* Every driver entry point used, with the symbol that carries the current ABI (the _v2 names). */
#define HK_CU_FUNCTIONS(X)                                                                                    \
    X(cuInit, "cuInit", CUresult, (unsigned))                                                                 \
    X(cuGetErrorName, "cuGetErrorName", CUresult, (CUresult, const char **))                                  \
    X(cuGetErrorString, "cuGetErrorString", CUresult, (CUresult, const char **))                              \
    X(cuDeviceGetCount, "cuDeviceGetCount", CUresult, (int *))                                                \
    X(cuDeviceGet, "cuDeviceGet", CUresult, (CUdevice *, int))                                                \
    X(cuDeviceGetName, "cuDeviceGetName", CUresult, (char *, int, CUdevice))                                  \
    X(cuDeviceGetAttribute, "cuDeviceGetAttribute", CUresult, (int *, int, CUdevice))                         \
    X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult, (CUcontext *, CUdevice))                \
    X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", CUresult, (CUdevice))                        \
    X(cuCtxGetCurrent, "cuCtxGetCurrent", CUresult, (CUcontext *))                                            \
    X(cuCtxSetCurrent, "cuCtxSetCurrent", CUresult, (CUcontext))                                              \
    X(cuModuleLoadData, "cuModuleLoadData", CUresult, (CUmodule *, const void *))                             \
    X(cuModuleUnload, "cuModuleUnload", CUresult, (CUmodule))                                                 \
    X(cuModuleGetFunction, "cuModuleGetFunction", CUresult, (CUfunction *, CUmodule, const char *))           \
    X(cuFuncSetAttribute, "cuFuncSetAttribute", CUresult, (CUfunction, int, int))                             \
    X(cuLaunchKernel, "cuLaunchKernel", CUresult,                                                             \
      (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **,  \
       void **))                                                                                              \
    X(cuMemAlloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr *, size_t))                                         \
    X(cuMemFree, "cuMemFree_v2", CUresult, (CUdeviceptr))                                                     \
    X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", CUresult, (CUdeviceptr, const void *, size_t))                         \
    X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", CUresult, (void *, CUdeviceptr, size_t))                               \
    X(cuMemcpyDtoD, "cuMemcpyDtoD_v2", CUresult, (CUdeviceptr, CUdeviceptr, size_t))                          \
    X(cuMemsetD8, "cuMemsetD8_v2", CUresult, (CUdeviceptr, unsigned char, size_t))                            \
    X(cuMemsetD32Async, "cuMemsetD32Async", CUresult, (CUdeviceptr, unsigned, size_t, CUstream))              \
    X(cuStreamSynchronize, "cuStreamSynchronize", CUresult, (CUstream))                                       \
    X(cuEventCreate, "cuEventCreate", CUresult, (CUevent *, unsigned))                                        \
    X(cuEventRecord, "cuEventRecord", CUresult, (CUevent, CUstream))                                          \
    X(cuEventSynchronize, "cuEventSynchronize", CUresult, (CUevent))                                          \
    X(cuEventElapsedTime, "cuEventElapsedTime", CUresult, (float *, CUevent, CUevent))                        \
    X(cuEventDestroy, "cuEventDestroy_v2", CUresult, (CUevent))
/* Entry points used when present (NULL otherwise): cuLaunchKernelEx since CUDA 12.0. */
#define HK_CU_OPTIONAL_FUNCTIONS(X)                                                                           \
    X(cuLaunchKernelEx, "cuLaunchKernelEx", CUresult, (const hk_cu_launch_config *, CUfunction, void **, void **))

typedef struct hk_cuda_driver {
#define HK_CU_MEMBER(name, symbol, ret, params) ret(*name) params;
    HK_CU_FUNCTIONS(HK_CU_MEMBER)
    HK_CU_OPTIONAL_FUNCTIONS(HK_CU_MEMBER)
#undef HK_CU_MEMBER
} hk_cuda_driver;

/* Loaded once per process; the outcome (and why it failed) is kept for every later probe. */
static hk_cuda_driver cu;
static hk_status load_status = HK_ERR_NO_DEVICE;
static char load_why[256];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
/* Programmatic dependent launch for the kernels that ask for it: the driver has cuLaunchKernelEx. */
static bool pdl_enabled;

typedef struct hk_cuda_device {
    CUdevice device;
    CUcontext ctx; /* the device's primary context, shared with the CUDA runtime (PyTorch etc.) */
} hk_cuda_device;

static void load_driver(void)
{
    /* RTLD_LOCAL keeps the driver's symbols out of the global namespace of the host program. */
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        hk_format(load_why, sizeof load_why, "libcuda.so.1 not found (no NVIDIA driver)");
        return;
    }
#define HK_CU_LOAD(name, symbol, ret, params)                                                                 \
    if (!(*(void **)&cu.name = dlsym(lib, symbol))) {                                                         \
        hk_format(load_why, sizeof load_why, "libcuda.so.1 lacks %s (driver too old)", symbol);               \
        dlclose(lib);                                                                                         \
        return;                                                                                               \
    }
    HK_CU_FUNCTIONS(HK_CU_LOAD)
#undef HK_CU_LOAD
#define HK_CU_LOAD_OPTIONAL(name, symbol, ret, params) *(void **)&cu.name = dlsym(lib, symbol);
    HK_CU_OPTIONAL_FUNCTIONS(HK_CU_LOAD_OPTIONAL)
#undef HK_CU_LOAD_OPTIONAL
    pdl_enabled = cu.cuLaunchKernelEx != NULL;
    CUresult r = cu.cuInit(0);
    if (r != 0) {
        hk_format(load_why, sizeof load_why, "cuInit returned %d%s", r,
                  r == HK_CU_ERROR_STUB_LIBRARY ? " (stub library, no driver)" : "");
        dlclose(lib);
        return;
    }
    int count = 0;
    if ((r = cu.cuDeviceGetCount(&count)) != 0 || count == 0) {
        hk_format(load_why, sizeof load_why, r ? "cuDeviceGetCount returned %d" : "no CUDA device", r);
        dlclose(lib);
        return;
    }
    load_status = HK_OK; /* the library stays loaded for the life of the process */
}

/* Record the driver's own words for a failed call. */
static hk_status fail(CUresult r, const char *what)
{
    const char *name = NULL, *text = NULL;
    if (cu.cuGetErrorName(r, &name) != 0)
        name = "CUDA_ERROR_UNKNOWN";
    if (cu.cuGetErrorString(r, &text) != 0)
        text = "unrecognised error code";
    return hk_fail(r == 2 ? HK_ERR_OUT_OF_MEMORY : HK_ERR_RUNTIME, "cuda: %s failed: %s (%d): %s", what, name, r,
                   text);
}

#define HK_CU_CHECK(call, what)                                                                               \
    do {                                                                                                      \
        CUresult hk_r_ = (call);                                                                              \
        if (hk_r_ != 0)                                                                                       \
            return fail(hk_r_, what);                                                                         \
    } while (0)

hk_status hk_cuda_probe(char *why, size_t why_size)
{
    pthread_once(&load_once, load_driver);
    hk_format(why, why_size, "%s", load_status == HK_OK ? "" : load_why);
    return load_status;
}

static hk_status cuda_open(int index, void **dev, char *arch, size_t arch_size, char *name, size_t name_size)
{
    char why[256];
    if (hk_cuda_probe(why, sizeof why) != HK_OK)
        return hk_fail(HK_ERR_NO_DEVICE, "cuda: %s", why);
    int count = 0;
    HK_CU_CHECK(cu.cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (index >= count)
        return hk_fail(HK_ERR_NO_DEVICE, "cuda: device_index %d, but the driver sees %d device%s", index, count,
                       count == 1 ? "" : "s");
    hk_cuda_device *d = calloc(1, sizeof *d);
    if (!d)
        return hk_fail(HK_ERR_OUT_OF_MEMORY, "cuda: out of host memory");
    CUresult r;
    int major = 0, minor = 0;
    char device_name[256] = "";
    if ((r = cu.cuDeviceGet(&d->device, index)) != 0 ||
        (r = cu.cuDeviceGetAttribute(&major, HK_CU_ATTR_CC_MAJOR, d->device)) != 0 ||
        (r = cu.cuDeviceGetAttribute(&minor, HK_CU_ATTR_CC_MINOR, d->device)) != 0 ||
        (r = cu.cuDeviceGetName(device_name, (int)sizeof device_name, d->device)) != 0) {
        free(d);
        return fail(r, "querying the device");
    }
    if ((r = cu.cuDevicePrimaryCtxRetain(&d->ctx, d->device)) != 0) {
        free(d);
        return fail(r, "cuDevicePrimaryCtxRetain");
    }
    /* The cubins are built for sm_90a, whose arch-specific instructions (wgmma, setmaxnreg) run on 9.0 only;
     * other devices get their plain name and match no embedded object, so every op falls to "unsupported". */
    hk_format(arch, arch_size, "sm_%d%d%s", major, minor, major == 9 && minor == 0 ? "a" : "");
    hk_format(name, name_size, "%s", device_name);
    *dev = d;
    return HK_OK;
}

static void cuda_close(void *dev)
{
    hk_cuda_device *d = dev;
    if (!d)
        return;
    cu.cuDevicePrimaryCtxRelease(d->device);
    free(d);
}

static hk_status cuda_bind(void *dev)
{
    hk_cuda_device *d = dev;
    CUcontext current = NULL;
    /* cuCtxGetCurrent is a thread-local read; skip the set when the context is already current. */
    if (cu.cuCtxGetCurrent(&current) == 0 && current == d->ctx)
        return HK_OK;
    HK_CU_CHECK(cu.cuCtxSetCurrent(d->ctx), "cuCtxSetCurrent");
    return HK_OK;
}

static hk_status cuda_module_load(void *dev, const void *image, size_t bytes, void **module)
{
    (void)dev;
    (void)bytes; /* a cubin carries its own size */
    CUmodule m = NULL;
    HK_CU_CHECK(cu.cuModuleLoadData(&m, image), "cuModuleLoadData");
    *module = m;
    return HK_OK;
}

static void cuda_module_unload(void *dev, void *module)
{
    (void)dev;
    cu.cuModuleUnload(module);
}

static hk_status cuda_function(void *dev, void *module, const char *kernel, void **fn)
{
    (void)dev;
    CUfunction f = NULL;
    CUresult r = cu.cuModuleGetFunction(&f, module, kernel);
    if (r != 0)
        return fail(r, kernel);
    *fn = f;
    return HK_OK;
}

static hk_status cuda_set_shared_limit(void *dev, void *fn, unsigned bytes)
{
    (void)dev;
    HK_CU_CHECK(cu.cuFuncSetAttribute(fn, HK_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED, (int)bytes),
                "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    /* past 16 KiB, prefer the largest shared-memory carveout: the GEMM kernels need it, and the pooled sum's launch
     * counts on it to cap its CTAs per SM (kernels/hopper/gemm.h); the LayerNorm kernels' few KiB keep the default.
     * A hint: a driver that declines it only changes the timing. */
    if (bytes > 16384)
        (void)cu.cuFuncSetAttribute(fn, HK_CU_FUNC_ATTR_PREFERRED_SHARED_CARVEOUT, 100);
    return HK_OK;
}

static hk_status cuda_launch(void *dev, void *fn, const unsigned grid[3], const unsigned block[3],
                             unsigned shared_bytes, void *stream, void **params)
{
    (void)dev;
    HK_CU_CHECK(cu.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_bytes, stream,
                                  params, NULL),
                "cuLaunchKernel");
    return HK_OK;
}

/* With the programmatic stream-serialization attribute the grid may start while the previous kernel of the
 * stream still runs (that kernel's CTAs let it, with griddepcontrol.launch_dependents, or exit); the kernel's
 * griddepcontrol.wait then waits for it. Plain cuLaunchKernel where the driver lacks cuLaunchKernelEx. */
static hk_status cuda_launch_dependent(void *dev, void *fn, const unsigned grid[3], const unsigned block[3],
                                       unsigned shared_bytes, void *stream, void **params)
{
    if (!pdl_enabled)
        return cuda_launch(dev, fn, grid, block, shared_bytes, stream, params);
    hk_cu_launch_attribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = HK_CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmatic_stream_serialization_allowed = 1;
    const hk_cu_launch_config config = {
        .grid_x = grid[0],
        .grid_y = grid[1],
        .grid_z = grid[2],
        .block_x = block[0],
        .block_y = block[1],
        .block_z = block[2],
        .shared_bytes = shared_bytes,
        .stream = stream,
        .attrs = &attr,
        .num_attrs = 1,
    };
    HK_CU_CHECK(cu.cuLaunchKernelEx(&config, fn, params, NULL), "cuLaunchKernelEx");
    return HK_OK;
}

static hk_status cuda_alloc(void *dev, void **ptr, size_t bytes)
{
    (void)dev;
    CUdeviceptr p = 0;
    CUresult r = cu.cuMemAlloc(&p, bytes);
    if (r != 0) {
        hk_status st = fail(r, "cuMemAlloc");
        return st == HK_ERR_OUT_OF_MEMORY
                   ? hk_fail(st, "cuda: cuMemAlloc of %zu bytes failed: out of device memory", bytes)
                   : st;
    }
    *ptr = (void *)(uintptr_t)p;
    return HK_OK;
}

static hk_status cuda_release(void *dev, void *ptr)
{
    (void)dev;
    HK_CU_CHECK(cu.cuMemFree((CUdeviceptr)(uintptr_t)ptr), "cuMemFree");
    return HK_OK;
}

/* The synchronous copies wait for the legacy default stream, as hk_memcpy promises. */
static hk_status cuda_copy(void *dev, void *dst, const void *src, size_t bytes, hk_copy_kind kind)
{
    (void)dev;
    switch (kind) {
    case HK_COPY_HOST_TO_DEVICE:
        HK_CU_CHECK(cu.cuMemcpyHtoD((CUdeviceptr)(uintptr_t)dst, src, bytes), "cuMemcpyHtoD");
        break;
    case HK_COPY_DEVICE_TO_HOST:
        HK_CU_CHECK(cu.cuMemcpyDtoH(dst, (CUdeviceptr)(uintptr_t)src, bytes), "cuMemcpyDtoH");
        break;
    case HK_COPY_DEVICE_TO_DEVICE:
        HK_CU_CHECK(cu.cuMemcpyDtoD((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, bytes),
                    "cuMemcpyDtoD");
        /* a device-to-device copy may return before it completes; hk_memcpy is blocking */
        HK_CU_CHECK(cu.cuStreamSynchronize(NULL), "cuStreamSynchronize");
        break;
    }
    return HK_OK;
}

static hk_status cuda_fill(void *dev, void *ptr, int value, size_t bytes)
{
    (void)dev;
    HK_CU_CHECK(cu.cuMemsetD8((CUdeviceptr)(uintptr_t)ptr, (unsigned char)value, bytes), "cuMemsetD8");
    /* the memset is asynchronous for device memory; finish it so callers may use any stream next */
    HK_CU_CHECK(cu.cuStreamSynchronize(NULL), "cuStreamSynchronize");
    return HK_OK;
}

static hk_status cuda_zero_async(void *dev, void *ptr, size_t words, void *stream)
{
    (void)dev;
    HK_CU_CHECK(cu.cuMemsetD32Async((CUdeviceptr)(uintptr_t)ptr, 0, words, (CUstream)stream), "cuMemsetD32Async");
    return HK_OK;
}

static hk_status cuda_sync(void *dev, void *stream)
{
    (void)dev;
    HK_CU_CHECK(cu.cuStreamSynchronize(stream), "cuStreamSynchronize");
    return HK_OK;
}

static hk_status cuda_event_create(void *dev, void **event)
{
    (void)dev;
    CUevent e = NULL;
    HK_CU_CHECK(cu.cuEventCreate(&e, HK_CU_EVENT_DEFAULT), "cuEventCreate");
    *event = e;
    return HK_OK;
}

static hk_status cuda_event_record(void *dev, void *event, void *stream)
{
    (void)dev;
    HK_CU_CHECK(cu.cuEventRecord(event, stream), "cuEventRecord");
    return HK_OK;
}

static hk_status cuda_event_elapsed(void *dev, void *start, void *end, float *ms)
{
    (void)dev;
    HK_CU_CHECK(cu.cuEventSynchronize(end), "cuEventSynchronize");
    HK_CU_CHECK(cu.cuEventElapsedTime(ms, start, end), "cuEventElapsedTime");
    return HK_OK;
}

static void cuda_event_destroy(void *dev, void *event)
{
    (void)dev;
    cu.cuEventDestroy(event);
}

static int64_t cuda_attribute(void *dev, hk_gpu_attr attr)
{
    hk_cuda_device *d = dev;
    int which;
    switch (attr) {
    case HK_GPU_ATTR_MULTIPROCESSORS: which = HK_CU_ATTR_MULTIPROCESSOR_COUNT; break;
    case HK_GPU_ATTR_XCDS:
    default: return 1;
    }
    int value = 0;
    return cu.cuDeviceGetAttribute(&value, which, d->device) == 0 ? value : 0;
}

static const hk_gpu_api hk_cuda = {
    .name = "cuda",
    .open = cuda_open,
    .close = cuda_close,
    .bind = cuda_bind,
    .module_load = cuda_module_load,
    .module_unload = cuda_module_unload,
    .function = cuda_function,
    .set_shared_limit = cuda_set_shared_limit,
    .launch = cuda_launch,
    .launch_dependent = cuda_launch_dependent,
    .alloc = cuda_alloc,
    .release = cuda_release,
    .copy = cuda_copy,
    .fill = cuda_fill,
    .zero_async = cuda_zero_async,
    .sync = cuda_sync,
    .event_create = cuda_event_create,
    .event_record = cuda_event_record,
    .event_elapsed = cuda_event_elapsed,
    .event_destroy = cuda_event_destroy,
    .attribute = cuda_attribute,
};

const hk_gpu_api *hk_cuda_api(void) { return &hk_cuda; }
