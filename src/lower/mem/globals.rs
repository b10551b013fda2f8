//! Module-scope `.const` and `.global` variables: their places, initial bytes, symbols and
//! address-initializer relocations, as ptxas 11.8 lays them out (`docs/cubin.md`, "`.global`
//! data"; every rule below was measured with `readelf -s`/`-r` and `cuobjdump -elf` on ptxas
//! 11.8 `-arch=sm_50` cubins of probe modules).
//!
//! * `.const` variables: declaration order from byte 0 of bank 3, each aligned (`.nv.constant3`).
//! * `.global` variables with an initializer (any, even all zeros) go to `.nv.global.init`,
//!   the others to `.nv.global`. In each section ptxas sorts them, starting from the order
//!   in which it creates their symbols (below), by alignment, largest first, then by
//!   size, smallest first, with a merge sort of a linked list that splits
//!   it by alternately prepending its elements to two lists and, on equal keys, takes from
//!   the first list (so equal variables come out in a fixed but not declaration order:
//!   four `.u32` → the 3rd, 1st, 4th, 2nd). [`ptxas_order`] is that sort; 46 probe modules
//!   (16 of `n` equal variables, 30 random mixes of alignments 1..32, sizes and
//!   initializers) placed exactly as ptxas placed them. Each variable then takes the next
//!   multiple of its alignment; a section is aligned to its largest variable.
//! * Symbols: one `OBJECT` per variable, value = offset in its section. ptxas creates them
//!   for the variables with linkage (`.visible`, `.weak`, `.extern`, `.common`) first,
//!   then for the internal ones, each group in declaration order, a section's symbol just
//!   before the first variable created in it; `.weak` symbols stay among the local ones
//!   ([`crate::sass::data::ModuleData::symbols`]).
//! * Address initializers (`var`, `var+off`, `generic(var)+off`) of a `.global` variable
//!   are `R_CUDA_G64` relocations with zeros in the data; of a `.const` variable without
//!   `generic()`, the variable's offset in bank 3 itself (ptxas writes no relocation).
//!   Relocations are listed per variable in symbol order, each variable's from its last
//!   element to its first; the relocation sections (`.rel`/`.rela` per data section) come
//!   in the order met walking the variables from the last created to the first, counting
//!   the `.const` addresses ptxas resolves itself.
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::diag::Diag;
use crate::lower::ctx::{self, ModuleLayout};
use crate::ptx::ast::{self, FuncKind, Init, InitValue, Item, Linkage, VarDecl};
use crate::ptx::types::{ScalarType, StateSpace};
use crate::sass::data::{Binding, DataReloc, DataSection, DataSymbol, ModuleData};
use std::collections::HashMap;

/// Largest initialized `.global` data ptx2sass writes (bytes): the compiler holds it in
/// memory. ptxas 11.8 wrote a 300 MB `.nv.global.init`.
pub const MAX_INIT_BYTES: u64 = 1 << 28;

/// Largest `.global` section: ptxas 11.8 truncates section sizes to 32 bits (a
/// `.global .u8 a[5000000000]` gave a `.nv.global` of 0x2a05f200 bytes), so more is an
/// error here.
pub const MAX_SECTION_BYTES: u64 = u32::MAX as u64;

/// The placement of every module variable.
#[derive(Default)]
pub struct Placed {
    /// What lowering looks names up in.
    pub layout: ModuleLayout,
    /// Constant bank 3.
    pub const_bank: Vec<u8>,
    /// `.const` variables: (name, offset, size).
    pub const_vars: Vec<(String, u32, u32)>,
    /// The `.global` sections, symbols and relocations.
    pub data: ModuleData,
}

/// `x` rounded up to a multiple of `a`, saturating (as `ptx::limits`'s own).
fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a.max(1)).saturating_mul(a.max(1))
}

/// Flattens an initializer into its scalar values, in order.
fn flatten<'a>(i: &'a Init, out: &mut Vec<&'a InitValue>) {
    match i {
        Init::Scalar(v) => out.push(v),
        Init::List(v, _) => v.iter().for_each(|x| flatten(x, out)),
    }
}

