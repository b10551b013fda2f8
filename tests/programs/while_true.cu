// `while (true)` left by a `break` and by a `return` (issue 23), with the loop's trip count
// depending on the thread's data, and a barrier after the loop.
//
//   clang-14 -x cuda --cuda-device-only --cuda-gpu-arch=sm_50 -nocudainc -nocudalib -O3 -S \
//     -I samples tests/programs/while_true.cu -o tests/programs/while_true.ptx
#include "cuda_shim.h"

extern "C" __global__ void while_true(const unsigned *a, unsigned *out, unsigned n) {
  __shared__ unsigned sh[64];
  unsigned i = threadIdx_x;
  unsigned x = a[i], k = 0;
  // Every slot is written before the first barrier: a thread that returns from the loop
  // leaves 0 for its neighbour to read after the second one.
  sh[i & 63] = 0;
  __syncthreads();
  while (true) {
    x = x * 1664525u + 1013904223u;
    k++;
    if ((x >> 28) == 3 || k >= n) break;
    if ((x >> 24) == 0x7f) {
      out[i] = 0xdead0000u | k;
      return;
    }
  }
  sh[i & 63] = k;
  __syncthreads();
  out[i] = x + sh[(i + 5) & 63];
}
