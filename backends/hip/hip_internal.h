/* Helpers shared by the HIP backend's runtime glue (driver.c) and its rocm-smi telemetry (smi.c). */
#ifndef HK_HIP_INTERNAL_H
#define HK_HIP_INTERNAL_H

#include "internal.h"

/* Some ROCm libraries print to stderr when there is no GPU; the library never prints, so fd 2 is pointed at
 * /dev/null around the calls that may. quiet_end takes what quiet_begin returned. Process-wide: call them only
 * from one-time initialisation. */
HK_INTERNAL int hk_hip_quiet_begin(void);
HK_INTERNAL void hk_hip_quiet_end(int saved);

#endif /* HK_HIP_INTERNAL_H */
