/* Memory, copies, streams and events through the context, so callers with no GPU runtime of their own
 * (ctypes users, the tests, hk-bench) can drive every backend the same way. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HOST_ALIGNMENT 256

static bool host_memory(const hk_context *ctx) { return ctx->gpu == NULL; }

hk_status hk_malloc(hk_context *ctx, void **ptr, size_t bytes)
{
    hk_status st = hk_check_context(ctx, "malloc");
    if (st != HK_OK)
        return st;
    if (!ptr)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "malloc: ptr is NULL");
    *ptr = NULL;
    if (bytes == 0)
        return HK_OK;
    if (host_memory(ctx)) {
        if (bytes > SIZE_MAX - HOST_ALIGNMENT)
            return hk_fail(HK_ERR_OUT_OF_MEMORY, "malloc: %zu bytes is too large", bytes);
        void *p = aligned_alloc(HOST_ALIGNMENT, (bytes + HOST_ALIGNMENT - 1) / HOST_ALIGNMENT * HOST_ALIGNMENT);
        if (!p)
            return hk_fail(HK_ERR_OUT_OF_MEMORY, "malloc: out of host memory for %zu bytes", bytes);
        *ptr = p;
        return HK_OK;
    }
    st = ctx->gpu->bind(ctx->dev);
    return st != HK_OK ? st : ctx->gpu->alloc(ctx->dev, ptr, bytes);
}

hk_status hk_free(hk_context *ctx, void *ptr)
{
    hk_status st = hk_check_context(ctx, "free");
    if (st != HK_OK)
        return st;
    if (!ptr)
        return HK_OK;
    if (host_memory(ctx)) {
        free(ptr);
        return HK_OK;
    }
    st = ctx->gpu->bind(ctx->dev);
    return st != HK_OK ? st : ctx->gpu->release(ctx->dev, ptr);
}

hk_status hk_memcpy(hk_context *ctx, void *dst, const void *src, size_t bytes, hk_copy_kind kind)
{
    hk_status st = hk_check_context(ctx, "memcpy");
    if (st != HK_OK)
        return st;
    if (kind != HK_COPY_HOST_TO_DEVICE && kind != HK_COPY_DEVICE_TO_HOST && kind != HK_COPY_DEVICE_TO_DEVICE)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "memcpy: kind %d is not a hk_copy_kind", (int)kind);
    if (bytes == 0)
        return HK_OK;
    if (!dst || !src)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "memcpy: %s is NULL", dst ? "src" : "dst");
    if (host_memory(ctx)) {
        memmove(dst, src, bytes);
        return HK_OK;
    }
    st = ctx->gpu->bind(ctx->dev);
    return st != HK_OK ? st : ctx->gpu->copy(ctx->dev, dst, src, bytes, kind);
}

hk_status hk_memset(hk_context *ctx, void *ptr, int value, size_t bytes)
{
    hk_status st = hk_check_context(ctx, "memset");
    if (st != HK_OK)
        return st;
    if (bytes == 0)
        return HK_OK;
    if (!ptr)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "memset: ptr is NULL");
    if (host_memory(ctx)) {
        memset(ptr, value, bytes);
        return HK_OK;
    }
    st = ctx->gpu->bind(ctx->dev);
    return st != HK_OK ? st : ctx->gpu->fill(ctx->dev, ptr, value, bytes);
}

hk_status hk_synchronize(hk_context *ctx, void *stream)
{
    hk_status st = hk_check_context(ctx, "synchronize");
    if (st != HK_OK)
        return st;
    if (host_memory(ctx))
        return HK_OK; /* CPU ops complete before they return */
    st = ctx->gpu->bind(ctx->dev);
    return st != HK_OK ? st : ctx->gpu->sync(ctx->dev, stream);
}

hk_status hk_event_create(hk_context *ctx, hk_event **event)
{
    hk_status st = hk_check_context(ctx, "event_create");
    if (st != HK_OK)
        return st;
    if (!event)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "event_create: event is NULL");
    *event = NULL;
    hk_event *e = calloc(1, sizeof *e);
    if (!e)
        return hk_fail(HK_ERR_OUT_OF_MEMORY, "event_create: out of host memory");
    e->ctx = ctx;
    if (!host_memory(ctx)) {
        st = ctx->gpu->bind(ctx->dev);
        if (st == HK_OK)
            st = ctx->gpu->event_create(ctx->dev, &e->handle);
        if (st != HK_OK) {
            free(e);
            return st;
        }
    }
    *event = e;
    return HK_OK;
}

hk_status hk_event_record(hk_event *event, void *stream)
{
    if (!event)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "event_record: event is NULL");
    hk_context *ctx = event->ctx;
    if (host_memory(ctx)) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        event->host_ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
        return HK_OK;
    }
    hk_status st = ctx->gpu->bind(ctx->dev);
    return st != HK_OK ? st : ctx->gpu->event_record(ctx->dev, event->handle, stream);
}

hk_status hk_event_elapsed_ms(hk_event *start, hk_event *end, float *ms)
{
    if (!start || !end || !ms)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "event_elapsed_ms: %s is NULL", !start ? "start" : !end ? "end" : "ms");
    if (start->ctx != end->ctx)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "event_elapsed_ms: the events belong to different contexts");
    hk_context *ctx = start->ctx;
    if (host_memory(ctx)) {
        *ms = (float)(end->host_ms - start->host_ms);
        return HK_OK;
    }
    hk_status st = ctx->gpu->bind(ctx->dev);
    return st != HK_OK ? st : ctx->gpu->event_elapsed(ctx->dev, start->handle, end->handle, ms);
}

void hk_event_destroy(hk_event *event)
{
    if (!event)
        return;
    hk_context *ctx = event->ctx;
    if (!host_memory(ctx) && ctx->gpu->bind(ctx->dev) == HK_OK)
        ctx->gpu->event_destroy(ctx->dev, event->handle);
    free(event);
}
