/* Kernel parameter blocks of the CDNA kernels: the layouts every arch shares (kernels/common), for the kernels
 * (C++, passed by value) and their hosts (backends/hip and backends/emulator, C). */
#ifndef HK_CDNA_PARAMS_H
#define HK_CDNA_PARAMS_H

#include <stdint.h>

#include "common/attn_params.h"
#include "common/gemm_params.h"
#include "common/ln_params.h"
#include "common/rotary_params.h"

#endif
