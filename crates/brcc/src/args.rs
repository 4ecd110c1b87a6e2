//! Command-line arguments: the brcc flags of seed 001 (section 1.2.2) plus subcommands.
//!
//! Parsed by hand because the seed's flags do not follow one convention (`-pp` is one flag, not
//! `-p p`; `-w3` and `-w 3` are both accepted; `-D NAME=1` defines a macro).

use crate::report::{ColorChoice, MessageFormat, Reporter};
use crate::toolkit::Linking;
use brook_front::brook::Define;

pub const HELP: &str = "\
brcc - the Brook compiler

Usage:
  brcc FILE.br [flags]         write FILE.cpp (or PREFIX.cpp with -o PREFIX): the program as C++
                               that includes brook/brook.hpp, and FILE.h (its kernels)
  brcc FILE.brh [flags]        write FILE.hpp: a Brook header (structs, kernel prototypes) as a
                               C++ header, as BrookGPU's makefiles built built/NAME.hpp
  brcc run FILE.br [-- ARGS]   build the program with the system C++ compiler and run it
  brcc build FILE.br -o EXE    build the program into the executable EXE; more files may
                               follow FILE.br (build and run): .br files (kernels declared in
                               one and defined in another), C++ sources or libraries, and
                               .loom files (checked now, embedded: found by path or name)
  brcc install PREFIX          copy brcc to PREFIX/bin, its runtime library to PREFIX/lib and
                               the headers to PREFIX/include (a moved PREFIX keeps working)
  brcc check FILE.br [flags]   check a file; exit 0 and print nothing when it is clean
  brcc check FILE.loom         check a LOOM program (imports, layout, syntax, names and types)
  brcc FILE.br --emit ir       print the kernel IR of a file (the text form of brook-ir)
  brcc FILE.br --emit ptx      print the PTX the CUDA device writes for each kernel
                               (1-D launch; for sm_90 unless --sm N names another GPU,
                               e.g. --sm 80 for an A100: a running program asks its GPU)
  brcc FILE.br --emit cpp      print the generated C++
  brcc FILE.loom --emit ir|ptx [--grid THREADS/BLOCK]
                               the IR or PTX of a LOOM kernel compiled for a grid: 1-D
                               `--grid 1024/256` (the default) or 2-D `--grid 64x32/8x4`

The C++ compiler is $CXX, else c++, g++ or clang++; programs link against the shared
libbrook_capi.so (their run path names its directory), or with --static against
libbrook_capi.a. brcc finds the library and brook/brook.hpp in $BROOK_HOME (an install prefix
or a checkout), else in ../lib and ../include beside itself (`brcc install`), else beside itself
and in the checkout it was built from (`cargo build -p brcc -p brook-capi`).
  brcc -h | --help             print this message
  brcc --version               print the version, the commit and its date

Flags (seed 001, section 1.2.2):
  -h              Help (print this message).
  -k              Keep generated device code: PREFIX.ir (kernel IR) and PREFIX.ptx.
  --force         Overwrite output files brcc did not write (by default brcc refuses, so a
                  hand-written X.h beside X.br is never replaced).
  -r              Disable address virtualization (accepted; streams need none).
  -o <prefix>     Prefix prepended to all output files.
  -p <shader>     Target: cpu, cuda (cal and gpu are aliases); may be repeated: the program
                  uses the first of these the machine has (unless BRT_RUNTIME is set).
  -s              Tokenize the generated device code (accepted, no effect).
  -b              Parser debugging (accepted, no effect).
  -f              Lexer debugging (accepted, no effect).
  -i <dir>        Include directory for the C++ compiler.
  -L <dir>        Library directory for the C++ compiler (build, run).
  --lib <name>    Link the library `name` (-lname) into the program (build, run).
  --cxxflags <f>  More C++ compiler arguments, space separated (build, run).
  --message-format human|json
                  Diagnostics as text (the default) or one JSON object per line on stderr
                  (severity, code, message, file, line, column, end_line, end_column, label,
                  notes, help, rendered), for editors and CI.
  --color auto|always|never
                  Colour diagnostics: auto (the default) colours when stderr is a terminal
                  and NO_COLOR is unset or empty.
  --static        Link libbrook_capi.a into the program, which then needs no library at run
                  time (build, run; the default links libbrook_capi.so).
  --mpi           The program runs over MPI ranks: libbrook_capi.so must be built with MPI
                  (`cargo build -p brook-capi --features mpi`); start it with mpirun (build, run).
  --np <N>        Run the program on N MPI ranks, through mpirun (run; implies --mpi).
  -l              Insert #line directives into generated code.
  -w <level>      Warning level 0, 1, 2 or 3 (default 0); only with -a.
  -x              Treat warnings as errors.
  -a              Disable strong type checking.
  -g, --brookgpu  The BrookGPU dialect (Stanford BrookGPU programs): Cg/C implicit
                  conversions without warnings, a kernel may read and write one stream
                  (inputs are read as if before any output is written).
  -e              Add extern \"C\" to non-kernel function declarations.
  -c              Disable constant buffers (allow legacy gather array sizes).
  -pp             Enable the brcc preprocessor.
  -D <name>       Define a macro for -pp; -D <name>=<int> gives it a decimal value.
  -n <param>      Disable a parameter; only `-n l` (or `-n 1`) is valid: no #line.

