// Generic-pointer loads and stores through a non-inlined device function.
// dot3_accum() takes plain (generic) pointers, so its body uses ld.f32 / st.f32
// with no state space, and the kernel reaches it with a PTX `call`.
#include "cuda_shim.h"

extern "C" __device__ __noinline__ float dot3_accum(const float *a, const float *b, float *acc) {
  float d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  *acc += d;
  return d;
}

// Each thread takes the dot product of two xyz points (packed, 3 floats each)
// and accumulates it into sums[i]; dots[i] receives the dot product itself.
extern "C" __global__ void generic_call(const float *pa, const float *pb, float *sums,
                                        float *dots, int n) {
  int i = blockIdx_x * blockDim_x + threadIdx_x;
  if (i < n)
    dots[i] = dot3_accum(pa + 3 * i, pb + 3 * i, sums + i);
}
