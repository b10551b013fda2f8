// Register-blocked SGEMM, C = alpha * A * B + beta * C (row-major, leading dimensions
// lda/ldb/ldc): a CTA of 8x8 threads computes a 32x32 tile of C; each thread keeps a
// 4x4 micro-tile of accumulators in registers. Per step of 8 along K, the CTA stages
// a 32x8 tile of A (stored transposed, As[k][m]) and an 8x32 tile of B in shared
// memory, each thread loading 4 elements of each (zero outside the matrices), then
// every thread does 8 x 16 fmas from 4 + 4 shared values per k. M, N, K need not be
// multiples of the tile sizes: loads and stores are bounds-checked.
#include "cuda_shim.h"

#define BM 32
#define BN 32
#define BK 8
#define TM 4
#define TN 4

extern "C" __global__ void sgemm_reg4x4(int M, int N, int K, float alpha, const float *A, int lda,
                                        const float *B, int ldb, float beta, float *C, int ldc) {
  __shared__ float As[BK][BM];
  __shared__ float Bs[BK][BN];
  int tx = threadIdx_x, ty = threadIdx_y;
  int tid = ty * 8 + tx;
  int row0 = blockIdx_y * BM, col0 = blockIdx_x * BN;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; i++)
#pragma unroll
    for (int j = 0; j < TN; j++)
      acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int l = 0; l < 4; l++) {
      int idx = tid + 64 * l;
      int am = idx / BK, ak = idx % BK;
      int gm = row0 + am, gk = k0 + ak;
      As[ak][am] = (gm < M && gk < K) ? A[gm * lda + gk] : 0.0f;
      int bk = idx / BN, bn = idx % BN;
      int gkb = k0 + bk, gn = col0 + bn;
      Bs[bk][bn] = (gkb < K && gn < N) ? B[gkb * ldb + gn] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; k++) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; i++)
        a[i] = As[k][ty * TM + i];
#pragma unroll
      for (int j = 0; j < TN; j++)
        b[j] = Bs[k][tx * TN + j];
#pragma unroll
      for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++)
          acc[i][j] = __builtin_fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; i++) {
    int gm = row0 + ty * TM + i;
#pragma unroll
    for (int j = 0; j < TN; j++) {
      int gn = col0 + tx * TN + j;
      if (gm < M && gn < N) {
        float *c = &C[gm * ldc + gn];
        *c = __builtin_fmaf(alpha, acc[i][j], beta * *c);
      }
    }
  }
}
