//! The hazard checker: an independent judge of scheduled SASS, ours or ptxas's.
//!
//! It reads a listing as text ([`crate::sass::text`]), derives each instruction's register
//! effects from its own table ([`super::effects`]) and runs a cycle-level model of one warp
//! over every path of the control-flow graph (a dataflow fixed point; at joins the worst
//! case of each fact is kept):
//!
//! * issue: the next instruction issues `stall` cycles after this one (0 = dual issue);
//! * fixed-latency results are readable [`ALU_LATENCY`] (GPR, CC) or [`PRED_LATENCY`]
//!   (predicate) cycles after issue, and memory instructions read their sources
//!   `read_delay` cycles after issue;
//! * variable-latency results are readable only after a wait on their write barrier
//!   (`&req={b}`, or `DEPBAR.LE SBb, k` with counting semantics), or, for in-order ops
//!   (global/local/generic loads, atomics), after a younger in-order op has been waited for;
//! * sources read late (memory, fp64, conversions, `MUFU`/`POPC`/`FLO`, ...:
//!   [`super::effects::TABLE`]) may be overwritten only after a wait on the instruction's
//!   read barrier, or once its write barrier has been waited for, or [`LATE_READ_WINDOW`]
//!   cycles after issue;
//! * a wait must come at least 2 cycles after the barrier was set;
//! * calls: the callee is checked in the state of its call site (told apart by the
//!   innermost call site, see [`check`]), and the code after a `CAL` in the state of the
//!   `RET`s reached from that call; a `JCAL` (external callee) or `JMX` (indirect call)
//!   must have nothing outstanding and continues in a fresh state (`docs/abi.md`); `SYNC`/`BRK` go to the target nvdisasm names
//!   (`BRANCH_TARGETS`), else to every `SSY`/`PBK` target of the function.
//!
//! Cost: linear in the listing's size times the loop nesting (the fixed point visits
//! nodes in address order, forward code once) and times at most [`MAX_CALL_SITES`] for
//! code in called functions. A conflict is reported at its first instruction and then
//! taken as resolved, and an in-order pipeline's younger op supersedes its older ops'
//! results, so the outstanding operations of a state are bounded by the register units.
//!
//! Reported hazards: reading a register before its producer is done (RAW), overwriting a
//! register whose earlier producer may still write it (WAW) or that a late reader may
//! still read (WAR), and too short a gap after setting a barrier. A wait on a barrier
//! that nothing has set is harmless (it completes at once) and is not reported; a consumer
//! whose producer set no barrier, or another one, is a RAW hazard.

use super::effects::{
    ALU_LATENCY, CC, Effects, Flow, LATE_READ_WINDOW, PRED_BASE, PRED_LATENCY, Queue, UNITS, Unit, depbar, effects,
};
use crate::sass::text::{Target, TextFunction, TextInstr};
pub use flow::MAX_CALL_SITES;
use flow::{Contexts, Crs};

mod flow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// One hazard: where, and what.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Hazard {
    /// Function name.
    pub function: String,
    /// Byte address of the offending instruction.
    pub addr: u32,
    /// 1-based line in the listing.
    pub line: usize,
    /// The instruction text.
    pub text: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for Hazard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {} /*{:04x}*/ `{}`: {}", self.line, self.function, self.addr, self.text, self.message)
    }
}

/// An outstanding variable-latency instruction.
#[derive(Clone, Debug, PartialEq)]
struct Pending {
    wr: Option<u8>,
    rd: Option<u8>,
    queue: Option<Queue>,
    /// Results not yet known written.
    writes: Vec<Unit>,
    /// Late-read sources not yet known read.
    reads: Vec<Unit>,
    /// Cycles since issue (saturating), the smallest over paths.
    age: u8,
    /// Younger ops of the same in-order queue that set each write barrier, issued since;
    /// the fewest over paths.
    younger: [u8; 6],
    /// The same for read barriers: an op of an in-order queue fetches its sources after
    /// every older op of its queue, so a full wait on a younger op's read barrier covers
    /// the older op's late reads (ptxas 11.8, `samples/sha256`: 17 `LDG.E.U8 Rn, [R2+k]`
    /// without a read barrier, the last `&rd0`, then `MOV32I R3, ... &req={0}`).
    younger_rd: [u8; 6],
}

