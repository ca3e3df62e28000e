/* Parameters of the primitive test kernels (prims.hpp), shared with the C test. */
#ifndef HK_TESTS_AMD_PRIMS_H
#define HK_TESTS_AMD_PRIMS_H

typedef struct hk_prim_params {
    int *out;
    const float *fin;
    float *fout;
    const void *in;
    int n;
} hk_prim_params;

/* t_pack's Bits-wide field of lane l, shared with the expected values. */
#define HK_PACK_FIELD(bits, l) ((uint32_t)((l) * 37 + 11) >> 2 & ((1u << (bits)) - 1))

#endif
