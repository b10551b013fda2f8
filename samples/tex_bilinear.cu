// Bilinear image resize through a CUDA texture object (issue 18): thread (x, y) of the
// destination samples the source texture at the centre of its pixel scaled to source
// coordinates, and the texture unit's linear filter does the bilinear interpolation
// (cudaFilterModeLinear, unnormalized coordinates, one f32 channel). Only the first
// component of the fetch is used, so the write mask narrows to it (ptxas: TEXS ... R).
//
// tex2D_float is what clang's __clang_cuda_texture_intrinsics.h expands
// tex2D<float>(obj, x, y) to (its __IMPL_F1 macro: inline `tex.2d.v4.f32.f32` on the
// object's .u64 handle); -nocudainc leaves that header out, so it is spelled here.
// Generated: clang-14 -x cuda --cuda-device-only --cuda-gpu-arch=sm_50 -nocudainc -nocudalib -O3 -S tex_bilinear.cu -o tex_bilinear.ptx
#include "cuda_shim.h"

typedef unsigned long long cudaTextureObject_t;

static __device__ inline float tex2D_float(cudaTextureObject_t t, float x, float y) {
  float r, g, b, a;
  asm("tex.2d.v4.f32.f32 {%0, %1, %2, %3}, [%4, {%5, %6}];"
      : "=f"(r), "=f"(g), "=f"(b), "=f"(a)
      : "l"(t), "f"(x), "f"(y));
  return r;
}

extern "C" __global__ void tex_bilinear(cudaTextureObject_t src, float *dst, int dst_w, int dst_h,
                                        float scale_x, float scale_y) {
  int x = blockIdx_x * blockDim_x + threadIdx_x;
  int y = blockIdx_y * blockDim_y + threadIdx_y;
  if (x < dst_w && y < dst_h)
    dst[y * dst_w + x] = tex2D_float(src, (x + 0.5f) * scale_x, (y + 0.5f) * scale_y);
}
