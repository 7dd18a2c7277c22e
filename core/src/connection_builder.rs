//! `ConnectionBuilder`: a connection's handlers, observer and limits, and
//! the start of its engine.

use std::sync::Arc;
use std::time::Duration;

use tokio::runtime::Handle;

use crate::connection::Connection;
use crate::engine::{Handlers, HostReader, Inner, Limits, ReaderHandler, ReaderMode, Settings};
use crate::error::RequestError;
use crate::framing::DEFAULT_MAX_MESSAGE_SIZE;
use crate::handler::{NotificationHandler, RequestHandler};
use crate::message::RawJson;
use crate::observer::Observer;
use crate::transport::Transport;

/// Default capacity of the outbound queue, in messages. A sender waits while
/// it is full: that is the backpressure when the peer reads slowly.
pub const DEFAULT_WRITE_QUEUE_CAPACITY: usize = 4096;

impl Connection {
    /// A builder for a connection: its handlers, observer and limits.
    pub fn builder() -> ConnectionBuilder {
        ConnectionBuilder::default()
    }
}

/// Configures and starts a [`Connection`].
pub struct ConnectionBuilder {
    request_handler: Option<Arc<dyn RequestHandler>>,
    notification_handler: Option<Arc<dyn NotificationHandler>>,
    observer: Option<Arc<dyn Observer>>,
    max_message_size: usize,
    write_queue_capacity: usize,
    read_spin: Duration,
    write_spin: Duration,
    guard_sigpipe: bool,
    handler_answers_cancelled: bool,
    limits: Limits,
}

/// Default for [`ConnectionBuilder::read_spin`].
pub const DEFAULT_READ_SPIN: Duration = Duration::from_micros(50);

impl Default for ConnectionBuilder {
    fn default() -> Self {
        Self {
            request_handler: None,
            notification_handler: None,
            observer: None,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            write_queue_capacity: DEFAULT_WRITE_QUEUE_CAPACITY,
            read_spin: DEFAULT_READ_SPIN,
            write_spin: Duration::ZERO,
            guard_sigpipe: false,
            handler_answers_cancelled: false,
            limits: Limits::default(),
        }
    }
}

impl ConnectionBuilder {
    /// Handle inbound requests. Without one, every request gets -32601.
    pub fn on_request(mut self, handler: impl RequestHandler) -> Self {
        self.request_handler = Some(Arc::new(handler));
        self
    }

    /// Handle inbound notifications. Without one, they are ignored.
    pub fn on_notification(mut self, handler: impl NotificationHandler) -> Self {
        self.notification_handler = Some(Arc::new(handler));
        self
    }

    /// See every message on the wire.
    pub fn observer(mut self, observer: impl Observer) -> Self {
        self.observer = Some(Arc::new(observer));
        self
    }

