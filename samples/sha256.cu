// SHA-256 compression of one 64-byte message block per thread (FIPS 180-4, 6.2.2):
// thread i reads the 16 big-endian words of block i, runs the 64 rounds from the
// standard initial hash value and writes the 8-word digest of that single block.
// The round constants live in __constant__ memory; rotations are written as
// (x >> n) | (x << (32 - n)), which clang turns into funnel shifts (shf.r.wrap.b32).
// The message schedule is kept as a rolling 16-word window so it stays in registers:
// the outer loop (4 passes of 16 rounds) is not unrolled, the inner one is.
#include "cuda_shim.h"

__constant__ unsigned sha256_k[64] = {
  0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u, 0xab1c5ed5u,
  0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u, 0xc19bf174u,
  0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau,
  0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u, 0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u,
  0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu, 0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u,
  0xa2bfe8a1u, 0xa81a664bu, 0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u,
  0x19a4c116u, 0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
  0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u,
};

__device__ static inline unsigned rotr(unsigned x, int n) { return (x >> n) | (x << (32 - n)); }

__device__ static inline unsigned load_be(const unsigned char *p) {
  return ((unsigned)p[0] << 24) | ((unsigned)p[1] << 16) | ((unsigned)p[2] << 8) | (unsigned)p[3];
}

extern "C" __global__ void sha256_blocks(const unsigned char *msg, unsigned *digest, int n) {
  int i = blockIdx_x * blockDim_x + threadIdx_x;
  if (i >= n)
    return;
  const unsigned char *m = msg + 64 * (long)i;
  unsigned w[16];
#pragma unroll
  for (int j = 0; j < 16; j++)
    w[j] = load_be(m + 4 * j);

  unsigned a = 0x6a09e667u, b = 0xbb67ae85u, c = 0x3c6ef372u, d = 0xa54ff53au;
  unsigned e = 0x510e527fu, f = 0x9b05688cu, g = 0x1f83d9abu, h = 0x5be0cd19u;
#pragma unroll 1
  for (int r = 0; r < 64; r += 16) {
#pragma unroll
    for (int j = 0; j < 16; j++) {
      if (r > 0) {
        unsigned w15 = w[(j + 1) & 15], w2 = w[(j + 14) & 15];
        unsigned s0 = rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 >> 3);
        unsigned s1 = rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 >> 10);
        w[j] += s0 + w[(j + 9) & 15] + s1;
      }
      unsigned S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      unsigned ch = (e & f) ^ (~e & g);
      unsigned t1 = h + S1 + ch + sha256_k[r + j] + w[j];
      unsigned S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      unsigned maj = (a & b) ^ (a & c) ^ (b & c);
      unsigned t2 = S0 + maj;
      h = g; g = f; f = e; e = d + t1;
      d = c; c = b; b = a; a = t1 + t2;
    }
  }
  unsigned *out = digest + 8 * (long)i;
  out[0] = a + 0x6a09e667u; out[1] = b + 0xbb67ae85u;
  out[2] = c + 0x3c6ef372u; out[3] = d + 0xa54ff53au;
  out[4] = e + 0x510e527fu; out[5] = f + 0x9b05688cu;
  out[6] = g + 0x1f83d9abu; out[7] = h + 0x5be0cd19u;
}
