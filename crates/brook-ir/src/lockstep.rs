//! When the threads of a thread group may run in lockstep (SIMD lanes, one statement for
//! all of them at a time) and still compute what the interpreter computes.
//!
//! The interpreter runs a group's threads one after another up to each barrier: between two
//! barriers (a *phase*), thread `t` sees what threads `0..t` wrote to shared memory in that
//! phase and nothing of what threads after it write. In lockstep every thread runs a
//! statement before any runs the next, so a thread that reads a share another thread writes
//! in the same phase may see a different value. Lockstep is therefore equivalent where, in
//! every phase, a shared local that is written is only ever written and read at the thread's
//! own share: `local[stride * instanceInGroup().x + offset]` with `stride` the local's length
//! over the group size and `0 <= offset < stride` (Brook+'s form of a shared write). Reads of
//! shares written in earlier phases are free.
//!
//! [`phases`] also asks for the simple control structure a lockstep driver needs: every
//! barrier at the body's top level (so the phases are runs of top-level statements, the
//! same for every thread), no `return` (a returned thread would have to stay off across
//! phases) and no collectives.

use crate::{
    Access, BinaryOp, Block, ExprKind, Handle, Kernel, Local, PlaceRoot, ScalarKind, Stmt, Type,
};
use std::ops::Range;

/// One phase: top-level statements between two barriers.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    /// The statements (indices into the body's top level; barriers excluded).
    pub stmts: Range<usize>,
    /// The locals (not shared) whose values from earlier phases the phase may read: read in
    /// it before a top-level store of the whole local, or live into a later phase and not
    /// stored whole in it. Others may start the phase with any value.
    pub live_in: Vec<Handle<Local>>,
}

/// The phases of a thread-group kernel whose threads may run in lockstep, in order. `None`
/// where lockstep could change a result or the body's shape does not allow it (see the
/// module docs), or the kernel has no thread group.
pub fn phases(kernel: &Kernel) -> Option<Vec<Phase>> {
    let ranges = phase_ranges(kernel)?;
    let mut live: Vec<Handle<Local>> = Vec::new();
    let mut phases: Vec<Phase> = ranges
        .into_iter()
        .rev()
        .map(|stmts| {
            let (read_first, stored) = first_uses(kernel, &kernel.body.0[stmts.clone()]);
            live.retain(|l| !stored.contains(l));
            for l in read_first {
                if !live.contains(&l) {
                    live.push(l);
                }
            }
            live.sort_by_key(|l| l.index());
            Phase {
                stmts,
                live_in: live.clone(),
            }
        })
        .collect();
    phases.reverse();
    Some(phases)
}

/// The non-shared locals `stmts` read before a top-level store of the whole local (in
/// evaluation order: a store's value before its target), and those such a store writes.
fn first_uses(
    kernel: &Kernel,
    stmts: &[crate::Statement],
) -> (Vec<Handle<Local>>, Vec<Handle<Local>>) {
    let (mut read_first, mut stored) = (Vec::new(), Vec::new());
    for s in stmts {
        let mut roots = Vec::new();
        s.stmt.expr_roots(&mut roots);
        for l in locals_read(kernel, roots) {
            if !stored.contains(&l) && !read_first.contains(&l) {
                read_first.push(l);
            }
        }
        if let Stmt::Store { place, .. } = &s.stmt {
            if let (PlaceRoot::Local(l), true) = (&place.root, place.path.is_empty()) {
                let l = *l;
                if !kernel.locals[l].shared {
                    stored.push(l);
                }
            }
        }
    }
    (read_first, stored)
}

/// The non-shared locals the expressions `roots` (and what they are computed from) load.
fn locals_read(kernel: &Kernel, roots: Vec<Handle<crate::Expr>>) -> Vec<Handle<Local>> {
    let mut out = Vec::new();
    for l in kernel.local_loads(&roots) {
        if !kernel.locals[l].shared && !out.contains(&l) {
            out.push(l);
        }
    }
    out
}

/// The ranges of top-level statements between barriers, where lockstep is allowed.
fn phase_ranges(kernel: &Kernel) -> Option<Vec<Range<usize>>> {
    let group = kernel.group_size?;
    if group[1] != 1 || group[2] != 1 || !simple_control(&kernel.body, true) {
        return None;
    }
    let stmts = &kernel.body.0;
    let mut phases = Vec::new();
    let mut start = 0;
    for (at, s) in stmts.iter().enumerate() {
        if matches!(s.stmt, Stmt::Barrier) {
            phases.push(start..at);
            start = at + 1;
        }
    }
    phases.push(start..stmts.len());
    let shares = Shares {
        kernel,
        group: group[0],
    };
    phases
        .iter()
        .all(|phase| shares.phase_is_safe(&stmts[phase.clone()]))
        .then_some(phases)
}

