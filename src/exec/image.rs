//! Textures and surfaces bound to a launch (`ptx2sass run --texture/--surface`): what each
//! one is, not how it is sampled. Both executors implement the texture unit on their own
//! (`exec::ptx::tex`, `exec::sim::tex`) from this description and the semantics below.
//!
//! * The texels live in global memory (a buffer named `tex:NAME` at [`Image::base`], rows
//!   of `width * texel bytes`, then planes), so surface stores show up in the launch's
//!   memory comparison like any other store.
//! * The kernel parameter `NAME` receives the handle [`Image::handle`] (zero-extended to
//!   64 bits); an instruction reaches the image through the handle's low 32 bits, bound
//!   (the parameter's word in constant bank 0) or bindless (a register).
//! * A fetch returns four 32-bit components x, y, z, w: the texel's components for
//!   `f32x4`; `(v, 0, 0, 1)` for the one-component formats (`f32`: floats 0.0 and 1.0;
//!   `u32`, `s32`: integers 0 and 1); `u8x4` is read as unsigned normalized floats `v /
//!   255`. The words are returned as they are, whatever the fetch's result type says.
//! * Coordinates: `.f32` coordinates are multiplied by the size when the image is
//!   [`Image::normalized`]; point filtering takes texel `floor(u)`; linear filtering
//!   takes `u - 0.5`, texel `i = floor`, and the weight `a = frac` rounded down to a
//!   multiple of 1/256 (rounding down is this model's choice; CUDA C Programming Guide, appendix "Texture Fetching", linear
//!   filtering: "a is stored in 9-bit fixed point format with 8 bits of fractional
//!   value"), and computes, in f32 and in this order, `(1-a)*T[i] + a*T[i+1]` (1D),
//!   `(1-a)(1-b)T[i,j] + a(1-b)T[i+1,j] + (1-a)b T[i,j+1] + ab T[i+1,j+1]` (2D; the weight
//!   products first), and the 3D analogue over k then j then i. `.s32` coordinates are
//!   texel indices, never filtered. Dimensions beyond the image's rank are ignored (a 1D
//!   image fetched as 2D at y = 0, as ptxas lowers `tex.1d`).
//! * Addressing of a texel index `i` of a size `n`: clamp `min(max(i, 0), n - 1)`; wrap
//!   `i mod n`; mirror `m = i mod 2n`, `m < n ? m : 2n - 1 - m`; border: a texel outside
//!   reads as all-zero components.
//! * An array fetch (`tex.a1d`, `tex.a2d`; SASS `ARRAY_1D`/`ARRAY_2D`) reads layer
//!   `min(index, n - 1)` of the `n` along the image's last axis (`dims=W,LAYERS` or
//!   `W,H,LAYERS`: layers stored as rows or planes, as for surfaces); the layer is neither
//!   filtered, normalized nor addressed (a model choice: SASS clamps the index to 16 bits
//!   first, `I2I.U16.U32.SAT`, and the hardware's clamp to the layer count is not probed),
//!   the other coordinates are sampled in it as usual.
//! * `tld4` returns component c of the four texels of the linear footprint in the order
//!   `T[i,j+1], T[i+1,j+1], T[i+1,j], T[i,j]` (PTX ISA 9.7.9.4 `tld4`: the texels "(u0,
//!   v1), (u1, v1), (u1, v0), (u0, v0)"); `tld4.a2d` (SASS `TLD4 ... ARRAY_2D`) gathers in
//!   the layer an array fetch reads.
//! * `tex.grad` with `.s32` coordinates samples the coordinate words as `.f32` ones: the
//!   PTX ISA does not say what integer coordinates with gradients mean, and ptxas 11.8
//!   passes the integer registers to `TXD` unconverted (docs/textures.md §1.12), so the
//!   hardware reads their bits as floats; `tex.level` with `.s32` coordinates is a texel
//!   fetch (at level 0, below).
//! * `txq.width/height/depth` and `suq.width/height/depth` return the dimensions (1 for
//!   those beyond the rank).
//! * An image has one level (level 0; `--texture` has no way to give a mip chain): an
//!   explicit level (`tex.level`, `txq.level`; SASS `TEXS.LL`/`TEX.LL`'s level register,
//!   `TXQ`'s `Ra`) is clamped to the levels the image has, so it reads level 0 whatever
//!   its value, as a sampler clamps the level of detail to the texture's last level; the
//!   level of detail that `tex.grad`'s gradients (SASS `TXD`'s `Rb` quad) select is
//!   clamped likewise, so a gradient fetch samples level 0 as `tex` does.
//! * A cube map (`--texture ...,dims=W,W,6N,cube`, `tex.cube`/`tex.acube`; SASS `CUBE`,
//!   `ARRAY_CUBE`) holds N cubes of six W x W faces as planes: face f (+X -X +Y -Y +Z -Z)
//!   of cube c is plane `6c + f`. A fetch picks the face and the face coordinates `(s, t)`
//!   from its direction by the OpenGL rule (OpenGL 4.6, section 8.13 "Cube Map Texture
//!   Selection", table 8.19; the CUDA C Programming Guide, "Cubemap Textures") and samples
//!   that face at `(s * W, t * W)` texels with the image's filter and addressing (no
//!   filtering across faces: a model choice); `tex.acube`'s index picks cube `min(index,
//!   N - 1)`. The interpreter selects from the PTX direction, the simulator from the one
//!   ptxas's code passes, divided by its largest magnitude (same face and coordinates up
//!   to rounding); `tld4` of a cube gathers the footprint at the face
//!   coordinates in that face.
//! * A multisample texture (`--texture ...,dims=W,H,samples=N`, `tex.2dms`; SASS
//!   `TLDS.LZ.MS`/`TLD.LZ.MS`) holds N samples per texel, stored as N planes of `W x H`
//!   texels: sample s of texel (x, y) is texel (x, y) of plane s (this model's layout; the
//!   hardware's is the driver's business). `tex.2dms` `{s, x, y, _}` reads sample s of the
//!   texel at the integer (x, y), which are addressed as for any texel fetch; a sample
//!   outside `0..N` reads as all-zero components (a model choice, not probed).
//! * Surfaces (`suld.b`/`sust.b` of `n` bytes in all: `.b8` 1, `.b16` 2, `.b32` 4,
//!   `.b64` and `.v2.b32` 8, `.v4.b32` and `.v2.b64` 16): x is a byte offset in the row,
//!   y the row, z the plane (an array index is the row of `.a1d`, the plane of `.a2d`:
//!   layers are stored as rows or planes, and out-of-range indices follow the same modes,
//!   a model choice not probed on hardware; coordinates beyond the access's geometry or the image's rank
//!   are 0); an access outside `[0, width * texel bytes - n]` x `[0, height - 1]` x `[0,
//!   depth - 1]` traps (`.trap`), is clamped into it (`.clamp`, x also down to a multiple
//!   of `n`), or reads zero / writes nothing (`.zero`); x not a multiple of `n` is an
//!   error. The bytes are little-endian, elements consecutive; a `.b8`/`.b16` load is
//!   zero-extended, a store writes the register's low bytes.
//! * Vectors of `.b8`/`.b16` surface elements are one access of all their bytes, the
//!   elements consecutive (little-endian).
//! * `sured` (SASS `SURED`) replaces the element (4 bytes; 8 for `.u64`) at the
//!   coordinates by `op(element, value)` (`.add` wrapping; `.min`/`.max` unsigned, signed
//!   for `.s32`; `.and`, `.or`), atomically: threads apply theirs one after the other,
//!   and the operations commute. `sured.p` counts x in samples (PTX ISA "sample
//!   addressing") and is modelled on `u32`/`s32` surfaces only (the 32-bit sample reduced
//!   as an integer); out-of-range modes as for loads and stores.
//! * `sust.p` (formatted store, SASS `SUST.P`; PTX ISA 9.7.10.2: x counts samples, and
//!   the data are `.f32` for UNORM/SNORM/FLOAT formats, `.u32`/`.s32` for UINT/SINT): the
//!   source vector's elements are the components R, G, B, A in order; `f32x4` stores each
//!   given component's bits, `u8x4` (UNORM) each as a byte: NaN 0, saturated to [0, 1],
//!   times 255 in f32, rounded to nearest even (a model choice, as the D3D float-to-UNORM
//!   rule; not measured on hardware); `f32`, `u32`, `s32` store the R component's 32 bits.
//!   Components the vector does not give keep their bytes (PTX leaves them unpredictable).
//! * A sampler (`exec::sampler`, independent mode) gives a fetch its filter, addressing
//!   and normalization.

