//! Writes a syntax tree back as PTX (`--emit ast`).
//!
//! Modifiers of classified instructions are printed from their typed meaning, in the order
//! of the PTX ISA syntax tables (`ld.relaxed.gpu.global.u32` is printed
//! `ld.relaxed.gpu.global.u32` whichever order it was written in), so the output shows how
//! ptx2sass understood each instruction. Re-parsing the output gives the same tree.

use super::ast::*;
use super::instr::*;
use std::fmt::{self, Display, Formatter, Write};

impl Display for Module {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        writeln!(f, ".version {}.{}", self.version.0, self.version.1)?;
        if !self.target.is_empty() {
            writeln!(f, ".target {}", self.target.join(", "))?;
        }
        if let Some(a) = self.address_size {
            writeln!(f, ".address_size {a}")?;
        }
        // References first: the functions use them (their initializers are not kept).
        for r in &self.refs {
            writeln!(f, ".global {} {};", if r.surface { ".surfref" } else { ".texref" }, r.name.name)?;
        }
        for s in &self.samplers {
            writeln!(f, ".global .samplerref {};", s.name)?;
        }
        for item in &self.items {
            writeln!(f)?;
            match item {
                Item::Var(v) => writeln!(f, "{};", DeclText(std::slice::from_ref(v)))?,
                Item::Function(func) => write!(f, "{func}")?,
            }
        }
        for (a, b) in &self.aliases {
            writeln!(f, "\n.alias {}, {};", a.name, b.name)?;
        }
        Ok(())
    }
}

fn linkage(l: Linkage) -> &'static str {
    match l {
        Linkage::Internal => "",
        Linkage::Visible => ".visible ",
        Linkage::Extern => ".extern ",
        Linkage::Weak => ".weak ",
        Linkage::Common => ".common ",
    }
}

impl Display for ParamDecl {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.space)?;
        if let Some(a) = self.align {
            write!(f, " .align {a}")?;
        }
        write!(f, " {}", self.ty)?;
        if let Some(p) = &self.ptr {
            write!(f, " .ptr")?;
            if let Some(s) = p.space {
                write!(f, " {s}")?;
            }
            if let Some(a) = p.align {
                write!(f, " .align {a}")?;
            }
        }
        write!(f, " {}", self.name.name)?;
        if let Some(n) = self.array {
            write!(f, "[{n}]")?;
        } else if self.unsized_array {
            write!(f, "[]")?;
        }
        Ok(())
    }
}

fn param_list(f: &mut Formatter<'_>, ps: &[ParamDecl]) -> fmt::Result {
    if ps.is_empty() {
        return write!(f, "()");
    }
    writeln!(f, "(")?;
    for (i, p) in ps.iter().enumerate() {
        writeln!(f, "\t{p}{}", if i.saturating_add(1) < ps.len() { "," } else { "" })?;
    }
    write!(f, ")")
}

impl Display for Function {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            FuncKind::Entry => ".entry",
            FuncKind::Func => ".func",
        };
        write!(f, "{}{kind} ", linkage(self.linkage))?;
        if !self.ret_params.is_empty() {
            param_list(f, &self.ret_params)?;
            write!(f, " ")?;
        }
        write!(f, "{}", self.name.name)?;
        param_list(f, &self.params)?;
        writeln!(f)?;
        for t in &self.tuning {
            let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
            match t {
                Tuning::Maxntid(v) => writeln!(f, ".maxntid {}", list(v))?,
                Tuning::Reqntid(v) => writeln!(f, ".reqntid {}", list(v))?,
                Tuning::Minnctapersm(n) => writeln!(f, ".minnctapersm {n}")?,
                Tuning::Maxnctapersm(n) => writeln!(f, ".maxnctapersm {n}")?,
                Tuning::Maxnreg(n) => writeln!(f, ".maxnreg {n}")?,
                Tuning::Noreturn => writeln!(f, ".noreturn")?,
                Tuning::Pragma(s) => writeln!(f, ".pragma {};", s.join(", "))?,
            }
        }
        match &self.body {
            None => writeln!(f, ";"),
            Some(b) => {
                write_block(f, b, 0)?;
                writeln!(f)
            }
        }
    }
}

