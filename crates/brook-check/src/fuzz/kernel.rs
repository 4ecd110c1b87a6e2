//! Whole random kernels with their runs: maps (streams of every type, resized inputs,
//! iterators, structs, constants, gathers of rank 1 to 4, `indexof`, several outputs, execution
//! domains, transcendental outputs), reductions to every target kind (both forms), scatters
//! with distinct indices, and thread groups with a shared array and a barrier.

use super::ast::{Expr, Stmt, Ty};
use super::gen::{self, random_ty, GatherArray, Gen, Scope};
use super::rng::Rng;
use super::values;
use super::Generated;
use crate::case::{ArgSpec, Run};
use brook_ir::intrinsic::{Exactness, Intrinsic, INTRINSICS};
use brook_ir::ScalarKind;

/// The transcendental intrinsics, the math library's (compared within their ulp bound, never
/// fed into more arithmetic).
fn transcendentals() -> Vec<&'static Intrinsic> {
    let library = |i: &&Intrinsic| i.exactness == Exactness::Library;
    INTRINSICS.iter().filter(library).collect()
}

/// One random kernel and its run.
pub fn generate(rng: &mut Rng) -> Generated {
    match rng.below(20) {
        0..=10 => map(rng),
        11..=15 => reduce(rng),
        16 | 17 => scatter(rng),
        _ => group(rng),
    }
}

/// Dimensions of a stream, slowest first, at most `limit` elements.
fn dims(rng: &mut Rng, rank: usize, limit: usize) -> Vec<usize> {
    loop {
        let d: Vec<usize> = (0..rank).map(|_| rng.between(1, 6) as usize).collect();
        if d.iter().product::<usize>() <= limit {
            return d;
        }
    }
}

/// Another shape of the same rank (leading 1s kept, so the ranks still match) for an input
/// that the runtime resizes onto `domain`.
fn resized(rng: &mut Rng, domain: &[usize]) -> Vec<usize> {
    loop {
        let d: Vec<usize> = domain
            .iter()
            .map(|&n| {
                if n == 1 {
                    1
                } else {
                    rng.between(2, 7) as usize
                }
            })
            .collect();
        if d.iter().product::<usize>() <= 64 {
            return d;
        }
    }
}

fn random_rank(rng: &mut Rng) -> usize {
    *rng.pick(&[1, 1, 1, 1, 2, 2, 2, 3, 4])
}

fn stream(rng: &mut Rng, name: &str, ty: Ty, dims: &[usize]) -> ArgSpec {
    let count = dims.iter().product::<usize>() * usize::from(ty.width);
    ArgSpec::Stream {
        name: name.to_string(),
        ty: ty.name(),
        dims: dims.to_vec(),
        values: Some(values::components(rng, ty.kind, count)),
    }
}

/// Parameters, their run arguments and what the body can read, built together.
#[derive(Default)]
struct Signature {
    structs: String,
    params: Vec<String>,
    args: Vec<ArgSpec>,
    scope: Scope,
    /// The names of the outputs and reduction targets.
    results: Vec<String>,
}

impl Signature {
    fn input(&mut self, rng: &mut Rng, name: &str, domain: &[usize]) {
        let shape = if rng.chance(25) {
            resized(rng, domain)
        } else {
            domain.to_vec()
        };
        match rng.below(10) {
            0 => self.struct_input(rng, name, &shape),
            1 => {
                // An iterator of rank 2 or more has one component per axis.
                let rank = shape.iter().skip_while(|&&d| d == 1).count();
                let width = if rank > 1 {
                    rank as u8
                } else {
                    rng.between(1, 4) as u8
                };
                let ty = Ty::new(ScalarKind::F32, width);
                let values = (0..2 * width)
                    .map(|_| rng.between(-40, 40) as f32 / 4.0)
                    .collect();
                self.params.push(format!("{} {name}<>", ty.name()));
                self.args.push(ArgSpec::Iter {
                    name: name.to_string(),
                    dims: shape,
                    values,
                });
                self.scope.readable.push((name.to_string(), ty));
            }
            _ => {
                let ty = random_ty(rng);
                self.params.push(format!("{} {name}<>", ty.name()));
                self.args.push(stream(rng, name, ty, &shape));
                self.scope.readable.push((name.to_string(), ty));
                if rng.chance(30) {
                    let f4 = Ty::new(ScalarKind::F32, 4);
                    self.scope.readable.push((format!("indexof({name})"), f4));
                }
            }
        }
    }

