//! A Streamable HTTP connection's output while it waits for its client:
//! one queue of events per SSE stream (the connection's, and one per
//! session), each read by at most one GET at a time, all counted against
//! one byte budget. A session's queue exists from the first message for it
//! or the first GET for it, whichever comes first.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use hyper::body::Bytes;
use tokio::sync::Notify;

/// Which stream: the connection's (None) or a session's.
pub(crate) type StreamKey = Option<String>;

pub(crate) struct Outbox {
    streams: HashMap<StreamKey, Mailbox>,
    buffered: usize,
    finished: bool,
    /// Since when the connection's stream has had no reader (None: it has one).
    unread_since: Option<Instant>,
}

#[derive(Default)]
struct Mailbox {
    events: VecDeque<Bytes>,
    attached: bool,
    wake: Arc<Notify>,
}

/// What a stream's reader finds.
pub(crate) enum Next {
    Event(Bytes),
    /// Nothing yet: wait to be woken.
    Empty,
    /// The agent's output ended and this stream has delivered all of it.
    Finished,
}

/// A stream already has its reader (the official server's 409).
pub(crate) struct AlreadyAttached;

impl Outbox {
    pub(crate) fn new() -> Self {
        Self {
            streams: HashMap::new(),
            buffered: 0,
            finished: false,
            unread_since: Some(Instant::now()),
        }
    }

    /// Queue `event` on `key`'s stream and wake its reader.
    pub(crate) fn push(&mut self, key: StreamKey, event: Bytes) {
        self.buffered += event.len();
        let mailbox = self.streams.entry(key).or_default();
        mailbox.events.push_back(event);
        mailbox.wake.notify_one();
    }

    /// Become `key`'s reader: the notify wakes it when there is more.
    pub(crate) fn attach(&mut self, key: &StreamKey) -> Result<Arc<Notify>, AlreadyAttached> {
        let mailbox = self.streams.entry(key.clone()).or_default();
        if mailbox.attached {
            return Err(AlreadyAttached);
        }
        mailbox.attached = true;
        if key.is_none() {
            self.unread_since = None;
        }
        Ok(mailbox.wake.clone())
    }

    /// The reader left. A session's empty queue goes; one holding output
    /// stays for the next GET (and counts as unread).
    pub(crate) fn detach(&mut self, key: &StreamKey) {
        let Some(mailbox) = self.streams.get_mut(key) else {
            return;
        };
        mailbox.attached = false;
        match key {
            None => self.unread_since = Some(Instant::now()),
            Some(_) if mailbox.events.is_empty() => {
                self.streams.remove(key);
            }
            Some(_) => {}
        }
    }

    /// The next event for `key`'s reader.
    pub(crate) fn take(&mut self, key: &StreamKey) -> Next {
        match self
            .streams
            .get_mut(key)
            .and_then(|mailbox| mailbox.events.pop_front())
        {
            Some(event) => {
                self.buffered -= event.len();
                Next::Event(event)
            }
            None if self.finished => Next::Finished,
            None => Next::Empty,
        }
    }

    /// The agent's output ended: readers finish once their queues are empty.
    pub(crate) fn finish(&mut self) {
        self.finished = true;
        for mailbox in self.streams.values() {
            mailbox.wake.notify_one();
        }
    }

    /// Bytes queued on all streams.
    pub(crate) fn buffered(&self) -> usize {
        self.buffered
    }

    /// Session streams holding output that nobody reads.
    pub(crate) fn unread_sessions(&self) -> usize {
        self.streams
            .iter()
            .filter(|(key, mailbox)| key.is_some() && !mailbox.attached && !mailbox.events.is_empty())
            .count()
    }

    /// Since when the connection's stream has had no reader.
    pub(crate) fn unread_since(&self) -> Option<Instant> {
        self.unread_since
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_queue_count_and_finish() {
        let mut outbox = Outbox::new();
        let session = Some("s".to_owned());
        outbox.push(None, Bytes::from_static(b"abc"));
        outbox.push(session.clone(), Bytes::from_static(b"de"));
        assert_eq!((outbox.buffered(), outbox.unread_sessions()), (5, 1));
        assert!(outbox.attach(&session).is_ok());
        assert!(outbox.attach(&session).is_err(), "one reader per stream");
        assert!(matches!(outbox.take(&session), Next::Event(e) if e == "de"));
        assert!(matches!(outbox.take(&session), Next::Empty));
        outbox.detach(&session);
        assert!(outbox.attach(&None).is_ok());
        assert!(outbox.unread_since().is_none());
        outbox.finish();
        assert!(matches!(outbox.take(&None), Next::Event(_)));
        assert!(matches!(outbox.take(&None), Next::Finished));
        assert_eq!(outbox.buffered(), 0);
    }
}
