/* Hopper TMA (bulk tensor copy engine): 2-D tile loads from a tensor map into shared memory that
 * complete on an mbarrier. Out-of-bounds box elements are filled with zeros and still count toward
 * the barrier's byte total, which is what makes ragged edges free for the consumer. */
#pragma once

#include "barrier.cuh"

#include <cuda.h>

namespace hk::hopper {

/* Pull the tensor map (a __grid_constant__ kernel parameter) into the descriptor cache early. */
__device__ __forceinline__ void tma_prefetch_map(const CUtensorMap *map)
{
    asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

/* Copy the box at element coordinates (x = innermost, y) into dst (1024-byte aligned for the 128B
 * swizzle); the barrier receives the bytes. */
__device__ __forceinline__ void tma_load_2d(void *dst, const CUtensorMap *map, barrier &bar, int32_t x, int32_t y)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4}], [%2];" ::"r"(smem_addr(dst)),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(&bar.word)), "r"(x), "r"(y)
                 : "memory");
}

/* The same for a 4-D map (coordinates innermost first): attention's [feature, token, head, batch] views, whose
 * strides TMA takes as they are (a packed QKV tensor is three such views). */
__device__ __forceinline__ void tma_load_4d(void *dst, const CUtensorMap *map, barrier &bar, int32_t x, int32_t y,
                                            int32_t z, int32_t w)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5, %6}], [%2];" ::"r"(smem_addr(dst)),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(&bar.word)), "r"(x), "r"(y), "r"(z), "r"(w)
                 : "memory");
}

/* tma_load_2d with an L2 cache hint (the 64-bit policy operand: l2_hint_evict_last / l2_hint_evict_first). */
__device__ __forceinline__ void tma_load_2d_hint(void *dst, const CUtensorMap *map, barrier &bar, int32_t x, int32_t y,
                                                 uint64_t hint)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
                 " [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(smem_addr(dst)),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(&bar.word)), "r"(x), "r"(y), "l"(hint)
                 : "memory");
}
/* Cache-policy encodings of the whole access kept last / dropped first (the values CUTLASS's CacheHintSm90 names). */
constexpr uint64_t l2_hint_evict_last = 0x14F0000000000000ull, l2_hint_evict_first = 0x12F0000000000000ull;

/* The same box written at dst's offset in every cluster CTA named in cta_mask (bit i: rank i); each copy completes
 * on the barrier at bar's offset in its own CTA. */
__device__ __forceinline__ void tma_load_2d_multicast(void *dst, const CUtensorMap *map, barrier &bar, int32_t x, int32_t y,
                                                      uint16_t cta_mask)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(smem_addr(dst)),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(&bar.word)), "r"(x), "r"(y), "h"(cta_mask)
                 : "memory");
}

/* Dynamic shared memory rounded up to the 1024-byte alignment of 128B-swizzled tiles (the swizzle phase is
 * taken from address bits 7-9; the launch reserves 1 KiB of slack for this). */
__device__ __forceinline__ uint8_t *swizzle_aligned(uint8_t *p)
{
    return reinterpret_cast<uint8_t *>((reinterpret_cast<uintptr_t>(p) + 1023) & ~uintptr_t(1023));
}

/* Byte offset of (row, byte) in a tile of 128-byte rows under the 128-byte swizzle (16-byte units XORed
 * with row % 8): the layout TMA reads and writes with CU_TENSOR_MAP_SWIZZLE_128B. Rows of one 16-byte unit
 * column land in different banks, so staging a fragment through it is conflict-free. */
__device__ __forceinline__ uint32_t sw128_offset(uint32_t row, uint32_t byte)
{
    return row * 128 + (((byte >> 4) ^ (row & 7)) << 4) + (byte & 15);
}

/* Store the box at (x, y) from src (1024-byte aligned); out-of-bounds rows are not written, but along the
 * inner dimension the H200 clips only to 16-byte groups (a ragged edge inside a group is written up to the
 * group's end). Completion is tracked per issuing thread with bulk groups. */
__device__ __forceinline__ void tma_store_2d(const CUtensorMap *map, const void *src, int32_t x, int32_t y)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                     reinterpret_cast<uint64_t>(map)),
                 "r"(smem_addr(src)), "r"(x), "r"(y)
                 : "memory");
}
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
/* Wait until at most `pending` store groups still read shared memory (the source may be reused). */
template <int pending> __device__ __forceinline__ void tma_store_wait_read()
{
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(pending) : "memory");
}

} // namespace hk::hopper
