//! The agent's side of ACP (seed 004): the `Agent` trait an agent
//! implements, and `AgentSideConnection`, the agent's view of its client.

use std::sync::Arc;

use crate::connection::{Connection, ConnectionBuilder};
use crate::error::RequestError;
use crate::handler::{IncomingNotification, IncomingRequest};
use crate::schema::*;
use crate::terminal::TerminalHandle;
use crate::transport::Transport;
use crate::typed::handler_trait;

handler_trait! {
    /// What an agent implements. `initialize`, `new_session`, `prompt` and
    /// `cancel` are required; every other method answers -32601 (method not
    /// found) until implemented. Requests run concurrently; notifications
    /// (`cancel`) one at a time, in arrival order. Params that do not match
    /// the schema never reach these methods: the peer gets -32602.
    ///
    /// Methods return `impl Future + Send`: implement them with `async fn`.
    pub trait Agent;
    required_requests {
        initialize(InitializeRequest) -> InitializeResponse = "initialize";
        new_session(NewSessionRequest) -> NewSessionResponse = "session/new";
        prompt(PromptRequest) -> PromptResponse = "session/prompt";
    }
    optional_requests {
        authenticate(AuthenticateRequest) -> AuthenticateResponse = "authenticate";
        logout(LogoutRequest) -> LogoutResponse = "logout";
        load_session(LoadSessionRequest) -> LoadSessionResponse = "session/load";
        list_sessions(ListSessionsRequest) -> ListSessionsResponse = "session/list";
        delete_session(DeleteSessionRequest) -> DeleteSessionResponse = "session/delete";
        resume_session(ResumeSessionRequest) -> ResumeSessionResponse = "session/resume";
        close_session(CloseSessionRequest) -> CloseSessionResponse = "session/close";
        set_session_mode(SetSessionModeRequest) -> SetSessionModeResponse = "session/set_mode";
        set_session_config_option(SetSessionConfigOptionRequest) -> SetSessionConfigOptionResponse
            = "session/set_config_option";
        #[cfg(feature = "unstable")] list_providers(ListProvidersRequest) -> ListProvidersResponse = "providers/list";
        #[cfg(feature = "unstable")] set_provider(SetProviderRequest) -> SetProviderResponse = "providers/set";
        #[cfg(feature = "unstable")] disable_provider(DisableProviderRequest) -> DisableProviderResponse
            = "providers/disable";
        #[cfg(feature = "unstable")] mcp_message(MessageMcpRequest) -> MessageMcpResponse = "mcp/message";
        #[cfg(feature = "unstable")] fork_session(ForkSessionRequest) -> ForkSessionResponse = "session/fork";
        #[cfg(feature = "unstable")] start_nes(StartNesRequest) -> StartNesResponse = "nes/start";
        #[cfg(feature = "unstable")] suggest_nes(SuggestNesRequest) -> SuggestNesResponse = "nes/suggest";
        #[cfg(feature = "unstable")] close_nes(CloseNesRequest) -> CloseNesResponse = "nes/close";
    }
    required_notifications {
        cancel(CancelNotification) = "session/cancel";
    }
    optional_notifications {
        #[cfg(feature = "unstable")] mcp_message_notification(MessageMcpNotification) = "mcp/message";
        #[cfg(feature = "unstable")] accept_nes(AcceptNesNotification) = "nes/accept";
        #[cfg(feature = "unstable")] reject_nes(RejectNesNotification) = "nes/reject";
        #[cfg(feature = "unstable")] did_open_document(DidOpenDocumentNotification) = "document/didOpen";
        #[cfg(feature = "unstable")] did_change_document(DidChangeDocumentNotification) = "document/didChange";
        #[cfg(feature = "unstable")] did_close_document(DidCloseDocumentNotification) = "document/didClose";
        #[cfg(feature = "unstable")] did_save_document(DidSaveDocumentNotification) = "document/didSave";
        #[cfg(feature = "unstable")] did_focus_document(DidFocusDocumentNotification) = "document/didFocus";
    }
}

/// The unstable client methods (feature `unstable`).
#[cfg(feature = "unstable")]
impl AgentSideConnection {
    crate::typed::peer_methods! {
        requests {
            connect_mcp(ConnectMcpRequest) -> ConnectMcpResponse = "mcp/connect";
            disconnect_mcp(DisconnectMcpRequest) -> DisconnectMcpResponse = "mcp/disconnect";
            mcp_message(MessageMcpRequest) -> MessageMcpResponse = "mcp/message";
        }
        notifications {
            mcp_message_notification(MessageMcpNotification) = "mcp/message";
        }
    }
}

/// The agent's connection to its client: every client method, typed.
/// Cheap to clone.
#[derive(Clone, Debug)]
pub struct AgentSideConnection {
    connection: Connection,
}

