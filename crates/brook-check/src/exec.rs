//! Running a case: its program compiled once, each run on each device, the outputs checked
//! against the case's expected values and, off the interpreter, against the interpreter's bytes.
//! The conformance suite and the fuzzer both judge a case here, so "the same answer" means one
//! thing everywhere.

use crate::case::{ArgSpec, Case, Expectation, Run};
use brook::raw::ElementType;
use brook::raw::{ops, Constant, IterStream, RawStream};
use brook::{Arg, CompileOptions, Device, DeviceKind, Program, ScanRequest};
use brook_ir::{ScalarKind, Type};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub fn case_files() -> Vec<PathBuf> {
    // BROOK_CONFORMANCE_DIR: the cases, for a test binary run away from its checkout.
    let dir = std::env::var_os("BROOK_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/conformance exists")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "case"))
        .collect();
    files.sort();
    files
}

/// Every case of the suite that parses and compiles: its file name, the case and its program
/// (for tests that look at the suite's kernels; [`run_suite`] reports the ones that do not).
pub fn compiled_cases() -> impl Iterator<Item = (String, Case, Program)> {
    case_files().into_iter().filter_map(|path| {
        let name = path.file_name()?.to_str()?.to_string();
        let text = std::fs::read_to_string(&path).expect("read case");
        let case = crate::case::parse(&text).ok()?;
        let program = compile(&name, &case).ok()?;
        Some((name, case, program))
    })
}

/// The case's program: Brook with its flags, or a LOOM kernel compiled for its grid.
pub fn compile(name: &str, case: &Case) -> Result<Program, String> {
    if !case.loom {
        return Program::compile(name, &case.source, &options(case)).map_err(|e| e.to_string());
    }
    let grid = case.loom_grid.as_deref().unwrap_or_default();
    let grid = brook::Grid::parse(grid)?;
    let program = brook::LoomProgram::from_source(name, &case.source).map_err(|e| e.to_string())?;
    let kernel = program.kernel(grid).map_err(|e| e.to_string())?;
    Ok(kernel.program().clone())
}

pub fn options(case: &Case) -> CompileOptions {
    CompileOptions::from_flags(&case.flags.join(" "))
        .unwrap_or_else(|e| panic!("case flags {:?}: {e}", case.flags))
}

/// The scalar components of an element type, with their byte offsets.
pub fn components(ty: &ElementType, base: usize, out: &mut Vec<(ScalarKind, usize)>) {
    out.extend(ty.components().into_iter().map(|(k, at)| (k, base + at)));
}

pub fn element_type(program: &Program, name: &str) -> Result<ElementType, String> {
    let module = program.module();
    if let Some(struct_name) = name.strip_prefix("struct ") {
        let id = module
            .structs
            .iter()
            .position(|s| s.name == struct_name.trim())
            .ok_or_else(|| format!("no struct `{struct_name}`"))?;
        return ElementType::from_ir(module, &Type::Struct(brook_ir::StructId(id as u32)))
            .ok_or_else(|| "bad struct".to_string());
    }
    let digits = name.trim_end_matches(|c: char| c.is_ascii_digit());
    let width: u8 = name[digits.len()..].parse().unwrap_or(1);
    let kind = ScalarKind::ALL
        .into_iter()
        .find(|k| k.brook_name() == digits)
        .ok_or_else(|| format!("unknown type `{name}`"))?;
    Ok(ElementType::Value(brook_ir::ValueType::vector(kind, width)))
}

fn encode_component(kind: ScalarKind, text: &str, out: &mut [u8]) -> Result<(), String> {
    let bad = || format!("`{text}` is not a {kind}");
    let size = kind.size() as usize;
    match kind {
        ScalarKind::F32 => {
            let v: f32 = text.parse().map_err(|_| bad())?;
            out[..4].copy_from_slice(&v.to_le_bytes());
        }
        ScalarKind::F64 => {
            let v: f64 = text.parse().map_err(|_| bad())?;
            out[..8].copy_from_slice(&v.to_le_bytes());
        }
        _ => {
            let v: i128 = text.parse().map_err(|_| bad())?;
            out[..size].copy_from_slice(&v.to_le_bytes()[..size]);
        }
    }
    Ok(())
}

