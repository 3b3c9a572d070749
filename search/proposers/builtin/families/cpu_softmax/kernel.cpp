// Row-wise softmax / log-softmax over the last dimension, fused per row.
// Rows are split across threads with at::parallel_for (grain = rows per task, so the grain also
// caps how many threads work); the exponential is a polynomial the compiler vectorizes
// (std::exp would be one scalar call per element). Reductions keep LANES partial results, the
// vector width the loops are written for. Two schedules, chosen per call:
//   three-pass: max; exponentials stored and summed; scale in place (one exp per element),
//   online:     running max and rescaled sum in one pass over the row (block by block); then
//               exp and scale while writing (two exps per element, one pass less over the row).
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>
#include <cstdint>
#include <cstring>
// fast_exp: cpu_fast_math.h, put in front of this file by the renderer.


// One row at LANES-wide vectors; compiled for several instruction sets, the best one is picked
// when the library loads. A macro, not a template: target_clones does not apply to templates.
// The online schedule walks the row in blocks of BLOCK floats (they stay in L1): block maximum,
// rescale the running sum if the maximum grew, add the block's exponentials.
#define BLOCK 512
#define DEFINE_SOFTMAX_ROW(LANES)                                                                  \
__attribute__((target_clones("avx512f", "avx2", "default")))                                     \
static void softmax_row_##LANES(const float* in, float* o, int64_t cols, bool log_softmax,       \
                                bool online) {                                                   \
    float part[LANES];                                                                           \
    float m = -INFINITY, s = 0.0f;                                                               \
    const int64_t step = online ? BLOCK : cols;                                                  \
    for (int64_t c0 = 0; c0 < cols; c0 += step) {                                                \
        const float* p = in + c0;                                                                \
        const int64_t n = cols - c0 < step ? cols - c0 : step, body = n / LANES * LANES;        \
        for (int l = 0; l < LANES; ++l) part[l] = -INFINITY;                                     \
        for (int64_t c = 0; c < body; c += LANES)                                                \
            for (int l = 0; l < LANES; ++l) part[l] = p[c + l] > part[l] ? p[c + l] : part[l];   \
        float bm = -INFINITY;                                                                    \
        for (int l = 0; l < LANES; ++l) bm = part[l] > bm ? part[l] : bm;                        \
        for (int64_t c = body; c < n; ++c) bm = p[c] > bm ? p[c] : bm;                           \
        if (bm > m) { s = m == -INFINITY ? 0.0f : s * fast_exp(m - bm); m = bm; }                \
        if (!online && !log_softmax) break; /* two-pass: the sum comes with the stored exps */  \
        for (int l = 0; l < LANES; ++l) part[l] = 0.0f;                                          \
        for (int64_t c = 0; c < body; c += LANES)                                                \
            for (int l = 0; l < LANES; ++l) part[l] += fast_exp(p[c + l] - m);                   \
        for (int l = 0; l < LANES; ++l) s += part[l];                                            \
        for (int64_t c = body; c < n; ++c) s += fast_exp(p[c] - m);                              \
    }                                                                                            \
    if (log_softmax) {                                                                           \
        const float shift = m + std::log(s);                                                     \
        for (int64_t c = 0; c < cols; ++c) o[c] = in[c] - shift;                                 \
        return;                                                                                  \
    }                                                                                            \
    const int64_t body = cols / LANES * LANES;                                                   \
    if (online) {                                                                                \
        const float inv = 1.0f / s;                                                              \
        for (int64_t c = 0; c < body; c += LANES)                                                \
            for (int l = 0; l < LANES; ++l) o[c + l] = fast_exp(in[c + l] - m) * inv;            \
        for (int64_t c = body; c < cols; ++c) o[c] = fast_exp(in[c] - m) * inv;                  \
        return;                                                                                  \
    }                                                                                            \
    for (int l = 0; l < LANES; ++l) part[l] = 0.0f;                                              \
    for (int64_t c = 0; c < body; c += LANES)                                                    \
        for (int l = 0; l < LANES; ++l) {                                                        \
            const float e = fast_exp(in[c + l] - m);                                             \
            o[c + l] = e;                                                                        \
            part[l] += e;                                                                        \
        }                                                                                        \
    s = 0.0f;                                                                                    \
    for (int l = 0; l < LANES; ++l) s += part[l];                                                \
    for (int64_t c = body; c < cols; ++c) {                                                      \
        const float e = fast_exp(in[c] - m);                                                     \
        o[c] = e;                                                                                \
        s += e;                                                                                  \
    }                                                                                            \
    const float inv = 1.0f / s;                                                                  \
    for (int64_t c = 0; c < cols; ++c) o[c] *= inv;                                              \
}

DEFINE_SOFTMAX_ROW(8)
DEFINE_SOFTMAX_ROW(16)
DEFINE_SOFTMAX_ROW(32)

torch::Tensor softmax_rows(torch::Tensor x, int64_t grain, bool log_softmax, int64_t lanes, bool online) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "softmax_rows expects float32");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const int64_t cols = xc.size(-1);
    const int64_t rows = cols == 0 ? 0 : xc.numel() / cols;
    const float* src = xc.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            if (lanes >= 32) softmax_row_32(src + r * cols, dst + r * cols, cols, log_softmax, online);
            else if (lanes >= 16) softmax_row_16(src + r * cols, dst + r * cols, cols, log_softmax, online);
            else softmax_row_8(src + r * cols, dst + r * cols, cols, log_softmax, online);
        }
    });
    return out;
}
