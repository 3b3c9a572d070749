"""Broken: a kernel writes through a null pointer (CUDA illegal memory access)."""
import torch
import torch.nn as nn

SOURCE = r"""
extern "C" __global__ void scribble(float* p) {
    float* bad = (float*)0;
    bad[threadIdx.x] = p[threadIdx.x];
}
"""

kernel = torch.cuda._compile_kernel(SOURCE, "scribble")


class ModelNew(nn.Module):
    def forward(self, a, b):
        out = a + b
        kernel(grid=(1, 1, 1), block=(32, 1, 1), args=[out])
        torch.cuda.synchronize()
        return out
