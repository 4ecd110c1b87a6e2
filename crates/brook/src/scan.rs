//! Scans: the prefixes of a stream under a reduce kernel's operator, in the canonical order of
//! `brook_ir::scan_order`, so a float scan gives the same bits on every device.

use crate::error::Error;
use crate::kernel::{Arg, Kernel};
use crate::stream::Stream;
use brook_runtime::{Constant, Element, LaunchReport, ScanRequest};

impl Kernel {
    /// The inclusive scan of `input` along its last axis (each row on its own) into `output`
    /// (of the input's shape): `output[.., i] = input[.., 0] ∘ ... ∘ input[.., i]`, `∘` being
    /// this reduce kernel's operator (`reduce void add(float a<>, reduce float r<>) { r += a; }`).
    /// The operator must be associative; it need not be commutative (operand order is kept).
    pub fn scan<T: Element>(
        &self,
        input: &Stream<T>,
        output: &Stream<T>,
    ) -> Result<LaunchReport, Error> {
        self.scan_with(ScanRequest::inclusive(), input, output)
    }

    /// The exclusive scan of `input` along its last axis into `output`: each row starts from
    /// `init`, and position `i` gets `init ∘ input[.., 0] ∘ ... ∘ input[.., i - 1]`.
    pub fn scan_exclusive<T: Element>(
        &self,
        input: &Stream<T>,
        output: &Stream<T>,
        init: T,
    ) -> Result<LaunchReport, Error> {
        self.scan_with(ScanRequest::exclusive(Constant::of(init)), input, output)
    }

    /// Any scan: `brook::ScanRequest::inclusive().whole_stream()` scans every element in
    /// row-major order as one row.
    pub fn scan_with<T: Element>(
        &self,
        request: ScanRequest,
        input: &Stream<T>,
        output: &Stream<T>,
    ) -> Result<LaunchReport, Error> {
        self.with_scan(request)
            .launch(&[Arg::from(input), Arg::from(output)])
    }

    /// This reduce kernel with its launches scanning as `request` says: `launch` then takes
    /// the input stream and the output stream (in the reduction target's place).
    pub fn with_scan(&self, request: ScanRequest) -> Kernel {
        let mut kernel = self.clone();
        kernel.set_scan(request);
        kernel
    }
}
