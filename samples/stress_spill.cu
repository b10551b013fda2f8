// Register-pressure stress test: 288 floats and 16 doubles are loaded before any is
// consumed, so more than 255 32-bit values are live at once and allocation must spill.
#include "cuda_shim.h"

#define N 288
#define M 16

extern "C" __global__ void stress_spill(const float *in, const double *din, float *out, double *dout) {
  int t = threadIdx_x + blockIdx_x * blockDim_x;
  int stride = blockDim_x * gridDim_x;
  float v[N];
  double d[M];
#pragma unroll
  for (int i = 0; i < N; i++)
    v[i] = in[i * stride + t];
#pragma unroll
  for (int i = 0; i < M; i++)
    d[i] = din[i * stride + t];
  // Consume in an order that keeps every value live until the end: each step pairs the
  // i-th value with the (N-1-i)-th.
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < N; i++)
    s = s * v[i] + v[N - 1 - i];
  double e = 0.0;
#pragma unroll
  for (int i = 0; i < M; i++)
    e = e * d[i] + d[M - 1 - i] + (double)v[i];
  out[t] = s;
  dout[t] = e;
}
