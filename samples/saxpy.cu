// Single-precision a*x + y, in place on y.
#include "cuda_shim.h"

extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx_x * blockDim_x + threadIdx_x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}