    fn struct_input(&mut self, rng: &mut Rng, name: &str, shape: &[usize]) {
        let struct_name = format!("S_{name}");
        let fields: Vec<Ty> = (0..rng.between(1, 3)).map(|_| random_ty(rng)).collect();
        self.structs.push_str(&format!("struct {struct_name} {{"));
        let mut values = Vec::new();
        let count: usize = shape.iter().product();
        let mut per_element: Vec<Vec<String>> = vec![Vec::new(); count];
        for (i, ty) in fields.iter().enumerate() {
            self.structs.push_str(&format!(" {} f{i};", ty.name()));
            self.scope.readable.push((format!("{name}.f{i}"), *ty));
            for element in per_element.iter_mut() {
                element.extend(values::components(rng, ty.kind, usize::from(ty.width)));
            }
        }
        self.structs.push_str(" };\n");
        for element in per_element {
            values.extend(element);
        }
        self.params.push(format!("{struct_name} {name}<>"));
        self.args.push(ArgSpec::Stream {
            name: name.to_string(),
            ty: format!("struct {struct_name}"),
            dims: shape.to_vec(),
            values: Some(values),
        });
    }

    fn constant(&mut self, rng: &mut Rng, name: &str) {
        let ty = random_ty(rng);
        self.params.push(format!("{} {name}", ty.name()));
        self.args.push(ArgSpec::Constant {
            name: name.to_string(),
            values: values::components(rng, ty.kind, usize::from(ty.width)),
        });
        self.scope.readable.push((name.to_string(), ty));
    }

    fn gather(&mut self, rng: &mut Rng, name: &str) {
        let ty = random_ty(rng);
        let rank = rng.between(1, 4) as usize;
        let shape = dims(rng, rank, 100);
        self.params
            .push(format!("{} {name}{}", ty.name(), "[]".repeat(rank)));
        self.args.push(stream(rng, name, ty, &shape));
        self.scope.gathers.push(GatherArray {
            name: name.to_string(),
            rank,
            ty,
        });
    }

    fn output(&mut self, rng: &mut Rng, name: &str, ty: Ty, shape: &[usize], scatter: &str) {
        self.params
            .push(format!("out {} {name}{scatter}", ty.name()));
        self.results.push(name.to_string());
        self.args.push(stream(rng, name, ty, shape));
    }

    fn source(&self, head: &str, name: &str) -> String {
        format!(
            "{}{head}void {name}({})\n{{\n",
            self.structs,
            self.params.join(", ")
        )
    }
}

fn finish(sig: &Signature, head: &str, body: Vec<Stmt>, run: Run, ulp: Option<u64>) -> Generated {
    Generated {
        prelude: sig.source(head, "k"),
        body,
        runs: vec![run],
        ulp,
        results: sig.results.clone(),
    }
}

fn run_of(kernel: &str, args: Vec<ArgSpec>) -> Run {
    Run {
        kernel: kernel.to_string(),
        args,
        ..Run::default()
    }
}

fn map(rng: &mut Rng) -> Generated {
    let rank = random_rank(rng);
    let mut domain = dims(rng, rank, 64);
    if rng.chance(30) {
        // Rows longer than the CPU device's gangs (8 lanes): full gangs, then a ragged one.
        let last = domain.len() - 1;
        domain[last] = rng.between(7, 40) as usize;
    }
    let mut sig = Signature::default();
    for i in 0..rng.between(1, 3) {
        sig.input(rng, &format!("a{i}"), &domain);
    }
    for i in 0..rng.between(0, 2) {
        sig.constant(rng, &format!("c{i}"));
    }
    for i in 0..rng.between(0, 2) {
        sig.gather(rng, &format!("g{i}"));
    }
    if rng.chance(20) {
        let i4 = Ty::new(ScalarKind::I32, 4);
        sig.scope.readable.push(("instance()".to_string(), i4));
    }
    let mut outputs = Vec::new();
    for i in 0..rng.between(1, 3) {
        let (name, ty) = (format!("o{i}"), random_ty(rng));
        sig.output(rng, &name, ty, &domain, "<>");
        outputs.push((name, ty));
    }
    sig.scope.outputs = outputs.clone();
    let math = rng.chance(15);
    let mut g = Gen::new(rng, sig.scope.clone());
    let mut body = g.block(3, false, true);
    for (name, ty) in &outputs {
        body.push(Stmt::Assign(name.clone(), "=", g.expr(*ty, 4)));
    }
    let mut ulp = None;
    if math {
        if let Some((name, ty)) = outputs.iter().find(|(_, t)| t.is_float()) {
            let fun = *g.rng.pick(&transcendentals());
            let args = (0..fun.signature.arity()).map(|_| g.expr(*ty, 3)).collect();
            body.push(Stmt::Assign(
                name.clone(),
                "=",
                Expr::Call(fun.name, args, *ty),
            ));
            ulp = Some(2);
        }
    }
    let mut run = run_of("k", sig.args.clone());
    if rng.chance(10) {
        let offset: Vec<usize> = domain.iter().map(|&d| rng.below(d)).collect();
        let size = domain
            .iter()
            .zip(&offset)
            .map(|(&d, &o)| rng.between(1, (d - o) as i64) as usize)
            .collect();
        run.domain = Some((offset, size));
    }
    finish(&sig, "kernel ", body, run, ulp)
}

