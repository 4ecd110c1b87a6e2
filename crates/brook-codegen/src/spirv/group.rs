//! Thread groups in SPIR-V: a workgroup per group of `GroupSize` instances (consecutive in
//! the execution region, as on every device), `shared` locals in one `Workgroup` array of
//! 32-bit words (zeroed when the group starts), barriers as `OpControlBarrier` at workgroup
//! scope with acquire-release semantics on workgroup memory.
//!
//! A shared local's "address" is its byte offset in the array (a `u64`, as the shared
//! lowering computes addresses); a leaf is read and written as the words it covers (a
//! narrower leaf by read-modify-write of its word: each thread writes only its own share of a
//! shared array, whose elements are 128-bit).
//!
//! Threads past the region's end leave before the body, as on the other GPUs; Vulkan asks
//! every invocation of a workgroup to reach each barrier, and drivers (NVIDIA's, Mesa's) let
//! the ones that left not count, as CUDA does.

use super::lower::Lower;
use brook_ir::ScalarKind;
use rspirv::spirv::{StorageClass, Word};

/// Workgroup scope (`Scope::Workgroup`).
const WORKGROUP_SCOPE: u32 = 2;
/// `AcquireRelease | WorkgroupMemory`.
const BARRIER_SEMANTICS: u32 = 0x8 | 0x100;

/// A group kernel's shared memory and its thread's index in the group.
#[derive(Clone, Copy, Debug)]
pub struct Group {
    pub size: u32,
    /// The thread's index in its group (`LocalInvocationId.x`), a `u64`.
    pub tid: Word,
    /// The `Workgroup` array of words, and how many words it has (0: none).
    pub words: (Word, u32),
}

