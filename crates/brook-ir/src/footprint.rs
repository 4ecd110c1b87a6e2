//! Which rows of its gather arrays a block of instances may read.
//!
//! A device group (the runtime's `group` module) gives each device a block of the domain's
//! rows; a stencil reads a few rows around its own, and copying only those (the halo) instead
//! of the whole array is what makes it scale. [`gather_rows`] follows each gather's row index
//! (its slowest-axis index) back through the expressions and the locals it was computed from,
//! in interval arithmetic: the instance's row (`indexof(out)`, `instance()` on the domain's
//! slowest axis) is the block's rows, a literal or a constant parameter's value a point, and
//! `+`, `-`, `*`, `min`, `max`, `clamp`, `?:` (the hull of both), roundings and integer `/`,
//! `%`, `&`, `>>` follow. A local's reach is the hull of the values of the stores some read
//! of it sees, and 0 (the value every local starts with) where a read may come before any
//! store of the whole of it ([`crate::reaching`]). So `max(p.y - 1.0f, 0.0f)` over rows
//! 40..60 is 39..59, and over rows 0..10 is 0..9. Anything it cannot bound (a loop counter, a gathered value, a float division,
//! an integer interval its type cannot hold, which would wrap) makes the whole array needed.
//!
//! The interval bounds the index value before a gather rounds (`floor(f + 0.25)`) and clamps
//! it; [`Reach::rows`] widens it by a row each side and clamps it to the array.

use crate::arena::Handle;
use crate::expr::{Access, BinaryOp, Expr, ExprKind, MathFun, PlaceRoot, UnaryOp};
use crate::module::{Kernel, Local, ParamId, ParamRole};
use crate::reaching::Reaching;
use crate::stmt::{Block, Stmt};
use crate::ScalarKind;
use std::collections::HashMap;

/// Indices beyond this are left unbounded (integer arithmetic would wrap).
const LIMIT: f64 = 2_147_483_648.0;

/// The values a scalar may take: an interval, or anything (`None`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reach(pub Option<(f64, f64)>);

impl Reach {
    fn any() -> Reach {
        Reach(None)
    }

    fn between(lo: f64, hi: f64) -> Reach {
        if lo.is_nan() || hi.is_nan() || lo.abs() > LIMIT || hi.abs() > LIMIT {
            return Reach::any();
        }
        Reach(Some((lo, hi)))
    }

    fn point(value: f64) -> Reach {
        Reach::between(value, value)
    }

    /// Both intervals' hull.
    fn hull(self, other: Reach) -> Reach {
        self.with(other, |(a, b), (c, d)| Reach::between(a.min(c), b.max(d)))
    }

    fn with(self, other: Reach, f: impl Fn((f64, f64), (f64, f64)) -> Reach) -> Reach {
        match (self.0, other.0) {
            (Some(x), Some(y)) => f(x, y),
            _ => Reach::any(),
        }
    }

    /// Moved by less than one each way (a rounding, a conversion).
    fn widened(self) -> Reach {
        self.with(Reach::point(0.0), |(a, b), _| {
            Reach::between(a - 1.0, b + 1.0)
        })
    }

    /// The rows `[first, end)` of an array of `rows` rows that an index in this interval
    /// selects (after the gather's rounding and clamping); `None`: every row.
    pub fn rows(self, rows: usize) -> Option<(usize, usize)> {
        let (lo, hi) = self.0?;
        if rows == 0 {
            return Some((0, 0));
        }
        // A gather selects floor(f + 0.25); float rows lose exactness past 2^24.
        let margin = 1.0 + (hi.abs() / (1u64 << 22) as f64).floor();
        let last = (rows - 1) as f64;
        let first = (lo - margin).floor().clamp(0.0, last);
        let end = (hi + margin).ceil().clamp(0.0, last);
        Some((first as usize, end as usize + 1))
    }
}

