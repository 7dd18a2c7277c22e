//! The host queue: where a host-language binding's inbound traffic waits.
//!
//! Events are appended as JSON text to one buffer. The first event after a
//! drain calls `wake` (once per burst, not per message); one `drain` takes
//! the buffer as a single JSON array, which the host parses with one call.
//! With a `chunk` limit the buffer is cut every `chunk` events and a drain
//! takes one chunk (the host drains until `None`): a garbage-collected host
//! then never holds more than a chunk's objects at once (see
//! `HostOptions::drain_chunk`). Notifications and requests from the peer
//! wait while the queue holds `capacity` events (backpressure on the
//! reader); responses and bookkeeping events never wait (they are bounded
//! by what the host sent). A request cancelled before the host took it can
//! be cut out of the queue (`withdraw_request`): its handler never starts.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Mutex;

use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::Notify;

use crate::error::RequestError;
use crate::message::{RawJson, RequestId};

pub use crate::tables::kind;

pub(crate) type Wake = Box<dyn Fn() + Send + Sync>;

struct State {
    /// The newest events as an open JSON array: `[` and the events,
    /// comma-separated.
    text: String,
    /// Events in `text`.
    count: usize,
    /// Older events, cut off at `chunk` events each: JSON array texts with
    /// their event counts, oldest first.
    chunks: VecDeque<(String, usize)>,
    /// Events in the queue (`chunks` and `text`).
    total: usize,
    /// `wake` was called since the last drain.
    signaled: bool,
    /// `CLOSED` was queued: it is the last event a host gets (hosts stop
    /// taking events there; a late write or handler reports nothing).
    closed: bool,
    /// The request events in `text`, oldest first: their tokens and where
    /// each event sits in `text` (without its separating comma).
    requests: Vec<(u64, Range<usize>)>,
}

pub(crate) struct HostQueue {
    state: Mutex<State>,
    space: Notify,
    capacity: usize,
    chunk: usize,
    /// Requests can be withdrawn (`HostOptions::withdraw_cancelled_requests`):
    /// only then is where each sits kept.
    withdrawable: bool,
    wake: Wake,
}

impl HostQueue {
    /// A queue that holds up to `capacity` inbound calls and hands out at
    /// most `chunk` events per drain; `withdrawable`: see `withdraw_request`.
    pub fn new(capacity: usize, chunk: usize, withdrawable: bool, wake: Wake) -> Self {
        Self {
            state: Mutex::new(State {
                text: open_array(),
                count: 0,
                chunks: VecDeque::new(),
                total: 0,
                signaled: false,
                closed: false,
                requests: Vec::new(),
            }),
            space: Notify::new(),
            capacity: capacity.max(1),
            chunk: chunk.max(1),
            withdrawable,
            wake,
        }
    }

    /// Append one event of about `size` bytes, built by `write` into the
    /// buffer (nothing once `CLOSED` was queued; `closes`: this is it).
    fn push(&self, size: usize, closes: bool, write: impl FnOnce(&mut String)) {
        self.push_event(size, closes, None, write);
    }

    /// `push`, for request `token`'s event when `request` is set (it can be
    /// withdrawn while the host has not taken it).
    fn push_event(&self, size: usize, closes: bool, request: Option<u64>, write: impl FnOnce(&mut String)) {
        let wake = {
            let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
            let state = &mut *guard;
            if state.closed {
                return;
            }
            state.closed = closes;
            if state.count == self.chunk {
                state.close_chunk();
            }
            if state.count > 0 {
                state.text.push(',');
            }
            // One allocation for a large event, not a series of growing copies.
            state.text.reserve(size + EVENT_ENVELOPE);
            let start = state.text.len();
            write(&mut state.text);
            if let Some(token) = request {
                let end = state.text.len();
                state.requests.push((token, start..end));
            }
            state.count += 1;
            state.total += 1;
            !std::mem::replace(&mut state.signaled, true)
        };
        if wake {
            (self.wake)();
        }
    }

    /// Call the host's wake now, with or without events (reading may go on
    /// after a pause: the host pumps again).
    pub fn wake_host(&self) {
        (self.wake)();
    }

    /// Wait until the queue has room (the host drained it).
    async fn room(&self) {
        loop {
            let notified = self.space.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.state.lock().unwrap_or_else(|p| p.into_inner()).total < self.capacity {
                return;
            }
            notified.await;
        }
    }

