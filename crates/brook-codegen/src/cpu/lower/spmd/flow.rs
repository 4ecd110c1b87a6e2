//! Masked control flow for a gang: the execution mask says which lanes run the code being
//! lowered.
//!
//! - `if`: the accepting arm runs under `mask & cond`, the rejecting arm under
//!   `mask & !cond`; an arm no lane takes is branched over. After the `if` the mask is the
//!   one before it, less the lanes that left through `break`, `continue` or `return`.
//! - Loops run while any lane is active. `break` and `continue` move the active lanes into
//!   the loop's break or continue set; `continue`d lanes rejoin at the continuing part, and
//!   after the loop the mask is the lanes that broke out (every loop leaves through `break`
//!   or `return`).
//! - `return` moves the active lanes into the returned set for the rest of the gang's body.
//!
//! Masks are `I32X4` vectors of all-ones (active) or zero lanes. Where every lane is known to
//! be active (straight-line code of a full gang) no mask is computed at all.

use super::{Spmd, MAX_PARTS};
use crate::cpu::lower::PTR;
use cranelift_codegen::ir::{types, Block, InstBuilder, Value};
use cranelift_frontend::Variable;

/// A mask: one `I32X4` per part.
pub type Mask = [Value; MAX_PARTS];

/// The break and continue sets of one loop being lowered.
#[derive(Clone, Copy, Debug)]
pub struct LoopMasks {
    broke: [Variable; MAX_PARTS],
    continued: [Variable; MAX_PARTS],
    any_break: bool,
    any_continue: bool,
}

/// How an `if`'s arms are lowered: each arm that may be costly runs only where a lane takes
/// it (a test of the mask and a branch); a cheap arm runs under its mask without a branch,
/// and an empty `else` computes no mask at all.
#[derive(Clone, Copy, Debug)]
pub struct ArmPlan {
    pub branch_accept: bool,
    pub branch_reject: bool,
    pub reject_empty: bool,
}

impl ArmPlan {
    /// Both arms behind branches (for `if`s the statement walk did not describe).
    pub const BRANCHING: ArmPlan = ArmPlan {
        branch_accept: true,
        branch_reject: true,
        reject_empty: false,
    };

    /// The plan for arms `accept` and `reject` of a kernel's `if`.
    pub fn of(
        kernel: &brook_ir::Kernel,
        accept: &brook_ir::Block,
        reject: &brook_ir::Block,
    ) -> ArmPlan {
        ArmPlan {
            branch_accept: !cheap_arm(kernel, accept),
            branch_reject: !cheap_arm(kernel, reject),
            reject_empty: reject.is_empty(),
        }
    }
}

/// Whether running `arm` for no lane costs less than testing the mask: a few jumps and
/// stores of small arithmetic to variables (no memory stores, gathers, calls or control
/// flow).
fn cheap_arm(kernel: &brook_ir::Kernel, arm: &brook_ir::Block) -> bool {
    use brook_ir::{ExprKind, PlaceRoot, Stmt};
    let small = |root| {
        let mut stack = vec![root];
        let mut seen = 0;
        while let Some(h) = stack.pop() {
            seen += 1;
            let kind = &kernel.exprs[h].kind;
            if seen > 12 || matches!(kind, ExprKind::Gather { .. } | ExprKind::Math { .. }) {
                return false;
            }
            stack.extend(kind.operands());
        }
        true
    };
    arm.0.len() <= 4
        && arm.iter().all(|s| match &s.stmt {
            Stmt::Break | Stmt::Continue | Stmt::Return => true,
            Stmt::Store { place, value } => {
                matches!(place.root, PlaceRoot::Local(_)) && place.path.is_empty() && small(*value)
            }
            _ => false,
        })
}

/// What an `if` needs between its arms.
#[derive(Clone, Copy, Debug)]
pub struct SpmdIf {
    /// The mask before the `if` (`None`: every lane).
    saved: Option<Mask>,
    cond: Mask,
    plan: ArmPlan,
    /// Where the rejecting arm's test starts (where the accepting arm is branched over).
    otherwise: Option<Block>,
    /// After the rejecting arm (where it is branched over).
    merge: Option<Block>,
}

/// A loop's blocks and its index in [`Spmd::loops`].
#[derive(Clone, Copy, Debug)]
pub struct SpmdLoop {
    header: Block,
    exit: Block,
    index: usize,
}

