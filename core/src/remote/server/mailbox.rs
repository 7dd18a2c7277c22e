//! A Streamable HTTP connection's output while it waits for its client:
//! one queue of events per SSE stream (the connection's, and one per
//! session), each read by at most one GET at a time, all counted against
//! one byte budget. A session's queue exists from the first message for it
//! or the first GET for it, whichever comes first.
//!
//! Every event gets an id (growing through the connection). An event a
//! reader took is kept, up to the replay budget, in case the stream it went
//! out on broke: a GET that resumes with `Last-Event-ID` gets the events
//! after that id again, and takes the stream over from a reader the server
//! has not yet seen die. If the budget pushed out an event the resume asks
//! for, the resume is refused instead of losing it silently.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use hyper::body::Bytes;
use tokio::sync::Notify;

use crate::remote::sse;

/// Which stream: the connection's (None) or a session's.
pub(crate) type StreamKey = Option<String>;

pub(crate) struct Outbox {
    streams: HashMap<StreamKey, Mailbox>,
    /// Bytes queued and not taken yet (the backpressure budget).
    buffered: usize,
    finished: bool,
    /// Since when the connection's stream has had no reader (None: it has one).
    unread_since: Option<Instant>,
    /// The id the next event gets (ids start at 1: 0 means "none seen").
    next_id: u64,
    /// Events taken, oldest first, kept for resumes.
    sent: VecDeque<(StreamKey, Event)>,
    sent_bytes: usize,
    max_replay_bytes: usize,
    /// The newest id each stream lost from `sent` to the budget.
    forgotten_through: HashMap<StreamKey, u64>,
}

#[derive(Clone)]
struct Event {
    id: u64,
    frame: Bytes,
}

#[derive(Default)]
struct Mailbox {
    events: VecDeque<Event>,
    /// The current reader's number (0: none), and what wakes it.
    reader: u64,
    wake: Arc<Notify>,
}

/// A GET's hold on a stream.
pub(crate) struct Reader {
    /// Which of the stream's readers (a newer one takes over).
    pub(crate) number: u64,
    pub(crate) wake: Arc<Notify>,
    /// Events a resume gets again.
    pub(crate) replayed: usize,
}

/// What a stream's reader finds.
pub(crate) enum Next {
    Event(Bytes),
    /// Nothing yet: wait to be woken.
    Empty,
    /// The agent's output ended and this stream has delivered all of it, or
    /// a newer reader took the stream over.
    Finished,
}

/// Why a GET cannot read a stream.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The stream already has its reader (the official server's 409).
    AlreadyAttached,
    /// Events after the resume's id are no longer kept.
    Forgotten,
}

impl Outbox {
    pub(crate) fn new(max_replay_bytes: usize) -> Self {
        Self {
            streams: HashMap::new(),
            buffered: 0,
            finished: false,
            unread_since: Some(Instant::now()),
            next_id: 1,
            sent: VecDeque::new(),
            sent_bytes: 0,
            max_replay_bytes,
            forgotten_through: HashMap::new(),
        }
    }

    /// Queue `message` as the next event on `key`'s stream and wake its reader.
    pub(crate) fn push(&mut self, key: StreamKey, message: &[u8]) {
        let id = self.next_id;
        self.next_id += 1;
        let frame = Bytes::from(sse::event(id, message));
        self.buffered += frame.len();
        let mailbox = self.streams.entry(key).or_default();
        mailbox.events.push_back(Event { id, frame });
        mailbox.wake.notify_one();
    }

    /// Become `key`'s reader. A resume (`Some(last_id)`: the last event its
    /// client got, 0 for none) first gets the events after it that a reader
    /// took, and takes the stream over from the reader it had.
    pub(crate) fn attach(&mut self, key: &StreamKey, resume: Option<u64>) -> Result<Reader, Refusal> {
        let busy = self.streams.get(key).is_some_and(|mailbox| mailbox.reader != 0);
        if busy && resume.is_none() {
            return Err(Refusal::AlreadyAttached);
        }
        let mut replayed = 0;
        if let Some(last_id) = resume {
            if self
                .forgotten_through
                .get(key)
                .is_some_and(|&through| through > last_id)
            {
                return Err(Refusal::Forgotten);
            }
            replayed = self.requeue(key, last_id);
        }
        let mailbox = self.streams.entry(key.clone()).or_default();
        // The reader taken over ends at its next look.
        mailbox.wake.notify_one();
        mailbox.reader += 1;
        mailbox.wake = Arc::new(Notify::new());
        if key.is_none() {
            self.unread_since = None;
        }
        Ok(Reader {
            number: mailbox.reader,
            wake: mailbox.wake.clone(),
            replayed,
        })
    }

    /// Put `key`'s taken events after `last_id` back in front of its queue
    /// (how many: the result); forget those up to it (its client has them).
    fn requeue(&mut self, key: &StreamKey, last_id: u64) -> usize {
        let mut again = Vec::new();
        let sent_bytes = &mut self.sent_bytes;
        self.sent.retain(|(stream, event)| {
            if stream != key {
                return true;
            }
            *sent_bytes -= event.frame.len();
            if event.id > last_id {
                again.push(event.clone());
            }
            false
        });
        let mailbox = self.streams.entry(key.clone()).or_default();
        let replayed = again.len();
        for event in again.into_iter().rev() {
            self.buffered += event.frame.len();
            mailbox.events.push_front(event);
        }
        replayed
    }