    /// Bound on one inbound message (default 64 MiB); a longer line is
    /// discarded as it streams in and answered -32600.
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes.max(1);
        self
    }

    /// Capacity of the outbound queue, in messages.
    pub fn write_queue_capacity(mut self, messages: usize) -> Self {
        self.write_queue_capacity = messages.max(1);
        self
    }

    /// What the connection may hold for a peer that is not reading before
    /// it stops reading (see [`Limits`]; every field has a setter too).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The peer's requests handled at once before the reader waits
    /// (default [`crate::DEFAULT_MAX_IN_FLIGHT_REQUESTS`]).
    pub fn max_in_flight_requests(mut self, requests: usize) -> Self {
        self.limits.max_in_flight_requests = requests.max(1);
        self
    }

    /// Bytes of output queued for the peer before the reader waits
    /// (default [`crate::DEFAULT_MAX_BUFFERED_BYTES`]).
    pub fn max_buffered_bytes(mut self, bytes: usize) -> Self {
        self.limits.max_buffered_bytes = bytes.max(1);
        self
    }

    /// Close the connection when reading was held at a limit this long
    /// with nothing written and no request finished (default None: never).
    pub fn output_stall_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.limits.output_stall_timeout = timeout;
        self
    }

    /// How long the reader keeps polling for the next message before it
    /// parks (default 50 µs; zero turns it off). Trades a little CPU while
    /// messages flow for request/response latency, which on virtual
    /// machines is otherwise dominated by waking an idle vCPU.
    pub fn read_spin(mut self, spin: Duration) -> Self {
        self.read_spin = spin;
        self
    }

    /// A sender that finds the write queue empty writes to the stream itself,
    /// on its own thread. Rust programs, Python and Node ignore SIGPIPE; a C
    /// program does not, and a write to a peer that closed its end would
    /// kill it. With this set, such writes run with SIGPIPE blocked (two
    /// extra system calls per direct write).
    pub fn guard_sigpipe(mut self, guard: bool) -> Self {
        self.guard_sigpipe = guard;
        self
    }

    /// What a peer's `$/cancel_request` does to the inbound request it
    /// names. By default the engine drops the handler's future and answers
    /// -32800 at once (a Rust future's way to be cancelled). With this set,
    /// the request's `cancellation` token fires and the answer is whatever
    /// the handler then returns (-32800 only if it ends with that error), as
    /// the official TypeScript and Python SDKs do: a handler may answer a
    /// cancelled prompt with a result. Closing still drops every handler.
    pub fn handler_answers_cancelled(mut self, answers: bool) -> Self {
        self.handler_answers_cancelled = answers;
        self
    }

    /// How long the writer task keeps polling for the next frame before it
    /// parks (default zero). Worth it when frames come from a thread outside
    /// the runtime in bursts (a host language): waking the parked writer for
    /// every frame would cost more than the spin.
    pub(crate) fn write_spin(mut self, spin: Duration) -> Self {
        self.write_spin = spin;
        self
    }

    /// Start the connection on the current tokio runtime.
    ///
    /// # Panics
    /// Outside a tokio runtime; use [`ConnectionBuilder::connect_on`] there.
    pub fn connect(self, transport: Transport) -> Connection {
        self.connect_on(transport, &Handle::current())
    }

    /// Start the connection's tasks on the given runtime.
    pub fn connect_on(mut self, transport: Transport, runtime: &Handle) -> Connection {
        let request = self.request_handler.take();
        let notification = self.notification_handler.take();
        self.start(transport, runtime, |_| Handlers {
            request: request.unwrap_or_else(|| Arc::new(method_not_found)),
            notification,
            reader_handler: None,
        })
    }

    /// Start the connection with handlers built from the connection itself
    /// (for handlers that call the peer back, such as an agent that holds
    /// its client). Handlers set with `on_request` / `on_notification` are
    /// replaced. Must run inside a tokio runtime.
    pub fn connect_with<R, N>(
        self,
        transport: Transport,
        make: impl FnOnce(&Connection) -> (R, N),
    ) -> Connection
    where
        R: RequestHandler,
        N: NotificationHandler,
    {
        self.start(transport, &Handle::current(), |inner| {
            let (request, notification) = make(&Connection::from_inner(inner.clone()));
            Handlers {
                request: Arc::new(request),
                notification: Some(Arc::new(notification)),
                reader_handler: None,
            }
        })
    }

    fn start(
        self,
        transport: Transport,
        runtime: &Handle,
        make_handlers: impl FnOnce(&Arc<Inner>) -> Handlers,
    ) -> Connection {
        Connection::from_inner(Inner::start(
            self.settings(),
            transport,
            runtime.clone(),
            make_handlers,
        ))
    }

    /// Start with a reader handler (host bindings), read by a task or by the
    /// host (`ReaderMode::Host`: the `HostReader` comes back).
    pub(crate) fn start_with_reader_handler(
        self,
        transport: Transport,
        runtime: &Handle,
        mode: ReaderMode,
        make_handler: impl FnOnce(&Connection) -> Arc<dyn ReaderHandler>,
    ) -> (Connection, Option<HostReader>) {
        let (inner, reader) = Inner::start_with(self.settings(), transport, runtime.clone(), mode, |inner| {
            Handlers {
                request: Arc::new(method_not_found),
                notification: None,
                reader_handler: Some(make_handler(&Connection::from_inner(inner.clone()))),
            }
        });
        (Connection::from_inner(inner), reader)
    }

    fn settings(self) -> Settings {
        Settings {
            read_spin: self.read_spin,
            write_spin: self.write_spin,
            guard_sigpipe: self.guard_sigpipe,
            handler_answers_cancelled: self.handler_answers_cancelled,
            observer: self.observer,
            max_message_size: self.max_message_size,
            write_queue_capacity: self.write_queue_capacity,
            dispatch_queue_capacity: 64,
            limits: self.limits,
        }
    }
}

async fn method_not_found(request: crate::IncomingRequest) -> Result<RawJson, RequestError> {
    Err(RequestError::method_not_found(&request.method))
}
