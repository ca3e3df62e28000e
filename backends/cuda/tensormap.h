/* TMA tensor maps for the CUDA backend: cuTensorMapEncodeTiled from the already-loaded driver. */
#ifndef HK_BACKEND_CUDA_TENSORMAP_H
#define HK_BACKEND_CUDA_TENSORMAP_H

#include "internal.h"

/* CUtensorMap: 128 opaque bytes, 64-byte aligned, passed by value as a __grid_constant__ kernel parameter. */
typedef struct hk_cu_tensor_map {
    _Alignas(64) uint64_t opaque[16];
} hk_cu_tensor_map;

/* The driver's CUtensorMapDataType values used here. */
enum { HK_CU_TMAP_UINT8 = 0, HK_CU_TMAP_FLOAT16 = 6, HK_CU_TMAP_FLOAT32 = 7, HK_CU_TMAP_BFLOAT16 = 9 };

/* A 2-D row-major map with zero fill out of bounds: `inner` contiguous elements per row, `outer` rows
 * `pitch_bytes` apart, boxes of box_inner x box_outer. Swizzled boxes are 128 or 64 bytes wide and use the
 * swizzle of that span (the layouts wgmma reads); unswizzled ones (the GEMM epilogue's tail columns) are rows
 * of box_inner elements back to back. */
HK_INTERNAL hk_status hk_cuda_tensor_map_2d(hk_cu_tensor_map *map, int data_type, const void *base, uint64_t inner,
                                            uint64_t outer, uint64_t pitch_bytes, uint32_t box_inner, uint32_t box_outer,
                                            bool swizzled);

/* A map of `rank` (2..5) dimensions, innermost first: dims[i] elements, strides_bytes[i - 1] between consecutive
 * indices of dimension i (multiples of 16, in any order: views such as one third of a packed QKV tensor), zero
 * fill out of bounds, boxes of box[i] elements with the 128- or 64-byte swizzle of box[0]'s span. Not cached. */
HK_INTERNAL hk_status hk_cuda_tensor_map_nd(hk_cu_tensor_map *map, int data_type, const void *base, unsigned rank,
                                            const uint64_t *dims, const uint64_t *strides_bytes, const uint32_t *box);

#endif
