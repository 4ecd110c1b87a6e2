//! Launch-lived device memory: parameter blocks, scratch frames and a reduction's partial
//! results, cut from a few large buffers and given back all at once when the batch that used
//! them has run. A launch then allocates nothing from the driver (allocating device memory
//! costs about a hundred microseconds on NVIDIA's driver; a launch should cost a few).

use super::memory::Buffer;

/// The size of each of the arena's buffers; larger requests go to the pool.
pub(super) const CHUNK: u64 = 4 << 20;
/// Where pieces start (a kernel's loads of a piece are aligned to this).
const ALIGN: u64 = 256;

/// Pieces of large buffers, handed out in order and all taken back at once.
pub(super) struct Arena {
    chunks: Vec<Buffer>,
    /// The chunk pieces are cut from, and how much of it is used.
    current: usize,
    used: u64,
}

impl Arena {
    pub(super) fn new() -> Arena {
        Arena {
            chunks: Vec::new(),
            current: 0,
            used: 0,
        }
    }

    /// `data` written into a new piece (at least `bytes` long, `bytes >= data.len()`,
    /// at most [`CHUNK`]); its device address. `make` allocates a chunk when all are used.
    pub(super) fn take(
        &mut self,
        data: &[u8],
        bytes: u64,
        make: impl FnOnce(u64) -> Result<Buffer, String>,
    ) -> Result<u64, String> {
        let (chunk, at) = self.take_piece(bytes.max(data.len() as u64), make)?;
        let chunk = &self.chunks[chunk];
        // SAFETY: the piece is in the chunk and no one else holds it: pieces are handed out
        // once between resets, and a reset comes after the kernels ran.
        unsafe { chunk.write_at(at, data) };
        Ok(chunk.address() + at)
    }

    /// A new piece of at least `bytes` (at most [`CHUNK`]): its chunk's buffer and where the
    /// piece starts in it.
    pub(super) fn take_buffer(
        &mut self,
        bytes: u64,
        make: impl FnOnce(u64) -> Result<Buffer, String>,
    ) -> Result<(&Buffer, u64), String> {
        let (chunk, at) = self.take_piece(bytes, make)?;
        Ok((&self.chunks[chunk], at))
    }

    /// A new piece of at least `bytes`: its chunk's index and where it starts there.
    fn take_piece(
        &mut self,
        bytes: u64,
        make: impl FnOnce(u64) -> Result<Buffer, String>,
    ) -> Result<(usize, u64), String> {
        let size = bytes.max(1).next_multiple_of(ALIGN);
        assert!(size <= CHUNK, "an arena piece larger than a chunk");
        if self.chunks.is_empty() || self.used + size > CHUNK {
            if !self.chunks.is_empty() {
                self.current += 1;
            }
            if self.current == self.chunks.len() {
                self.chunks.push(make(CHUNK)?);
            }
            self.used = 0;
        }
        let at = self.used;
        self.used += size;
        Ok((self.current, at))
    }

    /// The 32-bit word at device address `address`, where one of the chunks holds it.
    pub(super) fn word_at(&self, address: u64) -> Option<u32> {
        self.chunks.iter().find_map(|c| c.word_at(address))
    }

    /// Takes every piece back (the kernels that used them have run).
    pub(super) fn reset(&mut self) {
        self.current = 0;
        self.used = 0;
    }

    /// Frees the chunks (the context is closing).
    pub(super) fn clear(&mut self) {
        self.reset();
        self.chunks.clear();
    }
}