impl AgentSideConnection {
    /// Serve `make_agent(connection)` over `transport`. The agent gets the
    /// connection to call its client back (session updates, permission,
    /// files, terminals).
    pub fn new<A: Agent>(make_agent: impl FnOnce(AgentSideConnection) -> A, transport: Transport) -> Self {
        Self::with_builder(Connection::builder(), make_agent, transport)
    }

    /// Like `new`, with the connection's settings (observer, limits) from
    /// `builder`.
    pub fn with_builder<A: Agent>(
        builder: ConnectionBuilder,
        make_agent: impl FnOnce(AgentSideConnection) -> A,
        transport: Transport,
    ) -> Self {
        let connection = builder.connect_with(transport, |connection| {
            let agent = Arc::new(make_agent(Self::from_connection(connection.clone())));
            let on_notification = agent.clone();
            let on_request = move |request: IncomingRequest| {
                let agent = agent.clone();
                async move { dispatch_request(&*agent, &request).await }
            };
            let on_notification = move |notification: IncomingNotification| {
                let agent = on_notification.clone();
                async move { dispatch_notification(&*agent, &notification).await }
            };
            (on_request, on_notification)
        });
        Self::from_connection(connection)
    }

    fn from_connection(connection: Connection) -> Self {
        Self { connection }
    }

    /// The untyped connection underneath.
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    /// `session/update`: stream progress to the client.
    pub async fn session_update(&self, params: SessionNotification) -> Result<(), RequestError> {
        self.connection.send_notification("session/update", &params).await
    }

    /// `session/request_permission`: ask the user to authorize a tool call.
    pub async fn request_permission(
        &self,
        params: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, RequestError> {
        self.connection
            .send_request("session/request_permission", &params)
            .await
    }

    /// `fs/read_text_file` (client capability `fs.readTextFile`).
    pub async fn read_text_file(
        &self,
        params: ReadTextFileRequest,
    ) -> Result<ReadTextFileResponse, RequestError> {
        self.connection.send_request("fs/read_text_file", &params).await
    }

    /// `fs/write_text_file` (client capability `fs.writeTextFile`).
    pub async fn write_text_file(
        &self,
        params: WriteTextFileRequest,
    ) -> Result<WriteTextFileResponse, RequestError> {
        self.connection.send_request("fs/write_text_file", &params).await
    }

    /// `terminal/create` (client capability `terminal`): start a command and
    /// get a handle that releases the terminal when dropped.
    pub async fn create_terminal(
        &self,
        params: CreateTerminalRequest,
    ) -> Result<TerminalHandle, RequestError> {
        let session_id = params.session_id.clone();
        let created: CreateTerminalResponse =
            self.connection.send_request("terminal/create", &params).await?;
        Ok(TerminalHandle::new(
            created.terminal_id,
            session_id,
            self.connection.clone(),
        ))
    }

    /// `terminal/output`.
    pub async fn terminal_output(
        &self,
        params: TerminalOutputRequest,
    ) -> Result<TerminalOutputResponse, RequestError> {
        self.connection.send_request("terminal/output", &params).await
    }

    /// `terminal/release`.
    pub async fn release_terminal(
        &self,
        params: ReleaseTerminalRequest,
    ) -> Result<ReleaseTerminalResponse, RequestError> {
        self.connection.send_request("terminal/release", &params).await
    }

    /// `terminal/wait_for_exit`.
    pub async fn wait_for_terminal_exit(
        &self,
        params: WaitForTerminalExitRequest,
    ) -> Result<WaitForTerminalExitResponse, RequestError> {
        self.connection
            .send_request("terminal/wait_for_exit", &params)
            .await
    }

    /// `terminal/kill`.
    pub async fn kill_terminal(
        &self,
        params: KillTerminalRequest,
    ) -> Result<KillTerminalResponse, RequestError> {
        self.connection.send_request("terminal/kill", &params).await
    }

    /// `elicitation/create`: ask the user for structured input.
    pub async fn create_elicitation(
        &self,
        params: CreateElicitationRequest,
    ) -> Result<CreateElicitationResponse, RequestError> {
        self.connection.send_request("elicitation/create", &params).await
    }

    /// `elicitation/complete`.
    pub async fn complete_elicitation(
        &self,
        params: CompleteElicitationNotification,
    ) -> Result<(), RequestError> {
        self.connection
            .send_notification("elicitation/complete", &params)
            .await
    }

    crate::typed::connection_methods!();
}

/// Run an agent on this process's stdin/stdout until the client hangs up.
pub async fn run_agent<A: Agent>(make_agent: impl FnOnce(AgentSideConnection) -> A) {
    let connection = AgentSideConnection::new(make_agent, Transport::stdio());
    connection.closed().await;
}
