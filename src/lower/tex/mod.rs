//! Texture and surface instructions (`tex`, `tld4`, `txq`, `suld`, `sust`; issue 18),
//! lowered as ptxas 11.8 `-arch=sm_50 -O3` does (docs/textures.md §1, probes in
//! `tests/data/textures/`):
//!
//! * a handle that is a whole `.u64` kernel parameter loaded with `ld.param` names the
//!   texture by its constant-bank-0 word `(0x140 + offset) / 4` (the **bound** forms
//!   `TEXS`, `TLDS.LZ`, `TLD4S`, `TXQ`, `SULD ..., 0x50`); any other handle register is
//!   used **bindless** with its low 32 bits (`TEX.B`, `TLD4.B`, `TXQ.B`, `SULD ..., Rh`);
//! * `tex.1d` with `.f32` coordinates is a 2D fetch at y = 0 (`MOV R5, RZ` before
//!   `TEXS`/`TEX.B`); with `.s32` coordinates a 1D texel fetch (`TLDS.LZ ... 1D` with `Rb`
//!   = RZ, `TLD.LZ`/`TLD.B.LZ ... 1D`; docs/textures.md §1.7);
//! * `tex.level` (`.f32` coordinates) is `TEXS.LL ... 2D` with x, y in the pair `Ra` and
//!   the level in `Rb` (1D at y = 0), `TEX.LL` with the level in `Rb` (3D, or a mask
//!   TEXS cannot name), `TEX.B.LL` with `{handle, level}` in the pair `Rb` (§1.7);
//! * `tex.grad.{1d,2d}` (`.f32` coordinates) is `TXD ... 2D` with the gradients
//!   interleaved per axis in a quad `Rb` (1D at y = 0), bindless `TXD.B` with `{handle,
//!   x, y}` in `Ra` (docs/textures.md §1.11);
//! * `tex.level` with `.s32` coordinates is `TLD.LL.CL` (no short form; the level in
//!   `Rb`, bindless `{handle, level}`), `tex.level` of arrays `TEX.LL ... ARRAY_1D/2D`,
//!   `tex.grad` of arrays `TXD ... ARRAY_1D/2D` with x first and the index last, `tex.grad`
//!   with `.s32` coordinates the same `TXD` (1D: `TXD ... 1D` with a gradient pair), and
//!   `tld4` of `.a2d` `TLD4 ... ARRAY_2D` (docs/textures.md §1.12);
//! * `tex{.level}.cube`/`.acube` divide the direction by its largest magnitude (`FMNMX`, `MUFU.RCP`,
//!   `FMUL`) and fetch `TEXS`/`TEX ... CUBE`, `TEX ... ARRAY_CUBE`; `tex.2dms` is
//!   `TLDS.LZ.MS`/`TLD.LZ.MS` with the sample where `.LL` reads the level (§1.13);
//! * `tex.a1d`/`tex.a2d` clamp the array index (first) to 16 bits (`I2I.U16.U32.SAT`)
//!   and fetch `ARRAY_1D` (`TEX`/`TLD.LZ`/`TEX.B`, `{index, x}` in a pair, no short form)
//!   or `ARRAY_2D` (`TEXS`/`TLDS.LZ` with `{index, x}` in `Ra` and y in `Rb`, else the three
//!   in `Ra..`; docs/textures.md §1.10);
//! * the components written are the ones the PTX result vector names (a sink `_` is not
//!   written): `TEXS ... R` / `TEX.B ... 0x5`, packed into consecutive registers; after
//!   dead-code elimination [`mask::narrow`] drops the ones never read, and the opcode is
//!   the one ptxas picks for the mask ([`mask::fetch_op`]: bound `TEX`/`TLD.LZ`/`TLD4`
//!   where `TEXS`/`TLDS`/`TLD4S` cannot name it);
//! * `.s32` coordinates are `TLDS.LZ` (bound 2D/3D) or `TLD.B.LZ` (bindless), a fetch at
//!   level zero (ptxas 11.8 `probe_liveness.ptx` kernels i_3d, i_bindless);
//! * `txq{.level}.{width,height,depth}` and `suq.{width,height}` are `TXQ ...
//!   TEX_HEADER_DIMENSION` with mask 1, 2, 4 of `txq.level`'s level or level 0 (`MOV R0,
//!   RZ` as the level; bindless `{handle, level}` in a pair);
//! * `suld.b`/`sust.b` `.1d`/`.2d`/`.3d`/`.a1d`/`.a2d` (the array index last) of `.b8`, `.b16`, `.b32`, `.b64`, `.v2/.v4.b32`,
//!   `.v2.b64` are `SULD/SUST.D.BA.{1D,2D,3D,1D_ARRAY,2D_ARRAY}{.U8,.U16,,.64,.128}` with `.trap` → `.TRAP`,
//!   `.clamp` → no suffix, `.zero` → `.IGN`, coordinates in consecutive registers.
//!
//! Everything else is reported at the instruction as not supported yet, with what ptxas
//! does for it.

// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline"); this covers `mask` too.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

mod geometry;
pub mod mask;
mod query;
mod sampler;
mod surface;

use super::PARAM_BASE;
use super::ctx::{LResult, Lowerer};
use crate::diag::Diag;
use crate::ir::ParamSlot;
use crate::ptx::ast::FuncKind;
use crate::ptx::ast::{Ident, Instruction, Operand, VecElem};
use crate::ptx::texture::{self, Family, Geometry, Lod, TexOp};
use crate::ptx::types::ScalarType;
use crate::sass::instr::{Dst, Instr, RegRef, Src};
use crate::sass::op::{Op, TexDim};
use mask::Fetch;

/// The texture or surface a handle register names: a bank-0 word index (bound) or the
/// handle's low word (bindless).
#[derive(Clone, Copy)]
enum Handle {
    Bound(u32),
    Bindless(RegRef),
}

impl Lowerer<'_> {
    /// Lowers a texture or surface instruction (see the module docs), or reports it as not
    /// supported yet (a precise diagnostic at the instruction, never a panic).
    pub(super) fn lower_texture(&mut self, i: &Instruction) -> LResult<()> {
        // The classifier accepted the instruction, so it decodes (an error carries a diagnostic).
        let t = match texture::decode(i) {
            Ok(t) => t,
            Err(d) => match d.into_iter().next() {
                Some(first) => return self.fail(first),
                None => return self.error(i.span, "malformed texture instruction"),
            },
        };
        match t.family {
            Family::Tex => self.lower_tex(i, &t),
            Family::Tld4 => self.lower_tld4(i, &t),
            Family::Txq | Family::Suq => self.lower_txq(i, &t),
            Family::Suld | Family::Sust => self.lower_surface(i, &t),
            Family::Sured => self.lower_sured(i, &t),
        }
    }

    /// A diagnostic for a form this slice does not lower.
    fn tex_unsupported<T>(&mut self, i: &Instruction, what: &str, why: &str) -> LResult<T> {
        self.fail(
            Diag::error(i.opcode.span, format!("not supported yet: `{}`, {what}", text(i)))
                .label(why.to_string())
                .note("lowered: tex{.level}.{1d,2d,3d,a1d,a2d}.v4.{f32,s32,u32}.{f32,s32}, tex.grad.{1d,2d,a1d,a2d}.v4.{f32,s32,u32}.{f32,s32}, tex.{cube,acube}.v4.{f32,s32,u32}.f32, tex.2dms.v4.{f32,s32,u32}.s32, tld4.{r,g,b,a}.{2d,a2d,cube,acube}, txq{.level}.{width,height,depth}, suq.{width,height}, suld.b/sust.b .{1d,2d,3d,a1d,a2d}, sured.{b,p}, sust.p, tex/tld4 with a sampler in texmode_independent (docs/textures.md §2)"),
        )
    }

    /// The texture named by `image`: bound when it is a register loaded from a whole
    /// kernel parameter, bindless otherwise.
    fn tex_handle(&mut self, image: &Ident) -> LResult<Handle> {
        let key = self.scoped(&image.name);
        if self.lookup_reg_type(&key).is_none()
            && let Some(&surface) = self.layout.refs.get(&image.name)
        {
            return self.tex_ref(image, surface).map(Handle::Bound);
        }
        let r = self.ptx_reg(image)?;
        if r.ty.bits() != 64 {
            return self.fail(
                Diag::error(image.span, format!("the texture or surface `{}` must be a `.u64` handle", image.name))
                    .label(format!("a {}-bit register", r.ty.bits()))
                    .note("PTX ISA 9.7.9.3: `a` is a `.texref`/`.surfref` or a `.u64` register holding a handle"),
            );
        }
        Ok(match self.facts.kernel_params.get(&key) {
            Some(&o) => Handle::Bound(o / 4),
            None => Handle::Bindless(RegRef { reg: r.reg, comp: 0, n: 1 }),
        })
    }

    /// The constant-bank-0 word index of the reference `image` (a `.surfref` when
    /// `surface`) in this kernel. As ptxas 11.8 does (docs/textures.md §1.1,
    /// `probe_texref.ptx`), each reference the kernel uses gets one 4-byte word, in order
    /// of first use, from the first 4-aligned offset after the parameters (0x140 with
    /// none); the word is recorded as a [`ParamSlot`] of type `.texref`/`.surfref` (the
    /// executors find the image by its name there; `ptxas` has the driver write the
    /// header index through `R_CUDA_TEX_HEADER_INDEX`). A reference in a device function
    /// is rejected: ptxas specialises the callee to its one kernel's word, and every
    /// `.func` with a body is also lowered on its own here, where no kernel gives a word.
    fn tex_ref(&mut self, image: &Ident, surface: bool) -> LResult<u32> {
        let ty = if surface { ".surfref" } else { ".texref" };
        if self.f.kind != FuncKind::Entry {
            return self.fail(
                Diag::error(image.span, format!("not supported yet: the `{ty}` `{}` in a device function", image.name))
                    .label(format!("a `{ty}` in a `.func`"))
                    .note("ptxas 11.8 gives the callee its kernel's constant-bank word (docs/textures.md §1.1, probe_texref_func.ptx); ptx2sass lowers references in kernels only"),
            );
        }
        if let Some(p) = self.f.params.iter().find(|p| p.name == image.name && p.ty == ty) {
            return Ok(p.offset / 4);
        }
        let end = self.f.params.iter().map(|p| p.offset.saturating_add(p.size)).fold(PARAM_BASE, u32::max);
        // At most 0x1100 bytes of parameters (`ptx::limits`) and a word per reference.
        let offset = end.div_ceil(4).saturating_mul(4);
        self.f.params.push(ParamSlot { name: image.name.clone(), ty: ty.to_string(), offset, size: 4 });
        Ok(offset / 4)
    }

    /// The 32-bit values of a coordinate vector (registers or immediates, in registers).
    fn tex_coords(&mut self, op: &Operand) -> LResult<Vec<Src>> {
        let elems: Vec<Operand> = match op {
            Operand::Vector(v, _) => v
                .iter()
                .map(|e| match e {
                    VecElem::Reg(r) => Operand::Name { name: r.clone(), component: None, negated: false, span: r.span },
                    VecElem::Imm(m) => Operand::Imm(*m),
                    VecElem::Sink(s) => {
                        Operand::Imm(crate::ptx::ast::Immediate { value: crate::ptx::ast::ImmValue::Int(0), span: *s })
                    }
                })
                .collect(),
            other => vec![other.clone()],
        };
        let mut out = vec![];
        for e in &elems {
            let s = self.src32(e)?;
            out.push(self.in_reg(s));
        }
        Ok(out)
    }

    /// Builds `n` consecutive registers from `parts` (padded with `RZ`); one part is used
    /// as it is.
    fn tex_join(&mut self, parts: &[Src], n: u8) -> Src {
        if n == 1 {
            return parts.first().copied().unwrap_or_else(Src::rz);
        }
        let mut srcs: Vec<Src> = parts.iter().copied().take(n as usize).collect();
        while srcs.len() < n as usize {
            srcs.push(Src::rz());
        }
        let t = self.tmp(n);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(t, n)], srcs));
        Src::reg(RegRef::new(t, n))
    }

    /// A register holding zero that stays a register (ptxas moves `RZ` into the operand:
    /// `MOV R5, RZ` before `TEXS` of a 1D fetch, `MOV R0, RZ` as `TXQ`'s level).
    /// (`MOV32I t, 0x0`: copy propagation forwards a `MOV t, RZ` into the operand.)
    fn tex_zero(&mut self) -> Src {
        let t = self.tmp(1);
        self.op(Op::Mov32i, Dst::reg(t, 1), vec![Src::imm(0)]);
        Src::r32(t)
    }

    /// The PTX result elements of `op` (`None` for a sink), at most `n`.
    fn tex_results(&mut self, op: &Operand) -> Vec<Option<Ident>> {
        match op {
            Operand::Vector(v, _) => v
                .iter()
                .map(|e| match e {
                    VecElem::Reg(r) => Some(r.clone()),
                    _ => None,
                })
                .collect(),
            Operand::Name { name, .. } => vec![Some(name.clone())],
            _ => vec![],
        }
    }

    /// Writes the packed components of a fetch to the PTX result registers: `regs` lists,
    /// for each written component in x, y, z, w order, the register holding it.
    fn tex_write(&mut self, elems: &[Option<Ident>], regs: &[(usize, RegRef)], ty: ScalarType) -> LResult<()> {
        for (k, r) in regs {
            if let Some(Some(id)) = elems.get(*k) {
                let p = self.ptx_reg(id)?;
                self.write_ptx(p, Src::reg(*r), ty)?;
            }
        }
        Ok(())
    }

    fn lower_tex(&mut self, i: &Instruction, t: &TexOp) -> LResult<()> {
        let int = t.ctype == Some(ScalarType::S32);
        match t.lod {
            Lod::Auto | Lod::Level => {}
            Lod::Base => {
                return self.tex_unsupported(i, "a fetch at the base level", "`tex.base` is not probed with ptxas");
            }
            Lod::Grad if t.geometry == Some(Geometry::D3) => {
                return self.tex_unsupported(
                    i,
                    "a 3D texture fetch with gradients",
                    "ptxas 11.8 has no 3D `TXD`: it emulates it over the lane quad (`SHFL.IDX`, `FSWZADD`, `TEX.NDV ... 3D` four times; docs/textures.md §1.11), not modelled",
                );
            }
            Lod::Grad => {}
        }
        let dim = match t.geometry {
            // `.s32` 1D is a 1D texel fetch (ptxas 11.8 `TLDS.LZ.P R6, R4, R4, 0x50, 1D,
            // RGBA`, `TLD.LL.CL.P R4, R4, R5, 0x50, 1D, 0xf`, and `TXD.P R4, R4, R6, 0x50,
            // 1D, 0xf` with the gradient pair for `tex.grad.1d.v4.f32.s32`); `.f32` 1D a 2D
            // fetch at y = 0 (`MOV R5, RZ` then `TEXS ... 2D`, `TXD ... 2D`).
            Some(Geometry::D1) if int => TexDim::D1,
            Some(Geometry::D1 | Geometry::D2) => TexDim::D2,
            Some(Geometry::D3) => TexDim::D3,
            // Arrays at every level of detail (ptxas 11.8 `TEX.LL ... ARRAY_1D/2D`,
            // `TLD.LL.CL ... ARRAY_2D`, `TXD ... ARRAY_1D/2D`: `probe_geometries.ptx`).
            Some(Geometry::A1d) => TexDim::A1,
            Some(Geometry::A2d) => TexDim::A2,
            // `{sample, x, y, _}`: a 2D texel fetch of one sample (ptxas 11.8 `TLDS.LZ.MS
            // ... 2D`, `TLD.LZ.MS`, `TLD.B.LZ.MS`; `probe_multisample.ptx`, §1.13).
            Some(Geometry::D2ms) => TexDim::D2,
            // Cube maps (`.f32` coordinates, implicit level): the direction divided by its
            // largest magnitude (`lower_cube`), `TEXS`/`TEX ... CUBE`, `TEX ... ARRAY_CUBE`.
            // `tex.level.cube`: `TEXS.LL ... CUBE` with `{z', level}` in the pair Rb, else
            // `TEX.LL`/`TEX.B.LL ... CUBE/ARRAY_CUBE` (`probe_cube.ptx` lcube*, lacube*).
            Some(Geometry::Cube) if matches!(t.lod, Lod::Auto | Lod::Level) && !int => TexDim::Cube,
            Some(Geometry::Acube) if matches!(t.lod, Lod::Auto | Lod::Level) && !int => TexDim::ACube,
            Some(Geometry::Cube | Geometry::Acube) => {
                return self.tex_unsupported(
                    i,
                    "a cube texture fetch with gradients or integer coordinates",
                    "ptxas 11.8: the lane-quad emulation for `.grad` (docs/textures.md §1.13); tex{.level}.cube and tex{.level}.acube are lowered",
                );
            }
            Some(Geometry::A2dms) => {
                return self.tex_unsupported(
                    i,
                    "a multisample array texture fetch",
                    "ptxas 11.8 clamps the second coordinate as the array index and reads the first as the sample (`TLD.LZ.MS ... ARRAY_2D`, docs/textures.md §1.13), against the PTX ISA's `{index, sample, x, y}`: not lowered until that is resolved",
                );
            }
            _ => {
                return self.tex_unsupported(
                    i,
                    "a cube or multisample texture fetch",
                    "only .1d, .2d, .3d, .a1d and .a2d are lowered",
                );
            }
        };
        let (dty, cty) = (t.dtype.unwrap_or(ScalarType::F32), t.ctype.unwrap_or(ScalarType::F32));
        if !matches!(dty, ScalarType::F32 | ScalarType::S32 | ScalarType::U32) {
            return self.tex_unsupported(
                i,
                "a half-precision texture fetch",
                "only .f32, .s32 and .u32 results are lowered",
            );
        }
        let (Some(res), Some(Operand::Texture { image, parts, .. })) = (i.operands.first(), i.operands.get(1)) else {
            return self.error(i.span, "malformed texture instruction");
        };
        // Independent mode: `[t, s, {c}]` (`sampler`).
        let handle = self.tex_sampled(i, image, parts)?;
        // `tex.grad` with `.s32` coordinates is `TXD` as with `.f32`: ptxas 11.8 passes the
        // integer registers unconverted, their bits read as floats (docs/textures.md §1.11,
        // §1.12).
        let kind = match (cty == ScalarType::S32, t.lod) {
            _ if t.geometry == Some(Geometry::D2ms) => Fetch::Multisample,
            (true, Lod::Level) => Fetch::IntLevel,
            (_, Lod::Grad) => Fetch::Grad,
            (true, _) => Fetch::Integer,
            (false, Lod::Level) => Fetch::Level,
            (false, _) => Fetch::Sample,
        };
        let elems = self.tex_results(res);
        let mask: u8 = (0..4).filter(|k| matches!(elems.get(*k), Some(Some(_)))).fold(0, |m, k| m | (1 << k));
        if mask == 0 {
            return Ok(());
        }
        let mut coords = self.tex_coords(parts.last().unwrap_or(res))?;
        if t.geometry == Some(Geometry::D1) && dim == TexDim::D2 {
            let z = self.tex_zero();
            coords.push(z);
        }
        if matches!(dim, TexDim::Cube | TexDim::ACube) {
            coords = self.tex_cube(dim, coords);
        }
        if matches!(dim, TexDim::A1 | TexDim::A2) {
            // The array index (first, `.u32`) is clamped to 16 bits: ptxas 11.8
            // `I2I.U16.U32.SAT R4, c[0x0][0x150]` before every `tex.a1d`/`tex.a2d`
            // (`probe_arrays.ptx`); the other coordinates stay in PTX order.
            self.tex_clamp_index(&mut coords);
            coords.truncate(if dim == TexDim::A1 { 2 } else { 3 });
        }
        let level = match (kind, i.operands.get(2)) {
            (Fetch::Level | Fetch::IntLevel, Some(l)) => {
                // The level has the coordinates' type: ptxas 11.8 rejects a `.s32`/`.u32`
                // level with `.f32` coordinates and a `.f32` one with `.s32` coordinates
                // ("Arguments mismatch for instruction 'tex.level'", docs/textures.md §1.12).
                if let Operand::Name { name, .. } = l {
                    let ty = self.ptx_reg(name)?.ty;
                    // `.b32` goes with either (ptxas 11.8 takes it).
                    let same = ty == ScalarType::B32 || ty.is_float() == (cty == ScalarType::F32);
                    if !same || ty.bits() != 32 {
                        return self.fail(
                            Diag::error(l.span(), format!("the level of `{}` must be a `{}` register", text(i), cty.as_str()))
                                .label(format!("a `{}` register", ty.as_str()))
                                .note("PTX ISA 9.7.9.3 tex: the level has the coordinates' type; ptxas 11.8: \"Arguments mismatch for instruction 'tex.level'\""),
                        );
                    }
                }
                let l = self.src32(l)?;
                Some(self.in_reg(l))
            }
            (Fetch::Level | Fetch::IntLevel, None) => {
                return self.error(i.span, "`tex.level` without its level operand");
            }
            _ => None,
        };
        if kind == Fetch::Grad {
            return self.tex_grad(i, dim, handle, &coords, mask, &elems, dty);
        }
        // `tex.2dms` `{sample, x, y, _}`: x, y as a 2D fetch's, the sample where
        // `TEXS.LL`/`TLD.LL.CL` read the level (ptxas 11.8 `TLDS.LZ.MS.P R6, R4, R4, R6,
        // 0x50, 2D, RGBA` with `R4, R5` = x, y and `R6` = the sample; §1.13).
        let (coords, level) = if kind == Fetch::Multisample {
            let (sample, rest) = coords.split_first().map_or((Src::rz(), &[][..]), |(s, r)| (*s, r));
            (rest.iter().copied().take(2).collect(), Some(sample))
        } else {
            (coords, level)
        };
        self.tex_fetch(kind, dim, handle, &coords, level, mask, &elems, dty)
    }

    /// Emits a fetch of the components `mask` in the form ptxas 11.8 chooses
    /// ([`mask::fetch_op`]): bound `TEXS`/`TLDS`/`TLD4S` when their channel sets can name
    /// the mask, else `TEX`/`TLD.LZ`/`TLD4` with the coordinates joined; bindless `.B`.
    /// `level` is the level register of a [`Fetch::Level`].
    #[allow(clippy::too_many_arguments)]
    fn tex_fetch(
        &mut self,
        kind: Fetch,
        dim: TexDim,
        handle: Handle,
        coords: &[Src],
        level: Option<Src>,
        mask: u8,
        elems: &[Option<Ident>],
        dty: ScalarType,
    ) -> LResult<()> {
        let comps: Vec<usize> = (0..4).filter(|k| mask & (1 << k) != 0).collect();
        let (bindless, last) = match handle {
            Handle::Bound(index) => (false, Src::imm(index)),
            Handle::Bindless(h) => (true, Src::reg(h)),
        };
        let op = mask::fetch_op(kind, dim, bindless, mask);
        // `ptx::texture` checked the coordinate vector's length for the geometry, so these
        // are present; `RZ` stands in otherwise (and `tex_join` pads with it).
        let coord = |k: usize| coords.get(k).copied().unwrap_or_else(Src::rz);
        let pair = coords.get(..2).unwrap_or(coords);
        if mask::is_short(&op) {
            // TEXS/TLDS Rd2, Rd, Ra, Rb: 2D reads x in Ra, y in Rb; 3D reads x, y in the
            // pair Ra and z in Rb (ptxas 11.8, docs/textures.md §1.2); TLD4S 2D. TLDS 1D
            // reads x in Ra, Rb = RZ; TEXS.LL 2D x, y in the pair Ra and the level in Rb
            // (§1.6).
            let (ra, rb) = match (dim, level) {
                (TexDim::D2, Some(l)) => (self.tex_join(pair, 2), l),
                // TEXS.LL CUBE: `{x', y'}` in Ra, `{z', level}` in the pair Rb (ptxas 11.8
                // `TEXS.LL.P RZ, R0, R6, R8, 0x50, CUBE, R` after `MOV R9, level`, lcube_x).
                (TexDim::Cube, Some(l)) => (self.tex_join(pair, 2), self.tex_join(&[coord(2), l], 2)),
                (TexDim::D1, _) => (coord(0), Src::rz()),
                (TexDim::D2, None) => (coord(0), coord(1)),
                // ARRAY_2D: `{index, x}` in Ra, y in Rb (ptxas 11.8 `TEXS.P R6, R4, R4, R6,
                // 0x50, ARRAY_2D, RGBA`, `TLDS.LZ.P ... ARRAY_2D`, `probe_arrays.ptx`).
                // CUBE: the projected `{x, y}` in Ra, z in Rb (ptxas 11.8 `TEXS.P R6, R4, R4,
                // R6, 0x50, CUBE, RGBA`, `probe_cube.ptx`).
                (TexDim::D3 | TexDim::A2 | TexDim::Cube, _) => (self.tex_join(pair, 2), coord(2)),
                // No short ARRAY_1D or ARRAY_CUBE form (`fetch_op`).
                (TexDim::A1 | TexDim::ACube, _) => (self.tex_join(pair, 2), Src::rz()),
            };
            let (dsts, regs) = self.texs_results(&comps);
            self.emit(Instr::new(op, dsts, vec![ra, rb, last]));
            self.tex_write(elems, &regs, dty)
        } else {
            // TEX/TLD/TLD4 Rd, Ra: the coordinates in one register (1D), a pair (2D) or a
            // quad (3D: x, y, z). TEX.LL reads the level in Rb (bound: `TEX.LL R4, R6, R5,
            // 0x50, 2D, 0x5`) or `{handle, level}` in the pair Rb (`TEX.B.LL R8, R8, R6`
            // after `MOV R7, level`; ptxas 11.8, §1.6).
            let n = match dim {
                TexDim::D1 => 1,
                TexDim::D2 => 2,
                TexDim::D3 | TexDim::A2 | TexDim::Cube | TexDim::ACube => 4,
                TexDim::A1 => 2,
            };
            let ra = self.tex_join(coords, n);
            let srcs = match (level, handle) {
                (None, _) => vec![ra, last],
                (Some(l), Handle::Bound(_)) => vec![ra, l, last],
                (Some(l), Handle::Bindless(h)) => vec![ra, self.tex_join(&[Src::reg(h), l], 2)],
            };
            let (dst, regs) = self.packed_results(&comps);
            self.emit(Instr::new(op, vec![dst], srcs));
            self.tex_write(elems, &regs, dty)
        }
    }

    /// Destinations `[Rd2, Rd]` of TEXS/TLDS/TLD4S for the written components `comps`, and
    /// where each component lands.
    fn texs_results(&mut self, comps: &[usize]) -> (Vec<Dst>, Vec<(usize, RegRef)>) {
        let n = comps.len() as u8;
        let lo = self.tmp(n.min(2));
        let mut regs: Vec<(usize, RegRef)> =
            comps.iter().take(2).enumerate().map(|(j, &c)| (c, RegRef { reg: lo, comp: j as u8, n: 1 })).collect();
        let rd2 = if let Some(rest) = n.checked_sub(2).filter(|r| *r > 0) {
            let hi = self.tmp(rest);
            regs.extend(comps.iter().skip(2).enumerate().map(|(j, &c)| (c, RegRef { reg: hi, comp: j as u8, n: 1 })));
            Dst::reg(hi, rest)
        } else {
            Dst::Reg(RegRef::rz(1))
        };
        (vec![rd2, Dst::reg(lo, n.min(2))], regs)
    }

    /// One destination of the written components `comps` packed into 1, 2 or 4 registers
    /// (three components take a quad whose last register is not written), and where each
    /// component lands.
    fn packed_results(&mut self, comps: &[usize]) -> (Dst, Vec<(usize, RegRef)>) {
        let n = match comps.len() {
            1 => 1,
            2 => 2,
            _ => 4,
        };
        let d = self.tmp(n);
        let regs = comps.iter().enumerate().map(|(j, &c)| (c, RegRef { reg: d, comp: j as u8, n: 1 })).collect();
        (Dst::reg(d, n), regs)
    }

    fn lower_tld4(&mut self, i: &Instruction, t: &TexOp) -> LResult<()> {
        let dim = match t.geometry {
            Some(Geometry::D2) => TexDim::D2,
            Some(Geometry::A2d) => TexDim::A2,
            // The projected direction, then `TLD4.R.P R4, R4, 0x50, CUBE, 0xf` / `...
            // ARRAY_CUBE` (no `TLD4S`; ptxas 11.8 `probe_not_lowered.ptx` t4cube, t4acube).
            Some(Geometry::Cube) => TexDim::Cube,
            _ => TexDim::ACube,
        };
        let comp = match t.component {
            Some('r') => 0,
            Some('g') => 1,
            Some('b') => 2,
            _ => 3,
        };
        let dty = t.dtype.unwrap_or(ScalarType::F32);
        let (Some(res), Some(Operand::Texture { image, parts, .. })) = (i.operands.first(), i.operands.get(1)) else {
            return self.error(i.span, "malformed texture instruction");
        };
        let handle = self.tex_sampled(i, image, parts)?;
        let elems = self.tex_results(res);
        let mut coords = self.tex_coords(parts.last().unwrap_or(res))?;
        if dim == TexDim::A2 {
            // `{index, x, y}` with the index clamped to 16 bits, as for `tex.a2d`: ptxas 11.8
            // `I2I.U16.U32.SAT R4, c[0x0][0x150]` then `TLD4.R.P R4, R4, 0x50, ARRAY_2D, 0xf`
            // (`probe_geometries.ptx` t4a2d, t4a2d_y, t4a2d_b; docs/textures.md §1.12).
            self.tex_clamp_index(&mut coords);
            coords.truncate(3);
        }
        if matches!(dim, TexDim::Cube | TexDim::ACube) {
            coords = self.tex_cube(dim, coords);
        }
        // TLD4S writes all four texels (ptxas 11.8 `TLD4S.R.P R6, R4, R4, R5, 0x50` then
        // `STG.E.128 [R2], R4`); fewer components are a bound `TLD4 ... mask`.
        let mask: u8 = (0..4).filter(|k| matches!(elems.get(*k), Some(Some(_)))).fold(0, |m, k| m | (1 << k));
        if mask == 0 {
            return Ok(());
        }
        self.tex_fetch(Fetch::Gather(comp), dim, handle, &coords, None, mask, &elems, dty)
    }
}

/// The instruction's opcode and modifiers as written, for messages.
fn text(i: &Instruction) -> String {
    let mut s = i.opcode.name.clone();
    for m in &i.mods {
        s.push_str(&m.text);
    }
    s
}