    /// Wait up to `spin` without sleeping for an event, the host's wake-up
    /// held off meanwhile (a host that would otherwise sleep and be woken
    /// for the answer it expects): true when events are ready (drain them),
    /// false when none came (the next one wakes the host as usual).
    pub fn watch_for(&self, spin: std::time::Duration) -> bool {
        {
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            if state.total > 0 {
                return true;
            }
            // As if a wake-up were on its way: a push now wakes no one.
            state.signaled = true;
        }
        let deadline = std::time::Instant::now() + spin;
        loop {
            std::hint::spin_loop();
            let ready = std::time::Instant::now() >= deadline;
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            if state.total > 0 {
                return true;
            }
            if ready {
                // Under the lock a push takes: the next event wakes the host.
                state.signaled = false;
                return false;
            }
        }
    }

    /// How many events wait.
    pub fn len(&self) -> usize {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).total
    }

    /// Take the oldest queued events (all of them, or one chunk) as one
    /// JSON array text; None when empty. After a wake-up the host must
    /// reset its wake signal *before* calling this, and call it until it
    /// returns None, or a wake-up can be lost.
    pub fn drain(&self) -> Option<String> {
        let text = {
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            state.signaled = false;
            if state.chunks.is_empty() {
                if state.count == 0 {
                    return None;
                }
                state.close_chunk();
            }
            let (chunk, count) = state.chunks.pop_front().expect("a chunk was closed");
            state.total -= count;
            chunk
        };
        self.space.notify_waiters();
        Some(text)
    }

    /// Cut request `token`'s event out of the queue if the host has not
    /// taken it yet: true if it was there (the host never sees it). Only
    /// events not yet cut into a chunk (`drain_chunk`) can be withdrawn, and
    /// only in a `withdrawable` queue.
    pub fn withdraw_request(&self, token: u64) -> bool {
        if !self.withdrawable {
            return false;
        }
        {
            let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
            let state = &mut *guard;
            let Some(index) = state.requests.iter().position(|(queued, _)| *queued == token) else {
                return false;
            };
            let (_, event) = state.requests.remove(index);
            // With one separator: the comma before the event, or the one
            // after it when it is the first.
            let cut = if state.text.as_bytes()[event.start - 1] == b',' {
                event.start - 1..event.end
            } else if event.end < state.text.len() {
                event.start..event.end + 1
            } else {
                event
            };
            let removed = cut.len();
            state.text.replace_range(cut, "");
            for (_, later) in &mut state.requests[index..] {
                *later = later.start - removed..later.end - removed;
            }
            state.count -= 1;
            state.total -= 1;
        }
        self.space.notify_waiters();
        true
    }

    pub async fn push_request(&self, token: u64, id: &RequestId, method: &str, params: Option<&RawValue>) {
        self.room().await;
        self.push_request_now(token, id, method, params);
    }

    /// `push_request` without waiting for room. The peer's id comes last:
    /// hosts that do not show it read the first four elements as before.
    pub fn push_request_now(&self, token: u64, id: &RequestId, method: &str, params: Option<&RawValue>) {
        let withdrawable = self.withdrawable.then_some(token);
        self.push_event(method.len() + raw_len(params), false, withdrawable, |text| {
            text.push_str("[0,");
            push_number(text, token);
            text.push(',');
            push_string(text, method);
            text.push(',');
            push_raw(text, params);
            text.push(',');
            push_id(text, id);
            text.push(']');
        });
    }

    pub async fn push_notification(&self, method: &str, params: Option<&RawValue>) {
        self.room().await;
        self.push_notification_now(method, params);
    }

    /// `push_notification` without waiting for room.
    pub fn push_notification_now(&self, method: &str, params: Option<&RawValue>) {
        self.push(method.len() + raw_len(params), false, |text| {
            text.push_str("[1,");
            push_string(text, method);
            text.push(',');
            push_raw(text, params);
            text.push(']');
        });
    }

    pub async fn push_invalid_notification(&self, method: &str, error: &RequestError) {
        self.room().await;
        self.push_invalid_notification_now(method, error);
    }

    /// `push_invalid_notification` without waiting for room.
    pub fn push_invalid_notification_now(&self, method: &str, error: &RequestError) {
        self.push(method.len(), false, |text| {
            text.push_str("[7,");
            push_string(text, method);
            text.push(',');
            push_json(text, error);
            text.push(']');
        });
    }

    pub fn push_response(&self, id: i64, outcome: &Result<RawJson, RequestError>) {
        let size = outcome.as_ref().map_or(0, |result| result.get().len());
        self.push(size, false, |text| {
            match outcome {
                Ok(result) => {
                    text.push_str("[2,");
                    push_number(text, id);
                    text.push(',');
                    text.push_str(result.get());
                }
                Err(error) => {
                    text.push_str("[3,");
                    push_number(text, id);
                    text.push(',');
                    push_json(text, error);
                }
            }
            text.push(']');
        });
    }

    pub fn push_cancelled(&self, token: u64) {
        self.push(0, false, |text| {
            text.push_str("[4,");
            push_number(text, token);
            text.push(']');
        });
    }

    pub fn push_written(&self, ticket: u64, ok: bool) {
        self.push(0, false, |text| {
            text.push_str("[5,");
            push_number(text, ticket);
            text.push_str(if ok { ",true]" } else { ",false]" });
        });
    }

    /// Messages read (`inbound`) or written, one event per line of `lines`
    /// (a host's written batch holds several): for the host's stream
    /// observers.
    pub fn push_observed_now(&self, inbound: bool, lines: &[u8]) {
        for line in lines.split(|&byte| byte == b'\n').filter(|line| !line.is_empty()) {
            let line = String::from_utf8_lossy(line);
            self.push(line.len(), false, |text| {
                text.push_str(if inbound { "[8,true," } else { "[8,false," });
                push_string(text, &line);
                text.push(']');
            });
        }
    }

    pub fn push_closed(&self, reason: &str) {
        self.push(0, true, |text| {
            text.push_str("[6,");
            push_string(text, reason);
            text.push(']');
        });
        // A reader waiting for room must not wait for a host that stopped.
        self.space.notify_waiters();
    }
}