/// For each gather parameter, the interval of row indices (slowest-axis indices) its gathers
/// may use when the instances are those on the domain rows `[first, end)` of a domain of
/// `domain_rank` axes. `constant` gives a constant parameter's value where it is a number.
pub fn gather_rows(
    kernel: &Kernel,
    domain_rank: usize,
    (first, end): (usize, usize),
    constant: &dyn Fn(ParamId) -> Option<f64>,
) -> Vec<(ParamId, Reach)> {
    // Most kernels gather nothing: no walk over their statements then (a group asks on
    // every launch).
    if !kernel
        .params
        .iter()
        .any(|p| matches!(p.role, ParamRole::Gather { .. }))
    {
        return Vec::new();
    }
    let mut walker = Walker {
        kernel,
        row_component: domain_rank.max(1) - 1,
        row: Reach::between(first as f64, end.saturating_sub(1).max(first) as f64),
        constant,
        locals: HashMap::new(),
        reads: LocalReads::of(kernel),
    };
    let mut found: Vec<(ParamId, Reach)> = Vec::new();
    for (index, param) in kernel.params.iter().enumerate() {
        if !matches!(param.role, ParamRole::Gather { .. }) {
            continue;
        }
        let id = ParamId(index as u32);
        let mut reach: Option<Reach> = None;
        for (_, expr) in kernel.exprs.iter() {
            if let ExprKind::Gather { param, indices } = &expr.kind {
                if *param == id {
                    let row = match indices.first() {
                        Some(&h) => walker.scalar(h),
                        None => Reach::any(),
                    };
                    reach = Some(reach.map_or(row, |r| r.hull(row)));
                }
            }
        }
        // A gather array the body never reads needs no rows.
        found.push((id, reach.unwrap_or(Reach(Some((0.0, -1.0))))));
    }
    found
}

/// Which array indices of a kernel are always within their array, so that a backend may use
/// them without clamping (the clamp would change nothing). Each index is followed back through
/// the expressions and locals it is computed from, as [`gather_rows`] follows rows, with
/// `instanceInGroup().x` below the group's size.
pub struct IndexBounds<'k> {
    walker: Option<Walker<'k>>,
    kernel: &'k Kernel,
}

fn no_constant(_: ParamId) -> Option<f64> {
    None
}

impl<'k> IndexBounds<'k> {
    pub fn new(kernel: &'k Kernel) -> Self {
        IndexBounds {
            walker: None,
            kernel,
        }
    }

    /// Whether integer index `h` always lies in `0..len`.
    pub fn within(&mut self, h: Handle<Expr>, len: u32) -> bool {
        let kernel = self.kernel;
        let walker = self.walker.get_or_insert_with(|| Walker {
            kernel,
            row_component: 0,
            row: Reach::any(),
            constant: &no_constant,
            locals: HashMap::new(),
            reads: LocalReads::of(kernel),
        });
        let integer = kernel.exprs[h]
            .ty
            .value()
            .is_some_and(|v| v.kind.is_integer() && v.width == 1);
        match walker.scalar(h).0 {
            Some((lo, hi)) => integer && lo >= 0.0 && hi <= f64::from(len) - 1.0,
            None => false,
        }
    }
}

/// What a kernel's locals' reads may give: the stores some read sees, and whether some read
/// sees the 0 a local starts with ([`Reaching`]).
struct LocalReads {
    stores: HashMap<Handle<Local>, Stores>,
    /// Per local, whether a read may see the 0 it starts with.
    initial_read: Vec<bool>,
}

impl LocalReads {
    fn of(kernel: &Kernel) -> LocalReads {
        let reaching = Reaching::of(kernel);
        LocalReads {
            stores: stores_of(kernel, &reaching),
            initial_read: (0..kernel.locals.len())
                .map(|l| reaching.initial_read(l))
                .collect(),
        }
    }
}

/// How a local is written: whole values, and values of single components.
#[derive(Default)]
struct Stores {
    whole: Vec<Handle<Expr>>,
    components: Vec<(u8, Handle<Expr>)>,
    /// Written through a field or an array index: not followed.
    opaque: bool,
}

