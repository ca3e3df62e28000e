/* The wave emulator's executor: workgroups of lane fibers (design in kernels/tiles/emu/emu.h).
 * Plain C with ucontext, so the library needs no C++ runtime for it. */
#include "internal.h"
#include "tiles/emu/emu.h"

#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#define EMU_STACK (64 * 1024)
#define EMU_MAX_WAVES 16

enum { LANE_READY, LANE_WAIT_OP, LANE_WAIT_BAR, LANE_DONE };

typedef struct emu_lane {
    ucontext_t ctx;
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

typedef struct emu_group {
    ucontext_t sched;
    emu_launch *launch;
    emu_lane *lanes;
    char *stacks;
    unsigned char *lds;
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

static void park(int state)
{
    emu_lane *l = &cur_group->lanes[cur_lane];
    l->state = state;
    swapcontext(&l->ctx, &cur_group->sched);
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
    return g->lds + off;
}

static void lane_main(void)
{
    emu_group *g = cur_group;
    g->launch->kernel(g->launch->params);
    /* Returning resumes the scheduler through uc_link. */
    g->lanes[cur_lane].state = LANE_DONE;
}

/* Run one workgroup to completion; returns 0, or -1 after a fault or deadlock. */
static int run_group(emu_group *g, const unsigned id[3])
{
    emu_launch *L = g->launch;
    int n = (int)L->block;
    memset(g->waves, 0, sizeof g->waves);
    memset(g->lds, 0xFF, L->lds_limit);
    g->live = n;
    g->at_barrier = 0;
    g->faulted = 0;
    for (int t = 0; t < n; ++t) {
        emu_lane *l = &g->lanes[t];
        l->state = LANE_READY;
        l->lds_off = 0;
        l->info = (hk_emu_lane_info){t, n, {id[0], id[1], id[2]}, L->gfx};
        g->waves[t / 64].live++;
        getcontext(&l->ctx);
        l->ctx.uc_stack.ss_sp = g->stacks + (size_t)t * EMU_STACK;
        l->ctx.uc_stack.ss_size = EMU_STACK;
        l->ctx.uc_link = &g->sched;
        makecontext(&l->ctx, lane_main, 0);
    }
    cur_group = g;
    for (;;) {
        for (int t = 0; t < n; ++t) {
            if (g->lanes[t].state != LANE_READY)
                continue;
            cur_lane = t;
            swapcontext(&g->sched, &g->lanes[t].ctx);
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
    if (!g.lanes || !g.stacks || !g.lds) {
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