/// The machine state before an instruction.
#[derive(Clone, Debug, PartialEq)]
struct State {
    /// Cycles until each unit's fixed-latency value is ready (0 = ready).
    ready_in: Vec<u8>,
    /// Outstanding variable-latency instructions, by global instruction index.
    pending: BTreeMap<usize, Pending>,
    /// Cycles since each barrier was last set (the fewest over paths; 255 = long ago).
    since_set: [u8; 6],
    /// The reconvergence entries pushed by `SSY`/`PBK` and not yet popped.
    crs: Crs,
}

impl State {
    fn new() -> State {
        State { ready_in: vec![0; UNITS], pending: BTreeMap::new(), since_set: [255; 6], crs: Crs::default() }
    }

    fn join(&mut self, o: &State) -> bool {
        let before = self.clone();
        for (a, b) in self.ready_in.iter_mut().zip(&o.ready_in) {
            *a = (*a).max(*b);
        }
        for (k, p) in &o.pending {
            match self.pending.get_mut(k) {
                None => {
                    self.pending.insert(*k, p.clone());
                }
                Some(q) => {
                    for u in &p.writes {
                        if !q.writes.contains(u) {
                            q.writes.push(*u);
                        }
                    }
                    for u in &p.reads {
                        if !q.reads.contains(u) {
                            q.reads.push(*u);
                        }
                    }
                    q.age = q.age.min(p.age);
                    for b in 0..6 {
                        q.younger[b] = q.younger[b].min(p.younger[b]);
                        q.younger_rd[b] = q.younger_rd[b].min(p.younger_rd[b]);
                    }
                }
            }
        }
        for b in 0..6 {
            self.since_set[b] = self.since_set[b].min(o.since_set[b]);
        }
        self.crs.join(&o.crs);
        *self != before
    }

    /// Advances time by `cycles`.
    fn advance(&mut self, cycles: u8) {
        for r in self.ready_in.iter_mut() {
            *r = r.saturating_sub(cycles);
        }
        for p in self.pending.values_mut() {
            p.age = p.age.saturating_add(cycles);
            if p.rd.is_none() && p.age >= LATE_READ_WINDOW {
                p.reads.clear();
            }
        }
        for s in self.since_set.iter_mut() {
            *s = s.saturating_add(cycles);
        }
        self.pending.retain(|_, p| !p.writes.is_empty() || !p.reads.is_empty());
    }

    /// Applies a wait on barrier `b` that leaves at most `k` ops outstanding on it.
    fn drain(&mut self, b: u8, k: u8) {
        for p in self.pending.values_mut() {
            let younger = p.younger[b as usize];
            let done =
                if p.queue.is_some() { younger >= k + u8::from(p.wr != Some(b)) } else { p.wr == Some(b) && k == 0 };
            if done {
                p.writes.clear();
                p.reads.clear();
            }
            if k == 0 && (p.rd == Some(b) || p.queue.is_some() && p.younger_rd[b as usize] > 0) {
                p.reads.clear();
            }
        }
        self.pending.retain(|_, p| !p.writes.is_empty() || !p.reads.is_empty());
    }
}

fn unit_name(u: Unit) -> String {
    match u {
        CC => "CC".into(),
        u if u >= PRED_BASE => format!("P{}", u - PRED_BASE),
        u => format!("R{u}"),
    }
}

