//! What a context records kernels into: launches are recorded one after the other (a
//! barrier between each two: every kernel sees its predecessors' writes) and submitted in
//! runs, so a launch costs its recording, not a submission and a wait (tens of microseconds
//! on a GPU). A run is submitted when a launch ends and the GPU has finished the run before
//! (the first launch after a wait goes at once; each later run waits for twice as many
//! launches as the one before, so a stream of tiny launches costs few submissions), and
//! when the host needs results (a download, a synchronize, a buffer freed) or the batch is
//! full; the host then waits for everything.

use super::arena::Arena;
use super::clock::{Clock, Pair};
use super::context::Pipeline;
use super::memory::Buffer;
use super::submit::Submissions;
use ash::vk;
use std::sync::Arc;
use std::time::Duration;

/// Commands recorded at most between two waits for everything (launch-lived memory is
/// taken back at a wait).
const MAX_RECORDED: u32 = 1024;

/// The most launches a run waits for before it is submitted to a GPU that is idle.
const MAX_RUN: u32 = 64;

/// The command buffers and what is recorded in them.
pub(super) struct Batch {
    submissions: Submissions,
    /// Commands recorded in the current buffer, not yet submitted.
    recorded: u32,
    /// Commands recorded since the last wait for everything.
    since_wait: u32,
    /// Launches ended in the current buffer, and how many a run waits for before it is
    /// submitted to an idle GPU (1 after a wait, doubled at each run up to [`MAX_RUN`]).
    launches: u32,
    run_length: u32,
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
        let mut submissions = Submissions::new(device, family)?;
        let clock = Clock::new(device, clock).inspect_err(|_| submissions.destroy(device))?;
        Ok(Batch {
            submissions,
            recorded: 0,
            since_wait: 0,
            launches: 0,
            run_length: 1,
            keep: Vec::new(),
            unseen: None,
            arena: Arena::new(),
            in_launch: false,
            clock,
            watched: Vec::new(),
            tripped: Vec::new(),
        })
    }

    /// Records `pipeline` over `groups` workgroups with `push` as its push constants, after
    /// the kernels recorded before it. Submits and waits when the batch is full.
    pub(super) fn record(
        &mut self,
        d: &ash::Device,
        pipeline: &Pipeline,
        (push, groups): (&[u8], [u32; 3]),
    ) -> Result<(), String> {
        // SAFETY: the command buffer is this batch's current one, recording; the pipeline
        // lives until the batch is finished (the pipeline cache finishes it before
        // destroying any).
        unsafe {
            let c = self.next_command(d)?;
            d.cmd_bind_pipeline(c, vk::PipelineBindPoint::COMPUTE, pipeline.pipeline);
            if !push.is_empty() {
                d.cmd_push_constants(c, pipeline.layout, vk::ShaderStageFlags::COMPUTE, 0, push);
            }
            let [x, y, z] = groups;
            d.cmd_dispatch(c, x, y, z);
        }
        if self.since_wait >= MAX_RECORDED {
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
            let c = self.next_command(d)?;
            d.cmd_copy_buffer(c, from, to, &[region]);
        }
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
            let c = self.next_command(d)?;
            d.cmd_fill_buffer(c, buffer, offset, bytes, 0);
        }
        Ok(())
    }

    /// The command buffer to record the next command into, counted: begun for the first
    /// command after a submission, else with a barrier after the commands recorded before
    /// (each command sees its predecessors' writes).
    ///
    /// # Safety
    /// The caller records one command into the buffer, outside a render pass.
    unsafe fn next_command(&mut self, d: &ash::Device) -> Result<vk::CommandBuffer, String> {
        // SAFETY: the current buffer is recording unless nothing is recorded since the last
        // submission (then it is neither recording nor pending).
        unsafe {
            if self.recorded == 0 {
                self.submissions.begin(d)?;
            } else {
                self.submissions.barrier(d);
            }
        }
        self.recorded += 1;
        self.since_wait += 1;
        Ok(self.submissions.commands())
    }

    /// Ends a launch: submits what is recorded if the run is long enough and the GPU has
    /// finished the run before. A failure is kept for the next [`Batch::finish`] and
    /// printed now.
    pub(super) fn end_launch(&mut self, d: &ash::Device) {
        self.in_launch = false;
        if self.recorded == 0 || self.unseen.is_some() {
            return;
        }
        self.launches += 1;
        if self.launches < self.run_length {
            return;
        }
        let submitted = self.submissions.other_is_free(d).and_then(|free| {
            if free {
                // SAFETY: the current buffer is recording (something is recorded).
                unsafe { self.submissions.submit(d) }?;
            }
            Ok(free)
        });
        match submitted {
            Ok(false) => {}
            Ok(true) => {
                self.recorded = 0;
                self.launches = 0;
                self.run_length = (self.run_length * 2).min(MAX_RUN);
            }
            Err(e) => {
                crate::log::append(&format!("Vulkan kernels failed: {e}"));
                self.recorded = 0;
                self.unseen = Some(e);
            }
        }
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
            let c = self.next_command(d)?;
            if let Some(clock) = &self.clock {
                clock.record(d, c, pair, end);
            }
        }
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
            // Runs submitted before the failure may still run: wait for them before anyone
            // frees what they use.
            if self.submissions.wait_all(d).is_err() {
                self.abandon();
            }
            return Err(e);
        }
        if self.since_wait > 0 {
            let recorded = std::mem::take(&mut self.recorded);
            (self.since_wait, self.launches, self.run_length) = (0, 0, 1);
            // SAFETY: the current buffer is recording when something is recorded in it.
            let submitted = match recorded {
                0 => Ok(()),
                _ => unsafe { self.submissions.submit(d) },
            };
            if let Err(e) = submitted.and_then(|()| self.submissions.wait_all(d)) {
                self.abandon();
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

    /// Gives up on the submitted runs after a failed wait: they may still run, so what they
    /// use is leaked rather than reused under them, and no later wait waits for them again.
    fn abandon(&mut self) {
        self.watched.clear();
        std::mem::take(&mut self.keep)
            .into_iter()
            .for_each(std::mem::forget);
        std::mem::forget(std::mem::replace(&mut self.arena, Arena::new()));
        self.submissions.abandon();
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

    /// Destroys the handles (the device is idle).
    pub(super) fn destroy(&mut self, d: &ash::Device) {
        self.keep.clear();
        self.arena.clear();
        self.submissions.destroy(d);
        if let Some(clock) = self.clock.take() {
            clock.destroy(d);
        }
    }
}
