// Row-wise softmax / log-softmax over the last dimension, one fused pass per row.
// Rows are split across threads with at::parallel_for; the exponential is a polynomial the
// compiler vectorizes (std::exp would be one scalar call per element).
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>
#include <cstdint>
#include <cstring>

static inline float fast_exp(float x) {
    // exp(x) = 2^n * e^r with |r| <= ln2/2; degree-6 polynomial, relative error ~2e-7.
    // Rounding by truncation keeps the loop free of library calls, so it vectorizes.
    x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
    const float t = x * 1.44269504088896341f;
    const float n = static_cast<float>(static_cast<int32_t>(t + (t >= 0.0f ? 0.5f : -0.5f)));
    float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    float p = 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof(scale));
    return p * scale;
}

// One row; compiled for several instruction sets, the best one is picked when the library loads.
__attribute__((target_clones("avx512f", "avx2", "default")))
static void softmax_row(const float* in, float* o, int64_t cols, bool log_softmax) {
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) m = in[c] > m ? in[c] : m;
    float s = 0.0f;
    if (log_softmax) {
        for (int64_t c = 0; c < cols; ++c) s += fast_exp(in[c] - m);
        const float shift = m + std::log(s);
        for (int64_t c = 0; c < cols; ++c) o[c] = in[c] - shift;
    } else {
        for (int64_t c = 0; c < cols; ++c) {
            const float e = fast_exp(in[c] - m);
            o[c] = e;
            s += e;
        }
        const float inv = 1.0f / s;
        for (int64_t c = 0; c < cols; ++c) o[c] *= inv;
    }
}

torch::Tensor softmax_rows(torch::Tensor x, int64_t grain, bool log_softmax) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "softmax_rows expects float32");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const int64_t cols = xc.size(-1);
    const int64_t rows = cols == 0 ? 0 : xc.numel() / cols;
    const float* src = xc.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) softmax_row(src + r * cols, dst + r * cols, cols, log_softmax);
    });
    return out;
}
