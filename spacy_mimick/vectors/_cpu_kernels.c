/* CPU kernels of Mimick's trainer: the paper model's character BiLSTM, forward and backward
 * (fast_bilstm.py), and Adam's update of a flat parameter buffer (optimizers.py).
 *
 * Why in C: with one-layer LSTMs of 50 units over words of ~7 characters, oneDNN's LSTM kernel is
 * three quarters of a training step and reaches a fifth to two fifths of the core's
 * matrix-multiply peak; the matrix products alone, at the same shapes, reach half to nine tenths.
 * What is lost is the gates' element-wise work between them. As separate torch operations it
 * costs more than the whole oneDNN kernel (a dozen small calls per character); here it is one
 * pass per character over a layout in which the batch is the innermost, contiguous dimension, so
 * every loop is vectorized over the words of the batch, and each recurrence is one call (the
 * matrix products through the sgemm of torch's own BLAS). Adam's update, eight torch operations
 * over the flat buffers, is one pass here.
 *
 * The arrays' layouts (all float32 but the character ids, C-contiguous, allocated and checked by
 * fast_bilstm.py; T characters, B words, H units, G = 4H gates in torch's order i, f, g, o, V
 * characters in the vocabulary, 2 directions, the backward one reading the word reversed):
 *   table (2, G, V): the input part of the gates for each character (W_ih e + b_ih + b_hh);
 *   ids (2, T, B) int32: the character read at each step, per direction;
 *   acts (T, 2, G, B): the recurrent part of the gates in, the activations out;
 *   cs (T + 1, 2, H, B), tcs (T, 2, H, B): the cell states and their tanh;
 *   hs (2, H, T + 1, B): the hidden states (this layout lets torch multiply all of them at once);
 *   dh, dc (2, H, B); dgates (2, G, T x B) with rows ld apart (ld > T x B: with B = 128 rows
 *   T x B floats apart would all fall in 8 of the L1 cache's 64 sets); dtable (2, V, G).
 * The words of a batch are the innermost dimension, so every loop is vectorized over them.
 *
 * Exponentials use a vectorizable single-precision exp (the Cephes / sse_mathfun polynomial,
 * about 1 ulp): the C library's expf is not vectorized without -ffast-math. Comparisons keep NaN
 * (a diverged training must still show a NaN loss).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
/* One build that uses AVX-512 or AVX2 where the CPU has them (chosen when the module loads). */
#define MIMICK_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define MIMICK_CLONES
#endif

static inline float exp_approx(float x)
{
    /* Clamp to +-88.376 (exp's float range), written so that GCC vectorizes it with AVX-512
     * (x > c ? c : x is kept as a branch there) and NaN stays NaN (its comparisons are false). */
    float above = x - 88.3762626647949f;
    x = above > 0.0f ? x - above : x;
    float below = x + 88.3762626647949f;
    x = below < 0.0f ? x - below : x;
    float fx = x * 1.44269504088896341f + 0.5f;
    /* floor without libm (vectorizable on SSE2): truncate, then step down for negatives */
    float n = (float)(int32_t)fx;
    n = n > fx ? n - 1.0f : n;
    x = x - n * 0.693359375f;
    x = x - n * -2.12194440e-4f;
    float z = x * x;
    float y = 1.9875691500e-4f;
    y = y * x + 1.3981999507e-3f;
    y = y * x + 8.3334519073e-3f;
    y = y * x + 4.1665795894e-2f;
    y = y * x + 1.6666665459e-1f;
    y = y * x + 5.0000001201e-1f;
    y = y * z + x + 1.0f;
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return y * scale;
}

static inline float sigmoid(float x) { return 1.0f / (1.0f + exp_approx(-x)); }

static inline float tanh_approx(float x) { return 2.0f / (1.0f + exp_approx(-2.0f * x)) - 1.0f; }

/* One unit of one direction over the words of the batch: the gates' pre-activations (recurrent
 * part in g*, input part gathered from the table rows t*) -> activations, c, tanh c, h. */
