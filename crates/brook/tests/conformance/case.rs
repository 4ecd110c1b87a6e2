//! The conformance case format.
//!
//! ```text
//! # Comment lines start with `#`.
//! flags: -a                     (optional: -a, -pp, -D NAME[=v])
//! source:
//! kernel void saxpy(float a, float x<>, float y<>, out float r<>) { r = a * x + y; }
//! run saxpy:
//!   a = 2.0                     (a constant: its components)
//!   x: float<4> = 1 2 3 4       (a stream: type, shape slowest first, values row-major)
//!   y: float<4> = iota          (0, 1, 2, ... one per component)
//!   r: float<4>                 (a stream without values starts zero-filled)
//!   s: same x                   (the stream bound to `x`, bound again)
//! expect:
//!   r = 12 24 36 48             (exact: same bits; `~ 1e-6` after the values allows a
//!                                relative error)
//! ```
//! A run may instead expect `error: <text>` (the launch fails with a message containing the
//! text) or add `warning: <text>`. A case may hold several `run` blocks.

/// One argument line of a run.
#[derive(Clone, Debug)]
pub enum ArgSpec {
    Constant {
        name: String,
        values: Vec<String>,
    },
    Stream {
        name: String,
        ty: String,
        dims: Vec<usize>,
        values: Option<Vec<String>>,
    },
    /// `b: same a`: the stream already bound to `a`, bound again.
    Same {
        name: String,
        of: String,
    },
}

impl ArgSpec {
    pub fn name(&self) -> &str {
        match self {
            ArgSpec::Constant { name, .. }
            | ArgSpec::Stream { name, .. }
            | ArgSpec::Same { name, .. } => name,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Expectation {
    pub name: String,
    pub values: Vec<String>,
    pub tolerance: Option<f64>,
}

#[derive(Clone, Debug, Default)]
pub struct Run {
    pub kernel: String,
    pub args: Vec<ArgSpec>,
    pub outputs: Vec<Expectation>,
    pub error: Option<String>,
    pub warning: Option<String>,
    /// The line of `run`, for messages.
    pub line: usize,
}

#[derive(Clone, Debug, Default)]
pub struct Case {
    pub flags: Vec<String>,
    pub source: String,
    pub runs: Vec<Run>,
}

fn err<T>(line: usize, message: impl Into<String>) -> Result<T, String> {
    Err(format!("line {line}: {}", message.into()))
}

/// Parses a case file.
pub fn parse(text: &str) -> Result<Case, String> {
    let mut case = Case::default();
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l)).peekable();
    while let Some((n, line)) = lines.next() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(flags) = trimmed.strip_prefix("flags:") {
            case.flags = flags.split_whitespace().map(String::from).collect();
        } else if trimmed == "source:" {
            while let Some((_, l)) = lines.next_if(|(_, l)| !l.starts_with("run ")) {
                case.source.push_str(l);
                case.source.push('\n');
            }
        } else if let Some(rest) = trimmed.strip_prefix("run ") {
            let Some(kernel) = rest.strip_suffix(':') else {
                return err(n, "expected `run KERNEL:`");
            };
            case.runs.push(Run {
                kernel: kernel.trim().to_string(),
                line: n,
                ..Run::default()
            });
        } else if trimmed == "expect:" {
            if case.runs.is_empty() {
                return err(n, "`expect:` before any `run`");
            }
        } else {
            let Some(run) = case.runs.last_mut() else {
                return err(n, format!("unexpected line `{trimmed}`"));
            };
            parse_run_line(run, trimmed, n)?;
        }
    }
    if case.source.trim().is_empty() || case.runs.is_empty() {
        return err(0, "a case needs `source:` and at least one `run`");
    }
    Ok(case)
}

fn parse_run_line(run: &mut Run, line: &str, n: usize) -> Result<(), String> {
    if let Some(text) = line.strip_prefix("error:") {
        run.error = Some(text.trim().to_string());
        return Ok(());
    }
    if let Some(text) = line.strip_prefix("warning:") {
        run.warning = Some(text.trim().to_string());
        return Ok(());
    }
    if let Some((name, rest)) = line.split_once(':') {
        run.args.push(parse_stream(name.trim(), rest.trim(), n)?);
        return Ok(());
    }
    let Some((name, rest)) = line.split_once('=') else {
        return err(
            n,
            format!("expected `name = values` or `name: type<dims>`: `{line}`"),
        );
    };
    let (values, tolerance) = match rest.split_once('~') {
        Some((values, tol)) => match tol.trim().parse::<f64>() {
            Ok(t) => (values, Some(t)),
            Err(_) => return err(n, format!("bad tolerance `{tol}`")),
        },
        None => (rest, None),
    };
    let values: Vec<String> = values.split_whitespace().map(String::from).collect();
    let name = name.trim().to_string();
    // Lines with `=` and no type are constants before `expect:`, expectations after outputs.
    let is_expectation = run.args.iter().any(|a| a.name() == name);
    if is_expectation {
        run.outputs.push(Expectation {
            name,
            values,
            tolerance,
        });
    } else {
        run.args.push(ArgSpec::Constant { name, values });
    }
    Ok(())
}

fn parse_stream(name: &str, rest: &str, n: usize) -> Result<ArgSpec, String> {
    if let Some(of) = rest.strip_prefix("same ") {
        return Ok(ArgSpec::Same {
            name: name.to_string(),
            of: of.trim().to_string(),
        });
    }
    let (decl, values) = match rest.split_once('=') {
        Some((decl, values)) => (
            decl.trim(),
            Some(values.split_whitespace().map(String::from).collect()),
        ),
        None => (rest, None),
    };
    let Some((ty, dims)) = decl.split_once('<') else {
        return err(n, format!("expected `type<dims>` for `{name}`"));
    };
    let Some(dims) = dims.trim().strip_suffix('>') else {
        return err(n, format!("missing `>` for `{name}`"));
    };
    let dims = dims
        .split(',')
        .map(|d| d.trim().parse::<usize>())
        .collect::<Result<Vec<_>, _>>()
        .or_else(|_| err(n, format!("bad dimensions for `{name}`")))?;
    Ok(ArgSpec::Stream {
        name: name.to_string(),
        ty: ty.trim().to_string(),
        dims,
        values,
    })
}
