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

#endif
