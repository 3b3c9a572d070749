// A chain of elementwise ops fused into one loop: each element is read once from every input
// and written once, instead of one pass over memory per op. Elements are split across threads
// with at::parallel_for (grain = elements per task). fast_exp/fast_tanh: cpu_fast_math.h, put in
// front of this file by the renderer; `fused_op` (the chain itself) comes right after it.
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>
#include <vector>

// Compiled for several instruction sets, the best one is picked when the library loads.
__attribute__((target_clones("avx512f", "avx2", "default")))
static void fused_range(const std::vector<const float*>& in, float* out, int64_t begin, int64_t end) {
    FUSED_LOOP
}

torch::Tensor fused_elementwise(std::vector<torch::Tensor> inputs, int64_t grain) {
    std::vector<torch::Tensor> xs;
    std::vector<const float*> ptrs;
    for (auto& t : inputs) {
        TORCH_CHECK(t.scalar_type() == torch::kFloat32, "fused_elementwise expects float32");
        TORCH_CHECK(t.sizes() == inputs[0].sizes(), "fused_elementwise expects equal shapes");
        xs.push_back(t.contiguous());
        ptrs.push_back(xs.back().data_ptr<float>());
    }
    auto out = torch::empty_like(xs[0]);
    float* o = out.data_ptr<float>();
    at::parallel_for(0, out.numel(), grain, [&](int64_t begin, int64_t end) {
        fused_range(ptrs, o, begin, end);
    });
    return out;
}
