/* The CDNA kernel sources built for the wave emulator as gfx942 (host C++; `hk` renamed so the two archs'
 * builds share no inline definition). */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__OPTIMIZE__)
/* Unoptimised builds (the sanitizer run) still emulate at -O2: at -O0 the GEMM tests run about 5x slower. */
#pragma GCC optimize("O2")
#endif
#define HK_EMU 1
#define HK_EMU_ARCH 942
#define hk hk_emu942
#include "cdna/rotary.hip"
#include "cdna/ln_fused.hip"
#include "cdna/gemm.hip"
#include "cdna/attn_fwd.hip"
