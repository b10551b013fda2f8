//! Samplers bound to a launch (`ptx2sass run --sampler`, independent texturing mode,
//! `.target ..., texmode_independent`; docs/textures.md §1.14): what a fetch `tex`/`tld4`
//! `[t, s, {c}]` takes from its sampler `s`.
//!
//! * `--sampler NAME=[filter=point|linear][,addr=clamp|wrap|border|mirror][,norm]` binds a
//!   sampler to the kernel parameter `NAME` (a `.u64`, which then takes no `--arg`) or to
//!   the `.global .samplerref NAME`. The k-th sampler (from 0) has the handle `k + 1` (a
//!   sampler header index, below 4096). Defaults: point, clamp, unnormalized.
//! * A fetch with a sampler samples the texture's texels (format, dimensions, rank) with
//!   the **sampler's** filter, addressing mode and coordinate normalization, not the
//!   texture's (`--texture`'s `filter`, `addr`, `norm` are then unused), by the rules of
//!   `exec::image`.
//! * The 32-bit handle the hardware reads is `(sampler << 20) | (texture & 0xfffff)`: ptxas
//!   11.8 builds it so from two `.u64` registers (`SHL R0, Rs, 0x14; BFI R0, Rt, 0x1400, R0`)
//!   and has the driver write it into a `.texref`/`.samplerref` pair's constant-bank word
//!   (`R_CUDA_TEX_HEADER_INDEX` and `R_CUDA_SAMP_HEADER_INDEX` at the same offset). Texture
//!   handles are below 2^20 ([`super::image::FIRST_HANDLE`] + k), so a handle whose high 12
//!   bits are zero names a texture alone (unified mode: the texture's own state).
//! * The initializers of a `.global .samplerref` (`= { filter_mode = linear, ... }`) are
//!   not read: the sampler state comes from `--sampler` only, and a fetch through an
//!   unbound sampler is a launch error.

use super::image::{AddrMode, Filter, Format, Image};
use super::spec::SpecError;

/// At most this many samplers per launch (12 bits of the handle, 0 meaning none).
pub const MAX_SAMPLERS: usize = 4095;

/// Parses one `--sampler NAME=[filter=...][,addr=...][,norm]` into a sampler with the
/// handle `handle` ([`Image::sampler`]). Errors: a usage error naming the bad part.
pub fn parse(s: &str, handle: u32) -> Result<Image, SpecError> {
    let syntax = "NAME=[filter=point|linear][,addr=clamp|wrap|border|mirror][,norm]";
    let Some((name, rest)) = s.split_once('=').filter(|(n, _)| !n.is_empty()) else {
        return Err(SpecError::Usage(format!("`{s}`: expected {syntax}")));
    };
    let (mut filter, mut addr, mut normalized) = (Filter::Point, AddrMode::Clamp, false);
    for p in rest.split(',').filter(|p| !p.is_empty()) {
        match p.split_once('=') {
            Some(("filter", "point")) => filter = Filter::Point,
            Some(("filter", "linear")) => filter = Filter::Linear,
            Some(("addr", a)) => {
                addr = match a {
                    "clamp" => AddrMode::Clamp,
                    "wrap" => AddrMode::Wrap,
                    "border" => AddrMode::Border,
                    "mirror" => AddrMode::Mirror,
                    _ => return Err(SpecError::Usage(format!("`{a}`: expected addr=clamp, wrap, border or mirror"))),
                }
            }
            None if p == "norm" => normalized = true,
            _ => return Err(SpecError::Usage(format!("`{p}` in `{s}`: expected {syntax}"))),
        }
    }
    Ok(Image {
        param: name.to_string(),
        handle,
        surface: false,
        format: Format::F32,
        dims: [1; 3],
        rank: 1,
        filter,
        addr,
        normalized,
        base: 0,
        samples: 1,
        sampler: true,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_sampler_state() {
        let s = parse("s=filter=linear,addr=wrap,norm", 1).unwrap();
        assert_eq!(
            (s.param.as_str(), s.filter, s.addr, s.normalized, s.sampler),
            ("s", Filter::Linear, AddrMode::Wrap, true, true)
        );
        let d = parse("s=", 2).unwrap();
        assert_eq!((d.filter, d.addr, d.normalized, d.handle), (Filter::Point, AddrMode::Clamp, false, 2));
        assert!(matches!(parse("s=filter=cubic", 1), Err(SpecError::Usage(m)) if m.contains("filter=cubic")));
        assert!(matches!(parse("=norm", 1), Err(SpecError::Usage(_))));
    }
}
