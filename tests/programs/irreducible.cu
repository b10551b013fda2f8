// Issue 23, kernel 1: clang-14 -O3 compiles this to PTX whose loop is entered in its middle
// (an irreducible region). ptx2sass used to accept it and miscompile it silently (40 of 64
// results wrong): the SSY/SYNC of the branch into the loop was inside the loop.
//
//   clang-14 -x cuda --cuda-device-only --cuda-gpu-arch=sm_50 -nocudainc -nocudalib -O3 -S \
//     -I samples tests/programs/irreducible.cu -o tests/programs/irreducible.ptx
#include "cuda_shim.h"

extern "C" __global__ void irreducible(const int *a, int *out, int n) {
  int i = __nvvm_read_ptx_sreg_tid_x();
  int x = a[i], k = 0;
  if (x & 1) goto mid;
top:
  x = x * 3 + 1; k++;
mid:
  x = x >> 1; k++;
  if (x > 1 && k < n) goto top;
  out[i] = k;
}
