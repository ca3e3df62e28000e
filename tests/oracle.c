/* Float64 oracle of the libhk tests: see oracle.h. Deliberately naive: clarity over speed. */
#include "oracle.h"

#include "common/philox.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- dtypes */

/* A small binary float format: mantissa bits, minimum normal exponent, exponent bias, largest finite value. */
typedef struct orc_format {
    int mbits, emin, bias, width;
    double max;
    int saturate;     /* overflow gives the largest finite value instead of infinity */
    uint32_t nan, inf; /* inf unused when saturating */
    int unsigned_zero; /* no negative zero (e4m3fnuz: 0x80 is NaN) */
} orc_format;

static const orc_format orc_bf16 = {7, -126, 127, 16, 0x1.FEp127, 0, 0x7FC0, 0x7F80, 0};
static const orc_format orc_f16 = {10, -14, 15, 16, 65504.0, 0, 0x7E00, 0x7C00, 0};
static const orc_format orc_e4m3fn = {3, -6, 7, 8, 448.0, 1, 0x7F, 0, 0};
static const orc_format orc_e4m3fnuz = {3, -7, 8, 8, 240.0, 1, 0x80, 0, 1};

static uint32_t orc_encode_format(const orc_format *f, double v)
{
    if (isnan(v))
        return f->nan;
    uint32_t sign = signbit(v) ? 1u << (f->width - 1) : 0;
    double a = fabs(v);
    double r = a;
    if (!isinf(a) && a > 0) {
        int e;
        frexp(a, &e); /* a = fr * 2^e, fr in [0.5, 1): the leading bit has weight 2^(e-1) */
        int E = e - 1 < f->emin ? f->emin : e - 1;
        double quantum = ldexp(1.0, E - f->mbits);
        r = rint(a / quantum) * quantum; /* the default rounding mode is to nearest even */
    }
    if (r > f->max) {
        if (f->saturate)
            return sign | orc_encode_format(f, f->max);
        return sign | f->inf;
    }
    if (r == 0)
        return f->unsigned_zero ? 0 : sign;
    int e;
    frexp(r, &e);
    int E = e - 1;
    uint32_t expf, mant;
    if (E < f->emin) {
        expf = 0;
        mant = (uint32_t)ldexp(r, f->mbits - f->emin);
    } else {
        expf = (uint32_t)(E + f->bias);
        mant = (uint32_t)(ldexp(r, f->mbits - E) - ldexp(1.0, f->mbits));
    }
    return sign | expf << f->mbits | mant;
}

static double orc_decode_fp8(const orc_format *f, uint8_t b)
{
    int s = b >> 7, E = (b >> 3) & 15, m = b & 7;
    double sign = s ? -1.0 : 1.0;
    if (f->unsigned_zero) {
        if (b == 0x80)
            return NAN;
    } else if (E == 15 && m == 7) {
        return NAN;
    }
    if (E == 0)
        return sign * ldexp(m, f->emin - f->mbits);
    return sign * ldexp(8 + m, E - f->bias - f->mbits);
}

static double orc_decode_f16(uint16_t h)
{
    double sign = (h & 0x8000) ? -1.0 : 1.0;
    int E = (h >> 10) & 31, m = h & 1023;
    if (E == 31)
        return m ? NAN : sign * INFINITY;
    if (E == 0)
        return sign * ldexp(m, -24);
    return sign * ldexp(1024 + m, E - 25);
}

static double orc_decode_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

size_t orc_dtype_size(hk_dtype t)
{
    switch (t) {
    case HK_DTYPE_F32: return 4;
    case HK_DTYPE_F16:
    case HK_DTYPE_BF16: return 2;
    case HK_DTYPE_FP8_E4M3:
    case HK_DTYPE_FP8_E4M3FNUZ: return 1;
    default: return 0;
    }
}