/// Storage format of the texels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Four f32 components, 16 bytes.
    F32x4,
    /// One f32, 4 bytes.
    F32,
    /// One u32, 4 bytes.
    U32,
    /// One s32, 4 bytes.
    S32,
    /// Four unsigned normalized bytes, 4 bytes.
    U8x4,
}

impl Format {
    /// Bytes per texel.
    pub fn bytes(self) -> u32 {
        match self {
            Format::F32x4 => 16,
            _ => 4,
        }
    }

    /// True for the integer formats (which cannot be filtered linearly).
    pub fn integer(self) -> bool {
        matches!(self, Format::U32 | Format::S32)
    }
}

/// Filtering of `.f32`-coordinate fetches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    /// Nearest texel.
    Point,
    /// Bilinear (trilinear in 3D) with 8-bit fractional weights.
    Linear,
}

/// Addressing of texel indices outside the image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddrMode {
    /// Clamp to the edge.
    Clamp,
    /// Repeat.
    Wrap,
    /// Zero outside.
    Border,
    /// Mirrored repeat.
    Mirror,
}

/// One texture or surface of a launch.
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    /// The kernel parameter that receives the handle.
    pub param: String,
    /// The handle's value (its low 32 bits name the image).
    pub handle: u32,
    /// A surface (`--surface`) rather than a texture.
    pub surface: bool,
    /// Texel format.
    pub format: Format,
    /// Width, height, depth in texels (1 beyond the rank).
    pub dims: [u32; 3],
    /// 1, 2 or 3.
    pub rank: u8,
    /// Filtering.
    pub filter: Filter,
    /// Addressing.
    pub addr: AddrMode,
    /// Normalized `.f32` coordinates.
    pub normalized: bool,
    /// Global address of texel (0, 0, 0).
    pub base: u64,
    /// Samples per texel of a multisample image (`--texture ...,samples=N`; 1 otherwise).
    pub samples: u32,
    /// A sampler (`run --sampler`, independent texturing mode; `exec::sampler`): only
    /// `param`, `handle` (the sampler index, 1..4096), `filter`, `addr` and `normalized`
    /// count, and it has no texels.
    pub sampler: bool,
}