static inline void forward_row(Py_ssize_t B, const int32_t *restrict ids, const float *restrict ti,
                               const float *restrict tf, const float *restrict tg,
                               const float *restrict to, float *restrict gi, float *restrict gf,
                               float *restrict gg, float *restrict go, const float *restrict cp,
                               float *restrict cr, float *restrict tr, float *restrict hr)
{
    for (Py_ssize_t r = 0; r < B; r++) {
        int32_t v = ids[r];
        float i = sigmoid(gi[r] + ti[v]), f = sigmoid(gf[r] + tf[v]);
        float g = tanh_approx(gg[r] + tg[v]), o = sigmoid(go[r] + to[v]);
        gi[r] = i;
        gf[r] = f;
        gg[r] = g;
        go[r] = o;
        float cc = f * cp[r] + i * g;
        float t = tanh_approx(cc);
        cr[r] = cc;
        tr[r] = t;
        hr[r] = o * t;
    }
}

/* The same unit, backward: dc holds the gradient of c from the later characters and is replaced
 * by that of c_prev; d* receive the gradient of the pre-activations. */
static inline void backward_row(Py_ssize_t B, const float *restrict ai, const float *restrict af,
                                const float *restrict ag, const float *restrict ao,
                                const float *restrict cp, const float *restrict tr,
                                const float *restrict dhr, float *restrict dcr, float *restrict di,
                                float *restrict df, float *restrict dg, float *restrict dout)
{
    for (Py_ssize_t r = 0; r < B; r++) {
        float i = ai[r], f = af[r], g = ag[r], o = ao[r], t = tr[r], x = dhr[r];
        float dcc = dcr[r] + x * o * (1.0f - t * t);
        di[r] = dcc * g * i * (1.0f - i);
        df[r] = dcc * cp[r] * f * (1.0f - f);
        dg[r] = dcc * i * (1.0f - g * g);
        dout[r] = x * t * o * (1.0f - o);
        dcr[r] = dcc * f;
    }
}

/* Step t of both directions, forward. At t = 0 there is no recurrent part (h_-1 = 0) and
 * acts[0] is only written. */
MIMICK_CLONES
static void forward_step(Py_ssize_t T, Py_ssize_t H, Py_ssize_t B, Py_ssize_t V, Py_ssize_t t,
                         float *acts, const float *table, const int32_t *ids, float *cs,
                         float *tcs, float *hs)
{
    Py_ssize_t G = 4 * H;
    if (t == 0)
        memset(acts, 0, sizeof(float) * 2 * G * B);
    for (Py_ssize_t d = 0; d < 2; d++) {
        const int32_t *idr = ids + (d * T + t) * B;
        for (Py_ssize_t j = 0; j < H; j++) {
            float *gi = acts + ((t * 2 + d) * G + j) * B;
            const float *ti = table + (d * G + j) * V;
            Py_ssize_t s = ((t * 2 + d) * H + j) * B;
            forward_row(B, idr, ti, ti + H * V, ti + 2 * H * V, ti + 3 * H * V,
                        gi, gi + H * B, gi + 2 * H * B, gi + 3 * H * B,
                        cs + s, cs + s + 2 * H * B, tcs + s,
                        hs + ((d * H + j) * (T + 1) + t + 1) * B);
        }
    }
}

/* Step t of both directions, backward (dh: the gradient of h_t in, overwritten by the caller with
 * that of h_t-1 from the recurrent product). */
MIMICK_CLONES
static void backward_step(Py_ssize_t T, Py_ssize_t H, Py_ssize_t B, Py_ssize_t t,
                          const float *acts, const float *cs, const float *tcs, const float *dh,
                          float *dc, float *dgates, Py_ssize_t ld)
{
    Py_ssize_t G = 4 * H;
    for (Py_ssize_t d = 0; d < 2; d++) {
        for (Py_ssize_t j = 0; j < H; j++) {
            const float *ai = acts + ((t * 2 + d) * G + j) * B;
            Py_ssize_t s = ((t * 2 + d) * H + j) * B;
            float *di = dgates + (d * G + j) * ld + t * B;
            Py_ssize_t dg_row = H * ld;
            backward_row(B, ai, ai + H * B, ai + 2 * H * B, ai + 3 * H * B, cs + s, tcs + s,
                         dh + (d * H + j) * B, dc + (d * H + j) * B,
                         di, di + dg_row, di + 2 * dg_row, di + 3 * dg_row);
        }
    }
}

