// 64-bit integer arithmetic: each thread advances its own xorshift64* generator
// `steps` times and writes the state back plus one float in [0, 1).
#include "cuda_shim.h"

extern "C" __global__ void xorshift64(unsigned long long *state, float *out, int steps, int n) {
  int i = blockIdx_x * blockDim_x + threadIdx_x;
  if (i >= n)
    return;
  unsigned long long x = state[i];
  for (int k = 0; k < steps; ++k) {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
  }
  state[i] = x;
  unsigned long long r = x * 0x2545F4914F6CDD1DULL;
  out[i] = (float)(unsigned)(r >> 40) * (1.0f / 16777216.0f);
}
