//! A reduction's block of 16 leaves reduced in lanes: the canonical tree's levels as gang
//! combines, each pairing the nodes of a level in its lanes (the accumulator holding the even
//! nodes, the input the odd ones), so each lane runs exactly the combine the tree makes there.
//!
//! Used where the reduced value is one `float`, `int` or `uint` or a `float4`, `int4` or
//! `uint4`, the leaves lie 16 in a row in memory (four vector loads, or sixteen and 4x4
//! transposes for four components) and the host runs SIMD gangs: the 8 combines of the first
//! level are one gang run, and each later level another, its lanes repeating the fewer
//! nodes.

use super::lanes::retype;
use super::{declare, packs, vector_type, Gang, Leaf, Plan, Spmd, Var, MAX_PARTS};
use crate::abi::Variant;
use crate::cpu::lower::Lower;
use crate::lower::Binding;
use crate::CompileError;
use brook_ir::{ExprKind, Kernel, KernelKind, Module, ParamRole, ScalarKind, Type, ValueType};
use cranelift_codegen::ir::{InstBuilder, Value};

/// Leaves in a block: the reduction driver's.
const BLOCK: usize = crate::cpu::driver::reduce::BLOCK as usize;

/// The value a reduce kernel combines, where its blocks can be reduced in lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaneValue {
    pub kind: ScalarKind,
    /// Components: 1 or 4.
    pub width: u8,
}

