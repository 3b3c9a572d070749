"""NVRTC: a CUDA kernel compiled at import by torch.cuda._compile_kernel (~0.1 s)."""
import torch
import torch.nn as nn

SOURCE = r"""
extern "C" __global__ void add(const float4* a, const float4* b, float4* out, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 x = a[i], y = b[i];
        out[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
}
"""

add_kernel = torch.cuda._compile_kernel(SOURCE, "add")


class ModelNew(nn.Module):
    def forward(self, a, b):
        out = torch.empty_like(a)
        n4 = a.numel() // 4
        threads = 256
        add_kernel(grid=((n4 + threads - 1) // threads, 1, 1), block=(threads, 1, 1),
                   args=[a.contiguous(), b.contiguous(), out, n4])
        return out
