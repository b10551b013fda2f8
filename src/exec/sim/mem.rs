//! Memory instructions, constant banks and generic addressing.
//!
//! Address map (below 4 GiB the simulator is free to choose, `exec` module docs):
//!
//! | range | what |
//! |---|---|
//! | `[SHARED_WINDOW, +16 MiB)` | the CTA's shared memory at offset `addr - SHARED_WINDOW` (`c[0x0][0x0]`): the kernel's static data (`shared_bytes`), then `Launch::dynamic_shared` bytes |
//! | `[LOCAL_WINDOW, +16 MiB)` | the thread's local memory at offset `addr - LOCAL_WINDOW` (`c[0x0][0x4]`) |
//! | `>= GLOBAL_BASE` (4 GiB) | global buffers of `Launch::global` |
//! | `>= MODULE_DATA_BASE` (2^44) | the module's `.global` variables, placed by the loader (`load`) |
//!
//! Both windows are 16 MiB aligned, as findings §4's window arithmetic requires
//! (`cvta.shared` = `LOP.OR lo, off, c[0x0][0x0]`, `cvta.to.shared` = `LOP32I.AND lo,
//! addr, 0xffffff`, `isspacep.shared` = `(lo & 0xff000000) == c[0x0][0x0] && hi == 0`).
//! Local addresses (LDL/STL, `R1`) run from 0 to the frame size; the initial stack pointer
//! `c[0x0][0x20]` is the top of the frame, so that `MOV R1, c[0x0][0x20]; IADD32I R1, R1,
//! -frame` points at its bottom.
//!
//! Generic LD/ST follow their Plg operand (spa50-LD.txt, spa50-ST.txt: "Plg is optional
//! predicate indicating which thread addresses map to local or global address spaces. If
//! not specified, Plg is assumed to be PT"): Plg false accesses shared memory (the address
//! must lie in the shared window), Plg true accesses local memory inside the local window
//! and global memory elsewhere.

// Addresses and indices come from the executed program (issue 20, docs/fuzzing.md "No-panic
// discipline"): an access outside memory or a bank is an error or reads 0, never a panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::Sim;
use super::state::{Lanes, WARP_SIZE, Warp, in_mask, masked};
use crate::exec::ExecError;
use crate::sass::instr::{Dst, Instr, Reg, RegRef, Src, SrcKind};
use crate::sass::op::{LdcMode, MemMods, MemSize, Op};

/// Base of the shared window in the generic address space (`c[0x0][0x0]`).
pub const SHARED_WINDOW: u32 = 0x0100_0000;
/// Base of the local window in the generic address space (`c[0x0][0x4]`).
pub const LOCAL_WINDOW: u32 = 0x0200_0000;
/// The window-selecting bits of a 32-bit generic address (windows are 16 MiB).
pub const WINDOW_MASK: u32 = 0xff00_0000;
/// Offset of kernel parameters in constant bank 0 (findings §6).
pub const PARAM_BASE: usize = 0x140;
/// Size of a constant bank (spa50-LDC.txt: "32 constant banks of size 64 KB each").
pub const BANK_BYTES: i64 = 0x1_0000;

/// True if the 64-bit generic address lies in the shared window (spa50-LEA.txt's
/// shared-memory-window detect, with findings §4's test).
pub fn in_shared_window(addr: u64) -> bool {
    addr >> 32 == 0 && (addr as u32 & WINDOW_MASK) == SHARED_WINDOW
}

/// True if the 64-bit generic address lies in the local window.
pub fn in_local_window(addr: u64) -> bool {
    addr >> 32 == 0 && (addr as u32 & WINDOW_MASK) == LOCAL_WINDOW
}

/// Constant banks 0 (driver constants and parameters), 2 (compiler constants of a loaded
/// ptxas listing) and 3 (user `.const` data).
#[derive(Clone, Debug)]
pub struct ConstBanks {
    bank0: Vec<u8>,
    bank2: Vec<u8>,
    bank3: Vec<u8>,
}