/* The gradient of the table: each step's gate gradients added to the row of the character read
 * there. dgates is gate-major, dtable character-major: blocks of 16 positions are transposed
 * through a small buffer, so both are read and written along their rows. */
#define TABLE_BLOCK 16
MIMICK_CLONES
static void table_grad(Py_ssize_t T, Py_ssize_t H, Py_ssize_t B, Py_ssize_t V,
                       const float *dgates, Py_ssize_t ld, const int32_t *ids, float *dtable,
                       float *buffer)
{
    Py_ssize_t G = 4 * H, N = T * B;  /* positions; rows are ld >= N apart */
    for (Py_ssize_t d = 0; d < 2; d++) {
        const float *dg = dgates + d * G * ld;
        const int32_t *id = ids + d * N;
        float *dt = dtable + d * V * G;
        for (Py_ssize_t p0 = 0; p0 < N; p0 += TABLE_BLOCK) {
            Py_ssize_t n = N - p0 < TABLE_BLOCK ? N - p0 : TABLE_BLOCK;
            for (Py_ssize_t k = 0; k < G; k++)
                for (Py_ssize_t u = 0; u < n; u++)
                    buffer[u * G + k] = dg[k * ld + p0 + u];
            for (Py_ssize_t u = 0; u < n; u++) {
                float *restrict row = dt + (Py_ssize_t)id[p0 + u] * G;
                const float *restrict src = buffer + u * G;
                for (Py_ssize_t k = 0; k < G; k++)
                    row[k] += src[k];
            }
        }
    }
}

/* The BLAS sgemm (Fortran interface, 32-bit integers) that torch's CPU library exports (MKL in the
 * x86 wheels), set by fast_bilstm.py after a self-check; NULL: the recurrences run in Python with
 * torch's bmm and the steps above. */
typedef void (*sgemm_fn)(const char *, const char *, const int *, const int *, const int *,
                         const float *, const float *, const int *, const float *, const int *,
                         const float *, float *, const int *);
static sgemm_fn sgemm = NULL;

/* Row-major C (M x N, ldc) = alpha A (M x K, lda; or its transpose when ta) B (K x N, ldb; or its
 * transpose when tb) + beta C, through the column-major sgemm (C^T = B^T A^T). */
static void gemm_rows(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
                      const float *B, int ldb, float beta, float *C, int ldc)
{
    const char *opa = ta ? "T" : "N", *opb = tb ? "T" : "N";
    sgemm(opb, opa, &N, &M, &K, &alpha, B, &ldb, A, &lda, &beta, C, &ldc);
}

/* The whole forward recurrence: for each step, acts[t] = W_hh h_t-1 (both directions), then the
 * step's element-wise work. */
static void forward_all(Py_ssize_t T, Py_ssize_t H, Py_ssize_t B, Py_ssize_t V, float *acts,
                        const float *table, const int32_t *ids, float *cs, float *tcs, float *hs,
                        const float *const w_hh[2])
{
    Py_ssize_t G = 4 * H;
    for (Py_ssize_t t = 0; t < T; t++) {
        if (t) {
            for (Py_ssize_t d = 0; d < 2; d++)
                gemm_rows(0, 0, (int)G, (int)B, (int)H, 1.0f, w_hh[d], (int)H,
                          hs + d * H * (T + 1) * B + t * B, (int)((T + 1) * B), 0.0f,
                          acts + (t * 2 + d) * G * B, (int)B);
        }
        forward_step(T, H, B, V, t, acts, table, ids, cs, tcs, hs);
    }
}

/* The whole backward recurrence: the steps' element-wise work, dh_t-1 = W_hh^T dgates_t, then
 * dW_hh = sum_t dgates_t h_t-1^T (h_-1 = 0: from t = 1) and the table's gradient. */
