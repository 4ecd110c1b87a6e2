//! What a LOOM kernel's launch adds to a Brook kernel's: the arrays' extents are checked
//! against those the kernel was compiled for, and the parameters the caller never sees are
//! made (a zeroed buffer for each `global` array, the length of each `T[]` array). A refused
//! launch is recorded on its streams and printed, as every refused launch is.

use crate::error::Error;
use crate::kernel::{launch_device, Arg, Kernel};
use brook_front::loom::lower::Hidden;
use brook_runtime::element::ElementType;
use brook_runtime::{ArgRef, Constant, LaunchError, LaunchProblem, RawStream};

/// What a LOOM kernel's launches need beyond a Brook kernel's.
#[derive(Debug)]
pub(crate) struct LoomShapes {
    /// Per IR parameter: the extents its array must have (`None` for an axis of any
    /// length), or `None` for a value.
    pub extents: Vec<Option<Vec<Option<usize>>>>,
    /// The caller gives the first `arguments` parameters; each launch makes the rest.
    pub arguments: usize,
    /// What each of the rest is: a zeroed `global` array, or a given array's extent.
    pub hidden: Vec<Hidden>,
}

/// A LOOM launch's arguments: the given ones, checked, then the hidden ones in their order
/// (`made` keeps the streams made for `global` arrays).
pub(crate) fn arguments<'s>(
    kernel: &Kernel,
    shapes: &LoomShapes,
    args: &'s [Arg<'_>],
    made: &'s mut Vec<RawStream>,
) -> Result<Vec<Arg<'s>>, Error> {
    if let Err(problem) = check(kernel, shapes, args) {
        return Err(refuse(kernel, args, problem));
    }
    // `check` lets through streams and values only.
    let mut all: Vec<Arg<'s>> = Vec::with_capacity(kernel.ir().params.len());
    for arg in args {
        match arg {
            Arg::Stream(stream) => all.push(Arg::Stream(stream)),
            Arg::Constant(c) => all.push(Arg::Constant(c.clone())),
            _ => {}
        }
    }
    // The hidden values in their order: `None` where a made stream goes.
    let mut values: Vec<Option<Constant>> = Vec::with_capacity(shapes.hidden.len());
    for (k, hidden) in shapes.hidden.iter().enumerate() {
        let index = shapes.arguments + k;
        match hidden {
            Hidden::Global => {
                made.push(zeroed_global(kernel, shapes, index, args)?);
                values.push(None);
            }
            Hidden::Extent { param, axis } => {
                let length = match args.get(*param) {
                    Some(Arg::Stream(s)) => s.shape().get(*axis).copied().unwrap_or(0),
                    _ => 0,
                };
                values.push(Some(Constant {
                    element: int(),
                    bytes: (length as i32).to_le_bytes().to_vec(),
                }));
            }
        }
    }
    let mut streams = made.iter();
    for value in values {
        match value {
            Some(constant) => all.push(Arg::Constant(constant)),
            None => all.extend(streams.next().map(Arg::Stream)),
        }
    }
    Ok(all)
}

fn int() -> ElementType {
    ElementType::Value(brook_ir::ValueType::scalar(brook_ir::ScalarKind::I32))
}

/// The given arguments: as many as the kernel's own parameters, streams of the extents it
/// was compiled for (a `T[]` axis of any length up to 2^31 - 1) and values.
fn check(kernel: &Kernel, shapes: &LoomShapes, args: &[Arg<'_>]) -> Result<(), LaunchProblem> {
    if args.len() != shapes.arguments {
        return Err(LaunchProblem::ArgumentCount {
            expected: shapes.arguments,
            found: args.len(),
        });
    }
    let params = &kernel.ir().params;
    for (i, ((arg, extents), param)) in args.iter().zip(&shapes.extents).zip(params).enumerate() {
        let at = || ArgRef {
            position: i + 1,
            name: param.name.clone(),
        };
        match (arg, extents) {
            (Arg::Stream(stream), Some(extents)) => {
                let shape = stream.shape();
                let fits = shape.len() == extents.len()
                    && shape
                        .iter()
                        .zip(extents)
                        .all(|(&n, e)| e.map_or(n <= i32::MAX as usize, |e| e == n));
                if !fits {
                    let wanted: Vec<String> = extents
                        .iter()
                        .map(|e| e.map_or_else(|| "any".to_string(), |n| n.to_string()))
                        .collect();
                    return Err(LaunchProblem::ArrayShape {
                        arg: at(),
                        problem: format!(
                            "an array of [{}] on the grid the kernel was compiled for, and the stream has shape {shape:?}",
                            wanted.join(", ")
                        ),
                    });
                }
            }
            (Arg::Constant(_), None) => {}
            (arg, extents) => {
                return Err(LaunchProblem::ArgumentKind {
                    arg: at(),
                    expected: if extents.is_some() {
                        "a stream"
                    } else {
                        "a value"
                    }
                    .into(),
                    found: match arg {
                        Arg::Stream(_) => "a stream",
                        Arg::Constant(_) => "a value",
                        Arg::Iterator(_) => "an iterator",
                        Arg::HostValue { .. } => "a host variable",
                        Arg::Vout(_) => "a vout stream",
                    }
                    .into(),
                });
            }
        }
    }
    Ok(())
}

/// A refused launch: the error on every stream given (a LOOM kernel may write each) and
/// printed, or only printed when no stream was given.
fn refuse(kernel: &Kernel, args: &[Arg<'_>], problem: LaunchProblem) -> Error {
    let error = LaunchError {
        kernel: kernel.name().to_string(),
        call_site: kernel.call_site().map(str::to_string),
        problem,
    };
    let (code, message) = (error.code(), error.to_string());
    let mut recorded = false;
    for arg in args {
        if let Arg::Stream(stream) = arg {
            stream.record_error(code, &message);
            recorded = true;
        }
    }
    if !recorded {
        brook_runtime::log::append(&format!("error: {code}: {message}"));
    }
    Error::Launch(Box::new(error))
}

/// A zeroed buffer for the `global` array that is IR parameter `index`, on the launch's
/// device.
fn zeroed_global(
    kernel: &Kernel,
    shapes: &LoomShapes,
    index: usize,
    args: &[Arg<'_>],
) -> Result<RawStream, Error> {
    let param = &kernel.ir().params[index];
    let dims: Vec<usize> = shapes
        .extents
        .get(index)
        .cloned()
        .flatten()
        .unwrap_or_default()
        .into_iter()
        .map(|d| d.unwrap_or(1))
        .collect();
    let element = ElementType::from_ir(kernel.module(), &param.ty).ok_or_else(|| {
        Error::Usage(format!("global array `{}` has no element type", param.name))
    })?;
    let stream = RawStream::new(&launch_device(args), element.clone(), &dims)?;
    stream.read_bytes(&element, &vec![0u8; stream.len() * element.size()])?;
    Ok(stream)
}
