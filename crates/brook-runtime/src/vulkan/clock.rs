//! The device's clock: timestamps written into the batch's command buffer around work and
//! read once it has run, for [`crate::Device::gpu_time`] and profiled launches.
//!
//! Queries come in pairs, a start and an end ([`Pair`]): `gpu_time` and a profiled launch
//! inside it use different pairs, so neither overwrites the other's.

use ash::vk;
use std::time::Duration;

/// A pair of timestamp queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pair {
    /// Around the work of [`crate::Device::gpu_time`].
    Work,
    /// Around one profiled launch.
    Launch,
}

impl Pair {
    /// The pair's first query.
    fn first(self) -> u32 {
        match self {
            Pair::Work => 0,
            Pair::Launch => 2,
        }
    }
}

/// A query pool of timestamps and how to read them.
pub(super) struct Clock {
    pool: vk::QueryPool,
    /// Nanoseconds per tick (`timestampPeriod`).
    period_ns: f64,
    /// The bits of a timestamp that count (`timestampValidBits` of the queue family).
    mask: u64,
}

impl Clock {
    /// The clock of a queue family whose timestamps have `bits` valid bits, a tick `period`
    /// nanoseconds long; `None` where the family has no timestamps.
    pub(super) fn new(
        d: &ash::Device,
        (bits, period): (u32, f32),
    ) -> Result<Option<Clock>, String> {
        if bits == 0 || period <= 0.0 {
            return Ok(None);
        }
        let create = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::TIMESTAMP)
            .query_count(4);
        // SAFETY: the device is live; the create info lives across the call.
        let pool = unsafe { d.create_query_pool(&create, None) }
            .map_err(|e| format!("creating a timestamp query pool failed: {e}"))?;
        Ok(Some(Clock {
            pool,
            period_ns: f64::from(period),
            mask: if bits >= 64 {
                u64::MAX
            } else {
                (1 << bits) - 1
            },
        }))
    }

    /// Records into `c` the timestamp of the start (`end` false) or end of `pair`, taken
    /// when the commands recorded before it have completed.
    ///
    /// # Safety
    /// `c` is recording, outside a render pass.
    pub(super) unsafe fn record(
        &self,
        d: &ash::Device,
        c: vk::CommandBuffer,
        pair: Pair,
        end: bool,
    ) {
        let query = pair.first() + u32::from(end);
        // SAFETY: as the caller promises; the query is this pool's.
        unsafe {
            d.cmd_reset_query_pool(c, self.pool, query, 1);
            d.cmd_write_timestamp(c, vk::PipelineStageFlags::BOTTOM_OF_PIPE, self.pool, query);
        }
    }

    /// The time between the start and the end of `pair`, both written by work that has run.
    pub(super) fn elapsed(&self, d: &ash::Device, pair: Pair) -> Result<Duration, String> {
        let mut ticks = [0u64; 2];
        // SAFETY: both queries were written by a submission that was waited for.
        unsafe {
            d.get_query_pool_results(
                self.pool,
                pair.first(),
                &mut ticks,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )
        }
        .map_err(|e| format!("reading the timestamps failed: {e}"))?;
        let ticks = ticks[1].wrapping_sub(ticks[0]) & self.mask;
        Ok(Duration::from_secs_f64(ticks as f64 * self.period_ns / 1e9))
    }

    /// Destroys the pool (the device is idle).
    pub(super) fn destroy(&self, d: &ash::Device) {
        // SAFETY: nothing pending uses the pool; it is destroyed once.
        unsafe { d.destroy_query_pool(self.pool, None) };
    }
}
