//! `brcc`, the Brook compiler driver.

mod args;

use args::{Args, Command};
use brook_front::{check_source, compile_source, CheckOptions, SourceFile};
use std::process::ExitCode;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match args::parse(&argv) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("brcc: {message}");
            return ExitCode::from(2);
        }
    };
    match args.command {
        Command::Help => {
            print!("{}", args::HELP);
            ExitCode::SUCCESS
        }
        Command::Version => {
            println!("brcc {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Command::Check => check(&args),
        Command::Compile if args.file.is_none() => {
            eprint!("{}", args::HELP);
            ExitCode::from(2)
        }
        Command::Compile if args.emit.as_deref() == Some("ir") => emit_ir(&args),
        Command::Compile => {
            let what = match args.emit.as_deref() {
                Some("ptx") => "emitting PTX",
                _ => "generating C++ from a .br file",
            };
            eprintln!("brcc: {what} is not available in this version; `brcc check FILE.br` checks a file and `brcc FILE.br --emit ir` prints its IR");
            ExitCode::from(2)
        }
    }
}

fn options(args: &Args) -> CheckOptions {
    CheckOptions {
        strong_types: !args.relaxed,
        warning_level: args.warning_level.unwrap_or(0),
        warnings_as_errors: args.warnings_as_errors,
        constant_buffers: !args.no_constant_buffers,
        preprocess: args.preprocess,
        defines: args.defines.clone(),
    }
}

/// Reads the source file named on the command line, or says why not.
fn read_source(args: &Args) -> Result<(String, String), ExitCode> {
    let Some(path) = &args.file else {
        eprintln!("brcc: a .br file is needed");
        return Err(ExitCode::from(2));
    };
    match std::fs::read(path) {
        Ok(bytes) => Ok((path.clone(), String::from_utf8_lossy(&bytes).into_owned())),
        Err(err) => {
            eprintln!("brcc: cannot read `{path}`: {err}");
            Err(ExitCode::from(2))
        }
    }
}

fn emit_ir(args: &Args) -> ExitCode {
    let (path, text) = match read_source(args) {
        Ok(source) => source,
        Err(code) => return code,
    };
    let compiled = compile_source(SourceFile::new(path.clone(), text), &options(args));
    let checked = &compiled.checked;
    eprint!("{}", checked.render_diagnostics());
    match compiled.module {
        Some(Ok(module)) => match brook_ir::validate(&module) {
            Ok(()) => {
                print!("{}", brook_ir::print::print_module(&module));
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("brcc: internal compiler error: {e}");
                ExitCode::FAILURE
            }
        },
        Some(Err(e)) => {
            let (line, column) = checked.file.line_col(e.span.start as usize);
            eprintln!("{path}:{line}:{column}: internal compiler error: {e}");
            ExitCode::FAILURE
        }
        None => ExitCode::FAILURE,
    }
}

fn check(args: &Args) -> ExitCode {
    let (path, text) = match read_source(args) {
        Ok(source) => source,
        Err(code) => return code,
    };
    let path = &path;
    if !args.relaxed && (args.warning_level.is_some() || args.warnings_as_errors) {
        eprintln!(
            "brcc: note: -w and -x have no effect under strong type checking; pass -a to use them"
        );
    }
    let checked = check_source(SourceFile::new(path.clone(), text), &options(args));
    if checked.diagnostics.is_empty() {
        return ExitCode::SUCCESS;
    }
    eprint!("{}", checked.render_diagnostics());
    let errors = checked.diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = checked.diagnostics.len() - errors;
    eprintln!("\nbrcc: {path}: {errors} error(s), {warnings} warning(s)");
    if errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
