// Column sums of a row-major matrix: each thread walks down one column by
// bumping a pointer by the row stride, `acc += *p; p += stride;`.
#include "cuda_shim.h"

extern "C" __global__ void strided_sum(const float *m, float *col_sum, int rows, int cols,
                                       long long stride) {
  int col = blockIdx_x * blockDim_x + threadIdx_x;
  if (col >= cols)
    return;
  const float *p = m + col;
  float acc = 0.0f;
  for (int r = 0; r < rows; ++r) {
    acc += *p;
    p += stride;
  }
  col_sum[col] = acc;
}