impl Spmd<'_, '_, '_> {
    /// The current mask (`None`: every lane is active).
    pub fn mask(&mut self) -> Option<Mask> {
        if self.all_active {
            return None;
        }
        Some(self.use_mask_vars(self.plan.mask))
    }

    /// The current mask as vectors (all-ones where every lane is active).
    pub fn mask_vectors(&mut self) -> Mask {
        match self.mask() {
            Some(m) => m,
            None => self.splat_mask(true),
        }
    }

    pub fn set_mask(&mut self, mask: Mask) {
        self.def_mask_vars(self.plan.mask, mask);
        self.all_active = false;
    }

    pub fn def_mask_vars(&mut self, vars: [Variable; MAX_PARTS], mask: Mask) {
        for p in 0..self.parts() {
            self.s.b.def_var(vars[p], mask[p]);
        }
    }

    fn use_mask_vars(&mut self, vars: [Variable; MAX_PARTS]) -> Mask {
        let first = self.s.b.use_var(vars[0]);
        let mut mask = [first; MAX_PARTS];
        for p in 1..self.parts() {
            mask[p] = self.s.b.use_var(vars[p]);
        }
        mask
    }

    pub fn splat_mask(&mut self, on: bool) -> Mask {
        let bits = self.s.iconst(types::I32, if on { -1 } else { 0 });
        [self.s.b.ins().splat(types::I32X4, bits); MAX_PARTS]
    }

    /// The lanes below `count` (an `i64` below the gang's lane count).
    pub fn lanes_below(&mut self, count: Value) -> Mask {
        let count = self.s.b.ins().ireduce(types::I32, count);
        let count = self.s.b.ins().splat(types::I32X4, count);
        let mut mask = [count; MAX_PARTS];
        for (p, slot) in mask.iter_mut().enumerate().take(self.parts()) {
            let iota = self.lane_numbers(p);
            *slot = self.s.b.ins().icmp(
                cranelift_codegen::ir::condcodes::IntCC::SignedLessThan,
                iota,
                count,
            );
        }
        mask
    }

    fn zip_masks(&mut self, a: Mask, b: Mask, f: fn(&mut Self, Value, Value) -> Value) -> Mask {
        let mut out = a;
        for p in 0..self.parts() {
            out[p] = f(self, a[p], b[p]);
        }
        out
    }

    pub fn and(&mut self, a: Mask, b: Mask) -> Mask {
        self.zip_masks(a, b, |t, x, y| t.s.b.ins().band(x, y))
    }

    /// `a & !b`.
    pub fn and_not(&mut self, a: Mask, b: Mask) -> Mask {
        self.zip_masks(a, b, |t, x, y| t.s.b.ins().band_not(x, y))
    }

    pub fn or(&mut self, a: Mask, b: Mask) -> Mask {
        self.zip_masks(a, b, |t, x, y| t.s.b.ins().bor(x, y))
    }

    /// Whether any lane of `mask` is on (an `i8`).
    pub fn any(&mut self, mask: Mask) -> Value {
        self.over_parts(mask, false)
    }

    /// Whether every lane of `mask` is on (an `i8`).
    pub fn all(&mut self, mask: Mask) -> Value {
        self.over_parts(mask, true)
    }

    /// `vall_true` (`every`) or `vany_true` of each part of `mask`, joined over the parts.
    fn over_parts(&mut self, mask: Mask, every: bool) -> Value {
        let mut joined = None;
        for &part in &mask[..self.parts()] {
            let ins = self.s.b.ins();
            let this = if every {
                ins.vall_true(part)
            } else {
                ins.vany_true(part)
            };
            joined = Some(match joined {
                None => this,
                Some(j) if every => self.s.b.ins().band(j, this),
                Some(j) => self.s.b.ins().bor(j, this),
            });
        }
        joined.expect("a gang has a part")
    }

    /// The lanes switched off since the innermost loop's iteration (or the body) began:
    /// returned, and broken out of or continued in the innermost loop (`None`: none can be).
    fn switched_off(&mut self) -> Option<Mask> {
        let mut off = self
            .any_return
            .then(|| self.use_mask_vars(self.plan.returned));
        if let Some(lp) = self.loops.last().copied() {
            for (any, vars) in [(lp.any_break, lp.broke), (lp.any_continue, lp.continued)] {
                if any {
                    let set = self.use_mask_vars(vars);
                    off = Some(match off {
                        Some(o) => self.or(o, set),
                        None => set,
                    });
                }
            }
        }
        off
    }

    /// `saved` less the switched-off lanes, as the current mask.
    fn restore(&mut self, saved: Option<Mask>) {
        match (saved, self.switched_off()) {
            (None, None) => self.all_active = true,
            (Some(m), None) => self.set_mask(m),
            (None, Some(off)) => {
                let all = self.splat_mask(true);
                let m = self.and_not(all, off);
                self.set_mask(m);
            }
            (Some(m), Some(off)) => {
                let m = self.and_not(m, off);
                self.set_mask(m);
            }
        }
    }

    /// Branches to a new block if any lane of `mask` is on, else to `skip`; goes on in the
    /// new block.
    fn branch_if_any(&mut self, mask: Mask, skip: Block) {
        let run = self.s.b.create_block();
        let any = self.any(mask);
        self.s.b.ins().brif(any, run, &[], skip, &[]);
        self.s.b.seal_block(run);
        self.s.b.switch_to_block(run);
    }

    pub fn flow_begin_if(&mut self, cond: super::Leaf) -> SpmdIf {
        let plan = self.next_arms.take().unwrap_or(ArmPlan::BRANCHING);
        let cond = self.vectors(cond, brook_ir::ScalarKind::Bool);
        let saved = self.mask();
        let then = match saved {
            Some(m) => self.and(m, cond),
            None => cond,
        };
        self.set_mask(then);
        let frame = SpmdIf {
            saved,
            cond,
            plan,
            otherwise: plan.branch_accept.then(|| self.s.b.create_block()),
            merge: (plan.branch_reject && !plan.reject_empty).then(|| self.s.b.create_block()),
        };
        if let Some(otherwise) = frame.otherwise {
            self.branch_if_any(then, otherwise);
        }
        self.dead = false;
        self.depth += 1;
        frame
    }

    pub fn flow_begin_else(&mut self, frame: &SpmdIf) {
        if let Some(otherwise) = frame.otherwise {
            self.s.b.ins().jump(otherwise, &[]);
            self.s.b.switch_to_block(otherwise);
            self.s.b.seal_block(otherwise);
        }
        self.dead = false;
        if frame.plan.reject_empty {
            return;
        }
        let base = match frame.saved {
            Some(m) => m,
            None => self.splat_mask(true),
        };
        let mut otherwise = self.and_not(base, frame.cond);
        if let Some(off) = self.switched_off() {
            otherwise = self.and_not(otherwise, off);
        }
        self.set_mask(otherwise);
        if let Some(merge) = frame.merge {
            self.branch_if_any(otherwise, merge);
        }
    }

    pub fn flow_end_if(&mut self, frame: SpmdIf) {
        if let Some(merge) = frame.merge {
            self.s.b.ins().jump(merge, &[]);
            self.s.b.switch_to_block(merge);
            self.s.b.seal_block(merge);
        }
        self.restore(frame.saved);
        self.dead = false;
        self.depth -= 1;
    }

    pub fn flow_begin_loop(&mut self) -> SpmdLoop {
        let mask = self.mask_vectors();
        self.set_mask(mask);
        let none = self.splat_mask(false);
        let mut declare = || std::array::from_fn(|_| self.s.b.declare_var(types::I32X4));
        let masks = LoopMasks {
            broke: declare(),
            continued: declare(),
            any_break: false,
            any_continue: false,
        };
        self.def_mask_vars(masks.broke, none);
        self.def_mask_vars(masks.continued, none);
        self.loops.push(masks);
        let frame = SpmdLoop {
            header: self.s.b.create_block(),
            exit: self.s.b.create_block(),
            index: self.loops.len() - 1,
        };
        self.s.b.ins().jump(frame.header, &[]);
        self.s.b.switch_to_block(frame.header);
        self.dead = false;
        self.depth += 1;
        frame
    }

    pub fn flow_begin_continuing(&mut self, frame: SpmdLoop) {
        let masks = self.loops[frame.index];
        if masks.any_continue {
            let mask = self.mask_vectors();
            let continued = self.use_mask_vars(masks.continued);
            let rejoined = self.or(mask, continued);
            self.set_mask(rejoined);
            let none = self.splat_mask(false);
            self.def_mask_vars(masks.continued, none);
        }
        self.dead = false;
    }

    pub fn flow_end_loop(&mut self, frame: SpmdLoop) {
        let mask = self.mask_vectors();
        let any = self.any(mask);
        self.s.b.ins().brif(any, frame.header, &[], frame.exit, &[]);
        self.s.b.seal_block(frame.header);
        self.s.b.switch_to_block(frame.exit);
        self.s.b.seal_block(frame.exit);
        let masks = self.loops.pop().expect("a loop is open");
        let after = if masks.any_break {
            self.use_mask_vars(masks.broke)
        } else {
            self.splat_mask(false)
        };
        self.set_mask(after);
        self.dead = false;
        self.depth -= 1;
    }

    /// Moves the active lanes into `set` (a loop's break or continue set, or the returned
    /// lanes) and switches them off.
    fn switch_off_into(&mut self, set: [Variable; MAX_PARTS]) {
        let mask = self.mask_vectors();
        let old = self.use_mask_vars(set);
        let joined = self.or(old, mask);
        self.def_mask_vars(set, joined);
        let none = self.splat_mask(false);
        self.set_mask(none);
        self.dead = true;
    }

    pub fn flow_break(&mut self, frame: SpmdLoop) {
        self.loops[frame.index].any_break = true;
        let set = self.loops[frame.index].broke;
        self.switch_off_into(set);
    }

    pub fn flow_continue(&mut self, frame: SpmdLoop) {
        self.loops[frame.index].any_continue = true;
        let set = self.loops[frame.index].continued;
        self.switch_off_into(set);
    }

    pub fn flow_return(&mut self) {
        self.any_return = true;
        self.switch_off_into(self.plan.returned);
    }

    /// A cursor variable's value: the current element's address for lane 0, stepping per
    /// lane.
    pub fn cursor(&mut self, var: Variable, step: Value) -> super::Leaf {
        let base = self.s.b.use_var(var);
        debug_assert_eq!(self.s.b.func.dfg.value_type(base), PTR);
        super::Leaf::Linear { base, step }
    }
}
