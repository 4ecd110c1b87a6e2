//! The command buffer a context records kernels into: launches are recorded one after the
//! other (a barrier between each two: every kernel sees its predecessors' writes) and
//! submitted together when the host needs their results (a download, a synchronize, a
//! buffer freed) or the batch is full, so a launch costs its recording, not a submission and
//! a wait (tens of microseconds on a GPU).

use super::arena::Arena;
use super::clock::{Clock, Pair};
use super::context::Pipeline;
use super::memory::Buffer;
use ash::vk;
use std::sync::Arc;
use std::time::Duration;

/// Kernels recorded at most before the batch is submitted and waited for.
const MAX_RECORDED: u32 = 1024;

/// How long a submission may run before the wait gives up with an error.
const TIMEOUT: Duration = Duration::from_secs(600);

/// The queue, its one command buffer and what is recorded in it.
pub(super) struct Batch {
    queue: vk::Queue,
    pool: vk::CommandPool,
    commands: vk::CommandBuffer,
    fence: vk::Fence,
    /// Kernels recorded and not yet submitted.
    recorded: u32,
    /// Internal buffers the recorded kernels use, kept until they have run.
    keep: Vec<Arc<Buffer>>,
    /// A failure no caller has seen yet (the batch was run for [`Batch::run_now`]).
    unseen: Option<String>,
    /// Launch-lived memory of the recorded kernels, taken back when they have run outside
    /// a launch (`in_launch` false: a launch may hold pieces for kernels it records next).
    pub(super) arena: Arena,
    pub(super) in_launch: bool,
    /// Timestamps, where the queue family has them.
    clock: Option<Clock>,
    /// The status words of recorded dispatches that count their loops (their recorder's
    /// number, the word's device address and the module's name), read when they have run.
    watched: Vec<((u64, u64), String)>,
    /// The dispatches whose status word was set (their loops reached the device's limit):
    /// their recorder's number and module's name, until [`Batch::take_tripped`].
    tripped: Vec<(u64, String)>,
}

