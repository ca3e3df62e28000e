/* The oracle checks itself: dtype codecs against hand-derived encodings, Philox against the Random123
 * known-answer vectors, the attention and norm gradients against finite differences of the oracle's own
 * forward passes. If these fail, no other test result means anything. */
#include "harness.h"

#include "common/philox.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint32_t enc_bits(hk_dtype t, double v)
{
    unsigned char buf[4] = {0};
    orc_encode(t, buf, 0, v);
    uint32_t bits = 0;
    memcpy(&bits, buf, orc_dtype_size(t));
    return bits;
}

static double dec_bits(hk_dtype t, uint32_t bits)
{
    unsigned char buf[4];
    memcpy(buf, &bits, 4);
    return orc_decode(t, buf, 0);
}

#define EXPECT_BITS(t, v, want)                                                                                        \
    do {                                                                                                               \
        uint32_t got_ = enc_bits((t), (v));                                                                            \
        if (got_ != (uint32_t)(want))                                                                                  \
            fail_msg("encode(%s, %.17g) = 0x%x, want 0x%x", #t, (double)(v), got_, (unsigned)(want));                  \
    } while (0)

#define EXPECT_VALUE(t, bits, want)                                                                                    \
    do {                                                                                                               \
        double got_ = dec_bits((t), (bits));                                                                           \
        if (!(got_ == (double)(want)))                                                                                 \
            fail_msg("decode(%s, 0x%x) = %.17g, want %.17g", #t, (unsigned)(bits), got_, (double)(want));              \
    } while (0)

static void test_codecs(const th_ctx *c, const void *param)
{
    (void)c;
    (void)param;
    const hk_dtype BF = HK_DTYPE_BF16, F16 = HK_DTYPE_F16, FN = HK_DTYPE_FP8_E4M3, FNUZ = HK_DTYPE_FP8_E4M3FNUZ;
    /* bf16 */
    EXPECT_VALUE(BF, 0x3F80, 1.0);
    EXPECT_VALUE(BF, 0x4049, 3.140625);
    EXPECT_VALUE(BF, 0xC000, -2.0);
    EXPECT_VALUE(BF, 0x0001, ldexp(1, -133));
    EXPECT_VALUE(BF, 0x7F7F, 0x1.FEp127);
    EXPECT_BITS(BF, 1.0 + ldexp(1, -8), 0x3F80);     /* tie to even (down) */
    EXPECT_BITS(BF, 1.0 + 3 * ldexp(1, -8), 0x3F82); /* tie to even (up) */
    EXPECT_BITS(BF, 1.0 + ldexp(1, -8) + ldexp(1, -30), 0x3F81);
    EXPECT_BITS(BF, 1e39, 0x7F80);
    EXPECT_BITS(BF, -1e39, 0xFF80);
    EXPECT_BITS(BF, -0.0, 0x8000);
    EXPECT_BITS(BF, NAN, 0x7FC0);
    /* f16 */
    EXPECT_VALUE(F16, 0x3C00, 1.0);
    EXPECT_VALUE(F16, 0x7BFF, 65504.0);
    EXPECT_VALUE(F16, 0x0001, ldexp(1, -24));
    EXPECT_VALUE(F16, 0x0400, ldexp(1, -14));
    EXPECT_VALUE(F16, 0xFC00, -INFINITY);
    EXPECT_BITS(F16, 1.0 + ldexp(1, -11), 0x3C00);
    EXPECT_BITS(F16, 1.0 + 3 * ldexp(1, -11), 0x3C02);
    EXPECT_BITS(F16, 65519.0, 0x7BFF);
    EXPECT_BITS(F16, 65520.0, 0x7C00); /* the tie rounds to 65536, which overflows */
    EXPECT_BITS(F16, ldexp(1, -25), 0x0000);
    EXPECT_BITS(F16, ldexp(3, -26), 0x0001);
    /* OCP e4m3fn: bias 7, max 448, NaN S.1111.111 */
    EXPECT_VALUE(FN, 0x38, 1.0);
    EXPECT_VALUE(FN, 0x7E, 448.0);
    EXPECT_VALUE(FN, 0xFE, -448.0);
    EXPECT_VALUE(FN, 0x01, ldexp(1, -9));
    EXPECT_VALUE(FN, 0x08, ldexp(1, -6));
    EXPECT_VALUE(FN, 0x80, -0.0);
    assert_true(isnan(dec_bits(FN, 0x7F)) && isnan(dec_bits(FN, 0xFF)));
    EXPECT_BITS(FN, 1.0 + 1.0 / 16, 0x38);
    EXPECT_BITS(FN, 1.0 + 3.0 / 16, 0x3A);
    EXPECT_BITS(FN, 1000.0, 0x7E);
    EXPECT_BITS(FN, -1000.0, 0xFE);
    EXPECT_BITS(FN, 464.0, 0x7E);
    EXPECT_BITS(FN, ldexp(1, -10), 0x00);
    EXPECT_BITS(FN, ldexp(3, -10), 0x02);
    EXPECT_BITS(FN, NAN, 0x7F);
    /* e4m3fnuz: bias 8, max 240, NaN 0x80 only, no negative zero */
    EXPECT_VALUE(FNUZ, 0x40, 1.0);
    EXPECT_VALUE(FNUZ, 0x7F, 240.0);
    EXPECT_VALUE(FNUZ, 0xFF, -240.0);
    EXPECT_VALUE(FNUZ, 0x01, ldexp(1, -10));
    EXPECT_VALUE(FNUZ, 0x08, ldexp(1, -7));
    assert_true(isnan(dec_bits(FNUZ, 0x80)));
    EXPECT_BITS(FNUZ, 1000.0, 0x7F);
    EXPECT_BITS(FNUZ, -0.0, 0x00);
    EXPECT_BITS(FNUZ, NAN, 0x80);
    EXPECT_BITS(FNUZ, ldexp(1, -11), 0x00);

    /* every non-NaN code survives decode -> encode */
    const hk_dtype all[] = {BF, F16, FN, FNUZ};
    for (size_t t = 0; t < 4; ++t) {
        uint32_t codes = orc_dtype_size(all[t]) == 1 ? 256 : 65536;
        for (uint32_t b = 0; b < codes; ++b) {
            double v = dec_bits(all[t], b);
            if (isnan(v))
                continue;
            uint32_t back = enc_bits(all[t], v);
            if (back != b)
                fail_msg("dtype %d: code 0x%x decodes to %.17g, which encodes to 0x%x", (int)all[t], b, v, back);
        }
    }
    /* orc_nan_byte really is NaN everywhere */
    for (size_t t = 0; t < 4; ++t) {
        unsigned char buf[2];
        memset(buf, orc_nan_byte(all[t]), 2);
        assert_true(isnan(orc_decode(all[t], buf, 0)));
    }
}

/* Random123 kat_vectors for philox4x32_10. */
static void test_philox(const th_ctx *c, const void *param)
{
    (void)c;
    (void)param;
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e, 0xa20bc7c6,
         0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420,
         0x24126ea1},
    };
    for (int i = 0; i < 3; ++i) {
        hk_philox_out r = hk_philox4x32_10(kat[i][0], kat[i][1], kat[i][2], kat[i][3], kat[i][4], kat[i][5]);
        for (int w = 0; w < 4; ++w)
            if (r.w[w] != kat[i][6 + w])
                fail_msg("philox KAT %d word %d: 0x%08x, want 0x%08x", i, w, r.w[w], kat[i][6 + w]);
    }
}

