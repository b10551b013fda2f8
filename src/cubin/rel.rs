//! Relocatable cubins (`ptx2sass compile -c`), as ptxas 11.8 `-arch=sm_50 -O3 -c` writes
//! them for `nvlink` (docs/cubin.md "Relocatable cubins" has the probes):
//!
//! * ELF type ET_REL, the same `e_flags` (0x320532) and `e_version` (118) as an executable
//!   cubin, no program headers, no `.nv.rel.action` (nvlink adds it);
//! * every function, kernel or not, called or not, in its own `.text.<f>`, named by a
//!   `FUNC` symbol (kernels `GLOBAL` with `STO_CUDA_ENTRY`; `.visible` functions `GLOBAL`,
//!   `.weak` ones `WEAK`, internal ones `LOCAL`); `sh_info` = registers << 24 | that
//!   symbol; calls between functions are `JCAL` with an `R_CUDA_ABS32_20` relocation
//!   against the callee's symbol, also for functions of the module
//!   ([`Program::make_relocatable`]); a function's address is `32@lo/32@hi(f)`
//!   (`R_CUDA_ABS32_LO_20`/`_HI_20`); undefined functions are `GLOBAL FUNC` UND symbols;
//! * `.nv.info`: REGCOUNT (the function's own count: nothing is propagated from callees),
//!   MAX_STACK_SIZE 0 and FRAME_SIZE per function, kernels first; no MIN_STACK_SIZE
//!   (nvlink computes it); `.nv.info.<f>` per function ([`super::info_records`]);
//! * `.nv.callgraph` (SHT 0x70000001, entries of two words): `0, -1`, then a
//!   `caller, callee` pair (symbol indices) per call edge; `0, -2`, then a `function,
//!   prototype` pair per function whose address is taken; `0, -3`, then a `caller,
//!   prototype` pair per indirect call's prototype;
//! * `.nv.prototype` (SHT 0x70000002): a `symbol, prototype` pair per `.visible`, `.weak`
//!   and undefined function; a prototype is the `.strtab` offset of a string
//!   `#<return><parameters>` ([`prototype`]);
//! * `.nv.constant0.<k>` has type 0x70000064 (SHT_CUDA_CONSTANT_B0; nvlink turns it into
//!   PROGBITS) and a `_param` symbol over the parameters (`_SREG` over the 0x140 bytes
//!   before them when there are none): `st_info` 0x0d, `st_other` 0x81.

use super::write::{Body, Sec, SymPlan, Word, emit};
use super::{Kernel, PARAM_BASE, eiattr, info_records, param_bytes, param_size, rec_sval, section_text, warp_wide};
use crate::ptx::ast::{FuncKind, Item, Module, ParamDecl, Statement};
use crate::ptx::types::ScalarType;
use crate::sass::encode::{self, EncodeError};
use crate::sass::instr::{SrcKind, SymPart};
use crate::sass::op::Op;
use crate::sass::program::{Linkage, Program, SassFunction};
use object::elf;
use std::collections::HashMap;

/// SHT_CUDA_CALLGRAPH.
const SHT_CUDA_CALLGRAPH: u32 = 0x7000_0001;
/// SHT_CUDA_PROTOTYPE.
const SHT_CUDA_PROTOTYPE: u32 = 0x7000_0002;
/// SHT_CUDA_CONSTANT_B0 (`.nv.constant0.<k>` in a relocatable cubin).
const SHT_CUDA_CONSTANT_B0: u32 = 0x7000_0064;
/// `st_info` and `st_other` of ptxas's `_param`/`_SREG` symbols (`readelf`: type 13,
/// LOCAL, visibility INTERNAL with bit 0x80).
const PARAM_SYM_INFO: u8 = 0x0d;
const PARAM_SYM_OTHER: u8 = 0x81;

/// The prototypes of a module's functions as the cubin names them.
#[derive(Clone, Debug, Default)]
pub struct Prototypes {
    /// Function name → prototype string ([`prototype`]), for every declared function.
    pub of: HashMap<String, String>,
    /// Function name → the prototypes of the `.callprototype` directives in its body.
    pub indirect: HashMap<String, Vec<String>>,
}

