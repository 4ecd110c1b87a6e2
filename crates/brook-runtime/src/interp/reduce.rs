//! Reductions, exactly as `brook_ir::reduce_order` defines them: for each target element, the
//! input tile's elements in row-major order are combined by the canonical aligned tree, each
//! combine being one run of the kernel body ([`super::single`]), the leaves read as the tree
//! consumes them (memory per leaf O(1)).

use super::eval::{read_input, Context, Memory};
use super::single::{run_single, SingleArg};
use super::value::Value;
use crate::plan::{Bound, ScanPlan};
use crate::stream::addressing::unravel;
use brook_ir::reduce_order::reduce_canonical_streamed;
use brook_ir::scan_order::scan_serial;
use brook_ir::ParamRole;

/// Reduces every tile of the input into the target.
pub fn run(
    ctx: &Context<'_>,
    mem: &mut Memory<'_>,
    tile: &[usize],
    scan: Option<&ScanPlan>,
    args: &[Bound],
) -> Result<(), String> {
    let params = &ctx.kernel.params;
    let input = params
        .iter()
        .position(|p| matches!(p.role, ParamRole::Input | ParamRole::Iterator))
        .ok_or("a reduction without an input")?;
    let target = params
        .iter()
        .position(|p| p.role == ParamRole::Reduce)
        .ok_or("a reduction without a target")?;
    let data = ctx.inputs[input]
        .as_ref()
        .ok_or("the reduction input is not bound")?;
    let ty = &params[target].ty;
    let size = ctx.layouts.size(ctx.module, ty);
    let constant_bytes: Vec<Option<Vec<u8>>> = args
        .iter()
        .map(|b| match b {
            Bound::Constant(bytes) => Some(bytes.to_vec()),
            _ => None,
        })
        .collect();
    let encode = |value: &Value| {
        let mut bytes = vec![0u8; size];
        ctx.layouts.encode(ctx.module, ty, value, &mut bytes);
        bytes
    };
    let mut failure = None;
    let mut combine = |left: &Vec<u8>, right: &Vec<u8>| {
        let mut single: Vec<SingleArg> = (0..params.len())
            .map(|i| match (i, &constant_bytes[i]) {
                (i, _) if i == target => SingleArg::Output(left.clone()),
                (i, _) if i == input => SingleArg::Input(right.clone()),
                (_, Some(bytes)) => SingleArg::Constant(bytes.clone()),
                (i, None) => match &ctx.inputs[i] {
                    Some(array) => SingleArg::Array(array.clone()),
                    None => SingleArg::Constant(Vec::new()),
                },
            })
            .collect();
        if let Err(e) = run_single(ctx.module, ctx.kernel, &ctx.layouts, &mut single) {
            failure.get_or_insert(e);
        }
        match single.swap_remove(target) {
            SingleArg::Output(bytes) => bytes,
            _ => left.clone(),
        }
    };
    let target_data = mem.outputs[target]
        .as_ref()
        .ok_or("the reduction target is not bound")?;
    let (buffer, addressing) = (target_data.buffer, target_data.addressing.clone());
    let tile_len: usize = tile.iter().product();
    let targets: usize = ctx.domain.iter().product();
    let mut t = vec![0; ctx.domain.len()];
    let mut u = vec![0; tile.len()];
    let position = |t: &[usize], u: &[usize]| -> Vec<usize> {
        t.iter()
            .zip(tile)
            .zip(u)
            .map(|((t, n), u)| t * n + u)
            .collect()
    };
    // The leaves are read one at a time as the order consumes them: memory per target is a
    // value per tree level, whatever the tile's length.
    let mut u_out = vec![0; tile.len()];
    for linear in 0..targets {
        unravel(linear, &ctx.domain, &mut t);
        let leaves = (0..tile_len).map(|k| {
            unravel(k, tile, &mut u);
            encode(&read_input(ctx, data, ty, &position(&t, &u)))
        });
        let Some(scan) = scan else {
            if let Some(result) = reduce_canonical_streamed(leaves, &mut combine) {
                let offset = addressing.element(&t) * size;
                mem.buffers[buffer][offset..offset + size].copy_from_slice(&result);
            }
            continue;
        };
        let out = &mut mem.buffers[buffer];
        scan_serial(
            leaves,
            scan.init.clone(),
            scan.kind,
            &mut combine,
            &mut |k, prefix| {
                if let Some(prefix) = prefix {
                    unravel(k, tile, &mut u_out);
                    let offset = addressing.element(&position(&t, &u_out)) * size;
                    out[offset..offset + size].copy_from_slice(&prefix);
                }
            },
        );
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
