// Reduce one dimension of a contiguous tensor seen as (outer, R, inner), reading each element
// once. op: 0 sum, 1 mean, 2 max, 3 min. Outputs are split across threads with at::parallel_for
// (grain = outer slices per task). With inner == 1 a slice is one row, summed in LANES partial
// results (the loop vectorizes); otherwise the inner dimension is the vector: each of the R rows
// of a slice is combined element by element into the slice's output row.
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>

#define LANES 16

static inline float combine(float a, float b, int op) {
    return op == 2 ? (a > b ? a : b) : op == 3 ? (a < b ? a : b) : a + b;
}

// Compiled for several instruction sets, the best one is picked when the library loads.
__attribute__((target_clones("avx512f", "avx2", "default")))
static void reduce_slice(const float* in, float* out, int64_t R, int64_t inner, int op) {
    if (inner == 1) {
        float part[LANES];
        const int64_t body = R - R % LANES;
        for (int l = 0; l < LANES; ++l) part[l] = body ? in[l] : (op >= 2 ? in[0] : 0.0f);
        for (int64_t r = LANES; r < body; r += LANES)
            for (int l = 0; l < LANES; ++l) part[l] = combine(part[l], in[r + l], op);
        float acc = part[0];
        for (int l = 1; l < LANES; ++l) acc = combine(acc, part[l], op);
        for (int64_t r = body; r < R; ++r) acc = combine(acc, in[r], op);
        out[0] = acc;
        return;
    }
    for (int64_t i = 0; i < inner; ++i) out[i] = in[i];
    for (int64_t r = 1; r < R; ++r) {
        const float* row = in + r * inner;
        if (op == 2) {
            for (int64_t i = 0; i < inner; ++i) out[i] = out[i] > row[i] ? out[i] : row[i];
        } else if (op == 3) {
            for (int64_t i = 0; i < inner; ++i) out[i] = out[i] < row[i] ? out[i] : row[i];
        } else {
            for (int64_t i = 0; i < inner; ++i) out[i] += row[i];
        }
    }
}

torch::Tensor reduce_dim(torch::Tensor x, int64_t outer, int64_t R, int64_t inner, int64_t op, int64_t grain) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "reduce_dim expects float32");
    TORCH_CHECK(R > 0, "reduce_dim needs a non-empty dimension");
    auto xc = x.contiguous();
    auto out = torch::empty({outer * inner}, xc.options());
    const float* in = xc.data_ptr<float>();
    float* o = out.data_ptr<float>();
    at::parallel_for(0, outer, grain, [&](int64_t begin, int64_t end) {
        for (int64_t s = begin; s < end; ++s) {
            reduce_slice(in + s * R * inner, o + s * inner, R, inner, static_cast<int>(op));
            if (op == 1)
                for (int64_t i = 0; i < inner; ++i) o[s * inner + i] /= static_cast<float>(R);
        }
    });
    return out;
}
