//! Register allocation: SSA IR on virtual registers → IR on physical registers.
//!
//! regalloc2 has three register classes of at most 64 registers each, no aliasing between
//! classes and no alignment constraints (regalloc2 docs; issue #247). SPA 5.0 needs 64-bit
//! values in even-aligned pairs and 128-bit values in quad-aligned quads out of one file
//! of 255 registers. The design:
//!
//! 1. regalloc2 allocates general-purpose values with one class per width (`Int` = 32,
//!    `Float` = 64, `Vector` = 128 bits). Its registers are abstract *slots*; it splits,
//!    spills (to local memory, `STL`/`LDL` off `R1`) and destroys SSA (moves on edges).
//! 2. A second regalloc2 run allocates predicates to P0..P6.
//! 3. `pack` places the slots in the physical file by interference-graph coloring with
//!    alignment: slots of different widths that are never live together share registers,
//!    and `join`/`copy` operands are coalesced where interference allows.
//! 4. `expand` turns the remaining `copy`/`join` pseudo-ops into `MOV`s (parallel moves).
//!
//! If packing cannot fit the slots in the register budget, the class sizes shrink and
//! regalloc2 runs again (spilling more); a static partition of the file is the guaranteed
//! fallback.

pub mod adapter;
pub mod expand;
pub mod pack;

use crate::ir::{Function, VRegKind};
use crate::sass::instr::{Dst, Instr, PT, Reg, RegRef, Src, SrcKind};
use crate::sass::op::{BoolOp, MemMods, MemSize, Op};
use adapter::{Adapter, File, OperandSite, class_width};
use regalloc2::{Allocation, Edit, MachineEnv, PReg, PRegSet, ProgPoint, RegClass, RegallocOptions};
use std::collections::HashMap;

/// Why allocation failed. Every variant is a limit of ptx2sass or a bug in it, not a
/// problem of the input program.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// regalloc2 refused the function (malformed input from lowering).
    #[error("regalloc2 failed: {0}")]
    Regalloc2(String),
    /// regalloc2's checker found the allocation wrong.
    #[error("regalloc2's checker rejected the allocation: {0}")]
    Checker(String),
    /// More than P0..P6 would be needed at once.
    #[error("more than 7 predicates are live at once; predicate spilling is not implemented yet")]
    PredicatePressure,
    /// The allocation could not be turned into instructions.
    #[error("unexpected allocation: {0}")]
    Rewrite(&'static str),
    /// The slots did not fit the register file even as a static partition.
    #[error("register packing failed: {0}")]
    Packing(String),
}

/// Allocation options.
#[derive(Clone, Debug)]
pub struct Options {
    /// Largest register count allowed (`--maxrregcount`, like ptxas; default 255 = all of
    /// R0..R254).
    pub max_regs: u32,
    /// Run regalloc2's checker on every allocation.
    pub verify: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { max_regs: 255, verify: false }
    }
}

/// What allocation produced, for `-v` statistics.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Registers used (highest register + 1, R1 included when there is a frame).
    pub regs: u32,
    /// Spill slots' bytes.
    pub spill_bytes: u32,
    /// Number of spill stores / loads inserted.
    pub spill_stores: u32,
    /// Spill loads.
    pub spill_loads: u32,
}

/// Index of a GPR slot in the packing numbering: `Int` slots 0..64, `Float` 64..128,
/// `Vector` 128..192.
pub fn slot_id(class: RegClass, hw: usize) -> u32 {
    let base = match class {
        RegClass::Int => 0,
        RegClass::Float => 64,
        RegClass::Vector => 128,
    };
    base + hw as u32
}

fn env(sizes: [usize; 3], file: File) -> MachineEnv {
    let mut pref = [PRegSet::empty(); 3];
    let classes = [RegClass::Int, RegClass::Float, RegClass::Vector];
    for (c, class) in classes.iter().enumerate() {
        let n = match file {
            File::Gpr => sizes[c],
            File::Pred => {
                if c == 0 {
                    7
                } else {
                    0
                }
            }
        };
        for i in 0..n.min(64) {
            pref[c] = pref[c].with(PReg::new(i, *class));
        }
    }
    MachineEnv {
        preferred_regs_by_class: pref,
        non_preferred_regs_by_class: [PRegSet::empty(); 3],
        scratch_by_class: [None; 3],
        fixed_stack_slots: vec![],
    }
}

