/* Emulator test kernels for the AMD primitives (tests/amd/test_prims.c), built as host C++ once per emulated
 * arch by prims_gfx942.cpp / prims_gfx950.cpp, together with kernels/cdna/mfma_probe.hip. */
#include "tiles/common/tiles.hpp"
#include "tiles/cdna3/gemm_tiles.hpp"
#include "cdna/mfma_probe.hip"
#include "prims.h"

using namespace hk;

/* Per lane l: DPP of src = 100 + l with old = -1000 - l, one row per control of prims.h. */
HK_KERNEL(t_dpp, hk_prim_params, 64)
{
    const int l = lane(), src = 100 + l, old = -1000 - l;
    int *o = p.out + l;
    o[0 * 64] = raw::dpp<0xB1>(old, src);
    o[1 * 64] = raw::dpp<0x111, 0xf, 0xf, false>(old, src);
    o[2 * 64] = raw::dpp<0x101, 0xf, 0xf, true>(old, src);
    o[3 * 64] = raw::dpp<0x123>(old, src);
    o[4 * 64] = raw::dpp<0x140>(old, src);
    o[5 * 64] = raw::dpp<0x141>(old, src);
    o[6 * 64] = raw::dpp<0x142, 0xa, 0xf, false>(old, src);
    o[7 * 64] = raw::dpp<0x143, 0xc, 0xf, false>(old, src);
    o[8 * 64] = raw::dpp<0x111, 0x5, 0x3, true>(old, src);
    o[9 * 64] = raw::swizzle<0x401F>(src);
    o[10 * 64] = raw::swizzle<0x041F>(src);
    o[11 * 64] = raw::swizzle<0x801B>(src);
    o[12 * 64] = raw::swizzle<0x0010>(src);
    o[13 * 64] = raw::readlane(src, 37);
    o[14 * 64] = __builtin_bit_cast(int, shfl_xor((float)src, 5));
    o[15 * 64] = __builtin_bit_cast(int, shfl_xor((float)src, 32));
}

/* bpermute with the top lanes exited: lane l reads lane 63 - l. */
HK_KERNEL(t_bpermute, hk_prim_params, 64)
{
    const int l = lane();
    if (l >= p.n)
        return;
    p.out[l] = raw::bpermute((63 - l) * 4, 100 + l);
}

/* warp_ballot with lanes p.n.. exited: out[l] / out[64 + l] = low / high half of the ballot of l % 3 == 0. */
HK_KERNEL(t_ballot, hk_prim_params, 64)
{
    const int l = lane();
    if (l >= p.n)
        return;
    const uint64_t b = warp_ballot(l % 3 == 0);
    p.out[l] = (int)(uint32_t)b;
    p.out[64 + l] = (int)(uint32_t)(b >> 32);
}

/* pack_lane_bits of 1-, 4- and 8-bit fields: out[64 i + l] for Bits = 1, 4, 8 (fields: prims.h's HK_PACK_FIELD). */
HK_KERNEL(t_pack, hk_prim_params, 64)
{
    const int l = lane();
    p.out[l] = (int)pack_lane_bits<1>(HK_PACK_FIELD(1, l));
    p.out[64 + l] = (int)pack_lane_bits<4>(HK_PACK_FIELD(4, l));
    p.out[128 + l] = (int)pack_lane_bits<8>(HK_PACK_FIELD(8, l));
}

/* warp_sum / warp_max of p.fin[l] (every lane stores), then block_sum over 256 threads. */
HK_KERNEL(t_reduce, hk_prim_params, 256)
{
    HK_LDS(float, scratch, 4);
    const int t = thread();
    const float v = p.fin[t];
    p.fout[t] = warp_sum(v);
    p.fout[256 + t] = warp_max(v);
    p.fout[512 + t] = block_sum(v, scratch);
}

/* Range-checked 16-byte loads of a view of p.n floats at float index 4 l, stored through a view of p.n floats. */
HK_KERNEL(t_buffer, hk_prim_params, 64)
{
    const int l = lane();
    buf<float> in = make_buf(p.fin, (uint32_t)p.n);
    buf<float> out = make_buf(p.fout, (uint32_t)p.n);
    store_vec(out, 4 * l, load_vec<4>(in, 4 * l));
}

HK_KERNEL(t_math, hk_prim_params, 64)
{
    const int l = lane();
    if (l >= p.n)
        return;
    p.fout[l] = exp2_fast(p.fin[l]);
    p.fout[64 + l] = rcp_fast(p.fin[l]);
    p.fout[128 + l] = rsqrt_fast(p.fin[l]);
    p.fout[192 + l] = log2_fast(p.fin[l]);
    p.fout[256 + l] = tanh_fast(p.fin[l]);
}

/* Column reductions of a 32 x 32 accumulator tile of 16 x 16 fragments read from p.fin (row-major): per column
 * fragment j, out[64 j + l] = col_max / [128 + ...] col_sum; then the tile scaled by its column maxima (mul_cols)
 * and stored back to p.fout. */
