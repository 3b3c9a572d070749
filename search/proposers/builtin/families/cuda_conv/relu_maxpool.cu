// ReLU fused into max pooling (ReLU commutes with max): one read of the convolution output, one
// write of the pooled result in fp32. Input in channels-last (NHWC) order, element type ELEM
// (0 fp32, 1 fp16, 2 bf16); VEC channels per thread. With HAS_BIAS the convolution's bias is
// added here instead (max commutes with adding a per-channel constant, so it is added once per
// output, after the max). Compile-time constants: K, S, ELEM, VEC, HAS_BIAS.
__device__ __forceinline__ float load_elem(const void* p, size_t i) {
#if ELEM == 0
    return reinterpret_cast<const float*>(p)[i];
#elif ELEM == 1
    float f;
    const unsigned short h = reinterpret_cast<const unsigned short*>(p)[i];
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
#else
    const unsigned short h = reinterpret_cast<const unsigned short*>(p)[i];
    return __uint_as_float(static_cast<unsigned>(h) << 16);
#endif
}

extern "C" __global__ void relu_maxpool_nhwc(const void* __restrict__ x, const float* __restrict__ bias,
                                             float* __restrict__ y, int n, int c, int h, int w, int oh, int ow) {
    const size_t groups = static_cast<size_t>(n) * oh * ow * (c / VEC);
    for (size_t g = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; g < groups;
         g += static_cast<size_t>(gridDim.x) * blockDim.x) {
        const int cg = static_cast<int>(g % (c / VEC));
        size_t rest = g / (c / VEC);
        const int ox = static_cast<int>(rest % ow); rest /= ow;
        const int oy = static_cast<int>(rest % oh);
        const int b = static_cast<int>(rest / oh);
        float best[VEC];
#pragma unroll
        for (int v = 0; v < VEC; ++v) best[v] = HAS_BIAS ? -3.0e38f : 0.0f;  // no bias: the ReLU is a max with zero
#pragma unroll
        for (int ky = 0; ky < K; ++ky) {
#pragma unroll
            for (int kx = 0; kx < K; ++kx) {
                const size_t base = ((static_cast<size_t>(b) * h + oy * S + ky) * w + ox * S + kx) * c + cg * VEC;
#pragma unroll
                for (int v = 0; v < VEC; ++v) best[v] = fmaxf(best[v], load_elem(x, base + v));
            }
        }
        const size_t out = ((static_cast<size_t>(b) * oh + oy) * ow + ox) * c + cg * VEC;
#pragma unroll
        for (int v = 0; v < VEC; ++v)
            y[out + v] = HAS_BIAS ? fmaxf(best[v] + bias[cg * VEC + v], 0.0f) : best[v];
    }
}
