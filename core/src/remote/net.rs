//! Opening a byte stream to a remote agent: TCP, and TLS over it for
//! `wss://` and `https://`.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use super::endpoint::Endpoint;
use super::ConnectOptions;

/// A connected stream, plain or encrypted.
pub(crate) enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

/// Connect to `endpoint`, with TLS when its scheme says so, within the
/// options' `connect_timeout`.
pub(crate) async fn open(endpoint: &Endpoint, options: &ConnectOptions) -> io::Result<Stream> {
    within_connect_timeout(options, connect(endpoint, options)).await?
}

/// `connecting`, or a timeout error once `options.connect_timeout` passed.
pub(crate) async fn within_connect_timeout<T>(
    options: &ConnectOptions,
    connecting: impl std::future::Future<Output = T>,
) -> io::Result<T> {
    let Some(limit) = options.connect_timeout else {
        return Ok(connecting.await);
    };
    tokio::time::timeout(limit, connecting).await.map_err(|_| {
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "the server did not take the connection within {} ms",
                limit.as_millis()
            ),
        )
    })
}

/// `open` without the timeout (a caller that bounds more than the connect).
pub(crate) async fn connect(endpoint: &Endpoint, options: &ConnectOptions) -> io::Result<Stream> {
    let tcp = TcpStream::connect((endpoint.bare_host(), endpoint.port)).await?;
    let _ = tcp.set_nodelay(true);
    if !endpoint.scheme.tls() {
        return Ok(Stream::Plain(tcp));
    }
    let config = super::tls::client_config(options.ca_file.as_ref())?;
    let name = ServerName::try_from(endpoint.bare_host().to_owned())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "not a valid TLS server name"))?;
    let tls = TlsConnector::from(config).connect(name, tcp).await?;
    Ok(Stream::Tls(Box::new(tls)))
}

impl AsyncRead for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(stream) => Pin::new(stream).poll_read(cx, buf),
            Stream::Tls(stream) => Pin::new(stream).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(stream) => Pin::new(stream).poll_write(cx, buf),
            Stream::Tls(stream) => Pin::new(stream).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(stream) => Pin::new(stream).poll_flush(cx),
            Stream::Tls(stream) => Pin::new(stream).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(stream) => Pin::new(stream).poll_shutdown(cx),
            Stream::Tls(stream) => Pin::new(stream).poll_shutdown(cx),
        }
    }
}
