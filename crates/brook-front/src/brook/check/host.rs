//! Brook constructs in host code: stream declarations, kernel calls and stream operators.

use super::ConstSize;
use super::{Checker, ParamRole, Type};
use crate::brook::ast::{Expr, ExprKind, HostArg, HostCall, HostScope, Item, Program, StreamDecl};
use crate::diagnostic::{Code, Diagnostic};
use crate::source::Span;
use brook_ir::reduce_order::{declared_reduction_tile, ReduceShapeError};
use brook_ir::ScalarKind;
use std::collections::{HashMap, HashSet};

/// A stream declared in host code, as far as calls need to know it.
#[derive(Clone, Debug)]
struct HostStream {
    elem: Type,
    iter: bool,
    /// Where it is declared: visible after `at`, in `scope` and the blocks inside it.
    scope: HostScope,
    at: u32,
    /// The dimensions (slowest first) when every one is a positive constant.
    dims: Option<Vec<usize>>,
}

/// The host streams by name: each name may be declared in several functions and blocks.
type HostStreams = HashMap<String, Vec<HostStream>>;

impl Checker<'_> {
    pub(super) fn host_code(&mut self, program: &Program) {
        let mut streams = HostStreams::new();
        for item in &program.items {
            let Item::Host(host) = item else { continue };
            for decl in &host.streams {
                let elem = self.stream_decl(decl);
                let dims = self.constant_dims(decl);
                streams
                    .entry(decl.name.name.clone())
                    .or_default()
                    .push(HostStream {
                        elem,
                        iter: decl.iter.is_some(),
                        scope: decl.scope.clone(),
                        at: decl.span.start,
                        dims,
                    });
            }
            for param in &host.stream_params {
                let elem = self.resolve_type(&param.ty);
                self.stream_element(&elem, param.ty.span);
                streams
                    .entry(param.name.name.clone())
                    .or_default()
                    .push(HostStream {
                        elem,
                        iter: false,
                        scope: param.scope.clone(),
                        at: param.span.start,
                        dims: None,
                    });
            }
        }
        for (name, span) in &program.graphics_only {
            self.graphics_only_host(name, *span);
        }
        for item in &program.items {
            let Item::Host(host) = item else { continue };
            for call in &host.calls {
                self.call_arguments_exist(call, program.host_words.as_ref());
                self.host_call(call, &streams);
            }
        }
    }

    /// BrookGPU's occlusion query or write mask in host code: not supported, and why.
    fn graphics_only_host(&mut self, name: &str, span: Span) {
        let (what, help) = if name == "write_query" {
            (
                "BrookGPU's occlusion query (`write_query`) counted the elements a kernel wrote on its OpenGL and DirectX backends",
                "count with a reduction instead: a kernel that writes 1 or 0 per element, summed by a reduce kernel",
            )
        } else {
            (
                "BrookGPU's write mask (`write_mask`) kept a kernel from writing masked elements through the depth buffer of its OpenGL and DirectX backends",
                "select in the kernel instead (`out = keep ? value : old;` with `old` the previous values as an input), or write the kept elements with a `vout` stream",
            )
        };
        self.diags.push(
            Diagnostic::error(
                Code::GraphicsOnly,
                span,
                format!("`{name}` is not supported: {what}; Brook's devices (CPU, GPUs through CUDA) have no such unit"),
            )
            .with_help(help),
        );
    }

    /// A kernel call's or stream operator's arguments are there (`k(a, )` has an empty one)
    /// and, when a kernel's stream parameter gets a plain name, it is declared somewhere in
    /// the file (`host_words`; a value may be a name the headers define, such as `M_PI`).
    fn call_arguments_exist(&mut self, call: &HostCall, host_words: Option<&HashSet<String>>) {
        let callee = call.callee.name.as_str();
        let kernel = self.info.kernel(callee).cloned();
        let takes_stream = |n: usize| {
            kernel.as_ref().is_some_and(|k| {
                k.params
                    .get(n)
                    .is_some_and(|p| !matches!(p.role, ParamRole::Constant))
            })
        };
        for (n, arg) in call.args.iter().enumerate() {
            let missing = match arg {
                HostArg::Raw(span) if span.is_empty() => {
                    format!("argument {} of `{callee}` is empty", n + 1)
                }
                HostArg::Expr(Expr {
                    kind: ExprKind::Ident(name),
                    ..
                }) if takes_stream(n) && host_words.is_some_and(|words| !words.contains(name)) => {
                    format!(
                        "`{name}` (argument {} of `{callee}`) is not declared",
                        n + 1
                    )
                }
                _ => continue,
            };
            self.diags.push(
                Diagnostic::error(Code::UndefinedName, arg.span(), missing)
                    .with_help("pass a stream declared before the call, or a value"),
            );
        }
    }

    /// Reports an element type streams cannot hold.
    fn stream_element(&mut self, elem: &Type, span: crate::source::Span) {
        if !self.is_stream_element(elem) {
            let name = self.type_name(elem);
            self.diags.push(
                Diagnostic::error(
                    Code::StreamElementType,
                    span,
                    format!("Stream element type not supported: `{name}`"),
                )
                .with_help("stream elements are non-bool scalars, vectors, or structs of them"),
            );
        }
    }

    fn stream_decl(&mut self, decl: &StreamDecl) -> Type {
        let elem = self.resolve_type(&decl.ty);
        self.stream_element(&elem, decl.ty.span);
        if decl.dims.len() > 4 {
            self.diags.push(
                Diagnostic::error(
                    Code::StreamRank,
                    decl.dims_span,
                    format!(
                        "Problem with stream declaration: dimension == {} not supported",
                        decl.dims.len()
                    ),
                )
                .with_help("streams have 1 to 4 dimensions"),
            );
        }
        for dim in &decl.dims {
            match self.info.constants.size_of(dim) {
                ConstSize::NotInt => self.diags.error(
                    Code::StreamDimensionType,
                    dim.span,
                    "expect int for stream dimension parameter",
                ),
                ConstSize::Value(v) if v <= 0 => self.diags.push(
                    Diagnostic::error(
                        Code::StreamDeclaration,
                        dim.span,
                        format!("Problem with stream declaration: a length of {v}"),
                    )
                    .with_help("each length of a stream is at least 1"),
                ),
                _ => {}
            }
        }
        match (&decl.iter, &decl.init) {
            (Some(_), _) => self.iterator_decl(decl, &elem),
            (None, Some((_, span))) => {
                self.diags.push(
                    Diagnostic::error(
                        Code::StreamInitializer,
                        *span,
                        "Stream can't have an initializer",
                    )
                    .with_help("fill a stream with streamRead(stream, array) or a kernel"),
                );
            }
            (None, None) => {}
        }
        elem
    }

    fn iterator_decl(&mut self, decl: &StreamDecl, elem: &Type) {
        let rank = decl.dims.len();
        let width = match elem {
            Type::Value(v) if v.kind == ScalarKind::F32 => Some(usize::from(v.width)),
            _ => None,
        };
        let problem = match width {
            None if !elem.is_error() => Some("Iterator not supported: iterator streams hold float, float2, float3 or float4".to_string()),
            Some(w) if rank > 1 && w != rank => Some(format!(
                "Iterator not supported: a {rank}-dimensional iterator stream must be float{rank} (component k runs along dimension k)"
            )),
            _ => None,
        };
        if let Some(problem) = problem {
            self.diags
                .error(Code::StreamDeclaration, decl.ty.span, problem);
        }
        match &decl.init {
            Some((args, _)) if args.len() == 2 => {}
            Some((_, span)) => {
                self.diags.error(
                    Code::StreamDeclaration,
                    *span,
                    "Iterator not supported: the initializer must be `iter(start, end)`",
                );
            }
            None => {
                self.diags.push(
                    Diagnostic::error(
                        Code::StreamDeclaration,
                        decl.name.span,
                        "Iterator not supported: an iterator stream needs `= iter(start, end)`",
                    )
                    .with_help(format!(
                        "as in `iter float {}<100> = iter(0.0f, 100.0f);`",
                        decl.name.name
                    )),
                );
            }
        }
    }

    fn host_call(&mut self, call: &HostCall, streams: &HostStreams) {
        let name = call.callee.name.as_str();
        let expected = match name {
            "streamRead" | "streamWrite" => Some(2),
            "streamScatterOp" | "streamGatherOp" => Some(4),
            _ => None,
        };
        if let Some(expected) = expected {
            self.arity(call, expected);
            if name == "streamRead" {
                if let Some(stream) = host_stream(call, call.args.first(), streams) {
                    if stream.iter {
                        self.diags.error(
                            Code::ArgumentKind,
                            call.args[0].span(),
                            "streamRead cannot fill an iterator stream: its values are computed",
                        );
                    }
                }
            }
            return;
        }
        let Some(kernel) = self.info.kernel(name).cloned() else {
            return;
        };
        if !matches!(kernel.return_type, Type::Void | Type::Error) {
            self.diags.push(
                Diagnostic::error(Code::KernelReturnType, call.callee.span, format!("`{name}` returns a value: a top-level kernel must have a return type of void to be callable from host code"))
                    .with_note(Some(kernel.name_span), "defined here"),
            );
        }
        let library_call = call.args.len() != kernel.params.len()
            && crate::brook::c_library::is_library_function(name);
        if library_call || !self.arity(call, kernel.params.len()) {
            return;
        }
        self.reduction_shapes(call, &kernel.params, streams);
        for (n, (arg, param)) in call.args.iter().zip(&kernel.params).enumerate() {
            let Some(stream) = host_stream(call, Some(arg), streams) else {
                continue;
            };
            let problem = match &param.role {
                ParamRole::Constant => Some(format!(
                    "Illegal to use stream at argument {}: Expected value",
                    n + 1
                )),
                ParamRole::Output
                | ParamRole::Scatter { .. }
                | ParamRole::Reduce
                | ParamRole::Vout { .. }
                    if stream.iter =>
                {
                    Some(format!(
                        "argument {}: an iterator stream cannot be an output",
                        n + 1
                    ))
                }
                ParamRole::Gather { .. } if stream.iter => Some(format!(
                    "argument {}: an iterator stream cannot be a gather array (its values are computed per element, not stored)",
                    n + 1
                )),
                ParamRole::Iterator if !stream.iter => Some(format!(
                    "argument {}: `{}` expects an iterator stream (declared with `iter`)",
                    n + 1,
                    param.name
                )),
                _ => None,
            };
            if let Some(problem) = problem {
                self.diags.error(Code::ArgumentKind, arg.span(), problem);
                continue;
            }
            let expected = match &param.ty {
                Type::Array { elem, .. } => (**elem).clone(),
                other => other.clone(),
            };
            if stream.elem != expected && !stream.elem.is_error() && !expected.is_error() {
                let (found, wanted) = (self.type_name(&stream.elem), self.type_name(&expected));
                self.diags.push(
                    Diagnostic::error(
                        Code::ArgumentType,
                        arg.span(),
                        format!("Mismatched type for argument {}: actual type is \"{found}\" but expected type is \"{wanted}\"", n + 1),
                    )
                    .with_note(Some(param.span), format!("parameter `{}` of `{name}`", param.name)),
                );
            }
        }
    }

    /// A stream declaration's dimensions when each is a positive integer constant.
    fn constant_dims(&self, decl: &StreamDecl) -> Option<Vec<usize>> {
        decl.dims
            .iter()
            .map(|d| match self.info.constants.size_of(d) {
                ConstSize::Value(v) if v > 0 => usize::try_from(v).ok(),
                _ => None,
            })
            .collect()
    }

    /// A reduction whose input and target shapes are both constant must fit them (seed 000:
    /// each target dimension divides the input's, or a lower-rank target equals its leading
    /// dimensions): the same rule the runtime applies, decided here.
    fn reduction_shapes(
        &mut self,
        call: &HostCall,
        params: &[super::ParamInfo],
        streams: &HostStreams,
    ) {
        let input = params
            .iter()
            .position(|p| matches!(p.role, ParamRole::Input | ParamRole::Iterator));
        let target = params.iter().position(|p| p.role == ParamRole::Reduce);
        let (Some(input), Some(target)) = (input, target) else {
            return;
        };
        let dims = |i: usize| host_stream(call, call.args.get(i), streams)?.dims.clone();
        let (Some(input_dims), Some(target_dims)) = (dims(input), dims(target)) else {
            return;
        };
        let why = match declared_reduction_tile(&input_dims, &target_dims) {
            Ok(_) => return,
            Err(ReduceShapeError::TargetRankTooHigh) => {
                "Reduction operation don't allow output rank > input rank".to_string()
            }
            Err(ReduceShapeError::NotDividing { axis, input, target }) => format!(
                "Input dimensions should be integral multiple of output dimensions: axis {axis} of the input has {input} elements, the target {target}"
            ),
        };
        self.diags.push(
            Diagnostic::error(
                Code::ReductionShape,
                call.args[target].span(),
                format!(
                    "the reduction target {target_dims:?} cannot receive a reduction of the input {input_dims:?}: {why}"
                ),
            )
            .with_note(Some(call.args[input].span()), "the input stream")
            .with_help("a target of the input's rank must divide each of its dimensions; a lower-rank target must equal its leading dimensions; a one-element target reduces everything"),
        );
    }

    /// Reports a wrong argument count; true when the count is right.
    fn arity(&mut self, call: &HostCall, expected: usize) -> bool {
        if call.args.len() == expected {
            return true;
        }
        self.diags.error(
            Code::ArgumentCount,
            call.span,
            format!(
                "incorrect number of parameters expect {expected} actual {}",
                call.args.len()
            ),
        );
        false
    }
}

/// The host stream an argument of `call` names, if it is a plain stream name: the innermost
/// declaration of that name visible at the call.
fn host_stream<'s>(
    call: &HostCall,
    arg: Option<&HostArg>,
    streams: &'s HostStreams,
) -> Option<&'s HostStream> {
    let Some(HostArg::Expr(e)) = arg else {
        return None;
    };
    let ExprKind::Ident(name) = &e.kind else {
        return None;
    };
    streams
        .get(name)?
        .iter()
        .filter(|s| s.at < call.span.start && call.scope.starts_with(&s.scope))
        .max_by_key(|s| (s.scope.len(), s.at))
}
