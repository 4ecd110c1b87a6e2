//! The SPIR-V dialect's [`Target`]: the shared lowering's primitive operations on a
//! [`Shell`]. Values are SSA ids; variables are function variables (the driver's own and the
//! kernel's locals, a variable per leaf); local arrays live in the invocation's frame of
//! scratch memory, reached by device address like streams; the parameter block is read
//! through its device address (push-constant word 0). Index leaves are `u64`s.

use super::flow::{IfFrame, LoopFrame};
use super::shell::Shell;
use crate::leaves::{has_array, leaves};
use crate::lower::{Binding, Memory, Root, StreamRef, Target};
use crate::CompileError;
use brook_ir::{
    BinaryOp, Expr, Handle, Kernel, Literal, Local, MathFun, Module, ParamId, ScalarKind, Type,
    UnaryOp,
};
use rspirv::spirv::{LoopControl, Word};
use std::collections::HashMap;

/// Where a kernel local lives.
#[derive(Clone, Debug)]
pub enum LocalStore {
    /// A function variable per leaf.
    Vars(Vec<Word>),
    /// In the invocation's scratch frame at this address (arrays), in C layout, `size` bytes
    /// (the frame keeps the next local 16 bytes on).
    Memory { addr: Word, size: u32 },
    /// A group's `shared` local: at this byte offset (a `u64` constant) of the group's
    /// shared array ([`super::group`]).
    Shared { addr: Word },
}

/// The lowering state of one entry point.
pub struct Lower<'a> {
    pub module: &'a Module,
    pub kernel: &'a Kernel,
    pub s: Shell,
    pub bindings: Vec<Binding<Word, Word>>,
    pub locals: Vec<LocalStore>,
    /// The parameter block's address.
    pub block: Word,
    /// The domain's extents and the current position (slowest first), `u64`s.
    pub domain: Vec<Word>,
    pub pos: Vec<Word>,
    /// Each variable's value type.
    var_types: HashMap<Word, Word>,
    memo: HashMap<Handle<Expr>, Vec<Word>>,
    bounds: brook_ir::footprint::IndexBounds<'a>,
    induction: crate::lower::induction::Induction<Word, Word>,
    /// The code being written cannot run (it follows a jump).
    dead: bool,
    /// The loop bodies and continuing parts being written, innermost last.
    scopes: Vec<FlagScope>,
    /// The next loop runs its body once ([`Target::loop_body`]): `Some(needs a flag)`.
    next_once: Option<bool>,
    /// The next loop's body or continuing part holds a `return` ([`Target::loop_body`]).
    next_returns: bool,
    /// How deeply the arms being written nest (`if` arms and continuing parts).
    depth: usize,
    /// Guards opened after a `break` in a continuing part, each with its depth: the rest of
    /// the arm runs only while the loop's flag is clear (closed when the arm ends).
    guards: Vec<(usize, super::flow::IfFrame)>,
    /// The loops whose continuing part or run-once body has broken (the rest of each
    /// enclosing arm of it is guarded).
    broken: Vec<Word>,
    /// A construct the dialect cannot write, found while lowering (reported at the end).
    pub problem: Option<CompileError>,
    /// The invocation's index in the dispatch (pass entries: [`crate::gpu::Gpu`]).
    pub thread: Option<Word>,
    /// The combine function a reduction entry calls, once declared ([`super::reduce`]).
    pub combine: Option<super::reduce::CombineFn>,
    /// A thread-group kernel's group ([`super::group`]).
    pub group: Option<super::group::Group>,
    /// The element address variables and their streams, moved with the position
    /// ([`Lower::set_elements`]).
    elements: Vec<(Word, StreamRef<Word>)>,
    /// Where a kernel `return` goes: the end of the instance being written (the map
    /// driver's run-once construct), or `None` (it ends the invocation).
    pub instance_end: Option<super::flow::LoopFrame>,
}

/// An `if` and whether the code before it was reachable.
pub struct If {
    frame: IfFrame,
    live: bool,
}

/// A loop, whether the code before it was reachable, and its number.
#[derive(Clone, Copy, Debug)]
pub struct Loop {
    kind: LoopKind,
    live: bool,
    id: Word,
}

