//! Every operator on every Brook scalar and vector type, on every device, bit-identical to the
//! reference interpreter.
//!
//! One kernel per type (`char` .. `double`, widths 1 to 4) applies each unary and binary
//! operator, each comparison, the conversions to every other scalar kind and the exact
//! intrinsics that take the type, one output each. On a CUDA device this also proves that the
//! driver loads the PTX written for every operator/type pair (ptxas rejects, for example, `neg`
//! on an unsigned type: the cause of the first mismatches the differential fuzzer found).

use brook::raw::ElementType;
use brook::{Arg, Device, Program, RawStream};
use brook_ir::{ScalarKind, ValueType};

/// A Brook scalar type, its values for the operands and whether it is an integer.
struct ScalarCase {
    name: &'static str,
    integer: bool,
}

const SCALARS: [ScalarCase; 8] = [
    ScalarCase {
        name: "char",
        integer: true,
    },
    ScalarCase {
        name: "uchar",
        integer: true,
    },
    ScalarCase {
        name: "short",
        integer: true,
    },
    ScalarCase {
        name: "ushort",
        integer: true,
    },
    ScalarCase {
        name: "int",
        integer: true,
    },
    ScalarCase {
        name: "uint",
        integer: true,
    },
    ScalarCase {
        name: "float",
        integer: false,
    },
    ScalarCase {
        name: "double",
        integer: false,
    },
];

/// The operations of the kernel for `ty` (a scalar or vector type of `scalar`): output name,
/// output scalar type (of the same width) and expression over the inputs `a` and `b`.
fn operations(scalar: &ScalarCase, ty: &str, width: usize) -> Vec<(String, String, String)> {
    let same = |name: &str, expr: &str| {
        let out = scalar.name.to_string();
        (name.to_string(), out, expr.to_string())
    };
    let mut ops = vec![
        same("add", "a + b"),
        same("sub", "a - b"),
        same("mul", "a * b"),
        same("div", "a / b"),
        same("neg", "-a"),
        same("plus", "+a"),
        same("lt", &format!("({ty})(a < b)")),
        same("le", &format!("({ty})(a <= b)")),
        same("gt", &format!("({ty})(a > b)")),
        same("ge", &format!("({ty})(a >= b)")),
        same("eq", &format!("({ty})(a == b)")),
        same("ne", &format!("({ty})(a != b)")),
        same("abs", "abs(a)"),
        same("min", "min(a, b)"),
        same("max", "max(a, b)"),
        same("clamp", "clamp(a, min(b, a), max(b, a))"),
    ];
    // Bitwise operators take int and uint (seed 003 6.3.15).
    if matches!(scalar.name, "int" | "uint") {
        ops.extend([
            same("shl", "a << b"),
            same("shr", "a >> b"),
            same("and", "a & b"),
            same("or", "a | b"),
            same("xor", "a ^ b"),
            same("not", "~a"),
        ]);
    }
    if scalar.integer {
        ops.push(same("rem", "a % b"));
    } else {
        ops.extend([
            same("fmod", "fmod(a, b)"),
            same("floor", "floor(a)"),
            same("ceil", "ceil(a)"),
            same("round", "round(a)"),
            same("frac", "frac(a)"),
            same("sqrt", "sqrt(a)"),
            same("sign", "sign(a)"),
        ]);
    }
    if width == 1 {
        ops.push(same("select", "a < b ? b : a"));
        if scalar.integer {
            ops.extend([
                same("land", &format!("({ty})(a && b)")),
                same("lor", &format!("({ty})(a || b)")),
                same("lnot", &format!("({ty})(!a)")),
            ]);
        }
    }
    for target in SCALARS.iter().filter(|t| exists(t.name, width)) {
        let to = vector_name(target.name, width);
        let name = format!("to_{}", target.name);
        ops.push((name, target.name.to_string(), format!("({to})a")));
    }
    ops
}

/// Brook+ has `double` and `double2` only (seed 003 3.1).
fn exists(scalar: &str, width: usize) -> bool {
    scalar != "double" || width <= 2
}

fn vector_name(scalar: &str, width: usize) -> String {
    if width == 1 {
        scalar.to_string()
    } else {
        format!("{scalar}{width}")
    }
}

fn kernel_source(scalar: &ScalarCase, width: usize) -> (String, Vec<(String, String)>) {
    let ty = vector_name(scalar.name, width);
    let ops = operations(scalar, &ty, width);
    let outputs: Vec<String> = ops
        .iter()
        .map(|(name, out, _)| format!("out {} {name}<>", vector_name(out, width)))
        .collect();
    let body: String = ops
        .iter()
        .map(|(name, _, expr)| format!("    {name} = {expr};\n"))
        .collect();
    let source = format!(
        "kernel void ops_{ty}({ty} a<>, {ty} b<>, {}) {{\n{body}}}\n",
        outputs.join(", ")
    );
    let out_scalars = ops.into_iter().map(|(n, out, _)| (n, out)).collect();
    (source, out_scalars)
}