impl ConstBanks {
    /// Bank 0 per findings §4 and §6: `0x0` shared window, `0x4` local window,
    /// `0x8..0x10` `%ntid`, `0x14..0x1c` `%nctaid`, `0x20` initial stack pointer
    /// (`stack_top`), `0xfc` the launch's dynamic shared bytes (ptxas 11.8 reads
    /// `%dynamic_smem_size` as `MOV R4, c[0x0][0xfc]`), parameters from `0x140`; bank 3
    /// is `const_bank`, bank 2 `compiler_consts`.
    pub fn new(
        block: [u32; 3],
        grid: [u32; 3],
        stack_top: u32,
        dynamic_shared: u32,
        params: &[u8],
        (const_bank, compiler_consts): (&[u8], &[u8]),
    ) -> ConstBanks {
        // Parameters are at most MAX_PARAM_BYTES (`check_shape`), so the sums fit.
        let end = PARAM_BASE.saturating_add(params.len());
        let mut bank0 = vec![0u8; end.div_ceil(4).saturating_mul(4)];
        let mut put = |off: usize, bytes: &[u8]| {
            if let Some(d) = bank0.get_mut(off..off.saturating_add(bytes.len())) {
                d.copy_from_slice(bytes);
            }
        };
        put(0x0, &SHARED_WINDOW.to_le_bytes());
        put(0x4, &LOCAL_WINDOW.to_le_bytes());
        for (k, (b, g)) in block.iter().zip(grid).enumerate() {
            let k = k.saturating_mul(4); // k < 3
            put(k.saturating_add(0x8), &b.to_le_bytes());
            put(k.saturating_add(0x14), &g.to_le_bytes());
        }
        put(0x20, &stack_top.to_le_bytes());
        put(0xfc, &dynamic_shared.to_le_bytes());
        put(PARAM_BASE, params);
        ConstBanks { bank0, bank2: compiler_consts.to_vec(), bank3: const_bank.to_vec() }
    }

    fn image(&self, bank: i64) -> Option<&[u8]> {
        match bank {
            0 => Some(&self.bank0),
            2 => Some(&self.bank2),
            3 => Some(&self.bank3),
            _ => None,
        }
    }

    /// An instruction's `c[bank][offset]` operand of `len` (4 or 8) bytes, little-endian.
    /// Reading outside the bank's defined image is an error (it would be garbage or a
    /// compiler bug).
    pub fn operand(&self, bank: u8, offset: i64, len: usize) -> Result<u64, ExecError> {
        let oob = ExecError::OutOfBounds { space: "const", addr: (bank as u64) << 16 | offset as u64, len: len as u64 };
        if bank == 2 && self.bank2.is_empty() {
            return Err(ExecError::Unsupported(
                "c[0x2][..]: constant bank 2 is empty (a listing printed with `nvdisasm -c` has no \
                 .nv.constant2 section; use `nvdisasm -hex` output)"
                    .into(),
            ));
        }
        let img = self.image(bank as i64).ok_or(oob.clone())?;
        let Some(bytes) = usize::try_from(offset).ok().and_then(|o| img.get(o..o.checked_add(len)?)) else {
            return Err(oob);
        };
        if offset.rem_euclid(4) != 0 {
            return Err(ExecError::Misaligned { space: "const", addr: offset as u64, len: len as u64 });
        }
        Ok(little_endian(bytes))
    }

    /// What LDC reads (spa50-LDC.txt): `len` bytes of `bank` at `addr`; addresses outside
    /// the bank (or past its defined image) and unsupported banks read 0; a misaligned
    /// address is an error.
    pub fn ldc(&self, bank: i64, addr: i64, len: usize) -> Result<u64, ExecError> {
        if addr.checked_rem_euclid(len as i64) != Some(0) {
            return Err(ExecError::Misaligned { space: "const", addr: addr as u64, len: len as u64 });
        }
        let Some(img) = self.image(bank) else { return Ok(0) };
        let within = |end: usize| end as i64 <= BANK_BYTES;
        let bytes = usize::try_from(addr).ok().and_then(|o| img.get(o..o.checked_add(len).filter(|&e| within(e))?));
        Ok(bytes.map_or(0, little_endian))
    }
}

/// The little-endian value of up to 8 bytes.
fn little_endian(bytes: &[u8]) -> u64 {
    bytes.iter().rev().fold(0u64, |v, b| v << 8 | *b as u64)
}

/// A CTA's shared memory and its threads' local memories.
#[derive(Clone, Debug)]
pub struct CtaMem {
    /// Shared memory (`shared_bytes` of the kernel).
    pub shared: Vec<u8>,
    /// Local memory of every thread, `frame` bytes each, by linear thread index.
    pub local: Vec<u8>,
    /// Local bytes per thread.
    pub frame: usize,
}

/// The state space one access resolves to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Space {
    Global,
    Shared,
    Local,
}

impl Space {
    fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
        }
    }
}

/// Zero- or sign-extends a loaded value of `size` into 32-bit words.
fn extend(size: MemSize, raw: &[u8]) -> [u32; 4] {
    // `raw` holds `size.bytes()` bytes; missing ones read as 0.
    let byte = |k: usize| raw.get(k).copied().unwrap_or(0);
    let mut out = [0u32; 4];
    let first = match size {
        MemSize::U8 => byte(0) as u32,
        MemSize::S8 => byte(0) as i8 as i32 as u32,
        MemSize::U16 => u16::from_le_bytes([byte(0), byte(1)]) as u32,
        MemSize::S16 => i16::from_le_bytes([byte(0), byte(1)]) as i32 as u32,
        _ => {
            for (o, w) in out.iter_mut().zip(raw.chunks(4)) {
                *o = little_endian(w) as u32;
            }
            return out;
        }
    };
    out = [first, 0, 0, 0];
    out
}