/// How a loop is written.
#[derive(Clone, Copy, Debug)]
enum LoopKind {
    /// A loop construct.
    Looping(LoopFrame),
    /// A body that runs once (it ends in `break` and nothing continues it, as an inlined
    /// subkernel call's): no loop; where statements follow a `break` in the body, the break
    /// sets `flag` and the rest of each enclosing arm is guarded by it (else a `break` only
    /// ends its arm). Thousands of inlined calls as loop constructs took lavapipe's compiler
    /// minutes.
    Once { flag: Option<Word> },
}

/// A loop's body or continuing part being written: a `break` from a continuing part or a
/// body that runs once sets `flag`; `flag` is `None` for a loop's body, where a `break`
/// branches.
#[derive(Clone, Copy, Debug)]
struct FlagScope {
    loop_id: Word,
    flag: Option<Word>,
}

impl<'a> Lower<'a> {
    pub fn new(module: &'a Module, kernel: &'a Kernel, s: Shell, block: Word) -> Self {
        let induction = crate::lower::induction::Induction::new(s.tuning.induction);
        Lower {
            module,
            kernel,
            s,
            bindings: vec![Binding::Unbound; kernel.params.len()],
            locals: Vec::new(),
            block,
            domain: Vec::new(),
            pos: Vec::new(),
            var_types: HashMap::new(),
            memo: HashMap::new(),
            bounds: brook_ir::footprint::IndexBounds::new(kernel),
            induction,
            dead: false,
            scopes: Vec::new(),
            next_once: None,
            next_returns: false,
            depth: 0,
            guards: Vec::new(),
            broken: Vec::new(),
            problem: None,
            thread: None,
            combine: None,
            group: None,
            elements: Vec::new(),
            instance_end: None,
        }
    }

    /// Lowers the kernel body where the shell stands.
    pub fn body(&mut self) -> Result<(), CompileError> {
        let body = &self.kernel.body;
        crate::lower::stmt::block(self, body, None)?;
        match self.problem.take() {
            Some(problem) => Err(problem),
            None => Ok(()),
        }
    }

    /// A variable holding values of type `ty`.
    pub fn variable(&mut self, ty: Word) -> Word {
        let var = self.s.function_variable(ty);
        self.var_types.insert(var, ty);
        var
    }

    /// Places every local: a variable per leaf, or (arrays) `bytes` of the frame at
    /// `frame`, or (a group kernel's `shared` locals) the group's shared array, returning the
    /// frame's size.
    pub fn place_locals(&mut self, frame: Word) -> u32 {
        let mut stores = Vec::new();
        let (mut used, mut shared) = (0u32, 0u32);
        for (_, local) in self.kernel.locals.iter() {
            if local.shared && self.group.is_some() {
                let at = shared.next_multiple_of(16);
                shared = at + self.module.layout(&local.ty).size.max(1);
                let addr = self.s.const_u64(u64::from(at));
                stores.push(LocalStore::Shared { addr });
            } else if has_array(self.module, &local.ty) {
                let layout = self.module.layout(&local.ty);
                let at = used.next_multiple_of(16);
                used = at + layout.size.max(1);
                let offset = self.s.const_u64(u64::from(at));
                let u64_ty = self.s.u64_ty();
                let addr = self
                    .s
                    .b
                    .i_add(u64_ty, None, frame, offset)
                    .expect("in a block");
                stores.push(LocalStore::Memory {
                    addr,
                    size: layout.size,
                });
            } else {
                let vars = leaves(self.module, &local.ty)
                    .iter()
                    .map(|leaf| {
                        let ty = self.s.container(leaf.kind);
                        self.variable(ty)
                    })
                    .collect();
                stores.push(LocalStore::Vars(vars));
            }
        }
        self.locals = stores;
        self.declare_shared(shared.next_multiple_of(16));
        used.next_multiple_of(16)
    }

