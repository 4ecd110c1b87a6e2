//! Expression evaluation and place access for one invocation.

use super::ops;
use super::value::{decode_num, Layouts, Num, Value};
use crate::iter::IterStream;
use crate::plan::ExecRegion;
use crate::stream::addressing::Addressing;
use brook_ir::launch::{clamp_index, resize_index, scatter_index};
use brook_ir::{
    Access, Expr, ExprKind, Handle, Kernel, Local, Module, ParamId, Place, PlaceRoot, ScalarKind,
    Type, ValueType,
};

/// A stream argument's bytes, shape and addressing.
#[derive(Clone)]
pub struct StreamData<'a> {
    pub bytes: &'a [u8],
    /// Normalized (inputs, outputs) or padded to the array rank (gathers, scatters).
    pub shape: Vec<usize>,
    pub element_size: usize,
    pub addressing: Addressing,
}

/// A read-only argument: stored elements or an iterator.
#[derive(Clone)]
pub enum InputData<'a> {
    Stream(StreamData<'a>),
    Iterator { iter: IterStream, shape: Vec<usize> },
}

impl InputData<'_> {
    pub fn shape(&self) -> &[usize] {
        match self {
            InputData::Stream(data) => &data.shape,
            InputData::Iterator { shape, .. } => shape,
        }
    }
}

/// What does not change during a launch.
pub struct Context<'a> {
    pub module: &'a Module,
    pub kernel: &'a Kernel,
    pub layouts: Layouts,
    pub domain: Vec<usize>,
    /// The instances that run.
    pub region: ExecRegion,
    /// Read-only streams and constants, by parameter.
    pub inputs: Vec<Option<InputData<'a>>>,
    pub constants: Vec<Option<Value>>,
}

/// A written stream: its buffer (an index into [`Memory::buffers`]), shape and addressing.
pub struct OutputData {
    pub buffer: usize,
    pub shape: Vec<usize>,
    pub element_size: usize,
    pub addressing: Addressing,
}

/// The written buffers of a launch, and the written streams by parameter (two views of one
/// buffer share it).
pub struct Memory<'a> {
    pub buffers: Vec<&'a mut [u8]>,
    pub outputs: Vec<Option<OutputData>>,
}

/// One invocation's view while evaluating.
pub struct Eval<'e, 'a> {
    pub ctx: &'e Context<'a>,
    pub mem: &'e Memory<'a>,
    pub locals: &'e [Value],
    pub shared: &'e [Value],
    /// The position in the domain, per axis (slowest first).
    pub pos: &'e [usize],
    pub in_group: usize,
}

/// A place with its indices evaluated.
pub enum Step {
    Field(usize),
    Index(usize),
    Component(usize),
}

/// Decodes one element of type `ty` at byte `offset`.
pub fn decode(ctx: &Context<'_>, ty: &Type, bytes: &[u8], offset: usize) -> Value {
    match ty {
        Type::Value(v) => Value::Num(decode_num(*v, &bytes[offset..])),
        _ => ctx.layouts.decode(ctx.module, ty, &bytes[offset..]),
    }
}

/// The element of an input at position `at` (of the input's shape).
pub fn read_input(ctx: &Context<'_>, data: &InputData<'_>, ty: &Type, at: &[usize]) -> Value {
    match data {
        InputData::Stream(data) => {
            let index = data.addressing.element(at);
            decode(ctx, ty, data.bytes, index * data.element_size)
        }
        InputData::Iterator { iter, .. } => {
            let value = iter.value(at);
            let mut n = Num::zero(ValueType::vector(ScalarKind::F32, iter.width() as u8));
            for (lane, v) in n.lanes.iter_mut().zip(value) {
                *lane = u64::from(v.to_bits());
            }
            Value::Num(n)
        }
    }
}

impl Eval<'_, '_> {
    fn expr(&self, h: Handle<Expr>) -> &Expr {
        &self.ctx.kernel.exprs[h]
    }

    pub fn num(&self, h: Handle<Expr>) -> Num {
        match self.eval(h) {
            Value::Num(n) => n,
            Value::Composite(_) => Num::zero(ValueType::scalar(ScalarKind::I32)),
        }
    }

