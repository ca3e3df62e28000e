/* The CUDA backend's tuning overrides (hk_tuning, docs/perf/tuning.md), read once per context at its creation: a
 * value that does not parse is ignored, so a context never fails to open over one. */
#include "ops.h"

#include "gemm_plan.h"
#include "hopper/ln_fused.h"

#include <stdlib.h>
#include <string.h>

void hk_cuda_read_tuning(hk_tuning *tune)
{
    memset(tune, 0, sizeof *tune);
    /* HK_CUDA_TUNE_GEMM = <shape>[:<split>]: a gemm.h shape id in any case (p144, sk64:2, pk64:8; on persistent shapes
     * the split is the finale's parts, p256:3) */
    const char *gemm = getenv("HK_CUDA_TUNE_GEMM");
    if (gemm) {
        const char *colon = strchr(gemm, ':');
        const int shape = hk_gemm_shape_named(gemm, colon ? (size_t)(colon - gemm) : strlen(gemm));
        if (shape >= 0) {
            tune->gemm_forced = true;
            tune->gemm_shape = shape;
            tune->gemm_split = colon ? (int32_t)atoi(colon + 1) : 1;
        }
    }
    /* HK_CUDA_TUNE_LN_STAGES = 1 to HK_LN_BWD_MAX_STAGES (they change neither the grid nor the workspace) */
    const char *stages = getenv("HK_CUDA_TUNE_LN_STAGES");
    if (stages && stages[0] >= '1' && stages[0] <= '0' + HK_LN_BWD_MAX_STAGES && !stages[1])
        tune->ln_stages = stages[0] - '0';
    /* HK_CUDA_TUNE_ATTN_BWD = rows */
    const char *attn_bwd = getenv("HK_CUDA_TUNE_ATTN_BWD");
    tune->attn_bwd_rows = attn_bwd && strcmp(attn_bwd, "rows") == 0;
    /* HK_CUDA_PDL = 0 */
    const char *pdl = getenv("HK_CUDA_PDL");
    tune->plain_launch = pdl && strcmp(pdl, "0") == 0;
    /* HK_CUDA_UNVERIFIED = 1 */
    const char *unverified = getenv("HK_CUDA_UNVERIFIED");
    tune->unverified = unverified && strcmp(unverified, "1") == 0;
}

hk_status hk_cuda_unverified(const hk_context *ctx, const char *what, char *why, size_t why_size)
{
    if (ctx->tuning.unverified)
        return HK_OK;
    hk_format(why, why_size, "%s: built for sm_90a and checked on the host, but not yet run on a GPU, so off "
                             "(HK_CUDA_UNVERIFIED=1 turns it on for verification: docs/perf/tuning.md)", what);
    return HK_ERR_UNSUPPORTED;
}