/// A reduction target for an input of `shape`: a host value, `<1>`, a same-rank block shape
/// or the leading dimensions.
fn reduce_target(rng: &mut Rng, name: &str, ty: Ty, shape: &[usize]) -> ArgSpec {
    let target: Vec<usize> = match rng.below(4) {
        0 => {
            return ArgSpec::Host {
                name: name.to_string(),
                ty: ty.name(),
            }
        }
        1 => vec![1],
        2 => shape
            .iter()
            .map(|&d| {
                let divisors: Vec<usize> = (1..=d).filter(|k| d % k == 0).collect();
                *rng.pick(&divisors)
            })
            .collect(),
        _ => {
            // The leading dimensions of the shape without its leading 1s.
            let skip = shape.iter().take_while(|&&d| d == 1).count();
            let shape = &shape[skip.min(shape.len() - 1)..];
            shape[..rng.below(shape.len()).max(1)].to_vec()
        }
    };
    stream(rng, name, ty, &target)
}

fn reduce(rng: &mut Rng) -> Generated {
    let shape = if rng.chance(15) {
        vec![rng.between(100, 3000) as usize]
    } else {
        let rank = random_rank(rng);
        dims(rng, rank, 64)
    };
    let ty = random_ty(rng);
    let mut sig = Signature::default();
    sig.params.push(format!("{} a<>", ty.name()));
    sig.args.push(stream(rng, "a", ty, &shape));
    sig.params.push(format!("reduce {} r<>", ty.name()));
    sig.args.push(reduce_target(rng, "r", ty, &shape));
    sig.results.push("r".to_string());
    sig.scope.readable.push(("a".to_string(), ty));
    let function_form = rng.chance(65);
    if function_form {
        sig.scope.readable.push(("r".to_string(), ty));
    }
    let mut g = Gen::new(rng, sig.scope.clone());
    let mut body = g.block(2, false, false);
    let value = g.expr(ty, 4);
    let head = if function_form {
        body.push(Stmt::Assign("r".to_string(), "=", value));
        "reduce "
    } else {
        let ops: &[&'static str] = if gen::has_bitwise(ty.kind) {
            &["+=", "*=", "|=", "^=", "&="]
        } else {
            &["+=", "*="]
        };
        let op = g.rng.one_of(ops);
        body.push(Stmt::Assign("r".to_string(), op, value));
        "kernel "
    };
    let run = run_of("k", sig.args.clone());
    finish(&sig, head, body, run, None)
}

