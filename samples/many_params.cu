// A kernel with scalar parameters of every width (8, 16, 32, 64-bit integers,
// float, double) plus pointers, all of them used.
#include "cuda_shim.h"

extern "C" __global__ void many_params(signed char c, unsigned char uc, short s,
                                       unsigned short us, int i32, unsigned u32,
                                       long long i64, unsigned long long u64, float f,
                                       double d, const int *in, long long *out_l,
                                       float *out_f, double *out_d, int n) {
  int i = blockIdx_x * blockDim_x + threadIdx_x;
  if (i >= n)
    return;
  int x = in[i];
  int small = c + uc + s + us;               // sign/zero extension of 8/16-bit params
  long long wide = (long long)(x * i32 + small) + i64;
  out_l[i] = wide ^ (long long)(u64 + u32);
  out_f[i] = (float)x * f + (float)small;
  out_d[i] = d * out_d[i] + d;
}