static void test_dropout_rule(const th_ctx *c, const void *param)
{
    (void)c;
    (void)param;
    assert_int_equal(orc_dropout_threshold(0.0f), 0);
    assert_int_equal(orc_dropout_threshold(0.5f), 0x80000000u);
    assert_int_equal(orc_dropout_threshold(0.25f), 0x40000000u);
    assert_int_equal(orc_dropout_threshold(nextafterf(1.0f, 0.0f)), 0xFFFFFF00u);
    assert_int_equal(orc_dropout_threshold(1.0f), 0xFFFFFFFFu);
    /* the library's exported rule agrees everywhere in [0, 1) */
    th_rng rng = th_rng_for_case();
    for (int i = 0; i < 100000; ++i) {
        float p = (float)th_uniform(&rng, 0.0, 1.0);
        if (i < 64)
            p = ldexpf(1.0f, -i) * (float)th_uniform(&rng, 0.5, 1.0);
        if (hk_dropout_threshold(p) != orc_dropout_threshold(p))
            fail_msg("hk_dropout_threshold(%a) = %u, oracle %u", (double)p, hk_dropout_threshold(p),
                     orc_dropout_threshold(p));
    }
    /* the mask keeps about 1 - p, and different offsets give different masks */
    enum { N = 200000 };
    uint8_t *a = malloc(N), *b = malloc(N);
    orc_dropout_mask(1, 2, 0.3f, N, a);
    orc_dropout_mask(1, 3, 0.3f, N, b);
    long kept = 0, same = 0;
    for (int i = 0; i < N; ++i) {
        kept += a[i];
        same += a[i] == b[i];
    }
    free(a);
    free(b);
    assert_true(fabs((double)kept / N - 0.7) < 0.005);
    assert_true(fabs((double)same / N - 0.58) < 0.01); /* independent: 0.7^2 + 0.3^2 */
    /* element i uses word i % 4 of counter i / 4 */
    uint8_t k[8];
    orc_dropout_mask(0x1122334455667788ull, 0x99AABBCCDDEEFF00ull, 0.5f, 8, k);
    for (int i = 0; i < 8; ++i) {
        hk_philox_out r = hk_philox4x32_10((uint32_t)(i / 4), 0, 0xDDEEFF00u, 0x99AABBCCu, 0x55667788u, 0x11223344u);
        assert_int_equal(k[i], r.w[i % 4] >= 0x80000000u);
    }
}

