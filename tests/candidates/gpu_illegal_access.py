"""Broken: a kernel writes far outside its allocation (CUDA illegal memory access)."""
import torch
import torch.nn as nn

SOURCE = r"""
extern "C" __global__ void scribble(float* p) {
    p[threadIdx.x + (1ll << 38)] = 1.0f;  // a terabyte past the allocation
}
"""

kernel = torch.cuda._compile_kernel(SOURCE, "scribble")


class ModelNew(nn.Module):
    def forward(self, a, b):
        out = a + b
        kernel(grid=(1, 1, 1), block=(32, 1, 1), args=[out])
        torch.cuda.synchronize()
        return out
