//! What a Vulkan physical device offers, and whether Brook can use it.

use super::instance::{Vulkan, API_VERSION};
use ash::vk;
use brook_codegen::spirv::probe::Subnormals;

/// The kind of device, as the driver reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuKind {
    Discrete,
    Integrated,
    Virtual,
    /// A device that runs on the CPU (lavapipe, SwiftShader): listed, never the default.
    Cpu,
    Other,
}

/// One Vulkan device's description.
#[derive(Clone, Debug)]
pub struct GpuInfo {
    pub name: String,
    pub driver: String,
    pub kind: GpuKind,
    /// `major.minor.patch` of the device's Vulkan API.
    pub api: (u32, u32, u32),
    pub vendor_id: u32,
    /// Invocations of a subgroup (8 on lavapipe, 32 on NVIDIA, 64 on AMD's GCN).
    pub subgroup_size: u32,
    /// Compute shaders may shuffle values between a subgroup's invocations.
    pub subgroup_shuffle: bool,
    /// Compute shaders may vote across a subgroup (`all`, `any`).
    pub subgroup_vote: bool,
    /// Kernels may use atomics on 64-bit integers in buffers (`shaderBufferInt64Atomics`).
    pub int64_atomics: bool,
    pub float64: bool,
    pub int64: bool,
    pub storage8: bool,
    pub storage16: bool,
    pub buffer_device_address: bool,
    /// The driver's promises about `float`/`double` subnormals (`shaderDenormPreserve*`).
    pub promises_denorm_preserve: (bool, bool),
    /// Whether kernels may ask to keep signed zeros, infinities and NaNs exactly
    /// (`shaderSignedZeroInfNanPreserveFloat32`/`64`); Brook's kernels do where they may.
    pub signed_zero_inf_nan: (bool, bool),
    /// Whether `0.0 * -1.0` stays `-0.0` in a kernel written as Brook writes them, as the
    /// probe found (`None` until probed).
    pub signed_zero_kept: Option<bool>,
    pub max_storage_buffer_range: u32,
    pub max_shared_memory: u32,
    pub max_group_invocations: u32,
    pub max_group_size: [u32; 3],
    pub max_group_count: [u32; 3],
    /// The queue family with compute, if any.
    pub compute_queue: Option<u32>,
    /// Valid bits of the compute family's timestamps (0: it has none) and nanoseconds per
    /// tick.
    pub timestamp_bits: u32,
    pub timestamp_period: f32,
    /// What the probe found the device does with subnormals (`None` until probed, or for
    /// `double` where the device has none).
    pub subnormals_f32: Option<Subnormals>,
    pub subnormals_f64: Option<Subnormals>,
    /// Whether `Fma` on `double`s is fused, as the probe found (`None` without doubles).
    pub fma_fused: Option<bool>,
    /// The loop iterations after which the driver ends a subgroup's loops, as the probe
    /// found (lavapipe: 65,535 over all loops together); `None` where it found none.
    pub loop_limit: Option<u32>,
    /// Why Brook cannot use the device, if it cannot.
    pub unusable: Option<String>,
}

impl std::fmt::Display for GpuInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (major, minor, _) = self.api;
        write!(
            f,
            "{} ({:?}, {}, Vulkan {major}.{minor}, subgroups of {}, double {})",
            self.name,
            self.kind,
            self.driver,
            self.subgroup_size,
            if self.float64 { "yes" } else { "no" }
        )?;
        if let Some(s) = self.subnormals_f32 {
            write!(f, ", float subnormals {s}")?;
        }
        if let Some(s) = self.subnormals_f64 {
            write!(f, ", double subnormals {s}")?;
        }
        if let Some(kept) = self.signed_zero_kept {
            write!(f, ", signed zeros {}", if kept { "kept" } else { "lost" })?;
        }
        if let Some(fused) = self.fma_fused {
            write!(f, ", fma {}", if fused { "fused" } else { "not fused" })?;
        }
        if let Some(limit) = self.loop_limit {
            write!(f, ", loops end after {limit} iterations")?;
        }
        if let Some(why) = &self.unusable {
            write!(f, ": not usable: {why}")?;
        }
        Ok(())
    }
}