/// A node of the whole-program graph.
struct Node<'a> {
    func: usize,
    instr: &'a TextInstr,
    fx: Effects,
    /// Successors, except those of `SYNC`/`BRK`, which the analysis finds on the stack.
    succs: Vec<usize>,
    /// The resolved target of `BRA`/`CAL`/`SSY`/`PBK`, or the one nvdisasm names on
    /// `SYNC`/`BRK`.
    target: Option<usize>,
    /// The next instruction when a guarded `SYNC`/`BRK` does not leave.
    fall: Option<usize>,
}

/// Per function: the targets of its `SSY`s and of its `PBK`s.
type PushTargets = Vec<(Vec<usize>, Vec<usize>)>;

/// Builds the nodes (all functions' instructions, numbered globally) and their successors.
/// Linear in the listing: addresses and labels are looked up in maps built once.
fn build(funcs: &[TextFunction]) -> Result<(Vec<Node<'_>>, PushTargets), Hazard> {
    let mut base = vec![0usize; funcs.len()];
    let mut n = 0;
    for (k, f) in funcs.iter().enumerate() {
        base[k] = n;
        n += f.instrs.len();
    }
    let err = |f: &TextFunction, i: &TextInstr, m: String| Hazard {
        function: f.name.clone(),
        addr: i.addr,
        line: i.line,
        text: i.text.clone(),
        message: m,
    };
    // The first instruction at each address of each function; labels of all functions
    // (a function's own label first, then the first function that has it).
    let addrs: Vec<HashMap<u32, usize>> = funcs
        .iter()
        .map(|f| {
            let mut m = HashMap::new();
            for (k, i) in f.instrs.iter().enumerate() {
                m.entry(i.addr).or_insert(k);
            }
            m
        })
        .collect();
    let mut global: HashMap<&str, usize> = HashMap::new();
    for (g, h) in funcs.iter().enumerate() {
        for (l, p) in &h.labels {
            global.entry(l.as_str()).or_insert(base[g] + p);
        }
    }
    let resolve = |fk: usize, t: &Target| -> Option<usize> {
        match t {
            Target::Addr(a) => addrs[fk].get(a).map(|p| base[fk] + p),
            Target::Label(l) => {
                funcs[fk].labels.get(l).map(|p| base[fk] + p).or_else(|| global.get(l.as_str()).copied())
            }
        }
    };
    let mut nodes: Vec<Node> = vec![];
    let mut push_targets: PushTargets = vec![];
    for (fk, f) in funcs.iter().enumerate() {
        let pushes = |op: &str| -> Vec<usize> {
            f.instrs
                .iter()
                .filter(|i| i.opcode == op)
                .filter_map(|i| i.target.as_ref().and_then(|t| resolve(fk, t)))
                .collect()
        };
        push_targets.push((pushes("SSY"), pushes("PBK")));
        for (k, i) in f.instrs.iter().enumerate() {
            let fx = effects(i).map_err(|u| err(f, i, format!("opcode not in the checker's table: `{}`", u.0)))?;
            let next = (k + 1 < f.instrs.len()).then_some(base[fk] + k + 1);
            let guarded = i.guard.as_ref().is_some_and(|(neg, p)| p != "PT" || *neg);
            let target = match (&fx.flow, &i.target) {
                (Flow::Branch | Flow::Call, Some(t)) => {
                    Some(resolve(fk, t).ok_or_else(|| err(f, i, "branch target not found".into()))?)
                }
                (Flow::Branch | Flow::Call, None) => return Err(err(f, i, "branch without a target".into())),
                _ => None,
            };
            let target = target.or_else(|| i.target.as_ref().and_then(|t| resolve(fk, t)));
            let mut succs: Vec<usize> = match fx.flow {
                Flow::Next | Flow::Push | Flow::CallOut => next.into_iter().collect(),
                Flow::Branch | Flow::Call => target.into_iter().collect(),
                Flow::Exit | Flow::Ret | Flow::Sync | Flow::Brk => vec![],
            };
            let mut fall = None;
            if guarded && matches!(fx.flow, Flow::Sync | Flow::Brk) {
                fall = next;
            } else if guarded && !matches!(fx.flow, Flow::Next | Flow::Push | Flow::Call | Flow::CallOut) {
                succs.extend(next);
            }
            nodes.push(Node { func: fk, instr: i, fx, succs, target, fall });
        }
    }
    Ok((nodes, push_targets))
}

