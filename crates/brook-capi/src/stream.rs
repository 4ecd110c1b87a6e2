//! Streams (Brook+ `Stream<T>`) behind an opaque handle.
//!
//! A declaration that fails (an unknown element type, a zero or too many dimensions, no
//! memory) still gives a handle: a stream in the `BR_ERROR_DECLARATION` state on which every
//! operation records another error, as Brook+ describes. Positions and dimensions are x-first
//! (fastest axis first), as in the Brook+ C++ API.

use crate::iter::BrkIter;
use crate::{guard, names, text};
use brook_runtime::element::ElementType;
use brook_runtime::{BError, PendingWrite, RawStream};
use std::ffi::{c_char, c_int, CString};
use std::sync::{Arc, Mutex};

/// A `write(ptr, "async")` waiting to be delivered into `to`.
struct Pending {
    write: PendingWrite,
    to: usize,
    len: usize,
}

/// A stream handle.
pub struct BrkStream {
    /// `None` when the declaration failed. Shared by every handle to the stream (C++ copies),
    /// so a vout launch that gives the stream new contents and a new length replaces it for
    /// all of them.
    cell: Arc<Mutex<Option<RawStream>>>,
    element: Option<ElementType>,
    /// Why the stream could not be made (its code and message), and whether `error()` has
    /// reported it yet.
    failure: Mutex<Option<(BError, String, bool)>>,
    /// The text last returned by `errorLog()` (kept alive for the caller).
    log: Mutex<CString>,
    pending: Mutex<Vec<Pending>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl BrkStream {
    fn new(
        raw: Result<RawStream, (BError, String)>,
        element: Option<ElementType>,
    ) -> *mut BrkStream {
        if let Err((code, message)) = &raw {
            // A stream that could not be made is seen even if nobody calls error().
            brook_runtime::log::append(&format!("error: {code}: {message}"));
        }
        BrkStream::quiet(raw, element)
    }

    /// [`BrkStream::new`] without printing a failure (another handle to a failed stream).
    fn quiet(
        raw: Result<RawStream, (BError, String)>,
        element: Option<ElementType>,
    ) -> *mut BrkStream {
        let (raw, failure) = match raw {
            Ok(raw) => (Some(raw), None),
            Err((code, message)) => (None, Some((code, message, false))),
        };
        Box::into_raw(Box::new(BrkStream {
            cell: Arc::new(Mutex::new(raw)),
            element,
            failure: Mutex::new(failure),
            log: Mutex::new(CString::default()),
            pending: Mutex::new(Vec::new()),
        }))
    }

    /// The stream, or (for a failed declaration) records that `operation` cannot run.
    fn usable(&self, operation: &str) -> Option<(RawStream, ElementType)> {
        match (self.raw(), &self.element) {
            (Some(raw), Some(element)) => Some((raw, element.clone())),
            _ => {
                if let Some((code, message, reported)) = lock(&self.failure).as_mut() {
                    let first = message.lines().next().unwrap_or_default().to_string();
                    brook_runtime::log::append(&format!(
                        "error: {code}: {operation}: the stream was not created, nothing was done ({first})"
                    ));
                    message.push_str(&format!(
                        "\n{operation}: the stream was not created (see the first error)"
                    ));
                    *reported = false;
                }
                None
            }
        }
    }

    /// Why the stream was not created (the first line of its error), for launch messages.
    pub(crate) fn failure_reason(&self) -> String {
        lock(&self.failure)
            .as_ref()
            .and_then(|(_, message, _)| message.lines().next().map(str::to_string))
            .unwrap_or_else(|| "its declaration failed".to_string())
    }

    /// Records that a launch writing this stream was refused (`message`, printed once): on the
    /// stream, or, where its declaration failed, by reporting that failure again at the next
    /// `error()` with the launch's message added to its log.
    pub(crate) fn fail(&self, code: BError, message: &str) {
        if let Some(raw) = self.raw() {
            raw.record_error(code, message);
            return;
        }
        brook_runtime::log::append(&format!("error: {code}: {message}"));
        if let Some((_, log, reported)) = lock(&self.failure).as_mut() {
            *reported = false;
            log.push('\n');
            log.push_str(message);
        }
    }

    /// The runtime stream (`None` when the declaration failed).
    pub(crate) fn raw(&self) -> Option<RawStream> {
        lock(&self.cell).clone()
    }

    /// Gives the stream, for this handle and every other handle to it, new contents (the
    /// values a vout launch pushed).
    pub(crate) fn replace(&self, raw: RawStream) {
        *lock(&self.cell) = Some(raw);
    }

    /// Copies finished asynchronous writes to their host memory; with `wait`, all of them.
    fn deliver(&self, wait: bool) {
        let mut pending = lock(&self.pending);
        let mut keep = Vec::new();
        for p in pending.drain(..) {
            if !wait && !p.write.is_done() {
                keep.push(p);
                continue;
            }
            if let Ok(bytes) = p.write.wait() {
                let n = bytes.len().min(p.len);
                // SAFETY: the caller of `write(ptr, "async")` keeps `ptr` valid (and of the
                // stream's size) until `isSync()` is true or `finish()` returns, as Brook+
                // requires; this runs inside one of those calls.
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.to as *mut u8, n) };
            }
        }
        *pending = keep;
    }
}

