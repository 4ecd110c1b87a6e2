//! Which devices exist and which one a program uses.
//!
//! Each device module offers a `discover` function; [`BACKENDS`] lists them with the names a
//! runtime may be asked by, in order of preference: CUDA, Vulkan, the CPU, the interpreter
//! (a Vulkan device on the CPU, lavapipe, comes last: listed, never the default). The names
//! `cal` (Brook+'s AMD runtime) and `gpu` mean every GPU ([`gpus`]). [`devices`] runs every
//! discovery once;
//! [`get_devices`] picks by type name (Brook+ `getDevices`), [`find_device`] by runtime name
//! and index; [`default_device`] reads `BRT_RUNTIME` and `BRT_ADAPTER` as seed 001 describes,
//! falling back, with a message, to the best device this build has; [`use_devices`] sets the
//! devices of the calling thread ([`current_device`]), which threads do not inherit. This is the
//! only module that knows the device modules, and the only one reading `BRT_RUNTIME`.
//!
//! Adding a device: implement [`crate::Device`] in a module with a `discover` function, give it
//! a [`DeviceKind`], and add a [`Backend`] line here.

use crate::device::{Device, DeviceKind};
use crate::error::RuntimeError;
use std::cell::RefCell;
use std::sync::{Arc, OnceLock};

/// A device module's discovery: the devices of its kind on this machine, or why there are none.
pub type Discover = fn() -> Result<Vec<Arc<dyn Device>>, String>;

/// A device module as the registry sees it.
pub struct Backend {
    pub kind: DeviceKind,
    /// The runtime names that select it (`BRT_RUNTIME`, `getDevices`), the type name first.
    pub names: &'static [&'static str],
    pub discover: Discover,
}

/// Every device module, the preferred first.
pub const BACKENDS: &[Backend] = &[
    Backend {
        kind: DeviceKind::Cuda,
        names: &["cuda"],
        discover: crate::cuda::discover,
    },
    Backend {
        kind: DeviceKind::Vulkan,
        names: &["vulkan"],
        discover: crate::vulkan::discover,
    },
    Backend {
        kind: DeviceKind::Cpu,
        names: &["cpu"],
        discover: crate::cpu::discover,
    },
    Backend {
        kind: DeviceKind::Interp,
        names: &["interp"],
        discover: crate::interp::discover,
    },
];

/// The names that mean every GPU of the machine ([`gpus`]): Brook+'s `cal`, and `gpu`.
const GPU_NAMES: &[&str] = &["cal", "gpu"];

fn means_gpus(name: &str) -> bool {
    GPU_NAMES.contains(&name.trim().to_ascii_lowercase().as_str())
}

/// The device module a runtime or type name means (any case, surrounding blanks ignored).
pub fn backend_named(name: &str) -> Option<&'static Backend> {
    let name = name.trim().to_ascii_lowercase();
    BACKENDS.iter().find(|b| b.names.contains(&name.as_str()))
}

fn known_names() -> String {
    let names: Vec<&str> = BACKENDS
        .iter()
        .flat_map(|b| b.names.iter().copied())
        .chain(GPU_NAMES.iter().copied())
        .collect();
    names.join(", ")
}

struct Found {
    devices: Vec<Arc<dyn Device>>,
    /// Why a kind has no device, for each kind whose discovery found none.
    missing: Vec<(DeviceKind, String)>,
}

fn found() -> &'static Found {
    crate::remote::join_job();
    static FOUND: OnceLock<Found> = OnceLock::new();
    FOUND.get_or_init(|| {
        let mut found = Found {
            devices: Vec::new(),
            missing: Vec::new(),
        };
        for backend in BACKENDS {
            match (backend.discover)() {
                Ok(devices) if !devices.is_empty() => found.devices.extend(devices),
                Ok(_) => found
                    .missing
                    .push((backend.kind, "none was found".to_string())),
                Err(why) => found.missing.push((backend.kind, why)),
            }
        }
        // Vulkan devices on the CPU go last: never the default.
        let (software, rest): (Vec<_>, Vec<_>) = found
            .devices
            .drain(..)
            .partition(|d| is_software_vulkan(d.as_ref()));
        found.devices = rest.into_iter().chain(software).collect();
        found
    })
}

