//! Real calls (PTX ISA 9.7.12.2 `call`) and device functions compiled on their own, in the
//! calling convention of `sass::abi` (`docs/abi.md`).
//!
//! Everything crosses the call as 32-bit words. A `.param` argument's words are built
//! from what `st.param` stored in the slot (sub-word stores inserted with `BFI`, 64-bit
//! ones split); a `.reg` argument gives its register's words (a predicate as 0 or 1). The
//! words of a callee's parameters, and of a call's results, are registers of their own
//! ([`Lowerer::param_words`]) from which `ld.param` extracts what it reads (`BFE` for
//! sub-word reads, a join for 64-bit ones). `Op::Call` and `Op::Params` carry the words
//! passed in registers as operands; register allocation places them (`regalloc::calls`).
//!
//! Words passed on the stack (`AbiLoc::Stack`, up to the 0x1100 bytes of
//! `ptx::limits`) are never operands of one instruction, which would need a register
//! for each at once (a 1 KiB array failed allocation): the caller stores each with its
//! own `STL` right before the call, below its stack pointer where the call's lowered
//! `R1` will find it ([`abi::outgoing_area`]), and the callee loads each word where
//! `ld.param` reads it ([`ParamWord::Incoming`]), as ptxas 11.8 `-c` does (`LDL R3,
//! [R1+0x208]; LDL.S16 R5, [R1+0x402]` after a `JCAL`, reading bytes 0x200 and 0x3fa of
//! a 1 KiB array behind an 8-byte frame). The incoming area lies above the callee's
//! frame, and everything the callee stores to the stack (its frame, its own calls'
//! arguments) lies below it, so it holds the arguments until the callee returns.
//!
//! Checks at the call, each a diagnostic: the callee exists and is a function, the
//! argument and return lists have the callee's (or the prototype's) lengths and each
//! argument has its parameter's size.
//!
//! Return values over 48 bytes go through memory (`sass::abi::returns_in_memory`): the
//! caller passes the address of a buffer in its frame in R4 ([`Lowerer::return_buffer`])
//! and loads the words after the call; the callee stores them through that address
//! before `RET`.

use crate::diag::Diag;
use crate::ir::{CallKind, CallSite, FuncAbi};
use crate::lower::ctx::{LResult, Lowerer, PtxReg, VarLoc};
use crate::ptx::ast::{self, Operand, ParamDecl};
use crate::ptx::types::{ScalarType, StateSpace};
use crate::sass::abi::{self, AbiLoc, ParamShape};
use crate::sass::instr::{Dst, Instr, PT, Reg, RegRef, Src, SymPart};
use crate::sass::op::{BoolOp, Cmp, MemMods, MemSize, Op};

/// Where one 32-bit word of a `.param` slot that arrives whole is
/// ([`Lowerer::param_words`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamWord {
    /// In this register (a word passed in a register, a call's result word).
    Reg(Reg),
    /// A device function's stack argument at this byte offset from the caller's stack
    /// pointer: loaded where it is read (`LDL` marked `MemMods::incoming`, whose offset
    /// `regalloc::calls::finish` moves past the function's frame).
    Incoming(u32),
    /// Stored to since it arrived: its bytes are `param_slots` entries
    /// ([`Lowerer::words_to_entries`]).
    Stored,
}

/// The calling-convention shape of a parameter: `.param` ones by size and alignment,
/// `.reg` ones a whole number of words (a predicate or sub-word register takes one).
pub fn shape(p: &ParamDecl) -> ParamShape {
    if p.space == StateSpace::Reg {
        let size = p.ty.bytes().max(4);
        ParamShape { size, align: size.min(16) }
    } else {
        ParamShape { size: p.size(), align: p.alignment() }
    }
}

/// Words of each parameter and where they go.
fn placed(ps: &[ParamDecl]) -> (Vec<Vec<AbiLoc>>, u32) {
    abi::place(&ps.iter().map(shape).collect::<Vec<_>>())
}

