//! A regalloc2 view of an SSA IR function (the role `machinst/vcode.rs` plays in
//! Cranelift): blocks in layout order, instructions numbered linearly, and for each
//! instruction the operands of one register file.
//!
//! The allocator runs twice over the same function: once for general-purpose registers
//! ([`File::Gpr`]: class `Int` = 32-bit values, `Float` = 64-bit pairs, `Vector` = 128-bit
//! quads, each register of a class being an abstract *slot* that `pack` later places in
//! the physical file), once for predicates ([`File::Pred`]: class `Int`, registers P0..P6).

use crate::ir::{BlockId, Function, VRegKind};
use crate::sass::instr::{Dst, Instr, Reg, SrcKind};
use crate::sass::op::Op;
use regalloc2::{Block, Inst, InstRange, Operand, PRegSet, RegClass, VReg};

/// Which register file an allocation pass sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum File {
    /// General-purpose registers, classes by width.
    Gpr,
    /// Predicate registers.
    Pred,
}

/// Where an operand of a regalloc2 instruction sits in the IR instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandSite {
    /// The guard predicate.
    Guard,
    /// Source `k` (register, address base, LDC index, or predicate).
    Src(u16),
    /// Destination `k`.
    Dst(u16),
}

/// The regalloc2 class of a virtual register in `file`, if the file sees it.
pub fn class_of(kind: VRegKind, file: File) -> Option<RegClass> {
    match (kind, file) {
        (VRegKind::Gpr(1), File::Gpr) => Some(RegClass::Int),
        (VRegKind::Gpr(2), File::Gpr) => Some(RegClass::Float),
        (VRegKind::Gpr(_), File::Gpr) => Some(RegClass::Vector),
        (VRegKind::Pred, File::Pred) => Some(RegClass::Int),
        _ => None,
    }
}

/// Width in 32-bit registers of a GPR class.
pub fn class_width(c: RegClass) -> u8 {
    match c {
        RegClass::Int => 1,
        RegClass::Float => 2,
        RegClass::Vector => 4,
    }
}

/// The linearized function as regalloc2 sees it.
pub struct Adapter<'f> {
    /// The IR function.
    pub f: &'f Function,
    /// The register file this view covers.
    pub file: File,
    /// Blocks in layout order.
    pub blocks: Vec<BlockId>,
    /// Instruction range of each block.
    ranges: Vec<InstRange>,
    /// (block, index in block) of every linear instruction.
    pub insts: Vec<(BlockId, u32)>,
    succs: Vec<Vec<Block>>,
    preds: Vec<Vec<Block>>,
    params: Vec<Vec<VReg>>,
    /// Edge arguments per block and successor index.
    args: Vec<Vec<Vec<VReg>>>,
    /// The operands of all instructions, one after the other: those of linear instruction
    /// `i` are `operands[starts[i]..starts[i + 1]]` (one vector, not one per instruction:
    /// at 139k instructions, nested-loops 100k lines, the per-instruction vectors of the
    /// views of one allocation held about 90 MiB).
    operands: Vec<Operand>,
    /// Where each operand comes from, parallel to `operands`.
    sites: Vec<OperandSite>,
    /// Start of each instruction's operands in `operands` and `sites`, and their end.
    starts: Vec<u32>,
    /// What a call clobbers (the caller-saved slots, `calls::clobbers`); set before each
    /// regalloc2 run.
    pub call_clobbers: std::cell::Cell<PRegSet>,
}

/// Which virtual registers a view covers: those of its file and, for general-purpose
/// registers split into banks (`banks.rs`), of one bank.
#[derive(Clone, Copy)]
struct Selection<'f> {
    f: &'f Function,
    file: File,
    bank: Option<(&'f [u8], u8)>,
}

impl Selection<'_> {
    fn vreg(&self, v: u32) -> Option<VReg> {
        if let Some((of, b)) = self.bank
            && of[v as usize] != b
        {
            return None;
        }
        class_of(self.f.vregs[v as usize], self.file).map(|c| VReg::new(v as usize, c))
    }
}

