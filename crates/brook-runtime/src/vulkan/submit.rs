//! The batch's command buffers and their submissions: two buffers used in turn, so the host
//! records the next kernels into one while the GPU runs what was submitted from the other
//! (as CUDA's stream runs a launch while the host makes the next one). Waits poll the fences
//! for a while before sleeping in the driver: the GPU's work the host waits for often ends
//! within microseconds, and a sleeping thread wakes tens of microseconds late.

use ash::vk;
use std::time::{Duration, Instant};

/// How long a submission may run before the wait gives up with an error.
const TIMEOUT: Duration = Duration::from_secs(600);

/// How long a wait polls the fences in a busy loop, then with the processor given up between
/// polls, before it sleeps in the driver (whose wake-up came 50-100 us late on NVIDIA's
/// driver: a tenth of a 1 ms wait).
const SPIN: Duration = Duration::from_millis(1);
const YIELD: Duration = Duration::from_millis(20);

/// A command buffer, its fence and whether it was submitted and not yet seen to finish.
struct Slot {
    commands: vk::CommandBuffer,
    fence: vk::Fence,
    pending: bool,
}

/// The queue and the two command buffers recorded and submitted in turn.
pub(super) struct Submissions {
    queue: vk::Queue,
    pool: vk::CommandPool,
    slots: [Slot; 2],
    /// The slot being recorded.
    current: usize,
    /// Whether something was submitted since the last [`Submissions::wait_all`]: the next
    /// buffer then begins with a barrier, so its commands see the earlier ones' writes.
    submitted_since_wait: bool,
}

impl Submissions {
    /// The command buffers of queue family `family`, its first queue's.
    pub(super) fn new(device: &ash::Device, family: u32) -> Result<Submissions, String> {
        // SAFETY: the device is live; the create infos live across the calls; what is made
        // is destroyed again if a later step fails.
        unsafe {
            let queue = device.get_device_queue(family, 0);
            let pool = device
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default()
                        .queue_family_index(family)
                        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                    None,
                )
                .map_err(|e| fail("creating a command pool", e))?;
            let allocate = vk::CommandBufferAllocateInfo::default()
                .command_pool(pool)
                .level(vk::CommandBufferLevel::PRIMARY)
                .command_buffer_count(2);
            let made = device
                .allocate_command_buffers(&allocate)
                .map_err(|e| fail("allocating command buffers", e))
                .and_then(|commands| {
                    let first = fence(device)?;
                    let second =
                        fence(device).inspect_err(|_| device.destroy_fence(first, None))?;
                    Ok([(commands[0], first), (commands[1], second)])
                });
            match made {
                Ok(slots) => Ok(Submissions {
                    queue,
                    pool,
                    slots: slots.map(|(commands, fence)| Slot {
                        commands,
                        fence,
                        pending: false,
                    }),
                    current: 0,
                    submitted_since_wait: false,
                }),
                Err(e) => {
                    device.destroy_command_pool(pool, None);
                    Err(e)
                }
            }
        }
    }

    /// The command buffer being recorded.
    pub(super) fn commands(&self) -> vk::CommandBuffer {
        self.slots[self.current].commands
    }

    /// Begins recording the current buffer (not pending: [`Submissions::submit`] moves on
    /// to a buffer that is not); it begins with a barrier after what was submitted before.
    ///
    /// # Safety
    /// The current buffer is not recording.
    pub(super) unsafe fn begin(&mut self, d: &ash::Device) -> Result<(), String> {
        let c = self.commands();
        // SAFETY: the buffer is not pending (as above) nor recording (as the caller promises).
        unsafe {
            d.reset_command_buffer(c, vk::CommandBufferResetFlags::empty())
                .map_err(|e| fail("resetting the command buffer", e))?;
            let begin = vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            d.begin_command_buffer(c, &begin)
                .map_err(|e| fail("recording", e))?;
            if self.submitted_since_wait {
                barrier(d, c, WORK, WORK_ACCESS);
            }
        }
        Ok(())
    }

    /// Records a barrier after the commands recorded in the current buffer: the commands
    /// after it see their writes.
    ///
    /// # Safety
    /// The current buffer is recording.
    pub(super) unsafe fn barrier(&self, d: &ash::Device) {
        // SAFETY: as the caller promises.
        unsafe { barrier(d, self.commands(), WORK, WORK_ACCESS) };
    }

    /// Whether the buffer not being recorded is free (never submitted, or its submission
    /// has finished), so the current one could be submitted now and recording go on there.
    pub(super) fn other_is_free(&mut self, d: &ash::Device) -> Result<bool, String> {
        let other = &mut self.slots[1 - self.current];
        if other.pending {
            // SAFETY: the fence is this device's.
            let done = unsafe { d.get_fence_status(other.fence) }
                .map_err(|e| fail("asking whether the kernels finished", e))?;
            other.pending = !done;
        }
        Ok(!other.pending)
    }

    /// Ends the current buffer (its writes made visible to the host too) and submits it; the
    /// other buffer becomes current. The caller has made sure it is free
    /// ([`Submissions::other_is_free`]) or waits for everything next.
    ///
    /// # Safety
    /// The current buffer is recording.
    pub(super) unsafe fn submit(&mut self, d: &ash::Device) -> Result<(), String> {
        let slot = &mut self.slots[self.current];
        // SAFETY: as the caller promises; the fence is not pending (its slot was not).
        unsafe {
            barrier(
                d,
                slot.commands,
                vk::PipelineStageFlags::HOST,
                vk::AccessFlags::HOST_READ,
            );
            d.end_command_buffer(slot.commands)
                .map_err(|e| fail("recording", e))?;
            let commands = [slot.commands];
            let submit = [vk::SubmitInfo::default().command_buffers(&commands)];
            d.reset_fences(&[slot.fence])
                .map_err(|e| fail("resetting the fence", e))?;
            d.queue_submit(self.queue, &submit, slot.fence)
                .map_err(|e| fail("submitting", e))?;
        }
        slot.pending = true;
        self.submitted_since_wait = true;
        self.current = 1 - self.current;
        Ok(())
    }

    /// Waits for every submission: polls the fences for [`SPIN`] and [`YIELD`], then sleeps
    /// in the driver up to [`TIMEOUT`].
    pub(super) fn wait_all(&mut self, d: &ash::Device) -> Result<(), String> {
        let started = Instant::now();
        loop {
            if self.poll(d)? {
                self.submitted_since_wait = false;
                return Ok(());
            }
            match started.elapsed() {
                t if t < SPIN => std::hint::spin_loop(),
                t if t < YIELD => std::thread::yield_now(),
                _ => break,
            }
        }
        let fences: Vec<vk::Fence> = self
            .slots
            .iter()
            .filter(|s| s.pending)
            .map(|s| s.fence)
            .collect();
        if fences.is_empty() {
            self.submitted_since_wait = false;
            return Ok(());
        }
        // SAFETY: the fences are this device's and were submitted.
        match unsafe { d.wait_for_fences(&fences, true, TIMEOUT.as_nanos() as u64) } {
            Ok(()) => {
                self.slots.iter_mut().for_each(|s| s.pending = false);
                self.submitted_since_wait = false;
                Ok(())
            }
            Err(vk::Result::TIMEOUT) => Err(format!(
                "the kernels did not finish in {} s",
                TIMEOUT.as_secs()
            )),
            Err(e) => Err(fail("waiting for the kernels", e)),
        }
    }

    /// Forgets the submissions (their wait failed: the device is lost, or they ran too
    /// long); the buffers are begun afresh.
    pub(super) fn abandon(&mut self) {
        self.slots.iter_mut().for_each(|s| s.pending = false);
    }

    /// Whether every submission has finished (those that have are no longer pending).
    fn poll(&mut self, d: &ash::Device) -> Result<bool, String> {
        let mut all = true;
        for slot in self.slots.iter_mut().filter(|s| s.pending) {
            // SAFETY: the fence is this device's.
            let done = unsafe { d.get_fence_status(slot.fence) }
                .map_err(|e| fail("waiting for the kernels", e))?;
            slot.pending = !done;
            all &= done;
        }
        Ok(all)
    }

    /// Destroys the handles (the device is idle).
    pub(super) fn destroy(&mut self, d: &ash::Device) {
        // SAFETY: nothing is pending; each handle is destroyed once (the buffers with their
        // pool).
        unsafe {
            for slot in &self.slots {
                d.destroy_fence(slot.fence, None);
            }
            d.destroy_command_pool(self.pool, None);
        }
    }
}

