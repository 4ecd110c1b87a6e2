//! `brcc build --mpi` and `brcc run --np N`: programs over MPI ranks. The program is the same;
//! what differs is the runtime library it links (`libbrook_capi.so` built with the `mpi`
//! feature, which joins the job before `main`: docs/GUIDE.md, "Programs over MPI") and how it
//! is started (`mpirun -np N`).

use crate::toolkit::{Linking, Toolkit};
use std::path::Path;
use std::process::Command;

/// Checks that the toolkit's runtime library was built with MPI support.
pub fn check_library(kit: &Toolkit, linking: Linking) -> Result<(), String> {
    if linking == Linking::Static {
        return Err(
            "--mpi links the shared runtime library (its MPI comes with it): leave out --static"
                .into(),
        );
    }
    let path = kit.library(linking);
    if !available(&path)? {
        return Err(format!(
            "{} was built without MPI support: build it with `cargo build --release -p \
             brook-capi --features mpi` (Open MPI or MPICH and libclang installed: docs/GUIDE.md, \
             \"Programs over MPI\")",
            path.display()
        ));
    }
    Ok(())
}

/// Asks the library (`brk_mpi_available`).
fn available(path: &Path) -> Result<bool, String> {
    // SAFETY: the library is Brook's runtime; loading it runs its constructor, which joins
    // no job outside `mpirun`.
    let library = unsafe { libloading::Library::new(path) }
        .map_err(|e| format!("cannot load {}: {e}", path.display()))?;
    // SAFETY: `brk_mpi_available` takes nothing and returns an int.
    let answer = unsafe {
        library
            .get::<unsafe extern "C" fn() -> std::ffi::c_int>(b"brk_mpi_available\0")
            .map(|ask| ask() != 0)
    };
    // The runtime's threads and statics stay: it is never unloaded.
    std::mem::forget(library);
    answer.map_err(|_| {
        format!(
            "{} is older than brcc (it has no brk_mpi_available): rebuild it",
            path.display()
        )
    })
}

/// The command that starts `exe` with `args` on `ranks` ranks: `$BROOK_MPIRUN`, else
/// `mpirun`; Open MPI's is told it may start more ranks than the machine has cores.
pub fn launcher(ranks: usize, exe: &Path, args: &[String]) -> Result<Command, String> {
    let mpirun = std::env::var("BROOK_MPIRUN")
        .ok()
        .filter(|m| !m.trim().is_empty())
        .unwrap_or_else(|| "mpirun".into());
    let version = Command::new(&mpirun)
        .arg("--version")
        .output()
        .map_err(|e| {
            format!(
                "cannot run `{mpirun}` ({e}): install MPI (`apt-get install openmpi-bin`) or set \
             BROOK_MPIRUN to your launcher"
            )
        })?;
    let text = String::from_utf8_lossy(&version.stdout);
    let mut command = Command::new(&mpirun);
    if text.contains("Open MPI") || text.contains("OpenRTE") {
        command.arg("--oversubscribe");
    }
    command
        .args(["-np", &ranks.to_string()])
        .arg(exe)
        .args(args);
    Ok(command)
}