/// The stores of each local that some read sees.
fn stores_of(kernel: &Kernel, reaching: &Reaching) -> HashMap<Handle<Local>, Stores> {
    fn walk(block: &Block, reaching: &Reaching, out: &mut HashMap<Handle<Local>, Stores>) {
        for statement in &block.0 {
            match &statement.stmt {
                Stmt::Store { .. } if !reaching.store_is_seen(statement) => {}
                Stmt::Store { place, value } => {
                    if let PlaceRoot::Local(local) = place.root {
                        let entry = out.entry(local).or_default();
                        match place.path.as_slice() {
                            [] => entry.whole.push(*value),
                            [Access::Component(c)] => entry.components.push((*c, *value)),
                            _ => entry.opaque = true,
                        }
                    }
                }
                Stmt::If { accept, reject, .. } => {
                    walk(accept, reaching, out);
                    walk(reject, reaching, out);
                }
                Stmt::Loop { body, continuing } => {
                    walk(body, reaching, out);
                    walk(continuing, reaching, out);
                }
                // A collective's result is not followed.
                Stmt::Collective(c) => out.entry(c.result).or_default().opaque = true,
                _ => {}
            }
        }
    }
    let mut out = HashMap::new();
    walk(&kernel.body, reaching, &mut out);
    out
}

struct Walker<'k> {
    kernel: &'k Kernel,
    /// The component of `indexof`/`instance()` that is the domain's slowest axis.
    row_component: usize,
    /// The rows of the instances.
    row: Reach,
    constant: &'k dyn Fn(ParamId) -> Option<f64>,
    /// Each local's reach per component; `None` while it is being worked out (a value that
    /// depends on itself is unbounded).
    locals: HashMap<Handle<Local>, Option<Vec<Reach>>>,
    /// The stores the locals' reads see, and which reads may see a local's starting 0 (its
    /// reach then includes 0).
    reads: LocalReads,
}