fn fence(device: &ash::Device) -> Result<vk::Fence, String> {
    // SAFETY: the device is live; the create info lives across the call.
    unsafe { device.create_fence(&vk::FenceCreateInfo::default(), None) }
        .map_err(|e| fail("creating a fence", e))
}

fn fail(what: &str, e: vk::Result) -> String {
    format!("{what} failed: {e}")
}

/// The stages a batch's commands run in: kernels and copies.
const WORK: vk::PipelineStageFlags = vk::PipelineStageFlags::from_raw(
    vk::PipelineStageFlags::COMPUTE_SHADER.as_raw() | vk::PipelineStageFlags::TRANSFER.as_raw(),
);
/// What they do to memory.
const WORK_ACCESS: vk::AccessFlags = vk::AccessFlags::from_raw(
    vk::AccessFlags::SHADER_READ.as_raw()
        | vk::AccessFlags::SHADER_WRITE.as_raw()
        | vk::AccessFlags::TRANSFER_READ.as_raw()
        | vk::AccessFlags::TRANSFER_WRITE.as_raw(),
);

/// Makes the writes of the commands before (kernels, copies) visible to `stage`'s `access`.
///
/// # Safety
/// `c` is in the recording state.
unsafe fn barrier(
    d: &ash::Device,
    c: vk::CommandBuffer,
    stage: vk::PipelineStageFlags,
    access: vk::AccessFlags,
) {
    let written = vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE;
    let memory = [vk::MemoryBarrier::default()
        .src_access_mask(written)
        .dst_access_mask(access)];
    // SAFETY: as the caller promises.
    unsafe {
        d.cmd_pipeline_barrier(
            c,
            WORK,
            stage,
            vk::DependencyFlags::empty(),
            &memory,
            &[],
            &[],
        )
    };
}