fn is_software_vulkan(d: &dyn Device) -> bool {
    d.info().kind == DeviceKind::Vulkan && crate::vulkan::is_software(d.info().ordinal)
}

/// Every GPU of the machine, the default first: the CUDA devices, then the Vulkan devices that
/// are GPUs (not lavapipe) and not NVIDIA's when CUDA reaches those.
pub fn gpus() -> Vec<Arc<dyn Device>> {
    let cuda: Vec<_> = of_kind(DeviceKind::Cuda).cloned().collect();
    let reached_by_cuda = |k: usize| crate::vulkan::is_nvidia(k) && !cuda.is_empty();
    let vulkan = of_kind(DeviceKind::Vulkan).filter(|d| {
        let k = d.info().ordinal;
        !crate::vulkan::is_software(k) && !reached_by_cuda(k)
    });
    let vulkan: Vec<_> = vulkan.cloned().collect();
    cuda.into_iter().chain(vulkan).collect()
}

/// Why this machine has no GPU.
fn no_gpu() -> String {
    [DeviceKind::Cuda, DeviceKind::Vulkan]
        .iter()
        .map(|&k| {
            let why = unavailable(k).unwrap_or("only a Vulkan device on the CPU");
            format!("{}: {why}", k.name())
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The devices this build can use, in order of preference for the default device.
pub fn devices() -> &'static [Arc<dyn Device>] {
    &found().devices
}

/// Why this machine has no device of `kind` (`None` when it has one).
pub fn unavailable(kind: DeviceKind) -> Option<&'static str> {
    found()
        .missing
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, why)| why.as_str())
}

/// Why this machine has no CUDA device (`None` when it has one).
pub fn cuda_unavailable() -> Option<&'static str> {
    unavailable(DeviceKind::Cuda)
}

/// A device group of `members` ([`crate::group`]): one device whose streams are split into
/// row blocks, one per member.
pub fn device_group(members: &[Arc<dyn Device>]) -> Result<Arc<dyn Device>, RuntimeError> {
    Ok(Arc::new(crate::group::DeviceGroup::new(members.to_vec())?))
}

/// The device a runtime spec names: `cuda` (device `ordinal`), `cuda:1`, `cuda:all` (every
/// device of the kind), or several joined by `+` (`interp:0+interp:1`). More than one device
/// makes a group ([`device_group`]).
pub fn device_from_spec(spec: &str, ordinal: usize) -> Result<Arc<dyn Device>, RuntimeError> {
    if let Some(per_rank) = mpi_spec(spec) {
        return crate::remote::mpi_group(per_rank);
    }
    let mut members = Vec::new();
    for part in spec.split('+') {
        let part = part.trim();
        let (name, index) = match part.split_once(':') {
            Some((name, index)) => (name, Some(index.trim())),
            None => (part, None),
        };
        match index {
            None => members.push(find_device(name, ordinal)?),
            Some(all) if all.eq_ignore_ascii_case("all") && means_gpus(name) => {
                let found = gpus();
                if found.is_empty() {
                    return Err(RuntimeError::NoDevice(part.to_string(), no_gpu()));
                }
                members.extend(found);
            }
            Some(all) if all.eq_ignore_ascii_case("all") => {
                let kind = backend_named(name)
                    .ok_or_else(|| {
                        RuntimeError::NoDevice(
                            name.to_string(),
                            format!("known runtimes are {}", known_names()),
                        )
                    })?
                    .kind;
                let found: Vec<_> = of_kind(kind).cloned().collect();
                if found.is_empty() {
                    return Err(RuntimeError::NoDevice(
                        part.to_string(),
                        unavailable(kind).unwrap_or("none was found").to_string(),
                    ));
                }
                members.extend(found);
            }
            Some(index) => {
                let index = index.parse::<usize>().map_err(|_| {
                    RuntimeError::NoDevice(
                        part.to_string(),
                        "write a device as NAME, NAME:INDEX or NAME:all".into(),
                    )
                })?;
                members.push(find_device(name, index)?);
            }
        }
    }
    match members.as_slice() {
        [one] => Ok(one.clone()),
        _ => device_group(&members),
    }
}