fn run_ra(a: &Adapter, env: &MachineEnv, verify: bool) -> Result<regalloc2::Output, Error> {
    let opts = RegallocOptions { verbose_log: false, validate_ssa: verify, algorithm: regalloc2::Algorithm::Ion };
    let out = regalloc2::run(a, env, &opts).map_err(|e| Error::Regalloc2(format!("{e:?}")))?;
    if verify {
        let mut checker = regalloc2::checker::Checker::new(a, env);
        checker.prepare(&out);
        checker.run().map_err(|e| Error::Checker(format!("{e:?}")))?;
    }
    Ok(out)
}

/// Allocates registers of `f` in place; returns statistics.
pub fn allocate(f: &mut Function, opts: &Options) -> Result<Stats, Error> {
    let limit = opts.max_regs.clamp(16, 255);
    // Predicates first (independent of GPR sizes).
    let pred_view = Adapter::new(f, File::Pred);
    let pred_out = run_ra(&pred_view, &env([0; 3], File::Pred), opts.verify)?;
    if pred_out.num_spillslots > 0 {
        return Err(Error::PredicatePressure);
    }
    let mut sizes = [64usize, 64, 16];
    let avail = limit as usize - 1; // R1 may be needed for the frame
    sizes[0] = sizes[0].min(avail);
    sizes[1] = sizes[1].min(avail / 2);
    sizes[2] = sizes[2].min(avail / 4);
    loop {
        let gpr_view = Adapter::new(f, File::Gpr);
        let out = run_ra(&gpr_view, &env(sizes, File::Gpr), opts.verify)?;
        let mut g = rewrite(f, &gpr_view, &out, &pred_view, &pred_out)?;
        let guaranteed = sizes[0] + 2 * sizes[1] + 4 * sizes[2] + 4 <= avail;
        let frame = pack::needs_frame(&g);
        match pack::pack(&mut g, limit, guaranteed, frame) {
            Ok(()) => {
                let stats = expand::finish(&mut g, out.num_spillslots, frame);
                *f = g;
                return Ok(stats);
            }
            Err(_) if !guaranteed => {
                // Shrink every class by a quarter and try again (more spilling).
                for s in sizes.iter_mut() {
                    *s = (*s * 3 / 4).max(1);
                }
            }
            Err(e) => return Err(Error::Packing(e)),
        }
    }
}

/// The regalloc2 allocation of one operand as an IR register (slot number or predicate).
fn alloc_reg(a: Allocation, file: File) -> Option<Reg> {
    let p = a.as_reg()?;
    Some(match file {
        File::Gpr => Reg::V(slot_id(p.class(), p.hw_enc())),
        File::Pred => Reg::P(p.hw_enc() as u8),
    })
}

fn set_site(i: &mut Instr, site: OperandSite, r: Reg) {
    match site {
        OperandSite::Guard => {
            if let Some(g) = &mut i.guard {
                g.pred = r;
            }
        }
        OperandSite::Src(k) => {
            let s = &mut i.srcs[k];
            if let SrcKind::Pred(p) = &mut s.kind {
                *p = r;
            } else if let Some(rr) = s.gprs_mut() {
                rr.reg = r;
            }
        }
        OperandSite::Dst(k) => match &mut i.dsts[k] {
            Dst::Reg(rr) => rr.reg = r,
            Dst::Pred(p) => *p = r,
        },
    }
}

/// Spill-slot placement: 4-byte units above the function's `.local` data.
fn spill_offset(f: &Function, slot: usize) -> i32 {
    (f.local_bytes.div_ceil(16) * 16) as i32 + 4 * slot as i32
}