    /// Zeroes every local some read may find unassigned (at the start of the instance, and
    /// of each combine step): the others are stored before every read
    /// ([`brook_ir::unassigned`]).
    pub fn zero_locals(&mut self) {
        let unassigned = brook_ir::unassigned::Unassigned::of(self.kernel);
        for (h, local) in self.kernel.locals.iter() {
            if !unassigned.needs_zero(h.index()) {
                continue;
            }
            match self.locals[h.index()].clone() {
                LocalStore::Vars(vars) => {
                    let values = leaves(self.module, &local.ty);
                    for (var, leaf) in vars.iter().zip(values) {
                        let zero = self.s.literal(leaf.kind, 0);
                        self.s.write(*var, zero);
                    }
                }
                LocalStore::Memory { addr, size } => self.zero_memory(addr, size),
                // Zeroed once, when the group starts.
                LocalStore::Shared { .. } => {}
            }
        }
    }

    /// Zeroes `size` bytes (rounded up to words) at `addr`: word by word when they are few,
    /// else in a loop.
    fn zero_memory(&mut self, addr: Word, size: u32) {
        let words = size.div_ceil(4);
        let zero = self.s.const_u32(0);
        if words <= 16 {
            for at in 0..words {
                let cell = self.leaf_address(addr, 4 * at);
                self.s.store(super::shell::Scalar::U32, cell, zero);
            }
            return;
        }
        let counter = self.temporary(ScalarKind::U64);
        let frame = self.begin_loop();
        let at = self.read_var(counter);
        let end = self.index_constant(u64::from(words));
        let done = self.u64_op(BinaryOp::Ge, at, end);
        let stop = self.begin_if(done);
        self.jump_break(frame);
        self.end_if(stop);
        let cell = self.s.address(addr, at, 4);
        self.s.store(super::shell::Scalar::U32, cell, zero);
        let one = self.index_constant(1);
        let next = self.u64_op(BinaryOp::Add, at, one);
        self.write_var(counter, next);
        self.begin_continuing(frame);
        self.end_loop(frame);
    }

    /// Closes the guards opened in the arm that is ending (at the current depth or deeper).
    fn close_guards(&mut self) {
        while let Some(&(depth, _)) = self.guards.last() {
            if depth < self.depth {
                break;
            }
            let (_, guard) = self.guards.pop().expect("a guard");
            self.s.end_if(guard);
        }
    }

    /// After an `if` in a continuing part whose loop has broken: the rest of the arm runs only
    /// while the loop's flag is clear (one guard per arm).
    fn guard_after_break(&mut self) {
        let Some(&FlagScope {
            loop_id,
            flag: Some(flag),
            ..
        }) = self.scopes.last()
        else {
            return;
        };
        if !self.broken.contains(&loop_id) {
            return;
        }
        if self.guards.last().is_some_and(|&(d, _)| d == self.depth) || self.dead {
            return;
        }
        let bool_ty = self.s.b.type_bool();
        let left = self.s.read(bool_ty, flag);
        let stay = self
            .s
            .b
            .logical_not(bool_ty, None, left)
            .expect("in a block");
        let guard = self.s.begin_if(stay);
        self.guards.push((self.depth, guard));
    }

    /// Notes a construct the dialect cannot write (the first is reported when the body is
    /// done; lowering goes on with a stand-in value).
    fn refuse(&mut self, construct: String) {
        self.problem.get_or_insert(CompileError::Unsupported {
            backend: crate::BackendKind::Spirv,
            kernel: self.kernel.name.clone(),
            span: self.kernel.span,
            construct,
        });
    }

    /// Writes every element address variable for the current position.
    pub fn set_elements(&mut self) {
        for (var, stream) in self.elements.clone() {
            self.write_element(var, &stream);
        }
    }

    fn write_element(&mut self, var: Word, stream: &StreamRef<Word>) {
        let pos = self.pos.clone();
        let index = self.element_index(stream.offset, &pos, &stream.pitch);
        let addr = self.s.address(stream.base, index, stream.size);
        self.s.write(var, addr);
    }

    /// Opens a run-once construct whose end a kernel `return` goes to (the map driver's
    /// instance).
    pub fn begin_instance_construct(&mut self) -> Option<super::flow::LoopFrame> {
        let end = self.s.begin_loop();
        self.instance_end.replace(end)
    }

    /// Closes the instance's construct (code after it runs) and restores `outer`.
    pub fn end_instance_construct(&mut self, outer: Option<super::flow::LoopFrame>) {
        let end = self
            .instance_end
            .take()
            .expect("an instance construct is open");
        if !self.dead {
            self.s.jump_break(end);
        }
        self.s.begin_continuing(end);
        self.s.end_loop(end);
        self.dead = false;
        self.instance_end = outer;
    }

