//! Programs (compiled `.br` source) and their kernels.

use crate::error::Error;
use crate::kernel::Kernel;
pub use brook_front::brook::Dialect;
use brook_front::{compile_source, CheckOptions};
use brook_ir::ValidModule;
use std::sync::Arc;

/// Compiler options: the `brcc` flags that change what a program means.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// Strong type checking (the default); `false` is `brcc -a`.
    pub strong_types: bool,
    /// Run the preprocessor (`-pp`).
    pub preprocess: bool,
    /// `-D NAME` or `-D NAME=value` definitions for the preprocessor.
    pub defines: Vec<String>,
    /// Sized gather arrays are constant buffers (the default); `false` is `brcc -c`.
    pub constant_buffers: bool,
    /// Which compiler's rules apply; `Dialect::BrookGpu` is `brcc -g`.
    pub dialect: Dialect,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            strong_types: true,
            preprocess: false,
            defines: Vec::new(),
            constant_buffers: true,
            dialect: Dialect::BrookPlus,
        }
    }
}

impl CompileOptions {
    /// The options of brcc flags as a program built by brcc carries them: `-a`, `-c`, `-pp`,
    /// `-g` (or `--brookgpu`) and `-D NAME[=value]` (also `-DNAME`), separated by spaces.
    pub fn from_flags(flags: &str) -> Result<CompileOptions, Error> {
        let mut options = CompileOptions::default();
        let mut words = flags.split_whitespace();
        while let Some(word) = words.next() {
            match word {
                "-a" => options.strong_types = false,
                "-c" => options.constant_buffers = false,
                "-pp" => options.preprocess = true,
                "-g" | "--brookgpu" => options.dialect = Dialect::BrookGpu,
                "-D" => match words.next() {
                    Some(define) => options.defines.push(define.to_string()),
                    None => return Err(Error::Usage("compiler flag -D needs a value".into())),
                },
                _ if word.starts_with("-D") => options.defines.push(word[2..].to_string()),
                _ => {
                    return Err(Error::Usage(format!(
                        "unknown compiler flag `{word}` (known: -a -c -pp -g -D NAME[=value])"
                    )))
                }
            }
        }
        Ok(options)
    }
}

/// A compiled Brook program: its kernels in IR, ready to launch on any device.
#[derive(Clone, Debug)]
pub struct Program {
    module: Arc<ValidModule>,
    file: String,
    dialect: Dialect,
    /// The warnings of the compilation, rendered with their source lines ("" when none).
    warnings: String,
    /// For a LOOM kernel compiled for a grid: the grid's thread count (the domain its kernel
    /// runs over) and the extents of its array parameters.
    grid: Option<(usize, Arc<crate::loom_launch::LoomShapes>)>,
}

impl Program {
    /// Compiles Brook source (kernels; host code in it is ignored). `file` names the source in
    /// error messages, and `.brh` headers it includes are read next to it.
    pub fn from_source(file: &str, source: &str) -> Result<Program, Error> {
        Program::compile(file, source, &CompileOptions::default())
    }

    pub fn compile(file: &str, source: &str, options: &CompileOptions) -> Result<Program, Error> {
        let mut check = CheckOptions {
            strong_types: options.strong_types,
            preprocess: options.preprocess,
            constant_buffers: options.constant_buffers,
            dialect: options.dialect,
            ..CheckOptions::default()
        };
        for define in &options.defines {
            let parsed = brook_front::brook::Define::parse(define).map_err(|_| Error::Compile {
                file: file.to_string(),
                count: 1,
                rendered: format!("invalid definition `{define}`: expected NAME or NAME=integer"),
            })?;
            check.defines.push(parsed);
        }
        // `#include "x.brh"` headers are read next to `file`.
        let mut read = |path: &str| std::fs::read_to_string(path).map_err(|e| e.to_string());
        let source_file = brook_front::brook::include::expand_headers(file, source, &mut read)
            .map_err(|include| Error::Compile {
                file: file.to_string(),
                count: 1,
                rendered: include.to_string(),
            })?;
        let compiled = compile_source(source_file, &check);
        let checked = &compiled.checked;
        let module = match compiled.module {
            None => {
                return Err(Error::Compile {
                    file: file.to_string(),
                    count: checked.diagnostics.iter().filter(|d| d.is_error()).count(),
                    rendered: with_rust_flag_hints(checked.render_diagnostics()),
                })
            }
            Some(Err(e)) => {
                let (line, column) = checked.file.line_col(e.span.start as usize);
                return Err(Error::Internal {
                    file: file.to_string(),
                    line,
                    column,
                    message: e.message,
                });
            }
            Some(Ok(module)) => module,
        };
        let module = brook_ir::validate(module).map_err(|e| {
            let (line, column) = checked.file.line_col(e.span.start as usize);
            Error::Internal {
                file: file.to_string(),
                line,
                column,
                message: e.to_string(),
            }
        })?;
        Ok(Program {
            module: Arc::new(module),
            file: file.to_string(),
            dialect: options.dialect,
            warnings: checked.render_diagnostics(),
            grid: None,
        })
    }

    /// The compiler's warnings for the program (as brcc prints them, with the source lines),
    /// or "" when there are none. A program with warnings runs; show them to the user.
    pub fn warnings(&self) -> &str {
        &self.warnings
    }

    /// The kernel called `name`.
    pub fn kernel(&self, name: &str) -> Result<Kernel, Error> {
        match self.module.kernels.iter().position(|k| k.name == name) {
            Some(index) => {
                let kernel = Kernel::new(
                    self.module.clone(),
                    index,
                    self.dialect == Dialect::BrookGpu,
                );
                Ok(match &self.grid {
                    Some((threads, shapes)) => kernel
                        .with_domain(&[0], &[*threads])
                        .with_loom_shapes(shapes.clone()),
                    None => kernel,
                })
            }
            None => Err(Error::UnknownKernel {
                name: name.to_string(),
                file: self.file.clone(),
                available: self.kernel_names().join(", "),
            }),
        }
    }

    /// The names of the launchable kernels.
    pub fn kernel_names(&self) -> Vec<String> {
        self.module.kernels.iter().map(|k| k.name.clone()).collect()
    }

    /// The IR of the program (validated; it derefs to the [`brook_ir::Module`]).
    pub fn module(&self) -> &ValidModule {
        &self.module
    }

    /// A LOOM kernel compiled for a grid, as a program of one kernel that runs over the
    /// grid's threads.
    pub(crate) fn for_grid(
        module: Arc<ValidModule>,
        file: &str,
        threads: usize,
        shapes: crate::loom_launch::LoomShapes,
    ) -> Program {
        Program {
            module,
            file: file.to_string(),
            dialect: Dialect::default(),
            warnings: String::new(),
            grid: Some((threads, Arc::new(shapes))),
        }
    }

    /// The IR as text (what `brcc --emit ir` prints).
    pub fn ir_text(&self) -> String {
        brook_ir::print::print_module(&self.module)
    }
}

/// brcc's diagnostics name its flags; from Rust the same choices are [`CompileOptions`]
/// fields, so a message that suggests `-a` says how to ask for it here.
fn with_rust_flag_hints(rendered: String) -> String {
    if rendered.contains("pass -a") {
        format!(
            "{rendered}note: from Rust, `-a` is `Program::compile(file, source, &CompileOptions {{ strong_types: false, ..Default::default() }})` (or `CompileOptions::from_flags(\"-a\")`)\n"
        )
    } else {
        rendered
    }
}
