//! State spaces and generic addressing (PTX ISA 5.1 "State Spaces", 5.1.9 "Generic
//! Addressing", 9.7.9.19 cvta).
//!
//! Addresses in each space:
//! * `.global`: the launch's [`Memory`] (buffers at or above [`crate::exec::GLOBAL_BASE`]);
//! * `.shared`: `0 .. shared size` within the CTA's shared memory;
//! * `.local`: `0 .. top of stack` within the thread's local memory, a stack of call frames
//!   (the kernel's frame first);
//! * `.const`: `0 .. size` within the module's constant bank;
//! * `.param`: `0 .. size` within the current call frame's parameter buffer (a kernel's
//!   parameters first, laid out by [`crate::exec::param_layout`]).
//!
//! A generic address in `[SHARED_WINDOW, +WINDOW_SIZE)` is the shared address plus
//! [`SHARED_WINDOW`], likewise for `.local` and `.const`; any other generic address is a
//! global address (`cvta.global` is the identity). All windows lie below 4 GiB, so a
//! 32-bit `cvta` of a shared or local address keeps its generic meaning.
//!
//! Every access must be aligned to its size (a vector access to its total size), else
//! [`ExecError::Misaligned`]; an access outside the space is [`ExecError::OutOfBounds`]
//! (for a generic access: with the generic address and space `generic`).

// Addresses come from the executed program (issue 20, docs/fuzzing.md "No-panic discipline"):
// an access outside its space is an error, never a panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::program::Space;
use crate::exec::{ExecError, Memory};

/// Start of the generic window onto `.shared`.
pub const SHARED_WINDOW: u64 = 0x1000_0000;
/// Start of the generic window onto `.local`.
pub const LOCAL_WINDOW: u64 = 0x2000_0000;
/// Start of the generic window onto `.const`.
pub const CONST_WINDOW: u64 = 0x3000_0000;
/// Size of each window in bytes.
pub const WINDOW_SIZE: u64 = 0x1000_0000;
/// Largest thread stack in bytes (the generic local window): deeper calls fail. The
/// launch's memory limit, shared among a CTA's threads, usually bounds it first.
pub const LOCAL_LIMIT: usize = WINDOW_SIZE as usize;

/// The window base of a space (`None` for global, param and generic).
pub fn window(space: Space) -> Option<u64> {
    match space {
        Space::Shared => Some(SHARED_WINDOW),
        Space::Local => Some(LOCAL_WINDOW),
        Space::Const => Some(CONST_WINDOW),
        _ => None,
    }
}

/// The space and space address a generic address refers to.
pub fn resolve(generic: u64) -> (Space, u64) {
    for (s, w) in [(Space::Shared, SHARED_WINDOW), (Space::Local, LOCAL_WINDOW), (Space::Const, CONST_WINDOW)] {
        if let Some(off) = generic.checked_sub(w).filter(|&o| o < WINDOW_SIZE) {
            return (s, off);
        }
    }
    (Space::Global, generic)
}

/// `cvta.space` (to generic) of a space address.
pub fn to_generic(space: Space, addr: u64) -> u64 {
    window(space).map_or(addr, |w| addr.wrapping_add(w))
}

/// `cvta.to.space` of a generic address: the space address (garbage, failing any later
/// access, when it lies outside the space's window).
pub fn from_generic(space: Space, generic: u64) -> u64 {
    window(space).map_or(generic, |w| generic.wrapping_sub(w))
}

/// The memories one thread can reach while executing one instruction.
pub struct Spaces<'a> {
    /// Global memory.
    pub global: &'a mut Memory,
    /// The CTA's shared memory.
    pub shared: &'a mut [u8],
    /// The thread's local stack.
    pub local: &'a mut [u8],
    /// The current frame's parameter buffer.
    pub param: &'a mut [u8],
    /// The constant bank.
    pub consts: &'a [u8],
}

/// The `len` bytes at `addr` of `bytes`, or the out-of-bounds error of `space`.
fn slice(bytes: &[u8], space: Space, addr: u64, len: u64) -> Result<&[u8], ExecError> {
    range(addr, len).and_then(|r| bytes.get(r)).ok_or(ExecError::OutOfBounds { space: space.name(), addr, len })
}

/// [`slice`] for writing.
fn slice_mut(bytes: &mut [u8], space: Space, addr: u64, len: u64) -> Result<&mut [u8], ExecError> {
    range(addr, len).and_then(|r| bytes.get_mut(r)).ok_or(ExecError::OutOfBounds { space: space.name(), addr, len })
}

