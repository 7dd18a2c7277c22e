//! The monitor thread: it notices a request or response callback blocked
//! in the host's own code and has its dispatch job handed to a new thread,
//! so the events behind it go on. While driven connections exist it looks
//! every millisecond after a callback started, every 20 ms otherwise; with
//! none it sleeps.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

/// A request or response callback busy this long is handed off.
const HANDOFF_AFTER: Duration = Duration::from_millis(2);

/// One connection's dispatch job.
#[derive(Default)]
pub(super) struct Job {
    /// Which thread holds the job: bumped by every hand-off.
    epoch: AtomicU64,
    /// When the job's thread entered a request or response callback
    /// (nanoseconds since `clock_ns` began, 0: it is not in one).
    busy_since: AtomicU64,
}

impl Job {
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// The thread of `epoch` enters (true) or leaves a callback that may be
    /// handed off.
    pub fn busy(&self, epoch: u64, busy: bool) {
        if busy {
            self.busy_since.store(clock_ns().max(1), Ordering::Release);
            monitor().activity.fetch_add(1, Ordering::Relaxed);
        } else if self.epoch() == epoch {
            self.busy_since.store(0, Ordering::Release);
        }
    }

    /// Take the job from the thread of `epoch`: true if it still held it
    /// (the caller starts the next thread).
    pub fn take_from(&self, epoch: u64) -> bool {
        let taken = self
            .epoch
            .compare_exchange(epoch, epoch + 1, Ordering::AcqRel, Ordering::Acquire);
        if taken.is_ok() {
            self.busy_since.store(0, Ordering::Release);
        }
        taken.is_ok()
    }

    /// Whether the job's thread has been in its callback for `long` by now.
    pub fn busy_for(&self, long: Duration, now: u64) -> bool {
        let since = self.busy_since.load(Ordering::Acquire);
        since != 0 && now.saturating_sub(since) >= long.as_nanos() as u64
    }

    fn blocked(&self, now: u64) -> Option<u64> {
        let epoch = self.epoch();
        self.busy_for(HANDOFF_AFTER, now).then_some(epoch)
    }
}

/// A connection the monitor watches.
pub(super) trait Watched: Send + Sync {
    fn job(&self) -> &Job;
    /// Give the job of `epoch` to a new thread.
    fn hand_off(self: Arc<Self>, epoch: u64);
}

pub(super) fn clock_ns() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

struct Monitor {
    watched: Mutex<Vec<Weak<dyn Watched>>>,
    /// Bumped when a callback starts: the monitor looks more often.
    activity: AtomicU64,
    added: Condvar,
}

static MONITOR: OnceLock<Monitor> = OnceLock::new();

fn monitor() -> &'static Monitor {
    MONITOR.get_or_init(|| {
        std::thread::Builder::new()
            .name("acp-monitor".into())
            .spawn(|| monitor().run())
            .expect("start the acp-engine monitor thread");
        Monitor {
            watched: Mutex::new(Vec::new()),
            activity: AtomicU64::new(0),
            added: Condvar::new(),
        }
    })
}

/// Watch `conn` while it lives.
pub(super) fn watch(conn: Weak<dyn Watched>) {
    let monitor = monitor();
    let mut watched = monitor.watched.lock().unwrap_or_else(|p| p.into_inner());
    watched.retain(|conn| conn.strong_count() > 0);
    watched.push(conn);
    monitor.added.notify_all();
}

impl Monitor {
    fn run(&self) {
        let mut last_activity = u64::MAX;
        loop {
            let watched: Vec<Arc<dyn Watched>> = {
                let mut watched = self.watched.lock().unwrap_or_else(|p| p.into_inner());
                watched.retain(|conn| conn.strong_count() > 0);
                let mut watched = self
                    .added
                    .wait_while(watched, |watched| watched.is_empty())
                    .unwrap_or_else(|p| p.into_inner());
                watched.retain(|conn| conn.strong_count() > 0);
                watched.iter().filter_map(Weak::upgrade).collect()
            };
            let now = clock_ns();
            for conn in watched {
                if let Some(epoch) = conn.job().blocked(now) {
                    conn.hand_off(epoch);
                }
            }
            let activity = self.activity.load(Ordering::Relaxed);
            let interval = if activity != last_activity { 1 } else { 20 };
            last_activity = activity;
            std::thread::sleep(Duration::from_millis(interval));
        }
    }
}
