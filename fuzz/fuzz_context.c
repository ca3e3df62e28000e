/* Contexts, options, probes and the listings, on arguments decoded from the input (fuzz.h): a created context is
 * queried, destroyed, then used again (it must be refused) and destroyed twice (a no-op). */
#include "fuzz.h"

static const char *fz_arch(fz *f)
{
    static const char *const archs[] = {NULL, "gfx942", "gfx950", "gfx900", "", "sm_90a"};
    return archs[fz_bits(f, 1) % 6];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    (void)fz_context(); /* HK_NUM_THREADS=1 for every target alike */
    struct {
        hk_context_options o;
        uint64_t newer[2];
    } box;
    memset(&box, 0, sizeof box);
    hk_context_options *o = &box.o;
    /* CPU and emulator only: AUTO, HIP and CUDA would probe the runtimes of the machine (no GPU in CI) */
    static const hk_backend backends[] = {HK_BACKEND_CPU, HK_BACKEND_EMULATOR, (hk_backend)-1, (hk_backend)7};
    o->backend = backends[fz_bits(&f, 1) % 4];
    o->device_index = (int)fz_range(&f, -2, 2);
    o->arch = fz_arch(&f);
    o->struct_size = fz_struct_size(&f, sizeof *o);
    if (o->struct_size == sizeof *o + 8 && fz_bool(&f))
        box.newer[0] = 1;
    hk_context *ctx = fz_bool(&f) ? NULL : (hk_context *)1;
    hk_status st = hk_context_create(fz_bits(&f, 1) % 16 ? o : NULL, fz_bits(&f, 1) % 32 ? &ctx : NULL);
    fz_expect(st, false, "context_create");
    if (st == HK_OK) {
        (void)hk_context_backend(ctx);
        (void)strlen(hk_context_arch(ctx));
        (void)strlen(hk_context_device_name(ctx));
        for (int i = 0; i < 4; ++i) {
            hk_variant_info info = HK_ARGS_INIT(hk_variant_info);
            info.struct_size = fz_struct_size(&f, sizeof info);
            st = hk_context_variant(ctx, (size_t)fz_size(&f, true, 40), fz_bits(&f, 1) % 16 ? &info : NULL);
            fz_expect(st, false, "context_variant");
            if (st == HK_OK)
                (void)(strlen(info.name) + strlen(info.description));
        }
        hk_device_telemetry tel = HK_ARGS_INIT(hk_device_telemetry);
        tel.struct_size = fz_struct_size(&f, sizeof tel);
        fz_expect(hk_context_telemetry(ctx, fz_bool(&f) ? &tel : NULL), false, "context_telemetry");
        hk_context_destroy(ctx);
        hk_variant_info info = HK_ARGS_INIT(hk_variant_info);
        fz_expect(hk_context_variant(ctx, 0, &info), true, "context_variant after destroy");
        void *p;
        fz_expect(hk_malloc(ctx, &p, 16), true, "malloc after destroy");
        hk_context_destroy(ctx);
    }
    char why[64];
    size_t why_size = (size_t)fz_range(&f, 0, sizeof why);
    fz_expect(hk_probe(backends[fz_bits(&f, 1) % 4], fz_bool(&f) ? why : NULL, why_size), false, "probe");
    const char *arch, *kernels;
    size_t bytes;
    fz_expect(hk_code_object((size_t)fz_size(&f, true, 8), &arch, &kernels, &bytes), false, "code_object");
    int64_t v = fz_size(&f, true, 12);
    (void)strlen(hk_status_string((hk_status)v));
    (void)strlen(hk_dtype_name((hk_dtype)v));
    (void)strlen(hk_op_name((hk_op)v));
    (void)strlen(hk_backend_name((hk_backend)v));
    (void)hk_dtype_size((hk_dtype)v);
    (void)hk_dropout_threshold(fz_float(&f));
    (void)hk_dropout_threshold((float)fz_range(&f, -5, 15) / 10.0f);
    return 0;
}
