//! What the driver made of each kernel, printed for whoever tunes a GPU strategy:
//! `BRT_VULKAN_STATISTICS=1` asks every Vulkan device whose driver has
//! `VK_KHR_pipeline_executable_properties` (NVIDIA's, Mesa's) for its statistics of each
//! pipeline it compiles (registers, shared memory, instructions, spills: whatever the driver
//! reports), one line per compiled pipeline on stderr, and on every Vulkan device a line with
//! each module's size and the driver's compile time. Off, pipelines are made as always.

use crate::env_switch::EnvSwitch;
use ash::vk;
use std::ffi::CStr;

/// `BRT_VULKAN_STATISTICS`, read when a device opens.
static STATISTICS: EnvSwitch = EnvSwitch::new("BRT_VULKAN_STATISTICS");

/// Whether `BRT_VULKAN_STATISTICS` asks for each pipeline's size and compile time.
pub fn wanted() -> bool {
    STATISTICS.is_on()
}

/// Prints a compiled module's size and how long the driver took over it.
pub fn print_compile(what: &str, words: usize, took: std::time::Duration) {
    eprintln!(
        "brook: vulkan: {what}: {words} SPIR-V words, compiled in {:.1} ms",
        took.as_secs_f64() * 1e3
    );
}

/// The extension's commands on one device, where statistics were asked for and the driver
/// has them.
pub struct Statistics {
    commands: ash::khr::pipeline_executable_properties::Device,
}

/// Whether statistics are wanted and `physical` offers them: the extension's name to enable.
pub fn extension_to_enable(
    instance: &ash::Instance,
    physical: vk::PhysicalDevice,
) -> Option<&'static CStr> {
    if !STATISTICS.is_on() {
        return None;
    }
    let name = ash::khr::pipeline_executable_properties::NAME;
    // SAFETY: the device comes from this instance.
    let offered = unsafe { instance.enumerate_device_extension_properties(physical) }.ok()?;
    let has = offered
        .iter()
        .any(|e| e.extension_name_as_c_str() == Ok(name));
    if !has {
        eprintln!("brook: BRT_VULKAN_STATISTICS: the driver does not report statistics");
    }
    has.then_some(name)
}

/// The feature struct that turns the extension's queries on, chained into device creation.
pub fn feature() -> vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR<'static> {
    vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default()
        .pipeline_executable_info(true)
}

impl Statistics {
    /// The commands of `device`, opened with the extension enabled.
    pub fn new(instance: &ash::Instance, device: &ash::Device) -> Statistics {
        Statistics {
            commands: ash::khr::pipeline_executable_properties::Device::new(instance, device),
        }
    }

    /// Prints the statistics of every executable of `pipeline` (made with
    /// [`vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR`]), labelled `what`.
    pub fn print(&self, pipeline: vk::Pipeline, what: &str) {
        let info = vk::PipelineInfoKHR::default().pipeline(pipeline);
        // SAFETY: the pipeline is live and was made by this device.
        let executables = match unsafe { self.commands.get_pipeline_executable_properties(&info) } {
            Ok(e) => e.len() as u32,
            Err(e) => return eprintln!("brook: statistics of {what}: {e}"),
        };
        for index in 0..executables {
            let executable = vk::PipelineExecutableInfoKHR::default()
                .pipeline(pipeline)
                .executable_index(index);
            // SAFETY: as above; `index` is one of the pipeline's executables.
            match unsafe {
                self.commands
                    .get_pipeline_executable_statistics(&executable)
            } {
                Ok(found) => {
                    let values: Vec<String> = found.iter().map(statistic).collect();
                    eprintln!("brook: statistics of {what}: {}", values.join(", "));
                }
                Err(e) => eprintln!("brook: statistics of {what}: {e}"),
            }
        }
    }
}

/// `name=value` of one statistic.
fn statistic(s: &vk::PipelineExecutableStatisticKHR<'_>) -> String {
    let name = s
        .name_as_c_str()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // SAFETY: `format` says which member of the union the driver wrote.
    let value = unsafe {
        match s.format {
            vk::PipelineExecutableStatisticFormatKHR::BOOL32 => (s.value.b32 != 0).to_string(),
            vk::PipelineExecutableStatisticFormatKHR::INT64 => s.value.i64.to_string(),
            vk::PipelineExecutableStatisticFormatKHR::UINT64 => s.value.u64.to_string(),
            vk::PipelineExecutableStatisticFormatKHR::FLOAT64 => s.value.f64.to_string(),
            _ => "?".to_string(),
        }
    };
    format!("{name}={value}")
}
