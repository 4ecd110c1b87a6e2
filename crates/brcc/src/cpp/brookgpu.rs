//! BrookGPU linkage (`brcc -g`): BrookGPU's brcc turned each kernel into a C++ function, and
//! BrookGPU programs declare those functions in hand-written headers and call them from C++
//! files (`void blur(const ::brook::stream& in, ::brook::stream& out, const float w);`). For
//! each kernel a file defines, the generated C++ also defines functions with exactly those
//! signatures, launching the kernel's object: streams and gathers as `const ::brook::stream&`,
//! outputs as `::brook::stream&`, iterators as `const ::brook::iter&` (`__BRTIter`), values as
//! `const T`, and a reduction target once as `::brook::stream&` and once as `T&`; and again with
//! every stream passed by value (`void blur(::brook::stream in, ::brook::stream out);`), as
//! earlier BrookGPU releases declared them.

use super::kernels::spellings;

/// The linkage of a kernel's BrookGPU functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Linkage {
    /// Callable from other files of the program (hand-written C++ declaring the kernel).
    External,
    /// Local to the file: another `.br` file of the same program defines a kernel of the same
    /// name (each file's calls launch its own kernel; `brcc build a.br b.br -g`).
    Internal,
}
use brook_ir::{source_params, Kernel, Module, ParamRole, SourceParam};

/// The BrookGPU-signature functions of `kernel` launching `object` (`object` is `None` for a
/// kernel only declared here: the functions are declared, another file defines them), or
/// nothing for a kernel BrookGPU could not call so (`vout` outputs, or a parameter type with no
/// C++ spelling).
pub fn functions(
    module: &Module,
    kernel: &Kernel,
    object: Option<&str>,
    linkage: Linkage,
) -> String {
    let Some(variants) = signatures(module, kernel) else {
        return String::new();
    };
    let args: Vec<String> = (0..variants[0].len()).map(|i| format!("p{i}_")).collect();
    let by_value: Vec<Vec<String>> = variants
        .iter()
        .map(|params| params.iter().map(|p| stream_by_value(p)).collect())
        .collect();
    // A file that only declares the kernel declares one set (both would make every call with
    // `brook::stream`s ambiguous there): by value, which any stream converts to.
    let by_reference: &[Vec<String>] = if object.is_some() { &variants } else { &[] };
    by_reference
        .iter()
        .chain(&by_value)
        .map(|params| {
            let body = match object {
                Some(object) => format!(" {{ {object}({}); }}", args.join(", ")),
                None => ";".to_string(),
            };
            let storage = match (linkage, object) {
                (Linkage::Internal, Some(_)) => " static",
                _ => "",
            };
            format!(
                "{storage} void {}({}){body}",
                kernel.name,
                params.join(", ")
            )
        })
        .collect()
}

/// A parameter declaration with its stream, if any, passed by value.
fn stream_by_value(param: &str) -> String {
    param
        .replace("const ::brook::stream& ", "::brook::stream ")
        .replace("::brook::stream& ", "::brook::stream ")
}

/// The parameter lists: one, or two for a reduction (the target as a stream, then as a value).
fn signatures(module: &Module, kernel: &Kernel) -> Option<Vec<Vec<String>>> {
    let mut as_stream = Vec::new();
    let mut as_value = Vec::new();
    let mut reduces = false;
    for (i, source) in source_params(kernel).into_iter().enumerate() {
        let SourceParam::Param(_, p) = source else {
            return None;
        };
        let name = format!("p{i}_");
        let (cpp, _) = spellings(module, &p.ty)?;
        let (stream, value) = match &p.role {
            ParamRole::Constant => (format!("const {cpp} {name}"), None),
            ParamRole::Iterator => (format!("const ::brook::iter& {name}"), None),
            ParamRole::Reduce => {
                reduces = true;
                (
                    format!("::brook::stream& {name}"),
                    Some(format!("{cpp}& {name}")),
                )
            }
            role if role.is_written() => (format!("::brook::stream& {name}"), None),
            _ => (format!("const ::brook::stream& {name}"), None),
        };
        as_value.push(value.unwrap_or_else(|| stream.clone()));
        as_stream.push(stream);
    }
    Some(if reduces {
        vec![as_stream, as_value]
    } else {
        vec![as_stream]
    })
}
