/* Hopper global-memory streaming for memory-bound kernels (on top of tiles/common/tiles.hpp): 16-byte vector
 * accesses with a cache hint per stream, and 16-bit vectors converted to and from fp32 two at a time. */
#ifndef HK_TILES_HOPPER_MEMORY_CUH
#define HK_TILES_HOPPER_MEMORY_CUH

#include "../common/tiles.hpp"

#include <type_traits>

namespace hk {

/* Cache hints, passed as a tag after the pointer. */
struct cache_stream {};   /* touched once: evict first from L1 and L2 (ld/st .cs); coherent, so in-place is safe */
struct cache_constant {}; /* never written while the kernel runs (tables, weights): non-coherent path, L1-cached */
struct cache_global {};   /* exchanged between CTAs of a grid: L2 only (ld/st .cg), never a stale L1 line */

namespace detail {
template <int Bytes> struct raw_of;
template <> struct raw_of<16> { using type = uint4; };
template <> struct raw_of<8> { using type = uint2; };
template <> struct raw_of<4> { using type = unsigned int; };
template <> struct raw_of<2> { using type = unsigned short; };
template <typename T, int N> using raw_t = typename raw_of<(int)sizeof(T) * N>::type;
} // namespace detail

/* One element through the read-only data path (data no thread of the kernel writes, read by many threads). */
template <typename T> HK_DEV T load_readonly(const T *p) { return __ldg(p); }

/* p aligned to sizeof(T) * N. */
template <int N, typename T> HK_DEV vec<T, N> load_vec(const T *p, cache_stream)
{
    detail::raw_t<T, N> r = __ldcs(reinterpret_cast<const detail::raw_t<T, N> *>(p));
    return *reinterpret_cast<const vec<T, N> *>(&r);
}
template <int N, typename T> HK_DEV vec<T, N> load_vec(const T *p, cache_constant)
{
    detail::raw_t<T, N> r = __ldg(reinterpret_cast<const detail::raw_t<T, N> *>(p));
    return *reinterpret_cast<const vec<T, N> *>(&r);
}
template <int N, typename T> HK_DEV vec<T, N> load_vec(const T *p, cache_global)
{
    detail::raw_t<T, N> r = __ldcg(reinterpret_cast<const detail::raw_t<T, N> *>(p));
    return *reinterpret_cast<const vec<T, N> *>(&r);
}
template <typename T, int N> HK_DEV void store_vec(T *p, const vec<T, N> &v, cache_global)
{
    __stcg(reinterpret_cast<detail::raw_t<T, N> *>(p), *reinterpret_cast<const detail::raw_t<T, N> *>(&v));
}
template <typename T, int N> HK_DEV void store_vec(T *p, const vec<T, N> &v, cache_stream)
{
    __stcs(reinterpret_cast<detail::raw_t<T, N> *>(p), *reinterpret_cast<const detail::raw_t<T, N> *>(&v));
}

/* Nanoseconds of the global timer (one clock for every SM) and the SM's own cycle count (over those nanoseconds: the
 * clock it ran at): for the timing probes of the lab's tools; no library kernel reads them. */
HK_DEV unsigned long long global_timer()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
HK_DEV unsigned long long sm_cycles() { return clock64(); }

/* Vector <-> fp32. bf16 pairs widen from one 32-bit word with a shift and a mask; bf16 and f16 pairs narrow
 * with one conversion instruction (cvt.rn.bf16x2.f32 / cvt.rn.f16x2.f32). */
template <typename T, int N> HK_DEV void unpack(const vec<T, N> &v, float (&out)[N])
{
    if constexpr (N % 2 == 0 && std::is_same_v<T, bf16>) {
        const unsigned *w = reinterpret_cast<const unsigned *>(&v);
#pragma unroll
        for (int i = 0; i < N / 2; ++i) {
            out[2 * i] = __uint_as_float(w[i] << 16);
            out[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
        }
    } else {
#pragma unroll
        for (int i = 0; i < N; ++i)
            out[i] = to_float(v.v[i]);
    }
}

template <typename T, int N> HK_DEV vec<T, N> pack(const float (&in)[N])
{
    vec<T, N> v;
    if constexpr (N % 2 == 0 && std::is_same_v<T, bf16>) {
        __nv_bfloat162 *w = reinterpret_cast<__nv_bfloat162 *>(&v);
#pragma unroll
        for (int i = 0; i < N / 2; ++i)
            w[i] = __floats2bfloat162_rn(in[2 * i], in[2 * i + 1]);
    } else if constexpr (N % 2 == 0 && std::is_same_v<T, f16>) {
        __half2 *w = reinterpret_cast<__half2 *>(&v);
#pragma unroll
        for (int i = 0; i < N / 2; ++i)
            w[i] = __floats2half2_rn(in[2 * i], in[2 * i + 1]);
    } else {
#pragma unroll
        for (int i = 0; i < N; ++i)
            v.v[i] = from_float<T>(in[i]);
    }
    return v;
}

/* n fp32 values (tables, fp32 parameters) through the read-only path, 16 bytes at a time where n allows; p is
 * then 16-byte aligned. */
template <int N> HK_DEV void load_floats(const float *p, float (&out)[N], cache_constant c)
{
    if constexpr (N % 4 == 0) {
#pragma unroll
        for (int i = 0; i < N; i += 4) {
            vec<float, 4> v = load_vec<4>(p + i, c);
#pragma unroll
            for (int j = 0; j < 4; ++j)
                out[i + j] = v.v[j];
        }
    } else {
#pragma unroll
        for (int i = 0; i < N; ++i)
            out[i] = __ldg(p + i);
    }
}

/* The same for N 16-bit values (bf16 or f16 tables and parameters): one access of N elements (N * 2 <= 16 bytes,
 * p aligned to it), widened to fp32. */
template <int N, typename T> HK_DEV void load_floats(const T *p, float (&out)[N], cache_constant c)
{
    static_assert(sizeof(T) == 2, "load_floats: fp32 or 16-bit elements");
    unpack(load_vec<N>(p, c), out);
}

/* Asynchronous global -> shared copies (cp.async): loads stay in flight without holding registers. A thread
 * that reads back only what it staged itself needs no barrier, only its own wait. 16 bytes bypass L1 (.cg);
 * 4 bytes go through it (.ca, the only 4-byte form). Copies issued since the last commit form one group. */
HK_DEV void copy_async16(void *smem, const void *gmem)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"((uint32_t)__cvta_generic_to_shared(smem)),
                 "l"(gmem)
                 : "memory");
}
HK_DEV void copy_async4(void *smem, const void *gmem)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"((uint32_t)__cvta_generic_to_shared(smem)),
                 "l"(gmem)
                 : "memory");
}
HK_DEV void copy_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
/* Waits until at most `pending` (0 .. 3, uniform) of this thread's newest groups are still in flight. */
HK_DEV void copy_async_wait(int pending)
{
    switch (pending) {
    case 0: asm volatile("cp.async.wait_group 0;" ::: "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;" ::: "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 3;" ::: "memory"); break;
    }
}

