//! How many registers are occupied at each instruction of a final SASS listing: the
//! explorer's live-register strip. The count is the one `nvdisasm --print-life-ranges`
//! (`-plr -lrm count`, CUDA 11.8) prints in its `#` columns: at instruction `k`, the
//! general-purpose registers (and, separately, the predicates) that hold a value `k` or a
//! later instruction reads (live before `k`), plus those `k` writes (a result nobody
//! reads still takes its register), among the registers written on some path from the
//! function's entry. nvdisasm 11.8 on ptxas 11.8's `vector_add`: `XMAD.MRG R3, R0, ..`
//! counts 4 (R0 read, R1, R2 live, R3 written), `ISETP.GE.AND P0, PT, R0, ..` counts 2
//! GPRs and 1 predicate, and `R1`, the stack pointer (`docs/abi.md`), stays counted from
//! `MOV R1, c[0x0][0x20]` to `EXIT` although nothing reads it; so here too, in a function
//! that sets the stack pointer up that way, `R1` counts wherever it has been written
//! (elsewhere R1 is an ordinary register: ptx2sass allocates it in kernels without a
//! frame). Hand-checked counts are in `tests/explore_live.rs`.
//!
//! The analysis works on the listing as text ([`crate::sass::text`]) with the hazard
//! checker's table of what each opcode reads and writes ([`crate::sched::effects`]), so it
//! runs on any listing, ptxas's included. Control flow:
//! * `BRA` goes to its target (and falls through when guarded); `EXIT`/`RET` end the path;
//! * `SYNC`/`BRK` go to the target of the innermost `SSY`/`PBK` on the reconvergence
//!   stack, found by one forward walk that carries the stack; where paths meet with
//!   different stacks, or no entry is known, they go to every `SSY`/`PBK` target of the
//!   function (as the hazard checker does when it cannot tell);
//! * calls (`CAL`, `JCAL`, `JMX`) fall through; they read what the callee reads before
//!   writing it (its live registers at entry, when the callee is in the listing) and
//!   clobber the caller-saved registers (`docs/abi.md`: `R0`, `R3..R15`, from `R32` every
//!   register whose number is 0..3 modulo 8, every predicate; return values come back in
//!   them).
//!
//! Cost: liveness (backward) and reaching writes (forward) are iterated over the
//! instructions in address order until they settle, each pass linear in the function,
//! the number of passes bounded by the loop nesting depth plus two; sets are fixed-size
//! bit sets of the 264 register units.

use crate::sass::text::{Target, TextFunction};
use crate::sched::effects::{CC, Flow, PRED_BASE, Unit, effects};
use std::collections::HashMap;

/// The registers occupied at one instruction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Live {
    /// General-purpose registers (`R0..R254`).
    pub gprs: u16,
    /// Predicates (`P0..P6`).
    pub preds: u8,
}

/// A set of register units ([`crate::sched::effects::Unit`]: 0..=254 GPRs, 256..=262
/// predicates, 263 the carry flag).
type Set = [u64; 5];

fn add(s: &mut Set, u: Unit) {
    s[u as usize / 64] |= 1 << (u % 64);
}

fn has(s: &Set, u: Unit) -> bool {
    s[u as usize / 64] >> (u % 64) & 1 == 1
}

fn or(a: &Set, b: &Set) -> Set {
    std::array::from_fn(|k| a[k] | b[k])
}

fn and(a: &Set, b: &Set) -> Set {
    std::array::from_fn(|k| a[k] & b[k])
}

fn minus(a: &Set, b: &Set) -> Set {
    std::array::from_fn(|k| a[k] & !b[k])
}

fn of(units: &[Unit]) -> Set {
    let mut s = [0; 5];
    for &u in units {
        add(&mut s, u);
    }
    s
}

/// The stack pointer.
const R1: Unit = 1;

/// What a call may overwrite (`docs/abi.md`, "Caller-saved"): `R0`, `R3..R15`, from `R32`
/// every register whose number is 0..3 modulo 8, every predicate and the carry flag.
fn caller_saved() -> Set {
    let mut s = [0; 5];
    for r in (0..255u16).filter(|&r| r == 0 || (3..16).contains(&r) || (r >= 32 && r % 8 < 4)) {
        add(&mut s, r);
    }
    for p in PRED_BASE..=CC {
        add(&mut s, p);
    }
    s
}

/// One instruction as the analysis sees it.
struct Node {
    reads: Set,
    writes: Set,
    /// Writes that always happen (none when the instruction is guarded).
    kills: Set,
    flow: Flow,
    /// The resolved target of a `BRA`, `SSY`, `PBK` (index in the function), or the
    /// callee of a `CAL` (function index).
    target: Option<usize>,
    guarded: bool,
    /// An `SSY` (the effects table gives `SSY` and `PBK` the same flow).
    ssy: bool,
    succs: Vec<usize>,
}