static void backward_all(Py_ssize_t T, Py_ssize_t H, Py_ssize_t B, Py_ssize_t V, const float *acts,
                         const float *cs, const float *tcs, const float *hs,
                         const float *const w_hh[2], const int32_t *ids, float *dh, float *dc,
                         float *dgates, Py_ssize_t ld, float *const d_w_hh[2], float *dtable,
                         float *buffer)
{
    Py_ssize_t G = 4 * H;
    for (Py_ssize_t t = T - 1; t >= 0; t--) {
        backward_step(T, H, B, t, acts, cs, tcs, dh, dc, dgates, ld);
        if (t) {
            for (Py_ssize_t d = 0; d < 2; d++)
                gemm_rows(1, 0, (int)H, (int)B, (int)G, 1.0f, w_hh[d], (int)H,
                          dgates + d * G * ld + t * B, (int)ld, 0.0f, dh + d * H * B, (int)B);
        }
    }
    for (Py_ssize_t d = 0; d < 2; d++) {
        if (T > 1)
            gemm_rows(0, 1, (int)G, (int)H, (int)((T - 1) * B), 1.0f, dgates + d * G * ld + B,
                      (int)ld, hs + d * H * (T + 1) * B + B, (int)((T + 1) * B), 0.0f,
                      d_w_hh[d], (int)H);
        else
            memset(d_w_hh[d], 0, sizeof(float) * G * H);
    }
    table_grad(T, H, B, V, dgates, ld, ids, dtable, buffer);
}

/* The addresses paper_step reads, in this order (fast_bilstm.PAPER_STEP_ARRAYS names them). */
enum {
    /* inputs: the batch */
    A_IDS, A_GOLD,
    /* parameters */
    A_EMBED, A_W_IH0, A_W_HH0, A_B_IH0, A_B_HH0, A_W_IH1, A_W_HH1, A_B_IH1, A_B_HH1, A_W1, A_B1, A_W2, A_B2,
    /* their gradients (same shapes) */
    A_G_EMBED, A_G_W_IH0, A_G_W_HH0, A_G_B_IH0, A_G_B_HH0, A_G_W_IH1, A_G_W_HH1, A_G_B_IH1, A_G_B_HH1,
    A_G_W1, A_G_B1, A_G_W2, A_G_B2,
    /* work space */
    A_TABLE, A_ACTS, A_CS, A_TCS, A_HS, A_DH, A_DC, A_DGATES, A_DTABLE, A_HIDDEN, A_PRED, A_D_HIDDEN,
    /* output: each word's loss */
    A_LOSSES,
    N_ARRAYS
};

/* The paper model's loss and gradients on one batch of B words of T characters (train --paper;
 * fast_bilstm.PaperModelStep): characters -> embeddings E (V x I) -> BiLSTM (H units each way)
 * -> final states s (2H) -> hidden = tanh(W1 s + b1) (M) -> pred = W2 hidden + b2 (D); loss of a
 * word sum_k (pred_k - gold_k)^2, gradients of their mean. The MLP runs on transposed activations
 * (features x words) so that it reads the states where the BiLSTM left them. */
