// Read-modify-write of a 2D surface through a CUDA surface object (issue 18): thread
// (x, y) loads its 32-bit texel with surf2Dread (suld.b.2d.b32.clamp), stores
// texel * 3 + (x ^ y) with surf2Dwrite (sust.b.2d.b32.trap) at byte offset x * 4, and a
// second, row-mirrored store for the threads of row 0 into the last row with .zero
// (out-of-range stores dropped). Each texel is written by one thread only.
//
// surf2Dread/surf2Dwrite are what clang's __clang_cuda_texture_intrinsics.h expands them
// to (inline `suld.b.2d`/`sust.b.2d` on the object's .u64 handle); -nocudainc leaves that
// header out, so they are spelled here.
// Generated: clang-14 -x cuda --cuda-device-only --cuda-gpu-arch=sm_50 -nocudainc -nocudalib -O3 -S surf_write.cu -o surf_write.ptx
#include "cuda_shim.h"

typedef unsigned long long cudaSurfaceObject_t;

static __device__ inline unsigned surf2Dread_u32(cudaSurfaceObject_t s, int x, int y) {
  unsigned v;
  asm volatile("suld.b.2d.b32.clamp {%0}, [%1, {%2, %3}];" : "=r"(v) : "l"(s), "r"(x), "r"(y));
  return v;
}

static __device__ inline void surf2Dwrite_u32(unsigned v, cudaSurfaceObject_t s, int x, int y) {
  asm volatile("sust.b.2d.b32.trap [%0, {%1, %2}], {%3};" : : "l"(s), "r"(x), "r"(y), "r"(v) : "memory");
}

static __device__ inline void surf2Dwrite_u32_zero(unsigned v, cudaSurfaceObject_t s, int x, int y) {
  asm volatile("sust.b.2d.b32.zero [%0, {%1, %2}], {%3};" : : "l"(s), "r"(x), "r"(y), "r"(v) : "memory");
}

extern "C" __global__ void surf_write(cudaSurfaceObject_t s, int w, int h) {
  int x = blockIdx_x * blockDim_x + threadIdx_x;
  int y = blockIdx_y * blockDim_y + threadIdx_y;
  if (x < w && y < h - 1) {
    unsigned v = surf2Dread_u32(s, x * 4, y);
    surf2Dwrite_u32(v * 3u + (unsigned)(x ^ y), s, x * 4, y);
  }
  // Row h - 1 gets row 0's x index; columns past w (x < w + 2) are dropped by .zero.
  if (y == 0 && x < w + 2)
    surf2Dwrite_u32_zero(0x5000u + (unsigned)x, s, x * 4, h - 1);
}