/// The kind and width of the value a reduce kernel combines, where its blocks can be reduced
/// in lanes on this host: one packable 32-bit scalar or a vector of four as input and target,
/// no thread groups or shared locals, nothing that depends on an instance's position, and
/// SIMD gangs on this host (not turned off by `tuning`).
pub fn lane_kind(module: &Module, kernel: &Kernel, tuning: &crate::Tuning) -> Option<LaneValue> {
    // Blocks use gangs of 8 (two 128-bit vectors) on every host with SIMD gangs: a block's
    // few values fit the registers of SSE4.1 and NEON hosts too, whose map kernels run in
    // gangs of 4.
    let gang = Gang::host(tuning.gangs).map(|_| Gang { parts: MAX_PARTS })?;
    if kernel.kind != KernelKind::Reduce || kernel.group_size.is_some() {
        return None;
    }
    let scalar = |role: fn(&ParamRole) -> bool| {
        let p = kernel.params.iter().find(|p| role(&p.role))?;
        match p.ty {
            Type::Value(ValueType { kind, width })
                if packs(kind)
                    && kind != ScalarKind::Bool
                    && (width == 1 || width == 4)
                    && module.layout(&p.ty).size == 4 * u32::from(width) =>
            {
                Some(LaneValue { kind, width })
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

/// Reduces the 16 leaves at `addr` (consecutive elements of `value`) as the canonical tree,
/// combining with the kernel's body (`input`, `target`: the parameters' indices); the root's
/// components.
pub fn block_in_lanes(
    lower: &mut Lower<'_, '_>,
    variant: &Variant,
    (input, target): (usize, usize),
    value: LaneValue,
    addr: Value,
) -> Result<Vec<Value>, CompileError> {
    let gang = Gang { parts: MAX_PARTS };
    let (mut left, mut right) = match value.width {
        1 => scalar_leaves(lower, value.kind, addr),
        _ => vector_leaves(lower, value.kind, addr),
    };
    let mut nodes = BLOCK / 2;
    loop {
        let level = combine_in_lanes(lower, gang, variant, (input, target), value, left, right)?;
        if nodes == 1 {
            return Ok(level
                .iter()
                .map(|parts| lower.b.ins().extractlane(parts[0], 0))
                .collect());
        }
        // The next level pairs this one's nodes, which lanes 0..nodes hold.
        (left, right) = level
            .iter()
            .map(|parts| {
                let (a, b) = if nodes == BLOCK / 2 {
                    (parts[0], parts[1])
                } else {
                    (parts[0], parts[0])
                };
                let (e, o) = (even(lower, a, b), odd(lower, a, b));
                ([e, e], [o, o])
            })
            .unzip();
        nodes /= 2;
    }
}

/// The first level's operands of 16 scalar leaves: lanes 0-7 pair leaves (0, 1), (2, 3), ...
type Operands = (Vec<[Value; MAX_PARTS]>, Vec<[Value; MAX_PARTS]>);

fn scalar_leaves(lower: &mut Lower<'_, '_>, kind: ScalarKind, addr: Value) -> Operands {
    let ty = vector_type(kind);
    let flags = cranelift_codegen::ir::MemFlagsData::new().with_notrap();
    let rows: Vec<Value> = (0..BLOCK / 4)
        .map(|i| lower.b.ins().load(ty, flags, addr, 16 * i as i32))
        .collect();
    let left = [even(lower, rows[0], rows[1]), even(lower, rows[2], rows[3])];
    let right = [odd(lower, rows[0], rows[1]), odd(lower, rows[2], rows[3])];
    (vec![left], vec![right])
}

/// The first level's operands of 16 leaves of four components, one vector of lanes per
/// component: the even leaves' and the odd leaves' rows transposed four at a time.
fn vector_leaves(lower: &mut Lower<'_, '_>, kind: ScalarKind, addr: Value) -> Operands {
    let flags = cranelift_codegen::ir::MemFlagsData::new().with_notrap();
    let ty = vector_type(kind);
    let rows: Vec<Value> = (0..BLOCK)
        .map(|i| {
            lower.b.ins().load(
                cranelift_codegen::ir::types::I32X4,
                flags,
                addr,
                16 * i as i32,
            )
        })
        .collect();
    let mut columns = |first: usize| -> Vec<[Value; MAX_PARTS]> {
        let parts: Vec<[Value; 4]> = (0..MAX_PARTS)
            .map(|p| {
                let leaf = |k: usize| rows[first + 2 * (4 * p + k)];
                transpose(lower, [leaf(0), leaf(1), leaf(2), leaf(3)])
            })
            .collect();
        (0..4)
            .map(|c| std::array::from_fn(|p| retype(&mut lower.b, parts[p][c], ty)))
            .collect()
    };
    (columns(0), columns(1))
}

/// Rows of four 32-bit lanes to columns.
fn transpose(lower: &mut Lower<'_, '_>, [r0, r1, r2, r3]: [Value; 4]) -> [Value; 4] {
    let t0 = pick(lower, r0, r1, [0, 4, 1, 5]);
    let t1 = pick(lower, r2, r3, [0, 4, 1, 5]);
    let t2 = pick(lower, r0, r1, [2, 6, 3, 7]);
    let t3 = pick(lower, r2, r3, [2, 6, 3, 7]);
    [
        pick(lower, t0, t1, [0, 1, 4, 5]),
        pick(lower, t0, t1, [2, 3, 6, 7]),
        pick(lower, t2, t3, [0, 1, 4, 5]),
        pick(lower, t2, t3, [2, 3, 6, 7]),
    ]
}

/// One gang run of the body: lane `k` combines `left`'s lane `k` with `right`'s, one vector
/// pair per component.
fn combine_in_lanes(
    lower: &mut Lower<'_, '_>,
    gang: Gang,
    variant: &Variant,
    (input, target): (usize, usize),
    value: LaneValue,
    left: Vec<[Value; MAX_PARTS]>,
    right: Vec<[Value; MAX_PARTS]>,
) -> Result<Vec<[Value; MAX_PARTS]>, CompileError> {
    let mut plan = Plan::new(lower, gang, variant);
    let mut accs = Vec::with_capacity(left.len());
    let mut all = Vec::with_capacity(left.len());
    for parts in &left {
        let acc = declare(lower, value.kind, None);
        let Var::Packed { vars, .. } = acc else {
            unreachable!("a packable kind is packed")
        };
        for (&var, &v) in vars.iter().zip(parts) {
            lower.b.def_var(var, v);
        }
        accs.push(acc);
        all.push(vars);
    }
    plan.bindings[target] = Binding::Vars(accs);
    plan.bindings[input] = Binding::Values(right.into_iter().map(Leaf::Packed).collect());
    let mut spmd = Spmd::new(lower, &plan, None);
    spmd.zero_locals();
    let body = &spmd.s.kernel.body;
    crate::lower::stmt::block(&mut spmd, body, None)?;
    Ok(all
        .into_iter()
        .map(|vars| vars.map(|v| lower.b.use_var(v)))
        .collect())
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
