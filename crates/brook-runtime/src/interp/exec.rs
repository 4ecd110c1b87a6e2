//! Statement execution: each invocation is a small machine with an explicit stack of blocks, so
//! that it can stop at a barrier and resume. A thread group runs its invocations in order up
//! to the next barrier, then resumes them all; an invocation that has returned no longer takes
//! part, so a barrier never hangs. Invocations without a group run one after another in domain
//! order, which is also the order in which scatter writes to one element land. Only the
//! instances of the launch's execution region run; groups are consecutive instances of it.

use super::eval::{write_path, Context, Eval, Memory};
use super::value::Value;
use crate::plan::ExecRegion;
use crate::stream::addressing::unravel;
use brook_ir::{Block, PlaceRoot, Stmt, Type};

enum Frame<'k> {
    Block {
        block: &'k Block,
        next: usize,
    },
    /// A loop whose body (or, after it, `continuing` block) is running above this frame.
    Loop {
        body: &'k Block,
        continuing: &'k Block,
        in_continuing: bool,
    },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    Finished,
    Barrier,
}

/// One invocation.
struct Thread<'k> {
    locals: Vec<Value>,
    pos: Vec<usize>,
    in_group: usize,
    stack: Vec<Frame<'k>>,
    finished: bool,
}

impl<'k> Thread<'k> {
    /// Starts instance `index` (row-major within the region).
    fn start(&mut self, body: &'k Block, zero: &[Value], index: usize, region: &ExecRegion) {
        self.locals.clone_from_slice(zero);
        unravel(index, &region.size, &mut self.pos);
        for (p, origin) in self.pos.iter_mut().zip(&region.origin) {
            *p += origin;
        }
        self.stack.clear();
        self.stack.push(Frame::Block {
            block: body,
            next: 0,
        });
        self.finished = false;
    }
}

/// Runs every invocation of a launch.
pub fn run(ctx: &Context<'_>, mem: &mut Memory<'_>) {
    let zero: Vec<Value> = ctx
        .kernel
        .locals
        .iter()
        .map(|(_, l)| super::value::zero(ctx.module, &l.ty))
        .collect();
    let total: usize = ctx.region.size.iter().product();
    let group = ctx
        .kernel
        .group_size
        .map_or(1, |[x, y, z]| (x as usize) * (y as usize) * (z as usize))
        .max(1);
    let mut shared = zero.clone();
    let mut threads: Vec<Thread<'_>> = (0..group.min(total))
        .map(|_| Thread {
            locals: zero.clone(),
            pos: vec![0; ctx.domain.len()],
            in_group: 0,
            stack: Vec::new(),
            finished: true,
        })
        .collect();
    let mut start = 0;
    while start < total {
        let count = group.min(total - start);
        shared.clone_from_slice(&zero);
        for (i, thread) in threads.iter_mut().take(count).enumerate() {
            thread.start(&ctx.kernel.body, &zero, start + i, &ctx.region);
            thread.in_group = i;
        }
        run_group(ctx, mem, &mut threads[..count], &mut shared);
        start += count;
    }
}

fn run_group<'k>(
    ctx: &'k Context<'_>,
    mem: &mut Memory<'_>,
    threads: &mut [Thread<'k>],
    shared: &mut [Value],
) {
    loop {
        let mut waiting = false;
        for thread in threads.iter_mut().filter(|t| !t.finished) {
            match step_until_stop(ctx, mem, thread, shared) {
                Stop::Finished => thread.finished = true,
                Stop::Barrier => waiting = true,
            }
        }
        if !waiting {
            return;
        }
    }
}

fn eval_view<'e, 'a>(
    ctx: &'e Context<'a>,
    mem: &'e Memory<'a>,
    thread: &'e Thread<'_>,
    shared: &'e [Value],
) -> Eval<'e, 'a> {
    Eval {
        ctx,
        mem,
        locals: &thread.locals,
        shared,
        pos: &thread.pos,
        in_group: thread.in_group,
    }
}

