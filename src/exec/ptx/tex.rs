//! The interpreter's texture unit: `tex`, `tld4`, `txq`, `suld.b`, `sust.b` (PTX ISA
//! 9.7.9.3-9.7.9.5, 9.7.10.1-9.7.10.2) on the images of the launch, with the sampling
//! rules of `exec::image` (addressing, point and linear filtering with 8-bit fractional
//! weights, normalized coordinates, surface out-of-range modes). Written from those rules
//! and the PTX ISA; it shares no code with the simulator's texture unit or the compiler.

use super::compile::FnCx;
use super::program::{Dst, Src};
use crate::exec::image::{AddrMode, Filter, Format, Image};
use crate::exec::{ExecError, Memory};
use crate::ptx::ast::{Instruction, Operand};
use crate::ptx::texture::{self, Clamp, Family, Geometry, Lod};
use crate::ptx::types::ScalarType;

/// What a texture instruction does.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum Kind {
    /// `tex`: `rank` coordinates, `.s32` (texel indices) when `int`.
    /// `array`: the first coordinate is an array index (`tex.a1d`, `tex.a2d`).
    Fetch { rank: usize, int: bool, array: bool },
    /// `tex.2dms` `{sample, x, y, _}`: sample `sample` of the texel at `(x, y)`.
    Multisample,
    /// `tex.cube` `{x, y, z, _}` / `tex.acube` `{index, x, y, z}` (`array`): the face the
    /// direction points at, of cube `index`.
    Cube { array: bool },
    /// `tld4.comp.2d`; `tld4.comp.a2d` (`array`: `{index, x, y, _}`, the gather in layer
    /// `index`).
    /// `tld4.comp.cube` / `.acube` (`cube`; `array` with it: `{index, x, y, z}`): the
    /// footprint at the face coordinates of the face the direction selects.
    Gather { comp: usize, array: bool, cube: bool },
    /// `txq.width/height/depth`: dimension 0, 1, 2.
    Query { dim: usize },
    /// `suld.b.{1d,2d,3d}{.v2,.v4}.{b8,b16,b32,b64}`: `rank` coordinates, elements of
    /// `bytes` bytes.
    Load { clamp: Clamp, rank: usize, bytes: u32 },
    /// `sust.b.{1d,2d,3d}{.v2,.v4}.{b8,b16,b32,b64}`.
    Store { clamp: Clamp, rank: usize, bytes: u32 },
    /// `sust.p.{1d,2d,3d,a1d,a2d}{.v2,.v4}.b32`: x in samples, converted to the format.
    StoreFormatted { clamp: Clamp, rank: usize },
    /// `sured.{b,p}.op.{1d,2d,3d}.type`: x in samples when `sample` (`.p`).
    Reduce { clamp: Clamp, rank: usize, red: super::surf::Red, sample: bool },
}

/// One decoded texture or surface instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct TexInstr {
    /// What it does.
    pub kind: Kind,
    /// The `.u64` handle.
    pub handle: Src,
    /// A `.texref`/`.surfref` operand: the image bound to this name (`run --texture
    /// NAME=...`), `handle` unused.
    pub by_name: Option<String>,
    /// Coordinates (32-bit each).
    pub coords: Vec<Src>,
    /// Result registers (sinks `None`).
    pub dsts: Vec<Option<Dst>>,
    /// Stored data (`sust`), one source per element.
    pub data: Vec<Src>,
    /// The sampler of `tex`/`tld4` `[t, s, {c}]` (independent mode, `exec::sampler`): a
    /// `.u64` register holding the sampler's handle, or a `.samplerref`'s name.
    pub sampler: Option<Handle>,
}

/// A handle register, or the name of a `.texref`/`.surfref` ([`TexInstr::by_name`]).
pub(super) type Handle = (Src, Option<String>);

