//! Texture and surface instructions: `tex`, `tld4`, `txq` (PTX ISA 9.7.9.3 "Texture
//! Instructions") and `suld`, `sust`, `sured`, `suq` (9.7.10 "Surface Instructions").
//!
//! [`decode`] reads an instruction's modifiers and operands into a [`TexOp`] and reports
//! every rule it breaks (missing or conflicting geometry, types, clamp modes, coordinate
//! vectors of the wrong length). The classifier calls it so that bad input is rejected
//! with a precise diagnostic; lowering calls it again to learn the form (the instruction
//! stays [`crate::ptx::instr::InstrKind::Other`], so nothing else in the front end changes).
//! What ptxas 11.8 emits for each form is in `docs/textures.md`.

use super::ast::{Instruction, Operand, Span};
use super::types::ScalarType;
use crate::diag::Diag;

/// The texture and surface opcodes.
pub const OPCODES: &[&str] = &["tex", "tld4", "txq", "suq", "suld", "sust", "sured"];

/// Which instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// `tex`: a filtered (or integer-coordinate) texture fetch.
    Tex,
    /// `tld4.{r,g,b,a}`: the four texels of a bilinear footprint, one component.
    Tld4,
    /// `txq`: a texture or sampler attribute.
    Txq,
    /// `suq`: a surface attribute.
    Suq,
    /// `suld`: surface load.
    Suld,
    /// `sust`: surface store.
    Sust,
    /// `sured`: surface reduction.
    Sured,
}

/// Texture or surface geometry (PTX ISA 9.7.9.3, "Texture geometries").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Geometry {
    /// `.1d`.
    D1,
    /// `.2d`.
    D2,
    /// `.3d`.
    D3,
    /// `.a1d`: array of 1D textures, `{index, x}`.
    A1d,
    /// `.a2d`: array of 2D textures, `{index, x, y, _}`.
    A2d,
    /// `.cube`: `{x, y, z, _}`.
    Cube,
    /// `.acube`: array of cube maps, `{index, x, y, z}`.
    Acube,
    /// `.2dms`: 2D multisample, `{sample, x, y, _}`.
    D2ms,
    /// `.a2dms`: array of 2D multisample, `{index, sample, x, y}`.
    A2dms,
}

const GEOMETRIES: &[(&str, Geometry)] = &[
    (".1d", Geometry::D1),
    (".2d", Geometry::D2),
    (".3d", Geometry::D3),
    (".a1d", Geometry::A1d),
    (".a2d", Geometry::A2d),
    (".cube", Geometry::Cube),
    (".acube", Geometry::Acube),
    (".2dms", Geometry::D2ms),
    (".a2dms", Geometry::A2dms),
];

impl Geometry {
    /// The PTX spelling with its dot.
    pub fn as_str(self) -> &'static str {
        GEOMETRIES.iter().find(|g| g.1 == self).map_or("", |g| g.0)
    }

    /// Length of the coordinate vector and what it holds (PTX ISA 9.7.9.3 `tex`: 3D and
    /// cube coordinates are 4-vectors whose last element is ignored).
    pub fn coordinates(self) -> (usize, &'static str) {
        match self {
            Geometry::D1 => (1, "{x}"),
            Geometry::D2 => (2, "{x, y}"),
            Geometry::D3 => (4, "{x, y, z, _}"),
            Geometry::A1d => (2, "{index, x}"),
            Geometry::A2d => (4, "{index, x, y, _}"),
            Geometry::Cube => (4, "{x, y, z, _}"),
            Geometry::Acube => (4, "{index, x, y, z}"),
            Geometry::D2ms => (4, "{sample, x, y, _}"),
            Geometry::A2dms => (4, "{index, sample, x, y}"),
        }
    }

    /// Length of a `tex.grad` gradient vector.
    fn gradient(self) -> usize {
        match self {
            Geometry::D1 | Geometry::A1d => 1,
            Geometry::D2 | Geometry::A2d => 2,
            _ => 4,
        }
    }
}

/// Out-of-range handling of surface accesses (PTX ISA 9.7.10.1 `suld`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clamp {
    /// `.trap`: an out-of-range access traps (ptxas: `.TRAP`).
    Trap,
    /// `.clamp`: the coordinates are clamped (ptxas: no suffix).
    Clamp,
    /// `.zero`: loads return zero, stores are ignored (ptxas: `.IGN`).
    Zero,
}