/// `addr..addr + len` as indices (`None` if it does not fit).
fn range(addr: u64, len: u64) -> Option<std::ops::Range<usize>> {
    let start = usize::try_from(addr).ok()?;
    Some(start..start.checked_add(usize::try_from(len).ok()?)?)
}

impl Spaces<'_> {
    fn check(space: Space, addr: u64, len: u64) -> Result<(), ExecError> {
        if len > 0 && !addr.is_multiple_of(len) {
            return Err(ExecError::Misaligned { space: space.name(), addr, len });
        }
        Ok(())
    }

    /// Reads `len` bytes at `addr` in `space` (alignment `len`) into `out`.
    pub fn read(&self, space: Space, addr: u64, out: &mut [u8]) -> Result<(), ExecError> {
        let len = out.len() as u64;
        Self::check(space, addr, len)?;
        let (s, a) = if space == Space::Generic { resolve(addr) } else { (space, addr) };
        let r = match s {
            Space::Global => self.global.read(s.name(), a, len).map(|b| out.copy_from_slice(b)),
            Space::Shared => slice(self.shared, s, a, len).map(|b| out.copy_from_slice(b)),
            Space::Local => slice(self.local, s, a, len).map(|b| out.copy_from_slice(b)),
            Space::Const => slice(self.consts, s, a, len).map(|b| out.copy_from_slice(b)),
            Space::Param => slice(self.param, s, a, len).map(|b| out.copy_from_slice(b)),
            Space::Generic => unreachable!("resolved"),
        };
        r.map_err(|e| generic_error(e, space, addr, len))
    }

    /// Writes `data` at `addr` in `space` (alignment `data.len()`).
    pub fn write(&mut self, space: Space, addr: u64, data: &[u8]) -> Result<(), ExecError> {
        let len = data.len() as u64;
        Self::check(space, addr, len)?;
        let (s, a) = if space == Space::Generic { resolve(addr) } else { (space, addr) };
        let r = match s {
            Space::Global => self.global.write(s.name(), a, data),
            Space::Shared => slice_mut(self.shared, s, a, len).map(|b| b.copy_from_slice(data)),
            Space::Local => slice_mut(self.local, s, a, len).map(|b| b.copy_from_slice(data)),
            Space::Param => slice_mut(self.param, s, a, len).map(|b| b.copy_from_slice(data)),
            Space::Const => {
                return Err(ExecError::Unsupported(format!("a store to the .const space (address 0x{a:x})")));
            }
            Space::Generic => unreachable!("resolved"),
        };
        r.map_err(|e| generic_error(e, space, addr, len))
    }
}

fn generic_error(e: ExecError, space: Space, addr: u64, len: u64) -> ExecError {
    match e {
        ExecError::OutOfBounds { .. } if space == Space::Generic => {
            ExecError::OutOfBounds { space: Space::Generic.name(), addr, len }
        }
        e => e,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    #[test]
    fn windows_and_bounds() {
        let mut g = Memory::new();
        g.alloc("a", crate::exec::GLOBAL_BASE, vec![0; 16]).unwrap();
        let (mut sh, mut lo, mut pa) = (vec![0u8; 8], vec![0u8; 8], vec![0u8; 8]);
        let mut sp = Spaces { global: &mut g, shared: &mut sh, local: &mut lo, param: &mut pa, consts: &[1, 2, 3, 4] };
        sp.write(Space::Generic, to_generic(Space::Shared, 4), &[9, 9, 9, 9]).unwrap();
        let mut out = [0u8; 4];
        sp.read(Space::Shared, 4, &mut out).unwrap();
        assert_eq!(out, [9; 4]);
        sp.read(Space::Generic, CONST_WINDOW, &mut out).unwrap();
        assert_eq!(out, [1, 2, 3, 4]);
        assert!(matches!(sp.read(Space::Shared, 8, &mut out), Err(ExecError::OutOfBounds { space: "shared", .. })));
        assert!(matches!(sp.read(Space::Shared, 2, &mut out), Err(ExecError::Misaligned { .. })));
        assert!(matches!(
            sp.read(Space::Generic, LOCAL_WINDOW + 8, &mut out),
            Err(ExecError::OutOfBounds { space: "generic", .. })
        ));
        sp.write(Space::Generic, crate::exec::GLOBAL_BASE + 12, &[5, 6, 7, 8]).unwrap();
        assert!(sp.write(Space::Const, 0, &[0]).is_err());
        assert_eq!(resolve(to_generic(Space::Shared, 3)), (Space::Shared, 3));
        assert_eq!(from_generic(Space::Local, to_generic(Space::Local, 5)), 5);
    }
}
