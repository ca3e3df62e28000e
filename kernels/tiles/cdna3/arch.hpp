/* gfx942 (CDNA3, MI300X/MI325X): hk::raw from the builtins, then the shared AMD layer. */
#ifndef HK_TILES_CDNA3_ARCH_HPP
#define HK_TILES_CDNA3_ARCH_HPP

#define HK_GFX 942
#include "raw.hpp"
#include "amd.hpp"

#endif