double orc_decode(hk_dtype t, const void *base, int64_t i)
{
    const unsigned char *p = (const unsigned char *)base + (size_t)i * orc_dtype_size(t);
    uint16_t h;
    float f;
    switch (t) {
    case HK_DTYPE_F32: memcpy(&f, p, 4); return f;
    case HK_DTYPE_F16: memcpy(&h, p, 2); return orc_decode_f16(h);
    case HK_DTYPE_BF16: memcpy(&h, p, 2); return orc_decode_bf16(h);
    case HK_DTYPE_FP8_E4M3: return orc_decode_fp8(&orc_e4m3fn, *p);
    case HK_DTYPE_FP8_E4M3FNUZ: return orc_decode_fp8(&orc_e4m3fnuz, *p);
    default: return NAN;
    }
}

void orc_encode(hk_dtype t, void *base, int64_t i, double v)
{
    unsigned char *p = (unsigned char *)base + (size_t)i * orc_dtype_size(t);
    uint16_t h;
    float f;
    switch (t) {
    case HK_DTYPE_F32: f = (float)v; memcpy(p, &f, 4); break;
    case HK_DTYPE_F16: h = (uint16_t)orc_encode_format(&orc_f16, v); memcpy(p, &h, 2); break;
    case HK_DTYPE_BF16: h = (uint16_t)orc_encode_format(&orc_bf16, v); memcpy(p, &h, 2); break;
    case HK_DTYPE_FP8_E4M3: *p = (uint8_t)orc_encode_format(&orc_e4m3fn, v); break;
    case HK_DTYPE_FP8_E4M3FNUZ: *p = (uint8_t)orc_encode_format(&orc_e4m3fnuz, v); break;
    default: break;
    }
}

double orc_round(hk_dtype t, double v)
{
    unsigned char buf[8];
    orc_encode(t, buf, 0, v);
    return orc_decode(t, buf, 0);
}

uint8_t orc_nan_byte(hk_dtype t)
{
    return t == HK_DTYPE_FP8_E4M3FNUZ ? 0x80 : 0xFF;
}

/* ---------------------------------------------------------------- GEMM */

void orc_gemm(int64_t m, int64_t n, int64_t k, double alpha, const double *a, const double *b, double beta,
              const double *c, double *d)
{
    /* Row by row through B's rows (not down its columns): each element's sum still runs over l in order, so the
     * result is the same, but B streams instead of striding by n (the oracle dominated test_gemm's time). */
    for (int64_t i = 0; i < m; ++i) {
        double *row = d + i * n;
        for (int64_t j = 0; j < n; ++j)
            row[j] = 0;
        for (int64_t l = 0; l < k; ++l) {
            const double x = a[i * k + l], *bl = b + l * n;
            for (int64_t j = 0; j < n; ++j)
                row[j] += x * bl[j];
        }
        for (int64_t j = 0; j < n; ++j)
            row[j] = alpha * row[j] + (c ? beta * c[i * n + j] : 0.0);
    }
}

/* ---------------------------------------------------------------- attention */

static int64_t orc_head_dim_v(const orc_attn *p) { return p->head_dim_v ? p->head_dim_v : p->head_dim; }

/* Does row i (of sq) see key j (of sk)? */
static int orc_visible(const orc_attn *p, int64_t i, int64_t j, int64_t sq, int64_t sk)
{
    int64_t diag = i + sk - sq;
    if (p->causal && j > diag)
        return 0;
    /* distances from the diagonal, so that bounds up to INT64_MAX cannot overflow */
    if (p->window && p->window_left >= 0 && diag - j > p->window_left)
        return 0;
    if (p->window && p->window_right >= 0 && j - diag > p->window_right)
        return 0;
    return 1;
}

/* Scores of query row i of sequence s, head h, against the sequence's keys, as the softmax sees them (scaled,
 * then capped); masked keys get -inf. slope (may be NULL) gets d score / d scaled score. Returns the row
 * maximum (-inf when nothing is visible). */
