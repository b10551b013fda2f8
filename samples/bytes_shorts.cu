// 8-bit and 16-bit memory traffic: unsigned char pixels (zero-extended) plus a
// signed short offset per pixel (sign-extended), producing a signed short
// result and an unsigned char mask.
#include "cuda_shim.h"

extern "C" __global__ void bytes_shorts(const unsigned char *pix, const short *offset,
                                        short *out, unsigned char *mask, int gain, int n) {
  int i = blockIdx_x * blockDim_x + threadIdx_x;
  if (i >= n)
    return;
  int p = pix[i];          // zero extension u8 -> s32
  int o = offset[i];       // sign extension s16 -> s32
  int v = (p - 128) * gain + o;
  out[i] = (short)v;       // truncation to 16 bits
  mask[i] = (unsigned char)(v < 0 ? 0 : 255);
}
