// Black-Scholes European call and put prices: the cumulative normal distribution by the
// Abramowitz-Stegun polynomial (division, fma chains), exp and log through the PTX
// approximations ex2.approx.f32 / lg2.approx.f32 (__nvvm_ex2_approx_f, __nvvm_lg2_approx_f),
// sqrt.rn.f32 (__builtin_sqrtf) and IEEE division (div.rn.f32).
#include "cuda_shim.h"

__device__ static float exp_approx(float x) { return __nvvm_ex2_approx_f(x * 1.44269504f); }
__device__ static float log_approx(float x) { return __nvvm_lg2_approx_f(x) * 0.693147181f; }

__device__ static float cnd(float d) {
  const float a1 = 0.31938153f, a2 = -0.356563782f, a3 = 1.781477937f, a4 = -1.821255978f,
              a5 = 1.330274429f, rsqrt2pi = 0.39894228040143267794f;
  float k = 1.0f / (1.0f + 0.2316419f * __builtin_fabsf(d));
  float c = rsqrt2pi * exp_approx(-0.5f * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
  return d > 0.0f ? 1.0f - c : c;
}

extern "C" __global__ void black_scholes(const float *price, const float *strike, const float *years,
                                         float *call, float *put, float rate, float vol, int n) {
  int i = blockIdx_x * blockDim_x + threadIdx_x;
  if (i >= n)
    return;
  float s = price[i], x = strike[i], t = years[i];
  float sqrt_t = __builtin_sqrtf(t);
  float d1 = (log_approx(s / x) + (rate + 0.5f * vol * vol) * t) / (vol * sqrt_t);
  float d2 = d1 - vol * sqrt_t;
  float cnd1 = cnd(d1), cnd2 = cnd(d2);
  float disc = exp_approx(-rate * t);
  call[i] = s * cnd1 - x * disc * cnd2;
  put[i] = x * disc * (1.0f - cnd2) - s * (1.0f - cnd1);
}