static double orc_scores(const orc_attn *p, const double *q, const double *k, int64_t s, int64_t i, int64_t h,
                         double *row, double *slope)
{
    int64_t D = p->head_dim, Hq = p->heads_q, Hkv = p->heads_kv;
    int64_t q0 = p->cu_q[s], k0 = p->cu_k[s];
    int64_t sq = p->cu_q[s + 1] - q0, sk = p->cu_k[s + 1] - k0;
    int64_t kvh = h / (Hq / Hkv);
    double mx = -INFINITY;
    for (int64_t j = 0; j < sk; ++j) {
        if (slope)
            slope[j] = 0;
        if (!orc_visible(p, i, j, sq, sk)) {
            row[j] = -INFINITY;
            continue;
        }
        const double *qi = q + ((q0 + i) * Hq + h) * D, *kj = k + ((k0 + j) * Hkv + kvh) * D;
        double dot = 0;
        for (int64_t d = 0; d < D; ++d)
            dot += qi[d] * kj[d];
        row[j] = dot * p->scale;
        if (slope)
            slope[j] = 1;
        if (p->softcap > 0) {
            double t = tanh(row[j] / p->softcap);
            row[j] = p->softcap * t;
            if (slope)
                slope[j] = 1 - t * t;
        }
        if (row[j] > mx)
            mx = row[j];
    }
    return mx;
}

static int64_t orc_max_seqlen_k(const orc_attn *p)
{
    int64_t mx = 1;
    for (int64_t s = 0; s < p->batch; ++s)
        if (p->cu_k[s + 1] - p->cu_k[s] > mx)
            mx = p->cu_k[s + 1] - p->cu_k[s];
    return mx;
}

/* Turns the scores of row into probabilities in place; returns the log-sum-exp. */
static double orc_softmax(double *row, int64_t n, double mx)
{
    if (mx == -INFINITY) {
        for (int64_t j = 0; j < n; ++j)
            row[j] = 0;
        return -INFINITY;
    }
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) {
        row[j] = exp(row[j] - mx);
        sum += row[j];
    }
    for (int64_t j = 0; j < n; ++j)
        row[j] /= sum;
    return mx + log(sum);
}

void orc_attn_fwd(const orc_attn *p, const double *q, const double *k, const double *v, double *o, double *lse)
{
    int64_t DV = orc_head_dim_v(p), Hq = p->heads_q, Hkv = p->heads_kv;
    double *row = malloc(sizeof(double) * (size_t)orc_max_seqlen_k(p));
    for (int64_t s = 0; s < p->batch; ++s) {
        int64_t q0 = p->cu_q[s], k0 = p->cu_k[s];
        int64_t sq = p->cu_q[s + 1] - q0, sk = p->cu_k[s + 1] - k0;
        for (int64_t h = 0; h < Hq; ++h) {
            int64_t kvh = h / (Hq / Hkv);
            for (int64_t i = 0; i < sq; ++i) {
                double l = orc_softmax(row, sk, orc_scores(p, q, k, s, i, h, row, NULL));
                double *oi = o + ((q0 + i) * Hq + h) * DV;
                for (int64_t d = 0; d < DV; ++d)
                    oi[d] = 0;
                for (int64_t j = 0; j < sk; ++j) {
                    const double *vj = v + ((k0 + j) * Hkv + kvh) * DV;
                    for (int64_t d = 0; d < DV && row[j] != 0; ++d)
                        oi[d] += row[j] * vj[d];
                }
                if (lse)
                    lse[(q0 + i) * Hq + h] = l;
            }
        }
    }
    free(row);
}

