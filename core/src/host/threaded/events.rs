//! Events for hosts without callbacks (Go, Java, scripting runtimes, event
//! loops): they take what happened in batches, on their own thread.

use std::sync::Arc;
use std::time::Instant;

use super::answers::Waiting;
use super::decode::{Event, Item};
use super::driver::{answer, Driver, Handler};

impl<H: Handler> Driver<H> {
    /// Up to `max` events in wire order, waiting until `deadline` (None: no
    /// limit) for the first; empty at the deadline. Answers to our requests
    /// go where they are wanted (a waiting thread, or `Handler::reply` here,
    /// on the caller's thread, in order); only those sent with
    /// `Waiting::Event` are handed out. After `CLOSED`, `is_finished`.
    pub fn next_events(self: &Arc<Self>, max: usize, deadline: Option<Instant>) -> Vec<Item> {
        loop {
            let items = self.take(deadline, |backlog| {
                let count = backlog.len().min(max);
                (count > 0).then(|| backlog.drain(..count).collect::<Vec<Item>>())
            });
            let Some(items) = items else { return Vec::new() };
            let items: Vec<Item> = items.into_iter().filter(|item| self.hand_out(item)).collect();
            if !items.is_empty() {
                return items;
            }
        }
    }

    /// Whether `item` goes to the host (false: it was delivered otherwise).
    fn hand_out(self: &Arc<Self>, item: &Item) -> bool {
        match item.event() {
            Event::Response { id, outcome } => match self.answers.take(*id) {
                Some(Waiting::Reply(reply)) => {
                    self.handler.reply(self, reply, *id, outcome.as_ref());
                    false
                }
                Some(Waiting::Slot(slot)) => {
                    self.complete(&slot, answer(outcome));
                    false
                }
                Some(Waiting::Event) => true,
                None => false,
            },
            Event::Closed { reason } => {
                let closed = crate::error::RequestError::connection_closed(reason);
                for (id, reply) in self.fail_waiting(reason) {
                    self.handler.reply(self, reply, id, Err(&closed));
                }
                self.mark_finished();
                true
            }
            _ => true,
        }
    }
}