/// Level of detail of a `tex` (PTX ISA 9.7.9.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lod {
    /// Implicit (the hardware's choice; level 0 outside fragment shaders).
    Auto,
    /// `.base`: level 0.
    Base,
    /// `.level`: an explicit level operand.
    Level,
    /// `.grad`: two gradient vectors.
    Grad,
}

/// One decoded texture or surface instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct TexOp {
    /// Which instruction.
    pub family: Family,
    /// Geometry (not for `txq`/`suq`).
    pub geometry: Option<Geometry>,
    /// Level of detail (`tex`; `txq.level`).
    pub lod: Lod,
    /// `tld4` component: `r`, `g`, `b` or `a`.
    pub component: Option<char>,
    /// Vector width of the result or data: 1, 2 or 4.
    pub vec: u32,
    /// Result or data type (`tex`: `.u32/.s32/.f32/.f16/.f16x2`; surfaces: `.b8`..`.b64`).
    pub dtype: Option<ScalarType>,
    /// Coordinate type (`tex`/`tld4`: `.s32` or `.f32`).
    pub ctype: Option<ScalarType>,
    /// Surface out-of-range mode.
    pub clamp: Option<Clamp>,
    /// `txq`/`suq` query word, `sured` operation, with their dots.
    pub query: Option<String>,
    /// `sust.p`/`sured.p`: formatted access (`.b` otherwise).
    pub formatted: bool,
}

/// Claims modifier words of one instruction, reporting duplicates, conflicts and leftovers.
struct Words<'a> {
    instr: &'a Instruction,
    used: Vec<bool>,
    diags: Vec<Diag>,
}

impl<'a> Words<'a> {
    /// The first unclaimed word among `words` (index into `words`); a second one is a
    /// conflict.
    fn pick(&mut self, what: &str, words: &[&str]) -> Option<usize> {
        let mut found: Option<(usize, Span, &str)> = None;
        for (i, m) in self.instr.mods.iter().enumerate() {
            let Some(k) = words.iter().position(|w| *w == m.text) else { continue };
            match self.used.get_mut(i) {
                Some(u) if !*u => *u = true,
                _ => continue,
            }
            match found {
                None => found = Some((k, m.span, &m.text)),
                Some((_, first, text)) => self.diags.push(
                    Diag::error(
                        m.span,
                        format!("`{}` conflicts with `{text}` on `{}`", m.text, self.instr.opcode.name),
                    )
                    .label(format!("a second {what}"))
                    .with_secondary(first, format!("{what} already given here")),
                ),
            }
        }
        found.map(|f| f.0)
    }

    /// Like [`Words::pick`], and a missing word is an error naming the choices.
    fn need(&mut self, what: &str, words: &[&str]) -> Option<usize> {
        let k = self.pick(what, words);
        if k.is_none() {
            self.missing(what, words);
        }
        k
    }

    /// Reports that none of `words` (a required `what`) was given.
    fn missing(&mut self, what: &str, words: &[&str]) {
        self.diags.push(
            Diag::error(self.instr.opcode.span, format!("`{}` needs a {what}", self.instr.opcode.name))
                .label(format!("no {what}"))
                .note(format!("one of {}", words.iter().map(|w| format!("`{w}`")).collect::<Vec<_>>().join(", "))),
        );
    }

    /// Claims the first unclaimed word among `words` in source order (for the ordered type
    /// pair `.dtype.ctype`); a missing word is an error as in [`Words::need`].
    fn next(&mut self, what: &str, words: &[&str]) -> Option<usize> {
        for (i, m) in self.instr.mods.iter().enumerate() {
            if self.used.get(i) == Some(&false)
                && let Some(k) = words.iter().position(|w| *w == m.text)
            {
                if let Some(u) = self.used.get_mut(i) {
                    *u = true;
                }
                return Some(k);
            }
        }
        self.missing(what, words);
        None
    }

    fn flag(&mut self, word: &str) -> bool {
        self.pick(word, &[word]).is_some()
    }