/// First handle value given to the images of a launch (then one more per image).
pub const FIRST_HANDLE: u32 = 0x7e00;

/// Places each image's texels in `launch`'s global memory (a buffer `tex:NAME` after every
/// existing one, 1 MiB aligned, so that an access past its end is out of bounds) and
/// records the images. The byte count is checked against the image's size before
/// anything is allocated.
pub fn bind(launch: &mut super::Launch, images: Vec<(Image, Vec<u8>)>) -> Result<(), super::ExecError> {
    const SPACING: u64 = 1 << 20;
    let mut next = launch
        .global
        .regions()
        .map(|(_, base, b)| base.saturating_add(b.len() as u64))
        .max()
        .unwrap_or(super::GLOBAL_BASE)
        .max(super::GLOBAL_BASE)
        .div_ceil(SPACING)
        .saturating_add(1)
        .saturating_mul(SPACING);
    for (mut img, bytes) in images {
        // A sampler has no texels (`exec::sampler`).
        if img.sampler {
            launch.images.push(img);
            continue;
        }
        let want = img
            .dims
            .iter()
            .fold(u64::from(img.format.bytes()), |a, &d| a.saturating_mul(u64::from(d)))
            .saturating_mul(u64::from(img.samples.max(1)));
        if bytes.len() as u64 != want {
            return Err(super::ExecError::Launch(format!(
                "{} `{}`: {} bytes of texels, but {}x{}x{} texels of {} bytes{} need {want}",
                if img.surface { "surface" } else { "texture" },
                img.param,
                bytes.len(),
                img.dims[0],
                img.dims[1],
                img.dims[2],
                img.format.bytes(),
                if img.samples > 1 { format!(" times {} samples", img.samples) } else { String::new() }
            )));
        }
        img.base = next;
        next = next.saturating_add(want.div_ceil(SPACING).max(1).saturating_mul(SPACING));
        launch.global.alloc(&format!("tex:{}", img.param), img.base, bytes)?;
        launch.images.push(img);
    }
    Ok(())
}

/// The position of parameter `name` among the parameters of kernel `kernel` of `module`.
pub fn param_index(module: &crate::ptx::ast::Module, kernel: &str, name: &str) -> Option<usize> {
    module.items.iter().find_map(|i| match i {
        crate::ptx::ast::Item::Function(f) if f.name.name == kernel => {
            f.params.iter().position(|p| p.name.name == name)
        }
        _ => None,
    })
}

/// Whether `name` is a `.global .texref` (`Some(false)`) or `.surfref` (`Some(true)`) of
/// `module` (unified mode): `run --texture/--surface NAME=...` binds the image to it, and
/// the executors find it by name (docs/textures.md §2).
pub fn ref_kind(module: &crate::ptx::ast::Module, name: &str) -> Option<bool> {
    module.refs.iter().find(|r| r.name.name == name).map(|r| r.surface)
}
