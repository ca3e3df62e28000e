/* hk_attn_fwd / hk_attn_bwd against the float64 oracle on every available context. */
#include "harness.h"

#include <math.h>
#include <string.h>

#define BF HK_DTYPE_BF16
#define F16 HK_DTYPE_F16
#define F32 HK_DTYPE_F32
#define MAX_SEQS 4

typedef struct attn_case {
    const char *name;
    unsigned kinds;
    hk_dtype dt;
    int64_t batch, sq, sk, hq, hkv, d;
    int causal;
    float scale; /* 0: default 1/sqrt(d) */
    int64_t pad; /* padding elements between heads, rows and batches (0: contiguous, all-zero strides) */
    int varlen;
    int32_t lens_q[MAX_SEQS], lens_k[MAX_SEQS]; /* varlen: per-sequence lengths */
    int no_lse;
    int deterministic; /* bwd: also run twice and require bitwise equal results */
} attn_case;

static const attn_case fwd_cases[] = {
    {"basic_d64", TH_ALL, BF, 2, 64, 64, 4, 4, 64, 0, 0, 0, 0, {0}, {0}, 0, 0},
    {"causal_d128", TH_ALL, BF, 1, 128, 128, 2, 2, 128, 1, 0, 0, 0, {0}, {0}, 0, 0},
    {"causal_q_lt_k", TH_ALL, BF, 2, 37, 100, 2, 2, 64, 1, 0, 0, 0, {0}, {0}, 0, 0},
    {"causal_q_gt_k", TH_ALL, BF, 2, 100, 37, 2, 2, 64, 1, 0, 0, 0, {0}, {0}, 0, 0},
    {"noncausal_q_ne_k", TH_ALL, BF, 1, 48, 80, 2, 2, 64, 0, 0, 0, 0, {0}, {0}, 0, 0},
    {"gqa1_causal", TH_ALL, BF, 1, 64, 64, 4, 4, 64, 1, 0, 0, 0, {0}, {0}, 0, 0},
    {"gqa4_causal", TH_ALL, BF, 1, 64, 64, 8, 2, 64, 1, 0, 0, 0, {0}, {0}, 0, 0},
    {"gqa8", TH_ALL, BF, 1, 64, 64, 8, 1, 128, 0, 0, 0, 0, {0}, {0}, 0, 0},
    {"strided_pad8", TH_ALL, BF, 2, 64, 64, 3, 3, 64, 0, 0, 8, 0, {0}, {0}, 0, 0},
    {"strided_gqa4_causal", TH_ALL, BF, 2, 48, 64, 4, 1, 64, 1, 0, 16, 0, {0}, {0}, 0, 0},
    {"varlen", TH_ALL, BF, 3, 64, 50, 2, 2, 64, 0, 0, 0, 1, {5, 64, 1}, {7, 50, 33}, 0, 0},
    {"varlen_causal", TH_ALL, BF, 3, 64, 50, 2, 2, 64, 1, 0, 0, 1, {5, 64, 1}, {7, 50, 33}, 0, 0},
    {"varlen_gqa4_strided", TH_ALL, BF, 2, 40, 70, 4, 1, 64, 1, 0, 8, 1, {40, 17}, {70, 9}, 0, 0},
    {"varlen_empty_sequences", TH_ALL, BF, 3, 4, 6, 2, 2, 64, 0, 0, 0, 1, {3, 0, 4}, {0, 5, 6}, 0, 0},
    {"explicit_scale_no_lse", TH_ALL, BF, 1, 64, 64, 2, 2, 64, 1, 0.3f, 0, 0, {0}, {0}, 1, 0},
    {"f16", TH_ALL, F16, 1, 64, 64, 2, 2, 64, 1, 0, 0, 0, {0}, {0}, 0, 0},
    {"f32", TH_ALL, F32, 1, 33, 47, 2, 1, 64, 1, 0, 0, 0, {0}, {0}, 0, 0},
    {"tiny_1x1", TH_ALL, BF, 1, 1, 1, 1, 1, 64, 1, 0, 0, 0, {0}, {0}, 0, 0},
    {"odd_7x127", TH_ALL, BF, 1, 7, 127, 2, 2, 64, 1, 0, 0, 0, {0}, {0}, 0, 0},
    {"odd_127x7_causal", TH_ALL, BF, 1, 127, 7, 1, 1, 128, 1, 0, 0, 0, {0}, {0}, 0, 0},
    {"head_dim_40", TH_ALL, BF, 1, 16, 24, 2, 2, 40, 1, 0, 0, 0, {0}, {0}, 0, 0},
    {"head_dim_7_f32", TH_ALL, F32, 2, 9, 13, 2, 2, 7, 0, 0, 0, 0, {0}, {0}, 0, 0},
    {"long_1000_causal_gqa", TH_NOT_EMU, BF, 1, 1000, 1000, 4, 2, 64, 1, 0, 0, 0, {0}, {0}, 0, 0},
    {"long_1000x127_d128", TH_NOT_EMU, BF, 1, 1000, 127, 2, 2, 128, 0, 0, 0, 0, {0}, {0}, 0, 0},
    {"strided_odd_pad", TH_NOT_EMU, BF, 2, 31, 45, 3, 3, 64, 1, 0, 3, 0, {0}, {0}, 0, 0},
};