fn step_until_stop<'k>(
    ctx: &'k Context<'_>,
    mem: &mut Memory<'_>,
    thread: &mut Thread<'k>,
    shared: &mut [Value],
) -> Stop {
    loop {
        let Some(top) = thread.stack.last_mut() else {
            return Stop::Finished;
        };
        let statement = match top {
            Frame::Block { block, next } => {
                let Some(statement) = block.0.get(*next) else {
                    thread.stack.pop();
                    continue;
                };
                *next += 1;
                statement
            }
            Frame::Loop {
                body,
                continuing,
                in_continuing,
            } => {
                let block = if *in_continuing { *body } else { *continuing };
                *in_continuing = !*in_continuing;
                thread.stack.push(Frame::Block { block, next: 0 });
                continue;
            }
        };
        match &statement.stmt {
            Stmt::Store { place, value } => store(ctx, mem, thread, shared, place, *value),
            Stmt::If {
                cond,
                accept,
                reject,
            } => {
                let taken = eval_view(ctx, mem, thread, shared).num(*cond).lanes[0] != 0;
                let block = if taken { accept } else { reject };
                thread.stack.push(Frame::Block { block, next: 0 });
            }
            Stmt::Loop { body, continuing } => {
                thread.stack.push(Frame::Loop {
                    body,
                    continuing,
                    in_continuing: false,
                });
                thread.stack.push(Frame::Block {
                    block: body,
                    next: 0,
                });
            }
            Stmt::Break => {
                while let Some(frame) = thread.stack.pop() {
                    if matches!(frame, Frame::Loop { .. }) {
                        break;
                    }
                }
            }
            Stmt::Continue => {
                while let Some(Frame::Block { .. }) = thread.stack.last() {
                    thread.stack.pop();
                }
                if let Some(Frame::Loop {
                    continuing,
                    in_continuing,
                    ..
                }) = thread.stack.last_mut()
                {
                    *in_continuing = true;
                    let block = *continuing;
                    thread.stack.push(Frame::Block { block, next: 0 });
                }
            }
            Stmt::Return => {
                thread.stack.clear();
                return Stop::Finished;
            }
            Stmt::Barrier => return Stop::Barrier,
            // Expanded into stores and barriers before the launch runs (`bind`, `single`).
            Stmt::Collective(_) => {}
        }
    }
}

fn store(
    ctx: &Context<'_>,
    mem: &mut Memory<'_>,
    thread: &mut Thread<'_>,
    shared: &mut [Value],
    place: &brook_ir::Place,
    value: brook_ir::Handle<brook_ir::Expr>,
) {
    let view = eval_view(ctx, mem, thread, shared);
    let new = view.eval(value);
    let steps = view.steps(place);
    match &place.root {
        PlaceRoot::Local(l) => {
            let slot = if ctx.kernel.locals[*l].shared {
                &mut shared[l.index()]
            } else {
                &mut thread.locals[l.index()]
            };
            write_path(slot, &steps, new);
        }
        root => {
            let Some((p, offset)) = view.stream_offset(root, false) else {
                return; // A scatter out of range: dropped.
            };
            let ty = &ctx.kernel.params[p.0 as usize].ty;
            let Some(buffer) = mem.outputs[p.0 as usize].as_ref().map(|o| o.buffer) else {
                return;
            };
            let element = &mut mem.buffers[buffer][offset..];
            if steps.is_empty() {
                encode(ctx, ty, &new, element);
            } else {
                let mut current = ctx.layouts.decode(ctx.module, ty, element);
                write_path(&mut current, &steps, new);
                encode(ctx, ty, &current, element);
            }
        }
    }
}

fn encode(ctx: &Context<'_>, ty: &Type, value: &Value, out: &mut [u8]) {
    match value {
        Value::Num(n) => super::value::encode_num(n, out),
        _ => ctx.layouts.encode(ctx.module, ty, value, out),
    }
}