/// Checks one instruction in state `s`; returns the hazards and the state after it
/// (before advancing time by its stall).
fn step(node: &Node, idx: usize, s: &State, out: &mut Vec<String>) -> State {
    let i = node.instr;
    let fx = &node.fx;
    let mut s = s.clone();
    // Waits.
    for b in 0..6u8 {
        if i.ctrl.wait >> b & 1 == 1 {
            if s.since_set[b as usize] < 2 {
                out.push(format!(
                    "waits on SB{b} {} cycle(s) after it was set (at least 2 needed)",
                    s.since_set[b as usize]
                ));
            }
            s.drain(b, 0);
        }
    }
    for (sb, k) in depbar(i) {
        // DEPBAR reads the counter when it executes: an op that set the barrier in the
        // previous cycle is counted (ptxas 11.8 `strided_sum`: `LDG.E R13, [R24] &wr5
        // ?WAIT1` then `DEPBAR.LE SB5, 0xe` relying on that load being counted).
        s.drain(sb, k);
    }
    // A pending result or late read reported here, or superseded by this instruction, is
    // taken as resolved from here on: each conflict is reported once, at its first
    // instruction, and the pending set stays bounded by the register units.
    let mut resolved: Vec<(usize, Unit)> = vec![];
    // RAW: fixed latencies (sources read `read_delay` cycles after issue) and
    // outstanding variable-latency results.
    for &u in &fx.reads {
        let left = s.ready_in[u as usize];
        if left > fx.read_delay {
            out.push(format!(
                "reads {} {} cycle(s) before its producer's result is ready",
                unit_name(u),
                left - fx.read_delay
            ));
        }
        for (&k, p) in &s.pending {
            if p.writes.contains(&u) {
                out.push(format!(
                    "reads {} while the variable-latency result of instruction #{k} is not waited for{}",
                    unit_name(u),
                    p.wr.map_or(" (it sets no write barrier)".into(), |b| format!(" (SB{b})"))
                ));
                resolved.push((k, u));
            }
        }
    }
    // WAW and WAR against outstanding instructions; WAW against fixed-latency results still
    // in flight (a later ALU write must not land before an earlier one).
    // An op of an in-order queue writes after every earlier op of its queue has written
    // and fetched its sources.
    let same_queue = |p: &Pending| fx.variable && fx.queue.is_some() && p.queue == fx.queue;
    for &u in &fx.writes {
        for (&k, p) in &s.pending {
            if !p.writes.contains(&u) && !p.reads.contains(&u) {
                continue;
            }
            resolved.push((k, u));
            if same_queue(p) {
                continue;
            }
            if p.writes.contains(&u) {
                out.push(format!("overwrites {} while instruction #{k} may still write it", unit_name(u)));
            }
            if p.reads.contains(&u) {
                out.push(format!(
                    "overwrites {} while instruction #{k} may still read it{}",
                    unit_name(u),
                    p.rd.map_or(" (no read barrier)".into(), |b| format!(" (SB{b} not waited for)"))
                ));
            }
        }
    }
    for (k, u) in resolved {
        if let Some(p) = s.pending.get_mut(&k) {
            p.writes.retain(|x| *x != u);
            p.reads.retain(|x| *x != u);
        }
    }
    s.pending.retain(|_, p| !p.writes.is_empty() || !p.reads.is_empty());
    // Effects of this instruction.
    if fx.variable {
        for p in s.pending.values_mut() {
            if fx.queue.is_some() && p.queue == fx.queue {
                if let Some(b) = i.ctrl.wr {
                    p.younger[b as usize] = p.younger[b as usize].saturating_add(1);
                }
                if let Some(b) = i.ctrl.rd {
                    p.younger_rd[b as usize] = p.younger_rd[b as usize].saturating_add(1);
                }
            }
        }
        let reads: Vec<Unit> =
            if fx.reads_late { fx.reads.iter().copied().filter(|u| *u < PRED_BASE).collect() } else { vec![] };
        let writes = fx.writes.clone();
        if !writes.is_empty() || !reads.is_empty() {
            s.pending.insert(
                idx,
                Pending {
                    wr: i.ctrl.wr,
                    rd: i.ctrl.rd,
                    queue: fx.queue,
                    writes,
                    reads,
                    age: 0,
                    younger: [0; 6],
                    younger_rd: [0; 6],
                },
            );
        }
        for &u in &fx.writes {
            s.ready_in[u as usize] = 0;
        }
    } else {
        if fx.reads_late {
            let reads: Vec<Unit> = fx.reads.iter().copied().filter(|u| *u < PRED_BASE).collect();
            if !reads.is_empty() {
                s.pending.insert(
                    idx,
                    Pending {
                        wr: None,
                        rd: i.ctrl.rd,
                        queue: fx.queue,
                        writes: vec![],
                        reads,
                        age: 0,
                        younger: [0; 6],
                        younger_rd: [0; 6],
                    },
                );
            }
        }
        for &u in &fx.writes {
            let lat = if (PRED_BASE..CC).contains(&u) { PRED_LATENCY } else { ALU_LATENCY };
            s.ready_in[u as usize] = lat;
        }
        if fx.writes.is_empty() && i.ctrl.wr.is_some() {
            // A write barrier on an instruction without results (ptxas does not do this).
            out.push("sets a write barrier but writes no register".into());
        }
    }
    for b in [i.ctrl.wr, i.ctrl.rd].into_iter().flatten() {
        s.since_set[b as usize] = 0;
    }
    if fx.flow == Flow::CallOut {
        // A callee this listing does not hold (`JCAL`, `JMX`): by the calling convention
        // nothing may be outstanding (it may reuse every barrier), and it returns with
        // nothing outstanding, its results ready (`RET` waits).
        if !s.pending.is_empty() {
            out.push("calls out with variable-latency results or reads outstanding".into());
        }
        let crs = std::mem::take(&mut s.crs);
        s = State::new();
        s.crs = crs;
    }
    s
}