impl Batch {
    /// The batch of queue family `family`, whose timestamps have `clock`'s valid bits and
    /// tick length ([`Clock::new`]).
    pub(super) fn new(
        device: &ash::Device,
        family: u32,
        clock: (u32, f32),
    ) -> Result<Batch, String> {
        // SAFETY: the device is live; the create infos live across the calls.
        unsafe {
            let queue = device.get_device_queue(family, 0);
            let pool = device
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default()
                        .queue_family_index(family)
                        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                    None,
                )
                .map_err(|e| format!("creating a command pool failed: {e}"))?;
            let allocate = vk::CommandBufferAllocateInfo::default()
                .command_pool(pool)
                .level(vk::CommandBufferLevel::PRIMARY)
                .command_buffer_count(1);
            let made = device
                .allocate_command_buffers(&allocate)
                .map_err(|e| format!("allocating a command buffer failed: {e}"))
                .and_then(|commands| {
                    let fence = device
                        .create_fence(&vk::FenceCreateInfo::default(), None)
                        .map_err(|e| format!("creating a fence failed: {e}"))?;
                    match Clock::new(device, clock) {
                        Ok(clock) => Ok((commands[0], fence, clock)),
                        Err(e) => {
                            device.destroy_fence(fence, None);
                            Err(e)
                        }
                    }
                });
            match made {
                Ok((commands, fence, clock)) => Ok(Batch {
                    queue,
                    pool,
                    commands,
                    fence,
                    recorded: 0,
                    keep: Vec::new(),
                    unseen: None,
                    arena: Arena::new(),
                    in_launch: false,
                    clock,
                    watched: Vec::new(),
                    tripped: Vec::new(),
                }),
                Err(e) => {
                    device.destroy_command_pool(pool, None);
                    Err(e)
                }
            }
        }
    }

    /// Records `pipeline` over `groups` workgroups with `push` as its push constants, after
    /// the kernels recorded before it. Submits and waits when the batch is full.
    pub(super) fn record(
        &mut self,
        d: &ash::Device,
        pipeline: &Pipeline,
        (push, groups): (&[u8], [u32; 3]),
    ) -> Result<(), String> {
        let c = self.commands;
        // SAFETY: the command buffer is this batch's and is not pending (each submission is
        // waited for before the next recording); the pipeline lives until the batch is
        // finished (the pipeline cache finishes it before destroying any).
        unsafe {
            self.begin_or_wait(d)?;
            d.cmd_bind_pipeline(c, vk::PipelineBindPoint::COMPUTE, pipeline.pipeline);
            if !push.is_empty() {
                d.cmd_push_constants(c, pipeline.layout, vk::ShaderStageFlags::COMPUTE, 0, push);
            }
            let [x, y, z] = groups;
            d.cmd_dispatch(c, x, y, z);
        }
        self.recorded += 1;
        if self.recorded >= MAX_RECORDED {
            self.finish(d)?;
        }
        Ok(())
    }

    /// Records a copy between two buffers after what is recorded.
    pub(super) fn record_copy(
        &mut self,
        d: &ash::Device,
        (from, to): (vk::Buffer, vk::Buffer),
        region: vk::BufferCopy,
    ) -> Result<(), String> {
        // SAFETY: as in `record`; the buffers live until the batch is finished (their owners
        // finish it before freeing them).
        unsafe {
            self.begin_or_wait(d)?;
            d.cmd_copy_buffer(self.commands, from, to, &[region]);
        }
        self.recorded += 1;
        Ok(())
    }

    /// Records zeroing `bytes` bytes (a multiple of 4) of `buffer` from `offset`, after what
    /// is recorded.
    pub(super) fn record_zeroing(
        &mut self,
        d: &ash::Device,
        buffer: vk::Buffer,
        (offset, bytes): (u64, u64),
    ) -> Result<(), String> {
        // SAFETY: as in `record`; the buffer lives until the batch is finished (the arena's
        // chunks and the pool's buffers are kept until then).
        unsafe {
            self.begin_or_wait(d)?;
            d.cmd_fill_buffer(self.commands, buffer, offset, bytes, 0);
        }
        self.recorded += 1;
        Ok(())
    }

    /// Begins the command buffer for the first command of a batch, or puts a barrier after
    /// the commands recorded before: each command sees its predecessors' writes.
    ///
    /// # Safety
    /// The command buffer is not pending.
    unsafe fn begin_or_wait(&mut self, d: &ash::Device) -> Result<(), String> {
        let c = self.commands;
        // SAFETY: as the caller promises.
        unsafe {
            if self.recorded == 0 {
                d.reset_command_buffer(c, vk::CommandBufferResetFlags::empty())
                    .map_err(|e| fail("resetting the command buffer", e))?;
                let begin = vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
                d.begin_command_buffer(c, &begin)
                    .map_err(|e| fail("recording", e))?;
            } else {
                barrier(d, c, WORK, WORK_ACCESS);
            }
        }
        Ok(())
    }

    /// Whether the batch has timestamps.
    pub(super) fn has_clock(&self) -> bool {
        self.clock.is_some()
    }

    /// Records the start (`end` false) or the end of timestamp pair `pair`, after what is
    /// recorded; `false` (nothing recorded) without timestamps.
    pub(super) fn record_timestamp(
        &mut self,
        d: &ash::Device,
        (pair, end): (Pair, bool),
    ) -> Result<bool, String> {
        if self.clock.is_none() {
            return Ok(false);
        }
        // SAFETY: as in `record`: the command buffer is this batch's and is not pending.
        unsafe {
            self.begin_or_wait(d)?;
            if let Some(clock) = &self.clock {
                clock.record(d, self.commands, pair, end);
            }
        }
        self.recorded += 1;
        Ok(true)
    }

    /// Runs what is recorded, then the time between the start and end of `pair`; `None`
    /// without timestamps.
    pub(super) fn elapsed(
        &mut self,
        d: &ash::Device,
        pair: Pair,
    ) -> Result<Option<Duration>, String> {
        self.finish(d)?;
        self.clock.as_ref().map(|c| c.elapsed(d, pair)).transpose()
    }

    /// Keeps `buffer` until the kernels recorded so far and next (in this launch) have run.
    pub(super) fn keep_until_run(&mut self, buffer: Arc<Buffer>) {
        self.keep.push(buffer);
    }

    /// Runs what is recorded now, keeping a failure for the next [`Batch::finish`] (for a
    /// caller that only asks whether the device is idle); printed now too, in case no one
    /// waits again.
    pub(super) fn run_now(&mut self, d: &ash::Device) {
        if let Err(e) = self.finish(d) {
            crate::log::append(&format!("Vulkan kernels failed: {e}"));
            self.unseen = Some(e);
        }
    }

    /// Submits what is recorded and waits for it; an error is this batch's, or an earlier
    /// one's that no caller has seen.
    pub(super) fn finish(&mut self, d: &ash::Device) -> Result<(), String> {
        if let Some(e) = self.unseen.take() {
            return Err(e);
        }
        if self.recorded > 0 {
            self.recorded = 0;
            if let Err(e) = self.submit_and_wait(d) {
                self.watched.clear();
                // The kernels may still run: leak what they use rather than reuse it under
                // them.
                std::mem::take(&mut self.keep)
                    .into_iter()
                    .for_each(std::mem::forget);
                std::mem::forget(std::mem::replace(&mut self.arena, Arena::new()));
                return Err(e);
            }
            self.read_watched();
            self.keep.clear();
        }
        if !self.in_launch {
            self.arena.reset();
        }
        Ok(())
    }

    /// Reads the status word at `address` of a dispatch recorder `id` recorded when it has
    /// run ([`Batch::take_tripped`] then names it if its loops reached the device's limit).
    /// The word lives in memory the batch keeps until then (the arena's or a kept buffer).
    pub(super) fn watch(&mut self, (id, address): (u64, u64), what: String) {
        self.watched.push(((id, address), what));
    }

    /// Whether recorded dispatches have status words to read when they have run.
    pub(super) fn watching(&self) -> bool {
        !self.watched.is_empty()
    }

    /// The dispatches of recorder `id` that have run with their status word set.
    pub(super) fn take_tripped(&mut self, id: u64) -> Vec<String> {
        let (mine, others) = std::mem::take(&mut self.tripped)
            .into_iter()
            .partition(|(by, _)| *by == id);
        self.tripped = others;
        mine.into_iter().map(|(_, what)| what).collect()
    }

    /// Moves every watched dispatch whose status word is set to `tripped` (the batch ran).
    fn read_watched(&mut self) {
        for ((id, address), what) in std::mem::take(&mut self.watched) {
            let word = self
                .arena
                .word_at(address)
                .or_else(|| self.keep.iter().find_map(|b| b.word_at(address)));
            if word.is_some_and(|w| w != 0) {
                self.tripped.push((id, what));
            }
        }
    }

    fn submit_and_wait(&mut self, d: &ash::Device) -> Result<(), String> {
        let c = self.commands;
        // SAFETY: the command buffer is in the recording state (something was recorded);
        // the fence is not pending.
        unsafe {
            // The commands' writes made visible to the host that waits for them.
            barrier(
                d,
                c,
                vk::PipelineStageFlags::HOST,
                vk::AccessFlags::HOST_READ,
            );
            d.end_command_buffer(c).map_err(|e| fail("recording", e))?;
            let commands = [c];
            let submit = [vk::SubmitInfo::default().command_buffers(&commands)];
            d.reset_fences(&[self.fence])
                .map_err(|e| fail("resetting the fence", e))?;
            d.queue_submit(self.queue, &submit, self.fence)
                .map_err(|e| fail("submitting", e))?;
            match d.wait_for_fences(&[self.fence], true, TIMEOUT.as_nanos() as u64) {
                Ok(()) => Ok(()),
                Err(vk::Result::TIMEOUT) => Err(format!(
                    "the kernels did not finish in {} s",
                    TIMEOUT.as_secs()
                )),
                Err(e) => Err(fail("waiting for the kernels", e)),
            }
        }
    }

    /// Destroys the handles (the device is idle).
    pub(super) fn destroy(&mut self, d: &ash::Device) {
        self.keep.clear();
        self.arena.clear();
        // SAFETY: nothing is pending; each handle is destroyed once.
        unsafe {
            d.destroy_fence(self.fence, None);
            d.destroy_command_pool(self.pool, None);
        }
        if let Some(clock) = self.clock.take() {
            clock.destroy(d);
        }
    }
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
