//! `brcc`, the Brook compiler driver.

mod args;

use args::{Args, Command};
use brook_front::{check_source, CheckOptions, SourceFile};
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
        Command::Compile => {
            eprintln!("brcc: generating C++ from a .br file is not available in this version; `brcc check FILE.br` checks it");
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

fn check(args: &Args) -> ExitCode {
    let Some(path) = &args.file else {
        eprintln!("brcc: `brcc check` needs a .br file");
        return ExitCode::from(2);
    };
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(err) => {
            eprintln!("brcc: cannot read `{path}`: {err}");
            return ExitCode::from(2);
        }
    };
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