    /// Reports every word no slot claimed.
    fn finish(&mut self) {
        for (i, m) in self.instr.mods.iter().enumerate() {
            if self.used.get(i) == Some(&false) {
                self.diags.push(
                    Diag::error(m.span, format!("`{}` is not a modifier of `{}` here", m.text, self.instr.opcode.name))
                        .label("not allowed here")
                        .note(format!("syntax: {} (PTX ISA 9.7.9.3, 9.7.10)", syntax(&self.instr.opcode.name))),
                );
            }
        }
    }
}

/// The PTX syntax of an opcode, for notes.
fn syntax(op: &str) -> &'static str {
    match op {
        "tex" => "`tex{.base,.level,.grad}.geom.v4.dtype.ctype d, [a, c]{, lod | dPdx, dPdy}`",
        "tld4" => "`tld4.comp.2d.v4.dtype.f32 d, [a, c]`",
        "txq" => "`txq{.level}.query.b32 d, [a]{, lod}`",
        "suq" => "`suq.query.b32 d, [a]`",
        "suld" => "`suld.b.geom{.cop}{.v2,.v4}.btype.clamp d, [a, b]`",
        "sust" => "`sust.{b,p}.geom{.cop}{.v2,.v4}.ctype.clamp [a, b], c`",
        _ => "`sured.{b,p}.op.geom.ctype.clamp [a, b], c`",
    }
}

const TEX_DTYPES: &[&str] = &[".u32", ".s32", ".f32", ".f16", ".f16x2"];
const SURF_BTYPES: &[&str] = &[".b8", ".b16", ".b32", ".b64"];
const CLAMPS: &[&str] = &[".trap", ".clamp", ".zero"];
const VECS: &[&str] = &[".v2", ".v4"];