/// The values of a stream or constant: `iota` counts components from 0.
fn expand(values: &[String], count: usize) -> Vec<String> {
    if values.len() == 1 && values[0] == "iota" {
        return (0..count).map(|i| i.to_string()).collect();
    }
    values.to_vec()
}

fn encode(ty: &ElementType, len: usize, values: &[String]) -> Result<Vec<u8>, String> {
    let mut parts = Vec::new();
    components(ty, 0, &mut parts);
    let values = expand(values, len * parts.len());
    if values.len() != len * parts.len() {
        return Err(format!(
            "{} values given for {len} element(s) of {} component(s)",
            values.len(),
            parts.len()
        ));
    }
    let mut bytes = vec![0u8; len * ty.size()];
    for (i, text) in values.iter().enumerate() {
        let (kind, offset) = parts[i % parts.len()];
        let at = (i / parts.len()) * ty.size() + offset;
        encode_component(kind, text, &mut bytes[at..])?;
    }
    Ok(bytes)
}

/// A component as text-comparable number.
pub fn decode_component(kind: ScalarKind, bytes: &[u8]) -> f64 {
    let mut raw = [0u8; 8];
    raw[..kind.size() as usize].copy_from_slice(&bytes[..kind.size() as usize]);
    let bits = u64::from_le_bytes(raw);
    match kind {
        ScalarKind::F32 => f64::from(f32::from_bits(bits as u32)),
        ScalarKind::F64 => f64::from_bits(bits),
        ScalarKind::I8 => bits as i8 as f64,
        ScalarKind::I16 => bits as i16 as f64,
        ScalarKind::I32 => bits as i32 as f64,
        ScalarKind::I64 => bits as i64 as f64,
        _ => bits as f64,
    }
}

/// A component as text that reads back to the same bits (`-0.0`, `NaN`, `inf` included).
pub fn component_text(kind: ScalarKind, bytes: &[u8]) -> String {
    let value = decode_component(kind, bytes);
    match kind {
        ScalarKind::F32 => format!("{:?}", value as f32),
        ScalarKind::F64 => format!("{value:?}"),
        _ => format!("{}", value as i128),
    }
}

fn matches(kind: ScalarKind, found: f64, expected: &str, tolerance: Option<f64>) -> bool {
    let expected: f64 = match kind {
        ScalarKind::F32 => expected.parse::<f32>().map(f64::from).unwrap_or(f64::NAN),
        _ => expected.parse().unwrap_or(f64::NAN),
    };
    if found.is_nan() || expected.is_nan() {
        return found.is_nan() && expected.is_nan();
    }
    match tolerance {
        Some(t) if found.is_finite() => (found - expected).abs() <= t * expected.abs().max(1.0),
        _ => found == expected && found.is_sign_negative() == expected.is_sign_negative(),
    }
}

pub struct Outcome {
    /// Output bytes by argument or `let` name.
    pub outputs: HashMap<String, Vec<u8>>,
}

/// What an argument or `let` line made.
enum Made {
    Stream(RawStream),
    Iter(IterStream),
    Constant(Constant),
    Host(ElementType),
}

/// The element type name of a stream, view or host variable.
pub fn spec_type(run: &Run, name: &str) -> Option<String> {
    match run
        .args
        .iter()
        .chain(&run.lets)
        .find(|a| a.name() == name)?
    {
        ArgSpec::Stream { ty, .. } | ArgSpec::Host { ty, .. } => Some(ty.clone()),
        ArgSpec::Iter { values, .. } => Some(match values.len() / 2 {
            1 => "float".to_string(),
            w => format!("float{w}"),
        }),
        ArgSpec::View { of, .. } | ArgSpec::Same { of, .. } => spec_type(run, of),
        ArgSpec::Constant { .. } => None,
    }
}