static const attn_case bwd_cases[] = {
    {"bwd_basic_d64", TH_ALL, BF, 2, 64, 64, 2, 2, 64, 0, 0, 0, 0, {0}, {0}, 0, 0},
    {"bwd_causal_d128", TH_ALL, BF, 1, 64, 64, 2, 2, 128, 1, 0, 0, 0, {0}, {0}, 0, 0},
    {"bwd_causal_q_lt_k", TH_ALL, BF, 1, 37, 100, 2, 2, 64, 1, 0, 0, 0, {0}, {0}, 0, 0},
    {"bwd_causal_q_gt_k", TH_ALL, BF, 1, 100, 37, 2, 2, 64, 1, 0, 0, 0, {0}, {0}, 0, 0},
    {"bwd_gqa4_deterministic", TH_ALL, BF, 1, 64, 64, 8, 2, 64, 1, 0, 0, 0, {0}, {0}, 0, 1},
    {"bwd_gqa8", TH_ALL, BF, 1, 64, 48, 8, 1, 64, 0, 0, 0, 0, {0}, {0}, 0, 0},
    {"bwd_strided_pad8", TH_ALL, BF, 2, 48, 64, 2, 2, 64, 1, 0.2f, 8, 0, {0}, {0}, 0, 0},
    {"bwd_varlen_causal", TH_ALL, BF, 3, 64, 50, 2, 1, 64, 1, 0, 0, 1, {5, 64, 1}, {7, 50, 33}, 0, 0},
    {"bwd_f16", TH_ALL, F16, 1, 64, 64, 2, 2, 64, 1, 0, 0, 0, {0}, {0}, 0, 0},
    {"bwd_f32_odd", TH_ALL, F32, 2, 13, 21, 4, 2, 24, 1, 0, 0, 0, {0}, {0}, 0, 1},
    {"bwd_odd_127x200", TH_NOT_EMU, BF, 1, 127, 200, 4, 2, 64, 1, 0, 0, 0, {0}, {0}, 0, 1},
    {"bwd_long_1000_d128", TH_NOT_EMU, BF, 1, 1000, 1000, 2, 1, 128, 1, 0, 0, 0, {0}, {0}, 0, 0},
    {"bwd_strided_odd_pad", TH_NOT_EMU, BF, 2, 21, 33, 2, 1, 64, 0, 0, 5, 0, {0}, {0}, 0, 0},
};

/* Everything the two directions share: sequences, layouts and the oracle's inputs. */
typedef struct attn_problem {
    int64_t cu_q[MAX_SEQS + 1], cu_k[MAX_SEQS + 1];
    int32_t cu32_q[MAX_SEQS + 1], cu32_k[MAX_SEQS + 1];
    int64_t total_q, total_k;
    orc_attn orc;
    double *q, *k, *v;
} attn_problem;

/* Layout of a [batch, seq, heads, d] tensor (varlen: [1, total, heads, d]) with `pad` extra elements after
 * each head, row and batch. */
static th_tensor layout(const attn_case *a, const attn_problem *p, int is_q, int64_t heads, int64_t pad,
                        int64_t stride[3])
{
    int64_t seq = a->varlen ? (is_q ? p->total_q : p->total_k) : (is_q ? a->sq : a->sk);
    int64_t nb = a->varlen ? 1 : a->batch;
    int64_t sh = a->d + pad, ss = heads * sh + pad, sb = seq * ss + pad;
    if (pad == 0 && !a->varlen) {
        stride[0] = stride[1] = stride[2] = 0; /* contiguous by default */
    } else {
        stride[0] = sb;
        stride[1] = ss;
        stride[2] = sh;
    }
    return th_tensor4(a->dt, nb, seq, heads, a->d, sb, ss, sh);
}

