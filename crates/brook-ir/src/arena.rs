//! Typed arenas: the storage of IR nodes, with a source span for each.
//!
//! A [`Handle<T>`] is a `u32` index into an [`Arena<T>`]; handles of different node types cannot
//! be mixed up. Spans live in a side table so that nodes stay small, and every node keeps the
//! place in the `.br` source it came from, for backend and runtime errors.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

/// A byte range in the source file a module was compiled from (`start..end`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct SourceSpan {
    pub start: u32,
    pub end: u32,
}

/// An index of a `T` in an [`Arena<T>`].
pub struct Handle<T> {
    index: u32,
    marker: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    /// The handle of the `index`-th node. Only an arena and the validator make handles from
    /// numbers; the validator checks every handle before anything indexes with it.
    pub fn from_index(index: usize) -> Self {
        Handle {
            index: index as u32,
            marker: PhantomData,
        }
    }

    pub fn index(self) -> usize {
        self.index as usize
    }
}

impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Handle<T> {}

impl<T> PartialEq for Handle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}

impl<T> Eq for Handle<T> {}

impl<T> PartialOrd for Handle<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Handle<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.index.cmp(&other.index)
    }
}

impl<T> Hash for Handle<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.index.hash(state);
    }
}

/// A handle travels as its index (the arena it points into travels with it).
impl<T> serde::Serialize for Handle<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.index.serialize(serializer)
    }
}

impl<'de, T> serde::Deserialize<'de> for Handle<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        u32::deserialize(deserializer).map(|index| Handle {
            index,
            marker: PhantomData,
        })
    }
}

impl<T> fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}]", self.index)
    }
}

/// Nodes of one type, appended and never removed, each with its source span.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Arena<T> {
    items: Vec<T>,
    spans: Vec<SourceSpan>,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena {
            items: Vec::new(),
            spans: Vec::new(),
        }
    }
}

impl<T> Arena<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a node and returns its handle.
    pub fn append(&mut self, item: T, span: SourceSpan) -> Handle<T> {
        let handle = Handle::from_index(self.items.len());
        self.items.push(item);
        self.spans.push(span);
        handle
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The node, or `None` for a handle from another arena that is out of range.
    pub fn try_get(&self, handle: Handle<T>) -> Option<&T> {
        self.items.get(handle.index())
    }

    pub fn span(&self, handle: Handle<T>) -> SourceSpan {
        self.spans.get(handle.index()).copied().unwrap_or_default()
    }

    /// Whether `handle` indexes a node of this arena.
    pub fn contains(&self, handle: Handle<T>) -> bool {
        handle.index() < self.items.len()
    }

    /// Every node with its handle, in the order they were appended.
    pub fn iter(&self) -> impl Iterator<Item = (Handle<T>, &T)> {
        self.items
            .iter()
            .enumerate()
            .map(|(i, item)| (Handle::from_index(i), item))
    }
}

impl<T> std::ops::Index<Handle<T>> for Arena<T> {
    type Output = T;

    /// Indexes a validated handle (see [`Handle::from_index`]).
    fn index(&self, handle: Handle<T>) -> &T {
        &self.items[handle.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_index_their_arena_and_keep_spans() {
        let mut arena = Arena::new();
        let a = arena.append("a", SourceSpan { start: 0, end: 1 });
        let b = arena.append("b", SourceSpan { start: 4, end: 6 });
        assert_eq!((arena[a], arena[b]), ("a", "b"));
        assert_eq!(arena.span(b), SourceSpan { start: 4, end: 6 });
        assert!(a < b && arena.contains(b));
        assert!(!arena.contains(Handle::from_index(2)));
        assert_eq!(arena.try_get(Handle::from_index(9)), None);
        assert_eq!(format!("{b:?}"), "[1]");
        let order: Vec<&str> = arena.iter().map(|(_, s)| *s).collect();
        assert_eq!(order, ["a", "b"]);
    }
}