static void test_gemm_oracle(const th_ctx *c, const void *param)
{
    (void)c;
    (void)param;
    const double a[6] = {1, 2, 3, 4, 5, 6};    /* 2 x 3 */
    const double b[6] = {7, 8, 9, 10, 11, 12}; /* 3 x 2 */
    const double cm[4] = {1, -1, 2, -2};
    double d[4];
    orc_gemm(2, 2, 3, 2.0, a, b, 0.5, cm, d);
    const double want[4] = {2 * 58 + 0.5, 2 * 64 - 0.5, 2 * 139 + 1, 2 * 154 - 1};
    for (int i = 0; i < 4; ++i)
        assert_true(d[i] == want[i]);
}

/* Loss sum(dO * O) as a function of one perturbed input; no: the elements of O. */
static double attn_loss(const orc_attn *p, const double *q, const double *k, const double *v, const double *d_o,
                        int64_t no)
{
    double *o = malloc(sizeof(double) * (size_t)no), loss = 0;
    orc_attn_fwd(p, q, k, v, o, NULL);
    for (int64_t i = 0; i < no; ++i)
        loss += o[i] * d_o[i];
    free(o);
    return loss;
}

/* The oracle's gradients of p against central differences of attn_loss. */
static void check_attn_gradients(th_rng *rng, const orc_attn *p, const char *what)
{
    int64_t tq = p->cu_q[p->batch], tk = p->cu_k[p->batch], dv = p->head_dim_v ? p->head_dim_v : p->head_dim;
    int64_t nq = tq * p->heads_q * p->head_dim, nk = tk * p->heads_kv * p->head_dim, nv = tk * p->heads_kv * dv;
    int64_t no = tq * p->heads_q * dv;
    double *q = malloc(sizeof(double) * (size_t)nq), *k = malloc(sizeof(double) * (size_t)nk);
    double *v = malloc(sizeof(double) * (size_t)nv), *d_o = malloc(sizeof(double) * (size_t)no);
    double *dq = malloc(sizeof(double) * (size_t)nq), *dk = malloc(sizeof(double) * (size_t)nk);
    double *dv_ = malloc(sizeof(double) * (size_t)nv);
    th_fill_normal(rng, HK_DTYPE_F32, q, nq, 1.5);
    th_fill_normal(rng, HK_DTYPE_F32, k, nk, 1.0);
    th_fill_normal(rng, HK_DTYPE_F32, v, nv, 1.0);
    th_fill_normal(rng, HK_DTYPE_F32, d_o, no, 1.0);
    orc_attn_bwd(p, q, k, v, NULL, d_o, dq, dk, dv_);
    double *ins[3] = {q, k, v}, *grads[3] = {dq, dk, dv_};
    int64_t sizes[3] = {nq, nk, nv};
    const double h = 1e-6;
    for (int t = 0; t < 3; ++t)
        for (int64_t i = 0; i < sizes[t]; ++i) {
            double keep = ins[t][i];
            ins[t][i] = keep + h;
            double up = attn_loss(p, q, k, v, d_o, no);
            ins[t][i] = keep - h;
            double down = attn_loss(p, q, k, v, d_o, no);
            ins[t][i] = keep;
            double fd = (up - down) / (2 * h);
            if (fabs(fd - grads[t][i]) > 1e-6 * (1 + fabs(fd)))
                fail_msg("%s: attention gradient %d[%ld]: oracle %.12g, finite difference %.12g", what, t, (long)i,
                         grads[t][i], fd);
        }
    free(q), free(k), free(v), free(d_o), free(dq), free(dk), free(dv_);
}