/// Joins `s` into the state before node `k` in context `ctx`; queues it if that changed.
fn propagate(
    state_in: &mut HashMap<(usize, usize), State>,
    work: &mut BTreeSet<(usize, usize)>,
    key: (usize, usize),
    s: &State,
) {
    let changed = match state_in.get_mut(&key) {
        None => {
            state_in.insert(key, s.clone());
            true
        }
        Some(x) => x.join(s),
    };
    if changed {
        work.insert(key);
    }
}

/// Checks every function of a listing. Returns all hazards found (empty = hazard-free
/// under the model), or an error for an instruction the table does not know or a branch
/// whose target is missing.
///
/// Calls are analysed context-sensitively: a subroutine is checked in the state of each of
/// its call sites separately, and its `RET` returns only to the instruction after the
/// call that entered it. ptxas 11.8 places its shared slow-path subroutines
/// (`__cuda_sm20_rcp_rn_f32_slowpath` and others, `samples/black_scholes`) inside the
/// kernel's code and returns from them with `MUFU` results still in flight that only the
/// calling site's code waits for; linking every `RET` to every call site would report
/// hazards on paths no execution takes. A context is the innermost call site only (not
/// the whole call stack, whose number grows exponentially with the depth of a call tree):
/// a subroutine called from site `s` starts in the join of the states at `s` over all
/// contexts that reach `s`, and returns to every one of them, which over-approximates
/// each stack, so every hazard on some stack is still found. A function called from more
/// than [`MAX_CALL_SITES`] sites is analysed once for all of them (its `RET`s go to every
/// site), as a context-insensitive analysis would.
pub fn check(funcs: &[TextFunction]) -> Result<Vec<Hazard>, Hazard> {
    let a = analyse(funcs)?;
    // Report from the fixed point, once per instruction, in address order.
    let mut keys: Vec<(usize, usize)> = a.state_in.keys().copied().collect();
    keys.sort_unstable();
    let mut found: Vec<(usize, String)> = vec![];
    for (h, ctx) in keys {
        let mut s = a.state_in[&(h, ctx)].clone();
        let mut k = h;
        loop {
            let mut msgs = vec![];
            let mut after = step(&a.nodes[k], k, &s, &mut msgs);
            found.extend(msgs.into_iter().map(|m| (k, m)));
            if a.block_end(k) {
                break;
            }
            after.advance(a.nodes[k].instr.ctrl.stall);
            s = after;
            k += 1;
        }
    }
    found.sort_by_key(|(k, _)| *k);
    let mut hazards: Vec<Hazard> = vec![];
    let mut seen: HashSet<Hazard> = HashSet::new();
    for (k, m) in found {
        let node = &a.nodes[k];
        let h = Hazard {
            function: funcs[node.func].name.clone(),
            addr: node.instr.addr,
            line: node.instr.line,
            text: node.instr.text.clone(),
            message: m,
        };
        if seen.insert(h.clone()) {
            hazards.push(h);
        }
    }
    Ok(hazards)
}