static void paper_step(Py_ssize_t T, Py_ssize_t H, Py_ssize_t B, Py_ssize_t V, Py_ssize_t I,
                       Py_ssize_t M, Py_ssize_t D, Py_ssize_t ld, Py_ssize_t padding,
                       float *const a[N_ARRAYS], float *buffer)
{
    Py_ssize_t G = 4 * H;
    const float *E = a[A_EMBED];
    const float *w_ih[2] = {a[A_W_IH0], a[A_W_IH1]};
    const float *b_ih[2] = {a[A_B_IH0], a[A_B_IH1]}, *b_hh[2] = {a[A_B_HH0], a[A_B_HH1]};
    const float *w_hh[2] = {a[A_W_HH0], a[A_W_HH1]};
    float *table = a[A_TABLE], *hs = a[A_HS], *hidden = a[A_HIDDEN], *pred = a[A_PRED];
    float *d_hidden = a[A_D_HIDDEN], *dtable = a[A_DTABLE], *losses = a[A_LOSSES];
    const float *gold = a[A_GOLD];
    const int32_t *ids = (const int32_t *)a[A_IDS];
    /* c_-1 = h_-1 = 0 */
    memset(a[A_CS], 0, sizeof(float) * 2 * H * B);
    for (Py_ssize_t row = 0; row < 2 * H; row++)
        memset(hs + row * (T + 1) * B, 0, sizeof(float) * B);
    /* the input table: W_ih E^T + b_ih + b_hh, (2, G, V) */
    for (Py_ssize_t d = 0; d < 2; d++) {
        float *td = table + d * G * V;
        gemm_rows(0, 1, (int)G, (int)V, (int)I, 1.0f, w_ih[d], (int)I, E, (int)I, 0.0f, td, (int)V);
        for (Py_ssize_t k = 0; k < G; k++) {
            float bias = b_ih[d][k] + b_hh[d][k];
            for (Py_ssize_t v = 0; v < V; v++)
                td[k * V + v] += bias;
        }
    }
    forward_all(T, H, B, V, a[A_ACTS], table, ids, a[A_CS], a[A_TCS], hs, w_hh);
    /* the final states, transposed (2H x B): rows of hs at step T, (T + 1) B apart */
    const float *states = hs + T * B;
    int ls = (int)((T + 1) * B);
    gemm_rows(0, 0, (int)M, (int)B, (int)(2 * H), 1.0f, a[A_W1], (int)(2 * H), states, ls, 0.0f, hidden, (int)B);
    for (Py_ssize_t k = 0; k < M; k++)
        for (Py_ssize_t r = 0; r < B; r++)
            hidden[k * B + r] = tanh_approx(hidden[k * B + r] + a[A_B1][k]);
    gemm_rows(0, 0, (int)D, (int)B, (int)M, 1.0f, a[A_W2], (int)M, hidden, (int)B, 0.0f, pred, (int)B);
    for (Py_ssize_t r = 0; r < B; r++)
        losses[r] = 0.0f;
    float scale = 2.0f / (float)B;  /* d(mean loss) / d(pred - gold) */
    for (Py_ssize_t k = 0; k < D; k++) {
        for (Py_ssize_t r = 0; r < B; r++) {
            float diff = pred[k * B + r] + a[A_B2][k] - gold[r * D + k];
            losses[r] += diff * diff;
            pred[k * B + r] = diff * scale;  /* now the gradient of pred */
        }
    }
    /* the MLP backward */
    const float *d_pred = pred;
    gemm_rows(0, 1, (int)D, (int)M, (int)B, 1.0f, d_pred, (int)B, hidden, (int)B, 0.0f, a[A_G_W2], (int)M);
    for (Py_ssize_t k = 0; k < D; k++) {
        float total = 0.0f;
        for (Py_ssize_t r = 0; r < B; r++)
            total += d_pred[k * B + r];
        a[A_G_B2][k] = total;
    }
    gemm_rows(1, 0, (int)M, (int)B, (int)D, 1.0f, a[A_W2], (int)M, d_pred, (int)B, 0.0f, d_hidden, (int)B);
    for (Py_ssize_t k = 0; k < M; k++) {
        float total = 0.0f;
        for (Py_ssize_t r = 0; r < B; r++) {
            float h = hidden[k * B + r];
            float g = d_hidden[k * B + r] * (1.0f - h * h);
            d_hidden[k * B + r] = g;
            total += g;
        }
        a[A_G_B1][k] = total;
    }
    gemm_rows(0, 1, (int)M, (int)(2 * H), (int)B, 1.0f, d_hidden, (int)B, states, ls, 0.0f, a[A_G_W1], (int)(2 * H));
    /* the gradient of the states, (2, H, B): the BiLSTM's dh */
    gemm_rows(1, 0, (int)(2 * H), (int)B, (int)M, 1.0f, a[A_W1], (int)(2 * H), d_hidden, (int)B, 0.0f, a[A_DH], (int)B);
    memset(a[A_DC], 0, sizeof(float) * 2 * H * B);
    memset(dtable, 0, sizeof(float) * 2 * V * G);
    float *g_w_hh[2] = {a[A_G_W_HH0], a[A_G_W_HH1]};
    backward_all(T, H, B, V, a[A_ACTS], a[A_CS], a[A_TCS], hs, w_hh, ids, a[A_DH], a[A_DC],
                 a[A_DGATES], ld, g_w_hh, dtable, buffer);
    /* the table's gradient (2, V, G) -> W_ih, E and both biases */
    float *g_w_ih[2] = {a[A_G_W_IH0], a[A_G_W_IH1]};
    float *g_b_ih[2] = {a[A_G_B_IH0], a[A_G_B_IH1]}, *g_b_hh[2] = {a[A_G_B_HH0], a[A_G_B_HH1]};
    for (Py_ssize_t d = 0; d < 2; d++) {
        const float *dt = dtable + d * V * G;
        gemm_rows(1, 0, (int)G, (int)I, (int)V, 1.0f, dt, (int)G, E, (int)I, 0.0f, g_w_ih[d], (int)I);
        gemm_rows(0, 0, (int)V, (int)I, (int)G, 1.0f, dt, (int)G, w_ih[d], (int)I, d ? 1.0f : 0.0f,
                  a[A_G_EMBED], (int)I);
        for (Py_ssize_t k = 0; k < G; k++)
            g_b_ih[d][k] = 0.0f;
        for (Py_ssize_t v = 0; v < V; v++)
            for (Py_ssize_t k = 0; k < G; k++)
                g_b_ih[d][k] += dt[v * G + k];
        memcpy(g_b_hh[d], g_b_ih[d], sizeof(float) * G);
    }
    if (padding >= 0)  /* nn.Embedding(padding_idx): that row gets no gradient */
        memset(a[A_G_EMBED] + padding * I, 0, sizeof(float) * I);
}

