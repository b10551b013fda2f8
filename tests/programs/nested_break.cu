// Jumps out of two loop levels at once (`goto` past the outer loop), a `continue` of the
// outer loop from the inner one, and a vote after the loops that needs the whole warp.
//
//   clang-14 -x cuda --cuda-device-only --cuda-gpu-arch=sm_50 -nocudainc -nocudalib -O3 -S \
//     -I samples tests/programs/nested_break.cu -o tests/programs/nested_break.ptx
#include "cuda_shim.h"

extern "C" __global__ void nested_break(const int *a, int *out, int n) {
  int i = threadIdx_x;
  int s = 0;
  for (int p = 0; p < n; p++) {
    for (int q = 0; q < n; q++) {
      int v = a[(i * 7 + p * 3 + q) & 255];
      if (v == 0) goto done;
      if (v < 0) goto next;
      s += v & 15;
    }
    s ^= p;
  next:;
  }
done:
  out[i] = s + __popc(__ballot_sync(FULL_MASK, s & 1));
}