/// Where a rank stands among the ranks of its job that share its host: the `index`-th of
/// `count` (MPI's shared-memory split; one of one outside a job).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostPlace {
    pub index: usize,
    pub count: usize,
}

/// The spec a rank opens, given its place on its host: where several ranks share a host, a
/// bare device name (`cuda`, `vulkan`, `cal`) or the empty spec (the best device) becomes the
/// rank's own device of that kind, the `index`-th modulo how many the host has, so that
/// `mpirun -np 2` on a host of two GPUs gives each rank its own. Vulkan devices on the CPU
/// are never chosen this way; a spec with an index, `all` or `+` is kept as it is.
pub fn spec_for_host_place(spec: &str, place: HostPlace) -> String {
    let name = spec.trim();
    if place.count <= 1 || name.contains([':', '+']) {
        return spec.to_string();
    }
    let choices: Vec<Arc<dyn Device>> = if name.is_empty() {
        let best = devices()[0].info().kind;
        hardware_of_kind(best)
    } else if means_gpus(name) {
        gpus()
    } else if let Some(backend) = backend_named(name) {
        hardware_of_kind(backend.kind)
    } else {
        return spec.to_string();
    };
    let names: Vec<String> = choices
        .iter()
        .map(|d| format!("{}:{}", d.info().kind.name(), d.info().ordinal))
        .collect();
    pick_for_place(spec, &names, place)
}

/// The devices of `kind` that are not Vulkan devices on the CPU.
fn hardware_of_kind(kind: DeviceKind) -> Vec<Arc<dyn Device>> {
    of_kind(kind)
        .filter(|d| !is_software_vulkan(d.as_ref()))
        .cloned()
        .collect()
}

/// The one of `choices` (device names with their index) for a rank at `place`; `spec` itself
/// where there is no choice to make.
fn pick_for_place(spec: &str, choices: &[String], place: HostPlace) -> String {
    match choices.len() {
        0 | 1 => spec.to_string(),
        n => choices[place.index % n].clone(),
    }
}

/// The per-rank part of an MPI job's spec: `mpi` gives `""`, `mpi:cuda:all` gives `cuda:all`.
fn mpi_spec(spec: &str) -> Option<&str> {
    let spec = spec.trim();
    let (name, rest) = spec.split_once(':').unwrap_or((spec, ""));
    name.eq_ignore_ascii_case("mpi").then(|| rest.trim())
}

/// The devices of a type name (Brook+ `getDevices`): `all`, a name of [`BACKENDS`], or `cal`
/// and `gpu` (every GPU, [`gpus`]). An unknown name is an error listing the known ones; a
/// known type this machine has no device of gives an empty list, except `"cal"` (the CPU
/// device stands in for a GPU, with a warning).
pub fn get_devices(type_name: &str) -> Result<Vec<Arc<dyn Device>>, RuntimeError> {
    if type_name.trim().eq_ignore_ascii_case("all") {
        return Ok(devices().to_vec());
    }
    if means_gpus(type_name) {
        let found = gpus();
        if found.is_empty() && type_name.trim().eq_ignore_ascii_case("cal") {
            return Ok(cal_stand_in());
        }
        return Ok(found);
    }
    let backend = backend_named(type_name).ok_or_else(|| {
        RuntimeError::NoDevice(
            type_name.to_string(),
            format!("known device types are all, {}", known_names()),
        )
    })?;
    Ok(of_kind(backend.kind).cloned().collect())
}

