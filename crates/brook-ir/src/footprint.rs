//! Which rows of its gather arrays an instance may read, relative to its own row.
//!
//! A device group (the runtime's `group` module) gives each device a block of the
//! domain's rows; a stencil reads a few rows around its own, and copying only those (the
//! halo) instead of the whole array is what makes it scale. [`gather_rows`] follows each
//! gather's row index (its slowest-axis index) back through the expressions and the locals it
//! was computed from, as a union of intervals that are either relative to the instance's row
//! on the domain's slowest axis (`indexof(out).y + 1.0f`) or absolute (`0`, a constant
//! parameter's value). Anything it cannot bound (a loop counter, a gathered value, a product
//! with the position) makes the whole array needed. `min`, `max`, `clamp` and `?:` give one
//! of their operands, so their reach is the union of their operands'.
//!
//! The intervals bound the index value before a gather rounds (`floor(f + 0.25)`) and clamps
//! it; [`RowReach::rows`] widens them by a row each side and clamps them to the array.

use crate::arena::Handle;
use crate::expr::{Access, BinaryOp, Expr, ExprKind, MathFun, PlaceRoot, UnaryOp};
use crate::module::{Kernel, Local, ParamId, ParamRole};
use crate::stmt::{Block, Stmt};
use crate::ScalarKind;
use std::collections::HashMap;

/// Indices beyond this are left unbounded (integer arithmetic would wrap).
const LIMIT: f64 = 2_147_483_648.0;
/// Interval pieces kept per value before they merge into their hulls.
const MAX_PIECES: usize = 8;

/// An interval of values, relative to the instance's row or absolute.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Piece {
    pub relative: bool,
    pub lo: f64,
    pub hi: f64,
}

/// Where a scalar lies: in one of the pieces, or anywhere (`None`).
#[derive(Clone, Debug, PartialEq)]
pub struct RowReach(pub Option<Vec<Piece>>);

impl RowReach {
    fn any() -> RowReach {
        RowReach(None)
    }

    fn piece(relative: bool, lo: f64, hi: f64) -> RowReach {
        if lo.is_nan() || hi.is_nan() || lo.abs() > LIMIT || hi.abs() > LIMIT {
            return RowReach::any();
        }
        RowReach(Some(vec![Piece { relative, lo, hi }]))
    }

    fn union(&self, other: &RowReach) -> RowReach {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => {
                let mut pieces = a.clone();
                pieces.extend_from_slice(b);
                RowReach(Some(merged(pieces)))
            }
            _ => RowReach::any(),
        }
    }

    /// Each pair of pieces through `f` (`None`: unbounded).
    fn pairwise(&self, other: &RowReach, f: impl Fn(Piece, Piece) -> Option<Piece>) -> RowReach {
        let (Some(a), Some(b)) = (&self.0, &other.0) else {
            return RowReach::any();
        };
        let mut out = RowReach(Some(Vec::new()));
        for &x in a {
            for &y in b {
                let next = match f(x, y) {
                    Some(p) => RowReach::piece(p.relative, p.lo, p.hi),
                    None => RowReach::any(),
                };
                out = out.union(&next);
            }
        }
        out
    }

    fn each(&self, f: impl Fn(Piece) -> Option<Piece>) -> RowReach {
        self.pairwise(&RowReach::piece(false, 0.0, 0.0), |x, _| f(x))
    }

    /// The rows `[first, end)` of an array of `rows` rows that instances on the domain rows
    /// `[block_start, block_end)` may read (`None`: every row).
    pub fn rows(
        &self,
        block_start: usize,
        block_end: usize,
        rows: usize,
    ) -> Option<Vec<(usize, usize)>> {
        let pieces = self.0.as_ref()?;
        if rows == 0 || block_start >= block_end {
            return Some(Vec::new());
        }
        // Float rows lose exactness past 2^24; widen with them.
        let margin = 1.0 + (block_end >> 22) as f64;
        let last = (rows - 1) as f64;
        let mut found: Vec<(usize, usize)> = pieces
            .iter()
            .map(|p| {
                let (base_lo, base_hi) = if p.relative {
                    (block_start as f64, (block_end - 1) as f64)
                } else {
                    (0.0, 0.0)
                };
                let lo = (base_lo + p.lo - margin).floor().clamp(0.0, last);
                let hi = (base_hi + p.hi + margin).ceil().clamp(0.0, last);
                (lo as usize, hi as usize + 1)
            })
            .collect();
        found.sort_unstable();
        let mut joined: Vec<(usize, usize)> = Vec::new();
        for (s, e) in found {
            match joined.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => joined.push((s, e)),
            }
        }
        Some(joined)
    }
}

