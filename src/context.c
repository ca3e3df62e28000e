/* Contexts: backend selection (auto probes HIP, then CUDA, then falls back to the CPU), device queries and
 * the variant listing. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *hk_backend_name(hk_backend backend)
{
    switch (backend) {
    case HK_BACKEND_AUTO: return "auto";
    case HK_BACKEND_CPU: return "cpu";
    case HK_BACKEND_HIP: return "hip";
    case HK_BACKEND_CUDA: return "cuda";
    case HK_BACKEND_EMULATOR: return "emulator";
    }
    return "unknown";
}

const char *hk_op_name(hk_op op)
{
    static const char *const names[HK_OP_COUNT_] = {"gemm", "attn_fwd", "attn_bwd", "rotary", "ln_fused", "ln_fused_bwd"};
    return (unsigned)op < HK_OP_COUNT_ ? names[op] : "unknown";
}

static const hk_gpu_api *gpu_api(hk_backend backend)
{
    return backend == HK_BACKEND_HIP ? hk_hip_api() : backend == HK_BACKEND_CUDA ? hk_cuda_api() : NULL;
}

hk_status hk_probe(hk_backend backend, char *why, size_t why_size)
{
    hk_format(why, why_size, "%s", "");
    char reason[512] = "";
    hk_status st;
    switch (backend) {
    case HK_BACKEND_CPU:
    case HK_BACKEND_EMULATOR: return HK_OK;
    case HK_BACKEND_HIP:
    case HK_BACKEND_CUDA:
        /* the probes fill `why` only; hk_last_error() says the same, as after every failing call */
        st = backend == HK_BACKEND_HIP ? hk_hip_probe(reason, sizeof reason) : hk_cuda_probe(reason, sizeof reason);
        hk_format(why, why_size, "%s", reason);
        return st == HK_OK ? HK_OK : hk_fail(st, "probe: %s backend unavailable: %s", hk_backend_name(backend), reason);
    default:
        hk_format(why, why_size, "backend %d is not probeable", (int)backend);
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "probe: backend %d is not one of cpu, hip, cuda, emulator", (int)backend);
    }
}

static void cpu_model_name(char *buf, size_t size)
{
    hk_format(buf, size, "CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            colon += 1 + (colon[1] == ' ');
            colon[strcspn(colon, "\n")] = '\0';
            hk_format(buf, size, "%s", colon);
            break;
        }
    }
    fclose(f);
}

static hk_status open_gpu(hk_context *ctx, hk_backend backend)
{
    char why[512];
    hk_status st = hk_probe(backend, why, sizeof why);
    if (st != HK_OK)
        return hk_fail(st, "context: %s backend unavailable: %s", hk_backend_name(backend), why);
    const hk_gpu_api *api = gpu_api(backend);
    st = api->open(ctx->device_index, &ctx->dev, ctx->arch, sizeof ctx->arch, ctx->device_name,
                   sizeof ctx->device_name);
    if (st != HK_OK)
        return st; /* open() said why */
    ctx->gpu = api;
    ctx->backend = backend;
    if (backend == HK_BACKEND_CUDA)
        hk_cuda_read_tuning(&ctx->tuning);
    ctx->multiprocessors = api->attribute(ctx->dev, HK_GPU_ATTR_MULTIPROCESSORS);
    ctx->xcds = api->attribute(ctx->dev, HK_GPU_ATTR_XCDS);
    return HK_OK;
}

static hk_status parse_backend_env(hk_backend *backend)
{
    const char *env = getenv("HK_BACKEND");
    if (!env || !*env || strcasecmp(env, "auto") == 0)
        return HK_OK;
    static const hk_backend named[] = {HK_BACKEND_CPU, HK_BACKEND_HIP, HK_BACKEND_CUDA, HK_BACKEND_EMULATOR};
    for (size_t i = 0; i < sizeof named / sizeof named[0]; ++i) {
        if (strcasecmp(env, hk_backend_name(named[i])) == 0) {
            *backend = named[i];
            return HK_OK;
        }
    }
    return hk_fail(HK_ERR_INVALID_ARGUMENT, "context: HK_BACKEND=%s is not one of auto, cpu, hip, cuda, emulator", env);
}

static hk_status open_backend(hk_context *ctx, hk_backend backend, const char *arch)
{
    switch (backend) {
    case HK_BACKEND_CPU:
        ctx->backend = HK_BACKEND_CPU;
        hk_format(ctx->arch, sizeof ctx->arch, "cpu");
        cpu_model_name(ctx->device_name, sizeof ctx->device_name);
        return HK_OK;
    case HK_BACKEND_EMULATOR:
        if (!arch)
            arch = "gfx942";
        if (strcmp(arch, "gfx942") != 0 && strcmp(arch, "gfx950") != 0)
            return hk_fail(HK_ERR_INVALID_ARGUMENT, "context: emulator arch \"%s\" is not one of gfx942, gfx950", arch);
        ctx->backend = HK_BACKEND_EMULATOR;
        ctx->xcds = 8; /* it plays an MI300X / MI355X, whose grid order is XCD-aware */
        hk_format(ctx->arch, sizeof ctx->arch, "%s", arch);
        hk_format(ctx->device_name, sizeof ctx->device_name, "AMD %s (wave emulator on the CPU)", arch);
        return HK_OK;
    case HK_BACKEND_HIP:
    case HK_BACKEND_CUDA: return open_gpu(ctx, backend);
    case HK_BACKEND_AUTO:
        if (open_gpu(ctx, HK_BACKEND_HIP) == HK_OK || open_gpu(ctx, HK_BACKEND_CUDA) == HK_OK)
            return HK_OK;
        return open_backend(ctx, HK_BACKEND_CPU, NULL);
    }
    return hk_fail(HK_ERR_INVALID_ARGUMENT, "context: backend %d is not one of auto, cpu, hip, cuda, emulator", (int)backend);
}

