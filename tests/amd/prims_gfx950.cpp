/* The primitive test kernels and the MFMA probes under the emulator as gfx950. */
#define HK_EMU 1
#define HK_EMU_ARCH 950
#define hk hk_emu950
#include "prims.hpp"
