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
