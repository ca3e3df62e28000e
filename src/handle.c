/* The handle registry. The hk_context and hk_event pointers callers hold are not addresses: each is a
 * (generation, slot) pair of this table. Destroying one clears its slot, and generations are never handed out
 * twice, so a destroyed handle stays refused even after its memory and its slot are reused, and a pointer the
 * library never returned is refused without being dereferenced. A magic number inside the object cannot do this:
 * the object's memory is gone once freed (the compiler may even drop the store that clears the magic before
 * free), and a later object at the same address would answer for the stale handle. */
#include "internal.h"

#include <stdlib.h>

_Static_assert(sizeof(uintptr_t) == 8, "handles pack a 32-bit generation and a 32-bit slot");

enum { MAX_SLOTS = 1 << 20 }; /* live handles at once; slot numbers past this are refused before any lookup */

typedef struct slot {
    uint32_t gen;       /* 0: free */
    uint32_t next_free; /* free slots: the next free one, MAX_SLOTS for none */
    hk_handle_kind kind;
    void *object;
    uintptr_t owner; /* events: their context's handle */
} slot;

/* The registry's state; every access holds `lock`. */
static struct {
    pthread_rwlock_t lock;
    slot *slots;
    uint32_t capacity, free_head;
    uint32_t next_gen;
} reg = {PTHREAD_RWLOCK_INITIALIZER, NULL, 0, MAX_SLOTS, 1};

static slot *lookup(uintptr_t handle, hk_handle_kind kind)
{
    uint32_t gen = (uint32_t)(handle >> 32), index = (uint32_t)handle;
    if (gen == 0 || index >= reg.capacity)
        return NULL;
    slot *s = &reg.slots[index];
    return s->gen == gen && s->kind == kind ? s : NULL;
}

hk_status hk_handle_open(hk_handle_kind kind, void *object, uintptr_t owner, uintptr_t *handle)
{
    pthread_rwlock_wrlock(&reg.lock);
    if (reg.free_head == MAX_SLOTS) {
        uint32_t grown = reg.capacity ? reg.capacity * 2 : 64;
        slot *s = grown <= MAX_SLOTS ? realloc(reg.slots, grown * sizeof *s) : NULL;
        if (!s) {
            pthread_rwlock_unlock(&reg.lock);
            return hk_fail(HK_ERR_OUT_OF_MEMORY, "handle registry: cannot hold more than %u live handles", reg.capacity);
        }
        for (uint32_t i = reg.capacity; i < grown; ++i)
            s[i] = (slot){.gen = 0, .next_free = i + 1 < grown ? i + 1 : MAX_SLOTS};
        reg.slots = s;
        reg.free_head = reg.capacity;
        reg.capacity = grown;
    }
    uint32_t index = reg.free_head;
    slot *s = &reg.slots[index];
    reg.free_head = s->next_free;
    uint32_t gen = reg.next_gen++;
    if (reg.next_gen == 0)
        reg.next_gen = 1; /* after 2^32 - 1 handles the generations wrap; 0 stays "free" */
    *s = (slot){.gen = gen, .next_free = MAX_SLOTS, .kind = kind, .object = object, .owner = owner};
    *handle = (uintptr_t)gen << 32 | index;
    pthread_rwlock_unlock(&reg.lock);
    return HK_OK;
}

void *hk_handle_get(uintptr_t handle, hk_handle_kind kind)
{
    pthread_rwlock_rdlock(&reg.lock);
    slot *s = lookup(handle, kind);
    void *object = s ? s->object : NULL;
    pthread_rwlock_unlock(&reg.lock);
    return object;
}

static void release_slot(slot *s)
{
    uint32_t index = (uint32_t)(s - reg.slots);
    *s = (slot){.gen = 0, .next_free = reg.free_head};
    reg.free_head = index;
}

void *hk_handle_close(uintptr_t handle, hk_handle_kind kind)
{
    pthread_rwlock_wrlock(&reg.lock);
    slot *s = lookup(handle, kind);
    void *object = s ? s->object : NULL;
    if (s)
        release_slot(s);
    pthread_rwlock_unlock(&reg.lock);
    return object;
}

void hk_handle_close_owned(uintptr_t owner, void (*release)(void *object))
{
    pthread_rwlock_wrlock(&reg.lock);
    for (uint32_t i = 0; i < reg.capacity; ++i) {
        slot *s = &reg.slots[i];
        if (s->gen != 0 && s->owner == owner) {
            void *object = s->object;
            release_slot(s);
            release(object);
        }
    }
    pthread_rwlock_unlock(&reg.lock);
}
