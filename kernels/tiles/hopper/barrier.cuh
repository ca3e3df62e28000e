/* Hopper (sm_90a) synchronisation primitives: shared-memory mbarriers with transaction counts (the
 * completion side of TMA copies), thread block cluster helpers (rank, cluster barrier, peer shared memory),
 * warpgroup register reallocation, warpgroup indices, and grid dependency control (programmatic dependent
 * launch). */
#pragma once

#include <stdint.h>

namespace hk::hopper {

__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/* An mbarrier in shared memory. Phases alternate parity; a waiter names the parity of the phase it
 * waits for. A fresh barrier is in phase 0, so waiting for parity 1 returns at once (the "previous"
 * phase counts as complete): producers start with parity 1 on their empty barriers. */
struct barrier {
    uint64_t word;

    __device__ __forceinline__ void init(uint32_t arrivals)
    {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(&word)), "r"(arrivals) : "memory");
    }
    /* One arrival that also announces `bytes` of async-proxy (TMA) writes to wait for. */
    __device__ __forceinline__ void arrive_expect_tx(uint32_t bytes)
    {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(&word)), "r"(bytes)
                     : "memory");
    }
    __device__ __forceinline__ void arrive()
    {
        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(&word)) : "memory");
    }
    __device__ __forceinline__ void wait(uint32_t parity)
    {
        asm volatile("{\n"
                     ".reg .pred done;\n"
                     "wait_%=:\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                     "@!done bra wait_%=;\n"
                     "}" ::"r"(smem_addr(&word)),
                     "r"(parity)
                     : "memory");
    }
};

/* ---- thread block clusters (sm_90): rank, cluster-wide barrier, and peer shared memory */

__device__ __forceinline__ uint32_t cluster_ctarank()
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

/* Every thread of every CTA of the cluster arrives and waits; orders shared memory (own and peers') across it.
 * Not .aligned: callers may reach it from diverged warps. */
__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release;\n"
                 "barrier.cluster.wait.acquire;" ::: "memory");
}

/* The shared::cluster address of `p` (an address in this CTA's shared memory) in cluster CTA `rank`. */
__device__ __forceinline__ uint32_t cluster_map(const void *p, uint32_t rank)
{
    uint32_t r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(smem_addr(p)), "r"(rank));
    return r;
}

/* Arrive on the barrier at bar's offset in cluster CTA `rank` (CTA-scope release: enough to hand back a stage
 * that this thread's finished reads used; a cluster-scope release waits for the warp's wgmma in flight). */
__device__ __forceinline__ void barrier_arrive_remote(barrier &bar, uint32_t rank)
{
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(cluster_map(&bar.word, rank)) : "memory");
}

/* 16 bytes of a peer CTA's shared memory (address from cluster_map). No memory clobber, so that several
 * loads issue before the first use; order them after the writes they read with cluster_sync(). */
__device__ __forceinline__ float4 ld_cluster_f4(uint32_t addr)
{
    float4 v;
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(addr));
    return v;
}

/* Make barrier initialisation visible to the async proxy (TMA) before any copy names the barrier. */
__device__ __forceinline__ void fence_barrier_init()
{
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/* Ordinary shared-memory stores that the tensor cores or TMA read next need this in each writer. */
__device__ __forceinline__ void fence_proxy_async()
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/* Warpgroup register budget (needs a register cap at entry: __launch_bounds__(threads, 1)). */
template <uint32_t regs> __device__ __forceinline__ void warpgroup_reg_alloc()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(regs));
}
template <uint32_t regs> __device__ __forceinline__ void warpgroup_reg_dealloc()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(regs));
}

/* Warpgroup index, made warp-uniform so role branches stay uniform. */
__device__ __forceinline__ int warpgroup_index()
{
    return __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0);
}

/* ---- programmatic dependent launch (sm_90): no-ops unless the launch carries the programmatic
 * stream-serialization attribute */

/* Block until the grid this launch depends on has completed and its memory is visible: everything before it
 * (barrier init, tensor-map prefetch) overlaps the previous kernel, so no global access of data it may have
 * written can come before it. */
__device__ __forceinline__ void grid_dependency_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

/* Let the next kernel's CTAs start their prologue once every CTA of this grid has said so (or exited); it
 * grants no visibility, the dependent's grid_dependency_wait still waits for this grid's completion. */
__device__ __forceinline__ void grid_dependents_launch()
{
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

/* Every thread of the CTA (hardware barrier 0); orders shared memory among them. */
__device__ __forceinline__ void cta_sync() { __syncthreads(); }
/* Reconverge the warp (after one lane ran a role alone). */
__device__ __forceinline__ void warp_sync() { __syncwarp(); }

/* Sync `threads` threads on hardware barrier `id` (1..15; 0 is cta_sync). */
__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t threads)
{
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

/* A counter shared by the CTAs of one grid (device scope): returns its value before adding. Release: publishes every
 * write this CTA ordered before it (its threads' writes, through a barrier they all passed, then this thread's);
 * acquire: the writes published by the adds before this one become visible to this thread, and through a barrier
 * after it to the others. */
__device__ __forceinline__ uint32_t counter_add(uint32_t *counter, uint32_t value)
{
    uint32_t old;
    asm volatile("atom.add.acq_rel.gpu.global.u32 %0, [%1], %2;" : "=r"(old) : "l"(counter), "r"(value) : "memory");
    return old;
}

/* Spin until a counter of counter_add reaches `value`; acquire: the writes published by the adds that brought it
 * there are visible to this thread (and, through a barrier after it, to the others). */
__device__ __forceinline__ void counter_wait(const uint32_t *counter, uint32_t value)
{
    uint32_t v;
    do
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(counter) : "memory");
    while (v != value);
}

} // namespace hk::hopper