static void test_attn_oracle(const th_ctx *c, const void *param)
{
    (void)c;
    (void)param;
    th_rng rng = th_rng_for_case();
    /* bottom-right causal alignment: with 2 queries and 3 keys, query 0 sees keys 0-1, query 1 all three;
     * with 3 queries and 2 keys, query 0 sees nothing */
    {
        int64_t cu_q[2] = {0, 2}, cu_k[2] = {0, 3};
        orc_attn p = {.batch = 1, .heads_q = 1, .heads_kv = 1, .head_dim = 1, .cu_q = cu_q, .cu_k = cu_k,
                      .scale = 1.0, .causal = 1};
        double q[2] = {0, 0}, k[3] = {0, 0, 0}, v[3] = {1, 2, 6}, o[2], lse[2];
        orc_attn_fwd(&p, q, k, v, o, lse);
        assert_true(fabs(o[0] - 1.5) < 1e-15 && fabs(o[1] - 3.0) < 1e-15);
        assert_true(fabs(lse[0] - log(2.0)) < 1e-15 && fabs(lse[1] - log(3.0)) < 1e-15);
        int64_t cu_q3[2] = {0, 3}, cu_k2[2] = {0, 2};
        orc_attn p3 = p;
        p3.cu_q = cu_q3, p3.cu_k = cu_k2;
        double q3[3] = {0, 0, 0}, o3[3], lse3[3];
        orc_attn_fwd(&p3, q3, k, v, o3, lse3);
        assert_true(o3[0] == 0 && isinf(lse3[0]) && lse3[0] < 0);
        assert_true(fabs(o3[1] - 1.0) < 1e-15 && fabs(o3[2] - 1.5) < 1e-15);
    }
    /* windows on 3 queries x 4 keys (off = 1, so query i is aligned with key i + 1); equal scores make each
     * output the mean of the values it sees */
    {
        int64_t cu_q[2] = {0, 3}, cu_k[2] = {0, 4};
        double q[3] = {0, 0, 0}, k[4] = {0, 0, 0, 0}, v[4] = {1, 2, 4, 8}, o[3], lse[3];
        orc_attn p = {.batch = 1, .heads_q = 1, .heads_kv = 1, .head_dim = 1, .cu_q = cu_q, .cu_k = cu_k,
                      .scale = 1.0, .window = 1, .window_left = 1, .window_right = -1};
        orc_attn_fwd(&p, q, k, v, o, lse); /* left only: keys [i, 4) */
        assert_true(fabs(o[0] - 15.0 / 4) < 1e-15 && fabs(o[1] - 14.0 / 3) < 1e-15 && fabs(o[2] - 6.0) < 1e-15);
        assert_true(fabs(lse[0] - log(4.0)) < 1e-15 && fabs(lse[2] - log(2.0)) < 1e-15);
        p.window_left = 0, p.window_right = 1; /* both sides: keys [i + 1, i + 2] */
        orc_attn_fwd(&p, q, k, v, o, lse);
        assert_true(fabs(o[0] - 3.0) < 1e-15 && fabs(o[1] - 6.0) < 1e-15 && fabs(o[2] - 8.0) < 1e-15);
        p.window_left = 1, p.window_right = 5, p.causal = 1; /* causal cuts the right: keys [i, i + 1] */
        orc_attn_fwd(&p, q, k, v, o, lse);
        assert_true(fabs(o[0] - 1.5) < 1e-15 && fabs(o[1] - 3.0) < 1e-15 && fabs(o[2] - 6.0) < 1e-15);
        p.causal = 0, p.window_left = -1, p.window_right = -5; /* negative bounds: every key */
        orc_attn_fwd(&p, q, k, v, o, lse);
        assert_true(fabs(o[0] - 15.0 / 4) < 1e-15 && fabs(lse[1] - log(4.0)) < 1e-15);
        /* 4 queries x 2 keys (off = -2): with window_right 0 query 0 sees no key */
        int64_t cu_q4[2] = {0, 4}, cu_k2[2] = {0, 2};
        double q4[4] = {0, 0, 0, 0}, o4[4], lse4[4];
        p.cu_q = cu_q4, p.cu_k = cu_k2, p.window_left = 0, p.window_right = 0;
        orc_attn_fwd(&p, q4, k, v, o4, lse4);
        assert_true(o4[0] == 0 && o4[1] == 0 && isinf(lse4[0]) && lse4[0] < 0 && o4[2] == 1 && o4[3] == 2);
    }
    /* softcap: one visible key per score, so the row's LSE is the capped score itself */
    {
        int64_t cu_q[2] = {0, 1}, cu_k[2] = {0, 1};
        double q[1] = {3}, k[1] = {2}, v[1] = {5}, o[1], lse[1];
        orc_attn p = {.batch = 1, .heads_q = 1, .heads_kv = 1, .head_dim = 1, .cu_q = cu_q, .cu_k = cu_k,
                      .scale = 0.5, .softcap = 2.0};
        orc_attn_fwd(&p, q, k, v, o, lse);
        assert_true(o[0] == 5 && fabs(lse[0] - 2.0 * tanh(1.5)) < 1e-15);
    }
    /* gradients against central differences: 2 sequences (varlen), GQA 2, causal */
    int64_t cu_q[3] = {0, 3, 8}, cu_k[3] = {0, 4, 7};
    orc_attn p = {.batch = 2, .heads_q = 2, .heads_kv = 1, .head_dim = 3, .cu_q = cu_q, .cu_k = cu_k,
                  .scale = 0.7, .causal = 1};
    check_attn_gradients(&rng, &p, "causal");
    /* a two-sided window, a softcap tight enough to bend the scores, and V narrower than Q and K */
    orc_attn w = {.batch = 2, .heads_q = 2, .heads_kv = 1, .head_dim = 3, .cu_q = cu_q, .cu_k = cu_k,
                  .scale = 0.9, .window = 1, .window_left = 2, .window_right = 1, .softcap = 1.5, .head_dim_v = 2};
    check_attn_gradients(&rng, &w, "window, softcap, head_dim_v");
    w.causal = 1, w.head_dim_v = 4;
    check_attn_gradients(&rng, &w, "causal window, softcap, wider V");
}

