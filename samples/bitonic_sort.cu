// Bitonic sort of 512 unsigned keys per CTA in shared memory (the classic
// bitonicSortShared of the CUDA samples, reduced to keys). Keys past n are padded
// with 0xffffffff so they sort to the end and are not written back. Each pass walks
// the 256 compare-exchange pairs with a blockDim-strided loop, so CTAs of 64, 128 or
// 256 threads (any size up to 256) sort the same 512-key tile; a __syncthreads()
// separates the passes. Ascending order: the last merge (size 512) is ascending for
// every pair.
#include "cuda_shim.h"

#define TILE 512

extern "C" __global__ void bitonic_sort512(unsigned *keys, int n) {
  __shared__ unsigned s[TILE];
  unsigned t = threadIdx_x, nt = blockDim_x;
  unsigned base = blockIdx_x * TILE;
  for (unsigned k = t; k < TILE; k += nt) {
    unsigned gi = base + k;
    s[k] = gi < (unsigned)n ? keys[gi] : 0xffffffffu;
  }
  __syncthreads();
  for (unsigned size = 2; size <= TILE; size <<= 1) {
    for (unsigned stride = size >> 1; stride > 0; stride >>= 1) {
      for (unsigned k = t; k < TILE / 2; k += nt) {
        unsigned pos = 2 * k - (k & (stride - 1));
        unsigned x = s[pos], y = s[pos + stride];
        bool up = (pos & size) == 0;
        if ((x > y) == up) {
          s[pos] = y;
          s[pos + stride] = x;
        }
      }
      __syncthreads();
    }
  }
  for (unsigned k = t; k < TILE; k += nt) {
    unsigned gi = base + k;
    if (gi < (unsigned)n)
      keys[gi] = s[k];
  }
}