/// One parameter's letter(s) in a prototype string. ptxas 11.8 `-c` (probe `proto.ptx`):
/// `.b32`/`.u32`/`.s32` `i`, 64-bit integers `l`, `.f32` `f`, `.f64` `d`, a byte array
/// of N bytes `bN` (`.align 4 .b8 a[12]`: `b12`). Other types are not accepted by ptxas
/// in ABI functions ("passing predicate, 8-bit and 16-bit parameters ... is not
/// supported"); ptx2sass passes them as words and names them `bN` by their bytes.
fn type_code(p: &ParamDecl) -> String {
    if p.array.is_some() || p.unsized_array {
        return format!("b{}", p.size());
    }
    match p.ty {
        ScalarType::B32 | ScalarType::U32 | ScalarType::S32 => "i".into(),
        ScalarType::B64 | ScalarType::U64 | ScalarType::S64 => "l".into(),
        ScalarType::F32 => "f".into(),
        ScalarType::F64 => "d".into(),
        _ => format!("b{}", p.size()),
    }
}

/// A function's prototype string: `#`, the return value's code (`v` for none), then each
/// parameter's ([`type_code`]). ptxas 11.8: `.func p0()` `#v`, `(.b32 r) f(.b32 a)`
/// `#ii`, `p3(.b32, .b32)` `#vii`, `(.b64 r) p1(.b64, .f32, .f64, .u32, .s32)` `#llfdii`,
/// `(.align 8 .b8 r[12]) p2(.align 4 .b8 a[12], .b8 b[3], .u64 c)` `#b12b12b3l`.
pub fn prototype(rets: &[ParamDecl], params: &[ParamDecl]) -> String {
    let mut s = String::from("#");
    if rets.is_empty() {
        s.push('v');
    }
    for p in rets.iter().chain(params) {
        s.push_str(&type_code(p));
    }
    s
}

fn collect_protos(stmts: &[Statement], out: &mut Vec<String>) {
    for st in stmts {
        match st {
            Statement::CallPrototype(c) => {
                let p = prototype(&c.ret_params, &c.params);
                if !out.contains(&p) {
                    out.push(p);
                }
            }
            Statement::Block(b) => collect_protos(&b.stmts, out),
            _ => {}
        }
    }
}

/// The prototypes of `m`'s functions and of the `.callprototype`s in their bodies.
pub fn prototypes(m: &Module) -> Prototypes {
    let mut out = Prototypes::default();
    for item in &m.items {
        let Item::Function(f) = item else { continue };
        if f.kind == FuncKind::Func {
            out.of.entry(f.name.name.clone()).or_insert_with(|| prototype(&f.ret_params, &f.params));
        }
        if let Some(b) = &f.body {
            let mut v = vec![];
            collect_protos(&b.stmts, &mut v);
            if !v.is_empty() {
                out.indirect.insert(f.name.name.clone(), v);
            }
        }
    }
    out
}

/// One function of the file: its encoded code and facts.
struct Part<'a> {
    f: &'a SassFunction,
    k: Kernel,
    /// Functions it calls (`CAL`/`JCAL` targets, first-call order, each once).
    callees: Vec<String>,
    /// Functions whose address it takes.
    addresses: Vec<String>,
    /// It has an indirect call (`JMX`).
    indirect: bool,
}

fn push_once(v: &mut Vec<String>, s: &str) {
    if !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

/// Encodes one function alone (its calls of itself resolved to its start).
fn encode_part<'a>(f: &'a SassFunction, defined: &[&str]) -> Result<Part<'a>, Vec<EncodeError>> {
    let mut l = section_text(&format!("{f}"))?;
    l.labels.insert(f.name.clone(), 0);
    let code = encode::encode_function(&l)?;
    let mut callees = vec![];
    let mut addresses = vec![];
    let mut externs = vec![];
    let mut indirect = false;
    for s in &f.code {
        indirect |= s.instr.op == Op::Jmx;
        for src in &s.instr.srcs {
            let SrcKind::Sym { id, part } = src.kind else { continue };
            let Some(name) = f.symbols.get(id as usize) else { continue };
            let is_fn = defined.contains(&name.as_str());
            match part {
                SymPart::Target => {
                    push_once(&mut callees, name);
                    if !is_fn {
                        push_once(&mut externs, name);
                    }
                }
                SymPart::Lo | SymPart::Hi if is_fn => push_once(&mut addresses, name),
                _ => {}
            }
        }
    }
    let mut k = Kernel::new(f.name.clone(), code, f.regs, f.frame_bytes);
    k.shared_bytes = f.shared_bytes;
    k.warp_wide = warp_wide(&l);
    k.externs = externs;
    if f.kind == ".entry" {
        k.params = f
            .params
            .iter()
            .filter(|(_, ty, _)| !super::is_ref(ty))
            .map(|(off, ty, _)| (off.saturating_sub(PARAM_BASE), param_size(ty).unwrap_or(4)))
            .collect();
    }
    Ok(Part { f, k, callees, addresses, indirect })
}

