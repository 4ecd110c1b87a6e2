//! The rule every stream shape obeys (rank 1 to 4, no empty axis, a size that fits memory),
//! apart from streams themselves so that iterators and launch plans can use it.

use crate::error::RuntimeError;

/// The largest rank of a stream.
pub const MAX_RANK: usize = 4;

/// Checks a shape: rank 1 to 4, no zero extent, and a byte size that fits in memory.
pub fn check_shape(dims: &[usize], element_size: usize) -> Result<usize, RuntimeError> {
    let problem = if dims.is_empty() || dims.len() > MAX_RANK {
        Some("a stream has 1 to 4 dimensions")
    } else if dims.contains(&0) {
        Some("every dimension must be at least 1 (a zero or negative size?)")
    } else {
        None
    };
    if let Some(problem) = problem {
        return Err(RuntimeError::Shape {
            dims: dims.to_vec(),
            problem,
        });
    }
    let len = dims
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|n| {
            n.checked_mul(element_size)
                .is_some_and(|b| b <= isize::MAX as usize)
        });
    let len = len.ok_or_else(|| RuntimeError::Shape {
        dims: dims.to_vec(),
        problem: "the stream is larger than the address space",
    })?;
    if dims.iter().any(|&d| d > i32::MAX as usize) {
        // Brook sizes are C ints: `float a<n>` with n = -3 arrives here as 4294967293.
        return Err(RuntimeError::Shape {
            dims: dims.to_vec(),
            problem: "a dimension is larger than 2^31 - 1 (a negative size converted to unsigned?)",
        });
    }
    Ok(len)
}
