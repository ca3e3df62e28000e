/* The wave emulator's executor: workgroups of lane fibers (design in kernels/tiles/emu/emu.h).
 * Plain C, so the library needs no C++ runtime for it. Fibers switch with a few instructions of assembly on x86-64
 * (every wave collective switches 128 times, and glibc's swapcontext makes a signal-mask system call per switch,
 * which dominated the run time), elsewhere with ucontext. Under AddressSanitizer the switches are announced to it. */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__OPTIMIZE__)
/* Unoptimised builds (the sanitizer run) still schedule fibers at -O2 (as kernels_gfx*.cpp emulate). */
#pragma GCC optimize("O2")
#endif
#include "internal.h"
#include "tiles/emu/emu.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__linux__)
#define EMU_ASM_SWITCH 1
#else
#define EMU_ASM_SWITCH 0
#include <ucontext.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMU_ASAN 1
#endif
#endif
#ifdef EMU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#define EMU_STACK (64 * 1024)
#define EMU_MAX_WAVES 16

enum { LANE_READY, LANE_WAIT_OP, LANE_WAIT_BAR, LANE_DONE };

/* ---------------------------------------------------------------- fibers
 * fiber_switch(from, to) saves the running context in *from and resumes *to; fiber_init makes *f start entry() on
 * [stack, stack + size). */
#if EMU_ASM_SWITCH
typedef struct emu_fiber {
    void *sp;
} emu_fiber;

/* Callee-saved registers, MXCSR and the x87 control word go on the stack being left; rsp is swapped. */
void hk_emu_switch_x64(void **save_sp, void *sp) __attribute__((visibility("hidden")));
void hk_emu_fiber_entry_x64(void) __attribute__((visibility("hidden")));
__asm__(".text\n"
        ".p2align 4\n"
        ".globl hk_emu_switch_x64\n"
        ".hidden hk_emu_switch_x64\n"
        ".type hk_emu_switch_x64, @function\n"
        "hk_emu_switch_x64:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n"
        "    stmxcsr (%rsp)\n"
        "    fnstcw 4(%rsp)\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    ldmxcsr (%rsp)\n"
        "    fldcw 4(%rsp)\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size hk_emu_switch_x64, .-hk_emu_switch_x64\n"
        /* A new fiber's first switch returns here with its entry function in rbx and rsp 16-byte aligned. */
        ".globl hk_emu_fiber_entry_x64\n"
        ".hidden hk_emu_fiber_entry_x64\n"
        ".type hk_emu_fiber_entry_x64, @function\n"
        "hk_emu_fiber_entry_x64:\n"
        "    callq *%rbx\n"
        "    ud2\n"
        ".size hk_emu_fiber_entry_x64, .-hk_emu_fiber_entry_x64\n");

static void fiber_init(emu_fiber *f, char *stack, size_t size, void (*entry)(void))
{
    uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
    uint64_t *sp = (uint64_t *)(top - 64); /* control words, r15 .. rbp, return address; then top */
    uint32_t csr[2];
    __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(csr[0]), "=m"(csr[1]));
    memset(sp, 0, 64);
    memcpy(&sp[0], csr, sizeof csr);
    sp[5] = (uint64_t)(uintptr_t)entry; /* rbx */
    sp[7] = (uint64_t)(uintptr_t)hk_emu_fiber_entry_x64;
    f->sp = sp;
}
static void fiber_switch(emu_fiber *from, emu_fiber *to) { hk_emu_switch_x64(&from->sp, to->sp); }
#else
typedef struct emu_fiber {
    ucontext_t uc;
} emu_fiber;

static void fiber_init(emu_fiber *f, char *stack, size_t size, void (*entry)(void))
{
    getcontext(&f->uc);
    f->uc.uc_stack.ss_sp = stack;
    f->uc.uc_stack.ss_size = size;
    f->uc.uc_link = NULL; /* entry never returns */
    makecontext(&f->uc, entry, 0);
}
static void fiber_switch(emu_fiber *from, emu_fiber *to) { swapcontext(&from->uc, &to->uc); }
#endif

typedef struct emu_lane {
    emu_fiber fiber;
#ifdef EMU_ASAN
    void *fake_stack;
#endif
    int state;
    size_t lds_off;
    hk_emu_lane_info info;
} emu_lane;

