// LayerNorm / RMSNorm over long rows, each row split across many blocks so that a few rows still
// fill the GPU. Pass 1: per-chunk count, mean and M2 from registers (exact two-pass inside the
// chunk). Pass 2: one block per row combines the chunks (Chan's formula, in double). Pass 3:
// normalize with weight and bias. Compile-time constants: THREADS, ITEMS (float4 per thread),
// RMS, HAS_W, HAS_B, REVERSE (pass 3 walks the blocks backwards, starting on the chunks pass 1
// read last, which are still in L2). CHUNK = THREADS * ITEMS * 4 elements; cols must be a multiple of 4.
#define CHUNK (THREADS * ITEMS * 4)

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float block_sum(float v, float* scratch) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float r = lane < THREADS / 32 ? scratch[lane] : 0.0f;
    r = warp_sum(r);
    __syncthreads();
    return r;
}

// grid (chunks, rows): stats[row * chunks + chunk] = (count, mean, M2); for RMS mean holds 0.
extern "C" __global__ void __launch_bounds__(THREADS)
rownorm_stats(const float* __restrict__ x, float* __restrict__ stats, int cols, int chunks) {
    __shared__ float scratch[32];
    const int chunk = blockIdx.x, row = blockIdx.y;
    const int start = chunk * CHUNK;
    const float4* src = reinterpret_cast<const float4*>(x + static_cast<size_t>(row) * cols + start);
    const int n = min(CHUNK, cols - start);
    float4 v[ITEMS];
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const int e = (i * THREADS + threadIdx.x) * 4;
        v[i] = e < n ? src[i * THREADS + threadIdx.x] : make_float4(0.f, 0.f, 0.f, 0.f);
        s += (v[i].x + v[i].y) + (v[i].z + v[i].w);
    }
#if RMS
    const float mean = 0.0f;
#else
    const float mean = block_sum(s, scratch) / n;
#endif
    float q = 0.0f;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const int e = (i * THREADS + threadIdx.x) * 4;
        if (e < n) {
            const float a = v[i].x - mean, b = v[i].y - mean, c = v[i].z - mean, d = v[i].w - mean;
            q += (a * a + b * b) + (c * c + d * d);
        }
    }
    q = block_sum(q, scratch);
    if (threadIdx.x == 0) {
        float* out = stats + 3 * (static_cast<size_t>(row) * chunks + chunk);
        out[0] = static_cast<float>(n);
        out[1] = mean;
        out[2] = q;
    }
}

// One block per row: combine the chunk statistics into (mean, rstd).
extern "C" __global__ void __launch_bounds__(THREADS)
rownorm_combine(const float* __restrict__ stats, float* __restrict__ mean_rstd, int chunks, double eps) {
    __shared__ double sn[THREADS], sm[THREADS], sq[THREADS];
    const int row = blockIdx.x;
    double n = 0.0, m = 0.0, q = 0.0;
    for (int c = threadIdx.x; c < chunks; c += THREADS) {
        const float* st = stats + 3 * (static_cast<size_t>(row) * chunks + c);
        const double nb = st[0], mb = st[1], qb = st[2];
        const double nn = n + nb, delta = mb - m;
        m += delta * nb / nn;
        q += qb + delta * delta * n * nb / nn;
        n = nn;
    }
    sn[threadIdx.x] = n; sm[threadIdx.x] = m; sq[threadIdx.x] = q;
    __syncthreads();
    for (int stride = THREADS / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            const double na = sn[threadIdx.x], nb = sn[threadIdx.x + stride];
            const double nn = na + nb;
            if (nb > 0.0) {
                const double delta = sm[threadIdx.x + stride] - sm[threadIdx.x];
                sm[threadIdx.x] += delta * nb / nn;
                sq[threadIdx.x] += sq[threadIdx.x + stride] + delta * delta * na * nb / nn;
                sn[threadIdx.x] = nn;
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        mean_rstd[2 * row] = static_cast<float>(sm[0]);
        mean_rstd[2 * row + 1] = static_cast<float>(rsqrt(sq[0] / sn[0] + eps));
    }
}

// grid (rows, chunks): rows vary fastest so one chunk of weight and bias serves every row from L2.
extern "C" __global__ void __launch_bounds__(THREADS)
rownorm_apply(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
              const float* __restrict__ mean_rstd, float* __restrict__ y, int cols) {
#if REVERSE
    const int row = gridDim.x - 1 - blockIdx.x, chunk = gridDim.y - 1 - blockIdx.y;
#else
    const int row = blockIdx.x, chunk = blockIdx.y;
#endif
    const int start = chunk * CHUNK;
    const int n = min(CHUNK, cols - start);
    const size_t base = static_cast<size_t>(row) * cols + start;
    const float4* src = reinterpret_cast<const float4*>(x + base);
    float4* dst = reinterpret_cast<float4*>(y + base);
    const float mean = mean_rstd[2 * row], rstd = mean_rstd[2 * row + 1];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const int k = i * THREADS + threadIdx.x;
        if (k * 4 >= n) continue;
        float4 v = __ldcs(src + k);
        v.x = (v.x - mean) * rstd; v.y = (v.y - mean) * rstd;
        v.z = (v.z - mean) * rstd; v.w = (v.w - mean) * rstd;
#if HAS_W
        const float4 g = reinterpret_cast<const float4*>(w + start)[k];
        v.x *= g.x; v.y *= g.y; v.z *= g.z; v.w *= g.w;
#endif
#if HAS_B
        const float4 h = reinterpret_cast<const float4*>(b + start)[k];
        v.x += h.x; v.y += h.y; v.z += h.z; v.w += h.w;
#endif
        __stcs(dst + k, v);
    }
}
