//! Host memory on a data path, allocated fallibly: a staging copy or a host buffer that the
//! system will not give is an error of the operation (with "out of memory" and the size), which
//! the stream records, never an abort of the process.

use crate::error::{BError, RuntimeError};

/// `len` zero bytes for `operation` (whose error code is `code`).
pub fn zeroed(operation: &str, code: BError, len: usize) -> Result<Vec<u8>, RuntimeError> {
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(len)
        .map_err(|_| out_of_memory(operation, code, len))?;
    bytes.resize(len, 0);
    Ok(bytes)
}

/// A copy of `data` for `operation`.
pub fn copy_of(operation: &str, code: BError, data: &[u8]) -> Result<Vec<u8>, RuntimeError> {
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(data.len())
        .map_err(|_| out_of_memory(operation, code, data.len()))?;
    bytes.extend_from_slice(data);
    Ok(bytes)
}

fn out_of_memory(operation: &str, code: BError, len: usize) -> RuntimeError {
    RuntimeError::Stream {
        code,
        message: format!(
            "{operation}: out of memory: a host copy of {len} bytes ({:.1} MiB) could not be allocated",
            len as f64 / f64::from(1u32 << 20)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_impossible_size_is_an_error_naming_the_operation_and_the_size() {
        let e = zeroed("Stream Write", BError::Write, usize::MAX / 2).unwrap_err();
        assert_eq!(e.code(), BError::Write);
        let text = e.to_string();
        assert!(text.starts_with("Stream Write: out of memory"), "{text}");
        assert!(text.contains(&(usize::MAX / 2).to_string()), "{text}");
        assert_eq!(
            copy_of("Stream Read", BError::Read, &[1, 2]).unwrap(),
            [1, 2]
        );
    }
}
