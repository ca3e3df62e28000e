/* The CDNA kernel sources built for the wave emulator as gfx942 (host C++; `hk` renamed so the two archs'
 * builds share no inline definition). */
#define HK_EMU 1
#define HK_EMU_ARCH 942
#define hk hk_emu942
#include "cdna/rotary.hip"
#include "cdna/ln_fused.hip"
