//! The interpreter's resolved form of a PTX module: every function's instructions in one
//! array (a program counter is an index into it), registers numbered per function, labels
//! resolved to program counters, variables resolved to addresses in their state space.
//!
//! Built once per launch by [`super::compile`] from the checked AST; nothing here is shared
//! with the compiler's lowering.

use super::arith::fp;
use crate::ptx::instr::{ArithOp, BoolOp, CmpOp, Cvt, IntMode};
use crate::ptx::types::ScalarType;

/// A register slot, relative to the current call frame's first register.
pub type Slot = u32;

/// A source operand.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Src {
    /// A register (for a predicate: 0 or 1).
    Reg(Slot),
    /// `!%p`: a predicate register, negated.
    RegNot(Slot),
    /// A constant, already converted to the instruction type's bits (also the address of a
    /// `.shared`, `.const` or `.param` variable).
    Imm(u64),
    /// A special register (PTX ISA 10).
    Special(Special),
    /// The `.local` address of a variable of the current frame: frame base plus offset.
    LocalAddr(u32),
}

/// Special registers (PTX ISA 10 "Special Registers"); `u8` fields are the component
/// (0 = `.x`, 1 = `.y`, 2 = `.z`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Special {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    Laneid,
    Warpid,
    Nwarpid,
    Smid,
    Nsmid,
    Gridid,
    LanemaskEq,
    LanemaskLe,
    LanemaskLt,
    LanemaskGe,
    LanemaskGt,
    /// `%clock`, `%clock64`, `%globaltimer*`: the launch's instruction count so far.
    Clock,
    TotalSmemSize,
    DynamicSmemSize,
    /// `%envreg0` .. `%envreg31`: driver-defined (PTX ISA 10); the launch environment of
    /// both executors has every one 0 (the simulator's `c[0x0][0x30..0xb0]`).
    Envreg,
}

/// A destination register: its slot and declared width in bits (1 for a predicate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dst {
    /// Frame-relative slot.
    pub slot: Slot,
    /// Register width; results are extended or chopped to it.
    pub bits: u32,
}

/// An address operand `[base+offset]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Addr {
    /// The base value (register, variable address or constant).
    pub base: Src,
    /// Byte offset (may include a generic window base).
    pub offset: i64,
}

/// The state space a memory instruction addresses (PTX ISA 5.1), or generic addressing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// `.global`: the launch's memory.
    Global,
    /// `.shared`: the CTA's shared memory.
    Shared,
    /// `.local`: the thread's local memory (a stack of call frames).
    Local,
    /// `.const`: the module's constant bank.
    Const,
    /// `.param`: the current call frame's parameter buffer.
    Param,
    /// No space: a generic address (PTX ISA 5.1.9 "Generic Addressing").
    Generic,
}

impl Space {
    /// The name used in errors.
    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Const => "const",
            Space::Param => "param",
            Space::Generic => "generic",
        }
    }
}