/// The fixed point of the analysis: the state before each (block head, context) reached.
/// Blocks are straight runs of instructions: a head is a function's first instruction,
/// a target of a branch, call or `SSY`/`PBK`, or the instruction after one that does not
/// simply fall through; states inside a block are recomputed from its head.
struct Analysis<'a> {
    nodes: Vec<Node<'a>>,
    /// Block heads, by node.
    head: Vec<bool>,
    state_in: HashMap<(usize, usize), State>,
    /// Nodes processed until the fixed point (its cost; read by the tests).
    #[cfg_attr(not(test), allow(dead_code))]
    visits: usize,
}

/// Runs the dataflow analysis of [`check`] to its fixed point.
fn analyse(funcs: &[TextFunction]) -> Result<Analysis<'_>, Hazard> {
    let (nodes, push_targets) = build(funcs)?;
    let mut visits = 0;
    let mut ctxs = Contexts::new(&nodes);
    let mut state_in: HashMap<(usize, usize), State> = HashMap::new();
    // Entries: the first instruction of every function that no CAL targets.
    let called: HashSet<usize> =
        nodes.iter().filter(|x| x.fx.flow == Flow::Call).filter_map(|x| x.succs.first().copied()).collect();
    // In address order: forward code is visited once, loops until their states settle.
    let mut work: BTreeSet<(usize, usize)> = BTreeSet::new();
    let mut base = 0;
    for f in funcs {
        if !f.instrs.is_empty() && !called.contains(&base) {
            state_in.insert((base, 0), State::new());
            work.insert((base, 0));
        }
        base += f.instrs.len();
    }
    let mut head = vec![false; nodes.len() + 1];
    for (k, x) in nodes.iter().enumerate() {
        if k == 0 || x.func != nodes[k - 1].func || !matches!(nodes[k - 1].fx.flow, Flow::Next | Flow::Push) {
            head[k] = true;
        }
        for &t in x.succs.iter().chain(&x.target) {
            head[t] = true;
        }
    }
    for (ssy, pbk) in &push_targets {
        for &t in ssy.iter().chain(pbk) {
            head[t] = true;
        }
    }
    let mut scratch = vec![];
    let mut a = Analysis { nodes, head, state_in: HashMap::new(), visits: 0 };
    while let Some((h, ctx)) = work.pop_first() {
        let Some(s) = state_in.get(&(h, ctx)) else { continue };
        // Through the block to its last instruction `k`.
        let mut k = h;
        let mut after = s.clone();
        loop {
            visits += 1;
            scratch.clear();
            after = step(&a.nodes[k], k, &after, &mut scratch);
            after.advance(a.nodes[k].instr.ctrl.stall);
            if a.block_end(k) {
                break;
            }
            if let (Flow::Push, Some(t)) = (a.nodes[k].fx.flow, a.nodes[k].target) {
                after.crs.push(a.nodes[k].instr.opcode == "SSY", t);
            }
            k += 1;
        }
        let nodes = &a.nodes;
        let after_call = (k + 1 < nodes.len() && nodes[k + 1].func == nodes[k].func).then_some(k + 1);
        match nodes[k].fx.flow {
            Flow::Call => {
                let inner = ctxs.callee_ctx[k];
                if ctxs.seen_callers.insert((inner, k, ctx)) {
                    ctxs.callers.entry(inner).or_default().push((k, ctx));
                    // The callee has already returned in this context: continue after the call.
                    if let (Some(r), Some(t)) = (ctxs.returned.get(&inner), after_call) {
                        propagate(&mut state_in, &mut work, (t, ctx), r);
                    }
                }
                for &t in &nodes[k].succs {
                    propagate(&mut state_in, &mut work, (t, inner), &after);
                }
            }
            Flow::Ret => {
                // A guarded RET falls through.
                for &t in &nodes[k].succs {
                    propagate(&mut state_in, &mut work, (t, ctx), &after);
                }
                if ctx != 0 {
                    let changed = match ctxs.returned.get_mut(&ctx) {
                        None => {
                            ctxs.returned.insert(ctx, after.clone());
                            true
                        }
                        Some(r) => r.join(&after),
                    };
                    if changed {
                        let r = ctxs.returned[&ctx].clone();
                        for &(site, cc) in ctxs.callers.get(&ctx).map(|v| v.as_slice()).unwrap_or(&[]) {
                            if site + 1 < nodes.len() && nodes[site + 1].func == nodes[site].func {
                                propagate(&mut state_in, &mut work, (site + 1, cc), &r);
                            }
                        }
                    }
                }
            }
            Flow::Push => {
                if let Some(t) = nodes[k].target {
                    after.crs.push(nodes[k].instr.opcode == "SSY", t);
                }
                for &t in &nodes[k].succs {
                    propagate(&mut state_in, &mut work, (t, ctx), &after);
                }
            }
            Flow::Sync | Flow::Brk => {
                let sync = nodes[k].fx.flow == Flow::Sync;
                let (on_stack, popped) = after.crs.pop(sync);
                let (ssy, pbk) = &push_targets[nodes[k].func];
                let dests = match nodes[k].target {
                    Some(t) => vec![t],
                    None => on_stack.unwrap_or_else(|| if sync { ssy.clone() } else { pbk.clone() }),
                };
                if let Some(t) = nodes[k].fall {
                    propagate(&mut state_in, &mut work, (t, ctx), &after);
                }
                let mut left = after;
                left.crs = popped;
                for t in dests {
                    propagate(&mut state_in, &mut work, (t, ctx), &left);
                }
            }
            _ => {
                for &t in &nodes[k].succs {
                    propagate(&mut state_in, &mut work, (t, ctx), &after);
                }
            }
        }
    }
    a.state_in = state_in;
    a.visits = visits;
    Ok(a)
}

