/* Shared machinery of the libFuzzer targets: a reader that decodes arguments from the input (every field
 * defaults to 0 once the input runs out), and the two ways a target calls the library:
 * - small: every size and stride is capped, and each tensor gets a buffer of exactly the bytes hk.h says it spans
 *   (computed here, independently of the library), so any read or write past it is a library bug ASan reports;
 * - wild: sizes come from edge values (negative, 2^31, 2^56 + 1, INT64_MAX); a call is made only when some tensor
 *   provably breaks a rule (a negative size, an extent past 2^48 bytes), with tiny buffers, and it must fail.
 * After any failing call hk_last_error() must be non-empty. Everything runs on one CPU context made once, with
 * one worker thread (HK_NUM_THREADS=1), so inputs run fast and reproduce exactly. */
#ifndef HK_FUZZ_H
#define HK_FUZZ_H

#include "hk.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Huge requests (a wild size handed to hk_malloc, scratch for an accepted shape) must come back as
 * HK_ERR_OUT_OF_MEMORY, not as ASan's report of an allocation too big. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

typedef struct fz {
    const uint8_t *p;
    size_t n;
} fz;

static inline uint64_t fz_bits(fz *f, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes && f->n; ++i, ++f->p, --f->n)
        v |= (uint64_t)*f->p << (8 * i);
    return v;
}

static inline bool fz_bool(fz *f) { return fz_bits(f, 1) & 1; }

/* An integer in [lo, hi]. */
static inline int64_t fz_range(fz *f, int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)(hi - lo) + 1;
    return lo + (int64_t)(span ? fz_bits(f, span > 0xFFFF ? 4 : span > 0xFF ? 2 : 1) % span : fz_bits(f, 8));
}

static const int64_t fz_edges[] = {-1, 0, 1, INT64_MAX, INT64_MIN, INT64_C(1) << 31, INT64_C(1) << 40,
                                   (INT64_C(1) << 56) + 1, (INT64_C(1) << 62), -(INT64_C(1) << 33), 3, 17};

/* A size: small mode in [0, cap]; wild mode an edge value or a small one. */
static inline int64_t fz_size(fz *f, bool wild, int64_t cap)
{
    if (wild && fz_bool(f))
        return fz_edges[fz_bits(f, 1) % (sizeof fz_edges / sizeof fz_edges[0])];
    return fz_range(f, 0, cap);
}

/* x + d, saturated (wild sizes sit next to INT64_MAX and INT64_MIN). */
static inline int64_t fz_plus(int64_t x, int64_t d)
{
    int64_t r;
    return __builtin_add_overflow(x, d, &r) ? (d > 0 ? INT64_MAX : INT64_MIN) : r;
}

/* A row stride for rows of `cols` elements: 0 (contiguous), or cols - 1 (too short, to be refused) to cols + 5. */
static inline int64_t fz_row_stride(fz *f, int64_t cols)
{
    return fz_bool(f) ? 0 : fz_plus(cols, fz_range(f, -1, 5));
}

/* x * y, saturated to INT64_MAX (the operands are >= 0 where it is used). */
static inline int64_t fz_times(int64_t x, int64_t y)
{
    int64_t r;
    return __builtin_mul_overflow(x, y, &r) ? INT64_MAX : r;
}

/* One of the dtypes, or now and then a value no dtype has. */
static inline hk_dtype fz_dtype(fz *f)
{
    int64_t v = fz_range(f, 0, 7);
    return (hk_dtype)(v == 7 ? 99 : v);
}

/* Bytes a tensor of `rank` dims over rows of `inner` elements spans (the last element's end), or -1 where a size or
 * stride is negative or the sum leaves int64; 0 when empty. */
static inline int64_t fz_extent(int rank, const int64_t *sizes, const int64_t *strides, int64_t inner, size_t elem)
{
    if (inner < 0)
        return -1;
    int64_t e = inner;
    for (int d = 0; d < rank; ++d) {
        if (sizes[d] < 0 || strides[d] < 0)
            return -1;
        if (sizes[d] == 0)
            return 0;
        int64_t span;
        if (__builtin_mul_overflow(strides[d], sizes[d] - 1, &span) || __builtin_add_overflow(e, span, &e))
            return -1;
    }
    if (inner == 0)
        return 0;
    int64_t bytes;
    return __builtin_mul_overflow(e, (int64_t)elem, &bytes) ? -1 : bytes;
}

/* Does this extent break the 2^48-byte rule (or overflow)? */
static inline bool fz_too_big(int64_t bytes) { return bytes < 0 || bytes > (INT64_C(1) << 48); }

/* Buffers of one call, freed by fz_release. Each is malloc'd to exactly its size (plus a caller-chosen
 * misalignment before it), filled from the input so the data reproduces. */
enum { FZ_MAX_BUFFERS = 16, FZ_CAP_BYTES = 1 << 20 };
typedef struct fz_pool {
    void *base[FZ_MAX_BUFFERS];
    int count;
} fz_pool;

static inline void *fz_buffer(fz_pool *pool, fz *f, int64_t bytes, size_t offset)
{
    if (bytes <= 0 || pool->count == FZ_MAX_BUFFERS)
        return NULL;
    unsigned char *b = malloc((size_t)bytes + offset);
    if (!b)
        abort();
    pool->base[pool->count++] = b;
    uint8_t seed = (uint8_t)fz_bits(f, 1);
    for (int64_t i = 0; i < bytes + (int64_t)offset; ++i)
        b[i] = (uint8_t)(seed + i * 37); /* not all zero, NaN and inf patterns included */
    return b + offset;
}

static inline void fz_release(fz_pool *pool)
{
    for (int i = 0; i < pool->count; ++i)
        free(pool->base[i]);
    pool->count = 0;
}