/// Appends the operands of one IR instruction in a view to `ops` and their sites to
/// `sites`: uses (guard, sources) then definitions.
fn inst_operands(sel: Selection, i: &Instr, ops: &mut Vec<Operand>, sites: &mut Vec<OperandSite>) {
    let add_use = |v: u32, site: OperandSite, ops: &mut Vec<Operand>, sites: &mut Vec<OperandSite>| {
        if let Some(r) = sel.vreg(v) {
            ops.push(Operand::reg_use(r));
            sites.push(site);
        }
    };
    if let Some(g) = i.guard
        && let Reg::V(v) = g.pred
    {
        add_use(v, OperandSite::Guard, ops, sites);
    }
    for (k, s) in i.srcs.iter().enumerate() {
        let v = match s.kind {
            SrcKind::Pred(Reg::V(v)) => Some(v),
            _ => s.gprs().and_then(|r| match r.reg {
                Reg::V(v) => Some(v),
                _ => None,
            }),
        };
        if let Some(v) = v {
            add_use(v, OperandSite::Src(k as u16), ops, sites);
        }
    }
    for (k, d) in i.dsts.iter().enumerate() {
        let v = match d {
            Dst::Reg(r) => match r.reg {
                Reg::V(v) => v,
                _ => continue,
            },
            Dst::Pred(Reg::V(v)) => *v,
            _ => continue,
        };
        if let Some(r) = sel.vreg(v) {
            ops.push(Operand::reg_def(r));
            sites.push(OperandSite::Dst(k as u16));
        }
    }
}

impl<'f> Adapter<'f> {
    /// Builds the view of `f` for `file`, restricted to the virtual registers `of` puts in
    /// bank `b` when `bank` is `Some((of, b))`. `f` must be in SSA form without critical
    /// edges.
    ///
    /// Blocks are numbered in reverse postorder (not layout order): every block then comes
    /// after one of its predecessors, which regalloc2's checker needs (it turns a block it
    /// visits before any predecessor into an empty state that its meet never recovers from).
    pub fn new(f: &'f Function, file: File, bank: Option<(&'f [u8], u8)>) -> Adapter<'f> {
        let sel = Selection { f, file, bank };
        let mut blocks = vec![];
        let mut dfs = petgraph::visit::DfsPostOrder::new(&f.cfg, f.entry);
        while let Some(b) = dfs.next(&f.cfg) {
            blocks.push(b);
        }
        blocks.reverse();
        let mut index = vec![usize::MAX; f.cfg.node_bound()];
        for (k, b) in blocks.iter().enumerate() {
            index[b.index()] = k;
        }
        let mut a = Adapter {
            f,
            file,
            blocks: blocks.clone(),
            ranges: vec![],
            insts: vec![],
            succs: vec![],
            preds: vec![],
            params: vec![],
            args: vec![],
            operands: vec![],
            sites: vec![],
            starts: vec![0],
            call_clobbers: std::cell::Cell::new(PRegSet::empty()),
        };
        for &b in &blocks {
            let start = a.insts.len();
            for (k, i) in f.cfg[b].instrs.iter().enumerate() {
                a.insts.push((b, k as u32));
                inst_operands(sel, i, &mut a.operands, &mut a.sites);
                a.starts.push(a.operands.len() as u32);
            }
            a.ranges.push(InstRange::new(Inst::new(start), Inst::new(a.insts.len())));
            let edges = f.succ_edges(b);
            a.succs.push(
                edges.iter().map(|e| Block::new(index[f.cfg.edge_endpoints(*e).expect("edge").1.index()])).collect(),
            );
            a.args.push(edges.iter().map(|e| f.cfg[*e].args.iter().filter_map(|v| sel.vreg(*v)).collect()).collect());
            // Predecessors latest first (in reverse postorder): regalloc2 0.15's dominator
            // computation (Cooper-Harvey-Kennedy, `domtree::calculate`) starts from the first
            // processed predecessor and walks each further one up to the common dominator found
            // so far; in the program's order, a join of many branches of one chain (`setp`/`@p
            // bra` to one label) walks the whole chain per predecessor: quadratic.
            let mut preds: Vec<Block> = f.preds(b).iter().map(|p| Block::new(index[p.index()])).collect();
            preds.sort_unstable_by(|x, y| y.cmp(x));
            a.preds.push(preds);
            a.params.push(f.cfg[b].params.iter().filter_map(|v| sel.vreg(*v)).collect());
        }
        a
    }

    /// The IR instruction at linear index `i`.
    pub fn instr(&self, i: usize) -> &Instr {
        let (b, k) = self.insts[i];
        &self.f.cfg[b].instrs[k as usize]
    }

    /// Where the operands of linear instruction `i` sit in the IR instruction, in
    /// regalloc2's operand order.
    pub fn sites(&self, i: usize) -> &[OperandSite] {
        &self.sites[self.starts[i] as usize..self.starts[i + 1] as usize]
    }
}

