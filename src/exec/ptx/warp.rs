//! Warp-collective instructions: `shfl{.sync}` (PTX ISA 9.7.8.6), `vote{.sync}` (9.7.13.8)
//! and `activemask` (9.7.13.12).
//!
//! The scheduler ([`super::run`]) executes such an instruction once for the group of lanes
//! of a warp that wait at it (every lane that can still come has come): those lanes (with
//! a true guard) are the active lanes. With `.sync`, every non-exited lane of each active
//! lane's membermask must be active too.
//! Reading a value from a lane that is not active (`shfl` with an in-range source lane that
//! did not execute the instruction) is undefined in PTX and reported as
//! [`ExecError::Unsupported`]; so is an executing lane missing from its own `membermask`.
//! `vote` reduces over the active lanes named in each lane's `membermask`.

// No panicking shortcuts in the executors (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::compile::FnCx;
use super::program::{ShflMode, Src, VoteMode, WarpOp};
use super::thread::{Env, State, Thread};
use crate::exec::ExecError;
use crate::ptx::ast::{Instruction, Operand};
use crate::ptx::types::ScalarType;

/// Decodes `shfl`, `vote` or `activemask` (`words`: the modifiers).
pub(super) fn decode(fx: &FnCx, i: &Instruction, name: &str, words: &[&str]) -> Result<WarpOp, String> {
    let has = |w: &str| words.contains(&w);
    let ops = &i.operands;
    let op = |k: usize| ops.get(k).ok_or_else(|| format!("missing operand {}", k.saturating_add(1)));
    let sync = has(".sync");
    match name {
        "shfl" => {
            let mode =
                [(".up", ShflMode::Up), (".down", ShflMode::Down), (".bfly", ShflMode::Bfly), (".idx", ShflMode::Idx)]
                    .into_iter()
                    .find(|(w, _)| has(w))
                    .ok_or("shfl without a mode")?
                    .1;
            let (dst, pred) = match op(0)? {
                Operand::PredPair(d, p, _) => (fx.reg(d, None)?, fx.reg(p, None)?),
                d => (fx.dst(d)?, None),
            };
            let u = ScalarType::U32;
            let mask = if sync { Some(fx.src(op(4)?, u)?) } else { None };
            Ok(WarpOp::Shfl {
                mode,
                dst,
                pred,
                a: fx.src(op(1)?, u)?,
                b: fx.src(op(2)?, u)?,
                c: fx.src(op(3)?, u)?,
                mask,
            })
        }
        "vote" => {
            let mode = [
                (".all", VoteMode::All),
                (".any", VoteMode::Any),
                (".uni", VoteMode::Uni),
                (".ballot", VoteMode::Ballot),
            ]
            .into_iter()
            .find(|(w, _)| has(w))
            .ok_or("vote without a mode")?
            .1;
            let mask = if sync { Some(fx.src(op(2)?, ScalarType::U32)?) } else { None };
            Ok(WarpOp::Vote { mode, dst: fx.dst(op(0)?)?, a: fx.src(op(1)?, ScalarType::Pred)?, mask })
        }
        _ => Ok(WarpOp::Activemask(fx.dst(op(0)?)?)),
    }
}

