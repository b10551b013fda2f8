//! The SPA 5.0 calling convention as ptxas 11.8 implements it (`docs/abi.md` has the
//! evidence: `ptxas -arch=sm_50 [-c]` on probe modules, read with `cuobjdump -sass` and
//! `sass-ctrl.py`). One place for every fact lowering, allocation and the executors use.
//!
//! * `R1` is the stack pointer: a kernel starts with `MOV R1, c[0x0][0x20]`; a function
//!   with a frame moves it down on entry (`IADD32I R1, R1, -frame`) and back before `RET`.
//! * Parameters: 32-bit words in `R4..R15`, each parameter at the first free register
//!   aligned to its alignment in words (at most 4), earlier holes filled by later small
//!   parameters (`f(.b32 a, .b64 b, .b64 c, .b32 d)`: `a` R4, `b` R6:R7, `c` R8:R9, `d`
//!   R5); what does not fit goes on the stack, at the caller's `[R1 + offset]`, offsets
//!   in declaration order at the parameter's alignment.
//! * Return values: in the same registers from `R4`, up to 48 bytes (12 words). Larger
//!   ones go through memory ([`returns_in_memory`]): the caller passes the address of a
//!   buffer in its frame in `R4`, the parameters start at `R5`, the callee stores the
//!   value there (`STL [R4+off]`) and the caller loads it after the call.
//! * Callee-saved: `R2`, `R16..R31`, and from `R32` on every register whose number is 4..7
//!   modulo 8 (`R36..R39`, `R44..R47`, ...). The others, all predicates and the carry
//!   flag are caller-saved (clobbered by a call).

/// First parameter and return register.
pub const FIRST_ARG_REG: u8 = 4;
/// What a call in the private convention of our slow paths (`ir::FuncAbi::preserves`)
/// changes among the general registers: `R4..R7`, its arguments and results (at most two
/// f64 operands), which the caller's moves set anyway. The callee saves every other
/// register it writes; predicates and CC stay caller-saved.
pub const PRIVATE_CLOBBERED: std::ops::Range<u8> = 4..8;
/// Registers for parameters and return values: `R4..R15`.
pub const ARG_REGS: u8 = 12;
/// Largest return value passed in registers, in bytes (ptxas 11.8: a 64-byte return
/// value goes through memory, its address passed in `R4`).
pub const MAX_REG_RETURN: u32 = 4 * ARG_REGS as u32;

/// The register holding the address of the buffer a return value over
/// [`MAX_REG_RETURN`] bytes is stored to (ptxas 11.8 `-c`, a `.func` returning `.b8
/// r[64]`: the caller `MOV R4, R1` (buffer at the bottom of its frame), the callee `STL
/// [R4+0x20], R6`).
pub const RET_ADDRESS_REG: u8 = FIRST_ARG_REG;

/// Where one 32-bit word of a call's arguments or results is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AbiLoc {
    /// In this register.
    Reg(u8),
    /// On the stack at this byte offset from the caller's stack pointer.
    Stack(u32),
}

/// The bytes a caller lowers `R1` by around a call whose stack arguments take
/// `stack_bytes` (`place`'s second result): rounded up to 8, so that the callee's frame
/// and 64-bit slots stay 8-aligned. The callee finds argument byte `off` at its
/// incoming `R1 + off`; the caller stores it before lowering `R1`, at `[R1 + off -
/// outgoing_area(stack_bytes)]` (`lower::calls::realcall`, `docs/abi.md`).
pub fn outgoing_area(stack_bytes: u32) -> u32 {
    stack_bytes.div_ceil(8).saturating_mul(8)
}

/// The stack frame a function reports (EIATTR_FRAME_SIZE, and with it the callers'
/// EIATTR_MIN_STACK_SIZE): its own `frame` (local data and spills, what its prologue
/// lowers `R1` by) plus the largest [`outgoing_area`] of its calls, given by their
/// `stack_bytes`. The area is stack the function uses below its frame for as long as
/// a call runs, and the callee's frame lies below it. ptxas 11.8 `-c` counts it the
/// same way (a kernel with a 64-byte `.local` array calling a function with a 1 KiB
/// parameter: `IADD32I R1, R1, -0x440`, FRAME_SIZE 0x440; its callee reads byte 0x200 at
/// `[R1+0x220]` behind its own 0x20-byte frame), though it lowers `R1` once in the
/// prologue where ptx2sass lowers it around each call.
pub fn frame_with_outgoing(frame: u32, stack_bytes: impl IntoIterator<Item = u32>) -> u32 {
    let area = stack_bytes.into_iter().map(outgoing_area).max().unwrap_or(0);
    frame.saturating_add(area)
}

