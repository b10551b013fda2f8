// nvcc_particles.ptx is NOT generated from this file by any tool in this repository.
// It was written by hand to look like what nvcc 12 (NVVM back end) emits for this
// source with `nvcc -arch=sm_50 -ptx -lineinfo -O3 nvcc_particles.cu`: `.version 8.0`,
// two entries and one `__noinline__` device function in one file (`.func` with
// `func_retval0`, called through nvcc's `{ // callseq` block with `st.param` /
// `call.uni` / `ld.param`), a struct passed by value (`.param .align 4 .b8 ...[16]`,
// read with `ld.param.f32 [name+offset]`), float2 traffic (`ld.global.v2.f32`,
// `ld.global.nc.v2.f32`, `st.global.v2.f32`), `@!%p bra`, `selp.u32`, `.loc` lines and a
// trailing `.file`. regen.sh leaves it alone.
//
// The source it stands for (real CUDA, needs the CUDA headers to compile):

struct Box { float lo_x, lo_y, hi_x, hi_y; };

// Mirror x back into [lo, hi] (one reflection).
__device__ __noinline__ float reflect(float x, float lo, float hi)
{
    if (x < lo)
        return 2.0f * lo - x;
    if (x > hi)
        return 2.0f * hi - x;
    return x;
}

// One explicit Euler step of particles bouncing inside `box`.
__global__ void advance(float2 *pos, const float2 *__restrict__ vel, Box box, float dt, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float2 p = pos[i];
    float2 v = vel[i];
    p.x = reflect(p.x + dt * v.x, box.lo_x, box.hi_x);
    p.y = reflect(p.y + dt * v.y, box.lo_y, box.hi_y);
    pos[i] = p;
}

// flags[i] = 1 if particle i is inside `box` (bounds included), else 0.
__global__ void count_inside(const float2 *__restrict__ pos, Box box, int *__restrict__ flags, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float2 p = pos[i];
        flags[i] = (p.x >= box.lo_x && p.x <= box.hi_x && p.y >= box.lo_y && p.y <= box.hi_y) ? 1 : 0;
    }
}