typedef struct emu_wave {
    int live, arrived;
    uint64_t exec;
    hk_emu_op op;
    void *io[64];
    unsigned char imm[128];
    size_t imm_bytes;
} emu_wave;

typedef struct emu_launch {
    int gfx;
    void (*kernel)(const void *);
    const void *params;
    unsigned grid[3];
    unsigned block;
    size_t lds_limit;
    int failed; /* set atomically on the first fault */
    char msg[256];
} emu_launch;

/* Last accesses of one LDS dword through lds_read/lds_write: barrier epoch and wave of the last write, epoch and
 * wave set of the reads of the current epoch. */
typedef struct emu_lds_shadow {
    uint32_t w_epoch, r_epoch;
    uint16_t r_waves;
    uint8_t w_wave;
} emu_lds_shadow;

typedef struct emu_group {
    emu_fiber sched;
#ifdef EMU_ASAN
    void *sched_fake_stack;
    const void *sched_stack;
    size_t sched_stack_size;
#endif
    emu_launch *launch;
    emu_lane *lanes;
    char *stacks;
    unsigned char *lds;
    emu_lds_shadow *shadow; /* one per dword of lds */
    size_t lds_used;        /* bytes allocated by HK_LDS so far */
    uint32_t epoch;         /* barriers opened so far + 1 */
    emu_wave waves[EMU_MAX_WAVES];
    int live, at_barrier, faulted, in_op;
} emu_group;

static hk_emu_kernel *registry; /* filled by static initialisers before any call */

int hk_emu_register(hk_emu_kernel *k)
{
    k->next = registry;
    registry = k;
    return 1;
}

const hk_emu_kernel *hk_emu_find(int gfx, const char *name)
{
    for (const hk_emu_kernel *k = registry; k; k = k->next)
        if (k->gfx == gfx && strcmp(k->name, name) == 0)
            return k;
    return NULL;
}

static __thread emu_group *cur_group;
static __thread int cur_lane;

const hk_emu_lane_info *hk_emu_self(void) { return &cur_group->lanes[cur_lane].info; }

/* Lane -> scheduler; a finished lane (done) is never resumed, so AddressSanitizer may drop its fake stack. */
static void to_scheduler(emu_group *g, emu_lane *l, int done)
{
#ifdef EMU_ASAN
    __sanitizer_start_switch_fiber(done ? NULL : &l->fake_stack, g->sched_stack, g->sched_stack_size);
#else
    (void)done;
#endif
    fiber_switch(&l->fiber, &g->sched);
#ifdef EMU_ASAN
    __sanitizer_finish_switch_fiber(l->fake_stack, &g->sched_stack, &g->sched_stack_size);
#endif
}

/* Scheduler -> lane t, until it parks or finishes. */
static void resume(emu_group *g, int t)
{
    cur_lane = t;
#ifdef EMU_ASAN
    __sanitizer_start_switch_fiber(&g->sched_fake_stack, g->stacks + (size_t)t * EMU_STACK, EMU_STACK);
#endif
    fiber_switch(&g->sched, &g->lanes[t].fiber);
#ifdef EMU_ASAN
    __sanitizer_finish_switch_fiber(g->sched_fake_stack, NULL, NULL);
#endif
}

static void park(int state)
{
    emu_lane *l = &cur_group->lanes[cur_lane];
    l->state = state;
    to_scheduler(cur_group, l, 0);
}

void hk_emu_fault(const char *what)
{
    emu_group *g = cur_group;
    emu_launch *L = g->launch;
    if (!__atomic_exchange_n(&L->failed, 1, __ATOMIC_ACQ_REL)) {
        const hk_emu_lane_info *i = &g->lanes[cur_lane].info;
        hk_format(L->msg, sizeof L->msg, "%s (gfx%d, block %u,%u,%u, thread %d)", what, L->gfx, i->block[0],
                  i->block[1], i->block[2], i->tid);
    }
    g->faulted = 1;
    if (g->in_op) /* raised by a collective running on the scheduler's stack */
        return;
    for (;;) /* never resumed */
        park(LANE_WAIT_BAR);
}

