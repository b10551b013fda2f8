// Minimal stand-in for the CUDA headers, for compiling the samples with
//   clang-14 -x cuda --cuda-device-only --cuda-gpu-arch=sm_50 -nocudainc -nocudalib -O3 -S
// No CUDA installation is needed: everything maps onto clang attributes and NVVM builtins.
#pragma once

#define __global__   __attribute__((global))
#define __device__   __attribute__((device))
#define __shared__   __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __noinline__ __attribute__((noinline))

#define threadIdx_x __nvvm_read_ptx_sreg_tid_x()
#define threadIdx_y __nvvm_read_ptx_sreg_tid_y()
#define threadIdx_z __nvvm_read_ptx_sreg_tid_z()
#define blockIdx_x  __nvvm_read_ptx_sreg_ctaid_x()
#define blockIdx_y  __nvvm_read_ptx_sreg_ctaid_y()
#define blockIdx_z  __nvvm_read_ptx_sreg_ctaid_z()
#define blockDim_x  __nvvm_read_ptx_sreg_ntid_x()
#define blockDim_y  __nvvm_read_ptx_sreg_ntid_y()
#define blockDim_z  __nvvm_read_ptx_sreg_ntid_z()
#define gridDim_x   __nvvm_read_ptx_sreg_nctaid_x()
#define gridDim_y   __nvvm_read_ptx_sreg_nctaid_y()
#define gridDim_z   __nvvm_read_ptx_sreg_nctaid_z()

// __syncthreads() is a clang builtin in CUDA mode (lowers to bar.sync 0);
// __nvvm_bar_sync(0) is equivalent.

struct __attribute__((aligned(16))) float4 { float x, y, z, w; };
struct __attribute__((aligned(8)))  int2   { int x, y; };

// Atomics and warp-level primitives (issue 7), as NVVM builtins clang-14 accepts for
// .version 4.0 output: the *_sync names map onto the pre-Volta shfl/vote forms (clang-14
// emits shfl.sync/vote.sync only for PTX >= 6.0), so their mask must be FULL_MASK.
// atomicAdd & co. return the old value; the _block/_system scopes are not used.
static __device__ inline unsigned atomicAdd(unsigned *p, unsigned v) {
  return __nvvm_atom_add_gen_i((int *)p, (int)v);
}
static __device__ inline int atomicAdd(int *p, int v) { return __nvvm_atom_add_gen_i(p, v); }
static __device__ inline float atomicAdd(float *p, float v) { return __nvvm_atom_add_gen_f(p, v); }
static __device__ inline int atomicMax(int *p, int v) { return __nvvm_atom_max_gen_i(p, v); }
static __device__ inline int atomicCAS(int *p, int cmp, int v) {
  return __nvvm_atom_cas_gen_i(p, cmp, v);
}
static __device__ inline unsigned atomicCAS(unsigned *p, unsigned cmp, unsigned v) {
  return (unsigned)__nvvm_atom_cas_gen_i((int *)p, (int)cmp, (int)v);
}
#define FULL_MASK 0xffffffffu
static __device__ inline int __shfl_down_sync(unsigned mask, int v, int delta) {
  return __nvvm_shfl_down_i32(v, delta, 0x1f);
}
static __device__ inline float __shfl_down_sync(unsigned mask, float v, int delta) {
  return __nvvm_shfl_down_f32(v, delta, 0x1f);
}
static __device__ inline int __shfl_xor_sync(unsigned mask, int v, int lane_mask) {
  return __nvvm_shfl_bfly_i32(v, lane_mask, 0x1f);
}
static __device__ inline unsigned __ballot_sync(unsigned mask, int pred) {
  // clang-14 selects vote.ballot only with PTX 6.0 (.sync forms); like the CUDA 8 headers'
  // __ballot, use inline PTX (the mask is not passed: the whole warp takes part).
  unsigned r;
  asm volatile("{ .reg .pred p; setp.ne.u32 p, %1, 0; vote.ballot.b32 %0, p; }" : "=r"(r) : "r"(pred));
  return r;
}
static __device__ inline int __popc(unsigned x) { return __builtin_popcount(x); }
static __device__ inline float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
static __device__ inline int __float_as_int(float x) { return __builtin_bit_cast(int, x); }
#define laneId (__nvvm_read_ptx_sreg_tid_x() & 31)