/// No `return` or collective anywhere, barriers only at the top level.
fn simple_control(block: &Block, top: bool) -> bool {
    block.iter().all(|s| match &s.stmt {
        Stmt::Barrier => top,
        Stmt::Return | Stmt::Collective(_) => false,
        Stmt::If { accept, reject, .. } => {
            simple_control(accept, false) && simple_control(reject, false)
        }
        Stmt::Loop { body, continuing } => {
            simple_control(body, false) && simple_control(continuing, false)
        }
        Stmt::Store { .. } | Stmt::Break | Stmt::Continue => true,
    })
}

/// One access to a shared local: the local, and whether it is at the thread's own share.
type SharedAccess = (Handle<Local>, bool);

struct Shares<'k> {
    kernel: &'k Kernel,
    /// Threads per group.
    group: u32,
}

impl Shares<'_> {
    /// Whether every shared local written in the phase is written and read there only at
    /// the thread's own share.
    fn phase_is_safe(&self, stmts: &[crate::Statement]) -> bool {
        let (mut writes, mut reads) = (Vec::new(), Vec::new());
        for s in stmts {
            self.stmt_accesses(&s.stmt, &mut writes, &mut reads);
        }
        writes.iter().all(|&(local, own)| {
            own && reads
                .iter()
                .all(|&(read, own_read)| read != local || own_read)
        })
    }

    fn stmt_accesses(
        &self,
        stmt: &Stmt,
        writes: &mut Vec<SharedAccess>,
        reads: &mut Vec<SharedAccess>,
    ) {
        match stmt {
            Stmt::Store { place, value } => {
                if let PlaceRoot::Local(local) = place.root {
                    if self.kernel.locals[local].shared {
                        writes.push((local, self.own_share(local, &place.path)));
                    }
                }
                for h in place.operands().into_iter().chain([*value]) {
                    self.expr_reads(h, reads);
                }
            }
            Stmt::If {
                cond,
                accept,
                reject,
            } => {
                self.expr_reads(*cond, reads);
                for s in accept.iter().chain(reject.iter()) {
                    self.stmt_accesses(&s.stmt, writes, reads);
                }
            }
            Stmt::Loop { body, continuing } => {
                for s in body.iter().chain(continuing.iter()) {
                    self.stmt_accesses(&s.stmt, writes, reads);
                }
            }
            Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Barrier | Stmt::Collective(_) => {}
        }
    }

    /// The shared loads in expression `h` (and the expressions it is computed from).
    fn expr_reads(&self, h: Handle<crate::Expr>, reads: &mut Vec<SharedAccess>) {
        let kind = &self.kernel.exprs[h].kind;
        if let ExprKind::Load(place) = kind {
            if let PlaceRoot::Local(local) = place.root {
                if self.kernel.locals[local].shared {
                    reads.push((local, self.own_share(local, &place.path)));
                }
            }
        }
        for operand in kind.operands() {
            self.expr_reads(operand, reads);
        }
    }

    /// Whether `path` starts at element `stride * instanceInGroup().x + offset` of shared
    /// array `local`, with `0 <= offset < stride = len / group`.
    fn own_share(&self, local: Handle<Local>, path: &[Access]) -> bool {
        let Type::Array { len, .. } = self.kernel.locals[local].ty else {
            return false;
        };
        let stride = i64::from(len / self.group);
        let Some(Access::Index(index)) = path.first() else {
            return false;
        };
        let ExprKind::Binary {
            op: BinaryOp::Add,
            left,
            right,
        } = self.kernel.exprs[*index].kind
        else {
            return false;
        };
        let (product, offset) = if self.int_literal(right).is_some() {
            (left, right)
        } else {
            (right, left)
        };
        let Some(offset) = self.int_literal(offset) else {
            return false;
        };
        let ExprKind::Binary {
            op: BinaryOp::Mul,
            left,
            right,
        } = self.kernel.exprs[product].kind
        else {
            return false;
        };
        let factor_is_stride = |f: Handle<crate::Expr>, t: Handle<crate::Expr>| -> bool {
            self.int_literal(f) == Some(stride) && self.is_thread_in_group(t)
        };
        stride > 0
            && (0..stride).contains(&offset)
            && (factor_is_stride(left, right) || factor_is_stride(right, left))
    }

    fn int_literal(&self, h: Handle<crate::Expr>) -> Option<i64> {
        match &self.kernel.exprs[h].kind {
            ExprKind::Literal(l) if l.kind == ScalarKind::I32 => {
                Some(i64::from(l.bits as u32 as i32))
            }
            _ => None,
        }
    }

    /// `instanceInGroup().x`.
    fn is_thread_in_group(&self, h: Handle<crate::Expr>) -> bool {
        matches!(self.kernel.exprs[h].kind, ExprKind::Component { base, index: 0 }
            if matches!(self.kernel.exprs[base].kind, ExprKind::InstanceInGroup))
    }
}
