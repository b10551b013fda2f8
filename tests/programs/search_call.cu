// A device function whose loop returns early on a match and on an error (issue 23: "early
// return from a loop inside an inlined .func"), called per thread; then the block reduces
// the results through shared memory after __syncthreads(), so the warp must be whole again.
//
//   clang-14 -x cuda --cuda-device-only --cuda-gpu-arch=sm_50 -nocudainc -nocudalib -O3 -S \
//     -I samples tests/programs/search_call.cu -o tests/programs/search_call.ptx
#include "cuda_shim.h"

__device__ __noinline__ int search(const int *a, int n, int key) {
  for (int j = 0; j < n; j++) {
    if (a[j] == key) return j;
    if (a[j] < 0) return -2 - j;
  }
  return -1;
}

extern "C" __global__ void search_call(const int *a, int *out, int n) {
  __shared__ int sh[64];
  int i = threadIdx_x;
  int r = search(a + (i & 63) * 16, n, i & 15);
  sh[i & 63] = r;
  __syncthreads();
  out[i] = r + sh[(i + 1) & 63];
}
