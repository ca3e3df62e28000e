/* The CDNA kernel sources built for the wave emulator as gfx950 (host C++; `hk` renamed so the two archs'
 * builds share no inline definition). */
#define HK_EMU 1
#define HK_EMU_ARCH 950
#define hk hk_emu950
#include "cdna/rotary.hip"
#include "cdna/ln_fused.hip"