/// Operand values of each kind: zero, one, minus one, extremes, odd values, shift counts past
/// the width, and for floats -0, halves, infinities and NaN.
fn operand_values(scalar: &str) -> (Vec<f64>, Vec<f64>) {
    match scalar {
        "float" | "double" => (
            vec![
                0.0,
                -0.0,
                1.5,
                -2.5,
                7.0,
                -1e30,
                f64::INFINITY,
                f64::NAN,
                3e9,
                -0.5,
                1e-3,
                255.75,
            ],
            vec![
                2.0,
                0.0,
                -0.0,
                0.5,
                -3.0,
                f64::NAN,
                1.0,
                f64::NEG_INFINITY,
                -7.25,
                4.0,
                1e30,
                -1.0,
            ],
        ),
        _ => (
            vec![
                0.0,
                1.0,
                -1.0,
                127.0,
                -128.0,
                200.0,
                65535.0,
                7.0,
                -7.0,
                3.0,
                2147483647.0,
                9.0,
            ],
            vec![
                0.0, 3.0, -1.0, 33.0, -1.0, 7.0, 17.0, 0.0, 2.0, -3.0, 1.0, 40.0,
            ],
        ),
    }
}

/// Values as the bytes of a stream of `scalar` (integers wrap to the width, as C casts do).
fn scalar_bytes(scalar: &str, values: &[f64]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for &v in values {
        let int = if v.is_finite() { v as i64 } else { 0 };
        match scalar {
            "char" | "uchar" => bytes.push(int as u8),
            "short" | "ushort" => bytes.extend((int as u16).to_le_bytes()),
            "int" | "uint" => bytes.extend((int as u32).to_le_bytes()),
            "float" => bytes.extend((v as f32).to_le_bytes()),
            _ => bytes.extend(v.to_le_bytes()),
        }
    }
    bytes
}

fn scalar_kind(name: &str) -> ScalarKind {
    match name {
        "char" => ScalarKind::I8,
        "uchar" => ScalarKind::U8,
        "short" => ScalarKind::I16,
        "ushort" => ScalarKind::U16,
        "int" => ScalarKind::I32,
        "uint" => ScalarKind::U32,
        "float" => ScalarKind::F32,
        _ => ScalarKind::F64,
    }
}

/// A stream of `n` elements of `scalar` x `width` on `device`, holding `bytes` if given.
fn raw_stream(
    device: &Device,
    scalar: &str,
    width: usize,
    n: usize,
    bytes: Option<&[u8]>,
) -> RawStream {
    let element = ElementType::Value(ValueType::vector(scalar_kind(scalar), width as u8));
    let stream = RawStream::new(device.raw(), element.clone(), &[n]).expect("create stream");
    if let Some(bytes) = bytes {
        stream
            .read_bytes(&element, bytes)
            .expect("read into stream");
    }
    stream
}

/// Runs the kernel for `scalar` x `width` on `device`; every output as bytes.
fn run(device: &Device, scalar: &ScalarCase, width: usize) -> Vec<(String, String, Vec<u8>)> {
    let (source, outputs) = kernel_source(scalar, width);
    let ty = vector_name(scalar.name, width);
    let program = Program::from_source("operator_matrix.br", &source)
        .unwrap_or_else(|e| panic!("{source}\n{e}"));
    let (a_values, b_values) = operand_values(scalar.name);
    let n = a_values.len() / width;
    let operand = |values: &[f64]| {
        let bytes = scalar_bytes(scalar.name, &values[..n * width]);
        raw_stream(device, scalar.name, width, n, Some(&bytes))
    };
    let (a, b) = (operand(&a_values), operand(&b_values));
    let outs: Vec<RawStream> = outputs
        .iter()
        .map(|(_, out_scalar)| raw_stream(device, out_scalar, width, n, None))
        .collect();
    let mut args = vec![Arg::Stream(&a), Arg::Stream(&b)];
    args.extend(outs.iter().map(Arg::Stream));
    let kernel = program.kernel(&format!("ops_{ty}")).expect("kernel");
    kernel
        .launch(&args)
        .unwrap_or_else(|e| panic!("{ty} on {}: {e}", device.info()));
    outputs
        .iter()
        .zip(&outs)
        .map(|((name, out_scalar), s)| {
            let mut bytes = vec![0u8; n * s.element().size()];
            s.write_bytes(s.element(), &mut bytes).expect("write back");
            (name.clone(), out_scalar.clone(), bytes)
        })
        .collect()
}

#[test]
fn every_operator_on_every_type_matches_the_interpreter() {
    let reference_device = Device::interp();
    let devices: Vec<Device> = Device::all()
        .into_iter()
        .filter(|d| d.type_name() != "interp")
        .collect();
    if !devices.iter().any(|d| d.type_name() == "cuda") {
        eprintln!("operator_matrix: no CUDA device here; CUDA runs skipped");
    }
    for scalar in &SCALARS {
        for width in (1..=4).filter(|&w| exists(scalar.name, w)) {
            let reference = run(&reference_device, scalar, width);
            for device in &devices {
                let found = run(device, scalar, width);
                for ((name, out_scalar, want), (_, _, got)) in reference.iter().zip(&found) {
                    assert!(
                        same_values(out_scalar, want, got),
                        "{} {name} on {}: {got:?}, interpreter {want:?}",
                        vector_name(scalar.name, width),
                        device.info()
                    );
                }
            }
        }
    }
}

/// The same bits, except that any NaN equals any NaN (a GPU writes its canonical NaN).
fn same_values(scalar: &str, want: &[u8], got: &[u8]) -> bool {
    let is_nan = |bytes: &[u8]| match bytes.len() {
        4 => f32::from_le_bytes(bytes.try_into().unwrap()).is_nan(),
        _ => f64::from_le_bytes(bytes.try_into().unwrap()).is_nan(),
    };
    let size = match scalar {
        "float" => 4,
        "double" => 8,
        _ => return want == got,
    };
    want.len() == got.len()
        && want
            .chunks(size)
            .zip(got.chunks(size))
            .all(|(w, g)| w == g || (is_nan(w) && is_nan(g)))
}
