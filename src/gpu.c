/* Shared GPU host logic over hk_gpu_api: lazy per-context module loading and the kernel sets' handle tables. */
#include "internal.h"

#include <stdlib.h>
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

/* Caller holds ctx->lock. The kernel's handle from the embedded code object of the context's arch that holds it,
 * loading the object's module if needed. */
static hk_status load_kernel(hk_context *ctx, const char *kernel, void **fn)
{
    size_t blobs = hk_code_blob_count();
    for (size_t b = 0; b < blobs && b < HK_MAX_LOADED_MODULES; ++b) {
        const hk_code_blob *blob = hk_code_blob_at(b);
        if (strcmp(blob->arch, ctx->arch) != 0 || !list_has(blob->kernels, kernel))
            continue;
        hk_status st;
        if (!ctx->modules[b] && (st = ctx->gpu->module_load(ctx->dev, blob->data, blob->bytes, &ctx->modules[b])) != HK_OK)
            return st;
        return ctx->gpu->function(ctx->dev, ctx->modules[b], kernel, fn);
    }
    return hk_fail(HK_ERR_UNSUPPORTED, "kernel %s: no embedded code object for %s holds it", kernel, ctx->arch);
}

/* Caller holds ctx->lock. Kernel `index` of `set` in the context's table for the set, resolved at its first launch. */
static hk_status find_indexed(hk_context *ctx, const hk_kernel_set *set, size_t index, hk_kernel_slot **slot)
{
    if (index >= set->count)
        return hk_fail(HK_ERR_INTERNAL, "kernel %zu of a set of %zu", index, set->count);
    hk_kernel_slot **table = &ctx->kernels[set->id];
    if (!*table && !(*table = calloc(set->count, sizeof **table)))
        return hk_fail(HK_ERR_OUT_OF_MEMORY, "kernel table: out of host memory");
    *slot = &(*table)[index];
    if ((*slot)->fn)
        return HK_OK;
    char kernel[HK_MAX_KERNEL_NAME];
    if (!set->name(index, kernel, sizeof kernel))
        return hk_fail(HK_ERR_INTERNAL, "kernel %zu of its set is not built", index);
    return load_kernel(ctx, kernel, &(*slot)->fn);
}

/* Caller holds ctx->lock. Raises the kernel's dynamic shared-memory limit to shared_bytes where it is lower. */
static hk_status allow_shared(hk_context *ctx, void *fn, unsigned *limit, unsigned shared_bytes)
{
    if (shared_bytes <= *limit)
        return HK_OK;
    hk_status st = ctx->gpu->set_shared_limit(ctx->dev, fn, shared_bytes);
    if (st == HK_OK)
        *limit = shared_bytes;
    return st;
}

static hk_status launch_fn(hk_context *ctx, void *fn, const unsigned grid[3], const unsigned block[3],
                           unsigned shared_bytes, void *stream, void **params, bool dependent)
{
    if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
        return HK_OK; /* nothing to do; runtimes reject empty grids */
    if (dependent && ctx->gpu->launch_dependent && !ctx->tuning.plain_launch)
        return ctx->gpu->launch_dependent(ctx->dev, fn, grid, block, shared_bytes, stream, params);
    return ctx->gpu->launch(ctx->dev, fn, grid, block, shared_bytes, stream, params);
}

hk_status hk_gpu_launch_indexed(hk_context *ctx, const hk_kernel_set *set, size_t index, bool dependent,
                                const unsigned grid[3], const unsigned block[3], unsigned shared_bytes, void *stream,
                                void **params)
{
    hk_status st = ctx->gpu->bind(ctx->dev);
    if (st != HK_OK)
        return st;
    pthread_mutex_lock(&ctx->lock);
    hk_kernel_slot *slot = NULL;
    st = find_indexed(ctx, set, index, &slot);
    void *fn = st == HK_OK ? slot->fn : NULL;
    if (st == HK_OK)
        st = allow_shared(ctx, fn, &slot->shared_limit, shared_bytes);
    pthread_mutex_unlock(&ctx->lock);
    return st != HK_OK ? st : launch_fn(ctx, fn, grid, block, shared_bytes, stream, params, dependent);
}