static void test_rotary_oracle(const th_ctx *c, const void *param)
{
    (void)c;
    (void)param;
    /* one pair rotated by 90 degrees: (x1, x2) -> (-x2, x1) */
    const float cs[2] = {1, 0}, sn[2] = {0, 1};
    const int64_t pos[1] = {1};
    const double x[4] = {1, 2, 3, 4};
    double y[4];
    orc_rotary_args half = {1, 1, 1, 4, 2, 0, 0};
    orc_rotary(&half, x, cs, sn, pos, y); /* pairs (0, 1); 2, 3 copied */
    assert_true(y[0] == -2 && y[1] == 1 && y[2] == 3 && y[3] == 4);
    const float cs2[4] = {1, 1, 0, 1}, sn2[4] = {0, 0, 1, 0};
    orc_rotary_args full = {1, 1, 1, 4, 4, 0, 0};
    orc_rotary(&full, x, cs2, sn2, pos, y); /* half style: pairs (0, 2), (1, 3); position 1 rotates pair 0 only */
    assert_true(y[0] == -3 && y[2] == 1 && y[1] == 2 && y[3] == 4);
    full.interleaved = 1;
    orc_rotary(&full, x, cs2, sn2, pos, y); /* pairs (0, 1), (2, 3) */
    assert_true(y[0] == -2 && y[1] == 1 && y[2] == 3 && y[3] == 4);
    full.inverse = 1;
    orc_rotary(&full, x, cs2, sn2, pos, y);
    assert_true(y[0] == 2 && y[1] == -1 && y[2] == 3 && y[3] == 4);
}

