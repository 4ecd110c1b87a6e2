//! `brcc build` and `brcc run`: the generated C++ compiled by the system C++ compiler against
//! `brook/brook.hpp` and `libbrook_capi.a`, then (for `run`) started with the program's
//! arguments, its output and exit code passed through.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// Where the header and the library are.
struct Toolkit {
    include: PathBuf,
    library: PathBuf,
}

/// What `brcc build` compiles: the generated C++ of each `.br` file (its path and text) and
/// the other files given (C++ sources, objects, libraries).
pub struct Program {
    pub units: Vec<(String, String)>,
    pub other_files: Vec<String>,
}

impl Program {
    /// The first `.br` file's path, naming the program in messages.
    fn name(&self) -> &str {
        self.units.first().map_or("the program", |(path, _)| path)
    }
}

/// What the user adds to the C++ compiler's command line.
#[derive(Clone, Debug, Default)]
pub struct CxxOptions {
    /// `-i DIR`: include directories.
    pub include_dirs: Vec<String>,
    /// `-L DIR`: library directories.
    pub lib_dirs: Vec<String>,
    /// `--lib NAME`: libraries (`-lNAME`), after the program.
    pub libs: Vec<String>,
    /// `--cxxflags "FLAGS"`: more arguments, split at spaces, after the program.
    pub flags: Vec<String>,
}

fn runs(compiler: &str) -> bool {
    Command::new(compiler)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The C++ compiler: `$CXX` (an error if it does not run: never a silent fallback), else the
/// first of `c++`, `g++`, `clang++` that runs.
fn compiler() -> Result<String, String> {
    if let Some(cxx) = std::env::var("CXX").ok().filter(|c| !c.is_empty()) {
        return if runs(&cxx) {
            Ok(cxx)
        } else {
            Err(format!(
                "CXX={cxx}: this C++ compiler does not run (`{cxx} --version` failed): fix CXX or unset it to use c++, g++ or clang++"
            ))
        };
    }
    ["c++", "g++", "clang++"]
        .into_iter()
        .find(|c| runs(c))
        .map(String::from)
        .ok_or_else(|| {
            "no C++ compiler found ($CXX, c++, g++ or clang++): install one (for example \
             `apt install g++`) or set CXX to yours"
                .to_string()
        })
}

fn toolkit() -> Result<Toolkit, String> {
    let home = std::env::var_os("BROOK_HOME").map(PathBuf::from);
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let include = home
        .as_ref()
        .map(|h| h.join("include"))
        .filter(|p| p.join("brook/brook.hpp").exists())
        .or_else(|| Some(checkout.join("include")).filter(|p| p.join("brook/brook.hpp").exists()))
        .ok_or("brook/brook.hpp not found: set BROOK_HOME to the Brook checkout")?;
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join("libbrook_capi.a")));
    let in_home = home.map(|h| h.join("target/release/libbrook_capi.a"));
    let library = beside
        .into_iter()
        .chain(in_home)
        .find(|p| p.exists())
        .ok_or(
            "libbrook_capi.a not found beside brcc: build it with `cargo build -p brook-capi` \
             (with --release for a release brcc)",
        )?;
    Ok(Toolkit { include, library })
}

/// Compiles the program (its generated C++ and other files) into `exe`; the compiler's messages
/// go to stderr.
pub fn build(program: &Program, cxx_options: &CxxOptions, exe: &Path) -> Result<(), ExitCode> {
    let fail = |message: String| {
        eprintln!("brcc: {message}");
        ExitCode::from(2)
    };
    let cxx = compiler().map_err(fail)?;
    let kit = toolkit().map_err(fail)?;
    let dir = std::env::temp_dir().join(format!("brcc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| fail(format!("{}: {e}", dir.display())))?;
    let mut command = Command::new(&cxx);
    command
        .args(["-std=c++11", "-O2", "-o"])
        .arg(exe)
        .arg("-I")
        .arg(&kit.include);
    let mut written = Vec::new();
    for (n, (source_path, cpp)) in program.units.iter().enumerate() {
        let stem = Path::new(source_path)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("program");
        let cpp_path = dir.join(format!("{n}_{stem}.cpp"));
        std::fs::write(&cpp_path, cpp).map_err(|e| fail(format!("{}: {e}", cpp_path.display())))?;
        let source_dir = Path::new(source_path)
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        command.arg("-I").arg(source_dir);
        written.push(cpp_path);
    }
    for dir in &cxx_options.include_dirs {
        command.arg("-I").arg(dir);
    }
    for dir in &cxx_options.lib_dirs {
        command.arg("-L").arg(dir);
    }
    command.args(&written).args(&program.other_files);
    command.args(cxx_options.libs.iter().map(|l| format!("-l{l}")));
    command.args(&cxx_options.flags);
    let status = command
        .arg(&kit.library)
        .args(["-lpthread", "-ldl", "-lm", "-lrt", "-lutil"])
        .status()
        .map_err(|e| fail(format!("cannot run {cxx}: {e}")));
    let _ = std::fs::remove_dir_all(&dir);
    match status? {
        s if s.success() => Ok(()),
        _ => {
            eprintln!(
                "brcc: {cxx} could not compile {} (messages above)",
                program.name()
            );
            Err(ExitCode::FAILURE)
        }
    }
}

/// Builds the program into a temporary executable and runs it with `args`.
pub fn run(program: &Program, cxx_options: &CxxOptions, args: &[String]) -> ExitCode {
    let exe = std::env::temp_dir().join(format!("brcc-run-{}", std::process::id()));
    if let Err(code) = build(program, cxx_options, &exe) {
        return code;
    }
    let source_path = program.name();
    let status = Command::new(&exe).args(args).status();
    let _ = std::fs::remove_file(&exe);
    match status {
        Ok(s) => match s.code() {
            Some(code) => ExitCode::from(code.clamp(0, 255) as u8),
            None => {
                eprintln!("brcc: {source_path} was stopped by a signal ({s})");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("brcc: cannot start the program: {e}");
            ExitCode::FAILURE
        }
    }
}
