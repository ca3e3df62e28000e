/* Memory, copies, streams and events through the context, so callers with no GPU runtime of their own
 * (ctypes users, the tests, hk-bench) can drive every backend the same way. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HOST_ALIGNMENT 256
#define TOMBSTONE ((void *)1) /* a removed entry: probing goes on past it */

static bool host_memory(const hk_context *ctx) { return ctx->gpu == NULL; }

/* ---------------------------------------------------------------- the allocation set (under ctx->lock) */

static size_t hash_slot(const void *p, size_t capacity)
{
    uint64_t h = (uint64_t)(uintptr_t)p * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(h >> 32) & (capacity - 1);
}

/* The entry holding p, or NULL. */
static void **find_allocation(hk_context *ctx, const void *p)
{
    size_t cap = ctx->allocations.capacity;
    for (size_t i = 0, at = cap ? hash_slot(p, cap) : 0; i < cap; ++i, at = (at + 1) & (cap - 1)) {
        void **e = &ctx->allocations.ptr[at];
        if (*e == p)
            return e;
        if (*e == NULL)
            return NULL;
    }
    return NULL;
}

/* Insert p (not present); grows to keep at most half the entries used (tombstones count, and are dropped). */
static bool add_allocation(hk_context *ctx, void *p)
{
    if ((ctx->allocations.used + 1) * 2 > ctx->allocations.capacity) {
        size_t live = 0;
        for (size_t i = 0; i < ctx->allocations.capacity; ++i)
            live += ctx->allocations.ptr[i] != NULL && ctx->allocations.ptr[i] != TOMBSTONE;
        size_t cap = 64;
        while ((live + 1) * 4 > cap)
            cap *= 2;
        void **table = calloc(cap, sizeof *table);
        if (!table)
            return false;
        void **old = ctx->allocations.ptr;
        size_t old_cap = ctx->allocations.capacity;
        ctx->allocations.ptr = table;
        ctx->allocations.capacity = cap;
        ctx->allocations.used = 0;
        for (size_t i = 0; i < old_cap; ++i)
            if (old[i] != NULL && old[i] != TOMBSTONE)
                add_allocation(ctx, old[i]);
        free(old);
    }
    size_t cap = ctx->allocations.capacity, at = hash_slot(p, cap);
    while (ctx->allocations.ptr[at] != NULL)
        at = (at + 1) & (cap - 1);
    ctx->allocations.ptr[at] = p;
    ctx->allocations.used++;
    return true;
}

static void release(hk_context *ctx, void *p)
{
    if (host_memory(ctx))
        free(p);
    else if (ctx->gpu->bind(ctx->dev) == HK_OK)
        ctx->gpu->release(ctx->dev, p);
}

void hk_memory_release_all(hk_context *ctx)
{
    for (size_t i = 0; i < ctx->allocations.capacity; ++i)
        if (ctx->allocations.ptr[i] != NULL && ctx->allocations.ptr[i] != TOMBSTONE)
            release(ctx, ctx->allocations.ptr[i]);
    free(ctx->allocations.ptr);
    ctx->allocations.ptr = NULL;
    ctx->allocations.capacity = ctx->allocations.used = 0;
}

/* ---------------------------------------------------------------- memory */

hk_status hk_malloc(hk_context *handle, void **ptr, size_t bytes)
{
    hk_context *ctx;
    hk_status st = hk_check_context(handle, "malloc", &ctx);
    if (st != HK_OK)
        return st;
    if (!ptr)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "malloc: ptr is NULL");
    *ptr = NULL;
    if (bytes == 0)
        return HK_OK;
    void *p = NULL;
    if (host_memory(ctx)) {
        if (bytes > SIZE_MAX - HOST_ALIGNMENT)
            return hk_fail(HK_ERR_OUT_OF_MEMORY, "malloc: bytes %zu is more than host memory can align", bytes);
        p = aligned_alloc(HOST_ALIGNMENT, (bytes + HOST_ALIGNMENT - 1) / HOST_ALIGNMENT * HOST_ALIGNMENT);
        if (!p)
            return hk_fail(HK_ERR_OUT_OF_MEMORY, "malloc: out of host memory for bytes %zu", bytes);
    } else if ((st = ctx->gpu->bind(ctx->dev)) != HK_OK || (st = ctx->gpu->alloc(ctx->dev, &p, bytes)) != HK_OK) {
        return st;
    }
    pthread_mutex_lock(&ctx->lock);
    bool kept = add_allocation(ctx, p);
    pthread_mutex_unlock(&ctx->lock);
    if (!kept) {
        release(ctx, p);
        return hk_fail(HK_ERR_OUT_OF_MEMORY, "malloc: out of host memory for the allocation table");
    }
    *ptr = p;
    return HK_OK;
}

