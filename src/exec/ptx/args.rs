//! Building a [`Launch`] from typed kernel arguments, for tests and the differential
//! harness: each pointer argument gets a fresh global buffer, parameters are placed by
//! [`param_layout`].
//!
//! A buffer given to a byte-array parameter (`.param .align N .b8 s[K]`) is passed by
//! value. Buffers are named `arg{k}` after the argument's index (`arg{k}.{j}` for the rows of a
//! [`Arg::Table`]) and placed from [`GLOBAL_BASE`] upward, each at the next multiple of
//! [`BUFFER_SPACING`] after the previous one, so that an access just past a buffer's end
//! is out of bounds rather than inside the next buffer.

// Arguments are user input (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::exec::{ExecError, GLOBAL_BASE, Launch, Memory, ParamSlot, param_layout};
use crate::ptx::ast::{FuncKind, Item, Module};

/// One kernel argument.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// A pointer (8 bytes) to a fresh global buffer holding these bytes.
    Buf(Vec<u8>),
    /// A pointer to a fresh buffer of 8-byte pointers, one per row, each to a fresh buffer
    /// holding that row's bytes.
    Table(Vec<Vec<u8>>),
    /// An integer, little-endian, truncated to the parameter's size.
    Int(i64),
    /// An `.f32` value.
    F32(f32),
    /// An `.f64` value.
    F64(f64),
    /// Raw bytes of the parameter (a structure passed by value, or any scalar's bytes);
    /// zero-padded to its size, an error when longer.
    Bytes(Vec<u8>),
}

/// Alignment and spacing of the buffers (bytes).
pub const BUFFER_SPACING: u64 = 1 << 20;

/// A launch of `kernel` (an `.entry` of `module`) on `grid` CTAs of `block` threads with
/// `args` (one per parameter), seed 0 and at most `step_limit` instructions.
pub fn launch(
    module: &Module,
    kernel: &str,
    grid: [u32; 3],
    block: [u32; 3],
    args: &[Arg],
    step_limit: u64,
) -> Result<Launch, ExecError> {
    let f = module
        .items
        .iter()
        .find_map(|i| match i {
            Item::Function(f) if f.name.name == kernel && f.kind == FuncKind::Entry => Some(f),
            _ => None,
        })
        .ok_or_else(|| ExecError::Launch(format!("no kernel named `{kernel}`")))?;
    let (slots, total) = param_layout(&f.params)?;
    let by_value: Vec<bool> = f.params.iter().map(|p| p.array.is_some()).collect();
    launch_with_layout(kernel, (&slots, &by_value, total), grid, block, args, step_limit)
}

/// [`launch`] for a kernel known only by its parameter layout (a SASS listing run without
/// its PTX): `slots` and their total size as [`param_layout`] gives them, and per slot
/// whether it is a byte array that receives a buffer by value.
pub fn launch_with_layout(
    kernel: &str,
    (slots, by_value_array, total): (&[ParamSlot], &[bool], u32),
    grid: [u32; 3],
    block: [u32; 3],
    args: &[Arg],
    step_limit: u64,
) -> Result<Launch, ExecError> {
    if slots.len() != args.len() {
        return Err(ExecError::Launch(format!("`{kernel}` takes {} arguments, not {}", slots.len(), args.len())));
    }
    let mut params = vec![0u8; total as usize];
    let mut global = Memory::new();
    let mut next = GLOBAL_BASE;
    let mut alloc = |name: String, bytes: Vec<u8>| -> Result<[u8; 8], ExecError> {
        let at = next;
        // Buffers are bounded by the byte budget of `spec`, far below 2^64 in all.
        let room = (bytes.len() as u64).div_ceil(BUFFER_SPACING).max(1).saturating_mul(BUFFER_SPACING);
        next = next.saturating_add(room);
        global.alloc(&name, at, bytes)?;
        Ok(at.to_le_bytes())
    };
    for (k, ((slot, arg), array)) in slots.iter().zip(args).zip(by_value_array).enumerate() {
        let bytes: Vec<u8> = match arg {
            // A byte-array parameter is a structure passed by value (PTX ISA 5.1.6.1): it
            // receives a buffer's bytes, not a pointer to them.
            Arg::Buf(b) if *array => b.clone(),
            Arg::Buf(b) => alloc(format!("arg{k}"), b.clone())?.to_vec(),
            Arg::Table(rows) => {
                let mut ptrs = vec![];
                for (j, r) in rows.iter().enumerate() {
                    ptrs.extend(alloc(format!("arg{k}.{j}"), r.clone())?);
                }
                alloc(format!("arg{k}"), ptrs)?.to_vec()
            }
            Arg::Int(v) => v.to_le_bytes().to_vec(),
            Arg::F32(v) => v.to_le_bytes().to_vec(),
            Arg::F64(v) => v.to_le_bytes().to_vec(),
            Arg::Bytes(b) => b.clone(),
        };
        let by_value = matches!(arg, Arg::Bytes(_)) || (*array && matches!(arg, Arg::Buf(_)));
        if by_value && bytes.len() > slot.size as usize {
            return Err(ExecError::Launch(format!(
                "argument {k}: {} bytes for parameter `{}` of {} bytes",
                bytes.len(),
                slot.name,
                slot.size
            )));
        }
        let (o, n) = (slot.offset as usize, slot.size as usize);
        let m = n.min(bytes.len());
        // The slot lies within the `total` bytes of `params` (param_layout).
        let (Some(dst), Some(src)) = (params.get_mut(o..o.saturating_add(m)), bytes.get(..m)) else {
            return Err(ExecError::Launch(format!("parameter `{}` lies outside the parameter space", slot.name)));
        };
        dst.copy_from_slice(src);
    }
    Ok(Launch { step_limit, ..Launch::new(kernel, grid, block, params, global) })
}

/// The bytes of the allocation `name` of `memory`, if any.
pub fn buffer<'m>(memory: &'m Memory, name: &str) -> Option<&'m [u8]> {
    memory.regions().find(|(n, _, _)| *n == name).map(|(_, _, b)| b)
}