HK_KERNEL(t_col_reduce, hk_prim_params, 64)
{
    const int l = lane();
    rt<float, 32, 32, layout_c<16, 16>> t;
    load(t, gl<float>{const_cast<float *>(p.fin), 32, 32, 32}, 0, 0);
    float mx[2], sum[2];
    col_max(mx, t);
    col_sum(sum, t);
    for (int j = 0; j < 2; ++j) {
        p.fout[1024 + 64 * j + l] = mx[j];
        p.fout[1024 + 128 + 64 * j + l] = sum[j];
    }
    mul_cols(t, mx);
    store(gl<float>{p.fout, 32, 32, 32}, t, 0, 0);
}

/* Attention's V^T staging: p.in is a bf16 [p.n >> 8 keys][p.n & 255 features] matrix (row stride 72), staged as the
 * K-strided operand of a 64-feature x BK-key LDS tile (the arch's 64- or 128-byte rows) with 4-key quads interleaved
 * (k_quads_interleaved), then read back as A fragments (16 x 32, 8 items a lane, one 16-byte read each):
 * out[((BK / 32 * i + c) * 64 + l) * 8 + e] is item e of lane l in fragment (i, c). */
HK_KERNEL(t_stage_vt, hk_prim_params, 256)
{
    constexpr int BK = HK_GFX >= 950 ? 64 : 32;
    HK_LDS(bf16, lds, 64 * BK);
    const int keys = p.n >> 8, feats = p.n & 255;
    stage<bf16, 64, BK, false, true, 256, k_quads_interleaved> sv{{static_cast<const bf16 *>(p.in), feats, keys, 72}, {}};
    sv.load(0);
    const lds_tile<bf16, 64, BK> tile{lds};
    sv.store(tile);
    raw::lds_barrier();
    if (warp() != 0)
        return;
    rt<bf16, 64, BK, layout_a<16, 8>> f;
    load(f, tile, 0, 0);
    const int l = lane();
    for (int i = 0; i < 4; ++i)
        for (int c = 0; c < BK / 32; ++c)
            for (int e = 0; e < 8; ++e)
                p.out[((BK / 32 * i + c) * 64 + l) * 8 + e] = f.d[i][c][e].bits;
}

/* Lanes of one wave reaching different collectives: the emulator must refuse. (Lanes reaching the same
 * operation from different branches look alike to it: see tiles/emu/emu.h.) */
HK_KERNEL(t_diverge, hk_prim_params, 64)
{
    const int l = lane();
    p.fout[l] = l < 32 ? warp_sum(1.0f) : (float)raw::readlane(l, 3);
}

/* A lane group of the raw 16x16x16 bf16 MFMA with operands placed by docs/amd/mfma.md's table:
 * lane l item e = A[l % 16][4 * (l / 16) + e] (and B[4 * (l / 16) + e][l % 16]); D[4 * (l / 16) + r][l % 16]. */
HK_KERNEL(t_mfma_raw, hk_prim_params, 64)
{
    const int l = lane();
    const uint16_t *A = static_cast<const uint16_t *>(p.in), *B = A + 256;
    uint16_t a[4], b[4];
    float c[4] = {0, 0, 0, 0};
    for (int e = 0; e < 4; ++e) {
        a[e] = A[(l % 16) * 16 + 4 * (l / 16) + e];
        b[e] = B[(4 * (l / 16) + e) * 16 + l % 16];
    }
    raw::mfma_16x16x16_bf16(c, a, b);
    for (int r = 0; r < 4; ++r)
        p.fout[(4 * (l / 16) + r) * 16 + l % 16] = c[r];
}

/* Explicit LDS accesses, 2 waves: each lane writes its dword, then (p.n selects) 0: after a barrier, lane l reads
 * the 16 bytes at 16 l (conflict-free) into p.out; 1: the same with no barrier (a race between the waves); 2: lanes
 * read at 128-byte strides (a bank conflict); 3: a read past the allocation. */
HK_KERNEL(t_lds, hk_prim_params, 128)
{
    HK_LDS(uint32_t, lds, 256);
    const int t = thread();
    raw::lds_write<4>(lds + t, raw::bytes_t<4>{(uint32_t)(1000 + t)});
    raw::lds_write<4>(lds + 128 + t, raw::bytes_t<4>{(uint32_t)(2000 + t)});
    if (p.n != 1)
        raw::lds_barrier();
    const int l = lane();
    const uint32_t *at = p.n == 2 ? lds + 32 * (l % 8) : p.n == 3 ? lds + 256 : lds + 4 * l;
    const raw::bytes_t<16> v = raw::lds_read<16>(at + (p.n == 1 ? 64 * (1 - warp()) : 0));
    for (int i = 0; i < 4; ++i)
        p.out[4 * t + i] = (int)v.w[i];
}

/* v_perm_b32 with a few selectors: out[4 l + i] = perm(hi, lo, sel_i), hi = 0x07060504 + l, lo = 0x03020100. */
HK_KERNEL(t_perm, hk_prim_params, 64)
{
    const int l = lane();
    const uint32_t hi = 0x07060504u + (uint32_t)l, lo = 0x03020100u;
    const uint32_t sel[4] = {0x05010400u, 0x07030602u, 0x07060302u, 0x0C0C0704u};
    for (int i = 0; i < 4; ++i)
        p.out[4 * l + i] = (int)raw::perm(hi, lo, sel[i]);
}
