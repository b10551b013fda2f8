// All-pairs n-body acceleration step: each CTA walks the bodies in tiles of blockDim.x
// staged in shared memory; each thread accumulates the softened gravitational
// acceleration of its body (rsqrt.approx.f32 via __nvvm_rsqrt_approx_f, fma), then
// integrates velocity and position and also reports the speed (sqrt.rn.f32 via
// __builtin_sqrtf). Tile size = blockDim.x (at most 256); n need not be a multiple of it.
#include "cuda_shim.h"

__shared__ float4 tile[256];

extern "C" __global__ void nbody(const float4 *pos, float4 *vel, float4 *new_pos, float *speed, int n,
                                 float dt, float eps2) {
  int i = blockIdx_x * blockDim_x + threadIdx_x;
  float4 p = i < n ? pos[i] : float4{0.0f, 0.0f, 0.0f, 0.0f};
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (int base = 0; base < n; base += blockDim_x) {
    int j = base + threadIdx_x;
    tile[threadIdx_x] = j < n ? pos[j] : float4{0.0f, 0.0f, 0.0f, 0.0f};
    __syncthreads();
    int count = n - base < (int)blockDim_x ? n - base : (int)blockDim_x;
    for (int k = 0; k < count; ++k) {
      float4 q = tile[k];
      float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
      float r2 = dx * dx + dy * dy + dz * dz + eps2;
      float inv = __nvvm_rsqrt_approx_f(r2);
      float s = q.w * inv * inv * inv;
      ax += dx * s;
      ay += dy * s;
      az += dz * s;
    }
    __syncthreads();
  }
  if (i >= n)
    return;
  float4 v = vel[i];
  v.x += ax * dt;
  v.y += ay * dt;
  v.z += az * dt;
  vel[i] = v;
  new_pos[i] = float4{p.x + v.x * dt, p.y + v.y * dt, p.z + v.z * dt, p.w};
  speed[i] = __builtin_sqrtf(v.x * v.x + v.y * v.y + v.z * v.z);
}