fn write_block(f: &mut Formatter<'_>, b: &Block, depth: usize) -> fmt::Result {
    let pad = "\t".repeat(depth);
    writeln!(f, "{pad}{{")?;
    for s in &b.stmts {
        match s {
            Statement::Label(l) => writeln!(f, "{}:", l.name)?,
            Statement::Decl(d) => writeln!(f, "{pad}\t{};", DeclText(d))?,
            Statement::Instr(i) => writeln!(f, "{pad}\t{i};")?,
            Statement::Block(inner) => write_block(f, inner, depth.saturating_add(1))?,
            Statement::Pragma(p, _) => writeln!(f, "{pad}\t.pragma {};", p.join(", "))?,
            Statement::CallPrototype(c) => {
                let list = |ps: &[ParamDecl]| ps.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", ");
                let rets = if c.ret_params.is_empty() { String::new() } else { format!("({}) ", list(&c.ret_params)) };
                writeln!(f, "{pad}\t.callprototype {rets}_ ({});", list(&c.params))?
            }
            Statement::Error(_) => writeln!(f, "{pad}\t// (statement with a syntax error)")?,
        }
    }
    write!(f, "{pad}}}")?;
    if depth > 0 {
        writeln!(f)?;
    }
    Ok(())
}

/// One declaration statement (several declarators sharing space, alignment and type).
struct DeclText<'a>(&'a [VarDecl]);

impl Display for DeclText<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let Some(first) = self.0.first() else {
            return Ok(());
        };
        write!(f, "{}{}", linkage(first.linkage), first.space)?;
        if !first.attributes.is_empty() {
            write!(f, " .attribute({})", first.attributes.join(", "))?;
        }
        if let Some(a) = first.align {
            write!(f, " .align {a}")?;
        }
        if let Some(v) = first.vec {
            write!(f, " .v{v}")?;
        }
        write!(f, " {}", first.ty)?;
        for (i, d) in self.0.iter().enumerate() {
            write!(f, "{} {}", if i > 0 { "," } else { "" }, d.name.name)?;
            if let Some(n) = d.range {
                write!(f, "<{n}>")?;
            }
            for dim in &d.dims {
                match dim {
                    Some(n) => write!(f, "[{n}]")?,
                    None => write!(f, "[]")?,
                }
            }
            if let Some(init) = &d.init {
                write!(f, " = {init}")?;
            }
        }
        Ok(())
    }
}

impl Display for Init {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Init::Scalar(InitValue::Imm(i)) => write!(f, "{}", ImmText(i.value)),
            Init::Scalar(InitValue::Addr { name, generic, offset }) => {
                if *generic {
                    write!(f, "generic({})", name.name)?;
                } else {
                    write!(f, "{}", name.name)?;
                }
                if *offset != 0 {
                    write!(f, "+{offset}")?;
                }
                Ok(())
            }
            Init::List(v, _) => {
                write!(f, "{{")?;
                for (i, x) in v.iter().enumerate() {
                    write!(f, "{}{x}", if i > 0 { ", " } else { "" })?;
                }
                write!(f, "}}")
            }
        }
    }
}

/// A literal as PTX writes it: decimal integers, `0f`/`0d` hex floats.
struct ImmText(ImmValue);

impl Display for ImmText {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.0 {
            ImmValue::Int(v) => write!(f, "{v}"),
            ImmValue::F32(b) => write!(f, "0f{b:08X}"),
            ImmValue::F64(b) => write!(f, "0d{b:016X}"),
        }
    }
}

fn rounding(r: Rounding) -> &'static str {
    use Rounding::*;
    match r {
        Rn => ".rn",
        Rna => ".rna",
        Rz => ".rz",
        Rm => ".rm",
        Rp => ".rp",
        Rni => ".rni",
        Rzi => ".rzi",
        Rmi => ".rmi",
        Rpi => ".rpi",
    }
}

