//! LOOM kernels from Rust (seed 004): compile a `.loom` program once, then launch its kernel
//! on a grid of threads with streams as its arrays.
//!
//! ```
//! use brook::{Device, Grid, LoomProgram, Stream};
//!
//! let program = LoomProgram::from_source(
//!     "sum.loom",
//!     "func add(x: Float32, y: Float32): Float32\n  return x + y\n\n\
//!      kernel sums(in: Float32[THREADS], out: Float32[BLOCKS])\n  out[B] <- add /. in\n  return\n",
//! )?;
//! let device = Device::default_device();
//! let input = Stream::from_slice(&device, &[8], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])?;
//! let sums = Stream::<f32>::new(&device, &[2])?;
//! program.kernel(Grid::one_d(8, 4))?.launch(brook::args![&input, &sums])?;
//! assert_eq!(sums.to_vec()?, vec![10.0, 26.0]);
//! # Ok::<(), brook::Error>(())
//! ```
//!
//! A kernel is compiled for each grid it runs on (the grid's sizes are constants in it) and
//! kept. Arrays are streams of exactly the declared extents on that grid (first index
//! slowest); values are constants (`2.0f32`).

use crate::error::Error;
use crate::kernel::{Arg, Kernel};
use crate::loom_files::read_loom_file;
use brook_front::loom::{check_source, Checked};
use brook_runtime::LaunchReport;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub use brook_front::loom::lower::Grid;

/// A checked LOOM program.
pub struct LoomProgram {
    checked: Arc<Checked>,
    file: String,
    kernels: Mutex<HashMap<(Grid, Option<u32>), LoomKernel>>,
}

impl std::fmt::Debug for LoomProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoomProgram")
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

impl LoomProgram {
    /// Checks LOOM source; `import`s are read relative to `file` (embedded files first:
    /// [`crate::embed_loom_file`]). Every error is in the
    /// [`Error::Compile`] message, with its source line.
    pub fn from_source(file: &str, source: &str) -> Result<LoomProgram, Error> {
        let checked = check_source(file, source, &mut read_loom_file);
        if checked.has_errors() {
            return Err(Error::Compile {
                file: file.to_string(),
                count: checked.error_count(),
                rendered: checked.render_diagnostics(),
            });
        }
        Ok(LoomProgram {
            checked: Arc::new(checked),
            file: file.to_string(),
            kernels: Mutex::new(HashMap::new()),
        })
    }

    /// Reads (an embedded file first: [`crate::embed_loom_file`]) and checks a `.loom` file.
    pub fn from_file(path: &str) -> Result<LoomProgram, Error> {
        let text = read_loom_file(path)
            .map_err(|why| Error::Usage(format!("cannot read `{path}`: {why}")))?;
        LoomProgram::from_source(path, &text)
    }

    /// The kernel's name.
    pub fn kernel_name(&self) -> &str {
        match self
            .checked
            .info
            .kernel
            .and_then(|i| self.checked.program.items.get(i))
        {
            Some(brook_front::loom::ast::Item::Func(f)) => &f.name.name,
            _ => "",
        }
    }

    /// The kernel compiled for `grid` (compiled once per grid), each thread group running
    /// as many blocks as suits the grid ([`LoomKernel::blocks_per_group`]).
    pub fn kernel(&self, grid: Grid) -> Result<LoomKernel, Error> {
        self.cached(grid, None)
    }

    /// The kernel compiled for `grid` with each thread group running `blocks_per_group`
    /// consecutive blocks (1, 2, 4 or 8, dividing the blocks; the kernel may `return` only
    /// at its end and declare no `global` array). Results are the same for every choice.
    pub fn kernel_grouped(&self, grid: Grid, blocks_per_group: u32) -> Result<LoomKernel, Error> {
        self.cached(grid, Some(blocks_per_group))
    }

    fn cached(&self, grid: Grid, copies: Option<u32>) -> Result<LoomKernel, Error> {
        let mut kernels = self
            .kernels
            .lock()
            .map_err(|_| Error::Usage("a thread compiling this program panicked".into()))?;
        if let Some(kernel) = kernels.get(&(grid, copies)) {
            return Ok(kernel.clone());
        }
        let kernel = self.compile(grid, copies)?;
        kernels.insert((grid, copies), kernel.clone());
        Ok(kernel)
    }

    fn compile(&self, grid: Grid, copies: Option<u32>) -> Result<LoomKernel, Error> {
        if let Some(problem) = grid.problem() {
            return Err(Error::Usage(format!("{}: {problem}", self.file)));
        }
        let file = &self.checked.file;
        let lowered = brook_front::loom::lower::lower_grouped(&self.checked, grid, copies);
        let lowered = lowered.map_err(|e| {
            let (line, column) = file.line_col(e.span.start as usize);
            Error::Compile {
                file: self.file.clone(),
                count: 1,
                rendered: format!(
                    "{}:{line}:{column}: error: {}\n{}\n",
                    file.file_of(e.span.start as usize),
                    e.message,
                    file.excerpt(brook_ir::SourceSpan {
                        start: e.span.start,
                        end: e.span.end,
                    })
                ),
            }
        })?;
        let module = brook_ir::validate(lowered.module).map_err(|e| {
            let (line, column) = file.line_col(e.span.start as usize);
            Error::Internal {
                file: self.file.clone(),
                line,
                column,
                message: e.to_string(),
            }
        })?;
        // Each thread group runs `copies` blocks: the IR domain has that many times fewer
        // instances than the grid has threads.
        let total = (grid.total_threads() / u64::from(lowered.copies)) as usize;
        let shapes = crate::loom_launch::LoomShapes {
            extents: lowered.extents,
            arguments: lowered.arguments,
            hidden: lowered.hidden,
        };
        let program = crate::Program::for_grid(Arc::new(module), &self.file, total, shapes);
        let kernel = program.kernel(self.kernel_name())?;
        Ok(LoomKernel {
            kernel,
            program,
            grid,
            copies: lowered.copies,
        })
    }
}

/// A LOOM kernel compiled for one grid.
#[derive(Clone, Debug)]
pub struct LoomKernel {
    /// The kernel, launched over the grid, its arrays checked against their extents.
    kernel: Kernel,
    program: crate::Program,
    grid: Grid,
    copies: u32,
}

impl LoomKernel {
    pub fn grid(&self) -> Grid {
        self.grid
    }

    /// How many consecutive blocks each thread group runs (4 or 2 for a large grid whose
    /// kernel allows it, else 1; `docs/LOOM.md`). It changes no result.
    pub fn blocks_per_group(&self) -> u32 {
        self.copies
    }

    /// How many arguments a launch takes (the `global` arrays are made by each launch).
    pub fn argument_count(&self) -> usize {
        self.kernel.argument_count()
    }

    /// The kernel's IR (what `brcc --emit ir` shows).
    pub fn ir(&self) -> &brook_ir::Kernel {
        self.kernel.ir()
    }

    /// The kernel as a Brook [`crate::Program`] of one kernel (named as in the source) whose
    /// launches run over the grid, arrays checked against their extents.
    pub fn program(&self) -> &crate::Program {
        &self.program
    }

    /// The program's IR (one kernel).
    pub fn module(&self) -> &brook_ir::ValidModule {
        self.kernel.module()
    }

    /// Launches the kernel over its grid, arguments in parameter order: streams of exactly the
    /// declared extents for arrays, constants for values. Launches queue like Brook kernels;
    /// reading a stream waits for them.
    pub fn launch(&self, args: &[Arg<'_>]) -> Result<LaunchReport, Error> {
        self.kernel.launch(args)
    }
}