/// The flags of a `read`/`write`.
#[derive(Default)]
struct Flags {
    /// `"async"`: return at once.
    is_async: bool,
    /// `"nocopy"`: transfer from or to the caller's memory directly (Brook+ memory pinning).
    nocopy: bool,
}

/// Brook+ pins memory for `"nocopy"` only from a 256-byte-aligned pointer; other pointers take
/// the usual path, silently (seed 001 section 1.14.2).
const PIN_ALIGNMENT: usize = 256;

/// Parses a `read`/`write` flag string: `"async"`, `"nocopy"`, separated by spaces.
fn flags(raw: &RawStream, operation: &str, flags: *const c_char) -> Option<Flags> {
    // SAFETY: the caller passes null or a NUL-terminated string.
    let Some(flags) = (unsafe { text(flags) }) else {
        return Some(Flags::default());
    };
    let mut parsed = Flags::default();
    for flag in flags.split_whitespace() {
        match flag {
            "async" => parsed.is_async = true,
            "nocopy" => parsed.nocopy = true,
            other => {
                raw.record_error(
                    BError::InvalidParameter,
                    &format!("{operation}: unknown flag `{other}` (expected `async` or `nocopy`)"),
                );
                return None;
            }
        }
    }
    Some(parsed)
}

/// Declares a stream of the element type `type_name` (`"float4"`) with `rank` dimensions
/// `dims` (x-first) on the calling thread's device. Never null.
///
/// # Safety
/// `type_name` is null or a C string; `dims` points at `rank` values (or `rank` is 0).
#[no_mangle]
pub unsafe extern "C" fn brk_stream_new(
    type_name: *const c_char,
    rank: u32,
    dims: *const u32,
) -> *mut BrkStream {
    // SAFETY: as documented; no declaration site.
    unsafe { brk_stream_new_at(type_name, rank, dims, std::ptr::null()) }
}

/// [`brk_stream_new`] with the place the program declares the stream (`"sum.br:12"`, or
/// null), which a declaration error names.
///
/// # Safety
/// As [`brk_stream_new`]; `site` is null or a C string.
#[no_mangle]
pub unsafe extern "C" fn brk_stream_new_at(
    type_name: *const c_char,
    rank: u32,
    dims: *const u32,
    site: *const c_char,
) -> *mut BrkStream {
    guard(std::ptr::null_mut(), || {
        // SAFETY: as documented.
        let name = unsafe { text(type_name) }.unwrap_or("");
        // SAFETY: as documented.
        let operation = match unsafe { text(site) } {
            Some(site) => format!("Stream Declaration (at {site})"),
            None => "Stream Declaration".to_string(),
        };
        let Some(element) = names::element_type(name) else {
            let message = format!("{operation}: unknown element type `{name}`");
            return BrkStream::new(Err((BError::Declaration, message)), None);
        };
        if dims.is_null() || !(1..=4).contains(&rank) {
            let message = format!("{operation}: a stream has 1 to 4 dimensions, not {rank}");
            return BrkStream::new(Err((BError::Declaration, message)), Some(element));
        }
        // SAFETY: `dims` holds `rank` values.
        let x_first = unsafe { std::slice::from_raw_parts(dims, rank as usize) };
        let slowest_first: Vec<usize> = x_first.iter().rev().map(|&d| d as usize).collect();
        let device = brook_runtime::current_device();
        let raw = RawStream::new(&device, element.clone(), &slowest_first)
            .map_err(|e| (BError::Declaration, format!("{operation}: {e}")));
        BrkStream::new(raw, Some(element))
    })
}

