//! The client's side of ACP (seed 003): the `Client` trait a client (an
//! editor) implements, and `ClientSideConnection`, its view of the agent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::connection::{Connection, ConnectionBuilder};
use crate::error::RequestError;
use crate::handler::{IncomingNotification, IncomingRequest};
use crate::message::RawJson;
use crate::schema::*;
use crate::transport::{SpawnOptions, Transport};
use crate::typed::{handler_trait, respond};

handler_trait! {
    /// What a client implements. `request_permission` and `session_update`
    /// are required; the capability-gated methods (fs, terminal,
    /// elicitation) answer -32601 until implemented, so a client advertises
    /// only what it implements. Params that do not match the schema never
    /// reach these methods: the agent gets -32602.
    ///
    /// Methods return `impl Future + Send`: implement them with `async fn`.
    pub trait Client;
    required_requests {
        request_permission(RequestPermissionRequest) -> RequestPermissionResponse = "session/request_permission";
    }
    optional_requests {
        read_text_file(ReadTextFileRequest) -> ReadTextFileResponse = "fs/read_text_file";
        write_text_file(WriteTextFileRequest) -> WriteTextFileResponse = "fs/write_text_file";
        create_terminal(CreateTerminalRequest) -> CreateTerminalResponse = "terminal/create";
        terminal_output(TerminalOutputRequest) -> TerminalOutputResponse = "terminal/output";
        release_terminal(ReleaseTerminalRequest) -> ReleaseTerminalResponse = "terminal/release";
        wait_for_terminal_exit(WaitForTerminalExitRequest) -> WaitForTerminalExitResponse = "terminal/wait_for_exit";
        kill_terminal(KillTerminalRequest) -> KillTerminalResponse = "terminal/kill";
        create_elicitation(CreateElicitationRequest) -> CreateElicitationResponse = "elicitation/create";
        #[cfg(feature = "unstable")] connect_mcp(ConnectMcpRequest) -> ConnectMcpResponse = "mcp/connect";
        #[cfg(feature = "unstable")] disconnect_mcp(DisconnectMcpRequest) -> DisconnectMcpResponse = "mcp/disconnect";
        #[cfg(feature = "unstable")] mcp_message(MessageMcpRequest) -> MessageMcpResponse = "mcp/message";
    }
    required_notifications {
        session_update(SessionNotification) = "session/update";
    }
    optional_notifications {
        complete_elicitation(CompleteElicitationNotification) = "elicitation/complete";
        #[cfg(feature = "unstable")] mcp_message_notification(MessageMcpNotification) = "mcp/message";
    }
}

/// The unstable agent methods (feature `unstable`).
#[cfg(feature = "unstable")]
impl ClientSideConnection {
    crate::typed::peer_methods! {
        requests {
            list_providers(ListProvidersRequest) -> ListProvidersResponse = "providers/list";
            set_provider(SetProviderRequest) -> SetProviderResponse = "providers/set";
            disable_provider(DisableProviderRequest) -> DisableProviderResponse = "providers/disable";
            mcp_message(MessageMcpRequest) -> MessageMcpResponse = "mcp/message";
            fork_session(ForkSessionRequest) -> ForkSessionResponse = "session/fork";
            start_nes(StartNesRequest) -> StartNesResponse = "nes/start";
            suggest_nes(SuggestNesRequest) -> SuggestNesResponse = "nes/suggest";
            close_nes(CloseNesRequest) -> CloseNesResponse = "nes/close";
        }
        notifications {
            mcp_message_notification(MessageMcpNotification) = "mcp/message";
            accept_nes(AcceptNesNotification) = "nes/accept";
            reject_nes(RejectNesNotification) = "nes/reject";
            did_open_document(DidOpenDocumentNotification) = "document/didOpen";
            did_change_document(DidChangeDocumentNotification) = "document/didChange";
            did_close_document(DidCloseDocumentNotification) = "document/didClose";
            did_save_document(DidSaveDocumentNotification) = "document/didSave";
            did_focus_document(DidFocusDocumentNotification) = "document/didFocus";
        }
    }
}

/// Permission requests in flight, per session, so that `cancel` can answer
/// them `cancelled` as the protocol requires.
#[derive(Default)]
struct PendingPermissions {
    by_session: Mutex<HashMap<SessionId, CancellationToken>>,
}

impl PendingPermissions {
    fn token(&self, session_id: &SessionId) -> CancellationToken {
        self.by_session
            .lock()
            .unwrap()
            .entry(session_id.clone())
            .or_default()
            .clone()
    }

    fn cancel(&self, session_id: &SessionId) {
        if let Some(token) = self.by_session.lock().unwrap().remove(session_id) {
            token.cancel();
        }
    }
}

/// The client's connection to an agent: every agent method, typed.
/// Cheap to clone.
#[derive(Clone)]
pub struct ClientSideConnection {
    connection: Connection,
    permissions: Arc<PendingPermissions>,
}

impl std::fmt::Debug for ClientSideConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientSideConnection")
            .field("connection", &self.connection)
            .finish()
    }
}

impl ClientSideConnection {
    /// Talk to an agent over `transport`, serving its requests with
    /// `make_client(connection)`.
    pub fn new<C: Client>(make_client: impl FnOnce(ClientSideConnection) -> C, transport: Transport) -> Self {
        Self::with_builder(Connection::builder(), make_client, transport)
    }

