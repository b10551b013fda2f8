//! The IR: per function, a control-flow graph (petgraph `StableDiGraph`) of basic blocks of
//! SPA 5.0 instructions ([`crate::sass::instr::Instr`]) on virtual registers.
//!
//! Invariants (checked by [`verify`]):
//! * every block ends with a terminator: `BRA` (one successor, `Taken` edge), `@P BRA`
//!   (two: `Taken` then `Fallthrough`, the fall-through block next in `layout`), `SYNC` /
//!   `BRK` (guarded or not; the `Taken` edge goes to the SSY/PBK target), or `EXIT`/`RET`
//!   (none);
//! * after SSA construction every virtual register has exactly one definition (an
//!   instruction destination or a block parameter); edge arguments feed block parameters;
//! * register operands have the width of their virtual register (or name a component);
//! * the condition code (CC) is a value: every `.CC` writer defines a fresh CC value, every
//!   reader (`.X`, `ISETP.X`) names the one it reads, which is the last CC value written
//!   before it in the same block (CC is never live across a block boundary; see [`cc`]).
//!
//! `Display` prints the IR in SASS syntax with block headers; [`dot`] renders Graphviz.

pub mod cc;
pub mod defuse;
pub mod dom;
pub mod dot;
pub mod edit;
pub mod guards;
pub mod liveness;
#[cfg(test)]
pub(crate) mod testing;
pub mod verify;

pub use defuse::{DefSites, use_counts};
pub use liveness::{Liveness, liveness};

use crate::ptx::ast::{FuncKind, Span};
use crate::sass::abi::AbiLoc;
use crate::sass::instr::{Dst, Instr, Reg, SrcKind};
use crate::sass::print::{VRegNames, instr_text};
pub use crate::sass::program::Linkage;
use petgraph::Direction;
use petgraph::stable_graph::{EdgeIndex, NodeIndex, StableDiGraph};
use petgraph::visit::{EdgeRef, NodeIndexable};
use std::fmt;

/// Block identifier (a node of the CFG).
pub type BlockId = NodeIndex;

/// What a virtual register holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VRegKind {
    /// `n` consecutive general-purpose registers (1, 2 or 4): 32, 64 or 128 bits.
    Gpr(u8),
    /// A predicate.
    Pred,
}

impl VRegKind {
    /// Number of 32-bit registers (predicates count 1).
    pub fn width(self) -> u8 {
        match self {
            VRegKind::Gpr(n) => n,
            VRegKind::Pred => 1,
        }
    }
}

/// How control leaves a block along an edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EdgeKind {
    /// The target of the block's `BRA` (taken when its guard holds).
    Taken,
    /// The not-taken path of a guarded `BRA`: the next block in layout.
    Fallthrough,
}

/// A CFG edge with the SSA arguments passed to the target's block parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    /// Taken or fall-through.
    pub kind: EdgeKind,
    /// Values for the target's parameters, in order (virtual register numbers).
    pub args: Vec<u32>,
}

/// A basic block.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Block {
    /// A name for printing (the PTX label when there is one).
    pub name: String,
    /// SSA block parameters (phi values), as virtual register numbers.
    pub params: Vec<u32>,
    /// Instructions; the last one is the terminator.
    pub instrs: Vec<Instr>,
    /// Source spans of the PTX instructions each IR instruction came from (same length as
    /// `instrs`; `Span::default()` for instructions without a PTX origin).
    pub origins: Vec<Span>,
    /// The block's conditional branch is known warp-uniform (PTX `bra.uni`).
    pub uni: bool,
    /// Rarely executed (the call of an f64 slow path): never if-converted into the path
    /// every thread runs (`lower::cfg::ifconv`).
    pub cold: bool,
}

impl Block {
    /// Appends an instruction with its PTX origin.
    pub fn push(&mut self, i: Instr, origin: Span) {
        self.instrs.push(i);
        self.origins.push(origin);
    }
}

/// A kernel parameter's place in constant bank 0 (kernel parameters start at
/// `c[0x0][0x140]`, ptxas findings section 6).
#[derive(Clone, Debug, PartialEq)]
pub struct ParamSlot {
    /// PTX name.
    pub name: String,
    /// PTX type word and array length, for the header (e.g. `.u64`, `.b8[16]`).
    pub ty: String,
    /// Byte offset in bank 0.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
}