hk_status hk_context_create(const hk_context_options *opts, hk_context **out)
{
    if (!out)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "context_create: ctx (the output pointer) is NULL");
    *out = NULL;
    hk_context_options o = {sizeof o, HK_BACKEND_AUTO, 0, NULL};
    hk_status st;
    if (opts && (st = hk_copy_struct("context_create", "opts", opts, &o, sizeof(size_t), sizeof o)) != HK_OK)
        return st;
    if (o.device_index < 0)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "context_create: device_index %d is negative", o.device_index);
    if (o.backend == HK_BACKEND_AUTO && (st = parse_backend_env(&o.backend)) != HK_OK)
        return st;
    hk_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return hk_fail(HK_ERR_OUT_OF_MEMORY, "context_create: out of host memory");
    ctx->device_index = o.device_index;
    ctx->multiprocessors = ctx->xcds = 1;
    if (pthread_mutex_init(&ctx->lock, NULL) != 0) {
        free(ctx);
        return hk_fail(HK_ERR_INTERNAL, "context_create: pthread_mutex_init failed");
    }
    st = open_backend(ctx, o.backend, o.arch);
    if (st == HK_OK && (st = hk_handle_open(HK_HANDLE_CONTEXT, ctx, 0, &ctx->handle)) != HK_OK && ctx->gpu)
        ctx->gpu->close(ctx->dev);
    if (st != HK_OK) {
        pthread_mutex_destroy(&ctx->lock);
        free(ctx);
        return st;
    }
    hk_clear_error();
    *out = (hk_context *)ctx->handle;
    return HK_OK;
}

void hk_context_destroy(hk_context *handle)
{
    /* Unregistered first: from here every call with this handle is refused, and a second destroy finds nothing. */
    hk_context *ctx = hk_handle_close((uintptr_t)handle, HK_HANDLE_CONTEXT);
    if (!ctx)
        return;
    hk_events_release_all(ctx);
    hk_memory_release_all(ctx);
    if (ctx->gpu) {
        ctx->gpu->bind(ctx->dev);
        for (size_t i = 0; i < HK_MAX_LOADED_MODULES; ++i)
            if (ctx->modules[i])
                ctx->gpu->module_unload(ctx->dev, ctx->modules[i]);
        ctx->gpu->close(ctx->dev);
    }
    for (size_t i = 0; i < HK_KERNEL_SETS; ++i)
        free(ctx->kernels[i]);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

static const hk_context *live(const hk_context *handle) { return hk_handle_get((uintptr_t)handle, HK_HANDLE_CONTEXT); }
hk_backend hk_context_backend(const hk_context *ctx) { return live(ctx) ? live(ctx)->backend : HK_BACKEND_AUTO; }
const char *hk_context_arch(const hk_context *ctx) { return live(ctx) ? live(ctx)->arch : ""; }
const char *hk_context_device_name(const hk_context *ctx) { return live(ctx) ? live(ctx)->device_name : ""; }

hk_status hk_context_variant(const hk_context *handle, size_t index, hk_variant_info *info)
{
    hk_context *ctx;
    hk_status st = hk_check_context(handle, "context_variant", &ctx);
    if (st != HK_OK)
        return st;
    if (!info)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "context_variant: info is NULL");
    if (info->struct_size < offsetof(hk_variant_info, description) + sizeof info->description)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "context_variant: info->struct_size %zu; initialise with HK_ARGS_INIT(hk_variant_info)",
                       info->struct_size);
    const hk_variant *v = hk_context_variant_at(ctx, index);
    if (!v)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "context_variant: index %zu is past the last variant", index);
    info->op = v->op;
    info->name = v->name;
    info->description = v->description;
    return HK_OK;
}

hk_status hk_context_telemetry(const hk_context *handle, hk_device_telemetry *telemetry)
{
    hk_context *ctx;
    hk_status st = hk_check_context(handle, "context_telemetry", &ctx);
    if (st != HK_OK)
        return st;
    if (!telemetry)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "context_telemetry: telemetry is NULL");
    if (telemetry->struct_size < offsetof(hk_device_telemetry, memory_used_bytes) + sizeof telemetry->memory_used_bytes)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "context_telemetry: telemetry->struct_size %zu; initialise with HK_ARGS_INIT(hk_device_telemetry)",
                       telemetry->struct_size);
    /* -1 everywhere first: a caller that ignores the status still reads "unknown", never stale values */
    hk_device_telemetry t = {sizeof t, -1, -1, -1, -1, -1, -1};
    st = ctx->backend == HK_BACKEND_HIP
             ? hk_hip_telemetry(ctx->device_index, &t)
             : hk_fail(HK_ERR_UNSUPPORTED, "context_telemetry: ctx is a %s context; telemetry has a source on hip only",
                       hk_backend_name(ctx->backend));
    t.struct_size = telemetry->struct_size;
    *telemetry = t;
    return st;
}

hk_status hk_code_object(size_t index, const char **arch, const char **kernels, size_t *bytes)
{
    if (index >= hk_code_blob_count())
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "code_object: index %zu is past the last of %zu embedded objects", index,
                       hk_code_blob_count());
    const hk_code_blob *b = hk_code_blob_at(index);
    if (arch)
        *arch = b->arch;
    if (kernels)
        *kernels = b->kernels;
    if (bytes)
        *bytes = b->bytes;
    return HK_OK;
}
