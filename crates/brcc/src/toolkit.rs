//! Where brcc finds what programs are built against — the headers (`include/brook/brook.hpp`)
//! and the runtime library (`libbrook_capi.so`, or `libbrook_capi.a` for `--static`) — and
//! `brcc install PREFIX`, which lays them out so that a moved or installed brcc finds them.
//!
//! The places, first found wins:
//! 1. `$BROOK_HOME`: an install prefix (`include/`, `lib/`) or a checkout (`include/`,
//!    `target/release/`). When it is set, nothing else is looked at.
//! 2. Beside brcc as `brcc install` lays it out: `PREFIX/bin/brcc`, `PREFIX/include`,
//!    `PREFIX/lib`.
//! 3. Cargo's layout: the library beside brcc (`target/<profile>/`) or in the checkout's
//!    `target/release/` (a brcc from `cargo install --path crates/brcc`), the headers in the
//!    checkout brcc was built from.

use std::path::{Path, PathBuf};

/// How a program links the runtime.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Linking {
    /// Against `libbrook_capi.so`, found at run time through the run path brcc writes into the
    /// executable (the library's directory).
    #[default]
    Shared,
    /// `--static`: `libbrook_capi.a` copied into the executable, which then needs no library.
    Static,
}

impl Linking {
    pub fn file_name(self) -> &'static str {
        match self {
            Linking::Shared => "libbrook_capi.so",
            Linking::Static => "libbrook_capi.a",
        }
    }

    /// What the C++ compiler's link line gets for the library at `path`.
    pub fn link_arguments(self, path: &Path) -> Vec<String> {
        let library = path.to_string_lossy().into_owned();
        match self {
            Linking::Shared => {
                let dir = path.parent().unwrap_or(Path::new("."));
                vec![library, format!("-Wl,-rpath,{}", dir.display())]
            }
            Linking::Static => [
                library.as_str(),
                "-lpthread",
                "-ldl",
                "-lm",
                "-lrt",
                "-lutil",
            ]
            .map(String::from)
            .to_vec(),
        }
    }
}

/// The headers' directory (holding `brook/brook.hpp`) and the library's.
#[derive(Clone, Debug)]
pub struct Toolkit {
    pub include: PathBuf,
    pub lib_dir: PathBuf,
}

impl Toolkit {
    pub fn library(&self, linking: Linking) -> PathBuf {
        self.lib_dir.join(linking.file_name())
    }
}

fn has_headers(include: &Path) -> bool {
    include.join("brook/brook.hpp").is_file()
}

/// The checkout brcc was built from, when it is still there.
fn checkout_include() -> Option<PathBuf> {
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include");
    has_headers(&include).then_some(include)
}

/// The toolkit for a program linked as `linking`, or what is missing and how to get it.
pub fn find(linking: Linking) -> Result<Toolkit, String> {
    let library = linking.file_name();
    if let Some(home) = std::env::var_os("BROOK_HOME").filter(|h| !h.is_empty()) {
        let home = PathBuf::from(home);
        let include = home.join("include");
        let lib_dir = [home.join("lib"), home.join("target/release")]
            .into_iter()
            .find(|dir| dir.join(library).is_file());
        return match (has_headers(&include), lib_dir) {
            (true, Some(lib_dir)) => Ok(Toolkit { include, lib_dir }),
            (false, _) => Err(format!(
                "BROOK_HOME={}: no include/brook/brook.hpp there: set BROOK_HOME to a Brook \
                 install prefix or checkout, or unset it",
                home.display()
            )),
            (true, None) => Err(format!(
                "BROOK_HOME={}: no {library} in its lib/ or target/release/{}",
                home.display(),
                build_hint(linking)
            )),
        };
    }
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
        .ok_or("cannot tell where brcc is (set BROOK_HOME to a Brook install or checkout)")?;
    let installed = exe_dir.parent().map(|prefix| Toolkit {
        include: prefix.join("include"),
        lib_dir: prefix.join("lib"),
    });
    if let Some(kit) = installed.filter(|kit| has_headers(&kit.include)) {
        return if kit.library(linking).is_file() {
            Ok(kit)
        } else {
            Err(format!(
                "{} is missing (brcc is installed beside {}): reinstall with `brcc install`{}",
                kit.library(linking).display(),
                kit.include.display(),
                match linking {
                    Linking::Shared => "",
                    Linking::Static => ", or link against the shared library (no --static)",
                }
            ))
        };
    }
    let include = checkout_include().ok_or(
        "brook/brook.hpp not found: brcc is neither installed (`brcc install PREFIX`) nor in the \
         checkout it was built from; set BROOK_HOME to a Brook install prefix or checkout",
    )?;
    // Beside brcc in `target/<profile>`, or (a brcc from `cargo install --path crates/brcc`)
    // in the checkout's release build.
    let checkout_release = include.join("../target/release");
    let checkout_release = checkout_release.canonicalize().unwrap_or(checkout_release);
    let lib_dir = [exe_dir.clone(), checkout_release.clone()]
        .into_iter()
        .find(|dir| dir.join(library).is_file())
        .ok_or_else(|| {
            format!(
                "{library} not found beside brcc ({}) nor in {}{}",
                exe_dir.display(),
                checkout_release.display(),
                build_hint(linking)
            )
        })?;
    Ok(Toolkit { include, lib_dir })
}

fn build_hint(linking: Linking) -> &'static str {
    match linking {
        Linking::Shared => {
            ": build it with `cargo build -p brook-capi` (with --release for a release brcc)"
        }
        Linking::Static => {
            ": build it with `cargo build -p brook-capi` (with --release for a release brcc), \
             or leave out --static"
        }
    }
}

/// `brcc install PREFIX`: brcc into `PREFIX/bin`, the runtime libraries into `PREFIX/lib` and
/// the headers into `PREFIX/include` (`brook/...`, and `brt.hpp` beside it); returns what was
/// written, one line each.
pub fn install(prefix: &Path) -> Result<Vec<String>, String> {
    let kit = find(Linking::Shared)?;
    let brcc = std::env::current_exe().map_err(|e| format!("cannot tell where brcc is: {e}"))?;
    let mut written = Vec::new();
    let mut copy = |from: &Path, to_dir: &Path| -> Result<(), String> {
        std::fs::create_dir_all(to_dir)
            .map_err(|e| format!("cannot create {}: {e}", to_dir.display()))?;
        let name = from.file_name().ok_or("a file without a name")?;
        let to = to_dir.join(name);
        if same_file(from, &to) {
            return Ok(());
        }
        // A new file, not a write into the old one: a running program may map the old library.
        let _ = std::fs::remove_file(&to);
        std::fs::copy(from, &to)
            .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))?;
        written.push(to.display().to_string());
        Ok(())
    };
    copy(&brcc, &prefix.join("bin"))?;
    for linking in [Linking::Shared, Linking::Static] {
        let library = kit.library(linking);
        if library.is_file() {
            copy(&library, &prefix.join("lib"))?;
        }
    }
    // `include/brook/*` and the headers beside it (`brt.hpp`, BrookGPU's).
    for (from, to) in [
        (kit.include.join("brook"), prefix.join("include/brook")),
        (kit.include.clone(), prefix.join("include")),
    ] {
        for file in files_in(&from)? {
            copy(&file, &to)?;
        }
    }
    Ok(written)
}

/// The plain files of a directory, sorted.
fn files_in(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
