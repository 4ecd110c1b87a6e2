//! The shapes of a scan launch: a reduce kernel's operator run over prefixes
//! (`brook_ir::scan_order`).
//!
//! The kernel must be an operator: one input stream and one reduction target of the same
//! type, nothing else. The output (bound to the target) has the input's shape. A scan along
//! the last axis has one row per position of the leading axes; a scan of the whole stream has
//! one row of every element in row-major order. As for a reduction, the domain is the rows'
//! shape padded to the input's rank and each domain position's tile is its row, so devices
//! find the rows as they find a reduction's tiles.

use super::args::{Arg, ScanRequest};
use super::checker::{Check, Checker, Shapes};
use crate::element::ElementType;
use crate::error::LaunchProblem;
use crate::plan::{ExecRegion, ScanPlan};
use crate::stream::addressing::Dims;
use brook_ir::launch::normalized_shape;
use brook_ir::scan_order::ScanKind;
use brook_ir::KernelKind;

/// The domain and tiles of a scan, and what the devices are told of it.
/// `(input, target)` are the operator's parameters ([`operator`]).
pub fn shapes(
    checker: &Checker<'_, '_>,
    request: &ScanRequest,
    (input, target): (usize, usize),
) -> Check<(Shapes, ScanPlan)> {
    let fail = |index: usize, problem: String| LaunchProblem::Scan {
        arg: checker.arg_ref(index),
        problem,
    };
    let Arg::Stream(input_stream) = &checker.args[input] else {
        return Err(fail(
            input,
            "reads a stream: an iterator cannot be scanned (copy it into a stream first)".into(),
        ));
    };
    let Arg::Stream(output) = &checker.args[target] else {
        return Err(fail(target, "writes its prefixes into a stream".into()));
    };
    if checker.options.domain_offset.is_some() || checker.options.domain_size.is_some() {
        return Err(LaunchProblem::ExecDomain(
            "a domain offset or size does not apply to a scan: it covers its whole input".into(),
        ));
    }
    let shape = Dims::from_slice(normalized_shape(input_stream.shape()));
    if normalized_shape(output.shape()) != shape.as_slice() {
        return Err(fail(
            target,
            format!(
                "writes a prefix for every input element: the output's shape {:?} must be the input's {:?}",
                output.shape(),
                input_stream.shape()
            ),
        ));
    }
    let init = initial_value(checker, request, target)?;
    let rank = shape.len();
    let (domain, tile) = if request.whole || rank == 1 {
        (smallvec::smallvec![1; rank], shape.clone())
    } else {
        let mut domain = shape.clone();
        domain[rank - 1] = 1;
        let mut tile: Dims = smallvec::smallvec![1; rank];
        tile[rank - 1] = shape[rank - 1];
        (domain, tile)
    };
    let shapes = Shapes {
        region: ExecRegion {
            origin: smallvec::smallvec![0; rank],
            size: domain.clone(),
        },
        domain,
        reduction_tile: Some(tile),
    };
    Ok((
        shapes,
        ScanPlan {
            kind: request.kind,
            init,
        },
    ))
}

/// The input and target parameters of an operator kernel: a reduce kernel of one input and
/// one target of the same type (checked before the arguments, whose count it decides).
pub fn operator(checker: &Checker<'_, '_>) -> Check<(usize, usize)> {
    if checker.kernel.kind != KernelKind::Reduce {
        return Err(LaunchProblem::NotSupported(format!(
            "a scan's operator is a reduce kernel; `{}` is a map kernel",
            checker.kernel.name
        )));
    }
    let params = &checker.kernel.params;
    let Some((input, target)) = super::reduce::input_and_target(checker.kernel) else {
        return Err(LaunchProblem::NotSupported(
            "a scan needs a reduce kernel of one input stream and one reduction target".into(),
        ));
    };
    if params.len() != 2 {
        return Err(LaunchProblem::NotSupported(format!(
            "a scan's operator is a reduce kernel of exactly one input and one reduction target; `{}` has {} parameters",
            checker.kernel.name,
            params.len()
        )));
    }
    if params[input].ty != params[target].ty {
        return Err(LaunchProblem::Scan {
            arg: checker.arg_ref(input),
            problem: format!(
                "combines values of one type: the input is {} but the reduction target {}",
                checker.module.type_name(&params[input].ty),
                checker.module.type_name(&params[target].ty)
            ),
        });
    }
    Ok((input, target))
}

/// An exclusive scan's first prefix, converted to the target's type; an inclusive scan has
/// none.
fn initial_value(
    checker: &Checker<'_, '_>,
    request: &ScanRequest,
    target: usize,
) -> Check<Option<Vec<u8>>> {
    let fail = |problem: String| LaunchProblem::Scan {
        arg: checker.arg_ref(target),
        problem,
    };
    let ty = &checker.kernel.params[target].ty;
    match (request.kind, &request.init) {
        (ScanKind::Inclusive, None) => Ok(None),
        (ScanKind::Inclusive, Some(_)) => Err(fail(
            "that is inclusive takes no initial value (an exclusive scan does)".into(),
        )),
        (ScanKind::Exclusive, None) => Err(fail(
            "that is exclusive needs the value of its first prefix (Brook operators have no identity)".into(),
        )),
        (ScanKind::Exclusive, Some(init)) => {
            let want = ElementType::from_ir(checker.module, ty);
            match want {
                Some(t) if init.element.same_layout(&t) => Ok(Some(init.bytes.clone())),
                Some(t) => super::convert::converted(init, &t).map(Some).ok_or_else(|| {
                    fail(format!(
                        "of {} values cannot start from a {} value",
                        checker.module.type_name(ty),
                        init.element
                    ))
                }),
                None => Err(fail("of this type cannot take an initial value".into())),
            }
        }
    }
}
