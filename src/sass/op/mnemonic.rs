//! How nvdisasm spells each [`Op`]'s modifiers after the mnemonic (`LDG.E.CI.U.128`,
//! `ISETP.GE.U32.AND`, `XMAD.PSL.CBCC`): the printer's half of [`Op::name`].

use std::fmt::{self, Write};

use super::*;

impl Op {
    pub(super) fn write_mods(&self, s: &mut String) -> fmt::Result {
        use Op::*;
        match *self {
            Iadd { x, .. } | Iadd32i { x, .. } => {
                if x {
                    s.push_str(".X");
                }
            }
            Lea { hi, x, .. } => {
                if hi {
                    s.push_str(".HI");
                }
                if x {
                    s.push_str(".X");
                }
            }
            Xmad(m) => {
                if m.signed_a || m.signed_b {
                    s.push_str(if m.signed_a { ".S16" } else { ".U16" });
                    s.push_str(if m.signed_b { ".S16" } else { ".U16" });
                }
                if m.psl {
                    s.push_str(".PSL");
                }
                // nvdisasm 11.8 prints the addend mode before `.MRG` (`XMAD.PSL.CLO.MRG`).
                s.push_str(match m.c {
                    XmadC::C => "",
                    XmadC::Cbcc => ".CBCC",
                    XmadC::Chi => ".CHI",
                    XmadC::Clo => ".CLO",
                    XmadC::Csfu => ".CSFU",
                });
                if m.mrg {
                    s.push_str(".MRG");
                }
                if m.x {
                    s.push_str(".X");
                }
            }
            Shr { u32 } | Imnmx { u32 } => {
                if u32 {
                    s.push_str(".U32");
                }
            }
            Bfe { u32, brev } => {
                if u32 {
                    s.push_str(".U32");
                }
                if brev {
                    s.push_str(".BREV");
                }
            }
            Flo { u32, sh } => {
                if u32 {
                    s.push_str(".U32");
                }
                if sh {
                    s.push_str(".SH");
                }
            }
            IaddSat | Iadd32iSat => s.push_str(".SAT"),
            Iadd3(m) => s.push_str(match m {
                Iadd3Mode::Plain => "",
                Iadd3Mode::Rs => ".RS",
                Iadd3Mode::Ls => ".LS",
            }),
            Prmt(m) => s.push_str(m.suffix()),
            Mufu(f) => s.push_str(f.suffix()),
            Rro { ex2 } => s.push_str(if ex2 { ".EX2" } else { ".SINCOS" }),
            Shf { left, signed, wide, wrap } => {
                s.push_str(if left { ".L" } else { ".R" });
                if wrap {
                    s.push_str(".W");
                }
                if wide {
                    s.push_str(if signed { ".S64" } else { ".U64" });
                }
            }
            Lop(o) | Lop32i(o) => s.push_str(o.name()),
            Lop3 => s.push_str(".LUT"),
            Isetp { cmp, u32, x, bop } => {
                s.push_str(cmp.name());
                if u32 {
                    s.push_str(".U32");
                }
                if x {
                    s.push_str(".X");
                }
                s.push_str(bop.name());
            }
            Psetp { bop0, bop1 } => {
                s.push_str(bop0.name());
                s.push_str(bop1.name());
            }
            Fadd(m) | Fadd32i(m) | Fmul(m) | Fmul32i(m) | Ffma(m) | Ffma32i(m) => {
                if m.ftz {
                    s.push_str(".FTZ");
                }
                s.push_str(m.rnd.suffix());
                if m.sat {
                    s.push_str(".SAT");
                }
            }
            Fmnmx { ftz } => {
                if ftz {
                    s.push_str(".FTZ");
                }
            }
            Fsetp { cmp, ftz, bop } => {
                s.push_str(cmp.name());
                if ftz {
                    s.push_str(".FTZ");
                }
                s.push_str(bop.name());
            }
            Dadd(r) | Dmul(r) | Dfma(r) => s.push_str(r.suffix()),
            Dsetp { cmp, bop } => {
                s.push_str(cmp.name());
                s.push_str(bop.name());
            }
            I2f { dst, src, rnd } => {
                s.push_str(dst.name());
                s.push_str(src.name());
                s.push_str(rnd.suffix());
            }
            F2i { dst, src, rnd, ftz } => {
                if ftz {
                    s.push_str(".FTZ");
                }
                s.push_str(dst.name());
                s.push_str(src.name());
                s.push_str(match rnd {
                    IRnd::Round => "",
                    IRnd::Floor => ".FLOOR",
                    IRnd::Ceil => ".CEIL",
                    IRnd::Trunc => ".TRUNC",
                });
            }
            F2f { dst, src, rnd, ftz, int } | F2fSat { dst, src, rnd, ftz, int } => {
                if ftz {
                    s.push_str(".FTZ");
                }
                s.push_str(dst.name());
                s.push_str(src.name());
                s.push_str(match (int, rnd) {
                    (false, r) => r.suffix(),
                    (true, Rnd::Rn) => ".ROUND",
                    (true, Rnd::Rm) => ".FLOOR",
                    (true, Rnd::Rp) => ".CEIL",
                    (true, Rnd::Rz) => ".TRUNC",
                });
                if matches!(self, F2fSat { .. }) {
                    s.push_str(".SAT");
                }
            }
            I2i { dst, src } => {
                s.push_str(dst.name());
                s.push_str(src.name());
            }
            Ld(m) | St(m) | Ldg(m) | Stg(m) => {
                if m.e {
                    s.push_str(".E");
                }
                s.push_str(m.cop.suffix());
                s.push_str(m.size.suffix(false));
            }
            Lds(m) => {
                s.push_str(".U");
                s.push_str(m.size.suffix(true));
            }
            Ldl(m) => {
                if m.cop == CacheOp::Lu {
                    s.push_str(".LU");
                }
                s.push_str(m.size.suffix(false));
            }
            Sts(m) | Stl(m) => s.push_str(m.size.suffix(false)),
            Ldc { size, mode } => {
                s.push_str(size.suffix(false));
                s.push_str(match mode {
                    LdcMode::Ia => "",
                    LdcMode::Il => ".IL",
                    LdcMode::Is => ".IS",
                    LdcMode::Isl => ".ISL",
                });
            }
            Atom(m) | Atoms(m) | Red(m) => s.push_str(&m.suffix()),
            Shfl(m) => s.push_str(m.suffix()),
            Cctl { local, level } => {
                s.push_str(if local { "L" } else { ".E" });
                s.push_str(if level == 1 { ".PF1" } else { ".PF2" });
            }
            Vote(m) => s.push_str(m.suffix()),
            Bar { arrive } => s.push_str(if arrive { ".ARV" } else { ".SYNC" }),
            Membar(l) => s.push_str(match l {
                MembarLevel::Cta => ".CTA",
                MembarLevel::Gl => ".GL.IVALLD",
                MembarLevel::Sys => ".SYS.IVALLD",
            }),
            Depbar { .. } => s.push_str(".LE"),
            BarRed(m) => {
                s.push_str(".RED");
                s.push_str(m.suffix());
            }
            B2r => s.push_str(".RESULT"),
            ShlW => s.push_str(".W"),
            ShrW { u32 } => s.push_str(if u32 { ".U32.W" } else { ".W" }),
            Iadd3C { x, .. } => {
                if x {
                    s.push_str(".X");
                }
            }
            ImnmxX { u32, hi } => {
                if u32 {
                    s.push_str(".U32");
                }
                s.push_str(if hi { ".XHI" } else { ".XLO" });
            }
            LopX { op, pred, .. } | Lop32iX { op, pred, .. } => {
                s.push_str(op.name());
                s.push_str(match pred {
                    Some(true) => ".NZ",
                    Some(false) => ".Z",
                    None => "",
                });
            }
            Lop3X { pred, .. } => s.push_str(match pred {
                Some(true) => ".LUT.NZ",
                Some(false) => ".LUT.Z",
                None => ".LUT",
            }),
            Icmp { cmp, u32 } => {
                s.push_str(cmp.name());
                if u32 {
                    s.push_str(".U32");
                }
            }
            Iset { cmp, u32, x, bf, bop, .. } => {
                if bf {
                    s.push_str(".BF");
                }
                s.push_str(cmp.name());
                if u32 {
                    s.push_str(".U32");
                }
                if x {
                    s.push_str(".X");
                }
                s.push_str(bop.name());
            }
            Fset { cmp, ftz, bf, bop, .. } => {
                if bf {
                    s.push_str(".BF");
                }
                s.push_str(cmp.name());
                if ftz {
                    s.push_str(".FTZ");
                }
                s.push_str(bop.name());
            }
            Dset { cmp, bf, bop } => {
                if bf {
                    s.push_str(".BF");
                }
                s.push_str(cmp.name());
                s.push_str(bop.name());
            }
            Csetp { test, bop } => {
                s.push('.');
                s.push_str(test.name());
                s.push_str(bop.name());
            }
            I2iCc { dst, src } => {
                s.push_str(dst.name());
                s.push_str(src.name());
            }
            Fchk => s.push_str(".DIVIDE"),
            Fcmp { cmp, ftz } => {
                s.push_str(cmp.name());
                if ftz {
                    s.push_str(".FTZ");
                }
            }
            Imad { signed, hi, .. } | Imul { signed, hi } | Imul32i { signed, hi } => {
                if signed != (true, true) {
                    s.push_str(if signed.0 { ".S32" } else { ".U32" });
                    s.push_str(if signed.1 { ".S32" } else { ".U32" });
                }
                if hi {
                    s.push_str(".HI");
                }
                if let Imad { sat: true, .. } = self {
                    s.push_str(".SAT");
                }
            }
            I2iSat { dst, src } => {
                s.push_str(dst.name());
                s.push_str(src.name());
                s.push_str(".SAT");
            }
            BraCc { .. } => {}
            Vabsdiff(m) => {
                if m.a_unsigned || m.b_unsigned {
                    s.push_str(if m.a_unsigned { ".U32" } else { ".S32" });
                    s.push_str(if m.b_unsigned { ".U32" } else { ".S32" });
                }
                if m.sd {
                    s.push_str(".SD");
                }
                if m.sat {
                    s.push_str(".SAT");
                }
                if m.acc {
                    s.push_str(".ACC");
                }
            }
            Bpt { trap } => s.push_str(if trap { ".TRAP" } else { ".INT" }),
            Texs { .. }
            | Tlds { .. }
            | Tld4s { .. }
            | Tex { .. }
            | Tld { .. }
            | Tld4 { .. }
            | Txd { .. }
            | Txq { .. }
            | Suld { .. }
            | Sust { .. }
            | Sured { .. }
            | SustP { .. } => s.push_str(&crate::sass::texmods::suffix(self).unwrap_or_default()),
            Copy
            | Join
            | Undef
            | Call(_)
            | Params
            | Cal
            | Jcal
            | Pret
            | Jmx
            | Mov
            | Mov32i
            | S2r(_)
            | Cs2r(_)
            | Sel
            | Iscadd { .. }
            | Shl
            | Bfi
            | Popc
            | Dmnmx
            | Bra
            | Exit
            | Ret
            | Ssy
            | Sync
            | Pbk
            | Brk
            | Nop
            | Iscadd32i => {}
        }
        write!(s, "")
    }
}