void orc_attn_bwd(const orc_attn *p, const double *q, const double *k, const double *v, const double *o,
                  const double *d_o, double *dq, double *dk, double *dv)
{
    int64_t D = p->head_dim, DV = orc_head_dim_v(p), Hq = p->heads_q, Hkv = p->heads_kv;
    int64_t total_q = p->cu_q[p->batch], total_k = p->cu_k[p->batch];
    memset(dq, 0, sizeof(double) * (size_t)(total_q * Hq * D));
    memset(dk, 0, sizeof(double) * (size_t)(total_k * Hkv * D));
    memset(dv, 0, sizeof(double) * (size_t)(total_k * Hkv * DV));
    int64_t msk = orc_max_seqlen_k(p);
    double *row = malloc(sizeof(double) * (size_t)msk), *dp = malloc(sizeof(double) * (size_t)msk);
    double *slope = malloc(sizeof(double) * (size_t)msk);
    for (int64_t s = 0; s < p->batch; ++s) {
        int64_t q0 = p->cu_q[s], k0 = p->cu_k[s];
        int64_t sq = p->cu_q[s + 1] - q0, sk = p->cu_k[s + 1] - k0;
        for (int64_t h = 0; h < Hq; ++h) {
            int64_t kvh = h / (Hq / Hkv);
            for (int64_t i = 0; i < sq; ++i) {
                orc_softmax(row, sk, orc_scores(p, q, k, s, i, h, row, slope));
                const double *doi = d_o + ((q0 + i) * Hq + h) * DV, *qi = q + ((q0 + i) * Hq + h) * D;
                double *dqi = dq + ((q0 + i) * Hq + h) * D;
                double delta = 0; /* sum_j P dP = dO . O */
                for (int64_t j = 0; j < sk; ++j) {
                    const double *vj = v + ((k0 + j) * Hkv + kvh) * DV;
                    double acc = 0;
                    for (int64_t d = 0; d < DV && row[j] != 0; ++d) /* masked keys add nothing */
                        acc += doi[d] * vj[d];
                    dp[j] = acc;
                    delta += row[j] * acc;
                }
                if (o) {
                    const double *oi = o + ((q0 + i) * Hq + h) * DV;
                    delta = 0;
                    for (int64_t d = 0; d < DV; ++d)
                        delta += doi[d] * oi[d];
                }
                for (int64_t j = 0; j < sk; ++j) {
                    if (row[j] == 0)
                        continue;
                    /* through the softmax, then the cap (chain rule), then the scale */
                    double ds = row[j] * (dp[j] - delta) * slope[j] * p->scale;
                    const double *kj = k + ((k0 + j) * Hkv + kvh) * D;
                    double *dkj = dk + ((k0 + j) * Hkv + kvh) * D, *dvj = dv + ((k0 + j) * Hkv + kvh) * DV;
                    for (int64_t d = 0; d < D; ++d) {
                        dqi[d] += ds * kj[d];
                        dkj[d] += ds * qi[d];
                    }
                    for (int64_t d = 0; d < DV; ++d)
                        dvj[d] += row[j] * doi[d];
                }
            }
        }
    }
    free(row);
    free(dp);
    free(slope);
}

/* ---------------------------------------------------------------- rotary */

void orc_rotary(const orc_rotary_args *p, const double *x, const float *cos, const float *sin, const int64_t *pos,
                double *out)
{
    int64_t D = p->head_dim, half = p->rotary_dim / 2;
    for (int64_t b = 0; b < p->batch; ++b)
        for (int64_t t = 0; t < p->seqlen; ++t) {
            int64_t ps = pos[b * p->seqlen + t];
            for (int64_t h = 0; h < p->heads; ++h) {
                const double *xi = x + ((b * p->seqlen + t) * p->heads + h) * D;
                double *yi = out + ((b * p->seqlen + t) * p->heads + h) * D;
                for (int64_t d = p->rotary_dim; d < D; ++d)
                    yi[d] = xi[d];
                for (int64_t i = 0; i < half; ++i) {
                    double c = cos[ps * half + i], s = sin[ps * half + i];
                    if (p->inverse)
                        s = -s;
                    int64_t i1 = p->interleaved ? 2 * i : i, i2 = p->interleaved ? 2 * i + 1 : i + half;
                    yi[i1] = xi[i1] * c - xi[i2] * s;
                    yi[i2] = xi[i2] * c + xi[i1] * s;
                }
            }
        }
}

/* ---------------------------------------------------------------- dropout + residual + norm */

uint32_t orc_dropout_threshold(float p)
{
    double t = floor((double)p * 4294967296.0);
    if (t > 4294967295.0)
        t = 4294967295.0;
    if (t < 0)
        t = 0;
    return (uint32_t)t;
}