/// The `.mod` words of an `ld`/`st` in PTX ISA syntax order.
pub fn ldst_mods(l: &LdSt) -> String {
    let mut s = String::new();
    if l.mmio {
        s.push_str(".mmio");
    }
    if let Some(sem) = l.sem {
        s.push_str(match sem {
            MemSem::Weak => ".weak",
            MemSem::Volatile => ".volatile",
            MemSem::Relaxed => ".relaxed",
            MemSem::Acquire => ".acquire",
            MemSem::Release => ".release",
        });
    }
    if let Some(sc) = l.scope {
        s.push_str(match sc {
            Scope::Cta => ".cta",
            Scope::Cluster => ".cluster",
            Scope::Gpu => ".gpu",
            Scope::Sys => ".sys",
        });
    }
    if let Some(sp) = l.space {
        s.push_str(sp.as_str());
    }
    if l.nc {
        s.push_str(".nc");
    }
    if let Some(c) = l.cop {
        s.push_str(match c {
            CacheOp::Ca => ".ca",
            CacheOp::Cg => ".cg",
            CacheOp::Cs => ".cs",
            CacheOp::Lu => ".lu",
            CacheOp::Cv => ".cv",
            CacheOp::Wb => ".wb",
            CacheOp::Wt => ".wt",
        });
    }
    if let Some(e) = l.l1_evict {
        s.push_str(match e {
            L1Evict::Normal => ".L1::evict_normal",
            L1Evict::Unchanged => ".L1::evict_unchanged",
            L1Evict::First => ".L1::evict_first",
            L1Evict::Last => ".L1::evict_last",
            L1Evict::NoAllocate => ".L1::no_allocate",
        });
    }
    if let Some(e) = l.l2_evict {
        s.push_str(match e {
            L2Evict::Normal => ".L2::evict_normal",
            L2Evict::First => ".L2::evict_first",
            L2Evict::Last => ".L2::evict_last",
        });
    }
    if l.cache_hint {
        s.push_str(".L2::cache_hint");
    }
    if let Some(p) = l.prefetch {
        s.push_str(match p {
            PrefetchSize::B64 => ".L2::64B",
            PrefetchSize::B128 => ".L2::128B",
            PrefetchSize::B256 => ".L2::256B",
        });
    }
    if let Some(v) = l.vec {
        let _ = write!(s, ".v{v}");
    }
    s.push_str(l.ty.as_str());
    s
}

/// The modifier words of a classified instruction, in canonical order; `None` when the
/// instruction is not modelled (its modifiers are printed as written).
fn canonical_mods(kind: &InstrKind) -> Option<String> {
    Some(match kind {
        InstrKind::Ld(l) | InstrKind::St(l) => ldst_mods(l),
        InstrKind::Mov(t) | InstrKind::Selp(t) => t.as_str().to_string(),
        InstrKind::Cvta(c) => format!("{}{}{}", if c.to { ".to" } else { "" }, c.space, c.ty),
        InstrKind::Cvt(c) => format!(
            "{}{}{}{}{}",
            c.rnd.map_or("", rounding),
            if c.ftz { ".ftz" } else { "" },
            if c.sat { ".sat" } else { "" },
            c.dst,
            c.src
        ),
        InstrKind::Arith(a) => {
            let mut s = String::new();
            if let Some(m) = a.mode {
                s.push_str(match m {
                    IntMode::Lo => ".lo",
                    IntMode::Hi => ".hi",
                    IntMode::Wide => ".wide",
                });
            }
            if a.approx {
                s.push_str(".approx");
            }
            if let Some(r) = a.rnd {
                s.push_str(rounding(r));
            }
            if a.ftz {
                s.push_str(".ftz");
            }
            if a.sat {
                s.push_str(".sat");
            }
            if a.cc {
                s.push_str(".cc");
            }
            s.push_str(a.ty.as_str());
            s
        }
        InstrKind::Setp(p) => {
            let cmp = format!("{:?}", p.cmp).to_lowercase();
            let b = p.bool_op.map_or(String::new(), |b| format!(".{}", format!("{b:?}").to_lowercase()));
            format!(".{cmp}{b}{}{}", if p.ftz { ".ftz" } else { "" }, p.ty)
        }
        InstrKind::Bit { op, ty } => match op {
            BitOp::Bfind { shiftamt: true } => format!(".shiftamt{ty}"),
            _ => ty.as_str().to_string(),
        },
        InstrKind::Prmt(mode) => {
            let m = match mode {
                None => "",
                Some(PrmtMode::F4e) => ".f4e",
                Some(PrmtMode::B4e) => ".b4e",
                Some(PrmtMode::Rc8) => ".rc8",
                Some(PrmtMode::Ecl) => ".ecl",
                Some(PrmtMode::Ecr) => ".ecr",
                Some(PrmtMode::Rc16) => ".rc16",
            };
            format!(".b32{m}")
        }
        InstrKind::Shf { left, clamp } => {
            format!("{}{}.b32", if *left { ".l" } else { ".r" }, if *clamp { ".clamp" } else { ".wrap" })
        }
        InstrKind::Testp { op, ty } => {
            let w = match op {
                TestpOp::Finite => ".finite",
                TestpOp::Infinite => ".infinite",
                TestpOp::Number => ".number",
                TestpOp::NotANumber => ".notanumber",
                TestpOp::Normal => ".normal",
                TestpOp::Subnormal => ".subnormal",
            };
            format!("{w}{ty}")
        }
        InstrKind::Copysign(ty) => ty.as_str().to_string(),
        InstrKind::Bra { uni } => if *uni { ".uni" } else { "" }.to_string(),
        InstrKind::Membar(l) => match l {
            MembarLevel::Cta => ".cta",
            MembarLevel::Gl => ".gl",
            MembarLevel::Sys => ".sys",
        }
        .to_string(),
        _ => return None,
    })
}

