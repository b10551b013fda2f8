// Issue 23, kernel 2: the most common search loop, left by a `break` on a match and by a
// `return` on an error: a loop with two exits to different places. ptx2sass used to reject
// it ("a loop with a divergent exit leaves to 2 different places").
//
//   clang-14 -x cuda --cuda-device-only --cuda-gpu-arch=sm_50 -nocudainc -nocudalib -O3 -S \
//     -I samples tests/programs/find.cu -o tests/programs/find.ptx
#include "cuda_shim.h"

extern "C" __global__ void find(const int *a, int *out, int n, int key) {
  int i = __nvvm_read_ptx_sreg_tid_x();
  int found = -1;
  for (int j = i; j < n; j += 32) {
    if (a[j] == key) { found = j; break; }
    if (a[j] < 0) { out[i] = -2; return; }
  }
  out[i] = found;
}
