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
//! * sources read late (memory, fp64, conversions) may be overwritten only after a wait on
//!   the instruction's read barrier, or once its write barrier has been waited for, or
//!   [`LATE_READ_WINDOW`] cycles after issue;
//! * a wait must come at least 2 cycles after the barrier was set;
//! * calls: the callee is checked in the caller's state, once per call stack, and the code
//!   after a `CAL` in the state of the `RET`s reached from that call; `SYNC`/`BRK` go to the target nvdisasm names
//!   (`BRANCH_TARGETS`), else to every `SSY`/`PBK` target of the function.
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
use std::collections::{BTreeMap, HashMap};

/// One hazard: where, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
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
}

impl State {
    fn new() -> State {
        State { ready_in: vec![0; UNITS], pending: BTreeMap::new(), since_set: [255; 6] }
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
    succs: Vec<usize>,
}

/// Builds the nodes (all functions' instructions, numbered globally) and their successors.
fn build(funcs: &[TextFunction]) -> Result<Vec<Node<'_>>, Hazard> {
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
    let resolve = |fk: usize, t: &Target| -> Option<usize> {
        let f = &funcs[fk];
        match t {
            Target::Addr(a) => f.instrs.iter().position(|i| i.addr == *a).map(|p| base[fk] + p),
            Target::Label(l) => {
                if let Some(p) = f.labels.get(l) {
                    return Some(base[fk] + p);
                }
                funcs.iter().enumerate().find_map(|(g, h)| h.labels.get(l).map(|p| base[g] + p))
            }
        }
    };
    let mut nodes: Vec<Node> = vec![];
    for (fk, f) in funcs.iter().enumerate() {
        let pushes = |flow: Flow| -> Vec<usize> {
            let op = if flow == Flow::Sync { "SSY" } else { "PBK" };
            f.instrs
                .iter()
                .filter(|i| i.opcode == op)
                .filter_map(|i| i.target.as_ref().and_then(|t| resolve(fk, t)))
                .collect()
        };
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
            let mut succs: Vec<usize> = match fx.flow {
                Flow::Next | Flow::Push => next.into_iter().collect(),
                Flow::Branch | Flow::Call => target.into_iter().collect(),
                Flow::Exit | Flow::Ret => vec![],
                Flow::Sync | Flow::Brk => match &i.target {
                    Some(t) => resolve(fk, t).into_iter().collect(),
                    None => pushes(fx.flow),
                },
            };
            if guarded && !matches!(fx.flow, Flow::Next | Flow::Push | Flow::Call) {
                succs.extend(next);
            }
            nodes.push(Node { func: fk, instr: i, fx, succs });
        }
    }
    Ok(nodes)
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
    s
}

/// Call stacks seen during the analysis, interned: context 0 is the empty stack (a
/// function entered as a kernel); a context's stack lists the `CAL` nodes, outermost first.
struct Contexts {
    stacks: Vec<Vec<usize>>,
    ids: HashMap<Vec<usize>, usize>,
}

impl Contexts {
    fn new() -> Contexts {
        Contexts { stacks: vec![vec![]], ids: HashMap::from([(vec![], 0)]) }
    }

    fn intern(&mut self, stack: Vec<usize>) -> usize {
        if let Some(&id) = self.ids.get(&stack) {
            return id;
        }
        self.stacks.push(stack.clone());
        self.ids.insert(stack, self.stacks.len() - 1);
        self.stacks.len() - 1
    }

    /// The context inside a callee called by `call` from context `ctx`. A recursive call
    /// (one already on the stack) returns to the stack as it was at that call, so the set of
    /// contexts stays finite.
    fn push(&mut self, ctx: usize, call: usize) -> usize {
        let mut stack = self.stacks[ctx].clone();
        match stack.iter().position(|&c| c == call) {
            Some(p) => stack.truncate(p + 1),
            None => stack.push(call),
        }
        self.intern(stack)
    }

    /// Where a `RET` in context `ctx` goes: the instruction after the innermost call, in the
    /// caller's context; nothing for the empty stack.
    fn ret(&mut self, ctx: usize) -> Option<(usize, usize)> {
        let mut stack = self.stacks[ctx].clone();
        let call = stack.pop()?;
        Some((call + 1, self.intern(stack)))
    }
}

/// Checks every function of a listing. Returns all hazards found (empty = hazard-free
/// under the model), or an error for an instruction the table does not know or a branch
/// whose target is missing.
///
/// Calls are analysed per call stack (context-sensitively): a subroutine is checked in the
/// state of each of its call sites separately, and its `RET` returns only to the
/// instruction after the call that entered it. ptxas 11.8 places its shared slow-path
/// subroutines (`__cuda_sm20_rcp_rn_f32_slowpath` and others, `samples/black_scholes`)
/// inside the kernel's code and returns from them with `MUFU` results still in flight that
/// only the calling site's code waits for; linking every `RET` to every call site would
/// report hazards on paths no execution takes.
pub fn check(funcs: &[TextFunction]) -> Result<Vec<Hazard>, Hazard> {
    let nodes = build(funcs)?;
    let mut ctxs = Contexts::new();
    let mut state_in: HashMap<(usize, usize), State> = HashMap::new();
    // Entries: the first instruction of every function that no CAL targets.
    let called: Vec<usize> =
        nodes.iter().filter(|x| x.fx.flow == Flow::Call).filter_map(|x| x.succs.first().copied()).collect();
    let mut base = 0;
    let mut work: Vec<(usize, usize)> = vec![];
    for f in funcs {
        if !f.instrs.is_empty() && !called.contains(&base) {
            state_in.insert((base, 0), State::new());
            work.push((base, 0));
        }
        base += f.instrs.len();
    }
    let mut scratch = vec![];
    let mut succs = vec![];
    while let Some((k, ctx)) = work.pop() {
        let Some(s) = state_in.get(&(k, ctx)).cloned() else { continue };
        scratch.clear();
        let mut after = step(&nodes[k], k, &s, &mut scratch);
        after.advance(nodes[k].instr.ctrl.stall);
        succs.clear();
        match nodes[k].fx.flow {
            Flow::Call => {
                let inner = ctxs.push(ctx, k);
                succs.extend(nodes[k].succs.iter().map(|&t| (t, inner)));
            }
            Flow::Ret => {
                succs.extend(nodes[k].succs.iter().map(|&t| (t, ctx)));
                succs.extend(ctxs.ret(ctx).filter(|(t, _)| *t < nodes.len()));
            }
            _ => succs.extend(nodes[k].succs.iter().map(|&t| (t, ctx))),
        }
        for &key in &succs {
            let changed = match state_in.get_mut(&key) {
                None => {
                    state_in.insert(key, after.clone());
                    true
                }
                Some(x) => x.join(&after),
            };
            if changed && !work.contains(&key) {
                work.push(key);
            }
        }
    }
    // Report from the fixed point, once per instruction.
    let mut keys: Vec<(usize, usize)> = state_in.keys().copied().collect();
    keys.sort_unstable();
    let mut hazards: Vec<Hazard> = vec![];
    for (k, ctx) in keys {
        let node = &nodes[k];
        let mut msgs = vec![];
        step(node, k, &state_in[&(k, ctx)], &mut msgs);
        for m in msgs {
            let h = Hazard {
                function: funcs[node.func].name.clone(),
                addr: node.instr.addr,
                line: node.instr.line,
                text: node.instr.text.clone(),
                message: m,
            };
            if !hazards.contains(&h) {
                hazards.push(h);
            }
        }
    }
    Ok(hazards)
}
