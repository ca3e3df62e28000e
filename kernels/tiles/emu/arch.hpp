/* The wave emulator as an arch: hk::raw from tiles/emu/raw.hpp, then the same AMD layer the GPUs compile
 * (cdna3/amd.hpp). HK_EMU_ARCH (942 or 950) plays the role of __gfx942__/__gfx950__. Build each arch's kernels
 * in its own translation unit with `hk` renamed (e.g. #define hk hk_emu942) so the two never share an inline
 * definition. */
#ifndef HK_TILES_EMU_ARCH_HPP
#define HK_TILES_EMU_ARCH_HPP

#if HK_EMU_ARCH == 950
#define HK_GFX 950
#elif HK_EMU_ARCH == 942
#define HK_GFX 942
#else
#error "HK_EMU_ARCH must be 942 or 950"
#endif
#include "raw.hpp"
#include "../cdna3/amd.hpp"

#endif