/// How a call reaches its callee.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallKind {
    /// A function of the module: `CAL` (relative).
    Internal,
    /// A function declared `.extern`: `JCAL` (absolute, relocated).
    External,
    /// Through a register holding a function's address: `PRET` + `JMX`.
    Indirect,
}

/// One call of a function (`Op::Call(site)` indexes [`Function::calls`]): where its
/// argument words (`srcs[1..]` of the call) and returned words (its `dsts`) are passed.
#[derive(Clone, Debug, PartialEq)]
pub struct CallSite {
    /// How the callee is reached (`srcs[0]` of the call: a symbol, or the address register).
    pub kind: CallKind,
    /// Location of each argument word.
    pub args: Vec<AbiLoc>,
    /// Register of each returned word.
    pub rets: Vec<u8>,
    /// Bytes of arguments on the stack.
    pub stack_bytes: u32,
    /// The callee keeps every register but `sass::abi::PRIVATE_CLOBBERED` (and the
    /// predicates and CC): one of our own slow paths, [`FuncAbi::preserves`].
    pub preserves: bool,
}

/// A device function's side of the calling convention: where its parameter words (the
/// `dsts` of `Op::Params`) arrive and where its returned words (the sources of `RET`) go.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FuncAbi {
    /// Location of each parameter word.
    pub params: Vec<AbiLoc>,
    /// Register of each returned word.
    pub rets: Vec<u8>,
    /// The private convention of our out-of-line slow paths (`lower::arith::float_slow`):
    /// the function saves and restores every general register it writes outside
    /// `sass::abi::PRIVATE_CLOBBERED` (`regalloc::calls::finish`), so that its callers keep
    /// values in any other register across the call.
    pub preserves: bool,
}

/// One function in IR form.
#[derive(Clone, Debug)]
pub struct Function {
    /// Name.
    pub name: String,
    /// Kernel or device function.
    pub kind: FuncKind,
    /// Parameter layout in constant bank 0 (kernels).
    pub params: Vec<ParamSlot>,
    /// The control-flow graph.
    pub cfg: StableDiGraph<Block, Edge>,
    /// Entry block.
    pub entry: BlockId,
    /// Block order for emission.
    pub layout: Vec<BlockId>,
    /// Virtual-register table, indexed by `Reg::V` number.
    pub vregs: Vec<VRegKind>,
    /// Number of CC values defined so far ([`cc`]; numbered `0..cc_values`).
    pub cc_values: u32,
    /// Bytes of `.local` data (user arrays), at the bottom of the frame.
    pub local_bytes: u32,
    /// Bytes of spill slots above the local data.
    pub spill_bytes: u32,
    /// Bytes of `.shared` data the function uses.
    pub shared_bytes: u32,
    /// Registers used after allocation (R0..R{n-1}); 0 before.
    pub num_regs: u32,
    /// True once every virtual register has a single definition.
    pub ssa: bool,
    /// Names of the functions the code calls or takes the address of
    /// (`SrcKind::Sym` ids index this).
    pub symbols: Vec<String>,
    /// The calls, indexed by `Op::Call`.
    pub calls: Vec<CallSite>,
    /// The calling convention of a device function (`None` for kernels).
    pub abi: Option<FuncAbi>,
    /// Visibility to the linker.
    pub linkage: Linkage,
}

impl Function {
    /// An empty function with one empty entry block.
    pub fn new(name: &str, kind: FuncKind) -> Function {
        let mut cfg = StableDiGraph::new();
        let entry = cfg.add_node(Block { name: "entry".into(), ..Block::default() });
        Function {
            name: name.into(),
            kind,
            params: vec![],
            cfg,
            entry,
            layout: vec![entry],
            vregs: vec![],
            cc_values: 0,
            local_bytes: 0,
            spill_bytes: 0,
            shared_bytes: 0,
            num_regs: 0,
            ssa: false,
            symbols: vec![],
            calls: vec![],
            abi: None,
            linkage: Linkage::default(),
        }
    }

    /// The id of symbol `name` in [`Function::symbols`], added if new.
    pub fn symbol(&mut self, name: &str) -> u32 {
        match self.symbols.iter().position(|s| s == name) {
            Some(k) => k as u32,
            None => {
                self.symbols.push(name.to_string());
                self.symbols.len() as u32 - 1
            }
        }
    }

    /// True if the function calls another one (real calls, not inlined ones).
    pub fn has_calls(&self) -> bool {
        !self.calls.is_empty()
    }

