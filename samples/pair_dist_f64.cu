// Double-precision squared distance of point pairs, accumulated into a running
// total per pair, plus a 2-bit classification flag per pair (f64 sub/mul/fma/add,
// f64 compares, selp, or, unsigned min).
#include "cuda_shim.h"

extern "C" __global__ void pair_dist_f64(const double *ax, const double *ay, const double *bx,
                                         const double *by, double *dist2_total, unsigned *flags,
                                         double near2, double far2, unsigned max_flag, int n) {
  int i = blockIdx_x * blockDim_x + threadIdx_x;
  if (i >= n)
    return;
  double dx = bx[i] - ax[i];
  double dy = by[i] - ay[i];
  double d = dx * dx + dy * dy;
  dist2_total[i] += d;
  unsigned f = (d < near2 ? 1u : 0u) | (d > far2 ? 2u : 0u);
  flags[i] = f < max_flag ? f : max_flag;
}