/// Decodes a texture or surface instruction of `fx`'s function.
pub(super) fn decode(fx: &FnCx, i: &Instruction) -> Result<TexInstr, String> {
    let t = texture::decode(i).map_err(|_| "a malformed texture instruction".to_string())?;
    let ops = &i.operands;
    // A name that is not a register is a `.texref`/`.surfref` (the checker resolved it),
    // found by name at run time.
    let handle = |image: &crate::ptx::ast::Ident| -> Handle {
        match fx.src(
            &Operand::Name { name: image.clone(), component: None, negated: false, span: image.span },
            ScalarType::U64,
        ) {
            Ok(h) => (h, None),
            Err(_) => (Src::Imm(0), Some(image.name.clone())),
        }
    };
    let image = |k: usize| -> Result<(Handle, Vec<Src>), String> {
        match ops.get(k) {
            Some(Operand::Texture { image, parts, .. }) => {
                // `[t, s, {c}]`: the sampler is read by `sampler` below.
                let (Some(coords), 1..=2) = (parts.last(), parts.len()) else {
                    return Err("a texture operand other than `[handle, {coordinates}]`".into());
                };
                let c = fx.srcs(coords, ScalarType::B32)?;
                Ok((handle(image), c))
            }
            _ => Err("a texture operand other than `[handle, {coordinates}]`".into()),
        }
    };
    // The sampler of a fetch's operand `[t, s, {c}]` (`exec::sampler`).
    let sampler = match ops.get(1) {
        Some(Operand::Texture { parts, .. }) if parts.len() == 2 && matches!(t.family, Family::Tex | Family::Tld4) => {
            match parts.first() {
                Some(Operand::Name { name, .. }) => Some(handle(name)),
                _ => return Err("a sampler that is not a name".into()),
            }
        }
        _ => None,
    };
    let rank = |g: Option<Geometry>| -> Result<usize, String> {
        match g {
            Some(Geometry::D1) => Ok(1),
            Some(Geometry::D2) => Ok(2),
            Some(Geometry::D3) => Ok(3),
            Some(g) => Err(format!("the `{}` geometry", g.as_str())),
            None => Err("a missing geometry".into()),
        }
    };
    match t.family {
        Family::Tex => {
            // `tex.level` reads level 0, the only level an image has (`exec::image`), and
            // so does `tex.grad`: whatever the gradients, the level of detail they select
            // is clamped to the one level, so the fetch samples level 0 as `tex` does.
            if t.lod == Lod::Base {
                return Err("a base level".into());
            }
            // `tex.grad` with `.s32` coordinates is not a texel fetch: the PTX ISA does not
            // say what integer coordinates with gradients mean, and ptxas 11.8 passes the
            // integer registers unconverted to `TXD` (their bits read as floats,
            // `probe_grad.ptx` g2d_i, `probe_geometries.ptx` gi1d, gi2d; docs/textures.md
            // §1.12), so the coordinate words are sampled as `.f32` ones. `tex.level` with
            // `.s32` coordinates is a texel fetch at level 0.
            let int = t.ctype == Some(ScalarType::S32) && t.lod != Lod::Grad;
            if !matches!(t.dtype, Some(ScalarType::F32 | ScalarType::S32 | ScalarType::U32)) {
                return Err("half-precision results".into());
            }
            if let Some(g @ (Geometry::Cube | Geometry::Acube)) = t.geometry {
                // `tex.level.cube` reads level 0, the only one an image has (`exec::image`).
                if !matches!(t.lod, Lod::Auto | Lod::Level) || t.ctype == Some(ScalarType::S32) {
                    return Err("a cube fetch with gradients or integer coordinates".into());
                }
                let array = g == Geometry::Acube;
                let ((handle, by_name), mut coords) = image(1)?;
                coords.truncate(if array { 4 } else { 3 });
                let dsts = fx.dsts(ops.first().ok_or("missing result")?)?;
                return Ok(TexInstr {
                    kind: Kind::Cube { array },
                    handle,
                    by_name,
                    coords,
                    dsts,
                    data: vec![],
                    sampler,
                });
            }
            if t.geometry == Some(Geometry::D2ms) {
                let ((handle, by_name), mut coords) = image(1)?;
                coords.truncate(3);
                let dsts = fx.dsts(ops.first().ok_or("missing result")?)?;
                return Ok(TexInstr { kind: Kind::Multisample, handle, by_name, coords, dsts, data: vec![], sampler });
            }
            // An array fetch reads `{index, x(, y)}` (PTX ISA 9.7.9.3 `tex`).
            let (r, array) = match t.geometry {
                Some(Geometry::A1d) => (2, true),
                Some(Geometry::A2d) => (3, true),
                g => (rank(g)?, false),
            };
            let ((handle, by_name), mut coords) = image(1)?;
            coords.truncate(r);
            let dsts = fx.dsts(ops.first().ok_or("missing result")?)?;
            Ok(TexInstr {
                kind: Kind::Fetch { rank: r, int, array },
                handle,
                by_name,
                coords,
                dsts,
                data: vec![],
                sampler,
            })
        }
        Family::Tld4 => {
            let (array, cube) = match t.geometry {
                Some(Geometry::D2) => (false, false),
                Some(Geometry::A2d) => (true, false),
                Some(Geometry::Cube) => (false, true),
                _ => (true, true),
            };
            let comp = match t.component {
                Some('r') => 0,
                Some('g') => 1,
                Some('b') => 2,
                _ => 3,
            };
            let ((handle, by_name), mut coords) = image(1)?;
            coords.truncate(match (array, cube) {
                (_, true) => 4,
                (true, false) => 3,
                (false, false) => 2,
            });
            let dsts = fx.dsts(ops.first().ok_or("missing result")?)?;
            Ok(TexInstr {
                kind: Kind::Gather { comp, array, cube },
                handle,
                by_name,
                coords,
                dsts,
                data: vec![],
                sampler,
            })
        }
        // `txq{.level}` and `suq` `.width/.height/.depth` (PTX ISA 9.7.9.5, 9.7.10.4); a
        // level beyond 0 reads level 0, the only one an image has (`exec::image`).
        Family::Txq | Family::Suq => {
            let dim = match t.query.as_deref() {
                Some(".width") => 0,
                Some(".height") => 1,
                Some(".depth") => 2,
                _ => return Err("queries other than txq/suq width, height, depth".into()),
            };
            let Some(Operand::Address { base: crate::ptx::ast::AddrBase::Name(n), .. }) = ops.get(1) else {
                return Err("a query operand other than `[handle]`".into());
            };
            let (handle, by_name) = handle(n);
            let dsts = vec![fx.dst(ops.first().ok_or("missing result")?)?];
            Ok(TexInstr {
                kind: Kind::Query { dim },
                handle,
                by_name,
                coords: vec![],
                dsts,
                data: vec![],
                sampler: None,
            })
        }
        Family::Suld | Family::Sust | Family::Sured => super::surf::decode(fx, &t, ops, &image),
    }
}

