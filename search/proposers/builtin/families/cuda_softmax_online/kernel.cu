// Row softmax (or log-softmax) for rows of any length: one block per row streams the row once
// keeping a running maximum and a rescaled running sum (online softmax), then a second pass
// writes the result. Compile-time constants: THREADS, LOG.
#define NEG_INF __int_as_float(0xff800000)

__device__ __forceinline__ void combine(float& m, float& s, float m2, float s2) {
    const float mm = fmaxf(m, m2);
    s = (m == NEG_INF ? 0.0f : s * __expf(m - mm)) + (m2 == NEG_INF ? 0.0f : s2 * __expf(m2 - mm));
    m = mm;
}

extern "C" __global__ void __launch_bounds__(THREADS)
softmax_online(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float sm[32], ss[32];
    const float* in = x + static_cast<size_t>(blockIdx.x) * cols;
    float* out = y + static_cast<size_t>(blockIdx.x) * cols;
    float m = NEG_INF, s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += THREADS) {
        const float v = in[c];
        if (v > m) { s = s * __expf(m - v) + 1.0f; m = v; } else { s += __expf(v - m); }
    }
    for (int o = 16; o > 0; o >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o);
        combine(m, s, m2, s2);
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) { sm[warp] = m; ss[warp] = s; }
    __syncthreads();
    m = NEG_INF; s = 0.0f;
    if (lane < THREADS / 32) { m = sm[lane]; s = ss[lane]; }
    for (int o = 16; o > 0; o >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o);
        combine(m, s, m2, s2);
    }
#if LOG
    const float shift = m + __logf(s);
    for (int c = threadIdx.x; c < cols; c += THREADS) out[c] = in[c] - shift;
#else
    const float inv = 1.0f / s;
    for (int c = threadIdx.x; c < cols; c += THREADS) out[c] = __expf(in[c] - m) * inv;
#endif
}
