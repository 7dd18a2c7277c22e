//! The server's side of resumable WebSockets (../resumable.rs): the
//! connections a client may come back to, by id, each waiting for its
//! client's next socket while its agent carries on, up to the idle timeout.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_tungstenite::WebSocketStream;

use super::metrics::Metrics;
use crate::remote::resumable::{Journal, Next, Sockets};

pub(crate) type Socket = WebSocketStream<TokioIo<Upgraded>>;

/// How long a resume may take from its answer to its socket.
const SOCKET_WAIT: Duration = Duration::from_secs(30);

/// The resumable WebSocket connections open now, by id.
#[derive(Default)]
pub(crate) struct Registry {
    connections: Mutex<HashMap<String, mpsc::Sender<Resume>>>,
}

/// A client's request to carry on its connection on a new socket.
pub(crate) struct Resume {
    /// How many of the server's messages the client received.
    theirs: u64,
    /// The answer: how many of the client's messages the server received
    /// (the 101's `Acp-Received`), or why the resume is refused (410).
    answer: oneshot::Sender<Result<u64, String>>,
    /// The new socket, once upgraded.
    socket: oneshot::Receiver<Socket>,
}

/// Why a resume did not take.
pub(crate) enum Refused {
    /// No such connection (any more): 404.
    Unknown,
    /// The connection no longer has what the client lacks; it ended: 410.
    Forgotten(String),
}

impl Registry {
    /// A new connection under `id`, and its side of the resumes.
    pub(crate) fn open(
        self: &Arc<Self>,
        id: String,
        grace: Option<Duration>,
        metrics: Arc<Metrics>,
    ) -> Waiting {
        let (tx, rx) = mpsc::channel(1);
        self.connections.lock().unwrap().insert(id.clone(), tx);
        Waiting {
            id,
            resumes: rx,
            grace,
            registry: self.clone(),
            metrics,
        }
    }

    /// Carry connection `id` on, its client having received `theirs` of its
    /// messages: how many of the client's it received, and where the new
    /// socket goes once upgraded.
    pub(crate) async fn resume(
        &self,
        id: &str,
        theirs: u64,
    ) -> Result<(u64, oneshot::Sender<Socket>), Refused> {
        let waiting = self.connections.lock().unwrap().get(id).cloned();
        let waiting = waiting.ok_or(Refused::Unknown)?;
        let (answer, answered) = oneshot::channel();
        let (socket_tx, socket) = oneshot::channel();
        let resume = Resume {
            theirs,
            answer,
            socket,
        };
        waiting.send(resume).await.map_err(|_| Refused::Unknown)?;
        match answered.await {
            Ok(Ok(received)) => Ok((received, socket_tx)),
            Ok(Err(why)) => Err(Refused::Forgotten(why)),
            Err(_) => Err(Refused::Unknown),
        }
    }
}

/// A resumable connection's way to its client's next socket.
pub(crate) struct Waiting {
    id: String,
    resumes: mpsc::Receiver<Resume>,
    /// How long the connection waits for its client after a break (None:
    /// until the server stops).
    grace: Option<Duration>,
    registry: Arc<Registry>,
    metrics: Arc<Metrics>,
}

impl Sockets<TokioIo<Upgraded>> for Waiting {
    type Request = Resume;

    async fn request(&mut self) -> Resume {
        match self.resumes.recv().await {
            Some(resume) => resume,
            // The registry keeps the sender while this lives.
            None => std::future::pending().await,
        }
    }

    async fn next(
        &mut self,
        mut request: Option<Resume>,
        received: u64,
        journal: &Journal,
    ) -> Next<TokioIo<Upgraded>> {
        let deadline = self.grace.map(|grace| Instant::now() + grace);
        loop {
            let resume = match request.take() {
                Some(resume) => resume,
                None => match deadline {
                    Some(deadline) => match tokio::time::timeout_at(deadline, self.request()).await {
                        Ok(resume) => resume,
                        Err(_) => return Next::GiveUp("the client did not come back in time".into()),
                    },
                    None => self.request().await,
                },
            };
            match journal.missing(resume.theirs) {
                Err(why) => {
                    self.metrics.resumed(None);
                    let _ = resume.answer.send(Err(why.clone()));
                    return Next::GiveUp(why);
                }
                Ok(lacking) => {
                    if resume.answer.send(Ok(received)).is_err() {
                        continue; // the client's request went away meanwhile
                    }
                    if let Ok(Ok(socket)) = tokio::time::timeout(SOCKET_WAIT, resume.socket).await {
                        self.metrics.resumed(Some(lacking.len()));
                        return Next::Socket(Box::new(socket), lacking);
                    }
                }
            }
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.registry.connections.lock().unwrap().remove(&self.id);
    }
}