/// A new stream on the current device holding an iterator's values, row-major (the stream
/// operators take an iterator as their index stream this way). Never null: a bad iterator gives
/// a stream in error (`BR_ERROR_INVALID_PARAMATER`, with the iterator's reason).
///
/// # Safety
/// `iter` is null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn brk_stream_of_iter(iter: *const BrkIter) -> *mut BrkStream {
    guard(std::ptr::null_mut(), || {
        // SAFETY: null or a live handle.
        let iter = match unsafe { iter.as_ref() }.map(|i| &i.iter) {
            Some(Ok(iter)) => iter.clone(),
            Some(Err(reason)) => {
                return BrkStream::new(Err((BError::InvalidParameter, reason.clone())), None)
            }
            None => {
                let reason = "Iterator Stream: no iterator".to_string();
                return BrkStream::new(Err((BError::InvalidParameter, reason)), None);
            }
        };
        let element = iter.element();
        let device = brook_runtime::current_device();
        let raw = RawStream::new(&device, element.clone(), iter.shape())
            .and_then(|raw| raw.read_bytes(&element, &iter.to_bytes()).map(|()| raw))
            .map_err(|e| (BError::InvalidParameter, format!("Iterator Stream: {e}")));
        BrkStream::new(raw, Some(element))
    })
}

/// Another handle to the same stream (C++ copies share the stream, as in Brook+).
///
/// # Safety
/// `stream` is null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn brk_stream_share(stream: *const BrkStream) -> *mut BrkStream {
    guard(std::ptr::null_mut(), || {
        // SAFETY: null or a live handle.
        let Some(s) = (unsafe { stream.as_ref() }) else {
            return std::ptr::null_mut();
        };
        let failure = lock(&s.failure)
            .as_ref()
            .map(|(code, m, _)| (*code, m.clone(), false));
        Box::into_raw(Box::new(BrkStream {
            cell: s.cell.clone(),
            element: s.element.clone(),
            failure: Mutex::new(failure),
            log: Mutex::new(CString::default()),
            pending: Mutex::new(Vec::new()),
        }))
    })
}

/// Releases a handle (the stream's memory goes when its last handle and queued work do).
///
/// # Safety
/// `stream` is null or a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn brk_stream_free(stream: *mut BrkStream) {
    if stream.is_null() {
        return;
    }
    guard((), || {
        // SAFETY: a live handle given up by the caller.
        let s = unsafe { Box::from_raw(stream) };
        s.deliver(true);
    });
}

/// The number of dimensions.
///
/// # Safety
/// `stream` is null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn brk_stream_rank(stream: *const BrkStream) -> u32 {
    guard(0, || {
        // SAFETY: null or a live handle.
        unsafe { stream.as_ref() }
            .and_then(BrkStream::raw)
            .map_or(0, |r| r.shape().len() as u32)
    })
}

/// Dimension `axis`, x-first (0 outside the rank).
///
/// # Safety
/// `stream` is null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn brk_stream_dim(stream: *const BrkStream, axis: u32) -> u32 {
    guard(0, || {
        // SAFETY: null or a live handle.
        let Some(raw) = unsafe { stream.as_ref() }.and_then(BrkStream::raw) else {
            return 0;
        };
        let shape = raw.shape();
        let axis = axis as usize;
        if axis < shape.len() {
            shape[shape.len() - 1 - axis] as u32
        } else {
            0
        }
    })
}

