//! Which stores to locals some read may see, and which locals a read may see at the 0 every
//! local starts with: reaching definitions over the structured statements.
//!
//! At each point, each local has the set of its definitions that may have written its value:
//! the start (its 0) and stores. A store of the whole local replaces the set; a store of a part
//! (a component, a field, an array element) adds to it. An `if` joins its arms that reach their
//! end; a loop is walked until the sets at its head stop growing (from before the loop, the
//! end of its continuing part and its `continue`s), and after it hold what its `break`s carry.
//! Every read of a local marks the definitions in its set as seen. A store no read sees
//! (the 0 the frontend stores into `float y;` before both arms of an `if` store `y`, say) does
//! not bound the values the local's reads give ([`crate::footprint`]).

use crate::{Block, Expr, Handle, Kernel, PlaceRoot, Statement, Stmt};
use std::collections::{BTreeSet, HashMap, HashSet};

/// What reads of a kernel's locals may see.
pub struct Reaching {
    /// The stores some read sees, by the address of their statement in the kernel's body.
    seen_stores: HashSet<*const Statement>,
    /// Per local, whether some read may see its starting 0.
    initial_read: Vec<bool>,
}

impl Reaching {
    /// Works out what the reads of `kernel`'s locals may see.
    pub fn of(kernel: &Kernel) -> Reaching {
        let mut walk = Walk {
            kernel,
            seen: HashSet::new(),
        };
        let start: Defs = (0..kernel.locals.len())
            .map(|l| (l, BTreeSet::from([Def::Start])))
            .collect();
        walk.block(&kernel.body, start);
        let mut initial_read = vec![false; kernel.locals.len()];
        let mut seen_stores = HashSet::new();
        for (local, def) in walk.seen {
            match def {
                Def::Start => initial_read[local] = true,
                Def::Store(at) => {
                    seen_stores.insert(at as *const Statement);
                }
            }
        }
        Reaching {
            seen_stores,
            initial_read,
        }
    }

    /// Whether some read sees the store `statement` (a statement of the kernel's body).
    pub fn store_is_seen(&self, statement: &Statement) -> bool {
        self.seen_stores.contains(&(statement as *const Statement))
    }

    /// Whether some read of local `index` may see the 0 it starts with.
    pub fn initial_read(&self, index: usize) -> bool {
        self.initial_read.get(index).copied().unwrap_or(true)
    }
}

/// A definition of a local: its start, or a store (its statement's address).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Def {
    Start,
    Store(usize),
}

/// Per local (by index), the definitions that may have written its value.
type Defs = HashMap<usize, BTreeSet<Def>>;

/// Where the paths through a block go: past its end, out of the loop around it, or on to that
/// loop's continuing part; each with the definitions it carries.
#[derive(Default)]
struct Flow {
    end: Option<Defs>,
    breaks: Vec<Defs>,
    continues: Vec<Defs>,
}

/// The definitions of either of two points.
fn join(a: Option<Defs>, b: Option<Defs>) -> Option<Defs> {
    match (a, b) {
        (Some(mut a), Some(b)) => {
            for (local, defs) in b {
                a.entry(local).or_default().extend(defs);
            }
            Some(a)
        }
        (a, None) => a,
        (None, b) => b,
    }
}

fn join_all(all: impl IntoIterator<Item = Defs>) -> Option<Defs> {
    all.into_iter().fold(None, |acc, d| join(acc, Some(d)))
}

struct Walk<'k> {
    kernel: &'k Kernel,
    /// The definitions some read sees: (local, definition).
    seen: HashSet<(usize, Def)>,
}

impl Walk<'_> {
    fn block(&mut self, block: &Block, defs: Defs) -> Flow {
        let mut flow = Flow {
            end: Some(defs),
            ..Flow::default()
        };
        for statement in &block.0 {
            let Some(defs) = flow.end.take() else {
                break;
            };
            let step = self.statement(statement, defs);
            flow.end = step.end;
            flow.breaks.extend(step.breaks);
            flow.continues.extend(step.continues);
        }
        flow
    }

    fn statement(&mut self, statement: &Statement, mut defs: Defs) -> Flow {
        let ends = |defs| Flow {
            end: Some(defs),
            ..Flow::default()
        };
        match &statement.stmt {
            Stmt::Store { place, value } => {
                let mut roots = place.operands();
                roots.push(*value);
                self.reads(&roots, &defs);
                if let PlaceRoot::Local(l) = place.root {
                    let def = Def::Store(statement as *const Statement as usize);
                    let set = defs.entry(l.index()).or_default();
                    if place.path.is_empty() {
                        set.clear();
                    }
                    set.insert(def);
                }
                ends(defs)
            }
            Stmt::If {
                cond,
                accept,
                reject,
            } => {
                self.reads(&[*cond], &defs);
                let accepted = self.block(accept, defs.clone());
                let rejected = self.block(reject, defs);
                Flow {
                    end: join(accepted.end, rejected.end),
                    breaks: [accepted.breaks, rejected.breaks].concat(),
                    continues: [accepted.continues, rejected.continues].concat(),
                }
            }
            Stmt::Loop { body, continuing } => self.loop_(body, continuing, defs),
            Stmt::Collective(c) => {
                self.reads(&[c.value], &defs);
                let def = Def::Store(statement as *const Statement as usize);
                defs.insert(c.result.index(), BTreeSet::from([def]));
                ends(defs)
            }
            Stmt::Barrier => ends(defs),
            Stmt::Break => Flow {
                breaks: vec![defs],
                ..Flow::default()
            },
            Stmt::Continue => Flow {
                continues: vec![defs],
                ..Flow::default()
            },
            Stmt::Return => Flow::default(),
        }
    }

    /// A loop: its head's definitions grow until a trip adds none; after it, its `break`s'.
    fn loop_(&mut self, body: &Block, continuing: &Block, entry: Defs) -> Flow {
        let mut head = entry.clone();
        loop {
            let trip = self.block(body, head.clone());
            let mut breaks = trip.breaks;
            let into_continuing = join(trip.end, join_all(trip.continues));
            let back = match into_continuing {
                Some(defs) => {
                    let rest = self.block(continuing, defs);
                    breaks.extend(rest.breaks);
                    // (A `continue` there, were it allowed, would also go back to the head.)
                    join(rest.end, join_all(rest.continues))
                }
                None => None,
            };
            let next = join(Some(entry.clone()), back).unwrap_or_default();
            if next == head {
                return Flow {
                    end: join_all(breaks),
                    ..Flow::default()
                };
            }
            head = next;
        }
    }

    /// Marks the definitions the locals read by the expressions rooted at `roots` may hold.
    fn reads(&mut self, roots: &[Handle<Expr>], defs: &Defs) {
        for l in self.kernel.local_loads(roots) {
            let local = l.index();
            match defs.get(&local) {
                Some(set) => self.seen.extend(set.iter().map(|&d| (local, d))),
                None => {
                    self.seen.insert((local, Def::Start));
                }
            }
        }
    }
}
