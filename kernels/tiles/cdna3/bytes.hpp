/* hk::raw::bytes_t<N>: the N bytes one buffer access or LDS access moves, as whole dwords where N >= 4. Shared by
 * the hardware primitives (tiles/cdna3/raw.hpp) and the wave emulator's (tiles/emu/raw.hpp), which must agree on
 * the types their callers see. */
#ifndef HK_TILES_CDNA3_BYTES_HPP
#define HK_TILES_CDNA3_BYTES_HPP

#include <stdint.h>

namespace hk {
namespace raw {

template <int Bytes> struct bytes_t;
template <> struct bytes_t<1> { uint8_t w; };
template <> struct bytes_t<2> { uint16_t w; };
template <> struct bytes_t<4> { uint32_t w; };
template <> struct bytes_t<8> { uint32_t w[2]; };
template <> struct bytes_t<16> { uint32_t w[4]; };

} // namespace raw
} // namespace hk

#endif