fn scatter(rng: &mut Rng) -> Generated {
    let n = rng.between(1, 40) as usize;
    let two_d = rng.chance(30);
    let target: Vec<usize> = if two_d {
        let w = rng.between(1, 8) as usize;
        vec![n.div_ceil(w) + rng.below(2), w]
    } else {
        vec![n + rng.below(8)]
    };
    let slots: usize = target.iter().product();
    // Distinct positions, some of them out of range (dropped).
    let mut positions: Vec<i64> = (0..slots as i64).collect();
    for i in (1..positions.len()).rev() {
        positions.swap(i, rng.below(i + 1));
    }
    positions.truncate(n);
    let mut sig = Signature::default();
    let index_values: Vec<String> = positions
        .iter()
        .flat_map(|&p| {
            let out_of_range = rng.chance(10);
            if two_d {
                let w = target[1] as i64;
                let (y, x) = (p / w, p % w);
                let (y, x) = if out_of_range { (y, x + w) } else { (y, x) };
                vec![x.to_string(), y.to_string()]
            } else {
                let p = if out_of_range { -1 - p } else { p };
                vec![p.to_string()]
            }
        })
        .collect();
    let index_ty = Ty::new(ScalarKind::I32, if two_d { 2 } else { 1 });
    sig.params.push(format!("{} idx<>", index_ty.name()));
    sig.args.push(ArgSpec::Stream {
        name: "idx".to_string(),
        ty: index_ty.name(),
        dims: vec![n],
        values: Some(index_values),
    });
    sig.scope.readable.push(("idx".to_string(), index_ty));
    for i in 0..rng.between(1, 2) {
        sig.input(rng, &format!("a{i}"), &[n]);
    }
    if rng.chance(30) {
        sig.gather(rng, "g0");
    }
    let ty = random_ty(rng);
    let scatter = if two_d { "[][]" } else { "[]" };
    sig.output(rng, "b", ty, &target, scatter);
    let mut g = Gen::new(rng, sig.scope.clone());
    let mut body = g.block(2, false, true);
    let place = if two_d { "b[idx.y][idx.x]" } else { "b[idx]" };
    body.push(Stmt::Assign(place.to_string(), "=", g.expr(ty, 4)));
    let run = run_of("k", sig.args.clone());
    finish(&sig, "kernel ", body, run, None)
}

/// A thread-group kernel in two or three phases: each thread writes its own share, then
/// (sometimes) reads and rewrites its own share, then reads others' shares: no thread reads
/// a share another rewrites in the same phase (a race, whose result depends on the device's
/// order of threads). The domain may end in a partial group.
fn group(rng: &mut Rng) -> Generated {
    let size = *rng.pick(&[2usize, 4, 8, 16, 32, 64, 128]);
    let ragged = if rng.below(3) == 0 {
        rng.below(size)
    } else {
        0
    };
    let n = size * rng.between(1, 3) as usize + ragged;
    let mut sig = Signature::default();
    for i in 0..rng.between(1, 2) {
        sig.input(rng, &format!("a{i}"), &[n]);
    }
    let ty = random_ty(rng);
    sig.output(rng, "r", ty, &[n], "[]");
    let shift = rng.below(size);
    // Shared arrays hold 128-bit elements and are indexed with instanceInGroup().x (Brook+).
    let shared = *rng.pick(&[
        Ty::new(ScalarKind::F32, 4),
        Ty::new(ScalarKind::I32, 4),
        Ty::new(ScalarKind::U32, 4),
        Ty::new(ScalarKind::F64, 2),
    ]);
    let mut g = Gen::new(rng, sig.scope.clone());
    g.scope
        .readable
        .push(("me".to_string(), Ty::new(ScalarKind::I32, 1)));
    let own = "s[1 * instanceInGroup().x + 0]";
    let others = [
        format!("s[(instanceInGroup().x + {shift}) % {size}]"),
        format!("s[{} - instanceInGroup().x]", size - 1),
    ];
    let mut body = vec![
        Stmt::Fixed(format!("shared {} s[{size}];", shared.name())),
        Stmt::Fixed("int me = instanceInGroup().x;".to_string()),
    ];
    body.extend(g.block(2, false, false));
    let mut share = format!("{own} = ");
    g.expr(shared, 4).write(&mut share);
    body.push(Stmt::Fixed(format!("{share};")));
    body.push(Stmt::Fixed("syncGroup();".to_string()));
    g.scope.readable.push((own.to_string(), shared));
    if g.rng.below(2) == 0 {
        body.extend(g.block(2, false, false));
        let mut again = format!("{own} = ");
        g.expr(shared, 4).write(&mut again);
        body.push(Stmt::Fixed(format!("{again};")));
        body.push(Stmt::Fixed("syncGroup();".to_string()));
    }
    for other in others {
        g.scope.readable.push((other, shared));
    }
    body.extend(g.block(2, false, false));
    body.push(Stmt::Assign(
        "r[instance().x]".to_string(),
        "=",
        g.expr(ty, 4),
    ));
    let head = format!("Attribute[GroupSize({size}, 1, 1)]\nkernel ");
    let run = run_of("k", sig.args.clone());
    finish(&sig, &head, body, run, None)
}