/* *p += (x, y) as one fp32 vector reduction in L2 (no return value; p 8-byte aligned). Concurrent additions to one
 * address all land, in an order that varies run to run. */
HK_DEV void red_add_f32x2(float *p, float x, float y)
{
    asm volatile("red.relaxed.gpu.global.add.v2.f32 [%0], {%1, %2};" ::"l"(p), "f"(x), "f"(y) : "memory");
}

/* One fp32 value from or to an element of a CUDA storage type (float, __nv_bfloat16, __half; round to nearest
 * even), and two adjacent elements as one access of twice the width (p aligned to it): accumulator epilogues. */
HK_DEV float load_as_float(const float *p) { return *p; }
HK_DEV float load_as_float(const __nv_bfloat16 *p) { return __bfloat162float(*p); }
HK_DEV float load_as_float(const __half *p) { return __half2float(*p); }
HK_DEV void store_from_float(float *p, float x) { *p = x; }
HK_DEV void store_from_float(__nv_bfloat16 *p, float x) { *p = __float2bfloat16_rn(x); }
HK_DEV void store_from_float(__half *p, float x) { *p = __float2half_rn(x); }
HK_DEV void store_from_float2(float *p, float x, float y) { *reinterpret_cast<float2 *>(p) = make_float2(x, y); }
HK_DEV void store_from_float2(__nv_bfloat16 *p, float x, float y)
{
    *reinterpret_cast<__nv_bfloat162 *>(p) = __floats2bfloat162_rn(x, y);
}
HK_DEV void store_from_float2(__half *p, float x, float y) { *reinterpret_cast<__half2 *>(p) = __floats2half2_rn(x, y); }
/* Two fp32 values as the 32-bit word of a pair of 16-bit elements (T: __nv_bfloat16 or __half). */
template <class T> HK_DEV uint32_t pack_pair(float x, float y)
{
    static_assert(sizeof(T) == 2, "16-bit elements");
    uint32_t w;
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        const __nv_bfloat162 v = __floats2bfloat162_rn(x, y);
        memcpy(&w, &v, 4);
    } else {
        const __half2 v = __floats2half2_rn(x, y);
        memcpy(&w, &v, 4);
    }
    return w;
}

} // namespace hk

#endif