/// A pure (or carry-using) computation producing one value: the semantic part of most
/// instructions. See [`super::eval`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Func {
    /// `mov` / a copy of the first source.
    Mov,
    /// Integer/logic op without mode (`add sub div rem min max and or xor not cnot neg abs
    /// shl shr`).
    Int(ArithOp),
    /// `add{.cc}{.sat}`, `sub{.cc}{.sat}`, `addc`, `subc` (carry through `CC.CF`).
    AddSub {
        /// Subtract.
        sub: bool,
        /// `.sat`.
        sat: bool,
        /// Reads `CC.CF` (`addc`/`subc`).
        carry_in: bool,
        /// Writes `CC.CF` (`.cc`).
        carry_out: bool,
    },
    /// Integer `mul.mode`.
    Mul(IntMode),
    /// Integer `mad.mode{.sat}`, `mad.cc`, `madc`.
    Mad {
        /// `.lo/.hi/.wide`.
        mode: IntMode,
        /// `.sat`.
        sat: bool,
        /// Reads `CC.CF` (`madc`).
        carry_in: bool,
        /// Writes `CC.CF`.
        carry_out: bool,
    },
    /// Float binary op.
    FBin(fp::Binary, fp::Mods),
    /// Float `fma`/`mad`.
    Fma(fp::Mods),
    /// Float `neg` (true) / `abs` (false), with `.ftz`.
    FNegAbs(bool, bool),
    /// Float function; `bool` is `.approx`.
    FUnary(fp::Unary, bool, fp::Mods),
    /// `copysign`.
    Copysign,
    /// `testp.op`.
    Testp(&'static str),
    /// `cvt`.
    Cvt(Cvt),
    /// `popc`.
    Popc,
    /// `clz`.
    Clz,
    /// `brev`.
    Brev,
    /// `bfind{.shiftamt}`.
    Bfind(bool),
    /// `bfe`.
    Bfe,
    /// `bfi`.
    Bfi,
    /// `prmt{.mode}`.
    Prmt(Option<&'static str>),
    /// `mul24.hi` (true) / `.lo`.
    Mul24(bool),
    /// `mad24.hi` (true) / `.lo`.
    Mad24(bool),
    /// `sad`.
    Sad,
    /// `lop3`.
    Lop3,
    /// `shf.l` (true) / `.r`, `.clamp` (true) / `.wrap`.
    Shf(bool, bool),
    /// `selp`: `c ? a : b`.
    Selp,
    /// `slct{.ftz}`: `c >= 0 ? a : b` (`c` typed `.s32` or `.f32`; `.ftz` flushes it).
    Slct(ScalarType, bool),
    /// A scalar video instruction `vadd vsub vabsdiff vmin vmax vshl vshr` (PTX ISA 9.7.10)
    /// without selectors: `vop` (the opcode), `.dtype/.atype/.btype` signedness, `.sat`,
    /// the secondary operation `.add/.min/.max`, and `.clamp` (shifts).
    Video {
        /// The opcode.
        vop: &'static str,
        /// Whether `.dtype`, `.atype`, `.btype` are `.s32`.
        signed: [bool; 3],
        /// `.sat`.
        sat: bool,
        /// The secondary operation with `c`.
        op2: Option<&'static str>,
        /// `.clamp` (else `.wrap`) of the shift amount.
        clamp: bool,
    },
    /// `set.cmp{.bool}{.ftz}.dtype.stype`: 1.0f or all ones when true.
    Set {
        /// Comparison.
        cmp: CmpOp,
        /// Combination with a predicate.
        bool_op: Option<BoolOp>,
        /// `.ftz`.
        ftz: bool,
        /// Source type (the instruction type is the destination type).
        src: ScalarType,
    },
}

/// A resolved instruction.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// A texture or surface instruction (module `tex`).
    Tex(Box<super::tex::TexInstr>),
    /// A [`Func`] of the sources (each read as its type), written as `dst_ty` to `dst`.
    Compute {
        /// What to compute.
        func: Func,
        /// Instruction type.
        ty: ScalarType,
        /// Destination (`None`: sink).
        dst: Option<Dst>,
        /// How the result is extended to the destination register.
        dst_ty: ScalarType,
        /// Sources with the type they are read as.
        srcs: Vec<(Src, ScalarType)>,
    },
    /// `setp` (PTX ISA 9.7.8.6.1): `p = (a cmp b) op c`, `q = !(a cmp b) op c`.
    Setp {
        /// Comparison.
        cmp: CmpOp,
        /// Combination with `c`.
        bool_op: Option<BoolOp>,
        /// `.ftz`.
        ftz: bool,
        /// Operand type.
        ty: ScalarType,
        /// First destination.
        p: Option<Dst>,
        /// Second destination of `p|q`.
        q: Option<Dst>,
        /// Operands.
        a: Src,
        /// Operands.
        b: Src,
        /// Predicate combined by `bool_op`.
        c: Option<Src>,
    },
    /// `ld` (PTX ISA 9.7.9.8): elements of `ty` from `addr` into `dsts` (sinks `None`).
    Ld {
        /// Space.
        space: Space,
        /// Element type.
        ty: ScalarType,
        /// One destination per vector element.
        dsts: Vec<Option<Dst>>,
        /// Address.
        addr: Addr,
    },
    /// `st` (PTX ISA 9.7.9.10).
    St {
        /// Space.
        space: Space,
        /// Element type.
        ty: ScalarType,
        /// One source per vector element.
        srcs: Vec<Src>,
        /// Address.
        addr: Addr,
    },
    /// `mov.bN d, {a, b, ..}`: packs equal-width elements, first one lowest.
    Pack {
        /// Destination.
        dst: Dst,
        /// Element width in bits.
        elem_bits: u32,
        /// Elements.
        srcs: Vec<Src>,
    },
    /// `mov.bN {a, b, ..}, s`: unpacks.
    Unpack {
        /// Destinations (sinks `None`).
        dsts: Vec<Option<Dst>>,
        /// Element width in bits.
        elem_bits: u32,
        /// Source.
        src: Src,
    },
    /// `cvta{.to}.space.size` (PTX ISA 9.7.9.19).
    Cvta {
        /// Generic to `space`.
        to: bool,
        /// `Shared`, `Local`, `Const` or `Global`.
        space: Space,
        /// Destination.
        dst: Option<Dst>,
        /// Address size in bits (32 or 64).
        bits: u32,
        /// Source address.
        src: Src,
    },
    /// `isspacep.space p, a` (PTX ISA 9.7.9.20).
    Isspacep {
        /// The space tested.
        space: Space,
        /// Predicate destination.
        dst: Option<Dst>,
        /// Generic address.
        src: Src,
    },
    /// `atom` / `red` (PTX ISA 9.7.13.5, 9.7.13.6): reads the old value at `addr`,
    /// stores `op(old, b, c)`, and (`atom`) writes the old value to `dst`. The
    /// interpreter runs one thread instruction at a time, so every access is atomic.
    Atom {
        /// `Global`, `Shared` or `Generic`.
        space: Space,
        /// The operation.
        op: AtomOp,
        /// Operand type.
        ty: ScalarType,
        /// The old value's destination (`None` for `red` or a sink).
        dst: Option<Dst>,
        /// Address.
        addr: Addr,
        /// Operand `b`.
        b: Src,
        /// Operand `c` (`cas` only: the new value).
        c: Option<Src>,
    },
    /// `bra` to a program counter.
    Bra(u32),
    /// `call` (PTX ISA 9.7.12.2).
    Call {
        /// Index into [`Program::funcs`].
        callee: u32,
        /// Arguments, one per callee parameter.
        args: Vec<Arg>,
        /// Where each callee return parameter goes.
        rets: Vec<Arg>,
    },
    /// `call (rets), %fptr, (args), proto;`: a call of the function whose address
    /// ([`FUNC_ADDR_BASE`]) `target` holds (PTX ISA 9.7.12.2 indirect call).
    CallIndirect {
        /// The address operand.
        target: Src,
        /// Arguments, one per prototype parameter.
        args: Vec<Arg>,
        /// Where each return parameter goes.
        rets: Vec<Arg>,
    },
    /// A call of a function of the CUDA runtime the module declares `.extern`.
    Builtin {
        /// Which.
        func: Builtin,
        /// Arguments.
        args: Vec<Arg>,
        /// Where each return parameter goes.
        rets: Vec<Arg>,
    },
    /// `ret`.
    Ret,
    /// `exit`.
    Exit,
    /// `bar.sync a{, b}` / `bar.arrive a, b` (PTX ISA 9.7.13.1).
    Bar {
        /// Barrier id (0..15).
        id: Src,
        /// Expected thread count; `None` is every thread of the CTA.
        count: Option<Src>,
        /// `bar.arrive`: signal without waiting.
        arrive: bool,
        /// `bar.red.op d, a{, b}, {!}c` (PTX ISA 9.7.13.1): the reduction, the thread's
        /// predicate `c` and the destination written when the barrier releases.
        red: Option<(BarRed, Src, Dst)>,
    },
    /// A warp-collective instruction, executed together by every lane of the warp at this
    /// program counter (see [`super::warp`]).
    Warp(WarpOp),
    /// No effect here (`membar`, `fence`, `prefetch`, `nanosleep`; `brkpt`: no debugger
    /// is attached, execution goes on).
    Nop,
    /// `trap`: ends the launch with [`crate::exec::ExecError::Trap`].
    Trap,
    /// A form the interpreter does not model; executing it is
    /// [`crate::exec::ExecError::Unsupported`] with this text.
    Unsupported(String),
}