/// True for the registers a called function must preserve.
pub fn is_callee_saved(r: u8) -> bool {
    r == 2 || (16..32).contains(&r) || ((32..255).contains(&r) && r % 8 >= 4)
}

/// The callee-saved registers below `limit` (the register budget).
pub fn callee_saved(limit: u32) -> impl Iterator<Item = u8> {
    (0..limit.min(255) as u8).filter(|r| is_callee_saved(*r))
}

/// One parameter (or `.reg` return value) to place: its size and alignment in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamShape {
    /// Size in bytes (sub-word parameters take a whole word).
    pub size: u32,
    /// Alignment in bytes.
    pub align: u32,
}

impl ParamShape {
    /// Words the parameter occupies.
    pub fn words(&self) -> u32 {
        self.size.div_ceil(4).max(1)
    }
}

/// Places parameters (or return values, `from` the same registers) by the rules in the
/// module docs: per parameter, the location of each of its words, and the stack bytes
/// used. Parameters are placed whole: in registers (aligned, first fit) or on the stack.
pub fn place(params: &[ParamShape]) -> (Vec<Vec<AbiLoc>>, u32) {
    let mut free = [true; ARG_REGS as usize];
    let mut stack = 0u32;
    let mut out = vec![];
    for p in params {
        let n = p.words() as usize;
        let align = (p.align / 4).clamp(1, 4) as usize;
        let base = FIRST_ARG_REG as usize;
        let fit = (0..ARG_REGS as usize)
            .filter(|k| (base + k).is_multiple_of(align))
            .find(|&k| k + n <= ARG_REGS as usize && free[k..k + n].iter().all(|f| *f));
        match fit {
            Some(k) => {
                free[k..k + n].iter_mut().for_each(|f| *f = false);
                out.push((0..n).map(|j| AbiLoc::Reg((base + k + j) as u8)).collect());
            }
            None => {
                let a = p.align.max(4);
                stack = stack.div_ceil(a) * a;
                out.push((0..n as u32).map(|j| AbiLoc::Stack(stack + 4 * j)).collect());
                stack += 4 * n as u32;
            }
        }
    }
    (out, stack)
}

/// True when return values of these shapes go through memory: they do not fit the
/// registers. ptxas 11.8 `-c` returns a 48-byte `.param` struct in `R4..R15`, a 52-,
/// 64- or 100-byte one through a buffer (frames of the caller 0x38, 0x40, 0x68 bytes).
pub fn returns_in_memory(rets: &[ParamShape]) -> bool {
    place(rets).1 > 0
}

/// The layout of return values in their memory buffer: each one's byte offset (in
/// declaration order, each at its alignment), the buffer's size and alignment in bytes.
pub fn memory_return_layout(rets: &[ParamShape]) -> (Vec<u32>, u32, u32) {
    let mut end = 0u32;
    let mut align = 4u32;
    let mut offs = vec![];
    for r in rets {
        let a = r.align.clamp(4, 16);
        align = align.max(a);
        end = end.div_ceil(a) * a;
        offs.push(end);
        end += 4 * r.words();
    }
    (offs, end, align)
}

