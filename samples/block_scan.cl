// Inclusive prefix sum (Hillis-Steele) of 256-element blocks in __local memory
// (OpenCL C). Work-group size must be 256. Barriers use the NVVM builtin
// __nvvm_bar_sync(0) (bar.sync 0) and indices come from NVVM special registers,
// because barrier()/get_local_id() are not defined for nvptx64-nvidia-nvcl.
#define WG 256

__kernel void block_scan(__global const int *in, __global int *out, __global int *block_totals) {
  __local int buf[2][WG];
  int lid = __nvvm_read_ptx_sreg_tid_x();
  int grp = __nvvm_read_ptx_sreg_ctaid_x();
  int gid = grp * WG + lid;

  int src = 0;
  buf[0][lid] = in[gid];
  __nvvm_bar_sync(0);
  for (int offset = 1; offset < WG; offset <<= 1) {
    int v = buf[src][lid];
    if (lid >= offset)
      v += buf[src][lid - offset];
    buf[src ^ 1][lid] = v;
    src ^= 1;
    __nvvm_bar_sync(0);
  }
  int total = buf[src][lid];
  out[gid] = total;
  if (lid == WG - 1)
    block_totals[grp] = total;
}