static double ln_loss(const orc_ln *p, const double *x, const double *res, const double *g, const double *b,
                      const double *dy, const double *dz_extra, int64_t n)
{
    double *z = malloc(sizeof(double) * (size_t)n), *y = malloc(sizeof(double) * (size_t)n);
    double mean[8], rstd[8], loss = 0;
    uint8_t *keep = malloc((size_t)n);
    orc_ln_fwd(p, x, res, g, b, z, y, mean, rstd, keep);
    for (int64_t i = 0; i < n; ++i)
        loss += dy[i] * y[i] + dz_extra[i] * z[i];
    free(z);
    free(y);
    free(keep);
    return loss;
}

/* With the statistics recomputed in the forward, d loss / d residual is dz and d loss / d x is dx. */
static void test_ln_oracle(const th_ctx *c, const void *param)
{
    (void)c;
    (void)param;
    th_rng rng = th_rng_for_case();
    enum { R = 3, C = 9, N = R * C };
    for (int rms = 0; rms < 2; ++rms)
        for (int drop = 0; drop < 2; ++drop) {
            orc_ln p = {rms, R, C, 1e-3, drop ? 0.4f : 0.0f, 77, 5, NULL};
            double x[N], res[N], g[C], b[C], dy[N], extra[N], z[N], y[N], mean[R], rstd[R];
            double dz[N], dx[N], dg[C], db[C];
            uint8_t keep[N];
            th_fill_normal(&rng, HK_DTYPE_F32, x, N, 1.0);
            th_fill_normal(&rng, HK_DTYPE_F32, res, N, 1.0);
            th_fill_normal(&rng, HK_DTYPE_F32, g, C, 1.0);
            th_fill_normal(&rng, HK_DTYPE_F32, b, C, 1.0);
            th_fill_normal(&rng, HK_DTYPE_F32, dy, N, 1.0);
            th_fill_normal(&rng, HK_DTYPE_F32, extra, N, 1.0);
            const double *beta = rms ? NULL : b;
            orc_ln_fwd(&p, x, res, g, beta, z, y, mean, rstd, keep);
            orc_ln_bwd(&p, dy, z, g, mean, rstd, extra, dz, dx, dg, db);
            double *ins[3] = {res, x, g}, *grads[3] = {dz, dx, dg};
            int64_t sizes[3] = {N, N, C};
            const double h = 1e-6;
            for (int t = 0; t < 3; ++t)
                for (int64_t i = 0; i < sizes[t]; ++i) {
                    double keep_v = ins[t][i];
                    ins[t][i] = keep_v + h;
                    double up = ln_loss(&p, x, res, g, beta, dy, extra, N);
                    ins[t][i] = keep_v - h;
                    double down = ln_loss(&p, x, res, g, beta, dy, extra, N);
                    ins[t][i] = keep_v;
                    double fd = (up - down) / (2 * h);
                    if (fabs(fd - grads[t][i]) > 1e-6 * (1 + fabs(fd)))
                        fail_msg("norm gradient (rms %d, dropout %d) %d[%ld]: oracle %.12g, finite difference %.12g",
                                 rms, drop, t, (long)i, grads[t][i], fd);
                }
            if (!rms)
                for (int64_t j = 0; j < C; ++j) {
                    double s = 0;
                    for (int64_t r = 0; r < R; ++r)
                        s += dy[r * C + j];
                    assert_true(fabs(db[j] - s) < 1e-12);
                }
            /* dropped elements: dx exactly zero */
            for (int64_t i = 0; i < N; ++i)
                if (!keep[i])
                    assert_true(dx[i] == 0);
        }
}

int main(void)
{
    th_open_contexts();
    th_add("codecs", test_codecs, NULL, TH_CPU);
    th_add("philox_known_answers", test_philox, NULL, TH_CPU);
    th_add("dropout_rule", test_dropout_rule, NULL, TH_CPU);
    th_add("gemm_oracle", test_gemm_oracle, NULL, TH_CPU);
    th_add("attention_oracle_gradients", test_attn_oracle, NULL, TH_CPU);
    th_add("rotary_oracle", test_rotary_oracle, NULL, TH_CPU);
    th_add("norm_oracle_gradients", test_ln_oracle, NULL, TH_CPU);
    return th_run("oracle");
}