    fn u64_op(&mut self, op: BinaryOp, a: Word, b: Word) -> Word {
        self.s
            .binary(op, ScalarKind::U64, a, b)
            .expect("index arithmetic uses integer operators")
    }

    fn load_leaves(&mut self, layout: &[crate::leaves::Leaf], addr: Word) -> Vec<Word> {
        layout
            .iter()
            .map(|leaf| {
                let at = self.leaf_address(addr, leaf.offset);
                self.s.load_kind(leaf.kind, at)
            })
            .collect()
    }

    fn leaf_address(&mut self, addr: Word, offset: u32) -> Word {
        if offset == 0 {
            return addr;
        }
        let off = self.s.const_u64(u64::from(offset));
        self.u64_op(BinaryOp::Add, addr, off)
    }
}

impl<'a> Target<'a> for Lower<'a> {
    type Leaf = Word;
    type Var = Word;
    type Error = CompileError;

    fn module(&self) -> &'a Module {
        self.module
    }

    fn kernel(&self) -> &'a Kernel {
        self.kernel
    }

    fn memo(&mut self) -> &mut HashMap<Handle<Expr>, Vec<Word>> {
        &mut self.memo
    }

    fn unsupported(&self, h: Handle<Expr>, what: String) -> CompileError {
        CompileError::Unsupported {
            backend: crate::BackendKind::Spirv,
            kernel: self.kernel.name.clone(),
            span: self.kernel.exprs.span(h),
            construct: what,
        }
    }

    fn induction(&mut self) -> &mut crate::lower::induction::Induction<Word, Word> {
        &mut self.induction
    }

    fn literal(&mut self, lit: Literal) -> Word {
        self.s.literal(lit.kind, lit.bits)
    }

    fn zeros(&mut self, ty: &Type) -> Vec<Word> {
        leaves(self.module, ty)
            .into_iter()
            .map(|leaf| self.s.literal(leaf.kind, 0))
            .collect()
    }

    fn unary(&mut self, op: UnaryOp, kind: ScalarKind, v: Word) -> Word {
        self.s.unary(op, kind, v)
    }

    fn binary(&mut self, op: BinaryOp, kind: ScalarKind, a: Word, b: Word) -> Word {
        match self.s.binary(op, kind, a, b) {
            Some(r) => r,
            None => {
                // The validator admits no such operator; keep going with a value of the kind.
                self.refuse(format!("`{}` on {kind:?}", op.symbol()));
                a
            }
        }
    }

    fn select(&mut self, kind: ScalarKind, c: Word, a: Word, b: Word) -> Word {
        self.s.select(kind, c, a, b)
    }

    fn convert(&mut self, from: ScalarKind, to: ScalarKind, v: Word) -> Word {
        self.s.convert(from, to, v)
    }

    type Helper = crate::mathlib::Fun;

    fn math_helper(&self, fun: MathFun, _double: bool) -> Option<crate::mathlib::Fun> {
        crate::mathlib::Fun::of(fun)
    }

    fn call_math_helper(
        &mut self,
        helper: crate::mathlib::Fun,
        kind: ScalarKind,
        lane: &[Word],
    ) -> Word {
        self.s.transcendental(helper, kind, lane)
    }

    fn exact_math(&mut self, fun: MathFun, kind: ScalarKind, args: &[Vec<Word>]) -> Vec<Word> {
        match self.s.exact_math(fun, kind, args) {
            Some(r) => r,
            None => {
                self.refuse(format!("the intrinsic {fun:?}"));
                args[0].clone()
            }
        }
    }

    /// Floats by `floor(f + 0.25)` (saturating, NaN 0), integers extended, `ulong`s above the
    /// `long` range saturated.
    fn to_index(&mut self, kind: ScalarKind, v: Word) -> Word {
        match kind {
            ScalarKind::F32 | ScalarKind::F64 => {
                let quarter = if kind == ScalarKind::F32 {
                    u64::from(0.25f32.to_bits())
                } else {
                    0.25f64.to_bits()
                };
                let quarter = self.s.literal(kind, quarter);
                let shifted = self
                    .s
                    .binary(BinaryOp::Add, kind, v, quarter)
                    .expect("float add");
                let floor = self
                    .s
                    .exact_math(MathFun::Floor, kind, &[vec![shifted]])
                    .expect("floor is exact")[0];
                self.s.convert(kind, ScalarKind::I64, floor)
            }
            ScalarKind::U64 => {
                let zero = self.s.literal(ScalarKind::I64, 0);
                let negative = self
                    .s
                    .binary(BinaryOp::Lt, ScalarKind::I64, v, zero)
                    .expect("compare");
                let max = self.s.literal(ScalarKind::I64, i64::MAX as u64);
                self.s.select(ScalarKind::U64, negative, max, v)
            }
            k => self.s.convert(k, ScalarKind::I64, v),
        }
    }

    fn index_constant(&mut self, value: u64) -> Word {
        self.s.const_u64(value)
    }

    fn clamp_index(&mut self, i: Word, extent: Word) -> Word {
        let zero = self.s.const_u64(0);
        let one = self.s.const_u64(1);
        let negative = self
            .s
            .binary(BinaryOp::Lt, ScalarKind::I64, i, zero)
            .expect("compare");
        let low = self.s.select(ScalarKind::U64, negative, zero, i);
        let last = self.u64_op(BinaryOp::Sub, extent, one);
        let above = self
            .s
            .binary(BinaryOp::Gt, ScalarKind::U64, low, last)
            .expect("compare");
        self.s.select(ScalarKind::U64, above, last, low)
    }

    fn mul_index(&mut self, a: Word, b: Word) -> Word {
        self.u64_op(BinaryOp::Mul, a, b)
    }

    fn div_index(&mut self, a: Word, b: Word) -> Word {
        let t = self.s.u64_ty();
        self.s.b.u_div(t, None, a, b).expect("in a block")
    }

    fn element_index(&mut self, offset: Word, at: &[Word], pitch: &[Word]) -> Word {
        let mut sum = offset;
        for (&i, &p) in at.iter().zip(pitch) {
            let term = self.u64_op(BinaryOp::Mul, i, p);
            sum = self.u64_op(BinaryOp::Add, sum, term);
        }
        sum
    }

    fn element_address(&mut self, base: Word, index: Word, size: u32) -> Word {
        self.s.address(base, index, size)
    }

    fn index_within(&mut self, h: Handle<Expr>, len: u32) -> bool {
        self.bounds.within(h, len)
    }

    fn block_u64(&mut self, at: u32) -> Word {
        let addr = self.leaf_address(self.block, at);
        self.s.load_kind(ScalarKind::U64, addr)
    }

    fn block_scalar(&mut self, kind: ScalarKind, at: u32) -> Word {
        let addr = self.leaf_address(self.block, at);
        self.s.load_kind(kind, addr)
    }

    /// A variable holding the element's address at the position the driver set, written now
    /// and again whenever the driver moves the position ([`Lower::set_elements`]).
    fn element_variable(&mut self, stream: &StreamRef<Word>) -> Word {
        let t = self.s.u64_ty();
        let var = self.variable(t);
        self.elements.push((var, stream.clone()));
        self.write_element(var, stream);
        var
    }

    fn binding(&self, p: ParamId) -> Binding<Word, Word> {
        self.bindings[p.0 as usize].clone()
    }

    fn position(&mut self) -> Vec<Word> {
        self.pos.clone()
    }

    fn domain(&self) -> Vec<Word> {
        self.domain.clone()
    }

    fn instance_in_group(&mut self) -> Vec<Word> {
        let zero = self.s.literal(ScalarKind::I32, 0);
        let mut lanes = vec![zero; 4];
        if let Some(group) = self.group {
            lanes[0] = self.convert(ScalarKind::U64, ScalarKind::I32, group.tid);
        }
        lanes
    }

    fn temporary(&mut self, kind: ScalarKind) -> Word {
        let ty = self.s.container(kind);
        let var = self.variable(ty);
        let zero = self.s.literal(kind, 0);
        self.s.write(var, zero);
        var
    }

    fn read_var(&mut self, var: Word) -> Word {
        let ty = self.var_types[&var];
        self.s.read(ty, var)
    }

    /// A load is already a copy.
    fn snapshot_var(&mut self, var: Word) -> Word {
        self.read_var(var)
    }

    fn write_var(&mut self, var: Word, value: Word) {
        self.s.write(var, value);
    }

    fn local(&self, l: Handle<Local>) -> Root<Word, Word> {
        match &self.locals[l.index()] {
            LocalStore::Vars(vars) => Root::Vars(vars.clone()),
            LocalStore::Memory { addr, .. } => Root::Memory {
                addr: *addr,
                offset: 0,
                space: crate::lower::Space::Local,
            },
            LocalStore::Shared { addr } => Root::Memory {
                addr: *addr,
                offset: 0,
                space: crate::lower::Space::Shared,
            },
        }
    }

    fn load_element(&mut self, ty: &Type, addr: Word) -> Vec<Word> {
        let layout = leaves(self.module, ty);
        self.load_leaves(&layout, addr)
    }

    fn load_memory(&mut self, at: &Memory<Word>) -> Vec<Word> {
        if at.space != crate::lower::Space::Shared {
            return self.load_leaves(&at.layout, at.addr);
        }
        at.layout
            .iter()
            .map(|leaf| {
                let addr = self.leaf_address(at.addr, leaf.offset);
                self.shared_load(leaf.kind, addr)
            })
            .collect()
    }

    fn store_memory(&mut self, at: &Memory<Word>, values: &[Word]) {
        let shared = at.space == crate::lower::Space::Shared;
        for (leaf, &v) in at.layout.iter().zip(values) {
            let addr = self.leaf_address(at.addr, leaf.offset);
            if shared {
                self.shared_store(leaf.kind, addr, v);
            } else {
                self.s.store_kind(leaf.kind, addr, v);
            }
        }
    }

    type If = If;
    type Loop = Loop;
    type Guard = If;

    /// `c` unequal to a false the driver cannot prove (`Shell::opaque_zero`).
    fn unfoldable(&mut self, c: Word) -> Word {
        let Some((zero32, _)) = self.s.opaque_zero else {
            return c;
        };
        let bool_ty = self.s.b.type_bool();
        let zero = self.s.const_u32(0);
        let no = self
            .s
            .b
            .i_not_equal(bool_ty, None, zero32, zero)
            .expect("in a block");
        self.s
            .b
            .logical_not_equal(bool_ty, None, c, no)
            .expect("in a block")
    }

    fn begin_if(&mut self, cond: Word) -> If {
        self.depth += 1;
        If {
            frame: self.s.begin_if(cond),
            live: !self.dead,
        }
    }

    fn begin_else(&mut self, frame: &If) {
        self.close_guards();
        self.s.begin_else(&frame.frame);
        self.dead = !frame.live;
    }

    fn end_if(&mut self, frame: If) {
        self.close_guards();
        self.depth -= 1;
        self.s.end_if(frame.frame);
        self.dead = !frame.live;
        self.guard_after_break();
    }

    fn loop_body(&mut self, body: &brook_ir::Block, continuing: &brook_ir::Block) {
        self.next_once = runs_once(body, continuing).then(|| breaks_then_more(&body.0));
        use super::map::has_return;
        self.next_returns = has_return(body) || has_return(continuing);
    }

    fn begin_loop(&mut self) -> Loop {
        let live = !self.dead;
        let id = self.s.b.id();
        self.depth += 1;
        let returns = std::mem::take(&mut self.next_returns);
        let kind = match self.next_once.take() {
            Some(true) => {
                let bool_ty = self.s.b.type_bool();
                let flag = self.variable(bool_ty);
                let no = self.s.b.constant_false(bool_ty);
                self.s.write(flag, no);
                LoopKind::Once { flag: Some(flag) }
            }
            Some(false) => LoopKind::Once { flag: None },
            // A loop a `return` leaves is not the driver's to unroll: lavapipe (Mesa 22.3)
            // unrolled `for (i = 0; i < 3; i++) if ((uint)i == 0u) return;` into a `return`
            // taken at once (`fuzz_vulkan_return_in_counted_loop`).
            None if returns => LoopKind::Looping(self.s.begin_loop_with(LoopControl::DONT_UNROLL)),
            None => LoopKind::Looping(self.s.begin_loop()),
        };
        let flag = match kind {
            LoopKind::Once { flag } => flag,
            LoopKind::Looping(_) => None,
        };
        self.scopes.push(FlagScope { loop_id: id, flag });
        Loop { kind, live, id }
    }

    fn begin_continuing(&mut self, frame: Loop) {
        let LoopKind::Looping(looping) = frame.kind else {
            return;
        };
        self.close_guards();
        self.s.begin_continuing(looping);
        self.dead = !frame.live;
        if let Some(scope) = self.scopes.last_mut() {
            scope.flag = Some(looping.leave_flag());
        }
    }

    fn end_loop(&mut self, frame: Loop) {
        self.close_guards();
        self.depth -= 1;
        self.scopes.retain(|scope| scope.loop_id != frame.id);
        self.broken.retain(|&id| id != frame.id);
        if let LoopKind::Looping(looping) = frame.kind {
            self.s.end_loop(looping);
        }
        self.dead = !frame.live;
    }

    /// From a run-once body or the loop's continuing part: sets the loop's flag (the rest of
    /// the arm is guarded); elsewhere a branch to the loop's end.
    fn jump_break(&mut self, frame: Loop) {
        let in_continuing = self
            .scopes
            .iter()
            .any(|scope| scope.loop_id == frame.id && scope.flag.is_some());
        match frame.kind {
            LoopKind::Once { flag: Some(flag) } => {
                let bool_ty = self.s.b.type_bool();
                let yes = self.s.b.constant_true(bool_ty);
                self.s.write(flag, yes);
            }
            // Nothing follows the break in its arm: the arm just ends.
            LoopKind::Once { flag: None } => {}
            LoopKind::Looping(looping) if in_continuing => self.s.break_from_continuing(looping),
            LoopKind::Looping(looping) => self.s.jump_break(looping),
        }
        if in_continuing && !self.broken.contains(&frame.id) {
            self.broken.push(frame.id);
        }
        self.dead = true;
    }

    fn jump_continue(&mut self, frame: Loop) {
        match frame.kind {
            LoopKind::Looping(looping) => self.s.jump_continue(looping),
            LoopKind::Once { .. } => unreachable!("a run-once body has no `continue`"),
        }
        self.dead = true;
    }

    fn jump_return(&mut self) {
        match self.instance_end {
            Some(end) => self.s.jump_break(end),
            None => self.s.jump_return(),
        }
        self.dead = true;
    }

    fn barrier(&mut self) {
        if self.group.is_some() {
            self.group_barrier();
        } else {
            self.refuse("a barrier outside a thread-group kernel".into());
        }
    }

    fn is_unreachable(&self) -> bool {
        self.dead
    }

    fn begin_guard(&mut self, flag: Word) -> If {
        self.begin_if(flag)
    }

    fn end_guard(&mut self, guard: If) {
        self.end_if(guard);
    }
}