impl Walker<'_> {
    fn width(&self, h: Handle<Expr>) -> usize {
        self.kernel.exprs[h]
            .ty
            .value()
            .map_or(1, |v| usize::from(v.width))
    }

    fn scalar(&mut self, h: Handle<Expr>) -> Reach {
        self.vector(h).into_iter().next().unwrap_or_else(Reach::any)
    }

    /// The reach of each component of expression `h`: unbounded where its integer type
    /// cannot hold the whole interval (the value would wrap, as `0u - 1u` does).
    fn vector(&mut self, h: Handle<Expr>) -> Vec<Reach> {
        let kind = self.kernel.exprs[h].ty.value().map(|v| v.kind);
        let reach = self.vector_unwrapped(h);
        match kind.and_then(integer_range) {
            Some((min, max)) => reach
                .into_iter()
                .map(|r| {
                    r.with(Reach::point(0.0), |(a, b), _| {
                        if a >= min && b <= max {
                            Reach::between(a, b)
                        } else {
                            Reach::any()
                        }
                    })
                })
                .collect(),
            None => reach,
        }
    }

    /// [`Walker::vector`] before the check of the type's range.
    fn vector_unwrapped(&mut self, h: Handle<Expr>) -> Vec<Reach> {
        let width = self.width(h);
        let every = |r: Reach| vec![r; width];
        match &self.kernel.exprs[h].kind {
            ExprKind::Literal(l) => every(literal(l.kind, l.bits)),
            ExprKind::Constant(p) => every(match (self.constant)(*p) {
                Some(v) => Reach::point(v),
                None => Reach::any(),
            }),
            ExprKind::IndexOf(p)
                if matches!(self.kernel.params[p.0 as usize].role, ParamRole::Output) =>
            {
                self.position(width)
            }
            ExprKind::Instance => self.position(width),
            ExprKind::InstanceInGroup => {
                let threads = self
                    .kernel
                    .group_size
                    .map_or(1, |g| g.iter().product::<u32>());
                let mut lanes = vec![Reach::point(0.0); width];
                if let Some(x) = lanes.first_mut() {
                    *x = Reach::between(0.0, f64::from(threads.max(1) - 1));
                }
                lanes
            }
            ExprKind::Compose(parts) => {
                let parts = parts.clone();
                parts.into_iter().flat_map(|p| self.vector(p)).collect()
            }
            ExprKind::Splat(s) => every(self.scalar(*s)),
            ExprKind::Component { base, index } => {
                let v = self.vector(*base);
                vec![v
                    .get(usize::from(*index))
                    .cloned()
                    .unwrap_or_else(Reach::any)]
            }
            ExprKind::Swizzle { base, pattern } => {
                let pattern = pattern.clone();
                let v = self.vector(*base);
                pattern
                    .iter()
                    .map(|&i| v.get(usize::from(i)).cloned().unwrap_or_else(Reach::any))
                    .collect()
            }
            ExprKind::Load(place) => match (&place.root, place.path.as_slice()) {
                (PlaceRoot::Local(l), []) => self.local(*l, width),
                (PlaceRoot::Local(l), [Access::Component(c)]) => {
                    let all = self.local(*l, 4);
                    vec![all.get(usize::from(*c)).cloned().unwrap_or_else(Reach::any)]
                }
                _ => every(Reach::any()),
            },
            ExprKind::Convert(a) => {
                let a = *a;
                self.vector(a).into_iter().map(Reach::widened).collect()
            }
            ExprKind::Unary {
                op: UnaryOp::Neg,
                arg,
            } => {
                let arg = *arg;
                self.vector(arg)
                    .into_iter()
                    .map(|r| r.with(Reach::point(0.0), |(a, b), _| Reach::between(-b, -a)))
                    .collect()
            }
            ExprKind::Binary { op, left, right } => {
                let (op, left, right) = (*op, *left, *right);
                let integer = self.kernel.exprs[left]
                    .ty
                    .value()
                    .is_some_and(|v| v.kind.is_integer());
                let (l, r) = (self.vector(left), self.vector(right));
                l.iter()
                    .zip(&r)
                    .map(|(a, b)| match integer {
                        true => integer_binary(op, *a, *b),
                        false => binary(op, *a, *b),
                    })
                    .collect()
            }
            ExprKind::Select { accept, reject, .. } => {
                let (accept, reject) = (*accept, *reject);
                let (a, b) = (self.vector(accept), self.vector(reject));
                a.iter().zip(&b).map(|(x, y)| x.hull(*y)).collect()
            }
            ExprKind::Math { fun, args } => {
                let (fun, args) = (*fun, args.clone());
                let values: Vec<Vec<Reach>> = args.iter().map(|&a| self.vector(a)).collect();
                (0..width)
                    .map(|c| {
                        let at = |i: usize| {
                            values
                                .get(i)
                                .and_then(|v| v.get(c).or(v.first()))
                                .cloned()
                                .unwrap_or_else(Reach::any)
                        };
                        match fun {
                            MathFun::Min => at(0)
                                .with(at(1), |(a, b), (c, d)| Reach::between(a.min(c), b.min(d))),
                            MathFun::Max => at(0)
                                .with(at(1), |(a, b), (c, d)| Reach::between(a.max(c), b.max(d))),
                            // clamp(x, lo, hi) = min(max(x, lo), hi)
                            MathFun::Clamp => at(0)
                                .with(at(1), |(a, b), (c, d)| Reach::between(a.max(c), b.max(d)))
                                .with(at(2), |(a, b), (c, d)| Reach::between(a.min(c), b.min(d))),
                            MathFun::Floor | MathFun::Ceil | MathFun::Round => at(0).widened(),
                            _ => Reach::any(),
                        }
                    })
                    .collect()
            }
            _ => every(Reach::any()),
        }
    }

    /// `instance()` or `indexof` of an output: the block's rows on the row component.
    fn position(&self, width: usize) -> Vec<Reach> {
        (0..width)
            .map(|c| {
                if c == self.row_component {
                    self.row
                } else {
                    Reach::any()
                }
            })
            .collect()
    }

    /// A local's reach: the hull of every value stored into it.
    fn local(&mut self, local: Handle<Local>, width: usize) -> Vec<Reach> {
        match self.locals.get(&local) {
            Some(Some(known)) => return known.clone(),
            Some(None) => return vec![Reach::any(); width],
            None => {}
        }
        self.locals.insert(local, None);
        let (whole, components, opaque) = match self.reads.stores.get(&local) {
            Some(s) => (s.whole.clone(), s.components.clone(), s.opaque),
            None => (Vec::new(), Vec::new(), true),
        };
        let reach = if opaque || (whole.is_empty() && components.is_empty()) {
            vec![Reach::any(); width]
        } else {
            let mut reach: Vec<Option<Reach>> = vec![None; width];
            let mut add = |c: usize, r: Reach| {
                if let Some(slot) = reach.get_mut(c) {
                    *slot = Some(slot.map_or(r, |s| s.hull(r)));
                }
            };
            for value in whole {
                for (c, r) in self.vector(value).into_iter().enumerate() {
                    add(c, r);
                }
            }
            for (c, value) in components {
                let r = self.scalar(value);
                add(usize::from(c), r);
            }
            // A component never stored is read uninitialised: anything.
            reach
                .into_iter()
                .map(|r| r.unwrap_or_else(Reach::any))
                .map(|r| match self.reads.initial_read.get(local.index()) {
                    Some(false) => r,
                    _ => r.hull(Reach::point(0.0)),
                })
                .collect()
        };
        self.locals.insert(local, Some(reach.clone()));
        reach
    }
}