/// The relocatable cubin of `p` (after [`Program::make_relocatable`]); `target` are the
/// module's `.target` words, `protos` its prototypes ([`prototypes`]). Errors: an
/// instruction that does not encode, or module data (`.global`/`.const` variables), which
/// relocatable cubins do not carry yet (ptxas writes them differently there: `.nv.global`
/// of type SHT_CUDA_GLOBAL, variables as `st_info` 0x0d symbols).
pub fn from_program(p: &Program, target: &[String], protos: &Prototypes) -> Result<Vec<u8>, Vec<EncodeError>> {
    let err = |m: String| vec![EncodeError { line: 0, text: String::new(), message: m }];
    if !p.data.symbols.is_empty() || !p.const_bank.is_empty() {
        return Err(err(
            "a relocatable cubin (`-c`) of a module with `.global` or `.const` variables is not supported yet".into(),
        ));
    }
    let defined: Vec<&str> = p.functions.iter().map(|f| f.name.as_str()).collect();
    let mut parts = vec![];
    let mut errors = vec![];
    for f in &p.functions {
        match encode_part(f, &defined) {
            Ok(x) => parts.push(x),
            Err(e) => errors.extend(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    write(&parts, protos, super::e_flags(target)).map_err(err)
}

/// Plans and writes the file (section and symbol order in the module docs).
fn write(parts: &[Part], protos: &Prototypes, e_flags: u32) -> Result<Vec<u8>, String> {
    let n = parts.len();
    let kernels: Vec<usize> = (0..n).filter(|&i| parts.get(i).is_some_and(|x| x.f.kind == ".entry")).collect();
    let with_rel: Vec<usize> = (0..n).filter(|&i| parts.get(i).is_some_and(|x| !x.k.code.relocs.is_empty())).collect();
    let shared: Vec<usize> = (0..n).filter(|&i| parts.get(i).is_some_and(|x| x.k.shared_bytes > 0)).collect();
    // Undefined functions, first use order.
    let mut externs: Vec<String> = vec![];
    for x in parts {
        for e in &x.k.externs {
            push_once(&mut externs, e);
        }
    }
    let has_proto =
        !externs.is_empty() || parts.iter().any(|x| x.f.linkage != Linkage::Internal && x.f.kind != ".entry");
    // File-order section indices: 1..3 are .shstrtab, .strtab, .symtab (the writer's).
    let info0 = 4usize;
    let callgraph = info0.saturating_add(1).saturating_add(n);
    let prototype_sec = callgraph.saturating_add(1);
    let rel0 = prototype_sec.saturating_add(usize::from(has_proto));
    let const0 = rel0.saturating_add(with_rel.len());
    let text0 = const0.saturating_add(kernels.len());
    let shared0 = text0.saturating_add(n);
    let text_idx = |i: usize| text0.saturating_add(i);
    let const_idx = |i: usize| const0.saturating_add(kernels.iter().position(|&k| k == i).unwrap_or(0));

    // Symbols in creation order.
    let sec_sym = |name: String, section: usize| SymPlan {
        name,
        section,
        info: elf::STT_SECTION.0,
        other: 0,
        value: 0,
        size: 0,
        local: true,
        of: None,
    };
    let mut syms: Vec<SymPlan> = vec![];
    for (i, x) in parts.iter().enumerate() {
        let size = x.k.code.bytes.len() as u64;
        let kernel = x.f.kind == ".entry";
        let stb = match x.f.linkage {
            _ if kernel => elf::STB_GLOBAL.0,
            Linkage::Internal => elf::STB_LOCAL.0,
            Linkage::Visible => elf::STB_GLOBAL.0,
            Linkage::Weak => elf::STB_WEAK.0,
        };
        syms.push(SymPlan {
            name: x.f.name.clone(),
            section: text_idx(i),
            info: (stb << 4) | elf::STT_FUNC.0,
            other: if kernel { super::STO_CUDA_ENTRY } else { 0 },
            value: 0,
            size,
            local: !kernel && x.f.linkage != Linkage::Visible,
            of: None,
        });
        syms.push(sec_sym(format!(".text.{}", x.f.name), text_idx(i)));
        if let Some(at) = shared.iter().position(|&s| s == i) {
            syms.push(sec_sym(format!(".nv.shared.{}", x.f.name), shared0.saturating_add(at)));
        }
        if kernel {
            syms.push(sec_sym(format!(".nv.constant0.{}", x.f.name), const_idx(i)));
            let bytes = param_bytes(&x.k);
            let (name, value, size) = if bytes > 0 { ("_param", PARAM_BASE, bytes) } else { ("_SREG", 0, PARAM_BASE) };
            syms.push(SymPlan {
                name: name.into(),
                section: const_idx(i),
                info: PARAM_SYM_INFO,
                other: PARAM_SYM_OTHER,
                value: value.into(),
                size: size.into(),
                local: true,
                of: None,
            });
        }
    }
    for e in &externs {
        syms.push(SymPlan::undefined_func(e));
    }
    syms.push(sec_sym(".nv.callgraph".into(), callgraph));
    if has_proto {
        syms.push(sec_sym(".nv.prototype".into(), prototype_sec));
    }
    let (locals, globals): (Vec<SymPlan>, Vec<SymPlan>) = syms.into_iter().partition(|s| s.local);
    let num_local = u32::try_from(locals.len().saturating_add(1)).map_err(|_| "too many symbols".to_string())?;
    let syms: Vec<SymPlan> = locals.into_iter().chain(globals).collect();
    // Final index of each function symbol (and section symbols by name).
    let mut func_idx: HashMap<&str, u32> = HashMap::new();
    let mut sec_idx: HashMap<&str, u32> = HashMap::new();
    for (k, s) in syms.iter().enumerate() {
        let at = u32::try_from(k.saturating_add(1)).map_err(|_| "too many symbols".to_string())?;
        if s.info & 0xf == elf::STT_FUNC.0 {
            func_idx.insert(s.name.as_str(), at);
        } else if s.info & 0xf == elf::STT_SECTION.0 {
            sec_idx.insert(s.name.as_str(), at);
        }
    }
    let lookup = |name: &str| {
        func_idx.get(name).copied().ok_or_else(|| format!("relocation against `{name}`, which is not a function"))
    };

    let mut secs: Vec<Sec> = vec![];
    // .nv.info: kernels first, then the other functions, in source order.
    let mut info = vec![];
    for x in kernels.iter().filter_map(|&i| parts.get(i)).chain(parts.iter().filter(|x| x.f.kind != ".entry")) {
        let at = lookup(&x.f.name)?;
        rec_sval(&mut info, eiattr::REGCOUNT, &[at, x.k.regs]);
        rec_sval(&mut info, eiattr::MAX_STACK_SIZE, &[at, 0]);
        rec_sval(&mut info, eiattr::FRAME_SIZE, &[at, x.k.frame_bytes]);
    }
    let linked = |mut s: Sec, info: usize| {
        s.link_symtab = true;
        s.info = u32::try_from(info).unwrap_or(0);
        s
    };
    secs.push(linked(Sec::new(".nv.info".into(), super::SHT_CUDA_INFO, 0, 4, Body::Bytes(info)), 0));
    for (i, x) in parts.iter().enumerate() {
        let ext = x.k.externs.iter().map(|e| lookup(e)).collect::<Result<Vec<u32>, String>>()?;
        let c0 = if x.f.kind == ".entry" {
            Some(sec_idx.get(format!(".nv.constant0.{}", x.f.name).as_str()).copied().unwrap_or(0))
        } else {
            None
        };
        let body = Body::Bytes(info_records(&x.k, c0, &ext));
        secs.push(linked(Sec::new(format!(".nv.info.{}", x.f.name), super::SHT_CUDA_INFO, 0, 4, body), text_idx(i)));
    }
    // .nv.callgraph.
    let marker = |m: u32| (0u32, Word::Value(m));
    let mut cg = vec![marker(u32::MAX)];
    for x in parts {
        let caller = lookup(&x.f.name)?;
        for c in &x.callees {
            cg.push((caller, Word::Value(lookup(c)?)));
        }
    }
    cg.push(marker(u32::MAX - 1));
    let proto_of = |name: &str| protos.of.get(name).cloned().unwrap_or_else(|| "#v".into());
    let mut taken: Vec<String> = vec![];
    for x in parts {
        for a in &x.addresses {
            push_once(&mut taken, a);
        }
    }
    for t in &taken {
        cg.push((lookup(t)?, Word::Str(proto_of(t))));
    }
    cg.push(marker(u32::MAX - 2));
    // The prototypes of a function's indirect calls: those declared in its body; when its
    // body declares none (the call was inlined from another function), every prototype
    // of the module.
    let mut all: Vec<String> = vec![];
    for v in protos.indirect.values() {
        for p in v {
            push_once(&mut all, p);
        }
    }
    all.sort();
    for x in parts.iter().filter(|x| x.indirect) {
        let caller = lookup(&x.f.name)?;
        for p in protos.indirect.get(&x.f.name).unwrap_or(&all) {
            cg.push((caller, Word::Str(p.clone())));
        }
    }
    let mut s = linked(Sec::new(".nv.callgraph".into(), SHT_CUDA_CALLGRAPH, 0, 4, Body::Pairs(cg)), 0);
    s.entsize = 8;
    secs.push(s);
    if has_proto {
        let mut pr = vec![];
        for x in parts.iter().filter(|x| x.f.linkage != Linkage::Internal && x.f.kind != ".entry") {
            pr.push((lookup(&x.f.name)?, Word::Str(proto_of(&x.f.name))));
        }
        for e in &externs {
            pr.push((lookup(e)?, Word::Str(proto_of(e))));
        }
        let mut s = linked(Sec::new(".nv.prototype".into(), SHT_CUDA_PROTOTYPE, 0, 4, Body::Pairs(pr)), 0);
        s.entsize = 8;
        secs.push(s);
    }
    // Code relocations, last instruction first (as in executable cubins).
    for &i in &with_rel {
        let Some(x) = parts.get(i) else { continue };
        let mut entries = vec![];
        for (off, r) in &x.k.code.relocs {
            entries.push((u64::from(*off), lookup(&r.symbol)?, r.kind, 0));
        }
        entries.sort_by_key(|e| std::cmp::Reverse(e.0));
        let mut s = linked(
            Sec::new(format!(".rel.text.{}", x.f.name), elf::SHT_REL.0, 0, 8, Body::Rel(entries, false)),
            text_idx(i),
        );
        s.entsize = 16;
        secs.push(s);
    }
    for &i in &kernels {
        let Some(x) = parts.get(i) else { continue };
        let bytes = vec![0u8; PARAM_BASE.saturating_add(param_bytes(&x.k)) as usize];
        let mut s = Sec::new(
            format!(".nv.constant0.{}", x.f.name),
            SHT_CUDA_CONSTANT_B0,
            elf::SHF_ALLOC.0,
            4,
            Body::Bytes(bytes),
        );
        s.info = u32::try_from(text_idx(i)).unwrap_or(0);
        secs.push(s);
    }
    for x in parts {
        // sh_flags: AX | barriers << 20; sh_info: registers << 24 | the function's symbol.
        let flags = (elf::SHF_ALLOC.0 | elf::SHF_EXECINSTR.0) | (u64::from(x.k.code.barriers & 0x7f) << 20);
        let body = Body::Bytes(x.k.code.bytes.clone());
        let s = Sec::new(format!(".text.{}", x.f.name), elf::SHT_PROGBITS.0, flags, 32, body);
        secs.push(linked(s, ((x.k.regs & 0xff) << 24 | lookup(&x.f.name)?) as usize));
    }
    for &i in &shared {
        let Some(x) = parts.get(i) else { continue };
        let wa = elf::SHF_WRITE.0 | elf::SHF_ALLOC.0;
        let mut s = Sec::new(
            format!(".nv.shared.{}", x.f.name),
            elf::SHT_NOBITS.0,
            wa,
            16,
            Body::NoBits(u64::from(x.k.shared_bytes)),
        );
        s.info = u32::try_from(text_idx(i)).unwrap_or(0);
        secs.push(s);
    }
    Ok(emit(&secs, &syms, num_local, e_flags, true))
}
