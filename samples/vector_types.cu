// float4 and int2 vector memory accesses: ld/st.global.v4.f32 and .v2.u32.
// The float4 input is `const __restrict__`, which lets clang use the read-only
// (non-coherent) path, ld.global.nc.v4.f32; the int2 input is a plain pointer.
#include "cuda_shim.h"

extern "C" __global__ void vector_types(const float4 *__restrict__ pos, const int2 *cell,
                                        float4 *out, int2 *cell_out, float scale, int n) {
  int i = blockIdx_x * blockDim_x + threadIdx_x;
  if (i >= n)
    return;
  float4 p = pos[i];
  int2 c = cell[i];
  float4 r;
  r.x = p.x * scale + (float)c.x;
  r.y = p.y * scale + (float)c.y;
  r.z = p.z * scale;
  r.w = p.w;
  out[i] = r;
  int2 d;
  d.x = c.y + 1;
  d.y = c.x - 1;
  cell_out[i] = d;
}