    /// A new virtual register of `kind`.
    pub fn new_vreg(&mut self, kind: VRegKind) -> Reg {
        self.vregs.push(kind);
        Reg::V(self.vregs.len() as u32 - 1)
    }

    /// A new CC value number, for an instruction that writes the carry flag ([`cc`]).
    pub fn new_cc(&mut self) -> u32 {
        self.cc_values += 1;
        self.cc_values - 1
    }

    /// A new block (not yet in the layout).
    pub fn new_block(&mut self, name: impl Into<String>) -> BlockId {
        self.cfg.add_node(Block { name: name.into(), ..Block::default() })
    }

    /// Successor edges of `b` in order: the `Taken` edge first, then `Fallthrough`.
    pub fn succ_edges(&self, b: BlockId) -> Vec<EdgeIndex> {
        let mut v: Vec<(EdgeKind, EdgeIndex)> =
            self.cfg.edges_directed(b, Direction::Outgoing).map(|e| (e.weight().kind, e.id())).collect();
        v.sort();
        v.into_iter().map(|x| x.1).collect()
    }

    /// Successor blocks of `b`, `Taken` first.
    pub fn succs(&self, b: BlockId) -> Vec<BlockId> {
        self.succ_edges(b).into_iter().map(|e| self.cfg.edge_endpoints(e).expect("edge exists").1).collect()
    }

    /// Predecessor blocks of `b` (one entry per edge), in a deterministic order.
    pub fn preds(&self, b: BlockId) -> Vec<BlockId> {
        let mut v: Vec<(BlockId, EdgeKind)> =
            self.cfg.edges_directed(b, Direction::Incoming).map(|e| (e.source(), e.weight().kind)).collect();
        v.sort();
        v.into_iter().map(|x| x.0).collect()
    }

    /// Incoming edges of `b`, in the same order as [`Function::preds`].
    pub fn pred_edges(&self, b: BlockId) -> Vec<EdgeIndex> {
        let mut v: Vec<(BlockId, EdgeKind, EdgeIndex)> =
            self.cfg.edges_directed(b, Direction::Incoming).map(|e| (e.source(), e.weight().kind, e.id())).collect();
        v.sort();
        v.into_iter().map(|x| x.2).collect()
    }

    /// Blocks reached from the entry along CFG edges, indexed by `NodeIndex::index()`
    /// (length `cfg.node_bound()`). `O(blocks + edges)`.
    pub fn reached_from_entry(&self) -> Vec<bool> {
        let mut reached = vec![false; self.cfg.node_bound()];
        let mut work = vec![self.entry];
        reached[self.entry.index()] = true;
        while let Some(b) = work.pop() {
            for s in self.cfg.neighbors_directed(b, Direction::Outgoing) {
                if !reached[s.index()] {
                    reached[s.index()] = true;
                    work.push(s);
                }
            }
        }
        reached
    }

    /// Number of instructions (pseudo-ops included).
    pub fn instr_count(&self) -> usize {
        self.layout.iter().map(|b| self.cfg[*b].instrs.len()).sum()
    }

    /// Position of each block in the layout, indexed by `NodeIndex::index()`.
    pub fn layout_positions(&self) -> Vec<usize> {
        let mut pos = vec![usize::MAX; self.cfg.node_bound()];
        for (i, b) in self.layout.iter().enumerate() {
            pos[b.index()] = i;
        }
        pos
    }
}

/// One module in IR form.
#[derive(Clone, Debug, Default)]
pub struct Module {
    /// Functions in source order (kernels and the device functions not inlined).
    pub functions: Vec<Function>,
    /// Initial contents of constant bank 3 (user `.const` data), in bytes.
    pub const_bank: Vec<u8>,
    /// The `.const` module variables in bank 3: (name, byte offset, size in bytes).
    pub const_vars: Vec<(String, u32, u32)>,
    /// The `.global` data sections, every variable's symbol and the address initializers.
    pub data: crate::sass::data::ModuleData,
}

impl VRegNames for Function {
    fn prefix(&self, v: u32) -> &'static str {
        match self.vregs.get(v as usize) {
            Some(VRegKind::Gpr(1)) => "%r",
            Some(VRegKind::Gpr(2)) => "%d",
            Some(VRegKind::Gpr(_)) => "%q",
            Some(VRegKind::Pred) => "%p",
            None => "%?",
        }
    }
    fn width(&self, v: u32) -> u8 {
        self.vregs.get(v as usize).map_or(1, |k| k.width())
    }
    fn symbol(&self, id: u32) -> String {
        self.symbols.get(id as usize).cloned().unwrap_or_else(|| format!("sym{id}"))
    }
}

