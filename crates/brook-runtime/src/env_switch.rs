//! A process-wide on/off setting whose first value comes from an environment variable
//! (`BRT_PROFILE=1`) and which the program may set itself: read once, at the first question,
//! then an atomic load (no environment lookup per launch).

use std::sync::atomic::{AtomicU8, Ordering};

pub struct EnvSwitch {
    var: &'static str,
    /// 0: not decided yet, 1: off, 2: on.
    mode: AtomicU8,
}

impl EnvSwitch {
    pub const fn new(var: &'static str) -> EnvSwitch {
        EnvSwitch {
            var,
            mode: AtomicU8::new(0),
        }
    }

    /// Sets it for the rest of the process (overriding the variable).
    pub fn set(&self, on: bool) {
        self.mode.store(if on { 2 } else { 1 }, Ordering::SeqCst);
    }

    /// Whether it is on: set, else the variable set to anything but empty or `0`.
    pub fn is_on(&self) -> bool {
        match self.mode.load(Ordering::Relaxed) {
            0 => {
                let on = std::env::var(self.var).is_ok_and(|v| !v.is_empty() && v != "0");
                let decided = if on { 2 } else { 1 };
                let _ = self
                    .mode
                    .compare_exchange(0, decided, Ordering::SeqCst, Ordering::SeqCst);
                self.mode.load(Ordering::SeqCst) == 2
            }
            mode => mode == 2,
        }
    }
}