impl Analysis<'_> {
    /// Whether node `k` ends its block.
    fn block_end(&self, k: usize) -> bool {
        !matches!(self.nodes[k].fx.flow, Flow::Next | Flow::Push)
            || self.head.get(k + 1).is_none_or(|h| *h)
            // The listing's last instruction may fall through (a truncated or hand-written
            // listing): it ends its block (found by fuzz/ `check`).
            || self.nodes.get(k + 1).is_none_or(|n| n.func != self.nodes[k].func)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Listing text of `f` functions: `(name, instructions)`, addresses in steps of 8.
    fn listing(funcs: &[(String, Vec<String>)]) -> Vec<TextFunction> {
        let mut t = String::new();
        for (name, code) in funcs {
            t += &format!("Function : {name}\n{name}:\n");
            for (k, i) in code.iter().enumerate() {
                t += &format!("/*{:04x}*/ {i} ;\n", 8 * (k + 1));
            }
        }
        crate::sass::text::parse(&t).expect("parses")
    }

    /// The analysis' size on shapes whose cost used to grow exponentially or
    /// polynomially (issue 20): states and visits stay within a small multiple of the
    /// instructions.
    #[test]
    fn the_analysis_is_linear_on_known_blow_ups() {
        // A call tree 20 deep, two call sites per level: 2^20 call stacks.
        let mut funcs = vec![];
        for i in 0..=20 {
            let code = if i < 20 {
                vec![
                    format!("CAL `(f{}) ?WAIT13", i + 1),
                    "MOV R2, R3 ?WAIT6".into(),
                    format!("CAL `(f{}) ?WAIT13", i + 1),
                ]
            } else {
                vec!["MUFU.RCP R4, R5 &wr0 ?WAIT2".into(), "FADD R6, R4, R4 &req={0} ?WAIT6".into()]
            };
            let last = if i == 0 { "EXIT ?WAIT15" } else { "RET ?WAIT15" };
            funcs.push((format!("f{i}"), [code, vec![last.into()]].concat()));
        }
        let l = listing(&funcs);
        let n: usize = l.iter().map(|f| f.instrs.len()).sum();
        let a = analyse(&l).unwrap();
        assert!(
            a.state_in.len() <= 2 * n && a.visits <= 4 * n,
            "{} states, {} visits, {n} instructions",
            a.state_in.len(),
            a.visits
        );
        // 2000 loads whose results are read without a wait: each conflict is reported
        // once and taken as resolved, so no state holds more than a few pending loads.
        let mut code = vec![];
        for k in 0..2000 {
            let r = 2 + 2 * (k % 50);
            code.push(format!("LDG.E R{r}, [R200] &wr0 ?WAIT2"));
            code.push(format!("FADD R{}, R{r}, R{} ?WAIT6", r + 1, r + 1));
        }
        code.push("EXIT ?WAIT15".into());
        let l = listing(&[("k".into(), code)]);
        let a = analyse(&l).unwrap();
        let most = a.state_in.values().map(|s| s.pending.len()).max().unwrap();
        assert!(most <= 2 && a.visits == 4001, "{most} pending, {} visits", a.visits);
        assert_eq!(check(&l).unwrap().len(), 2000);
        // 2000 if-regions with SSY/SYNC (ptx2sass's shape): each SYNC goes to its own SSY
        // target, not to all 2000.
        let mut code = vec![];
        for k in 0..2000 {
            let b = code.len();
            let at = |j: usize| 8 * (b + j + 1);
            code.push(format!("SSY 0x{:x} ?WAIT1", at(7)));
            code.push(format!("ISETP.NE.AND P0, PT, R{}, RZ, PT ?WAIT13", k % 20));
            code.push(format!("@P0 BRA 0x{:x} ?WAIT13", at(5)));
            code.push("FADD R30, R30, 1 ?WAIT1".into());
            code.push("SYNC ?WAIT15".into());
            code.push("FADD R30, R30, 2 ?WAIT1".into());
            code.push("SYNC ?WAIT15".into());
        }
        code.push("EXIT ?WAIT15".into());
        let n = code.len();
        let l = listing(&[("k".into(), code)]);
        let a = analyse(&l).unwrap();
        assert!(a.visits <= 2 * n, "{} visits, {n} instructions", a.visits);
    }
}
