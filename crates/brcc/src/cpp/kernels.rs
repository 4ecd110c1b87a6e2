//! Kernel objects: each kernel of the program as a C++ functor deriving from
//! `brook::KernelInterface`, so `add(a, b, c)` launches it and `add.domainOffset(...)` works as
//! in Brook+. A reduction has two call operators: into a stream, or into a host variable.

use super::reserved::{self, KernelSpelling};
use brook_front::brook::ast::{TypeSpec, TypeSpecKind};
use brook_ir::{
    source_params, Kernel, KernelKind, Module, ParamRole, ScalarKind, SourceParam, Type, ValueType,
};

/// The C++ spelling of a Brook value type.
pub fn cpp_value_type(v: ValueType) -> String {
    if v.width > 1 {
        return format!("::brook::{}", v);
    }
    match v.kind {
        ScalarKind::F32 => "float",
        ScalarKind::F64 => "double",
        ScalarKind::I32 => "int",
        ScalarKind::U32 => "unsigned int",
        ScalarKind::I8 => "char",
        ScalarKind::U8 => "unsigned char",
        ScalarKind::I16 => "short",
        ScalarKind::U16 => "unsigned short",
        ScalarKind::I64 => "long long",
        ScalarKind::U64 => "unsigned long long",
        ScalarKind::Bool => "bool",
    }
    .to_string()
}

/// The C++ element type of a declaration's type, if it is a value type.
pub fn cpp_type_of_spec(spec: &TypeSpec) -> Option<String> {
    match (&spec.kind, spec.unorm) {
        // BrookGPU's host types of the same names (brook.hpp), stored unsigned normalized.
        (TypeSpecKind::Value(v), Some(unorm)) if v.width > 1 => {
            Some(format!("::brook::{}{}", unorm.name(), v.width))
        }
        (TypeSpecKind::Value(_), Some(unorm)) => Some(format!("::brook::{}", unorm.name())),
        // A typedef of one (`typedef fixed4 color;`): the C++ typedef of the same name.
        (TypeSpecKind::Named(name), Some(_)) => Some(name.clone()),
        (TypeSpecKind::Value(v), None) => Some(cpp_value_type(*v)),
        _ => None,
    }
}

/// A type's C++ spelling and its Brook description for the runtime (a value type's name, or
/// `struct NAME{field:TYPE;...}`); `None` for arrays.
pub fn spellings(module: &Module, ty: &Type) -> Option<(String, String)> {
    match ty {
        Type::Value(v) => Some((cpp_value_type(*v), v.to_string())),
        Type::Struct(id) => {
            let decl = module.struct_decl(*id)?;
            let fields = decl
                .fields
                .iter()
                .map(|f| spellings(module, &f.ty).map(|(_, d)| format!("{}:{d}", f.name)))
                .collect::<Option<Vec<_>>>()?;
            Some((
                decl.name.clone(),
                format!("struct {}{{{}}}", decl.name, fields.join(";")),
            ))
        }
        Type::Array { .. } => None,
    }
}

/// A C++ type and the runtime's description of it.
type Types = (String, String);

fn param_types(module: &Module, kernel: &Kernel, ty: &Type) -> Result<Types, String> {
    spellings(module, ty).ok_or_else(|| {
        format!(
            "kernel `{}`: a parameter of type `{}` (arrays cannot be stream elements)",
            kernel.name,
            module.type_name(ty)
        )
    })
}

/// One C++ parameter and the `BrkArg` that passes it.
struct Passed {
    declaration: String,
    arg: String,
}

fn stream_param((cpp, _): &Types, name: &str) -> Passed {
    Passed {
        declaration: format!("const ::brook::Stream<{cpp} >& {name}"),
        arg: format!("{{0, {name}.handle(), 0, 0, 0}}"),
    }
}

fn input_param((cpp, _): &Types, name: &str) -> Passed {
    Passed {
        declaration: format!("const ::brook::detail::Input<{cpp} >& {name}"),
        arg: format!("{name}.arg"),
    }
}

/// A sized gather array (`float c[3][2]`): a stream or a host array of those dimensions.
fn sized_gather_param((cpp, _): &Types, dims: &[u32], name: &str) -> Passed {
    let dims: Vec<String> = dims.iter().map(u32::to_string).collect();
    Passed {
        declaration: format!(
            "const ::brook::detail::Gather<{cpp}, {} >& {name}",
            dims.join(", ")
        ),
        arg: format!("{name}.arg"),
    }
}

fn value_param((cpp, brook): &Types, name: &str) -> Passed {
    Passed {
        declaration: format!("{cpp} {name}"),
        arg: format!("{{1, 0, \"{brook}\", (void*)&{name}, 0}}"),
    }
}

fn host_target_param((cpp, brook): &Types, name: &str) -> Passed {
    Passed {
        declaration: format!("{cpp}& {name}"),
        arg: format!("{{2, 0, \"{brook}\", (void*)&{name}, 0}}"),
    }
}

/// Where a kernel object finds its program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Definition {
    /// This file defines the kernel: its own embedded program.
    Here,
    /// Only a prototype here: the linked program (another generated file) that defines it.
    Elsewhere,
}

