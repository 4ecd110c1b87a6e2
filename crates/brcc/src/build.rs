//! `brcc build` and `brcc run`: the generated C++ compiled by the system C++ compiler against
//! `brook/brook.hpp` and the runtime library (`libbrook_capi.so`, or `libbrook_capi.a` with
//! `--static`: [`toolkit`]), then (for `run`) started with the program's arguments, its output
//! and exit code passed through.

use crate::cache;
use crate::toolkit::{self, Linking, Toolkit};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// What `brcc build` compiles: the generated C++ of each `.br` file and the other files
/// given (C++ sources, objects, libraries).
pub struct Program {
    pub units: Vec<Unit>,
    pub other_files: Vec<String>,
}

/// One generated translation unit: the file it came from, its C++, and the header a C++
/// source of the program may include for its kernels (`STEM.h`, also under the names of
/// [`HEADER_NAMES`]; none for embedded LOOM).
pub struct Unit {
    pub path: String,
    pub cpp: String,
    pub header: Option<String>,
}

impl Program {
    /// The first `.br` file's path, naming the program in messages.
    fn name(&self) -> &str {
        self.units.first().map_or("the program", |unit| &unit.path)
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
    /// `--static`: link the runtime into the executable.
    pub linking: Linking,
    /// `--mpi`: the runtime library must have MPI support.
    pub mpi: bool,
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

fn fail(message: String) -> ExitCode {
    eprintln!("brcc: {message}");
    ExitCode::from(2)
}

/// Builds the program into `exe` (from the build cache when nothing changed: [`cache`]).
pub fn build(program: &Program, cxx_options: &CxxOptions, exe: &Path) -> Result<(), ExitCode> {
    let built = cached_or_built(program, cxx_options)?;
    let copied = match built {
        Built::Cached(path) => std::fs::copy(&path, exe).map(|_| ()),
        // The flags asked for no executable (`-fsyntax-only`), as the compiler would.
        Built::Temporary(path) if !path.exists() => Ok(()),
        Built::Temporary(path) => {
            let moved =
                std::fs::rename(&path, exe).or_else(|_| std::fs::copy(&path, exe).map(|_| ()));
            let _ = std::fs::remove_file(&path);
            moved
        }
    };
    copied.map_err(|e| fail(format!("cannot write `{}`: {e}", exe.display())))
}

/// Where a build's executable is: a cache entry (kept), or a temporary file (the cache is off).
enum Built {
    Cached(PathBuf),
    Temporary(PathBuf),
}

/// The program's executable: the cache entry of what it is built from, built first when
/// there is none.
fn cached_or_built(program: &Program, cxx_options: &CxxOptions) -> Result<Built, ExitCode> {
    let cxx = compiler().map_err(fail)?;
    let kit = toolkit::find(cxx_options.linking).map_err(fail)?;
    if cxx_options.mpi {
        crate::mpi::check_library(&kit, cxx_options.linking).map_err(fail)?;
    }
    let Some(cache) = cache::Cache::open() else {
        let exe = std::env::temp_dir().join(format!("brcc-run-{}", std::process::id()));
        compile(program, cxx_options, &cxx, &kit, &exe)?;
        return Ok(Built::Temporary(exe));
    };
    let key = cache_key(program, cxx_options, &cxx, &kit);
    if let Some(path) = cache.get(&key) {
        return Ok(Built::Cached(path));
    }
    let partial = cache.temporary(&key);
    let headers = match compile(program, cxx_options, &cxx, &kit, &partial) {
        Ok(headers) => headers,
        Err(code) => {
            let _ = std::fs::remove_file(&partial);
            return Err(code);
        }
    };
    if !partial.exists() {
        return Ok(Built::Temporary(partial));
    }
    Ok(Built::Cached(cache.insert(&key, &partial, &headers)))
}

/// Everything [`compile`] reads.
fn cache_key(program: &Program, options: &CxxOptions, cxx: &str, kit: &Toolkit) -> String {
    let mut key = cache::Key::default();
    key.text(env!("CARGO_PKG_VERSION")).text(cxx);
    if let Ok(out) = Command::new(cxx).arg("--version").output() {
        key.bytes(&out.stdout);
    }
    for part in [
        &options.include_dirs,
        &options.lib_dirs,
        &options.libs,
        &options.flags,
    ] {
        for word in part {
            key.text(word);
        }
        key.text("|");
    }
    for unit in &program.units {
        key.text(&unit.path).text(&unit.cpp);
        key.text(unit.header.as_deref().unwrap_or("|"));
    }
    for file in &program.other_files {
        key.text(file).file(Path::new(file));
    }
    key.text(options.linking.file_name())
        .file(&kit.include.join("brook/brook.hpp"))
        .stamp(&kit.library(options.linking));
    key.finish()
}

/// Whether an input file is a source the C++ compiler compiles (others are linked).
fn is_source(file: &str) -> bool {
    [".cpp", ".cc", ".cxx", ".c", ".C", ".c++"]
        .iter()
        .any(|ext| file.ends_with(ext))
}

/// Compiles the program (its generated C++ and other files) into `exe`, each source to an
/// object of its own (writing the headers it read: `dependencies`), then links; the
/// compiler's messages go to stderr. Returns every header the sources read.
fn compile(
    program: &Program,
    cxx_options: &CxxOptions,
    cxx: &str,
    kit: &Toolkit,
    exe: &Path,
) -> Result<Vec<PathBuf>, ExitCode> {
    let dir = std::env::temp_dir().join(format!("brcc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| fail(format!("{}: {e}", dir.display())))?;
    let result = compile_in(program, cxx_options, cxx, kit, exe, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn compile_in(
    program: &Program,
    cxx_options: &CxxOptions,
    cxx: &str,
    kit: &Toolkit,
    exe: &Path,
    dir: &Path,
) -> Result<Vec<PathBuf>, ExitCode> {
    let generated_headers = write_headers(program, dir)?;
    // (source, the directory of the file it came from)
    let mut sources: Vec<(PathBuf, PathBuf)> = Vec::new();
    for (n, unit) in program.units.iter().enumerate() {
        let cpp_path = dir.join(format!("{n}_{}.cpp", stem(&unit.path)));
        std::fs::write(&cpp_path, &unit.cpp)
            .map_err(|e| fail(format!("{}: {e}", cpp_path.display())))?;
        sources.push((cpp_path, parent_dir(&unit.path)));
    }
    let mut linked: Vec<PathBuf> = Vec::new();
    for file in &program.other_files {
        if is_source(file) {
            sources.push((PathBuf::from(file), parent_dir(file)));
        } else {
            linked.push(PathBuf::from(file));
        }
    }
    let mut headers = Vec::new();
    let mut objects = Vec::new();
    for (n, (source, source_dir)) in sources.iter().enumerate() {
        let object = dir.join(format!("{n}.o"));
        let deps = dir.join(format!("{n}.d"));
        let mut command = Command::new(cxx);
        command
            .args(["-std=c++11", "-O2", "-c", "-MD", "-MF"])
            .arg(&deps)
            .arg("-o")
            .arg(&object)
            .arg("-I")
            .arg(&kit.include)
            .arg("-I")
            .arg(source_dir);
        for include in &cxx_options.include_dirs {
            command.arg("-I").arg(include);
        }
        // Last of the -I folders (a header of the user's own name wins), still before the
        // system's (`search.h`).
        command.arg("-I").arg(&generated_headers);
        command.args(&cxx_options.flags).arg(source);
        let shown = program
            .units
            .get(n)
            .map_or(source.as_path(), |u| Path::new(&u.path));
        run_compiler(cxx, &mut command, &format!("compile {}", shown.display()))?;
        // The generated headers are part of the key (their units' text), and gone after the build.
        headers.extend(
            dependencies(&deps, source)
                .into_iter()
                .filter(|h| !h.starts_with(dir)),
        );
        objects.push(object);
    }
    if objects.iter().any(|o| !o.exists()) {
        // The flags asked for no objects (`--cxxflags -fsyntax-only`): nothing to link.
        return Ok(headers);
    }
    let mut link = Command::new(cxx);
    link.arg("-o").arg(exe).args(&objects).args(&linked);
    for dir in &cxx_options.lib_dirs {
        link.arg("-L").arg(dir);
    }
    link.args(cxx_options.libs.iter().map(|l| format!("-l{l}")))
        .args(&cxx_options.flags)
        .args(
            cxx_options
                .linking
                .link_arguments(&kit.library(cxx_options.linking)),
        );
    run_compiler(cxx, &mut link, &format!("link {}", program.name()))?;
    headers.sort();
    headers.dedup();
    Ok(headers)
}

/// The names a C++ source may include a `.br` file's header by (`STEM` its file stem): as
/// `brcc STEM.br` writes it, as the Brook+ SDK samples include it (`brookgenfiles/`), and as
/// BrookGPU's makefiles built it (`built/STEM.hpp`).
const HEADER_NAMES: [&str; 4] = ["{}.h", "brookgenfiles/{}.h", "{}.hpp", "built/{}.hpp"];

/// Writes each unit's header under each of [`HEADER_NAMES`] in an include directory of the
/// build's own, returned for `-I`: `#include "search.h"` or `#include
/// "brookgenfiles/search.h"` in a C++ source finds the kernels of `search.br` without a
/// `brcc search.br` first (and before a system header of the same name).
fn write_headers(program: &Program, dir: &Path) -> Result<PathBuf, ExitCode> {
    let include = dir.join("include");
    for unit in &program.units {
        let Some(header) = &unit.header else { continue };
        for name in HEADER_NAMES {
            let path = include.join(name.replace("{}", stem(&unit.path)));
            if let Some(folder) = path.parent() {
                std::fs::create_dir_all(folder)
                    .map_err(|e| fail(format!("{}: {e}", folder.display())))?;
            }
            std::fs::write(&path, header).map_err(|e| fail(format!("{}: {e}", path.display())))?;
        }
    }
    Ok(include)
}

fn stem(file: &str) -> &str {
    Path::new(file)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("program")
}

fn parent_dir(file: &str) -> PathBuf {
    Path::new(file)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

/// Runs the compiler or linker; `what` says what it does ("compile FILE", "link FILE").
fn run_compiler(cxx: &str, command: &mut Command, what: &str) -> Result<(), ExitCode> {
    match command.status() {
        Ok(s) if s.success() => Ok(()),
        Ok(_) => {
            eprintln!("brcc: {cxx} could not {what} (messages above)");
            Err(ExitCode::FAILURE)
        }
        Err(e) => Err(fail(format!("cannot run {cxx}: {e}"))),
    }
}

/// The files a `-MD` dependency file lists, but the source itself.
fn dependencies(deps: &Path, source: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(deps) else {
        return Vec::new();
    };
    // `target: a b \\\n c`, spaces in names escaped as `\ `.
    let joined = text.replace("\\\n", " ").replace("\\ ", "\u{0}");
    let rest = joined.split_once(": ").map_or("", |(_, r)| r);
    rest.split_whitespace()
        .map(|w| PathBuf::from(w.replace('\u{0}', " ")))
        .filter(|p| p != source)
        .collect()
}

/// Builds the program (or finds it in the build cache) and runs it with `args`, on `ranks`
/// MPI ranks when given (`mpirun`).
pub fn run(
    program: &Program,
    cxx_options: &CxxOptions,
    args: &[String],
    ranks: Option<usize>,
) -> ExitCode {
    let (exe, temporary) = match cached_or_built(program, cxx_options) {
        Ok(Built::Cached(path)) => (path, false),
        Ok(Built::Temporary(path)) => (path, true),
        Err(code) => return code,
    };
    let source_path = program.name();
    let command = match ranks {
        Some(ranks) => crate::mpi::launcher(ranks, &exe, args),
        None => {
            let mut command = Command::new(&exe);
            command.args(args);
            Ok(command)
        }
    };
    let status = match command {
        Ok(mut command) => command.status(),
        Err(e) => {
            if temporary {
                let _ = std::fs::remove_file(&exe);
            }
            return fail(e);
        }
    };
    if temporary {
        let _ = std::fs::remove_file(&exe);
    }
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