    /// Like `new`, with the connection's settings (observer, limits) from
    /// `builder`.
    pub fn with_builder<C: Client>(
        builder: ConnectionBuilder,
        make_client: impl FnOnce(ClientSideConnection) -> C,
        transport: Transport,
    ) -> Self {
        let permissions = Arc::new(PendingPermissions::default());
        let connection = builder.connect_with(transport, |connection| {
            let this = Self {
                connection: connection.clone(),
                permissions: permissions.clone(),
            };
            let client = Arc::new(make_client(this));
            let on_notification = client.clone();
            let permissions = permissions.clone();
            let on_request = move |request: IncomingRequest| {
                let client = client.clone();
                let permissions = permissions.clone();
                async move {
                    if request.method == "session/request_permission" {
                        return request_permission(&*client, &permissions, &request).await;
                    }
                    dispatch_request(&*client, &request).await
                }
            };
            let on_notification = move |notification: IncomingNotification| {
                let client = on_notification.clone();
                async move { dispatch_notification(&*client, &notification).await }
            };
            (on_request, on_notification)
        });
        Self {
            connection,
            permissions,
        }
    }

    /// The untyped connection underneath.
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    pub async fn initialize(&self, params: InitializeRequest) -> Result<InitializeResponse, RequestError> {
        self.connection.send_request("initialize", &params).await
    }

    pub async fn authenticate(
        &self,
        params: AuthenticateRequest,
    ) -> Result<AuthenticateResponse, RequestError> {
        self.connection.send_request("authenticate", &params).await
    }

    pub async fn logout(&self, params: LogoutRequest) -> Result<LogoutResponse, RequestError> {
        self.connection.send_request("logout", &params).await
    }

    /// `session/new`.
    pub async fn new_session(&self, params: NewSessionRequest) -> Result<NewSessionResponse, RequestError> {
        self.connection.send_request("session/new", &params).await
    }

    /// `session/load` (agent capability `loadSession`).
    pub async fn load_session(
        &self,
        params: LoadSessionRequest,
    ) -> Result<LoadSessionResponse, RequestError> {
        self.connection.send_request("session/load", &params).await
    }

    /// `session/list`.
    pub async fn list_sessions(
        &self,
        params: ListSessionsRequest,
    ) -> Result<ListSessionsResponse, RequestError> {
        self.connection.send_request("session/list", &params).await
    }

    /// `session/delete`.
    pub async fn delete_session(
        &self,
        params: DeleteSessionRequest,
    ) -> Result<DeleteSessionResponse, RequestError> {
        self.connection.send_request("session/delete", &params).await
    }

    /// `session/resume`.
    pub async fn resume_session(
        &self,
        params: ResumeSessionRequest,
    ) -> Result<ResumeSessionResponse, RequestError> {
        self.connection.send_request("session/resume", &params).await
    }

    /// `session/close`.
    pub async fn close_session(
        &self,
        params: CloseSessionRequest,
    ) -> Result<CloseSessionResponse, RequestError> {
        self.connection.send_request("session/close", &params).await
    }

    /// `session/set_mode`.
    pub async fn set_session_mode(
        &self,
        params: SetSessionModeRequest,
    ) -> Result<SetSessionModeResponse, RequestError> {
        self.connection.send_request("session/set_mode", &params).await
    }

    /// `session/set_config_option`.
    pub async fn set_session_config_option(
        &self,
        params: SetSessionConfigOptionRequest,
    ) -> Result<SetSessionConfigOptionResponse, RequestError> {
        self.connection
            .send_request("session/set_config_option", &params)
            .await
    }

    /// `session/prompt`: resolves when the turn ends, after every
    /// `session/update` the agent sent before ending it was handled.
    pub async fn prompt(&self, params: PromptRequest) -> Result<PromptResponse, RequestError> {
        self.connection.send_request("session/prompt", &params).await
    }

    /// `session/cancel`: ask the agent to stop the session's turn. Permission
    /// requests of that session still waiting on this client are answered
    /// `cancelled` at once, as the protocol requires.
    pub async fn cancel(&self, params: CancelNotification) -> Result<(), RequestError> {
        let session_id = params.session_id.clone();
        let sent = self.connection.send_notification("session/cancel", &params).await;
        self.permissions.cancel(&session_id);
        sent
    }

    crate::typed::connection_methods!();
}

/// Run the client's `request_permission`, answering `cancelled` instead if
/// the session's turn is cancelled meanwhile.
async fn request_permission<C: Client>(
    client: &C,
    permissions: &PendingPermissions,
    request: &IncomingRequest,
) -> Result<RawJson, RequestError> {
    #[derive(Deserialize)]
    struct Session {
        #[serde(rename = "sessionId")]
        session_id: SessionId,
    }
    let Ok(Session { session_id }) = crate::typed::parse::<Session>("", request.params.as_deref()) else {
        // Malformed: let the typed dispatch produce the -32602.
        return dispatch_request(client, request).await;
    };
    let cancelled = permissions.token(&session_id);
    tokio::select! {
        answer = dispatch_request(client, request) => answer,
        _ = cancelled.cancelled() => respond(Ok(RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled))),
    }
}

/// Spawn an agent process and connect to it as a client in one call.
pub fn spawn_agent<C: Client>(
    options: SpawnOptions,
    make_client: impl FnOnce(ClientSideConnection) -> C,
) -> std::io::Result<ClientSideConnection> {
    Ok(ClientSideConnection::new(make_client, Transport::spawn(options)?))
}