/// Turns an allocation edit into instructions.
fn edit_instrs(f: &Function, from: Allocation, to: Allocation, file: File, out: &mut Vec<Instr>) -> Result<(), Error> {
    match file {
        File::Pred => {
            let (Some(a), Some(b)) = (alloc_reg(from, file), alloc_reg(to, file)) else {
                return Err(Error::PredicatePressure);
            };
            out.push(Instr::new(
                Op::Psetp { bop0: BoolOp::And, bop1: BoolOp::And },
                vec![Dst::Pred(b), Dst::Pred(PT)],
                vec![Src::pred(a, false), Src::pt(), Src::pt()],
            ));
        }
        File::Gpr => {
            let class = from
                .as_reg()
                .map(|p| p.class())
                .or(to.as_reg().map(|p| p.class()))
                .ok_or(Error::Rewrite("stack-to-stack move"))?;
            let w = class_width(class);
            let size = match w {
                1 => MemSize::B32,
                2 => MemSize::B64,
                _ => MemSize::B128,
            };
            let frame = RegRef::new(Reg::R(1), 1);
            match (alloc_reg(from, file), alloc_reg(to, file)) {
                (Some(a), Some(b)) => {
                    out.push(Instr::new(Op::Copy, vec![Dst::reg(b, w)], vec![Src::reg(RegRef::new(a, w))]))
                }
                (None, Some(b)) => {
                    let slot = from.as_stack().ok_or(Error::Rewrite("bad spill source"))?.index();
                    out.push(Instr::new(
                        Op::Ldl(MemMods::new(size, false)),
                        vec![Dst::reg(b, w)],
                        vec![Src::addr(frame, spill_offset(f, slot))],
                    ));
                }
                (Some(a), None) => {
                    let slot = to.as_stack().ok_or(Error::Rewrite("bad spill target"))?.index();
                    out.push(Instr::new(
                        Op::Stl(MemMods::new(size, false)),
                        vec![],
                        vec![Src::addr(frame, spill_offset(f, slot)), Src::reg(RegRef::new(a, w))],
                    ));
                }
                (None, None) => return Err(Error::Rewrite("stack-to-stack move")),
            }
        }
    }
    Ok(())
}

/// Applies both allocations: operands become slot numbers (GPRs) or P0..P6, edits become
/// copies and spill code, SSA block parameters disappear.
fn rewrite(
    f: &Function,
    gv: &Adapter,
    go: &regalloc2::Output,
    pv: &Adapter,
    po: &regalloc2::Output,
) -> Result<Function, Error> {
    let mut g = f.clone();
    g.vregs = (0..192)
        .map(|k| {
            VRegKind::Gpr(if k < 64 {
                1
            } else if k < 128 {
                2
            } else {
                4
            })
        })
        .collect();
    g.ssa = false;
    let mut edits: HashMap<ProgPoint, Vec<(Edit, File)>> = HashMap::new();
    for (pt, e) in &go.edits {
        edits.entry(*pt).or_default().push((e.clone(), File::Gpr));
    }
    for (pt, e) in &po.edits {
        edits.entry(*pt).or_default().push((e.clone(), File::Pred));
    }
    for (bi, &b) in gv.blocks.iter().enumerate() {
        let range = regalloc2::Function::block_insns(gv, regalloc2::Block::new(bi));
        let mut instrs = vec![];
        let mut origins = vec![];
        for ii in range.iter() {
            let idx = ii.index();
            let origin = f.cfg[b].origins[gv.insts[idx].1];
            if let Some(es) = edits.get(&ProgPoint::before(ii)) {
                for (e, file) in es {
                    let Edit::Move { from, to } = e;
                    let n0 = instrs.len();
                    edit_instrs(f, *from, *to, *file, &mut instrs)?;
                    origins.extend(std::iter::repeat_n(origin, instrs.len() - n0));
                }
            }
            let mut ins = gv.instr(idx).clone();
            for (k, site) in gv.sites[idx].iter().enumerate() {
                let r = alloc_reg(go.inst_allocs(ii)[k], File::Gpr)
                    .ok_or(Error::Rewrite("a register operand was given a stack slot"))?;
                set_site(&mut ins, *site, r);
            }
            for (k, site) in pv.sites[idx].iter().enumerate() {
                let r = alloc_reg(po.inst_allocs(ii)[k], File::Pred)
                    .ok_or(Error::Rewrite("a predicate operand was given a stack slot"))?;
                set_site(&mut ins, *site, r);
            }
            instrs.push(ins);
            origins.push(origin);
            if let Some(es) = edits.get(&ProgPoint::after(ii)) {
                // Edits after a terminator cannot happen (regalloc2 guarantees it).
                for (e, file) in es {
                    let Edit::Move { from, to } = e;
                    let n0 = instrs.len();
                    edit_instrs(f, *from, *to, *file, &mut instrs)?;
                    origins.extend(std::iter::repeat_n(origin, instrs.len() - n0));
                }
            }
        }
        let blk = &mut g.cfg[b];
        blk.instrs = instrs;
        blk.origins = origins;
        blk.params.clear();
    }
    for e in g.cfg.edge_indices().collect::<Vec<_>>() {
        g.cfg[e].args.clear();
    }
    g.spill_bytes = 4 * go.num_spillslots as u32;
    Ok(g)
}
