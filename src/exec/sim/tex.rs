//! The simulator's texture unit: `TEXS`, `TLDS.LZ`, `TLD4S`, `TEX{.B}`, `TLD{.B}.{LZ,LL.CL}`,
//! `TLD4{.B}`, `TXQ` (`ARRAY_1D`/`ARRAY_2D` fetches pick a layer, `exec::image`),
//! `SULD.D.BA`, `SUST.D.BA` (operand layouts: `sass::texmods`, docs/textures.md §1) on the
//! launch's images. A bound instruction finds the handle in constant bank 0 at word
//! `index`; a bindless one in its handle register (the low 32 bits). Sampling follows
//! the texture-unit rules written down in `exec::image` (the texture header's rank
//! decides how many coordinates count; addressing; point and 8-bit-weight linear
//! filtering; surfaces addressed in bytes; one level, so the level of `TEXS.LL`/`TEX.LL`
//! and `TXQ` reads level 0). Independent of the interpreter's
//! `exec::ptx::tex` and of the compiler.

use super::Sim;
use super::state::{WARP_SIZE, Warp, lanes};
use crate::exec::ExecError;
use crate::exec::image::{AddrMode, Filter, Format, Image};
use crate::sass::instr::{Dst, Instr, Reg, RegRef, Src, SrcKind};
use crate::sass::op::{Op, TexDim};

/// Word `k` of register operand `r` in `lane`.
pub(super) fn word(w: &Warp, r: RegRef, k: u8, lane: usize) -> u32 {
    match r.reg {
        Reg::R(255) => 0,
        // At most 255 + 255 + 255: no overflow (and beyond R254 reads as zero).
        Reg::R(x) => w.reg(usize::from(x).saturating_add(usize::from(r.comp)).saturating_add(usize::from(k)), lane),
        _ => 0,
    }
}

pub(super) fn reg_of(s: Option<&Src>) -> Result<RegRef, ExecError> {
    s.and_then(Src::as_reg).ok_or_else(|| ExecError::Unsupported("texture operand that is not a register".into()))
}

/// One image's texel storage as the texture unit sees it.
struct View<'a> {
    img: &'a Image,
    mem: &'a crate::exec::Memory,
}