fn make(
    program: &Program,
    spec: &ArgSpec,
    param_ty: Option<&Type>,
    made: &HashMap<String, Made>,
    device: &Device,
) -> Result<Made, String> {
    let stream_of = |of: &str| match made.get(of) {
        Some(Made::Stream(s)) => Ok(s.clone()),
        _ => Err(format!("no earlier stream `{of}`")),
    };
    Ok(match spec {
        ArgSpec::Constant { values, .. } => {
            let ty = param_ty.ok_or("a constant for no parameter")?;
            let element =
                ElementType::from_ir(program.module(), ty).ok_or("constant of no element type")?;
            let bytes = encode(&element, 1, values)?;
            Made::Constant(Constant { element, bytes })
        }
        ArgSpec::Stream {
            ty, dims, values, ..
        } => {
            let element = element_type(program, ty)?;
            let stream =
                RawStream::new(device.raw(), element.clone(), dims).map_err(|e| e.to_string())?;
            if let Some(values) = values {
                let bytes = encode(&element, stream.len(), values)?;
                stream
                    .read_bytes(&element, &bytes)
                    .map_err(|e| e.to_string())?;
            }
            Made::Stream(stream)
        }
        ArgSpec::Same { of, .. } => Made::Stream(stream_of(of)?),
        ArgSpec::View { of, start, end, .. } => {
            let x_first = |v: &Vec<usize>| v.iter().rev().copied().collect::<Vec<_>>();
            let view = stream_of(of)?
                .domain(&x_first(start), &x_first(end))
                .map_err(|e| e.to_string())?;
            Made::Stream(view)
        }
        ArgSpec::Host { ty, .. } => {
            let element = element_type(program, ty)?;
            Made::Host(element)
        }
        ArgSpec::Iter { dims, values, .. } => {
            let (start, end) = values.split_at(values.len() / 2);
            Made::Iter(IterStream::new(dims, start, end).map_err(|e| e.to_string())?)
        }
    })
}

/// The operator and the words after it of a `run @scan OP [exclusive] [whole]:` block.
fn scan_operator(run: &Run) -> Option<(&str, Vec<&str>)> {
    let rest = run.kernel.strip_prefix("@scan ")?;
    let mut words = rest.split_whitespace();
    let name = words.next()?;
    Some((name, words.collect()))
}

