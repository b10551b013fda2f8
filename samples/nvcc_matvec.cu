// nvcc_matvec.ptx is NOT generated from this file by any tool in this repository.
// It was written by hand to look like what nvcc 12 (NVVM back end) emits for this
// source with `nvcc -arch=sm_50 -ptx -lineinfo -O3 nvcc_matvec.cu`: `.version 8.0`,
// mangled entry name, `$L__BB0_N` labels, `// .globl`, `.loc` lines, `ld.param` +
// `cvta.to.global`, `mul.wide.s32`, `ld.global.nc` (const __restrict__) and a counted
// loop closed by `@%p bra`, with a trailing `.file` directive. regen.sh leaves it alone.
//
// The source it stands for (real CUDA, needs the CUDA headers to compile):

// y = A x for a row-major rows x cols matrix: one thread per row.
__global__ void matvec(const float *__restrict__ A, const float *__restrict__ x,
                       float *__restrict__ y, int rows, int cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    const float *a = A + row * cols;
    float sum = 0.0f;
#pragma unroll 1
    for (int j = 0; j < cols; ++j)
        sum = fmaf(a[j], x[j], sum);
    y[row] = sum;
}
