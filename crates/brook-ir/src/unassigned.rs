//! Which locals a read may find unassigned, holding the 0 every local starts with: a
//! definite-assignment walk over the structured statements.
//!
//! Backends zero each local at the start of every instance; a local whose every read follows
//! a store of the whole local on every path needs no zero (the temporaries of inlined
//! subkernel calls: thousands in a large kernel, whose zeroing NVIDIA's Vulkan compiler paid
//! for in minutes). The walk keeps the set of locals stored whole on every path so far: an
//! `if` leaves the locals both of its arms store (of the arms that reach its end); a loop's
//! body starts from what was stored before the loop (what a trip stores only adds to that),
//! and after the loop hold what every `break` carries. A store of a part (a component, a
//! field, an element) leaves the rest at 0, so it does not count. A thread group's `shared`
//! locals are written by other threads: they are always zeroed ([`Unassigned::of`]).
//!
//! Cheaper than [`crate::reaching`] (a bit per local, each loop walked once), so it runs on
//! every kernel a backend compiles.

use crate::{Block, Handle, Kernel, PlaceRoot, Stmt};

/// Per local, whether some read may find it unassigned.
pub struct Unassigned {
    read_unassigned: Vec<bool>,
}

impl Unassigned {
    /// Works out which of `kernel`'s locals a read may find unassigned.
    pub fn of(kernel: &Kernel) -> Unassigned {
        let mut walk = Walk {
            kernel,
            read_unassigned: kernel.locals.iter().map(|(_, l)| l.shared).collect(),
        };
        walk.block(&kernel.body, Assigned::none(kernel.locals.len()));
        Unassigned {
            read_unassigned: walk.read_unassigned,
        }
    }

    /// Whether some read of local `index` may see its starting 0: the local must be zeroed.
    pub fn needs_zero(&self, index: usize) -> bool {
        self.read_unassigned.get(index).copied().unwrap_or(true)
    }
}

/// The locals stored whole on every path to a point, a bit each.
#[derive(Clone, PartialEq, Eq, Debug)]
struct Assigned(Vec<u64>);

impl Assigned {
    fn none(locals: usize) -> Assigned {
        Assigned(vec![0; locals.div_ceil(64)])
    }

    fn insert(&mut self, local: usize) {
        self.0[local / 64] |= 1 << (local % 64);
    }

    fn contains(&self, local: usize) -> bool {
        self.0[local / 64] >> (local % 64) & 1 == 1
    }

    /// The locals stored on both paths.
    fn meet(mut self, other: &Assigned) -> Assigned {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a &= b;
        }
        self
    }
}

/// Where the paths through a block go, each with what it has stored: past the block's end,
/// out of the loop around it, on to that loop's continuing part.
#[derive(Default)]
struct Flow {
    end: Option<Assigned>,
    breaks: Option<Assigned>,
    continues: Option<Assigned>,
}

/// What both of two points (either of which may be unreachable) have stored.
fn meet(a: Option<Assigned>, b: Option<Assigned>) -> Option<Assigned> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.meet(&b)),
        (a, None) => a,
        (None, b) => b,
    }
}

struct Walk<'k> {
    kernel: &'k Kernel,
    read_unassigned: Vec<bool>,
}

impl Walk<'_> {
    fn block(&mut self, block: &Block, assigned: Assigned) -> Flow {
        let mut flow = Flow {
            end: Some(assigned),
            ..Flow::default()
        };
        for statement in &block.0 {
            let Some(assigned) = flow.end.take() else {
                break;
            };
            let step = self.statement(&statement.stmt, assigned);
            flow.end = step.end;
            flow.breaks = meet(flow.breaks, step.breaks);
            flow.continues = meet(flow.continues, step.continues);
        }
        flow
    }

    fn statement(&mut self, stmt: &Stmt, mut assigned: Assigned) -> Flow {
        let ends = |assigned| Flow {
            end: Some(assigned),
            ..Flow::default()
        };
        match stmt {
            Stmt::Store { place, value } => {
                let mut roots = place.operands();
                roots.push(*value);
                self.reads(&roots, &assigned);
                if let PlaceRoot::Local(l) = place.root {
                    if place.path.is_empty() {
                        assigned.insert(l.index());
                    }
                }
                ends(assigned)
            }
            Stmt::If {
                cond,
                accept,
                reject,
            } => {
                self.reads(&[*cond], &assigned);
                let accepted = self.block(accept, assigned.clone());
                let rejected = self.block(reject, assigned);
                Flow {
                    end: meet(accepted.end, rejected.end),
                    breaks: meet(accepted.breaks, rejected.breaks),
                    continues: meet(accepted.continues, rejected.continues),
                }
            }
            Stmt::Loop { body, continuing } => {
                // Every trip starts from at least what was stored before the loop.
                let trip = self.block(body, assigned);
                let into_continuing = meet(trip.end, trip.continues);
                let mut breaks = trip.breaks;
                if let Some(at) = into_continuing {
                    breaks = meet(breaks, self.block(continuing, at).breaks);
                }
                ends_at(breaks)
            }
            Stmt::Collective(c) => {
                self.reads(&[c.value], &assigned);
                assigned.insert(c.result.index());
                ends(assigned)
            }
            Stmt::Barrier => ends(assigned),
            Stmt::Break => Flow {
                breaks: Some(assigned),
                ..Flow::default()
            },
            Stmt::Continue => Flow {
                continues: Some(assigned),
                ..Flow::default()
            },
            Stmt::Return => Flow::default(),
        }
    }

    /// Marks the locals the expressions rooted at `roots` read that may be unassigned.
    fn reads(&mut self, roots: &[Handle<crate::Expr>], assigned: &Assigned) {
        for l in self.kernel.local_loads(roots) {
            if !assigned.contains(l.index()) {
                self.read_unassigned[l.index()] = true;
            }
        }
    }
}

/// A loop's flow: past it go its `break`s (none: nothing follows it).
fn ends_at(breaks: Option<Assigned>) -> Flow {
    Flow {
        end: breaks,
        ..Flow::default()
    }
}