/// A call operator of `kernel` taking `params`.
fn operator(kernel: &Kernel, params: &[Passed]) -> String {
    let declarations: Vec<&str> = params.iter().map(|p| p.declaration.as_str()).collect();
    let args: Vec<&str> = params.iter().map(|p| p.arg.as_str()).collect();
    let outputs: u64 = source_params(kernel)
        .iter()
        .take(64)
        .enumerate()
        .filter(|(_, p)| match p {
            SourceParam::Param(_, p) => p.role.is_written(),
            SourceParam::Vout(_) => true,
        })
        .map(|(i, _)| 1u64 << i)
        .sum();
    format!(
        "void operator()({}) {{ BrkArg args_[{}] = {{{}}}; launch_(brook_program(), \"{}\", args_, {}, {outputs}ull); }}",
        declarations.join(", "),
        params.len().max(1),
        if args.is_empty() { "{0, 0, 0, 0, 0}".to_string() } else { args.join(", ") },
        kernel.name,
        params.len()
    )
}

/// A function named `name` taking `params` that launches the kernel object `object` (for a
/// kernel named like a C library function: the name is overloaded, not hidden).
fn forwarding_function(name: &str, object: &str, params: &[Passed]) -> String {
    let declarations: Vec<&str> = params.iter().map(|p| p.declaration.as_str()).collect();
    let names: Vec<String> = (0..params.len()).map(|i| format!("p{i}_")).collect();
    format!(
        " static inline void {name}({}) {{ {object}({}); }}",
        declarations.join(", "),
        names.join(", ")
    )
}

/// The dimensions of a gather array whose every size is given (1 to 4 of them).
fn sized(dims: &[Option<u32>]) -> Option<Vec<u32>> {
    let dims: Option<Vec<u32>> = dims.iter().copied().collect();
    dims.filter(|d| (1..=4).contains(&d.len()))
}

/// The kernel object for `kernel`, on one line. Its type is local to the file (an anonymous
/// namespace), so files that declare the same kernel never share its member functions. With
/// `brookgpu` (`brcc -g`) the object is named apart and the kernel also gets BrookGPU's
/// functions ([`super::brookgpu`]): defined where the kernel is, declared where it is only
/// declared, with the linkage given.
pub fn kernel_object(
    module: &Module,
    kernel: &Kernel,
    definition: Definition,
    brookgpu: Option<super::brookgpu::Linkage>,
) -> Result<String, String> {
    let mut as_stream = Vec::new();
    let mut as_host = Vec::new();
    for (i, source) in source_params(kernel).into_iter().enumerate() {
        let name = format!("p{i}_");
        let p = match source {
            SourceParam::Param(_, p) => p,
            SourceParam::Vout(vout) => {
                // The handle receives the pushed values (a new one-dimensional stream).
                let v = param_types(module, kernel, &vout.ty)?;
                as_stream.push(stream_param(&v, &name));
                as_host.push(stream_param(&v, &name));
                continue;
            }
        };
        let v = param_types(module, kernel, &p.ty)?;
        let (stream, host) = match p.role {
            ParamRole::Constant => (value_param(&v, &name), value_param(&v, &name)),
            ParamRole::Reduce => (stream_param(&v, &name), host_target_param(&v, &name)),
            ParamRole::Input | ParamRole::Iterator => {
                (input_param(&v, &name), input_param(&v, &name))
            }
            ParamRole::Gather { ref dims } if sized(dims).is_some() => {
                let dims = sized(dims).unwrap_or_default();
                let gather = || sized_gather_param(&v, &dims, &name);
                (gather(), gather())
            }
            _ => (stream_param(&v, &name), stream_param(&v, &name)),
        };
        as_stream.push(stream);
        as_host.push(host);
    }
    let mut body = operator(kernel, &as_stream);
    if kernel.kind == KernelKind::Reduce {
        body.push(' ');
        body.push_str(&operator(kernel, &as_host));
    }
    let object = reserved::object_name(&kernel.name, brookgpu.is_some());
    let program = match definition {
        Definition::Here => "return brook_program_();".to_string(),
        Definition::Elsewhere => format!(
            "static BrkProgram* program = ::brook::detail::program_defining(\"{}\"); return program;",
            kernel.name
        ),
    };
    let mut code = format!(
        "namespace {{ struct brook_kernel_{0}_ : ::brook::KernelInterface {{ {body} BrkProgram* brook_program() const {{ {program} }} const char* brook_name() const {{ return \"{0}\"; }} }}; }} static brook_kernel_{0}_ {object};",
        kernel.name
    );
    let spelling = reserved::spelling(&kernel.name);
    if spelling == KernelSpelling::Overloaded {
        code.push_str(&forwarding_function(&kernel.name, &object, &as_stream));
        if kernel.kind == KernelKind::Reduce {
            code.push_str(&forwarding_function(&kernel.name, &object, &as_host));
        }
    }
    if let Some(linkage) = brookgpu.filter(|_| spelling != KernelSpelling::Renamed) {
        let defined = (definition == Definition::Here).then_some(object.as_str());
        code.push_str(&super::brookgpu::functions(
            module, kernel, defined, linkage,
        ));
    }
    Ok(code)
}
