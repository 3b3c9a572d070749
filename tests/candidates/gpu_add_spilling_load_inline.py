"""Elementwise add through a kernel held to 24 registers per thread that keeps 64 values
live at once: ptxas spills them to local memory, and the kernel's figures must show that."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>

__global__ void add_with_spills(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float live[64];
    #pragma unroll
    for (int j = 0; j < 64; ++j) live[j] = a[min(i + j, n - 1)] * (float)(j + 1);
    float s = 0.0f;
    #pragma unroll
    for (int j = 0; j < 64; ++j) s += live[j] * live[63 - j];
    // s keeps all 64 values live together; it never changes the sum.
    out[i] = a[i] + b[i] + (s == 1.2345e37f ? 1.0f : 0.0f);
}

torch::Tensor add_spilling(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    int n = a.numel();
    add_with_spills<<<(n + 255) / 256, 256>>>(a.data_ptr<float>(), b.data_ptr<float>(),
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