/// Overlapping pieces of a kind join; past [`MAX_PIECES`], each kind becomes its hull.
fn merged(mut pieces: Vec<Piece>) -> Vec<Piece> {
    pieces.sort_by(|a, b| {
        (a.relative, a.lo)
            .partial_cmp(&(b.relative, b.lo))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut out: Vec<Piece> = Vec::new();
    for p in pieces {
        match out.last_mut() {
            Some(last) if last.relative == p.relative && p.lo <= last.hi + 1.0 => {
                last.hi = last.hi.max(p.hi);
            }
            _ => out.push(p),
        }
    }
    if out.len() > MAX_PIECES {
        let hull = |relative: bool| {
            let of_kind: Vec<&Piece> = out.iter().filter(|p| p.relative == relative).collect();
            (!of_kind.is_empty()).then(|| Piece {
                relative,
                lo: of_kind.iter().map(|p| p.lo).fold(f64::INFINITY, f64::min),
                hi: of_kind
                    .iter()
                    .map(|p| p.hi)
                    .fold(f64::NEG_INFINITY, f64::max),
            })
        };
        out = [hull(false), hull(true)].into_iter().flatten().collect();
    }
    out
}

/// For each gather parameter, the rows its gathers may read relative to the instance's row on
/// the slowest axis of a domain of `domain_rank` axes. `constant` gives a constant
/// parameter's value where it is a number.
pub fn gather_rows(
    kernel: &Kernel,
    domain_rank: usize,
    constant: &dyn Fn(ParamId) -> Option<f64>,
) -> Vec<(ParamId, RowReach)> {
    let mut walker = Walker {
        kernel,
        row_component: domain_rank.max(1) - 1,
        constant,
        stores: stores_of(kernel),
        locals: HashMap::new(),
    };
    let mut found: Vec<(ParamId, RowReach)> = Vec::new();
    for (index, param) in kernel.params.iter().enumerate() {
        if !matches!(param.role, ParamRole::Gather { .. }) {
            continue;
        }
        let id = ParamId(index as u32);
        let mut reach = RowReach(Some(Vec::new()));
        for (_, expr) in kernel.exprs.iter() {
            if let ExprKind::Gather { param, indices } = &expr.kind {
                if *param == id {
                    let row = match indices.first() {
                        Some(&h) => walker.scalar(h),
                        None => RowReach::any(),
                    };
                    reach = reach.union(&row);
                }
            }
        }
        found.push((id, reach));
    }
    found
}

/// How a local is written: whole values, and values of single components.
#[derive(Default)]
struct Stores {
    whole: Vec<Handle<Expr>>,
    components: Vec<(u8, Handle<Expr>)>,
    /// Written through a field or an array index: not followed.
    opaque: bool,
}

fn stores_of(kernel: &Kernel) -> HashMap<Handle<Local>, Stores> {
    fn walk(block: &Block, out: &mut HashMap<Handle<Local>, Stores>) {
        for statement in &block.0 {
            match &statement.stmt {
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
                    walk(accept, out);
                    walk(reject, out);
                }
                Stmt::Loop { body, continuing } => {
                    walk(body, out);
                    walk(continuing, out);
                }
                _ => {}
            }
        }
    }
    let mut out = HashMap::new();
    walk(&kernel.body, &mut out);
    out
}

struct Walker<'k> {
    kernel: &'k Kernel,
    /// The component of `indexof`/`instance()` that is the domain's slowest axis.
    row_component: usize,
    constant: &'k dyn Fn(ParamId) -> Option<f64>,
    stores: HashMap<Handle<Local>, Stores>,
    /// Each local's reach per component; `None` while it is being worked out (a value that
    /// depends on itself is unbounded).
    locals: HashMap<Handle<Local>, Option<Vec<RowReach>>>,
}