/// Runs a scan: `in` into `out` with the reduce kernel `OP`; `exclusive` starts from the
/// constant `init`, `whole` scans the whole stream.
fn run_scan(program: &Program, run: &Run, made: &HashMap<String, Made>) -> Result<(), String> {
    let (name, words) = scan_operator(run).ok_or("expected `@scan OP`")?;
    let stream = |name: &str| match made.get(name) {
        Some(Made::Stream(s)) => Ok(s),
        _ => Err(format!("`@scan` needs a stream `{name}`")),
    };
    let mut request = if words.contains(&"exclusive") {
        match made.get("init") {
            Some(Made::Constant(c)) => ScanRequest::exclusive(c.clone()),
            _ => return Err("an exclusive `@scan` needs a constant `init`".into()),
        }
    } else {
        ScanRequest::inclusive()
    };
    if words.contains(&"whole") {
        request = request.whole_stream();
    }
    let kernel = program.kernel(name).map_err(|e| e.to_string())?;
    let args = [Arg::Stream(stream("in")?), Arg::Stream(stream("out")?)];
    kernel
        .with_scan(request)
        .launch(&args)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Runs `streamScatterOp` or `streamGatherOp` (`run @scatter OP:` / `run @gather OP:`).
fn run_stream_op(program: &Program, run: &Run, made: &HashMap<String, Made>) -> Result<(), String> {
    if scan_operator(run).is_some() {
        return run_scan(program, run, made);
    }
    let (which, op) = run.kernel[1..]
        .split_once(' ')
        .ok_or("expected `@scatter OP` or `@gather OP`")?;
    let stream = |name: &str| match made.get(name) {
        Some(Made::Stream(s)) => Ok(s),
        _ => Err(format!("`{}` needs a stream `{name}`", run.kernel)),
    };
    let kernel = match op.trim() {
        "assign" | "fetch" => None,
        name => Some(program.kernel(name).map_err(|e| e.to_string())?),
    };
    let module = program.module();
    let result = match (which, &kernel) {
        ("scatter", k) => ops::scatter_op(
            stream("s")?,
            stream("index")?,
            stream("array")?,
            match k {
                None => ops::ScatterOp::Assign,
                Some(k) => ops::ScatterOp::Reduce {
                    module,
                    kernel: k.ir(),
                },
            },
        ),
        ("gather", k) => ops::gather_op(
            stream("t")?,
            stream("index")?,
            stream("array")?,
            match k {
                None => ops::GatherOp::Fetch,
                Some(k) => ops::GatherOp::Kernel {
                    module,
                    kernel: k.ir(),
                },
            },
        ),
        _ => return Err(format!("unknown stream operation `{which}`")),
    };
    result.map_err(|e| e.to_string())
}

fn launch(
    program: &Program,
    run: &Run,
    made: &HashMap<String, Made>,
    hosts: &mut HashMap<String, Vec<u8>>,
) -> Result<Vec<String>, String> {
    if run.kernel.starts_with('@') {
        return run_stream_op(program, run, made).map(|()| Vec::new());
    }
    let mut kernel = program.kernel(&run.kernel).map_err(|e| e.to_string())?;
    if let Some((offset, size)) = &run.domain {
        kernel = kernel.with_domain(offset, size);
    }
    let mut host_bytes: HashMap<&String, &mut Vec<u8>> = hosts.iter_mut().collect();
    let args: Vec<Arg<'_>> = run
        .args
        .iter()
        .map(|spec| match &made[spec.name()] {
            Made::Stream(s) => Arg::Stream(s),
            Made::Iter(i) => Arg::Iterator(i),
            Made::Constant(c) => Arg::Constant(c.clone()),
            Made::Host(element) => Arg::HostValue {
                bytes: std::cell::RefCell::new(
                    host_bytes
                        .remove(&spec.name().to_string())
                        .expect("one host buffer per host argument")
                        .as_mut_slice(),
                ),
                element: element.clone(),
            },
        })
        .collect();
    let report = kernel.launch(&args).map_err(|e| e.to_string())?;
    Ok(report.warnings)
}

pub fn run_once(program: &Program, run: &Run, device: &Device) -> Result<Outcome, String> {
    // Launches without streams (an iterator reduced into a host variable) use this device.
    brook::use_devices(std::slice::from_ref(device));
    let outcome = run_on(program, run, device);
    brook::use_devices(&[]);
    outcome
}

fn run_on(program: &Program, run: &Run, device: &Device) -> Result<Outcome, String> {
    if !run.kernel.starts_with('@') && run.error.is_none() {
        let kernel = program.kernel(&run.kernel).map_err(|e| e.to_string())?;
        let params = &kernel.ir().params[..kernel.argument_count()];
        let names: Vec<&str> = run.args.iter().map(|a| a.name()).collect();
        let expected: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
        if names != expected {
            return Err(format!(
                "the run gives arguments {names:?}, `{}` has parameters {expected:?}",
                run.kernel
            ));
        }
    }
    let param_types: Vec<Option<Type>> = match (scan_operator(run), program.kernel(&run.kernel)) {
        // A scan's `in`, `out` and `init` all have the operator's type.
        (Some((name, _)), _) => match program.kernel(name) {
            Ok(k) => {
                let ty = k.ir().params.last().map(|p| p.ty.clone());
                run.args.iter().map(|_| ty.clone()).collect()
            }
            Err(_) => Vec::new(),
        },
        (None, Ok(k)) => k.ir().params.iter().map(|p| Some(p.ty.clone())).collect(),
        (None, Err(_)) => Vec::new(),
    };
    let mut made: HashMap<String, Made> = HashMap::new();
    let specs = run.lets.iter().map(|s| (s, None));
    let specs = specs.chain(
        run.args
            .iter()
            .enumerate()
            .map(|(i, s)| (s, param_types.get(i).cloned().flatten())),
    );
    for (spec, ty) in specs {
        match make(program, spec, ty.as_ref(), &made, device) {
            Ok(value) => made.insert(spec.name().to_string(), value),
            // A refused view is the run's expected error.
            Err(e) if run.error.as_ref().is_some_and(|t| e.contains(t.as_str())) => {
                return Ok(Outcome {
                    outputs: HashMap::new(),
                })
            }
            Err(e) => return Err(e),
        };
    }
    let mut hosts: HashMap<String, Vec<u8>> = made
        .iter()
        .filter_map(|(name, m)| match m {
            Made::Host(element) => Some((name.clone(), vec![0u8; element.size()])),
            _ => None,
        })
        .collect();
    match (launch(program, run, &made, &mut hosts), &run.error) {
        (Err(e), Some(text)) if e.contains(text.as_str()) => {
            return Ok(Outcome {
                outputs: HashMap::new(),
            })
        }
        (Err(e), _) => return Err(format!("launch failed: {e}")),
        (Ok(_), Some(text)) => {
            return Err(format!(
                "launch succeeded; expected an error containing `{text}`"
            ))
        }
        (Ok(warnings), None) => {
            if let Some(text) = &run.warning {
                if !warnings.iter().any(|w| w.contains(text.as_str())) {
                    return Err(format!("no warning containing `{text}`: {warnings:?}"));
                }
            }
        }
    }
    let mut outputs = HashMap::new();
    for (name, value) in &made {
        match value {
            Made::Stream(stream) => {
                let mut bytes = vec![0u8; stream.len() * stream.element().size()];
                stream
                    .write_bytes(stream.element(), &mut bytes)
                    .map_err(|e| e.to_string())?;
                outputs.insert(name.clone(), bytes);
            }
            Made::Host(_) => {
                outputs.insert(name.clone(), hosts[name].clone());
            }
            Made::Iter(_) | Made::Constant(_) => {}
        }
    }
    Ok(Outcome { outputs })
}

/// Distance in units in the last place of `kind` between two float components.
fn ulps(kind: ScalarKind, a: f64, b: f64) -> u64 {
    if kind == ScalarKind::F32 {
        brook_codegen::mathlib::ulps_f32(a as f32, b as f32)
    } else {
        brook_codegen::mathlib::ulps(a, b)
    }
}

/// Whether a device's outputs equal the interpreter's: bit-identical except that any NaN
/// equals any NaN (IEEE 754 leaves the payload of a computed NaN open: x86 propagates the
/// operand's, a GPU writes its canonical NaN), and with `ulp`, float components within that
/// many ulps.
pub fn same_outputs(
    run: &Run,
    program: &Program,
    ulp: Option<u64>,
    expected: &HashMap<String, Vec<u8>>,
    found: &Outcome,
) -> Result<(), String> {
    if *expected == found.outputs {
        return Ok(());
    }
    let ulp = ulp.unwrap_or(0);
    for (name, want) in expected {
        let got = &found.outputs[name];
        let ty = spec_type(run, name).ok_or(format!("no type for `{name}`"))?;
        let element = element_type(program, &ty)?;
        let mut parts = Vec::new();
        components(&element, 0, &mut parts);
        for e in 0..want.len() / element.size() {
            for &(kind, offset) in &parts {
                let at = e * element.size() + offset;
                let (a, b) = (
                    decode_component(kind, &want[at..]),
                    decode_component(kind, &got[at..]),
                );
                let same = brook::raw::same_component(kind, &want[at..], &got[at..]);
                let close = same || (kind.is_float() && ulp > 0 && ulps(kind, a, b) <= ulp);
                if !close {
                    return Err(format!(
                        "`{name}` element {e}: {a} vs {b} (allowed {ulp} ulp)"
                    ));
                }
            }
        }
    }
    Ok(())
}

pub fn check_expected(run: &Run, outcome: &Outcome, program: &Program) -> Result<(), String> {
    for Expectation {
        name,
        values,
        tolerance,
    } in &run.outputs
    {
        let ty = spec_type(run, name)
            .ok_or(format!("expectation for `{name}`, which is not a stream"))?;
        let element = element_type(program, &ty)?;
        let mut parts = Vec::new();
        components(&element, 0, &mut parts);
        let bytes = &outcome.outputs[name];
        let count = bytes.len() / element.size() * parts.len();
        let values = expand(values, count);
        if values.len() != count {
            return Err(format!(
                "`{name}`: {} expected values for {count} components",
                values.len()
            ));
        }
        let found: Vec<f64> = (0..count)
            .map(|i| {
                let (kind, offset) = parts[i % parts.len()];
                decode_component(kind, &bytes[(i / parts.len()) * element.size() + offset..])
            })
            .collect();
        for (i, (f, e)) in found.iter().zip(&values).enumerate() {
            let kind = parts[i % parts.len()].0;
            if !matches(kind, *f, e, *tolerance) {
                return Err(format!(
                    "`{name}` component {i}: expected {e}, found {f}\n  all found: {}",
                    found
                        .iter()
                        .map(|v| v.to_string())
                        .collect::<Vec<_>>()
                        .join(" ")
                ));
            }
        }
    }
    Ok(())
}

/// How a run went wrong on one device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureKind {
    /// The run failed (the launch was refused, an argument could not be made).
    Failed,
    /// The outputs are not the case's expected values.
    Unexpected,
    /// The outputs differ from the interpreter's.
    Differs,
}

