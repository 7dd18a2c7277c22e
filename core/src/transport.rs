//! Byte-stream transports a connection runs over: this process's stdio, a
//! spawned child process, an in-memory pair, or any reader/writer pair.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::process::Command;

use crate::process_tree::ProcessTree;

/// The byte stream a connection reads.
pub type BoxReader = Box<dyn AsyncRead + Send + Unpin>;
/// The byte stream a connection writes.
pub type BoxWriter = Box<dyn AsyncWrite + Send + Unpin>;

/// A readable and a writable byte stream, plus the child process behind
/// them when there is one (the connection kills and reaps it on close).
pub struct Transport {
    pub(crate) reader: BoxReader,
    pub(crate) writer: BoxWriter,
    pub(crate) child: Option<ChildProcess>,
    /// The non-blocking pipe or socket `reader` reads, when it is one (the
    /// host can then read it from its own thread: `take_host_reader`).
    pub(crate) read_fd: Option<std::os::fd::RawFd>,
    /// The bytes the host moves itself (`Transport::fed`).
    pub(crate) fed: Option<std::sync::Arc<crate::fed::Fed>>,
}

/// Where a host that reads on its own thread gets the input from.
#[derive(Clone, Copy)]
pub(crate) enum HostSource {
    /// A non-blocking pipe or socket to watch for readability.
    Fd(std::os::fd::RawFd),
    /// Bytes the host feeds (`HostConnection::feed`).
    Fed,
}

impl Transport {
    /// Any reader/writer pair: sockets, pipes, a caller's own streams.
    pub fn new(
        reader: impl AsyncRead + Send + Unpin + 'static,
        writer: impl AsyncWrite + Send + Unpin + 'static,
    ) -> Self {
        Self {
            reader: Box::new(reader),
            writer: Box::new(writer),
            child: None,
            read_fd: None,
            fed: None,
        }
    }

    /// Bytes the host moves itself, for streams the engine cannot reach (a
    /// host language's own streams): the host feeds what the peer sent
    /// (`HostConnection::feed`) and takes what to send it
    /// (`HostConnection::take_output`). Only for `HostConnection`s.
    pub fn fed() -> Self {
        let fed = std::sync::Arc::new(crate::fed::Fed::default());
        Self {
            fed: Some(fed.clone()),
            ..Self::new(crate::fed::FedReader(fed.clone()), crate::fed::FedWriter(fed))
        }
    }

    /// One bidirectional stream (e.g. a `TcpStream` or a `DuplexStream`).
    pub fn from_stream(stream: impl AsyncRead + AsyncWrite + Send + 'static) -> Self {
        let (reader, writer) = tokio::io::split(stream);
        Self::new(reader, writer)
    }

    /// This process's stdin and stdout (an agent launched by its client).
    /// Pipes and sockets (what a client spawns us with) are driven by the
    /// reactor directly; anything else (a terminal, a file) by threads.
    pub fn stdio() -> Self {
        Self::from_fd_streams(crate::stdio::stdio_streams())
    }

    /// Two file descriptors the caller hands over (closed with the
    /// connection): pipes and Unix sockets are driven by the reactor,
    /// anything else through blocking I/O threads.
    pub fn from_fds(read: std::os::fd::OwnedFd, write: std::os::fd::OwnedFd) -> Self {
        Self::from_fd_streams(crate::stdio::fd_streams(read, write))
    }

    fn from_fd_streams(streams: crate::stdio::FdStreams) -> Self {
        Self {
            reader: streams.reader,
            writer: streams.writer,
            child: None,
            read_fd: streams.read_fd,
            fed: None,
        }
    }

    /// Two transports connected to each other in memory, for tests and for
    /// running an agent and a client in one process.
    pub fn memory_pair() -> (Self, Self) {
        let (a, b) = tokio::io::duplex(256 * 1024);
        (Self::from_stream(a), Self::from_stream(b))
    }

