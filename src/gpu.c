/* Shared GPU host logic over hk_gpu_api: lazy per-context module loading and a kernel cache. */
#include "internal.h"

#include <string.h>

/* Is `kernel` one of the names in the comma-separated list? */
static bool list_has(const char *list, const char *kernel)
{
    size_t n = strlen(kernel);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, kernel, n) == 0)
            return true;
        p = end ? end + 1 : NULL;
    }
    return false;
}

/* Caller holds ctx->lock. Returns the cache slot of the kernel, loading its module if needed. */
static hk_status find_kernel(hk_context *ctx, const char *kernel, size_t *slot)
{
    for (size_t i = 0; i < ctx->function_count; ++i) {
        if (strcmp(ctx->functions[i].kernel, kernel) == 0) {
            *slot = i;
            return HK_OK;
        }
    }
    size_t blobs = hk_code_blob_count();
    for (size_t b = 0; b < blobs && b < HK_MAX_LOADED_MODULES; ++b) {
        const hk_code_blob *blob = hk_code_blob_at(b);
        if (strcmp(blob->arch, ctx->arch) != 0 || !list_has(blob->kernels, kernel))
            continue;
        if (ctx->function_count == HK_MAX_CACHED_FUNCTIONS)
            return hk_fail(HK_ERR_INTERNAL, "kernel cache full (%d kernels)", HK_MAX_CACHED_FUNCTIONS);
        if (strlen(kernel) >= HK_MAX_KERNEL_NAME)
            return hk_fail(HK_ERR_INTERNAL, "kernel name %s is longer than %d characters", kernel, HK_MAX_KERNEL_NAME - 1);
        hk_status st;
        if (!ctx->modules[b] && (st = ctx->gpu->module_load(ctx->dev, blob->data, blob->bytes, &ctx->modules[b])) != HK_OK)
            return st;
        void *fn = NULL;
        if ((st = ctx->gpu->function(ctx->dev, ctx->modules[b], kernel, &fn)) != HK_OK)
            return st;
        *slot = ctx->function_count++;
        hk_format(ctx->functions[*slot].kernel, HK_MAX_KERNEL_NAME, "%s", kernel);
        ctx->functions[*slot].fn = fn;
        /* Raised on the first launch with dynamic shared memory: the default 48 KiB also covers the kernel's
         * static shared memory, so a launch under 48 KiB of dynamic memory can still need the raise. */
        ctx->functions[*slot].shared_limit = 0;
        return HK_OK;
    }
    return hk_fail(HK_ERR_UNSUPPORTED, "kernel %s: no embedded code object for %s holds it", kernel, ctx->arch);
}

static hk_status launch_kernel(hk_context *ctx, const char *kernel, const unsigned grid[3], const unsigned block[3],
                               unsigned shared_bytes, void *stream, void **params, bool dependent)
{
    hk_status st = ctx->gpu->bind(ctx->dev);
    if (st != HK_OK)
        return st;
    pthread_mutex_lock(&ctx->lock);
    size_t slot = 0;
    st = find_kernel(ctx, kernel, &slot);
    void *fn = st == HK_OK ? ctx->functions[slot].fn : NULL;
    if (st == HK_OK && shared_bytes > ctx->functions[slot].shared_limit) {
        st = ctx->gpu->set_shared_limit(ctx->dev, fn, shared_bytes);
        if (st == HK_OK)
            ctx->functions[slot].shared_limit = shared_bytes;
    }
    pthread_mutex_unlock(&ctx->lock);
    if (st != HK_OK)
        return st;
    if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
        return HK_OK; /* nothing to do; runtimes reject empty grids */
    if (dependent && ctx->gpu->launch_dependent)
        return ctx->gpu->launch_dependent(ctx->dev, fn, grid, block, shared_bytes, stream, params);
    return ctx->gpu->launch(ctx->dev, fn, grid, block, shared_bytes, stream, params);
}

hk_status hk_gpu_launch(hk_context *ctx, const char *kernel, const unsigned grid[3], const unsigned block[3],
                        unsigned shared_bytes, void *stream, void **params)
{
    return launch_kernel(ctx, kernel, grid, block, shared_bytes, stream, params, false);
}

hk_status hk_gpu_launch_dependent(hk_context *ctx, const char *kernel, const unsigned grid[3], const unsigned block[3],
                                  unsigned shared_bytes, void *stream, void **params)
{
    return launch_kernel(ctx, kernel, grid, block, shared_bytes, stream, params, true);
}
