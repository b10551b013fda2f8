// Generic-pointer loads and stores through a table of pointers: the kernel gets
// an array of NSRC source-row pointers and NDST destination-row pointers. The
// pointers are themselves loaded from memory, so the compiler cannot tell their
// state space and uses generic ld/st (no .global) to dereference them.
// dst_rows[r][i] = w[r] * (sum over s of src_rows[s][i]) for column i < width.
#include "cuda_shim.h"

#define NSRC 4
#define NDST 2

extern "C" __global__ void pointer_table(float *const *src_rows, float *const *dst_rows,
                                         const float *w, int width) {
  int i = blockIdx_x * blockDim_x + threadIdx_x;
  if (i >= width)
    return;
  float sum = 0.0f;
  for (int s = 0; s < NSRC; ++s)
    sum += src_rows[s][i];
  for (int r = 0; r < NDST; ++r)
    dst_rows[r][i] = w[r] * sum;
}
