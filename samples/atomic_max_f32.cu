// Float atomic maximum built from a compare-and-swap loop (sm_50 has no f32 atomic max):
// every thread folds in[i] into *result with atomicCAS, and in[i]*16 truncated to int into
// *imax with atomicMax. Only the final maxima are written, so the result does not depend
// on the order in which the threads' atomics happen (the CAS retry counts would).
#include "cuda_shim.h"

static __device__ float atomic_max_float(float *addr, float v) {
  int *p = (int *)addr;
  int old = *p;
  while (__int_as_float(old) < v) {
    int assumed = old;
    old = atomicCAS(p, assumed, __float_as_int(v));
    if (old == assumed)
      break;
  }
  return __int_as_float(old);
}

extern "C" __global__ void atomic_max_f32(const float *in, float *result, int *imax, unsigned n) {
  unsigned i = blockIdx_x * blockDim_x + threadIdx_x;
  if (i < n) {
    atomic_max_float(result, in[i]);
    atomicMax(imax, (int)(in[i] * 16.0f));
  }
}
