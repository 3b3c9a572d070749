// LayerNorm or RMSNorm over the trailing `cols` elements of each row, fused: statistics and
// normalization in one visit of the row while it is still in cache, optional weight and bias.
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>

// One row; compiled for several instruction sets, the best one is picked when the library loads.
__attribute__((target_clones("avx512f", "avx2", "default")))
static void norm_row(const float* in, float* o, int64_t cols, const float* w, const float* b,
                     double eps, bool rms) {
    // Two-pass statistics over the cached row: exact mean, then squared deviations.
    float mf = 0.0f;
    if (!rms) {
        float s = 0.0f;
        for (int64_t c = 0; c < cols; ++c) s += in[c];
        mf = static_cast<float>(static_cast<double>(s) / cols);
    }
    float ss = 0.0f;
    for (int64_t c = 0; c < cols; ++c) {
        const float d = in[c] - mf;
        ss += d * d;
    }
    const float inv = static_cast<float>(1.0 / std::sqrt(static_cast<double>(ss) / cols + eps));
    if (w && b) {
        for (int64_t c = 0; c < cols; ++c) o[c] = (in[c] - mf) * inv * w[c] + b[c];
    } else if (w) {
        for (int64_t c = 0; c < cols; ++c) o[c] = (in[c] - mf) * inv * w[c];
    } else {
        for (int64_t c = 0; c < cols; ++c) o[c] = (in[c] - mf) * inv;
    }
}

torch::Tensor rownorm(torch::Tensor x, int64_t cols, torch::Tensor weight, torch::Tensor bias,
                      double eps, bool rms, int64_t grain) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "rownorm expects float32");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const int64_t rows = cols == 0 ? 0 : xc.numel() / cols;
    auto wc = weight.numel() == cols ? weight.contiguous() : weight;
    auto bc = bias.numel() == cols ? bias.contiguous() : bias;
    const float* w = weight.numel() == cols ? wc.data_ptr<float>() : nullptr;
    const float* b = bias.numel() == cols ? bc.data_ptr<float>() : nullptr;
    const float* src = xc.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) norm_row(src + r * cols, dst + r * cols, cols, w, b, eps, rms);
    });
    return out;
}
