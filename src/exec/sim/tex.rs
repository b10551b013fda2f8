//! The simulator's texture unit: `TEXS`, `TLDS.LZ`, `TLD4S`, `TEX{.B}`, `TLD{.B}.LZ`,
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
use crate::sass::op::{Op, SurfClamp, TexDim};

/// Word `k` of register operand `r` in `lane`.
fn word(w: &Warp, r: RegRef, k: u8, lane: usize) -> u32 {
    match r.reg {
        Reg::R(255) => 0,
        Reg::R(x) => w.reg(x as usize + r.comp as usize + k as usize, lane),
        _ => 0,
    }
}

fn reg_of(s: Option<&Src>) -> Result<RegRef, ExecError> {
    s.and_then(Src::as_reg).ok_or_else(|| ExecError::Unsupported("texture operand that is not a register".into()))
}

/// One image's texel storage as the texture unit sees it.
struct View<'a> {
    img: &'a Image,
    mem: &'a crate::exec::Memory,
}

impl View<'_> {
    /// Wraps, clamps or mirrors index `i` along axis `a`; `None` off a border image.
    fn wrap(&self, a: usize, i: i64) -> Option<i64> {
        let n = i64::from(self.img.dims[a]);
        if a >= self.img.rank as usize {
            return Some(0);
        }
        match self.img.addr {
            AddrMode::Border if i < 0 || i >= n => None,
            AddrMode::Border => Some(i),
            AddrMode::Clamp => Some(i.max(0).min(n - 1)),
            AddrMode::Wrap => Some(((i % n) + n) % n),
            AddrMode::Mirror => {
                let p = ((i % (2 * n)) + 2 * n) % (2 * n);
                Some(if p >= n { 2 * n - 1 - p } else { p })
            }
        }
    }

    /// The four result words of texel `(x, y, z)` (before addressing).
    fn texel(&self, x: i64, y: i64, z: i64) -> Result<[u32; 4], ExecError> {
        let (Some(x), Some(y), Some(z)) = (self.wrap(0, x), self.wrap(1, y), self.wrap(2, z)) else {
            return Ok([0, 0, 0, 0]);
        };
        let d = self.img.dims;
        let linear = x as u64 + u64::from(d[0]) * (y as u64 + u64::from(d[1]) * z as u64);
        let bytes = u64::from(self.img.format.bytes());
        let at = self.img.base + linear * bytes;
        let w = |k: u64| -> Result<u32, ExecError> { Ok(self.mem.read_uint("global", at + 4 * k, 4)? as u32) };
        Ok(match self.img.format {
            Format::F32x4 => [w(0)?, w(1)?, w(2)?, w(3)?],
            Format::F32 => [w(0)?, 0, 0, 0x3f80_0000],
            Format::U32 | Format::S32 => [w(0)?, 0, 0, 1],
            Format::U8x4 => {
                let v = w(0)?;
                let unorm = |s: u32| ((v >> s & 0xff) as f32 / 255.0).to_bits();
                [unorm(0), unorm(8), unorm(16), unorm(24)]
            }
        })
    }

    /// A `.f32` coordinate in texel units along axis `a`.
    fn scale(&self, a: usize, c: u32) -> f32 {
        let c = f32::from_bits(c);
        if self.img.normalized { c * self.img.dims[a] as f32 } else { c }
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
        match dim {
            TexDim::A1 => self.sample([c[1], 0, 0], int, Some(c[0])),
            TexDim::A2 => self.sample([c[1], c[2], 0], int, Some(c[0])),
            _ => self.sample(c, int, None),
        }
    }

    /// A fetch at coordinates `c` (`.s32` texel indices when `int`); `layer` is an array
    /// fetch's layer index, clamped to the image's last axis, which is then not filtered
    /// or addressed.
    fn sample(&self, mut c: [u32; 3], int: bool, layer: Option<u32>) -> Result<[u32; 4], ExecError> {
        let mut rank = self.img.rank as usize;
        let mut fixed: Option<i64> = None;
        if let Some(index) = layer {
            rank = rank.saturating_sub(1);
            let last = i64::from(self.img.dims[rank]) - 1;
            fixed = Some(i64::from(index).min(last));
            c[rank..].iter_mut().for_each(|v| *v = 0);
        }
        let put = |p: &mut [i64; 3]| {
            if let Some(v) = fixed {
                p[rank] = v;
            }
        };
        if int {
            let mut p = [c[0] as i32 as i64, c[1] as i32 as i64, c[2] as i32 as i64];
            put(&mut p);
            return self.texel(p[0], p[1], p[2]);
        }
        if self.img.filter == Filter::Point {
            let mut p = [0i64; 3];
            for (a, slot) in p.iter_mut().enumerate().take(rank) {
                *slot = self.scale(a, c[a]).floor() as i64;
            }
            put(&mut p);
            return self.texel(p[0], p[1], p[2]);
        }
        let f: Vec<(i64, f32)> = (0..3).map(|a| if a < rank { self.footprint(a, c[a]) } else { (0, 0.0) }).collect();
        let mut acc = [0f32; 4];
        // Corners in z, y, x order (x fastest); weight = wx * wy * wz, axes beyond the
        // rank contribute one corner of weight 1.
        let corners = 1usize << rank;
        for n in 0..corners {
            let bit = |a: usize| (n >> a) & 1;
            let mut weight = 1f32;
            let mut p = [0i64; 3];
            for (a, slot) in p.iter_mut().enumerate().take(rank) {
                let (lo, t) = f[a];
                *slot = lo + bit(a) as i64;
                weight *= if bit(a) == 1 { t } else { 1.0 - t };
            }
            put(&mut p);
            let v = self.texel(p[0], p[1], p[2])?;
            for (s, x) in acc.iter_mut().zip(v) {
                *s += weight * f32::from_bits(x);
            }
        }
        Ok(acc.map(f32::to_bits))
    }
}