/// Brook+ `read(ptr, flags)`: copies the stream's size of host data from `ptr`.
///
/// # Safety
/// `stream` is null or a live handle; `ptr` is null or points at the stream's size in bytes.
#[no_mangle]
pub unsafe extern "C" fn brk_stream_read(
    stream: *mut BrkStream,
    ptr: *const u8,
    flag_text: *const c_char,
) {
    guard((), || {
        // SAFETY: null or a live handle.
        let Some(s) = (unsafe { stream.as_ref() }) else {
            return;
        };
        let Some((ref raw, ref element)) = s.usable("Stream Read") else {
            return;
        };
        let Some(flags) = flags(raw, "Stream Read", flag_text) else {
            return;
        };
        if ptr.is_null() {
            raw.record_error(BError::Read, "Stream Read: the host pointer is null");
            return;
        }
        let len = raw.len() * element.size();
        if flags.nocopy && (ptr as usize).is_multiple_of(PIN_ALIGNMENT) {
            // SAFETY: Brook+ `nocopy`: the caller keeps the data until the stream is in sync.
            let _ = unsafe { raw.read_in_place(element, ptr, len) };
            return;
        }
        // SAFETY: the caller provides the stream's size of data (seed 001: not checked).
        let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
        let _ = raw.read_bytes(element, bytes);
    })
}

/// Brook+ `write(ptr, flags)`: copies the stream to `ptr`, at once or (`"async"`) by the time
/// `isSync()` is true or `finish()` returns.
///
/// # Safety
/// `stream` is null or a live handle; `ptr` is null or points at the stream's size in bytes, valid
/// until the write is delivered.
#[no_mangle]
pub unsafe extern "C" fn brk_stream_write(
    stream: *mut BrkStream,
    ptr: *mut u8,
    flag_text: *const c_char,
) {
    guard((), || {
        // SAFETY: null or a live handle.
        let Some(s) = (unsafe { stream.as_ref() }) else {
            return;
        };
        let Some((ref raw, ref element)) = s.usable("Stream Write") else {
            return;
        };
        let Some(flags) = flags(raw, "Stream Write", flag_text) else {
            return;
        };
        if ptr.is_null() {
            raw.record_error(BError::Write, "Stream Write: the host pointer is null");
            return;
        }
        let len = raw.len() * element.size();
        if flags.nocopy && (ptr as usize).is_multiple_of(PIN_ALIGNMENT) {
            // SAFETY: Brook+ `nocopy`: the caller keeps the memory until the stream is in sync.
            if unsafe { raw.write_in_place(element, ptr, len) }.is_ok() && !flags.is_async {
                raw.finish();
            }
            return;
        }
        if flags.is_async {
            if let Ok(write) = raw.write_async(element) {
                lock(&s.pending).push(Pending {
                    write,
                    to: ptr as usize,
                    len,
                });
            }
            return;
        }
        // SAFETY: the caller provides the stream's size of memory.
        let out = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
        let _ = raw.write_bytes(element, out);
    })
}

/// Brook+ `isSync()`: whether every queued operation on the stream has finished (finished
/// asynchronous writes are delivered).
///
/// # Safety
/// `stream` is null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn brk_stream_is_sync(stream: *mut BrkStream) -> c_int {
    guard(1, || {
        // SAFETY: null or a live handle.
        let Some(s) = (unsafe { stream.as_ref() }) else {
            // Nothing is pending on no stream (a polling loop must end).
            return 1;
        };
        s.deliver(false);
        let idle = s.raw().as_ref().is_none_or(RawStream::is_sync);
        c_int::from(idle && lock(&s.pending).is_empty())
    })
}

/// Brook+ `finish()`: waits for the stream's queued operations; 1 when it holds no error.
///
/// # Safety
/// `stream` is null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn brk_stream_finish(stream: *mut BrkStream) -> c_int {
    guard(0, || {
        // SAFETY: null or a live handle.
        let Some(s) = (unsafe { stream.as_ref() }) else {
            return 0;
        };
        s.deliver(true);
        match s.raw() {
            Some(raw) => c_int::from(raw.finish()),
            None => 0,
        }
    })
}

