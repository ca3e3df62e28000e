/* The wave emulator's C interface, shared by its executor (backends/emulator/executor.c) and the emulated
 * primitives (tiles/emu/raw.hpp).
 *
 * Design: every lane of a workgroup is a fiber (ucontext) on one host thread; workgroups run in parallel on
 * hk_parallel_for workers. Lanes run freely until they reach a wave collective (DPP, swizzle, bpermute,
 * readlane, MFMA, ...) or a workgroup barrier, where they park. A collective runs once every live lane of the
 * wave has arrived (lanes that returned from the kernel count as EXEC-disabled); a barrier opens once every
 * live lane of the workgroup has arrived. Lanes of one wave reaching different collectives (other operation or
 * immediate), or a wave stuck between a collective and a barrier, is reported as a fault (divergent control
 * flow the GPU would not run as written). Limitation: lanes reaching the same operation with the same
 * immediates from two branches are merged into one full-wave operation, where the GPU would run it twice under
 * partial EXEC; kernels keep cross-lane operations in wave-uniform control flow. LDS is a per-workgroup arena of the arch's size, filled with 0xFF (NaN) at start; the explicit LDS accesses (lds_read/lds_write) are
 * also checked for bounds, cross-wave races within a barrier interval and (reads) bank conflicts. */
#ifndef HK_TILES_EMU_H
#define HK_TILES_EMU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hk_emu_lane_info {
    int tid;          /* thread index in the 1-D block */
    int block_dim;    /* threads per block */
    unsigned block[3]; /* workgroup id */
    int gfx;          /* 942 or 950 */
} hk_emu_lane_info;

/* A wave collective: io[l] is lane l's argument/result block (NULL for a lane that has exited, whose bit in
 * exec is 0); imm points to the wave-uniform immediate bytes. */
typedef void (*hk_emu_op)(void *const io[64], uint64_t exec, const void *imm);

__attribute__((visibility("hidden"))) const hk_emu_lane_info *hk_emu_self(void);
/* Park this lane until its wave runs op; imm must be byte-identical on every lane (else a fault). */
__attribute__((visibility("hidden"))) void hk_emu_collective(hk_emu_op op, void *io, const void *imm, size_t imm_bytes);
__attribute__((visibility("hidden"))) void hk_emu_barrier(void);
/* Static LDS: every lane allocates in program order, so all get the same address. */
__attribute__((visibility("hidden"))) void *hk_emu_lds(size_t bytes, size_t align);
/* Explicit LDS accesses (tiles/emu/raw.hpp lds_read/lds_write): check that [p, p + bytes) lies in this
 * workgroup's LDS allocations and that no other wave wrote it (or, for a write, touched it) since the last
 * barrier, then record the access for wave `wave`. 0, or -1 after recording a fault (from a collective's op; from
 * a lane it does not return). */
__attribute__((visibility("hidden"))) int hk_emu_lds_access(const void *p, size_t bytes, int write, int wave);
/* Byte offset of p from the start of the workgroup's LDS. */
__attribute__((visibility("hidden"))) size_t hk_emu_lds_offset(const void *p);
/* Record a fault (first one wins) and stop the launch; does not return to the kernel (called from a
 * collective's op it returns, and the scheduler stops after the op). */
__attribute__((visibility("hidden"))) void hk_emu_fault(const char *what);

/* A kernel built for the emulator (tiles/emu/raw.hpp HK_KERNEL registers each at load time). */
typedef struct hk_emu_kernel {
    const char *name;
    int gfx;
    int max_threads;
    void (*entry)(const void *params);
    struct hk_emu_kernel *next;
} hk_emu_kernel;
__attribute__((visibility("hidden"))) int hk_emu_register(hk_emu_kernel *k);
__attribute__((visibility("hidden"))) const hk_emu_kernel *hk_emu_find(int gfx, const char *name);

/* Run kernel(params) on grid[0] x grid[1] x grid[2] workgroups of `block` threads (1..1024) as arch gfx.
 * Returns 0, or -1 with a message in msg on a fault. */
__attribute__((visibility("hidden"))) int hk_emu_run(int gfx, void (*kernel)(const void *), const void *params,
                                                     const unsigned grid[3], unsigned block, char *msg,
                                                     size_t msg_size);

#ifdef __cplusplus
}
#endif
#endif