/// Decodes a texture or surface instruction (one of [`OPCODES`]); every rule it breaks is
/// a diagnostic at the offending word or operand.
pub fn decode(instr: &Instruction) -> Result<TexOp, Vec<Diag>> {
    let mut w = Words { instr, used: vec![false; instr.mods.len()], diags: vec![] };
    let op = instr.opcode.name.as_str();
    let family = match op {
        "tex" => Family::Tex,
        "tld4" => Family::Tld4,
        "txq" => Family::Txq,
        "suq" => Family::Suq,
        "suld" => Family::Suld,
        "sust" => Family::Sust,
        _ => Family::Sured,
    };
    let mut t = TexOp {
        family,
        geometry: None,
        lod: Lod::Auto,
        component: None,
        vec: 1,
        dtype: None,
        ctype: None,
        clamp: None,
        query: None,
        formatted: false,
    };
    let geoms: Vec<&str> = GEOMETRIES.iter().map(|g| g.0).collect();
    let geometry = |w: &mut Words, allowed: &[Geometry]| -> Option<Geometry> {
        let g = GEOMETRIES.get(w.need("geometry", &geoms)?)?.1;
        if !allowed.contains(&g) {
            let span = instr.mods.iter().find(|m| m.text == g.as_str()).map_or(instr.opcode.span, |m| m.span);
            w.diags.push(
                Diag::error(span, format!("`{op}` does not take the geometry `{}`", g.as_str()))
                    .label("unsupported geometry")
                    .note(format!(
                        "`{op}` geometries: {}",
                        allowed.iter().map(|g| format!("`{}`", g.as_str())).collect::<Vec<_>>().join(", ")
                    )),
            );
        }
        Some(g)
    };
    use Geometry::*;
    match family {
        Family::Tex => {
            t.lod = match w.pick("level-of-detail mode", &[".base", ".level", ".grad"]) {
                Some(0) => Lod::Base,
                Some(1) => Lod::Level,
                Some(_) => Lod::Grad,
                None => Lod::Auto,
            };
            let all = [D1, D2, D3, A1d, A2d, Cube, Acube, D2ms, A2dms];
            let no_ms = [D1, D2, D3, A1d, A2d, Cube, Acube];
            t.geometry = geometry(&mut w, if t.lod == Lod::Auto { &all } else { &no_ms });
            t.vec = match w.need("vector width", VECS) {
                Some(0) => 2,
                _ => 4,
            };
            t.dtype =
                w.next("result type", TEX_DTYPES).and_then(|k| TEX_DTYPES.get(k).and_then(|d| ScalarType::from_dot(d)));
            t.ctype = w
                .next("coordinate type", &[".s32", ".f32"])
                .and_then(|k| [ScalarType::S32, ScalarType::F32].get(k).copied());
            if (t.vec == 2) != (t.dtype == Some(ScalarType::F16x2)) && t.dtype.is_some() {
                w.diags.push(
                    Diag::error(
                        instr.opcode.span,
                        format!("`{}` has the wrong vector width for its result type", text(instr)),
                    )
                    .label("`.v4` with `.u32/.s32/.f32/.f16`, `.v2` with `.f16x2`")
                    .note("PTX ISA 9.7.9.3 tex"),
                );
            }
            // ptxas 11.8: "Floating-point coordinates required" for `tex.cube.v4.f32.s32`
            // and `tex.acube...s32` (docs/textures.md §1.13).
            if matches!(t.geometry, Some(Cube | Acube)) && t.ctype == Some(ScalarType::S32) {
                let span = instr.mods.iter().rev().find(|m| m.text == ".s32").map_or(instr.opcode.span, |m| m.span);
                w.diags.push(
                    Diag::error(span, format!("`{}`: cube textures take `.f32` coordinates", text(instr)))
                        .label("`.cube`/`.acube` with `.s32`")
                        .note("PTX ISA 9.7.9.3 tex; ptxas 11.8: \"Floating-point coordinates required\""),
                );
            }
            if matches!(t.geometry, Some(D2ms | A2dms)) && t.ctype == Some(ScalarType::F32) {
                w.diags.push(
                    Diag::error(
                        instr.opcode.span,
                        format!("`{}`: multisample textures take `.s32` coordinates", text(instr)),
                    )
                    .label("`.2dms`/`.a2dms` with `.f32`")
                    .note("PTX ISA 9.7.9.3 tex"),
                );
            }
        }
        Family::Tld4 => {
            t.component =
                w.need("component", &[".r", ".g", ".b", ".a"]).and_then(|k| ['r', 'g', 'b', 'a'].get(k).copied());
            t.geometry = geometry(&mut w, &[D2, A2d, Cube, Acube]);
            t.vec = 4;
            if w.pick("vector width", &[".v4"]).is_none() {
                w.need("vector width", &[".v4"]);
            }
            t.dtype = w
                .next("result type", &[".u32", ".s32", ".f32"])
                .and_then(|k| [ScalarType::U32, ScalarType::S32, ScalarType::F32].get(k).copied());
            t.ctype = w.next("coordinate type", &[".f32"]).map(|_| ScalarType::F32);
        }
        Family::Txq => {
            if w.flag(".level") {
                t.lod = Lod::Level;
            }
            const Q: &[&str] = &[
                ".width",
                ".height",
                ".depth",
                ".channel_data_type",
                ".channel_order",
                ".normalized_coords",
                ".array_size",
                ".num_mipmap_levels",
                ".num_samples",
                ".force_unnormalized_coords",
                ".filter_mode",
                ".addr_mode_0",
                ".addr_mode_1",
                ".addr_mode_2",
            ];
            let q = w.need("query", Q);
            if t.lod == Lod::Level && q.is_some_and(|k| k > 2) {
                w.diags.push(
                    Diag::error(
                        instr.opcode.span,
                        format!("`{}`: `txq.level` queries `.width`, `.height` or `.depth` only", text(instr)),
                    )
                    .label("not a per-level attribute"),
                );
            }
            t.query = q.and_then(|k| Q.get(k)).map(|q| q.to_string());
            t.dtype = w.need("type", &[".b32"]).map(|_| ScalarType::B32);
        }
        Family::Suq => {
            const Q: &[&str] = &[
                ".width",
                ".height",
                ".depth",
                ".channel_data_type",
                ".channel_order",
                ".array_size",
                ".memory_layout",
            ];
            t.query = w.need("query", Q).and_then(|k| Q.get(k)).map(|q| q.to_string());
            t.dtype = w.need("type", &[".b32"]).map(|_| ScalarType::B32);
        }
        Family::Suld | Family::Sust | Family::Sured => {
            let access = if family == Family::Suld { &[".b"][..] } else { &[".b", ".p"][..] };
            t.formatted = w.need("access mode", access) == Some(1);
            if family == Family::Sured {
                const OPS: &[&str] = &[".add", ".min", ".max", ".and", ".or"];
                t.query = w.need("reduction operation", OPS).and_then(|k| OPS.get(k)).map(|o| o.to_string());
                t.geometry = geometry(&mut w, &[D1, D2, D3]);
                let types: &[&str] =
                    if t.formatted { &[".b32", ".b64"] } else { &[".u32", ".u64", ".s32", ".s64", ".b32", ".b64"] };
                t.dtype = w.need("type", types).and_then(|k| types.get(k)).and_then(|d| ScalarType::from_dot(d));
                sured_type(instr, &t, &mut w.diags);
            } else {
                t.geometry = geometry(&mut w, &[D1, D2, D3, A1d, A2d]);
                let cops: &[&str] =
                    if family == Family::Suld { &[".ca", ".cg", ".cs", ".cv"] } else { &[".wb", ".cg", ".cs", ".wt"] };
                w.pick("cache operator", cops);
                t.vec = match w.pick("vector width", VECS) {
                    Some(0) => 2,
                    Some(_) => 4,
                    None => 1,
                };
                let types: &[&str] = if t.formatted { &[".b32"] } else { SURF_BTYPES };
                t.dtype = w.need("data type", types).and_then(|k| types.get(k)).and_then(|d| ScalarType::from_dot(d));
                if t.vec == 4 && t.dtype == Some(ScalarType::B64) {
                    w.diags.push(
                        Diag::error(instr.opcode.span, format!("`{}`: `.v4.b64` is not a surface access", text(instr)))
                            .label("at most 128 bits")
                            .note("PTX ISA 9.7.10.1 suld"),
                    );
                }
            }
            t.clamp =
                w.need("clamp mode", CLAMPS).and_then(|k| [Clamp::Trap, Clamp::Clamp, Clamp::Zero].get(k).copied());
        }
    }
    w.finish();
    operands(instr, &t, &mut w.diags);
    if w.diags.is_empty() { Ok(t) } else { Err(w.diags) }
}

