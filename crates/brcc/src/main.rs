//! `brcc`, the Brook compiler driver.

mod args;
mod build;
mod cache;
mod cpp;
mod loom_embed;
mod mpi;
mod report;
mod toolkit;

use args::{Args, Command};
use brook_front::brook::Dialect;
use brook_front::{check_source, compile_source, CheckOptions, Severity, SourceFile};
use report::Reporter;
use std::process::ExitCode;

/// brcc's stack: code generation (`--emit ptx`) walks expression trees as deep as the frontend
/// accepts. Only the pages touched are committed.
const BRCC_STACK_BYTES: usize = 256 << 20;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let spawned = std::thread::Builder::new()
        .name("brcc".into())
        .stack_size(BRCC_STACK_BYTES)
        .spawn(move || run(argv));
    match spawned.map(|handle| handle.join()) {
        Ok(Ok(code)) => code,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(e) => {
            eprintln!("brcc: cannot start: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(argv: Vec<String>) -> ExitCode {
    let args = match args::parse(&argv) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("brcc: {message}");
            return ExitCode::from(2);
        }
    };
    match args.command {
        Command::Help => write_out(args::HELP),
        Command::Version => write_out(&format!(
            "brcc {} ({} {})\n",
            env!("CARGO_PKG_VERSION"),
            env!("BRCC_COMMIT"),
            env!("BRCC_COMMIT_DATE")
        )),
        Command::Check => check(&args),
        Command::Install => install(&args),
        Command::Compile if args.file.is_none() => {
            eprint!("{}", args::HELP);
            ExitCode::from(2)
        }
        Command::Compile if args.emit.as_deref() == Some("ir") => emit(&args, Emit::Ir),
        Command::Compile if args.emit.as_deref() == Some("ptx") => emit(&args, Emit::Ptx),
        Command::Compile | Command::Build | Command::Run => program(&args),
    }
}

