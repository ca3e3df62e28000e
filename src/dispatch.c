/* The public op entry points: validate, pick the context's best variant for the call, run it. */
#include "internal.h"

#include <string.h>

static const hk_variant *const *variants_of(hk_backend backend)
{
    switch (backend) {
    case HK_BACKEND_CPU: return hk_cpu_variants;
    case HK_BACKEND_CUDA: return hk_cuda_variants;
    case HK_BACKEND_HIP: return hk_hip_variants;
    case HK_BACKEND_EMULATOR: return hk_emulator_variants;
    default: return NULL;
    }
}

/* Does the space-separated list name arch? NULL names every arch. */
static bool arch_listed(const char *archs, const char *arch)
{
    if (!archs)
        return true;
    size_t n = strlen(arch);
    for (const char *p = archs; *p;) {
        size_t len = strcspn(p, " ");
        if (len == n && strncmp(p, arch, n) == 0)
            return true;
        p += len + (p[len] == ' ');
    }
    return false;
}

const hk_variant *hk_context_variant_at(const hk_context *ctx, size_t index)
{
    const hk_variant *const *list = variants_of(ctx->backend);
    for (size_t i = 0; list && list[i]; ++i)
        if (arch_listed(list[i]->archs, ctx->arch) && index-- == 0)
            return list[i];
    return NULL;
}

const hk_variant *hk_select_variant(const hk_context *ctx, hk_op op, const void *args, hk_status *status)
{
    char reasons[768] = "";
    size_t used = 0;
    const hk_variant *v;
    for (size_t i = 0; (v = hk_context_variant_at(ctx, i)) != NULL; ++i) {
        if (v->op != op)
            continue;
        char why[256] = "";
        hk_status st = v->supports(ctx, args, why, sizeof why);
        if (st == HK_OK)
            return v;
        if (st != HK_ERR_UNSUPPORTED) {
            *status = st;
            return NULL;
        }
        if (used < sizeof reasons) {
            hk_format(reasons + used, sizeof reasons - used, "%s%s: %s", used ? "; " : "", v->name, why);
            used += strlen(reasons + used);
        }
    }
    *status = HK_ERR_UNSUPPORTED;
    if (used == 0)
        hk_fail(HK_ERR_UNSUPPORTED, "%s: no kernel for %s (%s backend)", hk_op_name(op), ctx->arch,
                hk_backend_name(ctx->backend));
    else
        hk_fail(HK_ERR_UNSUPPORTED, "%s: no %s kernel covers this call: %s", hk_op_name(op), ctx->arch, reasons);
    return NULL;
}

static hk_status run(hk_context *ctx, hk_op op, const void *args, const void *workspace, size_t workspace_size)
{
    hk_status st;
    const hk_variant *v = hk_select_variant(ctx, op, args, &st);
    if (!v)
        return st;
    size_t need = v->workspace && !v->workspace_optional ? v->workspace(ctx, args) : 0;
    /* validation refused a NULL workspace with a size, so a NULL one here has workspace_size 0 */
    if (workspace_size < need || (need > 0 && !workspace))
        return hk_fail(HK_ERR_INVALID_ARGUMENT,
                       "%s: workspace_size %zu is smaller than the %zu bytes %s needs (hk_%s_workspace_size says how "
                       "many)", hk_op_name(op), workspace_size, need, v->name, hk_op_name(op));
    st = v->run(ctx, args);
    if (st == HK_OK)
        hk_clear_error();
    return st;
}

static hk_status workspace_size(hk_context *ctx, hk_op op, const void *args, size_t *bytes)
{
    hk_status st;
    const hk_variant *v = hk_select_variant(ctx, op, args, &st);
    if (!v)
        return st;
    *bytes = v->workspace ? v->workspace(ctx, args) : 0;
    hk_clear_error();
    return HK_OK;
}

/* Each entry point: context check, validation into a normalised copy, the checks that need the context (they may
 * read device memory: attention's varlen offsets), dispatch. */
#define HK_ENTRY(opname, OPENUM, type, workspace_ptr, workspace_bytes, context_checks)                               \
    hk_status hk_##opname(hk_context *handle, const type *args)                                                        \
    {                                                                                                                  \
        type a;                                                                                                        \
        hk_context *ctx = NULL;                                                                                        \
        hk_status st = hk_check_context(handle, #opname, &ctx);                                                        \
        if (st == HK_OK)                                                                                               \
            st = hk_validate_##opname(args, &a);                                                                       \
        if (st == HK_OK)                                                                                               \
            st = context_checks;                                                                                       \
        return st != HK_OK ? st : run(ctx, OPENUM, &a, workspace_ptr, workspace_bytes);                                \
    }

HK_ENTRY(gemm, HK_OP_GEMM, hk_gemm_args, a.workspace, a.workspace_size, HK_OK)
HK_ENTRY(attn_fwd, HK_OP_ATTN_FWD, hk_attn_fwd_args, NULL, 0, hk_check_attn_fwd(ctx, &a))
HK_ENTRY(rotary, HK_OP_ROTARY, hk_rotary_args, NULL, 0, HK_OK)
HK_ENTRY(ln_fused, HK_OP_LN_FUSED, hk_ln_fused_args, NULL, 0, HK_OK)
HK_ENTRY(attn_bwd, HK_OP_ATTN_BWD, hk_attn_bwd_args, a.workspace, a.workspace_size, hk_check_attn_bwd(ctx, &a))
HK_ENTRY(ln_fused_bwd, HK_OP_LN_FUSED_BWD, hk_ln_fused_bwd_args, a.workspace, a.workspace_size, HK_OK)

/* Workspace size queries of the ops that take a caller-provided workspace (gemm: one it may use). They read no
 * device memory (a caller sizes workspaces before its inputs exist). */
#define HK_WORKSPACE_QUERY(opname, OPENUM, type)                                                                       \
    hk_status hk_##opname##_workspace_size(hk_context *handle, const type *args, size_t *bytes)                        \
    {                                                                                                                  \
        type a;                                                                                                        \
        hk_context *ctx = NULL;                                                                                        \
        hk_status st = hk_check_context(handle, #opname "_workspace_size", &ctx);                                      \
        if (st == HK_OK && !bytes)                                                                                     \
            st = hk_fail(HK_ERR_INVALID_ARGUMENT, "%s_workspace_size: bytes is NULL", #opname);                        \
        if (st == HK_OK)                                                                                               \
            st = hk_validate_##opname(args, &a);                                                                       \
        return st != HK_OK ? st : workspace_size(ctx, OPENUM, &a, bytes);                                              \
    }

HK_WORKSPACE_QUERY(gemm, HK_OP_GEMM, hk_gemm_args)
HK_WORKSPACE_QUERY(attn_bwd, HK_OP_ATTN_BWD, hk_attn_bwd_args)
HK_WORKSPACE_QUERY(ln_fused_bwd, HK_OP_LN_FUSED_BWD, hk_ln_fused_bwd_args)