    /// Reader `number` left. A session's empty queue goes; one holding
    /// output stays for the next GET (and counts as unread). A reader taken
    /// over changes nothing.
    pub(crate) fn detach(&mut self, key: &StreamKey, number: u64) {
        let Some(mailbox) = self.streams.get_mut(key) else {
            return;
        };
        if mailbox.reader != number {
            return;
        }
        mailbox.reader = 0;
        match key {
            None => self.unread_since = Some(Instant::now()),
            Some(_) if mailbox.events.is_empty() => {
                self.streams.remove(key);
            }
            Some(_) => {}
        }
    }

    /// The next event for reader `number` of `key`'s stream.
    pub(crate) fn take(&mut self, key: &StreamKey, number: u64) -> Next {
        let Some(mailbox) = self.streams.get_mut(key).filter(|m| m.reader == number) else {
            return Next::Finished;
        };
        match mailbox.events.pop_front() {
            Some(event) => {
                self.buffered -= event.frame.len();
                let frame = event.frame.clone();
                self.keep_sent(key.clone(), event);
                Next::Event(frame)
            }
            None if self.finished => Next::Finished,
            None => Next::Empty,
        }
    }

    /// Keep a taken event for resumes, within the budget.
    fn keep_sent(&mut self, key: StreamKey, event: Event) {
        self.sent_bytes += event.frame.len();
        self.sent.push_back((key, event));
        while self.sent_bytes > self.max_replay_bytes {
            let Some((stream, event)) = self.sent.pop_front() else {
                break;
            };
            self.sent_bytes -= event.frame.len();
            self.forgotten_through.insert(stream, event.id);
        }
    }

    /// The agent's output ended: readers finish once their queues are empty.
    pub(crate) fn finish(&mut self) {
        self.finished = true;
        for mailbox in self.streams.values() {
            mailbox.wake.notify_one();
        }
    }

    /// Bytes queued on all streams and not taken yet.
    pub(crate) fn buffered(&self) -> usize {
        self.buffered
    }

    /// Session streams holding output that nobody reads.
    pub(crate) fn unread_sessions(&self) -> usize {
        self.streams
            .iter()
            .filter(|(key, mailbox)| key.is_some() && mailbox.reader == 0 && !mailbox.events.is_empty())
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

    fn event(next: Next) -> String {
        match next {
            Next::Event(frame) => String::from_utf8(frame.to_vec()).unwrap(),
            Next::Empty => "empty".into(),
            Next::Finished => "finished".into(),
        }
    }

    #[test]
    fn streams_queue_count_and_finish() {
        let mut outbox = Outbox::new(1 << 20);
        let session = Some("s".to_owned());
        outbox.push(None, b"abc");
        outbox.push(session.clone(), b"de");
        let (abc, de) = (sse::event(1, b"abc").len(), sse::event(2, b"de").len());
        assert_eq!((outbox.buffered(), outbox.unread_sessions()), (abc + de, 1));
        let reader = outbox.attach(&session, None).unwrap();
        assert_eq!(
            outbox.attach(&session, None).err(),
            Some(Refusal::AlreadyAttached)
        );
        assert_eq!(event(outbox.take(&session, reader.number)), "id: 2\ndata: de\n\n");
        assert_eq!(event(outbox.take(&session, reader.number)), "empty");
        outbox.detach(&session, reader.number);
        let reader = outbox.attach(&None, None).unwrap();
        assert!(outbox.unread_since().is_none());
        outbox.finish();
        assert_eq!(event(outbox.take(&None, reader.number)), "id: 1\ndata: abc\n\n");
        assert_eq!(event(outbox.take(&None, reader.number)), "finished");
        assert_eq!(outbox.buffered(), 0);
    }

    #[test]
    fn a_resume_gets_what_was_taken_after_its_id_and_takes_the_stream_over() {
        let mut outbox = Outbox::new(1 << 20);
        for n in 0..4 {
            outbox.push(None, format!("{n}").as_bytes());
        }
        let first = outbox.attach(&None, None).unwrap();
        for _ in 0..3 {
            assert!(matches!(outbox.take(&None, first.number), Next::Event(_)));
        }
        // The client got events 1 and 2; 3 was lost with its stream.
        let second = outbox.attach(&None, Some(2)).unwrap();
        assert_eq!(second.replayed, 1);
        assert_eq!(event(outbox.take(&None, first.number)), "finished", "taken over");
        outbox.detach(&None, first.number);
        assert_eq!(event(outbox.take(&None, second.number)), "id: 3\ndata: 2\n\n");
        assert_eq!(event(outbox.take(&None, second.number)), "id: 4\ndata: 3\n\n");
        assert_eq!(event(outbox.take(&None, second.number)), "empty");
        assert!(
            outbox.unread_since().is_none(),
            "the old reader's leaving detached nothing"
        );
    }

    #[test]
    fn a_resume_past_what_the_budget_kept_is_refused() {
        let budget = sse::event(1, b"x").len() * 2;
        let mut outbox = Outbox::new(budget);
        let session = Some("s".to_owned());
        for _ in 0..4 {
            outbox.push(session.clone(), b"x");
        }
        outbox.push(None, b"y");
        let reader = outbox.attach(&session, None).unwrap();
        for _ in 0..4 {
            assert!(matches!(outbox.take(&session, reader.number), Next::Event(_)));
        }
        // Events 3 and 4 are kept; 1 and 2 are not.
        assert_eq!(outbox.attach(&session, Some(1)).err(), Some(Refusal::Forgotten));
        assert!(outbox.attach(&session, Some(2)).is_ok());
        assert!(
            outbox.attach(&None, Some(0)).is_ok(),
            "another stream lost nothing"
        );
    }
}