/// Warp-level instructions (PTX ISA 9.7.8.6 shfl.sync, 9.7.13.8 vote.sync, 9.7.13.12
/// activemask). `mask` is the `membermask` operand (`None` for
/// the pre-`.sync` forms: every lane executing the instruction).
#[derive(Clone, Debug, PartialEq)]
pub enum WarpOp {
    /// `shfl{.sync}.mode.b32 d{|p}, a, b, c{, membermask}`.
    Shfl {
        /// `.up .down .bfly .idx`.
        mode: ShflMode,
        /// Value destination.
        dst: Option<Dst>,
        /// Predicate destination: whether the source lane was in range.
        pred: Option<Dst>,
        /// The value each lane offers.
        a: Src,
        /// Lane offset or index.
        b: Src,
        /// Clamp value (bits 0..4) and segment mask (bits 8..12).
        c: Src,
        /// `membermask`.
        mask: Option<Src>,
    },
    /// `vote{.sync}.mode d, {!}a{, membermask}`.
    Vote {
        /// `.all .any .uni .ballot`.
        mode: VoteMode,
        /// Destination (a predicate, or `.b32` for `.ballot`).
        dst: Option<Dst>,
        /// The predicate each lane votes with.
        a: Src,
        /// `membermask`.
        mask: Option<Src>,
    },
    /// `activemask.b32 d`: the lanes executing this instruction.
    Activemask(Option<Dst>),
}

