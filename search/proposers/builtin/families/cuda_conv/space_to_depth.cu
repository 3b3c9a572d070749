// Space-to-depth for a strided convolution: the fp32 NCHW input, zero-padded by P, is cut into
// S x S pixel blocks and each block becomes C*S*S channels (order c, dy, dx, as pixel_unshuffle),
// written channels-last (NHWC) in the output type OUT (0 fp32, 1 fp16, 2 bf16) in one pass.
// A stride-S convolution with a K x K filter is then a stride-1 convolution with a
// ceil(K/S) x ceil(K/S) filter on the blocks. Compile-time constants: S, P, OUT.
#if OUT == 1
#include <cuda_fp16.h>
typedef __half out_t;
__device__ __forceinline__ out_t to_out(float v) { return __float2half_rn(v); }
#elif OUT == 2
#include <cuda_bf16.h>
typedef __nv_bfloat16 out_t;
__device__ __forceinline__ out_t to_out(float v) { return __float2bfloat16_rn(v); }
#else
typedef float out_t;
__device__ __forceinline__ out_t to_out(float v) { return v; }
#endif

extern "C" __global__ void space_to_depth(const float* __restrict__ x, out_t* __restrict__ y,
                                          int n, int c, int h, int w, int hs, int ws) {
    const int cs = c * S * S;
    const size_t total = static_cast<size_t>(n) * hs * ws * cs;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        const int ch = static_cast<int>(i % cs);
        size_t rest = i / cs;
        const int bx = static_cast<int>(rest % ws); rest /= ws;
        const int by = static_cast<int>(rest % hs);
        const int b = static_cast<int>(rest / hs);
        const int dx = ch % S, dy = (ch / S) % S, ci = ch / (S * S);
        const int iy = by * S + dy - P, ix = bx * S + dx - P;
        float v = 0.0f;
        if (iy >= 0 && iy < h && ix >= 0 && ix < w)
            v = __ldg(x + ((static_cast<size_t>(b) * c + ci) * h + iy) * w + ix);
        y[i] = to_out(v);
    }
}
