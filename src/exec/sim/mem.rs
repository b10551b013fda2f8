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

use super::Sim;
use super::state::{Lanes, WARP_SIZE, Warp, lanes};
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
        let mut bank0 = vec![0u8; (PARAM_BASE + params.len()).div_ceil(4) * 4];
        let mut put = |off: usize, v: u32| bank0[off..off + 4].copy_from_slice(&v.to_le_bytes());
        put(0x0, SHARED_WINDOW);
        put(0x4, LOCAL_WINDOW);
        for k in 0..3 {
            put(0x8 + 4 * k, block[k]);
            put(0x14 + 4 * k, grid[k]);
        }
        put(0x20, stack_top);
        put(0xfc, dynamic_shared);
        bank0[PARAM_BASE..PARAM_BASE + params.len()].copy_from_slice(params);
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
        if offset < 0 || offset as usize + len > img.len() {
            return Err(oob);
        }
        if offset % 4 != 0 {
            return Err(ExecError::Misaligned { space: "const", addr: offset as u64, len: len as u64 });
        }
        let o = offset as usize;
        Ok(img[o..o + len].iter().rev().fold(0u64, |v, b| v << 8 | *b as u64))
    }

    /// What LDC reads (spa50-LDC.txt): `len` bytes of `bank` at `addr`; addresses outside
    /// the bank (or past its defined image) and unsupported banks read 0; a misaligned
    /// address is an error.
    pub fn ldc(&self, bank: i64, addr: i64, len: usize) -> Result<u64, ExecError> {
        if addr.rem_euclid(len as i64) != 0 {
            return Err(ExecError::Misaligned { space: "const", addr: addr as u64, len: len as u64 });
        }
        let Some(img) = self.image(bank) else { return Ok(0) };
        if addr < 0 || addr + len as i64 > BANK_BYTES || addr as usize + len > img.len() {
            return Ok(0);
        }
        let o = addr as usize;
        Ok(img[o..o + len].iter().rev().fold(0u64, |v, b| v << 8 | *b as u64))
    }
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
    let mut out = [0u32; 4];
    match size {
        MemSize::U8 => out[0] = raw[0] as u32,
        MemSize::S8 => out[0] = raw[0] as i8 as i32 as u32,
        MemSize::U16 => out[0] = u16::from_le_bytes([raw[0], raw[1]]) as u32,
        MemSize::S16 => out[0] = i16::from_le_bytes([raw[0], raw[1]]) as i32 as u32,
        _ => {
            for (k, w) in raw.chunks(4).enumerate() {
                out[k] = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            }
        }
    }
    out
}

/// The bytes a store of `size` writes from its data words.
fn bytes_of(size: MemSize, data: &[u32; 4]) -> Vec<u8> {
    let n = size.bytes() as usize;
    data.iter().flat_map(|w| w.to_le_bytes()).take(n).collect()
}

fn window_slice(buf: &mut [u8], space: Space, off: u64, n: usize, addr: u64) -> Result<&mut [u8], ExecError> {
    let end = off.checked_add(n as u64).filter(|&e| e <= buf.len() as u64);
    match end {
        Some(e) => Ok(&mut buf[off as usize..e as usize]),
        None => Err(ExecError::OutOfBounds { space: space.name(), addr, len: n as u64 }),
    }
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
                let (buf, off) = if space == Space::Shared {
                    (&mut mem.shared[..], addr)
                } else {
                    let f = mem.frame;
                    (&mut mem.local[thread * f..(thread + 1) * f], addr)
                };
                let s = window_slice(buf, space, off, n, addr)?;
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
        for l in lanes(mask) {
            out[l] = if base.reg.is_rz() {
                offset as u32 as u64
            } else if e {
                let b = w.reg(r as usize, l) as u64 | (w.reg(r as usize + 1, l) as u64) << 32;
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
        let m: MemMods = *i.op.mem().expect("a memory instruction");
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
        for l in lanes(mask) {
            let a = addrs[l];
            let (space, addr) = match i.op {
                Op::Ldg(_) | Op::Stg(_) => (Space::Global, a),
                Op::Lds(_) | Op::Sts(_) => (Space::Shared, a),
                Op::Ldl(_) | Op::Stl(_) => (Space::Local, a),
                _ => {
                    if plg >> l & 1 == 0 {
                        if !in_shared_window(a) {
                            return Err(ExecError::OutOfBounds {
                                space: "shared",
                                addr: a,
                                len: m.size.bytes() as u64,
                            });
                        }
                        (Space::Shared, a - SHARED_WINDOW as u64)
                    } else if in_local_window(a) {
                        (Space::Local, a - LOCAL_WINDOW as u64)
                    } else {
                        (Space::Global, a)
                    }
                }
            };
            let thread = w.linear[l] as usize;
            if store {
                let Reg::R(r) = data_reg.reg else { continue };
                let mut d = [0u32; 4];
                for (k, x) in d.iter_mut().enumerate().take(m.size.regs() as usize) {
                    *x = w.reg(r as usize + k, l);
                }
                self.access(mem, space, thread, addr, m.size, Some(&d))?;
            } else {
                loaded[l] = self.access(mem, space, thread, addr, m.size, None)?;
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
        for l in lanes(mask) {
            let ra = idx[l];
            let (b, a) = if !indexed {
                (bank as i64, (offset as u32 & 0xffff) as i64)
            } else {
                match mode {
                    LdcMode::Ia => (bank as i64, ra.wrapping_add(offset as u32) as i64),
                    LdcMode::Il => {
                        let s = ra.wrapping_add(offset as u32);
                        (bank as i64 + (s >> 16) as i64, (s & 0xffff) as i64)
                    }
                    LdcMode::Is | LdcMode::Isl => {
                        let b = bank as i64 + (ra >> 16) as i64;
                        (b, offset as i64 + (ra & 0xffff) as i64)
                    }
                }
            };
            let v = if mode == LdcMode::Isl && indexed && b > 13 { 0 } else { self.banks.ldc(b, a, n)? };
            let raw: Vec<u8> = v.to_le_bytes()[..n].to_vec();
            out[l] = extend(size, &raw);
        }
        let mut dst = *d;
        dst.n = size.regs();
        w.write_regs(dst, mask, &out);
        Ok(())
    }
}