impl State {
    /// Move the events of `text` to `chunks` as one JSON array text, in a
    /// buffer of its own (`text` keeps its buffer).
    fn close_chunk(&mut self) {
        self.text.push(']');
        let chunk = if self.text.len() < MOVED_CHUNK {
            let chunk = self.text.clone();
            self.text.truncate(1);
            chunk
        } else {
            // Not copied: a large event's buffer goes with it (and is freed
            // once the host is done with it).
            std::mem::replace(&mut self.text, open_array())
        };
        self.chunks.push_back((chunk, self.count));
        self.count = 0;
        self.requests.clear();
    }
}

/// Room for an event's kind, id or token and punctuation.
const EVENT_ENVELOPE: usize = 32;

/// A chunk at least this long moves out of the queue's buffer instead of
/// being copied out of it.
const MOVED_CHUNK: usize = 64 * 1024;

/// The queue's buffer, empty: an array's opening bracket, and room for a
/// burst of small events.
fn open_array() -> String {
    let mut text = String::with_capacity(MOVED_CHUNK);
    text.push('[');
    text
}

fn raw_len(raw: Option<&RawValue>) -> usize {
    raw.map_or(4, |raw| raw.get().len())
}

fn push_number(text: &mut String, number: impl itoa::Integer) {
    text.push_str(itoa::Buffer::new().format(number));
}

/// A JSON string, written as the frames' are (no allocation: a method
/// name, on every message).
fn push_string(text: &mut String, value: &str) {
    // SAFETY: `write_string` appends valid UTF-8: `value`'s own text, split
    // only around the ASCII bytes it escapes, and ASCII escapes.
    crate::json_string::write_string(unsafe { text.as_mut_vec() }, value);
}

/// A request's id as the peer sent it (no allocation: on every request).
fn push_id(text: &mut String, id: &RequestId) {
    match id {
        RequestId::Number(number) => push_number(text, *number),
        RequestId::Str(value) => push_string(text, value),
        RequestId::Null => text.push_str("null"),
    }
}

fn push_json(text: &mut String, value: &(impl Serialize + ?Sized)) {
    // Strings and error objects always serialize.
    let json = serde_json::to_string(value).expect("serializable");
    text.push_str(&json);
}