/// Brook+ programs ask for their GPUs as `"cal"` (AMD's CAL runtime) and go on with the
/// devices they get: on a machine without a GPU the CPU device stands in, said on stderr once,
/// so the SDK's samples run (and verify) anywhere. `"cuda"` stays strict (no GPU: none).
fn cal_stand_in() -> Vec<Arc<dyn Device>> {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        crate::log::append(&format!(
            "warning: getDevices(\"cal\"): this machine has no GPU ({}); the CPU device \
             stands in",
            no_gpu()
        ));
    });
    of_kind(DeviceKind::Cpu).cloned().collect()
}

fn of_kind(kind: DeviceKind) -> impl Iterator<Item = &'static Arc<dyn Device>> {
    devices().iter().filter(move |d| d.info().kind == kind)
}

/// The device of a runtime name and index (`cuda`, 1; `cal`, 0: the first GPU).
pub fn find_device(name: &str, ordinal: usize) -> Result<Arc<dyn Device>, RuntimeError> {
    if means_gpus(name) {
        let found = gpus();
        return found.get(ordinal).cloned().ok_or_else(|| {
            let why = if found.is_empty() {
                format!("no GPU ({})", no_gpu())
            } else {
                format!("this machine has {} GPUs", found.len())
            };
            RuntimeError::NoDevice(format!("{}:{ordinal}", name.trim()), why)
        });
    }
    let Some(backend) = backend_named(name) else {
        return Err(RuntimeError::NoDevice(
            name.to_string(),
            format!("known runtimes are {}", known_names()),
        ));
    };
    if let Some(device) = of_kind(backend.kind).find(|d| d.info().ordinal == ordinal) {
        return Ok(device.clone());
    }
    let present: Vec<String> = of_kind(backend.kind)
        .map(|d| format!("{}:{}", backend.kind.name(), d.info().ordinal))
        .collect();
    let why = match unavailable(backend.kind) {
        Some(why) => format!("no {} device: {why}", backend.kind.name()),
        None => format!(
            "the {} devices are {}",
            backend.kind.name(),
            present.join(", ")
        ),
    };
    Err(RuntimeError::NoDevice(
        format!("{}:{ordinal}", backend.kind.name()),
        why,
    ))
}

thread_local! {
    static THREAD_DEVICES: RefCell<Option<Vec<Arc<dyn Device>>>> = const { RefCell::new(None) };
}

/// Sets the devices the calling thread uses (Brook+ `useDevices`): new streams and host-side
/// operations of this thread go to the first. An empty list returns the thread to the default
/// device. Other threads, including threads started later by this one, are not affected.
pub fn use_devices(devices: &[Arc<dyn Device>]) {
    THREAD_DEVICES.with(|d| {
        *d.borrow_mut() = if devices.is_empty() {
            None
        } else {
            Some(devices.to_vec())
        }
    });
}

/// The devices set by [`use_devices`] on this thread, or the default device.
pub fn thread_devices() -> Vec<Arc<dyn Device>> {
    THREAD_DEVICES
        .with(|d| d.borrow().clone())
        .unwrap_or_else(|| vec![default_device()])
}

/// The device this thread uses: the first of [`use_devices`], or [`default_device`].
pub fn current_device() -> Arc<dyn Device> {
    THREAD_DEVICES
        .with(|d| d.borrow().as_ref().and_then(|v| v.first().cloned()))
        .unwrap_or_else(default_device)
}

/// The device a program uses when it names none: `BRT_RUNTIME` (and `BRT_ADAPTER` for the
/// index; a spec of [`device_from_spec`] such as `cuda:all` gives a device group), or the
/// first device (`BRT_ADAPTER` alone picks the index among devices of the first device's
/// type); in a process that `mpirun` started as one of several ranks, in a build with the
/// `mpi` feature, the job's group (`mpi`). A requested runtime or adapter that is not available falls back with a message
/// on stderr, never a failure.
pub fn default_device() -> Arc<dyn Device> {
    static DEFAULT: OnceLock<Arc<dyn Device>> = OnceLock::new();
    DEFAULT
        .get_or_init(|| {
            let requested = std::env::var("BRT_RUNTIME").ok();
            let requested = requested
                .as_deref()
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .or_else(|| started_by_mpirun().then_some("mpi"));
            let adapter = adapter_from_env();
            let first = devices()[0].clone();
            let name = match (requested, adapter) {
                (None, None) => return first,
                (Some(name), _) => name.to_string(),
                (None, Some(_)) => first.info().kind.name().to_string(),
            };
            device_from_spec(&name, adapter.unwrap_or(0)).unwrap_or_else(|e| {
                let asked: Vec<String> = [
                    requested.map(|r| format!("BRT_RUNTIME={r}")),
                    adapter.map(|a| format!("BRT_ADAPTER={a}")),
                ]
                .into_iter()
                .flatten()
                .collect();
                eprintln!("brook: {}: {e}; using {}", asked.join(" "), first.info());
                first
            })
        })
        .clone()
}

