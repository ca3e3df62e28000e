/* MFMA probe kernels: D = A * B for one atom-sized tile per wave through the tile interface (gl -> rt, mma,
 * rt -> gl). Not embedded in libhk: built per arch for the ISA check (tests/amd/test_isa.c looks for the
 * expected v_mfma opcodes) and built for the emulator by tests/amd, where they must reproduce a host matmul. */
#include "tiles/common/tiles.hpp"

typedef struct hk_mfma_probe_params {
    const void *a, *b; /* row-major M x K and K x N (bf16, f16 or the arch's fp8) */
    float *d;          /* row-major M x N */
} hk_mfma_probe_params;

namespace {

template <typename Atom, typename T, int M, int N, int K> HK_DEV void probe(const hk_mfma_probe_params &p)
{
    using namespace hk;
    rt<T, M, K, typename Atom::A> a;
    rt<T, K, N, typename Atom::B> b;
    rt<float, M, N, typename Atom::C> d;
    load(a, gl<T>{(T *)p.a, M, K, K}, 0, 0);
    load(b, gl<T>{(T *)p.b, K, N, N}, 0, 0);
    zero(d);
    mma<Atom>(d, a, b);
    store(gl<float>{p.d, M, N, N}, d, 0, 0);
}

} // namespace

#define HK_PROBE(name, Atom, T, M, N, K) \
    HK_KERNEL(name, hk_mfma_probe_params, 64) { probe<hk::Atom, T, M, N, K>(p); }

HK_PROBE(hk_probe_bf16_16x16x16, mma_bf16_16x16x16, hk::bf16, 16, 16, 16)
HK_PROBE(hk_probe_bf16_32x32x8, mma_bf16_32x32x8, hk::bf16, 32, 32, 8)
HK_PROBE(hk_probe_f16_16x16x16, mma_f16_16x16x16, hk::f16, 16, 16, 16)
HK_PROBE(hk_probe_f16_32x32x8, mma_f16_32x32x8, hk::f16, 32, 32, 8)
/* Two atoms deep in K and two wide in N: exercises the tile loops of mma(). */
HK_PROBE(hk_probe_bf16_default_32x32x64, mma_bf16, hk::bf16, 16, 32, 64)
#if HK_GFX >= 950
HK_PROBE(hk_probe_bf16_16x16x32, mma_bf16_16x16x32, hk::bf16, 16, 16, 32)
HK_PROBE(hk_probe_bf16_32x32x16, mma_bf16_32x32x16, hk::bf16, 32, 32, 16)
HK_PROBE(hk_probe_f16_16x16x32, mma_f16_16x16x32, hk::f16, 16, 16, 32)
HK_PROBE(hk_probe_f16_32x32x16, mma_f16_32x32x16, hk::f16, 32, 32, 16)
HK_PROBE(hk_probe_fp8_16x16x128, mma_fp8_16x16x128, hk::fp8, 16, 16, 128)
HK_PROBE(hk_probe_fp8_32x32x64, mma_fp8_32x32x64, hk::fp8, 32, 32, 64)
#else
HK_PROBE(hk_probe_fp8_16x16x32, mma_fp8_16x16x32, hk::fp8, 16, 16, 32)
HK_PROBE(hk_probe_fp8_32x32x16, mma_fp8_32x32x16, hk::fp8, 32, 32, 16)
#endif