fn find(images: &[Image], handle: u64) -> Result<&Image, ExecError> {
    images.iter().find(|i| !i.sampler && u64::from(i.handle) == handle).ok_or_else(|| {
        ExecError::Launch(format!(
            "no texture or surface has the handle 0x{handle:x} (bind one to the kernel parameter with --texture/--surface)"
        ))
    })
}

/// The error of an image address that does not fit in 64 bits (images are at most 2^16
/// texels a side, so only an `Image` built by hand with larger sizes reaches it).
pub(super) fn overflow(img: &Image) -> ExecError {
    ExecError::Launch(format!("image `{}`: a texel address overflows", img.param))
}

/// Index `i` of a dimension of size `n` under `mode`; `None` outside (border) and for an
/// empty dimension (`n < 1`, which `spec::image` never builds).
fn address(i: i64, n: i64, mode: AddrMode) -> Option<i64> {
    let last = n.checked_sub(1).filter(|l| *l >= 0)?;
    match mode {
        AddrMode::Clamp => Some(i.clamp(0, last)),
        AddrMode::Wrap => i.checked_rem_euclid(n),
        AddrMode::Mirror => {
            // n < 2^32, so 2n and 2n - 1 - m (0 <= m < 2n) fit.
            let period = n.checked_mul(2)?;
            let m = i.checked_rem_euclid(period)?;
            Some(if m < n { m } else { period.checked_sub(1)?.checked_sub(m)? })
        }
        AddrMode::Border => (0..n).contains(&i).then_some(i),
    }
}

/// The four component words of the texel at `at` (already addressed).
fn texel(img: &Image, mem: &Memory, at: [i64; 3]) -> Result<[u32; 4], ExecError> {
    let [w, h, _] = img.dims.map(i64::from);
    let [x, y, z] = at;
    let size = u64::from(img.format.bytes());
    let addr = z
        .checked_mul(h)
        .and_then(|v| v.checked_add(y))
        .and_then(|v| v.checked_mul(w))
        .and_then(|v| v.checked_add(x))
        .and_then(|v| u64::try_from(v).ok())
        .and_then(|v| v.checked_mul(size))
        .and_then(|v| img.base.checked_add(v))
        .ok_or_else(|| overflow(img))?;
    let b = mem.read("global", addr, size)?;
    let mut words = b.chunks_exact(4).map(|c| c.try_into().map_or(0, u32::from_le_bytes));
    let mut word = || words.next().unwrap_or(0);
    Ok(match img.format {
        Format::F32x4 => [word(), word(), word(), word()],
        Format::F32 => [word(), 0, 0, 1f32.to_bits()],
        Format::U32 | Format::S32 => [word(), 0, 0, 1],
        Format::U8x4 => {
            let byte = |k: usize| f32::from(b.get(k).copied().unwrap_or(0));
            [0, 1, 2, 3].map(|k| (byte(k) / 255.0).to_bits())
        }
    })
}