/// The number of elements of `v`: the product of its dimensions (times the vector width);
/// an unsized array (`a[]`) takes the number of values of its initializer (PTX ISA 5.4.4).
fn elements(v: &VarDecl) -> u64 {
    if v.dims.iter().any(Option::is_none) {
        let mut vals = vec![];
        if let Some(i) = &v.init {
            flatten(i, &mut vals);
        }
        return vals.len() as u64;
    }
    v.dims.iter().map(|d| d.unwrap_or(0)).fold(v.vec.unwrap_or(1) as u64, u64::saturating_mul)
}

/// ptxas 11.8's order of the variables of one section: a merge sort of the list in
/// declaration order by (alignment descending, size ascending) that splits a list by
/// prepending its elements alternately to two lists and takes from the first on ties
/// (module docs). `items` are (alignment, size); returns indices into it.
pub fn ptxas_order(items: &[(u64, u64)]) -> Vec<usize> {
    fn sort(list: Vec<usize>, items: &[(u64, u64)]) -> Vec<usize> {
        if list.len() <= 1 {
            return list;
        }
        // Prepending element k to list (k % 2): each half in reverse order of appearance.
        let half = |parity: usize| -> Vec<usize> {
            let mut h: Vec<usize> = list.iter().copied().skip(parity).step_by(2).collect();
            h.reverse();
            h
        };
        let a = sort(half(0), items);
        let b = sort(half(1), items);
        // The indices are `0..items.len()` (below), so `get` always finds the item.
        let key = |x: usize| items.get(x).copied().unwrap_or_default();
        let before = |x: usize, y: usize| {
            let ((ax, sx), (ay, sy)) = (key(x), key(y));
            ax > ay || (ax == ay && sx < sy)
        };
        let mut out = Vec::with_capacity(list.len());
        let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
        loop {
            let from_b = match (a.peek(), b.peek()) {
                (Some(&x), Some(&y)) => before(y, x),
                (None, Some(_)) => true,
                (Some(_), None) => false,
                (None, None) => break,
            };
            out.extend(if from_b { b.next() } else { a.next() });
        }
        out
    }
    sort((0..items.len()).collect(), items)
}

