/* CPU GEMM with fp32 accumulation. op(A) is converted to fp32 rows once per block of M; op(B) is packed into
 * fp32 panels of GEMM_NR columns stored [k][GEMM_NR] (zero padded), so the inner loop is a fixed-width
 * multiply-add the compiler vectorises even at -O2. Threads split each M block by groups of GEMM_MR rows and
 * every element of D is read (C) and written by one thread, which is what lets C alias D. */
#include "cpu.h"

#include <stdlib.h>
#include <string.h>

enum {
    GEMM_MR = 4,       /* rows of D per tile */
    GEMM_NR = 64,      /* columns of D per tile, the width of one packed panel of B */
    GEMM_PANELS = 4,   /* panels packed at once: 256 columns of B */
    GEMM_MBLOCK = 256  /* rows of op(A) converted at once */
};

typedef struct gemm_job {
    const hk_gemm_args *g;
    float scale;       /* alpha * scale_a * scale_b */
    const float *a;    /* op(A) rows of the current M block */
    int64_t a_ld;
    float *a_buf;      /* [GEMM_MBLOCK][k] conversion buffer; NULL when A is read in place */
    float *b;          /* [GEMM_PANELS][k][GEMM_NR] */
    int64_t m0, rows;  /* current M block */
    int64_t n0, panels;
} gemm_job;

/* a_buf[r][kk] = op(A)[m0 + r][kk] */
static void gemm_pack_a(int64_t begin, int64_t end, void *user)
{
    const gemm_job *job = user;
    const hk_gemm_args *g = job->g;
    int64_t row_step = g->trans_a ? 1 : g->lda, k_step = g->trans_a ? g->lda : 1;
    for (int64_t r = begin; r < end; r++) {
        float *dst = job->a_buf + r * g->k;
        int64_t base = (job->m0 + r) * row_step;
        for (int64_t kk = 0; kk < g->k; kk++)
            dst[kk] = hk_load_scalar(g->a_type, g->a, base + kk * k_step);
    }
}

/* b[p][kk][j] = op(B)[kk][n0 + p * GEMM_NR + j], 0 past n */
static void gemm_pack_b(int64_t begin, int64_t end, void *user)
{
    const gemm_job *job = user;
    const hk_gemm_args *g = job->g;
    int64_t k_step = g->trans_b ? 1 : g->ldb, n_step = g->trans_b ? g->ldb : 1;
    for (int64_t kk = begin; kk < end; kk++)
        for (int64_t p = 0; p < job->panels; p++) {
            float *dst = job->b + (p * g->k + kk) * GEMM_NR;
            for (int64_t j = 0; j < GEMM_NR; j++) {
                int64_t col = job->n0 + p * GEMM_NR + j;
                dst[j] = col < g->n ? hk_load_scalar(g->b_type, g->b, kk * k_step + col * n_step) : 0.0f;
            }
        }
}

/* Tile t: rows [t * GEMM_MR, +GEMM_MR) of the M block against every packed panel. */
static void gemm_tiles(int64_t begin, int64_t end, void *user)
{
    const gemm_job *job = user;
    const hk_gemm_args *g = job->g;
    float acc[GEMM_MR][GEMM_NR];
    for (int64_t t = begin; t < end; t++) {
        int64_t r0 = t * GEMM_MR;
        int64_t nr = job->rows - r0 < GEMM_MR ? job->rows - r0 : GEMM_MR;
        const float *arow[GEMM_MR];
        for (int64_t r = 0; r < GEMM_MR; r++) /* a short last tile repeats its last row; the extra results are dropped */
            arow[r] = job->a + (r0 + (r < nr ? r : nr - 1)) * job->a_ld;
        for (int64_t p = 0; p < job->panels; p++) {
            const float *panel = job->b + p * g->k * GEMM_NR;
            memset(acc, 0, sizeof acc);
            for (int64_t kk = 0; kk < g->k; kk++) {
                const float *brow = panel + kk * GEMM_NR;
                for (int r = 0; r < GEMM_MR; r++) {
                    float av = arow[r][kk];
                    for (int j = 0; j < GEMM_NR; j++)
                        acc[r][j] += av * brow[j];
                }
            }
            int64_t col0 = job->n0 + p * GEMM_NR;
            int64_t nc = g->n - col0 < GEMM_NR ? g->n - col0 : GEMM_NR;
            for (int64_t r = 0; r < nr; r++) {
                int64_t row = job->m0 + r0 + r;
                for (int64_t j = 0; j < nc; j++) {
                    float v = job->scale * acc[r][j];
                    if (g->beta != 0.0f) /* C is not read at all when beta == 0 (it may be NULL or hold NaNs) */
                        v += g->beta * hk_load_scalar(g->d_type, g->c, row * g->ldc + col0 + j);
                    hk_store_scalar(g->d_type, g->d, row * g->ldd + col0 + j, v);
                }
            }
        }
    }
}