/* ids (2, T, B) int32 from the batch's character ids chars (B, T) int64: the forward direction
 * reads them in order, the backward one reversed. Returns the index of the first id outside
 * [0, V) (the steps index the table with them), or -1. */
static Py_ssize_t prepare_ids(Py_ssize_t T, Py_ssize_t B, Py_ssize_t V, const int64_t *chars,
                              int32_t *ids)
{
    for (Py_ssize_t r = 0; r < B; r++) {
        for (Py_ssize_t t = 0; t < T; t++) {
            int64_t v = chars[r * T + t];
            if (v < 0 || v >= V)
                return r * T + t;
            ids[t * B + r] = (int32_t)v;
            ids[(2 * T - 1 - t) * B + r] = (int32_t)v;
        }
    }
    return -1;
}

/* Arguments: sizes, then the tensors' addresses (checked by fast_bilstm.py). */
static PyObject *py_prepare_ids(PyObject *self, PyObject *args)
{
    Py_ssize_t T, B, V, bad;
    unsigned long long chars, ids;
    if (!PyArg_ParseTuple(args, "nnnKK", &T, &B, &V, &chars, &ids))
        return NULL;
    bad = prepare_ids(T, B, V, (const int64_t *)(uintptr_t)chars, (int32_t *)(uintptr_t)ids);
    return PyLong_FromSsize_t(bad);
}

static PyObject *py_forward_step(PyObject *self, PyObject *args)
{
    Py_ssize_t T, H, B, V, t;
    unsigned long long acts, table, ids, cs, tcs, hs;
    if (!PyArg_ParseTuple(args, "nnnnnKKKKKK", &T, &H, &B, &V, &t, &acts, &table, &ids, &cs, &tcs, &hs))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    forward_step(T, H, B, V, t, (float *)(uintptr_t)acts, (const float *)(uintptr_t)table,
                 (const int32_t *)(uintptr_t)ids, (float *)(uintptr_t)cs, (float *)(uintptr_t)tcs,
                 (float *)(uintptr_t)hs);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *py_backward_step(PyObject *self, PyObject *args)
{
    Py_ssize_t T, H, B, t, ld;
    unsigned long long acts, cs, tcs, dh, dc, dgates;
    if (!PyArg_ParseTuple(args, "nnnnKKKKKKn", &T, &H, &B, &t, &acts, &cs, &tcs, &dh, &dc, &dgates, &ld))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    backward_step(T, H, B, t, (const float *)(uintptr_t)acts, (const float *)(uintptr_t)cs,
                  (const float *)(uintptr_t)tcs, (const float *)(uintptr_t)dh, (float *)(uintptr_t)dc,
                  (float *)(uintptr_t)dgates, ld);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* The small buffer table_grad transposes through; with needs_sgemm, NULL (and a Python error)
 * also when no sgemm is set. */
static float *table_grad_buffer(Py_ssize_t H, int needs_sgemm)
{
    if (needs_sgemm && sgemm == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "no sgemm set (set_sgemm)");
        return NULL;
    }
    float *buffer = PyMem_RawMalloc(sizeof(float) * TABLE_BLOCK * 4 * H);
    if (buffer == NULL)
        PyErr_NoMemory();
    return buffer;
}

static PyObject *py_table_grad(PyObject *self, PyObject *args)
{
    Py_ssize_t T, H, B, V, ld;
    unsigned long long dgates, ids, dtable;
    if (!PyArg_ParseTuple(args, "nnnnKnKK", &T, &H, &B, &V, &dgates, &ld, &ids, &dtable))
        return NULL;
    float *buffer = table_grad_buffer(H, 0);
    if (buffer == NULL)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    table_grad(T, H, B, V, (const float *)(uintptr_t)dgates, ld, (const int32_t *)(uintptr_t)ids,
               (float *)(uintptr_t)dtable, buffer);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(buffer);
    Py_RETURN_NONE;
}

/* Adam (torch.optim.Adam's formulas, no weight decay) on flat float32 buffers: the gradient
 * scaled by coef (clipping), then m = lerp(m, g, w1), v = beta2 v + w2 g^2,
 * p -= step_size m / (sqrt(v) / bc2_sqrt + eps), with w1 = 1 - beta1 and w2 = 1 - beta2 computed
 * in double by the caller, as torch does (1.0f - 0.999f is 1.3e-5 away from 0.001f). */
MIMICK_CLONES
static void adam_update(Py_ssize_t n, float *restrict param, const float *restrict grad,
                        float *restrict m, float *restrict v, float coef, float w1, float beta2,
                        float w2, float step_size, float bc2_sqrt, float eps)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        float g = grad[i] * coef;
        float mi = m[i] + w1 * (g - m[i]);
        float vi = v[i] * beta2 + w2 * g * g;
        m[i] = mi;
        v[i] = vi;
        float denom = __builtin_sqrtf(vi) / bc2_sqrt + eps;
        param[i] += -step_size * (mi / denom);  /* torch's addcdiv: p + value * (m / denom) */
    }
}

