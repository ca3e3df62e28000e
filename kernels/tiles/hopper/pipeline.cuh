/* Hopper producer/consumer ring: Stages slots of shared memory, each guarded by a `full` mbarrier (the producer's
 * TMA bytes landed) and an `empty` one (every consumer is done reading). Producer and consumers walk the slots in
 * the same order with a ring_pos (slot index and phase parity); the producer's first pass finds every slot empty
 * because waiting for the parity before a fresh barrier's first phase returns at once. Role split: a producer
 * warpgroup hands registers back (setmaxnreg.dec) to the consumer warpgroups that run the math. */
#pragma once

#include "barrier.cuh"
#include "tma.cuh"

namespace hk::hopper {

/* Where a walker is in the ring: slot `index`, and the parity of the phase it waits for there. */
template <int Stages> struct ring_pos {
    int index = 0;
    uint32_t phase = 0;
    __device__ __forceinline__ void advance()
    {
        if (++index == Stages) {
            index = 0;
            phase ^= 1;
        }
    }
};

template <int Stages> struct ring {
    barrier full[Stages], empty[Stages];

    /* One thread, before the CTA barrier that publishes it: each full barrier takes the producer's one arrival
     * (with its byte count), each empty one `consumer_arrivals`. */
    __device__ __forceinline__ void init(uint32_t consumer_arrivals)
    {
#pragma unroll
        for (int s = 0; s < Stages; ++s) {
            full[s].init(1);
            empty[s].init(consumer_arrivals);
        }
    }
    /* Producer: wait until slot pos is free, then announce `bytes` of TMA writes that complete its full barrier
     * (the copies name full[pos.index]). */
    __device__ __forceinline__ barrier &produce(const ring_pos<Stages> &pos, uint32_t bytes)
    {
        empty[pos.index].wait(pos.phase ^ 1);
        full[pos.index].arrive_expect_tx(bytes);
        return full[pos.index];
    }
    /* Consumer: wait until slot pos holds its data. */
    __device__ __forceinline__ void consume(const ring_pos<Stages> &pos) { full[pos.index].wait(pos.phase); }
    /* Consumer: this arrival's share of the slot is read (after the wgmma that read it has completed). */
    __device__ __forceinline__ void release(const ring_pos<Stages> &pos) { empty[pos.index].arrive(); }
};

/* Roles of a warp-specialised CTA: warpgroup 0 produces with `ProducerRegs` registers per thread, the others
 * consume with `ConsumerRegs` (the CTA's register file is fixed at launch: the producer's drop pays for the
 * consumers' rise). Needs __launch_bounds__(threads, 1). */
template <uint32_t ProducerRegs, uint32_t ConsumerRegs> __device__ __forceinline__ bool take_role(int warpgroup)
{
    if (warpgroup == 0) {
        warpgroup_reg_dealloc<ProducerRegs>();
        return true;
    }
    warpgroup_reg_alloc<ConsumerRegs>();
    return false;
}

} // namespace hk::hopper