/* The context of every input. */
static inline hk_context *fz_context(void)
{
    static hk_context *ctx;
    if (!ctx) {
        setenv("HK_NUM_THREADS", "1", 1);
        hk_context_options o = HK_ARGS_INIT(hk_context_options);
        o.backend = HK_BACKEND_CPU;
        if (hk_context_create(&o, &ctx) != HK_OK) {
            fprintf(stderr, "fuzz: no CPU context: %s\n", hk_last_error());
            abort();
        }
    }
    return ctx;
}

/* Every failure names its reason; a call that had to fail did. */
static inline void fz_expect(hk_status st, bool must_fail, const char *what)
{
    if (st != HK_OK && !*hk_last_error()) {
        fprintf(stderr, "fuzz: %s failed with %s and an empty hk_last_error()\n", what, hk_status_string(st));
        abort();
    }
    if (must_fail && st == HK_OK) {
        fprintf(stderr, "fuzz: %s accepted arguments that break a rule of hk.h\n", what);
        abort();
    }
}

/* An older caller's struct ends at struct_size: zero what lies past it (from `given` to `real`), so the target
 * sizes its buffers from what the library reads. The struct_size field itself is set by the caller after. */
static inline void fz_truncate(void *args, size_t real, size_t given)
{
    if (given >= sizeof(size_t) && given < real)
        memset((char *)args + given, 0, real - given);
}

/* The struct_size a call passes: mostly the real one, sometimes an older, smaller or wild one. */
static inline size_t fz_struct_size(fz *f, size_t real)
{
    switch (fz_bits(f, 1) % 16) {
    case 0: return 0;
    case 1: return real - 8;
    case 2: return real + 8; /* a newer caller with zero trailing fields (the struct is padded below) */
    case 3: return SIZE_MAX;
    default: return real;
    }
}

/* A tensor argument: where its pointer goes, its layout (elements), whether the call reads or writes it. */
typedef struct fz_tensor {
    const void **field;
    int rank;
    int64_t size[3], stride[3];
    int64_t inner;
    size_t elem;
    bool needed;
    int64_t bytes; /* filled by fz_place */
} fz_tensor;

/* Give each tensor a pointer (none when it spans nothing): NULL, misaligned, the previous tensor's buffer (when it spans no more), or a buffer of
 * exactly its extent; wild inputs get 64-byte buffers. *must_fail is set where a needed tensor breaks a size rule.
 * false: skip the input (a valid small-mode extent over the cap cannot happen; the check keeps it so). */
static inline bool fz_place(fz_pool *pool, fz *f, bool wild, fz_tensor *t, int n, bool *must_fail)
{
    for (int i = 0; i < n; ++i) {
        t[i].bytes = fz_extent(t[i].rank, t[i].size, t[i].stride, t[i].inner, t[i].elem ? t[i].elem : 1);
        if (t[i].needed && fz_too_big(t[i].bytes))
            *must_fail = true;
        if (!wild && (t[i].bytes < 0 || t[i].bytes > FZ_CAP_BYTES))
            return false;
    }
    for (int i = 0; i < n; ++i) {
        int64_t bytes = wild ? 64 : t[i].bytes;
        if (t[i].bytes == 0) { /* absent or empty: a pointer would make an optional tensor present */
            *t[i].field = NULL;
            continue;
        }
        switch (fz_bits(f, 1) % 12) {
        case 0: *t[i].field = NULL; break;
        case 1: *t[i].field = fz_buffer(pool, f, bytes, 1 + fz_bits(f, 1) % 3); break;
        case 2:
            if (i > 0 && *t[i - 1].field && (wild || t[i].bytes <= t[i - 1].bytes)) {
                *t[i].field = *t[i - 1].field;
                break;
            }
            /* fall through */
        default: *t[i].field = fz_buffer(pool, f, bytes, 0);
        }
    }
    return true;
}

/* A float argument: mostly ordinary, sometimes 0, NaN, inf or huge. */
static inline float fz_float(fz *f)
{
    static const float special[] = {0.0f, 1.0f, -1.0f, 0.5f, 2.0f, 1e30f, -1e-30f, __builtin_nanf(""), __builtin_inff(), -__builtin_inff()};
    return special[fz_bits(f, 1) % (sizeof special / sizeof special[0])];
}

/* A {batch, seq, head} stride triple for the args (`field`) and the one it means (`eff`, for the extent): all zero
 * (contiguous), written out contiguous, small random ones, or (wild) edge values. batched: the batch stride counts
 * (false for packed varlen tokens, whose batch stride is ignored). */
static inline void fz_strides3(fz *f, bool wild, int64_t field[3], int64_t eff[3], int64_t seq, int64_t heads,
                               int64_t row, bool batched)
{
    int64_t token = 0, sequence = 0;
    bool dense = !__builtin_mul_overflow(heads, row, &token) && (!batched || !__builtin_mul_overflow(seq, token, &sequence));
    int mode = (int)(fz_bits(f, 1) % 4);
    if (mode >= 2)
        for (int i = 0; i < 3; ++i)
            field[i] = eff[i] = wild && fz_bool(f) ? fz_size(f, true, 0) : fz_range(f, 0, 96);
    if (mode >= 2 && (field[0] || field[1] || field[2]))
        return;
    switch (mode) {
    default: /* random strides that came out all zero mean contiguous too */
        field[0] = field[1] = field[2] = 0;
        eff[0] = batched ? sequence : 0, eff[1] = token, eff[2] = row;
        if (!dense)
            eff[0] = eff[1] = -1; /* the library must refuse: no contiguous layout fits int64 */
        return;
    case 1:
        field[0] = eff[0] = sequence, field[1] = eff[1] = token, field[2] = eff[2] = row;
        return;
    }
}

#endif