/// Reads device `device`'s properties and features.
pub fn describe(vulkan: &Vulkan, device: vk::PhysicalDevice) -> GpuInfo {
    let instance = &vulkan.instance;
    let mut v11 = vk::PhysicalDeviceVulkan11Properties::default();
    let mut v12 = vk::PhysicalDeviceVulkan12Properties::default();
    let mut props = vk::PhysicalDeviceProperties2::default()
        .push_next(&mut v11)
        .push_next(&mut v12);
    // SAFETY: the device comes from this instance; the chain's structs live across the call.
    unsafe { instance.get_physical_device_properties2(device, &mut props) };
    let p = props.properties;
    let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
    let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut features = vk::PhysicalDeviceFeatures2::default()
        .push_next(&mut f11)
        .push_next(&mut f12);
    // SAFETY: as above.
    unsafe { instance.get_physical_device_features2(device, &mut features) };
    let core = features.features;
    // SAFETY: as above.
    let families = unsafe { instance.get_physical_device_queue_family_properties(device) };
    let compute_queue = families
        .iter()
        .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE))
        .map(|i| i as u32);
    let limits = p.limits;
    let mut info = GpuInfo {
        name: p
            .device_name_as_c_str()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        driver: v12
            .driver_name_as_c_str()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        kind: match p.device_type {
            vk::PhysicalDeviceType::DISCRETE_GPU => GpuKind::Discrete,
            vk::PhysicalDeviceType::INTEGRATED_GPU => GpuKind::Integrated,
            vk::PhysicalDeviceType::VIRTUAL_GPU => GpuKind::Virtual,
            vk::PhysicalDeviceType::CPU => GpuKind::Cpu,
            _ => GpuKind::Other,
        },
        api: (
            vk::api_version_major(p.api_version),
            vk::api_version_minor(p.api_version),
            vk::api_version_patch(p.api_version),
        ),
        vendor_id: p.vendor_id,
        subgroup_size: v11.subgroup_size,
        subgroup_shuffle: v11
            .subgroup_supported_operations
            .contains(vk::SubgroupFeatureFlags::SHUFFLE)
            && v11
                .subgroup_supported_stages
                .contains(vk::ShaderStageFlags::COMPUTE),
        subgroup_vote: v11
            .subgroup_supported_operations
            .contains(vk::SubgroupFeatureFlags::VOTE),
        int64_atomics: f12.shader_buffer_int64_atomics == vk::TRUE,
        float64: core.shader_float64 == vk::TRUE,
        int64: core.shader_int64 == vk::TRUE,
        storage8: f12.storage_buffer8_bit_access == vk::TRUE && f12.shader_int8 == vk::TRUE,
        storage16: f11.storage_buffer16_bit_access == vk::TRUE && core.shader_int16 == vk::TRUE,
        buffer_device_address: f12.buffer_device_address == vk::TRUE,
        promises_denorm_preserve: (
            v12.shader_denorm_preserve_float32 == vk::TRUE,
            v12.shader_denorm_preserve_float64 == vk::TRUE,
        ),
        signed_zero_inf_nan: (
            v12.shader_signed_zero_inf_nan_preserve_float32 == vk::TRUE,
            v12.shader_signed_zero_inf_nan_preserve_float64 == vk::TRUE,
        ),
        signed_zero_kept: None,
        max_storage_buffer_range: limits.max_storage_buffer_range,
        max_shared_memory: limits.max_compute_shared_memory_size,
        max_group_invocations: limits.max_compute_work_group_invocations,
        max_group_size: limits.max_compute_work_group_size,
        max_group_count: limits.max_compute_work_group_count,
        compute_queue,
        timestamp_bits: compute_queue.map_or(0, |f| families[f as usize].timestamp_valid_bits),
        timestamp_period: limits.timestamp_period,
        subnormals_f32: None,
        subnormals_f64: None,
        fma_fused: None,
        loop_limit: None,
        unusable: None,
    };
    info.unusable = missing(&info, p.api_version);
    info
}

/// What Brook needs that the device lacks, if anything.
fn missing(info: &GpuInfo, api_version: u32) -> Option<String> {
    let mut lacks = Vec::new();
    if api_version < API_VERSION {
        lacks.push("Vulkan 1.2");
    }
    if info.compute_queue.is_none() {
        lacks.push("a compute queue");
    }
    if !info.buffer_device_address {
        lacks.push("bufferDeviceAddress");
    }
    if !info.int64 {
        lacks.push("shaderInt64");
    }
    // Without `shaderFloat64` the device runs kernels that need no doubles: `float` division
    // and square roots come from integers (`brook_codegen::spirv::without_doubles`).
    (!lacks.is_empty()).then(|| format!("the device lacks {}", lacks.join(", ")))
}
