/* cuTensorMapEncodeTiled is looked up in the libcuda.so.1 that the CUDA driver glue already loaded
 * (RTLD_NOLOAD: never loads the driver itself), once per process. Encoded maps are kept in a small
 * process-wide cache keyed by every input of the encode (a map is a pure function of them, so a hit is
 * always right): a GEMM called again on the same buffers skips its three encodes. */
#include "tensormap.h"

#include <dlfcn.h>

typedef int (*hk_encode_tiled_fn)(void *map, int data_type, unsigned rank, void *base, const uint64_t *dims,
                                  const uint64_t *strides, const uint32_t *box, const uint32_t *element_strides,
                                  int interleave, int swizzle, int l2_promotion, int oob_fill);

enum {
    HK_CU_TMAP_INTERLEAVE_NONE = 0,
    HK_CU_TMAP_SWIZZLE_NONE = 0,
    HK_CU_TMAP_SWIZZLE_64B = 2,
    HK_CU_TMAP_SWIZZLE_128B = 3,
    HK_CU_TMAP_L2_256B = 3,
    HK_CU_TMAP_OOB_ZERO = 0
};

static hk_encode_tiled_fn encode_tiled;
static pthread_once_t encode_once = PTHREAD_ONCE_INIT;

static void find_encode(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (lib)
        *(void **)&encode_tiled = dlsym(lib, "cuTensorMapEncodeTiled");
    /* the handle stays open: the driver glue holds the library for the life of the process anyway */
}

/* The cache: HK_TMAP_CACHE entries replaced round-robin, guarded by tmap_lock. */
#define HK_TMAP_CACHE 32
typedef struct hk_tmap_key {
    const void *base;
    uint64_t inner, outer, pitch;
    uint32_t box_inner, box_outer;
    int data_type, swizzled, used;
} hk_tmap_key;
static hk_tmap_key tmap_keys[HK_TMAP_CACHE];
static hk_cu_tensor_map tmap_maps[HK_TMAP_CACHE];
static unsigned tmap_next;
static pthread_mutex_t tmap_lock = PTHREAD_MUTEX_INITIALIZER;

static bool hk_tmap_same(const hk_tmap_key *a, const hk_tmap_key *b)
{
    return a->used && a->base == b->base && a->inner == b->inner && a->outer == b->outer && a->pitch == b->pitch &&
           a->box_inner == b->box_inner && a->box_outer == b->box_outer && a->data_type == b->data_type &&
           a->swizzled == b->swizzled;
}

static hk_status hk_tmap_encode(hk_cu_tensor_map *map, int data_type, const void *base, uint64_t inner, uint64_t outer,
                                uint64_t pitch_bytes, uint32_t box_inner, uint32_t box_outer, bool swizzled);

hk_status hk_cuda_tensor_map_2d(hk_cu_tensor_map *map, int data_type, const void *base, uint64_t inner, uint64_t outer,
                                uint64_t pitch_bytes, uint32_t box_inner, uint32_t box_outer, bool swizzled)
{
    const hk_tmap_key key = {base, inner, outer, pitch_bytes, box_inner, box_outer, data_type, swizzled, 1};
    pthread_mutex_lock(&tmap_lock);
    for (unsigned i = 0; i < HK_TMAP_CACHE; ++i) {
        if (hk_tmap_same(&tmap_keys[i], &key)) {
            *map = tmap_maps[i];
            pthread_mutex_unlock(&tmap_lock);
            return HK_OK;
        }
    }
    pthread_mutex_unlock(&tmap_lock);
    hk_status st = hk_tmap_encode(map, data_type, base, inner, outer, pitch_bytes, box_inner, box_outer, swizzled);
    if (st == HK_OK) {
        pthread_mutex_lock(&tmap_lock);
        const unsigned slot = tmap_next++ % HK_TMAP_CACHE;
        tmap_keys[slot] = key;
        tmap_maps[slot] = *map;
        pthread_mutex_unlock(&tmap_lock);
    }
    return st;
}

static hk_status hk_tmap_encode(hk_cu_tensor_map *map, int data_type, const void *base, uint64_t inner, uint64_t outer,
                                uint64_t pitch_bytes, uint32_t box_inner, uint32_t box_outer, bool swizzled)
{
    pthread_once(&encode_once, find_encode);
    if (!encode_tiled)
        return hk_fail(HK_ERR_RUNTIME, "cuda: the loaded libcuda.so.1 lacks cuTensorMapEncodeTiled (driver older than CUDA 12)");
    const uint64_t dims[2] = {inner, outer}, strides[1] = {pitch_bytes};
    const uint32_t esize = data_type == HK_CU_TMAP_FLOAT32 ? 4 : data_type == HK_CU_TMAP_UINT8 ? 1 : 2;
    const uint32_t span = box_inner * esize;
    if (swizzled && span != 128 && span != 64)
        return hk_fail(HK_ERR_INTERNAL, "cuda: a swizzled TMA box must be 64 or 128 bytes wide, not %u", span);
    const int swizzle = !swizzled ? HK_CU_TMAP_SWIZZLE_NONE : span == 128 ? HK_CU_TMAP_SWIZZLE_128B : HK_CU_TMAP_SWIZZLE_64B;
    const uint32_t box[2] = {box_inner, box_outer}, element_strides[2] = {1, 1};
    int r = encode_tiled(map, data_type, 2, (void *)base, dims, strides, box, element_strides, HK_CU_TMAP_INTERLEAVE_NONE,
                         swizzle, HK_CU_TMAP_L2_256B, HK_CU_TMAP_OOB_ZERO);
    if (r != 0)
        return hk_fail(HK_ERR_RUNTIME,
                       "cuda: cuTensorMapEncodeTiled returned %d (%llu x %llu elements, pitch %llu bytes, box %u x %u)", r,
                       (unsigned long long)inner, (unsigned long long)outer, (unsigned long long)pitch_bytes, box_inner,
                       box_outer);
    return HK_OK;
}

hk_status hk_cuda_tensor_map_nd(hk_cu_tensor_map *map, int data_type, const void *base, unsigned rank, const uint64_t *dims,
                                const uint64_t *strides_bytes, const uint32_t *box)
{
    pthread_once(&encode_once, find_encode);
    if (!encode_tiled)
        return hk_fail(HK_ERR_RUNTIME, "cuda: the loaded libcuda.so.1 lacks cuTensorMapEncodeTiled (driver older than CUDA 12)");
    const uint32_t esize = data_type == HK_CU_TMAP_FLOAT32 ? 4 : data_type == HK_CU_TMAP_UINT8 ? 1 : 2;
    const uint32_t span = box[0] * esize, element_strides[5] = {1, 1, 1, 1, 1};
    if (rank < 2 || rank > 5 || (span != 128 && span != 64))
        return hk_fail(HK_ERR_INTERNAL, "cuda: a %u-D swizzled TMA box %u bytes wide", rank, span);
    int r = encode_tiled(map, data_type, rank, (void *)base, dims, strides_bytes, box, element_strides,
                         HK_CU_TMAP_INTERLEAVE_NONE, span == 128 ? HK_CU_TMAP_SWIZZLE_128B : HK_CU_TMAP_SWIZZLE_64B,
                         HK_CU_TMAP_L2_256B, HK_CU_TMAP_OOB_ZERO);
    if (r != 0)
        return hk_fail(HK_ERR_RUNTIME, "cuda: cuTensorMapEncodeTiled returned %d (%u-D, %llu x %llu elements, box %u x %u)", r,
                       rank, (unsigned long long)dims[0], (unsigned long long)dims[1], box[0], box[1]);
    return HK_OK;
}
