/* The primitive test kernels and the MFMA probes under the emulator as gfx942. */
#define HK_EMU 1
#define HK_EMU_ARCH 942
#define hk hk_emu942
#include "prims.hpp"