impl View<'_> {
    /// Wraps, clamps or mirrors index `i` along axis `a`; `None` off a border image (and
    /// along an empty axis, which `spec::image` never builds).
    fn wrap(&self, a: usize, i: i64) -> Option<i64> {
        if a >= usize::from(self.img.rank) {
            return Some(0);
        }
        let n = i64::from(*self.img.dims.get(a)?);
        let last = n.checked_sub(1).filter(|l| *l >= 0)?;
        match self.img.addr {
            AddrMode::Border if i < 0 || i >= n => None,
            AddrMode::Border => Some(i),
            AddrMode::Clamp => Some(i.max(0).min(last)),
            AddrMode::Wrap => i.checked_rem(n)?.checked_add(n)?.checked_rem(n),
            AddrMode::Mirror => {
                // n < 2^32: 2n and 2n - 1 - p fit.
                let period = n.checked_mul(2)?;
                let p = i.checked_rem(period)?.checked_add(period)?.checked_rem(period)?;
                Some(if p >= n { period.checked_sub(1)?.checked_sub(p)? } else { p })
            }
        }
    }

    /// The four result words of texel `(x, y, z)` (before addressing).
    fn texel(&self, x: i64, y: i64, z: i64) -> Result<[u32; 4], ExecError> {
        let (Some(x), Some(y), Some(z)) = (self.wrap(0, x), self.wrap(1, y), self.wrap(2, z)) else {
            return Ok([0, 0, 0, 0]);
        };
        self.read(x, y, z)
    }

    /// Sample `s` of texel `(x, y)` (before addressing) of a multisample image: sample
    /// planes of `width x height` texels (`exec::image`); a sample outside `0..samples`
    /// reads zero.
    fn sample_ms(&self, x: u32, y: u32, s: u32) -> Result<[u32; 4], ExecError> {
        let s = i64::from(s as i32);
        let (Some(x), Some(y)) = (self.wrap(0, i64::from(x as i32)), self.wrap(1, i64::from(y as i32))) else {
            return Ok([0; 4]);
        };
        if !(0..i64::from(self.img.samples)).contains(&s) {
            return Ok([0; 4]);
        }
        self.read(x, y, s)
    }

    /// The four result words of the texel at the addressed indices `(x, y, z)` (`z` the
    /// plane: `width x height` texels each).
    fn read(&self, x: i64, y: i64, z: i64) -> Result<[u32; 4], ExecError> {
        let [w0, w1, _] = self.img.dims.map(u64::from);
        let bytes = u64::from(self.img.format.bytes());
        // Addressed indices are within the dimensions (below 2^32 each); checked anyway.
        let overflow = || ExecError::Launch(format!("image `{}`: a texel address overflows", self.img.param));
        let at = u64::try_from(z)
            .ok()
            .and_then(|z| z.checked_mul(w1))
            .zip(u64::try_from(y).ok())
            .and_then(|(a, y)| a.checked_add(y))
            .and_then(|a| a.checked_mul(w0))
            .zip(u64::try_from(x).ok())
            .and_then(|(a, x)| a.checked_add(x))
            .and_then(|a| a.checked_mul(bytes))
            .and_then(|a| self.img.base.checked_add(a))
            .ok_or_else(overflow)?;
        let w = |k: u64| -> Result<u32, ExecError> {
            let addr = k.checked_mul(4).and_then(|o| at.checked_add(o)).ok_or_else(overflow)?;
            Ok(self.mem.read_uint("global", addr, 4)? as u32)
        };
        Ok(match self.img.format {
            Format::F32x4 => [w(0)?, w(1)?, w(2)?, w(3)?],
            Format::F32 => [w(0)?, 0, 0, 0x3f80_0000],
            Format::U32 | Format::S32 => [w(0)?, 0, 0, 1],
            Format::U8x4 => {
                let v = w(0)?;
                let unorm = |s: u32| ((v.wrapping_shr(s) & 0xff) as f32 / 255.0).to_bits();
                [unorm(0), unorm(8), unorm(16), unorm(24)]
            }
        })
    }

    /// A `.f32` coordinate in texel units along axis `a`.
    fn scale(&self, a: usize, c: u32) -> f32 {
        let c = f32::from_bits(c);
        match self.img.dims.get(a) {
            Some(&n) if self.img.normalized => c * n as f32,
            _ => c,
        }
    }

    /// Lower texel and fixed-point weight (multiples of 1/256) of a linear fetch along `a`.
    fn footprint(&self, a: usize, c: u32) -> (i64, f32) {
        let t = self.scale(a, c) - 0.5;
        let lo = t.floor();
        (lo as i64, ((t - lo) * 256.0).floor() * (1.0 / 256.0))
    }

    /// A fetch of geometry `dim` at the coordinate words `c` as the instruction reads
    /// them: an `ARRAY_1D`/`ARRAY_2D` fetch reads `{index, x(, y)}` and fetches layer
    /// `index` (the last axis of the image, `exec::image`) at `x(, y)`.
    fn sample_dim(&self, dim: TexDim, c: [u32; 3], int: bool) -> Result<[u32; 4], ExecError> {
        let [c0, c1, c2] = c;
        match dim {
            TexDim::A1 => self.sample([c1, 0, 0], int, Some(c0)),
            TexDim::A2 => self.sample([c1, c2, 0], int, Some(c0)),
            TexDim::Cube => self.sample_cube(c, None),
            TexDim::ACube => Err(ExecError::Unsupported("a short ARRAY_CUBE fetch".into())),
            _ => self.sample(c, int, None),
        }
    }

    /// A `CUBE` / `ARRAY_CUBE` fetch in the direction `d` (the words of x, y, z as the
    /// instruction reads them: ptxas has divided them by the largest magnitude, which
    /// changes neither the face nor the face coordinates) of cube `layer` (`None`: 0).
    /// Face and face coordinates by the OpenGL 4.6 rule (section 8.13, "Cube Map Texture
    /// Selection", table 8.19): the major axis is the component of largest magnitude (x
    /// before y before z on a tie), faces +X -X +Y -Y +Z -Z are 0..5, `s = (sc / |ma| + 1)
    /// / 2`, `t = (tc / |ma| + 1) / 2` with `(sc, tc)` = `(-z, -y)`, `(z, -y)`, `(x, z)`,
    /// `(x, -z)`, `(x, -y)`, `(-x, -y)`; the face (plane `6 * layer + face` of the image,
    /// `exec::image`) is sampled at `(s * W, t * W)` texels with the image's filter and
    /// addressing.
    fn sample_cube(&self, d: [u32; 3], layer: Option<u32>) -> Result<[u32; 4], ExecError> {
        let (plane, s, t) = self.cube_face(d, layer);
        self.sample([s.to_bits(), t.to_bits(), 0], false, Some(plane))
    }

    /// The plane and the face coordinates `(s * W, t * W)` (texels) of direction `d` in
    /// cube `layer` ([`View::sample_cube`]).
    fn cube_face(&self, d: [u32; 3], layer: Option<u32>) -> (u32, f32, f32) {
        let [x, y, z] = d.map(f32::from_bits);
        let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
        let (face, sc, tc, ma) = if ax >= ay && ax >= az {
            if x >= 0.0 { (0u32, -z, -y, ax) } else { (1, z, -y, ax) }
        } else if ay >= az {
            if y >= 0.0 { (2, x, z, ay) } else { (3, x, -z, ay) }
        } else if z >= 0.0 {
            (4, x, -y, az)
        } else {
            (5, -x, -y, az)
        };
        let [width, _, planes] = self.img.dims;
        let w = width as f32;
        let s = (sc / ma + 1.0) * 0.5 * w;
        let t = (tc / ma + 1.0) * 0.5 * w;
        let cubes = (planes / 6).max(1);
        let plane = layer.unwrap_or(0).min(cubes.saturating_sub(1)).saturating_mul(6).saturating_add(face);
        (plane, s, t)
    }

    /// A fetch at coordinates `c` (`.s32` texel indices when `int`); `layer` is an array
    /// fetch's layer index, clamped to the image's last axis, which is then not filtered
    /// or addressed.
    fn sample(&self, mut c: [u32; 3], int: bool, layer: Option<u32>) -> Result<[u32; 4], ExecError> {
        let mut rank = usize::from(self.img.rank).min(3);
        let mut fixed: Option<i64> = None;
        if let Some(index) = layer {
            rank = rank.saturating_sub(1);
            let last = self.img.dims.get(rank).map_or(0, |&n| i64::from(n).saturating_sub(1));
            fixed = Some(i64::from(index).min(last));
            c.iter_mut().skip(rank).for_each(|v| *v = 0);
        }
        let put = |p: &mut [i64; 3]| {
            if let (Some(v), Some(slot)) = (fixed, p.get_mut(rank)) {
                *slot = v;
            }
        };
        if int {
            let mut p = c.map(|v| i64::from(v as i32));
            put(&mut p);
            let [x, y, z] = p;
            return self.texel(x, y, z);
        }
        if self.img.filter == Filter::Point {
            let mut p = [0i64; 3];
            for (a, (slot, &v)) in p.iter_mut().zip(&c).enumerate().take(rank) {
                *slot = self.scale(a, v).floor() as i64;
            }
            put(&mut p);
            let [x, y, z] = p;
            return self.texel(x, y, z);
        }
        let mut f = [(0i64, 0f32); 3];
        for (a, (slot, &v)) in f.iter_mut().zip(&c).enumerate().take(rank) {
            *slot = self.footprint(a, v);
        }
        let mut acc = [0f32; 4];
        // Corners in z, y, x order (x fastest); weight = wx * wy * wz, axes beyond the
        // rank contribute one corner of weight 1.
        let corners = 1usize.checked_shl(rank as u32).unwrap_or(1);
        for n in 0..corners {
            let bit = |a: usize| n.checked_shr(a as u32).unwrap_or(0) & 1;
            let mut weight = 1f32;
            let mut p = [0i64; 3];
            for (a, (slot, &(lo, t))) in p.iter_mut().zip(&f).enumerate().take(rank) {
                // Saturating: a coordinate beyond 2^63 texels (or +inf) is `lo` = i64::MAX
                // (`as i64`), whose neighbour overflowed here before.
                *slot = lo.saturating_add(bit(a) as i64);
                weight *= if bit(a) == 1 { t } else { 1.0 - t };
            }
            put(&mut p);
            let [x, y, z] = p;
            let v = self.texel(x, y, z)?;
            for (s, x) in acc.iter_mut().zip(v) {
                *s += weight * f32::from_bits(x);
            }
        }
        Ok(acc.map(f32::to_bits))
    }
}

