//! C++ generation (seed 001 sections 1.2 and 1.4): a checked `.br` program becomes one C++
//! file that includes `brook/brook.hpp` and links against `libbrook_capi.a`.
//!
//! The host code is copied as written, with two kinds of replacement: each kernel definition
//! becomes a kernel object (a C++ functor with the Brook+ `KernelInterface` methods, callable
//! with the kernel's arguments) and each stream declaration (`float a<10, 10>;`) becomes
//! `::brook::Stream<float>` objects. Replacements keep their line count, so every line of the
//! output is the line of the `.br` file (one `#line` directive after the prologue maps the
//! C++ compiler's messages back with `-l`). The program's Brook text is embedded and compiled by
//! the runtime on first use.

mod brookgpu;
mod kernels;
mod reserved;

use kernels::Definition;
use reserved::KernelSpelling;

use brook_front::brook::ast::{Item, StreamDecl};
use brook_front::brook::check::{self, ProgramInfo};
use brook_front::brook::Checked;
use brook_ir::Module;
use std::collections::HashMap;
use std::fmt::Write;

/// How the C++ is written.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `-l`: a `#line` directive, so C++ messages name the `.br` file and line.
    pub line_directives: bool,
    /// The brcc flags that change what the program means (`-a -c -pp -g -D`): the runtime
    /// compiles the embedded source with them, as brcc checked it.
    pub compile_flags: String,
    /// `-e`: `extern "C"` before each function the host code defines.
    pub extern_c: bool,
    /// `-g` (BrookGPU): a host function's stream parameters (`float4 x<>`) are untyped
    /// `::brook::stream`s, as BrookGPU's brcc wrote them, so hand-written C++ that declares the
    /// function that way links with it.
    pub untyped_stream_params: bool,
    /// `-p`: the device types the program prefers, in order (`cpu`, `cuda`); `BRT_RUNTIME`
    /// still wins.
    pub targets: Vec<&'static str>,
    /// `build`/`run` with `-g`: the kernels another `.br` file of the program also defines;
    /// their BrookGPU functions are local to the file ([`brookgpu::Linkage::Internal`]).
    pub defined_in_other_files: Vec<String>,
}

/// Why a program cannot be written as C++.
#[derive(Debug)]
pub struct GenError {
    pub span: brook_front::source::Span,
    pub message: String,
}

/// The kernels of a program: those it defines (`module`) and those it only declares.
struct Kernels<'a> {
    module: &'a Module,
    /// The module's kernels by name (the first of a name), so a program of many kernels is
    /// generated in time linear in their number.
    by_name: HashMap<&'a str, &'a brook_ir::Kernel>,
    elsewhere: &'a [brook_ir::Kernel],
    /// `brcc -g`: objects named apart, BrookGPU's kernel functions beside them.
    brookgpu: bool,
    /// The kernels whose BrookGPU functions are local to the file.
    file_local: &'a [String],
}

/// The module's kernels by name; the first of a name where several share it.
fn kernels_by_name(module: &Module) -> HashMap<&str, &brook_ir::Kernel> {
    let mut by_name = HashMap::with_capacity(module.kernels.len());
    for kernel in &module.kernels {
        by_name.entry(kernel.name.as_str()).or_insert(kernel);
    }
    by_name
}