impl Lower<'_> {
    /// Declares the group's shared array of `bytes` bytes (a multiple of 16).
    pub fn declare_shared(&mut self, bytes: u32) {
        let Some(group) = &mut self.group else {
            return;
        };
        let words = bytes / 4;
        if words == 0 {
            return;
        }
        let u32_ty = self.s.u32_ty();
        let count = self.s.const_u32(words);
        let array = self.s.b.type_array(u32_ty, count);
        let ptr = self.s.b.type_pointer(None, StorageClass::Workgroup, array);
        let var = self.s.global_variable(ptr, StorageClass::Workgroup, None);
        group.words = (var, words);
    }

    /// A pointer to word `index` (a `u32`) of the shared array.
    fn shared_word(&mut self, index: Word) -> Word {
        let group = self.group.expect("shared memory in a group kernel");
        let u32_ty = self.s.u32_ty();
        let ptr = self.s.b.type_pointer(None, StorageClass::Workgroup, u32_ty);
        self.s
            .b
            .access_chain(ptr, None, group.words.0, [index])
            .expect("in a block")
    }

    /// Word index and bit shift of byte address `addr` (a `u64`).
    fn word_of(&mut self, addr: Word) -> (Word, Word) {
        let u32_ty = self.s.u32_ty();
        let byte = self.s.b.u_convert(u32_ty, None, addr).expect("in a block");
        let two = self.s.const_u32(2);
        let index = self
            .s
            .b
            .shift_right_logical(u32_ty, None, byte, two)
            .expect("in a block");
        let three = self.s.const_u32(3);
        let within = self
            .s
            .b
            .bitwise_and(u32_ty, None, byte, three)
            .expect("in a block");
        let shift = self
            .s
            .b
            .shift_left_logical(u32_ty, None, within, three)
            .expect("in a block");
        (index, shift)
    }

    fn load_word(&mut self, index: Word) -> Word {
        let ptr = self.shared_word(index);
        let u32_ty = self.s.u32_ty();
        self.s
            .b
            .load(u32_ty, None, ptr, None, [])
            .expect("in a block")
    }

    fn store_word(&mut self, index: Word, value: Word) {
        let ptr = self.shared_word(index);
        self.s.b.store(ptr, value, None, []).expect("in a block");
    }

    /// A leaf of `kind` at byte address `addr` of the shared array.
    pub fn shared_load(&mut self, kind: ScalarKind, addr: Word) -> Word {
        let (index, shift) = self.word_of(addr);
        let u32_ty = self.s.u32_ty();
        let container = self.s.container(kind);
        match kind.size() {
            4 => {
                let word = self.load_word(index);
                self.s.b.bitcast(container, None, word).expect("in a block")
            }
            8 => {
                let u64_ty = self.s.u64_ty();
                let lo = self.load_word(index);
                let one = self.s.const_u32(1);
                let next = self
                    .s
                    .b
                    .i_add(u32_ty, None, index, one)
                    .expect("in a block");
                let hi = self.load_word(next);
                let lo = self.s.b.u_convert(u64_ty, None, lo).expect("in a block");
                let hi = self.s.b.u_convert(u64_ty, None, hi).expect("in a block");
                let thirty_two = self.s.const_u64(32);
                let hi = self
                    .s
                    .b
                    .shift_left_logical(u64_ty, None, hi, thirty_two)
                    .expect("in a block");
                let both = self
                    .s
                    .b
                    .bitwise_or(u64_ty, None, lo, hi)
                    .expect("in a block");
                self.s.b.bitcast(container, None, both).expect("in a block")
            }
            bytes => {
                let word = self.load_word(index);
                let moved = self
                    .s
                    .b
                    .shift_right_logical(u32_ty, None, word, shift)
                    .expect("in a block");
                let mask = self.s.const_u32(if bytes == 1 { 0xff } else { 0xffff });
                let raw = self
                    .s
                    .b
                    .bitwise_and(u32_ty, None, moved, mask)
                    .expect("in a block");
                self.s.from_stored_bits(kind, raw)
            }
        }
    }

    /// Stores a leaf of `kind` at byte address `addr` of the shared array.
    pub fn shared_store(&mut self, kind: ScalarKind, addr: Word, value: Word) {
        let (index, shift) = self.word_of(addr);
        let u32_ty = self.s.u32_ty();
        match kind.size() {
            4 => {
                let word = self.s.b.bitcast(u32_ty, None, value).expect("in a block");
                self.store_word(index, word);
            }
            8 => {
                let u64_ty = self.s.u64_ty();
                let bits = self.s.b.bitcast(u64_ty, None, value).expect("in a block");
                let lo = self.s.b.u_convert(u32_ty, None, bits).expect("in a block");
                let thirty_two = self.s.const_u64(32);
                let hi = self
                    .s
                    .b
                    .shift_right_logical(u64_ty, None, bits, thirty_two)
                    .expect("in a block");
                let hi = self.s.b.u_convert(u32_ty, None, hi).expect("in a block");
                self.store_word(index, lo);
                let one = self.s.const_u32(1);
                let next = self
                    .s
                    .b
                    .i_add(u32_ty, None, index, one)
                    .expect("in a block");
                self.store_word(next, hi);
            }
            bytes => {
                let mask = self.s.const_u32(if bytes == 1 { 0xff } else { 0xffff });
                let raw = self.s.to_stored_bits(kind, value);
                let raw = self
                    .s
                    .b
                    .bitwise_and(u32_ty, None, raw, mask)
                    .expect("in a block");
                let placed = self
                    .s
                    .b
                    .shift_left_logical(u32_ty, None, raw, shift)
                    .expect("in a block");
                let hole = self
                    .s
                    .b
                    .shift_left_logical(u32_ty, None, mask, shift)
                    .expect("in a block");
                let keep = self.s.b.not(u32_ty, None, hole).expect("in a block");
                let word = self.load_word(index);
                let kept = self
                    .s
                    .b
                    .bitwise_and(u32_ty, None, word, keep)
                    .expect("in a block");
                let merged = self
                    .s
                    .b
                    .bitwise_or(u32_ty, None, kept, placed)
                    .expect("in a block");
                self.store_word(index, merged);
            }
        }
    }

    /// A workgroup barrier over workgroup memory.
    pub fn group_barrier(&mut self) {
        let scope = self.s.const_u32(WORKGROUP_SCOPE);
        let semantics = self.s.const_u32(BARRIER_SEMANTICS);
        self.s
            .b
            .control_barrier(scope, scope, semantics)
            .expect("in a block");
    }

    /// Zeroes the shared array (each thread a strided share of its words), then the group
    /// waits; nothing without shared locals.
    pub fn zero_shared(&mut self) {
        let Some(group) = self.group else {
            return;
        };
        let (_, words) = group.words;
        if words == 0 {
            return;
        }
        use crate::lower::Target;
        use brook_ir::BinaryOp;
        let word = self.temporary(ScalarKind::U64);
        self.write_var(word, group.tid);
        let each = self.begin_loop();
        let at = self.read_var(word);
        let end = self.index_constant(u64::from(words));
        let done = self.binary(BinaryOp::Ge, ScalarKind::U64, at, end);
        let stop = self.begin_if(done);
        self.jump_break(each);
        self.end_if(stop);
        let u32_ty = self.s.u32_ty();
        let index = self.s.b.u_convert(u32_ty, None, at).expect("in a block");
        let zero = self.s.const_u32(0);
        self.store_word(index, zero);
        let step = self.index_constant(u64::from(group.size));
        let next = self.binary(BinaryOp::Add, ScalarKind::U64, at, step);
        self.write_var(word, next);
        self.begin_continuing(each);
        self.end_loop(each);
        self.group_barrier();
    }
}
