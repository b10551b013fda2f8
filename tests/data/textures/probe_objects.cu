#define __global__ __attribute__((global))
typedef unsigned long long cudaTextureObject_t;
typedef unsigned long long cudaSurfaceObject_t;
struct __attribute__((aligned(16))) float4 { float x, y, z, w; };
extern "C" __global__ void tex2d(cudaTextureObject_t t, float4 *out, float x, float y) {
  float4 r;
  asm volatile("tex.2d.v4.f32.f32 {%0,%1,%2,%3}, [%4, {%5,%6}];" : "=f"(r.x),"=f"(r.y),"=f"(r.z),"=f"(r.w) : "l"(t),"f"(x),"f"(y));
  *out = r;
}
extern "C" __global__ void tex2d_x(cudaTextureObject_t t, float *out, float x, float y) {
  float4 r;
  asm volatile("tex.2d.v4.f32.f32 {%0,%1,%2,%3}, [%4, {%5,%6}];" : "=f"(r.x),"=f"(r.y),"=f"(r.z),"=f"(r.w) : "l"(t),"f"(x),"f"(y));
  *out = r.x;
}
extern "C" __global__ void tex1d(cudaTextureObject_t t, float4 *out, float x) {
  float4 r;
  asm volatile("tex.1d.v4.f32.f32 {%0,%1,%2,%3}, [%4, {%5}];" : "=f"(r.x),"=f"(r.y),"=f"(r.z),"=f"(r.w) : "l"(t),"f"(x));
  *out = r;
}
extern "C" __global__ void tex3d(cudaTextureObject_t t, float4 *out, float x, float y, float z) {
  float4 r;
  asm volatile("tex.3d.v4.f32.f32 {%0,%1,%2,%3}, [%4, {%5,%6,%7,%7}];" : "=f"(r.x),"=f"(r.y),"=f"(r.z),"=f"(r.w) : "l"(t),"f"(x),"f"(y),"f"(z));
  *out = r;
}
extern "C" __global__ void tld4r(cudaTextureObject_t t, float4 *out, float x, float y) {
  float4 r;
  asm volatile("tld4.r.2d.v4.f32.f32 {%0,%1,%2,%3}, [%4, {%5,%6}];" : "=f"(r.x),"=f"(r.y),"=f"(r.z),"=f"(r.w) : "l"(t),"f"(x),"f"(y));
  *out = r;
}
extern "C" __global__ void txqw(cudaTextureObject_t t, int *out) {
  int w;
  asm volatile("txq.width.b32 %0, [%1];" : "=r"(w) : "l"(t));
  *out = w;
}
extern "C" __global__ void suld2d(cudaSurfaceObject_t s, int *out, int x, int y) {
  int v;
  asm volatile("suld.b.2d.b32.trap {%0}, [%1, {%2,%3}];" : "=r"(v) : "l"(s),"r"(x),"r"(y));
  *out = v;
}
extern "C" __global__ void sust2d(cudaSurfaceObject_t s, int v, int x, int y) {
  asm volatile("sust.b.2d.b32.trap [%0, {%1,%2}], {%3};" :: "l"(s),"r"(x),"r"(y),"r"(v) : "memory");
}
extern "C" __global__ void suld1d(cudaSurfaceObject_t s, int *out, int x) {
  int v;
  asm volatile("suld.b.1d.b32.trap {%0}, [%1, {%2}];" : "=r"(v) : "l"(s),"r"(x));
  *out = v;
}
extern "C" __global__ void sust1d(cudaSurfaceObject_t s, int v, int x) {
  asm volatile("sust.b.1d.b32.trap [%0, {%1}], {%2};" :: "l"(s),"r"(x),"r"(v) : "memory");
}