use petgraph::visit::NodeIndexable;

impl regalloc2::Function for Adapter<'_> {
    fn num_insts(&self) -> usize {
        self.insts.len()
    }
    fn num_blocks(&self) -> usize {
        self.blocks.len()
    }
    fn entry_block(&self) -> Block {
        Block::new(0)
    }
    fn block_insns(&self, block: Block) -> InstRange {
        self.ranges[block.index()]
    }
    fn block_succs(&self, block: Block) -> &[Block] {
        &self.succs[block.index()]
    }
    fn block_preds(&self, block: Block) -> &[Block] {
        &self.preds[block.index()]
    }
    fn block_params(&self, block: Block) -> &[VReg] {
        &self.params[block.index()]
    }
    fn is_ret(&self, insn: Inst) -> bool {
        let i = self.instr(insn.index());
        matches!(i.op, Op::Exit | Op::Ret) && i.guard.is_none() && self.is_last(insn)
    }
    fn is_branch(&self, insn: Inst) -> bool {
        matches!(self.instr(insn.index()).op, Op::Bra | Op::Sync | Op::Brk) && self.is_last(insn)
    }
    fn branch_blockparams(&self, block: Block, _insn: Inst, succ_idx: usize) -> &[VReg] {
        &self.args[block.index()][succ_idx]
    }
    fn inst_operands(&self, insn: Inst) -> &[Operand] {
        let i = insn.index();
        &self.operands[self.starts[i] as usize..self.starts[i + 1] as usize]
    }
    fn inst_clobbers(&self, insn: Inst) -> PRegSet {
        match self.instr(insn.index()).op {
            // A call in the private convention clobbers no slot: its arguments and results
            // are operands, and packing keeps values live across it out of
            // `PRIVATE_CLOBBERED` (`pack`).
            Op::Call(site) if self.file == File::Gpr && self.f.calls[site as usize].preserves => PRegSet::empty(),
            Op::Call(_) => self.call_clobbers.get(),
            _ => PRegSet::empty(),
        }
    }
    fn num_vregs(&self) -> usize {
        self.f.vregs.len()
    }
    fn spillslot_size(&self, regclass: RegClass) -> usize {
        match self.file {
            File::Gpr => class_width(regclass) as usize,
            File::Pred => 1,
        }
    }
}

impl Adapter<'_> {
    fn is_last(&self, insn: Inst) -> bool {
        let (b, k) = self.insts[insn.index()];
        k as usize + 1 == self.f.cfg[b].instrs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Edge, EdgeKind};
    use regalloc2::Function as _;

    /// A chain of blocks, each branching to one join (`setp`/`@p bra` to one exit label):
    /// the join's predecessors go to regalloc2 latest first, which keeps its dominator
    /// computation linear (first-listed in program order, each further predecessor walks the
    /// chain back to the first: 5 * 10^7 steps at 10,000 links).
    #[test]
    fn join_predecessors_latest_first() {
        let mut f = Function::new("chain", crate::ptx::ast::FuncKind::Entry);
        let join = f.new_block("join");
        let mut prev = f.entry;
        for k in 0..50 {
            let link = f.new_block(format!("l{k}"));
            f.cfg.add_edge(prev, link, Edge { kind: EdgeKind::Fallthrough, args: vec![] });
            let mid = f.new_block(format!("m{k}"));
            f.cfg.add_edge(link, mid, Edge { kind: EdgeKind::Taken, args: vec![] });
            f.cfg.add_edge(mid, join, Edge { kind: EdgeKind::Taken, args: vec![] });
            prev = link;
        }
        f.cfg.add_edge(prev, join, Edge { kind: EdgeKind::Fallthrough, args: vec![] });
        let a = Adapter::new(&f, File::Gpr, None);
        let j = Block::new(a.blocks.iter().position(|&b| b == join).expect("join numbered"));
        let preds = a.block_preds(j);
        assert_eq!(preds.len(), 51);
        assert!(preds.windows(2).all(|w| w[0] > w[1]), "{preds:?}");
    }
}