hk_status hk_free(hk_context *handle, void *ptr)
{
    hk_context *ctx;
    hk_status st = hk_check_context(handle, "free", &ctx);
    if (st != HK_OK)
        return st;
    if (!ptr)
        return HK_OK;
    pthread_mutex_lock(&ctx->lock);
    void **entry = find_allocation(ctx, ptr);
    if (entry)
        *entry = TOMBSTONE;
    pthread_mutex_unlock(&ctx->lock);
    if (!entry)
        return hk_fail(HK_ERR_INVALID_ARGUMENT,
                       "free: ptr %p was not returned by hk_malloc of this context, or is already freed", ptr);
    if (host_memory(ctx)) {
        free(ptr);
        return HK_OK;
    }
    st = ctx->gpu->bind(ctx->dev);
    return st != HK_OK ? st : ctx->gpu->release(ctx->dev, ptr);
}

hk_status hk_memcpy(hk_context *handle, void *dst, const void *src, size_t bytes, hk_copy_kind kind)
{
    hk_context *ctx;
    hk_status st = hk_check_context(handle, "memcpy", &ctx);
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

hk_status hk_memset(hk_context *handle, void *ptr, int value, size_t bytes)
{
    hk_context *ctx;
    hk_status st = hk_check_context(handle, "memset", &ctx);
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

hk_status hk_synchronize(hk_context *handle, void *stream)
{
    hk_context *ctx;
    hk_status st = hk_check_context(handle, "synchronize", &ctx);
    if (st != HK_OK)
        return st;
    if (host_memory(ctx))
        return HK_OK; /* CPU ops complete before they return */
    st = ctx->gpu->bind(ctx->dev);
    return st != HK_OK ? st : ctx->gpu->sync(ctx->dev, stream);
}

/* ---------------------------------------------------------------- events (registry handles owned by their context) */

static void event_free(void *object)
{
    hk_event *e = object;
    hk_context *ctx = e->ctx;
    if (!host_memory(ctx) && ctx->gpu->bind(ctx->dev) == HK_OK)
        ctx->gpu->event_destroy(ctx->dev, e->handle);
    free(e);
}

void hk_events_release_all(hk_context *ctx) { hk_handle_close_owned(ctx->handle, event_free); }

static hk_event *live_event(const hk_event *handle, const char *op, const char *name, hk_status *st)
{
    hk_event *e = handle ? hk_handle_get((uintptr_t)handle, HK_HANDLE_EVENT) : NULL;
    *st = e ? HK_OK
            : hk_fail(HK_ERR_INVALID_ARGUMENT, handle ? "%s: %s is not a live hk_event (destroyed, its context destroyed, or not created by hk_event_create)"
                                                      : "%s: %s is NULL",
                      op, name);
    return e;
}

hk_status hk_event_create(hk_context *handle, hk_event **event)
{
    hk_context *ctx;
    hk_status st = hk_check_context(handle, "event_create", &ctx);
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
    uintptr_t h;
    if ((st = hk_handle_open(HK_HANDLE_EVENT, e, ctx->handle, &h)) != HK_OK) {
        event_free(e);
        return st;
    }
    *event = (hk_event *)h;
    return HK_OK;
}

hk_status hk_event_record(hk_event *handle, void *stream)
{
    hk_status st;
    hk_event *event = live_event(handle, "event_record", "event", &st);
    if (!event)
        return st;
    hk_context *ctx = event->ctx;
    if (host_memory(ctx)) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        event->host_ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
    } else if ((st = ctx->gpu->bind(ctx->dev)) != HK_OK ||
               (st = ctx->gpu->event_record(ctx->dev, event->handle, stream)) != HK_OK) {
        return st;
    }
    event->recorded = true;
    return HK_OK;
}

hk_status hk_event_elapsed_ms(hk_event *start_handle, hk_event *end_handle, float *ms)
{
    hk_status st;
    hk_event *start = live_event(start_handle, "event_elapsed_ms", "start", &st);
    if (!start)
        return st;
    hk_event *end = live_event(end_handle, "event_elapsed_ms", "end", &st);
    if (!end)
        return st;
    if (!ms)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "event_elapsed_ms: ms is NULL");
    if (start->ctx != end->ctx)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "event_elapsed_ms: start and end belong to different contexts");
    if (!start->recorded || !end->recorded)
        return hk_fail(HK_ERR_INVALID_ARGUMENT, "event_elapsed_ms: %s was never recorded (hk_event_record first)",
                       !start->recorded ? "start" : "end");
    hk_context *ctx = start->ctx;
    if (host_memory(ctx)) {
        *ms = (float)(end->host_ms - start->host_ms);
        return HK_OK;
    }
    st = ctx->gpu->bind(ctx->dev);
    return st != HK_OK ? st : ctx->gpu->event_elapsed(ctx->dev, start->handle, end->handle, ms);
}

void hk_event_destroy(hk_event *handle)
{
    hk_event *e = handle ? hk_handle_close((uintptr_t)handle, HK_HANDLE_EVENT) : NULL;
    if (e)
        event_free(e);
}
