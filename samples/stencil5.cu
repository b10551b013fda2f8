// 2D 5-point stencil (Jacobi step) on an nx-by-ny grid with row pitch `pitch`
// elements; boundary points are copied through unchanged.
#include "cuda_shim.h"

extern "C" __global__ void stencil5(const float *in, float *out, int nx, int ny, int pitch,
                                    float c0, float c1) {
  int x = blockIdx_x * blockDim_x + threadIdx_x;
  int y = blockIdx_y * blockDim_y + threadIdx_y;
  if (x >= nx || y >= ny)
    return;
  int idx = y * pitch + x;
  if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
    out[idx] = in[idx];
    return;
  }
  float sum = in[idx - 1] + in[idx + 1] + in[idx - pitch] + in[idx + pitch];
  out[idx] = c0 * in[idx] + c1 * sum;
}