/// The types ptxas 11.8 (`-arch=sm_50`) takes for each `sured` operation: `.add` `.u32 .s32
/// .u64`, `.min/.max` `.u32 .s32`, `.and/.or` `.b32`; `sured.p` `.b32` only. It rejects the
/// others ("Incorrect type '.s64' for operation '.min' in instruction 'sured.b'",
/// "Unexpected instruction types specified for 'sured.b'"; docs/textures.md §1.9).
fn sured_type(instr: &Instruction, t: &TexOp, diags: &mut Vec<Diag>) {
    let (Some(op), Some(ty)) = (t.query.as_deref(), t.dtype) else { return };
    let allowed: &[ScalarType] = match (t.formatted, op) {
        (true, _) => &[ScalarType::B32],
        (false, ".add") => &[ScalarType::U32, ScalarType::S32, ScalarType::U64],
        (false, ".min" | ".max") => &[ScalarType::U32, ScalarType::S32],
        _ => &[ScalarType::B32],
    };
    if allowed.contains(&ty) {
        return;
    }
    let word = ty.as_str();
    let span = instr.mods.iter().find(|m| m.text == word).map_or(instr.opcode.span, |m| m.span);
    let names: Vec<String> = allowed.iter().map(|a| format!("`{}`", a.as_str())).collect();
    diags.push(
        Diag::error(span, format!("`{word}` is not a type of `sured.{}{op}`", if t.formatted { "p" } else { "b" }))
            .label("type not allowed for this operation")
            .note(format!("ptxas 11.8 (sm_50) takes {} here", names.join(", "))),
    );
}

/// The instruction's opcode and modifiers as written, for messages.
fn text(instr: &Instruction) -> String {
    let mut s = instr.opcode.name.clone();
    for m in &instr.mods {
        s.push_str(&m.text);
    }
    s
}

