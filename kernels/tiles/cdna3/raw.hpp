/* hk::raw on real CDNA hardware: thin wrappers over the clang AMDGPU builtins (gfx9 family, gfx942 MFMA).
 * tiles/emu/raw.hpp implements the same names for the wave emulator; tiles/cdna3/amd.hpp builds the tile
 * interface on top of them, so the emulator runs exactly the composition logic the GPU runs.
 * Operands are plain arrays; they are bit-cast to the builtins' vector types (free after inlining). */
#ifndef HK_TILES_CDNA3_RAW_HPP
#define HK_TILES_CDNA3_RAW_HPP

#include <stdint.h>

#include "bytes.hpp"

/* The HIP keywords, defined here rather than taken from a ROCm header: Debian's HIP 5.2 headers do not compile under
 * clang 22, and the code objects are built with -nogpuinc -nogpulib so they depend on no installed ROCm. */
#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

#define HK_DEV __attribute__((device)) inline __attribute__((always_inline))
#define HK_KERNEL(name, P, N)                                                                                  \
    extern "C" __attribute__((global)) __attribute__((amdgpu_flat_work_group_size(1, N))) void name(const P p)
#define HK_LDS(T, name, n) __attribute__((shared)) T name[n]

namespace hk {
namespace raw {

typedef short v4i16 __attribute__((ext_vector_type(4)));
typedef _Float16 v4f16 __attribute__((ext_vector_type(4)));
typedef float v4f32 __attribute__((ext_vector_type(4)));
typedef float v16f32 __attribute__((ext_vector_type(16)));
typedef uint32_t v2u32 __attribute__((ext_vector_type(2)));
typedef uint32_t v3u32 __attribute__((ext_vector_type(3)));
typedef uint32_t v4u32 __attribute__((ext_vector_type(4)));

/* ---------------------------------------------------------------- geometry (1-D blocks) */
HK_DEV int thread_id() { return (int)__builtin_amdgcn_workitem_id_x(); }
HK_DEV int block_dim() { return (int)__builtin_amdgcn_workgroup_size_x(); }
HK_DEV int block_id(int dim)
{
    return dim == 0 ? (int)__builtin_amdgcn_workgroup_id_x()
                    : dim == 1 ? (int)__builtin_amdgcn_workgroup_id_y() : (int)__builtin_amdgcn_workgroup_id_z();
}
/* Wave-uniform value into an SGPR. */
HK_DEV int uniform(int v) { return __builtin_amdgcn_readfirstlane(v); }

/* Workgroup barrier with LDS/global visibility at workgroup scope (what __syncthreads does). */
HK_DEV void barrier()
{
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

/* Barrier that orders LDS only: waits for this wave's LDS accesses (lgkmcnt) but leaves global loads in flight,
 * which a software pipeline keeps outstanding across barriers. */
HK_DEV void lds_barrier()
{
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup", "local");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup", "local");
}
/* Scheduling hints: nothing moves across sched_fence; set_prio raises this wave's issue priority (MFMA phases). */
HK_DEV void sched_fence() { __builtin_amdgcn_sched_barrier(0); }
template <int P> HK_DEV void set_prio() { __builtin_amdgcn_s_setprio(P); }

/* v_perm_b32: byte i of the result is byte sel[i] of the 8 bytes {hi:lo} (0-3: lo, 4-7: hi). */
HK_DEV uint32_t perm(uint32_t hi, uint32_t lo, uint32_t sel) { return __builtin_amdgcn_perm(hi, lo, sel); }

/* ---------------------------------------------------------------- conversions and transcendentals */
HK_DEV uint16_t f32_to_bf16(float f) { return __builtin_bit_cast(uint16_t, (__bf16)f); }
HK_DEV uint16_t f32_to_f16(float f) { return __builtin_bit_cast(uint16_t, (_Float16)f); }
HK_DEV float f16_to_f32(uint16_t h) { return (float)__builtin_bit_cast(_Float16, h); }
HK_DEV float exp2(float x) { return __builtin_amdgcn_exp2f(x); }
HK_DEV float rcp(float x) { return __builtin_amdgcn_rcpf(x); }
HK_DEV float rsq(float x) { return __builtin_amdgcn_rsqf(x); }
HK_DEV float log2(float x) { return __builtin_amdgcn_logf(x); }

/* ---------------------------------------------------------------- cross-lane (docs/amd/cross-lane.md) */
template <int Ctrl, int RowMask = 0xf, int BankMask = 0xf, bool BoundCtrl = true>
HK_DEV int dpp(int old, int src)
{
    return __builtin_amdgcn_update_dpp(old, src, Ctrl, RowMask, BankMask, BoundCtrl);
}
template <int Pattern> HK_DEV int swizzle(int v) { return __builtin_amdgcn_ds_swizzle(v, Pattern); }
HK_DEV int bpermute(int byte_addr, int v) { return __builtin_amdgcn_ds_bpermute(byte_addr, v); }
HK_DEV int readlane(int v, int lane) { return __builtin_amdgcn_readlane(v, lane); }
/* Bit l: lane l's pred (0 for EXEC-disabled lanes); wave-uniform (an SGPR pair). */
HK_DEV uint64_t ballot(bool pred) { return __builtin_amdgcn_ballot_w64(pred); }

/* ---------------------------------------------------------------- buffer accesses (docs/amd/buffer.md)
 * A raw buffer: base + voffset, every access range-checked against num_records bytes by the hardware. */
typedef __amdgpu_buffer_rsrc_t rsrc;
constexpr int kRsrcFlags = 0x00020000; /* dword 3 for gfx942/gfx950 raw buffers */

HK_DEV rsrc make_rsrc(const void *base, uint32_t bytes)
{
    return __builtin_amdgcn_make_buffer_rsrc(const_cast<void *>(base), (short)0, (int)bytes, kRsrcFlags);
}
template <int Bytes> HK_DEV bytes_t<Bytes> buffer_load(rsrc r, uint32_t off)
{
    if constexpr (Bytes == 1)
        return {__builtin_amdgcn_raw_buffer_load_b8(r, (int)off, 0, 0)};
    else if constexpr (Bytes == 2)
        return {__builtin_amdgcn_raw_buffer_load_b16(r, (int)off, 0, 0)};
    else if constexpr (Bytes == 4)
        return {__builtin_amdgcn_raw_buffer_load_b32(r, (int)off, 0, 0)};
    else if constexpr (Bytes == 8)
        return __builtin_bit_cast(bytes_t<8>, __builtin_amdgcn_raw_buffer_load_b64(r, (int)off, 0, 0));
    else
        return __builtin_bit_cast(bytes_t<16>, __builtin_amdgcn_raw_buffer_load_b128(r, (int)off, 0, 0));
}
template <int Bytes> HK_DEV void buffer_store(rsrc r, uint32_t off, bytes_t<Bytes> v)
{
    if constexpr (Bytes == 1)
        __builtin_amdgcn_raw_buffer_store_b8(v.w, r, (int)off, 0, 0);
    else if constexpr (Bytes == 2)
        __builtin_amdgcn_raw_buffer_store_b16(v.w, r, (int)off, 0, 0);
    else if constexpr (Bytes == 4)
        __builtin_amdgcn_raw_buffer_store_b32(v.w, r, (int)off, 0, 0);
    else if constexpr (Bytes == 8)
        __builtin_amdgcn_raw_buffer_store_b64(__builtin_bit_cast(v2u32, v), r, (int)off, 0, 0);
    else
        __builtin_amdgcn_raw_buffer_store_b128(__builtin_bit_cast(v4u32, v), r, (int)off, 0, 0);
}

/* ---------------------------------------------------------------- explicit LDS accesses
 * p points into an HK_LDS array, aligned to the access: ds_read_b128 / ds_write_b64 / ds_write_b128. */
template <int Bytes> HK_DEV bytes_t<Bytes> lds_read(const void *p)
{
    static_assert(Bytes == 16, "lds_read: 16-byte reads only (the fragment loads)");
    typedef const __attribute__((address_space(3))) v4u32 *ptr;
    return __builtin_bit_cast(bytes_t<16>, *(ptr)p);
}
template <int Bytes> HK_DEV void lds_write(void *p, bytes_t<Bytes> v)
{
    if constexpr (Bytes == 4) {
        *(__attribute__((address_space(3))) uint32_t *)p = v.w;
    } else if constexpr (Bytes == 8) {
        *(__attribute__((address_space(3))) v2u32 *)p = __builtin_bit_cast(v2u32, v);
    } else {
        static_assert(Bytes == 16, "lds_write: 4, 8 or 16 bytes");
        *(__attribute__((address_space(3))) v4u32 *)p = __builtin_bit_cast(v4u32, v);
    }
}

/* ---------------------------------------------------------------- MFMA (docs/amd/mfma.md), gfx9 forms on both archs
 * c is updated in place; a/b hold this lane's items in the order the instruction reads them. */
HK_DEV void mfma_16x16x16_bf16(float (&c)[4], const uint16_t (&a)[4], const uint16_t (&b)[4])
{
    v4f32 r = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(__builtin_bit_cast(v4i16, a), __builtin_bit_cast(v4i16, b),
                                                         __builtin_bit_cast(v4f32, c), 0, 0, 0);
    __builtin_memcpy(c, &r, sizeof c);
}
HK_DEV void mfma_32x32x8_bf16(float (&c)[16], const uint16_t (&a)[4], const uint16_t (&b)[4])
{
    v16f32 r = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(__builtin_bit_cast(v4i16, a), __builtin_bit_cast(v4i16, b),
                                                        __builtin_bit_cast(v16f32, c), 0, 0, 0);
    __builtin_memcpy(c, &r, sizeof c);
}
/* fp32 (v_mfma_f32_16x16x4_f32): one item of A and B per lane, fp32 products and sums (not the xf32 form). */
HK_DEV void mfma_16x16x4_f32(float (&c)[4], const float (&a)[1], const float (&b)[1])
{
    v4f32 r = __builtin_amdgcn_mfma_f32_16x16x4f32(a[0], b[0], __builtin_bit_cast(v4f32, c), 0, 0, 0);
    __builtin_memcpy(c, &r, sizeof c);
}
/* f16: the bf16 forms' layouts, the items as IEEE half bit patterns. */
HK_DEV void mfma_16x16x16_f16(float (&c)[4], const uint16_t (&a)[4], const uint16_t (&b)[4])
{
    v4f32 r = __builtin_amdgcn_mfma_f32_16x16x16f16(__builtin_bit_cast(v4f16, a), __builtin_bit_cast(v4f16, b),
                                                    __builtin_bit_cast(v4f32, c), 0, 0, 0);
    __builtin_memcpy(c, &r, sizeof c);
}
HK_DEV void mfma_32x32x8_f16(float (&c)[16], const uint16_t (&a)[4], const uint16_t (&b)[4])
{
    v16f32 r = __builtin_amdgcn_mfma_f32_32x32x8f16(__builtin_bit_cast(v4f16, a), __builtin_bit_cast(v4f16, b),
                                                    __builtin_bit_cast(v16f32, c), 0, 0, 0);
    __builtin_memcpy(c, &r, sizeof c);
}

#if !defined(__gfx950__)
/* gfx942 fp8 (e4m3fnuz) forms: 8 bytes of A and B per lane. */
HK_DEV void mfma_16x16x32_fp8(float (&c)[4], const uint8_t (&a)[8], const uint8_t (&b)[8])
{
    v4f32 r = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(__builtin_bit_cast(long, a), __builtin_bit_cast(long, b),
                                                         __builtin_bit_cast(v4f32, c), 0, 0, 0);
    __builtin_memcpy(c, &r, sizeof c);
}
HK_DEV void mfma_32x32x16_fp8(float (&c)[16], const uint8_t (&a)[8], const uint8_t (&b)[8])
{
    v16f32 r = __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(__builtin_bit_cast(long, a), __builtin_bit_cast(long, b),
                                                          __builtin_bit_cast(v16f32, c), 0, 0, 0);
    __builtin_memcpy(c, &r, sizeof c);
}
#endif

} // namespace raw
} // namespace hk

#endif
