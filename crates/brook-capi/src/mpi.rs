//! Programs over MPI ranks. Built with the `mpi` feature, the library joins the MPI job before
//! `main` runs, where `mpirun` (or `srun`) started the process as one of several ranks: every
//! rank but 0 serves its devices to rank 0 and ends without running `main`, so the program's
//! `main`, its output and its files are rank 0's alone (`brook_runtime::remote`).

use std::ffi::c_int;

/// 1 when this library was built with MPI support (the `mpi` feature), else 0 (`brcc build
/// --mpi` asks).
#[no_mangle]
pub extern "C" fn brk_mpi_available() -> c_int {
    c_int::from(cfg!(feature = "mpi"))
}

/// Joins the job before `main` (a constructor of the library).
#[cfg(all(feature = "mpi", any(target_os = "linux", target_os = "macos")))]
#[used]
#[cfg_attr(target_os = "linux", link_section = ".init_array")]
#[cfg_attr(target_os = "macos", link_section = "__DATA,__mod_init_func")]
static JOIN_BEFORE_MAIN: extern "C" fn() = join_before_main;

#[cfg(feature = "mpi")]
extern "C" fn join_before_main() {
    crate::guard((), brook_runtime::remote::join_job);
}