fn push_raw(text: &mut String, raw: Option<&RawValue>) {
    text.push_str(raw.map_or("null", |raw| raw.get()));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn queue(capacity: usize) -> (HostQueue, Arc<AtomicUsize>) {
        chunked(capacity, usize::MAX)
    }

    fn chunked(capacity: usize, chunk: usize) -> (HostQueue, Arc<AtomicUsize>) {
        let wakes = Arc::new(AtomicUsize::new(0));
        let counter = wakes.clone();
        let wake: Wake = Box::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        (HostQueue::new(capacity, chunk, true, wake), wakes)
    }

    #[tokio::test]
    async fn wakes_once_per_burst_and_drains_one_array() {
        let (queue, wakes) = queue(16);
        let params = crate::to_raw(&serde_json::json!({"a": 1})).unwrap();
        queue.push_notification("n\"1", Some(&params)).await;
        queue
            .push_request(7, &RequestId::Str("r\"1".into()), "m", None)
            .await;
        queue.push_response(3, &Err(RequestError::request_cancelled()));
        assert_eq!(wakes.load(Ordering::SeqCst), 1);
        let text = queue.drain().unwrap();
        let events: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(events[0], serde_json::json!([1, "n\"1", {"a": 1}]));
        assert_eq!(events[1], serde_json::json!([0, 7, "m", null, "r\"1"]));
        assert_eq!(events[2][0], 3);
        assert_eq!(events[2][2]["code"], -32800);
        assert!(queue.drain().is_none());
        queue.push_cancelled(7);
        assert_eq!(wakes.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_watching_host_is_not_woken_and_the_next_event_after_the_watch_wakes_it() {
        let (queue, wakes) = queue(16);
        let queue = Arc::new(queue);
        // An event pushed by another thread while the host watches: seen, no wake-up.
        let pusher = queue.clone();
        let push = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(5));
            pusher.push_response(1, &Ok(crate::to_raw(&1).unwrap()));
        });
        assert!(queue.watch_for(std::time::Duration::from_secs(10)));
        push.join().unwrap();
        assert_eq!(wakes.load(Ordering::SeqCst), 0);
        assert_eq!(queue.drain().unwrap(), "[[2,1,1]]");
        // A watch that sees nothing leaves the wake-up to the next event.
        assert!(!queue.watch_for(std::time::Duration::from_micros(100)));
        queue.push_response(2, &Ok(crate::to_raw(&2).unwrap()));
        assert_eq!(wakes.load(Ordering::SeqCst), 1);
        // Events already waiting: true at once.
        assert!(queue.watch_for(std::time::Duration::ZERO));
        assert_eq!(queue.drain().unwrap(), "[[2,2,2]]");
    }

    #[tokio::test]
    async fn notifications_wait_for_room() {
        let (queue, _) = queue(2);
        let queue = Arc::new(queue);
        queue.push_notification("a", None).await;
        queue.push_notification("b", None).await;
        let pusher = queue.clone();
        let third = tokio::spawn(async move { pusher.push_notification("c", None).await });
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(!third.is_finished());
        assert_eq!(queue.drain().unwrap(), r#"[[1,"a",null],[1,"b",null]]"#);
        third.await.unwrap();
        assert_eq!(queue.drain().unwrap(), r#"[[1,"c",null]]"#);
    }

    #[test]
    fn a_request_the_host_has_not_taken_is_withdrawn_with_its_separator() {
        let (queue, _) = queue(8);
        let id = RequestId::Number(7);
        queue.push_request_now(1, &id, "a", None);
        queue.push_notification_now("n", None);
        queue.push_request_now(2, &id, "b", None);
        queue.push_request_now(3, &id, "c", None);
        // First, then last, then one in the middle: the array stays valid.
        assert!(queue.withdraw_request(1));
        assert!(queue.withdraw_request(3));
        assert!(!queue.withdraw_request(3));
        assert_eq!(queue.len(), 2);
        queue.push_request_now(4, &id, "d", None);
        assert!(queue.withdraw_request(2));
        assert_eq!(queue.drain().unwrap(), r#"[[1,"n",null],[0,4,"d",null,7]]"#);
        // Taken by the host: too late.
        assert!(!queue.withdraw_request(4));
        queue.push_request_now(5, &id, "e", None);
        assert!(queue.withdraw_request(5));
        assert!(queue.drain().is_none());
    }

    /// Random pushes, withdrawals and drains, in every chunking: each drain
    /// is a JSON array, and the host gets every event in order but the
    /// withdrawn ones.
    #[test]
    fn withdrawals_keep_every_drain_valid_and_in_order() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut random = move |below: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % below
        };
        for chunk in [1, 2, 3, 5, usize::MAX] {
            let (queue, _) = chunked(usize::MAX, chunk);
            let id = RequestId::Number(0);
            let (mut expected, mut taken) = (Vec::new(), Vec::new());
            let (mut queued, mut withdrawn) = (0usize, 0);
            for step in 0..4000u64 {
                match random(10) {
                    0..=3 => {
                        queue.push_request_now(step, &id, "m", None);
                        expected.push(json!([0, step, "m", null, 0]));
                        queued += 1;
                    }
                    4..=5 => {
                        queue.push_cancelled(step);
                        expected.push(json!([4, step]));
                        queued += 1;
                    }
                    6..=8 => {
                        let token = step.saturating_sub(random(8));
                        if queue.withdraw_request(token) {
                            let at = expected.iter().position(|e| e[0] == 0 && e[1] == token);
                            expected.remove(at.expect("a withdrawn request was queued"));
                            queued -= 1;
                            withdrawn += 1;
                        }
                    }
                    _ => {
                        while let Some(text) = queue.drain() {
                            let events: Vec<Value> = serde_json::from_str(&text).expect("a JSON array");
                            assert!(!events.is_empty());
                            queued -= events.len();
                            taken.extend(events);
                        }
                        assert_eq!(queued, 0);
                    }
                }
                assert_eq!(queue.len(), queued);
            }
            while let Some(text) = queue.drain() {
                taken.extend(serde_json::from_str::<Vec<Value>>(&text).expect("a JSON array"));
            }
            assert_eq!(taken, expected, "chunk {chunk}");
            assert!(withdrawn > 20, "chunk {chunk}: {withdrawn} withdrawn");
        }
    }

    #[test]
    fn a_request_already_cut_into_a_chunk_stays() {
        let (queue, _) = chunked(8, 1);
        let id = RequestId::Number(1);
        queue.push_request_now(1, &id, "a", None);
        queue.push_request_now(2, &id, "b", None);
        assert!(!queue.withdraw_request(1));
        assert!(queue.withdraw_request(2));
        assert_eq!(queue.drain().unwrap(), r#"[[0,1,"a",null,1]]"#);
        assert!(queue.drain().is_none());
    }

    #[tokio::test]
    async fn drains_in_chunks_in_order() {
        let (queue, wakes) = chunked(8, 2);
        for method in ["a", "b", "c", "d", "e"] {
            queue.push_notification(method, None).await;
        }
        assert_eq!(queue.len(), 5);
        assert_eq!(wakes.load(Ordering::SeqCst), 1);
        assert_eq!(queue.drain().unwrap(), r#"[[1,"a",null],[1,"b",null]]"#);
        assert_eq!(queue.len(), 3);
        // An event pushed between drains joins the newest chunk, in order.
        queue.push_cancelled(9);
        assert_eq!(queue.drain().unwrap(), r#"[[1,"c",null],[1,"d",null]]"#);
        assert_eq!(queue.drain().unwrap(), r#"[[1,"e",null],[4,9]]"#);
        assert!(queue.drain().is_none());
        assert_eq!(queue.len(), 0);
    }

    #[tokio::test]
    async fn room_counts_every_chunk() {
        let (queue, _) = chunked(3, 1);
        let queue = Arc::new(queue);
        for method in ["a", "b", "c"] {
            queue.push_notification(method, None).await;
        }
        let pusher = queue.clone();
        let fourth = tokio::spawn(async move { pusher.push_notification("d", None).await });
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(!fourth.is_finished());
        assert_eq!(queue.drain().unwrap(), r#"[[1,"a",null]]"#);
        fourth.await.unwrap();
        assert_eq!(queue.len(), 3);
    }

    #[tokio::test]
    async fn a_large_event_moves_out_with_its_chunk_and_order_holds() {
        let (queue, _) = chunked(8, 2);
        let content = "x".repeat(2 * MOVED_CHUNK);
        let result = crate::to_raw(&serde_json::json!({ "content": content })).unwrap();
        queue.push_notification("a", None).await;
        queue.push_response(5, &Ok(result));
        queue.push_notification("b", None).await;
        let first: serde_json::Value = serde_json::from_str(&queue.drain().unwrap()).unwrap();
        assert_eq!(first[0], serde_json::json!([1, "a", null]));
        assert_eq!(first[1], serde_json::json!([2, 5, { "content": content }]));
        // The queue's buffer went with that chunk; the next one starts afresh.
        assert_eq!(queue.drain().unwrap(), r#"[[1,"b",null]]"#);
        queue.push_cancelled(3);
        assert_eq!(queue.drain().unwrap(), "[[4,3]]");
        assert!(queue.drain().is_none());
    }

    #[tokio::test]
    async fn closed_is_the_last_event() {
        let (queue, wakes) = queue(8);
        queue.push_cancelled(1);
        queue.push_closed("peer gone");
        // Hosts stop taking events at CLOSED: nothing may queue behind it.
        queue.push_cancelled(2);
        queue.push_written(3, false);
        queue.push_notification("late", None).await;
        assert_eq!(queue.drain().unwrap(), r#"[[4,1],[6,"peer gone"]]"#);
        assert!(queue.drain().is_none());
        assert_eq!(wakes.load(Ordering::SeqCst), 1);
    }
}
