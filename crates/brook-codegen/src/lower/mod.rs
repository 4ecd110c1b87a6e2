//! Lowering a kernel body, written once over [`Target`]: the primitive operations a backend
//! offers (Cranelift instructions for the CPU, PTX for the GPU).
//!
//! - [`expr`]: the expression walk ([`expr::ExprWalk`]): each IR expression becomes the flat
//!   list of its scalar leaves, computed once per statement.
//! - [`binding`]: how each parameter of a launch is reached (the decision from its role and
//!   the launch's variant, and the reads of the parameter block it needs).
//! - [`launch`]: the executable forms of `brook_ir::launch` (what inputs, gathers, `indexof`
//!   and `instance()` read: implicit resize, iterators, clamped indices).
//! - [`place`]: what a place (a local, an output element, an accumulator, a scatter element)
//!   is, and its loads and stores.
//! - [`stmt`]: the structured statement walk onto the target's control flow.
//! - [`counter`]: the binary-counter stack every reduction entry folds its leaves with.
//! - [`induction`]: the fast loop of a loop whose gathers walk along float induction
//!   variables (element indices kept in integer variables).
//!
//! A backend implements [`Target`] and keeps only what is its own: instruction selection for
//! Brook's arithmetic rules, math, memory access details and the drivers that set up a
//! function around the body. A rule of the language changes here, once.

pub mod binding;
pub mod counter;
pub mod expr;
pub mod induction;
pub mod launch;
pub mod place;
pub mod stmt;

pub use binding::{bind_params, bound_rank, Binding, StreamRef};
pub use expr::ExprWalk;
pub use place::{Memory, Root, Space};
pub use stmt::count_barriers;

use brook_ir::{
    BinaryOp, Expr, Handle, Kernel, Literal, Local, MathFun, Module, ParamId, ScalarKind, Type,
    UnaryOp,
};
use std::borrow::Cow;
use std::collections::HashMap;

/// The kernel a backend lowers: the collectives `native` refuses rewritten into stores and
/// barriers ([`brook_ir::collective::expand`]), then its counted loops unrolled
/// ([`brook_ir::unroll`]) unless `tuning` keeps them.
pub fn prepared_kernel<'k>(
    kernel: &'k Kernel,
    native: impl Fn(&brook_ir::Collective) -> bool,
    tuning: &crate::Tuning,
) -> Cow<'k, Kernel> {
    let expanded = brook_ir::collective::expand(kernel, native);
    let base = expanded.as_ref().unwrap_or(kernel);
    let unrolled = tuning
        .unroll
        .then(|| brook_ir::unroll::unroll_counted_loops(base))
        .flatten();
    match unrolled.or(expanded) {
        Some(prepared) => Cow::Owned(prepared),
        None => Cow::Borrowed(kernel),
    }
}

