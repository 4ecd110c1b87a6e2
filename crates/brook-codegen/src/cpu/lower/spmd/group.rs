//! The threads of a thread group in gangs: a group's body is cut at its barriers into
//! phases ([`brook_ir::lockstep`]), each phase runs for every gang of the group before the
//! next starts, and a gang's locals wait between phases in a save area of the group's state.
//! Where `lockstep::phases` allows it, this gives what the interpreter's order of threads
//! gives ([`group_phases`]).

use super::{Gang, LocalSlot, Plan, Spmd, Var};
use crate::cpu::layout::{clif_type, has_array, leaves};
use crate::cpu::lower::Lower;
use brook_ir::lockstep::Phase;
use brook_ir::{Block, Handle, Kernel, KernelKind, Local, Module};
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};

/// The gang and phases a group kernel runs in on this host: the host's gang, or gangs of 4
/// where its group is a multiple of 4 threads but not of the host's 8; `None` (also with
/// gangs turned off by `tuning`): a thread at a time.
pub fn host_group_gang(
    module: &Module,
    kernel: &Kernel,
    rank: usize,
    tuning: &crate::Tuning,
) -> Option<(Gang, Vec<Phase>)> {
    let host = Gang::host(tuning.gangs)?;
    [host, Gang { parts: 1 }]
        .into_iter()
        .find_map(|gang| group_phases(module, kernel, gang, rank).map(|phases| (gang, phases)))
}

/// The phases a group kernel's gangs run (top-level statement ranges between barriers), or
/// `None` where its threads must run one at a time: threads in lockstep could see another
/// order of shared writes than the interpreter's, the group is not a whole number of gangs,
/// the launch is not one-dimensional (a gang's threads must be one row's consecutive
/// instances), a thread reads a scatter array or keeps a local array (whose per-lane copies
/// would have to wait between phases too), or the body is too large for SSA construction.
pub fn group_phases(
    module: &Module,
    kernel: &Kernel,
    gang: Gang,
    rank: usize,
) -> Option<Vec<Phase>> {
    let [threads, ..] = kernel.group_size?;
    let local_arrays = kernel
        .locals
        .iter()
        .any(|(_, l)| !l.shared && has_array(module, &l.ty));
    if kernel.kind != KernelKind::Map
        || rank != 1
        || !(threads as usize).is_multiple_of(gang.lanes())
        || local_arrays
        || kernel.reads_scatter_array()
        || !super::fits_ssa(module, kernel, gang)
    {
        return None;
    }
    brook_ir::lockstep::phases(kernel)
}

/// Bytes one gang's locals take in the save area between phases: every leaf of a local
/// held in variables, a vector per part where it packs, 8 bytes a lane where it does not
/// (the order [`Spmd::move_locals`] keeps).
pub fn save_size(module: &Module, kernel: &Kernel, gang: Gang) -> u32 {
    kernel
        .locals
        .iter()
        .filter(|(_, l)| !l.shared && !has_array(module, &l.ty))
        .flat_map(|(_, l)| leaves(module, &l.ty))
        .map(|leaf| {
            if super::packs(leaf.kind) {
                (gang.parts * 16) as u32
            } else {
                (gang.lanes() * 8) as u32
            }
        })
        .sum()
}

impl Plan {
    /// Lowers one phase (`stmts`) for one gang where the builder stands: a full gang, or a
    /// ragged one of `count` lanes. Its locals start at zero, those of `restore`'s list as its
    /// save area holds them; `save`'s list goes to its save area at the end.
    pub fn phase(
        &self,
        lower: &mut Lower<'_, '_>,
        count: Option<Value>,
        stmts: &Block,
        restore: Option<Moved<'_>>,
        save: Option<Moved<'_>>,
    ) -> Result<(), crate::CompileError> {
        let mut spmd = Spmd::new(lower, self, count);
        spmd.zero_locals();
        if let Some(moved) = restore {
            spmd.move_locals(moved, Direction::Restore);
        }
        crate::lower::stmt::block(&mut spmd, stmts, None)?;
        if let Some(moved) = save {
            spmd.move_locals(moved, Direction::Save);
        }
        Ok(())
    }
}

/// Locals moved between a gang's variables and its save area at `area`.
#[derive(Clone, Copy)]
pub struct Moved<'a> {
    pub area: Value,
    pub locals: &'a [Handle<Local>],
}

#[derive(Clone, Copy, PartialEq)]
enum Direction {
    Save,
    Restore,
}

impl Spmd<'_, '_, '_> {
    /// Moves the lanes of `moved`'s locals to or from its save area; each local of the
    /// kernel held in variables has its place there, in the order [`save_size`] counts.
    fn move_locals(&mut self, moved: Moved<'_>, direction: Direction) {
        let flags = MemFlagsData::trusted();
        let mut at = 0i32;
        for index in 0..self.plan.locals.len() {
            let LocalSlot::Vars(vars) = self.plan.locals[index].clone() else {
                continue;
            };
            let wanted = moved.locals.iter().any(|l| l.index() == index);
            for var in vars {
                let (ty, values, size) = match var {
                    Var::Packed { kind, vars, .. } => {
                        (super::vector_type(kind), vars[..self.parts()].to_vec(), 16)
                    }
                    Var::Lanes { kind, vars, .. } => {
                        (clif_type(kind), vars[..self.lane_count()].to_vec(), 8)
                    }
                    Var::Uniform(_) | Var::Cursor { .. } => continue,
                };
                for v in values {
                    if wanted {
                        self.move_value(v, ty, moved.area, at, direction, flags);
                    }
                    at += size;
                }
            }
        }
    }

    fn move_value(
        &mut self,
        var: cranelift_frontend::Variable,
        ty: types::Type,
        area: Value,
        at: i32,
        direction: Direction,
        flags: MemFlagsData,
    ) {
        match direction {
            Direction::Save => {
                let value = self.s.b.use_var(var);
                self.s.b.ins().store(flags, value, area, at);
            }
            Direction::Restore => {
                let value = self.s.b.ins().load(ty, flags, area, at);
                self.s.b.def_var(var, value);
            }
        }
    }
}
