// Warp-shuffle reduction: each warp sums its 32 values with __shfl_down_sync and lane 0
// adds the warp's sum to *total with atomicAdd. Every warp also counts its positive
// inputs with __ballot_sync + __popc into *positives, and writes its butterfly-xor
// maximum to warp_max[global warp]. Integer sums are order-independent.
#include "cuda_shim.h"

extern "C" __global__ void warp_reduce(const int *in, int *total, unsigned *positives, int *warp_max,
                                       unsigned n) {
  unsigned i = blockIdx_x * blockDim_x + threadIdx_x;
  int v = i < n ? in[i] : 0;
  unsigned ballot = __ballot_sync(FULL_MASK, v > 0);
  int sum = v;
  for (int d = 16; d > 0; d >>= 1)
    sum += __shfl_down_sync(FULL_MASK, sum, d);
  int m = v;
  for (int d = 1; d < 32; d <<= 1) {
    int o = __shfl_xor_sync(FULL_MASK, m, d);
    m = o > m ? o : m;
  }
  if (laneId == 0) {
    atomicAdd(total, sum);
    atomicAdd(positives, (unsigned)__popc(ballot));
    warp_max[i / 32] = m;
  }
}