impl Function {
    /// The label text of block `b` (`BB<n>`, plus its PTX name).
    pub fn block_label(&self, b: u32) -> String {
        format!("BB{b}")
    }

    fn vreg_list(&self, vs: &[u32]) -> String {
        vs.iter()
            .map(|v| {
                let p = self.prefix(*v);
                format!("{p}{v}")
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Text of one instruction in this function (virtual registers named by width).
    pub fn instr_text(&self, i: &Instr) -> String {
        instr_text(i, self, &|b| self.block_label(b))
    }
}

impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            FuncKind::Entry => ".entry",
            FuncKind::Func => ".func",
        };
        writeln!(f, "{kind} {}", self.name)?;
        for p in &self.params {
            writeln!(f, "  // param {} {} at c[0x0][0x{:x}], {} bytes", p.name, p.ty, p.offset, p.size)?;
        }
        if self.local_bytes + self.spill_bytes > 0 {
            writeln!(f, "  // frame: {} bytes local, {} bytes spill", self.local_bytes, self.spill_bytes)?;
        }
        if self.num_regs > 0 {
            writeln!(f, "  // registers: {}", self.num_regs)?;
        }
        for &b in &self.layout {
            let block = &self.cfg[b];
            write!(f, "{}", self.block_label(b.index() as u32))?;
            if !block.params.is_empty() {
                write!(f, "({})", self.vreg_list(&block.params))?;
            }
            write!(f, ":")?;
            let preds = self.preds(b);
            let mut notes = vec![];
            if !block.name.is_empty() {
                notes.push(block.name.clone());
            }
            if !preds.is_empty() {
                notes.push(format!(
                    "preds {}",
                    preds.iter().map(|p| self.block_label(p.index() as u32)).collect::<Vec<_>>().join(" ")
                ));
            }
            if notes.is_empty() {
                writeln!(f)?;
            } else {
                writeln!(f, "  // {}", notes.join(", "))?;
            }
            for i in &block.instrs {
                writeln!(f, "    {} ;", self.instr_text(i))?;
            }
            let edges = self.succ_edges(b);
            if edges.iter().any(|e| !self.cfg[*e].args.is_empty()) {
                let parts: Vec<String> = edges
                    .iter()
                    .map(|e| {
                        let (_, t) = self.cfg.edge_endpoints(*e).expect("edge exists");
                        format!("{}({})", self.block_label(t.index() as u32), self.vreg_list(&self.cfg[*e].args))
                    })
                    .collect();
                writeln!(f, "    // -> {}", parts.join(", "))?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, func) in self.functions.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{func}")?;
        }
        Ok(())
    }
}

/// Calls `f` on every virtual register an instruction reads (sources, address bases,
/// LDC indices, predicate sources, the guard).
pub fn for_each_use(i: &Instr, mut f: impl FnMut(u32)) {
    if let Some(g) = i.guard
        && let Reg::V(v) = g.pred
    {
        f(v);
    }
    for s in &i.srcs {
        match s.kind {
            SrcKind::Pred(Reg::V(v)) => f(v),
            _ => {
                if let Some(r) = s.gprs()
                    && let Reg::V(v) = r.reg
                {
                    f(v)
                }
            }
        }
    }
}

/// Calls `f` on every virtual register an instruction reads, by mutable reference (the
/// same operands as [`for_each_use`]), to rename them.
pub fn for_each_use_mut(i: &mut Instr, mut f: impl FnMut(&mut u32)) {
    if let Some(g) = &mut i.guard
        && let Reg::V(v) = &mut g.pred
    {
        f(v);
    }
    for s in &mut i.srcs {
        if let SrcKind::Pred(Reg::V(v)) = &mut s.kind {
            f(v);
        } else if let Some(r) = s.gprs_mut()
            && let Reg::V(v) = &mut r.reg
        {
            f(v);
        }
    }
}

/// Calls `f` on every virtual register an instruction writes.
pub fn for_each_def(i: &Instr, mut f: impl FnMut(u32)) {
    for d in &i.dsts {
        if let Reg::V(v) = d.reg_of() {
            f(v);
        }
    }
}

/// The destination register of a `Dst`, if virtual.
pub fn dst_vreg(d: &Dst) -> Option<u32> {
    match d.reg_of() {
        Reg::V(v) => Some(v),
        _ => None,
    }
}