impl Walker<'_> {
    fn width(&self, h: Handle<Expr>) -> usize {
        self.kernel.exprs[h]
            .ty
            .value()
            .map_or(1, |v| usize::from(v.width))
    }

    fn scalar(&mut self, h: Handle<Expr>) -> RowReach {
        self.vector(h)
            .into_iter()
            .next()
            .unwrap_or_else(RowReach::any)
    }

    /// The reach of each component of expression `h`.
    fn vector(&mut self, h: Handle<Expr>) -> Vec<RowReach> {
        let width = self.width(h);
        let every = |r: RowReach| vec![r; width];
        match &self.kernel.exprs[h].kind {
            ExprKind::Literal(l) => every(literal(l.kind, l.bits)),
            ExprKind::Constant(p) => every(match (self.constant)(*p) {
                Some(v) => RowReach::piece(false, v, v),
                None => RowReach::any(),
            }),
            ExprKind::IndexOf(p)
                if matches!(self.kernel.params[p.0 as usize].role, ParamRole::Output) =>
            {
                self.position(width)
            }
            ExprKind::Instance => self.position(width),
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
                    .unwrap_or_else(RowReach::any)]
            }
            ExprKind::Swizzle { base, pattern } => {
                let pattern = pattern.clone();
                let v = self.vector(*base);
                pattern
                    .iter()
                    .map(|&i| v.get(usize::from(i)).cloned().unwrap_or_else(RowReach::any))
                    .collect()
            }
            ExprKind::Load(place) => match (&place.root, place.path.as_slice()) {
                (PlaceRoot::Local(l), []) => self.local(*l, width),
                (PlaceRoot::Local(l), [Access::Component(c)]) => {
                    let all = self.local(*l, 4);
                    vec![all
                        .get(usize::from(*c))
                        .cloned()
                        .unwrap_or_else(RowReach::any)]
                }
                _ => every(RowReach::any()),
            },
            ExprKind::Convert(a) => {
                let a = *a;
                self.vector(a).iter().map(widened).collect()
            }
            ExprKind::Unary {
                op: UnaryOp::Neg,
                arg,
            } => {
                let arg = *arg;
                self.vector(arg)
                    .iter()
                    .map(|r| {
                        r.each(|p| {
                            (!p.relative).then_some(Piece {
                                relative: false,
                                lo: -p.hi,
                                hi: -p.lo,
                            })
                        })
                    })
                    .collect()
            }
            ExprKind::Binary { op, left, right } => {
                let (op, left, right) = (*op, *left, *right);
                let (l, r) = (self.vector(left), self.vector(right));
                l.iter().zip(&r).map(|(a, b)| binary(op, a, b)).collect()
            }
            ExprKind::Select { accept, reject, .. } => {
                let (accept, reject) = (*accept, *reject);
                let (a, b) = (self.vector(accept), self.vector(reject));
                a.iter().zip(&b).map(|(x, y)| x.union(y)).collect()
            }
            ExprKind::Math { fun, args } => {
                let (fun, args) = (*fun, args.clone());
                let values: Vec<Vec<RowReach>> = args.iter().map(|&a| self.vector(a)).collect();
                (0..width)
                    .map(|c| {
                        let at = |i: usize| {
                            values
                                .get(i)
                                .and_then(|v| v.get(c).or(v.first()))
                                .cloned()
                                .unwrap_or_else(RowReach::any)
                        };
                        match fun {
                            MathFun::Min | MathFun::Max => at(0).union(&at(1)),
                            MathFun::Clamp => at(0).union(&at(1)).union(&at(2)),
                            MathFun::Floor | MathFun::Ceil | MathFun::Round => widened(&at(0)),
                            _ => RowReach::any(),
                        }
                    })
                    .collect()
            }
            _ => every(RowReach::any()),
        }
    }

    /// `instance()` or `indexof` of an output: relative on the row component only.
    fn position(&self, width: usize) -> Vec<RowReach> {
        (0..width)
            .map(|c| {
                if c == self.row_component {
                    RowReach::piece(true, 0.0, 0.0)
                } else {
                    RowReach::any()
                }
            })
            .collect()
    }

    /// A local's reach: the union of every value stored into it.
    fn local(&mut self, local: Handle<Local>, width: usize) -> Vec<RowReach> {
        match self.locals.get(&local) {
            Some(Some(known)) => return known.clone(),
            Some(None) => return vec![RowReach::any(); width],
            None => {}
        }
        self.locals.insert(local, None);
        let (whole, components, opaque) = match self.stores.get(&local) {
            Some(s) => (s.whole.clone(), s.components.clone(), s.opaque),
            None => (Vec::new(), Vec::new(), true),
        };
        let reach = if opaque || (whole.is_empty() && components.is_empty()) {
            vec![RowReach::any(); width]
        } else {
            let mut reach = vec![RowReach(Some(Vec::new())); width];
            for value in whole {
                let v = self.vector(value);
                for (c, r) in reach.iter_mut().enumerate() {
                    *r = r.union(v.get(c).unwrap_or(&RowReach::any()));
                }
            }
            for (c, value) in components {
                let v = self.scalar(value);
                if let Some(r) = reach.get_mut(usize::from(c)) {
                    *r = r.union(&v);
                }
            }
            reach
        };
        self.locals.insert(local, Some(reach.clone()));
        reach
    }
}