/// The values an integer kind holds (`None` for floats and bools).
fn integer_range(kind: ScalarKind) -> Option<(f64, f64)> {
    if !kind.is_integer() {
        return None;
    }
    let bits = 8 * kind.size() as i32;
    Some(if kind.is_signed() {
        (-(2f64.powi(bits - 1)), 2f64.powi(bits - 1) - 1.0)
    } else {
        (0.0, 2f64.powi(bits) - 1.0)
    })
}

fn literal(kind: ScalarKind, bits: u64) -> Reach {
    let value = match kind {
        ScalarKind::F32 => f64::from(f32::from_bits(bits as u32)),
        ScalarKind::F64 => f64::from_bits(bits),
        ScalarKind::Bool => return Reach::any(),
        k if k.is_signed() => bits as i64 as f64,
        _ => bits as f64,
    };
    Reach::point(value)
}

/// [`binary`] on integers: also truncating division and remainder by a positive divisor, `&`
/// with a non-negative operand, and `>>` of a non-negative value by a known count.
fn integer_binary(op: BinaryOp, a: Reach, b: Reach) -> Reach {
    let positive = |(r, _): (f64, f64)| r > 0.0;
    match op {
        BinaryOp::Div => a.with(b, |(p, q), (r, s)| {
            if !positive((r, s)) {
                return Reach::any();
            }
            let corners = [p / r, p / s, q / r, q / s].map(f64::trunc);
            Reach::between(
                corners.iter().copied().fold(f64::INFINITY, f64::min),
                corners.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        }),
        BinaryOp::Rem => a.with(b, |(p, q), (r, s)| {
            if !positive((r, s)) {
                return Reach::any();
            }
            // The result has the dividend's sign, is below the divisor in size, and is the
            // dividend itself when that is below every divisor.
            if p >= 0.0 && q < r {
                Reach::between(p, q)
            } else if p >= 0.0 {
                Reach::between(0.0, q.min(s - 1.0))
            } else if q <= 0.0 {
                Reach::between(p.max(1.0 - s), 0.0)
            } else {
                Reach::between(1.0 - s, s - 1.0)
            }
        }),
        BinaryOp::BitAnd => match (a.0, b.0) {
            (Some((p, q)), Some((r, s))) if p >= 0.0 && r >= 0.0 => Reach::between(0.0, q.min(s)),
            (_, Some((r, s))) if r >= 0.0 => Reach::between(0.0, s),
            (Some((p, q)), _) if p >= 0.0 => Reach::between(0.0, q),
            _ => Reach::any(),
        },
        BinaryOp::Shr => a.with(b, |(p, q), (r, s)| {
            if p < 0.0 || r != s || !(0.0..31.0).contains(&r) {
                return Reach::any();
            }
            let scale = 2f64.powi(r as i32);
            Reach::between((p / scale).floor(), (q / scale).floor())
        }),
        _ => binary(op, a, b),
    }
}

fn binary(op: BinaryOp, a: Reach, b: Reach) -> Reach {
    match op {
        BinaryOp::Add => a.with(b, |(p, q), (r, s)| Reach::between(p + r, q + s)),
        BinaryOp::Sub => a.with(b, |(p, q), (r, s)| Reach::between(p - s, q - r)),
        BinaryOp::Mul => a.with(b, |(p, q), (r, s)| {
            let products = [p * r, p * s, q * r, q * s];
            Reach::between(
                products.iter().copied().fold(f64::INFINITY, f64::min),
                products.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        }),
        _ => Reach::any(),
    }
}
