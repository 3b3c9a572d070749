// Vectorizable float math for the C++ templates: the exponential is a polynomial the compiler
// vectorizes (std::exp would be one scalar library call per element).
#include <cstdint>
#include <cstring>

static inline float fast_exp(float x) {
    // exp(x) = 2^n * e^r with |r| <= ln2/2; degree-6 polynomial, relative error ~2e-7.
    // Rounding by truncation keeps the loop free of library calls, so it vectorizes.
    x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
    const float t = x * 1.44269504088896341f;
    const float n = static_cast<float>(static_cast<int32_t>(t + (t >= 0.0f ? 0.5f : -0.5f)));
    float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    float p = 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof(scale));
    return p * scale;
}

static inline float fast_tanh(float x) {
    // tanh(x) = 1 - 2 / (exp(2x) + 1); saturates cleanly at both ends.
    return 1.0f - 2.0f / (fast_exp(2.0f * x) + 1.0f);
}

// fmaxf/fminf keep IEEE NaN rules the vector max/min instructions lack, so the compiler calls
// the library for them and the loop stays scalar; these compare-and-select forms vectorize.
static inline float fast_max(float a, float b) { return a > b ? a : b; }
static inline float fast_min(float a, float b) { return a < b ? a : b; }
