// Integer arithmetic beyond add/mul: each thread takes two 32-bit and two 64-bit
// operands and writes a row of results: division and remainder (signed and unsigned,
// 32 and 64 bits, divisors from memory), high products, a 64-bit product, bit counts,
// bit reversal, rotates (funnel shifts), 64-bit shifts by a register, min/max/abs, a
// sum of absolute differences, a byte permute and a 64-bit sum's carry.
#include "cuda_shim.h"

extern "C" __global__ void int_ops(const int *a, const int *b, const long long *c,
                                   const long long *d, unsigned *out, unsigned long long *out64,
                                   int n) {
  int i = blockIdx_x * blockDim_x + threadIdx_x;
  if (i >= n)
    return;
  int x = a[i], y = b[i];
  unsigned ux = (unsigned)x, uy = (unsigned)y;
  long long p = c[i], q = d[i];
  unsigned long long up = (unsigned long long)p, uq = (unsigned long long)q;

  unsigned *o = out + 16 * i;
  // Division by a runtime divisor (PTX leaves the result for 0 unspecified: skip it).
  o[0] = y != 0 ? (unsigned)(x / y) : 0u;
  o[1] = y != 0 ? (unsigned)(x % y) : 0u;
  o[2] = uy != 0 ? ux / uy : 0u;
  o[3] = uy != 0 ? ux % uy : 0u;
  // Division by constants (clang turns these into high products and shifts).
  o[4] = ux / 7u + (unsigned)(x / -10);
  o[5] = __nvvm_mulhi_ui(ux, uy) ^ (unsigned)__nvvm_mulhi_i(x, y);
  // Bit counts and reversal.
  o[6] = __builtin_popcount(ux) + 64u * (unsigned)__builtin_popcountll(up);
  o[7] = (ux ? (unsigned)__builtin_clz(ux) : 32u) | ((up ? (unsigned)__builtin_clzll(up) : 64u) << 8);
  o[8] = __builtin_bitreverse32(ux) ^ (unsigned)(__builtin_bitreverse64(up) >> 7);
  // Rotates are funnel shifts (shf.l.wrap / shf.r.wrap).
  o[9] = __builtin_rotateleft32(ux, uy) ^ __builtin_rotateright32(ux, uy >> 3);
  // min/max/abs and a sum of absolute differences.
  o[10] = (unsigned)((x < y ? x : y) + (x > y ? x : y) * 3) ^ (unsigned)(x < 0 ? -x : x) ^ (ux < uy ? ux : uy);
  o[11] = __nvvm_sad_ui(ux, uy, 5u) + (unsigned)__nvvm_sad_i(x, y, -5);
  // A byte permute and a 24-bit product.
  o[12] = __nvvm_prmt(ux, uy, 0x5140u) + (unsigned)__nvvm_mul24_i(x, y);
  // Extended-precision add of the two halves (add.cc / addc from a 64-bit add).
  o[13] = (unsigned)((up + uq) >> 32);
  o[14] = (unsigned)(((unsigned long long)ux * uy) >> 16) + (unsigned)(((long long)x * y) >> 32);
  o[15] = (unsigned)(x >> (uy & 31)) + (ux >> (uy & 31));

  unsigned long long *o64 = out64 + 8 * i;
  o64[0] = q != 0 ? (unsigned long long)(p / q) : 0ull;
  o64[1] = q != 0 ? (unsigned long long)(p % q) : 0ull;
  o64[2] = uq != 0 ? up / uq : 0ull;
  o64[3] = uq != 0 ? up % uq : 0ull;
  o64[4] = up * uq + (unsigned long long)__nvvm_mulhi_ll(p, q);
  o64[5] = __nvvm_mulhi_ull(up, uq);
  o64[6] = (up << (uy & 63)) ^ (up >> (ux & 63)) ^ (unsigned long long)(p >> (uy & 63));
  o64[7] = (unsigned long long)((p < q ? p : q) - (long long)(up > uq ? up : uq)) + (unsigned long long)(p < 0 ? -p : p) + up / 1000000007ull;
}
