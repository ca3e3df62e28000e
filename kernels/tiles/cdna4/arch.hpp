/* gfx950 (CDNA4, MI350X/MI355X): the gfx9 builtins plus the gfx950 ones, then the shared AMD layer
 * (cdna3/amd.hpp), which selects the gfx950 MFMA atoms from HK_GFX. */
#ifndef HK_TILES_CDNA4_ARCH_HPP
#define HK_TILES_CDNA4_ARCH_HPP

#define HK_GFX 950
#include "raw.hpp"
#include "../cdna3/amd.hpp"

#endif
