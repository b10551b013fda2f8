// Block-level tree reduction in shared memory: each block sums 2*blockDim.x
// inputs and writes one partial sum. blockDim.x must be a power of two <= 256.
#include "cuda_shim.h"

extern "C" __global__ void reduce_sum(const float *in, float *partial, unsigned n) {
  __shared__ float sdata[256];
  unsigned tid = threadIdx_x;
  unsigned i = blockIdx_x * (blockDim_x * 2) + tid;

  float v = 0.0f;
  if (i < n)
    v = in[i];
  if (i + blockDim_x < n)
    v += in[i + blockDim_x];
  sdata[tid] = v;
  __syncthreads();

  for (unsigned s = blockDim_x >> 1; s > 0; s >>= 1) {
    if (tid < s)
      sdata[tid] += sdata[tid + s];
    __syncthreads();
  }

  if (tid == 0)
    partial[blockIdx_x] = sdata[0];
}
