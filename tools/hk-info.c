/* hk-info: what libhk is, what it found on this machine, and what it can run here. One line per variant by
 * default; --kernels lists the kernels of each embedded code object, --verbose prints each variant's whole
 * description. */
#include "telemetry.h"

#include <hk.h>

#include <stdio.h>
#include <string.h>

enum { LINE = 120, INDENT = 4, OP_COL = 12, NAME_COL = 28 };
/* What is left of a line for a variant's summary after its indent, op and name columns. */
enum { SUMMARY = LINE - INDENT - OP_COL - 1 - NAME_COL - 1 };

/* Where desc[0, limit) should end: after the last top-level (outside parentheses) separator sep that leaves at
 * least half of the budget, else 0. */
static size_t cut_at(const char *desc, size_t limit, const char *sep)
{
    size_t best = 0, len = strlen(sep);
    int depth = 0;
    for (size_t i = 0; i + len <= limit && desc[i]; ++i) {
        depth += desc[i] == '(' ? 1 : desc[i] == ')' ? -1 : 0;
        if (depth == 0 && strncmp(desc + i, sep, len) == 0 && i >= SUMMARY / 2)
            best = i;
    }
    return best;
}

/* A variant's description in at most SUMMARY characters: whole if it fits; else without its parenthesised
 * details; else up to its last clause (";", then ":", then ",") that fits; else cut at a word with "...". */
static void summarize(const char *desc, char *out, size_t size)
{
    char plain[1024];
    size_t n = 0;
    int depth = 0;
    for (const char *p = desc; *p && n + 1 < sizeof plain; ++p) {
        if (*p == '(' && depth++ == 0 && n > 0 && plain[n - 1] == ' ')
            --n; /* the space before the group goes with it */
        if (depth == 0)
            plain[n++] = *p;
        if (*p == ')' && depth > 0)
            --depth;
    }
    plain[n] = '\0';
    const char *src = strlen(desc) <= SUMMARY ? desc : plain;
    size_t end = strlen(src);
    if (end > SUMMARY) {
        const char *const seps[] = {"; ", ": ", ", "};
        end = 0;
        for (size_t i = 0; i < 3 && end == 0; ++i)
            end = cut_at(src, SUMMARY + 1, seps[i]);
        if (end == 0) { /* one long clause: the last word boundary, room left for "..." */
            end = SUMMARY - 3;
            while (end > 0 && src[end] != ' ')
                --end;
            snprintf(out, size, "%.*s...", (int)end, src);
            return;
        }
    }
    snprintf(out, size, "%.*s", (int)end, src);
}

/* text word-wrapped to LINE columns, each line indented by indent spaces; words end at sep or a space. */
static void print_wrapped(const char *text, int indent, char sep)
{
    int col = 0;
    for (const char *p = text; *p;) {
        while (*p == sep || *p == ' ')
            ++p;
        size_t len = 0;
        while (p[len] && p[len] != sep && p[len] != ' ')
            ++len;
        if (len == 0)
            break;
        if (col > 0 && col + 1 + (int)len > LINE) {
            printf("\n");
            col = 0;
        }
        if (col == 0)
            col = printf("%*s", indent, "");
        else
            col += printf(" ");
        col += printf("%.*s", (int)len, p);
        p += len;
    }
    if (col > 0)
        printf("\n");
}

static void list_variants(const hk_context *ctx, int verbose)
{
    hk_variant_info info = HK_ARGS_INIT(hk_variant_info);
    for (size_t i = 0; hk_context_variant(ctx, i, &info) == HK_OK; ++i) {
        if (verbose) {
            printf("%*s%-*s %s\n", INDENT, "", OP_COL, hk_op_name(info.op), info.name);
            print_wrapped(info.description, 2 * INDENT, ' ');
            continue;
        }
        char summary[SUMMARY + 1];
        summarize(info.description, summary, sizeof summary);
        printf("%*s%-*s %-*s %s\n", INDENT, "", OP_COL, hk_op_name(info.op), NAME_COL, info.name, summary);
    }
}

static void show_context(const char *label, hk_backend backend, const char *arch, int verbose)
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
    list_variants(ctx, verbose);
    hk_context_destroy(ctx);
}

/* Names in a comma-separated list. */
static size_t count_names(const char *list)
{
    size_t n = 0;
    for (const char *p = list; *p; ++p)
        n += (p == list || p[-1] == ',') && *p != ',';
    return n;
}

int main(int argc, char **argv)
{
    int kernels = 0, verbose = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--kernels") == 0) {
            kernels = 1;
        } else if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0) {
            verbose = 1;
        } else {
            const int help = strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0;
            fprintf(help ? stdout : stderr,
                    "%susage: hk-info [--kernels] [--verbose]\n"
                    "Prints the libhk version, the GPU runtimes probed, the embedded code objects and the kernel\n"
                    "variants each context can run, one line each. --kernels lists each code object's kernels;\n"
                    "--verbose prints each variant's whole description. HK_BACKEND=cpu|hip|cuda|emulator picks\n"
                    "the default context.\n",
                    help ? "" : "hk-info: unknown argument\n");
            return help ? 0 : 2;
        }
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

    printf("\nembedded code objects%s:\n", kernels ? "" : " (--kernels lists their kernels)");
    const char *arch, *names;
    size_t bytes;
    size_t n = 0;
    for (; hk_code_object(n, &arch, &names, &bytes) == HK_OK; ++n) {
        printf("  %-7s %8zu bytes  %zu kernels\n", arch, bytes, count_names(names));
        if (kernels)
            print_wrapped(names, 4, ',');
    }
    if (n == 0)
        printf("  none (built without device compilers)\n");

    show_context("default context", HK_BACKEND_AUTO, NULL, verbose);
    show_context("emulated gfx942", HK_BACKEND_EMULATOR, "gfx942", verbose);
    show_context("emulated gfx950", HK_BACKEND_EMULATOR, "gfx950", verbose);
    return 0;
}
