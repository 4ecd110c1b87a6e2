//! A reduction's block of 16 leaves reduced in lanes: the canonical tree's levels as gang
//! combines, each pairing the nodes of a level in its lanes (the accumulator holding the even
//! nodes, the input the odd ones), so each lane runs exactly the combine the tree makes there.
//!
//! Used where the reduced value is one `float`, `int` or `uint`, the leaves lie 16 in a row in
//! memory (four vector loads) and the host runs gangs of 8: the 8 combines of the first level
//! are one gang run, and each later level another, its lanes repeating the fewer nodes.

use super::{declare, packs, vector_type, Gang, Leaf, Plan, Spmd, Var, MAX_PARTS};
use crate::abi::Variant;
use crate::cpu::lower::Lower;
use crate::lower::Binding;
use crate::CompileError;
use brook_ir::{ExprKind, Kernel, KernelKind, Module, ParamRole, ScalarKind, Type, ValueType};
use cranelift_codegen::ir::{InstBuilder, Value};

/// Leaves in a block: the reduction driver's.
const BLOCK: usize = crate::cpu::driver::reduce::BLOCK as usize;

/// The kind of the value a reduce kernel combines, where its blocks can be reduced in lanes
/// on this host: one packable scalar as input and target, no thread groups or shared locals,
/// nothing that depends on an instance's position, and gangs of 8.
pub fn lane_kind(module: &Module, kernel: &Kernel) -> Option<ScalarKind> {
    let gang = Gang::host().filter(|g| g.parts == MAX_PARTS)?;
    if kernel.kind != KernelKind::Reduce || kernel.group_size.is_some() {
        return None;
    }
    let scalar = |role: fn(&ParamRole) -> bool| {
        let p = kernel.params.iter().find(|p| role(&p.role))?;
        match p.ty {
            Type::Value(ValueType { kind, width: 1 })
                if packs(kind) && kind != ScalarKind::Bool =>
            {
                Some(kind)
            }
            _ => None,
        }
    };
    let input = scalar(|r| matches!(r, ParamRole::Input))?;
    let target = scalar(|r| *r == ParamRole::Reduce)?;
    let positional = kernel.exprs.iter().any(|(_, e)| {
        matches!(
            e.kind,
            ExprKind::IndexOf(_) | ExprKind::Instance | ExprKind::InstanceInGroup
        )
    });
    let fits = input == target
        && !positional
        && !kernel.locals.iter().any(|(_, l)| l.shared)
        && super::fits_gang(module, kernel, gang);
    fits.then_some(target)
}

/// Reduces the 16 leaves at `addr` (consecutive elements of `kind`) as the canonical tree,
/// combining with the kernel's body (`input`, `target`: the parameters' indices); the root.
pub fn block_in_lanes(
    lower: &mut Lower<'_, '_>,
    variant: &Variant,
    (input, target): (usize, usize),
    kind: ScalarKind,
    addr: Value,
) -> Result<Value, CompileError> {
    let gang = Gang { parts: MAX_PARTS };
    let ty = vector_type(kind);
    let flags = cranelift_codegen::ir::MemFlagsData::new().with_notrap();
    let rows: Vec<Value> = (0..BLOCK / 4)
        .map(|i| lower.b.ins().load(ty, flags, addr, 16 * i as i32))
        .collect();
    // Level 1: lanes 0-7 pair leaves (0, 1), (2, 3), ...
    let mut left = [even(lower, rows[0], rows[1]), even(lower, rows[2], rows[3])];
    let mut right = [odd(lower, rows[0], rows[1]), odd(lower, rows[2], rows[3])];
    let mut nodes = BLOCK / 2;
    loop {
        let level = combine_in_lanes(lower, gang, variant, (input, target), kind, left, right)?;
        if nodes == 1 {
            return Ok(lower.b.ins().extractlane(level[0], 0));
        }
        // The next level pairs this one's nodes, which lanes 0..nodes hold.
        let (a, b) = if nodes == BLOCK / 2 {
            (level[0], level[1])
        } else {
            (level[0], level[0])
        };
        let (e, o) = (even(lower, a, b), odd(lower, a, b));
        left = [e, e];
        right = [o, o];
        nodes /= 2;
    }
}

/// One gang run of the body: lane `k` combines `left`'s lane `k` with `right`'s.
fn combine_in_lanes(
    lower: &mut Lower<'_, '_>,
    gang: Gang,
    variant: &Variant,
    (input, target): (usize, usize),
    kind: ScalarKind,
    left: [Value; MAX_PARTS],
    right: [Value; MAX_PARTS],
) -> Result<[Value; MAX_PARTS], CompileError> {
    let mut plan = Plan::new(lower, gang, variant);
    let acc = declare(lower, kind, None);
    let Var::Packed { vars, .. } = acc else {
        unreachable!("a packable kind is packed")
    };
    for (&var, &v) in vars.iter().zip(&left) {
        lower.b.def_var(var, v);
    }
    plan.bindings[target] = Binding::Vars(vec![acc]);
    plan.bindings[input] = Binding::Values(vec![Leaf::Packed(right)]);
    let mut spmd = Spmd::new(lower, &plan, None);
    spmd.zero_locals();
    let body = &spmd.s.kernel.body;
    crate::lower::stmt::block(&mut spmd, body, None)?;
    Ok(vars.map(|v| lower.b.use_var(v)))
}

/// Lanes 0, 2 of `a` then 0, 2 of `b` (`shufps` 0x88).
fn even(lower: &mut Lower<'_, '_>, a: Value, b: Value) -> Value {
    pick(lower, a, b, [0, 2, 4, 6])
}

/// Lanes 1, 3 of `a` then 1, 3 of `b` (`shufps` 0xdd).
fn odd(lower: &mut Lower<'_, '_>, a: Value, b: Value) -> Value {
    pick(lower, a, b, [1, 3, 5, 7])
}

fn pick(lower: &mut Lower<'_, '_>, a: Value, b: Value, lanes: [u8; 4]) -> Value {
    super::lanes::shuffle_dwords(&mut lower.b, a, b, lanes)
}