/// `shfl` source lane selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

/// `vote` reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

/// The reduction of `bar.red` (PTX ISA 9.7.13.1): `.popc.u32` counts the threads whose
/// predicate is true, `.and.pred` / `.or.pred` combine the predicates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum BarRed {
    Popc,
    And,
    Or,
}

/// The operation of an `atom`/`red` (PTX ISA 9.7.13.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomOp {
    /// `.and`.
    And,
    /// `.or`.
    Or,
    /// `.xor`.
    Xor,
    /// `.exch`: stores `b`.
    Exch,
    /// `.cas`: stores `c` if `old == b`.
    Cas,
    /// `.add` (integer, or `.f32` / `.f64` rounded to nearest; `.f32` flushes subnormals).
    Add,
    /// `.inc`: `old >= b ? 0 : old + 1` (unsigned).
    Inc,
    /// `.dec`: `old == 0 || old > b ? b : old - 1` (unsigned).
    Dec,
    /// `.min` (signed for `.sN`).
    Min,
    /// `.max` (signed for `.sN`).
    Max,
}

/// The CUDA runtime functions the interpreter provides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// `vprintf(fmt, args)`: device `printf` (`crate::exec::printf`).
    Vprintf,
    /// `__assertfail(message, file, line, function, char size)`: a failed `assert`.
    Assertfail,
}

impl Builtin {
    /// The runtime function named `name`, if the interpreter has it.
    pub fn by_name(name: &str) -> Option<Builtin> {
        match name {
            "vprintf" => Some(Builtin::Vprintf),
            "__assertfail" => Some(Builtin::Assertfail),
            _ => None,
        }
    }
}

/// Where the interpreter's function addresses start (`mov.u64 %rd, f`): function `f` of
/// the module's `k`-th item is at `FUNC_ADDR_BASE + 16 * k`. They are no memory addresses;
/// only an indirect call reads them.
pub const FUNC_ADDR_BASE: u64 = 0x7f00_0000_0000;

/// A call argument or return destination in the caller's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arg {
    /// A caller `.param` variable: its offset in the caller's parameter buffer.
    Param(u32),
    /// A register or constant (arguments only).
    Value(Src),
    /// A register (return destinations only).
    Reg(Dst),
}