/// Places a call's parameters ([`place`]); when the return values go through memory
/// (`ret_address`), `R4` holds the buffer's address first and the parameters start at
/// `R5` (ptxas 11.8 `-c`, `e1(11 × .b32, .b64, .b32, .b32)` returning `.b8 r[64]`:
/// `a0..a10` R5..R15, the `.b64` at `[R1]`, the others at `[R1+0x8]`, `[R1+0xc]`).
/// Returns the address word's location (if any), each parameter's and the stack bytes.
pub fn place_params(params: &[ParamShape], ret_address: bool) -> (Option<AbiLoc>, Vec<Vec<AbiLoc>>, u32) {
    if !ret_address {
        let (locs, stack) = place(params);
        return (None, locs, stack);
    }
    let mut all = vec![ParamShape { size: 4, align: 4 }];
    all.extend_from_slice(params);
    let (mut locs, stack) = place(&all);
    let first = locs.remove(0);
    (Some(first[0]), locs, stack)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(size: u32, align: u32) -> ParamShape {
        ParamShape { size, align }
    }

    fn regs(v: &[AbiLoc]) -> Vec<u8> {
        v.iter().map(|l| if let AbiLoc::Reg(r) = l { *r } else { 0 }).collect()
    }

    /// The layouts ptxas 11.8 `-c` gives the probe functions of `docs/abi.md`.
    #[test]
    fn ptxas_layouts() {
        // e1(.b32 a, .b64 b, .b64 c, .b32 d): R4, R6:R7, R8:R9, R5.
        let (p, s) = place(&[shape(4, 4), shape(8, 8), shape(8, 8), shape(4, 4)]);
        assert_eq!(p.iter().map(|x| regs(x)).collect::<Vec<_>>(), [vec![4], vec![6, 7], vec![8, 9], vec![5]]);
        assert_eq!(s, 0);
        // e3(.b32 a, .align 16 .b8 s[16], .b32 d, .align 8 .b8 t[3]): R4, R8..R11, R5, R6.
        let (p, _) = place(&[shape(4, 4), shape(16, 16), shape(4, 4), shape(3, 8)]);
        assert_eq!(p.iter().map(|x| regs(x)).collect::<Vec<_>>(), [vec![4], vec![8, 9, 10, 11], vec![5], vec![6]]);
        // Eleven words, then .b64, .b32, .b32 (after the hidden return pointer in R4):
        // R5..R15, then the stack at 0, 8, 12.
        let mut ps = vec![shape(4, 4); 12];
        ps.extend([shape(8, 8), shape(4, 4), shape(4, 4)]);
        let (p, s) = place(&ps);
        assert_eq!(p[12], [AbiLoc::Stack(0), AbiLoc::Stack(4)]);
        assert_eq!(p[13], [AbiLoc::Stack(8)]);
        assert_eq!(p[14], [AbiLoc::Stack(12)]);
        assert_eq!(s, 16);
        // Twelve words then .b32 and .b64: stack 0 and 8.
        let mut ps = vec![shape(4, 4); 12];
        ps.extend([shape(4, 4), shape(8, 8)]);
        let (p, _) = place(&ps);
        assert_eq!(p[12], [AbiLoc::Stack(0)]);
        assert_eq!(p[13], [AbiLoc::Stack(8), AbiLoc::Stack(12)]);
    }

    /// ptxas 11.8 `-c`: the 64-byte return's address in R4, `e1`'s parameters after it.
    #[test]
    fn memory_returns() {
        assert!(!returns_in_memory(&[shape(48, 8)]));
        assert!(returns_in_memory(&[shape(52, 4)]) && returns_in_memory(&[shape(64, 8)]));
        let mut ps = vec![shape(4, 4); 11];
        ps.extend([shape(8, 8), shape(4, 4), shape(4, 4)]);
        let (r, p, s) = place_params(&ps, true);
        assert_eq!(r, Some(AbiLoc::Reg(4)));
        assert_eq!(regs(&p[0]), [5]);
        assert_eq!(regs(&p[10]), [15]);
        assert_eq!(p[11], [AbiLoc::Stack(0), AbiLoc::Stack(4)]);
        assert_eq!(p[12], [AbiLoc::Stack(8)]);
        assert_eq!(p[13], [AbiLoc::Stack(12)]);
        assert_eq!(s, 16);
        assert_eq!(memory_return_layout(&[shape(100, 4)]), (vec![0], 100, 4));
        assert_eq!(memory_return_layout(&[shape(4, 4), shape(8, 8), shape(64, 16)]), (vec![0, 8, 16], 80, 16));
    }

    #[test]
    fn callee_saved_set() {
        let cs: Vec<u8> = callee_saved(48).collect();
        assert_eq!(
            cs,
            [2, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 36, 37, 38, 39, 44, 45, 46, 47]
        );
        assert!(!is_callee_saved(1) && !is_callee_saved(4) && !is_callee_saved(15) && !is_callee_saved(32));
    }
}