/// The image whose handle is `h`, which must be a surface (`Some(true)`), a texture
/// (`Some(false)`) or either (`None`: TXQ answers `txq` and `suq`).
///
/// A handle with a sampler index in its high 12 bits (`(s << 20) | t`, independent mode,
/// `exec::sampler`) names texture `t` sampled with sampler `s`'s filter, addressing and
/// normalization.
fn image_of(images: &[Image], h: u32, surface: Option<bool>) -> Result<Image, ExecError> {
    let s = h >> 20;
    let h = if s == 0 { h } else { h & 0xf_ffff };
    let sampler = match s {
        0 => None,
        s => Some(images.iter().find(|i| i.sampler && i.handle == s).ok_or_else(|| {
            ExecError::Launch(format!(
                "no sampler has the index 0x{s:x} (handle 0x{:x}; bind one with --sampler)",
                h | s << 20
            ))
        })?),
    };
    {
        let img = images.iter().find(|i| !i.sampler && i.handle == h).ok_or_else(|| {
            ExecError::Launch(format!(
                "no texture or surface has the handle 0x{h:x} (bind one to the kernel parameter with --texture/--surface)"
            ))
        })?;
        if let Some(surface) = surface
            && img.surface != surface
        {
            return Err(ExecError::Launch(format!(
                "`{}` is a {} but the kernel uses it as a {}",
                img.param,
                if img.surface { "surface" } else { "texture" },
                if surface { "surface" } else { "texture" }
            )));
        }
        Ok(match sampler {
            Some(s) => Image { filter: s.filter, addr: s.addr, normalized: s.normalized, ..img.clone() },
            None => img.clone(),
        })
    }
}

