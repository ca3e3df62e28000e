/* Launch constants of kernels/hopper/rotary.cu, shared by the host glue (C11, backends/cuda/rotary.c) and the
 * device code (nvcc); the parameters are kernels/common/rotary_params.h's. */
#ifndef HK_HOPPER_ROTARY_H
#define HK_HOPPER_ROTARY_H

#include <stdint.h>

#include "common/rotary_params.h"

/* Each thread rotates one chunk of V pairs (V = 16 bytes of elements, or 1 on the scalar path) for up to
 * HK_ROTARY_HEADS_PER_THREAD heads of one token, so the cos/sin chunk is loaded once for all of them. */
#define HK_ROTARY_HEADS_PER_THREAD 4
#define HK_ROTARY_BLOCK 256
/* The lane-mapped HALF kernel (rotary_dim = head_dim): blocks of 64 threads with 2 loads each, within one
 * token's row; small blocks at ~21 per SM beat 256-thread ones. */
#define HK_ROTARY_ROW_BLOCK 64
#define HK_ROTARY_ROW_VECTORS 2

#endif