impl Lowerer<'_> {
    /// The words of a `.param` slot's contents, `size` bytes: each stored value at its
    /// byte offset (zero where nothing was stored).
    fn slot_words(&mut self, slot: u32, size: u32) -> Vec<Src> {
        let n = size.div_ceil(4).max(1) as usize;
        (0..n).map(|k| self.param_word(slot, k)).collect()
    }

    /// Word `k` of `.param` slot `slot`: from its words ([`Lowerer::param_words`]: passed
    /// on unchanged, an incoming stack word loaded here) or from what was stored in it
    /// ([`Lowerer::entry_word`]); `RZ` beyond its words.
    fn param_word(&mut self, slot: u32, k: usize) -> Src {
        match self.param_words.get(&slot).map(|ws| ws.get(k).copied()) {
            Some(Some(ParamWord::Stored)) | None => self.entry_word(slot, k),
            Some(Some(w)) => Src::r32(self.word_reg(w)),
            Some(None) => Src::rz(),
        }
    }

    /// Word `k` of a slot's stored values (`param_slots`): a 32- or 64-bit value that
    /// covers it, with the sub-word values stored later inserted (`BFI`, in offset order;
    /// a store removes the values that began inside it, so those left are newer than a
    /// whole word beginning before them); `RZ` where nothing was stored.
    fn entry_word(&mut self, slot: u32, k: usize) -> Src {
        // Slots are at most 0x1100 bytes (`ptx::limits`), `k` below a quarter of that.
        let o = i64::try_from(k).unwrap_or(i64::MAX).saturating_mul(4);
        let mut acc = match self.param_slots.get(&(slot, o)).copied() {
            Some((var, ty)) if ty.bits() >= 32 => Some(Src::reg(RegRef { reg: var, comp: 0, n: 1 })),
            _ => None,
        };
        if let Some((var, ty)) = self.param_slots.get(&(slot, o.saturating_sub(4))).copied()
            && o >= 4
            && ty.bits() == 64
            && acc.is_none()
        {
            acc = Some(Src::reg(RegRef { reg: var, comp: 1, n: 1 }));
        }
        let mut acc = acc.unwrap_or(Src::rz());
        for b in 0..4i64 {
            let Some(&(var, ty)) = self.param_slots.get(&(slot, o.saturating_add(b))) else { continue };
            let bits = ty.bits().max(8);
            // A 32- or 64-bit value at the word is `acc` itself; a sub-word one at byte 0
            // is newer than the high half of a 64-bit value before the word (`st.param.b64
            // [a], x; st.param.b8 [a+4], y` read the high half unchanged).
            if bits >= 32 {
                continue;
            }
            // `b` is 0..3: the bit position 0, 8, 16 or 24, and the bits that fit.
            let pos = (b as u32).saturating_mul(8);
            let bits = bits.min(32u32.saturating_sub(pos));
            let t = self.tmp(1);
            self.op(Op::Bfi, Dst::reg(t, 1), vec![Src::r32(var), Src::imm(pos | bits << 8), acc]);
            acc = Src::r32(t);
        }
        acc
    }

    /// Whether word `k` of `.param` slot `slot` holds anything: a word it arrived with
    /// ([`Lowerer::param_words`]), or a stored value beginning in it or a 64-bit one
    /// beginning in the word before.
    fn word_written(&self, slot: u32, k: usize) -> bool {
        if self.param_words.get(&slot).is_some_and(|ws| k < ws.len()) {
            return true;
        }
        // Slots are at most 0x1100 bytes (`ptx::limits`).
        let o = i64::try_from(k).unwrap_or(i64::MAX).saturating_mul(4);
        let wide = o >= 4 && self.param_slots.get(&(slot, o.saturating_sub(4))).is_some_and(|(_, ty)| ty.bits() > 32);
        wide || (0..4i64).any(|b| self.param_slots.contains_key(&(slot, o.saturating_add(b))))
    }

    /// The words of PTX register `r` (a predicate as 0 or 1).
    fn reg_words(&mut self, r: PtxReg) -> Vec<Src> {
        if r.ty == ScalarType::Pred {
            let t = self.tmp(1);
            self.op(Op::Sel, Dst::reg(t, 1), vec![Src::rz(), Src::imm(1), Src::pred(r.reg, true)]);
            return vec![Src::r32(t)];
        }
        let n = (r.ty.bits() / 32).max(1) as u8;
        (0..n).map(|k| Src::reg(RegRef { reg: r.reg, comp: k, n: 1 })).collect()
    }

    /// Writes PTX register `r` from words.
    fn words_to_reg(&mut self, words: &[Reg], r: PtxReg) {
        if r.ty == ScalarType::Pred {
            self.emit(Instr::new(
                Op::Isetp { cmp: Cmp::Ne, u32: true, x: false, bop: BoolOp::And },
                vec![Dst::Pred(r.reg), Dst::Pred(PT)],
                // A missing word reads as zero, as in the `join` below.
                vec![words.first().map_or(Src::rz(), |w| Src::r32(*w)), Src::rz(), Src::pt()],
            ));
            return;
        }
        let n = (r.ty.bits() / 32).max(1) as usize;
        if n == 1 {
            let word = words.first().map_or(Src::rz(), |w| Src::r32(*w));
            self.emit(Instr::new(Op::Copy, vec![Dst::reg(r.reg, 1)], vec![word]));
        } else {
            let srcs = (0..n).map(|k| words.get(k).map_or(Src::rz(), |w| Src::r32(*w))).collect();
            self.emit(Instr::new(Op::Join, vec![Dst::reg(r.reg, n as u8)], srcs));
        }
    }

    /// Makes `.param` slot `slot` hold `words` (its earlier contents are gone).
    fn bind_words(&mut self, slot: u32, words: Vec<Reg>) {
        // A slot's words: at most one per 4 bytes of a `.param` (a `u32` size).
        let size = (words.len() as i64).saturating_mul(4);
        for o in 0..size.max(self.slot_sizes.get(&slot).copied().unwrap_or(0) as i64) {
            self.param_slots.remove(&(slot, o));
        }
        self.param_words.insert(slot, words.into_iter().map(ParamWord::Reg).collect());
    }

    /// A register holding word `w`: its register, or an `LDL` of the incoming stack
    /// argument emitted here. Not for [`ParamWord::Stored`] ([`Lowerer::param_word`]),
    /// for which it returns `RZ`.
    fn word_reg(&mut self, w: ParamWord) -> Reg {
        match w {
            ParamWord::Stored => crate::sass::instr::RZ,
            ParamWord::Reg(r) => r,
            ParamWord::Incoming(off) => {
                let t = self.tmp(1);
                // `off` is below the 0x1100 bytes of parameters (`ptx::limits`): an `i32`.
                let a = Src::addr(RegRef::new(Reg::R(1), 1), i32::try_from(off).unwrap_or(i32::MAX));
                let m = MemMods { incoming: true, ..MemMods::new(MemSize::B32, false) };
                self.emit(Instr::new(Op::Ldl(m), vec![Dst::reg(t, 1)], vec![a]));
                t
            }
        }
    }

    /// Before a store of `bytes` bytes at byte `o` of a slot that holds whole words: the
    /// words it writes become ordinary 32-bit contents (an incoming stack word loaded
    /// here), so that the store changes only the bytes it writes. The other words stay
    /// as they are (a store into a 4 KiB incoming array loaded all 1088 words at once).
    pub fn words_to_entries(&mut self, slot: u32, o: i64, bytes: u32) {
        let Some(mut words) = self.param_words.get(&slot).cloned() else { return };
        // Words `o / 4` to `(o + bytes - 1) / 4`, those that exist.
        let Ok(first) = usize::try_from(o.max(0) / 4) else { return };
        let end = o.saturating_add(i64::from(bytes.max(1))).saturating_sub(1);
        let Ok(last) = usize::try_from(end / 4) else { return };
        for k in first..=last.min(words.len().saturating_sub(1)) {
            let Some(w) = words.get(k).copied() else { break };
            let t = match w {
                ParamWord::Stored => continue,
                ParamWord::Reg(r) => {
                    let t = self.tmp(1);
                    self.op(Op::Copy, Dst::reg(t, 1), vec![Src::r32(r)]);
                    t
                }
                ParamWord::Incoming(_) => self.word_reg(w),
            };
            // `k` is below the slot's word count (0x1100 / 4 at most).
            let wo = i64::try_from(k).unwrap_or(i64::MAX).saturating_mul(4);
            for b in wo..wo.saturating_add(4) {
                self.param_slots.remove(&(slot, b));
            }
            self.param_slots.insert((slot, wo), (t, ScalarType::B32));
            if let Some(x) = words.get_mut(k) {
                *x = ParamWord::Stored;
            }
        }
        self.param_words.insert(slot, words);
    }

    /// The value `ld.param` of type `ty` reads at byte `o` of a slot that holds whole
    /// words ([`Lowerer::param_words`]), extracted here (an incoming stack word loaded
    /// here). `None` when the slot holds no words or `o` is beyond them. Not remembered
    /// as the slot's contents: a later read need not be dominated by this one (a read
    /// on each side of a branch used the first side's value, undefined on the other).
    pub fn extract_param(&mut self, slot: u32, o: i64, ty: ScalarType) -> Option<(Reg, ScalarType)> {
        // A negative offset is before the slot (`o / 4` would round it to word 0).
        if o < 0 {
            return None;
        }
        let count = self.param_words.get(&slot)?.len();
        let w = usize::try_from(o / 4).ok()?;
        let bits = ty.bits().max(8);
        let var = if bits >= 32 {
            if o % 4 != 0 {
                return None;
            }
            let n = (bits / 32) as usize;
            let parts: Vec<Src> = (0..n).map(|k| self.param_word(slot, w.saturating_add(k))).collect();
            if n == 1 {
                let t = self.tmp(1);
                self.op(Op::Copy, Dst::reg(t, 1), parts);
                t
            } else {
                let t = self.tmp(n as u8);
                self.emit(Instr::new(Op::Join, vec![Dst::reg(t, n as u8)], parts));
                t
            }
        } else {
            if w >= count {
                return None;
            }
            // An incoming stack word: `LDL.U8`/`.S8`/`.U16`/`.S16` of the bytes read, as
            // ptxas 11.8 `-c` reads them (`LDL.U8 R5, [R1+0x3fd]`, `LDL.S16 R5,
            // [R1+0x402]`); a 16-bit read at an odd byte takes the word and `BFE`.
            let loc = self.param_words.get(&slot).and_then(|ws| ws.get(w)).copied();
            if let Some(ParamWord::Incoming(off)) = loc
                && (bits == 8 || o % 2 == 0)
            {
                let size = match (bits, ty.is_signed()) {
                    (8, false) => MemSize::U8,
                    (8, true) => MemSize::S8,
                    (_, false) => MemSize::U16,
                    (_, true) => MemSize::S16,
                };
                // `off` below 0x1100 (`ptx::limits`), `o % 4` below 4: an `i32`.
                let at = i64::from(off).saturating_add(o % 4);
                let a = Src::addr(RegRef::new(Reg::R(1), 1), i32::try_from(at).unwrap_or(i32::MAX));
                let t = self.tmp(1);
                let m = MemMods { incoming: true, ..MemMods::new(size, false) };
                self.emit(Instr::new(Op::Ldl(m), vec![Dst::reg(t, 1)], vec![a]));
                return Some((t, ty));
            }
            let word = self.param_word(slot, w);
            // `o` is not negative (above): 0, 8, 16 or 24.
            let pos = ((o % 4) as u32).saturating_mul(8);
            let t = self.tmp(1);
            self.op(
                Op::Bfe { u32: !ty.is_signed(), brev: false },
                Dst::reg(t, 1),
                vec![word, Src::imm(pos | bits << 8)],
            );
            t
        };
        Some((var, ty))
    }

    /// The value `ld.param` of type `ty` reads at byte `o` of `.param` slot `slot`: the
    /// value stored there when no later store began inside the bytes read, else taken
    /// from the slot's words ([`Lowerer::extract_param`]), from a wider stored value
    /// ([`Lowerer::extract_entry`]) or from the word(s) the read covers with the later
    /// stores inserted ([`Lowerer::entry_word`]: `st.param.b32 [p], a; st.param.b8
    /// [p+1], b; ld.param.b32 x, [p]` read `a` unchanged). `None` when nothing was stored.
    pub fn read_slot(&mut self, slot: u32, o: i64, ty: ScalarType) -> Option<(Reg, ScalarType)> {
        let bytes = i64::from(ty.bytes().max(1));
        let later = (1..bytes).any(|d| o.checked_add(d).is_some_and(|b| self.param_slots.contains_key(&(slot, b))));
        // The value stored at `o` when it holds every byte read: as wide (or both within
        // a word and it at least as wide). A narrower one holds only some of them (the
        // rest may be an older, wider value's: `st.param.b64 [a], x; st.param.b8 [a+4],
        // y; ld.param.b32 [a+4]` read `y` alone).
        let have = |t: ScalarType| {
            let h = i64::from(t.bytes().max(1));
            h == bytes || (h <= 4 && h >= bytes)
        };
        if !later
            && let Some(&x) = self.param_slots.get(&(slot, o))
            && have(x.1)
        {
            return Some(x);
        }
        if let Some(x) = self.extract_param(slot, o, ty) {
            return Some(x);
        }
        if !later && let Some(x) = self.extract_entry(slot, o, ty) {
            return Some(x);
        }
        // The words the read covers, merged: within one word, or 64 bits at a word.
        let k = usize::try_from(o / 4).ok().filter(|_| o >= 0)?;
        let pos = o % 4;
        // Something was stored in those words (or in a 64-bit value ending in the first).
        let start = o.saturating_sub(pos).saturating_sub(4);
        let end = o.saturating_add(bytes);
        if !(start..end).any(|b| self.param_slots.contains_key(&(slot, b))) {
            return None;
        }
        if bytes == 8 && pos == 0 {
            let parts = vec![self.entry_word(slot, k), self.entry_word(slot, k.saturating_add(1))];
            let t = self.tmp(2);
            self.emit(Instr::new(Op::Join, vec![Dst::reg(t, 2)], parts));
            return Some((t, ty));
        }
        if pos.saturating_add(bytes) > 4 {
            return None;
        }
        let word = self.entry_word(slot, k);
        let t = self.tmp(1);
        if bytes == 4 {
            self.op(Op::Copy, Dst::reg(t, 1), vec![word]);
        } else {
            // `pos` is 0..3: bit 0, 8, 16 or 24.
            let at = (pos as u32).saturating_mul(8) | ty.bits().max(8) << 8;
            self.op(Op::Bfe { u32: !ty.is_signed(), brev: false }, Dst::reg(t, 1), vec![word, Src::imm(at)]);
        }
        Some((t, ty))
    }

    /// The value `ld.param` of type `ty` (at most 32 bits) reads at byte `o` of a slot
    /// where no store began after `o`: part of the newest stored value holding byte `o`
    /// (a byte of a stored `.b32`, the low or high word of a `.b64`, as a callee inlined
    /// with `--inline` reads its caller's `st.param`), extracted here with `BFE` or taken
    /// as the component. `None` when no stored value covers the bytes read, or the newest
    /// one holds only some of them.
    pub fn extract_entry(&mut self, slot: u32, o: i64, ty: ScalarType) -> Option<(Reg, ScalarType)> {
        let bytes = i64::from(ty.bytes().max(1));
        if bytes > 4 {
            return None;
        }
        // The newest value holding byte `o`: the one beginning nearest before or at it
        // (a store removes the values that began inside it, so one beginning inside an
        // older value is newer). It must hold every byte read, within one of its words;
        // else the caller merges the words.
        let mut found = None;
        for d in 0..8i64 {
            let Some(base) = o.checked_sub(d) else { break };
            let Some(&(var, have)) = self.param_slots.get(&(slot, base)) else { continue };
            let hb = i64::from(have.bytes().max(1));
            if d >= hb {
                continue;
            }
            if d.saturating_add(bytes) > hb || (d % 4).saturating_add(bytes) > 4 {
                return None;
            }
            found = Some((base, var, have));
            break;
        }
        let (base, var, have) = found?;
        // `d` is 0..8 (above): the word and the byte in it.
        let d = o.saturating_sub(base);
        let comp = (d / 4) as u8;
        let pos = ((d % 4) as u32).saturating_mul(8);
        let word = if have.bits() > 32 { Src::reg(RegRef { reg: var, comp, n: 1 }) } else { Src::r32(var) };
        let t = self.tmp(1);
        if bytes == 4 {
            self.op(Op::Copy, Dst::reg(t, 1), vec![word]);
        } else {
            let bits = ty.bits().max(8);
            self.op(
                Op::Bfe { u32: !ty.is_signed(), brev: false },
                Dst::reg(t, 1),
                vec![word, Src::imm(pos | bits << 8)],
            );
        }
        Some((t, ty))
    }

    /// The words an argument passes for formal parameter `p`.
    fn arg_words(&mut self, p: &ParamDecl, arg: &Operand, callee: &str) -> LResult<Vec<Src>> {
        let want = shape(p);
        let Operand::Name { name, .. } = arg else {
            return self.error(arg.span(), "a call argument must be a `.param` variable or a register");
        };
        let _ = callee;
        match self.var(&name.name) {
            Some(VarLoc::ParamSlot(slot)) => Ok(self.slot_words(slot, want.size)),
            _ => {
                let r = self.ptx_reg(name)?;
                self.check_arg_type(name, r.ty, p)?;
                Ok(self.reg_words(r))
            }
        }
    }

    /// Checks that each `.param` argument and return variable has its formal parameter's
    /// size (ptxas 11.8: `Type of argument does not match formal parameter 'a'`, at the
    /// call), for inlined and real calls alike.
    pub fn check_param_sizes(
        &mut self,
        callee: &str,
        params: &[ParamDecl],
        rets: &[ParamDecl],
        args: &[Operand],
        ret_ops: &[Operand],
    ) -> LResult<()> {
        let mut ok = true;
        for (p, a) in params.iter().zip(args).chain(rets.iter().zip(ret_ops)) {
            let Operand::Name { name, .. } = a else { continue };
            if let Some(VarLoc::ParamSlot(slot)) = self.var(&name.name)
                && p.space != StateSpace::Reg
                // An unsized array (`.param .b8 va[]`, variadic) takes any size.
                && !p.unsized_array
                && let Some(&size) = self.slot_sizes.get(&slot)
                && size != p.size()
            {
                self.diags.push(Diag::error(
                    name.span,
                    format!(
                        "type of argument `{}` ({size} bytes) does not match formal parameter `{}` of `{callee}` ({} bytes)",
                        name.name,
                        p.name.name,
                        p.size()
                    ),
                ));
                ok = false;
            }
        }
        if ok { Ok(()) } else { Err(crate::lower::ctx::Failed) }
    }

    /// Lowers a call that is not inlined: `target` is the callee's symbol (direct and
    /// external calls) or its address register (indirect); `params`/`rets` the callee's
    /// (or prototype's) formal lists, `args`/`ret_ops` the call's operands.
    #[allow(clippy::too_many_arguments)]
    pub fn real_call(
        &mut self,
        i: &ast::Instruction,
        kind: CallKind,
        target: Src,
        callee: &str,
        params: &[ParamDecl],
        rets: &[ParamDecl],
        args: &[Operand],
        ret_ops: &[Operand],
    ) -> LResult<()> {
        let ret_shapes: Vec<ParamShape> = rets.iter().map(shape).collect();
        let in_memory = abi::returns_in_memory(&ret_shapes);
        let (ret_address, arg_locs, stack_bytes) =
            abi::place_params(&params.iter().map(shape).collect::<Vec<_>>(), in_memory);
        let mut srcs = vec![target];
        let mut locs = vec![];
        // A return value over 48 bytes: the address of a buffer in the caller's frame
        // goes first, in R4 (ptxas 11.8 `-c`: `MOV R4, R1` before `JCAL`, the buffer at
        // the bottom of the frame; `docs/abi.md`).
        let buffer = match ret_address {
            Some(loc) => {
                let (offs, size, align) = abi::memory_return_layout(&ret_shapes);
                let base = self.return_buffer(size, align, i.span)?;
                let t = self.tmp(1);
                self.op(Op::Iadd32i { cc: false, x: false }, Dst::reg(t, 1), vec![Src::r32(Reg::R(1)), Src::imm(base)]);
                srcs.push(Src::r32(t));
                locs.push(loc);
                Some((base, offs))
            }
            None => None,
        };
        // Register words are operands of the call; stack words are stored one by one as
        // they are formed (module docs), so that each is live only until its store (a
        // callee passing its 1 KiB array on loaded all 256 words, then stored them). No
        // other call (a slow path) comes between these stores below `R1` and this call:
        // forming a word takes no call. `regalloc::calls::finish` lowers `R1` by `area`
        // around the call: the callee's `[R1 + off]` is the caller's `[R1 + off - area]`.
        // ptxas 11.8 `-c` reserves the area at the bottom of the caller's frame instead
        // (`STL [R1+0x200], R0` before `JCAL`); the callee sees the same layout.
        let area = i64::from(abi::outgoing_area(stack_bytes));
        for ((p, a), l) in params.iter().zip(args).zip(&arg_locs) {
            let slot = match a {
                Operand::Name { name, .. } => match self.var(&name.name) {
                    Some(VarLoc::ParamSlot(slot)) => Some(slot),
                    _ => None,
                },
                _ => None,
            };
            let words = match slot {
                Some(_) => vec![],
                None => self.arg_words(p, a, callee)?,
            };
            for (k, loc) in l.iter().enumerate() {
                let w = match slot {
                    Some(slot) => self.param_word(slot, k),
                    None => words.get(k).copied().unwrap_or(Src::rz()),
                };
                match *loc {
                    AbiLoc::Reg(_) => {
                        srcs.push(w);
                        locs.push(*loc);
                    }
                    // A word of a `.param` argument nothing was stored in is not stored
                    // (ptxas 11.8 `-c` stores only the words written: `STL [R1+0x200],
                    // R0; STL [R1+0x3fc], R0` for a 1 KiB array): reading it is reading
                    // memory never written, diagnosed when the callee is inlined ("read
                    // of a parameter slot ... that was never written").
                    AbiLoc::Stack(_) if slot.is_some_and(|s| !self.word_written(s, k)) => {}
                    AbiLoc::Stack(off) => {
                        // `off` is below `area`, both at most 0x1100 and some: an `i32`.
                        let rel = i32::try_from(i64::from(off).saturating_sub(area)).unwrap_or(i32::MIN);
                        let at = Src::addr(RegRef::new(Reg::R(1), 1), rel);
                        self.emit(Instr::new(Op::Stl(MemMods::new(MemSize::B32, false)), vec![], vec![at, w]));
                    }
                }
            }
        }
        let ret_regs: Vec<u8> = if in_memory {
            vec![]
        } else {
            let (ret_locs, _) = placed(rets);
            ret_locs
                .iter()
                .flatten()
                .map(|l| match l {
                    AbiLoc::Reg(r) => *r,
                    AbiLoc::Stack(_) => unreachable!("returns_in_memory is false"),
                })
                .collect()
        };
        let words: Vec<Reg> = ret_regs.iter().map(|_| self.tmp(1)).collect();
        let site = self.f.calls.len() as u32;
        self.f.calls.push(CallSite { kind, args: locs, rets: ret_regs, stack_bytes, preserves: false });
        self.emit(Instr::new(Op::Call(site), words.iter().map(|w| Dst::reg(*w, 1)).collect(), srcs));
        // The call clobbers the carry flag: a later carry-in reads PTX's copy of it.
        self.cc_now = None;
        // The result words not yet bound, in order.
        let mut rest = words.as_slice();
        for (j, (p, r)) in rets.iter().zip(ret_ops).enumerate() {
            let n = shape(p).words();
            let ws = match &buffer {
                // The callee stored the value in the buffer: `LDL` each word after the
                // call (ptxas: `LDL R4, [R1+0x3c]`, `LDL.64 R2, [R1]`), unused ones are
                // removed later. The buffer is in the frame, so its offsets are below
                // `ptx::limits::LOCAL_BYTES` (`return_buffer`).
                Some((base, offs)) => {
                    let Some(&off) = offs.get(j) else {
                        return self.error(r.span(), "internal error: no buffer offset for this return value");
                    };
                    let at = base.saturating_add(off);
                    (0..n).map(|w| self.load_frame_word(at.saturating_add(w.saturating_mul(4)))).collect()
                }
                // `ret_regs` has every return value's words (`placed(rets)`).
                None => {
                    let Some((ws, tail)) = rest.split_at_checked(n as usize) else {
                        return self.error(r.span(), "internal error: too few result words for this return value");
                    };
                    rest = tail;
                    ws.to_vec()
                }
            };
            let Operand::Name { name, .. } = r else {
                return self.error(r.span(), "expected a return variable");
            };
            match self.var(&name.name) {
                Some(VarLoc::ParamSlot(slot)) => self.bind_words(slot, ws),
                _ => {
                    let dst = self.ptx_reg(name)?;
                    self.check_arg_type(name, dst.ty, p)?;
                    self.words_to_reg(&ws, dst);
                }
            }
        }
        Ok(())
    }

    /// Starts lowering device function `f` on its own: `Op::Params` defines the incoming
    /// register words (the stack words are loaded where they are read, module docs),
    /// parameters and return values are bound, and the block for `RET` is made.
    pub fn begin_device_function(&mut self, f: &ast::Function) -> LResult<()> {
        let ret_shapes: Vec<ParamShape> = f.ret_params.iter().map(shape).collect();
        let in_memory = abi::returns_in_memory(&ret_shapes);
        let (ret_address, locs, _) = abi::place_params(&f.params.iter().map(shape).collect::<Vec<_>>(), in_memory);
        // A return value over 48 bytes arrives as the address of the caller's buffer in
        // R4 (`abi::RET_ADDRESS_REG`); `finish_device_function` stores through it.
        let address = ret_address.map(|_| self.tmp(1));
        self.ret_address = address;
        // The destinations of `Op::Params` and their locations (`FuncAbi::params`).
        let mut dsts = vec![];
        let mut reg_locs = vec![];
        if let (Some(a), Some(loc)) = (address, ret_address) {
            dsts.push(Dst::reg(a, 1));
            reg_locs.push(loc);
        }
        let mut words: Vec<Vec<ParamWord>> = vec![];
        for l in &locs {
            let mut ws = vec![];
            for &loc in l {
                match loc {
                    AbiLoc::Reg(_) => {
                        let t = self.tmp(1);
                        dsts.push(Dst::reg(t, 1));
                        reg_locs.push(loc);
                        ws.push(ParamWord::Reg(t));
                    }
                    AbiLoc::Stack(off) => ws.push(ParamWord::Incoming(off)),
                }
            }
            words.push(ws);
        }
        self.emit(Instr::new(Op::Params, dsts, vec![]));
        for (p, ws) in f.params.iter().zip(words) {
            self.bind_param_words(p, ws);
        }
        for p in &f.ret_params {
            if p.space == StateSpace::Reg {
                self.declare_reg(&p.name.name, None, p.ty);
                self.ret_bindings.push((None, p.clone()));
            } else {
                let slot = self.new_param_slot(&p.name.name, p.alignment(), p.size());
                self.ret_bindings.push((Some(slot), p.clone()));
            }
        }
        self.ret_block = Some(self.f.new_block("ret"));
        let rets = if in_memory {
            vec![]
        } else {
            placed(&f.ret_params)
                .0
                .into_iter()
                .flatten()
                .map(|l| match l {
                    AbiLoc::Reg(r) => r,
                    AbiLoc::Stack(_) => unreachable!("returns_in_memory is false"),
                })
                .collect()
        };
        self.f.abi = Some(FuncAbi { params: reg_locs, rets, preserves: false });
        Ok(())
    }

    /// Binds incoming parameter `p` to its words. A `.reg` parameter is a register from
    /// the start: its stack words, if any, are loaded here, at the entry.
    fn bind_param_words(&mut self, p: &ParamDecl, ws: Vec<ParamWord>) {
        if p.space == StateSpace::Reg {
            let ws: Vec<Reg> = ws.into_iter().map(|w| self.word_reg(w)).collect();
            self.declare_reg(&p.name.name, None, p.ty);
            let id = ast::Ident { name: p.name.name.clone(), span: p.name.span };
            if let Ok(r) = self.ptx_reg(&id) {
                self.words_to_reg(&ws, r);
            }
        } else {
            let slot = self.new_param_slot(&p.name.name, p.alignment(), p.size());
            self.param_words.insert(slot, ws);
        }
    }

    /// The byte offset in this function's `.local` area of a buffer of `size` bytes
    /// aligned to `align` for a return value passed through memory. The calls of a
    /// function share one buffer (each call's value is loaded right after it); a larger
    /// one is added when needed. The frame (`EIATTR_FRAME_SIZE`, the prologue's
    /// `IADD32I R1, R1, -frame`) counts it as it counts `.local` variables.
    fn return_buffer(&mut self, size: u32, align: u32, at: ast::Span) -> LResult<u32> {
        if let Some((off, have)) = self.ret_buffer
            && have >= size
            && off.is_multiple_of(align)
        {
            return Ok(off);
        }
        let a = u64::from(align);
        // `u32` values in `u64`: exact (`align` is 4 to 16, `abi::memory_return_layout`).
        let end = u64::from(self.f.local_bytes).div_ceil(a.max(1)).saturating_mul(a).saturating_add(u64::from(size));
        if end > crate::ptx::limits::LOCAL_BYTES {
            return self.error(
                at,
                format!(
                    "local memory exceeds {} bytes per thread with the buffer for this call's return value",
                    crate::ptx::limits::LOCAL_BYTES
                ),
            );
        }
        // `end` is at most `LOCAL_BYTES` (above), a `u32`.
        let off = end.saturating_sub(u64::from(size)) as u32;
        self.f.local_bytes = end as u32;
        self.uses_frame = true;
        self.ret_buffer = Some((off, size));
        Ok(off)
    }

    /// `LDL` of the 32-bit word at byte `off` of this function's frame (`[R1+off]`).
    fn load_frame_word(&mut self, off: u32) -> Reg {
        let t = self.tmp(1);
        let a = Src::addr(RegRef::new(Reg::R(1), 1), off as i32);
        self.emit(Instr::new(Op::Ldl(MemMods::new(MemSize::B32, false)), vec![Dst::reg(t, 1)], vec![a]));
        t
    }

    /// A new `.param` slot for variable `name`.
    pub fn new_param_slot(&mut self, name: &str, align: u32, size: u32) -> u32 {
        let slot = self.next_param_slot_number();
        let key = self.declare_in_scope(name, None);
        self.var_align.insert(key.clone(), align);
        self.vars.insert(key, VarLoc::ParamSlot(slot));
        self.slot_sizes.insert(slot, size);
        slot
    }

    /// A fresh `.param` slot number. One per `.param` variable declared or argument
    /// passed, each also an entry of `slot_sizes`, so the `u32` count stays far below
    /// `u32::MAX` in any compilation that fits in memory.
    pub(in crate::lower) fn next_param_slot_number(&mut self) -> u32 {
        let slot = self.next_slot;
        self.next_slot = slot.saturating_add(1);
        slot
    }

    /// `ret` in the device function being lowered: to the `RET` block.
    pub fn device_return(&mut self, i: &ast::Instruction) -> LResult<()> {
        // Lowering sends `ret` here only in a device function, which has a `RET` block.
        let Some(b) = self.ret_block else {
            return self.error(i.span, "internal error: `ret` outside a device function's body");
        };
        match &i.guard {
            None => {
                self.jump(b);
                let next = self.new_block(String::new());
                self.start_block(next);
            }
            Some(g) => {
                let p = self.ptx_reg(&g.reg)?;
                self.branch_if(p.reg, g.negated, b);
            }
        }
        Ok(())
    }

    /// Ends a device function: the `RET` block, last in the layout, reads the returned
    /// words.
    pub fn finish_device_function(&mut self) {
        let Some(b) = self.ret_block else { return };
        self.fallthrough_to(b);
        let mut srcs = vec![];
        let mut words_of = vec![];
        for (slot, p) in self.ret_bindings.clone() {
            match slot {
                Some(slot) => {
                    let ws = self.slot_words(slot, shape(&p).size);
                    words_of.push(ws);
                }
                None => {
                    let id = ast::Ident { name: p.name.name.clone(), span: p.name.span };
                    let ws = match self.ptx_reg(&id) {
                        Ok(r) => self.reg_words(r),
                        Err(_) => vec![],
                    };
                    words_of.push(ws);
                }
            }
        }
        match self.ret_address {
            // Through memory: `STL [R4+off]` of each word the function wrote (ptxas 11.8
            // `-c` stores only those: `STL [R4], R3; STL [R4+0x4], R7; STL [R4+0x20], R6`).
            Some(address) => {
                let shapes: Vec<ParamShape> = self.ret_bindings.iter().map(|(_, p)| shape(p)).collect();
                let (offs, _, _) = abi::memory_return_layout(&shapes);
                for (ws, off) in words_of.into_iter().zip(offs) {
                    for (w, data) in ws.into_iter().enumerate() {
                        if data == Src::rz() {
                            continue;
                        }
                        // Offsets in the caller's buffer, which fits its frame (`return_buffer`).
                        let at = off.saturating_add((w as u32).saturating_mul(4));
                        let a = Src::addr(RegRef::new(address, 1), at as i32);
                        self.emit(Instr::new(Op::Stl(MemMods::new(MemSize::B32, false)), vec![], vec![a, data]));
                    }
                }
            }
            None => srcs.extend(words_of.into_iter().flatten()),
        }
        self.emit(Instr::new(Op::Ret, vec![], srcs));
    }

    /// The address of function `name` as (low, high) words: `MOV32I` of `32@lo(name)` and
    /// `32@hi(name)`, as ptxas 11.8 `-c` writes `mov.u64 %rd, f` (relocations
    /// `R_CUDA_ABS32_LO_20`/`_HI_20`).
    pub fn function_address(&mut self, name: &ast::Ident) -> LResult<(Src, Src)> {
        if self.layout.calls.uses_shared.contains(&name.name) {
            return self.fail(
                Diag::error(
                    name.span,
                    format!("the address of `{}` is taken, and it uses `.shared` variables", name.name),
                )
                .note("ptx2sass places shared variables per kernel, so such functions must be inlined"),
            );
        }
        let id = self.f.symbol(&name.name);
        let lo = self.tmp(1);
        self.op(Op::Mov32i, Dst::reg(lo, 1), vec![Src::sym(id, SymPart::Lo)]);
        let hi = self.tmp(1);
        self.op(Op::Mov32i, Dst::reg(hi, 1), vec![Src::sym(id, SymPart::Hi)]);
        Ok((Src::r32(lo), Src::r32(hi)))
    }
}
