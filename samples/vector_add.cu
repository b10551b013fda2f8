// c[i] = a[i] + b[i], one thread per element, with a bounds check.
#include "cuda_shim.h"

extern "C" __global__ void vector_add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx_x * blockDim_x + threadIdx_x;
  if (i < n)
    c[i] = a[i] + b[i];
}