/// Whether this process is one of several ranks of an MPI job that this build can join: its
/// default device is then the job's group (`BRT_RUNTIME=mpi`).
fn started_by_mpirun() -> bool {
    cfg!(feature = "mpi") && crate::remote::launched().is_some()
}

/// `BRT_ADAPTER` as a device index; a value that is no number is said on stderr and ignored.
fn adapter_from_env() -> Option<usize> {
    let text = std::env::var("BRT_ADAPTER").ok()?;
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    match text.parse::<usize>() {
        Ok(index) => Some(index),
        Err(_) => {
            eprintln!(
                "brook: warning: BRT_ADAPTER={text} is not a device index (0, 1, ...); ignored"
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_sharing_a_host_take_its_devices_in_turn() {
        let gpus = ["cuda:0".to_string(), "cuda:1".to_string()];
        let at = |index, count| HostPlace { index, count };
        assert_eq!(pick_for_place("cuda", &gpus, at(0, 3)), "cuda:0");
        assert_eq!(pick_for_place("cuda", &gpus, at(1, 3)), "cuda:1");
        assert_eq!(pick_for_place("cuda", &gpus, at(2, 3)), "cuda:0");
        assert_eq!(pick_for_place("", &gpus[..1], at(1, 2)), "");
        // Specs that name their device, and ranks alone on their host, are kept.
        for spec in ["cuda:1", "cuda:all", "cpu+interp", "interp"] {
            assert_eq!(spec_for_host_place(spec, at(1, 1)), spec);
        }
        assert_eq!(spec_for_host_place("cuda:0", at(1, 2)), "cuda:0");
        // The interpreter has several devices (`INTERP_DEVICES`): the second rank the second.
        assert_eq!(spec_for_host_place("interp", at(1, 2)), "interp:1");
        assert_eq!(spec_for_host_place(" Interp ", at(3, 4)), "interp:1");
    }

    #[test]
    fn every_backend_answers_to_its_type_name_first() {
        for backend in BACKENDS {
            assert_eq!(backend.names[0], backend.kind.name());
            assert_eq!(
                backend_named(backend.kind.name()).unwrap().kind,
                backend.kind
            );
        }
        assert!(means_gpus(" CAL ") && means_gpus("gpu"));
        assert!(backend_named("opencl").is_none());
    }

    #[test]
    fn cal_devices_are_the_gpus_or_the_cpu_standing_in() {
        let cal = get_devices("cal").expect("a known name");
        assert!(!cal.is_empty(), "\"cal\" always gives a device");
        if gpus().is_empty() {
            assert!(cal.iter().all(|d| d.info().kind == DeviceKind::Cpu));
        } else {
            assert!(cal.iter().all(|d| {
                let k = d.info().ordinal;
                match d.info().kind {
                    DeviceKind::Cuda => true,
                    DeviceKind::Vulkan => !crate::vulkan::is_software(k),
                    _ => false,
                }
            }));
        }
        if cuda_unavailable().is_some() {
            assert!(
                get_devices("cuda").expect("known").is_empty(),
                "cuda stays strict"
            );
        }
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let e = get_devices("opencl").err().unwrap().to_string();
        assert!(e.contains("interp") && e.contains("cuda"), "{e}");
        let e = find_device("cpu", 7).err().unwrap().to_string();
        assert!(e.contains("cpu:0"), "{e}");
    }
}
