//! The build cache of `brcc build` and `brcc run`: an executable per program, found again
//! when nothing it was made from changed, so running an unchanged program again costs no C++
//! compile or link.
//!
//! An entry is named by a hash of everything the build reads: brcc's version, the C++
//! compiler's name and its `--version` text, the compiler options given, the generated C++ of
//! every unit, the bytes of every other input file, the header `brook/brook.hpp` and the
//! runtime library's size and modification time; beside each entry the size and modification
//! time of every header its compiles read (from the compiler's `-MD` lists): a changed header
//! is a miss. Entries are written under a temporary name
//! and renamed into place, so concurrent builds never run half an executable. The cache keeps
//! the [`KEEP`] most recently used executables. A cache that cannot be used is not an error:
//! the program is built as without it.
//!
//! Where: `$BROOK_CACHE_DIR/brcc`, else `$XDG_CACHE_HOME/brook/brcc`, else
//! `$HOME/.cache/brook/brcc`; `BROOK_CACHE_DIR=off` (or empty) turns it off.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// How many executables the cache keeps, the least recently used going first (a program
/// linked against the static runtime library is about 50 MB).
const KEEP: usize = 8;

/// An open cache directory.
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// The cache, or `None` when it is off or its directory cannot be made.
    pub fn open() -> Option<Cache> {
        let base = match std::env::var_os("BROOK_CACHE_DIR") {
            Some(dir) if dir.is_empty() || dir == "off" => return None,
            Some(dir) => PathBuf::from(dir),
            None => std::env::var_os("XDG_CACHE_HOME")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?
                .join("brook"),
        };
        let dir = base.join("brcc");
        std::fs::create_dir_all(&dir).ok()?;
        Some(Cache { dir })
    }

    /// The entry of `key` if it exists and no header its build read has changed since
    /// (marked as just used).
    pub fn get(&self, key: &str) -> Option<PathBuf> {
        let path = self.dir.join(key);
        let manifest = std::fs::read_to_string(self.dir.join(format!("{key}.headers"))).ok()?;
        let unchanged = manifest.lines().all(|line| {
            line.rsplit_once('\t')
                .is_some_and(|(file, stamp)| stamp_of(Path::new(file)) == stamp)
        });
        if !unchanged {
            return None;
        }
        let file = std::fs::File::options().append(true).open(&path).ok()?;
        let _ = file.set_modified(std::time::SystemTime::now());
        Some(path)
    }

    /// A fresh name to build an entry at, before [`Cache::insert`] renames it into place.
    pub fn temporary(&self, key: &str) -> PathBuf {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.dir
            .join(format!(".{key}.{}.{n}.partial", std::process::id()))
    }

    /// Moves the executable built at `built` into the entry of `key`, with the stamps of the
    /// `headers` its build read, then drops the least recently used entries beyond [`KEEP`].
    /// The entry's path, or `built` itself if it could not be stored.
    pub fn insert(&self, key: &str, built: &Path, headers: &[PathBuf]) -> PathBuf {
        let path = self.dir.join(key);
        let manifest: String = headers
            .iter()
            .map(|h| format!("{}\t{}\n", h.display(), stamp_of(h)))
            .collect();
        let partial = self.temporary(&format!("{key}.headers"));
        let stored = std::fs::write(&partial, manifest)
            .and_then(|()| std::fs::rename(&partial, self.dir.join(format!("{key}.headers"))))
            .and_then(|()| std::fs::rename(built, &path));
        if stored.is_err() {
            let _ = std::fs::remove_file(&partial);
            return built.to_path_buf();
        }
        self.evict();
        path
    }

    fn evict(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let entries: Vec<std::fs::DirEntry> = entries.flatten().collect();
        // Builds that were stopped leave partial files; an hour later they are litter.
        let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for e in &entries {
            let stale = e
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t < hour_ago);
            if stale && e.file_name().to_string_lossy().ends_with(".partial") {
                let _ = std::fs::remove_file(e.path());
            }
        }
        let mut found: Vec<(std::time::SystemTime, PathBuf)> = entries
            .iter()
            .filter(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                !name.starts_with('.') && !name.ends_with(".headers")
            })
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        found.sort();
        let extra = found.len().saturating_sub(KEEP);
        for (_, path) in found.into_iter().take(extra) {
            let _ = std::fs::remove_file(path.with_extension("headers"));
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A file's size and modification time, as text (`-` when it cannot be read).
fn stamp_of(path: &Path) -> String {
    let Ok(meta) = std::fs::metadata(path) else {
        return "-".into();
    };
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!("{} {modified}", meta.len())
}

/// Everything a build reads, hashed into an entry's name.
#[derive(Default)]
pub struct Key {
    hasher: std::collections::hash_map::DefaultHasher,
}

impl Key {
    pub fn text(&mut self, text: &str) -> &mut Key {
        text.hash(&mut self.hasher);
        self
    }

    pub fn bytes(&mut self, bytes: &[u8]) -> &mut Key {
        bytes.hash(&mut self.hasher);
        self
    }

    /// A file's contents (or that it cannot be read).
    pub fn file(&mut self, path: &Path) -> &mut Key {
        match std::fs::read(path) {
            Ok(bytes) => self.bytes(&bytes),
            Err(_) => self.text("unreadable").text(&path.to_string_lossy()),
        }
    }

    /// A large file's size and modification time (the runtime library: hundreds of MB).
    pub fn stamp(&mut self, path: &Path) -> &mut Key {
        let meta = std::fs::metadata(path).ok();
        let size = meta.as_ref().map_or(0, |m| m.len());
        let modified = meta
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        self.text(&path.to_string_lossy());
        size.hash(&mut self.hasher);
        modified.hash(&mut self.hasher);
        self
    }

    /// The entry's name.
    pub fn finish(&self) -> String {
        format!("{:016x}", self.hasher.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_change_with_what_they_hash_and_entries_are_evicted_oldest_first() {
        let key = |t: &str| Key::default().text("brcc").text(t).finish();
        assert_eq!(key("a"), key("a"));
        assert_ne!(key("a"), key("b"));
        let dir = std::env::temp_dir().join(format!("brcc-cache-test-{}", std::process::id()));
        let cache = Cache { dir: dir.clone() };
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..KEEP + 3 {
            let built = cache.temporary(&format!("k{i}"));
            std::fs::write(&built, b"exe").unwrap();
            let t =
                std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000 + i as u64);
            std::fs::File::options()
                .append(true)
                .open(&built)
                .unwrap()
                .set_modified(t)
                .unwrap();
            assert_eq!(
                cache.insert(&format!("k{i}"), &built, &[]),
                dir.join(format!("k{i}"))
            );
        }
        let left = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(left, 2 * KEEP, "each entry and its headers");
        assert!(cache.get("k0").is_none() && cache.get(&format!("k{}", KEEP + 2)).is_some());
        // An entry whose header changed is not found.
        let header = dir.join("h.h");
        std::fs::write(&header, "#define X 1\n").unwrap();
        let built = cache.temporary("kh");
        std::fs::write(&built, b"exe").unwrap();
        cache.insert("kh", &built, std::slice::from_ref(&header));
        assert!(cache.get("kh").is_some());
        std::fs::write(&header, "#define X 22\n").unwrap();
        assert!(cache.get("kh").is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
