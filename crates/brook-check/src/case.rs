//! The conformance case format.
//!
//! ```text
//! # Comment lines start with `#`.
//! flags: -a                     (optional: -a, -c, -pp, -g, -D NAME[=v])
//! language: loom                (optional: the source is LOOM, compiled for `grid:`)
//! grid: 64/16                   (a LOOM grid: THREADS/BLOCK or TXxTY/BXxBY)
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
//!
//! More argument forms:
//! ```text
//!   total: float host           (a host variable receiving a reduction)
//!   it: iter float2<4, 4> = 0 0 4 10    (an iterator: start components, then end components)
//!   let p: float<4, 4> = iota   (a stream that is not an argument, for views; expectations
//!                                may name it)
//!   v: domain p 1,0 3,2         (a view of `p` from start to end, slowest axis first)
//!   domain: 1,0 2,2             (run only the instances from offset 1,0 of size 2,2)
//! ```
//! `run @scatter OP:` runs `streamScatterOp(s, index, array, OP)` with arguments named `s`,
//! `index` and `array` (OP is `assign` or a reduce kernel); `run @gather OP:` runs
//! `streamGatherOp(t, index, array, OP)` (OP is `fetch` or a kernel). `run @scan OP:` scans the
//! stream `in` into `out` with the reduce kernel OP; `run @scan OP exclusive:` starts from the
//! constant `init`, and `whole` after OP scans the whole stream instead of each row.

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
    /// `t: float host`: a host variable receiving a reduction.
    Host {
        name: String,
        ty: String,
    },
    /// `it: iter float2<4, 4> = start.. end..`.
    Iter {
        name: String,
        dims: Vec<usize>,
        values: Vec<f32>,
    },
    /// `v: domain p 1,0 3,2`: a view of an earlier stream or `let`.
    View {
        name: String,
        of: String,
        start: Vec<usize>,
        end: Vec<usize>,
    },
}

