// Matrix transpose through a 32x33 shared-memory tile (the +1 column of padding
// avoids shared-memory bank conflicts). Launch with 32x8 threads per block;
// each thread moves TILE/ROWS = 4 elements. width/height need not be multiples of 32.
#include "cuda_shim.h"

#define TILE 32
#define ROWS 8

extern "C" __global__ void transpose_tiled(float *out, const float *in, int width, int height) {
  __shared__ float tile[TILE][TILE + 1];

  int x = blockIdx_x * TILE + threadIdx_x;
  int y = blockIdx_y * TILE + threadIdx_y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < width && y + j < height)
      tile[threadIdx_y + j][threadIdx_x] = in[(y + j) * width + x];

  __syncthreads();

  x = blockIdx_y * TILE + threadIdx_x;   // transposed block offset
  y = blockIdx_x * TILE + threadIdx_y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < height && y + j < width)
      out[(y + j) * height + x] = tile[threadIdx_x][threadIdx_y + j];
}
