//! The compiled kernels of a device, one cache for every compiled device (cpu, cuda): an entry
//! per program, kernel and [`Variant`], made on first use.
//!
//! A program is known by the identity of its module. An entry holds a weak reference to the
//! module, which keeps the module's allocation (not the module) in place, so its address
//! stays unique while the entry exists. An entry whose module has been dropped can never be
//! used again and is removed at the next insertion: the cache holds the kernels of live
//! programs only, and a dropped program's compiled code is freed with its entry (as far as the
//! device frees code: see the CUDA device).
//!
//! A device's backend options, its [`Tuning`] included, are fixed when it is made, so the key
//! needs no options: two devices made with other options have two caches.

use brook_codegen::abi::Variant;
use brook_codegen::Tuning;
use brook_ir::ValidModule;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

/// The code generation choices of the devices this process makes: the environment's
/// ([`Tuning::from_env`]), read when the first device is made (a value it cannot take is
/// named on stderr once).
pub fn process_tuning() -> Tuning {
    static TUNING: std::sync::OnceLock<Tuning> = std::sync::OnceLock::new();
    *TUNING.get_or_init(Tuning::from_env)
}

/// A module's address, a kernel index and the variant.
type Key = (usize, usize, Variant);

/// The last entry found: its key, and weak references to its module and kernel.
type LastFound<T> = (Key, Weak<ValidModule>, Weak<T>);

struct Entry<T> {
    module: Weak<ValidModule>,
    value: Arc<T>,
}

/// Compiled kernels of type `T` (a device's artifact).
pub struct KernelCache<T> {
    /// The device's name, for the profile ([`crate::profile`]).
    device: String,
    entries: Mutex<HashMap<Key, Entry<T>>>,
    /// The entry found last, held weakly (it keeps nothing alive): a kernel launched again
    /// and again is found without cloning and hashing its key (launch overhead).
    last: Mutex<Option<LastFound<T>>>,
}

impl<T> Default for KernelCache<T> {
    fn default() -> Self {
        KernelCache::new("")
    }
}

impl<T> KernelCache<T> {
    /// The cache of the device called `device`.
    pub fn new(device: impl Into<String>) -> Self {
        KernelCache {
            device: device.into(),
            entries: Mutex::new(HashMap::new()),
            last: Mutex::new(None),
        }
    }
}

impl<T> KernelCache<T> {
    /// Kernel `kernel` of `module` as `variant`, made by `make` on first use. Kernels are
    /// made one at a time (the lock is held while `make` runs), so each is made once.
    pub fn get_or_make<E>(
        &self,
        module: &Arc<ValidModule>,
        kernel: usize,
        variant: &Variant,
        make: impl FnOnce() -> Result<T, E>,
    ) -> Result<Arc<T>, E> {
        let module_ref = module;
        let address = Arc::as_ptr(module) as usize;
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(value) = last_found(&last, address, kernel, variant) {
            self.note_hit(module_ref, kernel);
            return Ok(value);
        }
        let key = (address, kernel, variant.clone());
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(entry) = entries.get(&key) {
            if entry.module.strong_count() > 0 {
                self.note_hit(module_ref, kernel);
                let found = entry.value.clone();
                *last = Some((key, entry.module.clone(), Arc::downgrade(&found)));
                return Ok(found);
            }
        }
        let started = std::time::Instant::now();
        let value = Arc::new(make()?);
        if crate::profile::profiling() {
            let name = &module_ref.kernels[kernel].name;
            crate::profile::record_compile(&self.device, name, started.elapsed());
        }
        entries.retain(|_, entry| entry.module.strong_count() > 0);
        let module = Arc::downgrade(module);
        let entry = Entry {
            module,
            value: value.clone(),
        };
        *last = Some((key.clone(), entry.module.clone(), Arc::downgrade(&value)));
        entries.insert(key, entry);
        Ok(value)
    }