static void setup_problem(const attn_case *a, attn_problem *p, th_rng *rng)
{
    p->cu_q[0] = p->cu_k[0] = 0;
    for (int64_t s = 0; s < a->batch; ++s) {
        p->cu_q[s + 1] = p->cu_q[s] + (a->varlen ? a->lens_q[s] : a->sq);
        p->cu_k[s + 1] = p->cu_k[s] + (a->varlen ? a->lens_k[s] : a->sk);
    }
    for (int64_t s = 0; s <= a->batch; ++s) {
        p->cu32_q[s] = (int32_t)p->cu_q[s];
        p->cu32_k[s] = (int32_t)p->cu_k[s];
    }
    p->total_q = p->cu_q[a->batch];
    p->total_k = p->cu_k[a->batch];
    p->orc.batch = a->batch;
    p->orc.heads_q = a->hq;
    p->orc.heads_kv = a->hkv;
    p->orc.head_dim = a->d;
    p->orc.cu_q = p->cu_q;
    p->orc.cu_k = p->cu_k;
    p->orc.scale = a->scale != 0 ? (double)a->scale : 1.0 / sqrt((double)a->d);
    p->orc.causal = a->causal;
    int64_t nq = p->total_q * a->hq * a->d, nk = p->total_k * a->hkv * a->d;
    p->q = th_host(sizeof(double) * (size_t)(nq ? nq : 1));
    p->k = th_host(sizeof(double) * (size_t)(nk ? nk : 1));
    p->v = th_host(sizeof(double) * (size_t)(nk ? nk : 1));
    th_fill_normal(rng, a->dt, p->q, nq, 1.5);
    th_fill_normal(rng, a->dt, p->k, nk, 1.0);
    th_fill_normal(rng, a->dt, p->v, nk, 1.0);
}

/* Index of the library's LSE entry for oracle row (token t, head h). */
static int64_t lse_index(const attn_case *a, const attn_problem *p, int64_t t, int64_t h)
{
    if (a->varlen)
        return h * p->total_q + t;
    int64_t b = t / a->sq, i = t % a->sq;
    return (b * a->hq + h) * a->sq + i;
}

static void run_fwd(const th_ctx *c, const void *param)
{
    const attn_case *a = param;
    th_rng rng = th_rng_for_case();
    attn_problem p;
    setup_problem(a, &p, &rng);

    hk_attn_fwd_args args = HK_ARGS_INIT(hk_attn_fwd_args);
    args.dtype = a->dt;
    args.batch = a->batch;
    args.seqlen_q = a->sq;
    args.seqlen_k = a->sk;
    args.heads_q = a->hq;
    args.heads_kv = a->hkv;
    args.head_dim = a->d;
    th_tensor qt = layout(a, &p, 1, a->hq, a->pad, args.q_stride);
    th_tensor kt = layout(a, &p, 0, a->hkv, 2 * a->pad, args.k_stride);
    th_tensor vt = layout(a, &p, 0, a->hkv, 3 * a->pad, args.v_stride);
    th_tensor ot = layout(a, &p, 1, a->hq, a->pad ? a->pad + 8 : 0, args.o_stride);
    args.q = th_dev_tensor(c, &qt, p.q);
    args.k = th_dev_tensor(c, &kt, p.k);
    args.v = th_dev_tensor(c, &vt, p.v);
    args.o = th_dev(c, th_bytes(&ot));
    int64_t nlse = p.total_q * a->hq;
    if (!a->no_lse)
        args.lse = th_dev(c, sizeof(float) * (size_t)(nlse ? nlse : 1));
    args.softmax_scale = a->scale;
    args.causal = a->causal;
    if (a->varlen) {
        args.cu_seqlens_q = th_dev(c, sizeof(int32_t) * (size_t)(a->batch + 1));
        args.cu_seqlens_k = th_dev(c, sizeof(int32_t) * (size_t)(a->batch + 1));
        th_upload(c, (void *)args.cu_seqlens_q, p.cu32_q, sizeof(int32_t) * (size_t)(a->batch + 1));
        th_upload(c, (void *)args.cu_seqlens_k, p.cu32_k, sizeof(int32_t) * (size_t)(a->batch + 1));
    }

    th_op_status(c, hk_attn_fwd(c->ctx, &args), "hk_attn_fwd");

    int64_t no = p.total_q * a->hq * a->d;
    double *o_ref = th_host(sizeof(double) * (size_t)(no ? no : 1));
    double *lse_ref = th_host(sizeof(double) * (size_t)(nlse ? nlse : 1));
    orc_attn_fwd(&p.orc, p.q, p.k, p.v, o_ref, lse_ref);

    bool ok = true;
    double *o = th_fetch_tensor(c, &ot, args.o, &ok, "O");
    ok &= th_check("O", o, o_ref, no, th_tol_for(a->dt, c));
    if (!a->no_lse) {
        float *lse = th_host(sizeof(float) * (size_t)(nlse ? nlse : 1));
        double *got = th_host(sizeof(double) * (size_t)(nlse ? nlse : 1));
        th_download(c, lse, args.lse, sizeof(float) * (size_t)nlse);
        for (int64_t t = 0; t < p.total_q; ++t)
            for (int64_t h = 0; h < a->hq; ++h)
                got[t * a->hq + h] = lse[lse_index(a, &p, t, h)];
        /* the LSE acts through exp(LSE): its absolute error is the softmax normaliser's relative error, so an LSE near
         * 0 is judged absolutely (tiny_1x1 with HK_TEST_SEED=0x6b10773802441: LSE 0.0042, |error| 4.5e-8, the fp32
         * rounding of its one 64-term dot product, failed a relative bound of 1e-5) */
        th_tol lse_tol = th_tol_for(F32, c);
        lse_tol.floor = 1;
        ok &= th_check("LSE", got, lse_ref, nlse, lse_tol);
    }
    th_expect(ok, "hk_attn_fwd result");
}