void orc_dropout_mask(uint64_t seed, uint64_t offset, float p, int64_t count, uint8_t *keep)
{
    uint32_t threshold = orc_dropout_threshold(p);
    for (int64_t g = 0; g * 4 < count; ++g) {
        /* hk.h: key {seed lo, seed hi}, counter {(i/4) lo, (i/4) hi, offset lo, offset hi} */
        hk_philox_out r = hk_philox4x32_10((uint32_t)g, (uint32_t)((uint64_t)g >> 32), (uint32_t)offset,
                                           (uint32_t)(offset >> 32), (uint32_t)seed, (uint32_t)(seed >> 32));
        for (int64_t w = 0; w < 4 && g * 4 + w < count; ++w)
            keep[g * 4 + w] = r.w[w] >= threshold;
    }
}

void orc_ln_fwd(const orc_ln *p, const double *x, const double *residual, const double *gamma, const double *beta,
                double *z, double *y, double *mean, double *rstd, uint8_t *keep)
{
    int64_t R = p->rows, C = p->cols;
    orc_dropout_mask(p->seed, p->offset, p->dropout_p, R * C, keep);
    double scale = 1.0 / (1.0 - (double)p->dropout_p);
    for (int64_t r = 0; r < R; ++r) {
        double sum = 0, sq = 0;
        for (int64_t c = 0; c < C; ++c) {
            int64_t i = r * C + c;
            z[i] = (keep[i] ? x[i] * scale : 0.0) + (residual ? residual[i] : 0.0);
            sum += z[i];
        }
        double mu = p->rms ? 0.0 : sum / (double)C;
        for (int64_t c = 0; c < C; ++c)
            sq += (z[r * C + c] - mu) * (z[r * C + c] - mu);
        double rs = 1.0 / sqrt(sq / (double)C + p->epsilon);
        mean[r] = mu;
        rstd[r] = rs;
        for (int64_t c = 0; c < C; ++c) {
            int64_t i = r * C + c;
            y[i] = (z[i] - mu) * rs * gamma[c] + (beta ? beta[c] : 0.0);
        }
    }
}

void orc_ln_bwd(const orc_ln *p, const double *dy, const double *z, const double *gamma, const double *mean,
                const double *rstd, const double *dz_extra, double *dz, double *dx, double *dgamma, double *dbeta)
{
    int64_t R = p->rows, C = p->cols;
    uint8_t *keep = malloc((size_t)(R * C > 0 ? R * C : 1));
    if (p->keep_in)
        memcpy(keep, p->keep_in, (size_t)(R * C));
    else
        orc_dropout_mask(p->seed, p->offset, p->dropout_p, R * C, keep);
    double scale = 1.0 / (1.0 - (double)p->dropout_p);
    for (int64_t c = 0; c < C; ++c)
        dgamma[c] = dbeta[c] = 0;
    for (int64_t r = 0; r < R; ++r) {
        double mu = p->rms ? 0.0 : mean[r], rs = rstd[r];
        double mg = 0, mgx = 0; /* row means of g and g * xhat */
        for (int64_t c = 0; c < C; ++c) {
            int64_t i = r * C + c;
            double xhat = (z[i] - mu) * rs, g = dy[i] * gamma[c];
            mg += g;
            mgx += g * xhat;
            dgamma[c] += dy[i] * xhat;
            dbeta[c] += dy[i];
        }
        mg /= (double)C;
        mgx /= (double)C;
        for (int64_t c = 0; c < C; ++c) {
            int64_t i = r * C + c;
            double xhat = (z[i] - mu) * rs, g = dy[i] * gamma[c];
            double d = rs * (g - (p->rms ? 0.0 : mg) - xhat * mgx);
            dz[i] = d + (dz_extra ? dz_extra[i] : 0.0);
            dx[i] = keep[i] ? dz[i] * scale : 0.0;
        }
    }
    free(keep);
}