/// One run that went wrong on one device.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The index of the run in the case.
    pub run: usize,
    pub device: String,
    pub kind: FailureKind,
    pub message: String,
}

/// The interpreter's outputs of each run of a case, by run index (runs that failed there are
/// missing).
pub type Reference = HashMap<usize, HashMap<String, Vec<u8>>>;

/// What [`judge`] found.
pub struct Judgement {
    /// The runs that went wrong.
    pub failures: Vec<Failure>,
    /// The runs whose outputs differ from the interpreter's (or the expected values) only as a
    /// device that flushes `float` subnormals must: the same outputs as the interpreter with
    /// `float` subnormals flushed (`docs/SEMANTICS.md`). Not failures, but counted and said.
    pub flushed_subnormals: Vec<Failure>,
    /// The interpreter's outputs.
    pub reference: Reference,
}

/// Runs every run of `case` on `devices` and checks it: against the case's expectations, and
/// off the interpreter against the interpreter's outputs. `devices` must list the interpreter
/// first when other devices are to be compared with it. On a device that flushes `float`
/// subnormals, a run that is wrong there but gives what the interpreter gives with `float`
/// subnormals flushed is put apart as such ([`Judgement::flushed_subnormals`]).
pub fn judge(case: &Case, program: &Program, devices: &[Device]) -> Judgement {
    let mut judgement = Judgement {
        failures: Vec::new(),
        flushed_subnormals: Vec::new(),
        reference: Reference::new(),
    };
    let flushing = devices
        .iter()
        .any(|d| d.info().flushes_float_subnormals)
        .then(Device::interp_flushing_float_subnormals);
    for device in devices {
        for (r, run) in case.runs.iter().enumerate() {
            let failure = |kind, message| Failure {
                run: r,
                device: device.info().to_string(),
                kind,
                message,
            };
            let outcome = match run_once(program, run, device) {
                Ok(o) => o,
                Err(e) => {
                    judgement.failures.push(failure(FailureKind::Failed, e));
                    continue;
                }
            };
            let mut found = Vec::new();
            if let Err(e) = check_expected(run, &outcome, program) {
                found.push(failure(FailureKind::Unexpected, e));
            }
            if device.kind() == DeviceKind::Interp {
                judgement.reference.insert(r, outcome.outputs);
                judgement.failures.extend(found);
                continue;
            } else if let Some(expected) = judgement.reference.get(&r) {
                if let Err(e) = same_outputs(run, program, case.ulp, expected, &outcome) {
                    found.push(failure(
                        FailureKind::Differs,
                        format!("outputs differ from the interpreter's: {e}"),
                    ));
                }
            }
            let model = flushing
                .as_ref()
                .filter(|_| device.info().flushes_float_subnormals && !found.is_empty());
            match model.map(|model| same_as_model((program, run, case.ulp), model, &outcome)) {
                None => judgement.failures.extend(found),
                Some(Ok(())) => judgement.flushed_subnormals.push(failure(
                    FailureKind::Differs,
                    format!(
                        "outputs differ from the exact interpreter's only as float subnormals \
                         flushed to zero make them (the device flushes them; SEMANTICS): {}",
                        found[0].message.lines().next().unwrap_or("")
                    ),
                )),
                Some(Err(e)) => judgement.failures.extend(found.into_iter().map(|mut f| {
                    f.message
                        .push_str(&format!("\n  and from the flushing interpreter's: {e}"));
                    f
                })),
            }
        }
    }
    judgement
}

