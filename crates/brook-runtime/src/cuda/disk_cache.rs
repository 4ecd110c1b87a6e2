//! The compiled-module cache on disk: the GPU binary the driver made from a module's PTX, so a
//! later process skips the JIT.
//!
//! An entry is named by a hash of the PTX text, the compute capability, the driver version and
//! the JIT's optimisation level (`BROOK_JIT_LEVEL`, when set),
//! and holds the PTX text itself (compared in full on a hit, so a hash collision can only cost
//! a miss) followed by the binary. Entries are written to a temporary file and renamed into
//! place, so concurrent processes never read half an entry. Anything wrong with an entry (an
//! unreadable file, another PTX text, a binary the driver refuses) is a miss: the PTX is
//! compiled again and the entry rewritten. A cache that cannot be written is not an error.
//!
//! Where: `BROOK_CACHE_DIR`, else `$XDG_CACHE_HOME/brook/cuda`, else `$HOME/.cache/brook/cuda`;
//! `BROOK_CACHE_DIR=off` (or empty) turns it off.

use super::driver::{self, Handles, LoadedModule};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 12] = b"BROOKCUBIN1\n";

/// The cache directory, or `None` when the cache is off or no place is known.
pub fn directory() -> Option<PathBuf> {
    match std::env::var_os("BROOK_CACHE_DIR") {
        Some(dir) if dir.is_empty() || dir == "off" => None,
        Some(dir) => Some(PathBuf::from(dir)),
        None => {
            let base = std::env::var_os("XDG_CACHE_HOME")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
            Some(base.join("brook").join("cuda"))
        }
    }
}

/// Loads the module for `ptx` from the cache, or compiles it (and caches the binary).
pub fn load(
    ptx: &str,
    sm: u32,
    entries: &[&str],
    handles: Handles,
) -> Result<LoadedModule, String> {
    let Some(dir) = directory() else {
        return driver::load_ptx(ptx, entries, handles);
    };
    let path = dir.join(entry_name(
        ptx,
        sm,
        driver::driver_version(),
        driver::jit_level(),
    ));
    if let Some(image) = read_entry(&path, ptx) {
        if let Ok(module) = driver::load_image(&image, entries, handles) {
            return Ok(module);
        }
    }
    let image = driver::compile_ptx(ptx)?;
    let module = driver::load_image(&image, entries, handles)?;
    let _ = write_entry(&dir, &path, ptx, &image);
    Ok(module)
}

/// `<hash>.cubin` for a PTX text on a compute capability and driver version, compiled at the
/// JIT level `jit` (`None`: the driver's default).
fn entry_name(ptx: &str, sm: u32, driver: i32, jit: Option<u32>) -> String {
    let key = match jit {
        None => format!("sm_{sm} driver {driver}\n{ptx}"),
        Some(level) => format!("sm_{sm} driver {driver} jit {level}\n{ptx}"),
    };
    format!(
        "{:016x}{:016x}.cubin",
        fnv1a(key.as_bytes(), 0xcbf2_9ce4_8422_2325),
        fnv1a(key.as_bytes(), 0x6c62_272e_07bb_0142)
    )
}

/// FNV-1a, 64 bits, from `basis`.
fn fnv1a(bytes: &[u8], basis: u64) -> u64 {
    bytes.iter().fold(basis, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The binary of the entry at `path` if it was made from exactly `ptx`.
fn read_entry(path: &Path, ptx: &str) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path).ok()?;
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let (len, rest) = rest.split_first_chunk::<8>()?;
    let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
    if rest.len() < len || &rest[..len] != ptx.as_bytes() || rest.len() == len {
        return None;
    }
    Some(rest[len..].to_vec())
}

/// Writes an entry through a temporary file renamed into place.
fn write_entry(dir: &Path, path: &Path, ptx: &str, image: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut bytes = Vec::with_capacity(MAGIC.len() + 8 + ptx.len() + image.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(ptx.len() as u64).to_le_bytes());
    bytes.extend_from_slice(ptx.as_bytes());
    bytes.extend_from_slice(image);
    let temporary = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("entry"),
        std::process::id()
    ));
    std::fs::write(&temporary, &bytes)?;
    std::fs::rename(&temporary, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_reject_other_texts() {
        let dir = std::env::temp_dir().join(format!("brook-cache-test-{}", std::process::id()));
        let path = dir.join(entry_name("ptx text", 90, 12080, None));
        write_entry(&dir, &path, "ptx text", b"binary").expect("write");
        assert_eq!(
            read_entry(&path, "ptx text").as_deref(),
            Some(&b"binary"[..])
        );
        assert_eq!(read_entry(&path, "other text"), None);
        std::fs::write(&path, b"garbage").expect("corrupt");
        assert_eq!(read_entry(&path, "ptx text"), None);
        assert_ne!(entry_name("a", 90, 1, None), entry_name("a", 89, 1, None));
        assert_ne!(entry_name("a", 90, 1, None), entry_name("a", 90, 2, None));
        assert_ne!(
            entry_name("a", 90, 1, None),
            entry_name("a", 90, 1, Some(0))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
