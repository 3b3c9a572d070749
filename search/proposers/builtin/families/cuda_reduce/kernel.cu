// Reduce one dimension of a contiguous tensor seen as (outer, R, inner), reading each element
// once. OP: 0 sum, 1 mean, 2 max, 3 min. Compile-time constants: THREADS, SPLIT, OP.
//   reduce_rows (inner == 1): one block per output; THREADS threads stride the row, then warp
//     shuffles and one shared-memory step combine their partial results.
//   reduce_cols (inner > 1): a block is THREADS / SPLIT neighbouring outputs (coalesced reads
//     across the inner dimension) by SPLIT threads that share each output's R elements.
#if OP >= 2
#define IDENT (OP == 2 ? __int_as_float(0xff800000) : __int_as_float(0x7f800000))
#else
#define IDENT 0.0f
#endif

__device__ __forceinline__ float combine(float a, float b) {
#if OP == 2
    return fmaxf(a, b);
#elif OP == 3
    return fminf(a, b);
#else
    return a + b;
#endif
}

__device__ __forceinline__ float finish(float acc, int R) {
    return OP == 1 ? acc / static_cast<float>(R) : acc;
}

extern "C" __global__ void __launch_bounds__(THREADS)
reduce_rows(const float* __restrict__ x, float* __restrict__ y, int R) {
    __shared__ float part[32];
    const float* row = x + static_cast<size_t>(blockIdx.x) * R;
    float acc = IDENT;
    for (int r = threadIdx.x; r < R; r += THREADS) acc = combine(acc, row[r]);
    for (int o = 16; o > 0; o >>= 1) acc = combine(acc, __shfl_xor_sync(0xffffffffu, acc, o));
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) part[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = lane < THREADS / 32 ? part[lane] : IDENT;
        for (int o = 16; o > 0; o >>= 1) acc = combine(acc, __shfl_xor_sync(0xffffffffu, acc, o));
        if (lane == 0) y[blockIdx.x] = finish(acc, R);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
reduce_cols(const float* __restrict__ x, float* __restrict__ y, int outer, int R, int inner) {
    constexpr int COLS = THREADS / SPLIT;
    __shared__ float part[SPLIT][COLS];
    const int col = blockIdx.x * COLS + threadIdx.x;
    float acc = IDENT;
    if (col < outer * inner) {
        const int o = col / inner, i = col - o * inner;
        const float* p = x + static_cast<size_t>(o) * R * inner + i;
        for (int r = threadIdx.y; r < R; r += SPLIT) acc = combine(acc, p[static_cast<size_t>(r) * inner]);
    }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && col < outer * inner) {
        for (int s = 1; s < SPLIT; ++s) acc = combine(acc, part[s][threadIdx.x]);
        y[col] = finish(acc, R);
    }
}