static void run_bwd(const th_ctx *c, const void *param)
{
    const attn_case *a = param;
    th_rng rng = th_rng_for_case();
    attn_problem p;
    setup_problem(a, &p, &rng);
    int64_t nq = p.total_q * a->hq * a->d, nk = p.total_k * a->hkv * a->d, nlse = p.total_q * a->hq;
    double *o_ref = th_host(sizeof(double) * (size_t)(nq ? nq : 1));
    double *lse_ref = th_host(sizeof(double) * (size_t)(nlse ? nlse : 1));
    double *d_o = th_host(sizeof(double) * (size_t)(nq ? nq : 1));
    orc_attn_fwd(&p.orc, p.q, p.k, p.v, o_ref, lse_ref);
    th_fill_normal(&rng, a->dt, d_o, nq, 1.0);

    hk_attn_bwd_args args = HK_ARGS_INIT(hk_attn_bwd_args);
    args.dtype = a->dt;
    args.batch = a->batch;
    args.seqlen_q = a->sq;
    args.seqlen_k = a->sk;
    args.heads_q = a->hq;
    args.heads_kv = a->hkv;
    args.head_dim = a->d;
    int64_t pad = a->pad;
    th_tensor qt = layout(a, &p, 1, a->hq, pad, args.q_stride);
    th_tensor kt = layout(a, &p, 0, a->hkv, 2 * pad, args.k_stride);
    th_tensor vt = layout(a, &p, 0, a->hkv, 3 * pad, args.v_stride);
    th_tensor ot = layout(a, &p, 1, a->hq, pad ? pad + 8 : 0, args.o_stride);
    th_tensor dot = layout(a, &p, 1, a->hq, pad ? pad + 16 : 0, args.do_stride);
    th_tensor dqt = layout(a, &p, 1, a->hq, pad ? pad + 24 : 0, args.dq_stride);
    th_tensor dkt = layout(a, &p, 0, a->hkv, pad ? pad + 32 : 0, args.dk_stride);
    th_tensor dvt = layout(a, &p, 0, a->hkv, pad ? pad + 40 : 0, args.dv_stride);
    args.q = th_dev_tensor(c, &qt, p.q);
    args.k = th_dev_tensor(c, &kt, p.k);
    args.v = th_dev_tensor(c, &vt, p.v);
    args.o = th_dev_tensor(c, &ot, o_ref); /* the forward's output as the caller would store it */
    args.d_o = th_dev_tensor(c, &dot, d_o);
    float *lse = th_host(sizeof(float) * (size_t)(nlse ? nlse : 1));
    for (int64_t t = 0; t < p.total_q; ++t)
        for (int64_t h = 0; h < a->hq; ++h)
            lse[lse_index(a, &p, t, h)] = (float)lse_ref[t * a->hq + h];
    args.lse = th_dev(c, sizeof(float) * (size_t)(nlse ? nlse : 1));
    th_upload(c, (void *)args.lse, lse, sizeof(float) * (size_t)nlse);
    args.dq = th_dev(c, th_bytes(&dqt));
    args.dk = th_dev(c, th_bytes(&dkt));
    args.dv = th_dev(c, th_bytes(&dvt));
    args.softmax_scale = a->scale;
    args.causal = a->causal;
    args.deterministic = a->deterministic;
    if (a->varlen) {
        args.cu_seqlens_q = th_dev(c, sizeof(int32_t) * (size_t)(a->batch + 1));
        args.cu_seqlens_k = th_dev(c, sizeof(int32_t) * (size_t)(a->batch + 1));
        th_upload(c, (void *)args.cu_seqlens_q, p.cu32_q, sizeof(int32_t) * (size_t)(a->batch + 1));
        th_upload(c, (void *)args.cu_seqlens_k, p.cu32_k, sizeof(int32_t) * (size_t)(a->batch + 1));
    }
    size_t ws = 0;
    th_op_status(c, hk_attn_bwd_workspace_size(c->ctx, &args, &ws), "hk_attn_bwd_workspace_size");
    if (ws) {
        args.workspace = th_dev(c, ws);
        args.workspace_size = ws;
    }

    th_op_status(c, hk_attn_bwd(c->ctx, &args), "hk_attn_bwd");

    double *dq_ref = th_host(sizeof(double) * (size_t)(nq ? nq : 1));
    double *dk_ref = th_host(sizeof(double) * (size_t)(nk ? nk : 1));
    double *dv_ref = th_host(sizeof(double) * (size_t)(nk ? nk : 1));
    /* the library sees O rounded to the dtype: the oracle uses that same O for rowsum(dO * O) */
    double *o_stored = th_host(sizeof(double) * (size_t)(nq ? nq : 1));
    for (int64_t i = 0; i < nq; ++i)
        o_stored[i] = orc_round(a->dt, o_ref[i]);
    orc_attn_bwd(&p.orc, p.q, p.k, p.v, o_stored, d_o, dq_ref, dk_ref, dv_ref);

    bool ok = true;
    th_tol tol = th_tol_for(a->dt, c);
    double *dq = th_fetch_tensor(c, &dqt, args.dq, &ok, "dQ");
    double *dk = th_fetch_tensor(c, &dkt, args.dk, &ok, "dK");
    double *dv = th_fetch_tensor(c, &dvt, args.dv, &ok, "dV");
    ok &= th_check("dQ", dq, dq_ref, nq, tol);
    ok &= th_check("dK", dk, dk_ref, nk, tol);
    ok &= th_check("dV", dv, dv_ref, nk, tol);

    if (a->deterministic) {
        /* a second run into fresh poisoned buffers must give identical bytes */
        size_t bytes[3] = {th_bytes(&dqt), th_bytes(&dkt), th_bytes(&dvt)};
        void *first[3] = {args.dq, args.dk, args.dv};
        args.dq = th_dev(c, bytes[0]);
        args.dk = th_dev(c, bytes[1]);
        args.dv = th_dev(c, bytes[2]);
        th_op_status(c, hk_attn_bwd(c->ctx, &args), "hk_attn_bwd (second run)");
        void *second[3] = {args.dq, args.dk, args.dv};
        static const char *const names[3] = {"dQ", "dK", "dV"};
        for (int i = 0; i < 3; ++i) {
            unsigned char *x = th_host(bytes[i]), *y = th_host(bytes[i]);
            th_download(c, x, first[i], bytes[i]);
            th_download(c, y, second[i], bytes[i]);
            if (memcmp(x, y, bytes[i]) != 0) {
                th_log("%s differs between two deterministic runs", names[i]);
                ok = false;
            }
        }
    }
    th_expect(ok, "hk_attn_bwd result");
}

int main(void)
{
    th_open_contexts();
    for (size_t i = 0; i < sizeof fwd_cases / sizeof fwd_cases[0]; ++i)
        th_add(fwd_cases[i].name, run_fwd, &fwd_cases[i], fwd_cases[i].kinds);
    for (size_t i = 0; i < sizeof bwd_cases / sizeof bwd_cases[0]; ++i)
        th_add(bwd_cases[i].name, run_bwd, &bwd_cases[i], bwd_cases[i].kinds);
    return th_run("attention");
}