/// Executes `w` for the lanes `lanes` (indices into `threads`, all at the same program
/// counter); `guard` is the instruction's guard. Advances their program counters.
pub(super) fn exec(
    w: &WarpOp,
    guard: Option<(u32, bool)>,
    threads: &mut [Thread],
    lanes: &[usize],
    env: &Env,
) -> Result<(), ExecError> {
    // The group's threads with their indices into `threads` (the scheduler's lanes are
    // indices of the CTA's threads).
    let group: Vec<(usize, &Thread)> = lanes.iter().filter_map(|&l| Some((l, threads.get(l)?))).collect();
    let active: Vec<(usize, &Thread)> = group
        .iter()
        .copied()
        .filter(|(_, t)| guard.is_none_or(|(slot, neg)| (t.read(env, Src::Reg(slot)) & 1 != 0) != neg))
        .collect();
    let bit = |t: &Thread| 1u32.checked_shl(t.lane).unwrap_or(0);
    let active_mask = active.iter().fold(0u32, |m, (_, t)| m | bit(t));
    let undefined = |what: String| ExecError::Unsupported(format!("undefined warp-collective use: {what}"));
    // The warp's threads that have not exited (a partial last warp has fewer than 32).
    let live = group.first().map_or(0, |(_, t0)| {
        let warp = t0.warp;
        threads.iter().filter(|t| t.warp == warp && t.state != State::Exited).fold(0u32, |m, t| m | bit(t))
    });
    let mask_of = |t: &Thread, m: &Option<Src>| -> Result<u32, ExecError> {
        let Some(src) = m else { return Ok(u32::MAX) };
        let m = t.read(env, *src) as u32;
        if m & bit(t) == 0 {
            return Err(undefined(format!("lane {} is not in its membermask {m:#x}", t.lane)));
        }
        // `.sync`: every non-exited thread of the membermask executes the instruction
        // together with this one (PTX ISA 9.7.8.6, 9.7.13.8).
        let missing = m & live & !active_mask;
        if missing != 0 {
            return Err(undefined(format!(
                "lanes {missing:#x} of lane {}'s membermask {m:#x} did not execute it with it",
                t.lane
            )));
        }
        Ok(m)
    };
    let mut results: Vec<(usize, u64, bool)> = vec![];
    match w {
        WarpOp::Shfl { mode, a, b, c, mask, .. } => {
            let value = |lane: u32| active.iter().find(|(_, t)| t.lane == lane).map(|(_, t)| t.read(env, *a));
            for &(l, t) in &active {
                mask_of(t, mask)?;
                let (lane, b, c) = (t.lane, t.read(env, *b) as u32 & 31, t.read(env, *c) as u32);
                let seg = (c >> 8) & 31;
                let max_lane = (lane & seg) | (c & 31 & !seg);
                let min_lane = lane & seg;
                // Lanes and `b` are below 32 (PTX ISA 9.7.8.6 shfl: "b ... within [0, 31]"),
                // so `lane + b` cannot wrap.
                let (j, ok) = match mode {
                    ShflMode::Up => (lane.wrapping_sub(b), lane.checked_sub(b).is_some_and(|j| j >= max_lane)),
                    ShflMode::Down => (lane.wrapping_add(b), lane.wrapping_add(b) <= max_lane),
                    ShflMode::Bfly => (lane ^ b, (lane ^ b) <= max_lane),
                    ShflMode::Idx => (min_lane | (b & !seg), (min_lane | (b & !seg)) <= max_lane),
                };
                let src = if ok { j } else { lane };
                let v =
                    value(src).ok_or_else(|| undefined(format!("shfl in lane {lane} reads inactive lane {src}")))?;
                results.push((l, v, ok));
            }
        }
        WarpOp::Vote { mode, a, mask, .. } => {
            for &(l, t) in &active {
                let m = mask_of(t, mask)? & active_mask;
                let votes: Vec<bool> =
                    active.iter().filter(|(_, k)| m & bit(k) != 0).map(|(_, k)| k.read(env, *a) & 1 != 0).collect();
                let v = match mode {
                    VoteMode::All => votes.iter().all(|x| *x) as u64,
                    VoteMode::Any => votes.iter().any(|x| *x) as u64,
                    VoteMode::Uni => votes.windows(2).all(|p| p.first() == p.last()) as u64,
                    VoteMode::Ballot => active
                        .iter()
                        .filter(|(_, k)| m & bit(k) != 0 && k.read(env, *a) & 1 != 0)
                        .fold(0u64, |acc, (_, k)| acc | bit(k) as u64),
                };
                results.push((l, v, false));
            }
        }
        WarpOp::Activemask(_) => active.iter().for_each(|&(l, _)| results.push((l, active_mask as u64, false))),
    }
    for (l, v, p) in results {
        let Some(t) = threads.get_mut(l) else { continue };
        match w {
            WarpOp::Shfl { dst, pred, .. } => {
                dst.inspect(|d| t.write_raw(*d, v));
                pred.inspect(|d| t.write_raw(*d, p as u64));
            }
            WarpOp::Vote { dst, .. } | WarpOp::Activemask(dst) => {
                dst.inspect(|d| t.write_raw(*d, v));
            }
        }
    }
    for &l in lanes {
        if let Some(t) = threads.get_mut(l) {
            t.pc = t.pc.saturating_add(1);
        }
    }
    Ok(())
}
