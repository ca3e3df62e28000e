/* Memory, copies and events as a sequence of operations decoded from the input (fuzz.h). The target keeps its own
 * table of live allocations, so copies stay inside them (the library cannot see a buffer's size) while frees may be
 * of anything: an offset pointer, a stack address, a freed block, another context's memory; those must be refused. */
#include "fuzz.h"

enum { SLOTS = 8 };

typedef struct live {
    unsigned char *p;
    size_t bytes;
} live;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    hk_context *shared = fz_context();
    hk_context *ctx = NULL, *other = NULL;
    hk_context_options o = HK_ARGS_INIT(hk_context_options);
    o.backend = HK_BACKEND_CPU;
    if (hk_context_create(&o, &ctx) != HK_OK || hk_context_create(&o, &other) != HK_OK)
        abort();
    live mem[SLOTS] = {{0}};
    void *freed = NULL; /* the last block freed, while no allocation reuses it */
    void *foreign = NULL;
    fz_expect(hk_malloc(other, &foreign, 64), false, "malloc");
    hk_event *ev[2] = {NULL, NULL};
    hk_context *dead = NULL;
    for (int step = 0; step < 32 && f.n; ++step) {
        live *m = &mem[fz_bits(&f, 1) % SLOTS];
        switch (fz_bits(&f, 1) % 10) {
        case 0: { /* malloc into an empty slot */
            if (m->p)
                break;
            size_t bytes = (size_t)fz_range(&f, 0, 4096);
            void *p = NULL;
            fz_expect(hk_malloc(ctx, &p, bytes), false, "malloc");
            m->p = p, m->bytes = p ? bytes : 0;
            if (p == freed)
                freed = NULL;
            break;
        }
        case 1: /* free a live block */
            fz_expect(hk_free(ctx, m->p), false, "free");
            if (m->p)
                freed = m->p;
            m->p = NULL, m->bytes = 0;
            break;
        case 2: { /* frees that must be refused */
            uint64_t stack[2];
            void *bad[4] = {m->p ? m->p + 1 + fz_bits(&f, 1) % 15 : NULL, stack, freed, foreign};
            void *p = bad[fz_bits(&f, 1) % 4];
            if (p)
                fz_expect(hk_free(ctx, p), true, "free of a pointer hk_malloc did not return");
            break;
        }
        case 3: { /* copy inside live blocks */
            live *src = &mem[fz_bits(&f, 1) % SLOTS];
            if (!m->p || !src->p)
                break;
            size_t bytes = (size_t)fz_range(&f, 0, (int64_t)(m->bytes < src->bytes ? m->bytes : src->bytes));
            size_t d = (size_t)fz_range(&f, 0, (int64_t)(m->bytes - bytes)), s = (size_t)fz_range(&f, 0, (int64_t)(src->bytes - bytes));
            fz_expect(hk_memcpy(ctx, m->p + d, src->p + s, bytes, (hk_copy_kind)fz_range(&f, 0, 3)), false, "memcpy");
            break;
        }
        case 4:
            if (m->p)
                fz_expect(hk_memset(ctx, m->p, (int)fz_bits(&f, 1), (size_t)fz_range(&f, 0, (int64_t)m->bytes)), false, "memset");
            else
                fz_expect(hk_memset(ctx, NULL, 0, (size_t)fz_range(&f, 0, 2)), false, "memset");
            break;
        case 5: fz_expect(hk_synchronize(fz_bool(&f) ? ctx : dead, NULL), false, "synchronize"); break;
        case 6: { /* events */
            hk_event **e = &ev[fz_bits(&f, 1) % 2];
            if (!*e)
                fz_expect(hk_event_create(fz_bool(&f) ? ctx : shared, e), false, "event_create");
            else if (fz_bool(&f))
                fz_expect(hk_event_record(*e, NULL), false, "event_record");
            else {
                hk_event_destroy(*e);
                fz_expect(hk_event_record(*e, NULL), true, "event_record after destroy");
                *e = NULL;
            }
            break;
        }
        case 7: {
            float ms;
            fz_expect(hk_event_elapsed_ms(ev[0], ev[1], fz_bool(&f) ? &ms : NULL), false, "event_elapsed_ms");
            break;
        }
        case 8: /* a destroyed context: its handle is refused and its events die with it */
            if (dead)
                break;
            hk_context_destroy(ctx);
            dead = ctx;
            for (int i = 0; i < SLOTS; ++i)
                mem[i] = (live){0}; /* freed with the context */
            freed = NULL;
            if (hk_context_create(&o, &ctx) != HK_OK)
                abort();
            void *p;
            fz_expect(hk_malloc(dead, &p, 16), true, "malloc on a destroyed context");
            for (int i = 0; i < 2; ++i)
                if (ev[i])
                    fz_expect(hk_event_record(ev[i], NULL), false, "event_record");
            break;
        default: {
            /* sizes no allocator grants (a 2 GiB one would, and count as the target's own leak of memory) */
            static const size_t huge[] = {SIZE_MAX, SIZE_MAX - 255, SIZE_MAX / 2 + 1, (size_t)1 << 62, 0};
            void *p = NULL;
            fz_expect(hk_malloc(ctx, fz_bool(&f) ? &p : NULL, huge[fz_bits(&f, 1) % 5]), false, "malloc");
            if (p) {
                for (int i = 0; i < SLOTS; ++i)
                    if (!mem[i].p) {
                        mem[i] = (live){p, 0};
                        p = NULL;
                        break;
                    }
                if (p)
                    fz_expect(hk_free(ctx, p), false, "free");
            }
        }
        }
    }
    for (int i = 0; i < 2; ++i)
        hk_event_destroy(ev[i]);
    hk_context_destroy(ctx); /* frees what the sequence left */
    hk_context_destroy(other);
    return 0;
}