/// `brcc install PREFIX`.
fn install(args: &Args) -> ExitCode {
    let Some(prefix) = &args.file else {
        eprintln!(
            "brcc: `brcc install PREFIX` needs the prefix (for example /usr/local or ~/.local)"
        );
        return ExitCode::from(2);
    };
    match toolkit::install(std::path::Path::new(prefix)) {
        Ok(written) => {
            let mut text = String::new();
            for path in written {
                text.push_str(&format!("installed {path}\n"));
            }
            write_out(&text)
        }
        Err(message) => {
            eprintln!("brcc: install: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `brcc FILE.br` (write C++), `--emit cpp`, `brcc build` and `brcc run`.
fn program(args: &Args) -> ExitCode {
    if matches!(args.command, Command::Build | Command::Run)
        && args.file.as_deref().is_some_and(|f| f.ends_with(".loom"))
    {
        eprintln!("brcc: the first file is the host program (.br or C++); the .loom files it runs follow it: `brcc build host.cpp kernel.loom -o EXE`");
        return ExitCode::from(2);
    }
    let args = &Args {
        defined_in_other_files: kernels_defined_twice(args),
        ..args.clone()
    };
    let Generated {
        path,
        cpp,
        header,
        module,
    } = match generate(args) {
        Ok(generated) => generated,
        Err(code) => return code,
    };
    match (args.command, args.emit.as_deref()) {
        (Command::Run | Command::Build, _) => {
            let program = match linked_program(args, path, cpp, header) {
                Ok(program) => program,
                Err(code) => return code,
            };
            if args.command == Command::Run {
                return build::run(&program, &args.cxx_options(), &args.run_args, args.ranks);
            }
            let Some(exe) = &args.output_prefix else {
                eprintln!("brcc: `brcc build FILE.br -o EXE` needs -o");
                return ExitCode::from(2);
            };
            match build::build(&program, &args.cxx_options(), std::path::Path::new(exe)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(code) => code,
            }
        }
        (_, Some("cpp")) => write_out(&cpp),
        _ => {
            let brook_header = path.ends_with(".brh");
            let prefix = args.output_prefix.clone().unwrap_or_else(|| {
                let stem = path.strip_suffix(if brook_header { ".brh" } else { ".br" });
                stem.unwrap_or(&path).to_string()
            });
            // A Brook header (`.brh`: structs and kernel prototypes) becomes a C++ header, as
            // BrookGPU's makefiles built `built/NAME.hpp` from `NAME.brh`.
            let mut files = if brook_header {
                vec![(format!("{prefix}.hpp"), cpp)]
            } else {
                vec![
                    (format!("{prefix}.cpp"), cpp),
                    (format!("{prefix}.h"), header),
                ]
            };
            if args.keep_device_code {
                match device_code(&path, &module, &ptx_target(args), &args.reporter()) {
                    Ok(kept) => files.extend(
                        kept.into_iter()
                            .map(|(ext, text)| (format!("{prefix}.{ext}"), text)),
                    ),
                    Err(code) => return code,
                }
            }
            if !args.force {
                let foreign: Vec<&str> = files
                    .iter()
                    .map(|(out, _)| out.as_str())
                    .filter(|out| !written_by_brcc(out))
                    .collect();
                if !foreign.is_empty() {
                    eprintln!(
                        "brcc: refusing to overwrite {}: not written by brcc (no `{GENERATED_MARKER}` line); nothing was written. Rename the file, choose another prefix with -o, or pass --force",
                        foreign.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
                    );
                    return ExitCode::from(2);
                }
            }
            for (out, text) in files {
                // `-o brookgenfiles/NAME` (seed 001's layout) makes the folder when it is new.
                let folder = std::path::Path::new(&out).parent();
                if let Some(Err(e)) = folder
                    .filter(|f| !f.as_os_str().is_empty())
                    .map(std::fs::create_dir_all)
                {
                    eprintln!("brcc: cannot make the folder of `{out}`: {e}");
                    return ExitCode::from(2);
                }
                if let Err(e) = std::fs::write(&out, text) {
                    eprintln!("brcc: cannot write `{out}`: {e}");
                    return ExitCode::from(2);
                }
            }
            ExitCode::SUCCESS
        }
    }
}

/// `build`/`run -g` of several `.br` files: the kernels that more than one of them defines
/// (their BrookGPU functions must be local to each file, or the link finds two definitions).
/// A file that cannot be read or compiled counts for nothing here; its own generation says why.
fn kernels_defined_twice(args: &Args) -> Vec<String> {
    let files: Vec<&String> = args
        .file
        .iter()
        .chain(&args.more_files)
        .filter(|f| f.ends_with(".br"))
        .collect();
    let building = matches!(args.command, Command::Build | Command::Run);
    if !args.brookgpu || !building || files.len() < 2 {
        return Vec::new();
    }
    let mut files_defining: std::collections::BTreeMap<String, usize> = Default::default();
    for file in files {
        let read = |path: &str| std::fs::read_to_string(path).map_err(|e| e.to_string());
        let Ok(text) = read(file) else { continue };
        let mut read_header = read;
        let Ok(source) = brook_front::brook::include::expand_headers(file, &text, &mut read_header)
        else {
            continue;
        };
        if let Some(Ok(module)) = compile_source(source, &options(args)).module {
            let names: std::collections::BTreeSet<String> =
                module.kernels.into_iter().map(|k| k.name).collect();
            for name in names {
                *files_defining.entry(name).or_default() += 1;
            }
        }
    }
    files_defining
        .into_iter()
        .filter(|(_, files)| *files > 1)
        .map(|(name, _)| name)
        .collect()
}

/// The files `build` and `run` compile: the first `.br` file's C++, the C++ of each further
/// `.br` file (generated with the same flags), the `.loom` files embedded
/// ([`loom_embed`]), and the other files as given.
fn linked_program(
    args: &Args,
    path: String,
    cpp: String,
    header: String,
) -> Result<build::Program, ExitCode> {
    let mut units = vec![build::Unit {
        path,
        cpp,
        header: Some(header),
    }];
    let mut others: Vec<String> = Vec::new();
    let loom: Vec<String> = args
        .more_files
        .iter()
        .filter(|f| f.ends_with(".loom"))
        .cloned()
        .collect();
    if !loom.is_empty() {
        let (path, cpp) = loom_embed::embedding_unit(&loom, &args.reporter())?;
        units.push(build::Unit {
            path,
            cpp,
            header: None,
        });
    }
    for file in &args.more_files {
        if file.ends_with(".loom") {
            continue;
        }
        if !file.ends_with(".br") {
            others.push(file.clone());
            continue;
        }
        let one = Args {
            file: Some(file.clone()),
            more_files: Vec::new(),
            ..args.clone()
        };
        let generated = generate(&one)?;
        units.push(build::Unit {
            path: generated.path,
            cpp: generated.cpp,
            header: Some(generated.header),
        });
    }
    Ok(build::Program {
        units,
        other_files: others,
    })
}

/// `-k`: the device code the runtime will make, to keep: the kernel IR (`ir`) and the PTX of
/// each kernel (`ptx`; what the CUDA device writes for a 1-D launch on the `--sm` GPU).
fn device_code(
    path: &str,
    module: &brook_ir::Module,
    target: &brook_codegen::ptx::Target,
    reporter: &Reporter,
) -> Result<Vec<(&'static str, String)>, ExitCode> {
    let valid = brook_ir::validate(module.clone()).map_err(|e| {
        reporter.error_in(path, "internal compiler error", &e.to_string());
        ExitCode::FAILURE
    })?;
    let ptx = ptx_text(&valid, target).map_err(|e| {
        e.report(path, &valid, reporter);
        ExitCode::FAILURE
    })?;
    let ir = format!(
        "// {GENERATED_MARKER} from {path}: the kernel IR\n{}",
        brook_ir::print::print_module(module)
    );
    Ok(vec![
        ("ir", ir),
        ("ptx", format!("// {GENERATED_MARKER} from {path}\n{ptx}")),
    ])
}

/// The words every file brcc writes carries in its first line.
const GENERATED_MARKER: &str = "Generated by brcc";

/// Whether `path` may be overwritten: it does not exist, or brcc wrote it (its first line has
/// [`GENERATED_MARKER`]). A user's own `X.h` beside `X.br` is never replaced silently.
fn written_by_brcc(path: &str) -> bool {
    use std::io::BufRead;
    let Ok(file) = std::fs::File::open(path) else {
        return !std::path::Path::new(path).exists();
    };
    let mut first = String::new();
    let _ = std::io::BufReader::new(file).read_line(&mut first);
    first.contains(GENERATED_MARKER)
}

/// A checked program written as C++.
struct Generated {
    path: String,
    /// The whole program.
    cpp: String,
    /// The kernel objects alone.
    header: String,
    module: brook_ir::Module,
}

/// The file named on the command line as C++, or the exit code after its diagnostics.
fn generate(args: &Args) -> Result<Generated, ExitCode> {
    let (path, file) = read_source(args)?;
    let compiled = compile_source(file, &options(args));
    let checked = &compiled.checked;
    let reporter = args.reporter();
    reporter.diagnostics(&checked.file, &checked.diagnostics);
    let module = match compiled.module {
        Some(Ok(module)) => module,
        Some(Err(e)) => {
            report_lowering_failure(&reporter, &checked.file, &e);
            return Err(ExitCode::FAILURE);
        }
        None => return Err(ExitCode::FAILURE),
    };
    let options = cpp::Options {
        // `build` and `run` delete the C++: compiler messages must name the .br lines.
        line_directives: !args.no_line_directives
            && (args.line_directives || matches!(args.command, Command::Build | Command::Run)),
        compile_flags: args.meaning_flags(),
        extern_c: args.extern_c,
        untyped_stream_params: args.brookgpu,
        defined_in_other_files: args.defined_in_other_files.clone(),
        targets: args
            .targets
            .iter()
            .map(|t| match t {
                args::Target::Cpu => "cpu",
                args::Target::Cuda => "cuda",
            })
            .collect(),
    };
    let report = |e: cpp::GenError| {
        reporter.error_at(&checked.file, e.span, "error", &e.message);
        ExitCode::FAILURE
    };
    let program = cpp::generate(checked, &module, &options).map_err(report)?;
    let header = cpp::generate_header(checked, &module, &options).map_err(report)?;
    Ok(Generated {
        path: path.clone(),
        cpp: program,
        header,
        module,
    })
}

/// A checked program that does not lower: a compiler defect, shown at its place.
fn report_lowering_failure(
    reporter: &Reporter,
    file: &SourceFile,
    error: &brook_front::brook::lower::LowerError,
) {
    let span = brook_front::Span::new(error.span.start as usize, error.span.end as usize);
    reporter.error_at(file, span, "internal compiler error", &error.to_string());
}

fn options(args: &Args) -> CheckOptions {
    CheckOptions {
        strong_types: !args.relaxed,
        warning_level: args.warning_level.unwrap_or(0),
        warnings_as_errors: args.warnings_as_errors,
        constant_buffers: !args.no_constant_buffers,
        preprocess: args.preprocess,
        defines: args.defines.clone(),
        dialect: if args.brookgpu {
            Dialect::BrookGpu
        } else {
            Dialect::BrookPlus
        },
    }
}

/// Reads the source file named on the command line, or says why not.
/// The `.br` file named on the command line, with the `.brh` headers it includes expanded.
fn read_source(args: &Args) -> Result<(String, SourceFile), ExitCode> {
    let Some(path) = &args.file else {
        eprintln!("brcc: a .br file is needed");
        return Err(ExitCode::from(2));
    };
    let reporter = args.reporter();
    let read = |path: &str| {
        std::fs::read(path)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .map_err(|err| err.to_string())
    };
    let text = match read(path) {
        Ok(text) => text,
        Err(err) => {
            reporter.plain(Severity::Error, &format!("cannot read `{path}`: {err}"));
            return Err(ExitCode::from(2));
        }
    };
    let mut read_header = read;
    match brook_front::brook::include::expand_headers(path, &text, &mut read_header) {
        Ok(file) => Ok((path.clone(), file)),
        Err(error) => {
            reporter.include_error(&error);
            Err(ExitCode::FAILURE)
        }
    }
}

/// The LOOM file of the command line, read (imports from beside it) and checked, its
/// diagnostics printed.
fn checked_loom(args: &Args) -> Result<(String, brook_front::loom::Checked), ExitCode> {
    let Some(path) = &args.file else {
        return Err(ExitCode::from(2));
    };
    let reporter = args.reporter();
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(err) => {
            reporter.plain(Severity::Error, &format!("cannot read `{path}`: {err}"));
            return Err(ExitCode::from(2));
        }
    };
    let checked =
        brook_front::loom::check_source(path, &text, &mut brook_front::loom::read_from_disk);
    reporter.diagnostics(&checked.file, &checked.diagnostics);
    Ok((path.clone(), checked))
}

/// `brcc check FILE.loom`: the LOOM frontend (imports, layout, parsing, checking), with
/// every diagnostic rendered.
fn check_loom(args: &Args) -> ExitCode {
    let (path, checked) = match checked_loom(args) {
        Ok(checked) => checked,
        Err(code) => return code,
    };
    let path = &path;
    let errors = checked.error_count();
    if errors > 0 {
        args.reporter()
            .summary(&format!("brcc: {path}: {errors} error(s)"));
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// `brcc FILE.loom --emit ir|ptx [--grid ...]`: the kernel compiled for the grid.
fn emit_loom(args: &Args, what: Emit) -> ExitCode {
    let (path, checked) = match checked_loom(args) {
        Ok(checked) => checked,
        Err(code) => return code,
    };
    let path = &path;
    if checked.has_errors() {
        let errors = checked.error_count();
        args.reporter()
            .summary(&format!("brcc: {path}: {errors} error(s)"));
        return ExitCode::FAILURE;
    }
    let grid = args
        .grid
        .unwrap_or(brook_front::loom::lower::Grid::one_d(1024, 256));
    let lowered = match brook_front::loom::lower::lower(&checked, grid) {
        Ok(lowered) => lowered,
        Err(e) => {
            args.reporter()
                .error_at(&checked.file, e.span, "error", &e.to_string());
            return ExitCode::FAILURE;
        }
    };
    let module = match brook_ir::validate(lowered.module) {
        Ok(module) => module,
        Err(e) => {
            eprintln!("brcc: internal compiler error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let text = match what {
        Emit::Ir => Ok(brook_ir::print::print_module(&module)),
        Emit::Ptx => ptx_text(&module, &ptx_target(args)),
    };
    match text {
        Ok(text) => write_out(&text),
        Err(e) => {
            e.report(path, &module, &args.reporter());
            ExitCode::FAILURE
        }
    }
}

/// What `--emit` prints.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Emit {
    Ir,
    Ptx,
}

/// A kernel the PTX backend cannot compile: why, and where when the construct has a place.
struct PtxFailure {
    message: String,
    span: Option<brook_ir::SourceSpan>,
}

impl PtxFailure {
    fn report(&self, path: &str, module: &brook_ir::ValidModule, reporter: &Reporter) {
        match (self.span, module.source.as_deref()) {
            (Some(span), Some(file)) => {
                let span = brook_front::Span::new(span.start as usize, span.end as usize);
                reporter.error_at(file, span, "error", &self.message)
            }
            _ => reporter.error_in(path, "error", &self.message),
        }
    }
}

/// The PTX of every kernel, as the CUDA device writes it for a launch over a 1-D domain with
/// every input a stream (or iterator) of the domain's shape, for `target`.
fn ptx_text(
    module: &brook_ir::ValidModule,
    target: &brook_codegen::ptx::Target,
) -> Result<String, PtxFailure> {
    let mut out = String::new();
    use brook_codegen::abi::Variant;
    for (index, kernel) in module.kernels.iter().enumerate() {
        let variant = Variant::plain(kernel, 1);
        let ptx = brook_codegen::ptx::compile(module, index, &variant, target).map_err(|e| {
            PtxFailure {
                message: e.to_string(),
                span: e.span(),
            }
        })?;
        out.push_str(&ptx.text);
        out.push('\n');
    }
    Ok(out)
}

/// The GPU `--emit ptx` writes for: `--sm`, else [`brook_codegen::ptx::Target::DEFAULT`],
/// with the tuning the environment asks for (as the runtime compiles).
fn ptx_target(args: &Args) -> brook_codegen::ptx::Target {
    let default = brook_codegen::ptx::Target::DEFAULT;
    brook_codegen::ptx::Target {
        sm: args.sm.unwrap_or(default.sm),
        tuning: brook_codegen::Tuning::from_env(),
    }
}

fn emit(args: &Args, what: Emit) -> ExitCode {
    if args.file.as_deref().is_some_and(|f| f.ends_with(".loom")) {
        return emit_loom(args, what);
    }
    let (path, file) = match read_source(args) {
        Ok(source) => source,
        Err(code) => return code,
    };
    let compiled = compile_source(file, &options(args));
    let checked = &compiled.checked;
    let reporter = args.reporter();
    reporter.diagnostics(&checked.file, &checked.diagnostics);
    match compiled.module {
        Some(Ok(module)) => match brook_ir::validate(module) {
            Ok(module) if what == Emit::Ir => write_out(&brook_ir::print::print_module(&module)),
            Ok(module) => match ptx_text(&module, &ptx_target(args)) {
                Ok(text) => write_out(&text),
                Err(e) => {
                    e.report(&path, &module, &reporter);
                    ExitCode::FAILURE
                }
            },
            Err(e) => {
                eprintln!("brcc: internal compiler error: {e}");
                ExitCode::FAILURE
            }
        },
        Some(Err(e)) => {
            report_lowering_failure(&reporter, &checked.file, &e);
            ExitCode::FAILURE
        }
        None => ExitCode::FAILURE,
    }
}

fn check(args: &Args) -> ExitCode {
    if args.file.as_deref().is_some_and(|f| f.ends_with(".loom")) {
        return check_loom(args);
    }
    let (path, file) = match read_source(args) {
        Ok(source) => source,
        Err(code) => return code,
    };
    let path = &path;
    let reporter = args.reporter();
    if !args.relaxed && args.warning_level.is_some() {
        reporter.plain(
            Severity::Warning,
            "note: -w has no effect under strong type checking; pass -a to use it",
        );
    }
    let checked = check_source(file, &options(args));
    if checked.diagnostics.is_empty() {
        return ExitCode::SUCCESS;
    }
    reporter.diagnostics(&checked.file, &checked.diagnostics);
    let errors = checked.diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = checked.diagnostics.len() - errors;
    reporter.summary(&format!(
        "\nbrcc: {path}: {errors} error(s), {warnings} warning(s)"
    ));
    if errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Writes `text` to standard output. A reader that stops early (`brcc ... | head`) is not an
/// error: brcc stops writing and succeeds, as the tools it is used with do.
fn write_out(text: &str) -> ExitCode {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("brcc: cannot write to standard output: {e}");
            ExitCode::from(2)
        }
    }
}
