//! Keep-alive timing that costs no timer per message: one interval per
//! socket or stream ticks every `keep_alive_interval`; a message that
//! arrives only clears a counter, and the peer counts as silent once three
//! whole intervals passed with nothing (a network that drops traffic
//! without closing the connection).

use std::time::Duration;

use tokio::time::{Instant, Interval, MissedTickBehavior};

/// Ticks of the keep-alive interval; none, ever, when it is off.
pub(crate) struct Ticks(Option<Interval>);

impl Ticks {
    pub(crate) fn new(every: Option<Duration>) -> Self {
        Self(every.map(|every| {
            let mut ticks = tokio::time::interval_at(Instant::now() + every, every);
            ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
            ticks
        }))
    }

    /// The next tick (cancel-safe).
    pub(crate) async fn tick(&mut self) {
        match &mut self.0 {
            Some(ticks) => {
                ticks.tick().await;
            }
            None => std::future::pending().await,
        }
    }
}

/// Whether a peer went silent.
pub(crate) struct Silence {
    ticks: Ticks,
    every: Duration,
    quiet_ticks: u32,
}

/// Ticks with nothing heard before the peer counts as silent: the first
/// may come just after a message, so four make three whole intervals.
const SILENT_AFTER_TICKS: u32 = 4;

impl Silence {
    pub(crate) fn new(every: Option<Duration>) -> Self {
        Self {
            ticks: Ticks::new(every),
            every: every.unwrap_or_default(),
            quiet_ticks: 0,
        }
    }

    /// Something came from the peer.
    pub(crate) fn heard(&mut self) {
        self.quiet_ticks = 0;
    }

    /// Resolves, with the reason, once nothing was heard for three whole
    /// intervals (cancel-safe: the count survives a drop).
    pub(crate) async fn silent(&mut self) -> String {
        loop {
            self.ticks.tick().await;
            self.quiet_ticks += 1;
            if self.quiet_ticks >= SILENT_AFTER_TICKS {
                let ms = (self.every * 3).as_millis();
                return format!("nothing heard for {ms} ms (three keep-alive intervals)");
            }
        }
    }
}