/// The texel at integer indices `idx` (before addressing), all zero outside a border.
fn fetch(img: &Image, mem: &Memory, idx: [i64; 3]) -> Result<[u32; 4], ExecError> {
    let mut at = [0i64; 3];
    for ((slot, &i), &n) in at.iter_mut().zip(&idx).zip(&img.dims).take(usize::from(img.rank)) {
        match address(i, i64::from(n), img.addr) {
            Some(v) => *slot = v,
            None => return Ok([0; 4]),
        }
    }
    texel(img, mem, at)
}

/// The `.f32` coordinate `c` of dimension `d` in texel units.
fn unnormalize(img: &Image, c: f32, d: usize) -> f32 {
    match img.dims.get(d) {
        Some(&n) if img.normalized => c * n as f32,
        _ => c,
    }
}

/// Index and 8-bit weight of the linear footprint along one dimension.
fn linear(u: f32) -> (i64, f32) {
    let x = u - 0.5;
    let i = x.floor();
    let frac = x - i;
    let a = (frac * 256.0).floor() / 256.0;
    (i as i64, a)
}

/// A fetch at `coords` (texel indices when `int`); `layer` is an array fetch's index,
/// which picks the layer along the image's last axis (clamped to it: `exec::image`),
/// the other axes being sampled as usual.
fn sample(img: &Image, mem: &Memory, coords: &[u32], int: bool, layer: Option<u32>) -> Result<[u32; 4], ExecError> {
    let all = usize::from(img.rank);
    let rank = if layer.is_some() { all.saturating_sub(1) } else { all };
    let coord = |d: usize| coords.get(d).copied().unwrap_or(0);
    let layer_at = |idx: &mut [i64; 3]| {
        if let (Some(l), Some(slot), Some(&n)) = (layer, idx.get_mut(rank), img.dims.get(rank)) {
            *slot = i64::from(l).min(i64::from(n).saturating_sub(1));
        }
    };
    if int {
        let mut idx = [0i64; 3];
        for (d, slot) in idx.iter_mut().enumerate().take(rank) {
            *slot = i64::from(coord(d) as i32);
        }
        layer_at(&mut idx);
        return fetch(img, mem, idx);
    }
    let u: Vec<f32> = (0..rank).map(|d| unnormalize(img, f32::from_bits(coord(d)), d)).collect();
    if img.filter == Filter::Point {
        let mut idx = [0i64; 3];
        for (slot, v) in idx.iter_mut().zip(&u) {
            *slot = v.floor() as i64;
        }
        layer_at(&mut idx);
        return fetch(img, mem, idx);
    }
    let mut base = [0i64; 3];
    let mut wt = [0f32; 3];
    for ((b, w), v) in base.iter_mut().zip(wt.iter_mut()).zip(&u) {
        (*b, *w) = linear(*v);
    }
    layer_at(&mut base);
    let mut sum = [0f32; 4];
    let span = |d: usize| if d < rank { 2i64 } else { 1 };
    for k in 0..span(2) {
        for j in 0..span(1) {
            for i in 0..span(0) {
                let step = [i, j, k];
                let mut w = 1f32;
                for (&s, &a) in step.iter().zip(&wt).take(rank) {
                    w *= if s == 1 { a } else { 1.0 - a };
                }
                // A coordinate of +-inf or beyond 2^63 texels saturates to the last index
                // (`as i64`); the neighbour saturates too instead of overflowing (and then
                // addresses as any far-away index does).
                let mut at = base;
                for (a, s) in at.iter_mut().zip(step) {
                    *a = a.saturating_add(s);
                }
                let t = fetch(img, mem, at)?;
                for (s, c) in sum.iter_mut().zip(t) {
                    *s += w * f32::from_bits(c);
                }
            }
        }
    }
    Ok(sum.map(f32::to_bits))
}

