//! `TerminalHandle`: a command running in the client's terminal,
//! released on `release()` or when the handle is dropped.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::connection::Connection;
use crate::error::RequestError;
use crate::schema::*;

/// A terminal created by `AgentSideConnection::create_terminal`. Releasing
/// twice is harmless; a handle dropped unreleased is released in the
/// background.
#[derive(Debug)]
pub struct TerminalHandle {
    id: TerminalId,
    session_id: SessionId,
    connection: Connection,
    released: AtomicBool,
}

impl TerminalHandle {
    pub(crate) fn new(id: TerminalId, session_id: SessionId, connection: Connection) -> Self {
        Self {
            id,
            session_id,
            connection,
            released: AtomicBool::new(false),
        }
    }

    /// The terminal's id on the client.
    pub fn id(&self) -> &TerminalId {
        &self.id
    }

    /// The session the terminal belongs to.
    pub fn session_id(&self) -> &SessionId {
        &self.session_id
    }

    /// `terminal/output`: the output so far and, once exited, the exit status.
    pub async fn current_output(&self) -> Result<TerminalOutputResponse, RequestError> {
        let params = TerminalOutputRequest::new(self.session_id.clone(), self.id.clone());
        self.connection
            .send_request(method::TERMINAL_OUTPUT, &params)
            .await
    }

    /// `terminal/wait_for_exit`: resolves when the command exits.
    pub async fn wait_for_exit(&self) -> Result<WaitForTerminalExitResponse, RequestError> {
        let params = WaitForTerminalExitRequest::new(self.session_id.clone(), self.id.clone());
        self.connection
            .send_request(method::TERMINAL_WAIT_FOR_EXIT, &params)
            .await
    }

    /// `terminal/kill`: stop the command; the terminal stays until released.
    pub async fn kill(&self) -> Result<KillTerminalResponse, RequestError> {
        let params = KillTerminalRequest::new(self.session_id.clone(), self.id.clone());
        self.connection.send_request(method::TERMINAL_KILL, &params).await
    }

    /// `terminal/release`: kill the command if still running and free the
    /// terminal. Only the first call reaches the client.
    pub async fn release(&self) -> Result<(), RequestError> {
        if self.released.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let params = ReleaseTerminalRequest::new(self.session_id.clone(), self.id.clone());
        let _: ReleaseTerminalResponse = self
            .connection
            .send_request(method::TERMINAL_RELEASE, &params)
            .await?;
        Ok(())
    }
}

impl Drop for TerminalHandle {
    fn drop(&mut self) {
        if self.released.load(Ordering::Acquire) || self.connection.is_closed() {
            return;
        }
        let params = ReleaseTerminalRequest::new(self.session_id.clone(), self.id.clone());
        let connection = self.connection.clone();
        self.connection.runtime().spawn(async move {
            let released: Result<ReleaseTerminalResponse, _> =
                connection.send_request(method::TERMINAL_RELEASE, &params).await;
            if let Err(error) = released {
                tracing::debug!(%error, "releasing a dropped terminal failed");
            }
        });
    }
}
