// erf without a library call, so loops that use it vectorize (Abramowitz and Stegun 7.1.26,
// absolute error below 1.5e-7, odd symmetry for x < 0). Needs fast_exp from cpu_fast_math.h.
static inline float fast_erf(float x) {
    const float a = x < 0.0f ? -x : x;
    const float t = 1.0f / (1.0f + 0.3275911f * a);
    const float p = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f
                                                                 + t * 1.061405429f))));
    const float y = 1.0f - p * fast_exp(-a * a);
    return x < 0.0f ? -y : y;
}
