/* The CDNA kernel sets (backends/hip/cdna_plan.c), through which HIP contexts resolve each kernel once and the
 * emulator finds it by name: every index that names a kernel names one that the emulator has for both archs and,
 * where the gfx code objects are embedded, one that the family's code object of each arch holds; no two indices
 * name the same kernel; and every kernel of those code objects has an index (none is unreachable). Links libhk's
 * objects, so its internal symbols are in reach. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "../../backends/hip/cdna_plan.h"
#include "tiles/emu/emu.h"

typedef struct family {
    const char *name; /* the code object family (kernels/cdna/meson.build) */
    const hk_kernel_set *set;
} family;

static const family families[] = {
    {"rotary", &hk_cdna_rotary_kernels},
    {"ln_fused", &hk_cdna_ln_kernels},
    {"gemm", &hk_cdna_gemm_kernels},
    {"attn_fwd", &hk_cdna_attn_kernels},
};

/* Is `kernel` one of the comma-separated names of list? */
static bool listed(const char *list, const char *kernel)
{
    const size_t n = strlen(kernel);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, kernel, n) == 0)
            return true;
        if (!end)
            break;
        p = end + 1;
    }
    return false;
}

/* The names of every index of the set that names a kernel; returns how many. */
static size_t set_names(const hk_kernel_set *set, char names[][HK_MAX_KERNEL_NAME], size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < set->count; ++i) {
        if (!set->name(i, names[n], HK_MAX_KERNEL_NAME))
            continue;
        if (n + 1 == max)
            fail_msg("more than %zu kernels in a set", max);
        ++n;
    }
    return n;
}

static void test_emulator_has_every_index(void **state)
{
    (void)state;
    static char names[256][HK_MAX_KERNEL_NAME];
    for (size_t f = 0; f < sizeof families / sizeof families[0]; ++f) {
        const size_t n = set_names(families[f].set, names, 256);
        if (n == 0)
            fail_msg("%s: the set names no kernel", families[f].name);
        for (size_t i = 0; i < n; ++i) {
            for (size_t j = 0; j < i; ++j)
                if (strcmp(names[i], names[j]) == 0)
                    fail_msg("%s: two indices name %s", families[f].name, names[i]);
            if (!hk_emu_find(942, names[i]) || !hk_emu_find(950, names[i]))
                fail_msg("%s: %s has an index but the emulator lacks it (gfx942 %s, gfx950 %s)", families[f].name,
                         names[i], hk_emu_find(942, names[i]) ? "has it" : "no", hk_emu_find(950, names[i]) ? "has it" : "no");
        }
        print_message("%s: %zu kernels of %zu indices\n", families[f].name, n, families[f].set->count);
    }
}

/* With the code objects embedded: each family's object of each arch holds exactly the set's kernels. */
static void test_code_objects_match_sets(void **state)
{
    (void)state;
    static char names[256][HK_MAX_KERNEL_NAME];
    size_t objects = 0;
    for (size_t b = 0; b < hk_code_blob_count(); ++b) {
        const hk_code_blob *blob = hk_code_blob_at(b);
        if (strncmp(blob->arch, "gfx", 3) != 0)
            continue;
        const family *fam = NULL;
        for (size_t f = 0; f < sizeof families / sizeof families[0]; ++f)
            if (strcmp(families[f].name, blob->name) == 0)
                fam = &families[f];
        if (!fam)
            continue; /* a family without a CDNA set here */
        ++objects;
        const size_t n = set_names(fam->set, names, 256);
        size_t listed_count = 0;
        for (const char *p = blob->kernels; *p; ++p)
            listed_count += p == blob->kernels || p[-1] == ',';
        for (size_t i = 0; i < n; ++i)
            if (!listed(blob->kernels, names[i]))
                fail_msg("%s %s: %s has an index but the code object lacks it", blob->arch, blob->name, names[i]);
        if (listed_count != n)
            fail_msg("%s %s: the code object holds %zu kernels, the set names %zu", blob->arch, blob->name,
                     listed_count, n);
    }
    if (objects == 0)
        skip(); /* built with amd_kernels disabled: the emulator test above covers the names */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_emulator_has_every_index),
        cmocka_unit_test(test_code_objects_match_sets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
