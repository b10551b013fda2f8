// Module-scope __device__ variables (issue 15, `.global` data): a lookup table with an
// initializer, a scale factor, a visible hit counter and a per-bin counter array without
// initializers, updated with atomicAdd. Every access goes through the variables'
// addresses (MOV32I 32@lo/32@hi relocations in the cubin). (clang-14 cannot emit
// initializers holding addresses of device variables, "Unsupported expression in static
// initializer: addrspacecast": tests/globals.rs covers those in PTX.)
#include "cuda_shim.h"

__device__ int lut[16] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3};
__device__ float scale = 0.5f;
__device__ unsigned hits;
static __device__ unsigned bins[8];

extern "C" __global__ void device_globals(const int *in, int *out, int n) {
  int i = blockIdx_x * blockDim_x + threadIdx_x;
  if (i >= n)
    return;
  int v = in[i];
  int t = lut[v & 15] + lut[(v >> 4) & 15] * 3;
  out[i] = (int)((float)t * scale);
  atomicAdd(&hits, 1u);
  atomicAdd(&bins[(v >> 8) & 7], 1u);
}