impl Display for Instruction {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(g) = &self.guard {
            write!(f, "@{}{} ", if g.negated { "!" } else { "" }, g.reg.name)?;
        }
        write!(f, "{}", self.opcode.name)?;
        match canonical_mods(&self.kind) {
            Some(m) => write!(f, "{m}")?,
            None => {
                for m in &self.mods {
                    write!(f, "{}", m.text)?;
                }
            }
        }
        for (i, op) in self.operands.iter().enumerate() {
            write!(f, "{}{op}", if i == 0 { " " } else { ", " })?;
        }
        Ok(())
    }
}

impl Display for Operand {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Name { name, component, negated, .. } => {
                write!(f, "{}{}", if *negated { "!" } else { "" }, name.name)?;
                if let Some(c) = component {
                    write!(f, ".{c}")?;
                }
                Ok(())
            }
            Operand::Imm(i) => write!(f, "{}", ImmText(i.value)),
            Operand::Vector(v, _) => {
                write!(f, "{{")?;
                for (i, e) in v.iter().enumerate() {
                    let sep = if i > 0 { ", " } else { "" };
                    match e {
                        VecElem::Reg(r) => write!(f, "{sep}{}", r.name)?,
                        VecElem::Sink(_) => write!(f, "{sep}_")?,
                        VecElem::Imm(m) => write!(f, "{sep}{}", ImmText(m.value))?,
                    }
                }
                write!(f, "}}")
            }
            Operand::Address { base, offset, unified, .. } => {
                match base {
                    AddrBase::Name(n) => write!(f, "[{}", n.name)?,
                    AddrBase::Imm(v) => write!(f, "[{v}")?,
                }
                if *offset != 0 {
                    write!(f, "+{offset}")?;
                }
                write!(f, "]{}", if *unified { ".unified" } else { "" })
            }
            Operand::List(v, _) => {
                write!(f, "(")?;
                for (i, o) in v.iter().enumerate() {
                    write!(f, "{}{o}", if i > 0 { ", " } else { "" })?;
                }
                write!(f, ")")
            }
            Operand::PredPair(a, b, _) => write!(f, "{}|{}", a.name, b.name),
            Operand::VarPlus { name, offset, .. } => write!(f, "{}+{offset}", name.name),
            Operand::Texture { image, parts, .. } => {
                write!(f, "[{}", image.name)?;
                for p in parts {
                    write!(f, ", {p}")?;
                }
                write!(f, "]")
            }
        }
    }
}