/// Brook+ `error()`: the first error since the last call (`BR_NO_ERROR` = 0 if none), which
/// it clears.
///
/// # Safety
/// `stream` is null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn brk_stream_error(stream: *mut BrkStream) -> c_int {
    guard(BError::InvalidParameter as c_int, || {
        // SAFETY: null or a live handle.
        let Some(s) = (unsafe { stream.as_ref() }) else {
            return 0;
        };
        s.deliver(false);
        if let Some((code, _, reported)) = lock(&s.failure).as_mut() {
            let code = if *reported { BError::NoError } else { *code };
            *reported = true;
            return code as c_int;
        }
        s.raw()
            .as_ref()
            .map_or(BError::NoError, RawStream::take_error) as c_int
    })
}

/// Records a kernel error (`BR_ERROR_KERNEL`, with `message`) on `stream`: generated code
/// marks a launch's outputs this way when the launch cannot even start (no program defines
/// the kernel), so the outputs are never silently stale.
///
/// # Safety
/// `stream` is null or a live handle; `message` is null or a C string.
#[no_mangle]
pub unsafe extern "C" fn brk_stream_fail(stream: *const BrkStream, message: *const c_char) {
    guard((), || {
        // SAFETY: null or a live handle; null or a C string.
        let (stream, message) = unsafe { (stream.as_ref(), text(message)) };
        if let Some(stream) = stream {
            stream.fail(BError::Kernel, message.unwrap_or("the kernel did not run"));
        }
    })
}

/// Brook+ `errorLog()`: every error and warning recorded on the stream, as one C string,
/// valid until the next `errorLog()` or the handle's release.
///
/// # Safety
/// `stream` is null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn brk_stream_error_log(stream: *mut BrkStream) -> *const c_char {
    guard(c"".as_ptr(), || {
        // SAFETY: null or a live handle.
        let Some(s) = (unsafe { stream.as_ref() }) else {
            return c"".as_ptr();
        };
        let mut text = lock(&s.failure)
            .as_ref()
            .map_or_else(String::new, |(_, m, _)| format!("{m}\n"));
        if let Some(raw) = s.raw() {
            text.push_str(&raw.error_log());
        }
        let mut log = lock(&s.log);
        *log = CString::new(text.replace('\0', " ")).unwrap_or_default();
        log.as_ptr()
    })
}

/// Brook+ `assign(source)`: copies `source` (same type and shape, any device) into `stream`;
/// a null `source` is an error on `stream` (a null `stream`, on stderr).
///
/// # Safety
/// Both are null or live handles.
#[no_mangle]
pub unsafe extern "C" fn brk_stream_assign(stream: *mut BrkStream, source: *const BrkStream) {
    guard((), || {
        // SAFETY: null or live handles.
        let (Some(s), Some(from)) = (unsafe { (stream.as_ref(), source.as_ref()) }) else {
            let message = "Stream Assign: a null stream handle";
            // SAFETY: null or a live handle.
            match unsafe { stream.as_ref() }.and_then(BrkStream::raw) {
                Some(raw) => raw.record_error(BError::InvalidParameter, message),
                None => brook_runtime::log::append(&format!(
                    "error: {}: {message}",
                    BError::InvalidParameter
                )),
            }
            return;
        };
        let Some((ref raw, _)) = s.usable("Stream Assign") else {
            return;
        };
        match from.raw() {
            Some(source) => {
                let _ = raw.assign(&source);
            }
            None => raw.record_error(
                BError::InvalidParameter,
                "Stream Assign: the source stream was not created",
            ),
        }
    })
}

/// Brook+ `domain(start, end)`: the view of the box from `start` to `end` (exclusive), both
/// x-first with one value per dimension. A bad box gives a stream in `BR_ERROR_DOMAIN`.
///
/// # Safety
/// `stream` is null or a live handle; `start` and `end` point at the stream's rank of values.
#[no_mangle]
pub unsafe extern "C" fn brk_stream_domain(
    stream: *const BrkStream,
    start: *const u32,
    end: *const u32,
) -> *mut BrkStream {
    // SAFETY: as documented.
    guard(std::ptr::null_mut(), || unsafe {
        view(stream, start, end, None)
    })
}

