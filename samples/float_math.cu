// Float instructions beyond add/mul (issue 7, float part): IEEE division and square root
// (div.rn/rz.f32, sqrt.rn.f32, rcp.rn.f32, div.rn.f64, sqrt.rn.f64, rcp.rn.f64), the
// approximate functions (div.approx, sqrt.approx, rsqrt.approx, sin/cos/ex2/lg2.approx,
// rsqrt.approx.f64), f32<->f64 and float<->integer conversions, comparisons and min/max.
#include "cuda_shim.h"

extern "C" __global__ void float_math(const float *a, const float *b, const double *c, const double *d,
                                      float *out, double *out64, int *outi, int n) {
  int i = blockIdx_x * blockDim_x + threadIdx_x;
  if (i >= n)
    return;
  float x = a[i], y = b[i];
  double p = c[i], q = d[i];
  float *o = out + 16 * i;
  o[0] = x / y;
  o[1] = __nvvm_div_rz_f(x, y);
  o[2] = __builtin_sqrtf(__builtin_fabsf(x));
  o[3] = __nvvm_rcp_rn_f(y);
  o[4] = __nvvm_div_approx_f(x, y);
  o[5] = __nvvm_sqrt_approx_f(__builtin_fabsf(y));
  o[6] = __nvvm_rsqrt_approx_f(__builtin_fabsf(x) + 1.0f);
  o[7] = __nvvm_sin_approx_f(x) + __nvvm_cos_approx_f(y);
  o[8] = __nvvm_ex2_approx_f(x * 0.125f) + __nvvm_lg2_approx_f(__builtin_fabsf(y) + 1.0f);
  o[9] = (float)(p / q);
  o[10] = __builtin_fminf(x, y) + __builtin_fmaxf(x, y) * 0.5f;
  o[11] = x < y ? x * y : x - y;
  double *o64 = out64 + 4 * i;
  o64[0] = p / q;
  o64[1] = __nvvm_sqrt_rn_d(__builtin_fabs(p));
  o64[2] = __nvvm_rcp_rn_d(q) + (double)x * (double)y;
  o64[3] = __nvvm_rsqrt_approx_d(__builtin_fabs(q) + 1.0);
  int *oi = outi + 4 * i;
  oi[0] = (int)x;
  oi[1] = (int)(unsigned)__builtin_fabsf(y);
  oi[2] = (int)(long long)p;
  oi[3] = (int)__builtin_rintf(x * 3.5f);
}
