//! Round-trip latencies as a benchmark client sees them (rpc, perm): from one
//! request's arrival to the next's, as bench/floor measures them. Shared by the
//! Rust clients (`#[path]`): ours and the official SDK's, one crate each.

use std::sync::Mutex;
use std::time::Instant;

/// When each request arrived (empty, and free, when not timed).
pub struct Arrivals {
    timed: bool,
    at: Mutex<Vec<Instant>>,
}

impl Arrivals {
    /// Timed in the `rpc` and `perm` scenarios only.
    pub fn for_scenario(scenario: &str) -> Self {
        Self {
            timed: matches!(scenario, "rpc" | "perm"),
            at: Mutex::new(Vec::new()),
        }
    }

    /// A request arrived.
    pub fn arrived(&self) {
        if self.timed {
            self.at.lock().unwrap().push(Instant::now());
        }
    }

    /// `,"p50_us":…,"p99_us":…` for the result line (empty when not timed).
    pub fn json_fields(&self) -> String {
        let at = self.at.lock().unwrap();
        if at.len() < 2 {
            return String::new();
        }
        let mut trips: Vec<f64> = at.windows(2).map(|w| (w[1] - w[0]).as_secs_f64() * 1e6).collect();
        trips.sort_by(f64::total_cmp);
        let p50 = trips[trips.len() / 2];
        let p99 = trips[trips.len() * 99 / 100];
        format!(",\"p50_us\":{p50:.1},\"p99_us\":{p99:.1}")
    }
}