/// Whether `outcome` is what `model` (the interpreter flushing `float` subnormals) gives for
/// `run`, as [`same_outputs`] compares (within the case's ulps); else how it differs.
fn same_as_model(
    (program, run, ulp): (&Program, &Run, Option<u64>),
    model: &Device,
    outcome: &Outcome,
) -> Result<(), String> {
    let modelled = run_once(program, run, model)?;
    same_outputs(run, program, ulp, &modelled.outputs, outcome)
}

/// Every available device, the interpreter first.
/// What a run of the whole suite found.
pub struct SuiteOutcome {
    pub cases: usize,
    pub runs: usize,
    /// One line per failure: `case:line on device: message`.
    pub failures: Vec<String>,
    /// One line per run put apart as [`Judgement::flushed_subnormals`].
    pub flushed_subnormals: Vec<String>,
}

impl SuiteOutcome {
    /// Prints the counts under `label` and fails (a test) with every failure line.
    pub fn assert_passed(&self, label: &str) {
        println!("{label}: {} cases, {} runs", self.cases, self.runs);
        if !self.flushed_subnormals.is_empty() {
            println!(
                "{label}: {} run(s) differ only by float subnormals the device flushes \
                 (docs/SEMANTICS.md):\n{}",
                self.flushed_subnormals.len(),
                self.flushed_subnormals.join("\n")
            );
        }
        assert!(
            self.failures.is_empty(),
            "{} failure(s):\n{}",
            self.failures.len(),
            self.failures.join("\n")
        );
    }
}

