// A chain of elementwise ops fused into one kernel: each element is read once from every
// input and written once, instead of one pass over memory per op. Grid-stride loop; with VEC 4
// every thread moves float4s (the caller checks 16-byte alignment and a length divisible by 4).
// Compile-time constants: THREADS, VEC; the chain itself is `fused_op`, written by the renderer.

extern "C" __global__ void __launch_bounds__(THREADS)
fused_elementwise(FUSED_PARAMS float* __restrict__ out, int n) {
    const int stride = gridDim.x * THREADS * VEC;
    for (int i = (blockIdx.x * THREADS + threadIdx.x) * VEC; i < n; i += stride) {
#if VEC == 4
        FUSED_LOAD4
        float4 r;
        r.x = fused_op(FUSED_LANE(x));
        r.y = fused_op(FUSED_LANE(y));
        r.z = fused_op(FUSED_LANE(z));
        r.w = fused_op(FUSED_LANE(w));
        *reinterpret_cast<float4*>(out + i) = r;
#else
        out[i] = fused_op(FUSED_SCALAR);
#endif
    }
}
