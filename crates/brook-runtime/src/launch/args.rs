//! What a caller hands to [`super::launch`]: arguments, options, and what comes back.

use crate::element::{Element, ElementType};
use crate::iter::IterStream;
use crate::stream::RawStream;
pub use brook_ir::scan_order::ScanKind;

/// A value passed for a constant parameter: its type and its bytes in C layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constant {
    pub element: ElementType,
    pub bytes: Vec<u8>,
}

impl Constant {
    pub fn of<T: Element>(value: T) -> Constant {
        Constant {
            element: T::element_type(),
            bytes: crate::element::as_bytes(std::slice::from_ref(&value)).to_vec(),
        }
    }
}

/// One argument of a launch, in parameter order.
#[derive(Clone, Debug)]
pub enum Arg<'a> {
    Stream(&'a RawStream),
    Iterator(&'a IterStream),
    Constant(Constant),
}

impl Arg<'_> {
    pub(super) fn describe(&self) -> String {
        match self {
            Arg::Stream(s) => format!("a {} stream", s.element()),
            Arg::Iterator(i) => format!("a {} iterator stream", i.element()),
            Arg::Constant(c) => format!("a {} value", c.element),
        }
    }
}

/// What a caller may set beyond the arguments (Brook+ `KernelInterface`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchOptions {
    /// `domainOffset`: the first instance, fastest axis first (a `uint4`).
    pub domain_offset: Option<[usize; 4]>,
    /// `domainSize`: how many instances along each axis, fastest axis first (a `uint4`; 0 in
    /// the components past the domain's rank).
    pub domain_size: Option<[usize; 4]>,
    /// One stream may be bound as an input and an output (the BrookGPU dialect; also
    /// `BRT_PERMIT_READ_WRITE_ALIASING`): the input is read from a copy.
    pub permit_read_write_aliasing: bool,
    /// Where the program called the kernel (`file.br:LINE`), for error messages.
    pub call_site: Option<String>,
    /// Launch a reduce kernel as a scan: its input's prefixes go to the stream bound to its
    /// reduction target.
    pub scan: Option<ScanRequest>,
}

/// A scan with a reduce kernel's operator (`brook_ir::scan_order` fixes the order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanRequest {
    pub kind: ScanKind,
    /// Over the whole stream in row-major order (else along the last axis, rows apart).
    pub whole: bool,
    /// An exclusive scan's first prefix.
    pub init: Option<Constant>,
}

impl ScanRequest {
    /// An inclusive scan along the last axis.
    pub fn inclusive() -> ScanRequest {
        ScanRequest {
            kind: ScanKind::Inclusive,
            whole: false,
            init: None,
        }
    }

    /// An exclusive scan along the last axis, starting each row from `init`.
    pub fn exclusive(init: Constant) -> ScanRequest {
        ScanRequest {
            kind: ScanKind::Exclusive,
            whole: false,
            init: Some(init),
        }
    }

    /// The same scan over the whole stream, in row-major order.
    pub fn whole_stream(self) -> ScanRequest {
        ScanRequest {
            whole: true,
            ..self
        }
    }
}

/// What a successful launch reports.
#[derive(Clone, Debug, Default)]
pub struct LaunchReport {
    /// Warnings (also appended to the outputs' error logs).
    pub warnings: Vec<String>,
    /// For a kernel with vouts: the stream of pushed values for each vout argument, which the
    /// caller puts in place of the stream it passed.
    pub vouts: Vec<VoutResult>,
    /// The domain was empty (an empty `domain()` view): nothing ran and no output changed, so
    /// a caller that copies a result back (a host reduction target) leaves it alone.
    pub over_nothing: bool,
}

/// A vout's result: the new stream for the argument at `position` (0-based, source order).
#[derive(Clone, Debug)]
pub struct VoutResult {
    pub position: usize,
    pub stream: RawStream,
}