impl Sim<'_> {
    /// Per-lane handle: constant bank 0 word `index` (bound) or a register's low word. The
    /// word of a `.texref`/`.surfref` (a parameter slot of that type, `lower::tex`) holds
    /// the handle of the image bound to its name, as the driver writes the header index
    /// there (`R_CUDA_TEX_HEADER_INDEX`, docs/textures.md §1.1).
    fn handles(&self, w: &Warp, s: Option<&Src>, mask: u32) -> Result<[u32; WARP_SIZE], ExecError> {
        if let Some(SrcKind::Imm(index)) = s.map(|s| s.kind)
            && let Some((_, _, name)) = self.func.params.iter().find(|(off, ty, _)| {
                matches!(ty.as_str(), ".texref" | ".surfref") && u64::from(*off) == u64::from(index).saturating_mul(4)
            })
        {
            // A texture-sampler pair's word is named `t,s` (independent mode,
            // `lower::tex::sampler`): the driver writes `(s << 20) | t` there.
            let (tname, sname) = match name.split_once(',') {
                Some((t, s)) => (t, Some(s)),
                None => (name.as_str(), None),
            };
            let img = self.images.iter().find(|i| !i.sampler && i.param == tname).ok_or_else(|| {
                ExecError::Launch(format!(
                    "no texture or surface is bound to the reference `{tname}` (bind one with --texture/--surface {tname}=...)"
                ))
            })?;
            let s = match sname {
                Some(sname) => self
                    .images
                    .iter()
                    .find(|i| i.sampler && i.param == sname)
                    .ok_or_else(|| {
                        ExecError::Launch(format!(
                            "no sampler is bound to the `.samplerref` `{sname}` (bind one with --sampler {sname}=...)"
                        ))
                    })?
                    .handle,
                None => 0,
            };
            return Ok([img.handle | s.checked_shl(20).unwrap_or(0); WARP_SIZE]);
        }
        match s.map(|s| s.kind) {
            // A 32-bit index times 4 fits in i64.
            Some(SrcKind::Imm(index)) => {
                Ok([self.banks.operand(0, i64::from(index).saturating_mul(4), 4)? as u32; WARP_SIZE])
            }
            Some(SrcKind::Reg(r)) => {
                let mut out = [0u32; WARP_SIZE];
                for l in lanes(mask) {
                    if let Some(slot) = out.get_mut(l) {
                        *slot = word(w, r, 0, l);
                    }
                }
                Ok(out)
            }
            _ => Err(ExecError::Unsupported("texture handle operand".into())),
        }
    }

    /// Executes a texture or surface instruction; `false` for another opcode.
    pub(super) fn exec_tex(&mut self, w: &mut Warp, i: &Instr, mask: u32) -> Result<bool, ExecError> {
        let (handle_src, surface) = match i.op {
            Op::Texs { .. } | Op::Tlds { .. } | Op::Tld4s { .. } => (i.srcs.get(2), false),
            // Bound TEX.LL/TLD.LL.CL: `[Ra, Rlevel, index]`; TEX.B.LL/TLD.B.LL.CL: `[Ra,
            // {handle, level}]`.
            // TLD.LZ.MS reads the sample where TLD.LL.CL reads the level.
            Op::Tex { bindless: false, ll: true, .. }
            | Op::Tld { bindless: false, ll: true, .. }
            | Op::Tld { bindless: false, ms: true, .. } => (i.srcs.get(2), false),
            Op::Tex { .. } | Op::Tld { .. } | Op::Tld4 { .. } => (i.srcs.get(1), false),
            // TXD: bound `[Ra, Rb (gradients), index]`, bindless `[{handle, coordinates},
            // Rb]` (ptxas 11.8 `TXD.B.P R8, R8, R12, 0x0, 2D, 0xf`, docs/textures.md §1.11).
            Op::Txd { bindless: false, .. } => (i.srcs.get(2), false),
            Op::Txd { bindless: true, .. } => (i.srcs.first(), false),
            Op::Txq { bindless: false, .. } => (i.srcs.get(1), false),
            Op::Txq { bindless: true, .. } => (i.srcs.first(), false),
            Op::Suld { .. } => (i.srcs.get(1), true),
            Op::Sust { .. } | Op::Sured { .. } | Op::SustP { .. } => (i.srcs.get(2), true),
            _ => return Ok(false),
        };
        if mask == 0 {
            return Ok(true);
        }
        let handles = self.handles(w, handle_src, mask)?;
        let mut out = [[0u32; 4]; WARP_SIZE];
        for (l, (slot, &handle)) in out.iter_mut().zip(&handles).enumerate() {
            if mask.checked_shr(l as u32).unwrap_or(0) & 1 == 0 {
                continue;
            }
            let images = self.images;
            let img = &image_of(images, handle, (!matches!(i.op, Op::Txq { .. })).then_some(surface))?;
            let view = View { img, mem: &self.global };
            let ra = reg_of(i.srcs.first());
            *slot = match i.op {
                // An explicit level (`.LL`: Rb of TEXS.LL, the level register of TEX.LL) reads
                // level 0, the only level an image has (`exec::image`).
                Op::Texs { dim, ll, .. } => {
                    let (ra, rb) = (ra?, reg_of(i.srcs.get(1))?);
                    let c = match (dim, ll) {
                        (TexDim::D2, true) => [word(w, ra, 0, l), word(w, ra, 1, l), 0],
                        (TexDim::D1, _) => [word(w, ra, 0, l), 0, 0],
                        (TexDim::D2, false) => [word(w, ra, 0, l), word(w, rb, 0, l), 0],
                        (TexDim::D3 | TexDim::A2 | TexDim::A1 | TexDim::Cube | TexDim::ACube, _) => {
                            [word(w, ra, 0, l), word(w, ra, 1, l), word(w, rb, 0, l)]
                        }
                    };
                    view.sample_dim(dim, c, false)?
                }
                // TLDS.LZ.MS: `{x, y}` in Ra, the sample in Rb; TLD.LZ.MS: the sample in Rb,
                // bindless the second word of `{handle, sample}` (ptxas 11.8, §1.13).
                Op::Tlds { ms: true, .. } => {
                    let (ra, rb) = (ra?, reg_of(i.srcs.get(1))?);
                    view.sample_ms(word(w, ra, 0, l), word(w, ra, 1, l), word(w, rb, 0, l))?
                }
                Op::Tld { ms: true, bindless, .. } => {
                    let (ra, rb) = (ra?, reg_of(i.srcs.get(1))?);
                    view.sample_ms(word(w, ra, 0, l), word(w, ra, 1, l), word(w, rb, u8::from(bindless), l))?
                }
                Op::Tlds { dim, .. } => {
                    let (ra, rb) = (ra?, reg_of(i.srcs.get(1))?);
                    let c = match dim {
                        TexDim::D1 => [word(w, ra, 0, l), 0, 0],
                        TexDim::D2 => [word(w, ra, 0, l), word(w, rb, 0, l), 0],
                        TexDim::D3 | TexDim::A2 | TexDim::A1 | TexDim::Cube | TexDim::ACube => {
                            [word(w, ra, 0, l), word(w, ra, 1, l), word(w, rb, 0, l)]
                        }
                    };
                    view.sample_dim(dim, c, true)?
                }
                Op::Tex { dim, .. } | Op::Tld { dim, .. } => {
                    let ra = ra?;
                    let n = match dim {
                        TexDim::D1 => 1,
                        TexDim::D2 | TexDim::A1 => 2,
                        TexDim::D3 | TexDim::A2 | TexDim::Cube => 3,
                        TexDim::ACube => 4,
                    };
                    let c = |k: u8| if k < n { word(w, ra, k, l) } else { 0 };
                    // ARRAY_CUBE: `{index, x, y, z}` (ptxas 11.8 `TEX.P R4, R4, 0x50,
                    // ARRAY_CUBE, 0xf` after `I2I.U16.U32.SAT R4, index`).
                    if dim == TexDim::ACube {
                        view.sample_cube([c(1), c(2), c(3)], Some(c(0)))?
                    } else {
                        view.sample_dim(dim, [c(0), c(1), c(2)], matches!(i.op, Op::Tld { .. }))?
                    }
                }
                // TXD reads its coordinates after the handle when bindless, x first and an
                // array index last (`{x, index}`, `{x, y, index}`: ptxas 11.8 ga1d, ga2d);
                // the gradients (Rb) only choose a level, and an image has one: level 0
                // (`exec::image`), sampled as TEX.
                Op::Txd { dim, bindless, .. } => {
                    let ra = ra?;
                    let at = u8::from(bindless);
                    let c = |k: u8| word(w, ra, at.saturating_add(k), l);
                    let c = match dim {
                        TexDim::D1 => [c(0), 0, 0],
                        TexDim::D2 => [c(0), c(1), 0],
                        TexDim::D3 => [c(0), c(1), c(2)],
                        TexDim::A1 => [c(1), c(0), 0],
                        TexDim::A2 => [c(2), c(0), c(1)],
                        TexDim::Cube | TexDim::ACube => {
                            return Err(ExecError::Unsupported("TXD of a cube map".into()));
                        }
                    };
                    view.sample_dim(dim, c, false)?
                }
                // TLD4 `ARRAY_2D` reads `{index, x, y}` (ptxas 11.8 `TLD4.R.P R4, R4, 0x50,
                // ARRAY_2D, 0xf` after `I2I.U16.U32.SAT R4, index`) and gathers in layer
                // `min(index, layers - 1)` (`exec::image`).
                Op::Tld4s { comp } | Op::Tld4 { comp, .. } => {
                    let ra = ra?;
                    // CUBE / ARRAY_CUBE: the footprint at the face coordinates of the face the
                    // projected direction `{(index,) x, y, z}` selects (`View::cube_face`).
                    let cube = |at: u8, layer: Option<u32>| {
                        let (plane, s, t) =
                            view.cube_face([0u8, 1, 2].map(|k| word(w, ra, at.saturating_add(k), l)), layer);
                        (s.to_bits(), t.to_bits(), Some(plane))
                    };
                    let (x, y, layer) = match i.op {
                        Op::Tld4s { .. } => (word(w, ra, 0, l), word(w, reg_of(i.srcs.get(1))?, 0, l), None),
                        Op::Tld4 { dim: TexDim::A2, .. } => {
                            (word(w, ra, 1, l), word(w, ra, 2, l), Some(word(w, ra, 0, l)))
                        }
                        Op::Tld4 { dim: TexDim::Cube, .. } => cube(0, None),
                        Op::Tld4 { dim: TexDim::ACube, .. } => cube(1, Some(word(w, ra, 0, l))),
                        _ => (word(w, ra, 0, l), word(w, ra, 1, l), None),
                    };
                    let (x0, _) = view.footprint(0, x);
                    let (y0, _) = if img.rank >= 2 { view.footprint(1, y) } else { (0, 0.0) };
                    let z = match layer {
                        Some(index) => {
                            let [_, _, layers] = img.dims;
                            i64::from(index).min(i64::from(layers).saturating_sub(1)).max(0)
                        }
                        None => 0,
                    };
                    let mut g = [0u32; 4];
                    for (s, (dx, dy)) in g.iter_mut().zip([(0, 1), (1, 1), (1, 0), (0, 0)]) {
                        // Saturating: see `View::sample`.
                        let t = view.texel(x0.saturating_add(dx), y0.saturating_add(dy), z)?;
                        *s = t.get(usize::from(comp & 3)).copied().unwrap_or(0);
                    }
                    g
                }
                Op::Txq { .. } => {
                    let [x, y, z] = img.dims;
                    [x, y, z, 0]
                }
                Op::SustP { dim, clamp, mask } => {
                    self.surface_formatted(w, i, img, l, dim, clamp, mask)?;
                    [0; 4]
                }
                Op::Sured { dim, clamp, red, ty, ba } => {
                    self.surface_red(w, i, img, l, dim, clamp, red, ty, ba)?;
                    [0; 4]
                }
                Op::Suld { dim, clamp, size } | Op::Sust { dim, clamp, size } => {
                    self.surface(w, i, img, l, dim, clamp, size)?
                }
                _ => return Ok(false),
            };
        }
        self.tex_results(w, i, mask, &out);
        Ok(true)
    }

    /// Writes the four result words per lane to the destinations: the written channels
    /// (the opcode's mask) packed in x, y, z, w order, TEXS/TLDS/TLD4S two to `Rd` then
    /// the rest to `Rd2`.
    fn tex_results(&mut self, w: &mut Warp, i: &Instr, mask: u32, out: &[[u32; 4]; WARP_SIZE]) {
        let chans = match i.op {
            Op::Texs { chans, .. } | Op::Tlds { chans, .. } => chans,
            Op::Tld4s { .. } => 0xf,
            Op::Tex { mask, .. }
            | Op::Tld { mask, .. }
            | Op::Tld4 { mask, .. }
            | Op::Txq { mask, .. }
            | Op::Txd { mask, .. } => mask,
            // One channel per register written (1, 2 or 4).
            Op::Suld { size, .. } => 1u8.checked_shl(u32::from(size.regs())).map_or(0xf, |b| b.wrapping_sub(1)),
            _ => return,
        };
        // Lanes outside `mask` are not written (`write_regs`), so all are packed.
        let mut packed = [[0u32; 4]; WARP_SIZE];
        for (p, o) in packed.iter_mut().zip(out) {
            let written = o.iter().enumerate().filter(|(c, _)| chans.checked_shr(*c as u32).unwrap_or(0) & 1 != 0);
            for (slot, (_, v)) in p.iter_mut().zip(written) {
                *slot = *v;
            }
        }
        let n = (chans & 0xf).count_ones() as u8;
        let regs: Vec<RegRef> =
            i.dsts.iter().filter_map(|d| if let Dst::Reg(r) = d { Some(*r) } else { None }).collect();
        match (i.op, regs.as_slice()) {
            (Op::Texs { .. } | Op::Tlds { .. } | Op::Tld4s { .. }, [rd2, rd]) => {
                w.write_regs(RegRef { n: n.min(2), ..*rd }, mask, &packed);
                if let Some(rest) = n.checked_sub(2).filter(|r| *r > 0) {
                    let hi = packed.map(|[_, _, z, w]| [z, w, 0, 0]);
                    w.write_regs(RegRef { n: rest, ..*rd2 }, mask, &hi);
                }
            }
            (_, [rd]) => w.write_regs(RegRef { n, ..*rd }, mask, &packed),
            _ => {}
        }
    }
}