    /// Kernel `kernel` of `module` as `variant` if it was made already; `None` otherwise,
    /// without making it (the caller's thread readies a launch with it: [`Device::prepare`]).
    ///
    /// [`Device::prepare`]: crate::Device::prepare
    pub fn find(
        &self,
        module: &Arc<ValidModule>,
        kernel: usize,
        variant: Variant,
    ) -> Option<Arc<T>> {
        let address = Arc::as_ptr(module) as usize;
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(value) = last_found(&last, address, kernel, &variant) {
            self.note_hit(module, kernel);
            return Some(value);
        }
        let key = (address, kernel, variant);
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let entry = entries.get(&key).filter(|e| e.module.strong_count() > 0)?;
        self.note_hit(module, kernel);
        let found = entry.value.clone();
        *last = Some((key, entry.module.clone(), Arc::downgrade(&found)));
        Some(found)
    }

    fn note_hit(&self, module: &ValidModule, kernel: usize) {
        if crate::profile::profiling() {
            crate::profile::record_cache_hit(&self.device, &module.kernels[kernel].name);
        }
    }

    /// How many kernels the cache holds.
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The kernel of `last` if its key is `(address, kernel, variant)` and its module is alive.
fn last_found<T>(
    last: &Option<LastFound<T>>,
    address: usize,
    kernel: usize,
    variant: &Variant,
) -> Option<Arc<T>> {
    let ((a, k, v), module, value) = last.as_ref()?;
    let same = (*a, *k) == (address, kernel) && v == variant && module.strong_count() > 0;
    same.then(|| value.upgrade()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use brook_ir::Module;

    fn empty() -> Arc<ValidModule> {
        Arc::new(brook_ir::validate(Module::default()).expect("an empty module is valid"))
    }

    fn variant(rank: usize) -> Variant {
        Variant {
            rank,
            inputs: Vec::new(),
            unit_stride: true,
            narrow_index: false,
            scan: false,
        }
    }

    #[test]
    fn a_kernel_is_made_once_per_module_kernel_and_variant() {
        let cache = KernelCache::<u32>::default();
        let module = empty();
        let mut made = 0;
        let mut get = |kernel, rank| {
            *cache
                .get_or_make(&module, kernel, &variant(rank), || {
                    made += 1;
                    Ok::<u32, ()>(made)
                })
                .unwrap()
        };
        assert_eq!(get(0, 1), 1);
        assert_eq!(get(0, 1), 1);
        assert_eq!(get(0, 2), 2);
        assert_eq!(get(1, 1), 3);
        // Found again, through the last-found entry and through the table.
        assert_eq!(get(1, 1), 3);
        assert_eq!(get(0, 2), 2);
        assert_eq!(get(0, 1), 1);
        assert_eq!(cache.len(), 3);
    }

    #[test]
    fn find_gives_only_kernels_already_made_of_live_modules() {
        let cache = KernelCache::<u32>::default();
        let module = empty();
        assert_eq!(cache.find(&module, 0, variant(1)), None);
        cache
            .get_or_make(&module, 0, &variant(1), || Ok::<u32, ()>(7))
            .unwrap();
        cache
            .get_or_make(&module, 1, &variant(1), || Ok::<u32, ()>(8))
            .unwrap();
        // Through the last-found entry, then through the table.
        assert_eq!(cache.find(&module, 1, variant(1)).as_deref(), Some(&8));
        assert_eq!(cache.find(&module, 0, variant(1)).as_deref(), Some(&7));
        assert_eq!(cache.find(&module, 0, variant(2)), None);
        assert_eq!(cache.len(), 2, "find makes nothing");
        let other = empty();
        assert_eq!(cache.find(&other, 0, variant(1)), None);
    }

    #[test]
    fn a_dropped_programs_kernels_are_removed_and_an_error_caches_nothing() {
        let cache = KernelCache::<u32>::default();
        let old = empty();
        cache
            .get_or_make(&old, 0, &variant(1), || Ok::<u32, ()>(1))
            .unwrap();
        cache
            .get_or_make(&old, 1, &variant(1), || Ok::<u32, ()>(2))
            .unwrap();
        drop(old);
        let new = empty();
        let failed = cache.get_or_make(&new, 0, &variant(1), || Err::<u32, &str>("no"));
        assert_eq!(failed.err(), Some("no"));
        assert_eq!(cache.len(), 2, "nothing is inserted on an error");
        cache
            .get_or_make(&new, 0, &variant(1), || Ok::<u32, ()>(3))
            .unwrap();
        assert_eq!(cache.len(), 1, "the dropped program's two kernels are gone");
    }
}