/// The primitive operations of a backend that the shared lowering is written over. `'ir` is
/// the lifetime of the module being compiled.
///
/// Values are flat lists of scalar leaves ([`crate::leaves`]). Index arithmetic (positions,
/// extents, element indices, addresses) is on machine-word leaves, `u64` unless said.
pub trait Target<'ir> {
    /// One scalar value (a Cranelift `Value`, a PTX register).
    type Leaf: Copy + std::fmt::Debug;
    /// A variable: a value that later code may overwrite (a Cranelift `Variable`, a PTX
    /// register written by `mov`).
    type Var: Copy + std::fmt::Debug;
    type Error;

    // ---- The function being lowered.

    fn module(&self) -> &'ir Module;
    fn kernel(&self) -> &'ir Kernel;
    /// The leaves computed so far in this statement.
    fn memo(&mut self) -> &mut HashMap<Handle<Expr>, Vec<Self::Leaf>>;
    /// The error for a construct of expression `h` that the backend cannot compile.
    fn unsupported(&self, h: Handle<Expr>, what: String) -> Self::Error;
    /// The state of the fast loop being lowered, if any ([`induction`]).
    fn induction(&mut self) -> &mut induction::Induction<Self::Leaf, Self::Var>;
    /// The most induction gathers a loop may have for a fast loop here
    /// ([`induction::MAX_GATHERS`]: on a GPU, the fast loop of seed 001's 8x4-blocked
    /// multiply, twelve gathers, took it past the registers that keep its blocks resident,
    /// 9.09 -> 10.95 ms on an H100, even with two shared element indices).
    fn max_fast_loop_gathers(&self) -> usize {
        induction::MAX_GATHERS
    }

    // ---- Scalar operations, following `brook_ir::launch`'s arithmetic rules.

    fn literal(&mut self, lit: Literal) -> Self::Leaf;
    /// The zero value of `ty`, as leaves.
    fn zeros(&mut self, ty: &Type) -> Vec<Self::Leaf>;
    fn unary(&mut self, op: UnaryOp, kind: ScalarKind, v: Self::Leaf) -> Self::Leaf;
    fn binary(
        &mut self,
        op: BinaryOp,
        kind: ScalarKind,
        a: Self::Leaf,
        b: Self::Leaf,
    ) -> Self::Leaf;
    /// `c ? a : b` for one leaf of `kind`.
    fn select(
        &mut self,
        kind: ScalarKind,
        c: Self::Leaf,
        a: Self::Leaf,
        b: Self::Leaf,
    ) -> Self::Leaf;
    fn convert(&mut self, from: ScalarKind, to: ScalarKind, v: Self::Leaf) -> Self::Leaf;

    // ---- Math functions.

    /// A library function the backend calls for `fun` on `double`s or `float`s (the
    /// transcendental ones), or `None` where it computes `fun` inline.
    type Helper: Copy;
    fn math_helper(&self, fun: MathFun, double: bool) -> Option<Self::Helper>;
    /// One call of `helper` on one lane's arguments of `kind`.
    fn call_math_helper(
        &mut self,
        helper: Self::Helper,
        kind: ScalarKind,
        lane: &[Self::Leaf],
    ) -> Self::Leaf;
    /// A math function computed inline: `args` are the arguments' leaves, of `kind`.
    fn exact_math(
        &mut self,
        fun: MathFun,
        kind: ScalarKind,
        args: &[Vec<Self::Leaf>],
    ) -> Vec<Self::Leaf>;

    // ---- Index arithmetic.

    /// The kind of index leaves (positions, extents, pitches, element indices): `U64`, or
    /// `U32` where a target does a narrow variant's index arithmetic in 32 bits
    /// ([`crate::abi::Variant::narrow_index`]). Indices are non-negative below the kind's
    /// signed range except where `to_index` made them negative.
    fn index_kind(&self) -> ScalarKind {
        ScalarKind::U64
    }
    /// A value of `kind` as a signed machine-word index: integers as they are, floats by
    /// `floor(f + 0.25)` (saturating, NaN gives 0), `ulong`s above the `long` range saturate.
    fn to_index(&mut self, kind: ScalarKind, v: Self::Leaf) -> Self::Leaf;
    /// A machine-word constant.
    fn index_constant(&mut self, value: u64) -> Self::Leaf;
    /// `i` (signed) clamped to `[0, extent - 1]`.
    fn clamp_index(&mut self, i: Self::Leaf, extent: Self::Leaf) -> Self::Leaf;
    /// `a * b`.
    fn mul_index(&mut self, a: Self::Leaf, b: Self::Leaf) -> Self::Leaf;
    /// `a / b` (`b` is an extent, never 0).
    fn div_index(&mut self, a: Self::Leaf, b: Self::Leaf) -> Self::Leaf;
    /// `offset + sum(at[k] * pitch[k])`: an element index.
    fn element_index(
        &mut self,
        offset: Self::Leaf,
        at: &[Self::Leaf],
        pitch: &[Self::Leaf],
    ) -> Self::Leaf;
    /// `base + index * size`: an element's address.
    fn element_address(&mut self, base: Self::Leaf, index: Self::Leaf, size: u32) -> Self::Leaf;
    /// The address of element `i` (a scalar of `kind`) of an array of `len` elements of
    /// `size` bytes at `base`, the index clamped to the array unless `in_range` (proven by
    /// [`Target::index_within`]). A target may compute it narrower where the kind allows; the
    /// default goes through machine-word indices.
    fn array_element(
        &mut self,
        base: Self::Leaf,
        kind: ScalarKind,
        i: Self::Leaf,
        (len, size): (u32, u32),
        in_range: bool,
    ) -> Self::Leaf {
        array_element_by_word(self, base, kind, i, (len, size), in_range)
    }

    /// Whether index expression `h` always lies in `0..len`, so that its clamp would change
    /// nothing ([`brook_ir::footprint::IndexBounds`], kept by the target for its kernel).
    fn index_within(&mut self, h: Handle<Expr>, len: u32) -> bool;

    // ---- The launch.

    /// The `u64` at byte `at` of the launch's parameter block.
    fn block_u64(&mut self, at: u32) -> Self::Leaf;
    /// The index (an extent, pitch or offset, a `u64` in the block) at byte `at`, as an
    /// index leaf of [`Target::index_kind`].
    fn block_index(&mut self, at: u32) -> Self::Leaf {
        self.block_u64(at)
    }
    /// The scalar of `kind` at byte `at` of the parameter block (a bool is one byte, read as
    /// true when not zero).
    fn block_scalar(&mut self, kind: ScalarKind, at: u32) -> Self::Leaf;
    /// A variable that holds the address of `stream`'s element at the current position: the
    /// backend keeps it up to date as the position moves.
    fn element_variable(&mut self, stream: &StreamRef<Self::Leaf>) -> Self::Var;
    /// How parameter `p` is bound in the function being lowered.
    fn binding(&self, p: ParamId) -> Binding<Self::Leaf, Self::Var>;
    /// The current position in the domain (slowest first).
    fn position(&mut self) -> Vec<Self::Leaf>;
    /// The domain's extents (slowest first).
    fn domain(&self) -> Vec<Self::Leaf>;
    /// The instance's index in its thread group as an `int4` (`.x`; 0 outside groups).
    fn instance_in_group(&mut self) -> Vec<Self::Leaf>;

    // ---- Variables and memory.

    /// A new variable of a scalar kind, for a driver's own state (not a local of the kernel);
    /// it holds zero until written.
    fn temporary(&mut self, kind: ScalarKind) -> Self::Var;
    /// The current value of a variable, for use before the variable is next written.
    fn read_var(&mut self, var: Self::Var) -> Self::Leaf;
    /// The current value of a variable, kept unchanged when the variable is written later (a
    /// copy where a variable is a register).
    fn snapshot_var(&mut self, var: Self::Var) -> Self::Leaf;
    fn write_var(&mut self, var: Self::Var, value: Self::Leaf);
    /// Where local `l` lives.
    fn local(&self, l: Handle<Local>) -> Root<Self::Leaf, Self::Var>;
    /// A whole element of a stream of `ty` at `addr` (streams are read-only while a kernel
    /// runs).
    fn load_element(&mut self, ty: &Type, addr: Self::Leaf) -> Vec<Self::Leaf>;
    fn load_memory(&mut self, at: &Memory<Self::Leaf>) -> Vec<Self::Leaf>;
    fn store_memory(&mut self, at: &Memory<Self::Leaf>, values: &[Self::Leaf]);

    // ---- Structured control flow.

    /// What an `if` needs between its arms (blocks or labels).
    type If;
    /// What a loop needs for `break` and `continue` (blocks or labels).
    type Loop: Copy;
    /// What a guarded region needs at its end.
    type Guard;

    /// The bool `c`, the condition of a kernel's `if` that is computed from literals alone
    /// and holds a jump, as a value the device's compiler cannot fold (a target may return it
    /// as it is). NVIDIA's Vulkan compiler (driver 580) crashed on such constant branches
    /// around `return`s (fuzz seed 57401 kernel 11655: conformance
    /// `fuzz_vulkan_constant_branch_returns`).
    fn unfoldable(&mut self, c: Self::Leaf) -> Self::Leaf {
        c
    }
    /// The arms of the kernel's `if` whose `begin_if` comes next (the statement walk says;
    /// `if`s a driver writes get none). A target may lower small arms without a branch.
    fn if_arms(&mut self, accept: &brook_ir::Block, reject: &brook_ir::Block) {
        let _ = (accept, reject);
    }
    /// The body and continuing part of the loop whose `begin_loop` comes next (the statement
    /// walk's plain loops say; loops a driver writes get none). A target may write a body
    /// that runs once without a loop.
    fn loop_body(&mut self, body: &brook_ir::Block, continuing: &brook_ir::Block) {
        let _ = (body, continuing);
    }
    /// Branches on `cond` and goes on in the accepting arm.
    fn begin_if(&mut self, cond: Self::Leaf) -> Self::If;
    /// Leaves the accepting arm (to the end of the `if`) and goes on in the rejecting arm.
    fn begin_else(&mut self, frame: &Self::If);
    /// Leaves the rejecting arm and goes on after the `if`.
    fn end_if(&mut self, frame: Self::If);
    /// Starts a loop and goes on in its body.
    fn begin_loop(&mut self) -> Self::Loop;
    /// Leaves the body (falling into the continuing part, where `continue` also goes).
    fn begin_continuing(&mut self, frame: Self::Loop);
    /// Leaves the continuing part (back to the body) and goes on after the loop.
    fn end_loop(&mut self, frame: Self::Loop);
    /// Jumps to the end of the loop.
    fn jump_break(&mut self, frame: Self::Loop);
    /// Jumps to the continuing part of the loop.
    fn jump_continue(&mut self, frame: Self::Loop);
    /// Leaves the kernel body for this element.
    fn jump_return(&mut self);
    /// A group barrier.
    fn barrier(&mut self);
    /// Whether the code being written cannot run (it follows a jump); the statement walk
    /// then lowers only what the target still needs there (barriers).
    fn is_unreachable(&self) -> bool;
    /// Goes on in code that runs only when `flag` holds.
    fn begin_guard(&mut self, flag: Self::Leaf) -> Self::Guard;
    /// Goes on where the guarded code and its skip meet.
    fn end_guard(&mut self, guard: Self::Guard);

    // ---- Thread-group collectives.

    /// A collective in its native form (`in_loop`: inside a loop, so the same statement may
    /// run again). A target whose kernels are expanded first
    /// ([`brook_ir::collective::expand`]) never meets one.
    fn collective(&mut self, c: &brook_ir::Collective, in_loop: bool) -> Result<(), Self::Error> {
        let _ = in_loop;
        Err(self.unsupported(c.value, "a thread-group collective".into()))
    }
    /// Consecutive collectives that may run together
    /// ([`brook_ir::collective::independent_run`]): a target may share their barriers. The
    /// default runs them one by one.
    fn collectives(
        &mut self,
        run: &[&brook_ir::Collective],
        in_loop: bool,
    ) -> Result<(), Self::Error> {
        for c in run {
            self.collective(c, in_loop)?;
        }
        Ok(())
    }
}

/// [`Target::array_element`] through machine-word indices: the index converted, clamped to
/// `[0, len - 1]` unless `in_range`, scaled and added.
pub fn array_element_by_word<'ir, T: Target<'ir> + ?Sized>(
    t: &mut T,
    base: T::Leaf,
    kind: ScalarKind,
    i: T::Leaf,
    (len, size): (u32, u32),
    in_range: bool,
) -> T::Leaf {
    let i = t.to_index(kind, i);
    let at = if in_range {
        i
    } else {
        let extent = t.index_constant(u64::from(len));
        t.clamp_index(i, extent)
    };
    t.element_address(base, at, size)
}