Under strong type checking (the default, as Brook+ 1.4's brcc) a mismatch that an implicit
conversion resolves is a warning and the program compiles with the conversion; warnings above
level 1 are errors, -w has no effect and -x makes the warnings errors. Diagnostics are printed as file:line:column with the source line.
";

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Args {
    pub command: Command,
    pub file: Option<String>,
    /// `build`/`run`: files after the first: more `.br` files (each generated as C++) and C++
    /// sources, objects or libraries, compiled and linked into the one program.
    pub more_files: Vec<String>,
    pub relaxed: bool,
    /// `-g` / `--brookgpu`: the BrookGPU dialect (Cg/C conversions without warnings,
    /// read-write aliasing permitted).
    pub brookgpu: bool,
    /// Not a flag: `build`/`run -g` of several `.br` files sets it to the kernels more than
    /// one of them defines (`cpp::Options::defined_in_other_files`).
    pub defined_in_other_files: Vec<String>,
    pub warning_level: Option<u8>,
    pub warnings_as_errors: bool,
    pub no_constant_buffers: bool,
    pub preprocess: bool,
    pub defines: Vec<Define>,
    pub output_prefix: Option<String>,
    pub targets: Vec<Target>,
    pub include_dirs: Vec<String>,
    /// `-L DIR`, `--lib NAME`, `--cxxflags "FLAGS"`: for the C++ compiler (build, run).
    pub lib_dirs: Vec<String>,
    pub libs: Vec<String>,
    pub cxx_flags: Vec<String>,
    pub line_directives: bool,
    /// `-n l`: no `#line` directives, even for `build` and `run` (which add them by default).
    pub no_line_directives: bool,
    pub keep_device_code: bool,
    /// `--force`: overwrite output files that brcc did not write.
    pub force: bool,
    pub extern_c: bool,
    /// `--emit ir|ptx|cpp`: what to print instead of generating C++.
    pub emit: Option<String>,
    /// `--sm N`: the compute capability `--emit ptx` writes for (`major * 10 + minor`).
    pub sm: Option<u32>,
    /// `--grid T/B` or `--grid TXxTY/BXxBY`: the grid a LOOM kernel is compiled for.
    pub grid: Option<brook_front::loom::lower::Grid>,
    /// The program's own arguments, after `--` (`brcc run`).
    pub run_args: Vec<String>,
    /// `--static`: link the runtime library into the executable (build, run).
    pub linking: Linking,
    /// `--mpi`: the runtime library must have MPI support (build, run; `--np` implies it).
    pub mpi: bool,
    /// `--np N`: run the program on N MPI ranks (`mpirun -np N`).
    pub ranks: Option<usize>,
    /// `--message-format human|json`: how diagnostics are written.
    pub message_format: MessageFormat,
    /// `--color auto|always|never`.
    pub color: ColorChoice,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Command {
    #[default]
    Compile,
    Check,
    Build,
    Run,
    /// `brcc install PREFIX`: brcc, its library and headers under PREFIX.
    Install,
    Help,
    Version,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Cpu,
    Cuda,
}

impl Args {
    /// What the user adds to the C++ compiler's command line.
    /// Where brcc's messages about the program go, and how they look.
    pub fn reporter(&self) -> Reporter {
        Reporter::new(self.message_format, self.color)
    }

    pub fn cxx_options(&self) -> crate::build::CxxOptions {
        crate::build::CxxOptions {
            include_dirs: self.include_dirs.clone(),
            lib_dirs: self.lib_dirs.clone(),
            libs: self.libs.clone(),
            flags: self.cxx_flags.clone(),
            linking: self.linking,
            mpi: self.mpi,
        }
    }

    /// The flags that change what the program means, as the runtime takes them
    /// (`brook::CompileOptions::from_flags`).
    pub fn meaning_flags(&self) -> String {
        let mut flags = Vec::new();
        for (on, flag) in [
            (self.relaxed, "-a"),
            (self.no_constant_buffers, "-c"),
            (self.preprocess, "-pp"),
            (self.brookgpu, "-g"),
        ] {
            if on {
                flags.push(flag.to_string());
            }
        }
        for define in &self.defines {
            match &define.value {
                Some(value) => flags.push(format!("-D{}={value}", define.name)),
                None => flags.push(format!("-D{}", define.name)),
            }
        }
        flags.join(" ")
    }
}

/// Parses the arguments after the program name.
pub fn parse(args: &[String]) -> Result<Args, String> {
    let mut out = Args::default();
    let mut i = 0;
    let value = |i: &mut usize, flag: &str| -> Result<String, String> {
        *i += 1;
        args.get(*i)
            .cloned()
            .ok_or_else(|| format!("{flag} needs a value"))
    };
    while i < args.len() {
        let arg = args[i].as_str();
        // `--flag=value` for the long flags that take a value.
        if let Some((flag, value)) = arg.split_once('=').filter(|(f, _)| f.starts_with("--")) {
            long_flag(flag, value, &mut out)?;
            i += 1;
            continue;
        }
        match arg {
            "check" if out.file.is_none() && out.command == Command::Compile => {
                out.command = Command::Check
            }
            "build" if out.file.is_none() && out.command == Command::Compile => {
                out.command = Command::Build
            }
            "run" if out.file.is_none() && out.command == Command::Compile => {
                out.command = Command::Run
            }
            "install" if out.file.is_none() && out.command == Command::Compile => {
                out.command = Command::Install
            }
            "--" => {
                out.run_args = args[i + 1..].to_vec();
                break;
            }
            "-h" | "--help" | "help" => out.command = Command::Help,
            "--version" | "-V" => out.command = Command::Version,
            "-a" => out.relaxed = true,
            "-g" | "--brookgpu" => out.brookgpu = true,
            "-x" => out.warnings_as_errors = true,
            "-c" => out.no_constant_buffers = true,
            "-pp" => out.preprocess = true,
            "-l" => out.line_directives = true,
            "-k" => out.keep_device_code = true,
            "--force" => out.force = true,
            "--static" => out.linking = Linking::Static,
            "--mpi" => out.mpi = true,
            "--np" => {
                let text = value(&mut i, "--np")?;
                match text.trim().parse::<usize>() {
                    Ok(n) if n >= 1 => {
                        out.ranks = Some(n);
                        out.mpi = true;
                    }
                    _ => return Err(format!("--np takes a number of ranks (1 or more), not `{text}`")),
                }
            }
            "--message-format" | "--color" => long_flag(arg, &value(&mut i, arg)?, &mut out)?,
            "-e" => out.extern_c = true,
            "-r" | "-s" | "-b" | "-f" => {}
            "-o" => out.output_prefix = Some(value(&mut i, "-o")?),
            "-i" => out.include_dirs.push(value(&mut i, "-i")?),
            "-L" => out.lib_dirs.push(value(&mut i, "-L")?),
            "--lib" => out.libs.push(value(&mut i, "--lib")?),
            "--cxxflags" => out.cxx_flags.extend(
                value(&mut i, "--cxxflags")?
                    .split_whitespace()
                    .map(String::from),
            ),
            "-p" => out.targets.push(target(&value(&mut i, "-p")?)?),
            "-n" => disable(&value(&mut i, "-n")?, &mut out)?,
            "-w" => out.warning_level = Some(level(&value(&mut i, "-w")?)?),
            "-D" => out.defines.push(Define::parse(&value(&mut i, "-D")?)?),
            "--emit" => out.emit = Some(emit(&value(&mut i, "--emit")?)?),
            "--sm" => out.sm = Some(compute_capability(&value(&mut i, "--sm")?)?),
            "--grid" => {
                let text = value(&mut i, "--grid")?;
                let grid = brook_front::loom::lower::Grid::parse(&text)
                    .map_err(|e| format!("--grid: {e}"))?;
                out.grid = Some(grid);
            }
            _ if arg.starts_with("-w") && arg.len() > 2 => {
                out.warning_level = Some(level(&arg[2..])?)
            }
            _ if arg.starts_with("-D") && arg.len() > 2 => {
                out.defines.push(Define::parse(&arg[2..])?)
            }
            _ if arg.starts_with('-') => {
                return Err(format!("unknown flag `{arg}` (see brcc --help)"))
            }
            _ if out.file.is_none() => out.file = Some(arg.to_string()),
            _ if matches!(out.command, Command::Build | Command::Run) => {
                out.more_files.push(arg.to_string())
            }
            _ => {
                return Err(format!(
                    "unexpected argument `{arg}`: one .br file at a time (`brcc build` and `brcc run` take more files)"
                ))
            }
        }
        i += 1;
    }
    Ok(out)
}

/// `--message-format` and `--color`, given as `--flag value` or `--flag=value`.
fn long_flag(flag: &str, value: &str, out: &mut Args) -> Result<(), String> {
    match (flag, value) {
        ("--message-format", "human") => out.message_format = MessageFormat::Human,
        ("--message-format", "json") => out.message_format = MessageFormat::Json,
        ("--message-format", _) => {
            return Err(format!(
                "--message-format takes human or json, not `{value}`"
            ))
        }
        ("--color", "auto") => out.color = ColorChoice::Auto,
        ("--color", "always") => out.color = ColorChoice::Always,
        ("--color", "never") => out.color = ColorChoice::Never,
        ("--color", _) => {
            return Err(format!(
                "--color takes auto, always or never, not `{value}`"
            ))
        }
        _ => return Err(format!("unknown flag `{flag}={value}` (see brcc --help)")),
    }
    Ok(())
}

fn compute_capability(text: &str) -> Result<u32, String> {
    let digits = text.trim().trim_start_matches("sm_");
    match digits.parse::<u32>() {
        Ok(sm) if (30..=200).contains(&sm) => Ok(sm),
        _ => Err(format!(
            "--sm takes a compute capability as major * 10 + minor (90 for an H100), not `{text}`"
        )),
    }
}

fn emit(text: &str) -> Result<String, String> {
    match text {
        "ir" | "ptx" | "cpp" => Ok(text.to_string()),
        _ => Err(format!("--emit takes ir, ptx or cpp, not `{text}`")),
    }
}

fn level(text: &str) -> Result<u8, String> {
    match text.parse::<u8>() {
        Ok(n) if n <= 3 => Ok(n),
        _ => Err(format!(
            "-w takes a warning level 0, 1, 2 or 3, not `{text}`"
        )),
    }
}

fn target(text: &str) -> Result<Target, String> {
    match text.to_ascii_lowercase().as_str() {
        "cpu" => Ok(Target::Cpu),
        "cuda" | "cal" | "gpu" => Ok(Target::Cuda),
        _ => Err(format!(
            "-p takes cpu or cuda (cal and gpu are aliases), not `{text}`"
        )),
    }
}

fn disable(text: &str, out: &mut Args) -> Result<(), String> {
    match text {
        "l" | "-l" | "1" => {
            out.line_directives = false;
            out.no_line_directives = true;
            Ok(())
        }
        _ => Err(format!(
            "-n takes `l` (disable #line directives), not `{text}`"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<Args, String> {
        let args: Vec<String> = text.split_whitespace().map(String::from).collect();
        parse(&args)
    }

    #[test]
    fn seed_flags() {
        let args =
            parse_str("check -a -w3 -x -c -pp -D WIN32 -DVALUE=100 -p cal -p cpu f.br").unwrap();
        assert!(!args.brookgpu);
        assert!(parse_str("check -g f.br").unwrap().brookgpu);
        assert!(parse_str("check --brookgpu f.br").unwrap().brookgpu);
        assert_eq!(args.command, Command::Check);
        assert!(
            args.relaxed && args.warnings_as_errors && args.no_constant_buffers && args.preprocess
        );
        assert_eq!(args.warning_level, Some(3));
        assert_eq!(args.defines.len(), 2);
        assert_eq!(args.defines[1].value.as_deref(), Some("100"));
        assert_eq!(args.targets, [Target::Cuda, Target::Cpu]);
        assert_eq!(args.file.as_deref(), Some("f.br"));
    }

    #[test]
    fn run_takes_the_program_arguments_after_a_double_dash() {
        let args = parse_str("run -a f.br -- 3 -x").unwrap();
        assert_eq!(args.command, Command::Run);
        assert!(args.relaxed);
        assert_eq!(args.run_args, ["3", "-x"]);
        assert_eq!(
            parse_str("build f.br -o f").unwrap().command,
            Command::Build
        );
    }

    #[test]
    fn bad_flags_are_errors() {
        assert!(parse_str("-w 7 f.br").is_err());
        assert!(parse_str("-p dx9 f.br").is_err());
        assert!(parse_str("-D X=0x10 f.br").is_err());
        assert!(parse_str("-q f.br").is_err());
        assert!(parse_str("-o").is_err());
    }
}