/// The image whose handle is `h`, which must be a surface (`Some(true)`), a texture
/// (`Some(false)`) or either (`None`: TXQ answers `txq` and `suq`).
fn image_of(images: &[Image], h: u32, surface: Option<bool>) -> Result<&Image, ExecError> {
    {
        let img = images.iter().find(|i| i.handle == h).ok_or_else(|| {
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
        Ok(img)
    }
}

impl Sim<'_> {
    /// Per-lane handle: constant bank 0 word `index` (bound) or a register's low word.
    fn handles(&self, w: &Warp, s: Option<&Src>, mask: u32) -> Result<[u32; WARP_SIZE], ExecError> {
        match s.map(|s| s.kind) {
            Some(SrcKind::Imm(index)) => Ok([self.banks.operand(0, i64::from(index) * 4, 4)? as u32; WARP_SIZE]),
            Some(SrcKind::Reg(r)) => {
                let mut out = [0u32; WARP_SIZE];
                for l in lanes(mask) {
                    out[l] = word(w, r, 0, l);
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
            // Bound TEX.LL: `[Ra, Rlevel, index]`; TEX.B.LL: `[Ra, {handle, level}]`.
            Op::Tex { bindless: false, ll: true, .. } => (i.srcs.get(2), false),
            Op::Tex { .. } | Op::Tld { .. } | Op::Tld4 { .. } => (i.srcs.get(1), false),
            Op::Txq { bindless: false, .. } => (i.srcs.get(1), false),
            Op::Txq { bindless: true, .. } => (i.srcs.first(), false),
            Op::Suld { .. } => (i.srcs.get(1), true),
            Op::Sust { .. } => (i.srcs.get(2), true),
            _ => return Ok(false),
        };
        if mask == 0 {
            return Ok(true);
        }
        let handles = self.handles(w, handle_src, mask)?;
        let mut out = [[0u32; 4]; WARP_SIZE];
        for l in lanes(mask) {
            let images = self.images;
            let img = image_of(images, handles[l], (!matches!(i.op, Op::Txq { .. })).then_some(surface))?;
            let view = View { img, mem: &self.global };
            let ra = reg_of(i.srcs.first());
            out[l] = match i.op {
                // An explicit level (`.LL`: Rb of TEXS.LL, the level register of TEX.LL) reads
                // level 0, the only level an image has (`exec::image`).
                Op::Texs { dim, ll, .. } => {
                    let (ra, rb) = (ra?, reg_of(i.srcs.get(1))?);
                    let c = match (dim, ll) {
                        (TexDim::D2, true) => [word(w, ra, 0, l), word(w, ra, 1, l), 0],
                        (TexDim::D1, _) => [word(w, ra, 0, l), 0, 0],
                        (TexDim::D2, false) => [word(w, ra, 0, l), word(w, rb, 0, l), 0],
                        (TexDim::D3 | TexDim::A2 | TexDim::A1, _) => {
                            [word(w, ra, 0, l), word(w, ra, 1, l), word(w, rb, 0, l)]
                        }
                    };
                    view.sample_dim(dim, c, false)?
                }
                Op::Tlds { dim, .. } => {
                    let (ra, rb) = (ra?, reg_of(i.srcs.get(1))?);
                    let c = match dim {
                        TexDim::D1 => [word(w, ra, 0, l), 0, 0],
                        TexDim::D2 => [word(w, ra, 0, l), word(w, rb, 0, l), 0],
                        TexDim::D3 | TexDim::A2 | TexDim::A1 => {
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
                        TexDim::D3 | TexDim::A2 => 3,
                    };
                    let c = |k: u8| if k < n { word(w, ra, k, l) } else { 0 };
                    view.sample_dim(dim, [c(0), c(1), c(2)], matches!(i.op, Op::Tld { .. }))?
                }
                Op::Tld4s { comp } | Op::Tld4 { comp, .. } => {
                    let ra = ra?;
                    let (x, y) = match i.op {
                        Op::Tld4s { .. } => (word(w, ra, 0, l), word(w, reg_of(i.srcs.get(1))?, 0, l)),
                        _ => (word(w, ra, 0, l), word(w, ra, 1, l)),
                    };
                    let (x0, _) = view.footprint(0, x);
                    let (y0, _) = if img.rank >= 2 { view.footprint(1, y) } else { (0, 0.0) };
                    let mut g = [0u32; 4];
                    for (k, (dx, dy)) in [(0, 1), (1, 1), (1, 0), (0, 0)].into_iter().enumerate() {
                        g[k] = view.texel(x0 + dx, y0 + dy, 0)?[comp as usize & 3];
                    }
                    g
                }
                Op::Txq { .. } => [img.dims[0], img.dims[1], img.dims[2], 0],
                Op::Suld { dim, clamp, size } | Op::Sust { dim, clamp, size } => {
                    let ra = ra?;
                    // x in bytes, y in rows, z in planes (an array's index is the row of a
                    // `1D_ARRAY`, the plane of a `2D_ARRAY`); a coordinate beyond the
                    // access's geometry or the image's rank is 0.
                    let c = |k: u8| {
                        if k < dim.coords() && usize::from(k) < usize::from(img.rank) {
                            word(w, ra, k, l) as i32 as i64
                        } else {
                            0
                        }
                    };
                    let (x, y, z) = (c(0), c(1), c(2));
                    let n = i64::from(size.bytes());
                    let row = i64::from(img.dims[0]) * i64::from(img.format.bytes());
                    let (rows, planes) = (i64::from(img.dims[1]), i64::from(img.dims[2]));
                    if x.rem_euclid(n) != 0 {
                        return Err(ExecError::Launch(format!(
                            "surface `{}`: x = {x} is not a multiple of {n}",
                            img.param
                        )));
                    }
                    let fits = x >= 0 && x + n <= row && (0..rows).contains(&y) && (0..planes).contains(&z);
                    let at = match (fits, clamp) {
                        (true, _) => Some((x, y, z)),
                        (false, SurfClamp::Trap) => {
                            let zs = if dim.coords() == 3 { format!(", z = {z}") } else { String::new() };
                            return Err(ExecError::Launch(format!(
                                "surface `{}`: access at x = {x} bytes, y = {y}{zs} is out of range (.trap)",
                                img.param
                            )));
                        }
                        (false, SurfClamp::Clamp) => {
                            Some((x.max(0).min(row - n) / n * n, y.max(0).min(rows - 1), z.max(0).min(planes - 1)))
                        }
                        (false, SurfClamp::Ign) => None,
                    };
                    let addr = at.map(|(x, y, z)| img.base + ((z * rows + y) * row + x) as u64);
                    // Bytes of register k of the access (sub-word sizes: the low bytes).
                    let part = |k: u64| (k * 4, (n as u64).min(4));
                    let regs = u64::from(size.regs());
                    if let Op::Sust { .. } = i.op {
                        let data = reg_of(i.srcs.get(1))?;
                        if let Some(a) = addr {
                            for k in 0..regs {
                                let (off, b) = part(k);
                                let v = word(w, data, k as u8, l);
                                self.global.write_uint("global", a + off, b, u64::from(v))?;
                            }
                        }
                        [0; 4]
                    } else {
                        let mut v = [0u32; 4];
                        if let Some(a) = addr {
                            for (k, slot) in v.iter_mut().enumerate().take(regs as usize) {
                                let (off, b) = part(k as u64);
                                *slot = self.global.read_uint("global", a + off, b)? as u32;
                            }
                        }
                        v
                    }
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
            Op::Tex { mask, .. } | Op::Tld { mask, .. } | Op::Tld4 { mask, .. } | Op::Txq { mask, .. } => mask,
            Op::Suld { size, .. } => (1u8 << size.regs()) - 1,
            _ => return,
        };
        let mut packed = [[0u32; 4]; WARP_SIZE];
        for l in lanes(mask) {
            let written = out[l].iter().enumerate().filter(|(c, _)| chans & (1 << c) != 0);
            for (slot, (_, v)) in packed[l].iter_mut().zip(written) {
                *slot = *v;
            }
        }
        let n = (chans & 0xf).count_ones() as u8;
        let regs: Vec<RegRef> =
            i.dsts.iter().filter_map(|d| if let Dst::Reg(r) = d { Some(*r) } else { None }).collect();
        match (i.op, regs.as_slice()) {
            (Op::Texs { .. } | Op::Tlds { .. } | Op::Tld4s { .. }, [rd2, rd]) => {
                w.write_regs(RegRef { n: n.min(2), ..*rd }, mask, &packed);
                if n > 2 {
                    let mut hi = [[0u32; 4]; WARP_SIZE];
                    for l in lanes(mask) {
                        hi[l] = [packed[l][2], packed[l][3], 0, 0];
                    }
                    w.write_regs(RegRef { n: n - 2, ..*rd2 }, mask, &hi);
                }
            }
            (_, [rd]) => w.write_regs(RegRef { n, ..*rd }, mask, &packed),
            _ => {}
        }
    }
}
