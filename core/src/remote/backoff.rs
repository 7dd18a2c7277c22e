//! Trying again until a deadline, with a wait between attempts that
//! doubles from 50 ms to at most 2 s, each between half and all of that
//! (jitter), so clients cut off together do not come back together.

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Run `attempt` until it succeeds, fails in a way `worth_another` says is
/// final, or `budget` would be over before the next try: then its last
/// error. `Err(None)` when `done` was cancelled first.
pub(crate) async fn keep_trying<T, E, Attempt>(
    budget: Duration,
    done: &CancellationToken,
    mut attempt: impl FnMut() -> Attempt,
    worth_another: impl Fn(&E) -> bool,
) -> Result<T, Option<E>>
where
    Attempt: Future<Output = Result<T, E>>,
{
    let deadline = Instant::now() + budget;
    let mut backoff = Backoff::new();
    loop {
        let error = tokio::select! {
            tried = attempt() => match tried {
                Ok(value) => return Ok(value),
                Err(error) => error,
            },
            _ = done.cancelled() => return Err(None),
        };
        let delay = backoff.next_delay();
        if !worth_another(&error) || Instant::now() + delay >= deadline {
            return Err(Some(error));
        }
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = done.cancelled() => return Err(None),
        }
    }
}

const FIRST: Duration = Duration::from_millis(50);
const MOST: Duration = Duration::from_secs(2);

struct Backoff {
    step: Duration,
    random: RandomState,
    count: u64,
}

impl Backoff {
    fn new() -> Self {
        Self {
            step: FIRST,
            random: RandomState::new(),
            count: 0,
        }
    }

    /// The next wait.
    fn next_delay(&mut self) -> Duration {
        let step = self.step;
        self.step = (self.step * 2).min(MOST);
        // A random fraction in [0.5, 1): RandomState is seeded per process
        // and per instance; hashing a counter draws from it.
        let mut hasher = self.random.build_hasher();
        hasher.write_u64(self.count);
        self.count += 1;
        let fraction = 0.5 + (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64 / 2.0;
        step.mul_f64(fraction)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_up_to_the_most_and_are_jittered() {
        let mut backoff = Backoff::new();
        let waits: Vec<Duration> = (0..12).map(|_| backoff.next_delay()).collect();
        let mut step = FIRST;
        for wait in &waits {
            assert!(
                *wait >= step / 2 && *wait < step,
                "{wait:?} for a step of {step:?}"
            );
            step = (step * 2).min(MOST);
        }
        let capped = &waits[6..];
        assert!(capped.iter().any(|wait| *wait != capped[0]), "jitter: {capped:?}");
    }
}