/// Where a parameter lives in the callee's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamLoc {
    /// In the frame's parameter buffer: offset and size in bytes.
    Param(u32, u32),
    /// A `.reg` parameter: a register of the callee.
    Reg(Dst),
    /// An unsized array parameter (`.param .b8 va[]`, the last one): at this offset, the
    /// caller's argument variable and everything after it in the caller's buffer.
    Rest(u32),
}

/// One instruction with its guard.
#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    /// `@p` / `@!p`: slot and negation.
    pub guard: Option<(Slot, bool)>,
    /// The operation.
    pub op: Op,
    /// The instruction as written (opcode and modifiers), for errors.
    pub text: String,
}

/// A compiled function.
#[derive(Clone, Debug, PartialEq)]
pub struct FuncInfo {
    /// Name.
    pub name: String,
    /// Program counter of the first instruction.
    pub entry: u32,
    /// Register slots of one frame.
    pub nregs: u32,
    /// Parameters in order.
    pub params: Vec<ParamLoc>,
    /// Return parameters in order.
    pub rets: Vec<ParamLoc>,
    /// Bytes of the frame's parameter buffer (parameters, return parameters, body `.param`
    /// variables).
    pub param_bytes: u32,
    /// Bytes of the frame's `.local` variables.
    pub local_bytes: u32,
    /// Alignment of the frame's `.local` block.
    pub local_align: u32,
}

impl Special {
    /// The special register `name` with component `comp` (PTX ISA 10 "Special Registers").
    pub fn from_name(name: &str, comp: Option<char>) -> Option<Special> {
        let c = match comp {
            Some('x') | None => 0,
            Some('y') => 1,
            Some('z') => 2,
            Some(_) => return None,
        };
        Some(match name {
            "%tid" => Special::Tid(c),
            "%ntid" => Special::Ntid(c),
            "%ctaid" => Special::Ctaid(c),
            "%nctaid" => Special::Nctaid(c),
            "%laneid" => Special::Laneid,
            "%warpid" => Special::Warpid,
            "%nwarpid" => Special::Nwarpid,
            "%smid" => Special::Smid,
            "%nsmid" => Special::Nsmid,
            "%gridid" => Special::Gridid,
            "%lanemask_eq" => Special::LanemaskEq,
            "%lanemask_le" => Special::LanemaskLe,
            "%lanemask_lt" => Special::LanemaskLt,
            "%lanemask_ge" => Special::LanemaskGe,
            "%lanemask_gt" => Special::LanemaskGt,
            "%clock" | "%clock_hi" | "%clock64" | "%globaltimer" | "%globaltimer_lo" | "%globaltimer_hi" => {
                Special::Clock
            }
            "%total_smem_size" => Special::TotalSmemSize,
            "%dynamic_smem_size" => Special::DynamicSmemSize,
            n if crate::ptx::check::envreg(n).is_some() => Special::Envreg,
            _ => return None,
        })
    }
}

/// A compiled module, ready to run one kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// Every instruction of every compiled function.
    pub insts: Vec<Inst>,
    /// Compiled functions; index 0 is the kernel.
    pub funcs: Vec<FuncInfo>,
    /// Bytes of static shared memory per CTA (module- and function-scope `.shared`
    /// variables).
    pub shared_bytes: u32,
    /// Shared address of dynamic shared memory (every `.extern .shared` array).
    pub dynamic_base: u32,
    /// The `.const` bank: every module `.const` variable with its initializer.
    pub consts: Vec<u8>,
    /// Module `.global` variables: (allocation name, address, initial bytes).
    pub globals: Vec<(String, u64, Vec<u8>)>,
    /// `.const` and `.global` module variables by name.
    pub vars: std::collections::HashMap<String, super::layout::ModVar>,
    /// Size of the kernel's parameter space (`param_layout`).
    pub kernel_param_bytes: u32,
    /// Compiled functions by address ([`FUNC_ADDR_BASE`]).
    pub by_addr: std::collections::HashMap<u64, u32>,
}