/// The occupied registers at every instruction of every function of `funcs` (a listing
/// read by [`crate::sass::text::parse`]), `[function][instruction]`. Errors: an opcode
/// the effects table does not know, or a branch whose target is not in its function,
/// with the instruction's text.
pub fn live_counts(funcs: &[TextFunction]) -> Result<Vec<Vec<Live>>, String> {
    let by_name: HashMap<&str, usize> = funcs.iter().enumerate().map(|(g, f)| (f.name.as_str(), g)).collect();
    let mut nodes: Vec<Vec<Node>> = Vec::with_capacity(funcs.len());
    for f in funcs {
        nodes.push(build(f, &by_name)?);
    }
    // Callees first, so that a call knows what its callee reads (recursion: the callee's
    // entry set as far as it is known, possibly empty).
    let mut order = vec![];
    let mut state = vec![0u8; funcs.len()];
    for g in 0..funcs.len() {
        post_order(g, &nodes, &mut state, &mut order);
    }
    let mut entry: Vec<Set> = vec![[0; 5]; funcs.len()];
    let mut out = vec![vec![]; funcs.len()];
    for g in order {
        let live_in = liveness(&nodes[g], &entry);
        entry[g] = live_in.first().copied().unwrap_or_default();
        let stack_pointer = funcs[g].instrs.iter().any(|i| i.opcode == "MOV" && i.operands == ["R1", "c[0x0][0x20]"]);
        out[g] = counts(&nodes[g], &live_in, stack_pointer);
    }
    Ok(out)
}

/// Depth-first post-order of the call graph from `g`.
fn post_order(g: usize, nodes: &[Vec<Node>], state: &mut [u8], order: &mut Vec<usize>) {
    if state[g] != 0 {
        return;
    }
    state[g] = 1;
    let mut stack = vec![(g, 0usize)];
    while let Some((h, k)) = stack.pop() {
        let next_callee = nodes[h].iter().enumerate().skip(k).find_map(|(k, n)| match (n.flow, n.target) {
            (Flow::Call, Some(c)) => Some((k, c)),
            _ => None,
        });
        match next_callee {
            Some((k, c)) => {
                stack.push((h, k + 1));
                if state[c] == 0 {
                    state[c] = 1;
                    stack.push((c, 0));
                }
            }
            None => order.push(h),
        }
    }
}

/// The nodes of one function with their successors.
fn build(f: &TextFunction, by_name: &HashMap<&str, usize>) -> Result<Vec<Node>, String> {
    let addrs: HashMap<u32, usize> = f.instrs.iter().enumerate().map(|(k, i)| (i.addr, k)).collect();
    let mut nodes = Vec::with_capacity(f.instrs.len());
    for i in &f.instrs {
        let fx = effects(i).map_err(|u| format!("{}: opcode not in the effects table: `{}`", f.name, u.0))?;
        let guarded = i.guard.as_ref().is_some_and(|(neg, p)| p != "PT" || *neg);
        let local = |t: &Target| match t {
            Target::Addr(a) => addrs.get(a).copied(),
            Target::Label(l) => f.labels.get(l).copied(),
        };
        let target = match (fx.flow, &i.target) {
            (Flow::Call, Some(Target::Label(l))) => by_name.get(l.as_str()).copied(),
            (Flow::Call, _) => None,
            (Flow::Branch | Flow::Push, Some(t)) => {
                Some(local(t).ok_or_else(|| format!("{}: target of `{}` not found", f.name, i.text))?)
            }
            _ => None,
        };
        let (reads, writes) = (of(&fx.reads), of(&fx.writes));
        let kills = if guarded { [0; 5] } else { writes };
        nodes.push(Node {
            reads,
            writes,
            kills,
            flow: fx.flow,
            target,
            guarded,
            ssy: i.opcode == "SSY",
            succs: vec![],
        });
    }
    successors(&mut nodes);
    Ok(nodes)
}

/// An entry of the reconvergence stack: (pushed by `SSY`, target).
type Entry = (bool, usize);

