// Row softmax (or log-softmax) with the whole row held on chip: each row is split across a
// cluster of CLUSTER thread blocks, each thread keeps ITEMS float4 in registers, so the input is
// read once and the output written once. Blocks of a cluster exchange (max, sum) pairs through
// distributed shared memory. Compile-time constants: COLS, THREADS, ITEMS, CLUSTER, LOG.
#define NEG_INF __int_as_float(0xff800000)
#define SLICE (COLS / CLUSTER)

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
// Block-wide reduction; every thread gets the result.
template <bool IS_MAX>
__device__ __forceinline__ float block_reduce(float v, float* scratch) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = IS_MAX ? warp_max(v) : warp_sum(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float r = IS_MAX ? NEG_INF : 0.0f;
    if (lane < THREADS / 32) r = scratch[lane];
    r = IS_MAX ? warp_max(r) : warp_sum(r);
    __syncthreads();
    return r;
}

#if CLUSTER > 1
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
// Read a float from the same shared-memory variable in block `rank` of this cluster.
__device__ __forceinline__ float peer_load(const float* local, unsigned rank) {
    unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(local)), remote;
    float v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(rank));
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
    return v;
}
#define CLUSTER_ATTR __cluster_dims__(CLUSTER, 1, 1)
#else
#define CLUSTER_ATTR
#endif

extern "C" __global__ void CLUSTER_ATTR __launch_bounds__(THREADS)
softmax_rows(const float* __restrict__ x, float* __restrict__ y) {
    __shared__ float scratch[32];
    __shared__ float pair[2];
#if CLUSTER > 1
    const unsigned rank = cluster_rank();
#else
    const unsigned rank = 0;
#endif
    const size_t row = blockIdx.x / CLUSTER;
    const float4* src = reinterpret_cast<const float4*>(x + row * COLS + rank * SLICE);
    float4* dst = reinterpret_cast<float4*>(y + row * COLS + rank * SLICE);
    float4 v[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) v[i] = __ldcs(src + i * THREADS + threadIdx.x);
    float m = NEG_INF;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) m = fmaxf(m, fmaxf(fmaxf(v[i].x, v[i].y), fmaxf(v[i].z, v[i].w)));
    m = block_reduce<true>(m, scratch);
    float s = 0.0f;
#if LOG
#pragma unroll
    for (int i = 0; i < ITEMS; ++i)
        s += __expf(v[i].x - m) + __expf(v[i].y - m) + __expf(v[i].z - m) + __expf(v[i].w - m);
#else
    // Keep exp(x - local max) in the registers: the output is that times one scale per block.
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        v[i].x = __expf(v[i].x - m); v[i].y = __expf(v[i].y - m);
        v[i].z = __expf(v[i].z - m); v[i].w = __expf(v[i].w - m);
        s += (v[i].x + v[i].y) + (v[i].z + v[i].w);
    }
#endif
    s = block_reduce<false>(s, scratch);
    float row_max = m, row_sum = s;
#if CLUSTER > 1
    if (threadIdx.x == 0) { pair[0] = m; pair[1] = s; }
    cluster_sync();
    row_max = NEG_INF;
    float peers_m[CLUSTER], peers_s[CLUSTER];
#pragma unroll
    for (int r = 0; r < CLUSTER; ++r) {
        peers_m[r] = peer_load(&pair[0], r);
        peers_s[r] = peer_load(&pair[1], r);
        row_max = fmaxf(row_max, peers_m[r]);
    }
    row_sum = 0.0f;
#pragma unroll
    for (int r = 0; r < CLUSTER; ++r) row_sum += peers_s[r] * __expf(peers_m[r] - row_max);
    cluster_sync();  // no block may leave while a peer still reads its shared memory
#else
    (void)pair;
#endif
#if LOG
    const float shift = row_max + __logf(row_sum);
#pragma unroll
    for (int i = 0; i < ITEMS; ++i)
        __stcs(dst + i * THREADS + threadIdx.x,
               make_float4(v[i].x - shift, v[i].y - shift, v[i].z - shift, v[i].w - shift));
#else
    const float scale = __expf(m - row_max) / row_sum;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i)
        __stcs(dst + i * THREADS + threadIdx.x,
               make_float4(v[i].x * scale, v[i].y * scale, v[i].z * scale, v[i].w * scale));
#endif
}