/// Whether a loop's body runs once: nothing continues it, every path through it ends in a
/// jump, and no `continue` of its own is in it (as the body of an inlined subkernel call).
fn runs_once(body: &brook_ir::Block, continuing: &brook_ir::Block) -> bool {
    use brook_ir::Stmt;
    fn continues(block: &brook_ir::Block) -> bool {
        block.iter().any(|s| match &s.stmt {
            Stmt::Continue => true,
            Stmt::If { accept, reject, .. } => continues(accept) || continues(reject),
            _ => false,
        })
    }
    continuing.iter().next().is_none() && super::sink::ends_in_jump(&body.0) && !continues(body)
}

/// Whether a statement holding a `break` of this block's loop is followed by more statements
/// in its block (so the break must set a flag that guards them).
fn breaks_then_more(block: &[brook_ir::Statement]) -> bool {
    use brook_ir::Stmt;
    fn breaks(stmt: &Stmt) -> bool {
        match stmt {
            Stmt::Break => true,
            Stmt::If { accept, reject, .. } => {
                accept.iter().chain(reject.iter()).any(|s| breaks(&s.stmt))
            }
            _ => false,
        }
    }
    block.iter().enumerate().any(|(i, s)| {
        (breaks(&s.stmt) && i + 1 < block.len())
            || match &s.stmt {
                Stmt::If { accept, reject, .. } => {
                    breaks_then_more(&accept.0) || breaks_then_more(&reject.0)
                }
                _ => false,
            }
    })
}