void hk_emu_collective(hk_emu_op op, void *io, const void *imm, size_t imm_bytes)
{
    emu_group *g = cur_group;
    emu_wave *w = &g->waves[cur_lane / 64];
    if (imm_bytes > sizeof w->imm)
        hk_emu_fault("emulator: collective immediate too large");
    if (w->arrived == 0) {
        w->op = op;
        w->imm_bytes = imm_bytes;
        if (imm_bytes)
            memcpy(w->imm, imm, imm_bytes);
    } else if (w->op != op || w->imm_bytes != imm_bytes || (imm_bytes && memcmp(w->imm, imm, imm_bytes) != 0)) {
        hk_emu_fault("lanes of one wave reached different cross-lane operations (divergent collective)");
    }
    w->io[cur_lane % 64] = io;
    w->exec |= 1ull << (cur_lane % 64);
    w->arrived++;
    park(LANE_WAIT_OP);
}

void hk_emu_barrier(void)
{
    cur_group->at_barrier++;
    park(LANE_WAIT_BAR);
}

void *hk_emu_lds(size_t bytes, size_t align)
{
    emu_group *g = cur_group;
    emu_lane *l = &g->lanes[cur_lane];
    if (align < 16)
        align = 16;
    size_t off = (l->lds_off + align - 1) / align * align;
    if (off + bytes > g->launch->lds_limit)
        hk_emu_fault("LDS allocation beyond the arch's LDS size");
    l->lds_off = off + bytes;
    if (l->lds_off > g->lds_used)
        g->lds_used = l->lds_off;
    return g->lds + off;
}

size_t hk_emu_lds_offset(const void *p) { return (size_t)((const unsigned char *)p - cur_group->lds); }

int hk_emu_lds_access(const void *p, size_t bytes, int write, int wave)
{
    emu_group *g = cur_group;
    const unsigned char *b = p;
    if (b < g->lds || b + bytes > g->lds + g->lds_used) {
        hk_emu_fault("LDS access outside the workgroup's LDS allocations");
        return -1;
    }
    const size_t first = (size_t)(b - g->lds) / 4, last = ((size_t)(b - g->lds) + bytes - 1) / 4;
    for (size_t d = first; d <= last; ++d) {
        emu_lds_shadow *s = &g->shadow[d];
        if (s->w_epoch == g->epoch && s->w_wave != wave) {
            hk_emu_fault(write ? "LDS race: two waves write one dword with no barrier between"
                               : "LDS race: a wave reads a dword another wave wrote with no barrier between");
            return -1;
        }
        if (write && s->r_epoch == g->epoch && (s->r_waves & ~(1u << wave))) {
            hk_emu_fault("LDS race: a wave writes a dword another wave read with no barrier between");
            return -1;
        }
        if (write) {
            s->w_epoch = g->epoch;
            s->w_wave = (uint8_t)wave;
        } else {
            if (s->r_epoch != g->epoch) {
                s->r_epoch = g->epoch;
                s->r_waves = 0;
            }
            s->r_waves |= (uint16_t)(1u << wave);
        }
    }
    return 0;
}

static void lane_main(void)
{
    emu_group *g = cur_group;
#ifdef EMU_ASAN
    __sanitizer_finish_switch_fiber(NULL, &g->sched_stack, &g->sched_stack_size);
#endif
    g->launch->kernel(g->launch->params);
    emu_lane *l = &g->lanes[cur_lane];
    l->state = LANE_DONE;
    to_scheduler(g, l, 1); /* never resumed */
}

