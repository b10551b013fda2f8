; OpenCL-style texturing in independent mode (`.target sm_50, texmode_independent`):
; the NVVM intrinsics that an OpenCL implementation lowers `read_imagef(img, smp, coord)`
; to (clang-14's `-target nvptx64-nvidia-nvcl` leaves read_imagef as a call to an
; undefined function, so the sample is written at this level).
;
; resize: out[i] = read_imagef(src, smp, (float2)(i * sx, 0.5)).x for i < n, through a
; `.global .texref` and a `.global .samplerref` (one bound constant-bank word for the
; pair). The sampler value 18 is LLVM NVPTX's encoding of clamp_to_edge, linear,
; unnormalized coordinates (`.samplerref smp = { addr_mode_0 = clamp_to_edge, ...,
; filter_mode = linear, force_unnormalized_coords = 1 }`).
target triple = "nvptx64-nvidia-nvcl"

@src = internal addrspace(1) global i64 0, align 8
@smp = internal addrspace(1) global i32 18, align 8

declare { float, float, float, float } @llvm.nvvm.tex.2d.v4f32.f32(i64, i64, float, float)
declare i64 @llvm.nvvm.texsurf.handle.internal.p1i64(i64 addrspace(1)*)
declare i64 @llvm.nvvm.texsurf.handle.internal.p1i32(i32 addrspace(1)*)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()

define void @resize(float addrspace(1)* %out, i32 %n, float %sx) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %cta = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %cta, %ntid
  %i = add i32 %base, %tid
  %in = icmp slt i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %t = call i64 @llvm.nvvm.texsurf.handle.internal.p1i64(i64 addrspace(1)* @src)
  %s = call i64 @llvm.nvvm.texsurf.handle.internal.p1i32(i32 addrspace(1)* @smp)
  %fi = sitofp i32 %i to float
  %x = fmul float %fi, %sx
  %v = call { float, float, float, float } @llvm.nvvm.tex.2d.v4f32.f32(i64 %t, i64 %s, float %x, float 0.5)
  %r = extractvalue { float, float, float, float } %v, 0
  %p = getelementptr float, float addrspace(1)* %out, i32 %i
  store float %r, float addrspace(1)* %p
  br label %done
done:
  ret void
}

!nvvm.annotations = !{!0, !2, !3}
!0 = !{void (float addrspace(1)*, i32, float)* @resize, !"kernel", i32 1}
!2 = !{i64 addrspace(1)* @src, !"texture", i32 1}
!3 = !{i32 addrspace(1)* @smp, !"sampler", i32 18}
