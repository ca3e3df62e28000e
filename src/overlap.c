/* Aliasing between an op's tensors. Outputs may not share a byte with any other tensor of the call, except the
 * in-place forms hk.h names (an output that is exactly one input: same pointer, same layout). Byte ranges that meet
 * are still disjoint when the tensors interleave, as Q, K and V (or dQ, dK, dV) packed in one [tokens, 3, heads,
 * head_dim] buffer do: for a period S that every larger stride of both tensors is a multiple of, each tensor's
 * elements sit in one window of S bytes repeated, and two windows that do not meet modulo S never share a byte. */
#include "internal.h"

#include <string.h>

/* [lo, hi) of the bytes s spans; false when it spans none. Extents were checked against HK_MAX_TENSOR_BYTES. */
static bool byte_range(const hk_span *s, uint64_t *lo, uint64_t *hi)
{
    if (!s->p || s->inner <= 0)
        return false;
    uint64_t extent = (uint64_t)s->inner;
    for (int d = 0; d < s->rank; ++d) {
        if (s->size[d] <= 0)
            return false;
        extent += (uint64_t)s->stride[d] * (uint64_t)(s->size[d] - 1);
    }
    *lo = (uint64_t)(uintptr_t)s->p;
    *hi = *lo + extent * s->elem;
    return true;
}

/* The bytes of one period S that s covers from its start, when every stride of s past S is a multiple of S. */
static bool footprint(const hk_span *s, uint64_t period, uint64_t *foot)
{
    uint64_t f = (uint64_t)s->inner * s->elem;
    for (int d = 0; d < s->rank; ++d) {
        if (s->size[d] <= 1)
            continue;
        uint64_t stride = (uint64_t)s->stride[d] * s->elem;
        if (stride >= period) {
            if (stride % period != 0)
                return false;
        } else {
            f += stride * (uint64_t)(s->size[d] - 1);
        }
    }
    *foot = f;
    return f <= period;
}

static bool interleaved(const hk_span *a, const hk_span *b, uint64_t period)
{
    uint64_t fa, fb;
    if (period == 0 || !footprint(a, period, &fa) || !footprint(b, period, &fb))
        return false;
    uint64_t start = ((uint64_t)(uintptr_t)b->p - (uint64_t)(uintptr_t)a->p) % period; /* b's window after a's */
    return start >= fa && start + fb <= period;
}

static bool overlap(const hk_span *a, const hk_span *b)
{
    uint64_t alo, ahi, blo, bhi;
    if (!byte_range(a, &alo, &ahi) || !byte_range(b, &blo, &bhi) || ahi <= blo || bhi <= alo)
        return false;
    const hk_span *both[2] = {a, b};
    for (int t = 0; t < 2; ++t)
        for (int d = 0; d < both[t]->rank; ++d)
            if (both[t]->size[d] > 1 && interleaved(a, b, (uint64_t)both[t]->stride[d] * both[t]->elem))
                return false;
    return true;
}

static bool same_layout(const hk_span *a, const hk_span *b)
{
    if (a->p != b->p || a->elem != b->elem || a->rank != b->rank || a->inner != b->inner)
        return false;
    for (int d = 0; d < a->rank; ++d)
        if (a->size[d] != b->size[d] || (a->size[d] > 1 && a->stride[d] != b->stride[d]))
            return false;
    return true;
}

hk_status hk_check_overlaps(const char *op, const hk_span *out, size_t n_out, const hk_span *in, size_t n_in,
                            const char *in_place)
{
    for (size_t i = 0; i < n_out; ++i) {
        for (size_t j = 0; j < n_out + n_in; ++j) {
            const hk_span *other = j < n_out ? &out[j] : &in[j - n_out];
            if (j == i || (j < i && j < n_out)) /* each pair of outputs once */
                continue;
            bool allowed = out[i].in_place_of && other->name && strcmp(out[i].in_place_of, other->name) == 0 &&
                           same_layout(&out[i], other);
            if (!allowed && overlap(&out[i], other))
                return hk_fail(HK_ERR_INVALID_ARGUMENT, "%s: %s overlaps %s (in-place forms: %s)", op, out[i].name,
                               other->name, in_place);
        }
    }
    return HK_OK;
}
