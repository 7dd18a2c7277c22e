//! The ordered dispatcher: one long-lived task that hands notifications to
//! their handler one at a time, in arrival order, and releases a response
//! or starts a request that arrived behind them only once they were
//! handled.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use futures_util::FutureExt;
use tokio::sync::mpsc;

use super::{Inner, Waiter};
use crate::error::RequestError;
use crate::handler::{BoxFuture, IncomingNotification, NotificationHandler};
use crate::message::RawJson;

/// What must wait for the notifications received before it.
pub(crate) enum Ordered {
    Notification(IncomingNotification),
    /// A response to one of our requests: released to its waiter.
    Response(Waiter, Result<RawJson, RequestError>),
    /// An inbound request's task: started (and then runs concurrently).
    Request(BoxFuture<()>),
}

pub(super) async fn run(
    inner: Arc<Inner>,
    mut queue: mpsc::Receiver<Vec<Ordered>>,
    handler: Option<Arc<dyn NotificationHandler>>,
) {
    // Runs until the reader hangs up (after EOF everything received is
    // still delivered) or a local close() aborts.
    loop {
        let batch = tokio::select! {
            biased;
            _ = inner.aborted.cancelled() => break,
            batch = queue.recv() => match batch {
                Some(batch) => batch,
                None => break,
            },
        };
        for item in batch {
            match item {
                Ordered::Notification(notification) => {
                    tokio::select! {
                        biased;
                        _ = inner.aborted.cancelled() => return,
                        _ = handle(handler.as_deref(), notification) => {}
                    }
                    inner.unhandled_notifications.fetch_sub(1, Ordering::AcqRel);
                }
                Ordered::Response(waiter, outcome) => {
                    waiter.complete(outcome);
                }
                Ordered::Request(task) => super::poll_once_or_spawn(task, &inner.runtime),
            }
        }
    }
}

async fn handle(handler: Option<&dyn NotificationHandler>, notification: IncomingNotification) {
    let Some(handler) = handler else {
        tracing::debug!(method = %notification.method, "no notification handler; ignored");
        return;
    };
    let method = notification.method.clone();
    let future =
        match std::panic::catch_unwind(AssertUnwindSafe(|| handler.handle_notification(notification))) {
            Ok(future) => AssertUnwindSafe(future).catch_unwind(),
            Err(_) => {
                tracing::error!(%method, "notification handler panicked");
                return;
            }
        };
    match future.await {
        Ok(Ok(())) => {}
        Ok(Err(error)) => tracing::warn!(%method, %error, "notification handler failed"),
        Err(_) => tracing::error!(%method, "notification handler panicked"),
    }
}
