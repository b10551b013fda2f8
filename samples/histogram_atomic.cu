// 64-bin histogram of bytes: each block counts into a shared-memory histogram with
// atomicAdd on shared memory, then adds its bins to the global histogram with atomicAdd
// on global memory. Order-independent: the final bins are sums.
#include "cuda_shim.h"

#define BINS 64

extern "C" __global__ void histogram_atomic(const unsigned char *data, unsigned *hist, unsigned n) {
  __shared__ unsigned local[BINS];
  for (unsigned b = threadIdx_x; b < BINS; b += blockDim_x)
    local[b] = 0;
  __syncthreads();
  for (unsigned i = blockIdx_x * blockDim_x + threadIdx_x; i < n; i += blockDim_x * gridDim_x)
    atomicAdd(&local[data[i] % BINS], 1u);
  __syncthreads();
  for (unsigned b = threadIdx_x; b < BINS; b += blockDim_x) {
    unsigned c = local[b];
    if (c != 0)
      atomicAdd(&hist[b], c);
  }
}