/// Runs every case of the suite on `devices` (the interpreter first: every other device is
/// compared with its outputs).
pub fn run_suite(devices: &[Device]) -> SuiteOutcome {
    let files = case_files();
    let (mut failures, mut flushed) = (Vec::new(), Vec::new());
    let mut runs = 0;
    for path in &files {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_string();
        let text = std::fs::read_to_string(path).expect("read case");
        let case = match crate::case::parse(&text) {
            Ok(case) => case,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let program = match compile(&name, &case) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{name}: does not compile:\n{e}"));
                continue;
            }
        };
        runs += case.runs.len() * devices.len();
        let judgement = judge(&case, &program, devices);
        for f in judgement.flushed_subnormals {
            let line = case.runs[f.run].line;
            flushed.push(format!("{name}:{line} on {}: {}", f.device, f.message));
        }
        for f in judgement.failures {
            let line = case.runs[f.run].line;
            failures.push(format!("{name}:{line} on {}: {}", f.device, f.message));
        }
    }
    SuiteOutcome {
        cases: files.len(),
        runs,
        failures,
        flushed_subnormals: flushed,
    }
}

pub fn devices_interpreter_first() -> Vec<Device> {
    let mut devices = Device::all();
    devices.sort_by_key(|d| d.kind() != DeviceKind::Interp);
    devices
}