/// A cube-map fetch in the direction `dir` (`.f32` x, y, z as the PTX operands give
/// them) of cube `index` (clamped to the cubes the image holds: `6 * cubes` faces along
/// its last axis, face f of cube c = plane `6c + f`, `exec::image`). The face and its
/// coordinates follow the OpenGL 4.6 specification, section 8.13 "Cube Map Texture
/// Selection", table 8.19 (as the CUDA C Programming Guide's "Cubemap Textures"
/// describes): the major axis is the component of largest magnitude (on a tie x, then
/// y), the face is `2 * axis` (+1 when negative: +X -X +Y -Y +Z -Z), `(sc, tc)` per face
/// `(-z, -y) (z, -y) (x, z) (x, -z) (x, -y) (-x, -y)`, `s = (sc / |ma| + 1) / 2`, `t =
/// (tc / |ma| + 1) / 2`, sampled at `(s * W, t * W)` texels in that face with the image's
/// filter and addressing (no filtering across faces: a model choice).
fn cube(img: &Image, mem: &Memory, dir: &[u32], index: u32) -> Result<[u32; 4], ExecError> {
    let (plane, s, t) = cube_face(img, dir, index);
    sample(img, mem, &[s.to_bits(), t.to_bits()], false, Some(plane))
}

/// The plane and face coordinates `(s * W, t * W)` (texels) a cube fetch in direction
/// `dir` of cube `index` reads ([`cube`]).
fn cube_face(img: &Image, dir: &[u32], index: u32) -> (u32, f32, f32) {
    let v: Vec<f32> = (0..3).map(|k| f32::from_bits(dir.get(k).copied().unwrap_or(0))).collect();
    let (x, y, z) =
        (v.first().copied().unwrap_or(0.0), v.get(1).copied().unwrap_or(0.0), v.get(2).copied().unwrap_or(0.0));
    let axis = if x.abs() >= y.abs() && x.abs() >= z.abs() {
        0
    } else if y.abs() >= z.abs() {
        1
    } else {
        2
    };
    let major = v.get(axis).copied().unwrap_or(0.0);
    let face = (axis as u32).saturating_mul(2).saturating_add(u32::from(major < 0.0));
    let (sc, tc) = match face {
        0 => (-z, -y),
        1 => (z, -y),
        2 => (x, z),
        3 => (x, -z),
        4 => (x, -y),
        _ => (-x, -y),
    };
    let ma = major.abs();
    let [w, _, faces] = img.dims;
    let size = w as f32;
    let s = (sc / ma + 1.0) * 0.5 * size;
    let t = (tc / ma + 1.0) * 0.5 * size;
    let last_cube = (faces / 6).saturating_sub(1);
    let plane = index.min(last_cube).saturating_mul(6).saturating_add(face);
    (plane, s, t)
}