/// Checks the operand list: counts, the texture address and the vector lengths.
fn operands(instr: &Instruction, t: &TexOp, diags: &mut Vec<Diag>) {
    let ops = &instr.operands;
    let (lo, hi, addr_at) = match t.family {
        Family::Tex => match t.lod {
            Lod::Level => (3, 5, 1),
            Lod::Grad => (4, 6, 1),
            _ => (2, 4, 1),
        },
        Family::Tld4 => (2, 4, 1),
        Family::Txq if t.lod == Lod::Level => (3, 3, 1),
        Family::Txq | Family::Suq | Family::Suld => (2, 2, 1),
        Family::Sust | Family::Sured => (2, 2, 0),
    };
    if !(lo..=hi).contains(&ops.len()) {
        let want = if lo == hi { lo.to_string() } else { format!("{lo} to {hi}") };
        diags.push(
            Diag::error(instr.span, format!("`{}` takes {want} operands, found {}", text(instr), ops.len()))
                .label(if ops.len() > hi { "an operand too many" } else { "operands missing" })
                .note(format!("syntax: {}", syntax(&instr.opcode.name))),
        );
        return;
    }
    let Some(addr) = ops.get(addr_at) else { return };
    if matches!(t.family, Family::Txq | Family::Suq) {
        if !matches!(addr, Operand::Address { offset: 0, unified: false, base: super::ast::AddrBase::Name(_), .. }) {
            diags.push(
                Diag::error(addr.span(), format!("`{}` reads `[a]`: a texture, sampler or surface", text(instr)))
                    .label("expected `[name]`"),
            );
        }
        return;
    }
    let Operand::Texture { parts, span, .. } = addr else {
        diags.push(
            Diag::error(
                addr.span(),
                format!("`{}` needs a texture or surface address `[a, {{coordinates}}]`", text(instr)),
            )
            .label("expected `[handle, {..}]`")
            .note(format!("syntax: {}", syntax(&instr.opcode.name))),
        );
        return;
    };
    let Some(geometry) = t.geometry else { return };
    let (n, shape) = geometry.coordinates();
    let sampler_ok = matches!(t.family, Family::Tex | Family::Tld4);
    let coords = match parts.as_slice() {
        [c] => c,
        [Operand::Name { .. }, c] if sampler_ok => c,
        _ => {
            diags.push(Diag::error(*span, format!("`{}` takes `[a, {shape}]`", text(instr))).label(if sampler_ok {
                "expected a handle, an optional sampler and one coordinate vector"
            } else {
                "expected a handle and one coordinate vector"
            }));
            return;
        }
    };
    vector(
        coords,
        n,
        &format!("`{}` takes {n} coordinate{} `{shape}`", text(instr), if n == 1 { "" } else { "s" }),
        diags,
    );
    let Some(data) = ops.get(usize::from(matches!(t.family, Family::Sust | Family::Sured))) else { return };
    let what = if matches!(t.family, Family::Sust | Family::Sured) { "data" } else { "result" };
    // `sured`'s value may be an immediate (ptxas 11.8 takes `sured.p.add.2d.b32.trap [s,
    // {x, y}], 1`).
    if t.family == Family::Sured && matches!(data, Operand::Imm(_)) {
        return;
    }
    vector(
        data,
        t.vec as usize,
        &format!("`{}` has a {what} of {} element{}", text(instr), t.vec, if t.vec == 1 { "" } else { "s" }),
        diags,
    );
    if t.family == Family::Tex && t.lod == Lod::Grad {
        let g = geometry.gradient();
        for d in ops.iter().skip(2).take(2) {
            vector(
                d,
                g,
                &format!("a `{}` gradient has {g} element{}", geometry.as_str(), if g == 1 { "" } else { "s" }),
                diags,
            );
        }
    }
}

/// A vector operand of `n` elements (a lone register counts as one).
fn vector(op: &Operand, n: usize, message: &str, diags: &mut Vec<Diag>) {
    let found = match op {
        Operand::Vector(v, _) => v.len(),
        Operand::Name { .. } if n == 1 => return,
        _ => 0,
    };
    if found != n {
        diags.push(Diag::error(op.span(), message.to_string()).label(format!("found {found}")));
    }
}