static int64_t gemm_max(int64_t x, int64_t y) { return x > y ? x : y; }

static hk_status gemm_run(hk_context *ctx, const void *args)
{
    (void)ctx;
    const hk_gemm_args *g = args;
    if (g->m == 0 || g->n == 0)
        return HK_OK;
    /* k == 0 still writes D = beta * C: the product is an empty sum, not an empty problem. */
    gemm_job job = {.g = g, .scale = g->alpha * g->scale_a * g->scale_b}; /* the scales are 1 unless fp8 */
    int64_t k = gemm_max(g->k, 1);
    int in_place = g->a_type == HK_DTYPE_F32 && !g->trans_a && g->k > 0; /* with k == 0, A may be NULL */
    if (!in_place) {
        int64_t rows = g->m < GEMM_MBLOCK ? g->m : GEMM_MBLOCK;
        job.a_buf = malloc((size_t)(rows * k) * sizeof(float));
    }
    job.b = malloc((size_t)(GEMM_PANELS * GEMM_NR * k) * sizeof(float));
    if ((!in_place && !job.a_buf) || !job.b) {
        free(job.a_buf);
        free(job.b);
        return hk_fail(HK_ERR_OUT_OF_MEMORY, "cpu.gemm: cannot allocate %lld bytes of fp32 scratch",
                       (long long)((GEMM_MBLOCK + GEMM_PANELS * GEMM_NR) * k * (int64_t)sizeof(float)));
    }
    /* Hand threads chunks of about 4 Ki conversions or 64 Ki multiply-adds. */
    int64_t pack_a_grain = gemm_max(1, 4096 / k);
    int64_t pack_b_grain = gemm_max(1, 4096 / (GEMM_PANELS * GEMM_NR));
    for (job.m0 = 0; job.m0 < g->m; job.m0 += GEMM_MBLOCK) {
        job.rows = g->m - job.m0 < GEMM_MBLOCK ? g->m - job.m0 : GEMM_MBLOCK;
        if (in_place) {
            job.a = (const float *)g->a + job.m0 * g->lda;
            job.a_ld = g->lda;
        } else {
            hk_parallel_for(job.rows, pack_a_grain, gemm_pack_a, &job);
            job.a = job.a_buf;
            job.a_ld = g->k;
        }
        for (job.n0 = 0; job.n0 < g->n; job.n0 += GEMM_PANELS * GEMM_NR) {
            job.panels = (g->n - job.n0 + GEMM_NR - 1) / GEMM_NR;
            if (job.panels > GEMM_PANELS)
                job.panels = GEMM_PANELS;
            hk_parallel_for(g->k, pack_b_grain, gemm_pack_b, &job);
            int64_t tiles = (job.rows + GEMM_MR - 1) / GEMM_MR;
            hk_parallel_for(tiles, gemm_max(1, 65536 / (GEMM_MR * GEMM_NR * job.panels * k)), gemm_tiles, &job);
        }
    }
    free(job.a_buf);
    free(job.b);
    return HK_OK;
}

HK_INTERNAL const hk_variant hk_cpu_gemm = {
    .op = HK_OP_GEMM,
    .name = "cpu.gemm",
    .description = "reference GEMM, every layout and dtype, fp32 accumulation, multithreaded",
    .backend = HK_BACKEND_CPU,
    .archs = NULL,
    .supports = hk_cpu_supports_all,
    .run = gemm_run,
    .workspace = NULL,
};
