// nvcc_style.ptx is NOT generated from this file by any tool in this repository.
// It was written by hand to look like what nvcc 12 (NVVM back end) emits for this
// source with `nvcc -arch=sm_50 -ptx -lineinfo -O3 nvcc_style.cu`: `.version 8.0`,
// mangled entry names, `$L__BB0_N` labels, `// .globl` comments, `.loc` lines and a
// trailing `.file` directive. regen.sh leaves it alone.
//
// The source it stands for (real CUDA, needs the CUDA headers to compile):

__global__ void scale_add(const float *x, const float *y, float *out, float alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = alpha * x[i] + y[i];
    }
}
