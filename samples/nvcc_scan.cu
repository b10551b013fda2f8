// nvcc_scan.ptx is NOT generated from this file by any tool in this repository.
// It was written by hand to look like what nvcc 12 (NVVM back end) emits for this
// source with `nvcc -arch=sm_50 -ptx -lineinfo -O3 nvcc_scan.cu`: `.version 8.0`,
// mangled names (also of the block-scope `__shared__` array, declared inside the
// entry after nvcc's `// demoted variable` comment), `$L__BB0_N` labels, `.loc`
// lines, `ld.global.nc.v4.u32` / `st.global.v4.u32` for int4, a `bar.sync` loop
// closed by `@%p bra`, and a predicated store (`@%p st.global.u32`).
// regen.sh leaves it alone.
//
// The source it stands for (real CUDA, needs the CUDA headers to compile):

// Inclusive scan of int4 groups within one block (blockDim.x <= 256): each thread
// scans its 4 ints, the block scans the per-thread totals in shared memory
// (Hillis-Steele), and the last thread writes the block total.
__global__ void scan4(const int4 *__restrict__ in, int4 *__restrict__ out,
                      int *__restrict__ block_sums, int n4)
{
    __shared__ int s[256];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    int4 v = make_int4(0, 0, 0, 0);
    if (i < n4)
        v = in[i];
    v.y += v.x;
    v.z += v.y;
    v.w += v.z;
    s[t] = v.w;
    __syncthreads();
    for (int off = 1; off < blockDim.x; off <<= 1) {
        int add = (t >= off) ? s[t - off] : 0;
        __syncthreads();
        s[t] += add;
        __syncthreads();
    }
    int total = s[t];
    int prefix = total - v.w;
    if (i < n4)
        out[i] = make_int4(v.x + prefix, v.y + prefix, v.z + prefix, total);
    if (t == blockDim.x - 1)
        block_sums[blockIdx.x] = total;
}