fn literal(kind: ScalarKind, bits: u64) -> RowReach {
    let value = match kind {
        ScalarKind::F32 => f64::from(f32::from_bits(bits as u32)),
        ScalarKind::F64 => f64::from_bits(bits),
        ScalarKind::Bool => return RowReach::any(),
        k if k.is_signed() => bits as i64 as f64,
        _ => bits as f64,
    };
    RowReach::piece(false, value, value)
}

/// A rounding or a conversion moves a value by less than one.
fn widened(r: &RowReach) -> RowReach {
    r.each(|p| {
        Some(Piece {
            lo: p.lo - 1.0,
            hi: p.hi + 1.0,
            ..p
        })
    })
}

fn binary(op: BinaryOp, a: &RowReach, b: &RowReach) -> RowReach {
    match op {
        BinaryOp::Add => a.pairwise(b, |x, y| {
            (!(x.relative && y.relative)).then_some(Piece {
                relative: x.relative || y.relative,
                lo: x.lo + y.lo,
                hi: x.hi + y.hi,
            })
        }),
        // The row cancels in a difference of two relative values.
        BinaryOp::Sub => a.pairwise(b, |x, y| {
            (x.relative || !y.relative).then_some(Piece {
                relative: x.relative && !y.relative,
                lo: x.lo - y.hi,
                hi: x.hi - y.lo,
            })
        }),
        BinaryOp::Mul => a.pairwise(b, |x, y| {
            (!x.relative && !y.relative).then(|| {
                let products = [x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi];
                Piece {
                    relative: false,
                    lo: products.iter().copied().fold(f64::INFINITY, f64::min),
                    hi: products.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                }
            })
        }),
        _ => RowReach::any(),
    }
}