/// Executes `t` for one thread, given its handle value, coordinate words and stored
/// values (one per element of a `sust`): the values of its results, in the order of
/// [`TexInstr::dsts`] (surface elements zero-extended).
pub(super) fn exec(
    t: &TexInstr,
    images: &[Image],
    global: &mut Memory,
    handle: u64,
    coords: &[u32],
    data: &[u64],
    sampler: Option<u64>,
) -> Result<Vec<u64>, ExecError> {
    let img = match &t.by_name {
        Some(name) => images.iter().find(|i| !i.sampler && i.param == *name).ok_or_else(|| {
            ExecError::Launch(format!(
                "no texture or surface is bound to the reference `{name}` (bind one with --texture/--surface {name}=...)"
            ))
        })?,
        None => find(images, handle)?,
    };
    // A sampler's state replaces the texture's (`exec::sampler`).
    let sampled;
    let img = match (&t.sampler, sampler) {
        (Some((_, by_name)), Some(value)) => {
            let s = images
                .iter()
                .find(|i| {
                    i.sampler
                        && match by_name {
                            Some(name) => i.param == *name,
                            None => u64::from(i.handle) == value,
                        }
                })
                .ok_or_else(|| match by_name {
                    Some(name) => ExecError::Launch(format!(
                        "no sampler is bound to the `.samplerref` `{name}` (bind one with --sampler {name}=...)"
                    )),
                    None => ExecError::Launch(format!(
                        "no sampler has the handle 0x{value:x} (bind one to the kernel parameter with --sampler)"
                    )),
                })?;
            sampled = Image { filter: s.filter, addr: s.addr, normalized: s.normalized, ..img.clone() };
            &sampled
        }
        _ => img,
    };
    let kind_is_surface =
        matches!(t.kind, Kind::Load { .. } | Kind::Store { .. } | Kind::Reduce { .. } | Kind::StoreFormatted { .. });
    if kind_is_surface != img.surface && !matches!(t.kind, Kind::Query { .. }) {
        return Err(ExecError::Launch(format!(
            "`{}` is a {} but the kernel uses it as a {}",
            img.param,
            if img.surface { "surface" } else { "texture" },
            if img.surface { "texture" } else { "surface" }
        )));
    }
    let words = |v: [u32; 4]| v.iter().map(|&w| u64::from(w)).collect::<Vec<u64>>();
    match &t.kind {
        Kind::Fetch { int, array: false, .. } => Ok(words(sample(img, global, coords, *int, None)?)),
        Kind::Fetch { int, array: true, .. } => {
            let (layer, rest) = coords.split_first().map_or((0, &[][..]), |(l, r)| (*l, r));
            Ok(words(sample(img, global, rest, *int, Some(layer))?))
        }
        // Sample `s` of texel `(x, y)`: plane `s` of the image (`exec::image`); a sample
        // outside `0..samples` reads zero.
        Kind::Multisample => {
            let c = |k: usize| i64::from(coords.get(k).copied().unwrap_or(0) as i32);
            let [w, h, _] = img.dims.map(i64::from);
            let (x, y) = match (address(c(1), w, img.addr), address(c(2), h, img.addr)) {
                (Some(x), Some(y)) => (x, y),
                _ => return Ok(words([0; 4])),
            };
            if !(0..i64::from(img.samples)).contains(&c(0)) {
                return Ok(words([0; 4]));
            }
            Ok(words(texel(img, global, [x, y, c(0)])?))
        }
        Kind::Cube { array } => {
            let (index, dir) = match (array, coords.split_first()) {
                (true, Some((i, rest))) => (*i, rest),
                _ => (0, coords),
            };
            Ok(words(cube(img, global, dir, index)?))
        }
        Kind::Gather { comp, array, cube } => {
            // An array gather reads `{index, x, y}` and gathers in layer `min(index,
            // layers - 1)` (the image's third axis, `exec::image`); the layer is in range,
            // so `fetch`'s addressing leaves it as it is. A cube gather gathers at the face
            // coordinates in the plane of the face (`cube_face`).
            let [_, _, layers] = img.dims;
            let split = match (array, coords.split_first()) {
                (true, Some((l, rest))) => (*l, rest),
                _ => (0, coords),
            };
            let (layer, xy): (i64, Vec<u32>) = if *cube {
                let (plane, s, t) = cube_face(img, split.1, split.0);
                (i64::from(plane), vec![s.to_bits(), t.to_bits()])
            } else {
                (i64::from(split.0).min(i64::from(layers).saturating_sub(1)), split.1.to_vec())
            };
            let u = |d: usize| unnormalize(img, f32::from_bits(xy.get(d).copied().unwrap_or(0)), d);
            let (i, _) = linear(u(0));
            let (j, _) = linear(if img.rank >= 2 { u(1) } else { 0.5 });
            let mut out = [0u32; 4];
            for (slot, (di, dj)) in out.iter_mut().zip([(0, 1), (1, 1), (1, 0), (0, 0)]) {
                // Saturating: a coordinate of +-inf is index i64::MAX/MIN (see `sample`).
                let t = fetch(img, global, [i.saturating_add(di), j.saturating_add(dj), layer])?;
                *slot = t.get(*comp).copied().unwrap_or(0);
            }
            Ok(words(out))
        }
        Kind::Query { dim } => Ok(vec![u64::from(img.dims.get(*dim).copied().unwrap_or(1))]),
        Kind::StoreFormatted { clamp, rank } => {
            super::surf::store_formatted(img, global, coords, data, *clamp, *rank).map(|()| vec![])
        }
        Kind::Reduce { clamp, rank, red, sample } => {
            let v = data.first().copied().unwrap_or(0);
            super::surf::reduce(img, global, coords, v, *clamp, *rank, *red, *sample).map(|()| vec![])
        }
        Kind::Load { clamp, rank, bytes } | Kind::Store { clamp, rank, bytes } => {
            let load = matches!(t.kind, Kind::Load { .. });
            super::surf::surface(img, global, coords, data, load, *clamp, *rank, *bytes, t.dsts.len())
        }
    }
}