    /// Spawn `options.command` with piped stdin/stdout and talk to it.
    pub fn spawn(options: SpawnOptions) -> std::io::Result<Self> {
        let mut command = Command::new(&options.command);
        command
            .args(&options.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if options.inherit_stderr {
                inherited_stderr()
            } else {
                Stdio::null()
            });
        if options.clear_env {
            command.env_clear();
        }
        command.envs(options.env.iter().map(|(k, v)| (k, v)));
        if let Some(cwd) = &options.cwd {
            command.current_dir(cwd);
        }
        // The command in the error: "No such file or directory" alone does not
        // say which file.
        let mut tree = ProcessTree::spawn_with(&mut command, options.own_process_group).map_err(|error| {
            std::io::Error::new(
                error.kind(),
                format!("cannot start `{}`: {error}", options.command.to_string_lossy()),
            )
        })?;
        let child = tree.child_mut();
        let stdin = child.stdin.take().expect("stdin was piped");
        let stdout = child.stdout.take().expect("stdout was piped");
        let read_fd = std::os::fd::AsRawFd::as_raw_fd(&stdout);
        Ok(Self {
            read_fd: Some(read_fd),
            fed: None,
            reader: Box::new(stdout),
            writer: Box::new(stdin),
            child: Some(ChildProcess {
                tree,
                exit_grace: options.exit_grace,
            }),
        })
    }

    /// Read the stream from the caller's thread instead of the reactor (for
    /// `ReaderMode::Host`): fed bytes, or the file descriptor to watch for
    /// readability; None for any other stream.
    pub(crate) fn take_host_reader(&mut self) -> Option<HostSource> {
        use std::os::fd::{AsRawFd, BorrowedFd};
        if self.fed.is_some() {
            return Some(HostSource::Fed);
        }
        let fd = self.read_fd.take()?;
        // SAFETY: `fd` is owned by `self.reader`, alive while we borrow it.
        let owned = unsafe { BorrowedFd::borrow_raw(fd) }.try_clone_to_owned().ok()?;
        let raw = owned.as_raw_fd();
        // The duplicate shares the (already non-blocking) open file; dropping
        // the reactor's reader closes the original and deregisters it.
        self.reader = Box::new(crate::stdio::NonBlockingReader::new(owned));
        Some(HostSource::Fd(raw))
    }

    /// The byte streams themselves, for a program that moves bytes rather
    /// than messages (a proxy such as `acp-engine trace`). A spawned child
    /// belongs to a connection's lifecycle and is killed when this returns:
    /// for stdio and stream transports.
    pub fn into_streams(self) -> (BoxReader, BoxWriter) {
        (self.reader, self.writer)
    }

    /// The bytes on a Unix socket instead, for a host that reads and writes
    /// them with its own event loop (Python's asyncio streams): a task for
    /// each direction copies until its source ends, then shuts the other
    /// side's writing half (the host closing its socket ends what the
    /// transport sends; the peer ending ends what the host reads). As with
    /// [`Transport::into_streams`], a spawned child is killed. Call within
    /// a tokio runtime.
    pub fn into_socket(self) -> std::io::Result<std::os::unix::net::UnixStream> {
        use tokio::io::AsyncWriteExt;
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
        ours.set_nonblocking(true)?;
        let (mut from_host, mut to_host) = tokio::net::UnixStream::from_std(ours)?.into_split();
        let (mut reader, mut writer) = self.into_streams();
        tokio::spawn(async move {
            let _ = tokio::io::copy(&mut reader, &mut to_host).await;
            let _ = to_host.shutdown().await;
        });
        tokio::spawn(async move {
            let _ = tokio::io::copy(&mut from_host, &mut writer).await;
            let _ = writer.shutdown().await;
        });
        Ok(theirs)
    }

    /// The pid of the spawned child, if this transport spawned one.
    pub fn child_pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(|c| c.tree.id())
    }
}