MIMICK_CLONES
static double sum_squares(Py_ssize_t n, const float *restrict x)
{
    /* eight partial sums: independent chains the compiler can keep in one vector register */
    double part[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, total = 0.0;
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++)
            part[k] += (double)x[i + k] * (double)x[i + k];
    for (; i < n; i++)
        total += (double)x[i] * (double)x[i];
    for (int k = 0; k < 8; k++)
        total += part[k];
    return total;
}

static PyObject *py_adam_update(PyObject *self, PyObject *args)
{
    Py_ssize_t n;
    unsigned long long param, grad, m, v;
    float coef, w1, beta2, w2, step_size, bc2_sqrt, eps;
    if (!PyArg_ParseTuple(args, "nKKKKfffffff", &n, &param, &grad, &m, &v, &coef, &w1, &beta2, &w2,
                          &step_size, &bc2_sqrt, &eps))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    adam_update(n, (float *)(uintptr_t)param, (const float *)(uintptr_t)grad, (float *)(uintptr_t)m,
                (float *)(uintptr_t)v, coef, w1, beta2, w2, step_size, bc2_sqrt, eps);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *py_sum_squares(PyObject *self, PyObject *args)
{
    Py_ssize_t n;
    unsigned long long x;
    double total;
    if (!PyArg_ParseTuple(args, "nK", &n, &x))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    total = sum_squares(n, (const float *)(uintptr_t)x);
    Py_END_ALLOW_THREADS
    return PyFloat_FromDouble(total);
}

static PyObject *py_set_sgemm(PyObject *self, PyObject *args)
{
    unsigned long long address;
    if (!PyArg_ParseTuple(args, "K", &address))
        return NULL;
    sgemm = (sgemm_fn)(uintptr_t)address;
    Py_RETURN_NONE;
}

static PyObject *py_has_sgemm(PyObject *self, PyObject *args)
{
    return PyBool_FromLong(sgemm != NULL);
}

static PyObject *py_forward_all(PyObject *self, PyObject *args)
{
    Py_ssize_t T, H, B, V;
    unsigned long long acts, table, ids, cs, tcs, hs, w_hh;
    if (!PyArg_ParseTuple(args, "nnnnKKKKKKK", &T, &H, &B, &V, &acts, &table, &ids, &cs, &tcs, &hs, &w_hh))
        return NULL;
    if (sgemm == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "no sgemm set (set_sgemm)");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    const float *w[2] = {(const float *)(uintptr_t)w_hh, (const float *)(uintptr_t)w_hh + 4 * H * H};
    forward_all(T, H, B, V, (float *)(uintptr_t)acts, (const float *)(uintptr_t)table,
                (const int32_t *)(uintptr_t)ids, (float *)(uintptr_t)cs, (float *)(uintptr_t)tcs,
                (float *)(uintptr_t)hs, w);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *py_backward_all(PyObject *self, PyObject *args)
{
    Py_ssize_t T, H, B, V, ld;
    unsigned long long acts, cs, tcs, hs, w_hh, ids, dh, dc, dgates, d_w_hh, dtable;
    if (!PyArg_ParseTuple(args, "nnnnKKKKKKKKKnKK", &T, &H, &B, &V, &acts, &cs, &tcs, &hs, &w_hh, &ids,
                          &dh, &dc, &dgates, &ld, &d_w_hh, &dtable))
        return NULL;
    float *buffer = table_grad_buffer(H, 1);
    if (buffer == NULL)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    const float *w[2] = {(const float *)(uintptr_t)w_hh, (const float *)(uintptr_t)w_hh + 4 * H * H};
    float *dw[2] = {(float *)(uintptr_t)d_w_hh, (float *)(uintptr_t)d_w_hh + 4 * H * H};
    backward_all(T, H, B, V, (const float *)(uintptr_t)acts, (const float *)(uintptr_t)cs,
                 (const float *)(uintptr_t)tcs, (const float *)(uintptr_t)hs, w,
                 (const int32_t *)(uintptr_t)ids, (float *)(uintptr_t)dh, (float *)(uintptr_t)dc,
                 (float *)(uintptr_t)dgates, ld, dw, (float *)(uintptr_t)dtable, buffer);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(buffer);
    Py_RETURN_NONE;
}

static PyObject *py_paper_step(PyObject *self, PyObject *args)
{
    Py_ssize_t T, H, B, V, I, M, D, ld, padding, n;
    unsigned long long addresses;
    if (!PyArg_ParseTuple(args, "nnnnnnnnnKn", &T, &H, &B, &V, &I, &M, &D, &ld, &padding, &addresses, &n))
        return NULL;
    if (n != N_ARRAYS) {
        PyErr_Format(PyExc_ValueError, "paper_step takes %d addresses, got %zd", (int)N_ARRAYS, n);
        return NULL;
    }
    float *buffer = table_grad_buffer(H, 1);
    if (buffer == NULL)
        return NULL;
    const uint64_t *raw = (const uint64_t *)(uintptr_t)addresses;
    float *a[N_ARRAYS];
    for (int k = 0; k < N_ARRAYS; k++)
        a[k] = (float *)(uintptr_t)raw[k];
    Py_BEGIN_ALLOW_THREADS
    paper_step(T, H, B, V, I, M, D, ld, padding, a, buffer);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(buffer);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"paper_step", py_paper_step, METH_VARARGS, "The paper model's loss and gradients on one batch."},
    {"adam_update", py_adam_update, METH_VARARGS, "Adam's update of flat buffers."},
    {"sum_squares", py_sum_squares, METH_VARARGS, "The sum of squares of a float32 buffer."},
    {"set_sgemm", py_set_sgemm, METH_VARARGS, "The address of a BLAS sgemm_ (or 0)."},
    {"has_sgemm", py_has_sgemm, METH_NOARGS, "Whether an sgemm is set."},
    {"forward_all", py_forward_all, METH_VARARGS, "The BiLSTM's forward recurrence."},
    {"backward_all", py_backward_all, METH_VARARGS, "The BiLSTM's backward recurrence and weight gradients."},
    {"prepare_ids", py_prepare_ids, METH_VARARGS, "The steps' character ids, both directions."},
    {"forward_step", py_forward_step, METH_VARARGS, "Step t of the BiLSTM, forward."},
    {"backward_step", py_backward_step, METH_VARARGS, "Step t of the BiLSTM, backward."},
    {"table_grad", py_table_grad, METH_VARARGS, "The gradient of the input-gate table."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_cpu_kernels",
    "CPU kernels of Mimick's trainer: the paper model's BiLSTM, Adam's update.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__cpu_kernels(void) { return PyModule_Create(&module); }