/* Run one workgroup to completion; returns 0, or -1 after a fault or deadlock. */
static int run_group(emu_group *g, const unsigned id[3])
{
    emu_launch *L = g->launch;
    int n = (int)L->block;
    memset(g->waves, 0, sizeof g->waves);
    memset(g->lds, 0xFF, L->lds_limit);
    memset(g->shadow, 0, L->lds_limit / 4 * sizeof *g->shadow);
    g->lds_used = 0;
    g->epoch = 1;
    g->live = n;
    g->at_barrier = 0;
    g->faulted = 0;
    for (int t = 0; t < n; ++t) {
        emu_lane *l = &g->lanes[t];
        l->state = LANE_READY;
        l->lds_off = 0;
        l->info = (hk_emu_lane_info){t, n, {id[0], id[1], id[2]}, L->gfx};
        g->waves[t / 64].live++;
        char *stack = g->stacks + (size_t)t * EMU_STACK;
#ifdef EMU_ASAN
        ASAN_UNPOISON_MEMORY_REGION(stack, EMU_STACK); /* frames a faulted launch left behind */
#endif
        fiber_init(&l->fiber, stack, EMU_STACK, lane_main);
    }
    cur_group = g;
    for (;;) {
        for (int t = 0; t < n; ++t) {
            if (g->lanes[t].state != LANE_READY)
                continue;
            resume(g, t);
            if (g->faulted)
                return -1;
            if (g->lanes[t].state == LANE_DONE) {
                g->live--;
                g->waves[t / 64].live--;
            }
        }
        int woke = 0;
        for (int w = 0; w * 64 < n; ++w) {
            emu_wave *wv = &g->waves[w];
            if (wv->arrived == 0 || wv->arrived < wv->live)
                continue;
            /* Exited lanes are EXEC-disabled: their io slot is NULL. */
            for (int l = 0; l < 64; ++l)
                if (!(wv->exec >> l & 1))
                    wv->io[l] = NULL;
            g->in_op = 1;
            wv->op(wv->io, wv->exec, wv->imm);
            g->in_op = 0;
            if (g->faulted)
                return -1;
            for (int l = 0; l < 64 && w * 64 + l < n; ++l)
                if (wv->exec >> l & 1)
                    g->lanes[w * 64 + l].state = LANE_READY;
            wv->arrived = 0;
            wv->exec = 0;
            woke = 1;
        }
        if (g->at_barrier > 0 && g->at_barrier == g->live) {
            for (int t = 0; t < n; ++t)
                if (g->lanes[t].state == LANE_WAIT_BAR)
                    g->lanes[t].state = LANE_READY;
            g->at_barrier = 0;
            g->epoch++;
            woke = 1;
        }
        if (g->live == 0)
            return 0;
        if (!woke) {
            if (!__atomic_exchange_n(&L->failed, 1, __ATOMIC_ACQ_REL))
                hk_format(L->msg, sizeof L->msg,
                          "deadlock: lanes wait at a barrier while lanes of their wave wait at a cross-lane "
                          "operation (gfx%d, block %u,%u,%u)", L->gfx, id[0], id[1], id[2]);
            return -1;
        }
    }
}

static void run_groups(int64_t begin, int64_t end, void *user)
{
    emu_launch *L = user;
    emu_group g;
    memset(&g, 0, sizeof g);
    g.launch = L;
    g.lanes = calloc(L->block, sizeof *g.lanes);
    g.stacks = malloc((size_t)L->block * EMU_STACK);
    g.lds = malloc(L->lds_limit);
    g.shadow = malloc(L->lds_limit / 4 * sizeof *g.shadow);
    if (!g.lanes || !g.stacks || !g.lds || !g.shadow) {
        if (!__atomic_exchange_n(&L->failed, 1, __ATOMIC_ACQ_REL))
            hk_format(L->msg, sizeof L->msg, "out of host memory for the emulated workgroup");
    } else {
        for (int64_t b = begin; b < end && !__atomic_load_n(&L->failed, __ATOMIC_ACQUIRE); ++b) {
            unsigned id[3] = {(unsigned)(b % L->grid[0]), (unsigned)(b / L->grid[0] % L->grid[1]),
                              (unsigned)(b / ((int64_t)L->grid[0] * L->grid[1]))};
            if (run_group(&g, id) != 0)
                break;
        }
    }
    cur_group = NULL;
    free(g.lanes);
    free(g.stacks);
    free(g.lds);
    free(g.shadow);
}

int hk_emu_run(int gfx, void (*kernel)(const void *), const void *params, const unsigned grid[3], unsigned block,
               char *msg, size_t msg_size)
{
    emu_launch L;
    memset(&L, 0, sizeof L);
    L.gfx = gfx;
    L.kernel = kernel;
    L.params = params;
    memcpy(L.grid, grid, sizeof L.grid);
    L.block = block;
    L.lds_limit = gfx >= 950 ? 160 * 1024 : 64 * 1024;
    if (block < 1 || block > 64 * EMU_MAX_WAVES) {
        hk_format(msg, msg_size, "block of %u threads; the emulator runs 1..%d", block, 64 * EMU_MAX_WAVES);
        return -1;
    }
    int64_t groups = (int64_t)grid[0] * grid[1] * grid[2];
    /* Small grains keep the per-chunk fiber setup cheap against uneven workgroups. */
    hk_parallel_for(groups, groups / 256 + 1, run_groups, &L);
    if (L.failed) {
        hk_format(msg, msg_size, "%s", L.msg);
        return -1;
    }
    return 0;
}