/// Why a transport failed, in words of its own: an I/O error carrying one
/// is the connection's close reason as it is, not "read error: ...".
#[derive(Debug)]
pub(crate) struct TransportFailure(pub String);

impl std::fmt::Display for TransportFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TransportFailure {}

/// The close reason for an I/O `error` while `doing` ("read", "write").
pub(crate) fn failure_reason(doing: &str, error: &std::io::Error) -> String {
    match error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<TransportFailure>())
    {
        Some(failure) => failure.0.clone(),
        None => format!("{doing} error: {error}"),
    }
}

/// Our stderr for a child, as a duplicate: `Stdio::inherit()` would hand
/// over fd 2 as is, and a host that opened it close-on-exec (Node does)
/// would start the child with no stderr at all.
fn inherited_stderr() -> Stdio {
    use std::os::fd::AsFd;
    match std::io::stderr().as_fd().try_clone_to_owned() {
        Ok(fd) => Stdio::from(fd),
        Err(_) => Stdio::inherit(),
    }
}

/// How to spawn an agent (or any peer) process.
#[derive(Debug, Clone)]
pub struct SpawnOptions {
    /// The program to run (looked up in `PATH` unless it is a path).
    pub command: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Added to (or, with `clear_env`, replacing) the inherited environment.
    pub env: Vec<(OsString, OsString)>,
    /// Start it with `env` only, not this process's environment plus `env`.
    pub clear_env: bool,
    /// Its working directory (default: this process's).
    pub cwd: Option<PathBuf>,
    /// Pass the child's stderr through to ours (default) or drop it.
    pub inherit_stderr: bool,
    /// On close, how long the child may take to exit after its stdin closes
    /// before its process group gets SIGTERM (and SIGKILL a second later).
    pub exit_grace: Duration,
    /// Start it in a process group of its own (the default), so that
    /// everything it starts (`npx`, a shell, the real agent) is stopped with
    /// it when the connection closes, and a Ctrl-C at the terminal reaches
    /// this process only (which may cancel a turn rather than have the agent
    /// killed). False: it shares our group, and only the child itself is
    /// signalled on close.
    pub own_process_group: bool,
}

impl SpawnOptions {
    /// Run `command`, with no arguments and this process's environment.
    pub fn new(command: impl Into<OsString>) -> Self {
        Self {
            command: command.into(),
            args: Vec::new(),
            env: Vec::new(),
            clear_env: false,
            cwd: None,
            inherit_stderr: true,
            exit_grace: Duration::from_millis(500),
            own_process_group: true,
        }
    }

    /// Add arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Set an environment variable for the agent.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Start the agent with only the variables set with `env`.
    pub fn clear_env(mut self) -> Self {
        self.clear_env = true;
        self
    }

    /// Run the agent in `cwd`.
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Pass the agent's stderr through (the default) or drop it.
    pub fn inherit_stderr(mut self, inherit: bool) -> Self {
        self.inherit_stderr = inherit;
        self
    }

    /// How long the agent may take to exit after its stdin closed before it is killed.
    pub fn exit_grace(mut self, grace: Duration) -> Self {
        self.exit_grace = grace;
        self
    }

    /// Start the child in a process group of its own (see the field).
    pub fn own_process_group(mut self, own: bool) -> Self {
        self.own_process_group = own;
        self
    }
}

/// A spawned peer process; owned by the connection's lifecycle.
pub(crate) struct ChildProcess {
    tree: ProcessTree,
    exit_grace: Duration,
}

impl ChildProcess {
    /// Called once the connection has closed and its stdin is shut: give the
    /// child `exit_grace` to exit on its own, then stop its whole tree;
    /// always reap it.
    pub(crate) async fn terminate(mut self) {
        let status = self.tree.stop(self.exit_grace).await;
        tracing::debug!(?status, "peer process stopped");
    }
}