/// What a name in an initializer denotes.
enum Target {
    Global,
    Const(u64),
    Other(&'static str),
}

/// Lays out every module variable of `m`; diagnostics go to `diags`.
pub fn place(m: &ast::Module, diags: &mut Vec<Diag>) -> Placed {
    let mut out = Placed::default();
    let mut targets: HashMap<&str, Target> = HashMap::new();
    for item in &m.items {
        match item {
            Item::Function(f) => {
                let what = if f.kind == FuncKind::Entry { "kernel" } else { "function" };
                targets.insert(f.name.name.as_str(), Target::Other(what));
            }
            Item::Var(v) => {
                let t = match v.space {
                    StateSpace::Global => Target::Global,
                    StateSpace::Const => Target::Const(0),
                    StateSpace::Shared(_) => Target::Other("`.shared` variable"),
                    _ => Target::Other("variable outside `.global` and `.const`"),
                };
                targets.insert(v.name.name.as_str(), t);
            }
        }
    }
    // Every placed variable: (section, offset, size).
    let mut offsets: HashMap<&str, (DataSection, u64, u64)> = HashMap::new();
    // `.const`: declaration order in bank 3 (ptxas 11.8: `a` u8 at 0, `b` u32 at 4, `c` u64
    // at 8, `d` at 0x10, ...; uninitialized ones included).
    let mut const_align = 1u64;
    let vars: Vec<&VarDecl> =
        m.items.iter().filter_map(|i| if let Item::Var(v) = i { Some(v) } else { None }).collect();
    for v in &vars {
        out.layout.align.insert(v.name.name.clone(), v.alignment());
        if v.space != StateSpace::Const {
            continue;
        }
        let off = align_up(out.const_bank.len() as u64, v.alignment() as u64);
        let size = elements(v).saturating_mul(v.ty.bytes() as u64);
        // Sizes and alignments are bounded by the front end (`ptx::limits`: 64 KiB of
        // `.const`, `.align` at most 2^31) but saturate here all the same.
        let end = off.saturating_add(size);
        if end > 0x10000 {
            diags.push(
                Diag::error(v.span, format!("too much `.const` data: {end} bytes, bank 3 holds 65536"))
                    .note("the same limit as ptxas: `File uses too much global constant data`"),
            );
            continue;
        }
        const_align = const_align.max(v.alignment() as u64);
        out.const_bank.resize(off as usize, 0);
        out.const_bank.resize(end as usize, 0);
        out.layout.consts.insert(v.name.name.clone(), off as u32);
        out.const_vars.push((v.name.name.clone(), off as u32, size as u32));
        targets.insert(v.name.name.as_str(), Target::Const(off));
        offsets.insert(v.name.name.as_str(), (DataSection::Const3, off, size));
    }
    // ptxas 11.8 creates the symbols of the variables with linkage (`.visible`, `.weak`,
    // `.extern`, `.common`) first, then the internal ones, each group in declaration
    // order, and sorts each section's variables starting from that order.
    let binding = |v: &VarDecl| match v.linkage {
        Linkage::Internal => Binding::Local,
        Linkage::Weak => Binding::Weak,
        _ => Binding::Global,
    };
    let creation: Vec<&VarDecl> = vars
        .iter()
        .copied()
        .filter(|v| binding(v) != Binding::Local)
        .chain(vars.iter().copied().filter(|v| binding(v) == Binding::Local))
        .collect();
    // `.global`: two sections, each in ptxas's order.
    let mut init_vars = vec![];
    let mut bss_vars = vec![];
    for v in &creation {
        if v.space != StateSpace::Global {
            continue;
        }
        out.layout.globals.insert(v.name.name.clone(), v.ty);
        if v.linkage == Linkage::Extern && v.init.is_none() {
            if v.dims.iter().any(Option::is_none) {
                diags.push(
                    Diag::error(v.span, format!("`.extern .global` array `{}` has no size", v.name.name))
                        .label("declared here without a definition")
                        .note("ptx2sass compiles whole programs, as ptxas without `-c`: `Unresolved extern variable`"),
                );
                continue;
            }
            diags.push(
                Diag::warning(
                    v.span,
                    format!("unresolved `.extern` variable `{}`: defined in this module", v.name.name),
                )
                .note("as ptxas 11.8 in whole-program compilation: `ignoring extern qualifier`"),
            );
        }
        if v.init.is_some() { init_vars.push(*v) } else { bss_vars.push(*v) }
    }
    for (section, list) in [(DataSection::GlobalInit, &init_vars), (DataSection::Global, &bss_vars)] {
        let items: Vec<(u64, u64)> =
            list.iter().map(|v| (v.alignment() as u64, elements(v).saturating_mul(v.ty.bytes() as u64))).collect();
        let mut end = 0u64;
        let mut align = 1u64;
        for k in ptxas_order(&items) {
            // `ptxas_order` returns indices into `items`, which has one per `list` entry.
            let (Some(&(a, size)), Some(v)) = (items.get(k), list.get(k)) else { continue };
            let off = align_up(end, a);
            end = off.saturating_add(size);
            align = align.max(a);
            offsets.insert(v.name.name.as_str(), (section, off, size));
        }
        let limit = if section == DataSection::GlobalInit { MAX_INIT_BYTES } else { MAX_SECTION_BYTES };
        if end > limit {
            let first = list.first().map_or(ast::Span::default(), |v| v.span);
            diags.push(
                Diag::error(first, format!("too much {} data: {end} bytes, at most {limit}", section.name()))
                    .note("ptxas 11.8 truncates section sizes to 32 bits; ptx2sass holds initialized data in memory"),
            );
            continue;
        }
        match section {
            DataSection::GlobalInit => {
                out.data.init = vec![0; end as usize];
                out.data.init_align = align;
            }
            _ => {
                out.data.bss_size = end;
                out.data.bss_align = align;
            }
        }
    }
    out.data.const_align = const_align;
    // Symbols in ptxas's creation order, and each variable's initial bytes and relocations.
    let mut reloc_kinds: HashMap<&str, Vec<(DataSection, bool)>> = HashMap::new();
    for v in &creation {
        let binding = binding(v);
        let Some(&(section, off, size)) = offsets.get(v.name.name.as_str()) else { continue };
        out.data.symbols.push(DataSymbol { name: v.name.name.clone(), section, offset: off, size, binding });
        let Some(init) = &v.init else { continue };
        // Laid out above within the bank (64 KiB) and the section (`MAX_INIT_BYTES`).
        let range = off as usize..off.saturating_add(size) as usize;
        let bytes = match section {
            DataSection::Const3 => out.const_bank.get_mut(range),
            DataSection::GlobalInit => out.data.init.get_mut(range),
            _ => None,
        };
        let Some(bytes) = bytes else { continue };
        let mut relocs = vec![];
        if let Err(d) = init_bytes(v, init, bytes, &targets, &mut relocs) {
            diags.push(d);
        }
        let kinds: Vec<(DataSection, bool)> = relocs.iter().map(|r| (section, r.2 != 0)).collect();
        reloc_kinds.insert(v.name.name.as_str(), kinds);
        for (at, name, addend, resolved) in relocs.into_iter().rev() {
            if !resolved {
                out.data.relocs.push(DataReloc { section, offset: off.saturating_add(at), symbol: name, addend });
            }
        }
    }
    // The relocation sections in the order ptxas 11.8 creates them: walking the variables
    // from the last created to the first, each one's addresses from the first element,
    // `.const` addresses included although ptxas resolves them itself (a module with
    // `pc = cp` last creates `.rel.nv.global.init` first: probe module
    // `address_initializers` of tests/cubin_globals.rs).
    for v in creation.iter().rev() {
        for k in reloc_kinds.get(v.name.name.as_str()).into_iter().flatten() {
            if !out.data.reloc_sections.contains(k) {
                out.data.reloc_sections.push(*k);
            }
        }
    }
    out
}

/// Writes the initializer of `v` into `out` (its bytes, little-endian elements) and
/// collects its address initializers as (byte offset, symbol, addend, resolved here), in
/// element order: a `.global` variable's address is a relocation, a `.const` variable's
/// (its offset in bank 3) is resolved here. Errors: more values than elements, an element type that
/// takes no initializer, an address in an element that is not `.u64`, a name that is not a
/// `.global` or `.const` variable, `generic()` of a `.const` variable.
fn init_bytes(
    v: &VarDecl,
    init: &Init,
    out: &mut [u8],
    targets: &HashMap<&str, Target>,
    relocs: &mut Vec<(u64, String, i64, bool)>,
) -> Result<(), Diag> {
    let ty = v.ty;
    let n = ty.bytes() as usize;
    if matches!(ty, ScalarType::F16 | ScalarType::F16x2 | ScalarType::Bf16 | ScalarType::Bf16x2 | ScalarType::Pred)
        || n > 8
    {
        return Err(Diag::error(v.span, format!("no initial value is allowed for `{ty}` variables"))
            .note("PTX ISA 5.4.4: initializers are allowed for all types except `.f16`, `.f16x2` and `.pred`; ptxas also rejects `.b128` variables"));
    }
    let mut vals = vec![];
    flatten(init, &mut vals);
    let capacity = out.len().checked_div(n).unwrap_or(0);
    if vals.len() > capacity {
        let span = match init {
            Init::List(_, s) => *s,
            Init::Scalar(_) => v.span,
        };
        return Err(Diag::error(
            span,
            format!("the initializer of `{}` has {} values, the variable holds {capacity}", v.name.name, vals.len()),
        )
        .note("ptxas: `Greater number of elements in array initializer`"));
    }
    // `vals` fits (checked above): element `k` is the `k`th `n`-byte chunk of `out`.
    for (k, (val, slot)) in vals.iter().zip(out.chunks_exact_mut(n.max(1))).enumerate() {
        let at = k.saturating_mul(n);
        let bits = match val {
            InitValue::Imm(i) => match (i.value, ty.is_float()) {
                (ast::ImmValue::Int(x), false) => x as u64,
                (ast::ImmValue::Int(x), true) if n == 4 => (x as f32).to_bits() as u64,
                (ast::ImmValue::Int(x), true) => (x as f64).to_bits(),
                (x, _) if n == 4 => ctx::imm_bits32(x) as u64,
                (x, _) => ctx::imm_bits64(x),
            },
            InitValue::Addr { name, generic, offset } => {
                let what = match targets.get(name.name.as_str()) {
                    None => {
                        return Err(Diag::error(
                            name.span,
                            format!(
                                "`{}` in the initializer of `{}` is not a variable of this module",
                                name.name, v.name.name
                            ),
                        )
                        .label("unknown symbol")
                        .note("ptxas: `Invalid initial value symbol`"));
                    }
                    Some(t) => t,
                };
                if ty != ScalarType::U64 {
                    let why = if ty == ScalarType::U32 {
                        "with `.address_size 64` addresses are 64 bits (ptxas 11.8 accepts `.u32` but writes an 8-byte relocation into the 4-byte element)"
                    } else {
                        "PTX ISA 5.4.4: variables holding addresses are `.u64` (or `.u32`, `.u8` with `mask()`); ptxas: `Initial value type mismatch`"
                    };
                    return Err(Diag::error(
                        name.span,
                        format!(
                            "the address of `{}` needs a `.u64` element, `{}` has `{ty}` elements",
                            name.name, v.name.name
                        ),
                    )
                    .note(why));
                }
                match what {
                    Target::Global => {
                        relocs.push((at as u64, name.name.clone(), *offset, false));
                        0
                    }
                    Target::Const(_) if *generic => {
                        return Err(Diag::error(
                            name.span,
                            format!(
                                "`generic({})`: generic addresses of `.const` variables are not supported",
                                name.name
                            ),
                        )
                        .note("ptx2sass maps no constant window into the generic space (as for `cvta.const`)"));
                    }
                    Target::Const(o) => {
                        relocs.push((at as u64, name.name.clone(), *offset, true));
                        o.wrapping_add(*offset as u64)
                    }
                    Target::Other(kind) => {
                        let mut d = Diag::error(
                            name.span,
                            format!(
                                "`{}` is a {kind}: an initializer may hold addresses of `.global` and `.const` variables only",
                                name.name
                            ),
                        );
                        d = if kind.ends_with("function") || *kind == "kernel" {
                            d.note("ptx2sass inlines device functions, so a function has no address (ptxas 11.8 stores its offset in the kernel's code)")
                        } else {
                            d.note("ptxas: `Variable used as initial value not in .global or .const state space`")
                        };
                        return Err(d);
                    }
                }
            }
        };
        for (o, b) in slot.iter_mut().zip(bits.to_le_bytes()) {
            *o = b;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::ptxas_order;

    /// ptxas 11.8's placement of `n` equal `.u32` variables (declaration indices in address
    /// order), read from `readelf -s` of probe cubins.
    #[test]
    fn equal_variables_in_ptxas_order() {
        let want: [&[usize]; 16] = [
            &[0],
            &[0, 1],
            &[2, 0, 1],
            &[2, 0, 3, 1],
            &[0, 4, 2, 3, 1],
            &[0, 4, 2, 1, 5, 3],
            &[2, 6, 0, 4, 1, 5, 3],
            &[2, 6, 0, 4, 3, 7, 1, 5],
            &[8, 0, 4, 2, 6, 3, 7, 1, 5],
            &[8, 0, 4, 2, 6, 9, 1, 5, 3, 7],
            &[10, 2, 6, 8, 0, 4, 9, 1, 5, 3, 7],
            &[10, 2, 6, 8, 0, 4, 11, 3, 7, 9, 1, 5],
            &[8, 0, 12, 4, 10, 2, 6, 11, 3, 7, 9, 1, 5],
            &[8, 0, 12, 4, 10, 2, 6, 9, 1, 13, 5, 11, 3, 7],
            &[10, 2, 14, 6, 8, 0, 12, 4, 9, 1, 13, 5, 11, 3, 7],
            &[10, 2, 14, 6, 8, 0, 12, 4, 11, 3, 15, 7, 9, 1, 13, 5],
        ];
        for (k, w) in want.iter().enumerate() {
            assert_eq!(ptxas_order(&vec![(4, 4); k + 1]), *w, "{} variables", k + 1);
        }
    }

    /// Mixed alignments and sizes (ptxas 11.8: `d` .align 32 at 0, `b` .align 16 at 0x10,
    /// `c` .align 8 at 0x18, `a` at 0x1c, `e` .align 2 at 0x20, `f[100]` at 0x21; and four
    /// `.align 4` variables of 4, 40, 12, 4 bytes at 0, 0x14, 8, 4).
    #[test]
    fn alignment_then_size() {
        let items = [(4, 4), (16, 4), (8, 4), (32, 3), (2, 1), (1, 100)];
        assert_eq!(ptxas_order(&items), vec![3, 1, 2, 0, 4, 5]);
        assert_eq!(ptxas_order(&[(4, 4), (4, 40), (4, 12), (4, 4)]), vec![0, 3, 2, 1]);
    }
}