    pub fn eval(&self, h: Handle<Expr>) -> Value {
        let expr = self.expr(h);
        match &expr.kind {
            ExprKind::Literal(lit) => Value::Num(Num::from_literal(*lit)),
            ExprKind::Compose(parts) => match &expr.ty {
                Type::Value(ty) => {
                    let mut n = Num::zero(*ty);
                    for (i, p) in parts.iter().enumerate() {
                        n.lanes[i] = self.num(*p).lanes[0];
                    }
                    Value::Num(n)
                }
                _ => Value::Composite(parts.iter().map(|p| self.eval(*p)).collect()),
            },
            ExprKind::Splat(a) => {
                let a = self.num(*a);
                let ty = expr.ty.value().unwrap_or(a.ty);
                Value::Num(Num {
                    ty,
                    lanes: [a.lanes[0]; 4],
                })
            }
            ExprKind::Load(place) => self.load(place),
            ExprKind::Input(p) => self.input(*p),
            ExprKind::Constant(p) => self.ctx.constants[p.0 as usize]
                .clone()
                .unwrap_or_else(|| super::value::zero(self.ctx.module, &expr.ty)),
            ExprKind::Gather { param, indices } => self.gather(*param, indices),
            ExprKind::Field { base, index } => match self.eval(*base) {
                Value::Composite(mut fields) => fields.swap_remove(*index as usize),
                other => other,
            },
            ExprKind::Component { base, index } => {
                let b = self.num(*base);
                Value::Num(Num {
                    ty: ValueType::scalar(b.ty.kind),
                    lanes: [b.lanes[usize::from(*index)], 0, 0, 0],
                })
            }
            ExprKind::Swizzle { base, pattern } => {
                let b = self.num(*base);
                let mut n = Num::zero(ValueType::vector(b.ty.kind, pattern.len() as u8));
                for (i, &c) in pattern.iter().enumerate() {
                    n.lanes[i] = b.lanes[usize::from(c)];
                }
                Value::Num(n)
            }
            ExprKind::Unary { op, arg } => Value::Num(ops::unary(*op, &self.num(*arg))),
            ExprKind::Binary { op, left, right } => {
                Value::Num(ops::binary(*op, &self.num(*left), &self.num(*right)))
            }
            ExprKind::Select {
                cond,
                accept,
                reject,
            } => {
                let c = self.num(*cond);
                if c.ty.width == 1 {
                    return if c.lanes[0] != 0 {
                        self.eval(*accept)
                    } else {
                        self.eval(*reject)
                    };
                }
                // A vector condition (BrookGPU's Cg form) picks each component.
                let (mut a, r) = (self.num(*accept), self.num(*reject));
                for (i, lane) in a.lanes.iter_mut().enumerate().take(usize::from(c.ty.width)) {
                    if c.lanes[i] == 0 {
                        *lane = r.lanes[i];
                    }
                }
                Value::Num(a)
            }
            ExprKind::Convert(a) => {
                let kind = expr.ty.value().map_or(ScalarKind::I32, |v| v.kind);
                Value::Num(ops::convert(&self.num(*a), kind))
            }
            ExprKind::Math { fun, args } => {
                let args: Vec<Num> = args.iter().map(|a| self.num(*a)).collect();
                Value::Num(ops::math(*fun, &args))
            }
            ExprKind::IndexOf(p) => Value::Num(self.index_of(*p)),
            ExprKind::Instance => Value::Num(position_vector(self.pos, ScalarKind::I32)),
            ExprKind::InstanceInGroup => {
                let mut n = Num::zero(ValueType::vector(ScalarKind::I32, 4));
                n.lanes[0] = self.in_group as u64;
                Value::Num(n)
            }
        }
    }

    /// The element position of an input for the current position, after implicit resize.
    fn input_indices(&self, shape: &[usize]) -> Vec<usize> {
        self.pos
            .iter()
            .zip(shape)
            .zip(&self.ctx.domain)
            .map(|((&i, &n_in), &n_out)| resize_index(i, n_in, n_out))
            .collect()
    }

    fn input(&self, p: ParamId) -> Value {
        let ty = &self.ctx.kernel.params[p.0 as usize].ty;
        let Some(data) = &self.ctx.inputs[p.0 as usize] else {
            return super::value::zero(self.ctx.module, ty);
        };
        if data.shape() == self.ctx.domain {
            return read_input(self.ctx, data, ty, self.pos);
        }
        read_input(self.ctx, data, ty, &self.input_indices(data.shape()))
    }

    fn decode(&self, ty: &Type, bytes: &[u8], offset: usize) -> Value {
        decode(self.ctx, ty, bytes, offset)
    }

    fn gather(&self, param: ParamId, indices: &[Handle<Expr>]) -> Value {
        let ty = &self.ctx.kernel.params[param.0 as usize].ty;
        let Some(InputData::Stream(data)) = &self.ctx.inputs[param.0 as usize] else {
            return super::value::zero(self.ctx.module, ty);
        };
        let clamped: Vec<usize> = indices
            .iter()
            .zip(&data.shape)
            .map(|(h, &extent)| clamp_index(self.num(*h).index(0), extent))
            .collect();
        let index = data.addressing.element(&clamped);
        self.decode(ty, data.bytes, index * data.element_size)
    }

    fn index_of(&self, p: ParamId) -> Num {
        match &self.ctx.inputs[p.0 as usize] {
            Some(data) => position_vector(&self.input_indices(data.shape()), ScalarKind::F32),
            None => position_vector(self.pos, ScalarKind::F32),
        }
    }

