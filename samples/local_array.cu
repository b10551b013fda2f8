// Per-thread 16-bin histogram kept in a local array. The bins are indexed by
// data read at run time, so the array cannot live in registers: the PTX gets a
// __local_depot frame and ld.local/st.local.
#include "cuda_shim.h"

extern "C" __global__ void local_array(const unsigned char *data, unsigned *hist_out,
                                       int per_thread, int stride) {
  unsigned bins[16];
  for (int b = 0; b < 16; ++b)
    bins[b] = 0;

  int t = blockIdx_x * blockDim_x + threadIdx_x;
  const unsigned char *p = data + t;
  for (int k = 0; k < per_thread; ++k) {
    bins[*p & 15] += 1;
    p += stride;
  }

  unsigned *out = hist_out + t * 16;
  for (int b = 0; b < 16; ++b)
    out[b] = bins[b];
}