impl ArgSpec {
    pub fn name(&self) -> &str {
        match self {
            ArgSpec::Constant { name, .. }
            | ArgSpec::Stream { name, .. }
            | ArgSpec::Same { name, .. }
            | ArgSpec::Host { name, .. }
            | ArgSpec::Iter { name, .. }
            | ArgSpec::View { name, .. } => name,
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
    /// Streams declared with `let`: not arguments.
    pub lets: Vec<ArgSpec>,
    /// `domain: offset size`, slowest axis first.
    pub domain: Option<(Vec<usize>, Vec<usize>)>,
    pub outputs: Vec<Expectation>,
    pub error: Option<String>,
    pub warning: Option<String>,
    /// The line of `run`, for messages.
    pub line: usize,
}

#[derive(Clone, Debug, Default)]
pub struct Case {
    pub flags: Vec<String>,
    /// `ulp: N`: outputs of other devices may differ from the interpreter's by N units in the
    /// last place per float component (transcendental intrinsics); otherwise bit-identical.
    pub ulp: Option<u64>,
    pub source: String,
    pub runs: Vec<Run>,
    /// `language: loom` with `grid: ...`: a LOOM program and the grid it runs on.
    pub loom_grid: Option<String>,
    pub loom: bool,
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
        } else if let Some(ulp) = trimmed.strip_prefix("ulp:") {
            case.ulp = Some(
                ulp.trim()
                    .parse()
                    .or_else(|_| err(n, format!("bad ulp count `{}`", ulp.trim())))?,
            );
        } else if let Some(language) = trimmed.strip_prefix("language:") {
            case.loom = match language.trim() {
                "loom" => true,
                "brook" => false,
                other => return err(n, format!("unknown language `{other}` (brook or loom)")),
            };
        } else if let Some(grid) = trimmed.strip_prefix("grid:") {
            case.loom_grid = Some(grid.trim().to_string());
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
    if case.loom && case.loom_grid.is_none() {
        return err(0, "a LOOM case needs `grid: THREADS/BLOCK`");
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
    if let Some(text) = line.strip_prefix("domain:") {
        let parts: Vec<&str> = text.split_whitespace().collect();
        let [offset, size] = parts.as_slice() else {
            return err(n, "expected `domain: OFFSET SIZE`");
        };
        run.domain = Some((position(offset, n)?, position(size, n)?));
        return Ok(());
    }
    if let Some(text) = line.strip_prefix("let ") {
        let Some((name, rest)) = text.split_once(':') else {
            return err(n, "expected `let name: type<dims> [= values]`");
        };
        run.lets.push(parse_stream(name.trim(), rest.trim(), n)?);
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
    let is_expectation = run.args.iter().chain(&run.lets).any(|a| a.name() == name);
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

/// `1,0` -> `[1, 0]`.
fn position(text: &str, n: usize) -> Result<Vec<usize>, String> {
    text.split(',')
        .map(|d| d.trim().parse::<usize>())
        .collect::<Result<Vec<_>, _>>()
        .or_else(|_| err(n, format!("bad position `{text}`")))
}

fn parse_stream(name: &str, rest: &str, n: usize) -> Result<ArgSpec, String> {
    let name_string = name.to_string();
    if let Some(of) = rest.strip_prefix("same ") {
        return Ok(ArgSpec::Same {
            name: name_string,
            of: of.trim().to_string(),
        });
    }
    if let Some(ty) = rest.strip_suffix(" host") {
        return Ok(ArgSpec::Host {
            name: name_string,
            ty: ty.trim().to_string(),
        });
    }
    if let Some(view) = rest.strip_prefix("domain ") {
        let parts: Vec<&str> = view.split_whitespace().collect();
        let [of, start, end] = parts.as_slice() else {
            return err(n, "expected `name: domain STREAM START END`");
        };
        return Ok(ArgSpec::View {
            name: name_string,
            of: of.to_string(),
            start: position(start, n)?,
            end: position(end, n)?,
        });
    }
    if let Some(iter) = rest.strip_prefix("iter ") {
        let ArgSpec::Stream { dims, values, .. } = parse_stream(name, iter, n)? else {
            return err(n, "bad iterator");
        };
        let values = values
            .unwrap_or_default()
            .iter()
            .map(|v| v.parse::<f32>())
            .collect::<Result<Vec<_>, _>>()
            .or_else(|_| err(n, "bad iterator bounds"))?;
        return Ok(ArgSpec::Iter {
            name: name_string,
            dims,
            values,
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

/// The case as text in the format [`parse`] reads.
pub fn write(case: &Case, comment: &str) -> String {
    let mut out = String::new();
    for line in comment.lines() {
        out.push_str(&format!("# {line}\n"));
    }
    if !case.flags.is_empty() {
        out.push_str(&format!("flags: {}\n", case.flags.join(" ")));
    }
    if let Some(ulp) = case.ulp {
        out.push_str(&format!("ulp: {ulp}\n"));
    }
    if case.loom {
        out.push_str("language: loom\n");
    }
    if let Some(grid) = &case.loom_grid {
        out.push_str(&format!("grid: {grid}\n"));
    }
    out.push_str("source:\n");
    out.push_str(case.source.trim_end());
    out.push('\n');
    for run in &case.runs {
        out.push_str(&format!("run {}:\n", run.kernel));
        for spec in &run.lets {
            out.push_str(&format!("  let {}\n", spec_text(spec)));
        }
        for spec in &run.args {
            out.push_str(&format!("  {}\n", spec_text(spec)));
        }
        if let Some((offset, size)) = &run.domain {
            out.push_str(&format!("  domain: {} {}\n", commas(offset), commas(size)));
        }
        if let Some(text) = &run.error {
            out.push_str(&format!("  error: {text}\n"));
        }
        if let Some(text) = &run.warning {
            out.push_str(&format!("  warning: {text}\n"));
        }
        if !run.outputs.is_empty() {
            out.push_str("expect:\n");
        }
        for e in &run.outputs {
            out.push_str(&format!("  {} = {}", e.name, e.values.join(" ")));
            if let Some(t) = e.tolerance {
                out.push_str(&format!(" ~ {t}"));
            }
            out.push('\n');
        }
    }
    out
}

fn commas(v: &[usize]) -> String {
    v.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}

fn dims_text(dims: &[usize]) -> String {
    dims.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// One argument line, without the indentation.
fn spec_text(spec: &ArgSpec) -> String {
    match spec {
        ArgSpec::Constant { name, values } => format!("{name} = {}", values.join(" ")),
        ArgSpec::Stream {
            name,
            ty,
            dims,
            values,
        } => match values {
            Some(v) => format!("{name}: {ty}<{}> = {}", dims_text(dims), v.join(" ")),
            None => format!("{name}: {ty}<{}>", dims_text(dims)),
        },
        ArgSpec::Same { name, of } => format!("{name}: same {of}"),
        ArgSpec::Host { name, ty } => format!("{name}: {ty} host"),
        ArgSpec::Iter { name, dims, values } => {
            let ty = match values.len() / 2 {
                1 => "float".to_string(),
                w => format!("float{w}"),
            };
            let v: Vec<String> = values.iter().map(f32::to_string).collect();
            format!("{name}: iter {ty}<{}> = {}", dims_text(dims), v.join(" "))
        }
        ArgSpec::View {
            name,
            of,
            start,
            end,
        } => format!("{name}: domain {of} {} {}", commas(start), commas(end)),
    }
}