/// The C++ of a checked program whose kernels lowered to `module`.
pub fn generate(checked: &Checked, module: &Module, options: &Options) -> Result<String, GenError> {
    let text = checked.file.text();
    let mut replacements: Vec<(usize, usize, String)> = Vec::new();
    let mut declared = std::collections::HashSet::new();
    let elsewhere = brook_front::brook::lower::declared_only(&checked.program, &checked.info)
        .map_err(|e| GenError {
            span: e.span,
            message: e.message,
        })?;
    let kernels = Kernels {
        module,
        by_name: kernels_by_name(module),
        elsewhere: &elsewhere,
        brookgpu: options.untyped_stream_params,
        file_local: &options.defined_in_other_files,
    };
    for item in &checked.program.items {
        match item {
            Item::Kernel(kernel) => {
                let first = declared.insert(kernel.name.name.as_str());
                replacements.push(kernel_replacement(text, &kernels, kernel, first)?);
            }
            Item::Host(host) => {
                for param in &host.stream_params {
                    let (start, end) = (param.span.start as usize, param.span.end as usize);
                    let (ty, _) = element_spelling(text, module, &checked.info, &param.ty)?;
                    let code = if param.pointers > 0 {
                        let stars = "*".repeat(usize::from(param.pointers));
                        let array = param
                            .array
                            .map_or("", |a| &text[a.start as usize..a.end as usize]);
                        format!("::brook::Stream<{ty} >{stars} {}{array}", param.name.name)
                    } else if options.untyped_stream_params {
                        format!("::brook::stream {}", param.name.name)
                    } else {
                        format!("::brook::Stream<{ty} > {}", param.name.name)
                    };
                    replacements.push((start, end, keep_lines(&code, &text[start..end])));
                }
                for group in declaration_groups(&host.streams) {
                    let start = group[0].span.start as usize;
                    let end = group.last().map_or(start, |d| d.span.end as usize);
                    let code = declarations(&checked.file, module, &checked.info, group)?;
                    replacements.push((start, end, keep_lines(&code, &text[start..end])));
                }
            }
            Item::Struct(_) | Item::Typedef(_) => {
                if let Some((end, names)) = struct_item(text, module, item) {
                    replacements.push((end, end, format!(" {}", type_names(module, &names))));
                }
            }
        }
    }
    if options.extern_c {
        replacements.extend(extern_c_insertions(checked));
    }
    // Calls first: a renamed kernel's call is spelled by its call-site form.
    replacements.extend(kernel_call_sites(checked, kernels.brookgpu));
    replacements.extend(renamed_kernel_uses(checked, kernels.brookgpu));
    replacements.sort_by_key(|r| r.0);
    let mut out = prologue(checked, options);
    let mut at = 0;
    for (start, end, code) in replacements {
        if start < at {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str(&code);
        at = end;
    }
    out.push_str(&text[at..]);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

/// For a struct definition of the program (`struct p {...};`, `typedef struct {...} p;`):
/// the byte just after its `;` and the names the struct goes by.
fn struct_item(text: &str, module: &Module, item: &Item) -> Option<(usize, Vec<String>)> {
    let (span, names) = match item {
        Item::Struct(def) => {
            let mut names = vec![def.name.name.clone()];
            names.extend(def.aliases.iter().map(|a| a.name.clone()));
            (def.span, names)
        }
        Item::Typedef(def) => (def.span, vec![def.name.name.clone()]),
        _ => return None,
    };
    // One TypeName per struct: its typedef aliases name the same C++ type.
    let names: Vec<String> = names
        .into_iter()
        .filter(|n| module.structs.iter().any(|s| &s.name == n))
        .take(1)
        .collect();
    if names.is_empty() {
        return None;
    }
    let end = span.end as usize;
    if text[..end].trim_end().ends_with(';') {
        return Some((end, names));
    }
    let semicolon = end + text[end..].find(';')?;
    text[end..semicolon]
        .trim()
        .is_empty()
        .then_some((semicolon + 1, names))
}

/// `brook::detail::TypeName` specialisations naming the struct `names` for the runtime, so that
/// hand-written `brook::Stream<particle>` works too.
fn type_names(module: &Module, names: &[String]) -> String {
    let mut out = String::new();
    for name in names {
        let Some(id) = module.structs.iter().position(|s| &s.name == name) else {
            continue;
        };
        let ty = brook_ir::Type::Struct(brook_ir::StructId(id as u32));
        if let Some((_, description)) = kernels::spellings(module, &ty) {
            let _ = write!(
                out,
                "namespace brook {{ namespace detail {{ template <> inline BROOK_EMITTED const char* TypeName<{name}>::get() {{ return {description:?}; }} }} }}"
            );
        }
    }
    out
}

/// Each call of a kernel in host code (`add(a, b, c)`) names its `.br` line for the runtime's
/// error messages: `(::brook::detail::at_("sum.br", 33), add)(a, b, c)`. A kernel named like a
/// C library function (and under `-g`, any kernel) is called through its object when the
/// argument count is the kernel's.
fn kernel_call_sites(checked: &Checked, brookgpu: bool) -> Vec<(usize, usize, String)> {
    checked
        .program
        .items
        .iter()
        .filter_map(|item| match item {
            Item::Host(host) => Some(&host.calls),
            _ => None,
        })
        .flatten()
        .filter_map(|call| {
            let name = call.callee.name.as_str();
            let kernel = checked.info.kernel(name)?;
            if call.args.len() != kernel.params.len() {
                return None;
            }
            let object = reserved::object_name(name, brookgpu);
            let (start, end) = (
                call.callee.span.start as usize,
                call.callee.span.end as usize,
            );
            let (line, _) = checked.file.line_col(start);
            let file = checked.file.file_of(start);
            let code = format!("(::brook::detail::at_({file:?}, {line}), {object})");
            Some((start, end, code))
        })
        .collect()
}

/// The host code's uses of kernels named like C++ keywords (`new(a, b);`), spelled as their
/// objects (uses inside kernels are replaced with the kernels); under `-g` (`brookgpu`) also
/// those of every kernel not named like a C library function, whose name is BrookGPU's
/// function there (`streamScatterOp(s, i, a, smallest)` passes the object).
fn renamed_kernel_uses(checked: &Checked, brookgpu: bool) -> Vec<(usize, usize, String)> {
    use brook_front::brook::token::TokenKind;
    let text = checked.file.text();
    let renamed: Vec<&str> = checked
        .program
        .items
        .iter()
        .filter_map(|item| match item {
            Item::Kernel(k) => match reserved::spelling(&k.name.name) {
                KernelSpelling::Renamed => Some(k.name.name.as_str()),
                KernelSpelling::Plain if brookgpu => Some(k.name.name.as_str()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    if renamed.is_empty() {
        return Vec::new();
    }
    checked
        .tokens
        .iter()
        .filter(|t| t.kind == TokenKind::Ident)
        .filter_map(|t| {
            let (start, end) = (t.span.start as usize, t.span.end as usize);
            let word = &text[start..end];
            renamed
                .contains(&word)
                .then(|| (start, end, reserved::object_name(word, brookgpu)))
        })
        .collect()
}

/// `extern "C" ` before each host function definition but `static` ones: at the first token of
/// its declaration (the words, `*`, `&` and `::` before its name).
fn extern_c_insertions(checked: &Checked) -> Vec<(usize, usize, String)> {
    use brook_front::brook::token::{Punct, TokenKind};
    let tokens = &checked.tokens;
    checked
        .program
        .host_functions
        .iter()
        .filter_map(|name| {
            let mut at = tokens.iter().position(|t| t.span == name.span)?;
            while at > 0 {
                let before = &tokens[at - 1];
                let part_of_type = matches!(
                    before.kind,
                    TokenKind::Ident
                        | TokenKind::Punct(Punct::Star | Punct::Amp | Punct::ColonColon)
                );
                if !part_of_type || tokens[at].line_start && before.kind == TokenKind::Directive {
                    break;
                }
                at -= 1;
            }
            let start = tokens[at].span.start as usize;
            let words = &checked.file.text()[start..name.span.start as usize];
            // A `static` function has internal linkage: no language linkage to give it.
            let internal = words.split_whitespace().any(|w| w == "static");
            (!internal).then(|| (start, start, "extern \"C\" ".to_string()))
        })
        .collect()
}

/// A kernel declaration (from its attributes to its closing brace or `;`) and what replaces it:
/// the kernel object at the kernel's first declaration (a prototype before `main` makes the
/// kernel callable there, as in C), nothing at the others.
fn kernel_replacement(
    text: &str,
    kernels: &Kernels<'_>,
    kernel: &brook_front::brook::ast::Kernel,
    first: bool,
) -> Result<(usize, usize, String), GenError> {
    let start = kernel
        .attributes
        .iter()
        .map(|a| a.span.start)
        .chain([kernel.span.start])
        .min()
        .unwrap_or(kernel.span.start) as usize;
    let end = kernel.span.end as usize;
    let name = kernel.name.name.as_str();
    let found = kernels
        .by_name
        .get(name)
        .map(|k| (*k, Definition::Here))
        .or_else(|| {
            let k = kernels.elsewhere.iter().find(|k| k.name == name)?;
            Some((k, Definition::Elsewhere))
        });
    let code = match found {
        Some((ir, definition)) if first => {
            let linkage = if kernels.file_local.iter().any(|k| k == name) {
                brookgpu::Linkage::Internal
            } else {
                brookgpu::Linkage::External
            };
            let brookgpu = kernels.brookgpu.then_some(linkage);
            kernels::kernel_object(kernels.module, ir, definition, brookgpu).map_err(|message| {
                GenError {
                    span: kernel.span,
                    message,
                }
            })?
        }
        _ => String::new(),
    };
    Ok((start, end, keep_lines(&code, &text[start..end])))
}

/// `code` followed by as many newlines as `original` has, less its own (so lines stay put).
fn keep_lines(code: &str, original: &str) -> String {
    let code = code.trim_end_matches('\n');
    let wanted = original.matches('\n').count();
    let have = code.matches('\n').count();
    let mut out = code.to_string();
    out.push_str(&"\n".repeat(wanted.saturating_sub(have)));
    out
}

/// Declarations written in one statement share its start (`float a<4>, b<8>;`).
fn declaration_groups(decls: &[StreamDecl]) -> Vec<&[StreamDecl]> {
    let mut groups = Vec::new();
    let mut first = 0;
    for i in 1..=decls.len() {
        if i == decls.len() || decls[i].span.start != decls[first].span.start {
            groups.push(&decls[first..i]);
            first = i;
        }
    }
    groups
}

/// `::brook::Stream<T> a(::brook::declared, {d0, d1}), b(...)` for one declaration statement
/// (`::brook::Iter<T> s(::brook::declared, {d0}, start, end)` for `iter` declarations).
fn declarations(
    file: &brook_front::source::SourceFile,
    module: &Module,
    info: &ProgramInfo,
    group: &[StreamDecl],
) -> Result<String, GenError> {
    let text = file.text();
    let first = &group[0];
    let (ty, description) = element_spelling(text, module, info, &first.ty)?;
    let class = if first.iter.is_some() {
        "Iter"
    } else {
        "Stream"
    };
    let mut out = format!("::brook::{class}<{ty} > ");
    for (i, decl) in group.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let dims: Vec<String> = decl
            .dims
            .iter()
            .map(|d| {
                format!(
                    "(unsigned int)({})",
                    text[d.span.start as usize..d.span.end as usize].trim()
                )
            })
            .collect();
        let range = match (&decl.iter, &decl.init) {
            (Some(_), Some((args, _))) if args.len() == 2 => format!(
                ", {}, {}",
                text[args[0].span.start as usize..args[0].span.end as usize].trim(),
                text[args[1].span.start as usize..args[1].span.end as usize].trim()
            ),
            _ => String::new(),
        };
        let (line, _) = file.line_col(decl.span.start as usize);
        let _ = write!(
            out,
            "{}(::brook::Declared({:?}, {line}), {description}{{{}}}{range})",
            decl.name.name,
            file.file_of(decl.span.start as usize),
            dims.join(", ")
        );
    }
    Ok(out)
}

/// A declared element type's C++ spelling and, for a struct, its description for the runtime
/// as a constructor argument (`"struct pair{a:float;b:float2}", `). Typedef names are resolved
/// (`typedef float real; real s<10>;` is a stream of float).
fn element_spelling(
    text: &str,
    module: &Module,
    info: &ProgramInfo,
    spec: &brook_front::brook::ast::TypeSpec,
) -> Result<(String, String), GenError> {
    if let Some(cpp) = kernels::cpp_type_of_spec(spec) {
        return Ok((cpp, String::new()));
    }
    let written = text[spec.span.start as usize..spec.span.end as usize].trim();
    let name = written.strip_prefix("struct").unwrap_or(written).trim();
    let resolved = match info.type_names.get(name) {
        Some(check::Type::Value(v)) => return Ok((kernels::cpp_value_type(*v), String::new())),
        Some(check::Type::Struct(id)) => info.structs[id.0 as usize].name.as_str(),
        _ => name,
    };
    let described = module
        .structs
        .iter()
        .position(|s| s.name == resolved)
        .and_then(|i| {
            let ty = brook_ir::Type::Struct(brook_ir::StructId(i as u32));
            kernels::spellings(module, &ty)
        });
    match described {
        Some((_, description)) => Ok((written.to_string(), format!("{description:?}, "))),
        None => Err(GenError {
            span: spec.span,
            message: format!(
                "streams of `{written}` in generated C++: the elements must be value types or the program's structs without arrays"
            ),
        }),
    }
}

/// The lines before the program's own: the header, the embedded source, the program handle.
fn prologue(checked: &Checked, options: &Options) -> String {
    let path = checked.file.name();
    let mut out = format!(
        "// Generated by brcc {} from {path}: edit the .br file, not this one.\n\
         #define USE_OLD_API\n\
         #include <brook/brook.hpp>\n\
         static {}         static const bool brook_registered_ = ::brook::detail::register_program(&brook_program_);\n",
        env!("CARGO_PKG_VERSION"),
        program_function(checked, options)
    );
    if !options.targets.is_empty() {
        let _ = writeln!(
            out,
            "static const int brook_targets_ = ::brook::detail::select_targets(\"{}\");",
            options.targets.join(",")
        );
    }
    if options.line_directives {
        let _ = writeln!(out, "#line 1 {path:?}");
    }
    out
}

/// `BrkProgram* brook_program_()`: the program's Brook text, compiled once on first use.
fn program_function(checked: &Checked, options: &Options) -> String {
    let path = checked.file.name();
    let text = checked.file.text();
    let mut delimiter = String::from("brook");
    while text.contains(&format!("){delimiter}\"")) {
        delimiter.push('_');
    }
    format!(
        "BrkProgram* brook_program_() {{\n\
         \x20   static BrkProgram* program = ::brook::detail::compile({path:?}, R\"{delimiter}({text}){delimiter}\", {:?});\n\
         \x20   return program;\n\
         }}\n",
        options.compile_flags,
    )
}

/// The program's struct definitions as written, each with its `TypeName`.
fn struct_definitions(checked: &Checked, module: &Module) -> String {
    let text = checked.file.text();
    let mut out = String::new();
    for item in &checked.program.items {
        let start = match item {
            Item::Struct(def) => def.span.start,
            Item::Typedef(def) => def.span.start,
            _ => continue,
        } as usize;
        if let Some((end, names)) = struct_item(text, module, item) {
            out.push_str(&text[start..end]);
            out.push('\n');
            out.push_str(&type_names(module, &names));
            out.push('\n');
        }
    }
    out
}

/// The header for the C++-API style of seed 001 section 1.10: the kernel objects alone, for
/// host code in C++ files to include (`#include "search.h"`, then `search(keys, ...)`).
pub fn generate_header(
    checked: &Checked,
    module: &Module,
    options: &Options,
) -> Result<String, GenError> {
    let stem: String = std::path::Path::new(checked.file.name())
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("program")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let guard = format!("BROOK_GENERATED_{}_H", stem.to_ascii_uppercase());
    let mut out = format!(
        "// Generated by brcc {} from {}: the kernels as C++ objects; edit the .br file, not this one.\n\
         #ifndef {guard}\n#define {guard}\n\
         #ifndef USE_OLD_API\n#define USE_OLD_API\n#endif\n\
         #include <brook/brook.hpp>\n\
         {}\
         namespace brook_generated_{stem} {{\n\
         inline {}",
        env!("CARGO_PKG_VERSION"),
        checked.file.name(),
        struct_definitions(checked, module),
        program_function(checked, options)
    );
    let by_name = kernels_by_name(module);
    for item in &checked.program.items {
        let Item::Kernel(kernel) = item else { continue };
        if kernel.body.is_none() {
            continue;
        }
        if let Some(ir) = by_name.get(kernel.name.name.as_str()) {
            let object =
                kernels::kernel_object(module, ir, Definition::Here, None).map_err(|message| {
                    GenError {
                        span: kernel.span,
                        message,
                    }
                })?;
            out.push_str(&object);
            out.push('\n');
        }
    }
    let _ = write!(
        out,
        "}} // namespace brook_generated_{stem}\nusing namespace brook_generated_{stem};\n#endif\n"
    );
    Ok(out)
}
