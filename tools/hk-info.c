/* hk-info: what libhk is, what it found on this machine, and what it can run here. */
#include "telemetry.h"

#include <hk.h>

#include <stdio.h>
#include <string.h>

static void list_variants(const hk_context *ctx)
{
    hk_variant_info info = HK_ARGS_INIT(hk_variant_info);
    for (size_t i = 0; hk_context_variant(ctx, i, &info) == HK_OK; ++i)
        printf("    %-14s %-28s %s\n", hk_op_name(info.op), info.name, info.description);
}

static void show_context(const char *label, hk_backend backend, const char *arch)
{
    hk_context_options opts = HK_ARGS_INIT(hk_context_options);
    opts.backend = backend;
    opts.arch = arch;
    hk_context *ctx = NULL;
    if (hk_context_create(&opts, &ctx) != HK_OK) {
        printf("\n%s: not available: %s\n", label, hk_last_error());
        return;
    }
    printf("\n%s: backend %s, arch %s, device \"%s\"\n", label, hk_backend_name(hk_context_backend(ctx)),
           hk_context_arch(ctx), hk_context_device_name(ctx));
    hk_device_telemetry t;
    char line[256];
    if (format_telemetry(ctx, &t, line, sizeof line)) /* GPUs that report it (HIP with rocm-smi) */
        printf("  telemetry: %s\n", line);
    list_variants(ctx);
    hk_context_destroy(ctx);
}

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        printf("usage: hk-info\nPrints the libhk version, the GPU runtimes probed, the embedded code objects and the\n"
               "kernel variants each context can run. HK_BACKEND=cpu|hip|cuda|emulator picks the default context.\n");
        return 0;
    }
    printf("libhk %s (header %d.%d.%d)\n", hk_version_string(), HK_VERSION_MAJOR, HK_VERSION_MINOR, HK_VERSION_PATCH);

    printf("\nruntimes probed:\n");
    const hk_backend gpus[] = {HK_BACKEND_HIP, HK_BACKEND_CUDA};
    for (size_t i = 0; i < 2; ++i) {
        char why[512];
        hk_status st = hk_probe(gpus[i], why, sizeof why);
        printf("  %-5s %s%s%s\n", hk_backend_name(gpus[i]), st == HK_OK ? "found" : "not usable", st == HK_OK ? "" : ": ",
               st == HK_OK ? "" : why);
    }

    printf("\nembedded code objects:\n");
    const char *arch, *kernels;
    size_t bytes;
    size_t n = 0;
    for (; hk_code_object(n, &arch, &kernels, &bytes) == HK_OK; ++n)
        printf("  %-7s %8zu bytes  %s\n", arch, bytes, kernels);
    if (n == 0)
        printf("  none (built without device compilers)\n");

    show_context("default context", HK_BACKEND_AUTO, NULL);
    show_context("emulated gfx942", HK_BACKEND_EMULATOR, "gfx942");
    show_context("emulated gfx950", HK_BACKEND_EMULATOR, "gfx950");
    return 0;
}