/// Checks the uses of the module's `.texref`/`.surfref` references (unified mode,
/// docs/textures.md §1.1): a `.texref` is only the texture operand of `tex`, `tld4` and
/// `txq`, a `.surfref` only that of `suld`, `sust` and `suq` (PTX ISA 9.7.9.3-9.7.10.4);
/// any other use is an error at the name. Names shadowed by a local declaration are not
/// distinguished (a register of the same name as a reference is reported too). Linear in
/// the module.
pub fn check_refs(module: &super::ast::Module) -> Vec<Diag> {
    use super::ast::AddrBase;
    let refs: std::collections::HashMap<&str, bool> =
        module.refs.iter().map(|r| (r.name.name.as_str(), r.surface)).collect();
    let mut diags = vec![];
    if refs.is_empty() {
        return diags;
    }
    let kind = |surface: bool| if surface { ".surfref" } else { ".texref" };
    let mut check = |i: &Instruction| {
        let op = i.opcode.name.as_str();
        // The reference kind the instruction's texture operand takes.
        let wants = match op {
            "tex" | "tld4" | "txq" => Some(false),
            "suld" | "sust" | "suq" | "sured" => Some(true),
            _ => None,
        };
        for o in &i.operands {
            let (image, rest): (Option<&super::ast::Ident>, Vec<&super::ast::Ident>) = match o {
                Operand::Texture { image, parts, .. } => (Some(image), parts.iter().flat_map(operand_names).collect()),
                Operand::Address { base: AddrBase::Name(n), .. } if matches!(op, "txq" | "suq") => (Some(n), vec![]),
                other => (None, operand_names(other)),
            };
            if let (Some(n), Some(want)) = (image, wants)
                && let Some(&surface) = refs.get(n.name.as_str())
                && surface != want
            {
                diags.push(
                    Diag::error(
                        n.span,
                        format!(
                            "`{}` is a `{}`, but `{op}` takes a {}",
                            n.name,
                            kind(surface),
                            if want {
                                "surface (`.surfref` or `.u64` handle)"
                            } else {
                                "texture (`.texref` or `.u64` handle)"
                            }
                        ),
                    )
                    .label(format!("a `{}`", kind(surface))),
                );
            }
            for n in rest.into_iter().chain(image.filter(|_| wants.is_none())) {
                if let Some(&surface) = refs.get(n.name.as_str()) {
                    diags.push(
                        Diag::error(n.span, format!("`{}` is a `{}`: it can only be the texture operand of {}", n.name, kind(surface), if surface {
                            "`suld`, `sust` or `suq`"
                        } else {
                            "`tex`, `tld4` or `txq`"
                        }))
                        .label("not a register or variable")
                        .note("PTX ISA 5.3: texture and surface references are opaque; a handle in a register is a `.u64` texture object"),
                    );
                }
            }
        }
    };
    for_each_instruction(module, &mut check);
    diags
}

/// Calls `f` on every instruction of every function body of `module`, nested blocks
/// included, in source order.
pub(super) fn for_each_instruction(module: &super::ast::Module, f: &mut dyn FnMut(&Instruction)) {
    use super::ast::{Item, Statement};
    fn walk(stmts: &[Statement], f: &mut dyn FnMut(&Instruction)) {
        for s in stmts {
            match s {
                Statement::Instr(i) => f(i),
                Statement::Block(b) => walk(&b.stmts, f),
                _ => {}
            }
        }
    }
    for item in &module.items {
        if let Item::Function(func) = item
            && let Some(body) = &func.body
        {
            walk(&body.stmts, f);
        }
    }
}

/// The names an operand mentions: variables, address bases, vector elements, and a
/// texture operand's image and parts.
pub(super) fn operand_names(o: &Operand) -> Vec<&super::ast::Ident> {
    use super::ast::{AddrBase, VecElem};
    match o {
        Operand::Name { name, .. } | Operand::VarPlus { name, .. } => vec![name],
        Operand::Address { base: AddrBase::Name(n), .. } => vec![n],
        Operand::Vector(v, _) => {
            v.iter().filter_map(|e| if let VecElem::Reg(r) = e { Some(r) } else { None }).collect()
        }
        Operand::List(v, _) => v.iter().flat_map(operand_names).collect(),
        Operand::PredPair(a, b, _) => vec![a, b],
        Operand::Texture { image, parts, .. } => {
            std::iter::once(image).chain(parts.iter().flat_map(operand_names)).collect()
        }
        Operand::Imm(_) | Operand::Address { .. } => vec![],
    }
}
