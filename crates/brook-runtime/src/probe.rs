//! TEMPORARY launch-cost probe (not committed).
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
pub static T: [AtomicU64; 12] = [const { AtomicU64::new(0) }; 12];
pub static T2: [AtomicU64; 3] = [const { AtomicU64::new(0) }; 3];
pub fn add2(i: usize, since: Instant) { T2[i].fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed); }
pub static N: AtomicU64 = AtomicU64::new(0);
pub const NAMES: [&str; 12] = ["check", "plan+submit", "caller total", "worker inputs", "bind", "variant", "loaded", "params", "run", "worker launch total", "queue submit", "wakes-per-1000"];
pub fn add(i: usize, since: Instant) { T[i].fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed); }
pub fn count() {
    let n = N.fetch_add(1, Ordering::Relaxed) + 1;
    if n % 4000 == 0 {
        let mut s = String::from("probe (ns per launch):");
        for (i, name) in NAMES.iter().enumerate() { s += &format!(" {name}={}", T[i].swap(0, Ordering::Relaxed) / 4000); }
        s += &format!(" | job(incl drop)={} complete={} gap(pop+wait)={}", T2[0].swap(0, Ordering::Relaxed) / 4000, T2[1].swap(0, Ordering::Relaxed) / 4000, T2[2].swap(0, Ordering::Relaxed) / 4000);
        eprintln!("{s}");
    }
}