/// Fills in the successors, walking forward from the entry with the reconvergence stack.
fn successors(nodes: &mut [Node]) {
    let n = nodes.len();
    let all = |sync: bool, nodes: &[Node]| -> Vec<usize> {
        let mut t: Vec<usize> = nodes
            .iter()
            .enumerate()
            .filter(|(_, x)| x.flow == Flow::Push && x.target.is_some())
            .filter(|(_, x)| x.ssy == sync)
            .filter_map(|(_, x)| x.target)
            .collect();
        t.sort_unstable();
        t.dedup();
        t
    };
    let mut stacks: Vec<Option<Vec<Entry>>> = vec![None; n];
    let mut consistent = true;
    let mut work: Vec<(usize, Vec<Entry>)> = if n > 0 { vec![(0, vec![])] } else { vec![] };
    let mut pops: Vec<Option<usize>> = vec![None; n];
    while let Some((k, stack)) = work.pop() {
        match &stacks[k] {
            Some(s) => {
                consistent &= *s == stack;
                continue;
            }
            None => stacks[k] = Some(stack.clone()),
        }
        let x = &nodes[k];
        let next = (k + 1 < n).then_some(k + 1);
        match x.flow {
            Flow::Push => {
                let mut s = stack.clone();
                if let Some(t) = x.target {
                    s.push((x.ssy, t));
                }
                work.extend(next.map(|m| (m, s)));
            }
            Flow::Sync | Flow::Brk => {
                let sync = x.flow == Flow::Sync;
                if let Some(p) = stack.iter().rposition(|e| e.0 == sync) {
                    pops[k] = Some(stack[p].1);
                    work.push((stack[p].1, stack[..p].to_vec()));
                } else {
                    consistent = false;
                }
                if x.guarded {
                    work.extend(next.map(|m| (m, stack.clone())));
                }
            }
            Flow::Branch => {
                work.extend(x.target.map(|t| (t, stack.clone())));
                if x.guarded {
                    work.extend(next.map(|m| (m, stack.clone())));
                }
            }
            Flow::Exit | Flow::Ret => {
                if x.guarded {
                    work.extend(next.map(|m| (m, stack.clone())));
                }
            }
            Flow::Next | Flow::Call | Flow::CallOut => work.extend(next.map(|m| (m, stack.clone()))),
        }
    }
    let (ssy_targets, pbk_targets) = (all(true, nodes), all(false, nodes));
    for k in 0..n {
        let x = &nodes[k];
        let next = (k + 1 < n).then_some(k + 1);
        let mut s: Vec<usize> = match x.flow {
            Flow::Next | Flow::Push | Flow::Call | Flow::CallOut => next.into_iter().collect(),
            Flow::Branch => x.target.into_iter().collect(),
            Flow::Exit | Flow::Ret => vec![],
            Flow::Sync | Flow::Brk => match pops[k] {
                Some(t) if consistent => vec![t],
                _ if x.flow == Flow::Sync => ssy_targets.clone(),
                _ => pbk_targets.clone(),
            },
        };
        if x.guarded && matches!(x.flow, Flow::Branch | Flow::Exit | Flow::Ret | Flow::Sync | Flow::Brk) {
            s.extend(next);
        }
        nodes[k].succs = s;
    }
}

/// Live registers before each instruction (registers read by it or later before being
/// written), iterated to the fixed point; `entry`: per function, what it reads at entry.
fn liveness(nodes: &[Node], entry: &[Set]) -> Vec<Set> {
    let clobbered = caller_saved();
    let mut live_in: Vec<Set> = vec![[0; 5]; nodes.len()];
    let mut changed = true;
    while changed {
        changed = false;
        for k in (0..nodes.len()).rev() {
            let x = &nodes[k];
            let mut out = [0; 5];
            for &s in &x.succs {
                out = or(&out, &live_in[s]);
            }
            let mut reads = x.reads;
            let mut kills = x.kills;
            if matches!(x.flow, Flow::Call | Flow::CallOut) {
                kills = or(&kills, &clobbered);
                if let Some(g) = x.target {
                    reads = or(&reads, &entry[g]);
                }
            }
            let new = or(&minus(&out, &kills), &reads);
            if new != live_in[k] {
                live_in[k] = new;
                changed = true;
            }
        }
    }
    live_in
}

/// The counts at each instruction from the live sets: live or written, among the
/// registers written on some path from the entry (or coming from the caller);
/// `stack_pointer`: R1 counts wherever it has been written.
fn counts(nodes: &[Node], live_in: &[Set], stack_pointer: bool) -> Vec<Live> {
    let clobbered = caller_saved();
    let n = nodes.len();
    let mut def_in: Vec<Set> = vec![[0; 5]; n];
    if n > 0 {
        def_in[0] = live_in[0];
    }
    let mut changed = true;
    while changed {
        changed = false;
        for k in 0..n {
            let x = &nodes[k];
            let mut out = or(&def_in[k], &x.writes);
            if matches!(x.flow, Flow::Call | Flow::CallOut) {
                out = or(&out, &clobbered);
            }
            for &s in &x.succs {
                let new = or(&def_in[s], &out);
                if new != def_in[s] {
                    def_in[s] = new;
                    changed = true;
                }
            }
        }
    }
    (0..n)
        .map(|k| {
            let x = &nodes[k];
            let defined = or(&def_in[k], &x.writes);
            let mut occupied = or(&live_in[k], &x.writes);
            if stack_pointer && has(&defined, R1) {
                add(&mut occupied, R1);
            }
            let c = and(&occupied, &defined);
            let gprs = c[..4].iter().map(|w| w.count_ones()).sum::<u32>() as u16;
            let preds = (c[4] & 0x7f).count_ones() as u8;
            Live { gprs, preds }
        })
        .collect()
}
