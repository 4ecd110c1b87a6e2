//! Block-scoped locals: those whose value before a block's first store to them is never
//! read. A backend that runs several instances in SIMD lanes under an execution mask (the
//! CPU device's gangs) writes such a local in every lane, without a blend: the values it
//! overwrites in switched-off lanes are never read.
//!
//! A local `l` is *scoped* to a block `B` (at nesting depth `d`: the kernel body is 0, each
//! `if` arm, loop body and continuing part one deeper than the statement holding it) when
//! every reference to `l` is inside `B`, the first statement of `B` that refers to `l` is a
//! store of the whole of `l` that does not read it, and no store anywhere writes only a part
//! of `l`. Then a full store to `l` among `B`'s own statements may write every lane:
//!
//! - lanes are only switched off along one run of `B` (an `if` restores the lanes active
//!   before it less those that left; a loop ends with those that broke out), so a lane active
//!   at a later statement of `B` was active at every earlier one, and wrote `l` itself at the
//!   first store before reading it;
//! - a lane switched off at the store reads `l` next only in a later run of `B` (the next
//!   trip of a loop, say), after that run's first store.
//!
//! Loop temporaries such as `float xx = x * x;` in a loop body are the common case.

use crate::{Block, Expr, Handle, Kernel, PlaceRoot, Stmt};
use std::collections::{HashMap, HashSet};

/// For each local of `kernel`, the depth of the block it is scoped to (see the module docs).
pub fn scoped_locals(kernel: &Kernel) -> Vec<Option<u32>> {
    let mut scan = Scan {
        kernel,
        total: HashMap::new(),
        partial: HashSet::new(),
        scoped: vec![None; kernel.locals.len()],
    };
    let counts = scan.block(&kernel.body, 0, false);
    scan.total = counts;
    scan.block(&kernel.body, 0, true);
    scan.scoped
}

/// References to each local (by index) in some part of the kernel.
type Counts = HashMap<u32, u32>;

struct Scan<'k> {
    kernel: &'k Kernel,
    /// References to each local in the whole kernel.
    total: Counts,
    /// Locals that some store writes only a part of.
    partial: HashSet<u32>,
    scoped: Vec<Option<u32>>,
}

impl Scan<'_> {
    /// The references in `block` (at `depth`); with `decide`, also the locals scoped to it
    /// and to the blocks inside it.
    fn block(&mut self, block: &Block, depth: u32, decide: bool) -> Counts {
        let per_statement: Vec<Counts> = block
            .iter()
            .map(|s| self.statement(&s.stmt, depth, decide))
            .collect();
        // References in the block, and the first statement referring to each local.
        let mut all = Counts::new();
        let mut first = HashMap::new();
        for (at, counts) in per_statement.iter().enumerate() {
            for (&l, &n) in counts {
                *all.entry(l).or_default() += n;
                first.entry(l).or_insert(at);
            }
        }
        if decide {
            for (&l, &n) in &all {
                if self.total.get(&l) != Some(&n) || self.partial.contains(&l) {
                    continue;
                }
                if self.whole_store_not_reading(&block.0[first[&l]].stmt, l) {
                    self.scoped[l as usize] = Some(depth);
                }
            }
        }
        all
    }

    fn statement(&mut self, stmt: &Stmt, depth: u32, decide: bool) -> Counts {
        let mut counts = Counts::new();
        let mut add = |from: Counts| {
            for (l, n) in from {
                *counts.entry(l).or_default() += n;
            }
        };
        match stmt {
            Stmt::Store { place, value } => {
                let mut roots = place.operands();
                roots.push(*value);
                add(self.reads(&roots));
                if let PlaceRoot::Local(l) = place.root {
                    add(Counts::from([(l.index() as u32, 1)]));
                    if !place.path.is_empty() {
                        self.partial.insert(l.index() as u32);
                    }
                }
            }
            Stmt::If {
                cond,
                accept,
                reject,
            } => {
                add(self.reads(&[*cond]));
                add(self.block(accept, depth + 1, decide));
                add(self.block(reject, depth + 1, decide));
            }
            Stmt::Loop { body, continuing } => {
                add(self.block(body, depth + 1, decide));
                add(self.block(continuing, depth + 1, decide));
            }
            Stmt::Collective(c) => {
                // Gangs never run collectives; their locals are simply never scoped.
                for l in self.reads(&[c.value]).into_keys() {
                    self.partial.insert(l);
                }
                self.partial.insert(c.result.index() as u32);
            }
            Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Barrier => {}
        }
        counts
    }

    /// The locals the expressions rooted at `roots` read (each read once).
    fn reads(&self, roots: &[Handle<Expr>]) -> Counts {
        let mut counts = Counts::new();
        for l in self.kernel.local_loads(roots) {
            *counts.entry(l.index() as u32).or_default() += 1;
        }
        counts
    }

    /// Whether `stmt` stores the whole of local `l` from a value that does not read it.
    fn whole_store_not_reading(&self, stmt: &Stmt, l: u32) -> bool {
        match stmt {
            Stmt::Store { place, value } => {
                place.root == PlaceRoot::Local(Handle::from_index(l as usize))
                    && place.path.is_empty()
                    && !self.reads(&[*value]).contains_key(&l)
            }
            _ => false,
        }
    }
}