/// The bytes a store of `size` writes from its data words.
fn bytes_of(size: MemSize, data: &[u32; 4]) -> Vec<u8> {
    let n = size.bytes() as usize;
    data.iter().flat_map(|w| w.to_le_bytes()).take(n).collect()
}

fn window_slice(buf: &mut [u8], space: Space, off: u64, n: usize, addr: u64) -> Result<&mut [u8], ExecError> {
    let range = usize::try_from(off).ok().and_then(|o| Some(o..o.checked_add(n)?));
    range.and_then(|r| buf.get_mut(r)).ok_or(ExecError::OutOfBounds { space: space.name(), addr, len: n as u64 })
}

impl Sim<'_> {
    /// One lane's access: loads return the extended words, stores write `data`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn access(
        &mut self,
        mem: &mut super::mem::CtaMem,
        space: Space,
        thread: usize,
        addr: u64,
        size: MemSize,
        data: Option<&[u32; 4]>,
    ) -> Result<[u32; 4], ExecError> {
        let n = size.bytes() as usize;
        if !addr.is_multiple_of(n as u64) {
            return Err(ExecError::Misaligned { space: space.name(), addr, len: n as u64 });
        }
        match space {
            Space::Global => match data {
                Some(d) => {
                    self.global.write("global", addr, &bytes_of(size, d))?;
                    Ok([0; 4])
                }
                None => Ok(extend(size, self.global.read("global", addr, n as u64)?)),
            },
            Space::Shared | Space::Local => {
                let buf = if space == Space::Shared {
                    Some(&mut mem.shared[..])
                } else {
                    // The thread's frame (`local` holds one per thread of the CTA).
                    let f = mem.frame;
                    let start = thread.saturating_mul(f);
                    mem.local.get_mut(start..start.saturating_add(f))
                };
                let oob = || ExecError::OutOfBounds { space: space.name(), addr, len: n as u64 };
                let s = window_slice(buf.ok_or_else(oob)?, space, addr, n, addr)?;
                match data {
                    Some(d) => {
                        s.copy_from_slice(&bytes_of(size, d));
                        Ok([0; 4])
                    }
                    None => Ok(extend(size, s)),
                }
            }
        }
    }

    /// The address operand `[Ra+offset]` per lane: 64-bit `{Ra+1, Ra}` with `.E`, else
    /// 32-bit `Ra` (wrapping); with `Ra` = RZ the zero-extended offset (spa50-LD.txt).
    pub(super) fn addresses(w: &Warp, src: &Src, e: bool, mask: u32) -> Result<[u64; WARP_SIZE], ExecError> {
        let SrcKind::Addr { base, offset } = src.kind else {
            return Err(ExecError::Unsupported(format!("expected an address operand, found {:?}", src.kind)));
        };
        let mut out = [0u64; WARP_SIZE];
        let Reg::R(r) = base.reg else {
            return Err(ExecError::Unsupported(format!("address base {:?}", base.reg)));
        };
        for (l, o) in masked(&mut out, mask) {
            *o = if base.reg.is_rz() {
                offset as u32 as u64
            } else if e {
                let b = w.reg(r as usize, l) as u64 | (w.reg((r as usize).saturating_add(1), l) as u64) << 32;
                b.wrapping_add(offset as i64 as u64)
            } else {
                w.reg(r as usize, l).wrapping_add(offset as u32) as u64
            };
        }
        Ok(out)
    }

    /// Executes LD/ST/LDG/STG/LDS/STS/LDL/STL/LDC in the lanes of `mask`.
    pub(super) fn exec_mem(&mut self, w: &mut Warp, mem: &mut CtaMem, i: &Instr, mask: u32) -> Result<(), ExecError> {
        if let Op::Ldc { size, mode } = i.op {
            return self.exec_ldc(w, i, size, mode, mask);
        }
        let Some(&m) = i.op.mem() else {
            return Err(ExecError::Unsupported(format!("{} is no memory instruction", i.op.name())));
        };
        let m: MemMods = m;
        let store = i.op.info().store;
        let addr_src = i.srcs.first().ok_or_else(|| ExecError::Unsupported("memory operand missing".into()))?;
        let addrs = Self::addresses(w, addr_src, m.e, mask)?;
        let generic = matches!(i.op, Op::Ld(_) | Op::St(_));
        let plg_at = if store { 2 } else { 1 };
        let plg = match i.srcs.get(plg_at) {
            Some(s) if generic => w.pred_src(s)?,
            _ => u32::MAX,
        };
        let data_reg: RegRef = if store {
            i.srcs.get(1).and_then(|s| s.as_reg()).ok_or_else(|| ExecError::Unsupported("store data".into()))?
        } else {
            match i.dsts.first() {
                Some(Dst::Reg(r)) => *r,
                _ => return Err(ExecError::Unsupported("load destination".into())),
            }
        };
        let mut loaded = [[0u32; 4]; WARP_SIZE];
        for (l, slot) in masked(&mut loaded, mask) {
            let a = addrs.get(l).copied().unwrap_or(0);
            let (space, addr) = match i.op {
                Op::Ldg(_) | Op::Stg(_) => (Space::Global, a),
                Op::Lds(_) | Op::Sts(_) => (Space::Shared, a),
                Op::Ldl(_) | Op::Stl(_) => (Space::Local, a),
                _ => {
                    if !in_mask(plg, l) {
                        if !in_shared_window(a) {
                            return Err(ExecError::OutOfBounds {
                                space: "shared",
                                addr: a,
                                len: m.size.bytes() as u64,
                            });
                        }
                        (Space::Shared, a & !(WINDOW_MASK as u64)) // minus SHARED_WINDOW
                    } else if in_local_window(a) {
                        (Space::Local, a & !(WINDOW_MASK as u64)) // minus LOCAL_WINDOW
                    } else {
                        (Space::Global, a)
                    }
                }
            };
            let thread = w.linear.get(l).copied().unwrap_or(u32::MAX) as usize;
            if store {
                let Reg::R(r) = data_reg.reg else { continue };
                let mut d = [0u32; 4];
                for (k, x) in d.iter_mut().enumerate().take(m.size.regs() as usize) {
                    *x = w.reg((r as usize).saturating_add(k), l);
                }
                self.access(mem, space, thread, addr, m.size, Some(&d))?;
            } else {
                *slot = self.access(mem, space, thread, addr, m.size, None)?;
            }
        }
        if !store {
            let mut dst = data_reg;
            dst.n = m.size.regs();
            w.write_regs(dst, mask, &loaded);
        }
        Ok(())
    }

    /// LDC (spa50-LDC.txt): sizes U8..64 and the IA/IL/IS/ISL address modes.
    fn exec_ldc(&mut self, w: &mut Warp, i: &Instr, size: MemSize, mode: LdcMode, mask: u32) -> Result<(), ExecError> {
        let Some(SrcKind::CBuf { bank, offset, index, .. }) = i.srcs.first().map(|s| s.kind) else {
            return Err(ExecError::Unsupported("LDC without a constant operand".into()));
        };
        if matches!(size, MemSize::B128 | MemSize::U128) {
            return Err(ExecError::Unsupported("LDC.128 (.INVALID in spa50-LDC.txt)".into()));
        }
        let Some(Dst::Reg(d)) = i.dsts.first() else {
            return Err(ExecError::Unsupported("LDC destination".into()));
        };
        let n = size.bytes() as usize;
        let idx: Lanes = match index {
            Some(r) if !r.reg.is_rz() => w.gather(&Src::reg(r), &self.banks, mask)?,
            _ => [0; WARP_SIZE],
        };
        let indexed = index.is_some_and(|r| !r.reg.is_rz());
        let mut out = [[0u32; 4]; WARP_SIZE];
        for (l, o) in masked(&mut out, mask) {
            let ra = idx.get(l).copied().unwrap_or(0);
            let (b, a) = if !indexed {
                (bank as i64, (offset as u32 & 0xffff) as i64)
            } else {
                match mode {
                    LdcMode::Ia => (bank as i64, ra.wrapping_add(offset as u32) as i64),
                    LdcMode::Il => {
                        let s = ra.wrapping_add(offset as u32);
                        // Both below 2^33: no overflow.
                        (i64::from(bank).saturating_add(i64::from(s >> 16)), (s & 0xffff) as i64)
                    }
                    LdcMode::Is | LdcMode::Isl => {
                        let b = i64::from(bank).saturating_add(i64::from(ra >> 16));
                        (b, i64::from(offset).saturating_add(i64::from(ra & 0xffff)))
                    }
                }
            };
            let v = if mode == LdcMode::Isl && indexed && b > 13 { 0 } else { self.banks.ldc(b, a, n)? };
            let raw = v.to_le_bytes();
            *o = extend(size, raw.get(..n).unwrap_or(&raw));
        }
        let mut dst = *d;
        dst.n = size.regs();
        w.write_regs(dst, mask, &out);
        Ok(())
    }
}
