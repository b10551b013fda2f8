; Clamp, absolute value, negation and select on i32, f32 and f64, written
; directly in LLVM IR (compiled with llc-14 -march=nvptx64 -mcpu=sm_50).
; Produces min/max/abs/neg for integers and floats, setp + selp, and shows
; kernel arguments in addrspace(1) (global) without cvta.to.global.
;
; Per element i < n:
;   qi[i] = clamp(qi[i], lo, hi)                 (max.s32 / min.s32)
;   ai[i] = -(qi[i] * lo) (with the original qi)  (neg.s32)
;   f[i]  = x < 0 ? -(x * fmax) : min(|x|, fmax)  (neg/abs/min.f32, setp + selp)
;   d[i]  = max(-d[i], dlo)                       (neg/max.f64)

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.smin.i32(i32, i32)
declare i32 @llvm.smax.i32(i32, i32)
declare float @llvm.fabs.f32(float)
declare float @llvm.minnum.f32(float, float)
declare double @llvm.maxnum.f64(double, double)

define void @clamp_select(i32 addrspace(1)* %qi, i32 addrspace(1)* %ai,
                          float addrspace(1)* %f, double addrspace(1)* %d,
                          i32 %lo, i32 %hi, float %fmax, double %dlo, i32 %n) {
entry:
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %base = mul i32 %ctaid, %ntid
  %i = add i32 %base, %tid
  %inb = icmp slt i32 %i, %n
  br i1 %inb, label %body, label %exit

body:
  %idx = sext i32 %i to i64
  ; integers
  %pq = getelementptr inbounds i32, i32 addrspace(1)* %qi, i64 %idx
  %q = load i32, i32 addrspace(1)* %pq, align 4
  %q1 = call i32 @llvm.smax.i32(i32 %q, i32 %lo)
  %q2 = call i32 @llvm.smin.i32(i32 %q1, i32 %hi)
  store i32 %q2, i32 addrspace(1)* %pq, align 4
  %qm = mul i32 %q, %lo
  %qa = sub i32 0, %qm
  %pa = getelementptr inbounds i32, i32 addrspace(1)* %ai, i64 %idx
  store i32 %qa, i32 addrspace(1)* %pa, align 4
  ; f32
  %pf = getelementptr inbounds float, float addrspace(1)* %f, i64 %idx
  %x = load float, float addrspace(1)* %pf, align 4
  %neg = fcmp olt float %x, 0.0
  %xm = fmul float %x, %fmax
  %xh = fneg float %xm
  %xa = call float @llvm.fabs.f32(float %x)
  %xc = call float @llvm.minnum.f32(float %xa, float %fmax)
  %fr = select i1 %neg, float %xh, float %xc
  store float %fr, float addrspace(1)* %pf, align 4
  ; f64
  %pd = getelementptr inbounds double, double addrspace(1)* %d, i64 %idx
  %y = load double, double addrspace(1)* %pd, align 8
  %yn = fneg double %y
  %yc = call double @llvm.maxnum.f64(double %yn, double %dlo)
  store double %yc, double addrspace(1)* %pd, align 8
  br label %exit

exit:
  ret void
}

!nvvm.annotations = !{!0}
!0 = !{void (i32 addrspace(1)*, i32 addrspace(1)*, float addrspace(1)*, double addrspace(1)*, i32, i32, float, double, i32)* @clamp_select, !"kernel", i32 1}
