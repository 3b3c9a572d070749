"""Elementwise add through a kernel that keeps 64 values in an array indexed at run time:
registers cannot hold it, so it lives in local memory and its figures must show that."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>

__global__ void add_through_local_array(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float parts[64];
    parts[0] = a[i];
    for (int j = 1; j < 64; ++j) parts[j] = parts[j - 1] * 0.5f + b[i];
    int k = i & 63;  // known only at run time
    float zero = parts[k] - parts[k];  // not folded without fast math: the array must exist
    out[i] = a[i] + b[i] + zero;
}

torch::Tensor add_spilling(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    int n = a.numel();
    add_through_local_array<<<(n + 255) / 256, 256>>>(a.data_ptr<float>(), b.data_ptr<float>(),
                                                      out.data_ptr<float>(), n);
    return out;
}
"""

module = load_inline(
    name="add_spilling",
    cpp_sources="torch::Tensor add_spilling(torch::Tensor a, torch::Tensor b);",
    cuda_sources=cuda_source,
    functions=["add_spilling"],
    extra_cuda_cflags=["-maxrregcount=24"],
)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return module.add_spilling(a.contiguous(), b.contiguous())
