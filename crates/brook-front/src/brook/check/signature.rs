//! Kernel signatures: each parameter's role, and the rules on whole signatures (reductions,
//! scatter outputs, constant buffers, `GroupSize`).

use super::ConstSize;
use super::{Checker, KernelInfo, KernelKind, ParamInfo, ParamRole, Type};
use crate::brook::ast::{ArrayDims, Item, Kernel, Param, Program};
use crate::brook::Dialect;
use crate::diagnostic::{Code, Diagnostic};
use crate::source::Span;

/// At most this many constant buffers per kernel (seed 003, section 6.3.7).
const MAX_CONSTANT_BUFFERS: usize = 10;

impl Checker<'_> {
    pub(super) fn signatures(&mut self, program: &Program) {
        for item in &program.items {
            if let Item::Kernel(kernel) = item {
                let info = self.signature(kernel);
                self.add_kernel(kernel, info);
            }
        }
        // A `void` kernel may be defined in another file of the program (host code launches
        // it by name); a subkernel's definition must be here (see `subkernel_call`).
        for info in &self.info.kernels {
            if !info.defined && info.return_type != Type::Void {
                self.diags.push(
                    Diagnostic::error(
                        Code::UnknownFunction,
                        info.name_span,
                        format!("A function definition must exist for any function: `{}` is declared but never defined", info.name),
                    ),
                );
            }
        }
    }

    fn add_kernel(&mut self, kernel: &Kernel, info: KernelInfo) {
        if let Some(span) = self.host_functions.get(&kernel.name.name) {
            self.diags.push(
                Diagnostic::error(
                    Code::DuplicateName,
                    kernel.name.span,
                    format!(
                        "Variable name Duplicated: `{}` is also a host function",
                        kernel.name.name
                    ),
                )
                .with_note(Some(*span), "the host function is defined here"),
            );
        }
        match self.kernel_index.get(&kernel.name.name).copied() {
            None => {
                self.kernel_index
                    .insert(info.name.clone(), self.info.kernels.len());
                self.info.kernels.push(info);
            }
            Some(index) if !self.info.kernels[index].defined => {
                if info.defined {
                    self.info.kernels[index] = info;
                }
            }
            Some(index) => {
                if info.defined {
                    let first = self.info.kernels[index].name_span;
                    self.diags.push(
                        Diagnostic::error(
                            Code::DuplicateName,
                            kernel.name.span,
                            format!(
                                "Variable name Duplicated: kernel `{}` is defined twice",
                                kernel.name.name
                            ),
                        )
                        .with_note(Some(first), "first defined here"),
                    );
                }
            }
        }
    }

    fn signature(&mut self, kernel: &Kernel) -> KernelInfo {
        let return_type = match &kernel.return_type {
            Some(spec) => self.resolve_type(spec),
            None => {
                self.diags.push(
                    Diagnostic::error(
                        Code::KernelReturnType,
                        kernel.name.span,
                        "unspecified kernel return type",
                    )
                    .with_help("write `kernel void name(...)`, or the type a subkernel returns"),
                );
                Type::Error
            }
        };
        let mut params: Vec<ParamInfo> = kernel.params.iter().map(|p| self.param(p)).collect();
        let reduce_marked = kernel.marks.reduce.is_some();
        let has_reduce_param = params.iter().any(|p| p.role == ParamRole::Reduce);
        let kind = if reduce_marked || has_reduce_param {
            KernelKind::Reduce
        } else {
            KernelKind::Map
        };
        if kind == KernelKind::Reduce {
            self.reduction_signature(kernel, &mut params);
            let unorm = |p: &&ParamInfo| p.unorm.is_some() && p.role != ParamRole::Reduce;
            for param in params.iter().filter(unorm) {
                // The reduction's leaves are its input elements themselves.
                self.diags.push(
                    Diagnostic::error(
                        Code::StreamElementType,
                        param.span,
                        format!(
                            "`{}` storage is not supported in a reduce kernel (`{}`): a reduction combines its input elements as they are stored",
                            param.unorm.map_or("fixed", |u| u.name()),
                            param.name
                        ),
                    )
                    .with_help("reduce a `float` stream: convert the fixed stream with a kernel first"),
                );
            }
            if let Some(vout) = params
                .iter()
                .find(|p| matches!(p.role, ParamRole::Vout { .. }))
            {
                self.diags.error(
                    Code::Vout,
                    vout.span,
                    "a reduce kernel cannot have a vout output",
                );
            }
        }
        self.scatter_outputs(&params);
        self.constant_buffers(&params);
        let group_size = self.group_size(kernel, &params);
        KernelInfo {
            name: kernel.name.name.clone(),
            kind,
            params,
            return_type,
            group_size,
            span: kernel.span,
            name_span: kernel.name.span,
            defined: kernel.body.is_some(),
        }
    }

    fn param(&mut self, param: &Param) -> ParamInfo {
        self.param_qualifiers(param);
        let elem = self.resolve_type(&param.ty);
        if elem == Type::Void {
            self.diags.error(
                Code::UnsupportedType,
                param.ty.span,
                format!(
                    "Unsupported variable type: parameter `{}` cannot be void",
                    param.name.name
                ),
            );
        }
        let role = self.param_role(param, &elem);
        let is_stream = !matches!(role, ParamRole::Constant);
        if is_stream && !self.is_stream_element(&elem) && elem != Type::Void {
            self.diags.push(
                Diagnostic::error(
                    Code::StreamElementType,
                    param.ty.span,
                    format!(
                        "Stream element type not supported: `{}`",
                        self.type_name(&elem)
                    ),
                )
                .with_help("stream elements are non-bool scalars, vectors, or structs of them"),
            );
        }
        let stream_rank = param.stream_dims.as_ref().map_or(0, |(dims, _)| dims.len());
        if let Some((dims, span)) = &param.stream_dims {
            self.stream_param_dims(dims, *span);
        }
        let ty = match &role {
            ParamRole::Gather { dims } => Type::Array {
                elem: Box::new(elem),
                dims: dims.clone(),
            },
            ParamRole::Scatter { rank } => Type::Array {
                elem: Box::new(elem),
                dims: vec![None; *rank],
            },
            _ => elem,
        };
        let unorm = param.ty.unorm;
        if let Some(unorm) = unorm {
            self.unorm_param(unorm, &role, param);
        }
        ParamInfo {
            name: param.name.name.clone(),
            ty,
            role,
            stream_rank,
            unorm,
            span: param.span,
        }
    }

    /// `fixed`/`shortfixed` storage is read by input streams and gathers and written by
    /// outputs; other parameters take the computed `float` types.
    fn unorm_param(&mut self, unorm: crate::brook::ast::Unorm, role: &ParamRole, param: &Param) {
        let what = match role {
            ParamRole::Input | ParamRole::Output | ParamRole::Gather { .. } => return,
            ParamRole::Constant => "a value parameter",
            ParamRole::Iterator => "an iterator",
            ParamRole::Reduce => "a reduction",
            ParamRole::Scatter { .. } => "a scatter array",
            ParamRole::Vout { .. } => "a vout stream",
        };
        let name = unorm.name();
        self.diags.push(
            Diagnostic::error(
                Code::StreamElementType,
                param.ty.span,
                format!("`{name}` storage is not supported for {what} (`{}`): only input and output streams and gather arrays store {name} values", param.name.name),
            )
            .with_help("declare the parameter `float` (the type a kernel computes fixed values in)"),
        );
    }

    fn param_qualifiers(&mut self, param: &Param) {
        let q = &param.qualifiers;
        // BrookGPU's C parser took `const` on an input as C does (a kernel never writes its
        // inputs anyway); Brook+ reserves it.
        let written = q.out.is_some() || q.reduce.is_some() || q.vout.is_some();
        let const_allowed = self.options.dialect == Dialect::BrookGpu && !written;
        if let Some(span) = q.const_.filter(|_| !const_allowed) {
            let mut error = Diagnostic::error(
                Code::QualifierPlacement,
                span,
                "Nothing special to use const qualifier for kernel parameters. It is a reserved usage",
            );
            if !written {
                error = error.with_brookgpu_help();
            }
            self.diags.push(error);
        }
        for span in [q.volatile, q.restrict].into_iter().flatten() {
            self.diags.error(
                Code::QualifierPlacement,
                span,
                "volatile or Restrict qualifiers not allowed inside kernel",
            );
        }
        if let Some(span) = q.shared {
            self.diags.error(
                Code::SharedArray,
                span,
                "Shared qualifier valid only for Local Array declared inside kernel",
            );
        }
        for span in [q.static_, q.extern_, q.auto, q.register]
            .into_iter()
            .flatten()
        {
            self.diags.error(
                Code::StorageClass,
                span,
                "storage classes are not allowed on kernel parameters",
            );
        }
        if let Some(span) = param.pointer {
            self.diags.error(
                Code::PointerInKernel,
                span,
                "pointers not allowed inside kernel",
            );
        }
    }

    fn param_role(&mut self, param: &Param, elem: &Type) -> ParamRole {
        let q = &param.qualifiers;
        if let (Some(_), Some((_, span))) = (&param.stream_dims, &param.array_dims) {
            self.diags.error(
                Code::StreamDeclaration,
                *span,
                "Problem with stream declaration: streams of arrays are not supported",
            );
        }
        if q.vout.is_some() {
            return self.vout_role(param);
        }
        if q.out.is_some() {
            if let Some((dims, span)) = &param.array_dims {
                return self.scatter_role(dims, *span, elem, param);
            }
            if param.stream_dims.is_none() {
                self.diags.push(
                    Diagnostic::error(
                        Code::OutputNotStream,
                        param.name.span,
                        "non-reduce output parameter must be stream type",
                    )
                    .with_help(format!("declare it as `out ... {}<>`", param.name.name)),
                );
            }
            return ParamRole::Output;
        }
        if q.reduce.is_some() {
            if let Some((_, span)) = &param.array_dims {
                self.diags.error(
                    Code::ReductionSignature,
                    *span,
                    "a reduction target is a stream or a scalar, not an array",
                );
            }
            return ParamRole::Reduce;
        }
        if q.iter.is_some() {
            return ParamRole::Iterator;
        }
        if param.stream_dims.is_some() {
            return ParamRole::Input;
        }
        match &param.array_dims {
            Some((dims, span)) => self.gather_role(dims, *span),
            None => ParamRole::Constant,
        }
    }

    /// `vout [N] T s<>` (BrookGPU): a stream parameter, with `N` a constant when written.
    fn vout_role(&mut self, param: &Param) -> ParamRole {
        if param.stream_dims.is_none() || param.array_dims.is_some() {
            self.diags.push(
                Diagnostic::error(
                    Code::Vout,
                    param.name.span,
                    "a vout parameter must be a stream",
                )
                .with_help(format!(
                    "declare it as `vout [N] ... {}<>`",
                    param.name.name
                )),
            );
        }
        let limit = match &param.vout_limit {
            None => None,
            Some((dims, span)) => match dims.as_slice() {
                [Some(n)] => self.array_size(n, "vout"),
                _ => {
                    self.diags.push(
                        Diagnostic::error(
                            Code::Vout,
                            *span,
                            "a vout bound is one constant: `vout [N]`",
                        )
                        .with_help("N is the most values one kernel instance pushes"),
                    );
                    None
                }
            },
        };
        ParamRole::Vout { limit }
    }

    fn scatter_role(
        &mut self,
        dims: &ArrayDims,
        span: Span,
        elem: &Type,
        param: &Param,
    ) -> ParamRole {
        if dims.iter().any(Option::is_some) {
            self.diags.push(
                Diagnostic::error(
                    Code::ScatterSize,
                    span,
                    "Specifying scatter array sizes have no meaning presently. Do not specify sizes",
                )
                .with_help(format!("write `out ... {}[]` with empty brackets", param.name.name)),
            );
        }
        if matches!(elem, Type::Struct(_)) {
            self.diags.error(
                Code::ScatterStruct,
                param.ty.span,
                "Scatter stream not supported for struct",
            );
        }
        ParamRole::Scatter { rank: dims.len() }
    }

    /// `a[]`, `a[][]` (a stream read at computed positions) or `a[N][M]` (a constant buffer).
    fn gather_role(&mut self, dims: &ArrayDims, span: Span) -> ParamRole {
        let given = dims.iter().filter(|d| d.is_some()).count();
        if given != 0 && given != dims.len() {
            let message = "Incomplete array size specification: Specify all array sizes for cached gather array (e.g. a[5][5]) or no array sizes for Streams (e.g. a[][])";
            if self.options.constant_buffers {
                self.diags.push(
                    Diagnostic::error(Code::IncompleteArraySize, span, message)
                        .with_help("or pass -c to allow legacy array declarations"),
                );
            } else {
                self.diags.push(Diagnostic::warning(
                    Code::IncompleteArraySize,
                    1,
                    span,
                    message,
                ));
            }
        }
        let sizes = dims
            .iter()
            .map(|d| d.as_ref().and_then(|e| self.array_size(e, "Gather")))
            .collect();
        ParamRole::Gather { dims: sizes }
    }

    /// A "simple constant int" array size, reported with the seed's messages for `what`
    /// ("Gather", "Local").
    pub(super) fn array_size(&mut self, expr: &crate::brook::ast::Expr, what: &str) -> Option<u32> {
        let message = match self.info.constants.size_of(expr) {
            ConstSize::Value(n) if n > 0 && n <= u32::MAX as i64 => return Some(n as u32),
            ConstSize::Value(_) => format!("{what} Array size must be non-zero positive int value"),
            ConstSize::NotInt => format!("{what} Array size must be constant int type"),
            ConstSize::NotSimple => {
                format!("{what} Array size expression must be simple constant int")
            }
        };
        self.diags.push(
            Diagnostic::error(Code::ArraySize, expr.span, message)
                .with_help("write an integer literal (a -pp macro that expands to one also works)"),
        );
        None
    }

    fn stream_param_dims(&mut self, dims: &ArrayDims, span: Span) {
        if dims.len() > 4 {
            self.diags.push(
                Diagnostic::error(
                    Code::StreamRank,
                    span,
                    format!(
                        "Problem with stream declaration: dimension == {} not supported",
                        dims.len()
                    ),
                )
                .with_help("streams have 1 to 4 dimensions"),
            );
        }
        for dim in dims.iter().flatten() {
            if matches!(self.info.constants.size_of(dim), ConstSize::NotInt) {
                self.diags.error(
                    Code::StreamDimensionType,
                    dim.span,
                    "expect int for stream dimension parameter",
                );
            }
        }
    }

    fn reduction_signature(&mut self, kernel: &Kernel, params: &mut [ParamInfo]) {
        let reduce_count = params
            .iter()
            .filter(|p| p.role == ParamRole::Reduce)
            .count();
        if reduce_count == 0 {
            let span = kernel.marks.reduce.unwrap_or(kernel.name.span);
            self.diags.push(
                Diagnostic::error(
                    Code::ReduceQualifierMissing,
                    span,
                    format!("Specify reduce qualifier for kernel: reduce function `{}` has no `reduce` parameter", kernel.name.name),
                )
                .with_help("mark the reduction target, as in `reduce float result<>`"),
            );
            // Recover: take the last stream parameter as the target.
            if let Some(last) = params.iter_mut().rev().find(|p| p.role == ParamRole::Input) {
                last.role = ParamRole::Reduce;
            }
            return;
        }
        // A reduce function may take its input element as a plain value (`double a`).
        let inputs = params.iter().filter(|p| p.role == ParamRole::Input).count();
        let constants: Vec<usize> = (0..params.len())
            .filter(|&i| params[i].role == ParamRole::Constant)
            .collect();
        if inputs == 0 && constants.len() == 1 {
            params[constants[0]].role = ParamRole::Input;
        }
        let inputs: Vec<&ParamInfo> = params
            .iter()
            .filter(|p| p.role == ParamRole::Input)
            .collect();
        let others = params
            .iter()
            .filter(|p| {
                !matches!(
                    p.role,
                    ParamRole::Input
                        | ParamRole::Reduce
                        | ParamRole::Constant
                        | ParamRole::Gather { .. }
                )
            })
            .count();
        if inputs.len() != 1 || reduce_count != 1 || others != 0 {
            self.diags.push(
                Diagnostic::error(
                    Code::ReductionSignature,
                    kernel.name.span,
                    "reduction kernel can only have one input stream and one reduction output scalar/stream",
                )
                .with_help("other parameters of a reduction must be constants or gather arrays"),
            );
            return;
        }
        let (Some(target), [input]) = (
            params.iter().find(|p| p.role == ParamRole::Reduce),
            inputs.as_slice(),
        ) else {
            return;
        };
        if input.ty != target.ty && !input.ty.is_error() && !target.ty.is_error() {
            self.diags.push(
                Diagnostic::error(
                    Code::ReductionSignature,
                    target.span,
                    format!(
                        "Both the input and the output stream of the reduction must be of the same type: input is {}, target is {}",
                        self.type_name(&input.ty),
                        self.type_name(&target.ty)
                    ),
                ),
            );
        }
    }

    fn scatter_outputs(&mut self, params: &[ParamInfo]) {
        let scatters: Vec<&ParamInfo> = params
            .iter()
            .filter(|p| matches!(p.role, ParamRole::Scatter { .. }))
            .collect();
        if scatters.len() > 1 {
            self.diags.error(
                Code::ScatterOutputs,
                scatters[1].span,
                "Only one scatter output allowed",
            );
        }
        if let (Some(_), Some(output)) = (
            scatters.first(),
            params.iter().find(|p| p.role == ParamRole::Output),
        ) {
            self.diags.error(
                Code::ScatterOutputs,
                output.span,
                "Both scatter output and stream output not allowed",
            );
        }
    }

    fn constant_buffers(&mut self, params: &[ParamInfo]) {
        if !self.options.constant_buffers {
            return;
        }
        let mut count = 0;
        for param in params {
            let ParamRole::Gather { dims } = &param.role else {
                continue;
            };
            if dims.is_empty() || dims.iter().any(Option::is_none) {
                continue;
            }
            count += 1;
            // Larger than a constant buffer's 4096 elements: real brcc read such an array
            // through texture storage without a message, and so does every device here.
            if count == MAX_CONSTANT_BUFFERS + 1 {
                self.diags.push(
                    Diagnostic::error(
                        Code::ConstantBufferLimit,
                        param.span,
                        format!(
                            "Maximum number of constant buffers allowed is {MAX_CONSTANT_BUFFERS}"
                        ),
                    )
                    .with_help("declare some gather arrays without sizes, or pass -c"),
                );
            }
        }
    }
}
