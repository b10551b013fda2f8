// Double-precision a*x + y (OpenCL C). Thread index from NVVM builtins, because
// get_global_id() would be an undefined external function on nvptx64-nvidia-nvcl.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

__kernel void daxpy(int n, double a, __global const double *x, __global double *y) {
  int i = __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x()
        + __nvvm_read_ptx_sreg_tid_x();
  if (i < n)
    y[i] = a * x[i] + y[i];
}