/// A view from `count` position components each in `start` and `end` (x-first), for the
/// legacy `domain(int, int)` .. `domain(int4, int4)` and `execDomain(n)`: fewer components
/// than the stream's rank, or extra components other than 0 (start) and 0 or 1 (end), give a
/// view in error (`BR_ERROR_DOMAIN`), never a read past the arrays.
///
/// # Safety
/// `stream` is null or a live handle; `start` and `end` are null or point at `count` values.
#[no_mangle]
pub unsafe extern "C" fn brk_stream_domain_n(
    stream: *const BrkStream,
    start: *const u32,
    end: *const u32,
    count: usize,
) -> *mut BrkStream {
    // SAFETY: as documented.
    guard(std::ptr::null_mut(), || unsafe {
        view(stream, start, end, Some(count))
    })
}

/// The view of `stream` from `start` to `end`, each `count` values long (`None`: the
/// stream's rank).
///
/// # Safety
/// As [`brk_stream_domain_n`] (or [`brk_stream_domain`] for `None`).
unsafe fn view(
    stream: *const BrkStream,
    start: *const u32,
    end: *const u32,
    count: Option<usize>,
) -> *mut BrkStream {
    // SAFETY: null or a live handle.
    let Some(s) = (unsafe { stream.as_ref() }) else {
        return std::ptr::null_mut();
    };
    let Some((ref raw, ref element)) = s.usable("Domain Operator") else {
        // SAFETY: null or a live handle.
        return unsafe { brk_stream_share(stream) };
    };
    let rank = raw.shape().len();
    let count = count.unwrap_or(rank);
    // The refused view's error is kept (and printed once) by the stream the program holds,
    // and by the failed view handle it gets back.
    let fail = |message: String| {
        raw.record_error(BError::Domain, &message);
        BrkStream::quiet(Err((BError::Domain, message)), Some(element.clone()))
    };
    if start.is_null() || end.is_null() || count == 0 {
        return fail("Domain Operator: null start or end point".to_string());
    }
    // SAFETY: the caller provides `count` values each.
    let (start, end) = unsafe {
        (
            std::slice::from_raw_parts(start, count),
            std::slice::from_raw_parts(end, count),
        )
    };
    let extra_ok =
        start.iter().skip(rank).all(|&v| v == 0) && end.iter().skip(rank).all(|&v| v <= 1);
    if count < rank || !extra_ok {
        return fail(format!(
            "Domain Operator: {count} position component(s) for a stream of rank {rank} (start {start:?}, end {end:?}, x first): give one per dimension; components past the rank must be 0"
        ));
    }
    let widen = |v: &[u32]| v[..rank].iter().map(|&x| x as usize).collect::<Vec<_>>();
    match raw.domain(&widen(start), &widen(end)) {
        Ok(view) => BrkStream::new(Ok(view), Some(element.clone())),
        Err(e) => fail(e.to_string()),
    }
}

/// Brook+ `setProperty(name, value)`: interoperability properties (DX) do not exist in this
/// implementation, so this records `BR_ERROR_NOT_SUPPORTED` naming the property.
///
/// # Safety
/// `stream` is null or a live handle; `name` is null or a C string.
#[no_mangle]
pub unsafe extern "C" fn brk_stream_set_property(stream: *mut BrkStream, name: *const c_char) {
    guard((), || {
        // SAFETY: a live handle and a C string, as documented.
        let (Some(s), name) = (unsafe { (stream.as_ref(), text(name).unwrap_or("?")) }) else {
            return;
        };
        if let Some((ref raw, _)) = s.usable("Stream setProperty") {
            raw.record_error(
                BError::NotSupported,
                &format!("Stream setProperty(\"{name}\"): no interoperability (DX) properties exist in this implementation"),
            );
        }
    })
}