    /// Evaluates the indices of a place's path.
    pub fn steps(&self, place: &Place) -> Vec<Step> {
        let mut ty = self.root_type(&place.root).clone();
        let mut steps = Vec::with_capacity(place.path.len());
        for access in &place.path {
            match access {
                Access::Field(f) => {
                    steps.push(Step::Field(*f as usize));
                    if let Type::Struct(id) = ty {
                        ty = self.ctx.module.structs[id.0 as usize].fields[*f as usize]
                            .ty
                            .clone();
                    }
                }
                Access::Component(c) => steps.push(Step::Component(usize::from(*c))),
                Access::Index(h) => {
                    let (len, elem) = match ty {
                        Type::Array { elem, len } => (len as usize, *elem),
                        other => (1, other),
                    };
                    steps.push(Step::Index(clamp_index(self.num(*h).index(0), len)));
                    ty = elem;
                }
            }
        }
        steps
    }

    fn root_type(&self, root: &PlaceRoot) -> &Type {
        match root {
            PlaceRoot::Local(l) => &self.ctx.kernel.locals[*l].ty,
            PlaceRoot::Output(p) | PlaceRoot::Scatter { param: p, .. } => {
                &self.ctx.kernel.params[p.0 as usize].ty
            }
        }
    }

    /// The element a written stream's place refers to: its byte offset, or `None` for a scatter
    /// out of range (dropped on store; loads read the clamped element).
    pub fn stream_offset(&self, root: &PlaceRoot, clamp: bool) -> Option<(ParamId, usize)> {
        let (p, indices) = match root {
            PlaceRoot::Local(_) => return None,
            PlaceRoot::Output(p) => (*p, None),
            PlaceRoot::Scatter { param, indices } => (*param, Some(indices)),
        };
        let output = self.mem.outputs[p.0 as usize].as_ref()?;
        let (shape, element_size) = (&output.shape, output.element_size);
        let index = match indices {
            None => output.addressing.element(self.pos),
            Some(indices) => {
                let mut at = Vec::with_capacity(indices.len());
                for (h, &extent) in indices.iter().zip(shape) {
                    let i = self.num(*h).index(0);
                    at.push(if clamp {
                        clamp_index(i, extent)
                    } else {
                        scatter_index(i, extent)?
                    });
                }
                output.addressing.element(&at)
            }
        };
        Some((p, index * element_size))
    }

    pub fn local_slot(&self, l: Handle<Local>) -> &Value {
        if self.ctx.kernel.locals[l].shared {
            &self.shared[l.index()]
        } else {
            &self.locals[l.index()]
        }
    }

    fn load(&self, place: &Place) -> Value {
        let steps = self.steps(place);
        let root = match &place.root {
            PlaceRoot::Local(l) => self.local_slot(*l).clone(),
            root => {
                let ty = self.root_type(root);
                match self.stream_offset(root, true) {
                    Some((p, offset)) => match &self.mem.outputs[p.0 as usize] {
                        Some(output) => self.decode(ty, self.mem.buffers[output.buffer], offset),
                        None => super::value::zero(self.ctx.module, ty),
                    },
                    None => super::value::zero(self.ctx.module, ty),
                }
            }
        };
        read_path(root, &steps)
    }
}

/// A position (slowest axis first) as a 4-vector, fastest axis in `.x`.
fn position_vector(pos: &[usize], kind: ScalarKind) -> Num {
    let mut n = Num::zero(ValueType::vector(kind, 4));
    for (lane, &p) in pos.iter().rev().take(4).enumerate() {
        n.lanes[lane] = match kind {
            ScalarKind::F32 => u64::from((p as f32).to_bits()),
            _ => p as u64,
        };
    }
    n
}

fn read_path(mut value: Value, steps: &[Step]) -> Value {
    for step in steps {
        value = match (value, step) {
            (Value::Composite(mut items), Step::Field(i) | Step::Index(i)) => items.swap_remove(*i),
            (Value::Num(n), Step::Component(c)) => Value::Num(Num {
                ty: ValueType::scalar(n.ty.kind),
                lanes: [n.lanes[*c], 0, 0, 0],
            }),
            (other, _) => other,
        };
    }
    value
}

/// Writes `new` into `target` at the path.
pub fn write_path(target: &mut Value, steps: &[Step], new: Value) {
    let Some((first, rest)) = steps.split_first() else {
        *target = new;
        return;
    };
    match (target, first) {
        (Value::Composite(items), Step::Field(i) | Step::Index(i)) => {
            if let Some(item) = items.get_mut(*i) {
                write_path(item, rest, new);
            }
        }
        (Value::Num(n), Step::Component(c)) => {
            if let Value::Num(v) = new {
                n.lanes[*c] = v.lanes[0];
            }
        }
        _ => {}
    }
}
