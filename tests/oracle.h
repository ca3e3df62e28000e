/* Float64 reference implementations for the libhk tests. Independent of the library: own dtype codecs, own
 * naive loops in double precision, own dropout mask (kernels/common/philox.h is the spec of the mask bits).
 * Tensors here are logical and contiguous; the tests map them to and from the strided device layouts. */
#ifndef HK_TEST_ORACLE_H
#define HK_TEST_ORACLE_H

#include "hk.h"

#include <stdint.h>

/* ---------------------------------------------------------------- dtypes
 * Encoding rounds to nearest even. Overflow gives +-inf for bf16/f16 and saturates to the finite maximum for
 * the fp8 formats (which have no infinity); NaN encodes to the format's canonical NaN. */
size_t orc_dtype_size(hk_dtype t);
double orc_decode(hk_dtype t, const void *base, int64_t index);
void orc_encode(hk_dtype t, void *base, int64_t index, double v);
double orc_round(hk_dtype t, double v); /* decode(encode(v)) */
/* Byte pattern that decodes to NaN in every element of type t (0xFF except e4m3fnuz, whose NaN is 0x80). */
uint8_t orc_nan_byte(hk_dtype t);

/* ---------------------------------------------------------------- GEMM
 * d[m][n] = alpha * sum_k a[m][k] * b[k][n] + beta * c[m][n]; a is op(A) (m x k), b is op(B) (k x n), row-major
 * logical; c may be NULL (then it is not read) and must not alias d. */
void orc_gemm(int64_t m, int64_t n, int64_t k, double alpha, const double *a, const double *b, double beta,
              const double *c, double *d);

/* ---------------------------------------------------------------- attention
 * Sequences are described by offsets into a packed token dimension: sequence s has query tokens
 * [cu_q[s], cu_q[s+1]) and key tokens [cu_k[s], cu_k[s+1]). q: [total_q][heads_q][head_dim];
 * k: [total_k][heads_kv][head_dim]; v: [total_k][heads_kv][dv]; o: [total_q][heads_q][dv] with dv = head_dim_v
 * (0: head_dim); lse: [total_q][heads_q]. With off = sk - sq of the sequence, query i sees key j iff
 * j <= i + off when causal, and, when window != 0, j >= i + off - window_left unless window_left < 0 and
 * j <= i + off + window_right unless window_right < 0 (hk.h's rules, taken as written: no normalisation).
 * softcap > 0 maps each scaled score s to softcap * tanh(s / softcap) before the softmax. A row that sees no
 * key gives o = 0 and lse = -inf. */
typedef struct orc_attn {
    int64_t batch, heads_q, heads_kv, head_dim;
    const int64_t *cu_q, *cu_k;
    double scale;
    int causal;
    int window;
    int64_t window_left, window_right;
    double softcap;
    int64_t head_dim_v;
} orc_attn;

void orc_attn_fwd(const orc_attn *p, const double *q, const double *k, const double *v, double *o, double *lse);
/* Gradients of orc_attn_fwd's o with respect to q, k, v for the upstream gradient d_o (same layouts).
 * o: the forward output the caller kept (as stored, i.e. rounded), used for rowsum(d_o * o) as any backward
 * given o must; NULL uses the exact forward output (the true gradient). */
void orc_attn_bwd(const orc_attn *p, const double *q, const double *k, const double *v, const double *o,
                  const double *d_o, double *dq, double *dk, double *dv);

/* ---------------------------------------------------------------- rotary
 * x, out: [batch][seqlen][heads][head_dim]; cos, sin: [table_positions][rotary_dim / 2];
 * pos: [batch * seqlen] positions. out may not alias x. */
typedef struct orc_rotary {
    int64_t batch, seqlen, heads, head_dim, rotary_dim;
    int interleaved, inverse;
} orc_rotary_args;

void orc_rotary(const orc_rotary_args *p, const double *x, const float *cos, const float *sin, const int64_t *pos,
                double *out);

/* ---------------------------------------------------------------- dropout + residual + norm */
/* min(floor(p * 2^32), 2^32 - 1) */
uint32_t orc_dropout_threshold(float p);
/* keep[i] for the elements i = 0 .. count - 1 of a (seed, offset) stream. */
void orc_dropout_mask(uint64_t seed, uint64_t offset, float p, int64_t count, uint8_t *keep);

typedef struct orc_ln {
    int rms; /* 0: LayerNorm, 1: RMSNorm */
    int64_t rows, cols;
    double epsilon;
    float dropout_p;
    uint64_t seed, offset;
    const uint8_t *keep_in; /* orc_ln_bwd: the keep mask to apply [rows * cols]; NULL: (seed, offset)'s */
} orc_ln;

/* Inputs [rows][cols] (residual, beta may be NULL); outputs z, y [rows][cols], mean, rstd [rows] (mean is 0 for
 * RMSNorm) and keep [rows * cols]. */
void orc_ln_fwd(const orc_ln *p, const double *x, const double *residual, const double *gamma, const double *beta,
                double *z, double *y, double *mean, double *rstd, uint8_t *keep);
/* From dy, z, gamma and the forward's mean/rstd (mean ignored for RMSNorm), dz_extra (may be NULL):
 * dz [rows][cols], dx = dz * keep / (1 - p), dgamma and dbeta [cols]. */
void orc_ln_bwd(const orc_ln *p, const double *dy, const double *z, const double *gamma, const double *mean,
                const double *rstd, const double *dz_extra, double *dz, double *dx, double *dgamma, double *dbeta);

#endif
