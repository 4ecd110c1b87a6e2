//! The shapes of a reduction launch (`SEMANTICS.md`, reductions).
//!
//! The input's shape is normalized (leading 1s dropped); the target's leading 1s are dropped
//! while it has more axes than the input. A one-element target reduces everything; a target of
//! the input's rank reduces tiles (`<100, 200>` into `<50, 20>`: 2x10 tiles); a lower-rank
//! target equal to the input's leading dimensions reduces the trailing axes (`<100>` from
//! `<100, 200>`: rows). The launch domain is the target's shape padded with trailing 1s to the
//! input's rank, so target position `t` reduces the input box at `t * tile` of size `tile`.

use super::args::Arg;
use super::checker::{Check, Checker, Shapes};
use crate::error::LaunchProblem;
use crate::plan::ExecRegion;
use crate::stream::addressing::{Addressing, Dims};
use crate::stream::RawStream;
use brook_ir::launch::normalized_shape;
use brook_ir::reduce_order::{fitted_target, reduction_tile, ReduceShapeError};
use brook_ir::ParamRole;

/// The input (stream or iterator) and reduction-target parameters of a reduce kernel.
pub fn input_and_target(kernel: &brook_ir::Kernel) -> Option<(usize, usize)> {
    let params = &kernel.params;
    let input = params
        .iter()
        .position(|p| matches!(p.role, ParamRole::Input | ParamRole::Iterator))?;
    let target = params.iter().position(|p| p.role == ParamRole::Reduce)?;
    Some((input, target))
}

/// The domain, tile and (whole) region of a reduction.
pub fn shapes(checker: &Checker<'_, '_>) -> Check<Shapes> {
    let Some((input, target)) = input_and_target(checker.kernel) else {
        return Err(LaunchProblem::NotSupported(
            "a reduction needs one input stream and one reduction target".into(),
        ));
    };
    if checker.options.domain_offset.is_some() || checker.options.domain_size.is_some() {
        return Err(LaunchProblem::ExecDomain(
            "a domain offset or size does not apply to a reduction: its target's shape decides what is reduced".into(),
        ));
    }
    let input_shape = checker.input_shape(input).unwrap_or_default();
    let Arg::Stream(target_stream) = &checker.args[target] else {
        return Err(LaunchProblem::NotSupported(
            "the reduction target must be a stream".into(),
        ));
    };
    let raw_target = target_stream.shape();
    let fitted = fitted_target(raw_target, input_shape.len());
    let tile = reduction_tile(&input_shape, fitted).map_err(|e| match e {
        ReduceShapeError::TargetRankTooHigh => LaunchProblem::ReduceRank {
            arg: checker.arg_ref(target),
            input: input_shape.to_vec(),
            target: raw_target.to_vec(),
        },
        ReduceShapeError::NotDividing {
            axis,
            input: input_extent,
            target: target_extent,
        } => LaunchProblem::ReduceShape {
            arg: checker.arg_ref(target),
            detail: format!(
                "input {input_shape:?}, target {raw_target:?}: axis {axis} of the input has {input_extent} elements, the target {target_extent} (a target of the input's rank must divide each dimension; a lower-rank target must equal the input's leading dimensions)"
            ),
        },
    })?;
    let domain: Dims = input_shape
        .iter()
        .zip(&tile)
        .map(|(extent, t)| extent / t)
        .collect();
    let region = ExecRegion {
        origin: smallvec::smallvec![0; domain.len()],
        size: domain.clone(),
    };
    Ok(Shapes {
        domain,
        region,
        reduction_tile: Some(tile.as_slice().into()),
    })
}

/// The shape (the domain) and addressing a reduction target is bound with.
pub fn target_binding(stream: &RawStream, domain: &[usize]) -> (Dims, Addressing) {
    let fitted = fitted_target(stream.shape(), domain.len()).len();
    let mut addressing = stream.addressing().fit(fitted);
    if normalized_shape(stream.shape()) == [1] {
        addressing.pitches.fill(0);
    }
    addressing
        .pitches
        .resize(domain.len().max(addressing.pitches.len()), 0);
    addressing.pitches.truncate(domain.len());
    (Dims::from_slice(domain), addressing)
}
