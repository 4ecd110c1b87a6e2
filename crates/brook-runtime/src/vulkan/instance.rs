//! The Vulkan loader, opened at run time, and one instance for the process.

use ash::vk;

/// The loader's entry points and the process's instance (kept for the process's life).
pub struct Vulkan {
    pub entry: ash::Entry,
    pub instance: ash::Instance,
}

/// The API version Brook asks for (device addresses, 8- and 16-bit storage, float controls).
pub const API_VERSION: u32 = vk::API_VERSION_1_2;

impl Vulkan {
    /// Opens the loader and creates an instance; `Err` says why not (no loader, a loader
    /// older than Vulkan 1.2, no driver).
    pub fn open() -> Result<Vulkan, String> {
        // SAFETY: loads the system's Vulkan loader by its known names; its entry points are
        // the Vulkan API's.
        let entry = unsafe { ash::Entry::load() }
            .map_err(|e| format!("the Vulkan loader could not be opened ({e})"))?;
        // SAFETY: a global command with no arguments.
        let version = unsafe { entry.try_enumerate_instance_version() }
            .map_err(|e| format!("the Vulkan loader failed: {e}"))?
            .unwrap_or(vk::API_VERSION_1_0);
        if version < API_VERSION {
            return Err(format!(
                "the Vulkan loader offers version {}.{}; Brook needs 1.2",
                vk::api_version_major(version),
                vk::api_version_minor(version)
            ));
        }
        // Portability enumeration lists MoltenVK's devices (macOS) where the loader has it.
        // SAFETY: a global command; `None` asks for the loader's own extensions.
        let available = unsafe { entry.enumerate_instance_extension_properties(None) }
            .map_err(|e| format!("the Vulkan loader failed: {e}"))?;
        let portability = available
            .iter()
            .any(|e| e.extension_name_as_c_str() == Ok(ash::khr::portability_enumeration::NAME));
        let extensions: Vec<*const std::ffi::c_char> = if portability {
            vec![ash::khr::portability_enumeration::NAME.as_ptr()]
        } else {
            Vec::new()
        };
        let app = vk::ApplicationInfo::default()
            .application_name(c"brook")
            .engine_name(c"brook")
            .api_version(API_VERSION);
        let mut create = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_extension_names(&extensions);
        if portability {
            create = create.flags(vk::InstanceCreateFlags::ENUMERATE_PORTABILITY_KHR);
        }
        // SAFETY: the create info and what it points to live across the call.
        let instance = unsafe { entry.create_instance(&create, None) }
            .map_err(|e| format!("no Vulkan instance: {e}"))?;
        Ok(Vulkan { entry, instance })
    }

    /// The physical devices, in the driver's order.
    pub fn physical_devices(&self) -> Result<Vec<vk::PhysicalDevice>, String> {
        // SAFETY: the instance is live.
        unsafe { self.instance.enumerate_physical_devices() }
            .map_err(|e| format!("listing Vulkan devices failed: {e}"))
    }
}
